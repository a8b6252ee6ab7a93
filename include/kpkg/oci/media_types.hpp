// The media types of images kpkg reads and writes (OCI image spec and Docker's schema 2).
#pragma once

#include <string_view>

namespace kpkg::oci::media {

inline constexpr std::string_view oci_index = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view oci_manifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view oci_config = "application/vnd.oci.image.config.v1+json";
inline constexpr std::string_view oci_layer_tar = "application/vnd.oci.image.layer.v1.tar";
inline constexpr std::string_view oci_layer_gzip = "application/vnd.oci.image.layer.v1.tar+gzip";
inline constexpr std::string_view oci_layer_zstd = "application/vnd.oci.image.layer.v1.tar+zstd";

inline constexpr std::string_view docker_manifest =
    "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr std::string_view docker_manifest_list =
    "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr std::string_view docker_config = "application/vnd.docker.container.image.v1+json";
inline constexpr std::string_view docker_layer_gzip =
    "application/vnd.docker.image.rootfs.diff.tar.gzip";

// What a client lists in Accept when it asks a registry for a manifest.
inline constexpr std::string_view manifest_accept =
    "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.docker.distribution.manifest.v2+json";

inline bool is_index(std::string_view t) {
    return t == oci_index || t == docker_manifest_list;
}
inline bool is_manifest(std::string_view t) {
    return t == oci_manifest || t == docker_manifest;
}

} // namespace kpkg::oci::media
