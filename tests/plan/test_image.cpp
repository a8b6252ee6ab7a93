// plan::image_content: what kpkg build puts in bundle, catalog and Package Operator package images.
#include <algorithm>
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "kpkg/core/digest.hpp"
#include "kpkg/oci/layer.hpp"
#include "kpkg/oci/media_types.hpp"
#include "kpkg/plan/image.hpp"
#include "support/support.hpp"

namespace kpkg::plan {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> paths(const ImageContent& c) {
    std::vector<std::string> out;
    for (const auto& f : c.files)
        out.push_back(f.path + (f.dir ? "/" : ""));
    return out;
}

TEST(ImageContent, BundleHasManifestsMetadataAndItsAnnotationsAsLabels) {
    io::DirectoryTree tree(test::testdata("bundles/sample-operator"));
    auto kind = detect(tree);
    ASSERT_TRUE(kind) << kind.error().message;
    EXPECT_EQ(*kind, ImageKind::bundle);
    auto c = image_content(tree);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->kind, ImageKind::bundle);
    EXPECT_EQ(c->package, "sample");
    EXPECT_EQ(paths(*c), (std::vector<std::string>{
                             "manifests/",
                             "manifests/gadgets.sample.example.com.crd.yaml",
                             "manifests/sample-operator.serviceaccount.yaml",
                             "manifests/sample.v2.1.0.clusterserviceversion.yaml",
                             "metadata/",
                             "metadata/annotations.yaml",
                             "metadata/dependencies.yaml",
                             "metadata/properties.yaml",
                         }));
    EXPECT_EQ(c->labels.at("operators.operatorframework.io.bundle.mediatype.v1"), "registry+v1");
    EXPECT_EQ(c->labels.at(package_label), "sample");
    EXPECT_EQ(c->labels.at("operators.operatorframework.io.bundle.channels.v1"), "stable, fast");
    EXPECT_EQ(c->labels.at("operators.operatorframework.io.bundle.channel.default.v1"), "stable");
    EXPECT_EQ(c->files[2].data(),
              test::read_file(test::testdata(
                  "bundles/sample-operator/manifests/sample-operator.serviceaccount.yaml")));
    EXPECT_TRUE(c->entrypoint.empty());
}

TEST(ImageContent, OtherFilesOfABundleDirectoryStayOut) {
    io::MemoryTree t("b");
    const auto dir = test::testdata("bundles/sample-operator");
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.is_regular_file())
            t.add_file(e.path().lexically_relative(dir).generic_string(),
                       test::read_file(e.path()));
    t.add_file("bundle.Dockerfile", "FROM scratch\n");
    t.add_file("tests/scorecard/config.yaml", "kind: Configuration\n");
    t.add_file("tests/other.txt", "x");
    auto c = image_content(t);
    ASSERT_TRUE(c) << c.error().message;
    auto p = paths(*c);
    EXPECT_EQ(std::count(p.begin(), p.end(), "bundle.Dockerfile"), 0);
    EXPECT_EQ(std::count(p.begin(), p.end(), "tests/other.txt"), 0);
    ASSERT_EQ(p.size(), 11u);
    EXPECT_EQ(
        std::vector<std::string>(p.end() - 3, p.end()),
        (std::vector<std::string>{"tests/", "tests/scorecard/", "tests/scorecard/config.yaml"}));
}

TEST(ImageContent, InvalidBundleBuildsNothingAndListsTheErrors) {
    io::DirectoryTree tree(test::testdata("bundles/invalid-annotations-package"));
    auto c = image_content(tree);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ExitCode::invalid);
    EXPECT_TRUE(test::contains(c.error().message, "not a valid bundle")) << c.error().message;
    EXPECT_TRUE(test::contains(c.error().message, "error:")) << c.error().message;
}

