// The scenarios of operator-lifecycle-manager's resolver tests
// (pkg/controller/registry/resolver/resolver_test.go), rebuilt as File-Based Catalogs and kpkg
// requests. Where OLM's fixture has an installed CSV with properties but no catalog bundle, the
// bundle is put in a catalog named "cluster" that the installed CSV points to.
#include <gtest/gtest.h>

#include "world.hpp"

using namespace kpkg;
using kpkg::test::Cat;
using kpkg::test::explain;
using kpkg::test::installed;
using kpkg::test::Opts;
using kpkg::test::pick;
using kpkg::test::picks;
using kpkg::test::World;

namespace {
using Strings = std::vector<std::string>;
}

// TestSolveOperators: an installed, subscribed operator with nothing newer stays; the new
// subscription gets its bundle.
TEST(OlmScenarios, SolveOperators) {
    World w;
    w.add("test-catalog", Cat{}
                              .package("packageA", "alpha")
                              .channel("packageA", "alpha", {"packageA.v1"})
                              .bundle("packageA", "packageA.v1", "0.0.1", {"gvk:g/v/k"})
                              .package("packageB", "alpha")
                              .channel("packageB", "alpha", {"packageB.v1"})
                              .bundle("packageB", "packageB.v1", "1.0.1"));
    auto r = w.run({"packageA:alpha", "packageB:alpha"},
                   {installed("packageA", "packageA.v1", "0.0.1", "test-catalog", "alpha")})
                 .take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_EQ(picks(r), Strings{"packageB.v1"});
    EXPECT_EQ(r.unchanged, Strings{"packageA.v1"});
}

// TestDisjointChannelGraph: two replaces chains in one channel is an error naming both.
TEST(OlmScenarios, DisjointChannelGraph) {
    World w;
    w.add("test-catalog", Cat{}
                              .package("packageA", "alpha")
                              .channel("packageA", "alpha",
                                       {"packageA.side1.v1", "packageA.side1.v2<packageA.side1.v1",
                                        "packageA.side2.v1", "packageA.side2.v2<packageA.side2.v1"})
                              .bundle("packageA", "packageA.side1.v1", "0.0.1")
                              .bundle("packageA", "packageA.side1.v2", "0.0.2")
                              .bundle("packageA", "packageA.side2.v1", "1.0.0")
                              .bundle("packageA", "packageA.side2.v2", "2.0.0"));
    auto r = w.run({"packageA:alpha"});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_NE(r.error().message.find("channel \"alpha\" of package \"packageA\""),
              std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find("packageA.side1.v2...packageA.side1.v1, "
                                     "packageA.side2.v2...packageA.side2.v1"),
              std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().str().find("catalog.yaml:"), std::string::npos) << r.error().str();
}

// TestSolveOperators_MultipleChannels: a subscription with a channel takes it from that channel.
TEST(OlmScenarios, MultipleChannels) {
    World w;
    w.add("community", Cat{}
                           .package("packageB", "beta")
                           .channel("packageB", "alpha", {"packageB.v1"})
                           .channel("packageB", "beta", {"packageB.v1"})
                           .bundle("packageB", "packageB.v1", "1.0.0"));
    auto r = w.run({"packageB:alpha"}).take();
    ASSERT_TRUE(r.satisfiable);
    ASSERT_EQ(r.selected.size(), 1u);
    EXPECT_EQ(r.selected[0].channel, "alpha");
}

// TestSolveOperators_FindLatestVersion: an installed CSV moves one hop to what replaces it, a new
// subscription takes its channel head.
TEST(OlmScenarios, FindLatestVersion) {
    World w;
    w.add("community", Cat{}
                           .package("packageA", "alpha")
                           .channel("packageA", "alpha", {"packageA.v1.0.1<packageA.v1"})
                           .bundle("packageA", "packageA.v1.0.1", "1.0.1")
                           .package("packageB", "alpha")
                           .channel("packageB", "alpha",
                                    {"packageB.v0.9.0", "packageB.v1.0.0<packageB.v0.9.0",
                                     "packageB.v1.0.1<packageB.v1.0.0"})
                           .bundle("packageB", "packageB.v0.9.0", "0.9.0")
                           .bundle("packageB", "packageB.v1.0.0", "1.0.0")
                           .bundle("packageB", "packageB.v1.0.1", "1.0.1"));
    auto r = w.run({"packageA:alpha", "packageB:alpha"},
                   {installed("packageA", "packageA.v1", "0.0.1", "community", "alpha")})
                 .take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_EQ(picks(r), (Strings{"packageA.v1.0.1", "packageB.v1.0.1"}));
    EXPECT_EQ(r.selected[0].replaces, "packageA.v1");
    EXPECT_TRUE(r.selected[1].replaces.empty());
}

