// Images on disk (kpkg/oci/layout.hpp): OCI layouts, oci-archive and docker-archive written and
// read back, atomic writes, verification of what is read, an image as a Tree; and interop with
// skopeo and umoci when they are installed.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kpkg/core/digest.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/oci/layer.hpp"
#include "kpkg/oci/layout.hpp"
#include "kpkg/oci/media_types.hpp"
#include "support/support.hpp"

using namespace kpkg;
using kpkg::test::contains;
using kpkg::test::TempDir;
namespace fs = std::filesystem;

namespace {

const char* const package_label = "operators.operatorframework.io.bundle.package.v1";

// A bundle-like image: one layer, a config with labels, an OCI manifest.
oci::Content bundle_image(const std::string& package = "etcd", const std::string& arch = "amd64",
                          std::string* manifest_digest = nullptr) {
    auto layer =
        oci::build_layer({{"manifests/csv.yaml", "kind: ClusterServiceVersion\n", 0644, false},
                          {"metadata/annotations.yaml",
                           "annotations:\n  " + std::string(package_label) + ": " + package + "\n",
                           0644, false}})
            .take();
    oci::ImageConfig cfg;
    cfg.architecture = arch;
    cfg.os = "linux";
    cfg.labels[package_label] = package;
    cfg.diff_ids = {layer.diff_id};
    const std::string cj = oci::to_json(cfg);
    oci::Manifest m;
    m.media_type = std::string(oci::media::oci_manifest);
    m.config = {std::string(oci::media::oci_config),
                sha256_digest(cj),
                static_cast<std::int64_t>(cj.size()),
                std::nullopt,
                {}};
    m.layers.push_back({layer.media_type, layer.digest, layer.size, std::nullopt, {}});
    const std::string mj = oci::to_json(m);
    oci::Content c;
    c.blobs[sha256_digest(cj)] = cj;
    c.blobs[layer.digest] = layer.blob;
    c.blobs[sha256_digest(mj)] = mj;
    c.root_digest = sha256_digest(mj);
    c.root_media_type = m.media_type;
    if (manifest_digest != nullptr) *manifest_digest = c.root_digest;
    return c;
}

// Two platforms under an index.
oci::Content multi_arch_image() {
    std::string amd, arm;
    oci::Content a = bundle_image("etcd", "amd64", &amd);
    oci::Content b = bundle_image("etcd", "arm64", &arm);
    oci::Index ix;
    ix.media_type = std::string(oci::media::oci_index);
    ix.manifests.push_back({std::string(oci::media::oci_manifest),
                            amd,
                            static_cast<std::int64_t>(a.blobs[amd].size()),
                            oci::Platform{"linux", "amd64", ""},
                            {}});
    ix.manifests.push_back({std::string(oci::media::oci_manifest),
                            arm,
                            static_cast<std::int64_t>(b.blobs[arm].size()),
                            oci::Platform{"linux", "arm64", "v8"},
                            {}});
    oci::Content c;
    c.blobs = a.blobs;
    c.blobs.insert(b.blobs.begin(), b.blobs.end());
    const std::string ij = oci::to_json(ix);
    c.root_digest = sha256_digest(ij);
    c.root_media_type = ix.media_type;
    c.blobs[c.root_digest] = ij;
    return c;
}

std::vector<std::string> names_in(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
        out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

std::string listing(const io::Tree& t) {
    std::string s;
    for (const auto& e : t.list().take())
        s += e.rel + (e.is_dir() ? "/" : "") + "\n";
    return s;
}

struct Run {
    int rc;
    std::string out;
};

Run run(const std::string& cmd) {
    Run r{0, {}};
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, p))
        r.out.append(buf, n);
    r.rc = pclose(p);
    return r;
}

} // namespace

TEST(OciLayout, LayoutRefOfALocation) {
    auto l = oci::parse_transport("docker-archive:a.tar:quay.io/x/y:v2");
    ASSERT_TRUE(l);
    auto r = oci::layout_ref(*l);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->kind, oci::LayoutRef::Kind::docker_archive);
    EXPECT_EQ(r->path, "a.tar");
    EXPECT_EQ(r->tag, "quay.io/x/y:v2");
    l = oci::parse_transport("oci:/tmp/x:v1");
    ASSERT_TRUE(l);
    r = oci::layout_ref(*l);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->kind, oci::LayoutRef::Kind::oci_dir);
    EXPECT_EQ(r->tag, "v1");
    l = oci::parse_transport("docker://quay.io/x/y:v1");
    ASSERT_TRUE(l);
    EXPECT_FALSE(oci::layout_ref(*l));
}

TEST(OciLayout, OciDirRoundTrip) {
    TempDir t;
    const oci::Content c = bundle_image();
    ASSERT_TRUE(oci::write_oci_dir(t / "img", c, "v1"));
    EXPECT_EQ(names_in(t.path()), std::vector<std::string>{"img"}); // no temporary left
    EXPECT_EQ(kpkg::test::read_file(t / "img/oci-layout"), R"({"imageLayoutVersion":"1.0.0"})");
    const std::string index = kpkg::test::read_file(t / "img/index.json");
    EXPECT_EQ(index, R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json",)"
                     R"("manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
                     R"("digest":")" +
                         c.root_digest + R"(","size":)" +
                         std::to_string(c.blobs.at(c.root_digest).size()) +
                         R"(,"annotations":{"org.opencontainers.image.ref.name":"v1"}}]})");
    EXPECT_EQ(names_in(t / "img/blobs/sha256").size(), 3u);
    auto back = oci::read_oci_dir(t / "img", "v1");
    ASSERT_TRUE(back) << back.error().str();
    EXPECT_EQ(back->blobs, c.blobs);
    EXPECT_EQ(back->root_digest, c.root_digest);
    EXPECT_EQ(back->root_media_type, c.root_media_type);
    // The only image is found without a tag.
    EXPECT_TRUE(oci::read_oci_dir(t / "img"));
    auto unknown = oci::read_oci_dir(t / "img", "v9");
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(unknown.error().message, "no image tagged \"v9\" (tags: v1)"))
        << unknown.error().message;
    // A trailing slash names the same directory.
    ASSERT_TRUE(oci::write_oci_dir((t / "slash").string() + "/", c, "v1"));
    EXPECT_TRUE(oci::read_oci_dir((t / "slash").string() + "/", "v1"));
    // Written twice: the same bytes.
    ASSERT_TRUE(oci::write_oci_dir(t / "img2", c, "v1"));
    EXPECT_EQ(kpkg::test::read_file(t / "img2/index.json"), index);
    EXPECT_EQ(names_in(t.path()), (std::vector<std::string>{"img", "img2", "slash"}));
}