TEST(ImageContent, CatalogGoesUnderConfigsWithTheConfigsLabel) {
    io::DirectoryTree tree(test::testdata("catalog"));
    auto kind = detect(tree);
    ASSERT_TRUE(kind);
    EXPECT_EQ(*kind, ImageKind::catalog);
    auto c = image_content(tree);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(paths(*c),
              (std::vector<std::string>{"configs/", "configs/etcd/", "configs/etcd/catalog.json",
                                        "configs/vault/", "configs/vault/catalog.yaml"}));
    EXPECT_EQ(c->labels.size(), 1u);
    EXPECT_EQ(c->labels.at(configs_label), "/configs");
    EXPECT_TRUE(c->entrypoint.empty());
    EXPECT_TRUE(c->cmd.empty());

    ContentOptions o;
    o.base_image = true;
    o.labels["org.opencontainers.image.source"] = "https://example.com/x";
    o.labels[configs_label] = "/configs";
    c = image_content(tree, o);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->entrypoint, std::vector<std::string>{"/bin/opm"});
    // No --cache-dir: there is no pre-built cache for opm to check, it builds one at start-up.
    EXPECT_EQ(c->cmd, (std::vector<std::string>{"serve", "/configs"}));
    EXPECT_EQ(c->labels.at("org.opencontainers.image.source"), "https://example.com/x");
}

TEST(ImageContent, LenientCatalogsAsCatalogValidateLenient) {
    // A relatedImages entry that is not an image reference: an error, a warning with lenient.
    io::MemoryTree t("cat");
    t.add_file("c.yaml", "schema: olm.package\nname: foo\ndefaultChannel: stable\n---\n"
                         "schema: olm.channel\npackage: foo\nname: stable\nentries:\n"
                         "- name: foo.v1.0.0\n---\nschema: olm.bundle\npackage: foo\n"
                         "name: foo.v1.0.0\nimage: quay.io/foo/bundle:v1\nproperties:\n"
                         "- type: olm.package\n  value: {packageName: foo, version: 1.0.0}\n"
                         "relatedImages:\n- image: NOT A REFERENCE\n");
    auto strict = image_content(t);
    ASSERT_FALSE(strict);
    EXPECT_EQ(strict.error().code, ExitCode::invalid) << strict.error().message;
    ContentOptions o;
    o.lenient = true;
    auto lenient = image_content(t, o);
    EXPECT_TRUE(lenient) << lenient.error().message;
}

TEST(ImageContent, InvalidCatalogBuildsNothing) {
    io::MemoryTree t("cat");
    t.add_file("c.yaml", "schema: olm.package\nname: foo\ndefaultChannel: missing\n");
    auto c = image_content(t);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ExitCode::invalid);
    EXPECT_TRUE(test::contains(c.error().message, "not a valid catalog")) << c.error().message;
    EXPECT_TRUE(test::contains(c.error().message, "invalid package \"foo\"")) << c.error().message;
}

TEST(ImageContent, LinksLeavingTheInputAndSpecialFilesAreRefused) {
    io::MemoryTree t("cat");
    t.add_file("c.yaml", test::read_file(test::testdata("catalog/vault/catalog.yaml")));
    t.add_link("x.yaml", "../../etc/passwd");
    auto c = image_content(t);
    ASSERT_FALSE(c);
    EXPECT_TRUE(test::contains(c.error().message, "cat/x.yaml")) << c.error().message;

    io::MemoryTree s("cat");
    s.add_file("c.yaml", test::read_file(test::testdata("catalog/vault/catalog.yaml")));
    s.add_special("fifo");
    c = image_content(s);
    ASSERT_FALSE(c);
    EXPECT_TRUE(test::contains(c.error().message, "not a regular file")) << c.error().message;
}

// ---- Package Operator packages, as kubectl-package builds them ----

// The golden values below were derived independently of kpkg's code, twice: with
// tests/plan/go_layer_reference.py, a byte-level writer of what go-containerregistry's crane.Layer
// (Go's archive/tar) and mutate.Canonical produce, written from Go's rules, and with
// tests/plan/kubectl_package_replay.go, which runs Go's own archive/tar and encoding/json the way
// kubectl-package does:
//   python3 tests/plan/go_layer_reference.py testdata/packages/greeter
//   GO111MODULE=off go run tests/plan/kubectl_package_replay.go testdata/packages/greeter
constexpr const char* greeter_diff_id =
    "sha256:ba4cc7730c8b6ab04bbeab37579f5c6c4c0b795371596f79b1d2de3f910fd197";
