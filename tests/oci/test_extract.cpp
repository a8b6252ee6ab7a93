// Applying layers (kpkg/oci/extract.hpp): changesets, whiteouts, and one test per hostile case,
// each tar built here entry by entry.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kpkg/core/digest.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/oci/extract.hpp"
#include "kpkg/oci/layer.hpp"
#include "support/support.hpp"

using namespace kpkg;
using kpkg::test::contains;
using oci::TarEntry;
using T = TarEntry::Type;

namespace {

TarEntry file(std::string name, std::string data, std::uint32_t mode = 0644) {
    return {T::file, std::move(name), std::move(data), {}, mode};
}
TarEntry dir(std::string name) {
    return {T::dir, std::move(name), {}, {}, 0755};
}
TarEntry slink(std::string name, std::string target) {
    return {T::symlink, std::move(name), {}, std::move(target), 0777};
}
TarEntry hlink(std::string name, std::string target) {
    return {T::hardlink, std::move(name), {}, std::move(target), 0644};
}

std::string layer(const std::vector<TarEntry>& es) {
    return oci::write_tar(es);
}

Result<std::string> apply(oci::Rootfs& fs, const std::vector<TarEntry>& es,
                          const oci::ExtractLimits& limits = {}) {
    return oci::apply_layer(fs, layer(es), "sha256:test", limits);
}

std::string kinds(const oci::Rootfs& fs) {
    std::string s;
    for (const auto& [p, n] : fs.nodes()) {
        s += p;
        s += n.kind == oci::Rootfs::Node::Kind::dir    ? "/"
             : n.kind == oci::Rootfs::Node::Kind::link ? " -> " + n.data
                                                       : "=" + n.data;
        s += "\n";
    }
    return s;
}

// The error of applying `es` to fs, checked to be exit 3 naming the layer and `entry`, and to
// leave fs unchanged.
std::string refused(oci::Rootfs& fs, const std::vector<TarEntry>& es, const std::string& entry,
                    const oci::ExtractLimits& limits = {}) {
    const std::string before = kinds(fs);
    auto r = apply(fs, es, limits);
    EXPECT_FALSE(r) << entry;
    if (r) return {};
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(r.error().message, "layer sha256:test")) << r.error().message;
    if (!entry.empty()) {
        EXPECT_TRUE(contains(r.error().message, "\"" + entry + "\"")) << r.error().message;
    }
    EXPECT_EQ(kinds(fs), before) << "a refused layer changed the file system";
    return r.error().message;
}

} // namespace

TEST(OciExtract, AppliesFilesDirsLinksAndReturnsDiffId) {
    oci::Rootfs fs;
    const std::vector<TarEntry> es = {dir("./"),
                                      dir("./etc/"),
                                      file("./etc/a", "A"),
                                      file("/abs/b", "B"),
                                      slink("bin/l", "../etc/a"),
                                      slink("bin/abs", "/etc/a"),
                                      hlink("etc/h", "./etc/a")};
    auto id = apply(fs, es);
    ASSERT_TRUE(id) << id.error().str();
    EXPECT_EQ(*id, sha256_digest(layer(es)));
    EXPECT_EQ(kinds(fs), "abs/\nabs/b=B\nbin/\nbin/abs -> ../etc/a\nbin/l -> ../etc/a\netc/\n"
                         "etc/a=A\netc/h=A\n");
    auto tree = fs.to_tree("img");
    auto c = tree->read("bin/abs");
    ASSERT_TRUE(c) << c.error().str();
    EXPECT_EQ(c->text(), "A");
    EXPECT_EQ(fs.entries(), es.size());
}