namespace {
Cat latest_with_dependencies(bool nested) {
    Cat c;
    c.package("packageA", "alpha")
        .channel("packageA", "alpha", {"packageA.v1.0.1<packageA.v1"})
        .bundle("packageA", "packageA.v1.0.1", "1.0.1")
        .package("packageB", "alpha")
        .channel("packageB", "alpha",
                 {"packageB.v0.9.0", "packageB.v1.0.0<packageB.v0.9.0",
                  "packageB.v1.0.1<packageB.v1.0.0"})
        .bundle("packageB", "packageB.v0.9.0", "0.9.0")
        .bundle("packageB", "packageB.v1.0.0", "1.0.0")
        .bundle("packageB", "packageB.v1.0.1", "1.0.1",
                {"pkg:packageC:1.0.1", "pkg:packageD:1.0.1"})
        .package("packageC", "alpha")
        .channel("packageC", "alpha", {"packageC.v1.0.0", "packageC.v1.0.1<packageC.v1.0.0"})
        .package("packageD", "alpha");
    Strings cdeps = nested ? Strings{"pkg:packageE:1.0.1"} : Strings{};
    c.bundle("packageC", "packageC.v1.0.0", "1.0.0", cdeps)
        .bundle("packageC", "packageC.v1.0.1", "1.0.1", cdeps);
    if (nested) {
        c.channel("packageD", "alpha", {"packageD.v1.0.1"})
            .bundle("packageD", "packageD.v1.0.1", "1.0.1")
            .package("packageE", "alpha")
            .channel("packageE", "alpha", {"packageE.v1.0.0", "packageE.v1.0.1<packageE.v1.0.0"})
            .bundle("packageE", "packageE.v1.0.0", "1.0.0")
            .bundle("packageE", "packageE.v1.0.1", "1.0.1");
    } else {
        c.channel("packageD", "alpha",
                  {"packageD.v1.0.0", "packageD.v1.0.1<packageD.v1.0.0",
                   "packageD.v1.0.2<packageD.v1.0.1"})
            .bundle("packageD", "packageD.v1.0.0", "1.0.0")
            .bundle("packageD", "packageD.v1.0.1", "1.0.1")
            .bundle("packageD", "packageD.v1.0.2", "1.0.2");
    }
    return c;
}
} // namespace

// TestSolveOperators_FindLatestVersionWithDependencies: exact-version package requirements pick
// that version even when a newer one heads the channel.
TEST(OlmScenarios, FindLatestVersionWithDependencies) {
    World w;
    w.add("community", latest_with_dependencies(false));
    auto r = w.run({"packageA:alpha", "packageB:alpha"},
                   {installed("packageA", "packageA.v1", "0.0.1", "community", "alpha")},
                   Opts().one_hop())
                 .take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_EQ(picks(r), (Strings{"packageA.v1.0.1", "packageB.v1.0.1", "packageC.v1.0.1",
                                 "packageD.v1.0.1"}));
    EXPECT_EQ(r.selected[2].reason, "required by packageB.v1.0.1 for package packageC in range "
                                    "1.0.1");
}

// TestSolveOperators_FindLatestVersionWithNestedDependencies.
TEST(OlmScenarios, FindLatestVersionWithNestedDependencies) {
    World w;
    w.add("community", latest_with_dependencies(true));
    auto r = w.run({"packageA:alpha", "packageB:alpha"},
                   {installed("packageA", "packageA.v1", "0.0.1", "community", "alpha")},
                   Opts().one_hop())
                 .take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_EQ(picks(r), (Strings{"packageA.v1.0.1", "packageB.v1.0.1", "packageC.v1.0.1",
                                 "packageD.v1.0.1", "packageE.v1.0.1"}));
}

// TestSolveOperators_CatsrcPrioritySorting: a dependency comes from the dependent's own catalog,
// else from the catalog of highest priority, else by catalog name.
TEST(OlmScenarios, CatalogPrioritySorting) {
    Cat a = Cat{}
                .package("packageA", "alpha")
                .channel("packageA", "alpha", {"packageA.v1"})
                .bundle("packageA", "packageA.v1", "0.0.1", {"pkg:packageB:0.0.1"});
    Cat b = Cat{}
                .package("packageB", "alpha")
                .channel("packageB", "alpha", {"packageB.v1"})
                .bundle("packageB", "packageB.v1", "0.0.1");
    {
        World w;
        w.add("community", a).add("community-operator", b).add("high-priority-operator", b, 100);
        auto r = w.run({"packageA:alpha"}).take();
        ASSERT_TRUE(r.satisfiable) << explain(r);
        ASSERT_EQ(r.selected.size(), 2u);
        EXPECT_EQ(r.selected[1].catalog, "high-priority-operator");
    }
    {
        World w;
        w.add("community", a)
            .add("community-operator", b, 100)
            .add("high-priority-operator", b, 100);
        auto r = w.run({"packageA:alpha"}).take();
        ASSERT_EQ(r.selected.size(), 2u);
        EXPECT_EQ(r.selected[1].catalog, "community-operator");
    }
    {
        Cat both = a;
        both.yaml += b.yaml;
        World w;
        w.add("community", both).add("community-operator", b).add("high-priority-operator", b, 100);
        auto r = w.run({"packageA:alpha"}).take();
        ASSERT_EQ(r.selected.size(), 2u);
        EXPECT_EQ(r.selected[1].catalog, "community");
    }
}

