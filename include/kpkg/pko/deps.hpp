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
// Resolution is direct only, as upstream's: a RepositoryEntry carries no dependencies of its own
// (only image, digest, versions, constraints, name), so a chosen package's dependencies are not
// known from the indexes; each package pins its own in its lock when it is built. Since no
// candidate constrains another package, choosing per package is exact, and libsolv (the resolve
// area) is not needed.
#pragma once

#include <cstdint>
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

// LockDependency {name, image, digest, version}: the lock's entry (pko/package.hpp).

struct ResolveInput {
    std::string manifest_name; // names the requester in messages
    std::vector<DependencyRequest> dependencies;
    io::Node constraints; // the manifest's spec.constraints (a list or null)
    std::vector<RepositoryIndex> repositories;
};

// The lock's dependencies, ordered as upstream writes them (chosen versions newest first, then
// package, then the manifest's order). Errors: a bad range or constraint (exit 3); a version of a
// package listed twice across the indexes ("package repository inconsistent", exit 3); no
// solution (exit 4), worded as upstream's solver ("solving package deps: constraints not
// satisfiable: package <manifest> requires package <p> ..."), with every unsatisfied dependency
// and why each candidate was refused in the notes.
Result<std::vector<LockDependency>> resolve_dependencies(const ResolveInput& in);

} // namespace kpkg::pko
