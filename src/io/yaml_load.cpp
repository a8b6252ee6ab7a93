// The YAML reader: yaml-cpp's event parser feeding a builder that makes io::Node trees directly.
//
// yaml-cpp does the tokenising; this file adds what kpkg needs on top of it:
// - YAML 1.2 core-schema typing of plain scalars and the common explicit tags (!!str, !!int...);
// - 1-based positions for every node and map key, and for every error;
// - duplicate keys, non-scalar keys, nesting depth and alias expansion ("billion laughs") checks;
// - checks for input yaml-cpp 0.7 accepts although it is not YAML: invalid UTF-8 and control
//   characters (a 0x04 byte even ends its input silently), tabs used as indentation, a quoted
//   scalar left open at the end of the input, and a second document without "---";
// - readable messages for yaml-cpp's exceptions.
#include "kpkg/io/load.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cstring>
#include <istream>
#include <memory>
#include <optional>
#include <streambuf>
#include <string>
#include <unordered_set>
#include <vector>

namespace kpkg::io {

namespace detail { // node.cpp
std::size_t utf8_decode(const char* p, const char* end, char32_t& cp);
bool is_yaml_null(std::string_view s);
bool is_yaml_bool(std::string_view s);
bool is_yaml_int(std::string_view s);
bool is_yaml_float(std::string_view s);
Kind resolve_plain(std::string_view s);
} // namespace detail

namespace {

constexpr std::size_t npos = std::string_view::npos;

// Lets std::istream read memory owned by the caller, without a copy.
class ViewBuf : public std::streambuf {
public:
    ViewBuf(const char* p, std::size_t n) {
        char* b = const_cast<char*>(p); // never written: the buffer is only read from
        setg(b, b, b + n);
    }
};

// Thrown by the builder to stop yaml-cpp; caught in parse_yaml.
struct Abort {
    Error error;
};

std::string hex_byte(unsigned char c) {
    static const char digits[] = "0123456789ABCDEF";
    return std::string("0x") + digits[c >> 4] + digits[c & 15];
}

std::string code_point(char32_t cp) {
    static const char digits[] = "0123456789ABCDEF";
    std::string s = "U+";
    const int width = cp > 0xFFFF ? 6 : 4;
    for (int i = width - 1; i >= 0; --i)
        s += digits[(cp >> (4 * i)) & 15];
    return s;
}

// Line and column (1-based, bytes) of offset `at` in src, counted from the start.
Mark mark_of_offset(std::string_view src, std::size_t at) {
    Mark m{1, 1};
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < at && i < src.size(); ++i) {
        if (src[i] == '\n') {
            ++m.line;
            line_start = i + 1;
        }
    }
    m.column = static_cast<std::uint32_t>(at - line_start + 1);
    return m;
}

SourcePos position(const std::string& file, Mark m, int doc) {
    return pos_of(file, m, doc);
}

// Rejects what YAML does not allow in a stream: invalid UTF-8, C0 controls other than tab and
// line breaks, DEL, C1 controls other than NEL, U+FFFE and U+FFFF.
std::optional<Error> prescan(std::string_view src, const std::string& file) {
    constexpr std::uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    const char* const begin = src.data();
    const char* const end = begin + src.size();
    const char* p = begin;
    while (p < end) {
        // Eight printable ASCII bytes at a time.
        while (end - p >= 8) {
            std::uint64_t w;
            std::memcpy(&w, p, 8);
            const std::uint64_t low = (w - ones * 0x20) & ~w & high;
            if (((w | (w + ones)) & high) != 0 || low != 0) break;
            p += 8;
        }
        if (p >= end) break;
        const auto c = static_cast<unsigned char>(*p);
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
                return Error::invalid("control character " + code_point(c) +
                                          " is not allowed in YAML",
                                      position(file, mark_of_offset(src, p - begin), -1));
            }
            ++p;
            continue;
        }
        char32_t cp = 0;
        const std::size_t len = detail::utf8_decode(p, end, cp);
        if (len == 0)
            return Error::invalid("invalid UTF-8 byte " + hex_byte(c),
                                  position(file, mark_of_offset(src, p - begin), -1));
        if ((cp >= 0x80 && cp <= 0x9F && cp != 0x85) || cp == 0xFFFE || cp == 0xFFFF)
            return Error::invalid("character " + code_point(cp) + " is not allowed in YAML",
                                  position(file, mark_of_offset(src, p - begin), -1));
        p += len;
    }
    return std::nullopt;
}

