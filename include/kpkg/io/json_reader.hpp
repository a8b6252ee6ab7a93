// The JSON reader behind parse_json and read_json_events, as a template over its handler so that
// a concrete handler's calls are direct (the catalog loader's, the Node builder's). Use
// read_json_events (kpkg/io/events.hpp) unless the call overhead matters.
//
// Design notes:
// - The parser is iterative: open arrays and objects live on an explicit stack, so hostile
//   nesting is bounded by Limits::max_depth and never by the C++ stack.
// - Strings are scanned eight bytes at a time for the characters that need attention (quote,
//   backslash, control characters, non-ASCII); a string without escapes is handed over as a view
//   of the input, without a copy.
// - Columns count bytes, like the YAML reader's marks, so positions agree between the readers.
// - Lone UTF-16 surrogates in \u escapes are replaced by U+FFFD (as Go's encoding/json does);
//   raw invalid UTF-8 anywhere is an error, or, with replace_invalid_utf8(), is read inside a
//   string as one U+FFFD per byte (as Go's encoding/json reads it).
// - A handler whose scalar() returns bool may refuse a value (a number Go cannot hold): the read
//   then fails at that value with the handler's refusal() message.
// - read_one() reads a single value from where resume() put the reader, for a caller that
//   consumes a concatenated stream one value at a time.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kpkg/core/error.hpp"
#include "kpkg/io/events.hpp"
#include "kpkg/io/scalars.hpp"

namespace kpkg::io::detail {

template <class Handler>
class JsonReader {
public:
    JsonReader(std::string_view text, const std::string& file, const Limits& limits, Handler& h)
        : text_(text), begin_(text.data()), p_(text.data()), end_(text.data() + text.size()),
          line_start_(text.data()), file_(file), limits_(limits), h_(h) {}

    // Reads every value; false after an error (error()). Handler exceptions pass through.
    bool run() {
        if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) {
            p_ += 3;
            begin_ = line_start_ = p_;
        }
        frames_.reserve(16);
        for (;;) {
            skip_ws();
            if (p_ == end_) break;
            failed_at_ = p_;
            if (*p_ == '}' || *p_ == ']' || *p_ == ',' || *p_ == ':') {
                if (doc_ == 0)
                    return failed(error_at(p_, "expected a value, found " + describe(p_)));
                return failed(
                    error_at(p_, "unexpected " + describe(p_) + " after a complete value"));
            }
            if (!read_document()) return false;
        }
        return true;
    }

    // Reads from `offset` of the text, which is on line `line` starting at offset `line_start`
    // (for positions), instead of from its start.
    void resume(std::size_t offset, std::uint32_t line, std::size_t line_start) {
        p_ = begin_ + offset;
        line_ = line;
        line_start_ = begin_ + line_start;
    }

    // Invalid UTF-8 inside a string becomes U+FFFD (one per byte) instead of an error.
    void replace_invalid_utf8(bool on) { replace_utf8_ = on; }

    // Reads the one value at the current position (after blanks); false after an error. No byte
    // order mark is skipped. Afterwards offset(), line() and line_start() tell where it ended.
    bool read_one() {
        skip_ws();
        failed_at_ = p_;
        if (p_ < end_ && (*p_ == '}' || *p_ == ']' || *p_ == ',' || *p_ == ':'))
            return failed(error_at(p_, "expected a value, found " + describe(p_)));
        return read_document();
    }

    std::size_t offset() const { return static_cast<std::size_t>(p_ - begin_); }
    std::uint32_t line() const { return line_; }
    std::size_t line_start() const { return static_cast<std::size_t>(line_start_ - begin_); }

    Error& error() { return err_; }

    JsonProgress progress() const {
        JsonProgress pr;
        pr.values = doc_;
        pr.value_end = doc_ == 0 ? 0 : static_cast<std::size_t>(value_end_ - text_.data());
        pr.failed_value = static_cast<std::size_t>(failed_at_ - text_.data());
        return pr;
    }

private:
    // The value at p_ as one document for the handler; false after an error.
    bool read_document() {
        h_.document_start(doc_, mark_at(p_));
        if (!parse_value()) return false;
        h_.document_end();
        ++doc_;
        value_end_ = p_;
        return true;
    }

