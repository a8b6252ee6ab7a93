// The registry client against a scripted fake registry on loopback: retries, digest checks,
// dropped connections, slow and stalled registries (deadlines, the minimum rate; also through
// the kpkg binary), authentication (Bearer tokens from a realm, Basic), error messages.
#include <atomic>
#include <filesystem>

#include <gtest/gtest.h>

#include "kpkg/core/digest.hpp"
#include "kpkg/oci/media_types.hpp"
#include "kpkg/oci/registry.hpp"
#include "kpkg/oci/store.hpp"
#include "registry_fixture.hpp"

using namespace kpkg;
using namespace kpkg::test;

namespace {

// Fast retries, no credentials from the user's files.
oci::RegistryOptions quick(const TempDir& d) {
    return quick_options(d, 2);
}

// Serves one image: manifests by tag "v1" and digest, blobs by digest.
struct ImageServer {
    oci::Content img = make_image("fault tests");
    std::string manifest_path(const std::string& repo, const std::string& ref) const {
        return "/v2/" + repo + "/manifests/" + ref;
    }
    HttpReply serve(const HttpReq& r, const std::string& repo) const {
        for (const std::string& id : {std::string("v1"), img.root_digest})
            if (r.path == manifest_path(repo, id))
                return HttpReply::text(200, img.blobs.at(img.root_digest))
                    .with("Content-Type", img.root_media_type)
                    .with("Docker-Content-Digest", img.root_digest);
        const std::string bp = "/v2/" + repo + "/blobs/";
        if (r.path.rfind(bp, 0) == 0) {
            auto it = img.blobs.find(r.path.substr(bp.size()));
            if (it != img.blobs.end()) return HttpReply::text(200, it->second);
        }
        return HttpReply::json(404,
                               R"({"errors":[{"code":"NOT_FOUND","message":"nothing here"}]})");
    }
};

} // namespace

TEST(OciRegistryFaults, A500IsRetriedThenTheAnswerIsUsed) {
    TempDir d;
    ImageServer is;
    std::atomic<int> calls{0};
    FakeServer srv([&](const HttpReq& r) {
        if (r.path.find("/manifests/") != std::string::npos && calls++ == 0)
            return HttpReply::json(500, R"({"errors":[{"code":"UNKNOWN","message":"oops"}]})");
        return is.serve(r, "app");
    });
    oci::Registry reg(quick(d));
    auto m = reg.get_manifest(ref_of(srv.host() + "/app:v1"));
    ASSERT_TRUE(m) << m.error().str();
    EXPECT_EQ(m->digest, is.img.root_digest);
    EXPECT_EQ(m->media_type, is.img.root_media_type);
    EXPECT_EQ(m->bytes, is.img.blobs.at(is.img.root_digest));
    EXPECT_EQ(srv.count("GET", "/v2/app/manifests/"), 2u);
    const auto reqs = srv.requests();
    ASSERT_FALSE(reqs.empty());
    EXPECT_EQ(reqs[0].header("user-agent").rfind("kpkg/", 0), 0u) << reqs[0].header("user-agent");
    EXPECT_TRUE(contains(reqs[0].header("accept"), std::string(oci::media::oci_index)));
}

TEST(OciRegistryFaults, Persistent500sGiveUpWithAClearError) {
    TempDir d;
    FakeServer srv([&](const HttpReq&) { return HttpReply::text(503, "down"); });
    oci::Registry reg(quick(d));
    auto m = reg.get_manifest(ref_of(srv.host() + "/app:v1"));
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ExitCode::error);
    const std::string s = m.error().str();
    EXPECT_TRUE(contains(s, "registry " + srv.host())) << s;
    EXPECT_TRUE(contains(s, "repository app")) << s;
    EXPECT_TRUE(contains(s, "manifest v1")) << s;
    EXPECT_TRUE(contains(s, "503")) << s;
    EXPECT_EQ(srv.count("GET", "/v2/app/manifests/v1"), 3u); // 1 + 2 retries
}

TEST(OciRegistryFaults, No4xxIsRetried) {
    TempDir d;
    ImageServer is;
    FakeServer srv([&](const HttpReq& r) { return is.serve(r, "app"); });
    oci::Registry reg(quick(d));
    auto m = reg.get_manifest(ref_of(srv.host() + "/app:nope"));
    ASSERT_FALSE(m);
    const std::string s = m.error().str();
    EXPECT_TRUE(contains(s, "manifest nope: not found (HTTP 404, NOT_FOUND: nothing here)")) << s;
    EXPECT_TRUE(contains(s, "registry " + srv.host() + ", repository app")) << s;
    EXPECT_EQ(srv.count("GET", "/v2/app/manifests/nope"), 1u);
}

