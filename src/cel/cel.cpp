// The CEL subset of olm.constraint rules: lexer, parser with macro expansion, type checker and
// evaluator (the language is described in kpkg/cel/cel.hpp).
//
// Facts this follows: the CEL language definition (cel-spec doc/langdef.md: grammar, precedence,
// literals and escapes, heterogeneous equality, commutative && and ||, macro semantics), how
// cel-go's parser treats some syntax (a run of ! or - with an even count cancels out, "-5" is one
// literal, && and || chains do not nest, reserved words may still be field names, the
// true-branch of ?: is not itself a conditional) and how OLM sets up cel-go
// (operator-framework/api pkg/constraints/cel.go): the variable `properties` of type
// list(map(string, any)), the function semver_compare(any, any) -> int computed with blang's
// ParseTolerant on fmt.Sprint of each argument, a result that must be of type bool, and
// (operator-lifecycle-manager's resolver) a rule whose evaluation fails does not hold.
//
// The code is kpkg's own. Compilation errors travel as a CompileError exception that never leaves
// this file; evaluation never throws: errors are values, as in CEL.
#include "kpkg/cel/cel.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <system_error>
#include <utility>

#include "kpkg/core/semver.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/io/scalars.hpp"

namespace kpkg::cel {

namespace {

// ------------------------------------------------------------------------------------------------
// Text helpers

struct CompileError {
    std::uint32_t pos; // byte offset in the rule
    std::string message;
};

[[noreturn]] void fail_at(std::uint32_t pos, std::string message) {
    throw CompileError{pos, std::move(message)};
}

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

// Go's strconv.FormatFloat(d, 'g', -1, 64), which is what fmt.Sprint prints for a float64.
std::string go_format_float(double d) {
    std::string out;
    io::go::append_float_g(out, d, 64);
    return out;
}

// ------------------------------------------------------------------------------------------------
// Lexer

enum class Tok : std::uint8_t {
    end,
    ident,
    int_lit,
    uint_lit,
    dbl_lit,
    str_lit,
    bytes_lit,
    kw_true,
    kw_false,
    kw_null,
    kw_in,
    lparen,
    rparen,
    lbracket,
    rbracket,
    lbrace,
    rbrace,
    dot,
    comma,
    colon,
    question,
    oror,
    andand,
    bang,
    eq,
    ne,
    lt,
    le,
    gt,
    ge,
    plus,
    minus,
    star,
    slash,
    percent,
};

struct Token {
    Tok t = Tok::end;
    std::uint32_t pos = 0;
    std::uint32_t end = 0;
    std::uint64_t mag = 0; // int and uint literals: the magnitude
    bool overflow = false; // the magnitude does not fit in 64 bits
    double d = 0;
    std::string text; // identifier, or the decoded string literal
};

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
            std::string text = "0" + std::string(s_.substr(b, i_ - b)); // "0.5" for ".5"
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

// ------------------------------------------------------------------------------------------------
// Syntax tree

enum class Op : std::uint8_t {
    lit,
    ident,
    select,
    has,
    index,
    list,
    map,
    not_,
    neg,
    and_,
    or_,
    cond,
    eq,
    ne,
    lt,
    le,
    gt,
    ge,
    in,
    add,
    sub,
    mul,
    div,
    mod,
    all,
    exists,
    exists_one,
    size,
    starts_with,
    ends_with,
    contains,
    semver_compare,
};

const char* op_text(Op op) {
    switch (op) {
    case Op::not_:
        return "!";
    case Op::neg:
        return "-";
    case Op::and_:
        return "&&";
    case Op::or_:
        return "||";
    case Op::cond:
        return "?:";
    case Op::eq:
        return "==";
    case Op::ne:
        return "!=";
    case Op::lt:
        return "<";
    case Op::le:
        return "<=";
    case Op::gt:
        return ">";
    case Op::ge:
        return ">=";
    case Op::in:
        return "in";
    case Op::add:
        return "+";
    case Op::sub:
        return "-";
    case Op::mul:
        return "*";
    case Op::div:
        return "/";
    case Op::mod:
        return "%";
    case Op::index:
        return "[]";
    case Op::size:
        return "size";
    case Op::starts_with:
        return "startsWith";
    case Op::ends_with:
        return "endsWith";
    case Op::contains:
        return "contains";
    case Op::semver_compare:
        return "semver_compare";
    case Op::all:
        return "all";
    case Op::exists:
        return "exists";
    case Op::exists_one:
        return "exists_one";
    default:
        return "?";
    }
}

enum class LitKind : std::uint8_t { null, boolean, int_, uint_, dbl, str };

struct Expr {
    Op op = Op::lit;
    LitKind lit = LitKind::null;
    bool root = false; // identifier written with a leading '.'
    std::uint32_t pos = 0;
    std::uint32_t depth = 1;
    std::int32_t slot = -1; // identifier: macro variable slot, -1 for `properties`; macro: its slot
    bool b = false;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double d = 0;
    std::string text; // string literal, identifier, field name, macro variable
    std::vector<std::uint32_t> kids;
};

// ------------------------------------------------------------------------------------------------
// Parser: recursive descent over CEL's grammar, macros expanded as cel-go does when parsing.

// cel-go's reserved identifiers besides the literal keywords (allowed after '.', as field names).
bool reserved_word(std::string_view w) {
    static const char* words[] = {"as",        "break",  "const",  "continue", "else", "for",
                                  "function",  "if",     "import", "let",      "loop", "package",
                                  "namespace", "return", "var",    "void",     "while"};
    for (const char* r : words)
        if (w == r) return true;
    return false;
}

// Standard CEL functions and macros kpkg does not evaluate: rejected with that reason rather
// than as unknown names.
bool standard_cel_name(std::string_view w) {
    static const char* names[] = {
        "map",          "filter",       "matches",     "int",       "uint",
        "double",       "string",       "bytes",       "bool",      "dyn",
        "type",         "duration",     "timestamp",   "getDate",   "getDayOfMonth",
        "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",  "getMilliseconds",
        "getMinutes",   "getMonth",     "getSeconds",  "existsOne", "optional"};
    for (const char* n : names)
        if (w == n) return true;
    return false;
}

std::string describe_token(const Token& t) {
    switch (t.t) {
    case Tok::end:
        return "the end of the rule";
    case Tok::ident:
        return "'" + shorten(t.text) + "'";
    case Tok::int_lit:
    case Tok::uint_lit:
    case Tok::dbl_lit:
        return "a number";
    case Tok::str_lit:
        return "a string";
    case Tok::bytes_lit:
        return "a bytes literal";
    case Tok::kw_true:
        return "'true'";
    case Tok::kw_false:
        return "'false'";
    case Tok::kw_null:
        return "'null'";
    case Tok::kw_in:
        return "'in'";
    case Tok::lparen:
        return "'('";
    case Tok::rparen:
        return "')'";
    case Tok::lbracket:
        return "'['";
    case Tok::rbracket:
        return "']'";
    case Tok::lbrace:
        return "'{'";
    case Tok::rbrace:
        return "'}'";
    case Tok::dot:
        return "'.'";
    case Tok::comma:
        return "','";
    case Tok::colon:
        return "':'";
    case Tok::question:
        return "'?'";
    case Tok::oror:
        return "'||'";
    case Tok::andand:
        return "'&&'";
    case Tok::bang:
        return "'!'";
    case Tok::eq:
        return "'=='";
    case Tok::ne:
        return "'!='";
    case Tok::lt:
        return "'<'";
    case Tok::le:
        return "'<='";
    case Tok::gt:
        return "'>'";
    case Tok::ge:
        return "'>='";
    case Tok::plus:
        return "'+'";
    case Tok::minus:
        return "'-'";
    case Tok::star:
        return "'*'";
    case Tok::slash:
        return "'/'";
    case Tok::percent:
        return "'%'";
    }
    return "a token";
}

class Parser {
public:
    Parser(std::vector<Token> toks, std::vector<Expr>& out) : toks_(std::move(toks)), ex_(out) {}

