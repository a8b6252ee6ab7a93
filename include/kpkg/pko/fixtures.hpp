// Writing the fixtures validate found missing or different (FixtureChange) into a package
// directory, never through a symbolic link.
#pragma once

#include <filesystem>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/pko/validate.hpp"

namespace kpkg::pko {

// Makes the changes in the package directory `root` (each file replaced atomically, missing
// directories created). Every change is checked before anything is written, and nothing is
// written when one of them cannot be made:
// - a symbolic link anywhere below `root` on the way to a fixture (.test-fixtures, its case
//   directory, a subdirectory) or at the fixture itself is refused (exit 3, naming the link and
//   where it points), whether it leaves the package or stays in it: the package is read without
//   its links, so what is behind one was never compared, and writing through it would change
//   files that are not the package's fixtures (outside the package, or its own sources);
//   replacing it would drop a link the user made;
// - a name on the way that is not a directory, or a fixture that is not a regular file (a
//   directory, a FIFO), is an error naming it (exit 1).
// `root` itself is the directory the user named and may be a link. Errors while writing (exit
// 1) leave the changes made before them.
Result<void> write_fixture_changes(const std::filesystem::path& root,
                                   const std::vector<FixtureChange>& changes);

} // namespace kpkg::pko