TEST(OciRegistryFaults, ABlobWithTheWrongDigestIsRefusedAndNotCached) {
    TempDir d;
    ImageServer is;
    const std::string layer = is.img.blobs.begin()->first;
    FakeServer srv([&](const HttpReq& r) {
        if (r.path.find("/blobs/") != std::string::npos) {
            HttpReply rep = is.serve(r, "app");
            if (!rep.body.empty()) rep.body[rep.body.size() / 2] ^= 1; // same size, wrong bytes
            return rep;
        }
        return is.serve(r, "app");
    });
    oci::Store store(d / "cache");
    oci::Registry reg(quick(d), &store);
    auto b = reg.get_blob(ref_of(srv.host() + "/app"), layer);
    ASSERT_FALSE(b);
    EXPECT_TRUE(contains(b.error().str(), "digest mismatch")) << b.error().str();
    EXPECT_TRUE(contains(b.error().str(), "blob " + layer)) << b.error().str();

    auto p = reg.pull(ref_of(srv.host() + "/app:v1"));
    ASSERT_FALSE(p);
    EXPECT_TRUE(contains(p.error().str(), "digest mismatch")) << p.error().str();
    auto l = store.list();
    ASSERT_TRUE(l);
    for (const auto& e : l->blobs)
        EXPECT_EQ(e.digest, is.img.root_digest) << "only the (verified) manifest is cached";
}

TEST(OciRegistryFaults, AConnectionDroppedMidBodyIsRetried) {
    TempDir d;
    ImageServer is;
    std::atomic<int> cuts{0};
    FakeServer srv([&](const HttpReq& r) {
        HttpReply rep = is.serve(r, "app");
        if (r.path.find("/blobs/") != std::string::npos && cuts++ == 0)
            rep.cut_after = static_cast<long>(rep.body.size() / 2);
        return rep;
    });
    oci::Registry reg(quick(d));
    auto c = reg.pull(ref_of(srv.host() + "/app:v1"));
    ASSERT_TRUE(c) << c.error().str();
    EXPECT_EQ(c->blobs, is.img.blobs);
    EXPECT_EQ(c->root_digest, is.img.root_digest);
}

// A registry that stops sending in the middle of a blob: the transfer is dropped after the stall
// timeout and retried; when every attempt stalls, a clear error in bounded time.
TEST(OciRegistryFaults, AStalledTransferIsDroppedAndRetried) {
    TempDir d;
    ImageServer is;
    std::atomic<int> stalls{0};
    std::atomic<bool> always{false};
    FakeServer srv([&](const HttpReq& r) {
        HttpReply rep = is.serve(r, "app");
        if (r.path.find("/blobs/") != std::string::npos && (always || stalls++ == 0)) {
            rep.stall_after = 4;
            rep.stall_ms = 2500;
        }
        return rep;
    });
    oci::RegistryOptions o = quick(d);
    o.rate_window = std::chrono::milliseconds(1000);
    {
        oci::Registry reg(o);
        auto c = reg.pull(ref_of(srv.host() + "/app:v1"));
        ASSERT_TRUE(c) << c.error().str();
        EXPECT_EQ(c->blobs, is.img.blobs);
    }
    always = true;
    oci::Registry reg(o);
    const auto t0 = std::chrono::steady_clock::now();
    auto c = reg.pull(ref_of(srv.host() + "/app:v1"));
    const auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ExitCode::error) << c.error().str();
    EXPECT_TRUE(contains(c.error().str(), srv.host())) << c.error().str();
    EXPECT_LT(took, std::chrono::seconds(30));
}

TEST(OciRegistryFaults, AConnectionAlwaysDroppedEndsInAClearError) {
    TempDir d;
    ImageServer is;
    const std::string layer = is.img.blobs.begin()->first;
    FakeServer srv([&](const HttpReq& r) {
        HttpReply rep = is.serve(r, "app");
        rep.cut_after = 10;
        return rep;
    });
    oci::Registry reg(quick(d));
    auto b = reg.get_blob(ref_of(srv.host() + "/app"), layer);
    ASSERT_FALSE(b);
    const std::string s = b.error().str();
    EXPECT_TRUE(contains(s, "connection lost")) << s;
    EXPECT_TRUE(contains(s, "blob " + layer)) << s;
    EXPECT_EQ(srv.count("GET", "/v2/app/blobs/"), 3u);
    ASSERT_FALSE(b.error().notes.empty());
    EXPECT_EQ(b.error().notes[0], "tried 3 times");
}

TEST(OciRegistryFaults, ConnectionRefusedNamesTheRegistry) {
    TempDir d;
    const int port = free_port();
    oci::Registry reg(quick(d));
    auto m = reg.get_manifest(ref_of("127.0.0.1:" + std::to_string(port) + "/app:v1"));
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ExitCode::error);
    EXPECT_TRUE(
        contains(m.error().str(), "cannot connect to http://127.0.0.1:" + std::to_string(port)))
        << m.error().str();
}

TEST(OciRegistryFaults, AManifestOverTheLimitIsRefused) {
    TempDir d;
    std::string big = "{\"schemaVersion\":2,\"pad\":\"" + std::string(5 << 20, 'x') + "\"}";
    FakeServer srv([&](const HttpReq&) {
        return HttpReply::text(200, big).with("Content-Type",
                                              std::string(oci::media::oci_manifest));
    });
    oci::Registry reg(quick(d));
    auto m = reg.get_manifest(ref_of(srv.host() + "/app:v1"));
    ASSERT_FALSE(m);
    EXPECT_TRUE(contains(m.error().str(), "larger than the 4096 KiB a manifest may be"))
        << m.error().str();
    EXPECT_EQ(srv.count("GET", "/v2/"), 1u); // not retried
}