Mark to_mark(const YAML::Mark& m) {
    if (m.line < 0 || m.column < 0) return Mark{};
    return Mark{static_cast<std::uint32_t>(m.line + 1), static_cast<std::uint32_t>(m.column + 1)};
}

// What a node costs against Limits::max_alias_nodes when an alias copies it: one per node, plus
// one per 64 bytes of text, so that aliases of one huge string cannot exhaust memory either.
std::size_t text_cost(const std::string& s) {
    return s.size() / 64;
}

class Builder final : public YAML::EventHandler {
public:
    Builder(std::string_view src, const std::string& file, const Limits& limits,
            std::vector<Document>& out)
        : src_(src), file_(file), limits_(limits), out_(out) {}

    void OnDocumentStart(const YAML::Mark& m) override {
        index_ = next_index_++;
        frames_.clear();
        open_.clear();
        anchors_.clear();
        root_ = Node{};
        have_root_ = false;
        root_empty_ = false;
        // yaml-cpp starts a new document silently when block content continues at a lower
        // indentation ("- a\nb: 1"); YAML needs "---" there unless "..." ended the previous one.
        if (index_ > 0 && !at_marker(pos(m), "---") && !doc_end_between(prev_end_, pos(m))) {
            throw Abort{error(to_mark(m), "unexpected content after the end of the document "
                                          "(a new document must start with \"---\"; is the "
                                          "indentation right?)")};
        }
    }

    void OnDocumentEnd() override {
        if (poisoned_) throw Abort{std::move(pending_)};
        if (have_root_ && !root_empty_) {
            Document d;
            d.start = root_.mark;
            d.index = index_;
            d.root = std::move(root_);
            out_.push_back(std::move(d));
        }
        root_ = Node{};
        anchors_.clear();
        prev_end_ = last_pos_;
    }

    void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override {
        if (poisoned_) return;
        seen(m);
        Node n;
        n.kind = Kind::null;
        n.plain = true;
        n.mark = to_mark(m);
        n.text = null_literal(pos(m));
        const bool empty = n.text.empty();
        if (!empty) check_indent(m);
        // An absent value is reported by yaml-cpp at the next token; the key is a better place.
        if (empty && !frames_.empty() && frames_.back().node.is_map() && frames_.back().have_key)
            n.mark = frames_.back().key_mark;
        if (frames_.empty()) root_empty_ = empty;
        complete(std::move(n), anchor, 1);
    }

    void OnAlias(const YAML::Mark& m, YAML::anchor_t anchor) override {
        if (poisoned_) return;
        seen(m);
        check_indent(m);
        if (anchor >= anchors_.size() || !anchors_[anchor].complete)
            throw Abort{error(to_mark(m), "alias " + alias_name(m) +
                                              " refers to a node that contains it (recursive "
                                              "aliases are not supported)")};
        const AnchorRec& a = anchors_[anchor];
        alias_cost_ += a.cost;
        if (alias_cost_ > limits_.max_alias_nodes)
            throw Abort{error(to_mark(m), "aliases expand to more than " +
                                              std::to_string(limits_.max_alias_nodes) +
                                              " nodes (is this an alias bomb?)")};
        Node n = a.shell;
        if (a.items != nullptr) n.items.assign(a.items, a.items + a.n_items);
        if (a.fields != nullptr) n.fields.assign(a.fields, a.fields + a.n_fields);
        n.mark = to_mark(m);
        complete(std::move(n), 0, a.cost);
    }

