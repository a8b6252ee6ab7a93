// Which files of a catalog directory opm reads (operator-registry alpha/declcfg/load.go,
// walkFiles): every file below the root, hidden ones included, except files named .indexignore
// and the files their gitignore patterns match. Directories are walked without following symbolic
// links; a symbolic link to a file is read, one to a directory cannot be (opm fails on it too).
// Unlike opm, a symbolic link whose target (with every link resolved) lies outside the root is
// refused, whatever it points to: rendering an untrusted catalog must not publish other files.
// An entry .indexignore excludes is never read, so it is no error whatever it is (as in opm).
// The walk itself is io::Tree's (the same rules for directories on disk and trees in memory);
// this applies .indexignore to its listing and words the problems of entries for catalogs.
#pragma once

#include <string>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/tree.hpp"

namespace kpkg::catalog::detail {

struct Listing {
    std::vector<io::Entry> files;   // to read, in path order
    std::vector<io::Entry> dirs;    // every directory walked, the root first
    std::vector<io::Entry> ignores; // the .indexignore files found
};

// The files of `tree` a catalog is read from. A single-file tree (a file, standard input) gives
// its one file, whatever its name. Errors (exit 1): a directory that cannot be read (also one met
// deep in the walk: nothing is dropped silently), a symbolic link to a directory or to nothing, a
// file that is neither a regular file nor a link to one. Exit 3: a symbolic link leaving the root.
Result<Listing> select_files(const io::Tree& tree);

// Why an entry of a catalog cannot be read, in the catalog's words.
Error problem_error(const io::Tree& tree, const io::Entry& e);

} // namespace kpkg::catalog::detail
