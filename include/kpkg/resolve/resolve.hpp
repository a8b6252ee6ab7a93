// Offline dependency resolution with the semantics of OLM's v0 resolver (../shared/design/OLM.md).
//
// Solver-neutral values: a Request (OLM Subscriptions, the installed CSVs, options) goes in; a
// Resolution comes out, either the selected bundles with the reason each was selected, or the
// problems as a tree in domain words (package, channel, bundle, API, version range). Candidates
// are computed here in C++ from the catalogs, in OLM's order; libsolv (loaded on first use) is
// the satisfiability engine behind resolve(), and nothing of it shows in this header.
//
// What OLM does and kpkg reproduces:
//  - A subscription is offered the entries of its package's channels in replaces order from the
//    head (default channel first, then the others by name; only its channel when it names one),
//    catalog by catalog (highest --priority first, then by name). An entry that another entry of
//    the channel skips, or that is not on the replaces chain from the head, is never offered
//    through that channel. A channel with several heads or a replaces cycle is an error.
//  - A bundle needs, for every olm.gvk.required, olm.package.required, olm.label.required and
//    olm.constraint property, one bundle satisfying it, preferring installed operators, then its
//    own catalog, then the others by priority and name; inside a catalog default channels first,
//    then by package and channel name, each channel in replaces order from its head.
//  - At most one bundle per package and one provider per API (group/version/kind). Bundles with
//    the legacy olm.deprecated property are never chosen.
//  - Choice: OLM's solver takes the choices breadth first (installed operators' dependencies,
//    then each subscription, then the dependencies of what was chosen, in property order) and
//    takes for each the first candidate, in preference order, that still leaves a solution; a
//    choice already met by a chosen bundle adds nothing. Then it keeps what it chose and drops
//    every other bundle (the fewest extra bundles). kpkg does the same, asking libsolv whether a
//    solution remains; the result never depends on the order of files, blobs or arguments.
//  - An installed CSV with a subscription (a request for its package, or --upgrade) is offered
//    the entries that replace or skip it or whose skipRange covers its version, then itself last;
//    OLM moves one such hop per InstallPlan. Installed CSVs without a subscription stay as they
//    are and take part as they are (their APIs, their dependencies).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/core/semver.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::resolve {

// A catalog taking part in a resolution.
struct CatalogSource {
    std::string name;
    const model::Catalog* catalog = nullptr;
    int priority = 0; // higher first (a CatalogSource's spec.priority)
};

// "[NAME=]PATH" of --catalog. Without NAME, the catalog is named after its directory (for a
// file: the file name without its extension; "-" is "stdin"). Usage error (exit 2) when empty.
Result<std::pair<std::string, std::string>> parse_catalog_spec(std::string_view spec);
// "NAME=N" of --priority: N a decimal integer, possibly negative. Usage error (exit 2) otherwise.
Result<std::pair<std::string, int>> parse_priority(std::string_view spec);
// Applies priorities to catalogs by name; an unknown name is a usage error naming the closest.
// Checks that names are unique and that every catalog is loaded, clean and not empty (exit 3).
Result<void> check_catalogs(std::vector<CatalogSource>& catalogs,
                            const std::vector<std::pair<std::string, int>>& priorities = {});

// --source NAME (the catalog of requests that name none): usage error (exit 2) naming the
// catalogs when none has that name.
Result<void> check_source(const std::vector<CatalogSource>& catalogs, const std::string& name);

// One OLM Subscription: "PKG[:CHANNEL][@RANGE][/CATALOG]". The range (blang/semver, as OLM
// ranges) keeps only candidates whose version it contains; the catalog (a Subscription's
// spec.source) offers the package alone, its dependencies still come from every catalog.
struct Subscription {
    std::string spec; // as written
    std::string package;
    std::string channel; // "" for every channel, default first
    std::string range_text;
    std::optional<semver::Range> range;
    std::string source;       // "" for every catalog, by priority then name
    std::string starting_csv; // with nothing installed, offer only this bundle (Subscription
                              // spec.startingCSV)
};

// Invalid input (exit 3) when the package is empty, the channel is empty after ':', the catalog
// is empty after '/', or the range does not parse (the message quotes it and says why). A catalog
// that is not given is an error of resolve() (it names the catalogs there are).
Result<Subscription> parse_subscription(std::string_view spec);
// The request with `source` as its catalog when it names none ("--source"); its spec then ends
// with "/SOURCE", so that the lockfile records it.
void default_source(Subscription& s, const std::string& source);