// TestSolveOperators_WithPackageDependencies and _WithGVKDependencies.
TEST(OlmScenarios, PackageAndGvkDependencies) {
    World w;
    w.add("community",
          Cat{}
              .package("packageB", "alpha")
              .channel("packageB", "alpha", {"packageB.v1"})
              .bundle("packageB", "packageB.v1", "1.0.0", {"pkg:packageC:0.1.0", "req:g/v/k"})
              .package("packageC", "alpha")
              .channel("packageC", "alpha", {"packageC.v1"})
              .bundle("packageC", "packageC.v1", "0.1.0", {"gvk:g/v/k"}));
    auto r = w.run({"packageB:alpha"}).take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_EQ(picks(r), (Strings{"packageB.v1", "packageC.v1"}));
    // The package requirement came first and chose packageC; the API requirement is then met.
    EXPECT_EQ(r.selected[1].reason, "required by packageB.v1 for package packageC in range 0.1.0");
}

// TestSolveOperators_WithLabelDependencies and _WithUnsatisfiableLabelDependencies.
TEST(OlmScenarios, LabelDependencies) {
    Cat c = Cat{}
                .package("packageA", "alpha")
                .channel("packageA", "alpha", {"packageA"})
                .bundle("packageA", "packageA", "0.0.1", {"labelreq:lts"})
                .package("packageB", "beta")
                .channel("packageB", "beta", {"packageB.v1"});
    {
        World w;
        w.add("community", Cat(c).bundle("packageB", "packageB.v1", "1.0.0", {"label:lts"}));
        auto r = w.run({"packageA:alpha"}).take();
        ASSERT_TRUE(r.satisfiable) << explain(r);
        EXPECT_EQ(picks(r), (Strings{"packageA", "packageB.v1"}));
    }
    {
        World w;
        w.add("community", Cat(c).bundle("packageB", "packageB.v1", "1.0.0"));
        auto r = w.run({"packageA:alpha"}).take();
        ASSERT_FALSE(r.satisfiable);
        EXPECT_NE(explain(r).find("requires label lts, but nothing offers it"), std::string::npos)
            << explain(r);
    }
}

// TestSolveOperators_WithNestedGVKDependencies: the dependent's own catalog first, at every level.
TEST(OlmScenarios, NestedGvkDependencies) {
    World w;
    w.add("community",
          Cat{}
              .package("packageB", "alpha")
              .channel("packageB", "alpha", {"packageB.v1.0.0", "packageB.v1.0.1<packageB.v1.0.0"})
              .bundle("packageB", "packageB.v1.0.0", "1.0.0", {"req:g/v/k"})
              .bundle("packageB", "packageB.v1.0.1", "1.0.1", {"req:g/v/k"})
              .package("packageC", "alpha")
              .channel("packageC", "alpha", {"packageC.v1.0.0", "packageC.v1.0.1<packageC.v1.0.0"})
              .bundle("packageC", "packageC.v1.0.0", "1.0.0", {"gvk:g/v/k", "req:g2/v2/k2"})
              .bundle("packageC", "packageC.v1.0.1", "1.0.1", {"gvk:g/v/k", "req:g2/v2/k2"})
              .package("packageD", "alpha")
              .channel("packageD", "alpha", {"packageD.v1.0.1"})
              .bundle("packageD", "packageD.v1.0.1", "1.0.1", {"gvk:g2/v2/k2", "req:g2/v2/k2"}));
    w.add("certified",
          Cat{}
              .package("packageC", "alpha")
              .channel("packageC", "alpha", {"packageC.v1.0.0", "packageC.v1.0.1<packageC.v1.0.0"})
              .bundle("packageC", "packageC.v1.0.0", "1.0.0", {"gvk:g/v/k", "req:g2/v2/k2"})
              .bundle("packageC", "packageC.v1.0.1", "1.0.1", {"gvk:g/v/k", "req:g2/v2/k2"})
              .package("packageD", "alpha")
              .channel("packageD", "alpha", {"packageD.v1.0.1"})
              .bundle("packageD", "packageD.v1.0.1", "1.0.1", {"gvk:g2/v2/k2"}));
    auto r = w.run({"packageB:alpha"}).take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_EQ(picks(r), (Strings{"packageB.v1.0.1", "packageC.v1.0.1", "packageD.v1.0.1"}));
    for (const auto& s : r.selected)
        EXPECT_EQ(s.catalog, "community") << s.bundle;
}

