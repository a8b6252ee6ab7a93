// io/go: gopkg.in/yaml.v2's scalar typing, key order and emitter (see kpkg/io/go.hpp).
//
// The emitter re-implements the parts of yaml.v2's (a port of libyaml's) that its Marshal of JSON
// data reaches: block mappings and sequences, empty flow collections, and scalars in the style
// yaml.v2 picks for them (plain, single- or double-quoted, literal), folded at 80 columns.
#include "kpkg/io/go.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kpkg/io/scalars.hpp" // detail::utf8_decode

namespace kpkg::io::go {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

int days_in_month(int month, int year) {
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0))) return 29;
    return days[month - 1];
}

} // namespace

// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`, yaml.v2's float syntax.
bool is_float_syntax(std::string_view s) {
    std::size_t i = 0, n = s.size();
    auto digits = [&] {
        const std::size_t start = i;
        while (i < n && is_digit(s[i]))
            ++i;
        return i > start;
    };
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (i < n && s[i] == '.') {
        ++i;
        if (!digits()) return false;
    } else {
        if (!digits()) return false;
        if (i < n && s[i] == '.') {
            ++i;
            digits();
        }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
        if (!digits()) return false;
    }
    return i == n;
}

// Go's time.Parse with one of "2006-1-2T15:4:5.999999999Z07:00" (also with "t"),
// "2006-1-2 15:4:5.999999999", "2006-1-2".
bool is_timestamp(std::string_view s) {
    std::size_t i = 0;
    const std::size_t n = s.size();
    auto num = [&](int& out) { // one or two digits, as Go's getnum(…, false)
        if (i >= n || !is_digit(s[i])) return false;
        out = s[i++] - '0';
        if (i < n && is_digit(s[i])) out = out * 10 + (s[i++] - '0');
        return true;
    };
    if (n < 5) return false;
    for (; i < 4; ++i)
        if (!is_digit(s[i])) return false;
    if (s[4] != '-') return false;
    const int year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    i = 5;
    int month = 0, day = 0;
    if (!num(month) || i >= n || s[i] != '-') return false;
    ++i;
    if (!num(day)) return false;
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(month, year)) return false;
    if (i == n) return true;
    const char sep = s[i++];
    if (sep != 'T' && sep != 't' && sep != ' ') return false;
    int hour = 0, minute = 0, second = 0;
    if (!num(hour) || i >= n || s[i] != ':') return false;
    ++i;
    if (!num(minute) || i >= n || s[i] != ':') return false;
    ++i;
    if (!num(second)) return false;
    if (hour >= 24 || minute >= 60 || second >= 60) return false;
    if (i + 1 < n && (s[i] == '.' || s[i] == ',') && is_digit(s[i + 1])) {
        ++i;
        while (i < n && is_digit(s[i]))
            ++i;
    }
    if (sep == ' ') return i == n;
    if (i < n && s[i] == 'Z') return i + 1 == n;
    if (n - i != 6 || (s[i] != '+' && s[i] != '-') || s[i + 3] != ':') return false;
    if (!is_digit(s[i + 1]) || !is_digit(s[i + 2]) || !is_digit(s[i + 4]) || !is_digit(s[i + 5]))
        return false;
    const int hh = (s[i + 1] - '0') * 10 + (s[i + 2] - '0');
    const int mm = (s[i + 4] - '0') * 10 + (s[i + 5] - '0');
    return hh <= 24 && mm <= 60;
}

namespace {

// yaml.v2's words for booleans, null and the special floats: whether `in` is one (`r` set).
bool resolve_word(std::string_view in, Scalar& r) {
    static const std::string_view trues[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                             "True", "TRUE", "on",  "On",  "ON"};
    static const std::string_view falses[] = {"n",     "N",     "no",  "No",  "NO", "false",
                                              "False", "FALSE", "off", "Off", "OFF"};
    static const std::string_view nulls[] = {"", "~", "null", "Null", "NULL"};
    for (auto w : trues)
        if (in == w) {
            r.type = Type::boolean;
            r.b = true;
            return true;
        }
    for (auto w : falses)
        if (in == w) {
            r.type = Type::boolean;
            return true;
        }
    for (auto w : nulls)
        if (in == w) {
            r.type = Type::null;
            return true;
        }
    static const std::string_view nans[] = {".nan", ".NaN", ".NAN"};
    static const std::string_view infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"};
    static const std::string_view ninfs[] = {"-.inf", "-.Inf", "-.INF"};
    for (auto w : nans)
        if (in == w) {
            r.type = Type::float64;
            r.f = std::nan("");
            return true;
        }
    for (auto w : infs)
        if (in == w) {
            r.type = Type::float64;
            r.f = HUGE_VAL;
            return true;
        }
    for (auto w : ninfs)
        if (in == w) {
            r.type = Type::float64;
            r.f = -HUGE_VAL;
            return true;
        }
    return false;
}

} // namespace