    std::uint32_t parse_rule() {
        const std::uint32_t root = expr();
        if (peek().t != Tok::end)
            fail_at(peek().pos,
                    "unexpected " + describe_token(peek()) + " after a complete expression");
        return root;
    }

private:
    struct DepthGuard {
        explicit DepthGuard(Parser& p) : p_(p) {
            if (++p_.depth_ > max_depth)
                fail_at(p_.peek().pos,
                        "the rule nests deeper than " + std::to_string(max_depth) + " levels");
        }
        ~DepthGuard() { --p_.depth_; }
        Parser& p_;
    };

    const Token& peek(std::size_t k = 0) const { return toks_[std::min(k_ + k, toks_.size() - 1)]; }
    const Token& take() {
        const Token& t = toks_[k_];
        if (k_ + 1 < toks_.size()) ++k_;
        return t;
    }
    bool accept(Tok t) {
        if (peek().t != t) return false;
        take();
        return true;
    }
    void expect(Tok t, const char* what) {
        if (peek().t != t)
            fail_at(peek().pos,
                    std::string("expected ") + what + ", found " + describe_token(peek()));
        take();
    }

    std::uint32_t add(Expr e) {
        std::uint32_t d = 0;
        for (auto k : e.kids)
            d = std::max(d, ex_[k].depth);
        e.depth = d + 1;
        if (e.depth > max_depth)
            fail_at(e.pos, "the rule nests deeper than " + std::to_string(max_depth) + " levels");
        ex_.push_back(std::move(e));
        return static_cast<std::uint32_t>(ex_.size() - 1);
    }
    std::uint32_t node(Op op, std::uint32_t pos, std::vector<std::uint32_t> kids) {
        Expr e;
        e.op = op;
        e.pos = pos;
        e.kids = std::move(kids);
        return add(std::move(e));
    }

    // Expr = ConditionalOr ["?" ConditionalOr ":" Expr]
    std::uint32_t expr() {
        DepthGuard g(*this);
        const std::uint32_t c = logical(Tok::oror);
        if (peek().t != Tok::question) return c;
        const std::uint32_t pos = take().pos;
        const std::uint32_t t = logical(Tok::oror);
        expect(Tok::colon, "':' of the conditional '? :'");
        const std::uint32_t f = expr();
        return node(Op::cond, pos, {c, t, f});
    }

    // ConditionalOr and ConditionalAnd, flat (a || b || c is one node, as cel-go balances it).
    std::uint32_t logical(Tok which) {
        std::vector<std::uint32_t> terms;
        terms.push_back(which == Tok::oror ? logical(Tok::andand) : relation());
        std::uint32_t pos = 0;
        while (peek().t == which) {
            const std::uint32_t p = take().pos;
            if (terms.size() == 1) pos = p;
            terms.push_back(which == Tok::oror ? logical(Tok::andand) : relation());
        }
        if (terms.size() == 1) return terms[0];
        return node(which == Tok::oror ? Op::or_ : Op::and_, pos, std::move(terms));
    }

    std::uint32_t relation() {
        std::uint32_t left = addition();
        for (;;) {
            Op op;
            switch (peek().t) {
            case Tok::eq:
                op = Op::eq;
                break;
            case Tok::ne:
                op = Op::ne;
                break;
            case Tok::lt:
                op = Op::lt;
                break;
            case Tok::le:
                op = Op::le;
                break;
            case Tok::gt:
                op = Op::gt;
                break;
            case Tok::ge:
                op = Op::ge;
                break;
            case Tok::kw_in:
                op = Op::in;
                break;
            default:
                return left;
            }
            const std::uint32_t pos = take().pos;
            const std::uint32_t right = addition();
            left = node(op, pos, {left, right});
        }
    }

    std::uint32_t addition() {
        std::uint32_t left = multiplication();
        while (peek().t == Tok::plus || peek().t == Tok::minus) {
            const Op op = peek().t == Tok::plus ? Op::add : Op::sub;
            const std::uint32_t pos = take().pos;
            const std::uint32_t right = multiplication();
            left = node(op, pos, {left, right});
        }
        return left;
    }

    std::uint32_t multiplication() {
        std::uint32_t left = unary();
        while (peek().t == Tok::star || peek().t == Tok::slash || peek().t == Tok::percent) {
            const Op op = peek().t == Tok::star    ? Op::mul
                          : peek().t == Tok::slash ? Op::div
                                                   : Op::mod;
            const std::uint32_t pos = take().pos;
            const std::uint32_t right = unary();
            left = node(op, pos, {left, right});
        }
        return left;
    }

    // Unary = Member | "!" {"!"} Member | "-" {"-"} Member; "-5" is the literal -5.
    std::uint32_t unary() {
        if (peek().t == Tok::bang) {
            const std::uint32_t pos = peek().pos;
            std::size_t n = 0;
            while (accept(Tok::bang))
                ++n;
            const std::uint32_t m = member();
            return n % 2 ? node(Op::not_, pos, {m}) : m;
        }
        if (peek().t == Tok::minus) {
            const std::uint32_t pos = peek().pos;
            if (peek(1).t == Tok::int_lit || peek(1).t == Tok::dbl_lit) {
                take();
                return member(true, pos);
            }
            std::size_t n = 0;
            while (accept(Tok::minus))
                ++n;
            const std::uint32_t m = member();
            return n % 2 ? node(Op::neg, pos, {m}) : m;
        }
        return member();
    }

    std::uint32_t member(bool negative = false, std::uint32_t minus_pos = 0) {
        std::uint32_t e = primary(negative, minus_pos);
        for (;;) {
            if (peek().t == Tok::dot) {
                const std::uint32_t dot = take().pos;
                if (peek().t == Tok::question)
                    fail_at(dot, "optional field selection '.?' is not in the CEL subset kpkg "
                                 "evaluates");
                if (peek().t != Tok::ident)
                    fail_at(peek().pos, "expected a field or method name after '.', found " +
                                            describe_token(peek()));
                const Token& name = take();
                if (accept(Tok::lparen)) {
                    e = receiver_call(name, e, arguments());
                } else {
                    Expr s;
                    s.op = Op::select;
                    s.pos = name.pos;
                    s.text = name.text;
                    s.kids = {e};
                    e = add(std::move(s));
                }
            } else if (peek().t == Tok::lbracket) {
                const std::uint32_t pos = take().pos;
                if (peek().t == Tok::question)
                    fail_at(pos, "optional indexing '[?' is not in the CEL subset kpkg evaluates");
                const std::uint32_t idx = expr();
                expect(Tok::rbracket, "']'");
                e = node(Op::index, pos, {e, idx});
            } else if (peek().t == Tok::lbrace) {
                fail_at(peek().pos, "message construction (Name{field: value}) is not in the CEL "
                                    "subset kpkg evaluates");
            } else {
                return e;
            }
        }
    }

    // Arguments after '(' up to and including ')'.
    std::vector<std::uint32_t> arguments() {
        std::vector<std::uint32_t> args;
        if (accept(Tok::rparen)) return args;
        for (;;) {
            args.push_back(expr());
            if (accept(Tok::rparen)) return args;
            expect(Tok::comma, "',' or ')' in the argument list");
        }
    }

    static Expr literal(LitKind k, std::uint32_t pos) {
        Expr e;
        e.op = Op::lit;
        e.lit = k;
        e.pos = pos;
        return e;
    }