TEST(OciLayout, AddingToAnExistingLayout) {
    TempDir t;
    const oci::Content a = bundle_image("etcd");
    const oci::Content b = bundle_image("prometheus");
    ASSERT_TRUE(oci::write_oci_dir(t / "img", a, "v1"));
    ASSERT_TRUE(oci::write_oci_dir(t / "img", b, "v2"));
    EXPECT_EQ(oci::read_oci_dir(t / "img", "v1")->root_digest, a.root_digest);
    EXPECT_EQ(oci::read_oci_dir(t / "img", "v2")->root_digest, b.root_digest);
    auto ambiguous = oci::read_oci_dir(t / "img");
    ASSERT_FALSE(ambiguous);
    EXPECT_TRUE(contains(ambiguous.error().message, "2 images, name one with :TAG (tags: v1, v2)"))
        << ambiguous.error().message;
    // Entries of other tools keep the fields kpkg does not model.
    const std::string other = R"({"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
                              R"("digest":"sha256:)" +
                              std::string(64, 'e') +
                              R"(","size":7,"urls":["https://x"],"artifactType":"a/b",)"
                              R"("annotations":{"org.opencontainers.image.ref.name":"v0"}})";
    std::string idx = kpkg::test::read_file(t / "img/index.json");
    idx.insert(idx.find("\"manifests\":[") + 13, other + ",");
    t.write("img/index.json", idx);
    ASSERT_TRUE(oci::write_oci_dir(t / "img", a, "v3"));
    EXPECT_TRUE(contains(kpkg::test::read_file(t / "img/index.json"), other))
        << kpkg::test::read_file(t / "img/index.json");
    // The same tag again moves it.
    ASSERT_TRUE(oci::write_oci_dir(t / "img", b, "v1"));
    EXPECT_EQ(oci::read_oci_dir(t / "img", "v1")->root_digest, b.root_digest);
    auto ix = oci::parse_index(kpkg::test::read_file(t / "img/index.json"), "index.json");
    ASSERT_TRUE(ix);
    EXPECT_EQ(ix->manifests.size(), 4u); // v0, v1, v2, v3
    EXPECT_EQ(names_in(t.path()), std::vector<std::string>{"img"});
}

TEST(OciLayout, RefusesANonEmptyDirectoryThatIsNotALayout) {
    TempDir t;
    t.write("notes/readme.txt", "mine");
    auto r = oci::write_oci_dir(t / "notes", bundle_image(), "v1");
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "not an OCI image layout")) << r.error().message;
    EXPECT_EQ(names_in(t / "notes"), std::vector<std::string>{"readme.txt"});
    // An empty directory is fine.
    fs::create_directory(t / "empty");
    ASSERT_TRUE(oci::write_oci_dir(t / "empty", bundle_image(), "v1"));
    EXPECT_TRUE(oci::read_oci_dir(t / "empty", "v1"));
}

TEST(OciLayout, AFailedWriteLeavesNothing) {
    TempDir t;
    oci::Content c = bundle_image();
    // A layer missing from the content.
    oci::Content missing = c;
    auto m = oci::parse_manifest(c.blobs.at(c.root_digest), "m").take();
    missing.blobs.erase(m.layers[0].digest);
    auto r = oci::write_oci_dir(t / "img", missing, "v1");
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, m.layers[0].digest)) << r.error().message;
    EXPECT_TRUE(names_in(t.path()).empty());
    // A blob whose bytes do not hash to its digest.
    oci::Content corrupt = c;
    corrupt.blobs[m.layers[0].digest] += "x";
    r = oci::write_oci_dir(t / "img", corrupt, "v1");
    ASSERT_FALSE(r);
    EXPECT_TRUE(names_in(t.path()).empty());
    r = oci::write_oci_archive(t / "img.tar", corrupt, "v1");
    ASSERT_FALSE(r);
    EXPECT_TRUE(names_in(t.path()).empty());
    // Into an existing layout: its files stay as they were.
    ASSERT_TRUE(oci::write_oci_dir(t / "img", c, "v1"));
    const std::string index = kpkg::test::read_file(t / "img/index.json");
    r = oci::write_oci_dir(t / "img", missing, "v2");
    ASSERT_FALSE(r);
    EXPECT_EQ(kpkg::test::read_file(t / "img/index.json"), index);
    EXPECT_EQ(names_in(t / "img/blobs/sha256").size(), 3u);
}