// yaml.v2's resolve() for an untagged plain scalar.
Scalar resolve(std::string_view in) {
    Scalar r;
    char hint = 0;
    if (in.empty()) {
        hint = 'N';
    } else {
        const char c = in[0];
        if (c == '+' || c == '-')
            hint = 'S';
        else if (is_digit(c))
            hint = 'D';
        else if (std::strchr("yYnNtTfFoO~", c) != nullptr)
            hint = 'M';
        else if (c == '.')
            hint = '.';
    }
    if (hint == 0) return r;
    // The words are at most 5 bytes long: a longer scalar is none of them.
    if (in.size() <= 5 && resolve_word(in, r)) return r;
    if (hint == 'M') return r;
    if (hint == '.') {
        if (is_float_syntax(in)) {
            if (auto f = parse_float(in)) {
                r.type = Type::float64;
                r.f = *f;
            }
        }
        return r;
    }
    if (is_timestamp(in)) {
        r.type = Type::timestamp;
        return r;
    }
    std::string plain;
    plain.reserve(in.size());
    for (char c : in)
        if (c != '_') plain += c;
    if (auto i = parse_int(plain, true)) {
        r.type = Type::int64;
        r.i = *i;
        return r;
    }
    if (plain[0] != '+' && plain[0] != '-') {
        if (auto u = parse_uint(plain)) {
            r.type = Type::uint64;
            r.u = *u;
            return r;
        }
    }
    if (is_float_syntax(plain)) {
        if (auto f = parse_float(plain)) {
            r.type = Type::float64;
            r.f = *f;
        }
    }
    return r;
}

// The Go value a scalar node holds once opm has it: plain YAML scalars typed by yaml.v2, JSON
// and tagged scalars by their kind.
Scalar scalar_of(const Node& n) {
    if (n.plain) return resolve(n.text);
    Scalar r;
    switch (n.kind) {
    case Kind::null:
        r.type = Type::null;
        return r;
    case Kind::boolean:
        r.type = Type::boolean;
        r.b = n.as_bool().value_or(false);
        return r;
    case Kind::integer:
    case Kind::floating:
        if (auto i = parse_int(n.text, false)) {
            r.type = Type::int64;
            r.i = *i;
            return r;
        }
        if (is_float_syntax(n.text)) {
            if (auto f = parse_float(n.text)) {
                r.type = Type::float64;
                r.f = *f;
                return r;
            }
        }
        return resolve(n.text); // a YAML-only literal behind an explicit tag
    default:
        return r;
    }
}

// ------------------------------------------------------------------------------------------------
// Key order