    // Recursion goes through expr() (parentheses, lists, maps, arguments), which guards the depth.
    std::uint32_t primary(bool negative, std::uint32_t minus_pos) {
        const Token& t = take();
        switch (t.t) {
        case Tok::int_lit: {
            constexpr auto max =
                static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
            if (t.overflow || t.mag > max + (negative ? 1 : 0))
                fail_at(negative ? minus_pos : t.pos,
                        "invalid int literal: out of the 64-bit range");
            Expr e = literal(LitKind::int_, negative ? minus_pos : t.pos);
            e.i = negative ? (t.mag == max + 1 ? std::numeric_limits<std::int64_t>::min()
                                               : -static_cast<std::int64_t>(t.mag))
                           : static_cast<std::int64_t>(t.mag);
            return add(std::move(e));
        }
        case Tok::uint_lit: {
            if (t.overflow) fail_at(t.pos, "invalid uint literal: out of the 64-bit range");
            Expr e = literal(LitKind::uint_, t.pos);
            e.u = t.mag;
            return add(std::move(e));
        }
        case Tok::dbl_lit: {
            Expr e = literal(LitKind::dbl, negative ? minus_pos : t.pos);
            e.d = negative ? -t.d : t.d;
            return add(std::move(e));
        }
        case Tok::str_lit: {
            Expr e = literal(LitKind::str, t.pos);
            e.text = t.text;
            return add(std::move(e));
        }
        case Tok::bytes_lit:
            fail_at(t.pos, "bytes literals are not in the CEL subset kpkg evaluates");
        case Tok::kw_true:
        case Tok::kw_false: {
            Expr e = literal(LitKind::boolean, t.pos);
            e.b = t.t == Tok::kw_true;
            return add(std::move(e));
        }
        case Tok::kw_null:
            return add(literal(LitKind::null, t.pos));
        case Tok::lparen: {
            const std::uint32_t e = expr();
            expect(Tok::rparen, "')'");
            return e;
        }
        case Tok::lbracket: {
            std::vector<std::uint32_t> items;
            while (peek().t != Tok::rbracket) {
                items.push_back(expr());
                if (!accept(Tok::comma)) break;
            }
            expect(Tok::rbracket, "',' or ']' in the list");
            return node(Op::list, t.pos, std::move(items));
        }
        case Tok::lbrace: {
            std::vector<std::uint32_t> kv;
            while (peek().t != Tok::rbrace) {
                kv.push_back(expr());
                expect(Tok::colon, "':' between a map key and its value");
                kv.push_back(expr());
                if (!accept(Tok::comma)) break;
            }
            expect(Tok::rbrace, "',' or '}' in the map");
            return node(Op::map, t.pos, std::move(kv));
        }
        case Tok::dot: {
            if (peek().t != Tok::ident)
                fail_at(peek().pos,
                        "expected a name after the leading '.', found " + describe_token(peek()));
            return identifier(take(), true);
        }
        case Tok::ident:
            return identifier(t, false);
        default:
            break;
        }
        fail_at(t.pos, "expected an expression, found " + describe_token(t));
    }

    std::uint32_t identifier(const Token& name, bool root) {
        if (reserved_word(name.text)) fail_at(name.pos, "reserved identifier '" + name.text + "'");
        if (accept(Tok::lparen)) return global_call(name, arguments());
        Expr e;
        e.op = Op::ident;
        e.pos = name.pos;
        e.root = root;
        e.text = name.text;
        return add(std::move(e));
    }

    [[noreturn]] void unknown_function(const Token& name, bool receiver) {
        if (standard_cel_name(name.text))
            fail_at(name.pos, "'" + name.text +
                                  "' is standard CEL but not in the subset kpkg evaluates "
                                  "(see kpkg-resolve(1))");
        fail_at(name.pos, std::string("undeclared reference to ") + (receiver ? "method '" : "'") +
                              shorten(name.text) + "'");
    }

    std::uint32_t global_call(const Token& name, std::vector<std::uint32_t> args) {
        const std::string& f = name.text;
        if (f == "has") {
            if (args.size() != 1 || ex_[args[0]].op != Op::select)
                fail_at(name.pos,
                        "has() takes one field selection, as in has(p.value.packageName)");
            Expr e;
            e.op = Op::has;
            e.pos = name.pos;
            e.text = ex_[args[0]].text;
            e.kids = ex_[args[0]].kids;
            return add(std::move(e));
        }
        if (f == "semver_compare") {
            if (args.size() != 2)
                fail_at(name.pos,
                        "semver_compare takes 2 arguments, not " + std::to_string(args.size()));
            return node(Op::semver_compare, name.pos, std::move(args));
        }
        if (f == "size") {
            if (args.size() != 1)
                fail_at(name.pos, "size takes 1 argument, not " + std::to_string(args.size()));
            return node(Op::size, name.pos, std::move(args));
        }
        if (f == "all" || f == "exists" || f == "exists_one" || f == "startsWith" ||
            f == "endsWith" || f == "contains")
            fail_at(name.pos, f + "() is called on a value, as in properties." + f + "(...)");
        unknown_function(name, false);
    }

    std::uint32_t receiver_call(const Token& name, std::uint32_t target,
                                std::vector<std::uint32_t> args) {
        const std::string& f = name.text;
        if (f == "all" || f == "exists" || f == "exists_one") {
            if (args.size() != 2)
                fail_at(name.pos, f +
                                      "() takes a variable name and a condition, as in "
                                      "properties." +
                                      f + "(p, p.type == 'olm.gvk')");
            const Expr& var = ex_[args[0]];
            if (var.op != Op::ident || var.root)
                fail_at(var.pos, "the first argument of " + f + "() must be a simple name");
            Expr e;
            e.op = f == "all" ? Op::all : f == "exists" ? Op::exists : Op::exists_one;
            e.pos = name.pos;
            e.text = var.text;
            e.kids = {target, args[1]};
            return add(std::move(e));
        }
        if (f == "size") {
            if (!args.empty()) fail_at(name.pos, "size() takes no argument when called on a value");
            return node(Op::size, name.pos, {target});
        }
        if (f == "startsWith" || f == "endsWith" || f == "contains") {
            if (args.size() != 1) fail_at(name.pos, f + "() takes 1 argument");
            const Op op = f == "startsWith" ? Op::starts_with
                          : f == "endsWith" ? Op::ends_with
                                            : Op::contains;
            return node(op, name.pos, {target, args[0]});
        }
        if (f == "semver_compare" || f == "has")
            fail_at(name.pos, f + "() is a function, not a method: write " + f + "(...)");
        unknown_function(name, true);
    }

    std::vector<Token> toks_;
    std::size_t k_ = 0;
    std::size_t depth_ = 0;
    std::vector<Expr>& ex_;
};

// ------------------------------------------------------------------------------------------------
// Type checker: the static types cel-go's checker gives this subset; dyn where the data decides.

struct Type;
using TypeP = std::shared_ptr<const Type>;
struct Type {
    enum class K : std::uint8_t { dyn, null, boolean, int_, uint_, dbl, str, list, map };
    K k = K::dyn;
    TypeP a, b; // list: element; map: key, value
};

TypeP prim(Type::K k) {
    static const TypeP t[] = {
        std::make_shared<Type>(Type{Type::K::dyn, {}, {}}),
        std::make_shared<Type>(Type{Type::K::null, {}, {}}),
        std::make_shared<Type>(Type{Type::K::boolean, {}, {}}),
        std::make_shared<Type>(Type{Type::K::int_, {}, {}}),
        std::make_shared<Type>(Type{Type::K::uint_, {}, {}}),
        std::make_shared<Type>(Type{Type::K::dbl, {}, {}}),
        std::make_shared<Type>(Type{Type::K::str, {}, {}}),
    };
    return t[static_cast<int>(k)];
}
TypeP list_of(TypeP e) {
    return std::make_shared<Type>(Type{Type::K::list, std::move(e), {}});
}
TypeP map_of(TypeP k, TypeP v) {
    return std::make_shared<Type>(Type{Type::K::map, std::move(k), std::move(v)});
}

std::string type_name(const TypeP& t) {
    switch (t->k) {
    case Type::K::dyn:
        return "dyn";
    case Type::K::null:
        return "null_type";
    case Type::K::boolean:
        return "bool";
    case Type::K::int_:
        return "int";
    case Type::K::uint_:
        return "uint";
    case Type::K::dbl:
        return "double";
    case Type::K::str:
        return "string";
    case Type::K::list:
        return "list(" + type_name(t->a) + ")";
    case Type::K::map:
        return "map(" + type_name(t->a) + ", " + type_name(t->b) + ")";
    }
    return "?";
}

bool is(const TypeP& t, Type::K k) {
    return t->k == k;
}
bool dyn(const TypeP& t) {
    return t->k == Type::K::dyn;
}
bool same(const TypeP& x, const TypeP& y) {
    if (x->k != y->k) return false;
    if (x->k == Type::K::list) return same(x->a, y->a);
    if (x->k == Type::K::map) return same(x->a, y->a) && same(x->b, y->b);
    return true;
}
bool compatible(const TypeP& x, const TypeP& y) {
    if (dyn(x) || dyn(y)) return true;
    if (x->k != y->k) return false;
    if (x->k == Type::K::list) return compatible(x->a, y->a);
    if (x->k == Type::K::map) return compatible(x->a, y->a) && compatible(x->b, y->b);
    return true;
}
TypeP join(const TypeP& x, const TypeP& y) {
    return same(x, y) ? x : prim(Type::K::dyn);
}
bool orderable(const TypeP& t) {
    switch (t->k) {
    case Type::K::boolean:
    case Type::K::int_:
    case Type::K::uint_:
    case Type::K::dbl:
    case Type::K::str:
        return true;
    default:
        return false;
    }
}
bool numeric(const TypeP& t) {
    return t->k == Type::K::int_ || t->k == Type::K::uint_ || t->k == Type::K::dbl;
}

class Checker {
public:
    explicit Checker(std::vector<Expr>& ex) : ex_(ex) {}