// TestSolveOperators_IgnoreUnsatisfiableDependencies: a candidate whose own dependency cannot be
// met is passed over for the next one, here in another catalog.
TEST(OlmScenarios, IgnoreUnsatisfiableDependencies) {
    World w;
    w.add("community", Cat{}
                           .package("packageB", "alpha")
                           .channel("packageB", "alpha", {"packageB.v1"})
                           .bundle("packageB", "packageB.v1", "1.0.0", {"pkg:packageC:0.1.0"})
                           .package("packageC", "alpha")
                           .channel("packageC", "alpha", {"packageC.v1"})
                           .bundle("packageC", "packageC.v1", "0.1.0", {"pkg:packageD:0.1.0"}));
    w.add("certified", Cat{}
                           .package("packageB", "alpha")
                           .channel("packageB", "alpha", {"packageB.v1"})
                           .bundle("packageB", "packageB.v1", "1.0.0", {"pkg:packageC:0.1.0"})
                           .package("packageC", "alpha")
                           .channel("packageC", "alpha", {"packageC.v1"})
                           .bundle("packageC", "packageC.v1", "0.1.0"));
    auto r = w.run({"packageB:alpha"}).take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    ASSERT_EQ(r.selected.size(), 2u);
    // The subscription has no catalog here: certified sorts before community.
    EXPECT_EQ(r.selected[0].catalog, "certified");
    EXPECT_EQ(r.selected[1].catalog, "certified");
    // With community preferred (higher priority), B comes from community and C still from
    // certified, since community's C needs a package nobody has.
    World w2;
    w2.add("community",
           Cat{}
               .package("packageB", "alpha")
               .channel("packageB", "alpha", {"packageB.v1"})
               .bundle("packageB", "packageB.v1", "1.0.0", {"pkg:packageC:0.1.0"})
               .package("packageC", "alpha")
               .channel("packageC", "alpha", {"packageC.v1"})
               .bundle("packageC", "packageC.v1", "0.1.0", {"pkg:packageD:0.1.0"}),
           10);
    w2.add("certified", Cat{}
                            .package("packageC", "alpha")
                            .channel("packageC", "alpha", {"packageC.v1"})
                            .bundle("packageC", "packageC.v1", "0.1.0"));
    auto r2 = w2.run({"packageB:alpha"}).take();
    ASSERT_TRUE(r2.satisfiable) << explain(r2);
    ASSERT_EQ(r2.selected.size(), 2u);
    EXPECT_EQ(r2.selected[0].catalog, "community");
    EXPECT_EQ(r2.selected[1].catalog, "certified");
}

// TestSolveOperators_PreferDefaultChannelInResolution.
TEST(OlmScenarios, PreferDefaultChannel) {
    World w;
    w.add("community", Cat{}
                           .package("packageA", "stable")
                           .channel("packageA", "alpha", {"packageA.v0.0.2"})
                           .channel("packageA", "stable", {"packageA.v0.0.1"})
                           .bundle("packageA", "packageA.v0.0.2", "0.0.2")
                           .bundle("packageA", "packageA.v0.0.1", "0.0.1"));
    auto r = w.run({"packageA"}).take();
    EXPECT_EQ(picks(r), Strings{"packageA.v0.0.1"});
    EXPECT_EQ(r.selected[0].channel, "stable");
}

// TestSolveOperators_PreferDefaultChannelInResolutionForTransitiveDependencies.
TEST(OlmScenarios, PreferDefaultChannelForDependencies) {
    World w;
    w.add("community", Cat{}
                           .package("packageA", "stable")
                           .channel("packageA", "alpha", {"packageA.v0.0.1"})
                           .bundle("packageA", "packageA.v0.0.1", "0.0.1", {"req:g/v/k"})
                           .package("packageB", "stable")
                           .channel("packageB", "stable", {"packageB.v0.0.1"})
                           .channel("packageB", "alpha", {"packageB.v0.0.2"})
                           .bundle("packageB", "packageB.v0.0.1", "0.0.1", {"gvk:g/v/k"})
                           .bundle("packageB", "packageB.v0.0.2", "0.0.2", {"gvk:g/v/k"}));
    auto r = w.run({"packageA:alpha"}).take();
    EXPECT_EQ(picks(r), (Strings{"packageA.v0.0.1", "packageB.v0.0.1"}));
}

// TestSolveOperators_SubscriptionlessOperatorsSatisfyDependencies and _CanConflict.
TEST(OlmScenarios, SubscriptionlessOperators) {
    Cat cluster = Cat{}
                      .package("packageA", "alpha")
                      .channel("packageA", "alpha", {"packageA.v1"})
                      .bundle("packageA", "packageA.v1", "0.0.1", {"gvk:g/v/k"});
    {
        World w;
        w.add("cluster", cluster);
        w.add("community", Cat{}
                               .package("packageB", "alpha")
                               .channel("packageB", "alpha",
                                        {"packageB.v1.0.0", "packageB.v1.0.1<packageB.v1.0.0"})
                               .bundle("packageB", "packageB.v1.0.0", "1.0.0", {"req:g/v/k"})
                               .bundle("packageB", "packageB.v1.0.1", "1.0.1", {"req:g/v/k"}));
        auto r =
            w.run({"packageB:alpha"}, {installed("packageA", "packageA.v1", "0.0.1", "cluster")})
                .take();
        ASSERT_TRUE(r.satisfiable) << explain(r);
        EXPECT_EQ(picks(r), Strings{"packageB.v1.0.1"});
        EXPECT_EQ(r.unchanged, Strings{"packageA.v1"});
    }
    {
        World w;
        w.add("cluster", cluster);
        w.add("community", Cat{}
                               .package("packageB", "alpha")
                               .channel("packageB", "alpha",
                                        {"packageB.v1.0.0", "packageB.v1.0.1<packageB.v1.0.0"})
                               .bundle("packageB", "packageB.v1.0.0", "1.0.0", {"gvk:g/v/k"})
                               .bundle("packageB", "packageB.v1.0.1", "1.0.1", {"gvk:g/v/k"}));
        auto r =
            w.run({"packageB:alpha"}, {installed("packageA", "packageA.v1", "0.0.1", "cluster")})
                .take();
        ASSERT_FALSE(r.satisfiable);
        std::string t = explain(r);
        EXPECT_NE(t.find("packageB.v1.0.1 (packageB 1.0.1, channel alpha, catalog community) "
                         "conflicts with installed packageA.v1"),
                  std::string::npos)
            << t;
        EXPECT_NE(t.find("both provide API g/v k (at most one provider per API)"),
                  std::string::npos)
            << t;
    }
}

