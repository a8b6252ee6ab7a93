// The paths commands are given: standard input named once, outputs never inside an input, and
// output files written through symbolic links.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

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

// ---- every command that writes: no output inside its input, no input inside its output ----

namespace {

// `kpkg plan vault` on the catalog at `cat` (both bundles from their directories) as a tree of
// manifests in `out`.
std::vector<std::string> plan_tree(const std::string& cat, const std::string& out) {
    auto bundle = [](const std::string& name) {
        return name + "=" + testdata("plan/bundles/" + name).string();
    };
    return {"plan",
            "vault",
            "--catalog",
            cat,
            "-n",
            "operators",
            "--bundle-dir",
            bundle("vault-operator.v1.2.0"),
            "--bundle-dir",
            bundle("etcdoperator.v0.9.4"),
            "--offline",
            "--output-dir",
            out,
            "--format",
            "manifests",
            "--target-namespaces",
            "operators"};
}

// A copy of the greeter package at d/pk.
std::string package_copy(const TempDir& d) {
    fs::copy(testdata("packages/greeter"), d / "pk", fs::copy_options::recursive);
    return (d / "pk").string();
}

std::vector<std::string> with_flag(std::vector<std::string> args, const std::string& flag) {
    args.push_back(flag);
    return args;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST(CliPaths, PlanTreeInsideItsCatalogIsRefused) {
    TempDir d;
    const std::string cat = sample_copy(d);
    const std::size_t before = entries(d / "cat");
    auto r = run_kpkg(plan_tree(cat, cat + "/gitops"));
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "--output-dir " + cat + "/gitops is inside --catalog " + cat)) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(d / "cat/gitops"));
    EXPECT_EQ(entries(d / "cat"), before);
    // The catalog still resolves; the tree beside it is written.
    auto resolve = run_kpkg({"resolve", "vault", "--catalog", cat});
    EXPECT_EQ(resolve.exit_code, 0) << resolve.err;
    auto beside = run_kpkg(plan_tree(cat, (d / "gitops").string()));
    EXPECT_EQ(beside.exit_code, 0) << beside.err;
    // --check writes nothing, but names the same tree: refused alike.
    auto check = run_kpkg(with_flag(plan_tree(cat, cat + "/gitops"), "--check"));
    EXPECT_EQ(check.exit_code, 2) << check.err;
}

TEST(CliPaths, PlanTreeHoldingAnInputIsRefused) {
    // The tree is replaced as a whole: a catalog, a bundle or --installed inside it would be
    // replaced with it.
    TempDir d;
    fs::create_directories(d / "gitops");
    fs::copy(testdata("catalog"), d / "gitops/cat", fs::copy_options::recursive);
    const std::string cat = (d / "gitops/cat").string();
    const std::size_t before = entries(d / "gitops");
    auto r = run_kpkg(with_flag(plan_tree(cat, (d / "gitops").string()), "--force"));
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "--output-dir " + (d / "gitops").string() + " holds --catalog " + cat))
        << r.err;
    EXPECT_EQ(entries(d / "gitops"), before);
    EXPECT_FALSE(fs::exists(d / "gitops/.kpkg-plan"));
    // Named with "..", or through a link to the directory: the same directory.
    fs::create_directory_symlink(d / "gitops", d / "link");
    auto linked = run_kpkg(with_flag(plan_tree(cat, (d / "link").string()), "--force"));
    EXPECT_EQ(linked.exit_code, 2) << linked.err;
    auto dotted = run_kpkg(with_flag(plan_tree(cat, (d / "gitops/cat/..").string()), "--force"));
    EXPECT_EQ(dotted.exit_code, 2) << dotted.err;
    EXPECT_FALSE(fs::exists(d / "gitops/.kpkg-plan"));
}

