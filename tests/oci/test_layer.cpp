// Reproducible layers (kpkg/oci/layer.hpp): the tar entries and their order, the gzip header, the
// same bytes from every build, and a golden digest of a bundle's layer.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kpkg/core/digest.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/oci/layer.hpp"
#include "kpkg/oci/media_types.hpp"
#include "support/support.hpp"

using namespace kpkg;
using kpkg::test::contains;
using oci::TarEntry;

namespace {

std::vector<oci::LayerFile> sample() {
    return {
        {"metadata/annotations.yaml", "annotations: {}\n", 0644, false},
        {"manifests/b.yaml", "b: 1\n", 0644, false},
        {"manifests/a.yaml", "a: 1\n", 0600, false},
        {"manifests/sub-dir/c.yaml", "c\n", 0644, false},
        {"manifests/sub/d.yaml", "d\n", 0755, false},
    };
}

} // namespace

TEST(OciLayer, EntriesSortedWithParentsAndFixedOwnership) {
    auto l = oci::build_layer(sample());
    ASSERT_TRUE(l) << l.error().str();
    EXPECT_EQ(l->media_type, oci::media::oci_layer_gzip);
    auto hs = oci::read_tar_headers(l->blob, "layer");
    ASSERT_TRUE(hs) << hs.error().str();
    std::vector<std::string> names;
    for (const auto& h : *hs) {
        names.push_back(h.name);
        EXPECT_EQ(h.uid, 0);
        EXPECT_EQ(h.gid, 0);
        EXPECT_EQ(h.mtime, 0);
        EXPECT_EQ(h.uname, "");
        EXPECT_EQ(h.gname, "");
        EXPECT_FALSE(h.has_pax_times);
        if (h.type == TarEntry::Type::dir) {
            EXPECT_EQ(h.mode, 0755u) << h.name;
        }
    }
    // Path order: '/' sorts before '-', so "sub/" and its files come before "sub-dir/".
    const std::vector<std::string> want = {"manifests/",
                                           "manifests/a.yaml",
                                           "manifests/b.yaml",
                                           "manifests/sub/",
                                           "manifests/sub/d.yaml",
                                           "manifests/sub-dir/",
                                           "manifests/sub-dir/c.yaml",
                                           "metadata/",
                                           "metadata/annotations.yaml"};
    EXPECT_EQ(names, want);
    EXPECT_EQ((*hs)[1].mode, 0600u);
    EXPECT_EQ((*hs)[4].mode, 0755u);
    EXPECT_EQ((*hs)[2].size, 5);
}

TEST(OciLayer, SameFilesSameBytesWhateverTheInputOrder) {
    auto a = oci::build_layer(sample());
    auto files = sample();
    std::swap(files[0], files[3]);
    std::swap(files[1], files[4]);
    auto b = oci::build_layer(files);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->diff_id, b->diff_id);
    EXPECT_EQ(a->digest, b->digest);
    EXPECT_EQ(a->blob, b->blob);
    EXPECT_EQ(a->digest, sha256_digest(a->blob));
    EXPECT_EQ(a->size, static_cast<std::int64_t>(a->blob.size()));
    auto tar = oci::layer_tar(sample());
    ASSERT_TRUE(tar);
    EXPECT_EQ(a->diff_id, sha256_digest(*tar));
    // Blocks of 512 and two zero blocks at the end, nothing more.
    EXPECT_EQ(tar->size() % 512, 0u);
    EXPECT_EQ(tar->substr(tar->size() - 1024), std::string(1024, '\0'));
    EXPECT_NE(tar->substr(tar->size() - 1536, 512), std::string(512, '\0'));
}

TEST(OciLayer, GzipHeaderIsFixed) {
    auto gz = oci::gzip("hello, world\n");
    ASSERT_TRUE(gz) << gz.error().str();
    ASSERT_GE(gz->size(), 18u);
    const auto* b = reinterpret_cast<const unsigned char*>(gz->data());
    EXPECT_EQ(b[0], 0x1f);
    EXPECT_EQ(b[1], 0x8b);
    EXPECT_EQ(b[2], 8);                      // deflate
    EXPECT_EQ(b[3], 0);                      // no name, no comment, no extra field
    EXPECT_EQ(b[4] | b[5] | b[6] | b[7], 0); // mtime 0
    EXPECT_EQ(b[9], 3);                      // OS: Unix
    auto back = oci::decompress(*gz, 1 << 20, "x");
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, "hello, world\n");
    EXPECT_EQ(oci::detect_compression(*gz), oci::Compression::gzip);
}

