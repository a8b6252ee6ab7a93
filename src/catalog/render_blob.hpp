// The blob layer of `kpkg catalog render`, private to src/catalog: one catalog blob from the
// JSON text opm's decoder sees to the compact JSON opm writes for it.
//
// What opm does with a blob read from a catalog (operator-registry alpha/declcfg/declcfg.go
// Meta.UnmarshalJSON, load.go fbcBuilder.addMeta, alpha/action/render.go), and so what this
// layer reproduces:
// - the blob is decoded into a map[string]interface{} and encoded again without HTML escaping:
//   object keys come out sorted bytewise at every level, a repeated key keeps its last value,
//   every number becomes a float64 (printed as encoding/json prints one: 1.0 -> 1,
//   1e21 -> 1e+21, 1e-7 -> 1e-7, integers past 2^53 rounded), invalid UTF-8 becomes U+FFFD;
// - schema, package and name are found ignoring case, and two top-level keys that differ only in
//   case are an error, as are non-string values for those three keys;
// - olm.package, olm.channel, olm.bundle and olm.deprecations blobs are then decoded into opm's
//   structs (fields matched ignoring case, unknown fields dropped, wrong types an error) and
//   written back in the structs' field order with their omitempty rules; every other schema is
//   written as the normalised blob;
// - a bundle's olm.bundle.object and olm.csv.metadata properties move after the others, its
//   relatedImages are sorted by image as Go's sort.Slice orders them, and each olm.bundle.object
//   must hold base64 data of a JSON or YAML document.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/error.hpp"
#include "kpkg/io/load.hpp"

namespace kpkg::catalog::detail {

// Where a value sits inside a blob: object keys and list indexes from the root.
struct PathStep {
    std::string key;         // object member, when index < 0
    std::int64_t index = -1; // list element
};
using Path = std::vector<PathStep>;

// A problem with one blob: the message, the value it is about, and that value's position in
// the JSON text the blob was read from (1-based; 0 when the text is not the source file).
struct BlobError {
    std::string message;
    Path path;
    std::uint32_t line = 0;
    std::uint32_t column = 0;
};

// The blob kinds in the order opm writes them within a package.
enum class BlobKind : std::uint8_t { package, channel, bundle, other, deprecation };

// What the writer needs to place a blob: opm groups by package (a blob without one is dropped,
// except other schemas, which go after all packages), then sorts channels and bundles by name
// and others by schema.
struct BlobInfo {
    BlobKind kind = BlobKind::other;
    std::string package;
    std::string name;
    std::string schema;
};

// One JSON value as a pre-order node list (a container is followed by its whole subtree; an
// object's members are key, value, key, value...), with decoded strings and numbers already
// in the form Go writes them.
class JsonTree {
public:
    enum class Type : std::uint8_t {
        null,
        boolean_false,
        boolean_true,
        number,
        string,
        array,
        object
    };
    struct Node {
        Type type = Type::null;
        bool in_arena = false;          // text lives in the tree's arena, not in the parsed input
        std::uint32_t subtree = 0;      // nodes below this one
        std::uint32_t count = 0;        // elements, or members of an object
        std::uint32_t off = 0, len = 0; // string: decoded text; number: Go's spelling
        std::uint32_t line = 0, column = 0;
    };

    void clear(std::string_view input) {
        nodes_.clear();
        arena_.clear();
        input_ = input;
    }
    const Node& at(std::size_t i) const { return nodes_[i]; }
    std::size_t size() const { return nodes_.size(); }
    std::string_view text(const Node& n) const {
        return n.in_arena ? std::string_view(arena_).substr(n.off, n.len)
                          : input_.substr(n.off, n.len);
    }
    std::string_view text(std::size_t i) const { return text(nodes_[i]); }
    // The index after i's subtree.
    std::size_t next(std::size_t i) const { return i + 1 + nodes_[i].subtree; }

    // Building a tree from a document read some other way (YAML): node texts are copied in.
    void reset() { clear({}); }
    std::size_t open(Type t) {
        nodes_.push_back(Node{t, false, 0, 0, 0, 0, 0, 0});
        return nodes_.size() - 1;
    }
    void close(std::size_t i, std::uint32_t count) {
        nodes_[i].subtree = static_cast<std::uint32_t>(nodes_.size() - i - 1);
        nodes_[i].count = count;
    }
    void add(Type t) { nodes_.push_back(Node{t, false, 0, 0, 0, 0, 0, 0}); }
    void add_string(std::string_view s) {
        const auto off = static_cast<std::uint32_t>(arena_.size());
        arena_.append(s);
        nodes_.push_back(
            Node{Type::string, true, 0, 0, off, static_cast<std::uint32_t>(s.size()), 0, 0});
    }
    // A number whose text (Go's spelling) was just appended to arena() from `from` on.
    void add_number_from(std::size_t from) {
        nodes_.push_back(Node{Type::number, true, 0, 0, static_cast<std::uint32_t>(from),
                              static_cast<std::uint32_t>(arena_.size() - from), 0, 0});
    }
    std::string& arena() { return arena_; }

private:
    friend class TreeBuilder;
    std::vector<Node> nodes_;
    std::string arena_;
    std::string_view input_;
};

// Go's encoding/json reading of one value at a time (a concatenated JSON stream when called
// repeatedly), with io's JSON reader (kpkg/io/json_reader.hpp): whitespace is space, tab, CR
// and LF; numbers follow the JSON grammar and must fit a float64; strings may not hold raw
// control characters; invalid UTF-8 and lone surrogates become U+FFFD; nesting deeper than
// `max_depth` is an error (no recursion either way).
class JsonParser {
public:
    explicit JsonParser(std::size_t max_depth) { limits_.max_depth = max_depth; }

    // Skips whitespace from `pos`; false at the end of the input.
    bool skip_space(std::string_view in, std::size_t& pos, std::uint32_t& line,
                    std::size_t& line_start) const;

    // Parses the value at in[pos] into `tree`, advancing pos, line and line_start (the offset
    // where the current line begins, for columns). On error, `err` gets the message and position.
    bool parse(std::string_view in, std::size_t& pos, std::uint32_t& line, std::size_t& line_start,
               JsonTree& tree, BlobError& err);

private:
    io::Limits limits_;
    std::vector<std::size_t> stack_;
};

// The tree opm's YAML reading makes of a YAML document (sigs.k8s.io/yaml's YAMLToJSON over
// gopkg.in/yaml.v2, then encoding/json): yaml.v2 typing of plain scalars, numbers as float64.
// False, with `err` (message and path), when a value has no JSON form (.inf, .nan) or a number
// does not fit a float64.
bool tree_from_yaml(const io::Node& doc, JsonTree& tree, BlobError& err);

// Turns parsed blobs into the compact JSON opm writes for them. Keeps scratch space between
// calls; one per thread.
class BlobConverter {
public:
    // Checks the blob in `tree` as opm's loader does and appends its output form to `out`.
    bool convert(const JsonTree& tree, std::string& out, BlobInfo& info, BlobError& err);

private:
    void write_value(const JsonTree& t, std::size_t i, std::string& out);
    void sorted_members(const JsonTree& t, std::size_t obj, std::vector<std::size_t>& keys) const;

    std::vector<std::vector<std::size_t>> member_scratch_;
    std::size_t depth_ = 0;
};

} // namespace kpkg::catalog::detail