    void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t anchor,
                  const std::string& value) override {
        if (poisoned_) return;
        seen(m);
        check_indent(m);
        Node n;
        n.mark = to_mark(m);
        if (tag == "?") {
            n.kind = detail::resolve_plain(value);
            n.plain = true;
        } else {
            n.kind = tagged_kind(m, tag, value);
            last_nonplain_ = m;
            has_nonplain_ = true;
        }
        n.text = value;
        const std::size_t cost = 1 + text_cost(n.text);
        complete(std::move(n), anchor, cost);
    }

    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value style) override {
        open_.push_back(Open{Kind::sequence, style == YAML::EmitterStyle::Flow, to_mark(m)});
        start(m, Kind::sequence, anchor, style);
    }
    void OnSequenceEnd() override {
        if (!open_.empty()) open_.pop_back();
        if (!poisoned_) end();
    }

    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value style) override {
        open_.push_back(Open{Kind::mapping, style == YAML::EmitterStyle::Flow, to_mark(m)});
        start(m, Kind::mapping, anchor, style);
    }
    void OnMapEnd() override {
        if (!open_.empty()) open_.pop_back();
        if (!poisoned_) end();
    }

    // Where the innermost flow collection of this kind still open was started, if any.
    std::optional<Mark> open_flow(Kind kind) const {
        for (auto it = open_.rbegin(); it != open_.rend(); ++it)
            if (it->flow && it->kind == kind) return it->mark;
        return std::nullopt;
    }

    // After the last document: a quoted scalar still open at the end of the input is accepted
    // by yaml-cpp when the input ends with a line break; reject it here.
    void finish() const {
        if (!has_nonplain_) return;
        std::size_t p = skip_properties(pos(last_nonplain_));
        if (p >= src_.size() || (src_[p] != '"' && src_[p] != '\'')) return;
        const char q = src_[p];
        for (std::size_t i = p + 1; i < src_.size(); ++i) {
            if (q == '"' && src_[i] == '\\') {
                ++i;
            } else if (src_[i] == q) {
                if (q == '\'' && i + 1 < src_.size() && src_[i + 1] == '\'') {
                    ++i;
                } else {
                    return;
                }
            }
        }
        throw Abort{error(mark_of_offset(src_, p), "unterminated quoted string")};
    }

    int index() const { return index_; }
    std::size_t depth() const { return frames_.size(); }
    const YAML::Mark& last_container() const { return last_container_; }