TEST(OciLayer, LongNamesUsePaxPathOnly) {
    const std::string deep = std::string(120, 'd') + "/" + std::string(120, 'f');
    const std::string flat = std::string(180, 'x');
    auto l = oci::build_layer({{deep, "1", 0644, false}, {flat, "2", 0644, false}});
    ASSERT_TRUE(l) << l.error().str();
    auto hs = oci::read_tar_headers(l->blob, "layer");
    ASSERT_TRUE(hs) << hs.error().str();
    ASSERT_EQ(hs->size(), 3u);
    EXPECT_EQ((*hs)[0].name, std::string(120, 'd') + "/");
    EXPECT_EQ((*hs)[1].name, deep);
    EXPECT_EQ((*hs)[2].name, flat);
    for (const auto& h : *hs)
        EXPECT_FALSE(h.has_pax_times);
    TarEntry link{TarEntry::Type::symlink, "l", {}, std::string(150, 't'), 0777};
    auto hs2 = oci::read_tar_headers(oci::write_tar({link}), "t");
    ASSERT_TRUE(hs2);
    EXPECT_EQ((*hs2)[0].link, std::string(150, 't'));
}

TEST(OciLayer, BadPathsAreRefused) {
    for (const char* p : {"", "/abs", "a/../b", "a//b", "./a", "a/."}) {
        auto l = oci::layer_tar({{p, "x", 0644, false}});
        ASSERT_FALSE(l) << p;
        EXPECT_EQ(l.error().code, ExitCode::invalid);
    }
    auto twice = oci::layer_tar({{"a", "1", 0644, false}, {"a", "2", 0644, false}});
    ASSERT_FALSE(twice);
    EXPECT_TRUE(contains(twice.error().message, "given twice"));
    auto file_dir = oci::layer_tar({{"a", "1", 0644, false}, {"a/b", "2", 0644, false}});
    ASSERT_FALSE(file_dir);
    EXPECT_TRUE(contains(file_dir.error().message, "is a file"));
}

TEST(OciLayer, FilesOfATree) {
    io::MemoryTree t("bundle/");
    t.add_file("manifests/csv.yaml", "kind: x\n").add_file("metadata/annotations.yaml", "a\n");
    auto files = oci::layer_files(t);
    ASSERT_TRUE(files) << files.error().str();
    ASSERT_EQ(files->size(), 4u);
    EXPECT_EQ((*files)[0].path, "manifests");
    EXPECT_TRUE((*files)[0].is_dir);
    auto under = oci::layer_files(t, "configs/");
    ASSERT_TRUE(under);
    EXPECT_EQ((*under)[1].path, "configs/manifests/csv.yaml");
    t.add_link("manifests/l.yaml", "../../outside");
    auto bad = oci::layer_files(t);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(bad.error().str(), "manifests/l.yaml")) << bad.error().str();
}

// The layer of a bundle directory is pinned: a change to the tar or gzip writing shows here.
TEST(OciLayer, GoldenBundleLayer) {
    io::DirectoryTree tree(kpkg::test::testdata("bundles/valid-minimal"));
    auto files = oci::layer_files(tree);
    ASSERT_TRUE(files) << files.error().str();
    auto l = oci::build_layer(*files);
    ASSERT_TRUE(l) << l.error().str();
    EXPECT_EQ(l->diff_id,
              "sha256:85afccd34f22ae84c602b78188eaa32f52c145ed52935bffed437983b4c11ccf");
    EXPECT_EQ(l->digest, "sha256:b282b5c74660ad4ce3c68b9afaf00ea00624782d65b0681bbbbb6ab9b6346600");
    EXPECT_EQ(l->size, 1292);
}

// GNU tar and gzip read the layer without a complaint and list what was written.
TEST(OciLayer, GnuTarAndGzipReadIt) {
    if (!std::filesystem::exists("/bin/tar") || !std::filesystem::exists("/bin/gzip"))
        GTEST_SKIP() << ::kpkg::test::missing_tool(std::filesystem::exists("/bin/tar") ? "gzip"
                                                                                       : "tar");
    kpkg::test::TempDir dir;
    auto l = oci::build_layer(sample());
    ASSERT_TRUE(l);
    const auto path = dir.write("layer.tar.gz", l->blob);
    auto run = [](const std::string& cmd) {
        std::string out;
        FILE* p = popen((cmd + " 2>&1").c_str(), "r");
        char buf[4096];
        while (std::size_t n = fread(buf, 1, sizeof buf, p))
            out.append(buf, n);
        const int rc = pclose(p);
        return std::make_pair(rc, out);
    };
    auto [rc, out] = run("tar --numeric-owner -tvzf " + path.string());
    EXPECT_EQ(rc, 0) << out;
    EXPECT_TRUE(contains(out, "drwxr-xr-x 0/0               0 1970-01-01 00:00 manifests/")) << out;
    EXPECT_TRUE(contains(out, "-rw------- 0/0               5 1970-01-01 00:00 manifests/a.yaml"))
        << out;
    EXPECT_FALSE(contains(out, "warning")) << out;
    auto [rc2, out2] = run("gzip -tv " + path.string());
    EXPECT_EQ(rc2, 0) << out2;
    EXPECT_TRUE(contains(out2, "OK")) << out2;
}
