// The blob layer of `kpkg catalog render` (see render_blob.hpp for what opm does to a blob).
#include "render_blob.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "go_sort.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/json_reader.hpp"
#include "kpkg/io/load.hpp"
#include "values.hpp" // fold_key

namespace kpkg::catalog::detail {

namespace {

// Whether a key of the blob fills the struct field `field` (all lower-case ASCII in fold form).
inline bool matches_field(std::string_view key, std::string_view folded_field) {
    if (key.size() == folded_field.size()) {
        bool same = true;
        for (std::size_t i = 0; i < key.size() && same; ++i) {
            char c = key[i];
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            same = c == folded_field[i];
        }
        if (same) return true;
    }
    // The long forms (U+017F, U+212A) are longer than the letters they fold to.
    if (key.size() <= folded_field.size() || key.size() > folded_field.size() * 3) return false;
    for (const char c : key)
        if (c == '\xC5' || c == '\xE2') return fold_key(key) == folded_field;
    return false;
}

const char* kind_word(JsonTree::Type t) {
    switch (t) {
    case JsonTree::Type::null:
        return "null";
    case JsonTree::Type::boolean_false:
    case JsonTree::Type::boolean_true:
        return "boolean";
    case JsonTree::Type::number:
        return "number";
    case JsonTree::Type::string:
        return "string";
    case JsonTree::Type::array:
        return "list";
    case JsonTree::Type::object:
        return "object";
    }
    return "value";
}

bool is_json_space_prefix_brace(std::string_view data) {
    // apimachinery's yaml.ToJSON passes data on unchanged when, after Unicode white space, it
    // starts with '{'; anything else is converted from YAML.
    std::size_t i = 0;
    while (i < data.size()) {
        const auto c = static_cast<unsigned char>(data[i]);
        if (c == ' ' || (c >= '\t' && c <= '\r')) {
            ++i;
        } else if (c == 0xC2 && i + 1 < data.size() &&
                   (static_cast<unsigned char>(data[i + 1]) == 0x85 ||
                    static_cast<unsigned char>(data[i + 1]) == 0xA0)) {
            i += 2;
        } else {
            break;
        }
    }
    return i < data.size() && data[i] == '{';
}

} // namespace

// ------------------------------------------------------------------------------------------------
// The reader: io's JSON reader (kpkg/io/json_reader.hpp) building a JsonTree

// Builds the pre-order node list from the reader's events. Strings without escapes stay views
// of the input; decoded strings and numbers in Go's spelling go to the tree's arena.
class TreeBuilder {
public:
    TreeBuilder(JsonTree& tree, std::string_view in, std::vector<std::size_t>& stack)
        : tree_(tree), nodes_(tree.nodes_), in_(in), stack_(stack) {
        stack_.clear();
    }

    void document_start(int, io::Mark) {}
    void document_end() {}

    void mapping_start(io::Mark m) { open(JsonTree::Type::object, m); }
    void sequence_start(io::Mark m) { open(JsonTree::Type::array, m); }
    void mapping_end() { close(); }
    void sequence_end() { close(); }

    void key(const io::ScalarEvent& ev) {
        ++nodes_[stack_.back()].count;
        JsonTree::Node n = node(JsonTree::Type::string, ev.mark);
        text(n, ev.text);
        nodes_.push_back(n);
    }

