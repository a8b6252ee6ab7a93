// The paths commands are given: standard input named once, outputs never inside an input, and
// output files written through symbolic links.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

#include "support/support.hpp"

using kpkg::test::read_file;
using kpkg::test::run_kpkg;
using kpkg::test::TempDir;
using kpkg::test::testdata;
namespace fs = std::filesystem;

namespace {

// A copy of the sample catalog at d/cat.
std::string sample_copy(const TempDir& d) {
    fs::copy(testdata("catalog"), d / "cat", fs::copy_options::recursive);
    return (d / "cat").string();
}

std::size_t entries(const fs::path& dir) {
    std::size_t n = 0;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
         ++it)
        ++n;
    return n;
}

} // namespace

TEST(CliPaths, StandardInputCanBeNamedOnce) {
    const std::string yaml = read_file(testdata("catalog/vault/catalog.yaml"));
    auto diff = run_kpkg({"catalog", "diff", "-", "-"}, yaml);
    EXPECT_EQ(diff.exit_code, 2) << diff.out << diff.err;
    EXPECT_NE(diff.err.find("standard input is named by OLD and NEW"), std::string::npos)
        << diff.err;
    EXPECT_EQ(diff.out, "");
    auto dev = run_kpkg({"catalog", "diff", "-", "/dev/stdin"}, yaml);
    EXPECT_EQ(dev.exit_code, 2) << dev.err;
    auto render = run_kpkg({"catalog", "render", "-", testdata("catalog").string(), "-"}, yaml);
    EXPECT_EQ(render.exit_code, 2) << render.err;
    EXPECT_NE(render.err.find("standard input is named twice by SRC"), std::string::npos)
        << render.err;
    EXPECT_EQ(render.out, "");
    auto resolve = run_kpkg({"resolve", "vault", "--catalog", "-", "--catalog", "b=-"}, yaml);
    EXPECT_EQ(resolve.exit_code, 2) << resolve.err;
    auto installed = run_kpkg({"resolve", "vault", "--catalog", "-", "--installed", "-"}, yaml);
    EXPECT_EQ(installed.exit_code, 2) << installed.err;
    EXPECT_NE(installed.err.find("by --catalog and --installed"), std::string::npos)
        << installed.err;
    auto path = run_kpkg(
        {"upgrade-path", "vault", "--from", "1.0.0", "--catalog", "-", "--catalog", "other=-"},
        yaml);
    EXPECT_EQ(path.exit_code, 2) << path.err;
    // Once is fine.
    auto once = run_kpkg({"catalog", "diff", "-", testdata("catalog").string()}, yaml);
    EXPECT_EQ(once.exit_code, 0) << once.err;
}

TEST(CliPaths, AnOutputInsideAnInputIsRefused) {
    TempDir d;
    const std::string src = sample_copy(d);
    const std::size_t before = entries(d / "cat");
    const std::string vault = src + "/vault/catalog.yaml";
    const std::string original = read_file(vault);

    auto inside = run_kpkg({"catalog", "render", src, "--output-file", src + "/x.json"});
    EXPECT_EQ(inside.exit_code, 2) << inside.err;
    EXPECT_NE(inside.err.find("--output-file " + src + "/x.json is inside SRC " + src),
              std::string::npos)
        << inside.err;
    auto same = run_kpkg({"catalog", "render", vault, "--output-file", vault});
    EXPECT_EQ(same.exit_code, 2) << same.err;
    EXPECT_NE(same.err.find(" is SRC "), std::string::npos) << same.err;
    // Through another spelling and through a symbolic link.
    auto dotted =
        run_kpkg({"catalog", "render", src, "--output-file", src + "/../cat/etcd/../out.json"});
    EXPECT_EQ(dotted.exit_code, 2) << dotted.err;
    fs::create_symlink(vault, d / "link.yaml");
    auto linked = run_kpkg({"catalog", "render", src, "--output-file", (d / "link.yaml").string()});
    EXPECT_EQ(linked.exit_code, 2) << linked.err;
    fs::create_symlink(src + "/new.json", d / "dangling.json");
    auto dangling =
        run_kpkg({"catalog", "render", src, "--output-file", (d / "dangling.json").string()});
    EXPECT_EQ(dangling.exit_code, 2) << dangling.err;
    fs::create_symlink(src, d / "catlink");
    auto dirlink =
        run_kpkg({"catalog", "render", src, "--output-file", (d / "catlink/new.json").string()});
    EXPECT_EQ(dirlink.exit_code, 2) << dirlink.err;

    auto lock = run_kpkg({"resolve", "vault", "--catalog", src, "--lockfile", src + "/lock.yaml"});
    EXPECT_EQ(lock.exit_code, 2) << lock.err;
    EXPECT_NE(lock.err.find("--lockfile"), std::string::npos) << lock.err;
    d.write("installed.yaml", "[]\n");
    auto over_installed =
        run_kpkg({"resolve", "vault", "--catalog", src, "--installed",
                  (d / "installed.yaml").string(), "--lockfile", (d / "installed.yaml").string()});
    EXPECT_EQ(over_installed.exit_code, 2) << over_installed.err;
    EXPECT_EQ(read_file(d / "installed.yaml"), "[]\n");
    auto testcase =
        run_kpkg({"resolve", "vault", "--catalog", src, "--debug-testcase", src + "/tc"});
    EXPECT_EQ(testcase.exit_code, 2) << testcase.err;

    // Nothing was written into the catalog, which still reads as before.
    EXPECT_EQ(entries(d / "cat"), before);
    EXPECT_EQ(read_file(vault), original);
    // Beside it is fine.
    auto beside = run_kpkg({"catalog", "render", src, "--output-file", (d / "out.json").string()});
    EXPECT_EQ(beside.exit_code, 0) << beside.err;
    auto lock_beside =
        run_kpkg({"resolve", "vault", "--catalog", src, "--lockfile", (d / "lock.yaml").string()});
    EXPECT_EQ(lock_beside.exit_code, 0) << lock_beside.err;
}

TEST(CliPaths, OutputFilesAreWrittenThroughLinksAndKeepTheirMode) {
    TempDir d;
    const std::string src = sample_copy(d);
    d.write("real/out.json", "old");
    ASSERT_EQ(::chmod((d / "real/out.json").c_str(), 0600), 0);
    fs::create_symlink(d / "real/out.json", d / "out.json");
    auto r = run_kpkg({"catalog", "render", src, "--output-file", (d / "out.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(d / "out.json"));
    EXPECT_NE(read_file(d / "real/out.json").find("\"schema\": \"olm.package\""),
              std::string::npos);
    struct stat st {};
    ASSERT_EQ(::stat((d / "real/out.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    // The lockfile alike.
    d.write("real/lock.yaml", "old");
    fs::create_symlink(d / "real/lock.yaml", d / "lock.yaml");
    auto l =
        run_kpkg({"resolve", "vault", "--catalog", src, "--lockfile", (d / "lock.yaml").string()});
    ASSERT_EQ(l.exit_code, 0) << l.err;
    EXPECT_TRUE(fs::is_symlink(d / "lock.yaml"));
    EXPECT_NE(read_file(d / "real/lock.yaml"), "old");
}
