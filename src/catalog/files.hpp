// Which files of a catalog directory opm reads (operator-registry alpha/declcfg/load.go,
// walkFiles): every file below the root, hidden ones included, except files named .indexignore
// and the files their gitignore patterns match. Directories are walked without following symbolic
// links; a symbolic link to a file is read, one to a directory cannot be (opm fails on it too).
// Unlike opm, a symbolic link whose target (with every link resolved) lies outside the root is
// refused, whatever it points to: rendering an untrusted catalog must not publish other files.
// An entry .indexignore excludes is never read, so it is no error whatever it is (as in opm).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kpkg/core/result.hpp"

namespace kpkg::catalog::detail {

struct ListedPath {
    std::filesystem::path path; // root / rel
    std::string rel;            // relative to the root, '/' separated ("" for the root itself)
};

struct Listing {
    std::vector<ListedPath> files;   // to read, in path order
    std::vector<ListedPath> dirs;    // every directory walked, the root first
    std::vector<ListedPath> ignores; // the .indexignore files found
};

// Path order: component by component, bytewise (the order opm's walk visits files in).
bool path_less(const std::string& a, const std::string& b);

// Errors (exit 1): a directory that cannot be read (also one met deep in the walk: nothing is
// dropped silently), a symbolic link to a directory or to nothing, a file that is neither a
// regular file nor a link to one. Exit 3: a symbolic link leaving the root.
Result<Listing> list_files(const std::filesystem::path& root);

} // namespace kpkg::catalog::detail
