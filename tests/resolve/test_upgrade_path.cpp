// kpkg upgrade-path: OLM's hops, the fewest hops, unreachable targets, bad input.
#include <gtest/gtest.h>

#include "kpkg/resolve/upgrade_path.hpp"
#include "world.hpp"

using namespace kpkg;
using kpkg::test::Cat;
using kpkg::test::run_kpkg;
using kpkg::test::testdata;
using kpkg::test::World;

namespace {

using Strings = std::vector<std::string>;

Strings bundles(const resolve::UpgradePath& p) {
    Strings out;
    for (const auto& s : p.steps)
        out.push_back(s.bundle);
    return out;
}

// a.v1 <- a.v2 <- a.v3 <- a.v4 <- a.v5, with a.v5 also skipping a.v2 and a skipRange on a.v4.
Cat chain() {
    return Cat{}
        .package("a", "stable")
        .channel("a", "stable",
                 {"a.v1", "a.v2<a.v1", "a.v3<a.v2", "a.v4<a.v3~>=1.0.0 <3.0.0", "a.v5<a.v4!a.v2"})
        .bundle("a", "a.v1", "1.0.0")
        .bundle("a", "a.v2", "2.0.0")
        .bundle("a", "a.v3", "3.0.0")
        .bundle("a", "a.v4", "4.0.0")
        .bundle("a", "a.v5", "5.0.0");
}

resolve::UpgradePath path(World& w, const std::string& from, const std::string& to = {},
                          bool shortest = false, const std::string& channel = {}) {
    resolve::UpgradePathRequest r;
    r.package = "a";
    r.from = from;
    r.to = to;
    r.shortest = shortest;
    r.channel = channel;
    return resolve::upgrade_path(w.catalogs, r).take();
}

} // namespace

TEST(UpgradePath, FirstCandidateAtEveryHop) {
    World w;
    w.add("ops", chain());
    // From a.v1: a.v4's skipRange contains 1.0.0 and a.v4 comes before a.v2 (which the chain
    // leaves out anyway: a.v5 skips it); then a.v5 replaces a.v4.
    auto p = path(w, "a.v1");
    EXPECT_EQ(bundles(p), (Strings{"a.v4", "a.v5"}));
    EXPECT_EQ(p.steps[0].edge, "skipRange");
    EXPECT_EQ(p.steps[0].detail, "skipRange >=1.0.0 <3.0.0 contains 1.0.0");
    EXPECT_EQ(p.steps[1].detail, "replaces a.v4");
    // A version instead of a name; a version of no bundle only moves by skipRange.
    EXPECT_EQ(bundles(path(w, "3.0.0")), (Strings{"a.v4", "a.v5"}));
    EXPECT_EQ(bundles(path(w, "2.5.0")), (Strings{"a.v4", "a.v5"}));
    EXPECT_TRUE(path(w, "9.0.0").steps.empty());
    // Stop at a target.
    auto to = path(w, "a.v1", "a.v4");
    EXPECT_TRUE(to.reached);
    EXPECT_EQ(bundles(to), Strings{"a.v4"});
}

TEST(UpgradePath, ShortestAndUnreachable) {
    World w;
    w.add("ops", Cat{}
                     .package("a", "stable")
                     .channel("a", "stable", {"a.v1", "a.v2<a.v1", "a.v3<a.v2", "a.v4<a.v3!a.v1"})
                     .bundle("a", "a.v1", "1.0.0")
                     .bundle("a", "a.v2", "2.0.0")
                     .bundle("a", "a.v3", "3.0.0")
                     .bundle("a", "a.v4", "4.0.0"));
    // OLM's walk from a.v1: a.v4 skips it and comes first.
    EXPECT_EQ(bundles(path(w, "a.v1")), Strings{"a.v4"});
    // To a.v3: the walk passes it by; the shortest path goes a.v2, a.v3.
    auto walk = path(w, "a.v1", "a.v3");
    EXPECT_FALSE(walk.reached);
    ASSERT_EQ(walk.problems.size(), 1u);
    EXPECT_NE(resolve::problems_text(walk.problems)
                  .find("OLM's upgrades end at a.v4 (4.0.0): nothing replaces or skips it"),
              std::string::npos)
        << resolve::problems_text(walk.problems);
    auto shortest = path(w, "a.v1", "a.v3", true);
    EXPECT_TRUE(shortest.reached);
    EXPECT_EQ(bundles(shortest), (Strings{"a.v2", "a.v3"}));
    // Backwards is unreachable either way.
    auto back = path(w, "a.v3", "a.v2", true);
    EXPECT_FALSE(back.reached);
    EXPECT_NE(resolve::problems_text(back.problems).find("a.v2 (2.0.0) is not newer than a.v3"),
              std::string::npos)
        << resolve::problems_text(back.problems);
}

