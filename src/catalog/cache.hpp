// The binary catalog cache, private to src/catalog (the public side is LoadOptions::cache_dir and
// default_cache_dir() in kpkg/catalog/load.hpp).
//
// Layout under the cache directory:
//   catalog-v1/manifests/<sha256 of the source key>   what a source was when it was read: every
//       file read, every directory walked and every .indexignore, with size, mtime, inode and
//       device, and the content digest it gave
//   catalog-v1/images/<content digest hex>-<options>.img   the catalog itself
// A warm load stats the manifest's entries (no directory is listed, no file read); when all
// match it reads the image named by the digest. Entries modified within two seconds of the
// manifest's writing are not trusted (a file changed twice in one clock tick keeps its mtime).
// Every file is versioned and checksummed and written atomically; anything that does not verify
// is ignored (and rewritten by the next cold load), never trusted.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kpkg/catalog/load.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::catalog::detail {

enum class StampKind : std::uint8_t { file = 1, dir = 2 };

// What a file or directory was when it was read.
struct Stamp {
    std::string rel; // relative to the source ("" for the root directory, the name for a file)
    StampKind kind = StampKind::file;
    std::uint64_t size = 0, mtime_ns = 0, ino = 0, dev = 0;
};

// The stamp of what `sb` describes.
Stamp stamp_from(const struct stat& sb, std::string rel, StampKind kind);

// The stamp of `path` now (stat, following symbolic links); nullopt when it cannot be stat'ed.
std::optional<Stamp> stamp_of(const std::filesystem::path& path, std::string rel, StampKind kind);

// The cached catalog of `src` when nothing changed since it was stored, with its file names made
// from `src` as given (`rels` of files[1..] joined to it). `note` says why not, for -v output.
std::optional<model::Catalog> cache_load(const std::filesystem::path& src, const LoadOptions& opts,
                                         std::string& note);

// Stores a freshly loaded catalog: the image (files[i] for i >= 1 stored as rels[i - 1]) and the
// manifest of the source. Failures are silent but for `note`.
void cache_store(const std::filesystem::path& src, const LoadOptions& opts, const model::Catalog& c,
                 const std::vector<std::string>& rels, const std::vector<Stamp>& stamps,
                 std::string& note);

} // namespace kpkg::catalog::detail
