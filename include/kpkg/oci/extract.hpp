// Applying image layers to a file system held in memory, safely: a layer from a registry is
// untrusted input.
//
// A layer blob is a tar, or a tar compressed with gzip or zstd: the compression is told by the
// blob's first bytes (apply_layer takes no media type: a descriptor could lie). Entries are read
// as the OCI image spec's changeset rules and container runtimes apply them:
//   - names: leading "/" and "./" are stripped and "." components dropped, as container tools do
//     when they unpack a layer ("/etc/x" and "./etc/x" are "etc/x"); a ".." component anywhere is
//     refused. An entry naming the root itself ("./") is skipped.
//   - regular files, directories and symbolic links are applied; a file or link replaces what was
//     there (a directory with everything in it); a directory keeps what is in it.
//   - symbolic links: an absolute target is taken relative to the image's root, as a runtime
//     resolves it inside the container, and is stored relative to the link ("/usr/bin/x" from
//     "bin/y" becomes "../usr/bin/x"); a target with more ".." than the link has parents leaves
//     the root and is refused.
//   - hard links name an earlier file of the image (same name rules); the file's bytes are copied.
//   - an entry below a symbolic link or a file of the image is refused (a link "a -> /etc" and a
//     file "a/passwd" would otherwise write through the link).
//   - whiteouts: ".wh.<name>" removes <name> (and all below it) of the lower layers;
//     ".wh..wh..opq" empties its directory of what lower layers put there. Whiteouts apply to the
//     lower layers only, whatever their place in the tar. A whiteout naming "", "." or ".." is
//     refused. Other ".wh..wh." names (aufs metadata) are ignored.
//   - character and block devices, FIFOs and sockets are refused.
// Each refusal is an Error::invalid naming the layer's digest and the entry; a layer that fails
// leaves the Rootfs as it was.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "kpkg/core/result.hpp"

namespace kpkg::io {
class MemoryTree;
}

namespace kpkg::oci {

// Bounds on what layers may hold, for one Rootfs (all its layers together).
struct ExtractLimits {
    // One file's size (256 MiB).
    std::uint64_t max_file_bytes = std::uint64_t{256} << 20;
    // The uncompressed tar bytes of all layers (1 GiB); also bounds decompression.
    std::uint64_t max_total_bytes = std::uint64_t{1} << 30;
    // Tar entries of all layers (200,000).
    std::uint64_t max_entries = 200'000;
    // The length of an entry's name or link target (4096 bytes).
    std::size_t max_path = 4096;
};

// A file system being assembled from layers, lower layers first.
class Rootfs {
public:
    struct Node {
        enum class Kind : std::uint8_t { file, dir, link };
        Kind kind = Kind::dir;
        std::string data; // file: bytes; link: target (relative)
        std::uint32_t mode = 0755;
    };

    // Every entry by path ('/' separated, relative; the root is implicit).
    const std::map<std::string, Node>& nodes() const { return nodes_; }
    // The uncompressed tar bytes and entries of the layers applied so far (for the limits).
    std::uint64_t tar_bytes() const { return tar_bytes_; }
    std::uint64_t entries() const { return entries_; }

    // A file system as given (read back from the unpacked-tree cache): the nodes must be what
    // apply_layer made, with the limits' counters at zero.
    static Rootfs from_nodes(std::map<std::string, Node> nodes) {
        Rootfs fs;
        fs.nodes_ = std::move(nodes);
        return fs;
    }

    // The files, directories and links as a MemoryTree shown as `display_root`.
    // With `prefix` ("configs"), only what is below that directory, named relative to it.
    std::unique_ptr<io::MemoryTree> to_tree(std::string display_root,
                                            std::string_view prefix = {}) const;
    // The same tree with the files' bytes not copied: it keeps `fs` alive and views its bytes.
    static std::unique_ptr<io::MemoryTree> shared_tree(std::shared_ptr<const Rootfs> fs,
                                                       std::string display_root,
                                                       std::string_view prefix = {});

private:
    friend Result<std::string> apply_layer(Rootfs&, std::string_view, const std::string&,
                                           const ExtractLimits&);
    std::map<std::string, Node> nodes_;
    std::uint64_t tar_bytes_ = 0;
    std::uint64_t entries_ = 0;
};

// Applies the layer `blob` (named `digest` in errors) on top of `fs`. Returns the layer's diff_id
// (sha256 of the uncompressed tar). Errors (Error::invalid unless said): corrupt or truncated
// compressed data or tar; an entry refused by the rules above; a file over max_file_bytes; more
// tar bytes or entries than the limits allow; libarchive missing (exit 1). On error `fs` is
// unchanged.
Result<std::string> apply_layer(Rootfs& fs, std::string_view blob, const std::string& digest,
                                const ExtractLimits& limits = {});

} // namespace kpkg::oci