TEST(OciRegistryFaults, AnUnknownMediaTypeAndDigestMismatchesAreRefused) {
    TempDir d;
    ImageServer is;
    const std::string other = sha256_digest("x");
    FakeServer srv([&](const HttpReq& r) {
        if (r.path == "/v2/app/manifests/weird")
            return HttpReply::text(200, "{}").with("Content-Type", "application/vnd.weird+json");
        if (r.path == "/v2/app/manifests/lying")
            return HttpReply::text(200, is.img.blobs.at(is.img.root_digest))
                .with("Content-Type", is.img.root_media_type)
                .with("Docker-Content-Digest", other);
        if (r.path == "/v2/app/manifests/" + other)
            return HttpReply::text(200, is.img.blobs.at(is.img.root_digest))
                .with("Content-Type", is.img.root_media_type);
        return is.serve(r, "app");
    });
    oci::Registry reg(quick(d));
    auto w = reg.get_manifest(ref_of(srv.host() + "/app:weird"));
    ASSERT_FALSE(w);
    EXPECT_TRUE(contains(w.error().str(), "unsupported manifest media type "
                                          "\"application/vnd.weird+json\""))
        << w.error().str();
    auto l = reg.get_manifest(ref_of(srv.host() + "/app:lying"));
    ASSERT_FALSE(l);
    EXPECT_TRUE(contains(l.error().str(), "Docker-Content-Digest says " + other))
        << l.error().str();
    auto g = reg.get_manifest(ref_of(srv.host() + "/app@" + other));
    ASSERT_FALSE(g);
    EXPECT_TRUE(contains(g.error().str(), "digest mismatch")) << g.error().str();
}

TEST(OciRegistryFaults, A401WithoutCredentialsSaysSo) {
    TempDir d;
    FakeServer srv([&](const HttpReq&) {
        return HttpReply::json(
                   401,
                   R"({"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]})")
            .with("WWW-Authenticate", "Basic realm=\"fake\"");
    });
    oci::Registry reg(quick(d));
    auto m = reg.get_manifest(ref_of(srv.host() + "/app:v1"));
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ExitCode::error);
    EXPECT_TRUE(contains(m.error().str(), "unauthorized (HTTP 401")) << m.error().str();
    ASSERT_FALSE(m.error().notes.empty());
    EXPECT_TRUE(contains(m.error().notes[0], "no credentials for " + srv.host()))
        << m.error().notes[0];
    EXPECT_EQ(srv.count("GET", "/v2/"), 1u);
}

TEST(OciRegistryFaults, A403SaysDenied) {
    TempDir d;
    FakeServer srv([&](const HttpReq&) {
        return HttpReply::json(
            403,
            R"({"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]})");
    });
    oci::Registry reg(quick(d));
    auto m = reg.get_blob(ref_of(srv.host() + "/app"), sha256_digest("x"));
    ASSERT_FALSE(m);
    EXPECT_TRUE(contains(m.error().str(),
                         "denied (HTTP 403, DENIED: requested access to the resource is denied)"))
        << m.error().str();
    EXPECT_EQ(srv.requests().size(), 1u);
}

TEST(OciRegistryFaults, BearerTokensAreFetchedFromTheRealmWithCredentialsAndCached) {
    TempDir d;
    ImageServer is;
    std::atomic<int> tokens{0};
    std::string host;
    FakeServer srv([&](const HttpReq& r) {
        if (r.path == "/token") {
            // Basic alice:wonder, as the auth file says.
            if (r.header("authorization") != "Basic YWxpY2U6d29uZGVy")
                return HttpReply::json(401, "{}");
            if (r.query("service") != "fake-registry" ||
                r.query("scope") != "repository%3Aapp%3Apull")
                return HttpReply::json(400, "{}");
            ++tokens;
            return HttpReply::json(200, R"({"access_token":"tok-123","expires_in":300})");
        }
        if (r.header("authorization") != "Bearer tok-123")
            return HttpReply::json(401, "{}").with(
                "WWW-Authenticate",
                "Bearer realm=\"http://" + host +
                    "/token\",service=\"fake-registry\",scope=\"repository:app:pull\"");
        return is.serve(r, "app");
    });
    host = srv.host();
    auto o = quick(d);
    o.auth_files = {
        d.write("auth.json", R"({"auths":{")" + host + R"(":{"auth":"YWxpY2U6d29uZGVy"}}})")
            .string()};
    oci::Registry reg(o);
    auto c = reg.pull(ref_of(host + "/app:v1"));
    ASSERT_TRUE(c) << c.error().str();
    EXPECT_EQ(c->blobs, is.img.blobs);
    EXPECT_EQ(tokens.load(), 1); // one token for the scope, reused for every blob
    EXPECT_EQ(srv.count("GET", "/token"), 1u);
}

