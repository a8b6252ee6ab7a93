// A fast reader for the YAML most catalogs and manifests are written in, private to src/io.
//
// It reads one document in block style as opm, yq, kubectl and people write it: block mappings
// and sequences indented with spaces, plain scalars on one line, quoted scalars on one line,
// literal block scalars ("|", "|-", "|+"), flow collections on one line, comments. It gives the
// same events as the libfyaml reader (yaml_load.cpp) for such text; for anything else (tabs,
// carriage returns, anchors, aliases, tags, directives, document markers, folded or multi-line
// scalars, explicit keys, empty list items, errors of any kind) it gives up and the caller reads
// the text with libfyaml. Giving up after some events were delivered calls handler.reset().
#pragma once

#include <cstdint>
#include <string_view>

#include "kpkg/io/events.hpp"

namespace kpkg::io::detail {

// True when the text was read (every event delivered); false when libfyaml must read it.
// Exceptions of the handler pass through.
bool read_yaml_fast(std::string_view text, EventHandler& handler, const Limits& limits,
                    std::uint32_t line_offset, int document_index);

} // namespace kpkg::io::detail
