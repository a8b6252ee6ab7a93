// Registry credentials (kpkg/oci/auth.hpp): auth files in order, the forms of `auths` entries,
// docker.io's keys, credential helpers, broken files; WWW-Authenticate challenges.
#include <sys/stat.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "kpkg/io/go.hpp"
#include "kpkg/oci/auth.hpp"
#include "registry_fixture.hpp"

using namespace kpkg;
using namespace kpkg::test;

namespace {

std::string b64(const std::string& s) {
    std::string out;
    io::go::append_base64(out, s);
    return out;
}

// Puts `dir` first on PATH for the lifetime of the object.
class PathPrefix {
public:
    explicit PathPrefix(const fs::path& dir) {
        const char* p = std::getenv("PATH");
        saved_ = p ? p : "";
        ::setenv("PATH", (dir.string() + ":" + saved_).c_str(), 1);
    }
    ~PathPrefix() { ::setenv("PATH", saved_.c_str(), 1); }

private:
    std::string saved_;
};

// A docker-credential-<name> script that knows one host.
void write_helper(const TempDir& d, const std::string& name, const std::string& host,
                  const std::string& user, const std::string& secret) {
    const auto p = d.write("bin/docker-credential-" + name,
                           "#!/bin/sh\nread h\nif [ \"$h\" = \"" + host +
                               "\" ]; then printf '{\"ServerURL\":\"%s\",\"Username\":\"" + user +
                               "\",\"Secret\":\"" + secret +
                               "\"}' \"$h\"; exit 0; fi\n"
                               "echo 'credentials not found in native keychain'; exit 1\n");
    ::chmod(p.c_str(), 0755);
}

} // namespace

TEST(OciAuth, AuthsEntryWithBase64UserPassword) {
    TempDir d;
    const auto f =
        d.write("auth.json", R"({"auths":{"quay.io":{"auth":")" + b64("alice:s3cr:et") + R"("}}})");
    auto c = oci::find_credential("quay.io", {f});
    ASSERT_TRUE(c) << c.error().str();
    ASSERT_TRUE(c->has_value());
    EXPECT_EQ((*c)->username, "alice");
    EXPECT_EQ((*c)->password, "s3cr:et"); // only the first ':' separates
    EXPECT_EQ((*c)->source, f.string());
    auto none = oci::find_credential("ghcr.io", {f});
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->has_value());
}

TEST(OciAuth, KeysWithSchemeAndDockerHubsLegacyKey) {
    TempDir d;
    const auto f = d.write("config.json",
                           R"({"auths":{"https://index.docker.io/v1/":{"auth":")" + b64("bob:pw") +
                               R"("},"https://localhost:5000":{"username":"u","password":"p"}}})");
    auto hub = oci::find_credential("docker.io", {f});
    ASSERT_TRUE(hub);
    ASSERT_TRUE(hub->has_value());
    EXPECT_EQ((*hub)->username, "bob");
    auto local = oci::find_credential("localhost:5000", {f});
    ASSERT_TRUE(local);
    ASSERT_TRUE(local->has_value());
    EXPECT_EQ((*local)->username, "u");
    EXPECT_EQ((*local)->password, "p");
}

TEST(OciAuth, FilesAreSearchedInOrderAndMissingOnesSkipped) {
    TempDir d;
    const auto first =
        d.write("a.json", R"({"auths":{"quay.io":{"auth":")" + b64("first:1") + "\"}}}");
    const auto second = d.write("b.json", R"({"auths":{"quay.io":{"auth":")" + b64("second:2") +
                                              R"("},"ghcr.io":{"auth":")" + b64("g:3") + "\"}}}");
    auto c = oci::find_credential("quay.io", {d / "missing.json", first, second});
    ASSERT_TRUE(c);
    EXPECT_EQ((*c)->username, "first");
    auto g = oci::find_credential("ghcr.io", {first, second});
    ASSERT_TRUE(g);
    EXPECT_EQ((*g)->username, "g");
}

TEST(OciAuth, DefaultFilesFollowTheEnvironment) {
    const char* keep[] = {"REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR", "HOME"};
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    for (const char* k : keep) {
        const char* v = std::getenv(k);
        saved.emplace_back(k, v ? std::optional<std::string>(v) : std::nullopt);
    }
    ::setenv("REGISTRY_AUTH_FILE", "/r/auth.json", 1);
    ::setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
    ::setenv("HOME", "/home/u", 1);
    const std::vector<fs::path> want = {"/r/auth.json", "/run/user/7/containers/auth.json",
                                        "/home/u/.config/containers/auth.json",
                                        "/home/u/.docker/config.json"};
    EXPECT_EQ(oci::default_auth_files(), want);
    ::unsetenv("REGISTRY_AUTH_FILE");
    ::unsetenv("XDG_RUNTIME_DIR");
    EXPECT_EQ(oci::default_auth_files().size(), 2u);
    for (auto& [k, v] : saved)
        if (v)
            ::setenv(k.c_str(), v->c_str(), 1);
        else
            ::unsetenv(k.c_str());
}