namespace {

bool is_letter_rune(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    return c >= 0xAA; // non-ASCII keys: treat letters broadly (Go's unicode.IsLetter)
}

bool is_digit_rune(char32_t c) {
    return c >= '0' && c <= '9';
}

std::u32string runes(std::string_view s) {
    std::u32string r;
    r.reserve(s.size());
    const char* p = s.data();
    const char* const end = p + s.size();
    while (p < end) {
        char32_t cp = 0;
        std::size_t n = detail::utf8_decode(p, end, cp);
        if (n == 0) {
            cp = 0xFFFD;
            n = 1;
        }
        r += cp;
        p += n;
    }
    return r;
}

bool key_less_runes(std::string_view as, std::string_view bs) {
    const std::u32string a = runes(as), b = runes(bs);
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
        if (a[i] == b[i]) continue;
        const bool al = is_letter_rune(a[i]), bl = is_letter_rune(b[i]);
        if (al && bl) return a[i] < b[i];
        if (al || bl) return bl;
        std::int64_t an = 0, bn = 0;
        if (a[i] == '0' || b[i] == '0') {
            for (std::size_t j = i; j-- > 0 && is_digit_rune(a[j]);) {
                if (a[j] != '0') {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        std::size_t ai = i, bi = i;
        for (; ai < a.size() && is_digit_rune(a[ai]); ++ai)
            an = static_cast<std::int64_t>(static_cast<std::uint64_t>(an) * 10 + (a[ai] - '0'));
        for (; bi < b.size() && is_digit_rune(b[bi]); ++bi)
            bn = static_cast<std::int64_t>(static_cast<std::uint64_t>(bn) * 10 + (b[bi] - '0'));
        if (an != bn) return an < bn;
        if (ai != bi) return ai < bi;
        return a[i] < b[i];
    }
    return a.size() < b.size();
}

} // namespace

// Keys without digits in plain ASCII compare without decoding runes.
bool key_less(std::string_view a, std::string_view b) {
    bool simple = true;
    for (const char c : a)
        if (static_cast<unsigned char>(c) >= 0x80 || is_digit(c)) {
            simple = false;
            break;
        }
    if (simple)
        for (const char c : b)
            if (static_cast<unsigned char>(c) >= 0x80 || is_digit(c)) {
                simple = false;
                break;
            }
    if (!simple) return key_less_runes(a, b);
    auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (a[i] == b[i]) continue;
        const bool al = letter(a[i]), bl = letter(b[i]);
        if (al != bl) return bl;
        return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
    }
    return a.size() < b.size();
}

// ------------------------------------------------------------------------------------------------
// The emitter

namespace {

// strconv.FormatFloat(v, 'g', -1, 64) with yaml.v2's spellings of the non-finite values.
void append_yaml_float(std::string& out, double v) {
    if (std::isnan(v))
        out += ".nan";
    else if (std::isinf(v))
        out += v > 0 ? ".inf" : "-.inf";
    else
        append_float_g(out, v, 64);
}

bool is_base60_float(std::string_view s) {
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    std::size_t i = 0, n = s.size();
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= n || !is_digit(s[i])) return false;
    ++i;
    while (i < n && (is_digit(s[i]) || s[i] == '_'))
        ++i;
    int groups = 0;
    while (i < n && s[i] == ':') {
        ++i;
        if (i + 1 < n && s[i] >= '0' && s[i] <= '5' && is_digit(s[i + 1]))
            i += 2;
        else if (i < n && is_digit(s[i]))
            ++i;
        else
            return false;
        ++groups;
    }
    if (groups == 0) return false;
    if (i < n && s[i] == '.') {
        ++i;
        while (i < n && (is_digit(s[i]) || s[i] == '_'))
            ++i;
    }
    return i == n;
}

// yaml.v2 reads the JSON document as YAML, where a raw NEL (U+0085, which Go's JSON encoder
// leaves unescaped) inside a double-quoted scalar is a line break and gets folded: spaces
// around it go, a lone break becomes a space, further breaks become newlines.
std::string fold_nel(std::string_view s) {
    if (s.find("\xC2\x85") == std::string_view::npos) return std::string(s);
    std::string out;
    out.reserve(s.size());
    auto is_nel = [&](std::size_t i) {
        return i + 1 < s.size() && static_cast<unsigned char>(s[i]) == 0xC2 &&
               static_cast<unsigned char>(s[i + 1]) == 0x85;
    };
    for (std::size_t i = 0; i < s.size();) {
        std::size_t j = i;
        while (j < s.size() && s[j] == ' ')
            ++j;
        if (!is_nel(j)) {
            out.append(s.substr(i, j - i + (j < s.size() ? 1 : 0)));
            i = j + 1;
            continue;
        }
        std::size_t breaks = 0;
        j += 2;
        for (;;) {
            while (j < s.size() && s[j] == ' ')
                ++j;
            if (!is_nel(j)) break;
            ++breaks;
            j += 2;
        }
        if (breaks == 0)
            out += ' ';
        else
            out.append(breaks, '\n');
        i = j;
    }
    return out;
}

enum class Style { plain, single, dbl, literal };

std::size_t width_of(unsigned char c) {
    if ((c & 0x80) == 0) return 1;
    if ((c & 0xE0) == 0xC0) return 2;
    if ((c & 0xF0) == 0xE0) return 3;
    if ((c & 0xF8) == 0xF0) return 4;
    return 1;
}

// A re-implementation of the parts of yaml.v2's emitter (a port of libyaml's) that its Marshal
// of JSON data reaches: block mappings and sequences, empty flow collections, scalars.
class V2Emitter {
public:
    explicit V2Emitter(std::string& out) : out_(out) {}

    void document(const Node& root) {
        node(root, true, false, false, false);
        write_indent();
        if (open_ended_) {
            write_indicator("...", true, false, false);
            write_indent();
        }
    }

private:
    struct Analysis {
        bool multiline = false;
        bool flow_plain_allowed = false;
        bool block_plain_allowed = true;
        bool single_quoted_allowed = true;
        bool block_allowed = false;
    };

