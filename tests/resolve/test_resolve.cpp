// kpkg::resolve: request parsing, OLM.md's worked example, the sample catalog, upgrades,
// explanations, and every kind of bad input.
#include <gtest/gtest.h>

#include <unistd.h>

#include "kpkg/io/emit.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"
#include "world.hpp"

using namespace kpkg;
using kpkg::test::Cat;
using kpkg::test::explain;
using kpkg::test::installed;
using kpkg::test::Opts;
using kpkg::test::pick;
using kpkg::test::picks;
using kpkg::test::testdata;
using kpkg::test::World;

namespace {
using Strings = std::vector<std::string>;

void load_sample(World& w) {
    w.store.push_back(catalog::load_catalog(testdata("catalog")).take());
    w.catalogs.push_back({"catalog", &w.store.back(), 0});
}
} // namespace

TEST(ResolveRequest, Subscription) {
    auto s = resolve::parse_subscription("foo:beta@>=1.0.0 <2.0.0").take();
    EXPECT_EQ(s.package, "foo");
    EXPECT_EQ(s.channel, "beta");
    EXPECT_EQ(s.range_text, ">=1.0.0 <2.0.0");
    ASSERT_TRUE(s.range);
    EXPECT_TRUE(s.range->contains(semver::Version::parse("1.5.0").take()));
    auto t = resolve::parse_subscription("bar").take();
    EXPECT_TRUE(t.channel.empty());
    EXPECT_FALSE(t.range);
    auto bad = resolve::parse_subscription("foo@>=x.y");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ExitCode::invalid);
    EXPECT_NE(bad.error().message.find("the range \">=x.y\" does not parse"), std::string::npos)
        << bad.error().message;
    EXPECT_EQ(resolve::parse_subscription(":beta").error().code, ExitCode::invalid);
    EXPECT_EQ(resolve::parse_subscription("foo:").error().code, ExitCode::invalid);
    EXPECT_EQ(resolve::parse_subscription("foo@").error().code, ExitCode::invalid);
    EXPECT_EQ(resolve::parse_subscription("a b").error().code, ExitCode::invalid);
}

TEST(ResolveRequest, SubscriptionWithCatalog) {
    auto s = resolve::parse_subscription("foo:beta@>=1.0.0 <2.0.0/ops").take();
    EXPECT_EQ(s.package, "foo");
    EXPECT_EQ(s.channel, "beta");
    EXPECT_EQ(s.range_text, ">=1.0.0 <2.0.0");
    EXPECT_EQ(s.source, "ops");
    EXPECT_EQ(s.spec, "foo:beta@>=1.0.0 <2.0.0/ops");
    auto t = resolve::parse_subscription("foo/ops").take();
    EXPECT_EQ(t.package, "foo");
    EXPECT_EQ(t.source, "ops");
    EXPECT_TRUE(t.channel.empty());
    auto empty = resolve::parse_subscription("foo/");
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.error().code, ExitCode::invalid);
    EXPECT_EQ(empty.error().message, "request \"foo/\": the catalog after '/' is empty");
    EXPECT_EQ(resolve::parse_subscription("/ops").error().code, ExitCode::invalid);
    EXPECT_EQ(resolve::parse_subscription("a/b/ops").error().code, ExitCode::invalid);
    // --source: for the requests that name no catalog, and written into their spec.
    auto u = resolve::parse_subscription("bar").take();
    resolve::default_source(u, "ops");
    EXPECT_EQ(u.source, "ops");
    EXPECT_EQ(u.spec, "bar/ops");
    resolve::default_source(t, "other");
    EXPECT_EQ(t.source, "ops");
    EXPECT_EQ(t.spec, "foo/ops");
}

TEST(ResolveRequest, CatalogSpecAndPriority) {
    auto [n1, p1] = resolve::parse_catalog_spec("ops=/x/y").take();
    EXPECT_EQ(n1, "ops");
    EXPECT_EQ(p1, "/x/y");
    auto [n2, p2] = resolve::parse_catalog_spec(testdata("catalog").string() + "/").take();
    EXPECT_EQ(n2, "catalog");
    auto [n3, p3] = resolve::parse_catalog_spec("/tmp/index.yaml").take();
    EXPECT_EQ(n3, "index");
    EXPECT_EQ(resolve::parse_catalog_spec("-").take().first, "stdin");
    EXPECT_EQ(resolve::parse_catalog_spec("=x").error().code, ExitCode::usage);
    EXPECT_EQ(resolve::parse_catalog_spec("a=").error().code, ExitCode::usage);
    EXPECT_EQ(resolve::parse_priority("a=-5").take(), std::make_pair(std::string("a"), -5));
    EXPECT_EQ(resolve::parse_priority("a=x").error().code, ExitCode::usage);
    EXPECT_EQ(resolve::parse_priority("a").error().code, ExitCode::usage);
}

