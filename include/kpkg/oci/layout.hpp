// Images on disk, as containers/image (skopeo, podman, opm) names and writes them, to and from
// oci::Content; and an image as an io::Tree.
//
//   oci:DIR[:TAG]              an OCI image layout directory: oci-layout
//                              ({"imageLayoutVersion":"1.0.0"}), index.json (the tag in the
//                              annotation org.opencontainers.image.ref.name), blobs/sha256/<hex>;
//                              written with OCI media types only (with_oci_media_types)
//   oci-archive:FILE[:TAG]     a tar of such a directory
//   docker-archive:FILE[:REF]  `docker save`'s format: manifest.json
//                              [{"Config":"<hex>.json","RepoTags":["REF"],"Layers":["<hex>.tar"]}]
//                              with the config and the layers (uncompressed when kpkg writes them;
//                              compressed or not when it reads them)
//
// Writing is atomic: a new directory is assembled under a temporary name beside it and renamed;
// an existing OCI layout gets the new blobs (each written atomically; those added are removed
// again if a later step fails) and then its index.json replaced, with an entry of the same tag
// replaced as skopeo does; an existing empty directory is replaced like a new one; any other
// existing directory is refused. Archives are written to a temporary file and renamed.
//
// Reading verifies every blob: its size against its descriptor before it is read (and against
// the limits), its digest once read (a docker-archive's layers against the config's diff_ids).
// Errors name the blob and the file. Only sha256 digests are read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/oci/content.hpp"
#include "kpkg/oci/extract.hpp"
#include "kpkg/oci/image.hpp"
#include "kpkg/oci/layer.hpp"
#include "kpkg/oci/location.hpp"
#include "kpkg/oci/media_types.hpp"

namespace kpkg::io {
class MemoryTree;
}