    TypeP check(std::uint32_t id) {
        Expr& e = ex_[id];
        auto kid = [&](std::size_t k) { return check(e.kids[k]); };
        auto no_overload = [&](std::initializer_list<TypeP> args) -> TypeP {
            std::string list;
            for (const auto& a : args)
                list += (list.empty() ? "" : ", ") + type_name(a);
            fail_at(e.pos, std::string("no matching overload for '") + op_text(e.op) +
                               "' applied to (" + list + ")");
        };
        switch (e.op) {
        case Op::lit:
            switch (e.lit) {
            case LitKind::null:
                return prim(Type::K::null);
            case LitKind::boolean:
                return prim(Type::K::boolean);
            case LitKind::int_:
                return prim(Type::K::int_);
            case LitKind::uint_:
                return prim(Type::K::uint_);
            case LitKind::dbl:
                return prim(Type::K::dbl);
            case LitKind::str:
                return prim(Type::K::str);
            }
            break;
        case Op::ident: {
            if (!e.root)
                for (std::size_t k = scope_.size(); k-- > 0;)
                    if (scope_[k].first == e.text) {
                        e.slot = static_cast<std::int32_t>(k);
                        return scope_[k].second;
                    }
            if (e.text == "properties") {
                e.slot = -1;
                return map_list_type();
            }
            fail_at(e.pos, "undeclared reference to '" + shorten(e.text) +
                               "' (the rule sees `properties` and the variables of its macros)");
        }
        case Op::select:
        case Op::has: {
            const TypeP t = kid(0);
            if (is(t, Type::K::map)) {
                if (!compatible(t->a, prim(Type::K::str)))
                    fail_at(e.pos, "field selection '." + e.text + "' on a map with keys of type " +
                                       type_name(t->a));
                return e.op == Op::has ? prim(Type::K::boolean) : t->b;
            }
            if (dyn(t)) return e.op == Op::has ? prim(Type::K::boolean) : prim(Type::K::dyn);
            fail_at(e.pos, "field selection '." + shorten(e.text) + "' on a value of type " +
                               type_name(t) + ", which has no fields");
        }
        case Op::index: {
            const TypeP t = kid(0), i = kid(1);
            if (is(t, Type::K::list) && (is(i, Type::K::int_) || dyn(i))) return t->a;
            if (is(t, Type::K::map) && compatible(i, t->a)) return t->b;
            if (dyn(t)) return prim(Type::K::dyn);
            return no_overload({t, i});
        }
        case Op::list: {
            TypeP elem;
            for (std::size_t k = 0; k < e.kids.size(); ++k) {
                const TypeP t = kid(k);
                elem = elem ? join(elem, t) : t;
            }
            return list_of(elem ? elem : prim(Type::K::dyn));
        }
        case Op::map: {
            TypeP kt, vt;
            for (std::size_t k = 0; k + 1 < e.kids.size(); k += 2) {
                const TypeP a = kid(k), b = kid(k + 1);
                kt = kt ? join(kt, a) : a;
                vt = vt ? join(vt, b) : b;
            }
            return map_of(kt ? kt : prim(Type::K::dyn), vt ? vt : prim(Type::K::dyn));
        }
        case Op::not_: {
            const TypeP t = kid(0);
            if (is(t, Type::K::boolean) || dyn(t)) return prim(Type::K::boolean);
            return no_overload({t});
        }
        case Op::neg: {
            const TypeP t = kid(0);
            if (is(t, Type::K::int_) || is(t, Type::K::dbl) || dyn(t)) return t;
            return no_overload({t});
        }
        case Op::and_:
        case Op::or_: {
            for (std::size_t k = 0; k < e.kids.size(); ++k) {
                const TypeP t = kid(k);
                if (!is(t, Type::K::boolean) && !dyn(t)) {
                    e.pos = ex_[e.kids[k]].pos;
                    fail_at(e.pos, std::string("an operand of '") + op_text(e.op) +
                                       "' is of type " + type_name(t) + ", not bool");
                }
            }
            return prim(Type::K::boolean);
        }
        case Op::cond: {
            const TypeP c = kid(0), t = kid(1), f = kid(2);
            if (!is(c, Type::K::boolean) && !dyn(c))
                fail_at(e.pos, "the condition of '? :' is of type " + type_name(c) + ", not bool");
            if (!compatible(t, f)) return no_overload({c, t, f});
            return join(t, f);
        }
        case Op::eq:
        case Op::ne: {
            const TypeP a = kid(0), b = kid(1);
            if (!compatible(a, b)) return no_overload({a, b});
            return prim(Type::K::boolean);
        }
        case Op::lt:
        case Op::le:
        case Op::gt:
        case Op::ge: {
            const TypeP a = kid(0), b = kid(1);
            const bool ok = (dyn(a) && (dyn(b) || orderable(b))) || (dyn(b) && orderable(a)) ||
                            (orderable(a) && a->k == b->k);
            if (!ok) return no_overload({a, b});
            return prim(Type::K::boolean);
        }
        case Op::in: {
            const TypeP a = kid(0), b = kid(1);
            if (dyn(b) || (is(b, Type::K::list) && compatible(a, b->a)) ||
                (is(b, Type::K::map) && compatible(a, b->a)))
                return prim(Type::K::boolean);
            return no_overload({a, b});
        }
        case Op::add:
        case Op::sub:
        case Op::mul:
        case Op::div:
        case Op::mod: {
            const TypeP a = kid(0), b = kid(1);
            auto allowed = [&](const TypeP& t) {
                switch (e.op) {
                case Op::add:
                    return numeric(t) || is(t, Type::K::str) || is(t, Type::K::list);
                case Op::mod:
                    return is(t, Type::K::int_) || is(t, Type::K::uint_);
                default:
                    return numeric(t);
                }
            };
            if (dyn(a) && dyn(b)) return a;
            if (dyn(a) && allowed(b)) return b;
            if (dyn(b) && allowed(a)) return a;
            if (allowed(a) && a->k == b->k) {
                if (is(a, Type::K::list)) {
                    if (!compatible(a->a, b->a)) return no_overload({a, b});
                    return list_of(join(a->a, b->a));
                }
                return a;
            }
            return no_overload({a, b});
        }
        case Op::all:
        case Op::exists:
        case Op::exists_one: {
            const TypeP range = kid(0);
            TypeP var;
            if (is(range, Type::K::list))
                var = range->a;
            else if (is(range, Type::K::map))
                var = range->a;
            else if (dyn(range))
                var = range;
            else
                fail_at(e.pos, std::string(op_text(e.op)) +
                                   "() cannot range over a value of type " + type_name(range));
            if (scope_.size() >= max_depth)
                fail_at(e.pos,
                        "the rule nests deeper than " + std::to_string(max_depth) + " levels");
            e.slot = static_cast<std::int32_t>(scope_.size());
            scope_.emplace_back(e.text, var);
            slots_ = std::max(slots_, scope_.size());
            const TypeP p = kid(1);
            scope_.pop_back();
            if (!is(p, Type::K::boolean) && !dyn(p))
                fail_at(ex_[e.kids[1]].pos, std::string("the condition of ") + op_text(e.op) +
                                                "() is of type " + type_name(p) + ", not bool");
            return prim(Type::K::boolean);
        }
        case Op::size: {
            const TypeP t = kid(0);
            if (is(t, Type::K::str) || is(t, Type::K::list) || is(t, Type::K::map) || dyn(t))
                return prim(Type::K::int_);
            return no_overload({t});
        }
        case Op::starts_with:
        case Op::ends_with:
        case Op::contains: {
            const TypeP a = kid(0), b = kid(1);
            if ((is(a, Type::K::str) || dyn(a)) && (is(b, Type::K::str) || dyn(b)))
                return prim(Type::K::boolean);
            return no_overload({a, b});
        }
        case Op::semver_compare:
            kid(0);
            kid(1);
            return prim(Type::K::int_);
        }
        fail_at(e.pos, "internal error: unhandled expression");
    }