private:
    struct Frame {
        Node node;
        YAML::anchor_t anchor = 0;
        bool flow = false;
        bool have_key = false;
        std::string key;
        Mark key_mark;
        std::size_t cost = 1;
        // Keys seen so far, once the mapping is big enough for linear search to hurt.
        std::unique_ptr<std::unordered_set<std::string>> keys;
    };

    // An anchored node. Scalars are copied; for collections the element arrays are remembered:
    // once a collection is complete its vectors never change again during the document (moving
    // the node moves the vector, not the elements), so the pointers stay valid.
    struct AnchorRec {
        bool complete = false;
        Node shell;
        const Node* items = nullptr;
        std::size_t n_items = 0;
        const MapEntry* fields = nullptr;
        std::size_t n_fields = 0;
        std::size_t cost = 0;
    };

    std::size_t pos(const YAML::Mark& m) const {
        return m.pos < 0 ? src_.size() : std::min(static_cast<std::size_t>(m.pos), src_.size());
    }

    void seen(const YAML::Mark& m) { last_pos_ = std::max(last_pos_, pos(m)); }

    Error error(Mark m, std::string msg) const {
        return Error::invalid(std::move(msg), position(file_, m, index_));
    }

    bool at_marker(std::size_t p, std::string_view marker) const {
        if (src_.compare(p, marker.size(), marker) != 0) return false;
        const std::size_t after = p + marker.size();
        return after >= src_.size() || src_[after] == ' ' || src_[after] == '\t' ||
               src_[after] == '\n' || src_[after] == '\r';
    }

    // Whether a line in (from, to] starts with the document end marker "...".
    bool doc_end_between(std::size_t from, std::size_t to) const {
        for (std::size_t i = from; i < to && i < src_.size(); ++i)
            if (src_[i] == '\n' && at_marker(i + 1, "...")) return true;
        return false;
    }

    // Skips node properties (tags, anchors) and the blanks after them.
    std::size_t skip_properties(std::size_t p) const {
        while (p < src_.size() && (src_[p] == '!' || src_[p] == '&')) {
            while (p < src_.size() && src_[p] != ' ' && src_[p] != '\t' && src_[p] != '\n' &&
                   src_[p] != '\r')
                ++p;
            while (p < src_.size() &&
                   (src_[p] == ' ' || src_[p] == '\t' || src_[p] == '\n' || src_[p] == '\r'))
                ++p;
        }
        return p;
    }

    // The null literal (~, null, Null, NULL) written at p, or "" for an empty node.
    std::string null_literal(std::size_t p) const {
        p = skip_properties(p);
        for (std::string_view lit : {"~", "null", "Null", "NULL"}) {
            if (src_.compare(p, lit.size(), lit) != 0) continue;
            const std::size_t after = p + lit.size();
            if (after >= src_.size() || std::strchr(" \t\r\n,]}:#", src_[after]) != nullptr)
                return std::string(lit);
        }
        return {};
    }

    std::string alias_name(const YAML::Mark& m) const {
        std::size_t p = pos(m), e = p;
        while (e < src_.size() && e - p < 64 && std::strchr(" \t\r\n,]}", src_[e]) == nullptr)
            ++e;
        if (e == p) return "(unnamed)";
        return std::string(src_.substr(p, e - p));
    }

    // Tabs may separate tokens but never indent block content.
    void check_indent(const YAML::Mark& m) const {
        if (!frames_.empty() && frames_.back().flow) return;
        if (m.pos < 0 || m.column <= 0) return;
        const std::size_t end = pos(m);
        const auto col = static_cast<std::size_t>(m.column);
        if (col > end) return;
        std::size_t tab = npos;
        for (std::size_t i = end - col; i < end; ++i) {
            if (src_[i] == '\t') {
                if (tab == npos) tab = i;
            } else if (src_[i] != ' ') {
                return;
            }
        }
        if (tab != npos)
            throw Abort{error(Mark{static_cast<std::uint32_t>(m.line + 1),
                                   static_cast<std::uint32_t>(tab - (end - col) + 1)},
                              "tab character in indentation (YAML allows only spaces)")};
    }

    Kind tagged_kind(const YAML::Mark& m, const std::string& tag, const std::string& value) const {
        static const std::string core = "tag:yaml.org,2002:";
        if (tag.compare(0, core.size(), core) != 0) return Kind::string; // "!" or a local tag
        const std::string_view name = std::string_view(tag).substr(core.size());
        auto bad = [&](const char* what) {
            return Abort{error(to_mark(m), "\"" + value + "\" is not " + what + " (tag !!" +
                                               std::string(name) + ")")};
        };
        if (name == "int") {
            if (!detail::is_yaml_int(value)) throw bad("an integer");
            return Kind::integer;
        }
        if (name == "float") {
            if (!detail::is_yaml_float(value) && !detail::is_yaml_int(value)) throw bad("a number");
            return Kind::floating;
        }
        if (name == "bool") {
            if (!detail::is_yaml_bool(value)) throw bad("a boolean");
            return Kind::boolean;
        }
        if (name == "null") {
            if (!detail::is_yaml_null(value)) throw bad("null");
            return Kind::null;
        }
        return Kind::string; // !!str, and tags kpkg has no type for (!!binary, !!timestamp)
    }

    void start(const YAML::Mark& m, Kind kind, YAML::anchor_t anchor,
               YAML::EmitterStyle::value style) {
        if (poisoned_) return;
        seen(m);
        check_indent(m);
        const Mark at = to_mark(m);
        if (!frames_.empty() && frames_.back().node.is_map() && !frames_.back().have_key) {
            // yaml-cpp also produces this shape just before it fails on a flow collection left
            // open at the end of the input; its error is the right one then. So the rest of
            // the document is only checked for syntax, and this error waits for its end.
            pending_ = error(at, std::string("a mapping key must be a scalar, not ") +
                                     (kind == Kind::mapping ? "an object" : "a list"));
            poisoned_ = true;
            return;
        }
        if (frames_.size() >= limits_.max_depth)
            throw Abort{
                error(at, "nesting deeper than " + std::to_string(limits_.max_depth) + " levels")};
        last_container_ = m;
        Frame f;
        f.node.kind = kind;
        f.node.mark = at;
        f.anchor = anchor;
        f.flow = style == YAML::EmitterStyle::Flow || (!frames_.empty() && frames_.back().flow);
        if (anchor != 0) {
            if (anchor >= anchors_.size()) anchors_.resize(anchor + 1);
            anchors_[anchor] = AnchorRec{};
        }
        frames_.push_back(std::move(f));
    }

    void end() {
        Frame f = std::move(frames_.back());
        frames_.pop_back();
        if (f.have_key) { // not produced by yaml-cpp, but keep the key if it ever happens
            f.node.fields.push_back(MapEntry{std::move(f.key), f.key_mark, Node{}});
        }
        complete(std::move(f.node), f.anchor, f.cost);
    }

    void record_anchor(const Node& n, YAML::anchor_t anchor, std::size_t cost) {
        if (anchor >= anchors_.size()) anchors_.resize(anchor + 1);
        AnchorRec& a = anchors_[anchor];
        a = AnchorRec{};
        a.complete = true;
        a.cost = cost;
        a.shell.kind = n.kind;
        a.shell.plain = n.plain;
        a.shell.mark = n.mark;
        if (n.is_seq()) {
            a.items = n.items.data();
            a.n_items = n.items.size();
        } else if (n.is_map()) {
            a.fields = n.fields.data();
            a.n_fields = n.fields.size();
        } else {
            a.shell.text = n.text;
        }
    }

    // Whether key is already in the mapping of f (and remembers it when it is not).
    bool duplicate(Frame& f, const std::string& key) {
        if (f.keys) return !f.keys->insert(key).second;
        for (const MapEntry& e : f.node.fields)
            if (e.key == key) return true;
        if (f.node.fields.size() >= 16) {
            f.keys = std::make_unique<std::unordered_set<std::string>>();
            for (const MapEntry& e : f.node.fields)
                f.keys->insert(e.key);
            f.keys->insert(key);
        }
        return false;
    }

    void complete(Node&& n, YAML::anchor_t anchor, std::size_t cost) {
        if (anchor != 0) record_anchor(n, anchor, cost);
        if (frames_.empty()) {
            root_ = std::move(n);
            have_root_ = true;
            return;
        }
        Frame& f = frames_.back();
        if (f.node.is_seq()) {
            f.cost += cost;
            f.node.items.push_back(std::move(n));
            return;
        }
        if (!f.have_key) {
            if (!n.is_scalar())
                throw Abort{error(n.mark, std::string("a mapping key must be a scalar, not ") +
                                              (n.is_map() ? "an object" : "a list"))};
            if (duplicate(f, n.text)) {
                std::string shown = n.text.size() > 80 ? n.text.substr(0, 80) + "..." : n.text;
                Error e = error(n.mark, "duplicate key \"" + shown + "\"");
                for (const MapEntry& prev : f.node.fields)
                    if (prev.key == n.text && prev.key_mark.line != 0)
                        e.note("first defined at line " + std::to_string(prev.key_mark.line) +
                               ", column " + std::to_string(prev.key_mark.column));
                throw Abort{std::move(e)};
            }
            f.cost += text_cost(n.text);
            f.key = std::move(n.text);
            f.key_mark = n.mark;
            f.have_key = true;
            return;
        }
        f.cost += cost;
        f.node.fields.push_back(MapEntry{std::move(f.key), f.key_mark, std::move(n)});
        f.key.clear();
        f.have_key = false;
    }

    std::string_view src_;
    const std::string& file_;
    const Limits& limits_;
    std::vector<Document>& out_;

    int index_ = -1;
    int next_index_ = 0;
    std::vector<Frame> frames_;
    std::vector<AnchorRec> anchors_;
    Node root_;
    bool have_root_ = false;
    bool root_empty_ = false;
    std::size_t alias_cost_ = 0;
    std::size_t last_pos_ = 0;
    std::size_t prev_end_ = 0;
    YAML::Mark last_nonplain_;
    bool has_nonplain_ = false;
    YAML::Mark last_container_;
    bool poisoned_ = false; // an error is pending until the end of the document
    Error pending_;
    // Every collection yaml-cpp has started and not ended, kept even while poisoned.
    struct Open {
        Kind kind;
        bool flow;
        Mark mark;
    };
    std::vector<Open> open_;
};