TEST(ResolveRequest, CheckCatalogs) {
    World w;
    load_sample(w);
    std::vector<resolve::CatalogSource> two{w.catalogs[0], w.catalogs[0]};
    EXPECT_EQ(resolve::check_catalogs(two).error().code, ExitCode::usage);
    auto bad_prio = resolve::check_catalogs(w.catalogs, {{"catalgo", 3}});
    ASSERT_FALSE(bad_prio.ok());
    EXPECT_EQ(bad_prio.error().code, ExitCode::usage);
    EXPECT_NE(bad_prio.error().message.find("the nearest is \"catalog\""), std::string::npos);
    ASSERT_TRUE(resolve::check_catalogs(w.catalogs, {{"catalog", 3}}).ok());
    EXPECT_EQ(w.catalogs[0].priority, 3);

    World empty;
    empty.add("empty", Cat{});
    auto e = resolve::check_catalogs(empty.catalogs);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code, ExitCode::invalid);
    EXPECT_NE(e.error().message.find("catalog \"empty\" is empty"), std::string::npos);

    World broken;
    broken.add("broken", Cat{"---\nschema: olm.channel\npackage: [x\n"});
    auto b = resolve::check_catalogs(broken.catalogs);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.error().code, ExitCode::invalid);
    EXPECT_NE(b.error().str().find("catalog.yaml:"), std::string::npos) << b.error().str();
}

TEST(ResolveRequest, InstalledFile) {
    test::TempDir dir;
    auto good = dir.write("ok.yaml", "installed:\n"
                                     "  - package: etcd\n"
                                     "    name: etcdoperator.v0.9.2\n"
                                     "    version: 0.9.2\n"
                                     "    catalog: catalog\n"
                                     "    channel: stable\n");
    auto list = resolve::load_installed(good).take();
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0].name, "etcdoperator.v0.9.2");
    EXPECT_EQ(list[0].channel, "stable");
    EXPECT_EQ(list[0].pos.line, 2u);

    auto expect_error = [&](const std::string& content, const std::string& what,
                            const std::string& where) {
        auto p = dir.write("bad.yaml", content);
        auto r = resolve::load_installed(p);
        ASSERT_FALSE(r.ok()) << content;
        EXPECT_EQ(r.error().code, ExitCode::invalid);
        EXPECT_NE(r.error().message.find(what), std::string::npos) << r.error().message;
        EXPECT_EQ(r.error().pos.str(), p.string() + where) << r.error().str();
    };
    expect_error("- a\n", "must be a mapping", ":1:1");
    expect_error("installed: {}\n", "must be a list", ":1:12");
    expect_error("installed:\n  - package: a\n    name: a.v1\n", "\"version\" is missing", ":2:5");
    expect_error("installed:\n  - package: a\n    name: a.v1\n    version: v1\n", "a leading 'v'",
                 ":4:14");
    expect_error("installed:\n  - package: a\n    nmae: a.v1\n", "unknown field \"nmae\"", ":3:5");
    expect_error("installed:\n  - package: [a]\n", "package must be a string", ":2:14");
    expect_error("installed:\n  - {package: a, name: x, version: 1.0.0}\n"
                 "  - {package: a, name: y, version: 2.0.0}\n",
                 "installed twice", ":3:5");
    expect_error("installed: [\n", "unclosed '['", ":2:1");
    // Hostile input: deep nesting is refused with a position, not a crash.
    auto deep = dir.write("deep.yaml", "installed: " + std::string(5000, '[') + "\n");
    auto d = resolve::load_installed(deep);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code, ExitCode::invalid);
    EXPECT_EQ(d.error().pos.file, deep.string());
    auto json = dir.write("deep.json", "{\"installed\": " + std::string(5000, '[') + "}");
    EXPECT_EQ(resolve::load_installed(json).error().code, ExitCode::invalid);
    auto empty = dir.write("empty.yaml", "");
    EXPECT_EQ(resolve::load_installed(empty).error().code, ExitCode::invalid);
    EXPECT_EQ(resolve::load_installed(dir / "missing.yaml").error().code, ExitCode::error);
}

// The list read through a single-file tree: standard input (a pipe here) is named <stdin>, a
// directory is refused as a file would be.
TEST(ResolveRequest, InstalledFromStandardInputAndTrees) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const std::string yaml = "installed:\n  - package: etcd\n    name: etcdoperator.v0.9.2\n"
                             "    version: 0.9.2\n    nmae: x\n";
    ASSERT_EQ(::write(fds[1], yaml.data(), yaml.size()), static_cast<ssize_t>(yaml.size()));
    ::close(fds[1]);
    auto r = resolve::load_installed(io::StdinTree(fds[0]));
    ::close(fds[0]);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().pos.str(), "<stdin>:5:5") << r.error().str();
    test::TempDir dir;
    std::filesystem::create_directories(dir / "d");
    auto d = resolve::load_installed(io::DirectoryTree(dir / "d"));
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code, ExitCode::error);
    EXPECT_EQ(d.error().message, "cannot read \"" + (dir / "d").string() + "\": it is a directory");
    EXPECT_EQ(resolve::load_installed(dir / "d").error().message, d.error().message);
}

