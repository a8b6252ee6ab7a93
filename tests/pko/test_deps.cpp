// pko/deps: version ranges of pkg.package-operator.run/semver and the build-time dependency
// resolution of kubectl package update (PKO's resolver unit tests, and the corpus package).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "kpkg/io/load.hpp"
#include "kpkg/pko/deps.hpp"
#include "support/support.hpp"

namespace {

using namespace kpkg::pko;
using kpkg::ExitCode;
using kpkg::io::Node;
using kpkg::test::contains;

Node yaml(const std::string& text) {
    auto docs = kpkg::io::parse_yaml(text, "test.yaml");
    EXPECT_TRUE(docs.ok());
    return docs.ok() && !docs->empty() ? (*docs)[0].root : Node{};
}

VersionRange range(const std::string& s) {
    auto r = VersionRange::parse(s);
    EXPECT_TRUE(r.ok()) << s << ": " << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : VersionRange::any();
}

bool in(const std::string& r, std::uint64_t a, std::uint64_t b, std::uint64_t c, bool pre = false) {
    return range(r).contains(a, b, c, pre);
}

TEST(PkoRange, Expansions) {
    EXPECT_TRUE(in(">=1.27.x", 1, 27, 0));
    EXPECT_FALSE(in(">=1.27.x", 1, 26, 9));
    EXPECT_TRUE(in("1.2.x", 1, 2, 99));
    EXPECT_FALSE(in("1.2.x", 1, 3, 0));
    EXPECT_TRUE(in(">1.2.x", 1, 3, 0));
    EXPECT_FALSE(in(">1.2.x", 1, 2, 9));
    EXPECT_TRUE(in(">1.2.3", 1, 2, 4));
    EXPECT_FALSE(in("<2.0.0", 2, 0, 0));
    EXPECT_TRUE(in("<2.0.0", 1, 99, 99));
    EXPECT_TRUE(in("~1.2.3", 1, 2, 9));
    EXPECT_FALSE(in("~1.2.3", 1, 3, 0));
    EXPECT_TRUE(in("^1.2.3", 1, 9, 0));
    EXPECT_FALSE(in("^1.2.3", 2, 0, 0));
    EXPECT_FALSE(in("^0.2.3", 0, 3, 0));
    EXPECT_TRUE(in("1.2 - 1.4.5", 1, 4, 5));
    EXPECT_FALSE(in("1.2 - 1.4.5", 1, 4, 6));
    EXPECT_TRUE(in("1.2.x - 3.x", 3, 99, 1));
    EXPECT_TRUE(in("x-x", 0, 0, 0));
    EXPECT_TRUE(in(">=1.0.0 <2.0.0 || >=3", 3, 1, 0));
    EXPECT_FALSE(in(">=1.0.0, <2.0.0 || >=3", 2, 5, 0));
    EXPECT_FALSE(in("!=1.5.0", 1, 5, 0));
    EXPECT_TRUE(in("!=1.5.0", 1, 5, 1));
    // A pre-release sorts below its release: inside >=1.0.0 <2.0.0, outside >=2.0.0.
    EXPECT_TRUE(in(">=1.0.0 <2.0.0", 1, 5, 0, true));
    EXPECT_FALSE(in(">=2.0.0", 2, 0, 0, true));
}

TEST(PkoRange, Containment) {
    EXPECT_TRUE(range(">=4.11.x").contains(range(">=4.12.x")));
    EXPECT_FALSE(range(">=4.12.x").contains(range(">=4.11.x")));
    EXPECT_TRUE(range("x-x").contains(range("1.x || 3.x")));
    EXPECT_TRUE(range("1.x || 2.x").contains(range("1.5.0 - 2.3.0"))); // adjacent intervals merge
    EXPECT_FALSE(range("1.x || 3.x").contains(range("1.5.0 - 3.0.0")));
}

TEST(PkoRange, Errors) {
    for (const char* bad : {"", ">=asdaa", "1.2.3.4", ">=2 <1", "||", "1.2.3-rc.1"}) {
        auto r = VersionRange::parse(bad);
        EXPECT_FALSE(r.ok()) << bad;
        if (!r.ok()) {
            EXPECT_EQ(r.error().code, ExitCode::invalid);
            EXPECT_TRUE(contains(r.error().message, "invalid version range")) << r.error().message;
        }
    }
}

// --- resolution
// -----------------------------------------------------------------------------------

RepositoryIndex repo(const std::string& name, std::vector<RepositoryEntry> entries) {
    RepositoryIndex idx;
    idx.name = name;
    for (auto& e : entries)
        EXPECT_TRUE(idx.add(std::move(e)).ok());
    return idx;
}

RepositoryEntry entry(const std::vector<std::string>& versions,
                      const std::string& constraints = "") {
    RepositoryEntry e;
    e.name = "deppkg";
    e.image = "image";
    e.digest = "digest";
    e.versions = versions;
    if (!constraints.empty()) e.constraints = yaml(constraints);
    return e;
}

ResolveInput input(const std::string& range, const std::string& constraints = "") {
    ResolveInput in;
    in.manifest_name = "mainpkg";
    in.dependencies = {{"depname", "deppkg.deprepo", range}};
    if (!constraints.empty()) in.constraints = yaml(constraints);
    return in;
}

TEST(PkoDeps, Basic) {
    auto in = input("");
    in.repositories.push_back(repo("deprepo", {entry({"1.0.0", "2.0.0", "3.0.0"})}));
    auto r = resolve_dependencies(in);
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ((*r)[0].name, "depname");
    EXPECT_EQ((*r)[0].image, "image");
    EXPECT_EQ((*r)[0].digest, "digest");
    EXPECT_EQ((*r)[0].version, "3.0.0");
}

TEST(PkoDeps, NoCandidates) {
    auto r = resolve_dependencies(input(""));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::unsatisfiable);
    EXPECT_EQ(r.error().message, "solving package deps: constraints not satisfiable: package "
                                 "mainpkg requires package deppkg.deprepo which has no candidates");
}