bool starts_with(const std::string& s, const char* prefix) {
    return s.compare(0, std::strlen(prefix), prefix) == 0;
}

// yaml-cpp's message for an exception, in kpkg's words.
std::string readable(const YAML::Exception& e, std::string_view src) {
    namespace M = YAML::ErrorMsg;
    const std::string& msg = e.msg;
    struct Entry {
        const char* from;
        const char* to;
    };
    static const Entry table[] = {
        {M::END_OF_MAP, "did not find the expected key (is the indentation right?)"},
        {M::END_OF_MAP_FLOW, "unclosed '{': expected ',' or '}'"},
        {M::END_OF_SEQ, "did not find the expected '-' (is the indentation right?)"},
        {M::END_OF_SEQ_FLOW, "unclosed '[': expected ',' or ']'"},
        {M::MAP_VALUE, "unexpected ':' (a mapping value is not allowed here; quote a value that "
                       "contains \": \")"},
        {M::MAP_KEY, "unexpected '?' (a mapping key is not allowed here)"},
        {M::BLOCK_ENTRY, "unexpected '-' (a list item is not allowed here)"},
        {M::FLOW_END, "unexpected closing bracket"},
        {M::TAB_IN_INDENTATION, "tab character in indentation (YAML allows only spaces)"},
        {M::EOF_IN_SCALAR, "unterminated quoted string"},
        {M::DOC_IN_SCALAR, "document marker inside a quoted string (is a quote not closed?)"},
        {M::CHAR_IN_SCALAR, "invalid character in a scalar"},
        {M::INVALID_HEX, "invalid hex digit in an escape sequence"},
        {M::ZERO_INDENT_IN_BLOCK, "a block scalar cannot have an indentation of zero"},
        {M::CHAR_IN_BLOCK, "unexpected character in a block scalar header"},
        {M::ALIAS_CONTENT, "an alias cannot have content or a tag"},
        {M::ALIAS_NOT_FOUND, "missing alias name after '*'"},
        {M::ANCHOR_NOT_FOUND, "missing anchor name after '&'"},
    };
    for (const Entry& t : table)
        if (msg == t.from) return t.to;
    if (msg == M::UNKNOWN_TOKEN) {
        std::string s = "found a character that cannot start any token";
        if (e.mark.pos >= 0 && static_cast<std::size_t>(e.mark.pos) < src.size()) {
            const char c = src[static_cast<std::size_t>(e.mark.pos)];
            if (c == '@' || c == '`')
                s = std::string("'") + c +
                    "' is reserved and cannot start a plain scalar "
                    "(quote the value)";
            else if (c > 0x20 && c < 0x7F)
                s = std::string("found '") + c + "', which cannot start any token";
        }
        return s;
    }
    if (msg == M::UNKNOWN_ANCHOR) {
        std::string name;
        if (e.mark.pos >= 0) {
            std::size_t p = static_cast<std::size_t>(e.mark.pos), q = p;
            while (q < src.size() && q - p < 64 && std::strchr(" \t\r\n,]}", src[q]) == nullptr)
                ++q;
            name = std::string(src.substr(p, q - p));
        }
        if (!name.empty() && name[0] == '*') return "alias " + name + " has no anchor";
        return "alias refers to an undefined anchor";
    }
    if (starts_with(msg, M::INVALID_ESCAPE))
        return "invalid escape sequence \"\\" + msg.substr(std::strlen(M::INVALID_ESCAPE)) +
               "\" in a double-quoted string";
    if (starts_with(msg, M::INVALID_UNICODE))
        return "invalid Unicode escape: " + msg.substr(std::strlen(M::INVALID_UNICODE));
    return msg;
}

