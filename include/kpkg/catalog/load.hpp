// Loading File-Based Catalogs from a directory tree, one file, or standard input.
#pragma once

#include <filesystem>

#include "kpkg/core/result.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/model/catalog.hpp"
#include "kpkg/model/fbc.hpp"

namespace kpkg::catalog {

struct LoadOptions {
    io::Limits limits;
    // Files of a directory are parsed on this many threads (0: one per core); the result does
    // not depend on it: blobs come out in path order, and an error is the one of the first
    // failing file in path order.
    unsigned threads = 0;
    // load_catalog: keep the values of olm.bundle.object and olm.csv.metadata properties (as
    // compact JSON in declcfg::Property::json); without it only their size and digest are kept.
    bool keep_payloads = false;
};

// Every blob of the catalog at `src`: a directory (all regular files below it, in path order,
// hidden files and directories skipped, files matched by a `.indexignore` skipped: gitignore
// patterns applying to the directory holding that file and everything below it, deeper files
// after shallower ones, the last matching pattern winning, "!" re-including), each read as a YAML
// stream or concatenated JSON whatever its extension), a single file, or "-" for standard input.
// Blobs without a string `schema` are an error naming the file and position; so are wrong field
// types of the known schemas.
Result<declcfg::DeclarativeConfig> load(const std::filesystem::path& src,
                                      const LoadOptions& opts = {});

// The catalog at `src` (as load() reads it) in the compact form the analyses use. I/O errors
// are errors (exit 1); everything wrong with the content (a file that does not parse, a blob
// without schema, wrong field types, malformed property values) is collected in
// Catalog::problems and the load goes on. The result is indexed (Catalog::index()).
Result<model::Catalog> load_catalog(const std::filesystem::path& src, const LoadOptions& opts = {});

// The compact form of already-loaded blobs (indexed).
model::Catalog to_catalog(const declcfg::DeclarativeConfig& cfg, bool keep_payloads = false);

// The blobs of one already-parsed document stream.
Result<void> add_documents(declcfg::DeclarativeConfig& cfg, const std::vector<io::Document>& docs,
                           const std::string& file);

} // namespace kpkg::catalog
