// The registry client against a real registry (Debian's docker-registry, started per test on a
// free loopback port): push and pull round trips, indexes, mounts, basic auth, the cache in front
// (a warm pull of a digest reference with the registry stopped), skopeo reading what we pushed.
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "kpkg/core/digest.hpp"
#include "kpkg/oci/media_types.hpp"
#include "kpkg/oci/registry.hpp"
#include "kpkg/oci/store.hpp"
#include "registry_fixture.hpp"

using namespace kpkg;
using namespace kpkg::test;

namespace {

oci::RegistryOptions quick(const TempDir& d) {
    return quick_options(d, 1);
}

// Skips only when docker-registry is not installed; one that is installed but does not start is
// a broken set-up, and fails the test.
#define KPKG_REQUIRE_REGISTRY(var, ...)                                                            \
    if (RegistryProcess::binary().empty())                                                         \
        GTEST_SKIP() << missing_tool("docker-registry", "Debian package docker-registry");         \
    RegistryProcess var{__VA_ARGS__};                                                              \
    ASSERT_TRUE(var.running()) << "docker-registry is installed but did not start: " << var.error()

} // namespace

TEST(OciRegistry, PingAnswers) {
    KPKG_REQUIRE_REGISTRY(reg);
    TempDir d;
    oci::Registry client(quick(d));
    EXPECT_TRUE(client.ping(reg.host()));
    EXPECT_EQ(client.base_url(reg.host()), "http://" + reg.host());
    EXPECT_EQ(client.base_url("quay.io"), "https://quay.io");
    EXPECT_EQ(client.base_url("docker.io"), "https://registry-1.docker.io");
}

TEST(OciRegistry, PushThenPullRoundTripsByteForByte) {
    KPKG_REQUIRE_REGISTRY(reg);
    TempDir d;
    std::vector<oci::Progress> seen;
    auto o = quick(d);
    o.progress = [&](const oci::Progress& p) { seen.push_back(p); };
    oci::Registry client(o);
    const auto img = make_image("round trip", "linux/amd64", {70000, 3});
    auto pushed = client.push(ref_of(reg.host() + "/kpkg/app:v1"), img);
    ASSERT_TRUE(pushed) << pushed.error().str();
    EXPECT_EQ(*pushed, img.root_digest);
    EXPECT_FALSE(seen.empty());
    EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [](const oci::Progress& p) {
        return p.finished && p.direction == oci::Progress::Direction::upload;
    }));

    auto head = client.head_manifest(ref_of(reg.host() + "/kpkg/app:v1"));
    ASSERT_TRUE(head) << head.error().str();
    ASSERT_TRUE(head->has_value());
    EXPECT_EQ((*head)->digest, img.root_digest);

    oci::Registry fresh(quick(d));
    auto pulled = fresh.pull(ref_of(reg.host() + "/kpkg/app:v1"));
    ASSERT_TRUE(pulled) << pulled.error().str();
    EXPECT_EQ(pulled->root_digest, img.root_digest);
    EXPECT_EQ(pulled->root_media_type, img.root_media_type);
    EXPECT_EQ(pulled->blobs, img.blobs);
    // By digest too.
    auto by_digest = fresh.pull(ref_of(reg.host() + "/kpkg/app@" + img.root_digest));
    ASSERT_TRUE(by_digest) << by_digest.error().str();
    EXPECT_EQ(by_digest->blobs, img.blobs);

    auto missing = fresh.head_manifest(ref_of(reg.host() + "/kpkg/app:v2"));
    ASSERT_TRUE(missing);
    EXPECT_FALSE(missing->has_value());
    auto gone = fresh.pull(ref_of(reg.host() + "/kpkg/app:v2"));
    ASSERT_FALSE(gone);
    EXPECT_TRUE(contains(gone.error().str(), "manifest v2: not found (HTTP 404, MANIFEST_UNKNOWN"))
        << gone.error().str();
}

