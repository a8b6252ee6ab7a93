// Values inside catalog blobs as opm holds them, for the streaming loader (load_catalog.cpp):
//
// - Scalars are canonical JSON scalars. opm reads YAML with Go's yaml.v2 (YAML 1.1: yes/no/on/off
//   are booleans, 0777 is octal, 1_000 an integer) and turns every document into JSON, and every
//   number it keeps goes through a float64; so a plain YAML scalar is typed by those rules and a
//   number of either format is written as Go writes a float64.
// - A value gets a structural digest (independent of the order of object keys and of the format
//   it was read from), the size of its compact JSON, and optionally that JSON with object keys
//   sorted (Go's encoding of a map), all computed from events without building the value.
// - Schema: what Go's encoding/json accepts when it decodes a value into one of opm's structs
//   (field names matched case-insensitively, null accepted for anything, unknown fields ignored,
//   []byte fields as standard base64). The checker walks the events against it, reports the first
//   mismatch with its path and position, and captures up to three string fields.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/io/events.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::catalog::detail {

enum class VKind : std::uint8_t { null, boolean, number, string, object, array };

const char* vkind_name(VKind k); // "null", "boolean", "number", "string", "object", "list"

// A scalar as opm sees it: kind and canonical text (numbers formatted as Go formats a float64,
// booleans "true"/"false", null "null"; strings as they are).
struct Scalar {
    VKind kind = VKind::null;
    std::string_view text;
    io::Mark mark;
};

// Turns parser scalars into canonical ones; `scratch` holds the text of converted numbers.
// `yaml`: the event comes from the YAML reader (plain scalars typed by YAML 1.1). Non-finite
// numbers (.inf, .nan) cannot be written as JSON, nor can !!binary text that is not base64: `bad`
// is set and the scalar is a string.
Scalar canonical(const io::ScalarEvent& ev, bool yaml, std::string& scratch, bool& bad);

// A YAML mapping key as opm gets it (yaml.v2 types a plain key by YAML 1.1 and sigs.k8s.io/yaml
// spells it as a string): booleans "true"/"false", integers in decimal, floats as Go's
// FormatFloat(f, 'g', -1, 32) ("1.0" is "1", "1e6" is "1e+06"), .inf/-.inf/.nan as such; other
// keys as they are. `out` may point into `scratch`. False, with `why`, for a key opm fails on: a
// null key, an integer only a uint64 holds, a key longer than 1024 characters.
bool yaml_key(const io::ScalarEvent& k, std::string& scratch, std::string_view& out,
              std::string& why);

// Go's fold for field names: ASCII case, plus the two non-ASCII characters that fold to ASCII
// letters (U+017F to 's', U+212A to 'k'). `name` is ASCII.
bool fold_equal(std::string_view key, std::string_view name);
// The folded form of a key (for duplicate detection).
std::string fold_key(std::string_view key);

// Whether `s` is standard base64 (with padding) as Go's encoding/json decodes []byte: '\r' and
// '\n' are ignored, anything else outside the alphabet is an error.
bool valid_base64(std::string_view s);

// A 64-bit hash of bytes (not cryptographic; for change detection).
std::uint64_t hash_bytes(std::string_view s, std::uint64_t seed = 0);

// --- events of one value ---------------------------------------------------------------------

class ValueSink {
public:
    virtual ~ValueSink() = default;
    virtual void begin(VKind k, io::Mark m) = 0; // object or array
    virtual void end() = 0;
    virtual void key(std::string_view k, io::Mark m) = 0;
    virtual void scalar(const Scalar& s) = 0;
};

// Structural digest and compact JSON size.
class Hasher final : public ValueSink {
public:
    // Ready for another value (keeps its memory).
    void reset() {
        frames_.clear();
        digest_ = bytes_ = 0;
        done_ = false;
    }
    void begin(VKind k, io::Mark m) override;
    void end() override;
    void key(std::string_view k, io::Mark m) override;
    void scalar(const Scalar& s) override;
    bool done() const { return done_; }
    std::uint64_t digest() const { return digest_; }
    std::uint64_t bytes() const { return bytes_; }

private:
    struct Frame {
        bool object = false;
        std::uint64_t acc = 0;
        std::uint64_t key_hash = 0;
        std::uint64_t size = 0; // of the members or items written so far
        std::uint32_t count = 0;
    };
    void value(std::uint64_t h, std::uint64_t size);
    std::vector<Frame> frames_;
    std::uint64_t digest_ = 0, bytes_ = 0;
    bool done_ = false;
};