TEST(OciRegistryFaults, APlatformIsChosenFromAnIndex) {
    TempDir d;
    const auto amd = make_image("amd", "linux/amd64");
    const auto arm = make_image("arm", "linux/arm64");
    const auto idx = make_index({{amd, "linux/amd64"}, {arm, "linux/arm64"}});
    FakeServer srv([&](const HttpReq& r) {
        const std::string mp = "/v2/app/manifests/";
        if (r.path.rfind(mp, 0) == 0) {
            std::string id = r.path.substr(mp.size());
            if (id == "multi") id = idx.root_digest;
            auto it = idx.blobs.find(id);
            if (it == idx.blobs.end()) return HttpReply::json(404, "{}");
            return HttpReply::text(200, it->second)
                .with("Content-Type",
                      id == idx.root_digest ? idx.root_media_type : amd.root_media_type);
        }
        auto it = idx.blobs.find(r.path.substr(std::string("/v2/app/blobs/").size()));
        if (it == idx.blobs.end()) return HttpReply::json(404, "{}");
        return HttpReply::text(200, it->second);
    });
    oci::Registry reg(quick(d));
    oci::PullOptions po;
    po.platform = oci::Platform{"linux", "arm64", ""};
    auto c = reg.pull(ref_of(srv.host() + "/app:multi"), po);
    ASSERT_TRUE(c) << c.error().str();
    EXPECT_EQ(c->root_digest, arm.root_digest);
    EXPECT_EQ(c->blobs, arm.blobs);

    po.all_platforms = true;
    auto all = reg.pull(ref_of(srv.host() + "/app:multi"), po);
    ASSERT_TRUE(all) << all.error().str();
    EXPECT_EQ(all->root_digest, idx.root_digest);
    EXPECT_EQ(all->blobs, idx.blobs);

    po.all_platforms = false;
    po.platform = oci::Platform{"linux", "s390x", ""};
    auto none = reg.pull(ref_of(srv.host() + "/app:multi"), po);
    ASSERT_FALSE(none);
    EXPECT_TRUE(contains(none.error().str(), "no manifest for the platform linux/s390x"))
        << none.error().str();
    EXPECT_EQ(none.error().code, ExitCode::invalid);
    ASSERT_FALSE(none.error().notes.empty());
    EXPECT_EQ(none.error().notes[0], "the index has: linux/amd64, linux/arm64");
}

TEST(OciRegistryFaults, ChunkedAndMonolithicUploads) {
    TempDir d;
    std::map<std::string, std::string> uploads; // session -> bytes so far
    std::map<std::string, std::string> stored;
    int session = 0;
    FakeServer srv([&](const HttpReq& r) {
        const std::string up = "/v2/app/blobs/uploads/";
        if (r.method == "HEAD") {
            auto it = stored.find(r.path.substr(std::string("/v2/app/blobs/").size()));
            return it == stored.end() ? HttpReply::text(404) : HttpReply::text(200, "");
        }
        if (r.method == "POST" && r.path == up) {
            const std::string id = std::to_string(++session);
            uploads[id];
            return HttpReply::text(202).with("Location", up + id);
        }
        if (r.path.rfind(up, 0) == 0) {
            const std::string id = r.path.substr(up.size());
            if (r.method == "PATCH") {
                const std::string want = std::to_string(uploads[id].size()) + "-" +
                                         std::to_string(uploads[id].size() + r.body.size() - 1);
                if (r.header("content-range") != want) return HttpReply::text(416);
                uploads[id] += r.body;
                return HttpReply::text(202).with("Location", up + id + "?state=x");
            }
            if (r.method == "PUT") {
                uploads[id] += r.body;
                const std::string dg = r.query("digest");
                if ("sha256%3A" + sha256_digest(uploads[id]).substr(7) != dg &&
                    sha256_digest(uploads[id]) != dg)
                    return HttpReply::text(400, "bad digest");
                stored[sha256_digest(uploads[id])] = uploads[id];
                return HttpReply::text(201);
            }
        }
        return HttpReply::text(404);
    });
    auto o = quick(d);
    o.chunk_threshold = 1000;
    o.chunk_size = 300;
    oci::Registry reg(o);
    const std::string small(999, 's'), big(1000, 'b');
    ASSERT_TRUE(reg.put_blob(ref_of(srv.host() + "/app"), sha256_digest(small), small));
    EXPECT_EQ(srv.count("PATCH", "/v2/app/blobs/uploads/"), 0u);
    ASSERT_TRUE(reg.put_blob(ref_of(srv.host() + "/app"), sha256_digest(big), big));
    EXPECT_EQ(srv.count("PATCH", "/v2/app/blobs/uploads/"), 4u); // 300+300+300+100
    EXPECT_EQ(stored[sha256_digest(small)], small);
    EXPECT_EQ(stored[sha256_digest(big)], big);
    // Already there: HEAD only.
    const auto posts = srv.count("POST", "/v2/app/blobs/uploads/");
    ASSERT_TRUE(reg.put_blob(ref_of(srv.host() + "/app"), sha256_digest(big), big));
    EXPECT_EQ(srv.count("POST", "/v2/app/blobs/uploads/"), posts);
}

TEST(OciRegistryFaults, A429IsRetriedAfterItsRetryAfter) {
    TempDir d;
    ImageServer is;
    std::atomic<int> calls{0};
    FakeServer srv([&](const HttpReq& r) {
        if (calls++ == 0) return HttpReply::text(429, "slow down").with("Retry-After", "0");
        return is.serve(r, "app");
    });
    oci::Registry reg(quick(d));
    auto m = reg.get_manifest(ref_of(srv.host() + "/app:v1"));
    ASSERT_TRUE(m) << m.error().str();
    EXPECT_EQ(calls.load(), 2);
}

