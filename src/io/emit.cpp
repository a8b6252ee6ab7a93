// JSON and YAML writers for Node trees. Both are deterministic: the output depends only on the
// tree and the style, never on how the tree was read.
//
// Choices worth knowing:
// - JSON numbers keep their literal when it is valid JSON for their kind; YAML-only forms are
//   converted (0x1F -> 31, +5 -> 5, .5 -> 0.5, 1. -> 1.0). Infinity and NaN have no JSON form:
//   they are written as the strings ".inf", "-.inf" and ".nan" rather than failing as Go would.
//   A number node whose text is no number at all is written as a string.
// - JSON strings are escaped as Go's encoding/json does (io/go); invalid UTF-8 becomes \ufffd.
// - YAML strings are written plain unless a plain scalar would read back as something else,
//   and then double-quoted. Besides the YAML 1.2 core schema, the YAML 1.1 booleans (yes, no,
//   on, off, y, n in their cases) and the merge key "<<" are quoted too, so that YAML 1.1
//   readers such as kubectl's do not turn them into booleans. Invalid UTF-8 becomes U+FFFD.
#include "kpkg/io/emit.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "kpkg/io/go.hpp"
#include "kpkg/io/scalars.hpp"

namespace kpkg::io {

namespace {

const char kHex[] = "0123456789abcdef";

// A JSON number literal (RFC 8259 grammar); `fractional` tells whether it has a fraction or an
// exponent, i.e. whether a reader takes it for a float.
bool is_json_number(std::string_view s, bool& fractional) {
    fractional = false;
    std::size_t i = 0, n = s.size();
    auto digits = [&] {
        const std::size_t start = i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            ++i;
        return i > start;
    };
    if (i < n && s[i] == '-') ++i;
    if (i < n && s[i] == '0') {
        ++i;
    } else if (!digits()) {
        return false;
    }
    if (i < n && s[i] == '.') {
        ++i;
        fractional = true;
        if (!digits()) return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        fractional = true;
        if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
        if (!digits()) return false;
    }
    return i == n;
}

// Shortest text that reads back as v, always with a '.' or an exponent so that it stays a float.
std::string format_double(double v) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, ec == std::errc() ? end : buf);
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s;
}

// The YAML spelling of infinities and NaN.
std::string special_float(double v) {
    if (std::isnan(v)) return ".nan";
    return v < 0 ? "-.inf" : ".inf";
}

std::vector<const MapEntry*> entries(const Node& m, bool sorted) {
    std::vector<const MapEntry*> v;
    v.reserve(m.fields.size());
    for (const MapEntry& e : m.fields)
        v.push_back(&e);
    if (sorted)
        std::stable_sort(v.begin(), v.end(),
                         [](const MapEntry* a, const MapEntry* b) { return a->key < b->key; });
    return v;
}

class JsonWriter {
public:
    JsonWriter(std::string& out, const JsonStyle& st)
        : out_(out), st_(st), indent_(std::max(0, st.indent)) {}