TEST(OciLayout, ReadingVerifiesEveryBlob) {
    TempDir t;
    const oci::Content c = bundle_image();
    auto m = oci::parse_manifest(c.blobs.at(c.root_digest), "m").take();
    const std::string layer_hex = m.layers[0].digest.substr(7);
    auto fresh = [&](const std::string& name) {
        EXPECT_TRUE(oci::write_oci_dir(t / name, c, "v1"));
        return t / name;
    };
    {
        // Same size, different bytes.
        const fs::path d = fresh("flip");
        std::string bytes = kpkg::test::read_file(d / "blobs/sha256" / layer_hex);
        bytes[10] = static_cast<char>(bytes[10] ^ 1);
        t.write("flip/blobs/sha256/" + layer_hex, bytes);
        auto r = oci::read_oci_dir(d, "v1");
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, ExitCode::invalid);
        EXPECT_TRUE(contains(r.error().message, "blob " + m.layers[0].digest)) << r.error().message;
        EXPECT_TRUE(contains(r.error().message, "its content has digest")) << r.error().message;
    }
    {
        const fs::path d = fresh("short");
        t.write("short/blobs/sha256/" + layer_hex, "tiny");
        auto r = oci::read_oci_dir(d, "v1");
        ASSERT_FALSE(r);
        EXPECT_TRUE(contains(r.error().message, "4 bytes, but its descriptor says"))
            << r.error().message;
    }
    {
        const fs::path d = fresh("gone");
        fs::remove(d / "blobs/sha256" / layer_hex);
        auto r = oci::read_oci_dir(d, "v1");
        ASSERT_FALSE(r);
        EXPECT_TRUE(contains(r.error().message, "missing")) << r.error().message;
        EXPECT_TRUE(contains(r.error().message, "named by manifest " + c.root_digest))
            << r.error().message;
    }
    {
        const fs::path d = fresh("badindex");
        t.write("badindex/index.json", "{\"schemaVersion\":2,\n\"manifests\":[{\"size\":-1}]}");
        auto r = oci::read_oci_dir(d, "v1");
        ASSERT_FALSE(r);
        EXPECT_TRUE(contains(r.error().str(), "index.json:2:")) << r.error().str();
    }
    {
        const fs::path d = fresh("limit");
        oci::ReadLimits small;
        small.max_blob_bytes = 100;
        auto r = oci::read_oci_dir(d, "v1", small);
        ASSERT_FALSE(r);
        EXPECT_TRUE(contains(r.error().message, "more than the limit of 100")) << r.error().message;
    }
    {
        auto r = oci::read_oci_dir(t / "nothing-here");
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, ExitCode::error);
        fs::create_directory(t / "plain");
        r = oci::read_oci_dir(t / "plain");
        ASSERT_FALSE(r);
        EXPECT_TRUE(contains(r.error().message, "no oci-layout")) << r.error().message;
    }
}

TEST(OciLayout, OciArchiveRoundTrip) {
    TempDir t;
    const oci::Content c = multi_arch_image();
    ASSERT_TRUE(oci::write_oci_archive(t / "img.tar", c, "v1"));
    auto hs = oci::read_tar_headers(kpkg::test::read_file(t / "img.tar"), "img.tar").take();
    ASSERT_GE(hs.size(), 4u);
    EXPECT_EQ(hs[0].name, "blobs/");
    EXPECT_EQ(hs[hs.size() - 2].name, "index.json");
    EXPECT_EQ(hs.back().name, "oci-layout");
    auto back = oci::read_oci_archive(t / "img.tar", "v1");
    ASSERT_TRUE(back) << back.error().str();
    EXPECT_EQ(back->blobs, c.blobs);
    EXPECT_EQ(back->root_digest, c.root_digest);
    // Truncated archives fail naming the file.
    const std::string bytes = kpkg::test::read_file(t / "img.tar");
    t.write("cut.tar", bytes.substr(0, 1500));
    auto cut = oci::read_oci_archive(t / "cut.tar", "v1");
    ASSERT_FALSE(cut);
    EXPECT_TRUE(contains(cut.error().message, "cut.tar")) << cut.error().message;
}

TEST(OciLayout, DockerArchiveRoundTrip) {
    TempDir t;
    const oci::Content c = multi_arch_image();
    ASSERT_TRUE(
        oci::write_docker_archive(t / "img.tar", c, "quay.io/o/etcd:v1", {"linux", "arm64", ""}));
    auto files = oci::read_tar_headers(kpkg::test::read_file(t / "img.tar"), "img.tar").take();
    ASSERT_EQ(files.size(), 3u); // config, one layer, manifest.json
    EXPECT_EQ(files.back().name, "manifest.json");
    auto back = oci::read_docker_archive(t / "img.tar", "quay.io/o/etcd:v1");
    ASSERT_TRUE(back) << back.error().str();
    auto info = oci::image_info(*back);
    ASSERT_TRUE(info) << info.error().str();
    EXPECT_EQ(info->config.architecture, "arm64");
    EXPECT_EQ(info->manifest.layers[0].media_type, oci::media::oci_layer_tar);
    auto orig = oci::image_info(c, {"linux", "arm64", ""}).take();
    EXPECT_EQ(info->config_digest, orig.config_digest); // the config is kept byte for byte
    auto a = oci::image_tree(*back);
    auto b = oci::image_tree(c, {"linux", "arm64", ""});
    ASSERT_TRUE(a && b);
    EXPECT_EQ(listing(*a->tree), listing(*b->tree));
    // Docker's normalisation when matching, ":latest" when writing a name without a tag.
    EXPECT_TRUE(oci::read_docker_archive(t / "img.tar", "quay.io/o/etcd:v1"));
    ASSERT_TRUE(oci::write_docker_archive(t / "b.tar", c, "busybox", {"linux", "amd64", ""}));
    EXPECT_TRUE(contains(kpkg::test::read_file(t / "b.tar"), R"("RepoTags":["busybox:latest"])"));
    EXPECT_TRUE(oci::read_docker_archive(t / "b.tar", "docker.io/library/busybox:latest"));
    auto digest_ref = oci::write_docker_archive(t / "c.tar", c, "busybox@" + c.root_digest,
                                                {"linux", "amd64", ""});
    ASSERT_FALSE(digest_ref);
    EXPECT_EQ(digest_ref.error().code, ExitCode::usage);
    EXPECT_FALSE(fs::exists(t / "c.tar"));
    auto wrong = oci::read_docker_archive(t / "img.tar", "other:v1");
    ASSERT_FALSE(wrong);
    EXPECT_TRUE(contains(wrong.error().message, "(tags: quay.io/o/etcd:v1)"))
        << wrong.error().message;
}