TEST(OciRegistryFaults, BlobRedirectsAreFollowedWithoutTakingTheTokenAlong) {
    TempDir d;
    ImageServer is;
    std::string host;
    FakeServer srv([&](const HttpReq& r) {
        if (r.path == "/token") return HttpReply::json(200, R"({"token":"secret-token"})");
        if (r.path.rfind("/storage/", 0) == 0) {
            // The storage host: it must not see the registry's token.
            if (!r.header("authorization").empty()) return HttpReply::text(400, "leaked");
            auto it = is.img.blobs.find(r.path.substr(9));
            return it == is.img.blobs.end() ? HttpReply::text(404)
                                            : HttpReply::text(200, it->second);
        }
        if (r.header("authorization") != "Bearer secret-token")
            return HttpReply::json(401, "{}").with("WWW-Authenticate",
                                                   "Bearer realm=\"http://" + host + "/token\"");
        const std::string bp = "/v2/app/blobs/";
        if (r.path.rfind(bp, 0) == 0)
            // Another host name for the same server: curl treats it as another host.
            return HttpReply::text(307).with("Location",
                                             "http://localhost:" + std::to_string(srv.port()) +
                                                 "/storage/" + r.path.substr(bp.size()));
        return is.serve(r, "app");
    });
    host = srv.host();
    oci::Registry reg(quick(d));
    auto c = reg.pull(ref_of(host + "/app:v1"));
    ASSERT_TRUE(c) << c.error().str();
    EXPECT_EQ(c->blobs, is.img.blobs);
    EXPECT_EQ(srv.count("GET", "/storage/"), is.img.blobs.size() - 1);
}

TEST(OciRegistryFaults, ABlobLargerThanItsDescriptorIsCutOff) {
    TempDir d;
    ImageServer is;
    FakeServer srv([&](const HttpReq& r) {
        HttpReply rep = is.serve(r, "app");
        if (r.path.find("/blobs/") != std::string::npos) rep.body += std::string(100000, 'x');
        return rep;
    });
    oci::Registry reg(quick(d));
    auto c = reg.pull(ref_of(srv.host() + "/app:v1"));
    ASSERT_FALSE(c);
    EXPECT_TRUE(contains(c.error().str(), "the registry sent more than the")) << c.error().str();
}

TEST(OciRegistryFaults, AFailedUploadStartsANewSession) {
    TempDir d;
    std::map<std::string, std::string> uploads, stored;
    int session = 0;
    FakeServer srv([&](const HttpReq& r) {
        const std::string up = "/v2/app/blobs/uploads/";
        if (r.method == "HEAD") return HttpReply::text(404);
        if (r.method == "POST" && r.path == up) {
            const std::string id = std::to_string(++session);
            return HttpReply::text(202).with("Location", up + id);
        }
        const std::string id = r.path.substr(up.size());
        if (r.method == "PATCH") {
            // The first session breaks after its first chunk was taken.
            if (id == "1" && !uploads[id].empty()) return HttpReply::text(500, "disk full");
            const std::string want = std::to_string(uploads[id].size()) + "-" +
                                     std::to_string(uploads[id].size() + r.body.size() - 1);
            if (r.header("content-range") != want) return HttpReply::text(416);
            uploads[id] += r.body;
            return HttpReply::text(202).with("Location", up + id);
        }
        if (r.method == "PUT") {
            uploads[id] += r.body;
            stored[sha256_digest(uploads[id])] = uploads[id];
            return HttpReply::text(201);
        }
        return HttpReply::text(404);
    });
    auto o = quick(d);
    o.chunk_threshold = 10;
    o.chunk_size = 40;
    oci::Registry reg(o);
    const std::string blob(100, 'z');
    auto r = reg.put_blob(ref_of(srv.host() + "/app"), sha256_digest(blob), blob);
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(session, 2);
    EXPECT_EQ(stored[sha256_digest(blob)], blob);
    // A chunk is never sent twice within one session.
    EXPECT_EQ(srv.count("PATCH", "/v2/app/blobs/uploads/1"), 2u);
    EXPECT_EQ(srv.count("PATCH", "/v2/app/blobs/uploads/2"), 3u);
}

TEST(OciRegistryFaults, SchemesPlainHttpOnlyForLoopbackAndInsecureRegistries) {
    oci::RegistryOptions o;
    o.insecure = {"registry.internal:5000"};
    oci::Registry reg(o);
    EXPECT_EQ(reg.base_url("quay.io"), "https://quay.io");
    EXPECT_EQ(reg.base_url("docker.io"), "https://registry-1.docker.io");
    EXPECT_EQ(reg.base_url("registry.internal:5000"), "http://registry.internal:5000");
    EXPECT_EQ(reg.base_url("registry.internal"), "https://registry.internal");
    EXPECT_EQ(reg.base_url("localhost:5000"), "http://localhost:5000");
    EXPECT_EQ(reg.base_url("127.0.0.1:5000"), "http://127.0.0.1:5000");
    EXPECT_EQ(reg.base_url("localhost.example.com"), "https://localhost.example.com");
}

TEST(OciRegistryFaults, MalformedContentIsRefusedBeforeAnyRequest) {
    TempDir d;
    FakeServer srv([&](const HttpReq&) { return HttpReply::text(500); });
    oci::Registry reg(quick(d));
    const auto ref = ref_of(srv.host() + "/app:v1");
    auto img = make_image("bad");
    auto tampered = img;
    tampered.blobs.begin()->second += "!";
    auto r = reg.push(ref, tampered);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(r.error().str(), "does not match its digest")) << r.error().str();

    auto missing = img;
    missing.blobs.erase(std::prev(missing.blobs.end()) == missing.blobs.find(img.root_digest)
                            ? missing.blobs.begin()
                            : std::prev(missing.blobs.end()));
    auto m = reg.push(ref, missing);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(m.error().str(), "is missing")) << m.error().str();

    auto noroot = img;
    noroot.root_digest = sha256_digest("nothing");
    auto n = reg.push(ref, noroot);
    ASSERT_FALSE(n);
    EXPECT_TRUE(contains(n.error().str(), "is not among the blobs")) << n.error().str();
    EXPECT_TRUE(srv.requests().empty());
}