TEST(PkoDeps, RangeExcludesEveryVersion) {
    auto in = input(">=4");
    in.repositories.push_back(repo("deprepo", {entry({"1.0.0", "2.0.0", "3.0.0"})}));
    auto r = resolve_dependencies(in);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::unsatisfiable);
    EXPECT_EQ(r.error().message, "solving package deps: constraints not satisfiable: package "
                                 "mainpkg requires package deppkg.deprepo "
                                 "with version constraint >=4 but no available version out of "
                                 "[3.0.0 2.0.0 1.0.0] satisfies this");
}

TEST(PkoDeps, PlatformMatches) {
    auto in = input("", "- platformVersion: {name: platform, range: '>=4.12.x'}\n");
    in.repositories.push_back(
        repo("deprepo", {entry({"3.0.0", "2.0.0", "1.0.0"},
                               "- platform: [platform, formplat]\n"
                               "  platformVersion: {name: platform, range: '>=4.11.x'}\n")}));
    auto r = resolve_dependencies(in);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ((*r)[0].version, "3.0.0");
}

TEST(PkoDeps, PlatformNotMatchingOrNotSupported) {
    auto narrow = input("", "- platformVersion: {name: platform, range: '>=4.11.x'}\n");
    narrow.repositories.push_back(
        repo("deprepo", {entry({"3.0.0", "2.0.0", "1.0.0"},
                               "- platformVersion: {name: platform, range: '>=4.12.x'}\n")}));
    auto r = resolve_dependencies(narrow);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::unsatisfiable);
    EXPECT_EQ(r.error().message, "solving package deps: constraints not satisfiable: package "
                                 "mainpkg requires package deppkg.deprepo "
                                 "but no version satisfies every constraint");
    ASSERT_EQ(r.error().notes.size(), 3u);
    EXPECT_EQ(r.error().notes[0],
              "support for platform \"platform\" within range \">=4.11.x\" is required but "
              "dependency deppkg@3.0.0 for package mainpkg supports only \">=4.12.x\"");

    auto none = input("", "- platformVersion: {name: platform, range: '>=4.11.x'}\n");
    none.repositories.push_back(repo("deprepo", {entry({"3.0.0"})}));
    auto n = resolve_dependencies(none);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().code, ExitCode::unsatisfiable);
    ASSERT_EQ(n.error().notes.size(), 1u);
    EXPECT_EQ(n.error().notes[0],
              "support for platform \"platform\" is required but "
              "dependency deppkg@3.0.0 for package mainpkg does not support it");
}