    std::size_t slots() const { return slots_; }

private:
    static TypeP map_list_type() {
        static const TypeP t = list_of(map_of(prim(Type::K::str), prim(Type::K::dyn)));
        return t;
    }

    std::vector<Expr>& ex_;
    std::vector<std::pair<std::string, TypeP>> scope_;
    std::size_t slots_ = 0;
};

// ------------------------------------------------------------------------------------------------
// Values. Strings, lists and maps are views into the bundle's properties or the syntax tree
// whenever possible; what evaluation creates is owned through a shared pointer.

enum class VT : std::uint8_t { null, boolean, int_, uint_, dbl, str, list, map, error };
enum class Back : std::uint8_t { none, node, props, prop, owned };

struct Owned;

struct Value {
    VT t = VT::null;
    Back back = Back::none;
    union {
        bool b;
        std::int64_t i;
        std::uint64_t u;
        double d;
        const io::Node* node;
        const std::vector<Property>* props;
        const Property* prop;
    };
    std::string_view s;
    std::shared_ptr<const Owned> own;

    Value() : i(0) {}
};

struct Owned {
    std::string text; // an owned string, or an error message
    std::vector<Value> items;
    std::vector<std::pair<Value, Value>> entries;
};

Value v_bool(bool b) {
    Value v;
    v.t = VT::boolean;
    v.b = b;
    return v;
}
Value v_int(std::int64_t i) {
    Value v;
    v.t = VT::int_;
    v.i = i;
    return v;
}
Value v_uint(std::uint64_t u) {
    Value v;
    v.t = VT::uint_;
    v.u = u;
    return v;
}
Value v_dbl(double d) {
    Value v;
    v.t = VT::dbl;
    v.d = d;
    return v;
}
Value v_str(std::string_view s) {
    Value v;
    v.t = VT::str;
    v.s = s;
    return v;
}
// A value that evaluation built (a list, a map, or through v_text a string).
Value v_owned(VT t, std::shared_ptr<const Owned> o) {
    Value v;
    v.t = t;
    v.back = Back::owned;
    v.own = std::move(o);
    return v;
}
// A string (VT::str) or an error message (VT::error) that evaluation made.
Value v_text(VT t, std::string s) {
    auto o = std::make_shared<Owned>();
    o->text = std::move(s);
    const std::string_view text = o->text;
    Value v = v_owned(t, std::move(o));
    v.s = text;
    return v;
}
Value v_err(std::string msg) {
    return v_text(VT::error, std::move(msg));
}

const char* vt_name(VT t) {
    switch (t) {
    case VT::null:
        return "null_type";
    case VT::boolean:
        return "bool";
    case VT::int_:
        return "int";
    case VT::uint_:
        return "uint";
    case VT::dbl:
        return "double";
    case VT::str:
        return "string";
    case VT::list:
        return "list";
    case VT::map:
        return "map";
    case VT::error:
        return "error";
    }
    return "?";
}

Value from_node(const io::Node& n) {
    Value v;
    switch (n.kind) {
    case io::Kind::null:
        return v;
    case io::Kind::boolean:
        if (auto b = n.as_bool()) return v_bool(*b);
        return v_err("unreadable boolean '" + shorten(n.text) + "'");
    case io::Kind::integer:
    case io::Kind::floating:
        // Go's encoding/json turns every JSON number into a float64, and so CEL sees doubles.
        if (auto d = n.as_double()) return v_dbl(*d);
        return v_err("unreadable number '" + shorten(n.text) + "'");
    case io::Kind::string:
        return v_str(n.text);
    case io::Kind::sequence:
        v.t = VT::list;
        v.back = Back::node;
        v.node = &n;
        return v;
    case io::Kind::mapping:
        v.t = VT::map;
        v.back = Back::node;
        v.node = &n;
        return v;
    }
    return v;
}

std::size_t list_len(const Value& v) {
    switch (v.back) {
    case Back::node:
        return v.node->items.size();
    case Back::props:
        return v.props->size();
    case Back::owned:
        return v.own->items.size();
    default:
        return 0;
    }
}

Value list_at(const Value& v, std::size_t k) {
    switch (v.back) {
    case Back::node:
        return from_node(v.node->items[k]);
    case Back::props: {
        Value m;
        m.t = VT::map;
        m.back = Back::prop;
        m.prop = &(*v.props)[k];
        return m;
    }
    case Back::owned:
        return v.own->items[k];
    default:
        return Value{};
    }
}

std::size_t map_len(const Value& v) {
    switch (v.back) {
    case Back::node:
        return v.node->fields.size();
    case Back::prop:
        return 2;
    case Back::owned:
        return v.own->entries.size();
    default:
        return 0;
    }
}

Value map_key_at(const Value& v, std::size_t k) {
    switch (v.back) {
    case Back::node:
        return v_str(v.node->fields[k].key);
    case Back::prop:
        return v_str(k == 0 ? "type" : "value");
    case Back::owned:
        return v.own->entries[k].first;
    default:
        return Value{};
    }
}

Value map_value_at(const Value& v, std::size_t k) {
    switch (v.back) {
    case Back::node:
        return from_node(v.node->fields[k].value);
    case Back::prop:
        return k == 0 ? v_str(v.prop->type) : from_node(v.prop->value);
    case Back::owned:
        return v.own->entries[k].second;
    default:
        return Value{};
    }
}

bool is_num(const Value& v) {
    return v.t == VT::int_ || v.t == VT::uint_ || v.t == VT::dbl;
}

// Compares an integer with a double exactly; nullopt when d is NaN.
std::optional<int> cmp_int_dbl(std::int64_t i, double d) {
    if (std::isnan(d)) return std::nullopt;
    if (d >= 9223372036854775808.0) return -1;
    if (d < -9223372036854775808.0) return 1;
    const double t = std::trunc(d);
    const auto ti = static_cast<std::int64_t>(t);
    if (i != ti) return i < ti ? -1 : 1;
    const double frac = d - t;
    return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}
std::optional<int> cmp_uint_dbl(std::uint64_t u, double d) {
    if (std::isnan(d)) return std::nullopt;
    if (d < 0) return 1;
    if (d >= 18446744073709551616.0) return -1;
    const double t = std::trunc(d);
    const auto tu = static_cast<std::uint64_t>(t);
    if (u != tu) return u < tu ? -1 : 1;
    return d > t ? -1 : 0;
}

// Numbers on one number line (CEL's heterogeneous numeric comparison).
std::optional<int> cmp_num(const Value& a, const Value& b) {
    auto sign = [](auto x, auto y) { return x < y ? -1 : y < x ? 1 : 0; };
    switch (a.t) {
    case VT::int_:
        if (b.t == VT::int_) return sign(a.i, b.i);
        if (b.t == VT::uint_) return a.i < 0 ? -1 : sign(static_cast<std::uint64_t>(a.i), b.u);
        return cmp_int_dbl(a.i, b.d);
    case VT::uint_:
        if (b.t == VT::uint_) return sign(a.u, b.u);
        if (b.t == VT::int_) return b.i < 0 ? 1 : sign(a.u, static_cast<std::uint64_t>(b.i));
        return cmp_uint_dbl(a.u, b.d);
    default:
        if (b.t == VT::dbl) {
            if (std::isnan(a.d) || std::isnan(b.d)) return std::nullopt;
            return sign(a.d, b.d);
        }
        if (auto r = b.t == VT::int_ ? cmp_int_dbl(b.i, a.d) : cmp_uint_dbl(b.u, a.d)) return -*r;
        return std::nullopt;
    }
}

// ------------------------------------------------------------------------------------------------
// Evaluator

// Values of constant subtrees, computed once when the rule is compiled (by node index).
using Folded = std::vector<std::optional<Value>>;

class Evaluator {
public:
    Evaluator(const std::vector<Expr>& ex, const std::vector<Property>& props, std::size_t slots,
              const Folded* folded)
        : ex_(ex), props_(props), vars_(slots), folded_(folded) {}