TEST(OciExtract, CompressedLayersByMagic) {
    oci::Rootfs fs;
    auto gz = oci::gzip(layer({file("a", "1")}));
    ASSERT_TRUE(gz);
    auto id = oci::apply_layer(fs, *gz, "sha256:gz");
    ASSERT_TRUE(id) << id.error().str();
    EXPECT_EQ(*id, sha256_digest(layer({file("a", "1")})));
    if (!std::filesystem::exists("/usr/bin/zstd"))
        GTEST_SKIP() << ::kpkg::test::missing_tool("zstd");
    kpkg::test::TempDir t;
    const auto tar = t.write("l.tar", layer({file("b", "2")}));
    ASSERT_EQ(std::system(("zstd -q " + tar.string() + " -o " + tar.string() + ".zst").c_str()), 0);
    const std::string zst = kpkg::test::read_file(tar.string() + ".zst");
    EXPECT_EQ(oci::detect_compression(zst), oci::Compression::zstd);
    auto id2 = oci::apply_layer(fs, zst, "sha256:zst");
    ASSERT_TRUE(id2) << id2.error().str();
    EXPECT_EQ(kinds(fs), "a=1\nb=2\n");
    // A truncated zstd stream.
    auto bad = oci::apply_layer(fs, zst.substr(0, zst.size() / 2), "sha256:zst");
    ASSERT_FALSE(bad);
    EXPECT_TRUE(contains(bad.error().message, "layer sha256:zst")) << bad.error().message;
}

TEST(OciExtract, LaterLayersReplaceAndWhiteoutsDelete) {
    oci::Rootfs fs;
    ASSERT_TRUE(apply(fs, {file("a/x", "1"), file("a/y", "2"), file("b/z", "3"), file("c", "4"),
                           dir("d/"), file("d/e", "5")}));
    // Whiteouts apply to lower layers only, wherever they are in the tar: a/.wh.x after a/x of
    // the same layer does not remove it.
    ASSERT_TRUE(apply(fs, {file("a/x", "new"), file("a/.wh.y", ""), file("b/.wh..wh..opq", ""),
                           file("b/w", "6"), file(".wh.c", ""), file("d", "file now"),
                           file("a/.wh..wh.plnk", "")}));
    EXPECT_EQ(kinds(fs), "a/\na/x=new\nb/\nb/w=6\nd=file now\n");
    // A directory over a file replaces it; a directory over a directory keeps its content.
    ASSERT_TRUE(apply(fs, {dir("d/"), dir("a/")}));
    EXPECT_EQ(kinds(fs), "a/\na/x=new\nb/\nb/w=6\nd/\n");
    // A whiteout of a directory removes everything below it.
    ASSERT_TRUE(apply(fs, {file(".wh.a", "")}));
    EXPECT_EQ(kinds(fs), "b/\nb/w=6\nd/\n");
    // An opaque root-level marker in a subdirectory only empties that directory.
    ASSERT_TRUE(apply(fs, {file("b/.wh..wh..opq", "")}));
    EXPECT_EQ(kinds(fs), "b/\nd/\n");
}

TEST(OciExtract, DotDotComponentsAreRefused) {
    oci::Rootfs fs;
    refused(fs, {file("../evil", "x")}, "../evil");
    refused(fs, {file("a/../../evil", "x")}, "a/../../evil");
    refused(fs, {file("a/..", "x")}, "a/..");
}

TEST(OciExtract, LeadingSlashIsStrippedAsContainerToolsDo) {
    oci::Rootfs fs;
    ASSERT_TRUE(apply(fs, {file("/etc/passwd", "root"), file("//x", "y")}));
    EXPECT_EQ(kinds(fs), "etc/\netc/passwd=root\nx=y\n");
}

TEST(OciExtract, SymlinksLeavingTheRootAreRefused) {
    oci::Rootfs fs;
    refused(fs, {slink("a/l", "../../etc/passwd")}, "a/l");
    refused(fs, {slink("l", "..")}, "l");
    refused(fs, {slink("l", "/../x")}, "l");
    refused(fs, {slink("l", "")}, "l");
    // Inside is fine, even when it climbs and comes back.
    ASSERT_TRUE(apply(fs, {slink("a/b/l", "../../a/x"), slink("top", "/")}));
    EXPECT_EQ(kinds(fs), "a/\na/b/\na/b/l -> ../../a/x\ntop -> .\n");
}

TEST(OciExtract, WritingThroughALinkIsRefused) {
    oci::Rootfs fs;
    ASSERT_TRUE(apply(fs, {slink("a", "/etc"), file("f", "1")}));
    auto msg = refused(fs, {file("a/passwd", "x")}, "a/passwd");
    EXPECT_TRUE(contains(msg, "symbolic link")) << msg;
    // In the same layer, and below a file.
    refused(fs, {slink("b", "."), file("b/x", "1")}, "b/x");
    refused(fs, {file("f/x", "1")}, "f/x");
    refused(fs, {file("a/.wh.x", "")}, "a/.wh.x");
}

