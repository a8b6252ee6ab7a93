// What a command's input argument is: the one place that decides.
#pragma once

#include <memory>
#include <string>

#include "kpkg/io/tree.hpp"

namespace kpkg::cli {

// The input an argument names, as an io::Tree: "-" standard input, a directory, else a single
// file (a regular file, or a pipe or device read as a stream, e.g. <(cmd)). Nothing is read yet:
// a missing file fails when the tree is listed, with the loaders' messages.
std::unique_ptr<io::Tree> open_input(const std::string& argument);

} // namespace kpkg::cli
