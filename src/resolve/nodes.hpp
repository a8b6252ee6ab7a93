// Document pieces shared by the resolve output and the lockfile (src/resolve only).
#pragma once

#include "kpkg/io/node.hpp"
#include "kpkg/resolve/resolve.hpp"

namespace kpkg::resolve::detail {

io::Node selected_node(const Selected& s);

} // namespace kpkg::resolve::detail