    void value(const Node& n, int level) {
        switch (n.kind) {
        case Kind::null:
            out_ += "null";
            return;
        case Kind::boolean: {
            auto b = n.as_bool();
            if (b)
                out_ += *b ? "true" : "false";
            else
                go::append_string(out_, n.text, st_.escape_html);
            return;
        }
        case Kind::integer: {
            bool frac = false;
            if (is_json_number(n.text, frac) && !frac) {
                out_ += n.text;
            } else if (auto d = detail::decimal_integer(n.text)) {
                out_ += *d;
            } else {
                go::append_string(out_, n.text, st_.escape_html);
            }
            return;
        }
        case Kind::floating: {
            bool frac = false;
            if (is_json_number(n.text, frac) && frac) {
                out_ += n.text;
            } else if (auto d = detail::parse_float(n.text)) {
                if (std::isfinite(*d))
                    out_ += format_double(*d);
                else
                    go::append_string(out_, special_float(*d), false);
            } else {
                go::append_string(out_, n.text, st_.escape_html);
            }
            return;
        }
        case Kind::string:
            go::append_string(out_, n.text, st_.escape_html);
            return;
        case Kind::sequence:
            if (n.items.empty()) {
                out_ += "[]";
                return;
            }
            out_ += '[';
            for (std::size_t i = 0; i < n.items.size(); ++i) {
                if (i > 0) out_ += ',';
                newline(level + 1);
                value(n.items[i], level + 1);
            }
            newline(level);
            out_ += ']';
            return;
        case Kind::mapping: {
            if (n.fields.empty()) {
                out_ += "{}";
                return;
            }
            out_ += '{';
            bool first = true;
            for (const MapEntry* e : entries(n, st_.sort_keys)) {
                if (!first) out_ += ',';
                first = false;
                newline(level + 1);
                go::append_string(out_, e->key, st_.escape_html);
                out_ += indent_ > 0 ? ": " : ":";
                value(e->value, level + 1);
            }
            newline(level);
            out_ += '}';
            return;
        }
        }
    }

private:
    void newline(int level) {
        if (indent_ == 0) return;
        out_ += '\n';
        out_.append(static_cast<std::size_t>(level) * static_cast<std::size_t>(indent_), ' ');
    }

    std::string& out_;
    const JsonStyle& st_;
    int indent_;
};

// Whether a plain scalar would not read back as the string s.
bool needs_quotes(std::string_view s) {
    if (s.empty()) return true;
    if (detail::resolve_plain(s) != Kind::string) return true;
    static const std::string_view yaml11[] = {"y",  "Y",  "yes", "Yes", "YES", "n",   "N",   "no",
                                              "No", "NO", "on",  "On",  "ON",  "off", "Off", "OFF"};
    for (std::string_view w : yaml11)
        if (s == w) return true;
    if (s == "<<") return true;
    if (std::strchr("-?:,[]{}#&*!|>'\"%@`", s[0]) != nullptr) return true;
    if (s.compare(0, 3, "...") == 0) return true;
    if (s.front() == ' ' || s.back() == ' ') return true;
    const char* p = s.data();
    const char* end = p + s.size();
    for (const char* q = p; q < end;) {
        const auto c = static_cast<unsigned char>(*q);
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7F) return true;
            if (c == ':' && (q + 1 == end || q[1] == ' ')) return true;
            if (c == '#' && q > p && q[-1] == ' ') return true;
            ++q;
            continue;
        }
        char32_t cp = 0;
        const std::size_t len = detail::utf8_decode(q, end, cp);
        if (len == 0) return true;
        if ((cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF ||
            cp == 0xFFFE || cp == 0xFFFF)
            return true;
        q += len;
    }
    return false;
}

void append_double_quoted(std::string& out, std::string_view s) {
    out += '"';
    const char* p = s.data();
    const char* end = p + s.size();
    auto hex2 = [&](unsigned v) {
        out += "\\x";
        out += kHex[(v >> 4) & 15];
        out += kHex[v & 15];
    };
    auto hex4 = [&](char32_t v) {
        out += "\\u";
        for (int i = 3; i >= 0; --i)
            out += kHex[(v >> (4 * i)) & 15];
    };
    while (p < end) {
        const auto c = static_cast<unsigned char>(*p);
        if (c < 0x80) {
            switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\r':
                out += "\\r";
                break;
            case 0:
                out += "\\0";
                break;
            default:
                if (c < 0x20 || c == 0x7F)
                    hex2(c);
                else
                    out += static_cast<char>(c);
            }
            ++p;
            continue;
        }
        char32_t cp = 0;
        const std::size_t len = detail::utf8_decode(p, end, cp);
        if (len == 0) {
            hex4(0xFFFD);
            ++p;
            continue;
        }
        if (cp >= 0x80 && cp <= 0x9F)
            hex2(cp);
        else if (cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF)
            hex4(cp);
        else
            out.append(p, len);
        p += len;
    }
    out += '"';
}