TEST(CliPaths, PackageRenderInsideThePackageIsRefused) {
    TempDir d;
    const std::string pk = package_copy(d);
    const std::size_t before = entries(d / "pk");
    auto r = run_kpkg({"package", "render", pk, "--namespace", "ns", "--output-dir", pk + "/out"});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "--output-dir " + pk + "/out is inside SRC " + pk)) << r.err;
    EXPECT_FALSE(fs::exists(d / "pk/out"));
    EXPECT_EQ(entries(d / "pk"), before);
    // A link beside the package that leads into it.
    fs::create_directory_symlink(d / "pk", d / "pklink");
    auto linked = run_kpkg({"package", "render", pk, "--namespace", "ns", "--output-dir",
                            (d / "pklink/new").string()});
    EXPECT_EQ(linked.exit_code, 2) << linked.err;
    // Inside the configuration file's directory is fine when that is not the package; the
    // configuration itself is not.
    d.write("cfg/config.yaml", "greeting: hi\n");
    auto over_config = run_kpkg({"package", "render", pk, "--namespace", "ns", "--config",
                                 (d / "cfg/config.yaml").string(), "--output-dir",
                                 (d / "cfg/config.yaml").string()});
    EXPECT_EQ(over_config.exit_code, 2) << over_config.err;
    EXPECT_TRUE(has(over_config.err, " is --config ")) << over_config.err;
    EXPECT_EQ(entries(d / "pk"), before);
    auto valid = run_kpkg({"package", "validate", pk});
    EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
    auto beside = run_kpkg(
        {"package", "render", pk, "--namespace", "ns", "--output-dir", (d / "out").string()});
    EXPECT_EQ(beside.exit_code, 0) << beside.err;
}

TEST(CliPaths, BuildSaveInsideTheBuiltDirectoryIsRefused) {
    TempDir d;
    const std::vector<std::string> env = {"KPKG_CACHE_DIR=" + (d / "cache").string()};
    const std::string pk = package_copy(d);
    const std::size_t before = entries(d / "pk");
    for (const std::string& dest : {"oci:" + pk + "/oci", "oci-archive:" + pk + "/image.tar",
                                    "docker-archive:" + pk + "/docker.tar", "oci:" + pk}) {
        auto r = run_kpkg({"build", pk, "--save", dest}, {}, env);
        EXPECT_EQ(r.exit_code, 2) << dest << "\n" << r.out << r.err;
        EXPECT_TRUE(has(r.err, "--save " + dest + " is")) << r.err;
        EXPECT_TRUE(has(r.err, "DIR " + pk)) << r.err;
        EXPECT_EQ(r.out, "");
    }
    EXPECT_EQ(entries(d / "pk"), before);
    // Beside it: two builds, one digest.
    auto a = run_kpkg({"build", pk, "--save", "oci:" + (d / "oci").string()}, {}, env);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    auto b = run_kpkg({"build", pk, "--save", "oci:" + (d / "oci").string()}, {}, env);
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(a.out, b.out);
    // A layout holding the package, and the base image as the destination.
    fs::copy(testdata("catalog"), d / "oci/catalog", fs::copy_options::recursive);
    auto holding = run_kpkg(
        {"build", (d / "oci/catalog").string(), "--save", "oci:" + (d / "oci").string()}, {}, env);
    EXPECT_EQ(holding.exit_code, 2) << holding.err;
    EXPECT_TRUE(has(holding.err, " holds DIR ")) << holding.err;
    auto base = run_kpkg({"build", testdata("catalog").string(), "--base-image",
                          "oci:" + (d / "oci").string(), "--save", "oci:" + (d / "oci").string()},
                         {}, env);
    EXPECT_EQ(base.exit_code, 2) << base.err;
    EXPECT_TRUE(has(base.err, " is --base-image oci:")) << base.err;
}

TEST(CliPaths, PullAndRepositoryIndexOutsideTheirImage) {
    TempDir d;
    const std::vector<std::string> env = {"KPKG_CACHE_DIR=" + (d / "cache").string()};
    const std::string pk = package_copy(d);
    const std::string layout = (d / "layout").string();
    ASSERT_EQ(run_kpkg({"build", pk, "--save", "oci:" + layout}, {}, env).exit_code, 0);
    const std::size_t before = entries(d / "layout");
    auto into = run_kpkg({"pull", "oci:" + layout, "--save", "oci:" + layout + "/copy"}, {}, env);
    EXPECT_EQ(into.exit_code, 2) << into.err;
    EXPECT_TRUE(has(into.err, "--save oci:" + layout + "/copy is inside IMAGE oci:" + layout))
        << into.err;
    auto same = run_kpkg({"pull", layout, "--save", "oci:" + layout}, {}, env);
    EXPECT_EQ(same.exit_code, 2) << same.err;
    auto index = run_kpkg({"package", "repo", "add", layout + "/index.yaml", "oci:" + layout,
                           "v1.0.0", "--image", "example.com/greeter"},
                          {}, env);
    EXPECT_EQ(index.exit_code, 2) << index.err;
    EXPECT_TRUE(has(index.err, "FILE " + layout + "/index.yaml is inside IMAGE")) << index.err;
    EXPECT_EQ(entries(d / "layout"), before);
    auto beside =
        run_kpkg({"pull", "oci:" + layout, "--save", "oci:" + (d / "copy").string()}, {}, env);
    EXPECT_EQ(beside.exit_code, 0) << beside.err;
}