    bool scalar(const io::ScalarEvent& ev) {
        JsonTree::Type t = JsonTree::Type::null;
        switch (ev.kind) {
        case io::Kind::string:
            t = JsonTree::Type::string;
            break;
        case io::Kind::boolean:
            t = ev.text == "true" ? JsonTree::Type::boolean_true : JsonTree::Type::boolean_false;
            break;
        case io::Kind::integer:
        case io::Kind::floating:
            t = JsonTree::Type::number;
            break;
        default:
            break;
        }
        JsonTree::Node n = node(t, ev.mark);
        if (t == JsonTree::Type::string) {
            text(n, ev.text);
        } else if (t == JsonTree::Type::number) {
            // Go reads every number of a blob into a float64 and writes it back so.
            std::string& a = tree_.arena_;
            const std::size_t before = a.size();
            if (!io::go::append_json_number(a, ev.text)) {
                refusal_ = "number " + std::string(ev.text) + " does not fit a float64";
                return false;
            }
            if (a.size() - before == ev.text.size() &&
                std::memcmp(a.data() + before, ev.text.data(), ev.text.size()) == 0) {
                a.resize(before);
                text(n, ev.text);
            } else {
                n.in_arena = true;
                n.off = static_cast<std::uint32_t>(before);
                n.len = static_cast<std::uint32_t>(a.size() - before);
            }
        }
        add(n);
        return true;
    }

    const std::string& refusal() const { return refusal_; }

private:
    static JsonTree::Node node(JsonTree::Type t, io::Mark m) {
        JsonTree::Node n;
        n.type = t;
        n.line = m.line;
        n.column = m.column;
        return n;
    }

    // A view of the input when `v` is one, else a copy in the arena.
    void text(JsonTree::Node& n, std::string_view v) {
        if (v.data() >= in_.data() && v.data() + v.size() <= in_.data() + in_.size()) {
            n.in_arena = false;
            n.off = static_cast<std::uint32_t>(v.data() - in_.data());
        } else {
            n.in_arena = true;
            n.off = static_cast<std::uint32_t>(tree_.arena_.size());
            tree_.arena_.append(v);
        }
        n.len = static_cast<std::uint32_t>(v.size());
    }

    void add(const JsonTree::Node& n) {
        if (!stack_.empty() && nodes_[stack_.back()].type == JsonTree::Type::array)
            ++nodes_[stack_.back()].count;
        nodes_.push_back(n);
    }

    void open(JsonTree::Type t, io::Mark m) {
        add(node(t, m));
        stack_.push_back(nodes_.size() - 1);
    }

    void close() {
        const std::size_t idx = stack_.back();
        stack_.pop_back();
        nodes_[idx].subtree = static_cast<std::uint32_t>(nodes_.size() - idx - 1);
    }

    JsonTree& tree_;
    std::vector<JsonTree::Node>& nodes_;
    std::string_view in_;
    std::vector<std::size_t>& stack_;
    std::string refusal_;
};

bool JsonParser::skip_space(std::string_view in, std::size_t& pos, std::uint32_t& line,
                            std::size_t& line_start) const {
    while (pos < in.size()) {
        const char c = in[pos];
        if (c == '\n') {
            ++line;
            line_start = ++pos;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            ++pos;
        } else {
            return true;
        }
    }
    return false;
}

bool JsonParser::parse(std::string_view in, std::size_t& pos, std::uint32_t& line,
                       std::size_t& line_start, JsonTree& tree, BlobError& err) {
    tree.clear(in);
    TreeBuilder b(tree, in, stack_);
    static const std::string no_file;
    io::detail::JsonReader<TreeBuilder> r(in, no_file, limits_, b);
    r.replace_invalid_utf8(true);
    r.resume(pos, line, line_start);
    if (!r.read_one()) {
        const Error& e = r.error();
        err.message = e.message;
        err.line = e.pos.line;
        err.column = e.pos.column;
        return false;
    }
    pos = r.offset();
    line = r.line();
    line_start = r.line_start();
    return true;
}

// ------------------------------------------------------------------------------------------------
// YAML documents

namespace {

class YamlToTree {
public:
    YamlToTree(JsonTree& t, BlobError& err) : t_(t), err_(err) {}