// OLM.md's worked example, as OLM's own resolver answers it.
TEST(Resolve, WorkedExampleRegistryActionIndex) {
    KPKG_REQUIRE_CORPUS(corpus);
    World w;
    w.store.push_back(
        catalog::load_catalog(corpus / "olm/fbc/registry-action-index-latest").take());
    w.catalogs.push_back({"index", &w.store.back(), 0});
    auto bar = w.run({"bar"}).take();
    ASSERT_TRUE(bar.satisfiable) << explain(bar);
    EXPECT_EQ(picks(bar), Strings{"bar.v1.0.0"});
    auto baz = w.run({"baz"}).take();
    ASSERT_TRUE(baz.satisfiable) << explain(baz);
    EXPECT_EQ(picks(baz), Strings{"baz.v1.1.0"});

    auto foo = w.run({"foo"}).take();
    ASSERT_FALSE(foo.satisfiable);
    std::string t = explain(foo);
    EXPECT_NE(t.find("request foo cannot be satisfied"), std::string::npos) << t;
    EXPECT_NE(t.find("foo.v0.3.1 (foo 0.3.1, channel beta, catalog index) requires package bar "
                     "in range <0.2.0, but nothing offers it"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("bar.v0.1.0 (bar 0.1.0, catalog index) satisfies it but is skipped in "
                     "channel alpha (bar.v0.2.0 skips it)"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("foo.v0.2.0 (foo 0.2.0, channel beta, catalog index) requires package bar "
                     "in range <0.1.0, but nothing offers it"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("no bundle of package bar has a version in range <0.1.0 (versions: 1.0.0, "
                     "0.2.0, 0.1.0)"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("foo.v0.3.0 is skipped in channel beta (foo.v0.3.1 skips it)"),
              std::string::npos)
        << t;
    // The candidates in OLM's order: foo.v0.3.1, foo.v0.2.0, foo.v0.1.0.
    EXPECT_LT(t.find("foo.v0.3.1 (foo"), t.find("foo.v0.2.0 (foo"));
    EXPECT_LT(t.find("foo.v0.2.0 (foo"), t.find("foo.v0.1.0 (foo"));
    EXPECT_EQ(t.find("rule"), std::string::npos) << t;
}

TEST(Resolve, SampleCatalog) {
    World w;
    load_sample(w);
    auto r = w.run({"vault"}).take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    ASSERT_EQ(r.selected.size(), 2u);
    const auto& etcd = r.selected[0];
    const auto& vault = r.selected[1];
    EXPECT_EQ(vault.bundle, "vault-operator.v1.2.0");
    EXPECT_EQ(vault.channel, "stable");
    EXPECT_EQ(vault.reason, "requested");
    EXPECT_EQ(vault.image, "quay.io/example/vault-operator-bundle:v1.2.0");
    EXPECT_EQ(etcd.bundle, "etcdoperator.v0.9.4");
    EXPECT_EQ(etcd.channel, "stable");
    EXPECT_EQ(etcd.catalog, "catalog");
    EXPECT_EQ(etcd.reason, "required by vault-operator.v1.2.0 for API "
                           "etcd.database.coreos.com/v1beta2 EtcdBackup");
    auto fast = w.run({"vault:fast"}).take();
    EXPECT_EQ(pick(fast, "vault"), "vault-operator.v1.3.0-rc.1");
    auto ranged = w.run({"vault@<1.2.0"}).take();
    EXPECT_EQ(pick(ranged, "vault"), "vault-operator.v1.1.0");
    EXPECT_EQ(pick(ranged, "etcd"), "etcdoperator.v0.9.4");
    auto etcd_old = w.run({"vault@<1.2.0", "etcd@<0.9.4"}).take();
    ASSERT_TRUE(etcd_old.satisfiable) << explain(etcd_old);
    EXPECT_EQ(pick(etcd_old, "etcd"), "etcdoperator.v0.9.2");
    EXPECT_EQ(etcd_old.selected[0].reason, "requested");
}

TEST(Resolve, ResultsDoNotDependOnOrder) {
    World w;
    load_sample(w);
    auto a = w.run({"vault", "etcd@<0.9.4"});
    auto b = w.run({"etcd@<0.9.4", "vault"});
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(resolve::resolution_text(*a), resolve::resolution_text(*b));
    // The same catalog with its files and blobs in the other order.
    Cat c = Cat{}
                .package("a", "s")
                .channel("a", "s", {"a.v1", "a.v2<a.v1"})
                .bundle("a", "a.v1", "1.0.0", {"req:g/v/K"})
                .bundle("a", "a.v2", "2.0.0", {"req:g/v/K"})
                .package("p", "s")
                .channel("p", "s", {"p.v1"})
                .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/K"})
                .package("q", "s")
                .channel("q", "s", {"q.v1"})
                .bundle("q", "q.v1", "1.0.0", {"gvk:g/v/K"});
    Cat reversed = Cat{}
                       .bundle("q", "q.v1", "1.0.0", {"gvk:g/v/K"})
                       .channel("q", "s", {"q.v1"})
                       .package("q", "s")
                       .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/K"})
                       .channel("p", "s", {"p.v1"})
                       .package("p", "s")
                       .bundle("a", "a.v2", "2.0.0", {"req:g/v/K"})
                       .bundle("a", "a.v1", "1.0.0", {"req:g/v/K"})
                       .channel("a", "s", {"a.v2<a.v1", "a.v1"})
                       .package("a", "s");
    World w1, w2;
    w1.add("cat", c);
    w2.add("cat", reversed);
    auto r1 = w1.run({"a"}).take();
    auto r2 = w2.run({"a"}).take();
    EXPECT_EQ(picks(r1), (Strings{"a.v2", "p.v1"}));
    EXPECT_EQ(resolve::resolution_text(r1), resolve::resolution_text(r2));
}

TEST(Resolve, UpgradesStepThroughHops) {
    World w;
    w.add("ops", Cat{}
                     .package("a", "stable")
                     .channel("a", "stable", {"a.v1", "a.v2<a.v1", "a.v3<a.v2", "a.v4<a.v3"})
                     .bundle("a", "a.v1", "1.0.0")
                     .bundle("a", "a.v2", "2.0.0")
                     .bundle("a", "a.v3", "3.0.0")
                     .bundle("a", "a.v4", "4.0.0"));
    std::vector<resolve::Installed> inst{installed("a", "a.v1", "1.0.0", "ops", "stable")};
    auto hop = w.run({}, inst, Opts().upgrade().one_hop()).take();
    EXPECT_EQ(picks(hop), Strings{"a.v2"});
    EXPECT_EQ(hop.selected[0].replaces, "a.v1");
    EXPECT_EQ(hop.selected[0].path, Strings{"a.v2"});
    auto all = w.run({}, inst, Opts().upgrade()).take();
    EXPECT_EQ(picks(all), Strings{"a.v4"});
    EXPECT_EQ(all.selected[0].path, (Strings{"a.v2", "a.v3", "a.v4"}));
    EXPECT_EQ(all.selected[0].reason, "upgrade of installed a.v1");
    // Without --upgrade nothing moves; a request for the package upgrades it.
    auto none = w.run({"b"}, inst);
    EXPECT_FALSE(none.ok()); // b is unknown
    auto req = w.run({"a"}, inst).take();
    EXPECT_EQ(picks(req), Strings{"a.v4"});
    EXPECT_EQ(req.selected[0].reason, "upgrade of installed a.v1 (requested)");
    // Nothing to do.
    EXPECT_EQ(w.run({}, inst, {}).error().code, ExitCode::usage);
}

TEST(Resolve, UpgradeEdgesSkipsAndSkipRange) {
    World w;
    load_sample(w);
    // stable: v1.2.0 replaces v1.1.0 and its skipRange covers 1.0.0: one hop to the head.
    auto r = w.run({},
                   {installed("vault", "vault-operator.v1.0.0", "1.0.0", "catalog", "stable"),
                    installed("etcd", "etcdoperator.v0.9.4", "0.9.4", "catalog")},
                   Opts().upgrade().one_hop())
                 .take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_EQ(picks(r), Strings{"vault-operator.v1.2.0"});
    EXPECT_EQ(r.unchanged, Strings{"etcdoperator.v0.9.4"});
    // A version nothing replaces and no skipRange covers stays, with the reasons explained when
    // it is asked to move into a range it cannot reach.
    World x;
    x.add("ops", Cat{}
                     .package("a", "s")
                     .channel("a", "s", {"a.v1", "a.v2<a.v1", "a.v3<a.v2~>=2.0.0 <3.0.0"})
                     .bundle("a", "a.v1", "1.0.0")
                     .bundle("a", "a.v2", "2.0.0")
                     .bundle("a", "a.v3", "3.0.0"));
    auto stuck = x.run({"a@>=3.0.0"}, {installed("a", "a.v1", "1.0.0", "ops")}).take();
    ASSERT_FALSE(stuck.satisfiable);
    std::string t = explain(stuck);
    EXPECT_NE(t.find("the subscription to a (installed a.v1) has no candidate"), std::string::npos)
        << t;
}

TEST(Resolve, DependencyCyclesAreFine) {
    World w;
    w.add("ops", Cat{}
                     .package("a", "s")
                     .channel("a", "s", {"a.v1"})
                     .bundle("a", "a.v1", "1.0.0", {"gvk:g/v/A", "req:g/v/B"})
                     .package("b", "s")
                     .channel("b", "s", {"b.v1"})
                     .bundle("b", "b.v1", "1.0.0", {"gvk:g/v/B", "req:g/v/A"}));
    auto r = w.run({"a"}).take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_EQ(picks(r), (Strings{"a.v1", "b.v1"}));
}

TEST(Resolve, FewestExtraBundles) {
    // a needs API X and package q. p provides X and is preferred for it (default channel, name
    // order), but q provides X too, so taking p would add a bundle and break API uniqueness.
    World w;
    w.add("ops", Cat{}
                     .package("a", "s")
                     .channel("a", "s", {"a.v1"})
                     .bundle("a", "a.v1", "1.0.0", {"req:g/v/X", "pkg:q:>=1.0.0"})
                     .package("p", "s")
                     .channel("p", "s", {"p.v1"})
                     .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/X"})
                     .package("q", "s")
                     .channel("q", "s", {"q.v1"})
                     .bundle("q", "q.v1", "1.0.0", {"gvk:g/v/X"}));
    auto r = w.run({"a"}).take();
    EXPECT_EQ(picks(r), (Strings{"a.v1", "q.v1"}));
    // A requirement already met by a chosen bundle adds nothing.
    World v;
    v.add("ops", Cat{}
                     .package("a", "s")
                     .channel("a", "s", {"a.v1"})
                     .bundle("a", "a.v1", "1.0.0", {"pkg:q:>=1.0.0", "req:g/v/X"})
                     .package("p", "s")
                     .channel("p", "s", {"p.v1"})
                     .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/X"})
                     .package("q", "s")
                     .channel("q", "s", {"q.v1"})
                     .bundle("q", "q.v1", "1.0.0", {"gvk:g/v/X"}));
    EXPECT_EQ(picks(v.run({"a"}).take()), (Strings{"a.v1", "q.v1"}));
}

// kpkg first looks at a few candidates of each requirement and widens the search only when
// they cannot make a solution: the answer must be the same as over all candidates.
TEST(Resolve, SolutionOnlyFarDownACandidateList) {
    Cat c;
    c.package("a", "s")
        .channel("a", "s", {"a.v1"})
        .bundle("a", "a.v1", "1.0.0", {"req:g/v/X", "gvk:g/v/Z"});
    // Twenty providers of X, all preferred to the last one (names sort before "p99").
    for (int i = 10; i < 30; ++i) {
        std::string p = std::to_string(i);
        p.insert(p.begin(), 'p');
        c.package(p, "s").channel(p, "s", {p + ".v1"});
        c.bundle(p, p + ".v1", "1.0.0", {"gvk:g/v/X", "req:g/v/Y"});
    }
    // Each needs Y, whose only provider conflicts with a over Z.
    c.package("q", "s")
        .channel("q", "s", {"q.v1"})
        .bundle("q", "q.v1", "1.0.0", {"gvk:g/v/Y", "gvk:g/v/Z"});
    c.package("p99", "s")
        .channel("p99", "s", {"p99.v1"})
        .bundle("p99", "p99.v1", "1.0.0", {"gvk:g/v/X"});
    World w;
    w.add("ops", c);
    auto r = w.run({"a"}).take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_EQ(picks(r), (Strings{"a.v1", "p99.v1"}));
    // Without p99 there is no solution, and the explanation covers every provider.
    Cat d;
    d.yaml = c.yaml.substr(0, c.yaml.find("---\nschema: olm.package\nname: p99"));
    World x;
    x.add("ops", d);
    auto none = x.run({"a"}).take();
    ASSERT_FALSE(none.satisfiable);
    std::string t = explain(none);
    EXPECT_NE(t.find("a.v1 (a 1.0.0, channel s, catalog ops) requires API g/v X, but no "
                     "candidate fits"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("and 12 more"), std::string::npos) << t;
}

TEST(Resolve, Deprecations) {
    Cat c = Cat{}
                .package("a", "stable")
                .channel("a", "stable", {"a.v1", "a.v2<a.v1"})
                .channel("a", "old", {"a.v1"})
                .bundle("a", "a.v1", "1.0.0")
                .bundle("a", "a.v2", "2.0.0")
                .deprecations("a", {{"olm.bundle", "a.v2", "use a.v3"},
                                    {"olm.channel", "old", "old is closed"}});
    World w;
    w.add("ops", c);
    auto r = w.run({"a"}).take();
    EXPECT_EQ(picks(r), Strings{"a.v2"});
    EXPECT_EQ(r.warnings, Strings{"bundle a.v2 is deprecated: use a.v3"});
    auto ex = w.run({"a"}, {}, Opts().exclude_deprecated()).take();
    EXPECT_EQ(picks(ex), Strings{"a.v1"});
    EXPECT_TRUE(ex.warnings.empty());
    auto old = w.run({"a:old"}).take();
    EXPECT_EQ(old.warnings, Strings{"channel old of package a is deprecated: old is closed"});
    auto none = w.run({"a:old"}, {}, Opts().exclude_deprecated()).take();
    ASSERT_FALSE(none.satisfiable);
    EXPECT_NE(explain(none).find("is left out by --exclude-deprecated: channel old is "
                                 "deprecated: old is closed"),
              std::string::npos)
        << explain(none);
}

TEST(ResolveErrors, UnknownPackageChannelAndStartingCsv) {
    World w;
    load_sample(w);
    auto p = w.run({"vaul"});
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().code, ExitCode::invalid);
    EXPECT_EQ(p.error().message, "unknown package \"vaul\"; the nearest is \"vault\"");
    ASSERT_EQ(p.error().notes.size(), 1u);
    EXPECT_EQ(p.error().notes[0], "known packages: etcd, vault");
    auto c = w.run({"vault:stabel"});
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().message,
              "unknown channel \"stabel\" of package \"vault\"; the nearest is \"stable\"");
    EXPECT_EQ(c.error().notes[0], "known channels: fast, stable");
    auto s = w.run({"vault"}, {}, Opts().starting_csv("etcdoperator.v0.9.2"));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ExitCode::invalid);
    auto dup = w.run({"vault", "vault:fast"});
    ASSERT_FALSE(dup.ok());
    EXPECT_EQ(dup.error().code, ExitCode::usage);
    EXPECT_NE(dup.error().message.find("requested twice"), std::string::npos);
}

TEST(Resolve, RequestNamesItsCatalog) {
    // Package a in two catalogs; "high" is preferred unless the request names "low".
    Cat high = Cat{}
                   .package("a", "s")
                   .channel("a", "s", {"a.v2"})
                   .bundle("a", "a.v2", "2.0.0")
                   .package("b", "s")
                   .channel("b", "s", {"b.v1"})
                   .bundle("b", "b.v1", "1.0.0");
    Cat low = Cat{}
                  .package("a", "s")
                  .channel("a", "s", {"a.v1", "a.v3<a.v1"})
                  .bundle("a", "a.v1", "1.0.0", {"pkg:b:>=1.0.0"})
                  .bundle("a", "a.v3", "3.0.0", {"pkg:b:>=1.0.0"});
    World w;
    w.add("high", high, 10).add("low", low);
    auto any = w.run({"a"}).take();
    ASSERT_TRUE(any.satisfiable) << explain(any);
    EXPECT_EQ(picks(any), Strings{"a.v2"});
    EXPECT_EQ(any.selected[0].catalog, "high");
    // Pinned to "low": a from low, its dependency b from wherever it is.
    auto pinned = w.run({"a/low"}).take();
    ASSERT_TRUE(pinned.satisfiable) << explain(pinned);
    EXPECT_EQ(picks(pinned), (Strings{"a.v3", "b.v1"}));
    EXPECT_EQ(pinned.selected[0].catalog, "low");
    EXPECT_EQ(pinned.selected[1].catalog, "high");
    EXPECT_EQ(pick(w.run({"a:s@<2.0.0/low"}).take(), "a"), "a.v1");
    EXPECT_EQ(pick(w.run({"a@<3.0.0/high"}).take(), "a"), "a.v2");
    // An installed a from high, upgraded through low's channel.
    auto up = w.run({"a/low"}, {installed("a", "a.v1", "1.0.0", "high")}).take();
    ASSERT_TRUE(up.satisfiable) << explain(up);
    EXPECT_EQ(pick(up, "a"), "a.v3");
    EXPECT_EQ(up.selected[0].replaces, "a.v1");
    // Nothing in the named catalog satisfies the range: no solution, not another catalog.
    auto none = w.run({"a@>=4.0.0/low"}).take();
    EXPECT_FALSE(none.satisfiable);
    EXPECT_NE(explain(none).find("request a@>=4.0.0/low has no candidate"), std::string::npos)
        << explain(none);

    // A catalog that is not given, one without the package, an unknown package.
    auto unknown = w.run({"a/lo"});
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().code, ExitCode::invalid);
    EXPECT_EQ(unknown.error().message,
              "unknown catalog \"lo\" in request \"a/lo\"; the nearest is \"low\"");
    ASSERT_EQ(unknown.error().notes.size(), 1u);
    EXPECT_EQ(unknown.error().notes[0], "known catalogs: high, low");
    auto missing = w.run({"b/low"});
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ExitCode::invalid);
    EXPECT_EQ(missing.error().message,
              "request \"b/low\": catalog \"low\" has no package \"b\" (catalogs with it: high)");
    auto nowhere = w.run({"c/low"});
    ASSERT_FALSE(nowhere.ok());
    EXPECT_EQ(nowhere.error().message, "unknown package \"c\" in catalog \"low\"; the nearest is "
                                       "\"a\"");
    // The starting CSV is looked up in the named catalog.
    auto start = w.run({"a/high"}, {}, Opts().starting_csv("a.v1"));
    ASSERT_FALSE(start.ok());
    EXPECT_EQ(start.error().code, ExitCode::invalid);
    auto started = w.run({"a/low"}, {}, Opts().starting_csv("a.v1")).take();
    EXPECT_EQ(pick(started, "a"), "a.v1");
    EXPECT_EQ(started.selected[0].catalog, "low");

    // --source: an unknown name is a usage error naming the catalogs.
    EXPECT_TRUE(resolve::check_source(w.catalogs, "low").ok());
    auto bad = resolve::check_source(w.catalogs, "hihg");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ExitCode::usage);
    EXPECT_EQ(bad.error().message, "unknown catalog \"hihg\" in --source; the nearest is \"high\"");
    EXPECT_EQ(bad.error().notes.at(0), "known catalogs: high, low");
}