TEST(OciLayout, DockerArchiveWithCompressedLayersAndLinks) {
    // As `docker save` of old wrote it: <id>/layer.tar, a repeated layer as a symbolic link; and
    // a gzip layer as some tools write it.
    auto layer = oci::build_layer({{"a.txt", "A", 0644, false}}).take();
    const std::string tar = oci::layer_tar({{"a.txt", "A", 0644, false}}).take();
    oci::ImageConfig cfg;
    cfg.architecture = "amd64";
    cfg.os = "linux";
    cfg.diff_ids = {layer.diff_id, layer.diff_id, layer.diff_id};
    const std::string cj = oci::to_json(cfg);
    const std::string manifest =
        R"([{"Config":"c.json","RepoTags":["x:1"],"Layers":["l1/layer.tar","l2/layer.tar","g.tar.gz"]}])";
    using T = oci::TarEntry;
    TempDir t;
    t.write("d.tar",
            oci::write_tar({{T::Type::file, "c.json", cj, {}, 0644},
                            {T::Type::dir, "l1/", {}, {}, 0755},
                            {T::Type::file, "l1/layer.tar", tar, {}, 0644},
                            {T::Type::dir, "l2/", {}, {}, 0755},
                            {T::Type::symlink, "l2/layer.tar", {}, "../l1/layer.tar", 0777},
                            {T::Type::file, "g.tar.gz", layer.blob, {}, 0644},
                            {T::Type::file, "manifest.json", manifest, {}, 0644}}));
    auto c = oci::read_docker_archive(t / "d.tar");
    ASSERT_TRUE(c) << c.error().str();
    auto info = oci::image_info(*c).take();
    ASSERT_EQ(info.manifest.layers.size(), 3u);
    EXPECT_EQ(info.manifest.layers[2].media_type, oci::media::oci_layer_gzip);
    EXPECT_EQ(info.manifest.layers[2].digest, layer.digest);
    // A layer that does not match its diff_id.
    cfg.diff_ids[1] = sha256_digest("other");
    t.write("bad.tar", oci::write_tar({{T::Type::file, "c.json", oci::to_json(cfg), {}, 0644},
                                       {T::Type::file, "l1/layer.tar", tar, {}, 0644},
                                       {T::Type::file, "l2/layer.tar", tar, {}, 0644},
                                       {T::Type::file, "g.tar.gz", layer.blob, {}, 0644},
                                       {T::Type::file, "manifest.json", manifest, {}, 0644}}));
    auto bad = oci::read_docker_archive(t / "bad.tar");
    ASSERT_FALSE(bad);
    EXPECT_TRUE(contains(bad.error().message, "l2/layer.tar")) << bad.error().message;
    EXPECT_TRUE(contains(bad.error().message, "diff_ids[1]")) << bad.error().message;
}

TEST(OciLayout, ImageTreeIsImmutableAndKeyedByTheManifest) {
    std::string amd;
    const oci::Content c = bundle_image("etcd", "amd64", &amd);
    auto it = oci::image_tree(c, {"linux", "amd64", ""});
    ASSERT_TRUE(it) << it.error().str();
    const io::Identity id = it->tree->identity();
    EXPECT_EQ(id.kind, io::Identity::Kind::immutable);
    EXPECT_EQ(id.key, amd);
    EXPECT_TRUE(id.dir);
    EXPECT_EQ(listing(*it->tree),
              "/\nmanifests/\nmanifests/csv.yaml\nmetadata/\nmetadata/annotations.yaml\n");
    ASSERT_NE(oci::label(it->info.config, package_label), nullptr);
    EXPECT_EQ(*oci::label(it->info.config, package_label), "etcd");
    EXPECT_EQ(it->tree->read("manifests/csv.yaml")->text(), "kind: ClusterServiceVersion\n");

    // From an index: the platform's manifest.
    const oci::Content multi = multi_arch_image();
    auto arm = oci::image_tree(multi, {"linux", "arm64", ""});
    ASSERT_TRUE(arm) << arm.error().str();
    EXPECT_EQ(arm->info.config.architecture, "arm64");
    auto none = oci::image_tree(multi, {"linux", "s390x", ""});
    ASSERT_FALSE(none);
    EXPECT_TRUE(contains(none.error().message, "it has linux/amd64, linux/arm64/v8"))
        << none.error().message;

    // A config whose diff_id does not match its layer.
    oci::Content bad = c;
    auto info = oci::image_info(c).take();
    oci::ImageConfig cfg = info.config;
    cfg.diff_ids[0] = sha256_digest("not the layer");
    const std::string cj = oci::to_json(cfg);
    oci::Manifest m = info.manifest;
    m.config.digest = sha256_digest(cj);
    m.config.size = static_cast<std::int64_t>(cj.size());
    const std::string mj = oci::to_json(m);
    bad.blobs[m.config.digest] = cj;
    bad.blobs[sha256_digest(mj)] = mj;
    bad.root_digest = sha256_digest(mj);
    auto r = oci::image_tree(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(r.error().message, "diff_ids[0]")) << r.error().message;
}

// --- Docker schema 2 images in a layout: OCI media types, as skopeo writes them ---

namespace {

// A Docker schema 2 image as kubectl-package writes one: its blobs the bytes given, the layer a
// 120-byte gzip of package/manifest.yaml. The expected results below are what skopeo 1.9.3
// (Debian's) wrote for these very blobs with `skopeo copy [--all] oci:DOCKER_LAYOUT oci:DIR:v1`.
const char* const docker_layer_hex =
    "1f8b0800f4360b6b02ffedcd4b0ac2301405d08c5d852ba8b194ee2748fc60aa62ebc0dd1b1d896311a4e74ceee3"
    "dec1bba4cd31edf26a48a7c3368f53734f4309df15abbeeb5e597de6737dbb6bbf6e63db87650c3f701ba774adef"
    "c33ced7329e745000000000000000000e0cf3c002319e3e500280000";
const char* const docker_layer_digest =
    "sha256:310ee685080ea8666252ce64c5d11b44339fe08a34fef79f446ee19a739569ab";
const char* const diff_id =
    "sha256:3eb76544b0599c3f82bf53d97b3740b9920376dc30285a64bb9a47fdbc40eef1";

std::string unhex(const char* hex) {
    std::string out;
    for (const char* p = hex; p[0] != '\0' && p[1] != '\0'; p += 2)
        out.push_back(static_cast<char>(std::stoi(std::string(p, 2), nullptr, 16)));
    return out;
}

std::string put(oci::Content& c, std::string bytes) {
    std::string d = sha256_digest(bytes);
    c.blobs[d] = std::move(bytes);
    return d;
}

std::string docker_config(const std::string& arch, const std::string& variant = {}) {
    return R"({"architecture":")" + arch +
           R"(","created":"0001-01-01T00:00:00Z","history":[{"created":"0001-01-01T00:00:00Z"}],)"
           R"("os":"linux","rootfs":{"type":"layers","diff_ids":[")" +
           diff_id + R"("]},"config":{"Labels":{"a":"b"}})" +
           (variant.empty() ? "" : R"(,"variant":")" + variant + "\"") + "}";
}

