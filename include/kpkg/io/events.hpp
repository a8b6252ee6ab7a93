// Streaming reads of YAML streams and JSON sequences: the parser calls a handler for every
// document, collection and scalar as it goes, without building documents. The Node readers of
// kpkg/io/load.hpp are built on these; so is the catalog loader, which turns the events of a blob
// straight into the compact model.
//
// Events come in document order: document_start, then one value (a scalar, or a collection:
// mapping_start ... mapping_end / sequence_start ... sequence_end), then document_end. Inside a
// mapping, every entry is a key event followed by its value. Marks are 1-based line and column,
// counted in bytes, of the first character of the value (for YAML: of its anchor or tag if it
// has one), as in Node::mark.
//
// A handler stops the parse by throwing kpkg::Exception: the read returns its error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kpkg/core/result.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::io {

struct ScalarEvent {
    // The value, decoded (escapes resolved, block scalars folded). Valid during the call only.
    std::string_view text;
    Mark mark;
    // JSON: the JSON type. YAML: the YAML 1.2 core-schema type of a plain scalar, the type an
    // explicit core tag (!!int, !!str...) gives, or string.
    Kind kind = Kind::string;
    bool plain = false;  // YAML: written plain (not quoted, not a block scalar) and untagged
    bool tagged = false; // YAML: has an explicit tag
    bool binary = false; // YAML: tagged !!binary (text is the base64 as written; kind string)
    bool empty = false;  // YAML: no text at all ("key:" with nothing after it)
};

class EventHandler {
public:
    virtual ~EventHandler() = default;
    // YAML only: the parse starts again from the first event (libfyaml work-arounds re-read the
    // text); forget everything received so far.
    virtual void reset() {}
    // `index`: 0-based position of the document in the stream (YAML: counting empty documents).
    virtual void document_start(int index, Mark m) = 0;
    virtual void document_end() = 0;
    virtual void mapping_start(Mark m) = 0;
    virtual void mapping_end() = 0;
    virtual void sequence_start(Mark m) = 0;
    virtual void sequence_end() = 0;
    // A mapping key (always a scalar: collections as keys are a parse error).
    virtual void key(const ScalarEvent& k) = 0;
    virtual void scalar(const ScalarEvent& s) = 0;
};

struct YamlEventOptions {
    // Added to every line number (for a piece of a larger file).
    std::uint32_t line_offset = 0;
    // Added to every document index.
    int document_offset = 0;
    // Stop after the first document; the rest of the text is not parsed.
    bool first_document_only = false;
    // Read a single document in the common block style with kpkg's own fast reader (the same
    // events, several times faster; see src/io/yaml_fast.hpp); libfyaml reads anything else.
    // false: libfyaml reads everything (for tests comparing the two).
    bool fast = true;
};

// A YAML stream, event by event. Aliases are replayed as the events of their anchored node (the
// alias's own mark on its first event); the Limits apply as for parse_yaml. Errors name `file`
// with line and column.
Result<void> read_yaml_events(std::string_view text, const std::string& file, EventHandler& handler,
                              const Limits& limits = {}, const YamlEventOptions& options = {});

// What a JSON read got through before it stopped.
struct JsonProgress {
    int values = 0;               // top-level values read completely
    std::size_t value_end = 0;    // offset just after the last of them (0 when none)
    std::size_t failed_value = 0; // offset where the value that failed starts
};

// Zero or more JSON values separated by blanks, event by event (the reader behind parse_json,
// with the same errors and limits). `progress`, when given, tells how far it got.
Result<void> read_json_events(std::string_view text, const std::string& file, EventHandler& handler,
                              const Limits& limits = {}, JsonProgress* progress = nullptr);

} // namespace kpkg::io