TEST(ResolveErrors, BadDependencyRange) {
    World w;
    w.add("ops", Cat{}
                     .package("x", "s")
                     .channel("x", "s", {"x.v1"})
                     .bundle("x", "x.v1", "1.0.0", {"pkg:other:>=1.x.y"}));
    auto r = w.run({"x"});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_NE(r.error().message.find("bundle \"x.v1\" (catalog \"ops\"): olm.package.required of "
                                     "package \"other\""),
              std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().str().find("catalog.yaml:"), std::string::npos);
}

TEST(ResolveErrors, ConflictingRequests) {
    World w;
    w.add("ops", Cat{}
                     .package("a", "s")
                     .channel("a", "s", {"a.v1"})
                     .bundle("a", "a.v1", "1.0.0", {"gvk:g/v/K"})
                     .package("b", "s")
                     .channel("b", "s", {"b.v1"})
                     .bundle("b", "b.v1", "1.0.0", {"gvk:g/v/K"}));
    auto r = w.run({"a", "b"}).take();
    ASSERT_FALSE(r.satisfiable);
    std::string t = explain(r);
    EXPECT_NE(t.find("requests a and b cannot both be satisfied"), std::string::npos) << t;
    EXPECT_NE(t.find("a.v1 (a 1.0.0, channel s, catalog ops) and b.v1 (b 1.0.0, channel s, "
                     "catalog ops) both provide API g/v K (at most one provider per API)"),
              std::string::npos)
        << t;
}

