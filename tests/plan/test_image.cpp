// plan::image_content: what kpkg build puts in bundle and catalog images.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "kpkg/plan/image.hpp"
#include "support/support.hpp"

namespace kpkg::plan {
namespace {

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
    EXPECT_EQ(c->files[2].bytes,
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

TEST(ImageContent, PackageOperatorPackagesAreNotBuiltYet) {
    io::MemoryTree t("pkg");
    t.add_file("manifest.yaml", "apiVersion: manifests.package-operator.run/v1alpha1\n"
                                "kind: PackageManifest\n");
    auto kind = detect(t);
    ASSERT_TRUE(kind);
    EXPECT_EQ(*kind, ImageKind::package);
    auto c = image_content(t);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ExitCode::usage);
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
    io::MemoryTree pko("pkg");
    pko.add_file("manifest.yaml", "kind: PackageManifest\n");
    r = build(pko);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::usage);
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