// An installed ClusterServiceVersion. Its properties (APIs, dependencies) are those of the bundle
// of that name in `catalog` (or in the first catalog that has it); `channel` is the channel its
// subscription follows when it is upgraded ("" for every channel).
struct Installed {
    std::string package;
    std::string name;
    std::string version;
    std::string catalog; // optional
    std::string channel; // optional
    SourcePos pos;       // where it is written, for errors
};

// The --installed file: a YAML (or JSON) document
//   installed:
//     - package: etcd
//       name: etcdoperator.v0.9.2
//       version: 0.9.2
//       catalog: operators        # optional
//       channel: stable           # optional
// Errors (exit 3) name the file, line and column: not a mapping, unknown or missing fields,
// wrong types, a version that is not a semantic version, a package listed twice.
Result<std::vector<Installed>> parse_installed(const io::Node& doc, const std::string& file);
// The list in a single-file tree (io::FileTree, io::StdinTree), named as the tree names it.
Result<std::vector<Installed>> load_installed(const io::Tree& file);
// The same for a path ("-": standard input).
Result<std::vector<Installed>> load_installed(const std::filesystem::path& path);

struct Options {
    // Subscribe every installed CSV (in its channel and catalog when given) and move it forward.
    bool upgrade = false;
    // One hop per operator, as one OLM InstallPlan does; without it, hops are repeated until
    // nothing moves (the state a cluster reaches after approving every InstallPlan).
    bool one_hop = false;
    // Leave out candidates deprecated by an olm.deprecations blob (package, channel or bundle).
    bool exclude_deprecated = false;
    // Bundles to start from (Subscription spec.startingCSV), each applied to the request of its
    // package; only when that package is not installed.
    std::vector<std::string> starting_csvs;
    // Write the libsolv testcase of the final solve into this directory (empty: none).
    std::filesystem::path debug_testcase;
};

struct Request {
    std::vector<Subscription> subscriptions;
    std::vector<Installed> installed;
    Options options;
};

struct Selected {
    std::string package;
    std::string bundle;
    std::string version;
    std::string channel;
    std::string catalog;
    std::string image;
    // "requested", "required by B for API G/V Kind", "required by B for package P in range R",
    // "required by B for label L", "required by B for constraint C", "upgrade of installed X".
    std::string reason;
    std::string replaces;          // the installed CSV this bundle upgrades, "" for a new install
    std::vector<std::string> path; // for upgrades: every bundle stepped through, this one last
};

// A node of the explanation tree.
struct Problem {
    std::string message;
    std::vector<Problem> children;
};

struct Resolution {
    bool satisfiable = false;
    std::vector<Selected> selected; // by package name
    // Installed CSVs that stay as they are.
    std::vector<std::string> unchanged;
    // Deprecations (olm.deprecations) of what was selected, installed CSVs not found in any
    // catalog, and the like: things to know that do not prevent the result.
    std::vector<std::string> warnings;
    std::vector<Problem> problems; // when not satisfiable
};

// Resolves the request. Errors: invalid input (exit 3) for an unknown package or channel (with
// the nearest names), a starting CSV that is not in its package, a channel with several heads
// or a replaces cycle, a dependency range or olm.constraint that does not parse; usage (exit 2)
// when there is nothing to resolve. An unsatisfiable request is not an error: the Resolution
// says so and explains why.
Result<Resolution> resolve(const std::vector<CatalogSource>& catalogs, const Request& request);

// Every package of the catalogs resolved on its own (a request for the package, no installed
// CSVs): which are installable, with what, and why the others are not.
struct PackageReport {
    enum class Status { installable, unsatisfiable, invalid };
    std::string package;
    Status status = Status::installable;
    std::vector<Selected> selected;
    std::vector<std::string> warnings;
    std::vector<Problem> problems; // unsatisfiable: the tree; invalid: the error
};
const char* status_name(PackageReport::Status s); // "installable", "unsatisfiable", "invalid"

Result<std::vector<PackageReport>> resolve_all_packages(const std::vector<CatalogSource>& catalogs,
                                                        const Options& options = {});

// --- output ------------------------------------------------------------------------------------

// {selected: [{package, bundle, version, channel, catalog, image, reason, replaces?, path?}],
//  unchanged: [...], warnings: [...], problems: [{message, children}]}
io::Node resolution_node(const Resolution& r);
// A table of what is installed or upgraded and why, then warnings; or "no solution" and the
// problem tree.
std::string resolution_text(const Resolution& r);
// The problem tree drawn with ├─ └─ │, one problem per root.
std::string problems_text(const std::vector<Problem>& problems, const std::string& indent = "");
// {packages: [{package, status, selected, warnings, problems}], installable, unsatisfiable,
// invalid}
io::Node packages_node(const std::vector<PackageReport>& reports);
std::string packages_text(const std::vector<PackageReport>& reports);

} // namespace kpkg::resolve