TEST(OciExtract, HardLinksLeavingTheRootOrToNothingAreRefused) {
    oci::Rootfs fs;
    refused(fs, {hlink("h", "../etc/passwd")}, "h");
    refused(fs, {hlink("h", "/")}, "h");
    auto msg = refused(fs, {hlink("h", "missing")}, "h");
    // Refused after whiteouts and other entries were applied: all of it is rolled back.
    ASSERT_TRUE(apply(fs, {file("keep/x", "1"), file("keep/y", "2")}));
    refused(fs, {file(".wh.keep", ""), file("keep/z", "3"), dir("new/"), hlink("h", "missing")},
            "h");
    refused(fs, {file("keep/.wh..wh..opq", ""), file("keep/x", "changed"), hlink("h", "nope")},
            "h");
    EXPECT_EQ(kinds(fs), "keep/\nkeep/x=1\nkeep/y=2\n");
    ASSERT_TRUE(apply(fs, {file(".wh.keep", "")}));
    EXPECT_TRUE(contains(msg, "has not")) << msg;
    ASSERT_TRUE(apply(fs, {dir("d/"), slink("d/l", "../t"), file("t", "T")}));
    refused(fs, {hlink("h", "d")}, "h");
    // A hard link to a link keeps pointing at the same file from its new place.
    ASSERT_TRUE(apply(fs, {hlink("x/y/h", "d/l")}));
    auto tree = fs.to_tree("img");
    auto c = tree->read("x/y/h");
    ASSERT_TRUE(c) << c.error().str();
    EXPECT_EQ(c->text(), "T");
}

TEST(OciExtract, DevicesFifosAreRefused) {
    oci::Rootfs fs;
    refused(fs, {{T::char_device, "dev/null", {}, {}, 0666}}, "dev/null");
    refused(fs, {{T::block_device, "dev/sda", {}, {}, 0660}}, "dev/sda");
    auto msg = refused(fs, {{T::fifo, "p", {}, {}, 0644}}, "p");
    EXPECT_TRUE(contains(msg, "FIFO")) << msg;
}

TEST(OciExtract, WhiteoutsNamingOutsideAreRefused) {
    oci::Rootfs fs;
    ASSERT_TRUE(apply(fs, {file("a/x", "1")}));
    refused(fs, {file("a/.wh..", "")}, "a/.wh..");
    refused(fs, {file("a/.wh...", "")}, "a/.wh...");
    refused(fs, {file(".wh.", "")}, ".wh.");
    refused(fs, {file("a/.wh.x/../../y", "")}, "a/.wh.x/../../y");
}

TEST(OciExtract, Limits) {
    oci::Rootfs fs;
    oci::ExtractLimits small;
    small.max_file_bytes = 10;
    auto msg = refused(fs, {file("big", std::string(11, 'x'))}, "big", small);
    EXPECT_TRUE(contains(msg, "limit")) << msg;
    ASSERT_TRUE(apply(fs, {file("ok", std::string(10, 'x'))}, small));

    oci::ExtractLimits few;
    few.max_entries = 3;
    oci::Rootfs fs2;
    ASSERT_TRUE(apply(fs2, {file("a", ""), file("b", "")}, few));
    msg = refused(fs2, {file("c", ""), file("d", "")}, "", few);
    EXPECT_TRUE(contains(msg, "more than 3 entries")) << msg;

    oci::ExtractLimits total;
    total.max_total_bytes = 4096;
    oci::Rootfs fs3;
    ASSERT_TRUE(apply(fs3, {file("a", "1")}, total)); // 2048 bytes of tar
    msg = refused(fs3, {file("b", "2"), file("c", "3")}, "", total);
    EXPECT_TRUE(contains(msg, "limit")) << msg;
    // Compressed: a small blob that expands beyond the limit.
    auto gz = oci::gzip(layer({file("z", std::string(100000, '\0'))}));
    ASSERT_TRUE(gz);
    auto r = oci::apply_layer(fs3, *gz, "sha256:bomb", total);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "layer sha256:bomb")) << r.error().message;

    oci::ExtractLimits path;
    path.max_path = 20;
    refused(fs3, {file(std::string(30, 'p'), "")}, "", path);
}