constexpr const char* greeter_config_digest =
    "sha256:38678f8335c1c9721be572eb4d473dcf3408767756ea3e6c0db9a5ecd0fa451a";

std::string greeter_dir() {
    return test::testdata("packages/greeter").string();
}

// The single image of `c`: its manifest and config.
struct Parts {
    oci::Manifest manifest;
    std::string config;
};
Parts parts_of(const oci::Content& c) {
    auto m = oci::parse_manifest(c.blobs.at(c.root_digest), "manifest", c.root_media_type);
    EXPECT_TRUE(m) << m.error().message;
    return {*m, c.blobs.at(m->config.digest)};
}

TEST(PackageImage, FilesUnderPackageInByteOrderWithoutDotNamesOrDirectories) {
    io::DirectoryTree tree(greeter_dir());
    auto kind = detect(tree);
    ASSERT_TRUE(kind);
    EXPECT_EQ(*kind, ImageKind::package);
    auto c = image_content(tree);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->kind, ImageKind::package);
    EXPECT_EQ(c->package, "greeter");
    EXPECT_TRUE(c->labels.empty());
    // .notes and .test-fixtures/ stay out, as kubectl-package leaves them out.
    EXPECT_EQ(paths(*c), (std::vector<std::string>{
                             "package/_helpers.gotmpl",
                             "package/configmap.yaml.gotmpl",
                             "package/deploy/deployment.yaml",
                             "package/docs/empty.txt",
                             "package/manifest.yaml",
                         }));
    EXPECT_EQ(c->files[3].data(), "");
}

TEST(PackageImage, DiffIdAndConfigAreKubectlPackages) {
    io::DirectoryTree tree(greeter_dir());
    auto b = build(tree);
    ASSERT_TRUE(b) << b.error().message;
    EXPECT_EQ(b->image.root_media_type, oci::media::docker_manifest);
    const Parts p = parts_of(b->image);
    EXPECT_EQ(p.manifest.config.media_type, oci::media::docker_config);
    ASSERT_EQ(p.manifest.layers.size(), 1u);
    EXPECT_EQ(p.manifest.layers[0].media_type, oci::media::docker_layer_gzip);
    EXPECT_EQ(p.config,
              std::string("{\"architecture\":\"amd64\",\"created\":\"0001-01-01T00:00:00Z\","
                          "\"history\":[{\"created\":\"0001-01-01T00:00:00Z\"}],"
                          "\"os\":\"linux\",\"rootfs\":{\"type\":\"layers\","
                          "\"diff_ids\":[\"") +
                  greeter_diff_id + "\"]},\"config\":{}}");
    EXPECT_EQ(p.manifest.config.digest, greeter_config_digest);
    // The layer's tar is the one whose digest is the diff_id.
    auto tar = oci::decompress(b->image.blobs.at(p.manifest.layers[0].digest), 1 << 20, "layer");
    ASSERT_TRUE(tar) << tar.error().message;
    EXPECT_EQ(tar->size(), 6144u);
    EXPECT_EQ(sha256_digest(*tar), greeter_diff_id);
    auto headers = oci::read_tar_headers(*tar, "layer");
    ASSERT_TRUE(headers) << headers.error().message;
    for (const auto& h : *headers) {
        EXPECT_EQ(h.type, oci::TarEntry::Type::file) << h.name;
        EXPECT_EQ(h.mode, 0u) << h.name;
        EXPECT_EQ(h.mtime, 0) << h.name;
        EXPECT_TRUE(h.uname.empty() && h.gname.empty()) << h.name;
    }
    // The same package, the same bytes.
    auto again = build(tree);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->image.root_digest, b->image.root_digest);
    EXPECT_EQ(again->image.blobs, b->image.blobs);
    // image_content + build_image makes the same image.
    auto c = image_content(tree);
    ASSERT_TRUE(c);
    auto one = build_image(*c);
    ASSERT_TRUE(one) << one.error().message;
    EXPECT_EQ(one->root_digest, b->image.root_digest);
    // Files given out of order, and directories, make the same layer: files only, byte order.
    ImageContent shuffled = *c;
    std::reverse(shuffled.files.begin(), shuffled.files.end());
    shuffled.files.push_back({"package", "", true});
    shuffled.files.push_back({"package/deploy", "", true});
    auto two = build_image(shuffled);
    ASSERT_TRUE(two) << two.error().message;
    EXPECT_EQ(two->root_digest, b->image.root_digest);
}