TEST(OciRegistry, ExistingBlobsAreNotUploadedAgain) {
    KPKG_REQUIRE_REGISTRY(reg);
    TempDir d;
    const auto img = make_image("twice", "linux/amd64", {5000});
    {
        oci::Registry client(quick(d));
        ASSERT_TRUE(client.push(ref_of(reg.host() + "/a:1"), img));
    }
    std::vector<oci::Progress> seen;
    auto o = quick(d);
    o.progress = [&](const oci::Progress& p) { seen.push_back(p); };
    oci::Registry client(o);
    ASSERT_TRUE(client.push(ref_of(reg.host() + "/a:2"), img));
    // Each blob: one finished event and no bytes in flight (HEAD said it exists).
    for (const auto& p : seen)
        EXPECT_TRUE(p.finished) << p.digest << " " << p.done;
    EXPECT_EQ(seen.size(), img.blobs.size() - 1);
}

TEST(OciRegistry, ChunkedUploadsWork) {
    KPKG_REQUIRE_REGISTRY(reg);
    TempDir d;
    auto o = quick(d);
    o.chunk_threshold = 10000;
    o.chunk_size = 4096;
    oci::Registry client(o);
    const auto img = make_image("chunks", "linux/amd64", {50000, 9999});
    ASSERT_TRUE(client.push(ref_of(reg.host() + "/chunked:v1"), img));
    oci::Registry fresh(quick(d));
    auto pulled = fresh.pull(ref_of(reg.host() + "/chunked:v1"));
    ASSERT_TRUE(pulled) << pulled.error().str();
    EXPECT_EQ(pulled->blobs, img.blobs);
}

TEST(OciRegistry, CrossRepositoryMount) {
    KPKG_REQUIRE_REGISTRY(reg);
    TempDir d;
    oci::Registry client(quick(d));
    const auto img = make_image("mounted", "linux/amd64", {20000});
    ASSERT_TRUE(client.push(ref_of(reg.host() + "/src:v1"), img));
    const auto layer = std::prev(img.blobs.end())->first;
    auto m = client.mount_blob(ref_of(reg.host() + "/dst"), layer, "src");
    ASSERT_TRUE(m) << m.error().str();
    EXPECT_TRUE(*m);
    auto h = client.head_blob(ref_of(reg.host() + "/dst"), layer);
    ASSERT_TRUE(h);
    ASSERT_TRUE(h->has_value());
    EXPECT_EQ(**h, img.blobs.at(layer).size());
    // A mount from a repository without the blob falls back to an upload.
    const std::string fresh_blob = "not anywhere yet";
    auto no = client.mount_blob(ref_of(reg.host() + "/dst"), sha256_digest(fresh_blob), "src");
    ASSERT_TRUE(no);
    EXPECT_FALSE(*no);
    ASSERT_TRUE(
        client.put_blob(ref_of(reg.host() + "/dst"), sha256_digest(fresh_blob), fresh_blob, "src"));
    auto got = client.get_blob(ref_of(reg.host() + "/dst"), sha256_digest(fresh_blob));
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, fresh_blob);
    // push with mount_from.
    oci::PushOptions po;
    po.mount_from = "src";
    ASSERT_TRUE(client.push(ref_of(reg.host() + "/dst:v1"), img, po));
}

TEST(OciRegistry, IndexesArePushedManifestsFirstAndPulledPerPlatform) {
    KPKG_REQUIRE_REGISTRY(reg);
    TempDir d;
    const auto amd = make_image("amd64 payload", "linux/amd64");
    const auto arm = make_image("arm64 payload", "linux/arm64");
    const auto idx = make_index({{amd, "linux/amd64"}, {arm, "linux/arm64"}});
    oci::Registry client(quick(d));
    auto pushed = client.push(ref_of(reg.host() + "/multi:v1"), idx);
    ASSERT_TRUE(pushed) << pushed.error().str();
    EXPECT_EQ(*pushed, idx.root_digest);

    oci::PullOptions po;
    po.platform = oci::Platform{"linux", "arm64", ""};
    auto one = client.pull(ref_of(reg.host() + "/multi:v1"), po);
    ASSERT_TRUE(one) << one.error().str();
    EXPECT_EQ(one->root_digest, arm.root_digest);
    EXPECT_EQ(one->blobs, arm.blobs);
    po.all_platforms = true;
    auto all = client.pull(ref_of(reg.host() + "/multi:v1"), po);
    ASSERT_TRUE(all) << all.error().str();
    EXPECT_EQ(all->root_digest, idx.root_digest);
    EXPECT_EQ(all->root_media_type, std::string(oci::media::oci_index));
    EXPECT_EQ(all->blobs, idx.blobs);
}

