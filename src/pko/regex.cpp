// Go/RE2 regular expressions for OpenAPI `pattern`: a recursive-descent parser into a small
// syntax tree, compiled into a program run by a Pike VM (every thread advances in lock step,
// so the work is bounded by input size x program size, whatever the pattern).
#include "kpkg/pko/regex.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace kpkg::pko {

namespace {

constexpr char32_t max_rune = 0x10FFFF;
constexpr int max_repeat = 1000;    // Go's limit on {n,m}
constexpr int max_nesting = 1000;   // Go's limit on nesting depth
constexpr int max_program = 50'000; // instructions

using Ranges = std::vector<std::pair<char32_t, char32_t>>;

// Decodes UTF-8 as Go does for matching: each byte of an invalid sequence reads as U+FFFD.
std::vector<char32_t> decode(std::string_view s, bool* valid = nullptr) {
    std::vector<char32_t> out;
    out.reserve(s.size());
    if (valid) *valid = true;
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        char32_t cp = 0;
        std::size_t len = 0;
        if (c < 0x80) {
            cp = c;
            len = 1;
        } else if ((c & 0xE0) == 0xC0) {
            cp = c & 0x1F;
            len = 2;
        } else if ((c & 0xF0) == 0xE0) {
            cp = c & 0x0F;
            len = 3;
        } else if ((c & 0xF8) == 0xF0) {
            cp = c & 0x07;
            len = 4;
        }
        bool ok = len != 0 && i + len <= s.size();
        for (std::size_t k = 1; ok && k < len; ++k) {
            const auto d = static_cast<unsigned char>(s[i + k]);
            if ((d & 0xC0) != 0x80) ok = false;
            cp = (cp << 6) | (d & 0x3F);
        }
        if (ok) {
            static constexpr char32_t min_of[] = {0, 0, 0x80, 0x800, 0x10000};
            if (cp < min_of[len] || cp > max_rune || (cp >= 0xD800 && cp <= 0xDFFF)) ok = false;
        }
        if (!ok) {
            if (valid) *valid = false;
            out.push_back(0xFFFD);
            ++i;
            continue;
        }
        out.push_back(cp);
        i += len;
    }
    return out;
}

void normalize(Ranges& r) {
    std::sort(r.begin(), r.end());
    Ranges out;
    for (const auto& p : r) {
        if (!out.empty() && p.first <= out.back().second + 1)
            out.back().second = std::max(out.back().second, p.second);
        else
            out.push_back(p);
    }
    r = std::move(out);
}

Ranges negate(const Ranges& in) {
    Ranges out;
    char32_t next = 0;
    for (const auto& p : in) {
        if (p.first > next) out.emplace_back(next, p.first - 1);
        next = p.second + 1;
    }
    if (next <= max_rune) out.emplace_back(next, max_rune);
    return out;
}

// Adds the other ASCII case of every letter in r (simple folding, as (?i) does for ASCII).
void fold(Ranges& r) {
    Ranges extra;
    for (const auto& p : r) {
        const char32_t lo = std::max<char32_t>(p.first, 'A'),
                       hi = std::min<char32_t>(p.second, 'Z');
        if (lo <= hi) extra.emplace_back(lo + 32, hi + 32);
        const char32_t lo2 = std::max<char32_t>(p.first, 'a'),
                       hi2 = std::min<char32_t>(p.second, 'z');
        if (lo2 <= hi2) extra.emplace_back(lo2 - 32, hi2 - 32);
    }
    r.insert(r.end(), extra.begin(), extra.end());
    normalize(r);
}

enum class Assert : std::uint8_t { begin_text, end_text, begin_line, end_line, word, not_word };

struct Ast {
    enum Kind : std::uint8_t { empty, cls, cat, alt, repeat, assert_ } kind = empty;
    Ranges ranges;
    std::vector<Ast> kids;
    int min = 0, max = 0; // repeat; max -1 = unbounded
    Assert as = Assert::begin_text;
};