// package-operator's own TestToPushedOCI pins the manifest digest of the image kubectl-package
// makes of three small files. kpkg's diff_id and config for those files, with the layer
// descriptor Go's gzip gives (digest and size from tests/plan/kubectl_package_replay.go, which
// reproduces the pinned digest), make a manifest of that very digest.
TEST(PackageImage, UpstreamPinnedDigestFromKpkgsConfig) {
    ImageContent c;
    c.kind = ImageKind::package;
    c.files = {{"package/manifest.yaml", std::string("\x05\x06"), false},
               {"package/manifest.yml", std::string("\x07\x08"), false},
               {"package/subdir/somethingelse", std::string("\x09\x0a"), false}};
    auto img = build_image(c);
    ASSERT_TRUE(img) << img.error().message;
    const Parts p = parts_of(*img);
    auto cfg = oci::parse_config(p.config, "config");
    ASSERT_TRUE(cfg);
    EXPECT_EQ(cfg->diff_ids,
              std::vector<std::string>{
                  "sha256:30e5a673fdc64f7f641b1973b1bf482021e05789301b83c2caa994a5b8547e7f"});
    EXPECT_EQ(p.manifest.config.digest,
              "sha256:64c5fae8fb2770a01a79a1c2ba198b6a00fea791a0dbaad0131bfb26b761bdb7");
    // go-containerregistry's manifest: descriptors as mediaType, size, digest.
    const std::string go_manifest =
        "{\"schemaVersion\":2,\"mediaType\":\"application/"
        "vnd.docker.distribution.manifest.v2+json\","
        "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"size\":" +
        std::to_string(p.manifest.config.size) + ",\"digest\":\"" + p.manifest.config.digest +
        "\"},\"layers\":[{\"mediaType\":\"application/vnd.docker.image.rootfs.diff.tar.gzip\","
        "\"size\":185,\"digest\":\"sha256:"
        "d6eea2bbde4b43aa03dfd4b0c5eb2b432030ca3bc1ded3fc9137b13a13cfed10\"}]}";
    EXPECT_EQ(sha256_digest(go_manifest),
              "sha256:8012c104de49c1b7d05db3ed1033f41a9cff0d0f52f74dbcf9622ecf20a44c61");
}

TEST(PackageImage, LabelsGoIntoTheConfigAsGoWritesThem) {
    io::DirectoryTree tree(greeter_dir());
    ContentOptions co;
    co.labels = {{"version", "1"}, {"org.example/team", "a&b"}};
    auto b = build(tree, co);
    ASSERT_TRUE(b) << b.error().message;
    const Parts p = parts_of(b->image);
    EXPECT_TRUE(test::contains(
        p.config,
        "\"config\":{\"Labels\":{\"org.example/team\":\"a\\u0026b\",\"version\":\"1\"}}}"))
        << p.config;
    // go_layer_reference.py testdata/packages/greeter 'org.example/team=a&b' version=1
    EXPECT_EQ(p.manifest.config.digest,
              "sha256:783a66b6d353e9dba95748eb7e0829d176fe58142563b232c3774362a5f69c46");
}

