// What a command's input argument is: the one place that decides.
#pragma once

#include <memory>
#include <string>

#include "kpkg/io/tree.hpp"

namespace kpkg::cli {

// What a command reads from its input.
enum class Want { any, bundle, catalog, bundle_or_catalog };

// The input an argument names, as an io::Tree: "-" standard input, a directory, else a single
// file (a regular file, or a pipe or device read as a stream, e.g. <(cmd)). Nothing is read yet:
// a missing file fails when the tree is listed, with the loaders' messages.
//
// An image (oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE, docker://REF, or a bare
// argument naming one: see oci/location.hpp) is read (pulled through the cache), its platform's
// layers applied, and the tree is what opm would read from it: a catalog image's configs
// directory, a bundle image's root. An image of the wrong kind for `want` is refused (exit 3).
std::unique_ptr<io::Tree> open_input(const std::string& argument, Want want = Want::any);

// An input with what it was found to be.
struct Input {
    std::unique_ptr<io::Tree> tree;
    bool image = false;
    // Images: a bundle image (else a catalog image), and the registry reference it was named
    // by ("" for layouts and archives): what opm puts in a rendered bundle's "image".
    bool bundle = false;
    std::string reference;
};
// open_input for commands that take bundles and catalogs alike (catalog render).
Input open_any_input(const std::string& argument);

} // namespace kpkg::cli