// TestSolveOperators_PackageCannotSelfSatisfy: a bundle of the requested package cannot meet the
// request's own requirements; providers conflict over packages.
TEST(OlmScenarios, PackageCannotSelfSatisfy) {
    World w;
    w.add("community", Cat{}
                           .package("packageA", "stable")
                           .channel("packageA", "stable", {"opA.v1.0.0"})
                           .channel("packageA", "alpha", {"opABC.v1.0.0"})
                           .bundle("packageA", "opA.v1.0.0", "1.0.0", {"req:g/v/k", "req:g2/v/k"})
                           .bundle("packageA", "opABC.v1.0.0", "1.0.0", {"gvk:g/v/k", "gvk:g2/v/k"})
                           .package("packageB", "stable")
                           .channel("packageB", "stable", {"opB.v1.0.0"})
                           .channel("packageB", "alpha", {"opD.v1.0.0"})
                           .bundle("packageB", "opB.v1.0.0", "1.0.0", {"gvk:g/v/k"})
                           .bundle("packageB", "opD.v1.0.0", "1.0.0", {"gvk:g/v/k"}));
    w.add("secondary", Cat{}
                           .package("packageB", "stable")
                           .channel("packageB", "stable", {"opC.v1.0.0"})
                           .bundle("packageB", "opC.v1.0.0", "1.0.0", {"gvk:g2/v/k"})
                           .package("packageC", "stable")
                           .channel("packageC", "stable", {"opE.v1.0.0"})
                           .bundle("packageC", "opE.v1.0.0", "1.0.0", {"gvk:g2/v/k"}));
    auto r = w.run({"packageA:stable"}).take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_EQ(picks(r), (Strings{"opA.v1.0.0", "opB.v1.0.0", "opE.v1.0.0"}));
}

// TestSolveOperators_TransferApiOwnership: three phases of one cluster.
TEST(OlmScenarios, TransferApiOwnership) {
    Cat phase1 = Cat{}
                     .package("packageA", "stable")
                     .channel("packageA", "stable", {"opA.v1.0.0"})
                     .bundle("packageA", "opA.v1.0.0", "1.0.0", {"gvk:g/v/k"})
                     .package("packageB", "stable")
                     .channel("packageB", "stable", {"opB.v1.0.0"})
                     .bundle("packageB", "opB.v1.0.0", "1.0.0", {"req:g/v/k", "gvk:g2/v/k"});
    {
        World w;
        w.add("community", phase1);
        auto r = w.run({"packageB:stable"}).take();
        ASSERT_TRUE(r.satisfiable) << explain(r);
        EXPECT_EQ(picks(r), (Strings{"opA.v1.0.0", "opB.v1.0.0"}));
    }
    auto cluster = std::vector<kpkg::resolve::Installed>{
        installed("packageA", "opA.v1.0.0", "1.0.0", "community", "stable"),
        installed("packageB", "opB.v1.0.0", "1.0.0", "community", "stable")};
    {
        // opA.v1.0.1 needs the API that only opA.v1.0.0 provides: nothing moves.
        World w;
        w.add("community",
              Cat{}
                  .package("packageA", "stable")
                  .channel("packageA", "stable", {"opA.v1.0.0", "opA.v1.0.1<opA.v1.0.0"})
                  .bundle("packageA", "opA.v1.0.0", "1.0.0", {"gvk:g/v/k"})
                  .bundle("packageA", "opA.v1.0.1", "1.0.1", {"req:g/v/k"})
                  .package("packageB", "stable")
                  .channel("packageB", "stable", {"opB.v1.0.0"})
                  .bundle("packageB", "opB.v1.0.0", "1.0.0", {"req:g/v/k", "gvk:g2/v/k"}));
        auto r = w.run({}, cluster, Opts().upgrade().one_hop()).take();
        ASSERT_TRUE(r.satisfiable) << explain(r);
        EXPECT_TRUE(r.selected.empty()) << explain(r);
    }
    {
        // opB.v1.0.1 takes the API over: both move in one step.
        World w;
        w.add("community",
              Cat{}
                  .package("packageA", "stable")
                  .channel("packageA", "stable", {"opA.v1.0.0", "opA.v1.0.1<opA.v1.0.0"})
                  .bundle("packageA", "opA.v1.0.0", "1.0.0", {"gvk:g/v/k"})
                  .bundle("packageA", "opA.v1.0.1", "1.0.1", {"req:g/v/k"})
                  .package("packageB", "stable")
                  .channel("packageB", "stable", {"opB.v1.0.0", "opB.v1.0.1<opB.v1.0.0"})
                  .bundle("packageB", "opB.v1.0.0", "1.0.0", {"req:g/v/k", "gvk:g2/v/k"})
                  .bundle("packageB", "opB.v1.0.1", "1.0.1", {"gvk:g/v/k", "gvk:g2/v/k"}));
        auto r = w.run({}, cluster, Opts().upgrade().one_hop()).take();
        ASSERT_TRUE(r.satisfiable) << explain(r);
        EXPECT_EQ(picks(r), (Strings{"opA.v1.0.1", "opB.v1.0.1"}));
        EXPECT_EQ(r.selected[0].replaces, "opA.v1.0.0");
    }
}