TEST(OciExtract, TruncatedOrCorruptDataIsRefused) {
    const std::string tar = layer({file("a", std::string(3000, 'a')), file("b", "b")});
    auto gz = oci::gzip(tar);
    ASSERT_TRUE(gz);
    oci::Rootfs fs;
    ASSERT_TRUE(apply(fs, {file("keep", "1")}));
    const std::string before = kinds(fs);
    struct Case {
        std::string name, blob;
    };
    std::string flipped = *gz;
    flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x55);
    std::string bad_header = tar;
    bad_header[148] = 'x'; // checksum
    // A header claiming 100 MB of data in a 2 KB tar.
    std::string claims = layer({file("big", "x")});
    std::snprintf(claims.data() + 124, 12, "%011o", 100u << 20);
    claims[135] = '\0';
    unsigned sum = 0;
    std::memset(claims.data() + 148, ' ', 8);
    for (int i = 0; i < 512; ++i)
        sum += static_cast<unsigned char>(claims[i]);
    std::snprintf(claims.data() + 148, 8, "%06o", sum);
    {
        // Refused from its header, before 100 MB are allocated for it.
        auto r = oci::apply_layer(fs, claims, "sha256:bad");
        ASSERT_FALSE(r);
        EXPECT_TRUE(contains(r.error().message, "more than the whole layer holds"))
            << r.error().message;
    }
    const std::vector<Case> cases = {
        {"size beyond the data", claims},
        {"truncated gzip", gz->substr(0, gz->size() / 2)},
        {"gzip without its trailer", gz->substr(0, gz->size() - 4)},
        {"corrupt gzip", flipped},
        {"truncated tar", tar.substr(0, 1200)},
        {"bad checksum", bad_header},
        {"not a tar", std::string(2048, 'x')},
        {"empty", ""},
    };
    for (const auto& c : cases) {
        auto r = oci::apply_layer(fs, c.blob, "sha256:bad");
        EXPECT_FALSE(r) << c.name;
        if (r) continue;
        EXPECT_EQ(r.error().code, ExitCode::invalid) << c.name;
        EXPECT_TRUE(contains(r.error().message, "layer sha256:bad")) << r.error().message;
        EXPECT_EQ(kinds(fs), before) << c.name;
    }
}

// Damaged layers (every byte of a tar's headers in turn, and bytes of its gzip form) fail cleanly
// or apply: never a crash (the sanitizer build runs this too), never a half-applied layer.
TEST(OciExtract, DamagedLayersNeverHalfApply) {
    const std::string tar = layer({dir("d/"), file("d/a", "alpha"), slink("d/l", "a"),
                                   hlink("d/h", "d/a"), file("d/.wh.x", ""), file("b", "beta")});
    auto gz = oci::gzip(tar);
    ASSERT_TRUE(gz);
    std::uint32_t seed = 12345;
    auto next = [&seed] {
        seed = seed * 1103515245u + 12345u;
        return (seed >> 16) & 0x7fff;
    };
    int failed = 0, applied = 0;
    auto check = [&](const std::string& blob) {
        oci::Rootfs fs;
        ASSERT_TRUE(apply(fs, {file("keep", "1"), file("x", "2")}));
        const std::string before = kinds(fs);
        auto r = oci::apply_layer(fs, blob, "sha256:damaged");
        if (r) {
            ++applied;
            return;
        }
        ++failed;
        EXPECT_EQ(kinds(fs), before);
    };
    for (std::size_t i = 0; i < 512 * 6 && i < tar.size(); i += 7) {
        std::string t = tar;
        t[i] = static_cast<char>(t[i] ^ (1 + next() % 255));
        check(t);
    }
    for (int k = 0; k < 200; ++k) {
        std::string g = *gz;
        g[10 + next() % (g.size() - 10)] = static_cast<char>(next());
        check(g);
    }
    EXPECT_GT(failed, 0);
    EXPECT_GT(applied, 0);
}