    bool value(const io::Node& n) {
        switch (n.kind) {
        case io::Kind::sequence: {
            const std::size_t i = t_.open(JsonTree::Type::array);
            for (std::size_t k = 0; k < n.items.size(); ++k) {
                path_.push_back({{}, static_cast<std::int64_t>(k)});
                if (!value(n.items[k])) return false;
                path_.pop_back();
            }
            t_.close(i, static_cast<std::uint32_t>(n.items.size()));
            return true;
        }
        case io::Kind::mapping: {
            const std::size_t i = t_.open(JsonTree::Type::object);
            for (const auto& e : n.fields) {
                t_.add_string(e.key);
                path_.push_back({e.key, -1});
                if (!value(e.value)) return false;
                path_.pop_back();
            }
            t_.close(i, static_cast<std::uint32_t>(n.fields.size()));
            return true;
        }
        default:
            break;
        }
        std::string& a = t_.arena();
        const std::size_t mark = a.size();
        switch (io::go::append_scalar(a, n)) {
        case io::go::JsonScalar::string:
            t_.add_string(n.text);
            return true;
        case io::go::JsonScalar::invalid:
            return fail("a value has no JSON form (.inf or .nan); opm cannot read this document");
        case io::go::JsonScalar::literal:
            break;
        }
        const std::string_view lit(a.data() + mark, a.size() - mark);
        if (lit == "null" || lit == "true" || lit == "false") {
            const auto type = lit == "null"   ? JsonTree::Type::null
                              : lit == "true" ? JsonTree::Type::boolean_true
                                              : JsonTree::Type::boolean_false;
            a.resize(mark);
            t_.add(type);
            return true;
        }
        // A number as sigs.k8s.io/yaml writes it, then read back as a float64 by opm's Meta.
        const std::string literal(lit);
        a.resize(mark);
        if (!io::go::append_json_number(a, literal))
            return fail("number " + literal + " does not fit a float64");
        t_.add_number_from(mark);
        return true;
    }

private:
    bool fail(std::string msg) {
        err_.message = std::move(msg);
        err_.path = path_;
        return false;
    }

    JsonTree& t_;
    BlobError& err_;
    Path path_;
};

} // namespace

bool tree_from_yaml(const io::Node& doc, JsonTree& tree, BlobError& err) {
    tree.reset();
    return YamlToTree(tree, err).value(doc);
}

// ------------------------------------------------------------------------------------------------
// The converter

void BlobConverter::sorted_members(const JsonTree& t, std::size_t obj,
                                   std::vector<std::size_t>& keys) const {
    keys.clear();
    const std::size_t end = t.next(obj);
    for (std::size_t k = obj + 1; k < end; k = t.next(k + 1))
        keys.push_back(k);
    // Go's map: one entry per key, the last value winning, keys in byte order.
    std::stable_sort(keys.begin(), keys.end(),
                     [&](std::size_t a, std::size_t b) { return t.text(a) < t.text(b); });
    std::size_t w = 0;
    for (std::size_t r = 0; r < keys.size(); ++r) {
        if (r + 1 < keys.size() && t.text(keys[r]) == t.text(keys[r + 1])) continue;
        keys[w++] = keys[r];
    }
    keys.resize(w);
}

void BlobConverter::write_value(const JsonTree& t, std::size_t i, std::string& out) {
    const JsonTree::Node& n = t.at(i);
    switch (n.type) {
    case JsonTree::Type::null:
        out += "null";
        return;
    case JsonTree::Type::boolean_false:
        out += "false";
        return;
    case JsonTree::Type::boolean_true:
        out += "true";
        return;
    case JsonTree::Type::number:
        out += t.text(n);
        return;
    case JsonTree::Type::string:
        io::go::append_string(out, t.text(n), false);
        return;
    case JsonTree::Type::array: {
        out += '[';
        const std::size_t end = t.next(i);
        bool first = true;
        for (std::size_t k = i + 1; k < end; k = t.next(k)) {
            if (!first) out += ',';
            first = false;
            write_value(t, k, out);
        }
        out += ']';
        return;
    }
    case JsonTree::Type::object: {
        // One scratch list per depth; deeper levels may grow member_scratch_, so the list is
        // looked up by index after every recursive call.
        const std::size_t d = depth_;
        if (member_scratch_.size() <= d) member_scratch_.resize(d + 1);
        sorted_members(t, i, member_scratch_[d]);
        ++depth_;
        out += '{';
        for (std::size_t m = 0; m < member_scratch_[d].size(); ++m) {
            const std::size_t key = member_scratch_[d][m];
            if (m > 0) out += ',';
            io::go::append_string(out, t.text(key), false);
            out += ':';
            write_value(t, key + 1, out);
        }
        --depth_;
        out += '}';
        return;
    }
    }
}

namespace {

// Decoding a normalised blob into opm's structs: encoding/json's rules for the field types
// those structs use.
class Decoder {
public:
    Decoder(const JsonTree& t, std::string schema, BlobError& err)
        : t_(t), schema_(std::move(schema)), err_(err) {}