    void put(char c) {
        out_ += c;
        ++column_;
    }
    void put_break() {
        out_ += '\n';
        column_ = 0;
    }
    void write(std::string_view v, std::size_t& i) {
        const std::size_t w = std::min(width_of(static_cast<unsigned char>(v[i])), v.size() - i);
        out_.append(v.data() + i, w);
        ++column_;
        i += w;
    }
    void write_all(std::string_view v) {
        for (std::size_t i = 0; i < v.size();)
            write(v, i);
    }
    static bool is_break(std::string_view v, std::size_t i) {
        const auto c = static_cast<unsigned char>(v[i]);
        if (c == '\r' || c == '\n') return true;
        if (c == 0xC2 && i + 1 < v.size() && static_cast<unsigned char>(v[i + 1]) == 0x85)
            return true;
        if (c == 0xE2 && i + 2 < v.size() && static_cast<unsigned char>(v[i + 1]) == 0x80) {
            const auto d = static_cast<unsigned char>(v[i + 2]);
            return d == 0xA8 || d == 0xA9;
        }
        return false;
    }
    static bool is_space(std::string_view v, std::size_t i) { return i < v.size() && v[i] == ' '; }
    static bool is_blankz(std::string_view v, std::size_t i) {
        return i >= v.size() || v[i] == ' ' || v[i] == '\t' || is_break(v, i);
    }
    static bool is_printable(std::string_view v, std::size_t i) {
        auto at = [&](std::size_t k) -> unsigned {
            return i + k < v.size() ? static_cast<unsigned char>(v[i + k]) : 0u;
        };
        const unsigned b = at(0);
        return b == 0x0A || (b >= 0x20 && b <= 0x7E) || (b == 0xC2 && at(1) >= 0xA0) ||
               (b > 0xC2 && b < 0xED) || (b == 0xED && at(1) < 0xA0) || b == 0xEE ||
               (b == 0xEF && !(at(1) == 0xBB && at(2) == 0xBF) &&
                !(at(1) == 0xBF && (at(2) == 0xBE || at(2) == 0xBF)));
    }

    void write_indent() {
        const int indent = indent_ < 0 ? 0 : indent_;
        if (!indention_ || column_ > indent || (column_ == indent && !whitespace_)) put_break();
        while (column_ < indent)
            put(' ');
        whitespace_ = true;
        indention_ = true;
    }

    void write_indicator(std::string_view ind, bool need_whitespace, bool is_whitespace,
                         bool is_indention) {
        if (need_whitespace && !whitespace_) put(' ');
        write_all(ind);
        whitespace_ = is_whitespace;
        indention_ = indention_ && is_indention;
        open_ended_ = false;
    }

    void increase_indent(bool flow, bool indentless) {
        indents_.push_back(indent_);
        if (indent_ < 0)
            indent_ = flow ? 2 : 0;
        else if (!indentless)
            indent_ += 2;
    }
    void pop_indent() {
        indent_ = indents_.back();
        indents_.pop_back();
    }

    // What yaml.v2's analyzer makes of the first character of a scalar: an indicator there
    // rules out the flow and/or block plain styles.
    static void first_char_indicators(char c, bool followed_by_ws, bool& flow_ind,
                                      bool& block_ind) {
        switch (c) {
        case '#':
        case ',':
        case '[':
        case ']':
        case '{':
        case '}':
        case '&':
        case '*':
        case '!':
        case '|':
        case '>':
        case '\'':
        case '"':
        case '%':
        case '@':
        case '`':
            flow_ind = block_ind = true;
            break;
        case '?':
        case ':':
            flow_ind = true;
            if (followed_by_ws) block_ind = true;
            break;
        case '-':
            if (followed_by_ws) flow_ind = block_ind = true;
            break;
        default:
            break;
        }
    }

    // analyze() for text of printable ASCII only (no breaks, no tabs, nothing special), the
    // common case, in one pass without decoding.
    static bool analyze_ascii(std::string_view v, Analysis& a) {
        bool block_ind = false, flow_ind = false;
        const std::size_t n = v.size();
        for (std::size_t i = 0; i < n; ++i) {
            const char c = v[i];
            if (c < 0x20 || c > 0x7E) return false;
            if (i == 0) continue;
            switch (c) {
            case ',':
            case '?':
            case '[':
            case ']':
            case '{':
            case '}':
                flow_ind = true;
                break;
            case ':':
                flow_ind = true;
                if (i + 1 == n || v[i + 1] == ' ') block_ind = true;
                break;
            case '#':
                if (v[i - 1] == ' ') flow_ind = block_ind = true;
                break;
            default:
                break;
            }
        }
        if (n >= 3 && (v.substr(0, 3) == "---" || v.substr(0, 3) == "...")) {
            block_ind = true;
            flow_ind = true;
        }
        first_char_indicators(v[0], n == 1 || v[1] == ' ', flow_ind, block_ind);
        const bool leading_space = v[0] == ' ', trailing_space = v[n - 1] == ' ';
        a.multiline = false;
        a.flow_plain_allowed = a.block_plain_allowed = a.single_quoted_allowed = a.block_allowed =
            true;
        if (leading_space || trailing_space) a.flow_plain_allowed = a.block_plain_allowed = false;
        if (trailing_space) a.block_allowed = false;
        if (flow_ind) a.flow_plain_allowed = false;
        if (block_ind) a.block_plain_allowed = false;
        return true;
    }

