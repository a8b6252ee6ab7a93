// pko/deps: Package Operator's dependency resolution at build time (kubectl package update):
// spec.dependencies [{image{name, package "<entry name>.<repository name>", range}}] against the
// repository indexes of spec.repositories, giving the lock's spec.dependencies
// [{name, image, digest, version}].
//
// As upstream (internal/packages/internal/packageresolving):
// - every version of every entry of every index is a candidate "<data.name>.<repository>";
// - a dependency needs one candidate of its package whose version is in its range (empty: any);
// - one version per package (two dependencies on one package share it);
// - a candidate must support every platform the manifest's spec.constraints name, over the whole
//   range the manifest gives (a candidate's platforms come from its entry's data.constraints);
// - the newest acceptable version is chosen.
// Ranges and versions follow pkg.package-operator.run/semver, the library the resolver uses (not
// Masterminds, whose check-only constraints cannot say whether one range contains another):
// versions are strict SemVer without "v"; ranges are interval expressions (=, !=, >, >=, <, <=, ~,
// ^, hyphen ranges, x/X/* wildcards, AND by space or ",", OR by "||"); a pre-release inside an
// interval matches.
//
// Resolution is transitive (upstream's is direct only): a RepositoryEntry carries no
// dependencies of its own (only image, digest, versions, constraints, name), so a candidate's
// dependencies are read from its package image's manifest (ResolveInput::dependencies_of, given
// by the CLI: image@sha256:digest through the registry and the blob cache). Only candidates
// within a range reachable from the root (and allowed by the root's platforms) are read, each
// digest once. Their dependencies name packages "<entry>.<repository>" of the ROOT's
// repositories (a dependency's own spec.repositories are not read: the root decides where
// packages come from); a name found in none of them is an error naming the chain
// (root -> a.r@1.0.0 -> x.r). The root's platform constraints apply to every package of the
// graph. One version per package across the graph, newest preferred: resolve/versions solves it
// with libsolv, choosing breadth first from the root's dependencies as OLM and deppy do. When no
// candidate reached has dependencies, the per-package choice is exact and libsolv is not loaded.
// Failures of the root's own dependencies keep upstream's wording; a conflict deeper in the graph
// is explained with the requirements in conflict, each with its chain from the root.
// The lock lists the root's direct dependencies only (upstream's format); the transitive ones
// only constrain the choice.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/pko/package.hpp"
#include "kpkg/pko/repo.hpp"

namespace kpkg::pko {

// A version range of pkg.package-operator.run/semver, as closed intervals of MAJOR.MINOR.PATCH.
class VersionRange {
public:
    struct Triple {
        std::uint64_t major = 0, minor = 0, patch = 0;
        friend auto operator<=>(const Triple&, const Triple&) = default;
    };
    struct Interval {
        Triple lo, hi;
    };

    // Errors (exit 3) quote the input and say what is wrong.
    static Result<VersionRange> parse(std::string_view text);
    // Any version ("x-x").
    static VersionRange any();

    // Whether the version (strict SemVer, pre-release allowed) lies in one of the intervals.
    bool contains(std::uint64_t major, std::uint64_t minor, std::uint64_t patch,
                  bool prerelease) const;
    // Whether every version of `other` is in this range.
    bool contains(const VersionRange& other) const;
    bool empty() const { return intervals_.empty(); }

    const std::string& text() const { return text_; }
    const std::vector<Interval>& intervals() const { return intervals_; }

private:
    std::vector<Interval> intervals_; // sorted, merged
    std::string text_;
};

struct DependencyRequest {
    std::string name;    // the key in .dependencies and in the lock
    std::string package; // "<entry name>.<repository name>"
    std::string range;   // "" for any version
};

// A manifest's spec.dependencies (null or not a list: none): every item's image.name,
// image.package and image.range ("" when absent or not a string).
std::vector<DependencyRequest> dependency_requests(const io::Node* dependencies);

// LockDependency {name, image, digest, version}: the lock's entry (pko/package.hpp).

// The spec.dependencies of the package image of a repository entry (image@sha256:digest).
using ReadDependencies =
    std::function<Result<std::vector<DependencyRequest>>(const RepositoryEntry& entry)>;

struct ResolveInput {
    std::string manifest_name; // names the requester in messages
    std::vector<DependencyRequest> dependencies;
    io::Node constraints; // the manifest's spec.constraints (a list or null)
    std::vector<RepositoryIndex> repositories;
    // Reads a candidate's own dependencies, for candidates the root reaches only, once per
    // digest. Unset: candidates are taken to have none (direct resolution).
    ReadDependencies dependencies_of;
};

// The lock's dependencies, ordered as upstream writes them (chosen versions newest first, then
// package, then the manifest's order). Errors: a bad range or constraint (exit 3); a version of a
// package listed twice across the indexes ("package repository inconsistent", exit 3); no
// solution (exit 4), worded as upstream's solver ("solving package deps: constraints not
// satisfiable: package <manifest> requires package <p> ..."), with every unsatisfied dependency
// and why each candidate was refused in the notes.
Result<std::vector<LockDependency>> resolve_dependencies(const ResolveInput& in);

} // namespace kpkg::pko