TEST(PkoDeps, BrokenRangeIsInvalidInput) {
    auto in = input(">=asdaa");
    in.repositories.push_back(repo("deprepo", {entry({"3.0.0"})}));
    auto r = resolve_dependencies(in);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(r.error().message, "dependency \"depname\": invalid version range"))
        << r.error().message;
}

TEST(PkoDeps, OneVersionPerPackageAndUpstreamOrder) {
    ResolveInput in;
    in.manifest_name = "main";
    in.dependencies = {{"a1", "a.r", "<3"}, {"b", "b.r", ""}, {"a2", "a.r", ">=1.5"}};
    RepositoryEntry a = entry({"1.0.0", "2.0.0", "3.0.0"});
    a.name = "a";
    a.image = "quay.io/a";
    RepositoryEntry b = entry({"1.1.0"});
    b.name = "b";
    b.image = "quay.io/b";
    b.digest = "bd";
    in.repositories.push_back(repo("r", {a, b}));
    auto r = resolve_dependencies(in);
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_EQ(r->size(), 3u);
    // a.r at 2.0.0 (the newest both ranges accept) comes before b.r at 1.1.0.
    EXPECT_EQ((*r)[0].name, "a1");
    EXPECT_EQ((*r)[0].version, "2.0.0");
    EXPECT_EQ((*r)[1].name, "a2");
    EXPECT_EQ((*r)[1].version, "2.0.0");
    EXPECT_EQ((*r)[2].name, "b");
    EXPECT_EQ((*r)[2].image, "quay.io/b");

    // Two ranges with nothing in common: unsatisfiable, each candidate explained.
    in.dependencies[2].range = ">=3";
    auto u = resolve_dependencies(in);
    ASSERT_FALSE(u.ok());
    EXPECT_EQ(u.error().code, ExitCode::unsatisfiable);
    EXPECT_EQ(u.error().message, "solving package deps: constraints not satisfiable: package main "
                                 "requires package a.r but no version satisfies every "
                                 "constraint");
    EXPECT_EQ(u.error().notes.front(), "3.0.0 is outside the range \"<3\" of dependency \"a1\"");
}

TEST(PkoDeps, DuplicateVersionAcrossIndexes) {
    auto in = input("");
    in.repositories.push_back(repo("deprepo", {entry({"1.0.0"})}));
    RepositoryEntry other = entry({"1.0.0"});
    other.digest = "other";
    in.repositories.push_back(repo("deprepo", {other}));
    auto r = resolve_dependencies(in);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(r.error().message, "package repository inconsistent version 1.0.0 of package "
                                 "deppkg.deprepo exists multiple times in repository entry");
}

// --- transitive ---------------------------------------------------------------------------------

RepositoryEntry pkg(const std::string& name, const std::vector<std::string>& versions,
                    const std::string& digest) {
    RepositoryEntry e;
    e.name = name;
    e.image = "quay.io/acme/" + name;
    e.digest = digest;
    e.versions = versions;
    return e;
}

// A root "main" with dependencies on packages of repository "r", whose entries' own
// dependencies are given by digest; reads are counted by digest.
struct Graph {
    ResolveInput in;
    std::map<std::string, std::vector<DependencyRequest>> deps; // by digest
    std::map<std::string, int> reads;

    Graph(std::vector<DependencyRequest> root, std::vector<RepositoryEntry> entries) {
        in.manifest_name = "main";
        in.dependencies = std::move(root);
        in.repositories.push_back(repo("r", std::move(entries)));
        in.dependencies_of =
            [this](const RepositoryEntry& e) -> kpkg::Result<std::vector<DependencyRequest>> {
            ++reads[e.digest];
            auto it = deps.find(e.digest);
            if (it == deps.end()) return std::vector<DependencyRequest>{};
            return it->second;
        };
    }
    std::string versions() {
        auto r = resolve_dependencies(in);
        if (!r) return "error: " + r.error().message;
        std::string s;
        for (const auto& d : *r)
            s += (s.empty() ? "" : " ") + d.name + "=" + d.version;
        return s;
    }
};