// Adds a Docker manifest of `config` and the layer; its digest.
std::string docker_manifest(oci::Content& c, const std::string& config) {
    const std::string layer = unhex(docker_layer_hex);
    EXPECT_EQ(sha256_digest(layer), docker_layer_digest);
    put(c, layer);
    const std::string cd = put(c, config);
    return put(c, R"({"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.)"
                  R"(manifest.v2+json","config":{"mediaType":"application/vnd.docker.container.)"
                  R"(image.v1+json","digest":")" +
                      cd + R"(","size":)" + std::to_string(config.size()) +
                      R"(},"layers":[{"mediaType":"application/vnd.docker.image.rootfs.diff.tar.)"
                      R"(gzip","digest":")" +
                      docker_layer_digest + R"(","size":120}]})");
}

std::string oci_manifest_of(const std::string& config) {
    return R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
           R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":")" +
           sha256_digest(config) + R"(","size":)" + std::to_string(config.size()) +
           R"(},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":")" +
           docker_layer_digest + R"(","size":120}]})";
}

} // namespace

TEST(OciLayout, DockerManifestIsWrittenAsSkopeoConvertsIt) {
    oci::Content c;
    c.root_digest = docker_manifest(c, docker_config("amd64"));
    c.root_media_type = std::string(oci::media::docker_manifest);
    // skopeo's config: the OCI image config's fields in their order, the same values.
    const std::string config =
        R"({"created":"0001-01-01T00:00:00Z","architecture":"amd64","os":"linux",)"
        R"("config":{"Labels":{"a":"b"}},"rootfs":{"type":"layers","diff_ids":[")" +
        std::string(diff_id) + R"("]},"history":[{"created":"0001-01-01T00:00:00Z"}]})";
    EXPECT_EQ(sha256_digest(config),
              "sha256:2c7fe346cc52df048e9a25f536fcac1ce22ea3856503a0c1b3e69a8ba07a7c4c");
    const std::string manifest = oci_manifest_of(config);
    EXPECT_EQ(sha256_digest(manifest),
              "sha256:8db168d5abdd48dc7ebdcddf06e4ca8b90395f56055bdd29a5edc833f118038b");

    auto converted = oci::with_oci_media_types(c);
    ASSERT_TRUE(converted) << converted.error().message;
    ASSERT_TRUE(converted->has_value());
    const oci::Content* o = &**converted;
    EXPECT_EQ(o->root_media_type, oci::media::oci_manifest);
    EXPECT_EQ(o->root_digest, sha256_digest(manifest));
    EXPECT_EQ(o->blobs.at(o->root_digest), manifest);
    EXPECT_EQ(o->blobs.at(sha256_digest(config)), config);
    EXPECT_EQ(o->blobs.at(docker_layer_digest), unhex(docker_layer_hex));

    // Written: index.json as skopeo writes it, the tag in org.opencontainers.image.ref.name.
    TempDir t;
    ASSERT_TRUE(oci::write_oci_dir(t / "dir", c, "v1"));
    EXPECT_EQ(
        kpkg::test::read_file(t / "dir/index.json"),
        R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json",)"
        R"("manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
        R"("digest":"sha256:8db168d5abdd48dc7ebdcddf06e4ca8b90395f56055bdd29a5edc833f118038b",)"
        R"("size":401,"annotations":{"org.opencontainers.image.ref.name":"v1"}}]})");
    EXPECT_FALSE(fs::exists(t / "dir/blobs" / "sha256" / c.root_digest.substr(7)));
    auto back = oci::read_oci_dir(t / "dir", "v1");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->root_digest, o->root_digest);
    ASSERT_TRUE(oci::write_oci_archive(t / "o.tar", c, "v1"));
    auto from_archive = oci::read_oci_archive(t / "o.tar", "v1");
    ASSERT_TRUE(from_archive) << from_archive.error().message;
    EXPECT_EQ(from_archive->root_digest, o->root_digest);
    // A docker-archive has no media types: the image as it is.
    ASSERT_TRUE(oci::write_docker_archive(t / "d.tar", c));
    auto docker = oci::read_docker_archive(t / "d.tar");
    ASSERT_TRUE(docker) << docker.error().message;
    auto info = oci::image_info(*docker);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->config_digest, sha256_digest(docker_config("amd64")));

    // An image with OCI media types is written as it is.
    auto same = oci::with_oci_media_types(*o);
    ASSERT_TRUE(same);
    EXPECT_FALSE(same->has_value());
}