    struct Fail {};

    const JsonTree& tree() const { return t_; }

    [[noreturn]] void fail(std::size_t node, std::string msg) {
        err_.message = std::move(msg);
        err_.path = path_;
        err_.line = t_.at(node).line;
        err_.column = t_.at(node).column;
        throw Fail{};
    }

    [[noreturn]] void type_error(std::size_t node, std::string_view field, const char* want) {
        fail(node, schema_ + " field \"" + std::string(field) + "\" must be " + want + ", not " +
                       kind_word(t_.at(node).type));
    }

    // For each field name (lower-case), the value node the struct field ends up with, npos when
    // none. Go decodes the map opm re-encoded: keys in byte order, one per key (the last of
    // repeated keys), each filling the field it matches; so the winner is the greatest matching
    // key, and of equal keys the last one.
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    template <std::size_t N>
    std::array<std::size_t, N> fields(std::size_t obj,
                                      const std::array<std::string_view, N>& names) {
        std::array<std::size_t, N> got;
        got.fill(npos);
        const std::size_t end = t_.next(obj);
        for (std::size_t k = obj + 1; k < end; k = t_.next(k + 1)) {
            const std::string_view key = t_.text(k);
            for (std::size_t f = 0; f < N; ++f) {
                if (!matches_field(key, names[f])) continue;
                if (got[f] == npos || t_.text(got[f] - 1) <= key) got[f] = k + 1;
            }
        }
        return got;
    }

    void push(std::string key) { path_.push_back({std::move(key), -1}); }
    void push(std::int64_t index) { path_.push_back({{}, index}); }
    void pop() { path_.pop_back(); }

    // A string field: absent or null gives "".
    std::string_view str(std::size_t node, std::string_view field) {
        if (node == npos) return {};
        const auto type = t_.at(node).type;
        if (type == JsonTree::Type::null) return {};
        if (type != JsonTree::Type::string) {
            push(std::string(field));
            type_error(node, field, "a string");
        }
        return t_.text(node);
    }

    // A list field: its element nodes; `present` tells null/absent (nil) from [].
    std::vector<std::size_t> list(std::size_t node, std::string_view field, bool& present) {
        std::vector<std::size_t> out;
        present = false;
        if (node == npos || t_.at(node).type == JsonTree::Type::null) return out;
        if (t_.at(node).type != JsonTree::Type::array) {
            push(std::string(field));
            type_error(node, field, "a list");
        }
        present = true;
        const std::size_t end = t_.next(node);
        for (std::size_t k = node + 1; k < end; k = t_.next(k))
            out.push_back(k);
        return out;
    }

    // An element that must decode into a struct: an object, or null (the zero struct).
    bool object_or_null(std::size_t node, std::string_view field) {
        const auto type = t_.at(node).type;
        if (type == JsonTree::Type::null) return false;
        if (type != JsonTree::Type::object) type_error(node, field, "an object");
        return true;
    }