class YamlWriter {
public:
    YamlWriter(std::string& out, const YamlStyle& st)
        : out_(out), st_(st), indent_(std::max(2, st.indent)) {}

    void document(const Node& n) {
        if (n.is_map() && !n.fields.empty()) {
            map(n, 0, false);
        } else if (n.is_seq() && !n.items.empty()) {
            seq(n, 0, false);
        } else {
            scalar(n);
            out_ += '\n';
        }
    }

private:
    void str(std::string_view s) {
        if (needs_quotes(s))
            append_double_quoted(out_, s);
        else
            out_ += s;
    }

    // A scalar, or an empty collection in flow style.
    void scalar(const Node& n) {
        switch (n.kind) {
        case Kind::null:
            out_ += "null";
            return;
        case Kind::boolean: {
            auto b = n.as_bool();
            if (b)
                out_ += *b ? "true" : "false";
            else
                append_double_quoted(out_, n.text);
            return;
        }
        case Kind::integer:
            if (detail::is_yaml_int(n.text))
                out_ += n.text;
            else if (auto d = detail::decimal_integer(n.text))
                out_ += *d;
            else
                append_double_quoted(out_, n.text);
            return;
        case Kind::floating:
            if (detail::is_yaml_float(n.text) && !detail::is_yaml_int(n.text)) {
                out_ += n.text;
            } else if (auto d = detail::parse_float(n.text)) {
                out_ += std::isfinite(*d) ? format_double(*d) : special_float(*d);
            } else {
                append_double_quoted(out_, n.text);
            }
            return;
        case Kind::string:
            str(n.text);
            return;
        case Kind::sequence:
            out_ += "[]";
            return;
        case Kind::mapping:
            out_ += "{}";
            return;
        }
    }

    static bool block(const Node& n) {
        return (n.is_map() && !n.fields.empty()) || (n.is_seq() && !n.items.empty());
    }

    void pad(int col) { out_.append(static_cast<std::size_t>(col), ' '); }

    // Entries of a non-empty mapping at column col; the first one continues the current line
    // when it follows a "- ".
    void map(const Node& m, int col, bool inline_first) {
        bool first = true;
        for (const MapEntry* e : entries(m, st_.sort_keys)) {
            if (!(first && inline_first)) pad(col);
            first = false;
            const std::size_t key_start = out_.size();
            str(e->key);
            // YAML limits implicit keys to 1024 characters; longer ones take the explicit form
            // "? key" with ":" on the next line.
            const bool explicit_key = out_.size() - key_start > 1000;
            if (explicit_key) {
                out_.insert(key_start, "? ");
                out_ += '\n';
                pad(col);
            }
            out_ += ':';
            const Node& v = e->value;
            if (v.is_map() && !v.fields.empty()) {
                out_ += '\n';
                map(v, col + indent_, false);
            } else if (v.is_seq() && !v.items.empty()) {
                out_ += '\n';
                seq(v, st_.indent_sequences || explicit_key ? col + indent_ : col, false);
            } else {
                out_ += ' ';
                scalar(v);
                out_ += '\n';
            }
        }
    }

    void seq(const Node& s, int col, bool inline_first) {
        bool first = true;
        for (const Node& item : s.items) {
            if (!(first && inline_first)) pad(col);
            first = false;
            out_ += '-';
            if (block(item)) {
                pad(indent_ - 1);
                if (item.is_map())
                    map(item, col + indent_, true);
                else
                    seq(item, col + indent_, true);
            } else {
                out_ += ' ';
                scalar(item);
                out_ += '\n';
            }
        }
    }

    std::string& out_;
    const YamlStyle& st_;
    int indent_;
};

} // namespace

std::string to_json(const Node& node, const JsonStyle& style) {
    std::string out;
    JsonWriter(out, style).value(node, 0);
    out += '\n';
    return out;
}

std::string to_yaml(const Node& node, const YamlStyle& style) {
    std::string out;
    YamlWriter(out, style).document(node);
    return out;
}

} // namespace kpkg::io
