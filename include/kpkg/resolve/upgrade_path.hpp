// The upgrades OLM steps through from an installed version (`kpkg upgrade-path`).
//
// At each hop OLM offers the entries that replace the current CSV, skip it, or whose skipRange
// contains its version, in channel order (OLM's candidate order for an installed CSV, see
// resolve.hpp), and takes the first. The walk follows the channel's upgrade graph only:
// dependencies are not resolved here (kpkg resolve --installed --upgrade does that).
#pragma once

#include <string>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/resolve/resolve.hpp"

namespace kpkg::resolve {

struct UpgradePathRequest {
    std::string package;
    std::string from;      // a bundle (CSV) name of the package, or a version
    std::string to;        // optional: a bundle name or a version to reach
    std::string channel;   // optional: only this channel (default: every channel, default first)
    std::string source;    // optional: only this catalog (default: the catalog --from is found in)
    bool shortest = false; // the fewest hops (to `to`, or to where OLM's walk ends)
};

struct UpgradeStep {
    std::string bundle;
    std::string version;
    std::string channel;
    std::string catalog;
    std::string edge;   // "replaces", "skips" or "skipRange"
    std::string detail; // "replaces X", "skips X", "skipRange R contains V"
};

struct UpgradePath {
    std::string package;
    std::string from; // the bundle name ("" when only a version was given)
    std::string from_version;
    std::string to;      // the target asked for ("" when none)
    bool reached = true; // false: `to` cannot be reached; `problems` says why
    std::vector<UpgradeStep> steps;
    std::vector<Problem> problems;
};

// Errors (exit 3): an unknown package or channel, a --from or --to that is neither a bundle of
// the package nor a version (with the nearest names), a channel that cannot be ordered, upgrade
// edges that lead back to a version already passed.
Result<UpgradePath> upgrade_path(const std::vector<CatalogSource>& catalogs,
                                 const UpgradePathRequest& request);

// {package, from: {bundle, version}, to, reached, steps: [{bundle, version, channel, catalog,
// edge, detail}], problems: [{message, children}]}
io::Node upgrade_path_node(const UpgradePath& p);
std::string upgrade_path_text(const UpgradePath& p);

} // namespace kpkg::resolve