    static Analysis analyze(std::string_view v) {
        Analysis a;
        if (v.empty()) return a;
        if (analyze_ascii(v, a)) return a;
        a = Analysis{};
        bool block_ind = false, flow_ind = false, line_breaks = false, special = false;
        bool leading_space = false, leading_break = false, trailing_space = false,
             trailing_break = false, break_space = false, space_break = false;
        bool preceded_by_ws = true, followed_by_ws = false, prev_space = false, prev_break = false;
        if (v.size() >= 3 && (v.substr(0, 3) == "---" || v.substr(0, 3) == "...")) {
            block_ind = true;
            flow_ind = true;
        }
        for (std::size_t i = 0, w = 0; i < v.size(); i += w) {
            if (i > 0) {
                // A run of printable ASCII that is neither space nor an indicator changes nothing
                // but the "previous character" state.
                // Spaces and '\n' update the space/break state as below.
                std::size_t j = i;
                while (j < v.size()) {
                    const char c = v[j];
                    if (c == ' ') {
                        if (j + 1 == v.size()) trailing_space = true;
                        if (prev_break) break_space = true;
                        prev_space = true;
                        prev_break = false;
                        preceded_by_ws = true;
                    } else if (c == '\n') {
                        line_breaks = true;
                        if (j + 1 == v.size()) trailing_break = true;
                        if (prev_space) space_break = true;
                        prev_space = false;
                        prev_break = true;
                        preceded_by_ws = true;
                    } else if (c < 0x20 || c >= 0x7F || c == ',' || c == '?' || c == '[' ||
                               c == ']' || c == '{' || c == '}' || c == ':' || c == '#') {
                        break;
                    } else {
                        prev_space = prev_break = false;
                        preceded_by_ws = false;
                    }
                    ++j;
                }
                if (j > i) {
                    w = j - i;
                    continue;
                }
            }
            w = width_of(static_cast<unsigned char>(v[i]));
            followed_by_ws = i + w >= v.size() || is_blankz(v, i + w);
            const char c = v[i];
            if (i == 0) {
                first_char_indicators(c, followed_by_ws, flow_ind, block_ind);
            } else {
                switch (c) {
                case ',':
                case '?':
                case '[':
                case ']':
                case '{':
                case '}':
                    flow_ind = true;
                    break;
                case ':':
                    flow_ind = true;
                    if (followed_by_ws) block_ind = true;
                    break;
                case '#':
                    if (preceded_by_ws) flow_ind = block_ind = true;
                    break;
                default:
                    break;
                }
            }
            if (!is_printable(v, i)) special = true;
            if (is_space(v, i)) {
                if (i == 0) leading_space = true;
                if (i + w == v.size()) trailing_space = true;
                if (prev_break) break_space = true;
                prev_space = true;
                prev_break = false;
            } else if (is_break(v, i)) {
                line_breaks = true;
                if (i == 0) leading_break = true;
                if (i + w == v.size()) trailing_break = true;
                if (prev_space) space_break = true;
                prev_space = false;
                prev_break = true;
            } else {
                prev_space = prev_break = false;
            }
            preceded_by_ws = is_blankz(v, i);
        }
        a.multiline = line_breaks;
        a.flow_plain_allowed = a.block_plain_allowed = a.single_quoted_allowed = a.block_allowed =
            true;
        if (leading_space || leading_break || trailing_space || trailing_break)
            a.flow_plain_allowed = a.block_plain_allowed = false;
        if (trailing_space) a.block_allowed = false;
        if (break_space)
            a.flow_plain_allowed = a.block_plain_allowed = a.single_quoted_allowed = false;
        if (space_break || special)
            a.flow_plain_allowed = a.block_plain_allowed = a.single_quoted_allowed =
                a.block_allowed = false;
        if (line_breaks) a.flow_plain_allowed = a.block_plain_allowed = false;
        if (flow_ind) a.flow_plain_allowed = false;
        if (block_ind) a.block_plain_allowed = false;
        return a;
    }

