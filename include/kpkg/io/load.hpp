// Loading YAML streams and JSON sequences into Documents, with positions in every error.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::io {

class Tree;

struct Limits {
    // Files larger than this are refused before they are read (1 GiB).
    std::size_t max_file_bytes = std::size_t{1} << 30;
    // Deeper nesting of sequences/mappings is an error (no recursion blow-up on hostile input).
    std::size_t max_depth = 512;
    // Nodes produced by expanding YAML aliases, in total per file ("billion laughs" guard).
    std::size_t max_alias_nodes = 1'000'000;
    // Once aliases have expanded to more than 50,000 nodes, they may not expand to more than
    // this many times the nodes the file itself writes (0: no such limit). A nested alias bomb
    // of a few hundred bytes is refused after 50,000 nodes, in milliseconds, instead of after
    // max_alias_nodes; a document that reuses an anchor of N nodes M times expands about
    // min(N, M) times, so only one reusing a 100-node anchor more than 100 times (5,000 lines
    // or more) comes near it.
    std::size_t max_alias_amplification = 100;
    // A key repeated in a mapping: an error (kpkg's default), or the later value replaces the
    // earlier one, as gopkg.in/yaml.v2 decodes without strict mode (Package Operator's objects).
    bool duplicate_keys_last_wins = false;
};

// The parsers below (and the event readers) fail with the text's problems only: running out of
// memory is never the input's fault, so they throw OutOfMemory (a std::bad_alloc naming the
// file), which ends the run (exit 1) instead of becoming a finding about the file.

// A YAML stream of zero or more documents ("---" separated). Empty documents are skipped,
// but keep their index. Errors name `file` with line and column.
Result<std::vector<Document>> parse_yaml(std::string_view text, const std::string& file,
                                         const Limits& limits = {});

// Zero or more JSON values separated only by whitespace (a concatenated JSON stream), as
// opm and `kubectl get -o json` write them. Duplicate object keys: the last one wins, as in Go.
Result<std::vector<Document>> parse_json(std::string_view text, const std::string& file,
                                         const Limits& limits = {});

// JSON when the first non-blank character is '{' or '[', YAML otherwise (YAML is a superset of
// JSON, but the JSON parser is faster and its errors are clearer).
Result<std::vector<Document>> parse_auto(std::string_view text, const std::string& file,
                                         const Limits& limits = {});

// Reads a whole file; errors: missing, not a regular file, unreadable, larger than the limit.
// `path` "-" reads standard input.
Result<std::string> read_file(const std::filesystem::path& path, const Limits& limits = {});

// The same for a single-file tree (FileTree, StdinTree; a directory tree is refused as read_file
// refuses a directory), with the same messages.
Result<std::string> read_file(const Tree& tree, const Limits& limits = {});

// read_file + parse_auto (the tree's display name in positions: the path, "<stdin>").
Result<std::vector<Document>> load_file(const Tree& tree, const Limits& limits = {});
// read_file + parse_auto.
Result<std::vector<Document>> load_file(const std::filesystem::path& path,
                                        const Limits& limits = {});

} // namespace kpkg::io