// TestSolveOperators_WithoutDeprecated and TestSolveOperatorsWithDeprecatedInnerChannelEntry.
TEST(OlmScenarios, LegacyDeprecatedIsNeverChosen) {
    {
        World w;
        w.add("catalog", Cat{}
                             .package("packageA", "alpha")
                             .channel("packageA", "alpha", {"packageA.v1"})
                             .bundle("packageA", "packageA.v1", "0.0.1", {"deprecated"}));
        auto r = w.run({"packageA:alpha"}).take();
        ASSERT_FALSE(r.satisfiable);
        EXPECT_NE(explain(r).find("packageA.v1 (packageA 0.0.1, channel alpha, catalog catalog) is "
                                  "deprecated (olm.deprecated property)"),
                  std::string::npos)
            << explain(r);
    }
    {
        World w;
        w.add("catalog", Cat{}
                             .package("a", "c")
                             .channel("a", "c", {"a-1", "a-2<a-1", "a-3<a-2"})
                             .bundle("a", "a-1", "1.0.0")
                             .bundle("a", "a-2", "2.0.0", {"deprecated"})
                             .bundle("a", "a-3", "3.0.0"));
        auto r = w.run({"a:c"}).take();
        EXPECT_EQ(picks(r), Strings{"a-3"});
        auto old = w.run({"a:c@<3.0.0"}).take();
        EXPECT_EQ(picks(old), Strings{"a-1"});
    }
}

namespace {
// foo's bundles of OLM's olm.constraint scenarios: versions and the APIs each provides.
Cat constraint_world(const std::string& constraint,
                     const std::vector<std::pair<std::string, Strings>>& foos) {
    Cat c;
    c.package("bar", "stable")
        .channel("bar", "stable", {"bar.v1.0.0"})
        .bundle("bar", "bar.v1.0.0", "1.0.0", {"constraint:" + constraint});
    Strings entries;
    c.package("foo", "stable");
    for (const auto& [version, apis] : foos) {
        std::string name = "foo.v" + version;
        entries.push_back(entries.empty()
                              ? name
                              : name + "<" + entries.back().substr(0, entries.back().find('<')));
        Strings props;
        for (const auto& a : apis)
            props.push_back("gvk:" + a);
        c.bundle("foo", name, version, props);
    }
    c.channel("foo", "stable", entries);
    return c;
}
} // namespace