struct Flags {
    bool icase = false, dotnl = false, multiline = false;
};

class ParseError {
public:
    std::string code, arg;
};

std::string to_utf8(const std::vector<char32_t>& cps, std::size_t from, std::size_t to) {
    std::string s;
    for (std::size_t i = from; i < to && i < cps.size(); ++i) {
        char32_t c = cps[i];
        if (c < 0x80) {
            s += static_cast<char>(c);
        } else if (c < 0x800) {
            s += static_cast<char>(0xC0 | (c >> 6));
            s += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            s += static_cast<char>(0xE0 | (c >> 12));
            s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            s += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            s += static_cast<char>(0xF0 | (c >> 18));
            s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            s += static_cast<char>(0x80 | (c & 0x3F));
        }
    }
    return s;
}

Ranges perl_class(char32_t c) {
    Ranges r;
    switch (c) {
    case 'd':
    case 'D':
        r = {{'0', '9'}};
        break;
    case 's':
    case 'S':
        r = {{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}};
        break;
    default: // w W
        r = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
        break;
    }
    if (c == 'D' || c == 'S' || c == 'W') r = negate(r);
    return r;
}

bool posix_class(std::string_view name, Ranges& r) {
    static const std::pair<std::string_view, Ranges> table[] = {
        {"alnum", {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}}},
        {"alpha", {{'A', 'Z'}, {'a', 'z'}}},
        {"ascii", {{0, 0x7F}}},
        {"blank", {{'\t', '\t'}, {' ', ' '}}},
        {"cntrl", {{0, 0x1F}, {0x7F, 0x7F}}},
        {"digit", {{'0', '9'}}},
        {"graph", {{'!', '~'}}},
        {"lower", {{'a', 'z'}}},
        {"print", {{' ', '~'}}},
        {"punct", {{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}}},
        {"space", {{'\t', '\r'}, {' ', ' '}}},
        {"upper", {{'A', 'Z'}}},
        {"word", {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}},
        {"xdigit", {{'0', '9'}, {'A', 'F'}, {'a', 'f'}}},
    };
    bool neg = false;
    if (!name.empty() && name[0] == '^') {
        neg = true;
        name.remove_prefix(1);
    }
    for (const auto& [n, rs] : table) {
        if (n == name) {
            r = neg ? negate(rs) : rs;
            return true;
        }
    }
    return false;
}

class Parser {
public:
    explicit Parser(std::vector<char32_t> p) : p_(std::move(p)) {}

    Ast parse() {
        Flags f;
        Ast a = alternation(f, 0);
        if (i_ < p_.size()) throw ParseError{"unexpected )", whole()};
        return a;
    }

private:
    std::string whole() const { return to_utf8(p_, 0, p_.size()); }
    bool more() const { return i_ < p_.size(); }
    char32_t peek() const { return p_[i_]; }

    Ast alternation(Flags& f, int depth) {
        if (depth > max_nesting) throw ParseError{"expression nests too deeply", whole()};
        Ast alt;
        alt.kind = Ast::alt;
        alt.kids.push_back(concat(f, depth));
        while (more() && peek() == '|') {
            ++i_;
            alt.kids.push_back(concat(f, depth));
        }
        if (alt.kids.size() == 1) return std::move(alt.kids[0]);
        return alt;
    }

    Ast concat(Flags& f, int depth) {
        Ast cat;
        cat.kind = Ast::cat;
        while (more() && peek() != '|' && peek() != ')') {
            const std::size_t start = i_;
            const char32_t c = peek();
            if (c == '*' || c == '+' || c == '?' || (c == '{' && repeat_at(i_).first >= 0)) {
                const std::size_t end = c == '{' ? repeat_at(i_).second : i_ + 1;
                throw ParseError{"missing argument to repetition operator", to_utf8(p_, i_, end)};
            }
            bool is_atom = true;
            Ast a = atom(f, depth, is_atom);
            if (!is_atom) { // a flag group such as (?i): no argument to repeat
                continue;
            }
            a = quantified(std::move(a), start);
            cat.kids.push_back(std::move(a));
        }
        if (cat.kids.size() == 1) return std::move(cat.kids[0]);
        return cat;
    }

