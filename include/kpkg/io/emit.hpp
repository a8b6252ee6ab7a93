// Deterministic JSON and YAML writers for Node trees.
#pragma once

#include <string>

#include "kpkg/io/node.hpp"

namespace kpkg::io {

struct JsonStyle {
    // Spaces per level; 0 writes compact JSON on one line. opm indents with 4.
    int indent = 4;
    // Escape <, > and & as \u003c, \u003e, \u0026 (Go's encoding/json default).
    bool escape_html = false;
    // Write mapping keys sorted (byte order) instead of in document order.
    bool sort_keys = false;
};

// One JSON value followed by a newline. Scalars keep their literal text when it is valid JSON
// for their kind (integers, floats, booleans); YAML-only literals (0x1F, .inf, True) are
// normalised.
std::string to_json(const Node& node, const JsonStyle& style = {});

struct YamlStyle {
    int indent = 2;
    bool sort_keys = false;
    // Indent sequence items inside a mapping ("key:\n  - a") rather than at the key's column.
    bool indent_sequences = false;
};

// One YAML document (no leading "---"), block style, strings quoted only when a plain scalar
// would read back differently (a number, a boolean, null, leading indicator, ": ", " #", ...).
std::string to_yaml(const Node& node, const YamlStyle& style = {});

} // namespace kpkg::io