TEST(OciRegistry, BasicAuthWithHtpasswd) {
    KPKG_REQUIRE_REGISTRY(reg, "kpkg", "s3cret");
    TempDir d;
    const auto img = make_image("authenticated");
    {
        oci::Registry anonymous(quick(d));
        auto r = anonymous.push(ref_of(reg.host() + "/secure:v1"), img);
        ASSERT_FALSE(r);
        EXPECT_TRUE(contains(r.error().str(), "unauthorized (HTTP 401")) << r.error().str();
    }
    {
        auto o = quick(d);
        o.auth_files = {
            d.write("auth.json", "{\"auths\":{\"" + reg.host() +
                                     "\":{\"username\":\"kpkg\",\"password\":\"wrong\"}}}")
                .string()};
        oci::Registry wrong(o);
        auto r = wrong.pull(ref_of(reg.host() + "/secure:v1"));
        ASSERT_FALSE(r);
        EXPECT_TRUE(contains(r.error().str(), "401")) << r.error().str();
        ASSERT_FALSE(r.error().notes.empty());
        EXPECT_TRUE(contains(r.error().notes[0], "credentials used: kpkg from"))
            << r.error().notes[0];
    }
    auto o = quick(d);
    o.auth_files = {
        d.write("good.json", "{\"auths\":{\"" + reg.host() + "\":{\"auth\":\"a3BrZzpzM2NyZXQ=\"}}}")
            .string()}; // kpkg:s3cret
    {
        // Parallel transfers that all meet the 401 at once all go on with the credentials.
        oci::Registry parallel(o);
        const auto many = make_image("many layers", "linux/amd64", {1, 2, 3, 4, 5, 6, 7});
        auto pushed = parallel.push(ref_of(reg.host() + "/secure:many"), many);
        ASSERT_TRUE(pushed) << pushed.error().str();
    }
    oci::Registry client(o);
    ASSERT_TRUE(client.ping(reg.host()));
    auto pushed = client.push(ref_of(reg.host() + "/secure:v1"), img);
    ASSERT_TRUE(pushed) << pushed.error().str();
    auto pulled = client.pull(ref_of(reg.host() + "/secure:v1"));
    ASSERT_TRUE(pulled) << pulled.error().str();
    EXPECT_EQ(pulled->blobs, img.blobs);
}

TEST(OciRegistry, AWarmPullOfADigestNeedsNoRegistry) {
    TempDir d;
    const auto img = make_image("cached", "linux/amd64", {3000});
    oci::Store store(d / "cache");
    std::string host;
    {
        KPKG_REQUIRE_REGISTRY(reg);
        host = reg.host();
        oci::Registry client(quick(d));
        ASSERT_TRUE(client.push(ref_of(host + "/warm:v1"), img));
        oci::Registry cached(quick(d), &store);
        auto first = cached.pull(ref_of(host + "/warm:v1"));
        ASSERT_TRUE(first) << first.error().str();
        reg.stop();
        // Stopped: the tag needs the registry, unless offline.
        auto tag = cached.pull(ref_of(host + "/warm:v1"));
        ASSERT_FALSE(tag);
        EXPECT_TRUE(contains(tag.error().str(), "cannot connect")) << tag.error().str();
    }
    // A new client (nothing in memory), the registry gone.
    oci::Registry client(quick(d), &store);
    auto warm = client.pull(ref_of(host + "/warm@" + img.root_digest));
    ASSERT_TRUE(warm) << warm.error().str();
    EXPECT_EQ(warm->blobs, img.blobs);
    EXPECT_EQ(warm->root_digest, img.root_digest);
    oci::PullOptions off;
    off.offline = true;
    auto tag = client.pull(ref_of(host + "/warm:v1"), off);
    ASSERT_TRUE(tag) << tag.error().str();
    EXPECT_EQ(tag->blobs, img.blobs);
    auto unknown = client.pull(ref_of(host + "/warm:v9"), off);
    ASSERT_FALSE(unknown);
    EXPECT_TRUE(contains(unknown.error().str(), "tag v9 is not in the cache (offline)"))
        << unknown.error().str();
    // A damaged cached layer: not used (the registry is gone, so the pull fails, offline).
    const auto layer = std::prev(img.blobs.end())->first;
    {
        std::ofstream f(store.blob_path(layer), std::ios::trunc);
        f << "damaged";
    }
    auto damaged = client.pull(ref_of(host + "/warm@" + img.root_digest), off);
    ASSERT_FALSE(damaged);
    EXPECT_TRUE(contains(damaged.error().str(), "not in the cache")) << damaged.error().str();
}

