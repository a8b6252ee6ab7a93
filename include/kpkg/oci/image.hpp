// The JSON documents of an image (OCI image spec v1.1, Docker image manifest schema 2): platforms,
// descriptors, manifests, indexes and image configurations. Each parses from the bytes of its blob
// (errors name the blob and the position: Error::invalid, exit 3) and writes back as compact JSON
// in the key order containers/image and the OCI spec's Go types write (so a document kpkg writes
// has the same bytes, and digest, whenever it is written).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::oci {

// What an image runs on, with Go's names (GOOS, GOARCH): linux/amd64, linux/arm64/v8.
struct Platform {
    std::string os;
    std::string architecture;
    std::string variant; // "" when none

    friend bool operator==(const Platform&, const Platform&) = default;

    // "os/architecture[/variant]"; each part non-empty, lower-case letters, digits, '_' and '.'.
    // Errors: Error::usage naming the text and the expected form (a platform comes from a flag).
    static Result<Platform> parse(std::string_view s);
    // "os/architecture" or "os/architecture/variant".
    std::string str() const;
};

// The platform kpkg runs on: linux and the GOARCH name of the CPU it was built for (amd64, arm64,
// ppc64le, s390x, 386, arm, riscv64); arm64 as variant v8, arm as v7.
Platform host_platform();

// Whether an image for `have` runs where `want` is asked for: the same os and architecture, and
// the same variant when `want` names one (arm64's "" and "v8" are the same variant, as
// containerd normalises them).
bool platform_matches(const Platform& want, const Platform& have);

using Annotations = std::map<std::string, std::string>;

// A reference to a blob: its media type, digest and size.
struct Descriptor {
    std::string media_type;
    std::string digest; // "sha256:<hex>"
    std::int64_t size = 0;
    std::optional<Platform> platform; // index entries
    Annotations annotations;
};

struct Manifest {
    std::string media_type; // media::oci_manifest or media::docker_manifest
    Descriptor config;
    std::vector<Descriptor> layers;
    Annotations annotations;
};

struct Index {
    std::string media_type; // media::oci_index or media::docker_manifest_list
    std::vector<Descriptor> manifests;
    Annotations annotations;
};

// An image's configuration: the fields kpkg reads and writes, and the whole document as parsed
// (`raw`), so that an image built on a base keeps the base's other fields (history, user, ...).
struct ImageConfig {
    std::string architecture, os, variant;
    std::map<std::string, std::string> labels;
    std::vector<std::string> entrypoint, cmd, env;
    std::string working_dir;
    std::vector<std::string> diff_ids; // rootfs.diff_ids: the uncompressed layers' digests
    io::Node raw;                      // null when built in code
};

// The label of an image's config (Labels), or nullptr.
const std::string* label(const ImageConfig& c, std::string_view key);

// Parsing. `name` is how errors name the document ("blob sha256:…", "dir/index.json").
// A manifest without mediaType (allowed by the OCI spec) takes `expected_media_type` when given
// (the descriptor's), else is an OCI manifest. Errors (Error::invalid): not JSON, not an object,
// schemaVersion not 2, a media type that is not this kind of document, a missing or mistyped
// field, a digest that is not "algorithm:hex" (sha256 with 64 lower-case hex digits), a negative
// size, a config media type that is not an image config, a layer media type kpkg cannot read.
Result<Manifest> parse_manifest(std::string_view bytes, const std::string& name,
                                std::string_view expected_media_type = {});
// An index's entries may have any media type (attestations, artifacts); select_manifest only
// considers manifests.
Result<Index> parse_index(std::string_view bytes, const std::string& name,
                          std::string_view expected_media_type = {});
Result<ImageConfig> parse_config(std::string_view bytes, const std::string& name);

// Compact JSON, keys in the order containers/image writes them (schemaVersion, mediaType, config,
// layers, annotations; a descriptor's mediaType, digest, size, annotations, platform), maps with
// sorted keys. Strings escaped as Go's encoding/json escapes them (HTML characters included).
std::string to_json(const Descriptor& d);
std::string to_json(const Manifest& m);
std::string to_json(const Index& i);
// The config: `raw`'s fields in their order with the known fields set to this struct's values
// (fields that are empty here and absent from raw are left out); a config built in code writes
// architecture, variant, os, config {Env, Entrypoint, Cmd, WorkingDir, Labels},
// rootfs {type: "layers", diff_ids}.
std::string to_json(const ImageConfig& c);

// The manifest of `index` for `platform` (the first that matches). Error::invalid when none
// does, naming the platform asked for and listing those the index has ("index <name> has no
// image for linux/s390x; it has linux/amd64, linux/arm64/v8"). An index whose single manifest
// names no platform gives that manifest.
Result<Descriptor> select_manifest(const Index& index, const Platform& platform,
                                   const std::string& name = "image index");

} // namespace kpkg::oci