namespace kpkg::oci {

// The annotation of an index.json entry naming its tag.
inline constexpr std::string_view ref_name_annotation = "org.opencontainers.image.ref.name";

// Where an image is on disk.
struct LayoutRef {
    enum class Kind : std::uint8_t { oci_dir, oci_archive, docker_archive };
    Kind kind = Kind::oci_dir;
    std::filesystem::path path;
    std::string tag; // oci: the ref.name; docker-archive: "name:tag" (RepoTags); "" when none
};

// Where a Location (location.hpp: oci:, oci-archive:, docker-archive:, and bare layout
// directories and archives) is on disk; nullopt for a registry image or a plain path, and for a
// bare archive that is neither kind.
std::optional<LayoutRef> layout_ref(const Location& l);

struct ReadLimits {
    // A manifest, index or config (4 MiB, as containers/image bounds manifests).
    std::uint64_t max_manifest_bytes = std::uint64_t{4} << 20;
    // One layer blob, and a docker-archive layer uncompressed (1 GiB).
    std::uint64_t max_blob_bytes = std::uint64_t{1} << 30;
    // An archive file (2 GiB).
    std::uint64_t max_archive_bytes = std::uint64_t{2} << 30;
};

// Reads the image tagged `tag` (or the only image when `tag` is "": an error listing the tags
// when there are several) with every blob it names: an index's manifests and theirs, a
// manifest's config and layers. Errors: a missing or malformed file (exit 1 when it cannot be
// read, 3 when it is invalid), an unknown tag (3), a blob missing, of the wrong size or digest
// (3), over a limit (3).
Result<Content> read_oci_dir(const std::filesystem::path& dir, const std::string& tag = {},
                             const ReadLimits& limits = {});
Result<Content> read_oci_archive(const std::filesystem::path& file, const std::string& tag = {},
                                 const ReadLimits& limits = {});
// The image of manifest.json whose RepoTags has `ref` (the only one when `ref` is ""), as an
// OCI manifest (config application/vnd.oci.image.config.v1+json, layers by their compression:
// …tar, …tar+gzip, …tar+zstd), the root of the Content.
Result<Content> read_docker_archive(const std::filesystem::path& file, const std::string& ref = {},
                                    const ReadLimits& limits = {});
// A tar that is either: an oci-archive when it has an oci-layout file (`tag` its ref.name), else
// a docker-archive when it has a manifest.json (`tag` a RepoTags reference). Error (3) when it
// is neither.
Result<Content> read_archive(const std::filesystem::path& file, const std::string& tag = {},
                             const ReadLimits& limits = {});
Result<Content> read_layout(const LayoutRef& ref, const ReadLimits& limits = {});

// The image as skopeo's oci: transport (containers/image) writes it into a layout, which holds
// OCI media types only: a Docker schema 2 manifest becomes an OCI image manifest
// (application/vnd.oci.image.manifest.v1+json) whose config is the Docker config decoded into the
// OCI image config's fields and encoded again, as containers/image's conversion does (created,
// author, architecture, variant, os, config {User, ExposedPorts, Env, Entrypoint, Cmd, Volumes,
// WorkingDir, Labels, StopSignal}, rootfs, history; other fields dropped; media type
// application/vnd.oci.image.config.v1+json; a new digest) and whose layers keep their bytes and
// digests with the OCI media type of their compression (…layer.v1.tar, …tar+gzip, …tar+zstd); a
// Docker manifest list becomes an OCI index of the converted manifests, platforms kept. The
// manifests' digests, and so the image's, change. Nothing (and no copy) when the image has OCI
// media types throughout. Errors (3): a document that does not parse, a layer media type without
// an OCI equivalent, a config field of the wrong type or a time that is not RFC 3339.
Result<std::optional<Content>> with_oci_media_types(const Content& content);

// Writes `content` (root an index or a manifest; every blob it names present) under `tag`.
// An OCI layout or archive gets the image with_oci_media_types gives.
// Errors: a blob missing from content or not hashing to its digest (3); DIR exists and is not
// a directory, or is neither empty nor an OCI layout (1); its index.json is invalid (3); I/O (1).
Result<void> write_oci_dir(const std::filesystem::path& dir, const Content& content,
                           const std::string& tag = {});
Result<void> write_oci_archive(const std::filesystem::path& file, const Content& content,
                               const std::string& tag = {});
// One image: the manifest for `platform` when the root is an index. `repo_tag` ("name:tag")
// goes into RepoTags. Layers are written uncompressed, named by their diff_id's hex.
Result<void> write_docker_archive(const std::filesystem::path& file, const Content& content,
                                  const std::string& repo_tag = {},
                                  const Platform& platform = host_platform());
// Writes `content` where `ref` says; returns the digest the image has there (a layout's or
// oci-archive's converted root when with_oci_media_types converts it, else content's own).
Result<std::string> write_layout(const LayoutRef& ref, const Content& content,
                                 const Platform& platform = host_platform());

// Every blob of `content` hashes to its key, and the root is among them (errors name the blob).
Result<void> verify(const Content& content);

// An image of `content`: its manifest (for `platform` when the root is an index) and config.
struct ImageInfo {
    std::string manifest_digest;
    Manifest manifest;
    std::string config_digest;
    ImageConfig config;
};
// Errors (3): a blob missing from content, a document that does not parse, no manifest for the
// platform, a config whose diff_ids do not pair with the layers.
Result<ImageInfo> image_info(const Content& content, const Platform& platform = host_platform());

// The layers of the image `info` describes (blobs of `content`), applied in order with
// apply_layer. Errors (3): a layer missing from content, one refused by apply_layer, one whose
// uncompressed digest is not its config diff_id.
Result<Rootfs> unpack(const Content& content, const ImageInfo& info,
                      const ExtractLimits& limits = {});

// The merged file system of an image's layers (applied in order with apply_layer), shown as
// `display_root` ("" names it by the manifest digest), whose Identity is immutable, keyed by the
// manifest digest. Each layer's uncompressed digest must be its config diff_id (3).
struct ImageTree {
    ImageInfo info;
    std::unique_ptr<io::MemoryTree> tree;
};
Result<ImageTree> image_tree(const Content& content, const Platform& platform = host_platform(),
                             const ExtractLimits& limits = {}, std::string display_root = {});

// --- assembling images (what `kpkg build` produces) ---

// An OCI image of `layers` with `config`, whose rootfs.diff_ids become the layers' diff_ids: the
// config, the layers and an OCI manifest (with `annotations`) as blobs, the manifest the root.
// The same inputs give the same manifest digest.
Content assemble_image(ImageConfig config, const std::vector<Layer>& layers,
                       const Annotations& annotations = {});

// `layers` on top of the image of `base` for `platform`: the base's config with `edit` applied
// (labels, entrypoint, cmd, ...; its other fields, history included, kept), its diff_ids
// followed by the new layers', one history entry per new layer when the base has a history; the
// base's layers kept as they are (Docker layer media types spelled as their OCI equivalents, the
// bytes unchanged) followed by the new ones. Errors: those of image_info on `base`.
Result<Content> assemble_on_base(const Content& base, const Platform& platform,
                                 const std::function<void(ImageConfig&)>& edit,
                                 const std::vector<Layer>& layers,
                                 const Annotations& annotations = {});

// An OCI index of `images` (each with a manifest root), in the order given, each entry's platform
// taken from its config (os, architecture, variant). Errors (3): an image whose root is not a
// manifest, whose config names no os or architecture, or two images for the same platform.
// `media_type`: the index's own (a Docker manifest list for Docker schema 2 images).
Result<Content> assemble_index(const std::vector<Content>& images,
                               const Annotations& annotations = {},
                               std::string_view media_type = media::oci_index);

} // namespace kpkg::oci