Error convert(const YAML::Exception& e, std::string_view src, const std::string& file,
              const Builder& b) {
    const int doc = b.index();
    std::string msg = readable(e, src);
    if (e.mark.is_null() || e.mark.line < 0)
        return Error::invalid(std::move(msg), position(file, Mark{}, doc));
    Mark m = to_mark(e.mark);
    // At the end of the input yaml-cpp's line and column can be off; the offset is right.
    if (e.mark.pos >= 0 && static_cast<std::size_t>(e.mark.pos) >= src.size())
        m = mark_of_offset(src, src.size());
    std::optional<Mark> opened;
    if (e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW) opened = b.open_flow(Kind::sequence);
    if (e.msg == YAML::ErrorMsg::END_OF_MAP_FLOW) opened = b.open_flow(Kind::mapping);
    if (opened) {
        Error err = Error::invalid(std::move(msg), position(file, m, doc));
        err.note(std::string("the '") + (e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW ? "[" : "{") +
                 "' at line " + std::to_string(opened->line) + ", column " +
                 std::to_string(opened->column) + " is not closed");
        return err;
    }
    // Errors on a line indented with tabs are almost always caused by the tabs.
    if (e.mark.pos >= 0 && e.mark.column >= 0) {
        const std::size_t p = std::min(static_cast<std::size_t>(e.mark.pos), src.size());
        const std::size_t col = static_cast<std::size_t>(e.mark.column);
        const std::size_t line_start = col <= p ? p - col : 0;
        for (std::size_t i = line_start; i < src.size() && (src[i] == ' ' || src[i] == '\t'); ++i) {
            if (src[i] == '\t') {
                m.column = static_cast<std::uint32_t>(i - line_start + 1);
                msg = "tab character in indentation (YAML allows only spaces)";
                break;
            }
        }
    }
    return Error::invalid(std::move(msg), position(file, m, doc));
}