TEST(OciRegistryFaults, AServerThatHangsUpMidUploadIsAnErrorNotASignal) {
    TempDir d;
    FakeServer srv([&](const HttpReq& r) {
        if (r.method == "HEAD") return HttpReply::text(404);
        if (r.method == "POST")
            return HttpReply::text(202).with("Location", "/v2/app/blobs/uploads/1");
        return HttpReply::text(500, "gave up");
    });
    srv.answer_before_body = [](const HttpReq& r) { return r.method == "PUT"; };
    auto o = quick(d);
    o.retries = 1;
    oci::Registry reg(o);
    const std::string blob(16 << 20, 'u');
    auto r = reg.put_blob(ref_of(srv.host() + "/app"), sha256_digest(blob), blob);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::error);
    EXPECT_TRUE(contains(r.error().str(), "blob " + sha256_digest(blob))) << r.error().str();
    EXPECT_EQ(srv.count("POST", "/v2/app/blobs/uploads/"), 2u); // a second session was tried
}

// ---- slow registries: every request ends ----

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Whether a file under `root` has `digest`'s hex in its name (a blob, or a partial one).
bool has_file_for(const std::filesystem::path& root, const std::string& digest) {
    const std::string hex = digest.substr(digest.find(':') + 1);
    std::error_code ec;
    if (!std::filesystem::exists(root, ec)) return false;
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
        if (it->path().filename().string().find(hex) != std::string::npos) return true;
    return false;
}

// The layer of an image with one big layer (besides its small payload layer).
std::string big_layer(const oci::Content& img) {
    for (const auto& [d, b] : img.blobs)
        if (b.size() >= 100000) return d;
    return {};
}

} // namespace

// A manifest sent one byte every half second (minutes for the whole) ends at the request
// timeout, naming the manifest and its URL, and is not tried again past it.
TEST(OciRegistryFaults, AManifestTrickledByteByByteEndsAtTheRequestTimeout) {
    TempDir d;
    ImageServer is;
    FakeServer srv([&](const HttpReq& r) {
        HttpReply rep = is.serve(r, "app");
        if (r.path.find("/manifests/") != std::string::npos) {
            rep.trickle_bytes = 1;
            rep.trickle_ms = 500;
        }
        return rep;
    });
    auto o = quick(d);
    o.request_timeout = std::chrono::seconds(2);
    oci::Registry reg(o);
    const auto t0 = Clock::now();
    auto m = reg.get_manifest(ref_of(srv.host() + "/app:v1"));
    const double took = seconds_since(t0);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ExitCode::error);
    const std::string s = m.error().str();
    EXPECT_TRUE(contains(s, "manifest v1: no complete answer within 2 s, the request timeout "
                            "(GET http://" +
                                srv.host() + "/v2/app/manifests/v1)"))
        << s;
    EXPECT_TRUE(contains(s, "registry " + srv.host() + ", repository app")) << s;
    EXPECT_LT(took, 15.0); // the whole manifest would take minutes
    EXPECT_EQ(srv.count("GET", "/v2/app/manifests/v1"), 1u);
}

// A registry that sends 10 bytes of a manifest and then nothing: the same deadline, all attempts
// together (it used to hold a pull for (retries + 1) × 60 s).
TEST(OciRegistryFaults, AManifestStalledAfterTenBytesEndsAtTheRequestTimeout) {
    TempDir d;
    ImageServer is;
    std::atomic<int> calls{0};
    FakeServer srv([&](const HttpReq& r) {
        // A 503 first: the retry after it shares the deadline.
        if (calls++ == 0) return HttpReply::text(503, "busy");
        HttpReply rep = is.serve(r, "app");
        rep.stall_after = 10;
        rep.stall_ms = 600000;
        return rep;
    });
    auto o = quick(d);
    o.request_timeout = std::chrono::seconds(2);
    oci::Registry reg(o);
    const auto t0 = Clock::now();
    auto c = reg.pull(ref_of(srv.host() + "/app:v1"));
    const double took = seconds_since(t0);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ExitCode::error);
    const std::string s = c.error().str();
    EXPECT_TRUE(contains(s, "manifest v1: no complete answer within 2 s")) << s;
    ASSERT_FALSE(c.error().notes.empty()) << s;
    EXPECT_EQ(c.error().notes[0], "tried 2 times");
    EXPECT_LT(took, 15.0);
    EXPECT_EQ(srv.count("GET", "/v2/app/manifests/v1"), 2u);
}

