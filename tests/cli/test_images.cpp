// kpkg build | push | pull | image inspect | cache, and images as inputs, end to end: the
// binary against a real docker-registry on loopback, with skopeo and umoci reading what it
// writes. Tests that need one of those programs skip with the reason when it is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "kpkg/core/digest.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/oci/image.hpp"
#include "kpkg/oci/layout.hpp"
#include "registry_fixture.hpp"
#include "support/support.hpp"

namespace fs = std::filesystem;
using kpkg::test::contains;
using kpkg::test::run_kpkg;
using kpkg::test::RunResult;
using kpkg::test::TempDir;
using kpkg::test::testdata;

namespace {

// Every run with its own cache, so that runs never see another test's images.
struct Env {
    TempDir dir;
    std::vector<std::string> env() const {
        return {"KPKG_CACHE_DIR=" + (dir.path() / "cache").string()};
    }
    RunResult run(std::vector<std::string> args) const { return run_kpkg(args, {}, env()); }
    fs::path operator/(const std::string& rel) const { return dir / rel; }
};

std::string bundle_dir() {
    return testdata("bundles/sample-operator").string();
}
std::string catalog_dir() {
    return testdata("catalog").string();
}

std::string digest_line(const std::string& out) {
    auto at = out.find("digest: ");
    if (at == std::string::npos) return {};
    return out.substr(at + 8, out.find('\n', at) - at - 8);
}

// The digest of the "saved: DEST (with OCI media types: DIGEST)" line for DEST; "" when the line
// names none (the image was saved as it is).
std::string saved_digest(const std::string& out, const std::string& dest) {
    const std::string head = "saved: " + dest + " (with OCI media types: ";
    auto at = out.find(head);
    if (at == std::string::npos) return {};
    at += head.size();
    return out.substr(at, out.find(')', at) - at);
}

bool have(const char* program) {
    return kpkg::test::run_command(std::string("command -v ") + program + " >/dev/null") == 0;
}

// ---- build: reproducible, validated, saved where asked ----

TEST(Build, SameInputSameDigestAndThePinnedOne) {
    Env e;
    auto a = e.run({"build", bundle_dir(), "--platform", "linux/amd64"});
    ASSERT_EQ(a.exit_code, 0) << a.err;
    auto b = e.run({"build", bundle_dir(), "--platform", "linux/amd64", "-o", "json"});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const std::string digest = digest_line(a.out);
    ASSERT_FALSE(digest.empty()) << a.out;
    EXPECT_TRUE(contains(b.out, "\"digest\": \"" + digest + "\"")) << b.out;
    // The golden digest of this bundle's image (gzip level 6 of Debian 12's zlib): a change in
    // the layout, a header field, the config or the manifest changes it.
    EXPECT_EQ(digest, "sha256:f8277fc7dfbdcea426feb5781de49ce574f384df3af6df55ea53a54e561b3e98");
    EXPECT_TRUE(contains(a.out, "built registry+v1 bundle image of package \"sample\"")) << a.out;
}

TEST(Build, InvalidInputBuildsNothing) {
    Env e;
    auto r = e.run({"build", testdata("bundles/invalid-csv-version").string(), "--save",
                    "oci:" + (e / "out").string()});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(contains(r.err, "not a valid bundle")) << r.err;
    EXPECT_TRUE(contains(r.err, "spec.version")) << r.err;
    EXPECT_FALSE(fs::exists(e / "out"));
    EXPECT_FALSE(fs::exists(e / "cache" / "blobs"));
}

TEST(Build, UsageErrorsBeforeAnythingIsRead) {
    Env e;
    auto r = e.run({"build", bundle_dir(), "--push"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--push needs")) << r.err;
    r = e.run({"build", bundle_dir(), "-t", "Bad/Ref"});
    EXPECT_EQ(r.exit_code, 2);
    r = e.run({"build", bundle_dir(), "--save", "dir:/tmp/x"});
    EXPECT_EQ(r.exit_code, 2);
    r = e.run({"build", bundle_dir(), "--platform", "linux"});
    EXPECT_EQ(r.exit_code, 2);
    r = e.run({"build", bundle_dir(), "--label", "=x"});
    EXPECT_EQ(r.exit_code, 2);
    r = e.run({"build", bundle_dir(), "--base-image", "oci:/nowhere"});
    EXPECT_EQ(r.exit_code, 2) << "a base image is for catalogs: " << r.err;
}

TEST(Build, SavedLayoutsAndArchivesReadBackAsInputs) {
    Env e;
    const std::string layout = "oci:" + (e / "layout").string() + ":v1";
    const std::string oarch = "oci-archive:" + (e / "img.oci.tar").string();
    const std::string darch = "docker-archive:" + (e / "img.docker.tar").string();
    auto r = e.run({"build", bundle_dir(), "-t", "example.com/op/sample:v1", "--save", layout,
                    "--save", oarch, "--save", darch});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& in : {layout, oarch, darch, (e / "layout").string(),
                                  (e / "img.oci.tar").string(), (e / "img.docker.tar").string()}) {
        auto v = e.run({"bundle", "validate", in});
        EXPECT_EQ(v.exit_code, 0) << in << ": " << v.out << v.err;
        auto ren = e.run({"bundle", "render", in});
        EXPECT_EQ(ren.exit_code, 0) << in << ": " << ren.err;
        EXPECT_TRUE(contains(ren.out, "\"name\": \"sample.v2.1.0\"")) << ren.out;
        auto i = e.run({"image", "inspect", in, "-o", "json"});
        EXPECT_EQ(i.exit_code, 0) << in << ": " << i.err;
        EXPECT_TRUE(contains(i.out, "\"kind\": \"bundle\"")) << i.out;
    }
    // The bundle rendered from its image is the bundle rendered from its directory.
    auto from_dir = e.run({"bundle", "render", bundle_dir()});
    auto from_image = e.run({"bundle", "render", layout});
    EXPECT_EQ(from_dir.out, from_image.out);
    // An image of the wrong kind for the command.
    auto wrong = e.run({"catalog", "validate", layout});
    EXPECT_EQ(wrong.exit_code, 3);
    EXPECT_TRUE(contains(wrong.err, "is a registry+v1 bundle image, not a catalog image"))
        << wrong.err;
}

TEST(Build, CatalogImageForTwoPlatformsIsAnIndexSharingItsLayer) {
    Env e;
    const std::string layout = "oci:" + (e / "cat").string();
    auto r = e.run({"build", catalog_dir(), "--platform", "linux/amd64", "--platform",
                    "linux/arm64", "--save", layout, "--label", "org.example/team=olm"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto content = kpkg::oci::read_oci_dir(e / "cat");
    ASSERT_TRUE(content) << content.error().message;
    // An index, two manifests, two configs and one layer.
    EXPECT_EQ(content->blobs.size(), 6u);
    auto ix = kpkg::oci::parse_index(content->blobs.at(content->root_digest), "index");
    ASSERT_TRUE(ix);
    ASSERT_EQ(ix->manifests.size(), 2u);
    std::set<std::string> layers;
    for (const auto& d : ix->manifests) {
        auto m = kpkg::oci::parse_manifest(content->blobs.at(d.digest), "m");
        ASSERT_TRUE(m);
        for (const auto& l : m->layers)
            layers.insert(l.digest);
        auto c = kpkg::oci::parse_config(content->blobs.at(m->config.digest), "c");
        ASSERT_TRUE(c);
        EXPECT_EQ(c->labels.at("operators.operatorframework.io.index.configs.v1"), "/configs");
        EXPECT_EQ(c->labels.at("org.example/team"), "olm");
        EXPECT_TRUE(c->entrypoint.empty()) << "a scratch catalog image has no entrypoint";
    }
    EXPECT_EQ(layers.size(), 1u);

    for (const char* platform : {"linux/amd64", "linux/arm64"}) {
        auto l = e.run({"--platform", platform, "catalog", "list", "packages", layout});
        EXPECT_EQ(l.exit_code, 0) << l.err;
        EXPECT_TRUE(contains(l.out, "vault")) << l.out;
    }
    auto none = e.run({"--platform", "linux/s390x", "catalog", "validate", layout});
    EXPECT_EQ(none.exit_code, 3);
    EXPECT_TRUE(contains(none.err, "linux/s390x")) << none.err;

    auto res = e.run({"resolve", "vault", "--catalog", layout + ":v4.15"});
    EXPECT_NE(res.exit_code, 0) << "no image tagged v4.15 in the layout";
    res = e.run({"resolve", "vault", "--catalog", layout, "-o", "json"});
    EXPECT_EQ(res.exit_code, 0) << res.err;
    EXPECT_TRUE(contains(res.out, "vault-operator.v1.2.0")) << res.out;
    // An image's catalog is named after the layout (or repository), not cut at a dot of a tag.
    EXPECT_TRUE(contains(res.out, "\"catalog\": \"cat\"")) << res.out;
}

TEST(Build, CatalogOnABaseImageIsRunWithOpmWithoutAStaleCache) {
    Env e;
    // A base image with an entrypoint and a command of its own, written as skopeo would.
    kpkg::oci::Content base = kpkg::test::make_image("opm binary", "linux/amd64");
    ASSERT_TRUE(kpkg::oci::write_oci_dir(e / "base", base, "latest"));
    auto r = e.run({"build", catalog_dir(), "--platform", "linux/amd64", "--base-image",
                    "oci:" + (e / "base").string() + ":latest", "--save",
                    "oci:" + (e / "cat").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto content = kpkg::oci::read_oci_dir(e / "cat");
    ASSERT_TRUE(content) << content.error().message;
    auto m = kpkg::oci::parse_manifest(content->blobs.at(content->root_digest), "m");
    ASSERT_TRUE(m);
    ASSERT_EQ(m->layers.size(), 2u) << "the base's layer, then the catalog's";
    auto bm = kpkg::oci::parse_manifest(base.blobs.at(base.root_digest), "base");
    ASSERT_TRUE(bm);
    EXPECT_EQ(m->layers[0].digest, bm->layers[0].digest);
    auto c = kpkg::oci::parse_config(content->blobs.at(m->config.digest), "c");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->entrypoint, std::vector<std::string>{"/bin/opm"});
    EXPECT_EQ(c->cmd, (std::vector<std::string>{"serve", "/configs"}));
    EXPECT_EQ(c->diff_ids.size(), 2u);
    // The result reads back as a catalog.
    auto v = e.run({"catalog", "validate", "oci:" + (e / "cat").string()});
    EXPECT_EQ(v.exit_code, 0) << v.err;
}

TEST(Build, CatalogRenderReadsImagesAsOpmDoes) {
    Env e;
    auto r = e.run({"build", catalog_dir(), "--save", "oci:" + (e / "cat").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = e.run({"build", bundle_dir(), "--save", "oci:" + (e / "bundle").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto from_dir = e.run({"catalog", "render", catalog_dir(), bundle_dir()});
    ASSERT_EQ(from_dir.exit_code, 0) << from_dir.err;
    auto from_images = e.run(
        {"catalog", "render", "oci:" + (e / "cat").string(), "oci:" + (e / "bundle").string()});
    ASSERT_EQ(from_images.exit_code, 0) << from_images.err;
    EXPECT_EQ(from_dir.out, from_images.out);
}

TEST(Build, TheGlobalPlatformIsTheBuildsWhenItNamesNone) {
    Env e;
    auto r = e.run({"--platform", "linux/arm64", "build", bundle_dir(), "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "\"linux/arm64\"")) << r.out;
}

// ---- Package Operator packages ----

std::string package_dir() {
    return testdata("packages/greeter").string();
}

TEST(Build, PackageOperatorPackageAsKubectlPackageBuildsIt) {
    Env e;
    auto a =
        e.run({"build", package_dir(), "-t", "example.com/pkg/greeter:v1", "--save",
               "oci:" + (e / "layout").string(), "--save", "oci-archive:" + (e / "o.tar").string(),
               "--save", "docker-archive:" + (e / "d.tar").string()});
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_TRUE(contains(a.out, "built Package Operator package image of package \"greeter\" "
                                "for linux/amd64"))
        << a.out;
    const std::string digest = digest_line(a.out);
    // The golden digest of this package's image: its config and diff_id are kubectl-package's
    // (tests/plan/test_image.cpp), the gzip bytes Debian 12's zlib at level 6.
    EXPECT_EQ(digest, "sha256:ffc3604aae334cdbabdd5289846a9a56b059dc7ebd2d7fdf32c98d8e06499bfa");
    auto b = e.run({"build", package_dir(), "-o", "json"});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_TRUE(contains(b.out, "\"digest\": \"" + digest + "\"")) << b.out;
    EXPECT_TRUE(contains(b.out, "\"kind\": \"package\"")) << b.out;
    EXPECT_TRUE(
        contains(b.out, "\"mediaType\": \"application/vnd.docker.distribution.manifest.v2+json\""))
        << b.out;

    // What was saved reads back as the package.
    for (const std::string& src :
         {"oci:" + (e / "layout").string(), "oci-archive:" + (e / "o.tar").string(),
          "docker-archive:" + (e / "d.tar").string()}) {
        auto v = e.run({"package", "validate", src});
        EXPECT_EQ(v.exit_code, 0) << src << v.out << v.err;
        auto t = e.run({"package", "tree", src});
        EXPECT_EQ(t.exit_code, 0) << src << t.err;
        EXPECT_TRUE(contains(t.out, "apps/v1, Kind=Deployment /greeter")) << t.out;
        EXPECT_TRUE(contains(t.out, "/v1, Kind=ConfigMap greeter-ns/greeter-greeting")) << t.out;
    }
    // And from the cache, by its tag.
    auto r = e.run(
        {"package", "render", "example.com/pkg/greeter:v1", "--offline", "--namespace", "prod"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "greeting: hello")) << r.out;
}

TEST(Build, PackageOperatorPackageForTwoPlatforms) {
    Env e;
    auto r = e.run({"build", package_dir(), "--platform", "linux/amd64", "--platform",
                    "linux/arm64", "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(
        r.out, "\"mediaType\": \"application/vnd.docker.distribution.manifest.list.v2+json\""))
        << r.out;
    EXPECT_TRUE(contains(r.out, "\"linux/arm64\"")) << r.out;
}

TEST(Build, InvalidPackageBuildsNothing) {
    Env e;
    const fs::path src = package_dir();
    for (const auto& f : fs::recursive_directory_iterator(src))
        if (f.is_regular_file()) {
            std::string bytes = kpkg::test::read_file(f.path());
            const std::string rel = f.path().lexically_relative(src).generic_string();
            if (rel == "manifest.yaml") bytes += "  scopes: [Nowhere]\n";
            if (rel == ".test-fixtures/default/configmap.yaml") bytes += "  extra: value\n";
            e.dir.write("pkg/" + rel, bytes);
        }
    auto r = e.run({"build", (e / "pkg").string(), "-t", "example.com/x:1", "--save",
                    "oci:" + (e / "out").string()});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(contains(r.err, "not a valid Package Operator package")) << r.err;
    EXPECT_FALSE(fs::exists(e / "out"));
    EXPECT_FALSE(fs::exists(e / "cache" / "blobs"));
    EXPECT_EQ(r.out, "");
}

// ---- the independent tools read what kpkg writes ----

TEST(Interop, SkopeoAndUmociReadKpkgImages) {
    if (!have("skopeo") || !have("umoci"))
        GTEST_SKIP() << ::kpkg::test::missing_tool(have("skopeo") ? "umoci" : "skopeo");
    Env e;
    auto r = e.run({"build", bundle_dir(), "-t", "example.com/op/sample:v1", "--save",
                    "oci:" + (e / "layout").string() + ":v1", "--save",
                    "oci-archive:" + (e / "o.tar").string(), "--save",
                    "docker-archive:" + (e / "d.tar").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& src :
         {"oci:" + (e / "layout").string() + ":v1", "oci-archive:" + (e / "o.tar").string(),
          "docker-archive:" + (e / "d.tar").string()}) {
        std::string out;
        ASSERT_EQ(kpkg::test::run_command("skopeo inspect " + src + " 2>&1", &out), 0) << out;
        EXPECT_TRUE(contains(out, "operators.operatorframework.io.bundle.package.v1")) << out;
    }
    std::string out;
    ASSERT_EQ(kpkg::test::run_command("cd " + e.dir.path().string() +
                                          " && umoci unpack --rootless --image layout:v1 "
                                          "unpacked 2>&1",
                                      &out),
              0)
        << out;
    EXPECT_TRUE(
        fs::exists(e / "unpacked/rootfs/manifests/sample.v2.1.0.clusterserviceversion.yaml"));
    EXPECT_TRUE(fs::exists(e / "unpacked/rootfs/metadata/annotations.yaml"));
    // And kpkg reads what skopeo writes.
    ASSERT_EQ(kpkg::test::run_command(
                  "skopeo --insecure-policy copy oci-archive:" + (e / "o.tar").string() +
                      " oci:" + (e / "copied").string() + ":x 2>&1",
                  &out),
              0)
        << out;
    auto v = e.run({"bundle", "validate", "oci:" + (e / "copied").string() + ":x"});
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// A package image (Docker schema 2, as kubectl-package's) read by skopeo; copied by skopeo into
// an OCI layout, unpacked by umoci and read back by kpkg.
TEST(Interop, SkopeoAndUmociReadPackageImages) {
    if (!have("skopeo") || !have("umoci"))
        GTEST_SKIP() << ::kpkg::test::missing_tool(have("skopeo") ? "umoci" : "skopeo");
    Env e;
    auto r = e.run({"build", package_dir(), "--save", "oci:" + (e / "layout").string(), "--save",
                    "oci-archive:" + (e / "o.tar").string(), "--save",
                    "docker-archive:" + (e / "d.tar").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // In a layout, the image has OCI media types (as skopeo writes it there): its own digest.
    const std::string digest = saved_digest(r.out, "oci:" + (e / "layout").string());
    ASSERT_FALSE(digest.empty()) << r.out;
    EXPECT_NE(digest, digest_line(r.out));
    for (const std::string& src :
         {"oci:" + (e / "layout").string(), "oci-archive:" + (e / "o.tar").string()}) {
        std::string out;
        ASSERT_EQ(kpkg::test::run_command("skopeo inspect " + src + " 2>&1", &out), 0) << out;
        EXPECT_TRUE(contains(out, "\"Digest\": \"" + digest + "\"")) << out;
        EXPECT_TRUE(contains(out, "\"Created\": \"0001-01-01T00:00:00Z\"")) << out;
    }
    std::string out;
    ASSERT_EQ(
        kpkg::test::run_command(
            "skopeo inspect --config docker-archive:" + (e / "d.tar").string() + " 2>&1", &out),
        0)
        << out;
    EXPECT_TRUE(
        contains(out, "sha256:ba4cc7730c8b6ab04bbeab37579f5c6c4c0b795371596f79b1d2de3f910fd197"))
        << out;
    ASSERT_EQ(kpkg::test::run_command(
                  "skopeo --insecure-policy copy docker-archive:" + (e / "d.tar").string() +
                      " oci:" + (e / "copied").string() + ":x 2>&1",
                  &out),
              0)
        << out;
    ASSERT_EQ(kpkg::test::run_command("cd " + e.dir.path().string() +
                                          " && umoci unpack --rootless --image copied:x "
                                          "unpacked 2>&1",
                                      &out),
              0)
        << out;
    EXPECT_TRUE(fs::exists(e / "unpacked/rootfs/package/manifest.yaml"));
    EXPECT_TRUE(fs::exists(e / "unpacked/rootfs/package/deploy/deployment.yaml"));
    EXPECT_TRUE(fs::is_regular_file(e / "unpacked/rootfs/package/docs/empty.txt"));
    EXPECT_FALSE(fs::exists(e / "unpacked/rootfs/package/.test-fixtures"));
    auto v = e.run({"package", "validate", "oci:" + (e / "copied").string() + ":x"});
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// Every kind of image kpkg builds, saved to oci:DIR:TAG and oci-archive:FILE:TAG, is found BY ITS
// TAG by skopeo and umoci (which look only at OCI media types in index.json): bundles, catalogs
// and Package Operator packages (Docker schema 2, written into a layout with OCI media types, as
// skopeo writes them), for one platform and for two. umoci unpacks each single-platform image
// (umoci 0.4 does not unpack an index, whoever wrote it).
TEST(Interop, SkopeoAndUmociFindEverySavedImageByTag) {
    if (!have("skopeo") || !have("umoci"))
        GTEST_SKIP() << ::kpkg::test::missing_tool(have("skopeo") ? "umoci" : "skopeo");
    Env e;
    struct Case {
        const char* name;
        std::string dir;
        std::vector<std::string> platforms;
        const char* file; // a file of the unpacked image
    };
    const std::vector<Case> cases = {
        {"bundle", bundle_dir(), {}, "manifests/sample.v2.1.0.clusterserviceversion.yaml"},
        {"catalog", catalog_dir(), {}, nullptr},
        {"catalog2", catalog_dir(), {"linux/amd64", "linux/arm64"}, nullptr},
        {"package", package_dir(), {}, "package/manifest.yaml"},
        {"package2", package_dir(), {"linux/amd64", "linux/arm64/v8"}, nullptr},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const std::string lay = (e / c.name).string();
        const std::string tar = (e / (std::string(c.name) + ".tar")).string();
        std::vector<std::string> args = {"build",   c.dir,
                                         "--save",  "oci:" + lay + ":v1",
                                         "--save",  "oci-archive:" + tar + ":v1",
                                         "--label", "kpkg.test/kind=" + std::string(c.name)};
        for (const auto& p : c.platforms) {
            args.push_back("--platform");
            args.push_back(p);
        }
        if (std::string(c.name).rfind("catalog", 0) == 0) args.push_back("--lenient");
        auto r = e.run(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        std::string digest = saved_digest(r.out, "oci:" + lay + ":v1");
        if (digest.empty()) digest = digest_line(r.out);
        for (const std::string& src : {"oci:" + lay + ":v1", "oci-archive:" + tar + ":v1"}) {
            std::string out;
            out.clear();
            ASSERT_EQ(kpkg::test::run_command("skopeo inspect --raw " + src + " 2>&1", &out), 0)
                << src << ": " << out;
            EXPECT_EQ(out.find("vnd.docker"), std::string::npos) << out;
            EXPECT_EQ(kpkg::sha256_digest(out), digest) << out;
            out.clear();
            ASSERT_EQ(kpkg::test::run_command("skopeo inspect " + src + " 2>&1", &out), 0)
                << src << ": " << out;
            EXPECT_TRUE(contains(out, "\"Digest\": \"" + digest + "\"")) << out;
            EXPECT_TRUE(contains(out, "\"kpkg.test/kind\": \"" + std::string(c.name) + "\""))
                << out;
        }
        std::string out;
        ASSERT_EQ(kpkg::test::run_command("umoci ls --layout " + lay + " 2>&1", &out), 0) << out;
        EXPECT_EQ(out, "v1\n");
        if (c.platforms.empty()) {
            out.clear();
            ASSERT_EQ(kpkg::test::run_command("cd " + e.dir.path().string() +
                                                  " && umoci unpack --rootless --image " + c.name +
                                                  ":v1 unpacked-" + c.name + " 2>&1",
                                              &out),
                      0)
                << out;
            if (c.file != nullptr) {
                EXPECT_TRUE(fs::is_regular_file(
                    e / ("unpacked-" + std::string(c.name) + "/rootfs/" + c.file)));
            }
        }
        // And kpkg reads it back by its tag.
        auto i = e.run({"image", "inspect", "oci:" + lay + ":v1", "-o", "json"});
        EXPECT_EQ(i.exit_code, 0) << i.err;
    }
}

// ---- kpkg cache: URL records (the schemas kpkg package validate fetches) ----

TEST(Cache, LsShowsUrlRecordsAndPruneRemovesThem) {
    Env e;
    const fs::path cache = e / "cache";
    const std::string body = "{\"type\":\"object\"}";
    const std::string digest = kpkg::sha256_digest(body);
    fs::create_directories(cache / "blobs/sha256");
    fs::create_directories(cache / "urls/sha256");
    std::ofstream(cache / "blobs/sha256" / digest.substr(7)) << body;
    const std::string url = "https://schemas.example/v1/configmap.json";
    std::ofstream(cache / "urls/sha256" / kpkg::sha256_digest(url).substr(7))
        << "{\"url\":\"" << url << "\",\"status\":200,\"digest\":\"" << digest << "\"}";

    auto js = e.run({"cache", "ls", "-o", "json"});
    ASSERT_EQ(js.exit_code, 0) << js.err;
    EXPECT_TRUE(contains(js.out, "\"urls\": [")) << js.out;
    EXPECT_TRUE(contains(js.out, "\"url\": \"" + url + "\"")) << js.out;
    EXPECT_TRUE(contains(js.out, "\"status\": 200")) << js.out;
    EXPECT_TRUE(contains(js.out, "\"referencedBy\": [\n                \"" + url + "\"")) << js.out;
    auto text = e.run({"cache", "ls"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_TRUE(contains(text.out, "URL")) << text.out;
    const auto at = text.out.find(url + "  200");
    ASSERT_NE(at, std::string::npos) << text.out;
    EXPECT_NE(text.out.substr(at, text.out.find('\n', at) - at).find(digest), std::string::npos)
        << text.out;

    auto prune = e.run({"cache", "prune", "-o", "json"});
    ASSERT_EQ(prune.exit_code, 0) << prune.err;
    EXPECT_TRUE(contains(prune.out, "\"urlsRemoved\": 1")) << prune.out;
    EXPECT_TRUE(fs::is_empty(cache / "urls/sha256"));
    auto after = e.run({"cache", "prune"});
    EXPECT_TRUE(contains(after.out, "0 tag records and 0 URL records")) << after.out;
}

// ---- a registry: push, pull, inputs, the cache, offline ----

TEST(Registry, PushPullRenderAndOfflineFromTheCache) {
    if (kpkg::test::RegistryProcess::binary().empty())
        GTEST_SKIP() << ::kpkg::test::missing_tool("docker-registry");
    kpkg::test::RegistryProcess reg;
    ASSERT_TRUE(reg.running()) << reg.error();
    Env e;
    const std::string ref = reg.host() + "/op/sample:v1";
    auto b = e.run({"build", bundle_dir(), "-t", ref, "--push", "--platform", "linux/amd64"});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const std::string digest = digest_line(b.out);
    EXPECT_TRUE(contains(b.out, "pushed: " + ref + "@" + digest)) << b.out;

    if (have("skopeo")) {
        std::string out;
        ASSERT_EQ(kpkg::test::run_command(
                      "skopeo inspect --tls-verify=false docker://" + ref + " 2>&1", &out),
                  0)
            << out;
        EXPECT_TRUE(contains(out, digest)) << out;
    }

    // Another machine: an empty cache pulls it.
    Env other;
    auto p = other.run({"pull", ref, "--save", "oci:" + (other / "l").string()});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    EXPECT_EQ(digest_line(p.out), digest);
    auto ren = other.run({"bundle", "render", ref + "@" + digest});
    ASSERT_EQ(ren.exit_code, 0) << ren.err;
    EXPECT_TRUE(contains(ren.out, "\"image\": \"" + ref + "@" + digest + "\"")) << ren.out;
    auto cren = other.run({"catalog", "render", ref});
    ASSERT_EQ(cren.exit_code, 0) << cren.err;
    EXPECT_TRUE(contains(cren.out, "\"image\": \"" + ref + "\"")) << cren.out;
    auto ins = other.run({"image", "inspect", ref});
    EXPECT_EQ(ins.exit_code, 0) << ins.err;
    EXPECT_TRUE(contains(ins.out, "registry+v1 bundle (package sample)")) << ins.out;

    // The registry goes away: a digest reference and (with --offline) the tag still answer.
    reg.stop();
    auto warm = other.run({"bundle", "validate", ref + "@" + digest});
    EXPECT_EQ(warm.exit_code, 0) << warm.out << warm.err;
    // Damaged unpacked trees in the cache change nothing: they are unpacked again.
    for (const auto& f : fs::directory_iterator(other / "cache/trees/sha256")) {
        std::string b = kpkg::test::read_file(f.path());
        b[b.size() / 2] ^= 0x20;
        std::ofstream(f.path(), std::ios::binary | std::ios::trunc) << b;
    }
    auto again = other.run({"bundle", "render", ref + "@" + digest});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.out, ren.out);
    auto off = other.run({"--offline", "bundle", "inspect", ref});
    EXPECT_EQ(off.exit_code, 0) << off.err;
    auto online = other.run({"bundle", "inspect", ref});
    EXPECT_EQ(online.exit_code, 1) << "a tag is looked up online unless --offline";
    EXPECT_TRUE(contains(online.err, reg.host())) << online.err;
    auto never = other.run({"--offline", "bundle", "inspect", reg.host() + "/op/other:v1"});
    EXPECT_EQ(never.exit_code, 1);

    // The cache: what it holds, and emptied.
    auto ls = other.run({"cache", "ls", "-o", "json"});
    ASSERT_EQ(ls.exit_code, 0) << ls.err;
    EXPECT_TRUE(contains(ls.out, digest)) << ls.out;
    auto prune = other.run({"cache", "prune"});
    EXPECT_EQ(prune.exit_code, 0) << prune.err;
    auto gone = other.run({"bundle", "validate", ref + "@" + digest});
    EXPECT_EQ(gone.exit_code, 1) << "nothing cached and no registry";
}

TEST(Registry, PushOfABuiltImageAndOfAnImageOnDisk) {
    if (kpkg::test::RegistryProcess::binary().empty())
        GTEST_SKIP() << ::kpkg::test::missing_tool("docker-registry");
    kpkg::test::RegistryProcess reg;
    ASSERT_TRUE(reg.running()) << reg.error();
    Env e;
    const std::string ref = reg.host() + "/op/cat:1";
    auto b = e.run({"build", catalog_dir(), "-t", ref, "--platform", "linux/amd64", "--platform",
                    "linux/arm64", "--save", "oci:" + (e / "l").string()});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    auto push = e.run({"push", ref});
    ASSERT_EQ(push.exit_code, 0) << push.err;
    EXPECT_TRUE(contains(push.out, "@" + digest_line(b.out))) << push.out;
    auto push2 = e.run({"push", "oci:" + (e / "l").string(), reg.host() + "/op/cat:2"});
    ASSERT_EQ(push2.exit_code, 0) << push2.err;
    Env other;
    for (const char* platform : {"linux/amd64", "linux/arm64"}) {
        auto l = other.run(
            {"--platform", platform, "catalog", "list", "packages", reg.host() + "/op/cat:2"});
        EXPECT_EQ(l.exit_code, 0) << l.err;
        EXPECT_TRUE(contains(l.out, "etcd")) << l.out;
    }
    auto missing = e.run({"push", reg.host() + "/op/never-built:1"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_TRUE(contains(missing.err, "no image of that name in the cache")) << missing.err;
}

TEST(Registry, PackageImagePushedAndReadBack) {
    if (kpkg::test::RegistryProcess::binary().empty())
        GTEST_SKIP() << ::kpkg::test::missing_tool("docker-registry");
    kpkg::test::RegistryProcess reg;
    ASSERT_TRUE(reg.running()) << reg.error();
    Env e;
    const std::string ref = reg.host() + "/pkg/greeter:1";
    auto b = e.run({"build", package_dir(), "-t", ref, "--push"});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_TRUE(contains(b.out, "pushed: " + ref + "@" + digest_line(b.out))) << b.out;
    Env other;
    auto v = other.run({"package", "validate", ref});
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
    if (have("skopeo")) {
        std::string out;
        ASSERT_EQ(kpkg::test::run_command(
                      "skopeo inspect --raw --tls-verify=false docker://" + ref + " 2>&1", &out),
                  0)
            << out;
        EXPECT_TRUE(contains(out, "application/vnd.docker.distribution.manifest.v2+json")) << out;
    }
}

// The registry keeps the Docker schema 2 image kpkg pushes (its digest is the build's); saved into
// a layout, by build or by pull, it is what `skopeo copy` of the pushed image writes there, byte
// for byte: the same OCI manifests and configs, so the same digest. For one platform and two (a
// manifest list, the arm64 image with a variant).
TEST(Registry, PackageImageSavedInALayoutIsWhatSkopeoCopyWrites) {
    if (kpkg::test::RegistryProcess::binary().empty())
        GTEST_SKIP() << ::kpkg::test::missing_tool("docker-registry");
    if (!have("skopeo")) GTEST_SKIP() << ::kpkg::test::missing_tool("skopeo");
    kpkg::test::RegistryProcess reg;
    ASSERT_TRUE(reg.running()) << reg.error();
    Env e;
    const std::vector<std::vector<std::string>> platform_sets = {
        {}, {"--platform", "linux/amd64", "--platform", "linux/arm64/v8"}};
    int n = 0;
    for (const auto& platforms : platform_sets) {
        const std::string tag = std::to_string(++n);
        SCOPED_TRACE(tag);
        const std::string ref = reg.host() + "/pkg/greeter:" + tag;
        const std::string built = (e / ("built" + tag)).string();
        std::vector<std::string> args = {"build",  package_dir(),         "-t", ref, "--push",
                                         "--save", "oci:" + built + ":v1"};
        args.insert(args.end(), platforms.begin(), platforms.end());
        auto b = e.run(args);
        ASSERT_EQ(b.exit_code, 0) << b.err;
        const std::string docker_digest = digest_line(b.out);
        EXPECT_TRUE(contains(b.out, "pushed: " + ref + "@" + docker_digest)) << b.out;
        const std::string saved = saved_digest(b.out, "oci:" + built + ":v1");
        ASSERT_FALSE(saved.empty()) << b.out;

        const std::string copied = (e / ("copied" + tag)).string();
        std::string out;
        ASSERT_EQ(kpkg::test::run_command("HOME=" + e.dir.path().string() +
                                              " skopeo --insecure-policy copy --all "
                                              "--src-tls-verify=false docker://" +
                                              ref + " oci:" + copied + ":v1 2>&1",
                                          &out),
                  0)
            << out;
        out.clear();
        ASSERT_EQ(kpkg::test::run_command("skopeo inspect --raw oci:" + copied + ":v1 2>&1", &out),
                  0)
            << out;
        EXPECT_EQ(kpkg::sha256_digest(out), saved) << out;
        // The same blobs, byte for byte.
        std::set<std::string> theirs, ours;
        for (const auto& f : fs::directory_iterator(copied + "/blobs/sha256"))
            theirs.insert(f.path().filename().string());
        for (const auto& f : fs::directory_iterator(built + "/blobs/sha256"))
            ours.insert(f.path().filename().string());
        EXPECT_EQ(ours, theirs);

        // Pulled and saved: the same again; the pull reports the registry's digest.
        const std::string pulled = (e / ("pulled" + tag)).string();
        Env other;
        std::vector<std::string> pull = {"pull", ref, "--save", "oci:" + pulled + ":v1"};
        if (!platforms.empty()) pull.push_back("--all-platforms");
        auto p = other.run(pull);
        ASSERT_EQ(p.exit_code, 0) << p.err;
        EXPECT_EQ(digest_line(p.out), docker_digest) << p.out;
        EXPECT_EQ(saved_digest(p.out, "oci:" + pulled + ":v1"), saved) << p.out;
        out.clear();
        ASSERT_EQ(kpkg::test::run_command("skopeo inspect oci:" + pulled + ":v1 2>&1", &out), 0)
            << out;
        EXPECT_TRUE(contains(out, "\"Digest\": \"" + saved + "\"")) << out;
    }
}

// -o json names the digest each --save destination holds the image under: in an OCI layout the
// converted manifest's (the one index.json records), in a docker archive the build's own.
TEST(Images, JsonOutputGivesTheDigestOfEachSavedImage) {
    Env e;
    const std::string layout = (e / "l").string(), archive = (e / "d.tar").string();
    auto b = e.run({"build", testdata("packages/greeter").string(), "--save",
                    "oci:" + layout + ":v1", "--save", "docker-archive:" + archive, "-o", "json"});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    auto docs = kpkg::io::parse_json(b.out, "stdout");
    ASSERT_TRUE(docs && docs->size() == 1) << b.out;
    const auto& doc = (*docs)[0].root;
    const auto* built = doc.get("digest");
    const auto* saved = doc.get("savedImages");
    ASSERT_TRUE(built && saved) << b.out;
    ASSERT_EQ(saved->items.size(), 2u) << b.out;
    std::ifstream in(layout + "/index.json");
    const std::string index((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto idx = kpkg::io::parse_json(index, "index.json");
    ASSERT_TRUE(idx && idx->size() == 1) << index;
    const auto* manifests = (*idx)[0].root.get("manifests");
    ASSERT_TRUE(manifests && manifests->items.size() == 1) << index;
    const std::string in_layout = manifests->items[0].get("digest")->text;
    EXPECT_NE(in_layout, built->text);
    EXPECT_EQ(saved->items[0].get("destination")->text, "oci:" + layout + ":v1");
    EXPECT_EQ(saved->items[0].get("digest")->text, in_layout);
    EXPECT_EQ(saved->items[1].get("destination")->text, "docker-archive:" + archive);
    EXPECT_EQ(saved->items[1].get("digest")->text, built->text);
}

TEST(Images, BadReferencesAndUnknownImages) {
    Env e;
    // An existing directory that is no image is never looked up in a registry.
    auto dir = e.run({"image", "inspect", catalog_dir()});
    EXPECT_EQ(dir.exit_code, 2) << dir.err;
    EXPECT_TRUE(contains(dir.err, "not an image")) << dir.err;
    auto r = e.run({"image", "inspect", "docker://Not/Valid"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    r = e.run({"pull", "oci:" + (e / "missing").string()});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(contains(r.err, "missing")) << r.err;
    // Nothing listens there: a network error naming the registry, exit 1.
    const int port = kpkg::test::free_port();
    r = e.run({"pull", "127.0.0.1:" + std::to_string(port) + "/x/y:1"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "127.0.0.1:" + std::to_string(port))) << r.err;
}

TEST(Images, SqliteIndexImagesAreRefusedWithOpmsMessage) {
    Env e;
    // An image whose config has only the sqlite index label.
    kpkg::oci::Content img = kpkg::test::make_image("db", "linux/amd64");
    auto m = kpkg::oci::parse_manifest(img.blobs.at(img.root_digest), "m");
    ASSERT_TRUE(m);
    auto c = kpkg::oci::parse_config(img.blobs.at(m->config.digest), "c");
    ASSERT_TRUE(c);
    c->labels["operators.operatorframework.io.index.database.v1"] = "/database/index.db";
    c->raw = {};
    std::string cfg = kpkg::oci::to_json(*c);
    img.blobs.erase(m->config.digest);
    m->config.digest = kpkg::sha256_digest(cfg);
    m->config.size = static_cast<std::int64_t>(cfg.size());
    img.blobs[m->config.digest] = cfg;
    std::string man = kpkg::oci::to_json(*m);
    img.blobs.erase(img.root_digest);
    img.root_digest = kpkg::sha256_digest(man);
    img.blobs[img.root_digest] = man;
    ASSERT_TRUE(kpkg::oci::write_oci_dir(e / "idx", img, "v1"));
    auto r = e.run({"catalog", "validate", "oci:" + (e / "idx").string() + ":v1"});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "sqlite-based index images are no longer supported")) << r.err;
    for (const char* format : {"text", "json"}) {
        r = e.run({"image", "inspect", "-o", format, "oci:" + (e / "idx").string() + ":v1"});
        EXPECT_EQ(r.exit_code, 3) << format;
        EXPECT_EQ(r.out, "") << format;
        EXPECT_TRUE(contains(r.err, "sqlite-based index images are no longer supported"));
    }
    // An image of no known kind is shown as such, whatever the format.
    kpkg::oci::Content plain = kpkg::test::make_image("x", "linux/amd64");
    ASSERT_TRUE(kpkg::oci::write_oci_dir(e / "plain", plain, "v1"));
    for (const char* format : {"text", "json"}) {
        r = e.run({"image", "inspect", "-o", format, "oci:" + (e / "plain").string() + ":v1"});
        EXPECT_EQ(r.exit_code, 0) << format << r.err;
        EXPECT_TRUE(contains(r.out, "unknown")) << r.out;
    }
}

} // namespace
