// A parsed YAML or JSON document: a tree of nodes that remember where they came from.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/error.hpp"

namespace kpkg::io {

// 1-based line and column of a node's first character; 0 when unknown (built in code).
struct Mark {
    std::uint32_t line = 0;
    std::uint32_t column = 0;
};

enum class Kind : std::uint8_t { null, boolean, integer, floating, string, sequence, mapping };

const char* kind_name(Kind k); // "null", "boolean", "integer", "number", "string", "list", "object"

struct MapEntry;

struct Node {
    Kind kind = Kind::null;
    // For YAML scalars: true when written plain (unquoted, not a block scalar).
    bool plain = false;
    Mark mark;
    // Scalars: the value as text. Strings are decoded (escapes resolved); numbers and booleans keep
    // the literal as written ("1.0", "0x1F", "True"); null is "" or the literal ("~", "null").
    std::string text;
    std::vector<Node> items;      // sequence
    std::vector<MapEntry> fields; // mapping, in document order, keys unique

    bool is_null() const { return kind == Kind::null; }
    bool is_string() const { return kind == Kind::string; }
    bool is_map() const { return kind == Kind::mapping; }
    bool is_seq() const { return kind == Kind::sequence; }
    bool is_scalar() const { return kind != Kind::sequence && kind != Kind::mapping; }

    // Mapping lookup (linear; maps in our inputs are small). nullptr when absent or not a map.
    const Node* get(std::string_view key) const;
    Node* get(std::string_view key);
    // The entry for key (with its key position), or nullptr.
    const MapEntry* entry(std::string_view key) const;
    // The node at a path of mapping keys ({"metadata", "name"}): nullptr when a key is absent or
    // a node on the way is not a map; the node itself for an empty path.
    const Node* at_path(std::initializer_list<std::string_view> keys) const;
    // The text of the scalar at_path(keys); "" when there is none, or it is null or not a scalar.
    std::string text_at(std::initializer_list<std::string_view> keys) const;

    // Typed views; nothing when the node is not of that kind or does not fit.
    std::optional<bool> as_bool() const;
    std::optional<std::int64_t> as_int() const;
    std::optional<double> as_double() const;

    // Builders for code that creates documents (emitters, renderers).
    static Node string(std::string s);
    static Node integer(std::int64_t v);
    static Node boolean(bool v);
    static Node map();
    static Node seq();
    // Appends (or replaces) a field of a mapping; returns the value node.
    Node& set(std::string key, Node value);
    Node& push(Node value);

    friend bool operator==(const Node& a, const Node& b); // structural, ignores marks and style
};

struct MapEntry {
    std::string key;
    Mark key_mark;
    Node value;
};

// n->at_path(keys), or nullptr when n is nullptr (for lookups that continue from one that may
// have failed).
const Node* at_path(const Node* n, std::initializer_list<std::string_view> keys);

// One document of a YAML stream or one value of a JSON sequence.
struct Document {
    Node root;
    int index = 0; // 0-based position in the file
    Mark start;
};

// The position of `node` inside `file`, in document `doc`, as a SourcePos for errors.
SourcePos pos_of(const std::string& file, const Mark& mark, int doc = -1);

} // namespace kpkg::io
