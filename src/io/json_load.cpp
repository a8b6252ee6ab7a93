// The JSON reader (a hand-written single-pass parser over the whole buffer) and the file-level
// entry points: parse_auto, read_file and load_file.
//
// Design notes:
// - The parser is iterative: open arrays and objects live on an explicit stack, so hostile
//   nesting is bounded by Limits::max_depth and never by the C++ stack.
// - Children of open containers are collected in two shared scratch vectors and moved into an
//   exactly-sized vector when the container closes, so no container over-allocates.
// - Strings are scanned eight bytes at a time for the characters that need attention (quote,
//   backslash, control characters, non-ASCII); plain runs are copied in one go.
// - Columns count bytes, like yaml-cpp's marks, so positions agree between the two readers.
// - Lone UTF-16 surrogates in \u escapes are replaced by U+FFFD (as Go's encoding/json does);
//   raw invalid UTF-8 anywhere is an error.
// - Duplicate object keys: the last value wins and keeps the position of the first key.
#include "kpkg/io/load.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kpkg::io {

namespace detail {
std::size_t utf8_decode(const char* p, const char* end, char32_t& cp); // node.cpp
} // namespace detail

namespace {

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHigh = 0x8080808080808080ULL;

// Whether any byte of w is '"', '\\', below 0x20 or at/above 0x80.
inline bool has_special(std::uint64_t w) {
    auto has_zero = [](std::uint64_t v) { return (v - kOnes) & ~v & kHigh; };
    const std::uint64_t quote = has_zero(w ^ (kOnes * '"'));
    const std::uint64_t bslash = has_zero(w ^ (kOnes * '\\'));
    const std::uint64_t ctl = (w - kOnes * 0x20) & ~w & kHigh;
    return (quote | bslash | ctl | (w & kHigh)) != 0;
}

inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Characters that may continue a bare word; used to reject "12x", "truex" and to show the
// whole offending word in messages.
inline bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
           c == '.' || c == '+' || c == '-';
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string hex_byte(unsigned char c) {
    static const char digits[] = "0123456789ABCDEF";
    std::string s = "0x";
    s += digits[c >> 4];
    s += digits[c & 15];
    return s;
}

std::string code_point(char32_t cp) {
    static const char digits[] = "0123456789ABCDEF";
    std::string s = "U+";
    int width = cp > 0xFFFF ? 6 : 4;
    for (int i = width - 1; i >= 0; --i)
        s += digits[(cp >> (4 * i)) & 15];
    return s;
}

// Makes the keys of a closed object unique: the first occurrence of a key keeps its place and
// position and receives the value of the last one; the later occurrences are dropped.
void dedupe_keys(std::vector<MapEntry>& f) {
    const std::size_t n = f.size();
    if (n < 2) return;
    std::vector<std::size_t> first_of; // for each entry, the index of the first entry with its key
    bool dup = false;
    if (n <= 16) {
        for (std::size_t i = 1; i < n && !dup; ++i)
            for (std::size_t j = 0; j < i; ++j)
                if (f[i].key == f[j].key) {
                    dup = true;
                    break;
                }
        if (!dup) return;
        first_of.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            first_of[i] = i;
            for (std::size_t j = 0; j < i; ++j)
                if (first_of[j] == j && f[i].key == f[j].key) {
                    first_of[i] = j;
                    break;
                }
        }
    } else {
        std::unordered_map<std::string_view, std::size_t> seen;
        seen.reserve(n);
        first_of.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            auto [it, inserted] = seen.emplace(f[i].key, i);
            first_of[i] = it->second;
            dup = dup || !inserted;
        }
        if (!dup) return;
    }
    for (std::size_t i = 0; i < n; ++i)
        if (first_of[i] != i) f[first_of[i]].value = std::move(f[i].value);
    std::size_t out = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (first_of[i] != i) continue;
        if (out != i) f[out] = std::move(f[i]);
        ++out;
    }
    f.erase(f.begin() + static_cast<std::ptrdiff_t>(out), f.end());
}