    const std::string& schema() const { return schema_; }

private:
    const JsonTree& t_;
    std::string schema_;
    BlobError& err_;
    Path path_;
};

// opm reads every olm.bundle.object of a bundle it loads (declcfg readBundleObjects): the
// value decodes into {data: base64 bytes} and the bytes must be JSON (starting with '{') or
// YAML that converts to JSON. Only data that is not JSON is decoded in full.
void check_bundle_object(Decoder& d, std::size_t value) {
    const JsonTree& t = d.tree();
    if (value == Decoder::npos || t.at(value).type == JsonTree::Type::null) return;
    d.push("value");
    if (t.at(value).type != JsonTree::Type::object)
        d.fail(value, std::string("olm.bundle.object value must be an object with base64 "
                                  "\"data\", not ") +
                          kind_word(t.at(value).type));
    static const std::array<std::string_view, 1> names = {"data"};
    const std::size_t data = d.fields(value, names)[0];
    if (data == Decoder::npos || t.at(data).type == JsonTree::Type::null) {
        d.pop();
        return;
    }
    d.push("data");
    if (t.at(data).type != JsonTree::Type::string)
        d.fail(data, std::string("olm.bundle.object data must be a base64 string, not ") +
                         kind_word(t.at(data).type));
    const std::string_view b64 = t.text(data);
    std::size_t at = 0;
    if (!io::go::decode_base64(b64, nullptr, at))
        d.fail(data, "olm.bundle.object data is not valid base64 (illegal data at byte " +
                         std::to_string(at) + ")");
    // Decode just enough to see how the document starts.
    std::string head;
    std::size_t cut = 0, seen = 0;
    while (cut < b64.size() && seen < 64) {
        if (b64[cut] != '\r' && b64[cut] != '\n') ++seen;
        ++cut;
    }
    while (cut < b64.size() && seen % 4 != 0) {
        if (b64[cut] != '\r' && b64[cut] != '\n') ++seen;
        ++cut;
    }
    io::go::decode_base64(b64.substr(0, cut), &head, at);
    if (cut < b64.size() && head.find_first_not_of(" \t\r\n\v\f") == std::string::npos)
        head.clear(); // all white space so far: decode everything below
    if (!is_json_space_prefix_brace(head)) {
        std::string bytes;
        io::go::decode_base64(b64, &bytes, at);
        if (!is_json_space_prefix_brace(bytes)) {
            auto docs = io::parse_yaml(bytes, "olm.bundle.object");
            if (!docs.ok())
                d.fail(data,
                       "olm.bundle.object data is neither JSON nor YAML: " + docs.error().message);
        }
    }
    d.pop();
    d.pop();
}

void put_key(std::string& out, bool& first, std::string_view key) {
    out += first ? "{\"" : ",\"";
    first = false;
    out += key;
    out += "\":";
}

void put_str(std::string& out, bool& first, std::string_view key, std::string_view value) {
    put_key(out, first, key);
    io::go::append_string(out, value, false);
}

} // namespace

bool BlobConverter::convert(const JsonTree& t, std::string& out, BlobInfo& info, BlobError& err) {
    err = {};
    if (t.size() == 0 || t.at(0).type != JsonTree::Type::object) {
        err.message = std::string("a catalog blob must be an object, not ") +
                      (t.size() == 0 ? "nothing" : kind_word(t.at(0).type));
        if (t.size() > 0) {
            err.line = t.at(0).line;
            err.column = t.at(0).column;
        }
        return false;
    }
    const std::size_t before = out.size();
    try {
        Decoder d(t, {}, err);
        // Meta: top-level keys differing only in case are an error; schema, package and name
        // (matched ignoring case) must be strings when present.
        {
            // Two distinct keys that fold to the same: each key's fold looked up among those
            // of the keys before it (linear in the keys, however many there are).
            const std::size_t end = t.next(0);
            std::unordered_map<std::string, std::size_t> seen; // fold -> first key node
            for (std::size_t j = 1; j < end; j = t.next(j + 1)) {
                const std::string_view b = t.text(j);
                auto [it, added] = seen.try_emplace(fold_key(b), j);
                if (added) continue;
                const std::string_view a = t.text(it->second);
                if (a == b) continue; // the same key twice: the map keeps the last
                d.push(std::string(b));
                d.fail(j, "keys " + text::quote(a) + " and " + text::quote(b) +
                              " differ only in case (opm matches them as the same key)");
            }
        }
        // A properties list: [{"type": ..., "value": <raw>}], elements in order, or for a
        // bundle with olm.bundle.object and olm.csv.metadata moved after the others.
        auto write_properties = [&](Decoder& pd, std::size_t node, bool& first, bool bundle) {
            bool present = false;
            const auto props = pd.list(node, "properties", present);
            if (props.empty()) return;
            pd.push("properties");
            struct Prop {
                std::string_view type;
                std::size_t value; // node, or npos for null
                bool object;
            };
            std::vector<Prop> list;
            list.reserve(props.size());
            for (std::size_t p = 0; p < props.size(); ++p) {
                pd.push(static_cast<std::int64_t>(p));
                static const std::array<std::string_view, 2> pnames = {"type", "value"};
                std::array<std::size_t, 2> fp;
                fp.fill(Decoder::npos);
                if (pd.object_or_null(props[p], "properties[]")) fp = pd.fields(props[p], pnames);
                const std::string_view type = pd.str(fp[0], "type");
                const bool object = type == "olm.bundle.object" || type == "olm.csv.metadata";
                if (bundle && type == "olm.bundle.object") check_bundle_object(pd, fp[1]);
                list.push_back({type, fp[1], object});
                pd.pop();
            }
            pd.pop();
            if (bundle)
                std::stable_partition(list.begin(), list.end(),
                                      [](const Prop& p) { return !p.object; });
            put_key(out, first, "properties");
            out += '[';
            for (std::size_t p = 0; p < list.size(); ++p) {
                if (p > 0) out += ',';
                out += "{\"type\":";
                io::go::append_string(out, list[p].type, false);
                out += ",\"value\":";
                if (list[p].value == Decoder::npos) {
                    out += "null";
                } else {
                    depth_ = 0;
                    write_value(t, list[p].value, out);
                }
                out += '}';
            }
            out += ']';
        };
        std::string meta[3];
        static const std::array<std::string_view, 3> meta_names = {"schema", "package", "name"};
        const auto mf = d.fields(0, meta_names);
        for (std::size_t m = 0; m < 3; ++m) {
            if (mf[m] == Decoder::npos) continue;
            if (t.at(mf[m]).type != JsonTree::Type::string) {
                const std::string key(t.text(mf[m] - 1));
                d.push(key);
                d.fail(mf[m],
                       "\"" + key + "\" must be a string, not " + kind_word(t.at(mf[m]).type));
            }
            meta[m] = std::string(t.text(mf[m]));
        }
        const std::string& schema = meta[0];
        if (schema.empty()) {
            err.message = "blob has no \"schema\"";
            err.line = t.at(0).line;
            err.column = t.at(0).column;
            return false;
        }
        info.schema = schema;
        Decoder td(t, schema, err);
        if (schema == "olm.package") {
            info.kind = BlobKind::package;
            static const std::array<std::string_view, 6> names = {
                "schema", "name", "defaultchannel", "icon", "description", "properties"};
            const auto f = td.fields(0, names);
            bool first = true;
            put_str(out, first, "schema", td.str(f[0], "schema"));
            const std::string_view name = td.str(f[1], "name");
            put_str(out, first, "name", name);
            put_str(out, first, "defaultChannel", td.str(f[2], "defaultChannel"));
            if (f[3] != Decoder::npos && t.at(f[3]).type != JsonTree::Type::null) {
                td.push("icon");
                if (t.at(f[3]).type != JsonTree::Type::object)
                    td.type_error(f[3], "icon", "an object");
                static const std::array<std::string_view, 2> inames = {"base64data", "mediatype"};
                const auto fi = td.fields(f[3], inames);
                put_key(out, first, "icon");
                out += "{\"base64data\":";
                if (fi[0] == Decoder::npos || t.at(fi[0]).type == JsonTree::Type::null) {
                    out += "null";
                } else {
                    const std::string_view b64 = td.str(fi[0], "base64data");
                    std::string bytes;
                    std::size_t at = 0;
                    if (!io::go::decode_base64(b64, &bytes, at)) {
                        td.push("base64data");
                        td.fail(fi[0], "olm.package field \"icon.base64data\" is not valid base64 "
                                       "(illegal data at byte " +
                                           std::to_string(at) + ")");
                    }
                    out += '"';
                    io::go::append_base64(out, bytes);
                    out += '"';
                }
                out += ",\"mediatype\":";
                io::go::append_string(out, td.str(fi[1], "mediatype"), false);
                out += '}';
                td.pop();
            }
            const std::string_view desc = td.str(f[4], "description");
            if (!desc.empty()) put_str(out, first, "description", desc);
            write_properties(td, f[5], first, false);
            out += '}';
            info.package = std::string(name);
            info.name = std::string(name);
        } else if (schema == "olm.channel") {
            info.kind = BlobKind::channel;
            static const std::array<std::string_view, 5> names = {"schema", "name", "package",
                                                                  "entries", "properties"};
            const auto f = td.fields(0, names);
            bool first = true;
            put_str(out, first, "schema", td.str(f[0], "schema"));
            const std::string_view name = td.str(f[1], "name");
            const std::string_view pkg = td.str(f[2], "package");
            put_str(out, first, "name", name);
            put_str(out, first, "package", pkg);
            put_key(out, first, "entries");
            bool present = false;
            const auto entries = td.list(f[3], "entries", present);
            if (!present) {
                out += "null";
            } else {
                td.push("entries");
                out += '[';
                for (std::size_t e = 0; e < entries.size(); ++e) {
                    if (e > 0) out += ',';
                    td.push(static_cast<std::int64_t>(e));
                    static const std::array<std::string_view, 4> enames = {"name", "replaces",
                                                                           "skips", "skiprange"};
                    std::array<std::size_t, 4> fe;
                    fe.fill(Decoder::npos);
                    if (td.object_or_null(entries[e], "entries[]"))
                        fe = td.fields(entries[e], enames);
                    bool efirst = true;
                    put_str(out, efirst, "name", td.str(fe[0], "name"));
                    const std::string_view rep = td.str(fe[1], "replaces");
                    if (!rep.empty()) put_str(out, efirst, "replaces", rep);
                    bool skips_present = false;
                    const auto skips = td.list(fe[2], "skips", skips_present);
                    if (!skips.empty()) {
                        td.push("skips");
                        put_key(out, efirst, "skips");
                        out += '[';
                        for (std::size_t s = 0; s < skips.size(); ++s) {
                            if (s > 0) out += ',';
                            td.push(static_cast<std::int64_t>(s));
                            io::go::append_string(out, td.str(skips[s], "skips[]"), false);
                            td.pop();
                        }
                        out += ']';
                        td.pop();
                    }
                    const std::string_view range = td.str(fe[3], "skipRange");
                    if (!range.empty()) put_str(out, efirst, "skipRange", range);
                    out += '}';
                    td.pop();
                }
                out += ']';
                td.pop();
            }
            write_properties(td, f[4], first, false);
            out += '}';
            info.package = std::string(pkg);
            info.name = std::string(name);
        } else if (schema == "olm.bundle") {
            info.kind = BlobKind::bundle;
            static const std::array<std::string_view, 6> names = {
                "schema", "name", "package", "image", "properties", "relatedimages"};
            const auto f = td.fields(0, names);
            bool first = true;
            put_str(out, first, "schema", td.str(f[0], "schema"));
            const std::string_view name = td.str(f[1], "name");
            const std::string_view pkg = td.str(f[2], "package");
            if (!name.empty()) put_str(out, first, "name", name);
            if (!pkg.empty()) put_str(out, first, "package", pkg);
            put_str(out, first, "image", td.str(f[3], "image"));
            write_properties(td, f[4], first, true);
            bool present = false;
            const auto images = td.list(f[5], "relatedImages", present);
            if (!images.empty()) {
                td.push("relatedImages");
                struct Image {
                    std::string_view name, image;
                };
                std::vector<Image> list;
                list.reserve(images.size());
                for (std::size_t r = 0; r < images.size(); ++r) {
                    td.push(static_cast<std::int64_t>(r));
                    static const std::array<std::string_view, 2> rnames = {"name", "image"};
                    std::array<std::size_t, 2> fr;
                    fr.fill(Decoder::npos);
                    if (td.object_or_null(images[r], "relatedImages[]"))
                        fr = td.fields(images[r], rnames);
                    list.push_back({td.str(fr[0], "name"), td.str(fr[1], "image")});
                    td.pop();
                }
                td.pop();
                go_sort_slice(list,
                              [](const Image& a, const Image& b) { return a.image < b.image; });
                put_key(out, first, "relatedImages");
                out += '[';
                for (std::size_t r = 0; r < list.size(); ++r) {
                    if (r > 0) out += ',';
                    bool rfirst = true;
                    put_str(out, rfirst, "name", list[r].name);
                    put_str(out, rfirst, "image", list[r].image);
                    out += '}';
                }
                out += ']';
            }
            out += '}';
            info.package = std::string(pkg);
            info.name = std::string(name);
        } else if (schema == "olm.deprecations") {
            info.kind = BlobKind::deprecation;
            static const std::array<std::string_view, 3> names = {"schema", "package", "entries"};
            const auto f = td.fields(0, names);
            bool first = true;
            put_str(out, first, "schema", td.str(f[0], "schema"));
            const std::string_view pkg = td.str(f[1], "package");
            put_str(out, first, "package", pkg);
            put_key(out, first, "entries");
            bool present = false;
            const auto entries = td.list(f[2], "entries", present);
            if (!present) {
                out += "null";
            } else {
                td.push("entries");
                out += '[';
                for (std::size_t e = 0; e < entries.size(); ++e) {
                    if (e > 0) out += ',';
                    td.push(static_cast<std::int64_t>(e));
                    static const std::array<std::string_view, 2> enames = {"reference", "message"};
                    std::array<std::size_t, 2> fe;
                    fe.fill(Decoder::npos);
                    if (td.object_or_null(entries[e], "entries[]"))
                        fe = td.fields(entries[e], enames);
                    std::string_view ref_schema, ref_name;
                    if (fe[0] != Decoder::npos) {
                        td.push("reference");
                        if (td.object_or_null(fe[0], "reference")) {
                            static const std::array<std::string_view, 2> rnames = {"schema",
                                                                                   "name"};
                            const auto fr = td.fields(fe[0], rnames);
                            ref_schema = td.str(fr[0], "schema");
                            ref_name = td.str(fr[1], "name");
                        }
                        td.pop();
                    }
                    out += "{\"reference\":";
                    bool rfirst = true;
                    put_str(out, rfirst, "schema", ref_schema);
                    if (!ref_name.empty()) put_str(out, rfirst, "name", ref_name);
                    out += "},\"message\":";
                    io::go::append_string(out, td.str(fe[1], "message"), false);
                    out += '}';
                    td.pop();
                }
                out += ']';
                td.pop();
            }
            out += '}';
            info.package = std::string(pkg);
        } else {
            info.kind = BlobKind::other;
            info.package = meta[1];
            info.name = meta[2];
            depth_ = 0;
            write_value(t, 0, out);
        }
    } catch (const Decoder::Fail&) {
        out.resize(before);
        return false;
    }
    return true;
}

} // namespace kpkg::catalog::detail
