// resolve/versions: one version per package for a graph of versioned packages (the solver of
// Package Operator's transitive dependencies), on hand-made problems.
#include <gtest/gtest.h>

#include <algorithm>

#include "kpkg/resolve/versions.hpp"

namespace {

using namespace kpkg::resolve::versions;
using kpkg::semver::Version;

Version v(const std::string& s) {
    auto r = Version::parse(s);
    EXPECT_TRUE(r.ok()) << s;
    return r.ok() ? *r : Version{};
}

// [lo, hi] of releases ("" hi: unbounded).
Interval iv(const std::string& lo, const std::string& hi = "") {
    Interval i;
    i.lo = v(lo);
    if (!hi.empty()) i.hi = v(hi);
    return i;
}

Requirement req(const std::string& package, std::vector<Interval> any_of) {
    return {package, std::move(any_of), package + " (test)"};
}

Candidate cand(const std::string& package, const std::string& version,
               std::vector<Requirement> reqs = {}) {
    return {package, v(version), std::move(reqs), package + "@" + version};
}

std::vector<std::string> chosen(const Problem& p) {
    auto o = solve(p);
    EXPECT_TRUE(o.ok()) << (o.ok() ? "" : o.error().str());
    std::vector<std::string> out;
    if (!o.ok() || !o->satisfiable) return out;
    for (std::size_t i : o->chosen)
        out.push_back(p.candidates[i].label);
    return out;
}

TEST(ResolveVersions, IntervalsAndPreReleases) {
    EXPECT_TRUE(contains(iv("1.0.0", "2.0.0"), v("1.0.0")));
    EXPECT_TRUE(contains(iv("1.0.0", "2.0.0"), v("2.0.0")));
    EXPECT_FALSE(contains(iv("1.0.0", "2.0.0"), v("2.0.1")));
    // A pre-release of M.m.p lies in [lo, hi] when lo < M.m.p <= hi.
    EXPECT_FALSE(contains(iv("1.0.0", "2.0.0"), v("1.0.0-rc.1")));
    EXPECT_TRUE(contains(iv("1.0.0", "2.0.0"), v("2.0.0-rc.1")));
    EXPECT_TRUE(contains(iv("1.0.0"), v("99.0.0-alpha")));
}

TEST(ResolveVersions, NewestFirstUnlessItBreaksTheGraph) {
    Problem p;
    p.root = "root";
    p.requires_ = {req("a", {iv("0.0.0")})};
    // In preference order: a 2 needs b in [2, 3], a 1 needs b in [1, 1.9]; only b 1.5 exists.
    p.candidates = {cand("a", "2.0.0", {req("b", {iv("2.0.0", "3.0.0")})}), cand("b", "1.5.0"),
                    cand("a", "1.0.0", {req("b", {iv("1.0.0", "1.9.0")})})};
    EXPECT_EQ(chosen(p), (std::vector<std::string>{"b@1.5.0", "a@1.0.0"}));
    // With b 2.5 too, the newest a.
    p.candidates.insert(p.candidates.begin() + 1, cand("b", "2.5.0"));
    EXPECT_EQ(chosen(p), (std::vector<std::string>{"a@2.0.0", "b@2.5.0"}));
}

TEST(ResolveVersions, SeveralIntervalsArePrereleasesAware) {
    Problem p;
    p.root = "root";
    // b in [0, 0.9] or [3, inf): 3.0.0-rc.1 is below 3.0.0, so not in it; 0.5.0 is.
    p.requires_ = {req("b", {iv("0.0.0", "0.9.0"), iv("3.0.0")})};
    p.candidates = {cand("b", "3.0.0-rc.1"), cand("b", "2.0.0"), cand("b", "0.5.0")};
    EXPECT_EQ(chosen(p), (std::vector<std::string>{"b@0.5.0"}));
}

TEST(ResolveVersions, NoSolutionIsExplainedWithChains) {
    Problem p;
    p.root = "root";
    p.requires_ = {req("a", {iv("0.0.0")}), req("b", {iv("2.0.0")})};
    p.candidates = {cand("a", "1.0.0", {req("b", {iv("0.0.0", "1.9.0")})}), cand("b", "2.0.0"),
                    cand("b", "1.0.0")};
    auto o = solve(p);
    ASSERT_TRUE(o.ok()) << o.error().str();
    EXPECT_FALSE(o->satisfiable);
    const auto& e = o->explanation;
    auto has = [&](const std::string& s) { return std::find(e.begin(), e.end(), s) != e.end(); };
    std::string all;
    for (const auto& s : e)
        all += s + "\n";
    EXPECT_TRUE(has("root requires b (test)")) << all;
    EXPECT_TRUE(has("root -> a@1.0.0 requires b (test)")) << all;
    // The root's requirements come first.
    ASSERT_FALSE(e.empty());
    EXPECT_EQ(e[0].rfind("root requires ", 0), 0u) << all;
}

TEST(ResolveVersions, CyclesTerminate) {
    Problem p;
    p.root = "root";
    p.requires_ = {req("a", {iv("0.0.0")})};
    p.candidates = {cand("a", "1.0.0", {req("b", {iv("0.0.0")})}),
                    cand("b", "1.0.0", {req("a", {iv("1.0.0", "1.0.0")})})};
    EXPECT_EQ(chosen(p), (std::vector<std::string>{"a@1.0.0", "b@1.0.0"}));
}

} // namespace