    // The value of a subtree that reads no variable, unless it needs more than the step limit.
    std::optional<Value> fold(std::uint32_t id) {
        Value v = eval(id);
        if (exhausted_) return std::nullopt;
        return v;
    }

    Outcome run(std::uint32_t root) {
        Value v = eval(root);
        Outcome out;
        if (exhausted_) {
            out.kind = Outcome::Kind::error;
            out.error = "evaluation needs more than " + std::to_string(max_steps) + " steps";
        } else if (v.t == VT::boolean) {
            out.kind = v.b ? Outcome::Kind::holds : Outcome::Kind::fails;
        } else {
            out.kind = Outcome::Kind::error;
            out.error = v.t == VT::error ? std::string(v.s)
                                         : std::string("the rule evaluated to a ") + vt_name(v.t);
        }
        return out;
    }

private:
    // Work proportional to n bytes or elements.
    void charge(std::size_t n) {
        steps_ += n / 32;
        if (steps_ > max_steps) exhausted_ = true;
    }

    static Value no_overload(const char* op, const Value& a) {
        return v_err(std::string("no such overload: ") + op + " " + vt_name(a.t));
    }
    static Value no_overload(const char* op, const Value& a, const Value& b) {
        return v_err(std::string("no such overload: ") + vt_name(a.t) + " " + op + " " +
                     vt_name(b.t));
    }

    // A short rendering of a value for messages.
    std::string show(const Value& v) {
        switch (v.t) {
        case VT::null:
            return "null";
        case VT::boolean:
            return v.b ? "true" : "false";
        case VT::int_:
            return std::to_string(v.i);
        case VT::uint_:
            return std::to_string(v.u) + "u";
        case VT::dbl:
            return go_format_float(v.d);
        case VT::str:
            return "'" + shorten(v.s) + "'";
        case VT::list:
            return "a list of " + std::to_string(list_len(v));
        case VT::map:
            return "a map of " + std::to_string(map_len(v));
        case VT::error:
            return std::string(v.s);
        }
        return "?";
    }

    bool equal(const Value& a, const Value& b) {
        ++steps_;
        if (is_num(a) && is_num(b)) {
            auto r = cmp_num(a, b);
            return r && *r == 0;
        }
        if (a.t != b.t) return false;
        switch (a.t) {
        case VT::null:
            return true;
        case VT::boolean:
            return a.b == b.b;
        case VT::str:
            charge(a.s.size());
            return a.s == b.s;
        case VT::list: {
            const std::size_t n = list_len(a);
            if (n != list_len(b)) return false;
            for (std::size_t k = 0; k < n; ++k)
                if (!equal(list_at(a, k), list_at(b, k))) return false;
            return true;
        }
        case VT::map: {
            const std::size_t n = map_len(a);
            if (n != map_len(b)) return false;
            for (std::size_t k = 0; k < n; ++k) {
                auto other = find(b, map_key_at(a, k));
                if (!other || !equal(map_value_at(a, k), *other)) return false;
            }
            return true;
        }
        default:
            return false;
        }
    }

    // The value under `key`, if present. JSON objects and property maps have string keys only.
    std::optional<Value> find(const Value& m, const Value& key) {
        switch (m.back) {
        case Back::node: {
            if (key.t != VT::str) return std::nullopt;
            const auto& f = m.node->fields;
            charge(f.size());
            for (const auto& e : f)
                if (e.key == key.s) return from_node(e.value);
            return std::nullopt;
        }
        case Back::prop:
            if (key.t != VT::str) return std::nullopt;
            if (key.s == "type") return v_str(m.prop->type);
            if (key.s == "value") return from_node(m.prop->value);
            return std::nullopt;
        case Back::owned:
            charge(m.own->entries.size());
            for (const auto& [k, v] : m.own->entries) {
                if (k.t == key.t || (is_num(k) && is_num(key))) {
                    if (equal(k, key)) return v;
                }
            }
            return std::nullopt;
        default:
            return std::nullopt;
        }
    }

