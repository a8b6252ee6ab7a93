// Questions asked of a loaded catalog: what packages, channels and bundles it has, and the
// channel semantics the analyses share (heads, the replaces chain, stranded entries), on the
// compact model. All linear in the size of what they look at; none recurses.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::catalog {

// The entries of a channel that no entry of it replaces or skips, sorted by name, each once.
// A well-formed channel has exactly one.
std::vector<model::Str> channel_heads(const model::Catalog& c, const model::Channel& ch);

// The replaces chain of a channel with exactly one head: the head, then the entry it replaces,
// and so on while the entry replaced is in the channel and no entry skips it; it stops before
// an entry already on the chain (a replaces cycle). Empty unless the channel has one head.
std::vector<model::Str> replaces_chain(const model::Catalog& c, const model::Channel& ch);

// The entries that can never be upgraded to: neither on the replaces chain nor skipped by any
// entry; sorted by name, each once; empty unless the channel has exactly one head.
std::vector<model::Str> stranded_entries(const model::Catalog& c, const model::Channel& ch);

// Sorted names of strings, for output.
std::vector<std::string> names_of(const model::Catalog& c, const std::vector<model::Str>& ids);

struct PackageRow {
    std::string name;
    std::string default_channel;
    std::size_t channels = 0;
    std::size_t bundles = 0;
    std::string head; // head of the default channel; "" when it has none or several
};

struct ChannelRow {
    std::string package;
    std::string name;
    std::vector<std::string> heads;
    std::size_t entries = 0;
};

struct BundleRow {
    std::string package;
    std::string channel;
    std::string name;
    std::string version;
    std::string replaces;
    std::vector<std::string> skips;
    std::string skip_range;
    std::string image;
};

// Rows sorted by package, then channel, then bundle name. `package`, when given, must name a
// package of the catalog (else an invalid-input error suggesting the closest name).
std::vector<PackageRow> list_packages(const model::Catalog& c);
Result<std::vector<ChannelRow>> list_channels(const model::Catalog& c,
                                              const std::optional<std::string>& package);
Result<std::vector<BundleRow>> list_bundles(const model::Catalog& c,
                                            const std::optional<std::string>& package);

} // namespace kpkg::catalog