Result<std::vector<Document>> parse(std::string_view src, const std::string& file,
                                    const Limits& limits, bool retry) {
    if (auto err = prescan(src, file)) return fail(std::move(*err));
    std::vector<Document> docs;
    ViewBuf buf(src.data(), src.size());
    std::istream in(&buf);
    Builder b(src, file, limits, docs);
    try {
        YAML::Parser parser(in);
        while (parser.HandleNextDocument(b)) {
        }
        b.finish();
    } catch (Abort& a) {
        return fail(std::move(a.error));
    } catch (const YAML::DeepRecursion&) {
        return fail(Error::invalid("nesting deeper than " + std::to_string(b.depth()) +
                                       " levels (the YAML parser's limit)",
                                   position(file, to_mark(b.last_container()), b.index())));
    } catch (const YAML::Exception& e) {
        if (retry && e.msg == YAML::ErrorMsg::EOF_IN_SCALAR) {
            // yaml-cpp reports a quote left open at the very end at the end of the input. With
            // a final line break it accepts the scalar and finish() finds where it started.
            std::string again(src);
            again += '\n';
            auto r = parse(again, file, limits, false);
            if (!r.ok() && starts_with(r.error().message, "unterminated quoted string"))
                return fail(std::move(r).error());
        }
        return fail(convert(e, src, file, b));
    } catch (const std::bad_alloc&) {
        return fail(Error::io("out of memory while parsing " + file));
    } catch (const std::exception& e) {
        return fail(Error::internal(std::string("YAML parser: ") + e.what()));
    }
    return docs;
}

} // namespace

Result<std::vector<Document>> parse_yaml(std::string_view text, const std::string& file,
                                         const Limits& limits) {
    // yaml-cpp would skip a byte order mark too, but its positions then start after it; taking
    // it off here keeps positions and the source text in step.
    if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    return parse(text, file, limits, true);
}

} // namespace kpkg::io