TEST(OciRegistry, SkopeoReadsWhatWePushed) {
    if (::access("/usr/bin/skopeo", X_OK) != 0) GTEST_SKIP() << missing_tool("skopeo");
    KPKG_REQUIRE_REGISTRY(reg);
    TempDir d;
    oci::Registry client(quick(d));
    const auto img = make_image("for skopeo", "linux/amd64", {1234});
    ASSERT_TRUE(client.push(ref_of(reg.host() + "/kpkg/skopeo:v1"), img));
    std::string out;
    const int rc = run_command(
        "skopeo inspect --tls-verify=false docker://" + reg.host() + "/kpkg/skopeo:v1 2>&1", &out);
    ASSERT_EQ(rc, 0) << out;
    EXPECT_TRUE(contains(out, img.root_digest)) << out;
    EXPECT_TRUE(contains(out, "\"payload\": \"for skopeo\"")) << out;
    std::string raw;
    ASSERT_EQ(run_command("skopeo inspect --raw --tls-verify=false docker://" + reg.host() +
                              "/kpkg/skopeo:v1",
                          &raw),
              0);
    EXPECT_EQ(raw, img.blobs.at(img.root_digest));
}

TEST(OciRegistry, PullsWhatSkopeoPushed) {
    if (::access("/usr/bin/skopeo", X_OK) != 0) GTEST_SKIP() << missing_tool("skopeo");
    KPKG_REQUIRE_REGISTRY(reg);
    TempDir d;
    // An OCI layout written by hand, copied into the registry by skopeo.
    const auto img = make_image("from skopeo", "linux/amd64", {4321});
    d.write("layout/oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
    for (const auto& [dg, bytes] : img.blobs)
        d.write("layout/blobs/sha256/" + dg.substr(7), bytes);
    d.write("layout/index.json",
            R"({"schemaVersion":2,"manifests":[{"mediaType":")" + img.root_media_type +
                R"(","digest":")" + img.root_digest + R"(","size":)" +
                std::to_string(img.blobs.at(img.root_digest).size()) +
                R"(,"annotations":{"org.opencontainers.image.ref.name":"v1"}}]})");
    std::string out;
    ASSERT_EQ(run_command("skopeo copy --dest-tls-verify=false oci:" + (d / "layout").string() +
                              ":v1 docker://" + reg.host() + "/from/skopeo:v1 2>&1",
                          &out),
              0)
        << out;
    oci::Registry client(quick(d));
    auto pulled = client.pull(ref_of(reg.host() + "/from/skopeo:v1"));
    ASSERT_TRUE(pulled) << pulled.error().str();
    // skopeo compresses the layers on the way: what we pull is what skopeo says is there.
    std::string raw;
    ASSERT_EQ(run_command("skopeo inspect --raw --tls-verify=false docker://" + reg.host() +
                              "/from/skopeo:v1",
                          &raw),
              0);
    EXPECT_EQ(pulled->root_digest, sha256_digest(raw));
    EXPECT_EQ(pulled->blobs.at(pulled->root_digest), raw);
    // The same config, and every blob the manifest lists, each hashing to its name.
    std::size_t listed = 0;
    for (const auto& [dg, bytes] : pulled->blobs) {
        EXPECT_EQ(sha256_digest(bytes), dg);
        if (dg != pulled->root_digest) {
            EXPECT_TRUE(contains(raw, dg)) << dg;
            ++listed;
        }
    }
    EXPECT_EQ(listed, img.blobs.size() - 1);
    for (const auto& [dg, bytes] : img.blobs)
        if (contains(bytes, "\"payload\":\"from skopeo\"")) {
            EXPECT_EQ(pulled->blobs.count(dg), 1u) << "the config is carried over unchanged";
        }
}