    // The text and requested style of a scalar node, as yaml.v2's encoder chooses them.
    struct Styled {
        std::string_view text; // into the node, or into scratch_
        Style style;
    };

    // A string as yaml.v2 writes it: plain unless it would read back as another type, literal
    // when it has line breaks.
    Styled string_scalar(std::string_view s) {
        if (s.find("\xC2\x85") != std::string_view::npos) {
            scratch_ = fold_nel(s);
            s = scratch_;
        }
        const Type t = resolve(s).type;
        const bool can_plain = t == Type::string && !is_base60_float(s);
        if (s.find('\n') != std::string_view::npos) return {s, Style::literal};
        return {s, can_plain ? Style::plain : Style::dbl};
    }

    // The text and requested style of a scalar node, as yaml.v2's encoder chooses them. The text
    // stays valid until the next call.
    Styled scalar_text(const Node& n) {
        if (n.kind == Kind::string && !n.plain) return string_scalar(n.text);
        // The JSON text is read back by yaml.v2, which types a number literal by its own rules
        // (an integer beyond int64 stays an integer, as uint64).
        const bool number = n.kind == Kind::integer || n.kind == Kind::floating;
        const Scalar g = number ? resolve(n.text) : scalar_of(n);
        switch (g.type) {
        case Type::null:
            return {"null", Style::plain};
        case Type::boolean:
            return {g.b ? "true" : "false", Style::plain};
        case Type::int64:
            scratch_ = std::to_string(g.i);
            return {scratch_, Style::plain};
        case Type::uint64:
            scratch_ = std::to_string(g.u);
            return {scratch_, Style::plain};
        case Type::float64:
            scratch_.clear();
            append_yaml_float(scratch_, g.f);
            return {scratch_, Style::plain};
        default:
            return string_scalar(n.text);
        }
    }

    void node(const Node& n, bool root, bool sequence, bool mapping, bool simple_key) {
        root_ctx_ = root;
        mapping_ctx_ = mapping;
        simple_key_ctx_ = simple_key;
        (void)sequence;
        if (n.is_map()) {
            if (n.fields.empty()) {
                write_indicator("{", true, true, false);
                increase_indent(true, false);
                pop_indent();
                write_indicator("}", false, false, false);
                return;
            }
            // One entry list per depth, reused (deeper levels may grow entries_, so the list is
            // looked up by index each time).
            const std::size_t d = depth_++;
            if (entries_.size() <= d) entries_.resize(d + 1);
            entries_[d].clear();
            for (const auto& e : n.fields)
                entries_[d].push_back(&e);
            std::sort(
                entries_[d].begin(), entries_[d].end(),
                [](const MapEntry* a, const MapEntry* b) { return key_less(a->key, b->key); });
            increase_indent(false, false);
            for (std::size_t k = 0; k < entries_[d].size(); ++k) {
                const MapEntry* e = entries_[d][k];
                write_indent();
                const Styled key = string_scalar(e->key);
                const Analysis ka = analyze(key.text);
                const bool simple = !ka.multiline && key.text.size() <= 128;
                if (simple) {
                    root_ctx_ = false;
                    mapping_ctx_ = true;
                    simple_key_ctx_ = true;
                    scalar(key.text, key.style, &ka);
                    write_indicator(":", false, false, false);
                } else {
                    write_indicator("?", true, false, true);
                    root_ctx_ = false;
                    mapping_ctx_ = true;
                    simple_key_ctx_ = false;
                    scalar(key.text, key.style, &ka);
                    write_indent();
                    write_indicator(":", true, false, true);
                }
                node(e->value, false, false, true, false);
            }
            --depth_;
            pop_indent();
            return;
        }
        if (n.is_seq()) {
            if (n.items.empty()) {
                write_indicator("[", true, true, false);
                increase_indent(true, false);
                pop_indent();
                write_indicator("]", false, false, false);
                return;
            }
            increase_indent(false, mapping_ctx_ && !indention_);
            for (const Node& item : n.items) {
                write_indent();
                write_indicator("-", true, false, true);
                node(item, false, true, false, false);
            }
            pop_indent();
            return;
        }
        const Styled sc = scalar_text(n);
        scalar(sc.text, sc.style);
    }