    struct Frame {
        bool map = false;
        std::uint32_t line = 0, column = 0; // of the bracket, for "not closed" notes
    };

    enum class State { value, key, after_value };

    static bool is_digit(char c) { return c >= '0' && c <= '9'; }

    // Characters that may continue a bare word; used to reject "12x", "truex" and to show the
    // whole offending word in messages.
    static bool is_word_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
               c == '.' || c == '+' || c == '-';
    }

    static constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    static constexpr std::uint64_t kHigh = 0x8080808080808080ULL;

    // Whether any byte of w is '"', '\\', below 0x20 or at/above 0x80.
    static bool has_special(std::uint64_t w) {
        auto has_zero = [](std::uint64_t v) { return (v - kOnes) & ~v & kHigh; };
        const std::uint64_t quote = has_zero(w ^ (kOnes * '"'));
        const std::uint64_t bslash = has_zero(w ^ (kOnes * '\\'));
        const std::uint64_t ctl = (w - kOnes * 0x20) & ~w & kHigh;
        return (quote | bslash | ctl | (w & kHigh)) != 0;
    }

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
        const std::size_t len = utf8_decode(q, end_, cp);
        if (len == 0) return "invalid UTF-8 byte " + hex_byte(c);
        return "'" + std::string(q, len) + "' (" + code_point(cp) + ")";
    }

    bool invalid_utf8_at(const char* q) const {
        if (q >= end_ || static_cast<unsigned char>(*q) < 0x80) return false;
        char32_t cp = 0;
        return utf8_decode(q, end_, cp) == 0;
    }

    // "expected X, found Y", or the end-of-input variant with a note on the innermost open
    // container.
    bool expected(const char* q, const std::string& what) {
        if (q >= end_) {
            Error e = error_at(end_, "unexpected end of input (expected " + what + ")");
            if (!frames_.empty()) {
                const Frame& f = frames_.back();
                e.note(std::string(f.map ? "the object" : "the array") + " opened at " +
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
        const std::size_t len = utf8_decode(q, end_, cp);
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

    // A string starting at p_ ('"'): its decoded text, a view of the input when it has no
    // escapes, else of `scratch`.
    bool parse_string(std::string& scratch, std::string_view& out) {
        const char* open = p_;
        const char* start = p_ + 1;
        const char* q = start;
        // Fast path: no escapes, the text is the input as it is.
        for (;;) {
            q = skip_plain(q);
            if (q >= end_) return string_char_error(open, q);
            const auto c = static_cast<unsigned char>(*q);
            if (c == '"') {
                out = std::string_view(start, static_cast<std::size_t>(q - start));
                p_ = q + 1;
                return true;
            }
            if (c == '\\') break;
            if (c < 0x80) return string_char_error(open, q);
            if (replace_utf8_ && invalid_utf8_at(q)) break;
            const std::size_t len = utf8_at(q);
            if (len == 0) return false;
            q += len;
        }
        scratch.assign(start, static_cast<std::size_t>(q - start));
        for (;;) {
            if (q >= end_) return string_char_error(open, q);
            const auto c = static_cast<unsigned char>(*q);
            if (c == '"') {
                p_ = q + 1;
                out = scratch;
                return true;
            }
            if (c == '\\') {
                q = escape(open, q, scratch);
                if (q == nullptr) return false;
            } else if (c >= 0x80) {
                if (replace_utf8_ && invalid_utf8_at(q)) {
                    scratch += "\xEF\xBF\xBD";
                    ++q;
                    continue;
                }
                const std::size_t len = utf8_at(q);
                if (len == 0) return false;
                scratch.append(q, len);
                q += len;
            } else if (c < 0x20) {
                return string_char_error(open, q);
            }
            const char* r = skip_plain(q);
            scratch.append(q, static_cast<std::size_t>(r - q));
            q = r;
        }
    }

    // A number at p_.
    bool parse_number() {
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
        ScalarEvent ev;
        ev.kind = floating ? Kind::floating : Kind::integer;
        ev.mark = mark_at(s);
        ev.text = std::string_view(s, static_cast<std::size_t>(q - s));
        p_ = q;
        return value(ev);
    }

    // true, false, null, or an error naming the bare word.
    bool parse_word() {
        const char* s = p_;
        const char* q = s;
        while (q < end_ && is_word_char(*q))
            ++q;
        const std::string_view w(s, static_cast<std::size_t>(q - s));
        ScalarEvent ev;
        if (w == "true" || w == "false") {
            ev.kind = Kind::boolean;
        } else if (w == "null") {
            ev.kind = Kind::null;
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
        ev.mark = mark_at(s);
        ev.text = w;
        p_ = q;
        return value(ev);
    }

    bool value(const ScalarEvent& ev) {
        if constexpr (std::is_same_v<decltype(h_.scalar(ev)), bool>) {
            if (!h_.scalar(ev)) return failed(error_at(ev.mark, h_.refusal()));
        } else {
            h_.scalar(ev);
        }
        return true;
    }

    bool open(bool map) {
        if (frames_.size() >= limits_.max_depth)
            return failed(error_at(p_, "nesting deeper than " + std::to_string(limits_.max_depth) +
                                           " levels"));
        const Mark m = mark_at(p_);
        frames_.push_back(Frame{map, m.line, m.column});
        if (map)
            h_.mapping_start(m);
        else
            h_.sequence_start(m);
        ++p_;
        return true;
    }

    void close() {
        ++p_;
        const bool map = frames_.back().map;
        frames_.pop_back();
        if (map)
            h_.mapping_end();
        else
            h_.sequence_end();
    }

    // One top-level value at p_ (not blank).
    bool parse_value() {
        State st = State::value;
        bool after_comma = false; // for the message when an object key is missing
        for (;;) {
            switch (st) {
            case State::value: {
                skip_ws();
                if (p_ >= end_) return expected(p_, "a value");
                const char c = *p_;
                if (c == '"') {
                    ScalarEvent ev;
                    ev.kind = Kind::string;
                    ev.mark = mark_at(p_);
                    if (!parse_string(scratch_, ev.text)) return false;
                    if (!value(ev)) return false;
                    st = State::after_value;
                } else if (c == '{') {
                    if (!open(true)) return false;
                    skip_ws();
                    if (p_ < end_ && *p_ == '}') {
                        close();
                        st = State::after_value;
                    } else {
                        st = State::key;
                        after_comma = false;
                    }
                } else if (c == '[') {
                    if (!open(false)) return false;
                    skip_ws();
                    if (p_ < end_ && *p_ == ']') {
                        close();
                        st = State::after_value;
                    }
                } else if (c == '-' || is_digit(c)) {
                    if (!parse_number()) return false;
                    st = State::after_value;
                } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
                    if (!parse_word()) return false;
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
                ScalarEvent ev;
                ev.kind = Kind::string;
                ev.mark = mark_at(p_);
                if (!parse_string(scratch_, ev.text)) return false;
                skip_ws();
                if (p_ >= end_ || *p_ != ':') return expected(p_, "':' after object key");
                h_.key(ev);
                ++p_;
                st = State::value;
                break;
            }
            case State::after_value: {
                if (frames_.empty()) return true;
                skip_ws();
                const bool is_map = frames_.back().map;
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
                    close();
                } else {
                    return expected(p_, is_map ? "',' or '}' after object member"
                                               : "',' or ']' after array element");
                }
                break;
            }
            }
        }
    }

    std::string_view text_;
    const char* begin_; // after a byte order mark
    const char* p_;
    const char* const end_;
    const char* line_start_;
    const char* value_end_ = text_.data();
    const char* failed_at_ = text_.data();
    std::uint32_t line_ = 1;
    const std::string& file_;
    const Limits& limits_;
    Handler& h_;
    int doc_ = 0;
    bool replace_utf8_ = false;
    Error err_;
    std::vector<Frame> frames_;
    std::string scratch_;
};

} // namespace kpkg::io::detail