TEST(OciLayout, DockerManifestListIsWrittenAsAnOciIndex) {
    oci::Content c;
    const std::string amd = docker_manifest(c, docker_config("amd64"));
    const std::string arm = docker_manifest(c, docker_config("arm64", "v8"));
    const std::string list =
        R"({"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.list.)"
        R"(v2+json","manifests":[{"mediaType":"application/vnd.docker.distribution.manifest.)"
        R"(v2+json","digest":")" +
        amd + R"(","size":)" + std::to_string(c.blobs.at(amd).size()) +
        R"(,"platform":{"architecture":"amd64","os":"linux"}},{"mediaType":"application/vnd.)"
        R"(docker.distribution.manifest.v2+json","digest":")" +
        arm + R"(","size":)" + std::to_string(c.blobs.at(arm).size()) +
        R"(,"platform":{"architecture":"arm64","os":"linux","variant":"v8"}}]})";
    c.root_digest = put(c, list);
    c.root_media_type = std::string(oci::media::docker_manifest_list);
    // skopeo 1.9 puts the variant before os in the config (its OCI image-spec's field order).
    const std::string arm_config =
        R"({"created":"0001-01-01T00:00:00Z","architecture":"arm64","variant":"v8","os":"linux",)"
        R"("config":{"Labels":{"a":"b"}},"rootfs":{"type":"layers","diff_ids":[")" +
        std::string(diff_id) + R"("]},"history":[{"created":"0001-01-01T00:00:00Z"}]})";
    EXPECT_EQ(sha256_digest(arm_config),
              "sha256:f6b97e4743390142ae1b2f784023595924b50affbcb7eb2c218f6a9a62d9c5a8");
    EXPECT_EQ(sha256_digest(oci_manifest_of(arm_config)),
              "sha256:b4512227658c40ed422081b86dc84ab2562033e9ecb8048a9641c9efea9a5aca");
    const std::string index =
        R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json",)"
        R"("manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":)"
        R"("sha256:8db168d5abdd48dc7ebdcddf06e4ca8b90395f56055bdd29a5edc833f118038b","size":401,)"
        R"("platform":{"architecture":"amd64","os":"linux"}},{"mediaType":"application/vnd.oci.)"
        R"(image.manifest.v1+json","digest":"sha256:b4512227658c40ed422081b86dc84ab2562033e9ecb8)"
        R"(048a9641c9efea9a5aca","size":401,"platform":{"architecture":"arm64","os":"linux",)"
        R"("variant":"v8"}}]})";
    EXPECT_EQ(sha256_digest(index),
              "sha256:48e94cbf0f2023ff3130fa0725fe76dc5e6b9ce26c710e14f2b806bfee5944d4");
    auto converted = oci::with_oci_media_types(c);
    ASSERT_TRUE(converted) << converted.error().message;
    ASSERT_TRUE(converted->has_value());
    const oci::Content* o = &**converted;
    EXPECT_EQ(o->root_media_type, oci::media::oci_index);
    EXPECT_EQ(o->blobs.at(o->root_digest), index);
    EXPECT_EQ(o->blobs.at(sha256_digest(arm_config)), arm_config);
    // Read back, each platform's image is there.
    TempDir t;
    ASSERT_TRUE(oci::write_oci_dir(t / "dir", c, "v1"));
    auto back = oci::read_oci_dir(t / "dir", "v1");
    ASSERT_TRUE(back) << back.error().message;
    auto info = oci::image_info(*back, oci::Platform{"linux", "arm64", "v8"});
    ASSERT_TRUE(info) << info.error().message;
    EXPECT_EQ(info->config_digest, sha256_digest(arm_config));
    EXPECT_EQ(info->config.labels.at("a"), "b");
}

// The config is decoded as Go decodes it into the OCI image config (keys matched without regard
// to case, fields the OCI config does not have dropped, a null list item as "", empty fields
// left out, times written as Go writes them) and encoded again; skopeo 1.9.3 wrote exactly this
// for this config. A config it cannot decode is an error naming it.
TEST(OciLayout, DockerConfigIsDecodedAndEncodedAsSkopeoDoes) {
    const std::string given =
        R"({"Architecture":"amd64","os":"linux","variant":"v2","created":"2024-02-29T10:20:30.)"
        R"(1200+00:00","author":"a<b>&c","container_config":{"Hostname":"x"},"docker_version":)"
        R"("20","config":{"Hostname":"h","User":"","ExposedPorts":{"80/tcp":{},"443/tcp":{"x":)"
        R"(1}},"Env":["A=1",null],"Cmd":[],"Volumes":null,"Labels":{"z":"1","a":"\u2028"},)"
        R"("StopSignal":"SIGTERM","OnBuild":null},"rootfs":{"type":"layers","diff_ids":[")" +
        std::string(diff_id) +
        R"("]},"history":[{"created":"2024-01-01T00:00:00.000000000-05:30","created_by":"x",)"
        R"("empty_layer":true},{"comment":"c","empty_layer":false},null]})";
    const std::string want =
        R"({"created":"2024-02-29T10:20:30.12Z","author":"a\u003cb\u003e\u0026c","architecture":)"
        R"("amd64","variant":"v2","os":"linux","config":{"ExposedPorts":{"443/tcp":{},"80/tcp":)"
        R"({}},"Env":["A=1",""],"Labels":{"a":"\u2028","z":"1"},"StopSignal":"SIGTERM"},)"
        R"("rootfs":{"type":"layers","diff_ids":[")" +
        std::string(diff_id) +
        R"("]},"history":[{"created":"2024-01-01T00:00:00-05:30","created_by":"x",)"
        R"("empty_layer":true},{"comment":"c"},{}]})";
    EXPECT_EQ(sha256_digest(want),
              "sha256:d42dfef770109eb2b84dd4b9d387b70c5194e242219ab7547d2631deb16ce35f");
    oci::Content c;
    c.root_digest = docker_manifest(c, given);
    c.root_media_type = std::string(oci::media::docker_manifest);
    auto converted = oci::with_oci_media_types(c);
    ASSERT_TRUE(converted) << converted.error().message;
    ASSERT_TRUE(converted->has_value());
    const oci::Content* o = &**converted;
    auto m = oci::image_info(*o);
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(o->blobs.at(m->config_digest), want);
    EXPECT_EQ(o->root_digest,
              "sha256:59d7e20f31c77e3c95f3ca6395ed1e127258965b343b20745092faaad5993b0e");

    for (const char* bad :
         {R"({"created":"yesterday"})", R"({"created":"2024-02-30T00:00:00Z"})", R"({"os":1})",
          R"({"config":{"Env":"A=1"}})", R"({"history":[{"empty_layer":"yes"}]})", "[]"}) {
        oci::Content b;
        b.root_digest = docker_manifest(b, bad);
        b.root_media_type = std::string(oci::media::docker_manifest);
        auto r = oci::with_oci_media_types(b);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().code, ExitCode::invalid) << bad;
        EXPECT_TRUE(contains(r.error().message, "config " + sha256_digest(bad)))
            << r.error().message;
        TempDir t;
        EXPECT_FALSE(oci::write_oci_dir(t / "dir", b, "v1"));
        EXPECT_FALSE(fs::exists(t / "dir"));
    }
}

// --- interop with the containers tools ---

namespace {

bool have(const char* tool) {
    return fs::exists(std::string("/usr/bin/") + tool);
}

// skopeo with its state kept in the test's directory.
std::string skopeo(const TempDir& t) {
    fs::create_directories(t / "home");
    fs::create_directories(t / "run");
    return "env HOME=" + (t / "home").string() + " XDG_RUNTIME_DIR=" + (t / "run").string() +
           " XDG_CONFIG_HOME=" + (t / "home").string() + " TMPDIR=" + t.path().string() +
           " skopeo --insecure-policy";
}

} // namespace

