// CEL, phase 1: text helpers and the lexer (tokens with their byte offsets, literals decoded
// with CEL's escapes).
#include <charconv>
#include <cstring>
#include <limits>

#include "internal.hpp"
#include "kpkg/io/scalars.hpp"

namespace kpkg::cel::detail {

bool is_cont(unsigned char c) {
    return (c & 0xC0) == 0x80;
}

// The length of the UTF-8 sequence starting at s[i], or 0 when it is not valid UTF-8.
std::size_t utf8_len(std::string_view s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    auto cont = [&](std::size_t k) {
        return i + k < s.size() && is_cont(static_cast<unsigned char>(s[i + k]));
    };
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (!cont(1) || !cont(2)) return 0;
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        if (c == 0xE0 && c1 < 0xA0) return 0;  // overlong
        if (c == 0xED && c1 >= 0xA0) return 0; // surrogate
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!cont(1) || !cont(2) || !cont(3)) return 0;
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        if (c == 0xF0 && c1 < 0x90) return 0;  // overlong
        if (c == 0xF4 && c1 >= 0x90) return 0; // beyond U+10FFFF
        return 4;
    }
    return 0;
}

std::size_t count_code_points(std::string_view s) {
    std::size_t n = 0;
    for (char c : s)
        if (!is_cont(static_cast<unsigned char>(c))) ++n;
    return n;
}

// "D800", "110000": a code point in upper-case hex, at least four digits.
std::string hex4(std::uint32_t cp) {
    static const char* digits = "0123456789ABCDEF";
    std::string out;
    do {
        out.insert(out.begin(), digits[cp & 15]);
        cp >>= 4;
    } while (cp != 0);
    while (out.size() < 4)
        out.insert(out.begin(), '0');
    return out;
}

using io::detail::append_utf8;

// A value or a piece of the rule for messages: at most 60 characters, control bytes escaped.
std::string shorten(std::string_view s) {
    std::string out;
    std::size_t chars = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (!is_cont(c) && ++chars > 60) {
            out += "...";
            break;
        }
        if (c < 0x20 || c == 0x7F) {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

// "column 7" or "line 2, column 7" (1-based, in characters) for a byte offset of the rule.
std::string location(std::string_view src, std::uint32_t pos) {
    pos = std::min<std::uint32_t>(pos, static_cast<std::uint32_t>(src.size()));
    std::size_t line = 1, line_start = 0;
    for (std::size_t i = 0; i < pos; ++i)
        if (src[i] == '\n') {
            ++line;
            line_start = i + 1;
        }
    const std::size_t col = count_code_points(src.substr(line_start, pos - line_start)) + 1;
    const bool multi = src.find('\n') != std::string_view::npos;
    return (multi ? "line " + std::to_string(line) + ", " : std::string()) + "column " +
           std::to_string(col);
}

// The rule's line holding `pos` (cut to a window around it when long) and a caret under it.
std::pair<std::string, std::string> excerpt(std::string_view src, std::uint32_t pos) {
    pos = std::min<std::uint32_t>(pos, static_cast<std::uint32_t>(src.size()));
    std::size_t b = 0;
    for (std::size_t i = 0; i < pos; ++i)
        if (src[i] == '\n') b = i + 1;
    std::size_t e = src.find('\n', pos);
    if (e == std::string_view::npos) e = src.size();
    std::string_view line = src.substr(b, e - b);
    std::size_t col = count_code_points(src.substr(b, pos - b)); // 0-based
    std::string prefix;
    // A long line is cut to ~100 characters around the caret: 40 before it.
    if (count_code_points(line) > 100 && col > 40) {
        std::size_t skip = col - 40, i = 0, seen = 0;
        while (i < line.size() && seen < skip) {
            ++i;
            while (i < line.size() && is_cont(static_cast<unsigned char>(line[i])))
                ++i;
            ++seen;
        }
        line.remove_prefix(i);
        col = 40 + 3;
        prefix = "...";
    }
    std::string text = prefix;
    std::size_t chars = 0, i = 0;
    for (; i < line.size(); ++i) {
        const auto c = static_cast<unsigned char>(line[i]);
        if (!is_cont(c) && ++chars > 100) break;
        text += (c == '\t' || c == '\r' || c < 0x20) ? ' ' : static_cast<char>(c);
    }
    if (i < line.size()) text += "...";
    return {text, std::string(col, ' ') + "^"};
}

// The first invalid UTF-8 byte of s, if any.
std::optional<std::size_t> invalid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_len(s, i);
        if (n == 0) return i;
        i += n;
    }
    return std::nullopt;
}

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int hex_val(char c) {
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;
}
bool is_ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) {
    return is_ident_start(c) || is_digit(c);
}

class Lexer {
public:
    explicit Lexer(std::string_view src) : s_(src) {}

