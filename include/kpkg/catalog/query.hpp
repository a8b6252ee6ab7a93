// Questions asked of a loaded catalog: what packages, channels and bundles it has.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/model/fbc.hpp"

namespace kpkg::catalog {

// The entries of a channel that no other entry replaces or skips. A well-formed channel has
// exactly one.
std::vector<std::string> channel_heads(const declcfg::Channel& ch);

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
std::vector<PackageRow> list_packages(const declcfg::DeclarativeConfig& cfg);
Result<std::vector<ChannelRow>> list_channels(const declcfg::DeclarativeConfig& cfg,
                                              const std::optional<std::string>& package);
Result<std::vector<BundleRow>> list_bundles(const declcfg::DeclarativeConfig& cfg,
                                            const std::optional<std::string>& package);

} // namespace kpkg::catalog