// A token endpoint that never answers is bounded by the deadline of the request needing it.
TEST(OciRegistryFaults, ATokenThatNeverComesEndsAtTheRequestTimeout) {
    TempDir d;
    std::string host;
    FakeServer srv([&](const HttpReq& r) {
        if (r.path == "/token") {
            HttpReply rep = HttpReply::json(200, R"({"token":"late"})");
            rep.stall_after = 0;
            rep.stall_ms = 600000;
            return rep;
        }
        return HttpReply::json(401, "{}").with("WWW-Authenticate",
                                               "Bearer realm=\"http://" + host + "/token\"");
    });
    host = srv.host();
    auto o = quick(d);
    o.request_timeout = std::chrono::seconds(2);
    oci::Registry reg(o);
    const auto t0 = Clock::now();
    auto m = reg.get_manifest(ref_of(host + "/app:v1"));
    const double took = seconds_since(t0);
    ASSERT_FALSE(m);
    const std::string s = m.error().str();
    EXPECT_TRUE(contains(s, "token from http://" + host + "/token: no complete answer within 2 s"))
        << s;
    EXPECT_LT(took, 15.0);
    EXPECT_EQ(srv.count("GET", "/token"), 1u);
}

// The small calls of an upload have the deadline too: an upload the registry never opens.
TEST(OciRegistryFaults, AnUploadNeverOpenedEndsAtTheRequestTimeout) {
    TempDir d;
    FakeServer srv([&](const HttpReq& r) {
        if (r.method == "HEAD") return HttpReply::text(404);
        HttpReply rep = HttpReply::text(202).with("Location", "/v2/app/blobs/uploads/1");
        rep.body = "opening";
        rep.stall_after = 2;
        rep.stall_ms = 600000;
        return rep;
    });
    auto o = quick(d);
    o.request_timeout = std::chrono::seconds(2);
    oci::Registry reg(o);
    const std::string blob(1000, 'x');
    const auto t0 = Clock::now();
    auto r = reg.put_blob(ref_of(srv.host() + "/app"), sha256_digest(blob), blob);
    const double took = seconds_since(t0);
    ASSERT_FALSE(r);
    const std::string s = r.error().str();
    EXPECT_TRUE(contains(s, "blob " + sha256_digest(blob) + ": no complete answer within 2 s"))
        << s;
    EXPECT_TRUE(contains(s, "(POST http://" + srv.host() + "/v2/app/blobs/uploads/)")) << s;
    EXPECT_LT(took, 15.0);
    EXPECT_EQ(srv.count("POST", "/v2/app/blobs/uploads/"), 1u);
}

// A blob sent far below the minimum rate (200 bytes/s: 100 KB would take minutes) is aborted
// after the rate window, tried again as often as the retries allow, and never cached (whole or
// in part); what came in full before it stays cached.
TEST(OciRegistryFaults, ABlobBelowTheMinimumRateIsAbortedAndNotCached) {
    TempDir d;
    const auto img = make_image("slow layer", "linux/amd64", {100000});
    const std::string layer = big_layer(img);
    ASSERT_FALSE(layer.empty());
    FakeServer srv([&](const HttpReq& r) {
        const std::string mp = "/v2/app/manifests/v1";
        if (r.path == mp)
            return HttpReply::text(200, img.blobs.at(img.root_digest))
                .with("Content-Type", img.root_media_type);
        auto it = img.blobs.find(r.path.substr(std::string("/v2/app/blobs/").size()));
        if (it == img.blobs.end()) return HttpReply::json(404, "{}");
        HttpReply rep = HttpReply::text(200, it->second);
        if (it->first == layer) {
            rep.trickle_bytes = 100;
            rep.trickle_ms = 500;
        }
        return rep;
    });
    oci::Store store(d / "cache");
    auto o = quick(d);
    o.rate_window = std::chrono::seconds(1);
    o.parallel = 1; // the small blobs first, then the slow one
    oci::Registry reg(o, &store);
    const auto t0 = Clock::now();
    auto c = reg.pull(ref_of(srv.host() + "/app:v1"));
    const double took = seconds_since(t0);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ExitCode::error);
    const std::string s = c.error().str();
    EXPECT_TRUE(contains(s, "blob " + layer + ": slower than 10 KiB/s for 1 s (http://" +
                                srv.host() + "/v2/app/blobs/" + layer + ")"))
        << s;
    ASSERT_FALSE(c.error().notes.empty()) << s;
    EXPECT_EQ(c.error().notes[0], "tried 3 times");
    EXPECT_LT(took, 30.0);
    EXPECT_EQ(srv.count("GET", "/v2/app/blobs/" + layer), 3u);
    EXPECT_FALSE(has_file_for(d / "cache", layer));
    auto cached = store.get(layer, 1 << 20);
    ASSERT_TRUE(cached);
    EXPECT_FALSE(*cached);
    for (const auto& [dg, b] : img.blobs) {
        if (dg == layer) continue;
        auto other = store.get(dg, 1 << 20);
        ASSERT_TRUE(other);
        EXPECT_TRUE(*other) << dg << " came in full and is cached";
    }
}

