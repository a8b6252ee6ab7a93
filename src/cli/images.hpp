// Images for the commands: the registry client and the blob cache as the global flags set them
// up, reading an image from wherever a Location says, writing one to a --save destination, and
// an image's files as an io::Tree.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kpkg/io/node.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/oci/content.hpp"
#include "kpkg/oci/extract.hpp"
#include "kpkg/oci/image.hpp"
#include "kpkg/oci/location.hpp"
#include "kpkg/plan/image.hpp"

namespace kpkg::oci {
class Registry;
class Store;
} // namespace kpkg::oci

namespace kpkg::cli {

// Set from the global flags before a command runs.
struct ImageFlags {
    std::string platform;  // --platform for image inputs ("" : the host's)
    bool offline = false;  // --offline: images only from the cache
    bool insecure = false; // --insecure: plain http / unverified TLS for the registries named
    bool progress = false; // progress bars on stderr (a terminal, not --quiet)
    // --request-timeout, checked: the deadline of a registry request for a small document and
    // the window of a blob's minimum rate (0: neither); unset: the library's defaults.
    std::optional<std::chrono::milliseconds> request_timeout;
};
ImageFlags& image_flags();

// The deadline of one small download (a registry's documents, a schema): --request-timeout or
// the registry client's default.
std::chrono::milliseconds request_timeout();

// The platform image inputs are resolved to.
oci::Platform input_platform();

// The blob cache (nullptr when no cache directory can be named). --no-cache is about the
// catalog cache only: the blob cache also holds what `kpkg build` made, for `kpkg push`.
const oci::Store* image_store();
// The registry client, created on first use, with the cache in front of it. `for_ref` registers
// the reference's registry as insecure when --insecure is given.
oci::Registry& registry_client(const oci::Reference* for_ref = nullptr);

// The image at `where` (layouts and archives read and verified; registry images pulled through
// the cache). `all_platforms`: an index keeps every platform (pull --all-platforms); otherwise a
// registry index is resolved to `platform` (layouts and archives are read whole). Throws
// Exception.
oci::Content read_image(const oci::Location& where, const std::optional<oci::Platform>& platform,
                        bool all_platforms = false);

// Writes `image` to a --save destination (oci:, oci-archive:, docker-archive:). `tags`: the
// references it is known by (docker-archive RepoTags). Returns the digest the image has there
// when it is not image.root_digest: an OCI layout or archive holds OCI media types only
// (oci::with_oci_media_types), so a Docker schema 2 image gets new manifests. Throws Exception.
std::string save_image(const oci::Location& dest, const oci::Content& image,
                       const std::vector<std::string>& tags);

// "saved: DEST" for the text output of build and pull, with the digest when it is another.
std::string saved_line(const std::string& dest, const std::string& digest);
// The -o json|yaml "savedImages" of build and pull: [{destination, digest}], the digest each
// destination holds the image under (`digests[i]`, or `root_digest` when that is empty).
io::Node saved_images_node(const std::vector<std::string>& saved,
                           const std::vector<std::string>& digests, const std::string& root_digest);

// One platform's image of `image`: its manifest, config and files.
struct ImageView {
    std::string manifest_digest;
    oci::Manifest manifest;
    oci::ImageConfig config;
    std::shared_ptr<const oci::Rootfs> fs; // the layers applied (trees of it view its bytes)
};
// Throws Exception (`name` in messages).
ImageView view_image(const oci::Content& image, const oci::Platform& platform,
                     const std::string& name);

// The files of `v` below `prefix` ("" for all) as a tree shown as `display`, whose identity is
// the manifest digest (immutable: caches need no stamps).
std::unique_ptr<io::MemoryTree> image_subtree(const ImageView& v, std::string_view prefix,
                                              const std::string& display);

} // namespace kpkg::cli