    Value eval(std::uint32_t id) {
        if (exhausted_ || ++steps_ > max_steps) {
            exhausted_ = true;
            return v_err("step limit");
        }
        if (folded_ && (*folded_)[id]) return *(*folded_)[id];
        const Expr& e = ex_[id];
        switch (e.op) {
        case Op::lit:
            switch (e.lit) {
            case LitKind::null:
                return Value{};
            case LitKind::boolean:
                return v_bool(e.b);
            case LitKind::int_:
                return v_int(e.i);
            case LitKind::uint_:
                return v_uint(e.u);
            case LitKind::dbl:
                return v_dbl(e.d);
            case LitKind::str:
                return v_str(e.text);
            }
            break;
        case Op::ident: {
            if (e.slot >= 0) return vars_[static_cast<std::size_t>(e.slot)];
            Value v;
            v.t = VT::list;
            v.back = Back::props;
            v.props = &props_;
            return v;
        }
        case Op::select:
        case Op::has: {
            Value m = eval(e.kids[0]);
            if (m.t == VT::error) return m;
            if (m.t != VT::map)
                return v_err("field selection '." + shorten(e.text) + "' on " + show(m) + " (a " +
                             vt_name(m.t) + ")");
            auto v = find(m, v_str(e.text));
            if (e.op == Op::has) return v_bool(v.has_value());
            if (!v) return v_err("no such key: " + shorten(e.text));
            return *v;
        }
        case Op::index: {
            Value c = eval(e.kids[0]);
            if (c.t == VT::error) return c;
            Value k = eval(e.kids[1]);
            if (k.t == VT::error) return k;
            if (c.t == VT::list) {
                std::int64_t idx = 0;
                if (k.t == VT::int_)
                    idx = k.i;
                else if (k.t == VT::uint_ && k.u <= static_cast<std::uint64_t>(
                                                        std::numeric_limits<std::int64_t>::max()))
                    idx = static_cast<std::int64_t>(k.u);
                else if (k.t == VT::dbl && std::trunc(k.d) == k.d && std::fabs(k.d) < 9.0e18)
                    idx = static_cast<std::int64_t>(k.d);
                else if (k.t == VT::uint_ || k.t == VT::dbl)
                    return v_err("invalid list index " + show(k));
                else
                    return no_overload("[]", c, k);
                if (idx < 0 || static_cast<std::uint64_t>(idx) >= list_len(c))
                    return v_err("index out of range: " + std::to_string(idx));
                return list_at(c, static_cast<std::size_t>(idx));
            }
            if (c.t == VT::map) {
                auto v = find(c, k);
                if (!v) return v_err("no such key: " + show(k));
                return *v;
            }
            return no_overload("[]", c, k);
        }
        case Op::list: {
            auto o = std::make_shared<Owned>();
            o->items.reserve(e.kids.size());
            for (auto k : e.kids) {
                Value v = eval(k);
                if (v.t == VT::error) return v;
                o->items.push_back(std::move(v));
            }
            return v_owned(VT::list, std::move(o));
        }
        case Op::map: {
            auto o = std::make_shared<Owned>();
            for (std::size_t k = 0; k + 1 < e.kids.size(); k += 2) {
                Value key = eval(e.kids[k]);
                if (key.t == VT::error) return key;
                Value val = eval(e.kids[k + 1]);
                if (val.t == VT::error) return val;
                if (key.t != VT::str && key.t != VT::int_ && key.t != VT::uint_ &&
                    key.t != VT::boolean)
                    return v_err(std::string("unsupported map key type: ") + vt_name(key.t));
                if (find(v_owned(VT::map, o), key)) return v_err("duplicate map key: " + show(key));
                o->entries.emplace_back(std::move(key), std::move(val));
            }
            return v_owned(VT::map, std::move(o));
        }
        case Op::not_: {
            Value v = eval(e.kids[0]);
            if (v.t == VT::boolean) return v_bool(!v.b);
            if (v.t == VT::error) return v;
            return no_overload("!", v);
        }
        case Op::neg: {
            Value v = eval(e.kids[0]);
            if (v.t == VT::int_) {
                if (v.i == std::numeric_limits<std::int64_t>::min())
                    return v_err("integer overflow");
                return v_int(-v.i);
            }
            if (v.t == VT::dbl) return v_dbl(-v.d);
            if (v.t == VT::error) return v;
            return no_overload("-", v);
        }
        case Op::and_:
        case Op::or_: {
            // Commutative: the deciding value (false for &&, true for ||) wins over errors.
            const bool decides = e.op == Op::or_;
            Value err;
            bool have_err = false;
            for (auto k : e.kids) {
                Value v = eval(k);
                if (v.t == VT::boolean) {
                    if (v.b == decides) return v;
                } else if (!have_err) {
                    err = v.t == VT::error ? v : no_overload(op_text(e.op), v);
                    have_err = true;
                }
            }
            return have_err ? err : v_bool(!decides);
        }
        case Op::cond: {
            Value c = eval(e.kids[0]);
            if (c.t == VT::boolean) return eval(e.kids[c.b ? 1 : 2]);
            if (c.t == VT::error) return c;
            return v_err(std::string("the condition of '? :' is a ") + vt_name(c.t));
        }
        case Op::eq:
        case Op::ne: {
            Value a = eval(e.kids[0]);
            if (a.t == VT::error) return a;
            Value b = eval(e.kids[1]);
            if (b.t == VT::error) return b;
            return v_bool(equal(a, b) == (e.op == Op::eq));
        }
        case Op::lt:
        case Op::le:
        case Op::gt:
        case Op::ge: {
            Value a = eval(e.kids[0]);
            if (a.t == VT::error) return a;
            Value b = eval(e.kids[1]);
            if (b.t == VT::error) return b;
            int c = 0;
            if (is_num(a) && is_num(b)) {
                auto r = cmp_num(a, b);
                if (!r) return v_err("NaN values cannot be ordered");
                c = *r;
            } else if (a.t == VT::str && b.t == VT::str) {
                charge(std::min(a.s.size(), b.s.size()));
                c = a.s.compare(b.s);
                c = c < 0 ? -1 : c > 0 ? 1 : 0;
            } else if (a.t == VT::boolean && b.t == VT::boolean) {
                c = a.b == b.b ? 0 : a.b ? 1 : -1;
            } else {
                return no_overload(op_text(e.op), a, b);
            }
            switch (e.op) {
            case Op::lt:
                return v_bool(c < 0);
            case Op::le:
                return v_bool(c <= 0);
            case Op::gt:
                return v_bool(c > 0);
            default:
                return v_bool(c >= 0);
            }
        }
        case Op::in: {
            Value a = eval(e.kids[0]);
            if (a.t == VT::error) return a;
            Value b = eval(e.kids[1]);
            if (b.t == VT::error) return b;
            if (b.t == VT::list) {
                const std::size_t n = list_len(b);
                for (std::size_t k = 0; k < n; ++k)
                    if (equal(a, list_at(b, k))) return v_bool(true);
                return v_bool(false);
            }
            if (b.t == VT::map) return v_bool(find(b, a).has_value());
            return no_overload("in", a, b);
        }
        case Op::add:
        case Op::sub:
        case Op::mul:
        case Op::div:
        case Op::mod:
            return arithmetic(e);
        case Op::all:
        case Op::exists:
        case Op::exists_one:
            return comprehension(e);
        case Op::size: {
            Value v = eval(e.kids[0]);
            if (v.t == VT::error) return v;
            if (v.t == VT::str) {
                charge(v.s.size());
                return v_int(static_cast<std::int64_t>(count_code_points(v.s)));
            }
            if (v.t == VT::list) return v_int(static_cast<std::int64_t>(list_len(v)));
            if (v.t == VT::map) return v_int(static_cast<std::int64_t>(map_len(v)));
            return no_overload("size", v);
        }
        case Op::starts_with:
        case Op::ends_with:
        case Op::contains: {
            Value a = eval(e.kids[0]);
            if (a.t == VT::error) return a;
            Value b = eval(e.kids[1]);
            if (b.t == VT::error) return b;
            if (a.t != VT::str || b.t != VT::str) return no_overload(op_text(e.op), a, b);
            charge(a.s.size() + b.s.size());
            if (e.op == Op::starts_with) return v_bool(a.s.substr(0, b.s.size()) == b.s);
            if (e.op == Op::ends_with)
                return v_bool(a.s.size() >= b.s.size() &&
                              a.s.substr(a.s.size() - b.s.size()) == b.s);
            if (b.s.size() > 64) charge(a.s.size() * (b.s.size() / 64)); // worst case of find
            return v_bool(a.s.find(b.s) != std::string_view::npos);
        }
        case Op::semver_compare: {
            Value a = eval(e.kids[0]);
            if (a.t == VT::error) return a;
            Value b = eval(e.kids[1]);
            if (b.t == VT::error) return b;
            std::optional<semver::Version> va = as_semver(a), vb = as_semver(b);
            if (!va) return v_err("unable to parse " + show(a) + " to semver format");
            if (!vb) return v_err("unable to parse " + show(b) + " to semver format");
            const int c = semver::compare(*va, *vb);
            return v_int(c < 0 ? -1 : c > 0 ? 1 : 0);
        }
        }
        return v_err("internal error: unhandled expression");
    }

    // semver_compare's reading of a value: fmt.Sprint of it, then blang's ParseTolerant.
    static std::optional<semver::Version> as_semver(const Value& v) {
        std::string text;
        switch (v.t) {
        case VT::str:
            text = std::string(v.s);
            break;
        case VT::int_:
            text = std::to_string(v.i);
            break;
        case VT::uint_:
            text = std::to_string(v.u);
            break;
        case VT::dbl:
            text = go_format_float(v.d);
            break;
        default:
            return std::nullopt; // Go prints these as true, <nil>, [..], map[..]: no version
        }
        auto r = semver::Version::parse_tolerant(text);
        if (!r) return std::nullopt;
        return std::move(r).take();
    }