TEST(UpgradePath, BadInput) {
    World w;
    w.add("ops", chain());
    resolve::UpgradePathRequest r;
    r.package = "b";
    r.from = "a.v1";
    EXPECT_EQ(resolve::upgrade_path(w.catalogs, r).error().code, ExitCode::invalid);
    r.package = "a";
    r.from = "a.v9";
    auto e = resolve::upgrade_path(w.catalogs, r);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code, ExitCode::invalid);
    EXPECT_NE(e.error().message.find("unknown bundle \"a.v9\" for --from; the nearest is"),
              std::string::npos)
        << e.error().message;
    r.from = "a.v1";
    r.channel = "beta";
    EXPECT_NE(resolve::upgrade_path(w.catalogs, r).error().message.find("unknown channel"),
              std::string::npos);
    r.channel.clear();
    r.to = "x";
    EXPECT_EQ(resolve::upgrade_path(w.catalogs, r).error().code, ExitCode::invalid);
    // Edges that lead back: a cycle through skipRange.
    World c;
    c.add("ops", Cat{}
                     .package("a", "s")
                     .channel("a", "s", {"a.v1~>=2.0.0", "a.v2<a.v1"})
                     .bundle("a", "a.v1", "1.0.0")
                     .bundle("a", "a.v2", "2.0.0"));
    resolve::UpgradePathRequest cr;
    cr.package = "a";
    cr.from = "a.v1";
    auto cyc = resolve::upgrade_path(c.catalogs, cr);
    ASSERT_FALSE(cyc.ok());
    EXPECT_NE(cyc.error().message.find("cycle"), std::string::npos) << cyc.error().message;
}

TEST(UpgradePath, Source) {
    // The same package in two catalogs: "fast" goes straight to a.v5, "ops" through a.v4.
    World w;
    w.add("fast", Cat{}
                      .package("a", "stable")
                      .channel("a", "stable", {"a.v1", "a.v5<a.v1"})
                      .bundle("a", "a.v1", "1.0.0")
                      .bundle("a", "a.v5", "5.0.0"));
    w.add("ops", chain());
    resolve::UpgradePathRequest r;
    r.package = "a";
    r.from = "a.v1";
    auto fast = resolve::upgrade_path(w.catalogs, r).take();
    EXPECT_EQ(bundles(fast), Strings{"a.v5"});
    EXPECT_EQ(fast.steps.front().catalog, "fast");
    r.source = "ops";
    auto ops = resolve::upgrade_path(w.catalogs, r).take();
    EXPECT_EQ(bundles(ops), (Strings{"a.v4", "a.v5"}));
    EXPECT_EQ(ops.steps.front().catalog, "ops");
    // A version only: its hops still come from the catalog named.
    r.from = "1.5.0";
    EXPECT_EQ(bundles(resolve::upgrade_path(w.catalogs, r).take()), (Strings{"a.v4", "a.v5"}));
    r.source = "opz";
    auto bad = resolve::upgrade_path(w.catalogs, r);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ExitCode::invalid);
    EXPECT_NE(bad.error().message.find("unknown catalog \"opz\""), std::string::npos)
        << bad.error().message;
}

TEST(UpgradePathCli, SampleCatalog) {
    auto cat = testdata("catalog").string();
    auto r = run_kpkg({"upgrade-path", "vault", "--from", "vault-operator.v1.0.0", "--catalog", cat,
                       "--channel", "stable"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "package vault: vault-operator.v1.0.0 (1.0.0) -> vault-operator.v1.2.0 "
                     "(1.2.0), 1 hop\n"
                     "  STEP  BUNDLE                 VERSION  CHANNEL  CATALOG  EDGE\n"
                     "  1     vault-operator.v1.2.0  1.2.0    stable   catalog  skipRange "
                     ">=1.0.0 <1.2.0 contains 1.0.0\n");
    auto shortest = run_kpkg({"upgrade-path", "vault", "--from", "1.0.0", "--to", "1.1.0",
                              "--shortest", "--catalog", cat, "-o", "json"});
    ASSERT_EQ(shortest.exit_code, 0) << shortest.err;
    EXPECT_NE(shortest.out.find("\"edge\": \"replaces\""), std::string::npos) << shortest.out;
    auto none = run_kpkg({"upgrade-path", "vault", "--from", "vault-operator.v1.0.0", "--to",
                          "vault-operator.v1.1.1", "--catalog", cat});
    EXPECT_EQ(none.exit_code, 4);
    EXPECT_NE(none.out.find("vault-operator.v1.1.1 is skipped in channel fast "
                            "(vault-operator.v1.3.0-rc.1 skips it)"),
              std::string::npos)
        << none.out;
    EXPECT_EQ(run_kpkg({"upgrade-path", "vault", "--catalog", cat}).exit_code, 2);
    EXPECT_EQ(run_kpkg({"upgrade-path", "vault", "--from", "x", "--catalog", cat}).exit_code, 3);
}