class JsonParser {
public:
    JsonParser(std::string_view text, const std::string& file, const Limits& limits)
        : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()),
          line_start_(text.data()), file_(file), limits_(limits) {}

    Result<std::vector<Document>> run() {
        if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) {
            p_ += 3;
            begin_ = line_start_ = p_;
        }
        items_.reserve(64);
        fields_.reserve(64);
        frames_.reserve(16);
        std::vector<Document> docs;
        for (;;) {
            skip_ws();
            if (p_ == end_) break;
            if (*p_ == '}' || *p_ == ']' || *p_ == ',' || *p_ == ':') {
                if (docs.empty())
                    return fail(error_at(p_, "expected a value, found " + describe(p_)));
                return fail(error_at(p_, "unexpected " + describe(p_) + " after a complete value"));
            }
            Document d;
            d.index = doc_;
            if (!parse_value(d.root)) return fail(std::move(err_));
            d.start = d.root.mark;
            docs.push_back(std::move(d));
            ++doc_;
        }
        return docs;
    }

private:
    struct Frame {
        Node node;            // the container, children not yet attached
        std::string key;      // objects: the key whose value is being parsed
        Mark key_mark;        //
        std::size_t base = 0; // where this container's children start in the scratch vector
        std::uint32_t line = 0, column = 0; // of the bracket, for "not closed" notes
    };

    enum class State { value, key, after_value };

    Mark mark_at(const char* q) const {
        if (q >= line_start_) return Mark{line_, static_cast<std::uint32_t>(q - line_start_ + 1)};
        // An earlier line (only for error messages): count from the start.
        Mark m{1, 1};
        const char* ls = begin_;
        for (const char* r = begin_; r < q; ++r) {
            if (*r == '\n') {
                ++m.line;
                ls = r + 1;
            }
        }
        m.column = static_cast<std::uint32_t>(q - ls + 1);
        return m;
    }

    Error error_at(const char* q, std::string msg) const {
        return error_at(mark_at(q), std::move(msg));
    }

    Error error_at(Mark m, std::string msg) const {
        SourcePos pos;
        pos.file = file_;
        pos.line = m.line;
        pos.column = m.column;
        pos.document = doc_;
        return Error::invalid(std::move(msg), std::move(pos));
    }

    bool failed(Error e) {
        err_ = std::move(e);
        return false;
    }

    // A short description of the character at q for messages.
    std::string describe(const char* q) const {
        if (q >= end_) return "end of input";
        const auto c = static_cast<unsigned char>(*q);
        if (c == '\'') return "\"'\"";
        if (c >= 0x21 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
        if (c == ' ') return "' '";
        if (c == '\t') return "a tab";
        if (c == '\n' || c == '\r') return "a line break";
        if (c < 0x80) return "control character " + code_point(c);
        char32_t cp = 0;
        const std::size_t len = detail::utf8_decode(q, end_, cp);
        if (len == 0) return "invalid UTF-8 byte " + hex_byte(c);
        return "'" + std::string(q, len) + "' (" + code_point(cp) + ")";
    }

    bool invalid_utf8_at(const char* q) const {
        if (q >= end_ || static_cast<unsigned char>(*q) < 0x80) return false;
        char32_t cp = 0;
        return detail::utf8_decode(q, end_, cp) == 0;
    }

    // "expected X, found Y", or the end-of-input variant with a note on the innermost open
    // container.
    bool expected(const char* q, const std::string& what) {
        if (q >= end_) {
            Error e = error_at(end_, "unexpected end of input (expected " + what + ")");
            if (!frames_.empty()) {
                const Frame& f = frames_.back();
                e.note(std::string(f.node.is_map() ? "the object" : "the array") + " opened at " +
                       std::to_string(f.line) + ":" + std::to_string(f.column) + " is not closed");
            }
            return failed(std::move(e));
        }
        if (invalid_utf8_at(q))
            return failed(
                error_at(q, "invalid UTF-8 byte " + hex_byte(static_cast<unsigned char>(*q))));
        return failed(error_at(q, "expected " + what + ", found " + describe(q)));
    }

    void skip_ws() {
        while (p_ < end_) {
            const char c = *p_;
            if (c == ' ' || c == '\t' || c == '\r') {
                ++p_;
            } else if (c == '\n') {
                ++p_;
                ++line_;
                line_start_ = p_;
            } else {
                break;
            }
        }
    }

    // Advances over bytes that need no attention inside a string.
    const char* skip_plain(const char* q) const {
        while (end_ - q >= 8) {
            std::uint64_t w;
            std::memcpy(&w, q, 8);
            if (has_special(w)) break;
            q += 8;
        }
        while (q < end_) {
            const auto c = static_cast<unsigned char>(*q);
            if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
            ++q;
        }
        return q;
    }

    // Validates the UTF-8 sequence at q (a byte >= 0x80); its length, or 0 after an error.
    std::size_t utf8_at(const char* q) {
        char32_t cp = 0;
        const std::size_t len = detail::utf8_decode(q, end_, cp);
        if (len == 0)
            failed(error_at(q, "invalid UTF-8 byte " + hex_byte(static_cast<unsigned char>(*q))));
        return len;
    }

    bool string_char_error(const char* open, const char* q) {
        if (q >= end_) return failed(error_at(open, "unterminated string"));
        const auto c = static_cast<unsigned char>(*q);
        if (c == '\n' || c == '\r')
            return failed(error_at(open, "unterminated string (a string cannot span lines; "
                                         "write a line break as \\n)"));
        return failed(
            error_at(q, "control character " + code_point(c) + " must be escaped in a string"));
    }

    static int hex_value(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    // Four hex digits at q, or -1.
    long hex4(const char* q) const {
        if (end_ - q < 4) return -1;
        long v = 0;
        for (int i = 0; i < 4; ++i) {
            const int d = hex_value(q[i]);
            if (d < 0) return -1;
            v = v * 16 + d;
        }
        return v;
    }

    // One escape sequence at q ('\\'); appends its value and returns the position after it, or
    // nullptr after an error.
    const char* escape(const char* open, const char* q, std::string& out) {
        if (end_ - q < 2) {
            failed(error_at(open, "unterminated string"));
            return nullptr;
        }
        switch (q[1]) {
        case '"':
            out += '"';
            return q + 2;
        case '\\':
            out += '\\';
            return q + 2;
        case '/':
            out += '/';
            return q + 2;
        case 'b':
            out += '\b';
            return q + 2;
        case 'f':
            out += '\f';
            return q + 2;
        case 'n':
            out += '\n';
            return q + 2;
        case 'r':
            out += '\r';
            return q + 2;
        case 't':
            out += '\t';
            return q + 2;
        case 'u':
            break;
        default:
            if (invalid_utf8_at(q + 1)) {
                failed(error_at(q + 1, "invalid UTF-8 byte " +
                                           hex_byte(static_cast<unsigned char>(q[1]))));
            } else {
                failed(error_at(q, "invalid escape sequence: backslash followed by " +
                                       describe(q + 1)));
            }
            return nullptr;
        }
        const long hi = hex4(q + 2);
        if (hi < 0) {
            failed(error_at(q, "invalid \\u escape: expected four hex digits"));
            return nullptr;
        }
        q += 6;
        auto cp = static_cast<char32_t>(hi);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            // A high surrogate pairs with an immediately following low one; alone it is U+FFFD.
            long lo = -1;
            if (end_ - q >= 6 && q[0] == '\\' && q[1] == 'u') lo = hex4(q + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<char32_t>(lo) - 0xDC00);
                q += 6;
            } else {
                cp = 0xFFFD;
            }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            cp = 0xFFFD;
        }
        append_utf8(out, cp);
        return q;
    }

    // A string starting at p_ ('"') into out.
    bool parse_string(std::string& out) {
        const char* open = p_;
        const char* start = p_ + 1;
        const char* q = start;
        // Fast path: no escapes, the text is copied as it is.
        for (;;) {
            q = skip_plain(q);
            if (q >= end_) return string_char_error(open, q);
            const auto c = static_cast<unsigned char>(*q);
            if (c == '"') {
                out.assign(start, static_cast<std::size_t>(q - start));
                p_ = q + 1;
                return true;
            }
            if (c == '\\') break;
            if (c < 0x80) return string_char_error(open, q);
            const std::size_t len = utf8_at(q);
            if (len == 0) return false;
            q += len;
        }
        out.assign(start, static_cast<std::size_t>(q - start));
        for (;;) {
            if (q >= end_) return string_char_error(open, q);
            const auto c = static_cast<unsigned char>(*q);
            if (c == '"') {
                p_ = q + 1;
                return true;
            }
            if (c == '\\') {
                q = escape(open, q, out);
                if (q == nullptr) return false;
            } else if (c >= 0x80) {
                const std::size_t len = utf8_at(q);
                if (len == 0) return false;
                out.append(q, len);
                q += len;
            } else if (c < 0x20) {
                return string_char_error(open, q);
            }
            const char* r = skip_plain(q);
            out.append(q, static_cast<std::size_t>(r - q));
            q = r;
        }
    }

    // A number at p_ into n.
    bool parse_number(Node& n) {
        const char* s = p_;
        const char* q = s;
        bool floating = false;
        if (*q == '-') ++q;
        if (q >= end_ || !is_digit(*q)) return expected(q, "a digit after '-'");
        if (*q == '0') {
            ++q;
            if (q < end_ && is_digit(*q))
                return failed(error_at(q, "invalid number: leading zeros are not allowed"));
        } else {
            while (q < end_ && is_digit(*q))
                ++q;
        }
        if (q < end_ && *q == '.') {
            floating = true;
            ++q;
            if (q >= end_ || !is_digit(*q)) return expected(q, "a digit after '.' in a number");
            while (q < end_ && is_digit(*q))
                ++q;
        }
        if (q < end_ && (*q == 'e' || *q == 'E')) {
            floating = true;
            ++q;
            if (q < end_ && (*q == '+' || *q == '-')) ++q;
            if (q >= end_ || !is_digit(*q)) return expected(q, "a digit in the exponent");
            while (q < end_ && is_digit(*q))
                ++q;
        }
        if (q < end_ && is_word_char(*q))
            return failed(error_at(q, "invalid number: unexpected " + describe(q)));
        n.kind = floating ? Kind::floating : Kind::integer;
        n.mark = mark_at(s);
        n.text.assign(s, static_cast<std::size_t>(q - s));
        p_ = q;
        return true;
    }

    // true, false, null, or an error naming the bare word.
    bool parse_word(Node& n) {
        const char* s = p_;
        const char* q = s;
        while (q < end_ && is_word_char(*q))
            ++q;
        const std::string_view w(s, static_cast<std::size_t>(q - s));
        if (w == "true" || w == "false") {
            n.kind = Kind::boolean;
        } else if (w == "null") {
            n.kind = Kind::null;
        } else {
            std::string shown(w.substr(0, 40));
            if (w.size() > 40) shown += "...";
            std::string lower(w);
            for (char& c : lower)
                c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
            std::string hint = " (strings must be in double quotes)";
            if (lower == "true" || lower == "false" || lower == "null")
                hint = " (did you mean " + lower + "?)";
            return failed(error_at(s, "invalid literal \"" + shown + "\"" + hint));
        }
        n.mark = mark_at(s);
        n.text.assign(w);
        p_ = q;
        return true;
    }

    // The slot for the next complete value: the root, the next array element, or the value of
    // the pending object member.
    Node& new_slot(Node& root) {
        if (frames_.empty()) return root;
        Frame& f = frames_.back();
        if (f.node.kind == Kind::mapping) {
            fields_.push_back(MapEntry{std::move(f.key), f.key_mark, Node{}});
            return fields_.back().value;
        }
        items_.emplace_back();
        return items_.back();
    }

    bool open(Kind kind) {
        if (frames_.size() >= limits_.max_depth)
            return failed(error_at(p_, "nesting deeper than " + std::to_string(limits_.max_depth) +
                                           " levels"));
        Frame f;
        f.node.kind = kind;
        f.node.mark = mark_at(p_);
        f.base = kind == Kind::mapping ? fields_.size() : items_.size();
        f.line = f.node.mark.line;
        f.column = f.node.mark.column;
        frames_.push_back(std::move(f));
        ++p_;
        return true;
    }

    void close(Node& root) {
        ++p_;
        Frame& f = frames_.back();
        if (f.node.kind == Kind::mapping) {
            auto first = fields_.begin() + static_cast<std::ptrdiff_t>(f.base);
            f.node.fields.assign(std::make_move_iterator(first),
                                 std::make_move_iterator(fields_.end()));
            fields_.erase(first, fields_.end());
            dedupe_keys(f.node.fields);
        } else {
            auto first = items_.begin() + static_cast<std::ptrdiff_t>(f.base);
            f.node.items.assign(std::make_move_iterator(first),
                                std::make_move_iterator(items_.end()));
            items_.erase(first, items_.end());
        }
        Node done = std::move(f.node);
        frames_.pop_back();
        new_slot(root) = std::move(done);
    }

    // One top-level value at p_ (not blank) into root.
    bool parse_value(Node& root) {
        State st = State::value;
        bool after_comma = false; // for the message when an object key is missing
        for (;;) {
            switch (st) {
            case State::value: {
                skip_ws();
                if (p_ >= end_) return expected(p_, "a value");
                const char c = *p_;
                if (c == '"') {
                    Node& n = new_slot(root);
                    n.kind = Kind::string;
                    n.mark = mark_at(p_);
                    if (!parse_string(n.text)) return false;
                    st = State::after_value;
                } else if (c == '{') {
                    if (!open(Kind::mapping)) return false;
                    skip_ws();
                    if (p_ < end_ && *p_ == '}') {
                        close(root);
                        st = State::after_value;
                    } else {
                        st = State::key;
                        after_comma = false;
                    }
                } else if (c == '[') {
                    if (!open(Kind::sequence)) return false;
                    skip_ws();
                    if (p_ < end_ && *p_ == ']') {
                        close(root);
                        st = State::after_value;
                    }
                } else if (c == '-' || is_digit(c)) {
                    if (!parse_number(new_slot(root))) return false;
                    st = State::after_value;
                } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
                    if (!parse_word(new_slot(root))) return false;
                    st = State::after_value;
                } else if (c == '\'') {
                    return failed(error_at(p_, "expected a value, found \"'\" (strings must be "
                                               "in double quotes)"));
                } else {
                    return expected(p_, "a value");
                }
                break;
            }
            case State::key: {
                // p_ is at the first non-blank character after '{' or ','.
                if (p_ < end_ && *p_ != '"' && is_word_char(*p_))
                    return failed(error_at(p_, "object keys must be strings in double quotes, "
                                               "found " +
                                                   describe(p_)));
                if (p_ >= end_ || *p_ != '"')
                    return expected(p_, after_comma ? "a string key" : "a string key or '}'");
                Frame& f = frames_.back();
                f.key_mark = mark_at(p_);
                if (!parse_string(f.key)) return false;
                skip_ws();
                if (p_ >= end_ || *p_ != ':') return expected(p_, "':' after object key");
                ++p_;
                st = State::value;
                break;
            }
            case State::after_value: {
                if (frames_.empty()) return true;
                skip_ws();
                const bool is_map = frames_.back().node.kind == Kind::mapping;
                const char close_ch = is_map ? '}' : ']';
                if (p_ < end_ && *p_ == ',') {
                    const Mark comma = mark_at(p_);
                    ++p_;
                    skip_ws();
                    if (p_ < end_ && *p_ == close_ch)
                        return failed(error_at(comma, std::string("trailing comma before '") +
                                                          close_ch + "'"));
                    st = is_map ? State::key : State::value;
                    after_comma = true;
                } else if (p_ < end_ && *p_ == close_ch) {
                    close(root);
                } else {
                    return expected(p_, is_map ? "',' or '}' after object member"
                                               : "',' or ']' after array element");
                }
                break;
            }
            }
        }
    }

    const char* begin_; // after a byte order mark
    const char* p_;
    const char* const end_;
    const char* line_start_;
    std::uint32_t line_ = 1;
    const std::string& file_;
    const Limits& limits_;
    int doc_ = 0;
    Error err_;
    std::vector<Frame> frames_;
    std::vector<Node> items_;
    std::vector<MapEntry> fields_;
};