    std::vector<Token> run() {
        std::vector<Token> out;
        for (;;) {
            skip_space();
            Token t;
            t.pos = static_cast<std::uint32_t>(i_);
            if (i_ >= s_.size()) {
                t.t = Tok::end;
                t.end = t.pos;
                out.push_back(std::move(t));
                return out;
            }
            lex_one(t);
            t.end = static_cast<std::uint32_t>(i_);
            out.push_back(std::move(t));
        }
    }

private:
    void skip_space() {
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
                ++i_;
            } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
                while (i_ < s_.size() && s_[i_] != '\n')
                    ++i_;
            } else {
                return;
            }
        }
    }

    bool at(std::size_t k, char c) const { return i_ + k < s_.size() && s_[i_ + k] == c; }
    bool quote_at(std::size_t k) const { return at(k, '\'') || at(k, '"'); }
    // Consumes c when it is the next character.
    bool eat(char c) {
        if (!at(0, c)) return false;
        ++i_;
        return true;
    }

    void lex_one(Token& t) {
        const char c = s_[i_];
        if (is_ident_start(c)) {
            std::size_t b = i_;
            while (i_ < s_.size() && is_ident_char(s_[i_]))
                ++i_;
            std::string_view word = s_.substr(b, i_ - b);
            // String prefixes: r (raw), b (bytes), br (raw bytes).
            if (quote_at(0)) {
                if (word == "r" || word == "R") return lex_string(t, true, false);
                if (word == "b" || word == "B") return lex_string(t, false, true);
                if (word == "br" || word == "bR" || word == "Br" || word == "BR")
                    return lex_string(t, true, true);
            }
            if (word == "true")
                t.t = Tok::kw_true;
            else if (word == "false")
                t.t = Tok::kw_false;
            else if (word == "null")
                t.t = Tok::kw_null;
            else if (word == "in")
                t.t = Tok::kw_in;
            else
                t.t = Tok::ident;
            t.text = std::string(word);
            return;
        }
        if (is_digit(c) || (c == '.' && i_ + 1 < s_.size() && is_digit(s_[i_ + 1])))
            return lex_number(t);
        if (c == '\'' || c == '"') return lex_string(t, false, false);
        ++i_;
        static constexpr std::pair<char, Tok> single[] = {
            {'(', Tok::lparen}, {')', Tok::rparen},   {'[', Tok::lbracket}, {']', Tok::rbracket},
            {'{', Tok::lbrace}, {'}', Tok::rbrace},   {'.', Tok::dot},      {',', Tok::comma},
            {':', Tok::colon},  {'?', Tok::question}, {'+', Tok::plus},     {'-', Tok::minus},
            {'*', Tok::star},   {'/', Tok::slash},    {'%', Tok::percent}};
        for (const auto& [ch, tok] : single)
            if (c == ch) {
                t.t = tok;
                return;
            }
        switch (c) {
        case '|':
            if (!eat('|')) fail_at(t.pos, "unexpected character '|'; the logical or is '||'");
            t.t = Tok::oror;
            return;
        case '&':
            if (!eat('&')) fail_at(t.pos, "unexpected character '&'; the logical and is '&&'");
            t.t = Tok::andand;
            return;
        case '!':
            t.t = eat('=') ? Tok::ne : Tok::bang;
            return;
        case '=':
            if (!eat('=')) fail_at(t.pos, "'=' is not an operator; equality is '=='");
            t.t = Tok::eq;
            return;
        case '<':
            t.t = eat('=') ? Tok::le : Tok::lt;
            return;
        case '>':
            t.t = eat('=') ? Tok::ge : Tok::gt;
            return;
        default:
            break;
        }
        --i_;
        const std::size_t n = std::max<std::size_t>(1, utf8_len(s_, i_));
        fail_at(t.pos, "unexpected character '" + shorten(s_.substr(i_, n)) + "'");
    }

    void lex_number(Token& t) {
        const std::size_t b = i_;
        auto add_digit = [&](int base, int v) {
            if (t.mag > (std::numeric_limits<std::uint64_t>::max() - static_cast<unsigned>(v)) /
                            static_cast<unsigned>(base))
                t.overflow = true;
            else
                t.mag = t.mag * static_cast<unsigned>(base) + static_cast<unsigned>(v);
        };
        if (s_[i_] == '0' && at(1, 'x') && i_ + 2 < s_.size() && is_hex(s_[i_ + 2])) {
            i_ += 2;
            while (i_ < s_.size() && is_hex(s_[i_]))
                add_digit(16, hex_val(s_[i_++]));
            t.t = eat('u') || eat('U') ? Tok::uint_lit : Tok::int_lit;
            return;
        }
        while (i_ < s_.size() && is_digit(s_[i_]))
            add_digit(10, s_[i_++] - '0');
        bool is_float = false;
        if (at(0, '.') && i_ + 1 < s_.size() && is_digit(s_[i_ + 1])) {
            is_float = true;
            ++i_;
            while (i_ < s_.size() && is_digit(s_[i_]))
                ++i_;
        }
        if ((at(0, 'e') || at(0, 'E')) &&
            ((i_ + 1 < s_.size() && is_digit(s_[i_ + 1])) ||
             ((at(1, '+') || at(1, '-')) && i_ + 2 < s_.size() && is_digit(s_[i_ + 2])))) {
            is_float = true;
            i_ += 2;
            while (i_ < s_.size() && is_digit(s_[i_]))
                ++i_;
        }
        if (is_float) {
            std::string text = std::string("0").append(s_.substr(b, i_ - b)); // "0.5" for ".5"
            double v = 0;
            auto r = std::from_chars(text.data(), text.data() + text.size(), v);
            if (r.ec == std::errc::result_out_of_range) {
                // Go's ParseFloat fails on overflow only; an underflow is a zero.
                const std::size_t e = text.find_first_of("eE");
                if (e == std::string::npos || text[e + 1] != '-')
                    fail_at(t.pos, "invalid double literal " + text.substr(1));
                v = 0;
            } else if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
                fail_at(t.pos, "invalid double literal " + text.substr(1));
            }
            t.t = Tok::dbl_lit;
            t.d = v;
            return;
        }
        t.t = eat('u') || eat('U') ? Tok::uint_lit : Tok::int_lit;
    }

    void lex_string(Token& t, bool raw, bool bytes) {
        const std::uint32_t start = t.pos;
        const char q = s_[i_];
        const bool triple = at(1, q) && at(2, q);
        i_ += triple ? 3 : 1;
        std::string out;
        for (;;) {
            if (i_ >= s_.size()) fail_at(start, "unterminated string literal");
            const char c = s_[i_];
            if (triple) {
                if (c == q && at(1, q) && at(2, q)) {
                    i_ += 3;
                    break;
                }
            } else {
                if (c == q) {
                    ++i_;
                    break;
                }
                if (c == '\n' || c == '\r')
                    fail_at(start, "unterminated string literal (a quoted string ends at the end "
                                   "of its line; use ''' or \"\"\" for several lines)");
            }
            if (c == '\\' && !raw) {
                escape(out);
                continue;
            }
            out += c;
            ++i_;
        }
        t.t = bytes ? Tok::bytes_lit : Tok::str_lit;
        t.text = std::move(out);
    }

    void escape(std::string& out) {
        const std::uint32_t at_pos = static_cast<std::uint32_t>(i_);
        ++i_; // the backslash
        if (i_ >= s_.size()) fail_at(at_pos, "unterminated string literal");
        const char c = s_[i_++];
        auto hex_digits = [&](int n) -> std::uint32_t {
            std::uint32_t v = 0;
            for (int k = 0; k < n; ++k) {
                if (i_ >= s_.size() || !is_hex(s_[i_]))
                    fail_at(at_pos, "invalid escape sequence: \\" + std::string(1, c) + " needs " +
                                        std::to_string(n) + " hexadecimal digits");
                v = v * 16 + static_cast<std::uint32_t>(hex_val(s_[i_++]));
            }
            return v;
        };
        switch (c) {
        case 'a':
            out += '\a';
            return;
        case 'b':
            out += '\b';
            return;
        case 'f':
            out += '\f';
            return;
        case 'n':
            out += '\n';
            return;
        case 'r':
            out += '\r';
            return;
        case 't':
            out += '\t';
            return;
        case 'v':
            out += '\v';
            return;
        case '\\':
        case '?':
        case '"':
        case '\'':
        case '`':
            out += c;
            return;
        case 'x':
        case 'X':
            append_utf8(out, hex_digits(2));
            return;
        case 'u':
        case 'U': {
            const std::uint32_t cp = hex_digits(c == 'u' ? 4 : 8);
            if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                fail_at(at_pos,
                        "invalid escape sequence: U+" + hex4(cp) + " is not a Unicode character");
            append_utf8(out, cp);
            return;
        }
        default:
            break;
        }
        if (c >= '0' && c <= '3' && i_ + 1 < s_.size() && s_[i_] >= '0' && s_[i_] <= '7' &&
            s_[i_ + 1] >= '0' && s_[i_ + 1] <= '7') {
            const std::uint32_t cp = static_cast<std::uint32_t>(
                (c - '0') * 64 + (s_[i_] - '0') * 8 + (s_[i_ + 1] - '0'));
            i_ += 2;
            append_utf8(out, cp);
            return;
        }
        const std::size_t n = std::max<std::size_t>(1, utf8_len(s_, i_ - 1));
        fail_at(at_pos, "invalid escape sequence '\\" + shorten(s_.substr(i_ - 1, n)) + "'");
    }

    std::string_view s_;
    std::size_t i_ = 0;
};

} // namespace

std::vector<Token> lex(std::string_view src) {
    return Lexer(src).run();
}

} // namespace kpkg::cel::detail
