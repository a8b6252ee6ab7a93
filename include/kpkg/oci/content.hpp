// An image (or an index of images) as its blobs: what layouts, archives and registries read and
// write. Package images are small (a catalog image is tens of MB), so blobs are held in memory.
#pragma once

#include <map>
#include <string>

namespace kpkg::oci {

struct Content {
    // Every blob by its digest ("sha256:<hex>"): the index and manifests, configs, layers. A blob's
    // bytes always hash to its key.
    std::map<std::string, std::string> blobs;
    // What the image is named by: an index or a manifest among the blobs.
    std::string root_digest;
    std::string root_media_type;
};

} // namespace kpkg::oci