TEST(PkoDepsTransitive, ConflictForcesAnOlderDirectVersion) {
    // a 2.x needs b >= 2, a 1.x needs b < 2; main wants b < 2 itself: a must be 1.x.
    Graph g({{"a", "a.r", ""}, {"b", "b.r", "<2"}},
            {pkg("a", {"1.0.0", "1.1.0"}, "a1"), pkg("a", {"2.0.0"}, "a2"),
             pkg("b", {"1.0.0", "1.5.0", "2.0.0"}, "b")});
    g.deps["a2"] = {{"b", "b.r", ">=2"}};
    g.deps["a1"] = {{"b", "b.r", "<2"}};
    EXPECT_EQ(g.versions(), "b=1.5.0 a=1.1.0");
    // Every entry read once, whatever the number of its versions; b's entry too (it may have
    // dependencies of its own).
    EXPECT_EQ(g.reads, (std::map<std::string, int>{{"a1", 1}, {"a2", 1}, {"b", 1}}));

    // Without the transitive dependencies, the newest a.
    Graph direct({{"a", "a.r", ""}, {"b", "b.r", "<2"}},
                 {pkg("a", {"1.0.0", "1.1.0"}, "a1"), pkg("a", {"2.0.0"}, "a2"),
                  pkg("b", {"1.0.0", "1.5.0", "2.0.0"}, "b")});
    EXPECT_EQ(direct.versions(), "a=2.0.0 b=1.5.0");
}

TEST(PkoDepsTransitive, DeepChainAndOnlyReachableRangesRead) {
    // main -> a (^1) -> b (~1.2) -> c (<3); c 3.0.0 is newest but out of b's range; a 2.0.0 is
    // outside main's range and never read.
    Graph g({{"a", "a.r", "^1"}}, {pkg("a", {"1.0.0"}, "a1"), pkg("a", {"2.0.0"}, "a2"),
                                   pkg("b", {"1.2.0", "1.2.7"}, "b12"), pkg("b", {"1.3.0"}, "b13"),
                                   pkg("c", {"2.4.0", "3.0.0"}, "c")});
    g.deps["a1"] = {{"b", "b.r", "~1.2"}};
    g.deps["a2"] = {{"z", "z.r", ""}}; // would be an error if read
    g.deps["b12"] = {{"c", "c.r", "<3"}};
    auto r = resolve_dependencies(g.in);
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_EQ(r->size(), 1u); // the lock lists the root's direct dependencies only
    EXPECT_EQ((*r)[0].name, "a");
    EXPECT_EQ((*r)[0].version, "1.0.0");
    EXPECT_EQ((*r)[0].digest, "a1");
    EXPECT_EQ(g.reads.count("a2"), 0u);
    EXPECT_EQ(g.reads.count("b13"), 0u);
    EXPECT_EQ(g.reads["c"], 1);
}

TEST(PkoDepsTransitive, UnsatisfiableChainIsExplained) {
    Graph g({{"a", "a.r", ""}, {"b", "b.r", "<2"}},
            {pkg("a", {"1.0.0"}, "a1"), pkg("b", {"1.0.0", "2.0.0"}, "b")});
    g.deps["a1"] = {{"bee", "b.r", ">=2"}};
    auto r = resolve_dependencies(g.in);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::unsatisfiable);
    EXPECT_TRUE(contains(r.error().message, "solving package deps: constraints not satisfiable"))
        << r.error().message;
    const auto& n = r.error().notes;
    auto has = [&](const std::string& s) { return std::find(n.begin(), n.end(), s) != n.end(); };
    EXPECT_TRUE(has("main requires b.r \"<2\"")) << r.error().str();
    EXPECT_TRUE(has("main -> a.r@1.0.0 requires b.r \">=2\"")) << r.error().str();
}