// TestSolveOperators_OLMConstraint_CompoundAll / _CompoundAny / _CompoundNone / _Unknown.
TEST(OlmScenarios, OlmConstraintCompound) {
    std::vector<std::pair<std::string, Strings>> foos{
        {"0.99.0", {"g1/v1/k1", "g2/v2/k2", "g3/v3/k3"}},
        {"1.0.0", {"g2/v2/k2", "g3/v3/k3"}},
        {"1.0.1", {"g1/v1/k1", "g2/v2/k2", "g3/v3/k3"}}};
    {
        World w;
        w.add("community",
              constraint_world(R"({"failureMessage": "all constraint", "all": {"constraints": [)"
                               R"({"package": {"packageName": "foo", "versionRange": ">=1.0.0"}},)"
                               R"({"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},)"
                               R"({"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}})",
                               foos));
        auto r = w.run({"bar:stable"}).take();
        ASSERT_TRUE(r.satisfiable) << explain(r);
        EXPECT_EQ(picks(r), (Strings{"bar.v1.0.0", "foo.v1.0.1"}));
    }
    {
        World w;
        w.add("community",
              constraint_world(R"({"failureMessage": "any constraint", "any": {"constraints": [)"
                               R"({"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},)"
                               R"({"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}})",
                               {{"0.99.0", {"g0/v0/k0"}},
                                {"1.0.0", {"g1/v1/k1", "g2/v2/k2"}},
                                {"1.0.1", {"g1/v1/k1", "g2/v2/k2", "g3/v3/k3"}}}));
        auto r = w.run({"bar:stable"}).take();
        ASSERT_TRUE(r.satisfiable) << explain(r);
        EXPECT_EQ(picks(r), (Strings{"bar.v1.0.0", "foo.v1.0.1"}));
    }
    {
        World w;
        w.add("community",
              constraint_world(R"({"failureMessage": "not constraint", "all": {"constraints": [)"
                               R"({"gvk": {"group": "g0", "version": "v0", "kind": "k0"}},)"
                               R"({"not": {"constraints": [)"
                               R"({"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},)"
                               R"({"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}}]}})",
                               {{"0.99.0", {"g0/v0/k0"}},
                                {"1.0.0", {"g0/v0/k0", "g1/v1/k1", "g2/v2/k2"}},
                                {"1.0.1", {"g0/v0/k0", "g1/v1/k1", "g2/v2/k2", "g3/v3/k3"}}}));
        auto r = w.run({"bar:stable"}).take();
        ASSERT_TRUE(r.satisfiable) << explain(r);
        EXPECT_EQ(picks(r), (Strings{"bar.v1.0.0", "foo.v0.99.0"}));
        EXPECT_EQ(r.selected[1].reason.rfind("required by bar.v1.0.0 for all of (", 0), 0u)
            << r.selected[1].reason;
    }
    {
        World w;
        w.add("community",
              constraint_world(
                  R"({"failureMessage": "unknown constraint", "unknown": {"foo": "bar"}})", foos));
        auto r = w.run({"bar:stable"});
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().code, ExitCode::invalid);
        EXPECT_NE(r.error().message.find("bundle \"bar.v1.0.0\" (catalog \"community\"): "
                                         "olm.constraint:"),
                  std::string::npos)
            << r.error().message;
        EXPECT_NE(r.error().message.find("unknown"), std::string::npos) << r.error().message;
    }
}

// A CEL rule over the candidates' properties; its failureMessage when nothing satisfies it.
TEST(OlmScenarios, OlmConstraintCel) {
    std::string rule = "{\"failureMessage\": \"needs foo 1.0.1 or later\", \"cel\": {\"rule\": "
                       "\"properties.exists(p, p.type == 'olm.package' && p.value.packageName == "
                       "'foo' && semver_compare(p.value.version, '1.0.1') >= 0) && "
                       "properties.exists(p, p.type == 'olm.gvk' && p.value.kind == 'k1')\"}}";
    World w;
    w.add("community",
          constraint_world(
              rule, {{"0.99.0", {"g1/v1/k1"}}, {"1.0.1", {"g1/v1/k1"}}, {"1.0.2", {"g2/v2/k2"}}}));
    auto r = w.run({"bar"}).take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_EQ(picks(r), (Strings{"bar.v1.0.0", "foo.v1.0.1"}));
    World none;
    none.add("community", constraint_world(rule, {{"0.99.0", {"g1/v1/k1"}}}));
    auto n = none.run({"bar"}).take();
    ASSERT_FALSE(n.satisfiable);
    EXPECT_NE(explain(n).find("no bundle in any catalog satisfies it: needs foo 1.0.1 or later"),
              std::string::npos)
        << explain(n);
    EXPECT_NE(explain(n).find("bar.v1.0.0 (bar 1.0.0, channel stable, catalog community) requires "
                              "CEL rule properties.exists("),
              std::string::npos)
        << explain(n);
    EXPECT_NE(explain(n).find("(\"needs foo 1.0.1 or later\"), but nothing offers it"),
              std::string::npos)
        << explain(n);
}

// TestSolveOperators_WithSkipsAndStartingCSV and _WithSkips.
TEST(OlmScenarios, SkipsAndStartingCsv) {
    Cat c = Cat{}
                .package("packageB", "alpha")
                .channel("packageB", "alpha", {"packageB.v1", "packageB.v2!packageB.v1"})
                .bundle("packageB", "packageB.v1", "1.0.0", {"req:g/v/k"})
                .bundle("packageB", "packageB.v2", "2.0.0", {"req:g/v/k"})
                .package("packageA", "alpha")
                .channel("packageA", "alpha",
                         {"packageA.v1", "packageA.v2<packageA.v1", "packageA.v3<packageA.v2",
                          "packageA.v4<packageA.v3!packageA.v3",
                          "packageA.v5<packageA.v4!packageA.v2,packageA.v3,packageA.v4",
                          "packageA.v6<packageA.v5"});
    for (int i = 1; i <= 6; ++i)
        c.bundle("packageA", "packageA.v" + std::to_string(i), std::to_string(i) + ".0.0",
                 {"gvk:g/v/k"});
    World w;
    w.add("community", c);
    auto start = w.run({"packageB:alpha"}, {}, Opts().starting_csv("packageB.v1")).take();
    ASSERT_TRUE(start.satisfiable) << explain(start);
    EXPECT_EQ(picks(start), (Strings{"packageA.v6", "packageB.v1"}));
    auto plain = w.run({"packageB:alpha"}).take();
    EXPECT_EQ(pick(plain, "packageB"), "packageB.v2");
    // The chain from packageA.v6 offers v6, v5 and v1: v2, v3 and v4 are skipped.
    EXPECT_EQ(pick(w.run({"packageA@<5.0.0"}).take(), "packageA"), "packageA.v1");
}

