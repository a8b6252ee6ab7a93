// The content-addressed cache of image blobs, and what tags were last seen to point to.
//
//   <root>/blobs/sha256/<hex>                      a blob, its bytes hash to its name
//   <root>/trees/sha256/<hex>                      the file system of the image whose manifest
//                                                  is <hex>, as its layers unpack (so that a warm
//                                                  run reads no layer at all), with the sha256
//                                                  of its own bytes at its end
//   <root>/tags/<registry>/<repository>/:<tag>     {"digest", "mediaType", "time"} as JSON
//
// Every file is written to a temporary file and renamed into place, so processes that share a
// cache need no locks: a reader sees a whole file or none. Files are not fsynced: after a crash
// a file may be empty or short, which its check (a blob's digest, a tree's own digest, a tag
// record's JSON) finds, and the file then counts as absent. A blob is verified whenever it
// is read; one that does not match its name is deleted and counts as absent, so the cache never
// changes an answer, it only saves a download.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/oci/content.hpp"
#include "kpkg/oci/extract.hpp"
#include "kpkg/oci/reference.hpp"

namespace kpkg::oci {

// What a tag pointed to when it was last read from or pushed to its registry.
struct TagRecord {
    std::string digest;
    std::string media_type;
    std::chrono::system_clock::time_point time;
};

// One blob of the cache, for `ls`.
struct BlobEntry {
    std::string digest;
    std::uint64_t size = 0;
    std::chrono::system_clock::time_point mtime;
    // Who refers to it: the digests of cached manifests and indexes that list it, and the tags
    // ("registry/repository:tag") that point to it. Sorted.
    std::vector<std::string> referenced_by;
};

struct TagEntry {
    std::string reference; // "registry/repository:tag"
    TagRecord record;
};

// A URL fetched once and remembered (url_cache.hpp): its answer, and the blob of its body.
struct UrlEntry {
    std::string url;
    long status = 0;                             // 200 or 404
    std::string digest;                          // the body's blob (200 only)
    std::chrono::system_clock::time_point mtime; // last used
};

struct CacheListing {
    std::vector<BlobEntry> blobs; // by digest
    std::vector<TagEntry> tags;   // by reference
    std::vector<UrlEntry> urls;   // by URL
    std::uint64_t total_bytes = 0;
};

struct PruneResult {
    std::size_t blobs_removed = 0;
    std::size_t trees_removed = 0;
    std::size_t tags_removed = 0;
    std::size_t urls_removed = 0;
    std::uint64_t bytes_freed = 0;
};

// A file of the cache read as the store reads its own: nothing when it is absent, a symbolic
// link, a FIFO or device, a directory or larger than `max_size` bytes (those are removed, except
// a directory), never blocking or following a link. Errors: an unreadable file (Error::io).
Result<std::optional<std::string>> read_cache_file(const std::filesystem::path& p,
                                                   std::uint64_t max_size);

// A URL record of the cache ({"url", "status", "digest"}, see url_cache.hpp), read as
// read_cache_file reads; nothing when it is absent or not one (digest: empty unless a sha256
// digest; mtime: not set).
std::optional<UrlEntry> read_url_record(const std::filesystem::path& p);

class Store {
public:
    // A cache under `root` (created on first write).
    explicit Store(std::filesystem::path root);

    // The default cache root: $KPKG_CACHE_DIR, else $XDG_CACHE_HOME/kpkg, else $HOME/.cache/kpkg
    // (the catalog cache's rule); empty when none is set.
    static std::filesystem::path default_root();

    const std::filesystem::path& root() const { return root_; }
    // Where a blob lives ("sha256:<hex>"; other algorithms are not cached).
    std::filesystem::path blob_path(std::string_view digest) const;

    // The blob's bytes when it is cached and intact. A cached file that does not hash to its
    // digest, is larger than `max_size` bytes, or is not a regular file (a link, a FIFO) is
    // removed and reported as absent; nothing is read of it. Errors: a digest that is not
    // sha256:<64 hex> (Error::invalid), an unreadable file (Error::io).
    Result<std::optional<std::string>> get(std::string_view digest,
                                           std::uint64_t max_size = std::uint64_t{4} << 30) const;
    // Whether an intact copy is cached (reads and verifies it).
    bool has(std::string_view digest) const;
    // Stores a blob after checking that `bytes` hash to `digest` (Error::invalid when not).
    // Storing a blob that is already there intact only refreshes its time (for prune); a damaged
    // copy is replaced.
    Result<void> put(std::string_view digest, std::string_view bytes) const;
    // Every blob of an image.
    Result<void> put(const Content& c) const;

    // The unpacked file system of the image whose manifest is `manifest_digest`: nothing when
    // it was never stored, or when the file is damaged, not a regular file or larger than the
    // extraction limit allows (then it is removed: the caller unpacks the layers again).
    std::optional<Rootfs> get_tree(std::string_view manifest_digest) const;
    // Stores it (atomically).
    Result<void> put_tree(std::string_view manifest_digest, const Rootfs& fs) const;

    // Remembers what `ref`'s tag (the reference normalize()d: "busybox:1" is
    // docker.io/library/busybox:1) points to now.
    Result<void> set_tag(const Reference& ref, std::string_view digest,
                         std::string_view media_type) const;
    // What `ref`'s tag pointed to when last seen; nothing when never seen (or the record is
    // unreadable: the cache never fails a lookup that the network can answer).
    std::optional<TagRecord> tag(const Reference& ref) const;

    // Every blob with its size and referrers, and every tag record.
    Result<CacheListing> list() const;
    // Removes every blob, unpacked tree, tag record and URL record (older_than empty), or those
    // whose time (a blob's, tree's or URL record's modification time, a tag's time) is older than
    // `older_than` before `now`.
    Result<PruneResult>
    prune(std::optional<std::chrono::hours> older_than,
          std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) const;

private:
    std::filesystem::path tag_path(const Reference& ref) const;
    std::filesystem::path root_;
};

} // namespace kpkg::oci