    void scalar(std::string_view v, Style style, const Analysis* known = nullptr) {
        const Analysis a = known != nullptr ? *known : analyze(v);
        if (simple_key_ctx_ && a.multiline) style = Style::dbl;
        if (style == Style::plain) {
            if (!a.block_plain_allowed) style = Style::single;
            if (v.empty() && simple_key_ctx_) style = Style::single;
        }
        if (style == Style::single && !a.single_quoted_allowed) style = Style::dbl;
        if (style == Style::literal && (!a.block_allowed || simple_key_ctx_)) style = Style::dbl;
        increase_indent(true, false);
        const bool breaks_ok = !simple_key_ctx_;
        switch (style) {
        case Style::plain:
            write_plain(v, breaks_ok);
            break;
        case Style::single:
            write_single(v, breaks_ok);
            break;
        case Style::dbl:
            write_double(v, breaks_ok);
            break;
        case Style::literal:
            write_literal(v);
            break;
        }
        pop_indent();
    }

    void write_plain(std::string_view v, bool allow_breaks) {
        if (!whitespace_) put(' ');
        bool spaces = false, breaks = false;
        for (std::size_t i = 0; i < v.size();) {
            if (is_space(v, i)) {
                if (allow_breaks && !spaces && column_ > kBestWidth && !is_space(v, i + 1)) {
                    write_indent();
                    ++i;
                } else {
                    write(v, i);
                }
                spaces = true;
            } else if (is_break(v, i)) {
                if (!breaks && v[i] == '\n') put_break();
                write_break(v, i);
                indention_ = true;
                breaks = true;
            } else {
                if (breaks) write_indent();
                write_run(v, i, '\0');
                indention_ = false;
                spaces = breaks = false;
            }
        }
        whitespace_ = false;
        indention_ = false;
        if (root_ctx_) open_ended_ = true;
    }

    // Writes the character at i and the ones after it up to a space, a possible line break or
    // `stop`, in one append (what a write() per character would write).
    void write_run(std::string_view v, std::size_t& i, char stop, bool stop_at_space = true) {
        std::size_t j = i;
        int chars = 0;
        while (j < v.size()) {
            const auto c = static_cast<unsigned char>(v[j]);
            if ((c == ' ' && stop_at_space) || c == '\n' || c == '\r' || c == 0xC2 || c == 0xE2 ||
                (stop != '\0' && c == static_cast<unsigned char>(stop)))
                break;
            if ((c & 0xC0) != 0x80) ++chars;
            ++j;
        }
        if (j == i) {
            write(v, i);
            return;
        }
        out_.append(v.data() + i, j - i);
        column_ += chars;
        i = j;
    }

    void write_break(std::string_view v, std::size_t& i) {
        if (v[i] == '\n') {
            put_break();
            ++i;
        } else {
            write(v, i);
            column_ = 0;
        }
    }

    void write_single(std::string_view v, bool allow_breaks) {
        write_indicator("'", true, false, false);
        bool spaces = false, breaks = false;
        for (std::size_t i = 0; i < v.size();) {
            if (is_space(v, i)) {
                if (allow_breaks && !spaces && column_ > kBestWidth && i > 0 && i < v.size() - 1 &&
                    !is_space(v, i + 1)) {
                    write_indent();
                    ++i;
                } else {
                    write(v, i);
                }
                spaces = true;
            } else if (is_break(v, i)) {
                if (!breaks && v[i] == '\n') put_break();
                write_break(v, i);
                indention_ = true;
                breaks = true;
            } else {
                if (breaks) write_indent();
                if (v[i] == '\'') {
                    put('\'');
                    write(v, i);
                } else {
                    write_run(v, i, '\'');
                }
                indention_ = false;
                spaces = breaks = false;
            }
        }
        write_indicator("'", false, false, false);
        whitespace_ = false;
        indention_ = false;
    }

