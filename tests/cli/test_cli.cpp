// End-to-end runs of the kpkg binary: global flags, exit codes, usage hints, catalog list.
#include <gtest/gtest.h>

#include "kpkg/io/load.hpp"
#include "support/support.hpp"

using kpkg::test::run_kpkg;
using kpkg::test::testdata;

namespace {

bool contains(const std::string& s, const std::string& what) {
    return s.find(what) != std::string::npos;
}

std::string catalog() {
    return testdata("catalog").string();
}

} // namespace

TEST(Cli, Version) {
    auto r = run_kpkg({"--version"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_TRUE(
        kpkg::test::read_file(kpkg::test::source_root() / "meson.build").find("version: '") !=
        std::string::npos);
    EXPECT_EQ(r.out.rfind("kpkg ", 0), 0u) << r.out;
    auto v = run_kpkg({"version"});
    EXPECT_EQ(v.exit_code, 0);
    EXPECT_EQ(v.out, r.out);
}

TEST(Cli, VersionJsonIsData) {
    auto r = run_kpkg({"version", "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto docs = kpkg::io::parse_json(r.out, "stdout");
    ASSERT_TRUE(docs.ok()) << docs.error().str();
    ASSERT_EQ(docs->size(), 1u);
    const auto& root = (*docs)[0].root;
    ASSERT_NE(root.get("version"), nullptr);
    ASSERT_NE(root.get("libraries"), nullptr);
    EXPECT_TRUE(root.get("libraries")->is_seq());
    // Global flags are accepted before the command too.
    auto y = run_kpkg({"-o", "yaml", "version"});
    ASSERT_EQ(y.exit_code, 0);
    EXPECT_TRUE(contains(y.out, "version: ")) << y.out;
}

TEST(Cli, HelpShowsTheCommandTree) {
    auto r = run_kpkg({"--help"});
    EXPECT_EQ(r.exit_code, 0);
    for (const char* w :
         {"catalog", "version", "--output", "--verbose", "--quiet", "--no-color", "Exit codes"})
        EXPECT_TRUE(contains(r.out, w)) << w << " missing from --help:\n" << r.out;
    EXPECT_FALSE(contains(r.out, "__spec"));
    auto sub = run_kpkg({"catalog", "list", "--help"});
    EXPECT_EQ(sub.exit_code, 0);
    for (const char* w : {"packages", "channels", "bundles"})
        EXPECT_TRUE(contains(sub.out, w));
}

TEST(Cli, UnknownCommandSuggestsClosest) {
    auto r = run_kpkg({"catlog", "list"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "unknown command \"catlog\"")) << r.err;
    EXPECT_TRUE(contains(r.err, "did you mean \"catalog\"?")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line expected:\n" << r.err;
    EXPECT_TRUE(r.out.empty());

    auto nested = run_kpkg({"catalog", "list", "bundels", catalog()});
    EXPECT_EQ(nested.exit_code, 2);
    EXPECT_TRUE(contains(nested.err, "did you mean \"bundles\"?")) << nested.err;
}

TEST(Cli, UnknownFlagSuggestsClosest) {
    auto r = run_kpkg({"version", "--librarys"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "unknown flag \"--librarys\"")) << r.err;
    EXPECT_TRUE(contains(r.err, "did you mean \"--libraries\"?")) << r.err;
    auto g = run_kpkg({"--verbos", "version"});
    EXPECT_EQ(g.exit_code, 2);
    EXPECT_TRUE(contains(g.err, "did you mean \"--verbose\"?")) << g.err;
}

TEST(Cli, UsageErrorsExit2) {
    EXPECT_EQ(run_kpkg({}).exit_code, 2);
    EXPECT_EQ(run_kpkg({"catalog"}).exit_code, 2);
    auto bad = run_kpkg({"-o", "xml", "version"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "xml")) << bad.err;
    auto missing = run_kpkg({"catalog", "list", "packages"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_TRUE(contains(missing.err, "SRC")) << missing.err;
}

TEST(Cli, NoColourWithoutTerminal) {
    auto r = run_kpkg({"catlog"});
    EXPECT_FALSE(contains(r.err, "\033[")) << r.err;
    auto n = run_kpkg({"catlog"}, {}, {"NO_COLOR=1"});
    EXPECT_FALSE(contains(n.err, "\033["));
}

TEST(Cli, VerboseAndQuietControlStderr) {
    auto v = run_kpkg({"-v", "catalog", "list", "packages", catalog()});
    ASSERT_EQ(v.exit_code, 0);
    EXPECT_TRUE(contains(v.err, "kpkg: debug: read ")) << v.err;
    EXPECT_TRUE(contains(v.err, "vault/catalog.yaml (8 documents)")) << v.err;
    auto plain = run_kpkg({"catalog", "list", "packages", catalog()});
    EXPECT_TRUE(plain.err.empty()) << plain.err;
    auto q = run_kpkg({"catalog", "list", "packages", catalog(), "-q", "-v"});
    EXPECT_TRUE(q.err.empty()) << q.err;
    EXPECT_EQ(q.out, plain.out);
}

TEST(CatalogList, Packages) {
    auto r = run_kpkg({"catalog", "list", "packages", catalog()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "NAME   DEFAULT CHANNEL  CHANNELS  BUNDLES  LATEST\n"
                     "etcd   stable           2         3        etcdoperator.v0.9.4\n"
                     "vault  stable           2         5        vault-operator.v1.2.0\n");
}

TEST(CatalogList, Channels) {
    auto r = run_kpkg({"catalog", "list", "channels", catalog(), "vault"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "PACKAGE  CHANNEL  HEAD                        ENTRIES\n"
                     "vault    fast     vault-operator.v1.3.0-rc.1  4\n"
                     "vault    stable   vault-operator.v1.2.0       3\n");
}

TEST(CatalogList, BundlesAsJson) {
    auto r = run_kpkg({"-o", "json", "catalog", "list", "bundles", catalog(), "vault"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto docs = kpkg::io::parse_json(r.out, "stdout");
    ASSERT_TRUE(docs.ok()) << docs.error().str();
    const auto& rows = (*docs)[0].root;
    ASSERT_TRUE(rows.is_seq());
    ASSERT_EQ(rows.items.size(), 7u);
    const auto& first = rows.items[0]; // sorted by package, channel, name
    EXPECT_EQ(first.get("channel")->text, "fast");
    EXPECT_EQ(first.get("name")->text, "vault-operator.v1.1.0");
    const auto& rc = rows.items[3];
    EXPECT_EQ(rc.get("name")->text, "vault-operator.v1.3.0-rc.1");
    EXPECT_EQ(rc.get("version")->text, "1.3.0-rc.1");
    EXPECT_EQ(rc.get("skipRange")->text, ">=1.1.0 <1.3.0-rc.1");
    ASSERT_EQ(rc.get("skips")->items.size(), 1u);
    EXPECT_EQ(rc.get("skips")->items[0].text, "vault-operator.v1.1.1");
}

TEST(CatalogList, FromStdin) {
    std::string json = kpkg::test::read_file(testdata("catalog/etcd/catalog.json"));
    auto r = run_kpkg({"catalog", "list", "channels", "-"}, json);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "etcd     stable   etcdoperator.v0.9.4")) << r.out;
}

TEST(CatalogList, UnknownPackageSuggests) {
    auto r = run_kpkg({"catalog", "list", "bundles", catalog(), "valt"});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "package \"valt\" is not in the catalog")) << r.err;
    EXPECT_TRUE(contains(r.err, "did you mean \"vault\"?")) << r.err;
}

TEST(CatalogList, BadInputNamesFileAndPosition) {
    kpkg::test::TempDir d;
    d.write("cat/a.yaml",
            "schema: olm.package\nname: a\n---\nschema: olm.channel\nentries: {x: 1}\n");
    auto r = run_kpkg({"catalog", "list", "packages", (d / "cat").string()});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "a.yaml:5:10")) << r.err;
    EXPECT_TRUE(contains(r.err, "\"entries\" must be a list")) << r.err;
    EXPECT_TRUE(r.out.empty());

    d.write("broken/b.json", "{\"schema\": \"olm.package\",\n \"name\": }\n");
    auto j = run_kpkg({"catalog", "list", "packages", (d / "broken").string()});
    EXPECT_EQ(j.exit_code, 3);
    EXPECT_TRUE(contains(j.err, "b.json:2:10")) << j.err;

    d.write("noschema/c.yaml", "name: x\n");
    auto s = run_kpkg({"catalog", "list", "packages", (d / "noschema").string()});
    EXPECT_EQ(s.exit_code, 3);
    EXPECT_TRUE(contains(s.err, "c.yaml:1:1")) << s.err;
    EXPECT_TRUE(contains(s.err, "no \"schema\"")) << s.err;

    d.write("garbage/bin", std::string("\x7f"
                                       "ELF\x01\x02\x00\xff\xfe",
                                       9));
    auto g = run_kpkg({"catalog", "list", "packages", (d / "garbage").string()});
    EXPECT_EQ(g.exit_code, 3) << g.err;
    EXPECT_TRUE(contains(g.err, "bin")) << g.err;
}

TEST(CatalogList, MissingSourceIsAnIoError) {
    auto r = run_kpkg({"catalog", "list", "packages", "/nonexistent/kpkg-catalog"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "/nonexistent/kpkg-catalog")) << r.err;
}