    Value arithmetic(const Expr& e) {
        Value a = eval(e.kids[0]);
        if (a.t == VT::error) return a;
        Value b = eval(e.kids[1]);
        if (b.t == VT::error) return b;
        const char* op = op_text(e.op);
        if (a.t != b.t) return no_overload(op, a, b);
        switch (a.t) {
        case VT::int_: {
            std::int64_t r = 0;
            switch (e.op) {
            case Op::add:
                if (__builtin_add_overflow(a.i, b.i, &r)) return v_err("integer overflow");
                return v_int(r);
            case Op::sub:
                if (__builtin_sub_overflow(a.i, b.i, &r)) return v_err("integer overflow");
                return v_int(r);
            case Op::mul:
                if (__builtin_mul_overflow(a.i, b.i, &r)) return v_err("integer overflow");
                return v_int(r);
            case Op::div:
            case Op::mod:
                if (b.i == 0)
                    return v_err(e.op == Op::div ? "division by zero" : "modulus by zero");
                if (a.i == std::numeric_limits<std::int64_t>::min() && b.i == -1)
                    return v_err("integer overflow");
                return v_int(e.op == Op::div ? a.i / b.i : a.i % b.i);
            default:
                break;
            }
            break;
        }
        case VT::uint_: {
            std::uint64_t r = 0;
            switch (e.op) {
            case Op::add:
                if (__builtin_add_overflow(a.u, b.u, &r)) return v_err("unsigned integer overflow");
                return v_uint(r);
            case Op::sub:
                if (__builtin_sub_overflow(a.u, b.u, &r)) return v_err("unsigned integer overflow");
                return v_uint(r);
            case Op::mul:
                if (__builtin_mul_overflow(a.u, b.u, &r)) return v_err("unsigned integer overflow");
                return v_uint(r);
            case Op::div:
            case Op::mod:
                if (b.u == 0)
                    return v_err(e.op == Op::div ? "division by zero" : "modulus by zero");
                return v_uint(e.op == Op::div ? a.u / b.u : a.u % b.u);
            default:
                break;
            }
            break;
        }
        case VT::dbl:
            switch (e.op) {
            case Op::add:
                return v_dbl(a.d + b.d);
            case Op::sub:
                return v_dbl(a.d - b.d);
            case Op::mul:
                return v_dbl(a.d * b.d);
            case Op::div:
                return v_dbl(a.d / b.d);
            default:
                break;
            }
            break;
        case VT::str:
            if (e.op != Op::add) break;
            charge(a.s.size() + b.s.size());
            return v_text(VT::str, std::string(a.s) + std::string(b.s));
        case VT::list: {
            if (e.op != Op::add) break;
            auto o = std::make_shared<Owned>();
            const std::size_t na = list_len(a), nb = list_len(b);
            charge((na + nb) * 8);
            o->items.reserve(na + nb);
            for (std::size_t k = 0; k < na; ++k)
                o->items.push_back(list_at(a, k));
            for (std::size_t k = 0; k < nb; ++k)
                o->items.push_back(list_at(b, k));
            return v_owned(VT::list, std::move(o));
        }
        default:
            break;
        }
        return no_overload(op, a, b);
    }

    Value comprehension(const Expr& e) {
        Value range = eval(e.kids[0]);
        if (range.t == VT::error) return range;
        if (range.t != VT::list && range.t != VT::map)
            return v_err(std::string(op_text(e.op)) + "() over " + show(range) + " (a " +
                         vt_name(range.t) + ")");
        const bool is_list = range.t == VT::list;
        const std::size_t n = is_list ? list_len(range) : map_len(range);
        Value& var = vars_[static_cast<std::size_t>(e.slot)];
        Value err;
        bool have_err = false;
        std::size_t count = 0;
        for (std::size_t k = 0; k < n; ++k) {
            if (exhausted_) return v_err("step limit");
            var = is_list ? list_at(range, k) : map_key_at(range, k);
            Value p = eval(e.kids[1]);
            if (p.t != VT::boolean) {
                Value why = p.t == VT::error ? p : no_overload(op_text(e.op), p);
                if (e.op == Op::exists_one) return why; // exists_one propagates every error
                if (!have_err) {
                    err = why;
                    have_err = true;
                }
                continue;
            }
            if (e.op == Op::all && !p.b) return v_bool(false);
            if (e.op == Op::exists && p.b) return v_bool(true);
            if (e.op == Op::exists_one && p.b) ++count;
        }
        if (e.op == Op::exists_one) return v_bool(count == 1);
        if (have_err) return err;
        return v_bool(e.op == Op::all);
    }

    const std::vector<Expr>& ex_;
    const std::vector<Property>& props_;
    std::vector<Value> vars_;
    const Folded* folded_;
    std::uint64_t steps_ = 0;
    bool exhausted_ = false;
};

// The first invalid UTF-8 byte of s, if any.
std::optional<std::size_t> invalid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_len(s, i);
        if (n == 0) return i;
        i += n;
    }
    return std::nullopt;
}

} // namespace

struct Program::Impl {
    std::vector<Expr> exprs;
    std::uint32_t root = 0;
    std::size_t slots = 0;
    Folded folded;

    // Computes the largest subtrees that read no variable (a list or map literal compared with
    // each property, say) once, instead of for every bundle. Children precede their parents in
    // `exprs`, so one pass in index order finds them. A subtree that would exceed the step limit
    // is left to run time, where it fails the same way.
    void fold_constants() {
        std::vector<char> constant(exprs.size(), 0);
        for (std::size_t i = 0; i < exprs.size(); ++i) {
            bool c = exprs[i].op != Op::ident;
            for (auto k : exprs[i].kids)
                c = c && constant[k];
            constant[i] = c;
        }
        folded.assign(exprs.size(), std::nullopt);
        static const std::vector<Property> none;
        std::vector<std::uint32_t> todo = {root};
        while (!todo.empty()) {
            const std::uint32_t id = todo.back();
            todo.pop_back();
            if (constant[id] && exprs[id].op != Op::lit) {
                Evaluator ev(exprs, none, slots, nullptr);
                if (auto v = ev.fold(id)) {
                    folded[id] = std::move(*v);
                    continue;
                }
            }
            for (auto k : exprs[id].kids)
                todo.push_back(k);
        }
    }
};

Program::Program(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Program::~Program() = default;

Result<std::shared_ptr<const Program>> Program::compile(std::string_view rule) {
    auto impl = std::make_unique<Impl>();
    const std::string_view src = rule;
    try {
        if (auto bad = invalid_utf8(src))
            fail_at(static_cast<std::uint32_t>(*bad), "the rule is not valid UTF-8");
        const std::size_t chars = count_code_points(src);
        if (chars > max_rule_chars)
            return fail(Error::invalid("the CEL rule is " + std::to_string(chars) +
                                       " characters long; the limit is " +
                                       std::to_string(max_rule_chars) + " (as in cel-go)"));
        std::vector<Token> toks = Lexer(src).run();
        Parser parser(std::move(toks), impl->exprs);
        impl->root = parser.parse_rule();
        Checker checker(impl->exprs);
        const TypeP t = checker.check(impl->root);
        if (!is(t, Type::K::boolean))
            fail_at(0, "the rule is of type " + type_name(t) +
                           "; an olm.constraint rule must be of type bool");
        impl->slots = checker.slots();
        impl->fold_constants();
    } catch (const CompileError& e) {
        Error err = Error::invalid(location(src, e.pos) + ": " + e.message);
        auto [line, caret] = excerpt(src, e.pos);
        err.note("  " + line);
        err.note("  " + caret);
        return fail(std::move(err));
    }
    return std::shared_ptr<const Program>(std::make_shared<Program>(std::move(impl)));
}

Outcome Program::evaluate(const std::vector<Property>& properties) const {
    Evaluator ev(impl_->exprs, properties, impl_->slots, &impl_->folded);
    return ev.run(impl_->root);
}

} // namespace kpkg::cel
