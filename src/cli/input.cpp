#include "input.hpp"

namespace kpkg::cli {

std::unique_ptr<io::Tree> open_input(const std::string& argument) {
    // Archives, OCI layouts and image references will be told apart here.
    return io::open_path(argument);
}

} // namespace kpkg::cli