std::string errno_text(int e) {
    std::string s = std::generic_category().message(e);
    if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
    return s;
}

std::string quoted(const std::string& s) {
    return "\"" + s + "\"";
}

// Reads everything from fd (a pipe, a terminal, a character device) up to the limit.
Result<std::string> read_stream(int fd, const std::string& name, std::size_t limit) {
    std::string data;
    std::size_t used = 0;
    data.resize(64 * 1024);
    for (;;) {
        if (used == data.size()) data.resize(data.size() * 2);
        const ssize_t n = ::read(fd, data.data() + used, data.size() - used);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(Error::io("cannot read " + name + ": " + errno_text(errno)));
        }
        if (n == 0) break;
        used += static_cast<std::size_t>(n);
        if (used > limit)
            return fail(Error::io(name + " is too large: more than the limit of " +
                                  std::to_string(limit) + " bytes"));
    }
    data.resize(used);
    return data;
}

// Closes a descriptor when leaving the scope.
struct FdGuard {
    int fd;
    ~FdGuard() {
        if (fd >= 0) ::close(fd);
    }
};

} // namespace

Result<std::vector<Document>> parse_json(std::string_view text, const std::string& file,
                                         const Limits& limits) {
    try {
        JsonParser p(text, file, limits);
        return p.run();
    } catch (const std::bad_alloc&) {
        return fail(Error::io("out of memory while parsing " + file));
    } catch (const std::exception& e) {
        return fail(Error::internal(std::string("JSON parser: ") + e.what()));
    }
}

