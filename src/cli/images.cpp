#include "images.hpp"

#include <unistd.h>

#include <cstdio>
#include <mutex>

#include "kpkg/core/error.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/oci/extract.hpp"
#include "kpkg/oci/layout.hpp"
#include "kpkg/oci/media_types.hpp"
#include "kpkg/oci/registry.hpp"
#include "kpkg/oci/store.hpp"

namespace kpkg::cli {
namespace {

// A progress line per blob on a terminal's stderr, redrawn in place.
void draw_progress(const oci::Progress& p) {
    std::string id = p.digest.substr(0, std::min<std::size_t>(p.digest.size(), 19));
    const char* verb = p.direction == oci::Progress::Direction::upload ? "push" : "pull";
    char line[160];
    if (p.finished)
        std::snprintf(line, sizeof line, "\r\033[K%s %s done\n", verb, id.c_str());
    else if (p.total > 0)
        std::snprintf(line, sizeof line, "\r\033[K%s %s %3llu%% (%llu/%llu kB)", verb, id.c_str(),
                      static_cast<unsigned long long>(p.done * 100 / p.total),
                      static_cast<unsigned long long>(p.done / 1024),
                      static_cast<unsigned long long>(p.total / 1024));
    else
        std::snprintf(line, sizeof line, "\r\033[K%s %s %llu kB", verb, id.c_str(),
                      static_cast<unsigned long long>(p.done / 1024));
    std::fputs(line, stderr);
}

} // namespace

ImageFlags& image_flags() {
    static ImageFlags flags;
    return flags;
}

std::chrono::milliseconds request_timeout() {
    if (image_flags().request_timeout) return *image_flags().request_timeout;
    return oci::RegistryOptions{}.request_timeout;
}

oci::Platform input_platform() {
    const std::string& p = image_flags().platform;
    if (p.empty()) return oci::host_platform();
    return oci::Platform::parse(p).take();
}

const oci::Store* image_store() {
    static std::once_flag once;
    static std::unique_ptr<oci::Store> store;
    std::call_once(once, [] {
        auto root = oci::Store::default_root();
        if (!root.empty()) store = std::make_unique<oci::Store>(root);
    });
    return store.get();
}

oci::Registry& registry_client(const oci::Reference* for_ref) {
    static std::unique_ptr<oci::Registry> client;
    static oci::RegistryOptions opts;
    if (!client) {
        if (image_flags().progress) opts.progress = draw_progress;
        if (const auto& t = image_flags().request_timeout) {
            opts.request_timeout = *t;
            opts.rate_window = *t;
        }
        client = std::make_unique<oci::Registry>(opts, image_store());
    }
    if (for_ref != nullptr && image_flags().insecure) {
        std::string domain = oci::normalize(*for_ref).domain;
        if (!client->options().insecure.count(domain)) {
            // The set is read when a connection is made: a new client with the registry added.
            opts.insecure.insert(domain);
            client = std::make_unique<oci::Registry>(opts, image_store());
        }
    }
    return *client;
}

namespace {} // namespace

oci::Content read_image(const oci::Location& where, const std::optional<oci::Platform>& platform,
                        bool all_platforms) {
    using K = oci::Location::Kind;
    switch (where.kind) {
    case K::registry: {
        oci::PullOptions po;
        po.platform = platform;
        po.all_platforms = all_platforms;
        po.offline = image_flags().offline;
        return registry_client(&where.reference).pull(where.reference, po).take();
    }
    case K::oci_layout:
    case K::oci_archive:
    case K::docker_archive:
        return oci::read_layout(*oci::layout_ref(where)).take();
    case K::archive:
        throw Exception(Error::invalid(text::quote(where.path) +
                                       ": a tar archive that is neither an OCI archive (no "
                                       "oci-layout) nor a docker archive (no manifest.json)"));
    case K::path:
        break;
    }
    throw Exception(Error::usage(text::quote(where.given) + " is not an image"));
}

std::string save_image(const oci::Location& dest, const oci::Content& image,
                       const std::vector<std::string>& tags) {
    using K = oci::Location::Kind;
    if (dest.kind != K::oci_layout && dest.kind != K::oci_archive && dest.kind != K::docker_archive)
        throw Exception(
            Error::usage("--save " + text::quote(dest.given) +
                         ": write oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE"));
    oci::LayoutRef ref = *oci::layout_ref(dest);
    // A docker archive names the image by its first reference (RepoTags).
    if (dest.kind == K::docker_archive && ref.tag.empty() && !tags.empty()) ref.tag = tags.front();
    const std::string digest = oci::write_layout(ref, image, input_platform()).take();
    return digest == image.root_digest ? std::string() : digest;
}

std::string saved_line(const std::string& dest, const std::string& digest) {
    if (digest.empty()) return "saved: " + dest + "\n";
    return "saved: " + dest + " (with OCI media types: " + digest + ")\n";
}

io::Node saved_images_node(const std::vector<std::string>& saved,
                           const std::vector<std::string>& digests,
                           const std::string& root_digest) {
    io::Node out = io::Node::seq();
    for (std::size_t i = 0; i < saved.size(); ++i) {
        io::Node e = io::Node::map();
        e.set("destination", io::Node::string(saved[i]));
        const bool other = i < digests.size() && !digests[i].empty();
        e.set("digest", io::Node::string(other ? digests[i] : root_digest));
        out.push(std::move(e));
    }
    return out;
}

ImageView view_image(const oci::Content& image, const oci::Platform& platform,
                     const std::string& name) {
    auto info = oci::image_info(image, platform);
    if (!info) {
        Error e = std::move(info).error();
        e.message = name + ": " + e.message;
        throw Exception(std::move(e));
    }
    ImageView v;
    // Unpacked before: the tree is read back (checked against its own digest) and no layer is
    // read at all. The manifest digest names the layers, so the tree cannot differ.
    const oci::Store* store = image_store();
    std::optional<oci::Rootfs> cached;
    if (store != nullptr) cached = store->get_tree(info->manifest_digest);
    if (cached) {
        v.fs = std::make_shared<const oci::Rootfs>(std::move(*cached));
    } else {
        auto fs = oci::unpack(image, *info);
        if (!fs) {
            Error e = std::move(fs).error();
            e.message = name + ": " + e.message;
            throw Exception(std::move(e));
        }
        v.fs = std::make_shared<const oci::Rootfs>(std::move(*fs));
        // A cache that cannot be written only costs the next run the unpacking.
        if (store != nullptr) (void)store->put_tree(info->manifest_digest, *v.fs);
    }
    v.manifest_digest = std::move(info->manifest_digest);
    v.manifest = std::move(info->manifest);
    v.config = std::move(info->config);
    return v;
}

std::unique_ptr<io::MemoryTree> image_subtree(const ImageView& v, std::string_view prefix,
                                              const std::string& display) {
    auto tree = oci::Rootfs::shared_tree(v.fs, display, prefix);
    io::Identity id;
    id.kind = io::Identity::Kind::immutable;
    id.key = v.manifest_digest;
    if (!prefix.empty()) {
        id.key += ':';
        id.key += prefix;
    }
    id.dir = true;
    tree->set_identity(id);
    return tree;
}

} // namespace kpkg::cli