// A slow registry that keeps above the minimum rate is waited for, however long the whole
// transfer takes (several rate windows here).
TEST(OciRegistryFaults, ABlobAboveTheMinimumRateIsWaitedFor) {
    TempDir d;
    const auto img = make_image("steady layer", "linux/amd64", {100000});
    const std::string layer = big_layer(img);
    FakeServer srv([&](const HttpReq& r) {
        auto it = img.blobs.find(r.path.substr(std::string("/v2/app/blobs/").size()));
        if (it == img.blobs.end()) return HttpReply::json(404, "{}");
        HttpReply rep = HttpReply::text(200, it->second);
        rep.trickle_bytes = 5000;
        rep.trickle_ms = 250; // 20 KB/s: 5 s for the layer
        return rep;
    });
    oci::Store store(d / "cache");
    auto o = quick(d);
    o.rate_window = std::chrono::seconds(1);
    o.min_rate = 4096;
    oci::Registry reg(o, &store);
    auto b = reg.get_blob(ref_of(srv.host() + "/app"), layer, img.blobs.at(layer).size());
    ASSERT_TRUE(b) << b.error().str();
    EXPECT_EQ(*b, img.blobs.at(layer));
    EXPECT_EQ(srv.count("GET", "/v2/app/blobs/"), 1u);
}

// ---- the same through the kpkg binary ----

namespace {

// `kpkg ARGS` with its own cache, killed after `limit_s` seconds.
test::ProgramResult kpkg_run(const TempDir& d, std::vector<std::string> args, int limit_s) {
    std::vector<std::string> argv{std::getenv("KPKG_BIN") ? std::getenv("KPKG_BIN") : "kpkg"};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_program(argv,
                             {"KPKG_CACHE_DIR=" + (d / "cache").string(),
                              "REGISTRY_AUTH_FILE=" + (d / "no-auth.json").string(),
                              "HOME=" + d.path().string()},
                             {}, limit_s, {"NO_COLOR", "XDG_RUNTIME_DIR", "XDG_CACHE_HOME"});
}

} // namespace

// kpkg pull with its defaults: a manifest trickled one byte every half second (minutes for the
// whole; kpkg used to wait for all of it) fails after the 30 s request timeout, exit 1, naming
// the manifest and its URL.
TEST(OciRegistryFaultsCli, PullOfATrickledManifestEndsAtTheDefaultRequestTimeout) {
    TempDir d;
    ImageServer is;
    FakeServer srv([&](const HttpReq& r) {
        HttpReply rep = is.serve(r, "app");
        rep.trickle_bytes = 1;
        rep.trickle_ms = 500;
        return rep;
    });
    const auto t0 = Clock::now();
    auto r = kpkg_run(d, {"pull", srv.host() + "/app:v1"}, 100);
    const double took = seconds_since(t0);
    ASSERT_FALSE(r.timed_out) << "still waiting after 100 s";
    EXPECT_EQ(r.exit_code, 1) << test::describe(r);
    EXPECT_TRUE(contains(r.err, "manifest v1: no complete answer within 30 s, the request timeout "
                                "(GET http://" +
                                    srv.host() + "/v2/app/manifests/v1)"))
        << r.err;
    EXPECT_GE(took, 29.0);
    EXPECT_LT(took, 60.0);
    EXPECT_EQ(r.out, "");
}

// --request-timeout: a small value bounds blobs that stall after 10 bytes (each attempt ends
// after the window, four attempts); a bad value is a usage error, 0 is accepted.
TEST(OciRegistryFaultsCli, RequestTimeoutFlagBoundsStalledBlobs) {
    TempDir d;
    const auto img = make_image("stalled", "linux/amd64", {100000});
    const std::string layer = big_layer(img);
    FakeServer srv([&](const HttpReq& r) {
        if (r.path == "/v2/app/manifests/v1")
            return HttpReply::text(200, img.blobs.at(img.root_digest))
                .with("Content-Type", img.root_media_type);
        auto it = img.blobs.find(r.path.substr(std::string("/v2/app/blobs/").size()));
        if (it == img.blobs.end()) return HttpReply::json(404, "{}");
        HttpReply rep = HttpReply::text(200, it->second);
        rep.stall_after = 10;
        rep.stall_ms = 600000;
        return rep;
    });
    const auto t0 = Clock::now();
    auto r = kpkg_run(d, {"--request-timeout", "2s", "pull", srv.host() + "/app:v1"}, 100);
    const double took = seconds_since(t0);
    ASSERT_FALSE(r.timed_out) << "still waiting after 100 s";
    EXPECT_EQ(r.exit_code, 1) << test::describe(r);
    // Whichever ends an attempt first: the rate (2 s below 10 KiB/s) or, for the small config,
    // the attempt's own limit (2 s plus its size at 10 KiB/s).
    EXPECT_TRUE(contains(r.err, ": slower than 10 KiB/s for 2 s (http://" + srv.host() +
                                    "/v2/app/blobs/sha256:") ||
                (contains(r.err, ": not complete within 2.") &&
                 contains(r.err, " s, the rate window plus its size at 10 KiB/s (http://" +
                                     srv.host() + "/v2/app/blobs/sha256:")))
        << r.err;
    EXPECT_TRUE(contains(r.err, "tried 4 times")) << r.err;
    EXPECT_LT(took, 60.0);
    EXPECT_FALSE(has_file_for(d / "cache", layer));

    auto bad = kpkg_run(d, {"--request-timeout", "soon", "pull", srv.host() + "/app:v1"}, 30);
    EXPECT_EQ(bad.exit_code, 2) << test::describe(bad);
    EXPECT_TRUE(contains(bad.err, "--request-timeout soon: not a duration")) << bad.err;
    EXPECT_EQ(srv.count("GET", "/v2/app/manifests/v1"), 1u) << "nothing asked of the registry";
}
