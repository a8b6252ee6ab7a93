// resolve/versions: one version per package for a graph of versioned packages, solved with
// libsolv (the adapter of src/resolve/solv.hpp). Package Operator's transitive dependencies
// (pko/deps) are such a graph: a root requires packages within version ranges, and every
// candidate version may require further packages within ranges of its own.
//
// Encoding: a candidate is a solvable named by its package, whose version is its SemVer version
// in the rpm scheme (a pre-release "1.2.3-rc.1" as "1.2.3~rc.1", below 1.2.3 and above every
// 1.2.2; build metadata dropped); libsolv keeps at most one solvable per name. A requirement is
// a dependency on the package name: each interval [lo, hi] is (p >= lo with p <= hi) (p >= lo
// alone when unbounded above), several intervals are joined by "or". So a pre-release of
// M.m.p lies in [lo, hi] when lo < M.m.p <= hi, as pkg.package-operator.run/semver has it. The
// root is a solvable of its own, to be installed.
//
// Choice: a solution is looked for first; then, as OLM and deppy choose, the requirements are
// taken breadth first from the root's, in order: one already met by a chosen candidate is done,
// otherwise its first candidate (in the caller's preference order) that still leaves a solution
// with everything chosen so far is chosen, and its own requirements are queued. The chosen
// candidates are closed under requirements and together a solution; nothing else is installed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/core/semver.hpp"

namespace kpkg::resolve::versions {

// Releases from lo to hi, both included (no hi: unbounded above).
struct Interval {
    semver::Version lo;
    std::optional<semver::Version> hi;
};

struct Requirement {
    std::string package;
    std::vector<Interval> any_of; // empty: no version can meet it
    std::string words;            // how explanations name it: `b.r ">=1 <2"`
};

struct Candidate {
    std::string package;
    semver::Version version;
    std::vector<Requirement> requires_;
    std::string label; // how explanations name it: "b.r@1.2.0"
};

struct Problem {
    std::string root;                   // how explanations name the root
    std::vector<Requirement> requires_; // the root's
    // Every candidate a requirement may need, most preferred first (within a package, the one
    // to choose when it can be); at most one per (package, version).
    std::vector<Candidate> candidates;
};

struct Outcome {
    bool satisfiable = false;
    std::vector<std::size_t> chosen; // indexes into Problem::candidates, ascending
    // When not satisfiable: the requirements in conflict, each with the chain that leads to its
    // requirer ("main -> a.r@2.0.0 requires b.r \"<2\""), and the candidates that exclude each
    // other.
    std::vector<std::string> explanation;
};

// Whether the version lies in the interval (pre-releases as above).
bool contains(const Interval& i, const semver::Version& v);

// Solves the problem. Errors: libsolv cannot be loaded (exit 1); an internal inconsistency.
Result<Outcome> solve(const Problem& problem);

} // namespace kpkg::resolve::versions