TEST(PkoDepsTransitive, OneVersionPerPackageAcrossTheGraph) {
    // a and c both need b, in ranges that only meet at 1.5.0.
    Graph g({{"a", "a.r", ""}, {"c", "c.r", ""}},
            {pkg("a", {"1.0.0"}, "a"), pkg("c", {"1.0.0"}, "c"),
             pkg("b", {"1.0.0", "1.5.0", "2.0.0"}, "b")});
    g.deps["a"] = {{"b", "b.r", ">=1.5"}};
    g.deps["c"] = {{"b", "b.r", "<2"}};
    EXPECT_EQ(g.versions(), "a=1.0.0 c=1.0.0");
    auto r = resolve_dependencies(g.in);
    ASSERT_TRUE(r.ok());
    // and with nothing in common: no solution naming both requirers.
    g.deps["c"] = {{"b", "b.r", "<1.5"}};
    auto u = resolve_dependencies(g.in);
    ASSERT_FALSE(u.ok());
    EXPECT_EQ(u.error().code, ExitCode::unsatisfiable);
    const std::string all = u.error().str() + "\n" + [&] {
        std::string s;
        for (const auto& x : u.error().notes)
            s += x + "\n";
        return s;
    }();
    EXPECT_TRUE(contains(all, "main -> a.r@1.0.0 requires b.r \">=1.5\"")) << all;
    EXPECT_TRUE(contains(all, "main -> c.r@1.0.0 requires b.r \"<1.5\"")) << all;
}

TEST(PkoDepsTransitive, MissingTransitivePackageNamesTheChain) {
    Graph g({{"a", "a.r", ""}}, {pkg("a", {"1.0.0"}, "a1"), pkg("b", {"1.0.0"}, "b")});
    g.deps["a1"] = {{"b", "b.r", ""}};
    g.deps["b"] = {{"x", "x.other", ">=1"}};
    auto r = resolve_dependencies(g.in);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::unsatisfiable);
    EXPECT_TRUE(contains(r.error().message, "main -> a.r@1.0.0 -> b.r@1.0.0 -> x.other"))
        << r.error().message;
    EXPECT_TRUE(contains(r.error().message, "in none of the repositories of main (r)"))
        << r.error().message;
}

TEST(PkoDepsTransitive, CycleResolves) {
    Graph g({{"a", "a.r", ""}}, {pkg("a", {"1.0.0", "2.0.0"}, "a"), pkg("b", {"1.0.0"}, "b")});
    g.deps["a"] = {{"b", "b.r", ""}};
    g.deps["b"] = {{"a", "a.r", "1.x"}};
    // b accepts a 1.x only, so a 2.0.0 (which needs b) cannot be: a 1.0.0.
    EXPECT_EQ(g.versions(), "a=1.0.0");
    EXPECT_EQ(g.reads["a"], 1);
    EXPECT_EQ(g.reads["b"], 1);
}

TEST(PkoDepsTransitive, ReadErrorsAndBadRangesNameTheCandidate) {
    Graph g({{"a", "a.r", ""}}, {pkg("a", {"1.0.0"}, "a1")});
    g.in.dependencies_of =
        [](const RepositoryEntry& e) -> kpkg::Result<std::vector<DependencyRequest>> {
        return kpkg::Error::invalid(e.image + ": the manifest is not valid");
    };
    auto r = resolve_dependencies(g.in);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(r.error().str() + r.error().notes.at(0), "main -> a.r@1.0.0"))
        << r.error().str();

    Graph bad({{"a", "a.r", ""}}, {pkg("a", {"1.0.0"}, "a1")});
    bad.deps["a1"] = {{"q", "a.r", ">=nope"}};
    auto b = resolve_dependencies(bad.in);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(b.error().message, "a.r@1.0.0 (quay.io/acme/a@sha256:a1): dependency "
                                            "\"q\": invalid version range"))
        << b.error().message;
}

