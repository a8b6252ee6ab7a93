// How opm cuts the text of one catalog file into the pieces it decodes, private to src/catalog.
// The catalog loader (blobs.cpp: list, validate, graph, diff, resolve) and `catalog render`
// (render.cpp) both read files through these rules, so that they cannot disagree on them.
//
// opm reads a file with Kubernetes' YAMLOrJSONDecoder (k8s.io/apimachinery util/yaml), one Meta
// at a time (operator-registry alpha/declcfg WalkMetasReader):
// - JSON or YAML: the file is a JSON stream when the first character of its first 4096 bytes
//   that is not white space (Go's unicode.IsSpace) is '{'. If the first or the second JSON value
//   fails to parse, the rest of the file is read as YAML from the end of the last good value
//   (white space up to and including the next line break skipped); from the third value on, a
//   JSON error is final.
// - YAML documents: the text is read line by line; a line starting with "---" is a separator
//   when what follows on it, trimmed of Go's white space, is empty or starts with '#' (anything
//   else is an error). A separator ends the document being gathered when that document has any
//   text; when it has none (at the start of the YAML text, or right after another separator)
//   the separator line itself becomes the first line of the next document, which yaml.v2 then
//   reads as a document start marker. Every document handed on is decoded, so one holding only
//   such a marker, comments or blank lines is a blob without schema: "---" alone in a file, at
//   its end after another "---", or three "---" lines in a row are errors in opm.
// - A YAML document is decoded as yaml.v2 decodes it: its first node only. When that node is a
//   flow collection ({...} or [...]) the text may go on after it, and what follows is ignored;
//   both readers warn about it with the same message at the collection's position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/io/load.hpp"

namespace kpkg::catalog::detail {

// Kubernetes' GuessJSONStream: the first character of the first 4096 bytes that is not white
// space (Go's unicode.IsSpace) is '{'.
bool looks_like_json(std::string_view text);

// Whether a JSON stream that failed after `values` good values is read again as YAML.
inline bool json_falls_back(int values) {
    return values <= 1;
}

// Where the YAML reading starts after a JSON stream gave up: after the last good value (ending
// at `value_end`; the start of the text when there was none) and the white space up to and
// including the next line break. `line` is that place's 1-based line.
struct TextPlace {
    std::size_t offset = 0;
    std::uint32_t line = 1;
};
TextPlace yaml_fallback_start(std::string_view text, int values, std::size_t value_end);

// One YAML document as opm decodes it: text[begin, end), whose first line is `line`. When the
// document starts with a separator line that yaml.v2 takes for a document start marker, that
// line (line - 1) is not part of [begin, end) and `marker` is set (the document is then never
// absent, even when [begin, end) holds nothing: opm decodes it as an empty blob).
struct YamlDoc {
    std::size_t begin = 0, end = 0;
    std::uint32_t line = 1;
    bool marker = false;
};

// A separator line that ends the reading: "---" followed by something else than white space or
// a comment, or (at the start of a document) by something yaml.v2 does not take for the end of a
// document start marker, such as a no-break space or a '#' right after the dashes.
struct SeparatorError {
    std::uint32_t line = 1;
    std::string message;
};

struct YamlSplit {
    std::vector<YamlDoc> docs;           // in order; those before `error` when there is one
    std::optional<SeparatorError> error; // reading stops there
};

// Cuts text[from, end) into YAML documents; `line` is the line `from` is on.
YamlSplit split_yaml(std::string_view text, std::size_t from, std::uint32_t line);

// The message for a document opm decodes as an empty blob (nothing but comments, blank lines or
// a document start marker).
std::string empty_document_message(bool marker);

// Whether the YAML document `span`, whose root yaml.v2 reads as a collection, is a flow
// collection with more text after it (yaml.v2 stops at the end of the document's first node and
// ignores the rest): the span read whole is not one document. Reads the span once more, so only
// for a document whose root is a collection.
bool goes_on_after_root(std::string_view span, const io::Limits& limits);

// The warning for such a document, after its root's position.
std::string goes_on_after_root_message();

} // namespace kpkg::catalog::detail
