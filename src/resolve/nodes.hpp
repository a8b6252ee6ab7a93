// Document pieces shared by the resolve output, the lockfile and upgrade-path (src/resolve only).
#pragma once

#include "kpkg/io/node.hpp"
#include "kpkg/resolve/resolve.hpp"

namespace kpkg::resolve::detail {

io::Node selected_node(const Selected& s);
// A list of strings.
io::Node strings(const std::vector<std::string>& v);
// [{message, children: [...]}], the explanation trees.
io::Node problems_node(const std::vector<Problem>& ps);

} // namespace kpkg::resolve::detail