TEST(OciAuth, ABrokenFileIsAnErrorNamingIt) {
    TempDir d;
    const auto f = d.write("auth.json", "{\"auths\": {\"quay.io\": ");
    auto c = oci::find_credential("quay.io", {f});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(c.error().str(), f.string())) << c.error().str();

    const auto g = d.write("bad64.json", R"({"auths":{"quay.io":{"auth":"%%%"}}})");
    auto e = oci::find_credential("quay.io", {g});
    ASSERT_FALSE(e);
    EXPECT_TRUE(contains(e.error().str(), g.string())) << e.error().str();
    EXPECT_TRUE(contains(e.error().str(), "base64")) << e.error().str();

    const auto h =
        d.write("nocolon.json", R"({"auths":{"quay.io":{"auth":")" + b64("nocolon") + "\"}}}");
    auto n = oci::find_credential("quay.io", {h});
    ASSERT_FALSE(n);
    EXPECT_TRUE(contains(n.error().str(), "user:password")) << n.error().str();
}

TEST(OciAuth, CredentialHelpersAndCredsStore) {
    TempDir d;
    write_helper(d, "kpkgtest", "quay.io", "helper-user", "helper-secret");
    write_helper(d, "kpkgstore", "ghcr.io", "store-user", "store-secret");
    PathPrefix path(d / "bin");
    const auto f =
        d.write("config.json", R"({"credHelpers":{"quay.io":"kpkgtest"},"credsStore":"kpkgstore",)"
                               R"("auths":{"docker.io":{"auth":")" +
                                   b64("hub:pw") + "\"}}}");
    auto q = oci::find_credential("quay.io", {f});
    ASSERT_TRUE(q) << q.error().str();
    ASSERT_TRUE(q->has_value());
    EXPECT_EQ((*q)->username, "helper-user");
    EXPECT_EQ((*q)->password, "helper-secret");
    EXPECT_EQ((*q)->source, "docker-credential-kpkgtest");
    auto g = oci::find_credential("ghcr.io", {f});
    ASSERT_TRUE(g) << g.error().str();
    ASSERT_TRUE(g->has_value());
    EXPECT_EQ((*g)->username, "store-user");
    // auths before credsStore.
    auto h = oci::find_credential("docker.io", {f});
    ASSERT_TRUE(h);
    EXPECT_EQ((*h)->username, "hub");
    // A helper that does not know the host: no credential, no error.
    auto none = oci::find_credential("example.com", {f});
    ASSERT_TRUE(none) << none.error().str();
    EXPECT_FALSE(none->has_value());
}

TEST(OciAuth, AMissingOrFailingHelperIsAnError) {
    TempDir d;
    const auto f = d.write("config.json", R"({"credHelpers":{"quay.io":"kpkg-no-such-helper"}})");
    auto c = oci::find_credential("quay.io", {f});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ExitCode::error);
    EXPECT_TRUE(contains(c.error().str(), "docker-credential-kpkg-no-such-helper"))
        << c.error().str();

    const auto p = d.write("bin/docker-credential-broken", "#!/bin/sh\necho boom >&1; exit 3\n");
    ::chmod(p.c_str(), 0755);
    PathPrefix path(d / "bin");
    auto b = oci::run_credential_helper("broken", "quay.io");
    ASSERT_FALSE(b);
    EXPECT_TRUE(contains(b.error().str(), "exit status 3")) << b.error().str();
}

TEST(OciAuth, ParsesChallenges) {
    auto cs = oci::parse_challenges(
        R"(Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a/b:pull,push")");
    ASSERT_EQ(cs.size(), 1u);
    EXPECT_EQ(cs[0].scheme, "Bearer");
    EXPECT_EQ(cs[0].param("realm"), "https://auth.example.com/token");
    EXPECT_EQ(cs[0].param("service"), "registry.example.com");
    EXPECT_EQ(cs[0].param("scope"), "repository:a/b:pull,push");

    auto two = oci::parse_challenges(
        R"(Basic realm="r\"q", Bearer realm=https://x/t, error=invalid_token)");
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two[0].scheme, "Basic");
    EXPECT_EQ(two[0].param("REALM"), "r\"q");
    EXPECT_EQ(two[1].scheme, "Bearer");
    EXPECT_EQ(two[1].param("realm"), "https://x/t");
    EXPECT_EQ(two[1].param("error"), "invalid_token");

    EXPECT_TRUE(oci::parse_challenges("").empty());
    auto bare = oci::parse_challenges("Basic");
    ASSERT_EQ(bare.size(), 1u);
    EXPECT_TRUE(bare[0].params.empty());
}

TEST(OciAuth, AHelperThatIgnoresItsInputCannotKillUs) {
    TempDir d;
    // Exits at once without reading standard input.
    const auto p = d.write("bin/docker-credential-deaf",
                           "#!/bin/sh\nprintf '{\"Username\":\"u\",\"Secret\":\"s\"}'\n");
    ::chmod(p.c_str(), 0755);
    PathPrefix path(d / "bin");
    // More than a pipe or socket buffer holds: the write fails once the helper is gone.
    for (int i = 0; i < 3; ++i) {
        auto c = oci::run_credential_helper("deaf", std::string(4 << 20, 'h'));
        ASSERT_TRUE(c) << c.error().str();
        ASSERT_TRUE(c->has_value());
        EXPECT_EQ((*c)->username, "u");
    }
}