    // For "{n}", "{n,}", "{n,m}" at position at: {min, end index}; min -1 when not a repeat.
    std::pair<int, std::size_t> repeat_at(std::size_t at, int* max_out = nullptr) const {
        std::size_t j = at + 1;
        auto number = [&](int& v) {
            const std::size_t s = j;
            long long n = 0;
            while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9') {
                n = std::min<long long>(n * 10 + (p_[j] - '0'), 1'000'000);
                ++j;
            }
            v = static_cast<int>(n);
            return j > s;
        };
        int lo = 0, hi = 0;
        if (!number(lo)) return {-1, at};
        hi = lo;
        if (j < p_.size() && p_[j] == ',') {
            ++j;
            if (!number(hi)) hi = -1;
        }
        if (j >= p_.size() || p_[j] != '}') return {-1, at};
        if (max_out) *max_out = hi;
        return {lo, j + 1};
    }

    Ast quantified(Ast a, std::size_t start) {
        bool repeated = false;
        std::size_t last_op = start;
        while (more()) {
            const char32_t c = peek();
            int lo = 0, hi = 0;
            std::size_t end = i_ + 1;
            if (c == '*') {
                lo = 0;
                hi = -1;
            } else if (c == '+') {
                lo = 1;
                hi = -1;
            } else if (c == '?') {
                lo = 0;
                hi = 1;
            } else if (c == '{') {
                auto [mn, e] = repeat_at(i_, &hi);
                if (mn < 0) break;
                lo = mn;
                end = e;
                if (lo > max_repeat || hi > max_repeat || (hi >= 0 && hi < lo))
                    throw ParseError{"invalid repeat count", to_utf8(p_, i_, end)};
            } else {
                break;
            }
            if (end < p_.size() && p_[end] == '?') ++end; // non-greedy: same match/no match
            if (repeated)
                throw ParseError{"invalid nested repetition operator", to_utf8(p_, last_op, end)};
            repeated = true;
            last_op = i_;
            Ast r;
            r.kind = Ast::repeat;
            r.min = lo;
            r.max = hi;
            r.kids.push_back(std::move(a));
            a = std::move(r);
            i_ = end;
        }
        return a;
    }

    Ast char_class_ast(Ranges r, const Flags& f) {
        if (f.icase) fold(r);
        normalize(r);
        Ast a;
        a.kind = Ast::cls;
        a.ranges = std::move(r);
        return a;
    }

    Ast assertion(Assert as) {
        Ast a;
        a.kind = Ast::assert_;
        a.as = as;
        return a;
    }

    Ast atom(Flags& f, int depth, bool& is_atom) {
        const char32_t c = peek();
        switch (c) {
        case '(':
            return group(f, depth, is_atom);
        case '[':
            return char_class_ast(bracket(), f);
        case '.':
            ++i_;
            if (f.dotnl) return char_class_ast({{0, max_rune}}, f);
            return char_class_ast({{0, '\n' - 1}, {'\n' + 1, max_rune}}, f);
        case '^':
            ++i_;
            return assertion(f.multiline ? Assert::begin_line : Assert::begin_text);
        case '$':
            ++i_;
            return assertion(f.multiline ? Assert::end_line : Assert::end_text);
        case '\\':
            return escape_atom(f);
        default:
            ++i_;
            return char_class_ast({{c, c}}, f);
        }
    }

    Ast escape_atom(Flags& f) {
        const std::size_t start = i_;
        ++i_;
        if (!more()) throw ParseError{"trailing backslash at end of expression", ""};
        const char32_t c = peek();
        switch (c) {
        case 'A':
            ++i_;
            return assertion(Assert::begin_text);
        case 'z':
            ++i_;
            return assertion(Assert::end_text);
        case 'b':
            ++i_;
            return assertion(Assert::word);
        case 'B':
            ++i_;
            return assertion(Assert::not_word);
        case 'Q': {
            ++i_;
            Ast cat;
            cat.kind = Ast::cat;
            while (more()) {
                if (peek() == '\\' && i_ + 1 < p_.size() && p_[i_ + 1] == 'E') {
                    i_ += 2;
                    break;
                }
                const char32_t l = p_[i_++];
                cat.kids.push_back(char_class_ast({{l, l}}, f));
            }
            return cat;
        }
        default:
            break;
        }
        i_ = start;
        return char_class_ast(class_escape(), f);
    }

    // An escape inside or outside a class, as ranges; i_ at the backslash.
    Ranges class_escape() {
        const std::size_t start = i_;
        ++i_;
        if (!more()) throw ParseError{"trailing backslash at end of expression", ""};
        const char32_t c = p_[i_++];
        switch (c) {
        case 'd':
        case 'D':
        case 's':
        case 'S':
        case 'w':
        case 'W':
            return perl_class(c);
        case 'a':
            return {{7, 7}};
        case 'f':
            return {{'\f', '\f'}};
        case 'n':
            return {{'\n', '\n'}};
        case 'r':
            return {{'\r', '\r'}};
        case 't':
            return {{'\t', '\t'}};
        case 'v':
            return {{'\v', '\v'}};
        case 'x': {
            char32_t v = 0;
            auto hex = [](char32_t h) -> int {
                if (h >= '0' && h <= '9') return static_cast<int>(h - '0');
                if (h >= 'a' && h <= 'f') return static_cast<int>(h - 'a' + 10);
                if (h >= 'A' && h <= 'F') return static_cast<int>(h - 'A' + 10);
                return -1;
            };
            if (more() && peek() == '{') {
                ++i_;
                int n = 0;
                while (more() && hex(peek()) >= 0 && n < 8) {
                    v = v * 16 + static_cast<char32_t>(hex(peek()));
                    ++i_;
                    ++n;
                }
                if (n == 0 || !more() || peek() != '}' || v > max_rune)
                    throw ParseError{"invalid escape sequence", to_utf8(p_, start, i_)};
                ++i_;
                return {{v, v}};
            }
            for (int k = 0; k < 2; ++k) {
                if (!more() || hex(peek()) < 0)
                    throw ParseError{"invalid escape sequence", to_utf8(p_, start, i_)};
                v = v * 16 + static_cast<char32_t>(hex(peek()));
                ++i_;
            }
            return {{v, v}};
        }
        case 'p':
        case 'P':
            throw ParseError{"invalid character class range (Unicode classes are not supported)",
                             to_utf8(p_, start, std::min(p_.size(), start + 2))};
        default:
            break;
        }
        if (c >= '0' && c <= '7') {
            // Octal: \0 alone, or \1-\7 followed by more digits (backreferences are refused).
            if (c != '0' && (!more() || peek() < '0' || peek() > '7'))
                throw ParseError{"invalid escape sequence", to_utf8(p_, start, i_)};
            char32_t v = c - '0';
            for (int k = 0; k < 2 && more() && peek() >= '0' && peek() <= '7'; ++k)
                v = v * 8 + (p_[i_++] - '0');
            return {{v, v}};
        }
        if (c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                          (c >= 'A' && c <= 'Z') || c == '_'))
            return {{c, c}};
        throw ParseError{"invalid escape sequence", to_utf8(p_, start, i_)};
    }

    Ranges bracket() {
        const std::size_t start = i_;
        ++i_; // [
        bool neg = false;
        if (more() && peek() == '^') {
            neg = true;
            ++i_;
        }
        Ranges r;
        bool first = true;
        while (true) {
            if (!more()) throw ParseError{"missing closing ]", to_utf8(p_, start, p_.size())};
            char32_t c = peek();
            if (c == ']' && !first) {
                ++i_;
                break;
            }
            first = false;
            if (c == '[' && i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
                std::size_t j = i_ + 2;
                while (j + 1 < p_.size() && !(p_[j] == ':' && p_[j + 1] == ']'))
                    ++j;
                if (j + 1 < p_.size()) {
                    const std::string name = to_utf8(p_, i_ + 2, j);
                    Ranges pc;
                    if (!posix_class(name, pc))
                        throw ParseError{"invalid character class range", to_utf8(p_, i_, j + 2)};
                    r.insert(r.end(), pc.begin(), pc.end());
                    i_ = j + 2;
                    continue;
                }
            }
            const std::size_t item = i_;
            Ranges lo_r;
            if (c == '\\') {
                lo_r = class_escape();
            } else {
                ++i_;
                lo_r = {{c, c}};
            }
            // A range lo-hi (only between single characters).
            if (lo_r.size() == 1 && lo_r[0].first == lo_r[0].second && i_ + 1 < p_.size() &&
                peek() == '-' && p_[i_ + 1] != ']') {
                ++i_;
                Ranges hi_r;
                if (peek() == '\\') {
                    hi_r = class_escape();
                } else {
                    hi_r = {{peek(), peek()}};
                    ++i_;
                }
                if (hi_r.size() != 1 || hi_r[0].first != hi_r[0].second ||
                    hi_r[0].first < lo_r[0].first)
                    throw ParseError{"invalid character class range", to_utf8(p_, item, i_)};
                r.emplace_back(lo_r[0].first, hi_r[0].first);
                continue;
            }
            r.insert(r.end(), lo_r.begin(), lo_r.end());
        }
        normalize(r);
        return neg ? negate(r) : r;
    }

    Ast group(Flags& f, int depth, bool& is_atom) {
        const std::size_t start = i_;
        ++i_; // (
        Flags inner = f;
        if (more() && peek() == '?') {
            ++i_;
            if (more() && (peek() == 'P' || peek() == '<')) {
                if (peek() == 'P') ++i_;
                if (!more() || peek() != '<')
                    throw ParseError{"invalid or unsupported Perl syntax",
                                     to_utf8(p_, start, std::min(p_.size(), i_ + 1))};
                ++i_;
                const std::size_t name_start = i_;
                while (more() && peek() != '>') {
                    const char32_t n = peek();
                    if (!((n >= '0' && n <= '9') || (n >= 'a' && n <= 'z') ||
                          (n >= 'A' && n <= 'Z') || n == '_'))
                        throw ParseError{"invalid named capture", to_utf8(p_, start, i_ + 1)};
                    ++i_;
                }
                if (!more() || i_ == name_start)
                    throw ParseError{"invalid named capture", to_utf8(p_, start, i_)};
                ++i_;
            } else {
                // Flags: (?flags) or (?flags:re)
                bool neg = false, saw = false;
                while (true) {
                    if (!more()) throw ParseError{"missing closing )", whole()};
                    const char32_t c = p_[i_++];
                    if (c == 'i' || c == 'm' || c == 's' || c == 'U') {
                        saw = true;
                        if (c == 'i') inner.icase = !neg;
                        if (c == 'm') inner.multiline = !neg;
                        if (c == 's') inner.dotnl = !neg;
                        continue;
                    }
                    if (c == '-' && !neg) {
                        neg = true;
                        saw = false;
                        continue;
                    }
                    if (c == ':' && !(neg && !saw)) break;
                    if (c == ')' && saw) { // applies to the rest of the enclosing group
                        f = inner;
                        is_atom = false;
                        return Ast{};
                    }
                    throw ParseError{"invalid or unsupported Perl syntax", to_utf8(p_, start, i_)};
                }
            }
        }
        Ast a = alternation(inner, depth + 1);
        if (!more() || peek() != ')') throw ParseError{"missing closing )", whole()};
        ++i_;
        return a;
    }

    std::vector<char32_t> p_;
    std::size_t i_ = 0;
};

} // namespace

