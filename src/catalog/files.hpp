// The files of a catalog directory, private to src/catalog.
#pragma once

#include <filesystem>
#include <vector>

#include "kpkg/core/result.hpp"

namespace kpkg::catalog::detail {

// Every regular file below `dir` that a catalog load reads, in path order: hidden files and
// directories skipped, files matched by a `.indexignore` skipped (gitignore patterns applying to
// the directory holding that file and below). The same selection as catalog::load().
Result<std::vector<std::filesystem::path>> catalog_files(const std::filesystem::path& dir);

} // namespace kpkg::catalog::detail