Result<std::vector<Document>> parse_auto(std::string_view text, const std::string& file,
                                         const Limits& limits) {
    std::size_t i = 0;
    if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        ++i;
    // No fallback to YAML when JSON fails: a typo in a JSON file (tru, a trailing comma) would
    // otherwise be read silently as a YAML flow collection with different content.
    if (i < text.size() && (text[i] == '{' || text[i] == '['))
        return parse_json(text, file, limits);
    return parse_yaml(text, file, limits);
}

Result<std::string> read_file(const std::filesystem::path& path, const Limits& limits) {
    namespace fs = std::filesystem;
    const std::size_t limit = limits.max_file_bytes;
    if (path == "-") return read_stream(STDIN_FILENO, "standard input", limit);
    const std::string name = path.string();
    if (name.empty()) return fail(Error::io("cannot read a file with an empty name"));
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) {
        std::string why = ec ? ec.message() : errno_text(ENOENT);
        if (!why.empty() && why[0] >= 'A' && why[0] <= 'Z')
            why[0] = static_cast<char>(why[0] - 'A' + 'a');
        return fail(Error::io("cannot read " + quoted(name) + ": " + why));
    }
    if (fs::is_directory(st))
        return fail(Error::io("cannot read " + quoted(name) + ": it is a directory"));
    const bool regular = fs::is_regular_file(st);
    if (!regular && !fs::is_fifo(st) && !fs::is_character_file(st))
        return fail(Error::io("cannot read " + quoted(name) + ": not a regular file"));

    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(Error::io("cannot open " + quoted(name) + ": " + errno_text(errno)));
    FdGuard guard{fd};
    struct stat sb {};
    if (::fstat(fd, &sb) != 0)
        return fail(Error::io("cannot read " + quoted(name) + ": " + errno_text(errno)));
    if (!S_ISREG(sb.st_mode)) return read_stream(fd, quoted(name), limit);

    const auto size = static_cast<std::uint64_t>(sb.st_size);
    if (size > limit)
        return fail(Error::io(quoted(name) + " is too large: " + std::to_string(size) +
                              " bytes (the limit is " + std::to_string(limit) + " bytes)"));
    std::string data;
    data.resize(static_cast<std::size_t>(size));
    std::size_t used = 0;
    while (used < data.size()) {
        const ssize_t n = ::read(fd, data.data() + used, data.size() - used);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(Error::io("cannot read " + quoted(name) + ": " + errno_text(errno)));
        }
        if (n == 0) break; // the file shrank meanwhile
        used += static_cast<std::size_t>(n);
    }
    data.resize(used);
    return data;
}

Result<std::vector<Document>> load_file(const std::filesystem::path& path, const Limits& limits) {
    auto text = KPKG_TRY(read_file(path, limits));
    const std::string name = path == "-" ? std::string("<stdin>") : path.string();
    return parse_auto(text, name, limits);
}

} // namespace kpkg::io