struct Regex::Prog {
    enum Op : std::uint8_t { cls, split, jmp, match, assert_ };
    struct Inst {
        Op op = match;
        Assert as = Assert::begin_text;
        int x = 0, y = 0;
        std::uint32_t cls_index = 0;
    };
    std::vector<Inst> code;
    std::vector<Ranges> classes;
};

namespace {

class Compiler {
public:
    explicit Compiler(Regex::Prog& p) : p_(p) {}

    void emit(const Ast& a) {
        if (p_.code.size() > static_cast<std::size_t>(max_program))
            throw ParseError{"expression too large", ""};
        using P = Regex::Prog;
        switch (a.kind) {
        case Ast::empty:
            return;
        case Ast::cls:
            p_.classes.push_back(a.ranges);
            p_.code.push_back({P::cls, Assert::begin_text, 0, 0,
                               static_cast<std::uint32_t>(p_.classes.size() - 1)});
            return;
        case Ast::assert_:
            p_.code.push_back({P::assert_, a.as, 0, 0, 0});
            return;
        case Ast::cat:
            for (const auto& k : a.kids)
                emit(k);
            return;
        case Ast::alt: {
            std::vector<std::size_t> jumps;
            for (std::size_t k = 0; k < a.kids.size(); ++k) {
                if (k + 1 < a.kids.size()) {
                    const std::size_t split = p_.code.size();
                    p_.code.push_back({P::split, Assert::begin_text, 0, 0, 0});
                    p_.code[split].x = static_cast<int>(split + 1);
                    emit(a.kids[k]);
                    jumps.push_back(p_.code.size());
                    p_.code.push_back({P::jmp, Assert::begin_text, 0, 0, 0});
                    p_.code[split].y = static_cast<int>(p_.code.size());
                } else {
                    emit(a.kids[k]);
                }
            }
            for (auto j : jumps)
                p_.code[j].x = static_cast<int>(p_.code.size());
            return;
        }
        case Ast::repeat: {
            const Ast& x = a.kids[0];
            for (int k = 0; k < a.min; ++k)
                emit(x);
            if (a.max < 0) { // x*
                const std::size_t split = p_.code.size();
                p_.code.push_back({P::split, Assert::begin_text, 0, 0, 0});
                p_.code[split].x = static_cast<int>(split + 1);
                emit(x);
                p_.code.push_back({P::jmp, Assert::begin_text, static_cast<int>(split), 0, 0});
                p_.code[split].y = static_cast<int>(p_.code.size());
                return;
            }
            std::vector<std::size_t> splits;
            for (int k = a.min; k < a.max; ++k) { // (x(x(x)?)?)?
                splits.push_back(p_.code.size());
                p_.code.push_back({P::split, Assert::begin_text, 0, 0, 0});
                p_.code.back().x = static_cast<int>(p_.code.size());
                emit(x);
            }
            for (auto s : splits)
                p_.code[s].y = static_cast<int>(p_.code.size());
            return;
        }
        }
    }

private:
    Regex::Prog& p_;
};

bool is_word(char32_t c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool in_class(const Ranges& r, char32_t c) {
    auto it = std::upper_bound(r.begin(), r.end(), c,
                               [](char32_t v, const auto& p) { return v < p.first; });
    if (it == r.begin()) return false;
    --it;
    return c <= it->second;
}

} // namespace

Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

Result<Regex> Regex::compile(std::string_view pattern) {
    bool valid = true;
    auto cps = decode(pattern, &valid);
    auto error = [&](const ParseError& e) {
        std::string msg = "error parsing regexp: " + e.code;
        if (!e.arg.empty()) msg += ": `" + e.arg + "`";
        return Error::invalid(std::move(msg));
    };
    if (!valid) return error({"invalid UTF-8", std::string(pattern)});
    try {
        Parser parser(std::move(cps));
        Ast ast = parser.parse();
        Regex re;
        re.prog_ = std::make_unique<Prog>();
        Compiler c(*re.prog_);
        c.emit(ast);
        re.prog_->code.push_back({Prog::match, Assert::begin_text, 0, 0, 0});
        if (re.prog_->code.size() > static_cast<std::size_t>(max_program))
            return error({"expression too large", ""});
        return re;
    } catch (const ParseError& e) {
        if (e.code == "expression too large") return error({e.code, std::string(pattern)});
        return error(e);
    }
}

Regex::Outcome Regex::search(std::string_view text_utf8, std::uint64_t budget) const {
    const auto text = decode(text_utf8);
    const auto& code = prog_->code;
    const std::size_t n = code.size();
    std::vector<int> clist, nlist, stack;
    std::vector<std::size_t> mark(n, static_cast<std::size_t>(-1)),
        nmark(n, static_cast<std::size_t>(-1));
    clist.reserve(n);
    nlist.reserve(n);
    std::uint64_t steps = 0;

    // Adds pc and everything reachable from it without consuming input at position pos.
    auto add = [&](std::vector<int>& list, std::vector<std::size_t>& marks, int pc0,
                   std::size_t pos) -> bool {
        const char32_t prev = pos > 0 ? text[pos - 1] : 0;
        const char32_t next = pos < text.size() ? text[pos] : 0;
        stack.clear();
        stack.push_back(pc0);
        while (!stack.empty()) {
            const int pc = stack.back();
            stack.pop_back();
            if (marks[static_cast<std::size_t>(pc)] == pos) continue;
            marks[static_cast<std::size_t>(pc)] = pos;
            ++steps;
            const auto& in = code[static_cast<std::size_t>(pc)];
            switch (in.op) {
            case Prog::jmp:
                stack.push_back(in.x);
                break;
            case Prog::split:
                stack.push_back(in.y);
                stack.push_back(in.x);
                break;
            case Prog::assert_: {
                bool ok = false;
                switch (in.as) {
                case Assert::begin_text:
                    ok = pos == 0;
                    break;
                case Assert::end_text:
                    ok = pos == text.size();
                    break;
                case Assert::begin_line:
                    ok = pos == 0 || prev == '\n';
                    break;
                case Assert::end_line:
                    ok = pos == text.size() || next == '\n';
                    break;
                case Assert::word:
                case Assert::not_word: {
                    const bool b =
                        (pos > 0 && is_word(prev)) != (pos < text.size() && is_word(next));
                    ok = in.as == Assert::word ? b : !b;
                    break;
                }
                }
                if (ok) stack.push_back(pc + 1);
                break;
            }
            case Prog::match:
                return true;
            case Prog::cls:
                list.push_back(pc);
                break;
            }
        }
        return false;
    };

    for (std::size_t pos = 0;; ++pos) {
        if (add(clist, mark, 0, pos)) return Outcome::match;
        if (steps > budget) return Outcome::too_costly;
        if (pos >= text.size()) break;
        nlist.clear();
        const char32_t c = text[pos];
        for (const int pc : clist) {
            ++steps;
            const auto& in = code[static_cast<std::size_t>(pc)];
            if (in_class(prog_->classes[in.cls_index], c)) {
                if (add(nlist, nmark, pc + 1, pos + 1)) return Outcome::match;
            }
        }
        if (steps > budget) return Outcome::too_costly;
        std::swap(clist, nlist);
        std::swap(mark, nmark);
    }
    return Outcome::no_match;
}

} // namespace kpkg::pko