TEST(ResolveErrors, ExplainsNestedFailures) {
    // a needs API X; its providers p and q each fail for their own reason.
    World w;
    w.add("ops", Cat{}
                     .package("a", "s")
                     .channel("a", "s", {"a.v1"})
                     .bundle("a", "a.v1", "1.0.0", {"req:g/v/X", "gvk:g/v/Y"})
                     .package("p", "s")
                     .channel("p", "s", {"p.v1"})
                     .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/X", "gvk:g/v/Y"})
                     .package("q", "s")
                     .channel("q", "s", {"q.v1"})
                     .bundle("q", "q.v1", "1.0.0", {"gvk:g/v/X", "pkg:missing:>=1.0.0"}));
    auto r = w.run({"a"}).take();
    ASSERT_FALSE(r.satisfiable);
    std::string t = explain(r);
    EXPECT_NE(t.find("a.v1 (a 1.0.0, channel s, catalog ops) requires API g/v X, but no "
                     "candidate fits"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("p.v1 (p 1.0.0, channel s, catalog ops) also provides API g/v Y, as a.v1 "
                     "does (at most one provider per API)"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("q.v1 (q 1.0.0, channel s, catalog ops) requires package missing in range "
                     ">=1.0.0, but nothing offers it"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("no catalog has a package missing"), std::string::npos) << t;
    // The json document carries the same tree.
    std::string json = io::to_json(resolve::resolution_node(r));
    EXPECT_NE(json.find("\"problems\""), std::string::npos);
    EXPECT_NE(json.find("\"children\""), std::string::npos);
}

// Many providers of a required API, none installable: the explanation shows the first few in
// full and counts the others, and costs a few solves however many there are (with one solve
// per provider, N = 400 took tens of seconds).
TEST(ResolveErrors, ExplainsManyFailingProvidersAlike) {
    const int n = 400;
    auto requester = [] {
        return Cat{}
            .package("r", "s")
            .channel("r", "s", {"r.v1"})
            .bundle("r", "r.v1", "1.0.0", {"req:g/v1/X"});
    };
    // N versions of one provider package, and N provider packages.
    Cat versions = requester();
    std::vector<std::string> chain;
    for (int i = 1; i <= n; ++i)
        chain.push_back("p.v" + std::to_string(i) +
                        (i > 1 ? "<p.v" + std::to_string(i - 1) : std::string()));
    versions.package("p", "s").channel("p", "s", chain);
    for (int i = 1; i <= n; ++i)
        versions.bundle("p", "p.v" + std::to_string(i), std::to_string(i) + ".0.0",
                        {"gvk:g/v1/X", "pkg:missing:>=1.0.0"});
    Cat packages = requester();
    for (int i = 0; i < n; ++i) {
        std::string p = std::to_string(1000 + i);
        p.insert(p.begin(), 'p');
        packages.package(p, "s").channel(p, "s", {p + ".v1"});
        packages.bundle(p, p + ".v1", "1.0.0", {"gvk:g/v1/X", "pkg:missing:>=1.0.0"});
    }
    for (const auto& [cat, first] :
         {std::pair<Cat, std::string>{versions, "p.v400 (p 400.0.0"},
          std::pair<Cat, std::string>{packages, "p1000.v1 (p1000 1.0.0"}}) {
        World w;
        w.add("ops", cat);
        auto r = w.run({"r"}).take();
        ASSERT_FALSE(r.satisfiable);
        ASSERT_EQ(r.problems.size(), 1u);
        const resolve::Problem& root = r.problems[0];
        EXPECT_EQ(root.message, "request r cannot be satisfied: no candidate can be installed");
        ASSERT_EQ(root.children.size(), 1u) << explain(r);
        const resolve::Problem& why = root.children[0];
        EXPECT_EQ(why.message, "r.v1 (r 1.0.0, channel s, catalog ops) requires API g/v1 X, but no "
                               "candidate fits");
        // Eight providers explained, then a count of the others.
        ASSERT_EQ(why.children.size(), 9u) << explain(r);
        EXPECT_EQ(why.children[0].message.rfind(first, 0), 0u) << why.children[0].message;
        for (std::size_t i = 0; i < 8; ++i) {
            const auto& c = why.children[i];
            EXPECT_NE(c.message.find(") requires package missing in range >=1.0.0, but nothing "
                                     "offers it"),
                      std::string::npos)
                << c.message;
            ASSERT_EQ(c.children.size(), 1u);
            EXPECT_EQ(c.children[0].message.rfind("no catalog has a package missing", 0), 0u)
                << c.children[0].message;
        }
        EXPECT_EQ(why.children[8].message, "and 392 more");
        EXPECT_LT(explain(r).size(), 4000u) << explain(r);
    }
}

// A bundle that cannot be installed is explained by the requirement at fault, not by every
// requirement it has.
TEST(ResolveErrors, ExplainsTheRequirementAtFault) {
    World w;
    w.add("ops", Cat{}
                     .package("a", "s")
                     .channel("a", "s", {"a.v1"})
                     .bundle("a", "a.v1", "1.0.0", {"req:g/v/Fine", "req:g/v/X"})
                     .package("f", "s")
                     .channel("f", "s", {"f.v1"})
                     .bundle("f", "f.v1", "1.0.0", {"gvk:g/v/Fine"})
                     .package("p", "s")
                     .channel("p", "s", {"p.v1"})
                     .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/X", "pkg:missing:>=1.0.0"}));
    auto r = w.run({"a"}).take();
    ASSERT_FALSE(r.satisfiable);
    std::string t = explain(r);
    EXPECT_EQ(t, "no solution:\n"
                 "  request a cannot be satisfied: no candidate can be installed\n"
                 "  └─ a.v1 (a 1.0.0, channel s, catalog ops) requires API g/v X, but no "
                 "candidate fits\n"
                 "     └─ p.v1 (p 1.0.0, channel s, catalog ops) requires package missing in range "
                 ">=1.0.0, but nothing offers it\n"
                 "        └─ no catalog has a package missing (the nearest is a)\n");
}

TEST(ResolveAll, EveryPackageOnItsOwn) {
    World w;
    w.add("ops", Cat{}
                     .package("a", "s")
                     .channel("a", "s", {"a.v1"})
                     .bundle("a", "a.v1", "1.0.0", {"req:g/v/X"})
                     .package("b", "s")
                     .channel("b", "s", {"b.v1"})
                     .bundle("b", "b.v1", "1.0.0", {"gvk:g/v/X"})
                     .package("c", "s")
                     .channel("c", "s", {"c.v1"})
                     .bundle("c", "c.v1", "1.0.0", {"req:g/v/Z"})
                     .package("d", "s")
                     .channel("d", "s", {"d.v1", "d.v2"})
                     .bundle("d", "d.v1", "1.0.0")
                     .bundle("d", "d.v2", "2.0.0"));
    auto reports = resolve::resolve_all_packages(w.catalogs).take();
    ASSERT_EQ(reports.size(), 4u);
    EXPECT_EQ(reports[0].status, resolve::PackageReport::Status::installable);
    EXPECT_EQ(reports[0].selected.size(), 2u);
    EXPECT_EQ(reports[1].status, resolve::PackageReport::Status::installable);
    EXPECT_EQ(reports[2].status, resolve::PackageReport::Status::unsatisfiable);
    EXPECT_NE(resolve::problems_text(reports[2].problems).find("requires API g/v Z"),
              std::string::npos);
    EXPECT_EQ(reports[3].status, resolve::PackageReport::Status::invalid);
    std::string text = resolve::packages_text(reports);
    EXPECT_NE(text.find("4 packages: 2 installable, 1 unsatisfiable, 1 invalid"), std::string::npos)
        << text;
}

TEST(ResolveAll, SampleCatalog) {
    World w;
    load_sample(w);
    auto reports = resolve::resolve_all_packages(w.catalogs).take();
    ASSERT_EQ(reports.size(), 2u);
    for (const auto& r : reports)
        EXPECT_EQ(r.status, resolve::PackageReport::Status::installable) << r.package;
}