TEST(OciLayoutInterop, SkopeoInspectsWhatKpkgWrites) {
    if (!have("skopeo")) GTEST_SKIP() << ::kpkg::test::missing_tool("skopeo");
    TempDir t;
    const oci::Content c = bundle_image("etcd");
    ASSERT_TRUE(oci::write_oci_dir(t / "dir", c, "v1"));
    ASSERT_TRUE(oci::write_oci_archive(t / "img.tar", c, "v1"));
    ASSERT_TRUE(oci::write_docker_archive(t / "docker.tar", c, "quay.io/o/etcd:v1"));
    for (const std::string& ref :
         {"oci:" + (t / "dir").string() + ":v1", "oci-archive:" + (t / "img.tar").string() + ":v1",
          "docker-archive:" + (t / "docker.tar").string()}) {
        auto r = run(skopeo(t) + " inspect " + ref);
        EXPECT_EQ(r.rc, 0) << ref << "\n" << r.out;
        EXPECT_TRUE(contains(r.out, std::string("\"") + package_label + "\": \"etcd\""))
            << ref << "\n"
            << r.out;
        if (ref.rfind("docker-archive:", 0) != 0) {
            EXPECT_TRUE(contains(r.out, "\"Digest\": \"" + c.root_digest + "\"")) << r.out;
        }
    }
}

TEST(OciLayoutInterop, KpkgReadsWhatSkopeoCopies) {
    if (!have("skopeo")) GTEST_SKIP() << ::kpkg::test::missing_tool("skopeo");
    TempDir t;
    const oci::Content c = multi_arch_image();
    ASSERT_TRUE(oci::write_oci_dir(t / "ours", c, "v1"));
    // All platforms, as they are.
    auto r = run(skopeo(t) + " copy --all oci:" + (t / "ours").string() +
                 ":v1 oci:" + (t / "theirs").string() + ":v2");
    ASSERT_EQ(r.rc, 0) << r.out;
    auto back = oci::read_oci_dir(t / "theirs", "v2");
    ASSERT_TRUE(back) << back.error().str();
    EXPECT_EQ(back->root_digest, c.root_digest);
    EXPECT_EQ(back->blobs, c.blobs);
    // One platform, to an oci-archive and to a docker-archive.
    r = run(skopeo(t) + " copy --override-arch arm64 oci:" + (t / "ours").string() +
            ":v1 oci-archive:" + (t / "a.tar").string() + ":v3");
    ASSERT_EQ(r.rc, 0) << r.out;
    auto arch = oci::read_oci_archive(t / "a.tar", "v3");
    ASSERT_TRUE(arch) << arch.error().str();
    auto info = oci::image_info(*arch);
    ASSERT_TRUE(info) << info.error().str();
    EXPECT_EQ(info->config.architecture, "arm64");
    r = run(skopeo(t) + " copy --override-arch amd64 oci:" + (t / "ours").string() +
            ":v1 docker-archive:" + (t / "d.tar").string() + ":quay.io/o/etcd:v1");
    ASSERT_EQ(r.rc, 0) << r.out;
    auto d = oci::read_docker_archive(t / "d.tar", "quay.io/o/etcd:v1");
    ASSERT_TRUE(d) << d.error().str();
    auto tree = oci::image_tree(*d);
    ASSERT_TRUE(tree) << tree.error().str();
    EXPECT_EQ(*oci::label(tree->info.config, package_label), "etcd");
    EXPECT_EQ(tree->tree->read("metadata/annotations.yaml")->text(),
              "annotations:\n  " + std::string(package_label) + ": etcd\n");
    // And kpkg adds to the layout skopeo wrote.
    ASSERT_TRUE(oci::write_oci_dir(t / "theirs", bundle_image("other"), "v9"));
    r = run(skopeo(t) + " inspect oci:" + (t / "theirs").string() + ":v9");
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "\"other\"")) << r.out;
}

TEST(OciLayoutInterop, UmociUnpacksWhatKpkgWrites) {
    if (!have("umoci")) GTEST_SKIP() << ::kpkg::test::missing_tool("umoci");
    TempDir t;
    ASSERT_TRUE(oci::write_oci_dir(t / "img", bundle_image("etcd"), "v1"));
    auto r = run("cd " + t.path().string() + " && umoci unpack --rootless --image img:v1 bundle");
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_EQ(kpkg::test::read_file(t / "bundle/rootfs/manifests/csv.yaml"),
              "kind: ClusterServiceVersion\n");
    EXPECT_TRUE(fs::exists(t / "bundle/rootfs/metadata/annotations.yaml"));
}

// Layers umoci writes (pax headers with times, symbolic links, whiteouts of deleted files) read
// back as the file system umoci had unpacked.
TEST(OciLayoutInterop, KpkgReadsLayersUmociWrites) {
    if (!have("umoci")) GTEST_SKIP() << ::kpkg::test::missing_tool("umoci");
    TempDir t;
    const std::string cd = "cd " + t.path().string() + " && ";
    auto r = run(
        cd + "umoci init --layout lay && umoci new --image lay:v1 && "
             "umoci unpack --rootless --image lay:v1 b && mkdir -p b/rootfs/etc b/rootfs/bin && "
             "echo hi > b/rootfs/etc/a && echo gone > b/rootfs/etc/gone && "
             "ln -s /etc/a b/rootfs/bin/abs && ln -s ../etc/a b/rootfs/bin/rel && "
             "umoci repack --image lay:v1 b && umoci unpack --rootless --image lay:v1 b2 && "
             "rm b2/rootfs/etc/gone && umoci repack --image lay:v1 b2");
    ASSERT_EQ(r.rc, 0) << r.out;
    auto c = oci::read_oci_dir(t / "lay", "v1");
    ASSERT_TRUE(c) << c.error().str();
    auto it = oci::image_tree(*c);
    ASSERT_TRUE(it) << it.error().str();
    EXPECT_EQ(it->info.manifest.layers.size(), 2u);
    EXPECT_EQ(listing(*it->tree), "/\nbin/\nbin/abs\nbin/rel\netc/\netc/a\n");
    EXPECT_EQ(it->tree->read("bin/abs")->text(), "hi\n");
    EXPECT_EQ(it->tree->read("bin/rel")->text(), "hi\n");
}