TEST(PackageImage, SeveralPlatformsMakeAManifestListSharingTheLayer) {
    io::DirectoryTree tree(greeter_dir());
    BuildOptions bo;
    bo.platforms = {oci::Platform{"linux", "amd64", ""}, oci::Platform{"linux", "arm64", "v8"}};
    auto b = build(tree, {}, bo);
    ASSERT_TRUE(b) << b.error().message;
    EXPECT_EQ(b->image.root_media_type, oci::media::docker_manifest_list);
    auto ix = oci::parse_index(b->image.blobs.at(b->image.root_digest), "index");
    ASSERT_TRUE(ix) << ix.error().message;
    ASSERT_EQ(ix->manifests.size(), 2u);
    std::set<std::string> layers;
    for (const auto& d : ix->manifests) {
        EXPECT_EQ(d.media_type, oci::media::docker_manifest);
        ASSERT_TRUE(d.platform);
        auto m = oci::parse_manifest(b->image.blobs.at(d.digest), "m", d.media_type);
        ASSERT_TRUE(m);
        layers.insert(m->layers.at(0).digest);
        auto cfg = oci::parse_config(b->image.blobs.at(m->config.digest), "config");
        ASSERT_TRUE(cfg);
        EXPECT_EQ(cfg->architecture, d.platform->architecture);
        EXPECT_EQ(cfg->diff_ids, std::vector<std::string>{greeter_diff_id});
    }
    EXPECT_EQ(layers.size(), 1u);
    EXPECT_EQ(ix->manifests[1].platform->str(), "linux/arm64/v8");
    // Without platforms: linux/amd64 whatever the host, as kubectl-package.
    auto one = build(tree);
    ASSERT_TRUE(one);
    auto cfg = oci::parse_config(parts_of(one->image).config, "config");
    ASSERT_TRUE(cfg);
    EXPECT_EQ(cfg->architecture, "amd64");
    EXPECT_EQ(cfg->os, "linux");
}

// Names over 100 bytes (split into ustar's prefix, or in a pax header when they cannot be), a
// name that is not ASCII, an empty file, names starting with '.' at any depth and a symbolic
// link (left out with a warning, as kubectl-package skips links).
TEST(PackageImage, LongAndUnusualNamesAsGoWritesThem) {
    test::TempDir d;
    const fs::path src = greeter_dir();
    for (const auto& e : fs::recursive_directory_iterator(src))
        if (e.is_regular_file())
            d.write(e.path().lexically_relative(src).generic_string(), test::read_file(e.path()));
    const std::string dd(60, 'd');
    d.write("docs/" + dd + "/" + dd + "/x/file.txt", "deep\n");
    d.write("docs/" + std::string(120, 'n') + ".txt", "long\n");
    d.write("docs/gr\xc3\xbc\xc3\x9f"
            "e.txt",
            "umlaut\n");
    d.write("docs/" + std::string(150, 'p') + "/f", "a\n");
    d.write(".hidden/a", "x\n");
    d.write("sub/.dot/b", "y\n");
    d.write("sub/.z", "z\n");
    d.write("sub/w.txt", "w\n");
    fs::create_symlink("deploy/deployment.yaml", d / "link.yaml");
    io::DirectoryTree tree(d.path());
    auto b = build(tree);
    ASSERT_TRUE(b) << b.error().message;
    ASSERT_EQ(b->content.warnings.size(), 1u);
    EXPECT_TRUE(test::contains(b->content.warnings[0], "link.yaml")) << b->content.warnings[0];
    const Parts p = parts_of(b->image);
    // go_layer_reference.py and kubectl_package_replay.go on this directory.
    EXPECT_TRUE(test::contains(
        p.config, "sha256:29052ff11382dc17a1e8b3c7a56b19935bdcb74ad4b70be12dc0eec8815f4fed"))
        << p.config;
    auto tar = oci::decompress(b->image.blobs.at(p.manifest.layers[0].digest), 1 << 20, "layer");
    ASSERT_TRUE(tar);
    auto headers = oci::read_tar_headers(*tar, "layer");
    ASSERT_TRUE(headers) << headers.error().message;
    std::vector<std::string> names;
    for (const auto& h : *headers)
        names.push_back(h.name);
    EXPECT_EQ(names.size(), 10u);
    EXPECT_EQ(
        std::count(names.begin(), names.end(), "package/docs/" + std::string(150, 'p') + "/f"), 1);
    EXPECT_EQ(std::count(names.begin(), names.end(), "package/sub/w.txt"), 1);
    EXPECT_EQ(std::count(names.begin(), names.end(), "package/link.yaml"), 0);
}

