// What a command's input argument is: the one place that decides.
#pragma once

#include <memory>
#include <string>

#include "kpkg/io/tree.hpp"

namespace kpkg::cli {

// What a command reads from its input.
enum class Want { any, bundle, catalog };

// The input an argument names, as an io::Tree: "-" standard input, a directory, else a single
// file (a regular file, or a pipe or device read as a stream, e.g. <(cmd)). Nothing is read yet:
// a missing file fails when the tree is listed, with the loaders' messages.
//
// An image (oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE, docker://REF, or a bare
// argument naming one: see oci/location.hpp) is read (pulled through the cache), its platform's
// layers applied, and the tree is what opm would read from it: a catalog image's configs
// directory, a bundle image's root. An image of the wrong kind for `want` is refused (exit 3).
std::unique_ptr<io::Tree> open_input(const std::string& argument, Want want = Want::any);

} // namespace kpkg::cli
