// The binary catalog cache, private to src/catalog (the public side is LoadOptions::cache_dir and
// default_cache_dir() in kpkg/catalog/load.hpp).
//
// Layout under the cache directory:
//   catalog-v1/manifests/<sha256 of the source key>   what a source was when it was read: every
//       file read, every directory walked and every .indexignore, with size, modification and
//       change times (nanoseconds), inode and device; the SHA-256 of each file read; a digest
//       of the directory listing; the content digest and the size of the image
//   catalog-v1/images/<content digest hex>-<options>.img   the catalog itself
// A warm load stats the manifest's entries (no directory is listed, no file read); when all
// match it reads the image named by the digest. A change to a file's bytes moves its change
// time (ctime), which no program can set back; but a file changed twice within one tick of the
// clock keeps it, so entries changed within two seconds of the start of the load that stored
// the cache are not proven by their stamps: such a file is read and hashed again and compared
// with the digest of the bytes that were parsed, and such a directory or .indexignore has the
// directory listed again and compared with the listing that was used. A cache never changes an
// answer; at worst it is not used.
// Every file is versioned and checksummed and written atomically; anything that does not verify
// (of another type than a regular file, a symbolic link, sizes that disagree) is ignored without
// being read and is replaced by the next cold load, never trusted.
// A warm load maps the image and keeps it mapped: the catalog's strings are views into it (only
// the small fixed-size tables are copied out), so a warm run holds less memory than a cold one.
// kpkg never rewrites a stored image in place (a new one replaces the name atomically), so the
// mapping stays valid while the run lasts.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "files.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::catalog::detail {

enum class StampKind : std::uint8_t { file = 1, dir = 2 };

// What a file or directory was when it was read.
struct Stamp {
    std::string rel; // relative to the source ("" for the root directory, the name for a file)
    StampKind kind = StampKind::file;
    std::uint64_t size = 0, mtime_ns = 0, ctime_ns = 0, ino = 0, dev = 0;
    // The SHA-256 of the bytes parsed (files read for the catalog; not .indexignore files).
    bool has_sha = false;
    std::array<std::uint8_t, 32> sha{};
};

// The stamp of an entry of a Tree (io::Tree::stamp, io::Contents::stamp).
Stamp stamp_from(const io::Stamp& st, std::string rel, StampKind kind);

// A digest of what select_files gave (the files, directories and .indexignore files, in order).
std::array<std::uint8_t, 32> listing_digest(const Listing& l);

// The wall clock in nanoseconds since the epoch (what file times are compared with).
std::uint64_t now_ns();

// The cached catalog of `tree` (whose identity is `id`, not Identity::Kind::none) when nothing
// changed since it was stored (re-checked through tree.stamp(); an immutable tree is not
// re-checked), with its file names as the tree shows them. `note` says why not, for -v output.
std::optional<model::Catalog> cache_load(const io::Tree& tree, const io::Identity& id,
                                         const LoadOptions& opts, std::string& note);

// What a cold load read, for cache_store.
struct SourceRecord {
    std::uint64_t started_ns = 0; // now_ns() before anything was listed or read
    std::vector<Stamp> stamps;
    std::array<std::uint8_t, 32> listing{}; // listing_digest (directory sources)
};

// Stores a freshly loaded catalog: the image (files[i] for i >= 1 stored as rels[i - 1]) and the
// manifest of the source. Failures are silent but for `note`.
void cache_store(const io::Identity& id, const LoadOptions& opts, const model::Catalog& c,
                 const std::vector<std::string>& rels, const SourceRecord& record,
                 std::string& note);

} // namespace kpkg::catalog::detail
