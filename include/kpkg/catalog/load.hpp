// Loading File-Based Catalogs from a directory tree, one file, or standard input.
#pragma once

#include <filesystem>

#include "kpkg/core/result.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/model/fbc.hpp"

namespace kpkg::catalog {

struct LoadOptions {
    io::Limits limits;
};

// Every blob of the catalog at `src`: a directory (all regular files below it, in path order,
// hidden files and directories skipped, each read as a YAML stream or concatenated JSON whatever
// its extension), a single file, or "-" for standard input. Blobs without a string `schema` are
// an error naming the file and position; so are wrong field types of the known schemas.
Result<model::DeclarativeConfig> load(const std::filesystem::path& src,
                                      const LoadOptions& opts = {});

// The blobs of one already-parsed document stream.
Result<void> add_documents(model::DeclarativeConfig& cfg, const std::vector<io::Document>& docs,
                           const std::string& file);

} // namespace kpkg::catalog
