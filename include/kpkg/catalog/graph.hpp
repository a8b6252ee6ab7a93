// The upgrade graph of a package (`kpkg catalog graph`): per channel, which entry a cluster may
// upgrade to from which, and why (replaces, skips, skipRange), with heads and stranded entries.
//
// Edges point the way upgrades go: from the older entry to the one that replaces it, skips it
// or covers its version with its olm.skipRange. An edge may start at a name the channel does not
// list (the tail of a channel usually replaces a bundle that was removed); such names appear as
// nodes with in_channel = false.
//
// Stranded entries: as stranded_entries() in kpkg/catalog/query.hpp (not on the replaces chain
// from the single head, not skipped by any entry).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::catalog {

enum class EdgeKind { replaces, skips, skip_range };
const char* edge_kind_name(EdgeKind k); // "replaces", "skips", "skipRange"

struct Edge {
    std::string from; // the entry upgraded from
    std::string to;   // the entry upgraded to
    EdgeKind kind = EdgeKind::replaces;
    bool operator==(const Edge&) const = default;
    auto operator<=>(const Edge&) const = default;
};

struct GraphEntry {
    std::string name;
    std::string version;    // from the bundle's olm.package property; "" when unknown
    std::string skip_range; // the entry's skipRange as written
    bool in_channel = true; // false: only named by a replaces/skips of an entry
    bool head = false;
    bool stranded = false;
};

struct ChannelGraph {
    std::string package;
    std::string channel;
    std::vector<std::string> heads;  // sorted
    std::vector<GraphEntry> entries; // chain order from the head, then by version, newest first
    std::vector<Edge> edges;         // by the position of `to` in entries, kind, position of `from`
};

// Bundle name -> version (the olm.package property) for the bundles of `package` (the first
// bundle of a name counts).
using VersionMap = std::unordered_map<model::Str, model::Str>;
VersionMap bundle_versions(const model::Catalog& c, model::Str package);

// The upgrade edges of one channel. skipRange edges join entries of the channel whose version
// is in the range; a skipRange that does not parse gives no edges.
std::vector<Edge> upgrade_edges(const model::Catalog& c, const model::Channel& ch,
                                const VersionMap& versions);

// The graph of every channel of `package` (sorted by name), or of `channel` only. An unknown
// package or channel is an invalid-input error naming the closest one.
Result<std::vector<ChannelGraph>> package_graph(const model::Catalog& c, const std::string& package,
                                                const std::optional<std::string>& channel = {});

// Renderings: text for a terminal, Graphviz dot, Mermaid flowchart, and a structured document
// {package, channels: [{name, heads, entries: [{name, version, skipRange, inChannel, head,
// stranded}], edges: [{from, to, kind}]}]}.
std::string graph_text(const std::vector<ChannelGraph>& graphs);
std::string graph_dot(const std::vector<ChannelGraph>& graphs);
std::string graph_mermaid(const std::vector<ChannelGraph>& graphs);
io::Node graph_node(const std::string& package, const std::vector<ChannelGraph>& graphs);

} // namespace kpkg::catalog