TEST(PackageImage, InvalidPackageBuildsNothingAndListsEveryProblem) {
    io::MemoryTree t("pkg");
    t.add_file("manifest.yaml", "apiVersion: manifests.package-operator.run/v1alpha1\n"
                                "kind: PackageManifest\n");
    auto kind = detect(t);
    ASSERT_TRUE(kind);
    EXPECT_EQ(*kind, ImageKind::package);
    auto c = image_content(t);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ExitCode::invalid);
    EXPECT_TRUE(test::contains(c.error().message, "not a valid Package Operator package"))
        << c.error().message;
    auto r = build(t);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(r.error().message, c.error().message);

    // A fixture that no longer matches what the template renders.
    io::MemoryTree f("greeter");
    const fs::path src = greeter_dir();
    for (const auto& e : fs::recursive_directory_iterator(src))
        if (e.is_regular_file()) {
            std::string bytes = test::read_file(e.path());
            const std::string rel = e.path().lexically_relative(src).generic_string();
            if (rel == ".test-fixtures/default/configmap.yaml") bytes += "  extra: value\n";
            f.add_file(rel, bytes);
        }
    auto m = build(f);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ExitCode::invalid);
    EXPECT_TRUE(test::contains(m.error().message, "File mismatch against fixture"))
        << m.error().message;
}

TEST(ImageContent, ASingleCatalogFileGoesUnderConfigsByItsName) {
    io::FileTree t(test::testdata("catalog/vault/catalog.yaml"));
    auto c = image_content(t);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(paths(*c), (std::vector<std::string>{"configs/", "configs/catalog.yaml"}));
}

// build() (checked on one thread while the layer is built) makes what image_content() and
// build_image() make one after the other, and refuses what they refuse.
TEST(Build, TheSameImageAsContentThenBuildImage) {
    for (const char* dir : {"bundles/sample-operator", "catalog"}) {
        io::DirectoryTree tree(test::testdata(dir));
        BuildOptions bo;
        bo.platforms = {oci::Platform{"linux", "amd64", ""}, oci::Platform{"linux", "arm64", ""}};
        auto c = image_content(tree);
        ASSERT_TRUE(c) << c.error().message;
        auto one = build_image(*c, bo);
        ASSERT_TRUE(one) << one.error().message;
        auto two = build(tree, {}, bo);
        ASSERT_TRUE(two) << two.error().message;
        EXPECT_EQ(two->image.root_digest, one->root_digest) << dir;
        EXPECT_EQ(two->image.blobs, one->blobs) << dir;
        EXPECT_EQ(two->content.labels, c->labels);
        EXPECT_TRUE(two->content.files.empty());
    }
    io::DirectoryTree bad(test::testdata("bundles/invalid-annotations-package"));
    auto r = build(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(r.error().message, image_content(bad).error().message);
}

TEST(ImageClass, AsOpmTellsThemApart) {
    io::MemoryTree none("img");
    auto c = classify({{configs_label, "/configs/"}, {package_label, "x"}}, none, "q.io/c:1");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->kind, ImageKind::catalog);
    EXPECT_EQ(c->root, "configs");
    c = classify({{package_label, "x"}, {sqlite_label, "/database/index.db"}}, none, "q.io/b:1");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->kind, ImageKind::bundle);

    c = classify({{sqlite_label, "/database/index.db"}}, none, "q.io/i:1");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ExitCode::invalid);
    EXPECT_EQ(c.error().message, "\"q.io/i:1\": sqlite-based index images are no longer supported");

    io::MemoryTree pko("img");
    pko.add_file("package/manifest.yaml", "kind: PackageManifest\n");
    c = classify({}, pko, "q.io/p:1");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->kind, ImageKind::package);

    c = classify({}, none, "q.io/x:1");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message,
              "\"q.io/x:1\": image type could not be determined: image has no labels");
    c = classify({{"b", "2"}, {"a", "1"}}, none, "q.io/x:1");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message, "\"q.io/x:1\": image type could not be determined, found "
                                 "labels\n  a=1\n  b=2");
}

} // namespace
} // namespace kpkg::plan