// The value as compact JSON with object keys sorted and duplicate keys resolved (the last wins).
class JsonWriter final : public ValueSink {
public:
    void begin(VKind k, io::Mark m) override;
    void end() override;
    void key(std::string_view k, io::Mark m) override;
    void scalar(const Scalar& s) override;
    bool done() const { return done_; }
    std::string take();

private:
    struct Node {
        VKind kind = VKind::null;
        std::string text;
        std::vector<std::pair<std::string, std::uint32_t>> members; // object: key, node
        std::vector<std::uint32_t> items;                           // array
    };
    std::uint32_t add(Node n);
    void attach(std::uint32_t id);
    void write(std::string& out, std::uint32_t id) const;
    std::vector<Node> nodes_;
    std::vector<std::uint32_t> stack_;
    std::vector<std::string> keys_;
    bool done_ = false;
};

// Keeps the events to replay them later (for a property value read before its type).
class Recorder final : public ValueSink {
public:
    void begin(VKind k, io::Mark m) override;
    void end() override;
    void key(std::string_view k, io::Mark m) override;
    void scalar(const Scalar& s) override;
    void replay(ValueSink& to) const;
    bool done() const { return done_; }

private:
    struct Ev {
        std::uint8_t type; // 0 begin, 1 end, 2 key, 3 scalar
        VKind kind;
        io::Mark mark;
        std::string text;
    };
    std::vector<Ev> events_;
    int depth_ = 0;
    bool done_ = false;
};

// --- schemas ---------------------------------------------------------------------------------

enum class SchemaKind : std::uint8_t { any, string, boolean, bytes, object, array, string_map };

struct SchemaField;

struct Schema {
    SchemaKind kind = SchemaKind::any;
    const SchemaField* fields = nullptr; // object
    std::size_t n_fields = 0;
    const Schema* item = nullptr; // array
};

struct SchemaField {
    std::string_view name;
    const Schema* schema;
    int capture = -1; // 0, 1 or 2: the string value is captured
};

// The schemas of the property values opm decodes (alpha/property), by property type; nullptr
// for types opm keeps as raw JSON.
const Schema* property_schema(std::string_view type);
// A lenient object schema capturing olm.label's "label" (opm does not decode olm.label).
const Schema* label_schema();

struct Mismatch {
    std::string path;  // "version", "apiServiceDefinitions.owned[0].name", "" for the value
    std::string want;  // "a string", "an object", "a list", "a boolean", "base64 data"
    std::string found; // "number", "object"...; "" for invalid base64
    io::Mark mark;
};

// Walks one value against a schema. A lenient checker reports nothing and only captures.
class Checker final : public ValueSink {
public:
    explicit Checker(const Schema* root = nullptr, bool lenient = false);
    // Ready for another value (keeps its memory).
    void reset(const Schema* root, bool lenient);
    void begin(VKind k, io::Mark m) override;
    void end() override;
    void key(std::string_view k, io::Mark m) override;
    void scalar(const Scalar& s) override;
    bool done() const { return done_; }
    const std::optional<Mismatch>& mismatch() const { return mismatch_; }
    // Captured string fields (absent: nullopt; null: "").
    const std::optional<std::string>& capture(int i) const { return captures_[i]; }

private:
    struct Frame {
        const Schema* schema; // nullptr: not checked (unknown field, or after a mismatch)
        bool string_map = false;
        std::uint32_t index = 0;            // arrays: next item
        const SchemaField* field = nullptr; // objects: the field whose value comes next
        std::string key;                    // objects: the key read (for paths)
        bool known_key = false;
        bool is_array = false;
    };
    // The schema and capture slot for the next value in the current frame.
    const Schema* expected(int& capture) const;
    void mismatch(const char* want, const char* found, io::Mark m, const std::string& extra = {});
    std::string path() const;
    void advance();

    const Schema* root_;
    bool lenient_;
    std::vector<Frame> frames_;
    std::optional<Mismatch> mismatch_;
    std::optional<std::string> captures_[3];
    bool started_ = false, done_ = false;
};

// Sends each event to several sinks.
class Fanout final : public ValueSink {
public:
    void add(ValueSink* s) { sinks_.push_back(s); }
    void clear() { sinks_.clear(); }
    void begin(VKind k, io::Mark m) override {
        for (auto* s : sinks_)
            s->begin(k, m);
    }
    void end() override {
        for (auto* s : sinks_)
            s->end();
    }
    void key(std::string_view k, io::Mark m) override {
        for (auto* s : sinks_)
            s->key(k, m);
    }
    void scalar(const Scalar& sc) override {
        for (auto* s : sinks_)
            s->scalar(sc);
    }

private:
    std::vector<ValueSink*> sinks_;
};

} // namespace kpkg::catalog::detail