    void write_double(std::string_view v, bool allow_breaks) {
        bool spaces = false;
        write_indicator("\"", true, false, false);
        const bool bom = v.size() >= 3 && static_cast<unsigned char>(v[0]) == 0xEF &&
                         static_cast<unsigned char>(v[1]) == 0xBB &&
                         static_cast<unsigned char>(v[2]) == 0xBF;
        for (std::size_t i = 0; i < v.size();) {
            if (!is_printable(v, i) || bom || is_break(v, i) || v[i] == '"' || v[i] == '\\') {
                const auto octet = static_cast<unsigned char>(v[i]);
                std::size_t w = 1;
                char32_t cp = octet & 0x7F;
                if ((octet & 0xE0) == 0xC0) {
                    w = 2;
                    cp = octet & 0x1F;
                } else if ((octet & 0xF0) == 0xE0) {
                    w = 3;
                    cp = octet & 0x0F;
                } else if ((octet & 0xF8) == 0xF0) {
                    w = 4;
                    cp = octet & 0x07;
                }
                for (std::size_t k = 1; k < w && i + k < v.size(); ++k)
                    cp = (cp << 6) + (static_cast<unsigned char>(v[i + k]) & 0x3F);
                i += w;
                put('\\');
                switch (cp) {
                case 0x00:
                    put('0');
                    break;
                case 0x07:
                    put('a');
                    break;
                case 0x08:
                    put('b');
                    break;
                case 0x09:
                    put('t');
                    break;
                case 0x0A:
                    put('n');
                    break;
                case 0x0B:
                    put('v');
                    break;
                case 0x0C:
                    put('f');
                    break;
                case 0x0D:
                    put('r');
                    break;
                case 0x1B:
                    put('e');
                    break;
                case 0x22:
                    put('"');
                    break;
                case 0x5C:
                    put('\\');
                    break;
                case 0x85:
                    put('N');
                    break;
                case 0xA0:
                    put('_');
                    break;
                case 0x2028:
                    put('L');
                    break;
                case 0x2029:
                    put('P');
                    break;
                default: {
                    int digits = 8;
                    if (cp <= 0xFF) {
                        put('x');
                        digits = 2;
                    } else if (cp <= 0xFFFF) {
                        put('u');
                        digits = 4;
                    } else {
                        put('U');
                    }
                    for (int k = (digits - 1) * 4; k >= 0; k -= 4)
                        put("0123456789ABCDEF"[(cp >> k) & 0x0F]);
                }
                }
                spaces = false;
            } else if (is_space(v, i)) {
                if (allow_breaks && !spaces && column_ > kBestWidth && i > 0 && i < v.size() - 1) {
                    write_indent();
                    if (is_space(v, i + 1)) put('\\');
                    ++i;
                } else {
                    write(v, i);
                }
                spaces = true;
            } else {
                // A run of plain ASCII needs no escaping: one append.
                std::size_t j = i;
                while (!bom && j < v.size() && v[j] > 0x20 && v[j] < 0x7F && v[j] != '"' &&
                       v[j] != '\\')
                    ++j;
                if (j > i) {
                    out_.append(v.data() + i, j - i);
                    column_ += static_cast<int>(j - i);
                    i = j;
                } else {
                    write(v, i);
                }
                spaces = false;
            }
        }
        write_indicator("\"", false, false, false);
        whitespace_ = false;
        indention_ = false;
    }

    void write_literal(std::string_view v) {
        write_indicator("|", true, false, false);
        // Block scalar hints: an indentation indicator when the text starts with a space or a
        // break, and the chomping indicator.
        if (!v.empty() && (is_space(v, 0) || is_break(v, 0)))
            write_indicator("2", false, false, false);
        open_ended_ = false;
        char chomp = 0;
        if (v.empty()) {
            chomp = '-';
        } else {
            std::size_t i = v.size() - 1;
            while (i > 0 && (static_cast<unsigned char>(v[i]) & 0xC0) == 0x80)
                --i;
            if (!is_break(v, i)) {
                chomp = '-';
            } else if (i == 0) {
                chomp = '+';
                open_ended_ = true;
            } else {
                --i;
                while (i > 0 && (static_cast<unsigned char>(v[i]) & 0xC0) == 0x80)
                    --i;
                if (is_break(v, i)) {
                    chomp = '+';
                    open_ended_ = true;
                }
            }
        }
        // (yaml.v2 writes the chomping indicator with write_indicator, which clears open_ended
        // again: a kept final line break never makes it end the document with "...".)
        if (chomp != 0) write_indicator(std::string_view(&chomp, 1), false, false, false);
        put_break();
        indention_ = true;
        whitespace_ = true;
        bool breaks = true;
        for (std::size_t i = 0; i < v.size();) {
            if (is_break(v, i)) {
                write_break(v, i);
                indention_ = true;
                breaks = true;
            } else {
                if (breaks) write_indent();
                write_run(v, i, '\0', false);
                indention_ = false;
                breaks = false;
            }
        }
    }

    static constexpr int kBestWidth = 80;
    std::string& out_;
    std::string scratch_;
    std::vector<std::vector<const MapEntry*>> entries_;
    std::size_t depth_ = 0;
    int column_ = 0;
    int indent_ = -1;
    std::vector<int> indents_;
    bool whitespace_ = true;
    bool indention_ = true;
    bool open_ended_ = false;
    bool root_ctx_ = false;
    bool mapping_ctx_ = false;
    bool simple_key_ctx_ = false;
};

} // namespace

void append_yaml(std::string& out, const Node& json_doc) {
    V2Emitter(out).document(json_doc);
}

} // namespace kpkg::io::go