TEST(PkoDepsTransitive, PlatformsOfTheRootApplyToEveryPackage) {
    Graph g({{"a", "a.r", ""}},
            {pkg("a", {"1.0.0"}, "a"), pkg("b", {"1.0.0"}, "b1"), pkg("b", {"2.0.0"}, "b2")});
    g.in.constraints = yaml("- platform: [Kubernetes]\n");
    g.in.repositories[0].entries[0].constraints = yaml("- platform: [Kubernetes]\n");
    for (auto& e : g.in.repositories[0].entries)
        if (e.digest == "b1") e.constraints = yaml("- platform: [Kubernetes]\n");
    g.deps["a"] = {{"b", "b.r", ""}};
    g.deps["b1"] = {{"a", "a.r", ""}};
    // b 2.0.0 does not support Kubernetes: b 1.0.0 is the one (and b 2.0.0 is never read).
    auto r = resolve_dependencies(g.in);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ(g.reads.count("b2"), 0u);
    EXPECT_EQ(g.reads["b1"], 1);
    // Without b 1.0.0's support, nothing: b 2.0.0 is named as left out.
    for (auto& e : g.in.repositories[0].entries)
        if (e.digest == "b1") e.constraints = {};
    auto u = resolve_dependencies(g.in);
    ASSERT_FALSE(u.ok());
    EXPECT_EQ(u.error().code, ExitCode::unsatisfiable);
    std::string notes;
    for (const auto& x : u.error().notes)
        notes += x + "\n";
    EXPECT_TRUE(contains(notes, "b.r@2.0.0 is left out: support for platform \"Kubernetes\""))
        << notes;
}

TEST(PkoDepsTransitive, PreReleasesAsTheRangesSayInLibsolvToo) {
    // 1.5.0-rc.1 lies in ">=1.2 <2" but not in ">=1.5"; 2.0.0-rc.1 in neither.
    auto graph = [](std::vector<std::string> bs) {
        Graph g({{"a", "a.r", ""}, {"b", "b.r", ">=1.5"}},
                {pkg("a", {"1.0.0"}, "a"), pkg("b", std::move(bs), "b")});
        g.deps["a"] = {{"b", "b.r", ">=1.2 <2"}};
        return g;
    };
    auto g = graph({"1.4.0", "1.5.0-rc.1", "1.6.0", "2.0.0-rc.1"});
    EXPECT_EQ(g.versions(), "b=1.6.0 a=1.0.0");
    auto h = graph({"1.4.0", "1.5.0-rc.1", "2.0.0-rc.1"});
    auto r = resolve_dependencies(h.in);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::unsatisfiable) << r.error().str();
    // The pre-release is the newest a accepts when the root does not narrow b.
    auto k = graph({"1.4.0", "1.5.0-rc.1", "2.0.0-rc.1"});
    k.in.dependencies[1].range = ">=1.2";
    EXPECT_EQ(k.versions(), "b=1.5.0-rc.1 a=1.0.0");
}

TEST(PkoDepsTransitive, ExplanationsNameRangesOfSeveralIntervalsAndEmptyOnes) {
    // a needs b in "<1.5 || >=3" (an "or" for libsolv); main needs b in ">=1.5 <3".
    Graph g({{"a", "a.r", ""}, {"b", "b.r", ">=1.5 <3"}},
            {pkg("a", {"1.0.0"}, "a"), pkg("b", {"1.0.0", "2.0.0", "3.0.0"}, "b")});
    g.deps["a"] = {{"b", "b.r", "<1.5 || >=3"}};
    auto r = resolve_dependencies(g.in);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::unsatisfiable);
    const auto& n = r.error().notes;
    auto has = [&](const std::string& s) { return std::find(n.begin(), n.end(), s) != n.end(); };
    EXPECT_TRUE(has("main -> a.r@1.0.0 requires b.r \"<1.5 || >=3\"")) << r.error().str();
    // ... and it is met when main allows 3.0.0 too.
    g.in.dependencies[1].range = ">=1.5";
    EXPECT_EQ(g.versions(), "b=3.0.0 a=1.0.0");

    // A range no version of the package meets, deep in the graph.
    Graph e({{"a", "a.r", ""}}, {pkg("a", {"1.0.0"}, "a"), pkg("b", {"1.0.0"}, "b")});
    e.deps["a"] = {{"b", "b.r", ">=9"}};
    auto u = resolve_dependencies(e.in);
    ASSERT_FALSE(u.ok());
    EXPECT_EQ(u.error().code, ExitCode::unsatisfiable);
    const auto& m = u.error().notes;
    EXPECT_NE(std::find(m.begin(), m.end(),
                        "main -> a.r@1.0.0 requires b.r \">=9\", which no candidate meets"),
              m.end())
        << u.error().str();
}

