// Lockfiles of `kpkg resolve`: what was asked, the catalogs' content digests and what was
// selected (--lockfile FILE), and reproducing exactly that later (--locked FILE).
//
// The file is YAML:
//   kind: kpkg-resolve-lock
//   version: 1
//   requests: [vault, "etcd@<0.9.4"]          # as written, sorted
//   options: {upgrade: false, oneHop: false, excludeDeprecated: false, startingCSVs: []}
//   installed: [{package, name, version, catalog, channel}]
//   catalogs: [{name, priority, digest: "sha256:..."}]
//   selected: [{package, bundle, version, channel, catalog, image, action, reason,
//               replaces?, path?}]
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/resolve/resolve.hpp"

namespace kpkg::resolve {

struct Lock {
    std::vector<std::string> requests;
    Options options; // upgrade, one_hop, exclude_deprecated, starting_csvs
    std::vector<Installed> installed;
    struct Catalog {
        std::string name;
        int priority = 0;
        std::string digest;
    };
    std::vector<Catalog> catalogs;
    std::vector<Selected> selected;
};

// The lock of a satisfiable resolution.
Lock make_lock(const std::vector<CatalogSource>& catalogs, const Request& request,
               const Resolution& resolution);
io::Node lock_node(const Lock& lock);
std::string lock_yaml(const Lock& lock);

// Errors (exit 3) name the file, line and column: not a lock, an unknown version, missing or
// mistyped fields.
Result<Lock> parse_lock(const io::Node& doc, const std::string& file);
// The lock in a single-file tree (io::FileTree, io::StdinTree), named as the tree names it.
Result<Lock> load_lock(const io::Tree& file);
// The same for a path ("-": standard input).
Result<Lock> load_lock(const std::filesystem::path& path);

struct LockCheck {
    // The lock holds: the same request, and its bundles are still in their catalogs and
    // channels and still a solution of the request; `resolution` is then the locked selection.
    bool holds = false;
    // What drifted, one sentence each (a changed request, a catalog missing, a bundle gone or
    // changed, the locked bundles no longer a solution and why); when the lock holds, what
    // changed without breaking it (catalog digests, what a resolution without the lock would
    // now select) goes to resolution.warnings.
    std::vector<std::string> drift;
    Resolution resolution;
};

// Reproduces the lock for this request against these catalogs.
Result<LockCheck> resolve_locked(const std::vector<CatalogSource>& catalogs, const Request& request,
                                 const Lock& lock);

// What `kpkg resolve --locked` writes with -o json|yaml when the lock does not hold:
// {"holds": false, "drift": [SENTENCE, ...]}. (When it holds, it writes the resolution.)
io::Node drift_node(const LockCheck& check);

} // namespace kpkg::resolve
