// The files a catalog directory is read from: symbolic links leaving the catalog are refused (their
// target must not end up in a rendered catalog), links inside it are read, and a directory the
// walk cannot open stops the load (and nothing is cached) instead of dropping what comes after it.
#include <gtest/gtest.h>

#include <unistd.h>

#include "kpkg/catalog/load.hpp"
#include "support/support.hpp"
#include "support/unprivileged.hpp"

using namespace kpkg;
using test::contains;
using test::run_kpkg;
using test::testdata;
namespace fs = std::filesystem;

namespace {

constexpr const char* secret_yaml = "schema: olm.package\nname: topsecrettoken\n";

// d/c: the etcd and vault test catalogs in two subdirectories; d/outside/: a secret.
struct Fixture {
    test::TempDir d;
    fs::path c;
    fs::path secret;
    Fixture() {
        c = d / "c";
        fs::create_directories(c / "a");
        fs::create_directories(c / "b");
        fs::copy(testdata("catalog/etcd/catalog.json"), c / "a/etcd.json");
        fs::copy(testdata("catalog/vault/catalog.yaml"), c / "b/vault.yaml");
        secret = d.write("outside/secret.yaml", secret_yaml);
    }
    std::string dir() const { return c.string(); }
};

void expect_refused(const Fixture& f, const fs::path& link) {
    SCOPED_TRACE(link.string());
    auto l = catalog::load_catalog(f.c);
    ASSERT_FALSE(l.ok());
    EXPECT_EQ(l.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(l.error().str(), link.string())) << l.error().str();
    EXPECT_TRUE(contains(l.error().str(), "outside the catalog directory")) << l.error().str();
    for (const char* cmd : {"render", "validate"}) {
        auto r = run_kpkg({"catalog", cmd, f.dir()});
        EXPECT_EQ(r.exit_code, 3) << cmd << "\n" << r.out << r.err;
        EXPECT_TRUE(contains(r.err, link.string())) << r.err;
        EXPECT_FALSE(contains(r.out + r.err, "topsecrettoken")) << r.out;
    }
}

TEST(CatalogLinks, AbsoluteLinkToAFileOutsideIsRefused) {
    Fixture f;
    fs::create_symlink(f.secret, f.c / "b/zz.yaml");
    expect_refused(f, f.c / "b/zz.yaml");
}

TEST(CatalogLinks, RelativeLinkLeavingTheCatalogIsRefused) {
    Fixture f;
    fs::create_symlink("../../outside/secret.yaml", f.c / "b/zz.yaml");
    expect_refused(f, f.c / "b/zz.yaml");
}

TEST(CatalogLinks, LinkToADirectoryOutsideIsRefused) {
    Fixture f;
    fs::create_directory_symlink(f.d / "outside", f.c / "more");
    expect_refused(f, f.c / "more");
}

TEST(CatalogLinks, IndexignoreLinkLeavingTheCatalogIsRefused) {
    Fixture f;
    fs::create_symlink(f.secret, f.c / ".indexignore");
    expect_refused(f, f.c / ".indexignore");
}

TEST(CatalogLinks, LinksExcludedByIndexignoreAreNotLookedAt) {
    // opm never looks at an ignored entry: an ignored link (leaving the catalog, to a directory,
    // dangling) is not read and not an error.
    Fixture f;
    auto plain = run_kpkg({"catalog", "render", f.dir()});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    fs::create_symlink(f.secret, f.c / "b/zz.yaml");
    fs::create_directory_symlink(f.d / "outside", f.c / "b/more");
    fs::create_directory_symlink(f.c / "a", f.c / "b/again");
    fs::create_symlink("gone.yaml", f.c / "b/gone.yaml");
    f.d.write("c/b/.indexignore", "zz.yaml\nmore\nagain\ngone.yaml\n");
    for (const char* cmd : {"render", "validate"}) {
        auto r = run_kpkg({"catalog", cmd, f.dir()});
        EXPECT_EQ(r.exit_code, 0) << cmd << "\n" << r.err;
        EXPECT_FALSE(contains(r.out + r.err, "topsecrettoken"));
    }
    EXPECT_EQ(run_kpkg({"catalog", "render", f.dir()}).out, plain.out);
    // Not ignored any more: the first in path order is reported.
    f.d.write("c/b/.indexignore", "more\n");
    auto r = run_kpkg({"catalog", "render", f.dir()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, (f.c / "b/again").string() + ": it is a symbolic link to a "
                                                             "directory"))
        << r.err;
}

TEST(CatalogLinks, LinksInsideTheCatalogAreRead) {
    Fixture f;
    auto plain = run_kpkg({"catalog", "render", f.dir()});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    // vault.yaml kept in a directory the walk ignores, linked from b/ (relative and absolute).
    fs::create_directories(f.c / "store");
    fs::rename(f.c / "b/vault.yaml", f.c / "store/vault.yaml");
    f.d.write("c/.indexignore", "store/\n");
    fs::create_symlink("../store/vault.yaml", f.c / "b/vault.yaml");
    auto r = run_kpkg({"catalog", "render", f.dir()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, plain.out);
    fs::remove(f.c / "b/vault.yaml");
    fs::create_symlink(fs::absolute(f.c / "store/vault.yaml"), f.c / "b/vault.yaml");
    r = run_kpkg({"catalog", "render", f.dir()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, plain.out);
    // The catalog given through a link to it: links are judged against where it really is.
    fs::create_directory_symlink(f.c, f.d / "via-link");
    r = run_kpkg({"catalog", "render", (f.d / "via-link").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, plain.out);
}

TEST(CatalogLinks, DanglingLinkAndLoopAreIoErrors) {
    Fixture f;
    fs::create_symlink("gone.yaml", f.c / "b/zz.yaml");
    auto r = run_kpkg({"catalog", "render", f.dir()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, (f.c / "b/zz.yaml").string())) << r.err;
    fs::remove(f.c / "b/zz.yaml");
    fs::create_symlink("zz2.yaml", f.c / "b/zz.yaml");
    fs::create_symlink("zz.yaml", f.c / "b/zz2.yaml");
    r = run_kpkg({"catalog", "validate", f.dir()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "too many levels of symbolic links")) << r.err;
}

// ---- a directory that cannot be read ----------------------------------------------------------

// d/c with c/b unreadable, and d itself open to nobody (the tests may run as root).
struct Unreadable : Fixture {
    Unreadable() {
        // More entries after the unreadable one, whatever order the directory lists them in.
        for (const char* sub : {"c", "d", "e"}) {
            fs::create_directories(this->c / sub);
            fs::copy(testdata("catalog/etcd/catalog.json"), this->c / sub / "etcd.json");
        }
        fs::permissions(d.path(), fs::perms::owner_all | fs::perms::others_exec);
        fs::permissions(c / "b", fs::perms::none);
    }
    ~Unreadable() { fs::permissions(c / "b", fs::perms::owner_all); }
};

TEST(CatalogUnreadable, SubdirectoryIsAnIoErrorNamingIt) {
    Unreadable f;
    // Root reads every directory, so as root the load runs in a child as user nobody.
    auto got = test::run_unprivileged([&] {
        auto l = catalog::load_catalog(f.c);
        if (l.ok()) return std::string("loaded");
        return std::to_string(static_cast<int>(l.error().code)) + " " + l.error().str();
    });
    ASSERT_TRUE(got.has_value()) << "cannot run the load as user nobody";
    EXPECT_EQ(got->substr(0, got->find(' ')), std::to_string(static_cast<int>(ExitCode::error)))
        << *got;
    EXPECT_TRUE(contains(*got, (f.c / "b").string())) << *got;
    EXPECT_TRUE(contains(*got, "permission denied")) << *got;
}

TEST(CatalogUnreadable, SubdirectoryStopsRenderValidateAndTheCache) {
    Unreadable f;
    test::TempDir cache;
    fs::permissions(cache.path(), fs::perms::all);
    const std::vector<std::string> env = {"KPKG_NO_CACHE=",
                                          "KPKG_CACHE_DIR=" + cache.path().string()};
    auto run = [&](const std::vector<std::string>& args) {
        if (::geteuid() != 0) return run_kpkg(args, {}, env);
        auto r = test::run_kpkg_unprivileged(args, env);
        return r ? *r : test::RunResult{};
    };
    for (int round = 0; round < 2; ++round) { // the second run must not find a cached catalog
        for (const char* cmd : {"render", "validate"}) {
            SCOPED_TRACE(std::string(cmd) + " round " + std::to_string(round));
            auto r = run({"catalog", cmd, f.dir()});
            ASSERT_NE(r.exit_code, 126) << "cannot switch to user nobody";
            EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
            EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 300);
            EXPECT_TRUE(contains(r.err, (f.c / "b").string())) << r.err;
            EXPECT_TRUE(contains(r.err, "permission denied")) << r.err;
        }
    }
    std::size_t cached = 0;
    for (auto it = fs::recursive_directory_iterator(cache.path());
         it != fs::recursive_directory_iterator(); ++it)
        cached += it->is_regular_file() ? 1 : 0;
    EXPECT_EQ(cached, 0u) << "a catalog was cached";
}

} // namespace
