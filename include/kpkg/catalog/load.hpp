// Loading File-Based Catalogs from a directory tree, one file, or standard input.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "kpkg/core/result.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/model/catalog.hpp"
#include "kpkg/model/fbc.hpp"

namespace kpkg::catalog {

// What a load_catalog call did, for -v output, tests and benchmarks.
struct LoadInfo {
    bool cache_hit = false;     // the catalog came from the binary cache
    bool cache_written = false; // a cache image and manifest were written
    std::string cache_note;     // why the cache was not used or written, when it was not
    std::size_t files = 0;      // files read (0 on a cache hit)
    std::uint64_t bytes = 0;    // their size
};

struct LoadOptions {
    io::Limits limits;
    // load_catalog: files of a directory are parsed on this many threads (0: one per core); the
    // result does not depend on it: blobs come out in path order.
    unsigned threads = 0;
    // load_catalog: keep the values of olm.bundle.object and olm.csv.metadata properties (as
    // compact JSON in model::Property::json); without it only their size and digest are kept.
    bool keep_payloads = false;
    // load_catalog: the binary cache directory (see src/catalog/cache.hpp); empty: no cache.
    // A catalog read from a directory or a file is stored there, and read back from there while
    // no file of it changed (the tree's identity and stamps); standard input, pipes and memory
    // trees are never cached.
    std::filesystem::path cache_dir;
    // load_catalog: filled in when given.
    LoadInfo* info = nullptr;
};

// The cache directory kpkg uses by default: $KPKG_CACHE_DIR, else $XDG_CACHE_HOME/kpkg, else
// $HOME/.cache/kpkg; empty when none is set. (Turning the cache off is the caller's choice.)
std::filesystem::path default_cache_dir();

// Every blob of the catalog at `src` as document trees: a directory (the files load_catalog
// reads, in path order, each read as a YAML stream or concatenated JSON whatever its extension),
// a single file, or "-" for standard input. The first problem is the error: a blob without a
// string `schema`, or a wrong field type of a known schema, named with its file and position.
// The commands use load_catalog; this older loader serves tests that need the trees.
Result<declcfg::DeclarativeConfig> load(const io::Tree& src, const LoadOptions& opts = {});
// The same for the path `src` (io::open_path: "-", a directory or a file).
Result<declcfg::DeclarativeConfig> load(const std::filesystem::path& src,
                                        const LoadOptions& opts = {});

// The catalog at `src` in the compact form the analyses use, read straight from parser events
// (no document trees; payloads of olm.bundle.object and olm.csv.metadata are only measured and
// hashed unless keep_payloads), the way opm reads a catalog (see src/catalog/blobs.hpp and
// src/catalog/files.hpp for the rules): the files of a directory (hidden ones included; those
// named .indexignore and those their gitignore patterns match left out), one file, or "-" for
// standard input. Files are parsed on `threads` threads and merged in path order.
//
// I/O errors are errors (exit 1): a file or directory that cannot be read, a symbolic link to a
// directory. Everything wrong with the content (a file that does not parse or is larger than
// Limits::max_file_bytes, a blob without schema, wrong field types, malformed property values) is
// collected in Catalog::problems and the load goes on. The result is indexed
// (Catalog::index()) and has its content_digest.
Result<model::Catalog> load_catalog(const io::Tree& src, const LoadOptions& opts = {});
// The same for the path `src` (io::open_path: "-", a directory or a file).
Result<model::Catalog> load_catalog(const std::filesystem::path& src, const LoadOptions& opts = {});

// The blobs of one already-parsed document stream.
Result<void> add_documents(declcfg::DeclarativeConfig& cfg, const std::vector<io::Document>& docs,
                           const std::string& file);

} // namespace kpkg::catalog