// TestSolveOperatorsWithSkipsPreventingSelection: the only provider is skipped in its channel.
TEST(OlmScenarios, SkipsPreventingSelection) {
    World w;
    w.add("test-catalog", Cat{}
                              .package("a", "channel")
                              .channel("a", "channel", {"a-1"})
                              .bundle("a", "a-1", "1.0.0", {"req:g/v/k"})
                              .package("b", "channel")
                              .channel("b", "channel", {"b-1", "b-2<b-1", "b-3<b-2!b-1"})
                              .bundle("b", "b-1", "1.0.0", {"gvk:g/v/k"})
                              .bundle("b", "b-2", "2.0.0")
                              .bundle("b", "b-3", "3.0.0"));
    auto r = w.run({"a:channel"}).take();
    ASSERT_FALSE(r.satisfiable);
    std::string t = explain(r);
    EXPECT_NE(t.find("a-1 (a 1.0.0, channel channel, catalog test-catalog) requires API g/v k, "
                     "but nothing offers it"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("b-1 (b 1.0.0, catalog test-catalog) satisfies it but is skipped in channel "
                     "channel (b-3 skips it)"),
              std::string::npos)
        << t;
}

// TestSolveOperatorsWithClusterServiceVersionHavingDependency: an installed CSV's requirement
// holds its dependency back.
TEST(OlmScenarios, InstalledDependencyHoldsBack) {
    World w;
    w.add("cluster", Cat{}
                         .package("a", "default")
                         .channel("a", "default", {"a-1"})
                         .bundle("a", "a-1", "1.0.0", {"pkg:b:1.0.0"}));
    w.add("test-catalog", Cat{}
                              .package("b", "default")
                              .channel("b", "default", {"b-2<b-1"})
                              .bundle("b", "b-2", "2.0.0"));
    auto r = w.run({"b:default"}, {installed("a", "a-1", "1.0.0", "cluster"),
                                   installed("b", "b-1", "1.0.0", "test-catalog", "default")})
                 .take();
    ASSERT_TRUE(r.satisfiable) << explain(r);
    EXPECT_TRUE(r.selected.empty()) << explain(r);
    EXPECT_EQ(r.unchanged, (Strings{"a-1", "b-1"}));
    // b-1 is in no catalog: a warning says its APIs are unknown.
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("b-1 is in no catalog"), std::string::npos);
}

// TestSortChannel: the order OLM offers a channel in, and the channels it cannot order.
TEST(OlmScenarios, SortChannel) {
    auto world = [](const std::vector<std::string>& entries) {
        auto w = std::make_unique<World>();
        Cat c;
        c.package("package", "channel").channel("package", "channel", entries);
        for (const char* n : {"a", "b", "c"})
            c.bundle("package", n,
                     std::string(n) == "a" ? "3.0.0"
                     : n[0] == 'b'         ? "2.0.0"
                                           : "1.0.0");
        w->add("catalog", c);
        return w;
    };
    {
        // a and c both replace b: two heads, two chains.
        auto w = world({"b", "a<b", "c<b!b"});
        auto r = w->run({"package"});
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.error().message.find("2 heads"), std::string::npos) << r.error().message;
    }
    {
        // wrinkle-free: offered from the head down.
        auto w = world({"c", "b<c", "a<b"});
        EXPECT_EQ(pick(w->run({"package"}).take(), "package"), "a");
        EXPECT_EQ(pick(w->run({"package@<3.0.0"}).take(), "package"), "b");
        EXPECT_EQ(pick(w->run({"package@<2.0.0"}).take(), "package"), "c");
    }
    {
        // replacement cycle without a head.
        auto w = world({"a<b", "b<a"});
        auto r = w->run({"package"});
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.error().message.find("has no head"), std::string::npos) << r.error().message;
    }
    {
        // a cycle below the head.
        auto w = world({"a<b", "b<c", "c<b"});
        auto r = w->run({"package"});
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.error().message.find("replaces cycle: a -> b -> c -> b"), std::string::npos)
            << r.error().message;
    }
    {
        // skipped and replaced entry omitted.
        auto w = world({"a<b!b", "b"});
        auto r = w->run({"package@<3.0.0"}).take();
        ASSERT_FALSE(r.satisfiable);
        EXPECT_NE(explain(r).find("b is skipped in channel channel (a skips it)"),
                  std::string::npos)
            << explain(r);
    }
    {
        // skipped entry omitted: a replaces b and skips c, b replaces c.
        auto w = world({"a<b!c", "b<c", "c"});
        EXPECT_EQ(pick(w->run({"package@<3.0.0"}).take(), "package"), "b");
        EXPECT_FALSE(w->run({"package@<2.0.0"}).take().satisfiable);
    }
}
