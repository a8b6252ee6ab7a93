// The File-Based Catalog wire format (declarative config, opm's declcfg): one value per blob,
// as written, with the raw blob kept for writing it back. The compact model the analyses work on
// is kpkg/model/catalog.hpp.
// Validation and the upgrade graph are built on top of these plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kpkg/core/error.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::declcfg {

inline constexpr const char* schema_package = "olm.package";
inline constexpr const char* schema_channel = "olm.channel";
inline constexpr const char* schema_bundle = "olm.bundle";
inline constexpr const char* schema_deprecations = "olm.deprecations";

struct Property {
    std::string type;
    io::Node value;
};

struct RelatedImage {
    std::string name;
    std::string image;
};

struct ChannelEntry {
    std::string name;
    std::string replaces;
    std::vector<std::string> skips;
    std::string skip_range;
    SourcePos pos;
};

struct Package {
    std::string name;
    std::string default_channel;
    std::string description;
    io::Node raw; // the whole blob, for writing it back
    SourcePos pos;
};

struct Channel {
    std::string package;
    std::string name;
    std::vector<ChannelEntry> entries;
    io::Node raw;
    SourcePos pos;
};

struct Bundle {
    std::string package;
    std::string name;
    std::string image;
    std::vector<Property> properties;
    std::vector<RelatedImage> related_images;
    io::Node raw;
    SourcePos pos;

    // The version of the bundle's olm.package property, if it has exactly one.
    std::optional<std::string> version() const;
};

// A blob of a schema kpkg does not model (including olm.deprecations for now): kept as written.
struct Other {
    std::string schema;
    std::string package;
    std::string name;
    io::Node raw;
    SourcePos pos;
};

struct DeclarativeConfig {
    std::vector<Package> packages;
    std::vector<Channel> channels;
    std::vector<Bundle> bundles;
    std::vector<Other> others;
};

} // namespace kpkg::declcfg
