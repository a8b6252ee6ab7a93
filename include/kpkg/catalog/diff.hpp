// What a catalog update changes (`kpkg catalog diff OLD NEW`): packages, channels and bundles
// added or removed, default channels changed, channel heads moved, upgrade edges added or
// removed, and bundles whose image, version or properties changed.
#pragma once

#include <string>
#include <vector>

#include "kpkg/catalog/graph.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::catalog {

struct ChannelChange {
    std::string name;
    std::vector<std::string> old_heads, new_heads; // equal when the head did not move
    std::vector<std::string> entries_added, entries_removed;
    std::vector<Edge> edges_added, edges_removed;
    bool head_moved() const { return old_heads != new_heads; }
};

struct BundleChange {
    std::string name;
    std::string old_version, new_version;
    std::string old_image, new_image;
    bool properties_changed = false; // other than the version
};

struct PackageChange {
    enum class Status { added, removed, changed };
    std::string name;
    Status status = Status::changed;
    std::string old_default_channel, new_default_channel;
    // For an added (removed) package, every channel and bundle it has (had).
    std::vector<std::string> channels_added, channels_removed;
    std::vector<ChannelChange> channels_changed;
    std::vector<std::string> bundles_added, bundles_removed;
    std::vector<BundleChange> bundles_changed;
};

struct CatalogDiff {
    std::vector<PackageChange> packages; // sorted by name; only packages with a change
    bool empty() const { return packages.empty(); }
};

// Bundle properties compare by type and value digest (model::Property::digest: the order of keys
// inside values and the format they were read from do not count).
CatalogDiff diff(const model::Catalog& old_catalog, const model::Catalog& new_catalog);

// Text: one block per package, "+" added, "-" removed, "~" changed, then a summary line.
std::string diff_text(const CatalogDiff& d);

// {packages: [{name, status: "added"|"removed"|"changed",
//              defaultChannel: {old, new} (only when it changed),
//              channels: {added: [string], removed: [string],
//                         changed: [{name, heads: {old: [string], new: [string]},
//                                    entries: {added, removed},
//                                    edges: {added: [{from, to, kind}], removed: [...]}}]},
//              bundles: {added: [string], removed: [string],
//                        changed: [{name, version: {old, new}, image: {old, new},
//                                   propertiesChanged: bool}]}}],
//  summary: {packagesAdded, packagesRemoved, packagesChanged, channelsAdded, channelsRemoved,
//            headsMoved, bundlesAdded, bundlesRemoved, bundlesChanged, edgesAdded,
//            edgesRemoved}}
io::Node diff_node(const CatalogDiff& d);

} // namespace kpkg::catalog