TEST(OciLayout, AssembleImageOnBaseAndIndex) {
    auto layer = oci::build_layer({{"configs/etcd/catalog.json", "{}", 0644, false}}).take();
    oci::ImageConfig cfg;
    cfg.architecture = "amd64";
    cfg.os = "linux";
    cfg.labels["operators.operatorframework.io.index.configs.v1"] = "/configs";
    const oci::Content a = oci::assemble_image(cfg, {layer});
    const oci::Content again = oci::assemble_image(cfg, {layer});
    EXPECT_EQ(a.root_digest, again.root_digest);
    ASSERT_TRUE(oci::verify(a));
    auto info = oci::image_info(a).take();
    EXPECT_EQ(info.config.diff_ids, std::vector<std::string>{layer.diff_id});
    EXPECT_EQ(info.manifest.layers[0].digest, layer.digest);

    // On a base with a history and fields kpkg does not know: kept, history extended.
    oci::ImageConfig base_cfg =
        oci::parse_config(R"({"architecture":"amd64","os":"linux","config":{"User":"1001",)"
                          R"("Entrypoint":["/bin/opm"]},"rootfs":{"type":"layers","diff_ids":[]},)"
                          R"("history":[{"created_by":"base"}]})",
                          "base")
            .take();
    auto base_layer = oci::build_layer({{"bin/opm", "ELF", 0755, false}}).take();
    const oci::Content base = oci::assemble_image(base_cfg, {base_layer});
    auto built = oci::assemble_on_base(base, {"linux", "amd64", ""},
                                       [](oci::ImageConfig& c) {
                                           c.cmd = {"serve", "/configs"};
                                       },
                                       {layer});
    ASSERT_TRUE(built) << built.error().str();
    auto tree = oci::image_tree(*built);
    ASSERT_TRUE(tree) << tree.error().str();
    EXPECT_EQ(listing(*tree->tree), "/\nbin/\nbin/opm\nconfigs/\nconfigs/etcd/\n"
                                    "configs/etcd/catalog.json\n");
    const std::string cj = built->blobs.at(tree->info.config_digest);
    EXPECT_TRUE(
        contains(cj, R"("User":"1001","Entrypoint":["/bin/opm"],"Cmd":["serve","/configs"])"))
        << cj;
    EXPECT_TRUE(contains(cj,
                         R"("history":[{"created_by":"base"},{"created":"1970-01-01T00:00:00Z",)"
                         R"("created_by":"kpkg build"}])"))
        << cj;
    EXPECT_EQ(tree->info.config.diff_ids,
              (std::vector<std::string>{base_layer.diff_id, layer.diff_id}));

    // An index of two platforms.
    cfg.architecture = "arm64";
    cfg.variant = "v8";
    const oci::Content b = oci::assemble_image(cfg, {layer});
    auto ix = oci::assemble_index({a, b});
    ASSERT_TRUE(ix) << ix.error().str();
    ASSERT_TRUE(oci::verify(*ix));
    auto arm = oci::image_info(*ix, {"linux", "arm64", ""});
    ASSERT_TRUE(arm) << arm.error().str();
    EXPECT_EQ(arm->manifest_digest, b.root_digest);
    auto dup = oci::assemble_index({a, again});
    ASSERT_FALSE(dup);
    EXPECT_TRUE(contains(dup.error().message, "a second image for linux/amd64"))
        << dup.error().message;
    // What skopeo makes of it.
    if (!have("skopeo")) GTEST_SKIP() << ::kpkg::test::missing_tool("skopeo");
    TempDir t;
    ASSERT_TRUE(oci::write_oci_dir(t / "ix", *ix, "v1"));
    auto r = run(skopeo(t) + " inspect --raw oci:" + (t / "ix").string() + ":v1");
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_EQ(r.out, ix->blobs.at(ix->root_digest));
    r = run(skopeo(t) + " --override-arch arm64 inspect oci:" + (t / "ix").string() + ":v1");
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "\"Architecture\": \"arm64\"")) << r.out;
}

TEST(OciLayout, ArchiveEntryClaimingMoreThanTheArchiveHolds) {
    using T = oci::TarEntry;
    std::string tar = oci::write_tar({{T::Type::file, "manifest.json", "[]", {}, 0644}});
    std::snprintf(tar.data() + 124, 12, "%011o", 100u << 20);
    std::memset(tar.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; ++i)
        sum += static_cast<unsigned char>(tar[i]);
    std::snprintf(tar.data() + 148, 8, "%06o", sum);
    TempDir t;
    t.write("d.tar", tar);
    auto r = oci::read_docker_archive(t / "d.tar");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(r.error().message, "manifest.json: truncated (its header says"))
        << r.error().message;
}

TEST(OciLayout, ReadArchiveTellsOciFromDocker) {
    TempDir t;
    const oci::Content c = bundle_image();
    ASSERT_TRUE(oci::write_oci_archive(t / "o.tar", c, "v1"));
    ASSERT_TRUE(oci::write_docker_archive(t / "d.tar", c, "quay.io/o/etcd:v1"));
    auto o = oci::read_archive(t / "o.tar", "v1");
    ASSERT_TRUE(o) << o.error().str();
    EXPECT_EQ(o->root_digest, c.root_digest);
    auto d = oci::read_archive(t / "d.tar", "quay.io/o/etcd:v1");
    ASSERT_TRUE(d) << d.error().str();
    EXPECT_EQ(oci::image_info(*d)->config_digest, oci::image_info(c)->config_digest);
    t.write("x.tar", oci::write_tar({{oci::TarEntry::Type::file, "a", "b", {}, 0644}}));
    auto x = oci::read_archive(t / "x.tar");
    ASSERT_FALSE(x);
    EXPECT_EQ(x.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(x.error().message, "neither an OCI archive")) << x.error().message;
}