TEST(PkoDepsTransitive, LongChainDecidedAtItsEnd) {
    // p0 .. p49, versions 1.0.0 .. 10.0.0; every pN@M needs p(N+1) at major M; main needs any p0
    // and p49 < 4: the whole chain at 3.0.0, each image read once.
    const int n = 50;
    std::vector<RepositoryEntry> entries;
    std::vector<std::string> versions;
    for (int m = 1; m <= 10; ++m)
        versions.push_back(std::to_string(m) + ".0.0");
    // Names built by appending (GCC 12 -O3 warns about "lit" + string, -Wrestrict).
    auto name = [](int i, const char* suffix, int m = 0) {
        std::string s = "p";
        s += std::to_string(i);
        s += suffix;
        if (m > 0) s += std::to_string(m);
        return s;
    };
    for (int i = 0; i < n; ++i)
        for (int m = 1; m <= 10; ++m)
            entries.push_back(
                pkg(name(i, ""), {versions[static_cast<std::size_t>(m - 1)]}, name(i, "-", m)));
    Graph g({{"first", "p0.r", ""}, {"last", name(n - 1, ".r"), "<4"}}, std::move(entries));
    for (int i = 0; i + 1 < n; ++i)
        for (int m = 1; m <= 10; ++m)
            g.deps[name(i, "-", m)] = {{"next", name(i + 1, ".r"), std::to_string(m) + ".x"}};
    EXPECT_EQ(g.versions(), "first=3.0.0 last=3.0.0");
    for (const auto& [digest, count] : g.reads)
        EXPECT_EQ(count, 1) << digest;
}

TEST(PkoDeps, CorpusDependenciesSynthetic) {
    KPKG_REQUIRE_CORPUS(corpus);
    const auto dir = corpus / "pko/dependencies-synthetic";
    auto manifest = kpkg::io::load_file(dir / "manifest.yaml");
    ASSERT_TRUE(manifest.ok());
    const Node& m = (*manifest)[0].root;
    const Node& spec = *m.get("spec");
    ResolveInput in;
    in.manifest_name = m.get("metadata")->get("name")->text;
    in.constraints = *spec.get("constraints");
    for (const auto& d : spec.get("dependencies")->items) {
        const Node& img = *d.get("image");
        in.dependencies.push_back({img.get("name")->text, img.get("package")->text,
                                   img.get("range") ? img.get("range")->text : ""});
    }
    // Upstream's test index has the placeholder digest "digest", which kpkg refuses (see
    // PkoRepo.CorpusIndexLoads): a digest in its place.
    const std::string hex(64, 'd');
    for (const auto& r : spec.get("repositories")->items) {
        auto text = kpkg::test::read_file(dir / r.get("file")->text);
        text.replace(text.find("\"digest\""), 8, hex);
        text.replace(text.find("deppkg.digest"), 13, "deppkg." + hex);
        auto idx = load_repository(text, r.get("file")->text);
        ASSERT_TRUE(idx.ok()) << idx.error().str();
        in.repositories.push_back(std::move(*idx));
    }
    auto got = resolve_dependencies(in);
    ASSERT_TRUE(got.ok()) << got.error().str();

    auto lock = kpkg::io::load_file(dir / "expected.manifest.lock.yaml");
    ASSERT_TRUE(lock.ok());
    const Node& want = *(*lock)[0].root.get("spec")->get("dependencies");
    ASSERT_EQ(got->size(), want.items.size());
    for (std::size_t i = 0; i < want.items.size(); ++i) {
        EXPECT_EQ((*got)[i].name, want.items[i].get("name")->text);
        EXPECT_EQ((*got)[i].image, want.items[i].get("image")->text);
        EXPECT_EQ((*got)[i].digest, want.items[i].get("digest")->text == "digest"
                                        ? hex
                                        : want.items[i].get("digest")->text);
        EXPECT_EQ((*got)[i].version, want.items[i].get("version")->text);
    }
}

} // namespace
