// Go regexp (RE2 syntax) compiled to a small instruction program run by a Pike VM: every thread
// advances in lock step over the input, one list entry per instruction at most, so matching is
// O(input x program) whatever the expression. Threads are kept in priority order, which gives
// Go's leftmost-first results (first alternative, greedy or lazy repetition).
#include "kpkg/core/regex.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace kpkg::re {
namespace {

constexpr int kMaxRepeat = 1000;    // Go's limit on {n,m}
constexpr int kMaxDepth = 1000;     // Go's maximum nesting
constexpr int kMaxProgram = 200000; // instructions; beyond: "expression too large"
constexpr char32_t kMaxRune = 0x10FFFF;

[[noreturn]] void fail(const std::string& code, std::string_view arg) {
    throw SyntaxError("error parsing regexp: " + code + ": `" + std::string(arg) + "`");
}

} // namespace

char32_t decode_rune(std::string_view s, std::size_t i, std::size_t& width) {
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = b(i);
    width = 1;
    if (c < 0x80) return c;
    int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : -1;
    if (n < 0 || c > 0xF4 || i + static_cast<std::size_t>(n) >= s.size()) return 0xFFFD;
    char32_t r = c & (0x3F >> n);
    for (int k = 1; k <= n; ++k) {
        unsigned char d = b(i + static_cast<std::size_t>(k));
        if ((d & 0xC0) != 0x80) return 0xFFFD;
        r = (r << 6) | (d & 0x3F);
    }
    static constexpr char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (r < kMin[n] || r > kMaxRune || (r >= 0xD800 && r <= 0xDFFF)) return 0xFFFD;
    width = static_cast<std::size_t>(n) + 1;
    return r;
}

namespace {

char32_t decode(std::string_view s, std::size_t i, std::size_t& width) {
    return decode_rune(s, i, width);
}

bool is_word(char32_t c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

using Ranges = std::vector<std::pair<char32_t, char32_t>>;

void normalize(Ranges& r) {
    std::sort(r.begin(), r.end());
    Ranges out;
    for (const auto& x : r) {
        if (!out.empty() && x.first <= out.back().second + 1)
            out.back().second = std::max(out.back().second, x.second);
        else
            out.push_back(x);
    }
    r = std::move(out);
}

Ranges negate(Ranges r) {
    normalize(r);
    Ranges out;
    char32_t next = 0;
    for (const auto& x : r) {
        if (x.first > next) out.emplace_back(next, x.first - 1);
        next = x.second + 1;
    }
    if (next <= kMaxRune) out.emplace_back(next, kMaxRune);
    return out;
}

void add_fold(Ranges& r) {
    Ranges extra;
    for (const auto& [lo, hi] : r) {
        char32_t a = std::max<char32_t>(lo, 'a'), b = std::min<char32_t>(hi, 'z');
        if (a <= b) extra.emplace_back(a - 32, b - 32);
        a = std::max<char32_t>(lo, 'A'), b = std::min<char32_t>(hi, 'Z');
        if (a <= b) extra.emplace_back(a + 32, b + 32);
    }
    r.insert(r.end(), extra.begin(), extra.end());
}

// ---- syntax tree

enum class Op : std::uint8_t { empty, chars, any, concat, alt, repeat, capture, assert_ };
enum Assert : std::uint8_t { kBeginText, kEndText, kBeginLine, kEndLine, kWordB, kNoWordB };

struct Node {
    Op op = Op::empty;
    Ranges ranges;          // chars
    bool any_nl = false;    // any: also matches \n
    std::vector<Node> subs; // concat, alt, repeat (1), capture (1)
    int min = 0, max = 0;   // repeat (max -1: unbounded)
    bool greedy = true;     // repeat
    int cap = 0;            // capture index
    Assert assertion = kBeginText;
};

struct Flags {
    bool fold = false, multiline = false, dotnl = false, ungreedy = false;
};

class Parser {
public:
    explicit Parser(std::string_view s) : s_(s) {}

    Node parse() {
        Node n = alternation(0);
        if (i_ < s_.size()) fail("unexpected )", s_);
        return n;
    }
    std::vector<std::string> names{""};

private:
    std::string_view s_;
    std::size_t i_ = 0;
    Flags f_;
    bool flags_only_ = false; // the last atom was a (?flags) group

    bool eof() const { return i_ >= s_.size(); }
    char peek() const { return s_[i_]; }

    char32_t next_rune() {
        std::size_t w = 0;
        char32_t r = decode(s_, i_, w);
        if (r == 0xFFFD && w == 1 && static_cast<unsigned char>(s_[i_]) >= 0x80)
            fail("invalid UTF-8", s_.substr(i_));
        i_ += w;
        return r;
    }

    Node alternation(int depth) {
        if (depth > kMaxDepth) fail("expression nests too deeply", s_);
        std::vector<Node> alts;
        alts.push_back(concatenation(depth));
        while (!eof() && peek() == '|') {
            ++i_;
            alts.push_back(concatenation(depth));
        }
        if (alts.size() == 1) return std::move(alts[0]);
        Node n;
        n.op = Op::alt;
        n.subs = std::move(alts);
        return n;
    }

    Node concatenation(int depth) {
        Node cat;
        cat.op = Op::concat;
        bool last_repeat = false;
        std::size_t last_repeat_at = 0;
        while (!eof() && peek() != '|' && peek() != ')') {
            char c = peek();
            if (c == '*' || c == '+' || c == '?' || c == '{') {
                std::size_t start = i_;
                int mn = 0, mx = -1;
                if (c == '{') {
                    if (!parse_repeat(mn, mx)) { // a literal '{'
                        i_ = start + 1;
                        cat.subs.push_back(literal('{'));
                        last_repeat = false;
                        continue;
                    }
                } else {
                    ++i_;
                    mn = c == '+' ? 1 : 0;
                    mx = c == '?' ? 1 : -1;
                }
                bool greedy = true;
                if (!eof() && peek() == '?') {
                    greedy = false;
                    ++i_;
                }
                if (f_.ungreedy) greedy = !greedy;
                std::string_view op_text = s_.substr(start, i_ - start);
                if (last_repeat)
                    fail("invalid nested repetition operator",
                         s_.substr(last_repeat_at, i_ - last_repeat_at));
                if (cat.subs.empty() || cat.subs.back().op == Op::empty || flags_only_)
                    fail("missing argument to repetition operator", op_text);
                if (mn > kMaxRepeat || mx > kMaxRepeat || (mx >= 0 && mn > mx))
                    fail("invalid repeat count", op_text);
                Node r;
                r.op = Op::repeat;
                r.min = mn;
                r.max = mx;
                r.greedy = greedy;
                r.subs.push_back(std::move(cat.subs.back()));
                cat.subs.back() = std::move(r);
                last_repeat = true;
                last_repeat_at = start;
                continue;
            }
            last_repeat = false;
            flags_only_ = false;
            atom(cat, depth);
        }
        if (cat.subs.size() == 1) return std::move(cat.subs[0]);
        if (cat.subs.empty()) return Node{};
        return cat;
    }

    // {n}, {n,}, {n,m} at i_; false (i_ unchanged) when it is not one.
    bool parse_repeat(int& mn, int& mx) {
        std::size_t j = i_ + 1;
        auto number = [&](int& out) {
            std::size_t b = j;
            long v = 0;
            while (j < s_.size() && s_[j] >= '0' && s_[j] <= '9') {
                v = std::min<long>(v * 10 + (s_[j] - '0'), 100000);
                ++j;
            }
            if (j == b) return false;
            out = static_cast<int>(v);
            return true;
        };
        if (!number(mn)) return false;
        if (j < s_.size() && s_[j] == ',') {
            ++j;
            if (j < s_.size() && s_[j] == '}')
                mx = -1;
            else if (!number(mx))
                return false;
        } else {
            mx = mn;
        }
        if (j >= s_.size() || s_[j] != '}') return false;
        i_ = j + 1;
        return true;
    }

    Node literal(char32_t c) {
        Node n;
        n.op = Op::chars;
        n.ranges.emplace_back(c, c);
        if (f_.fold) add_fold(n.ranges), normalize(n.ranges);
        return n;
    }

    Node chars(Ranges r) {
        Node n;
        n.op = Op::chars;
        if (f_.fold) add_fold(r);
        normalize(r);
        n.ranges = std::move(r);
        return n;
    }

    static Node assertion(Assert a) {
        Node n;
        n.op = Op::assert_;
        n.assertion = a;
        return n;
    }

    void atom(Node& cat, int depth) {
        char c = peek();
        switch (c) {
        case '(': {
            std::size_t start = i_;
            ++i_;
            Flags saved = f_;
            int cap = -1;
            if (!eof() && peek() == '?') {
                ++i_;
                if (!eof() && (peek() == 'P' || peek() == '<')) {
                    if (peek() == 'P') ++i_;
                    if (eof() || peek() != '<')
                        fail("invalid or unsupported Perl syntax", s_.substr(start, 3));
                    ++i_;
                    std::size_t e = s_.find('>', i_);
                    if (e == std::string_view::npos)
                        fail("invalid named capture", s_.substr(start));
                    std::string name(s_.substr(i_, e - i_));
                    bool ok = !name.empty();
                    for (char ch : name)
                        ok = ok && is_word(static_cast<unsigned char>(ch));
                    if (!ok) fail("invalid named capture", s_.substr(start, e + 1 - start));
                    if (std::find(names.begin(), names.end(), name) != names.end())
                        fail("duplicate capture group name", s_.substr(start, e + 1 - start));
                    i_ = e + 1;
                    cap = static_cast<int>(names.size());
                    names.push_back(std::move(name));
                } else {
                    // Flags: (?flags) or (?flags:re)
                    bool neg = false, any = false;
                    for (;;) {
                        if (eof()) fail("missing closing )", s_);
                        char fch = peek();
                        ++i_;
                        if (fch == 'i' || fch == 'm' || fch == 's' || fch == 'U') {
                            bool v = !neg;
                            (fch == 'i'   ? f_.fold
                             : fch == 'm' ? f_.multiline
                             : fch == 's' ? f_.dotnl
                                          : f_.ungreedy) = v;
                            any = true;
                        } else if (fch == '-' && !neg) {
                            neg = true;
                            any = false;
                        } else if (fch == ')' && !(neg && !any)) {
                            flags_only_ = true; // nothing to repeat
                            return;             // flags for the rest of the group
                        } else if (fch == ':' && !(neg && !any)) {
                            break;
                        } else {
                            fail("invalid or unsupported Perl syntax",
                                 s_.substr(start, i_ - start));
                        }
                    }
                    Node inner = alternation(depth + 1);
                    if (eof()) fail("missing closing )", s_);
                    ++i_;
                    f_ = saved;
                    cat.subs.push_back(std::move(inner));
                    return;
                }
            } else {
                cap = static_cast<int>(names.size());
                names.emplace_back();
            }
            Node inner = alternation(depth + 1);
            if (eof()) fail("missing closing )", s_);
            ++i_;
            f_ = saved;
            Node n;
            n.op = Op::capture;
            n.cap = cap;
            n.subs.push_back(std::move(inner));
            cat.subs.push_back(std::move(n));
            return;
        }
        case '[':
            cat.subs.push_back(char_class());
            return;
        case '.': {
            ++i_;
            Node n;
            n.op = Op::any;
            n.any_nl = f_.dotnl;
            cat.subs.push_back(std::move(n));
            return;
        }
        case '^':
            ++i_;
            cat.subs.push_back(assertion(f_.multiline ? kBeginLine : kBeginText));
            return;
        case '$':
            ++i_;
            cat.subs.push_back(assertion(f_.multiline ? kEndLine : kEndText));
            return;
        case '\\': {
            std::size_t start = i_;
            ++i_;
            if (eof()) fail("trailing backslash at end of expression", "");
            char e = peek();
            switch (e) {
            case 'A':
                ++i_;
                cat.subs.push_back(assertion(kBeginText));
                return;
            case 'z':
                ++i_;
                cat.subs.push_back(assertion(kEndText));
                return;
            case 'b':
                ++i_;
                cat.subs.push_back(assertion(kWordB));
                return;
            case 'B':
                ++i_;
                cat.subs.push_back(assertion(kNoWordB));
                return;
            case 'Q': {
                ++i_;
                std::size_t end = s_.find("\\E", i_);
                std::string_view lit = s_.substr(
                    i_, end == std::string_view::npos ? std::string_view::npos : end - i_);
                i_ = end == std::string_view::npos ? s_.size() : end + 2;
                for (std::size_t k = 0; k < lit.size();) {
                    std::size_t w = 0;
                    cat.subs.push_back(literal(decode(lit, k, w)));
                    k += w;
                }
                return;
            }
            default:
                break;
            }
            i_ = start;
            Ranges r;
            if (escape_class(r)) {
                cat.subs.push_back(chars(std::move(r)));
                return;
            }
            cat.subs.push_back(literal(escape()));
            return;
        }
        default:
            cat.subs.push_back(literal(next_rune()));
            return;
        }
    }

    // \d \D \s \S \w \W at i_ (a backslash): the class, i_ moved past it.
    bool escape_class(Ranges& r) {
        if (i_ + 1 >= s_.size()) return false;
        char e = s_[i_ + 1];
        Ranges base;
        switch (e) {
        case 'd':
        case 'D':
            base = {{'0', '9'}};
            break;
        case 's':
        case 'S':
            base = {{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}};
            break;
        case 'w':
        case 'W':
            base = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
            break;
        case 'p':
        case 'P':
            fail("Unicode character classes are not supported", s_.substr(i_, 3));
        default:
            return false;
        }
        i_ += 2;
        r = (e >= 'A' && e <= 'Z') ? negate(base) : base;
        return true;
    }

    // A single-rune escape at i_ (a backslash).
    char32_t escape() {
        std::size_t start = i_;
        ++i_;
        if (eof()) fail("trailing backslash at end of expression", "");
        char e = peek();
        ++i_;
        switch (e) {
        case 'a':
            return 7;
        case 'f':
            return 12;
        case 't':
            return 9;
        case 'n':
            return 10;
        case 'r':
            return 13;
        case 'v':
            return 11;
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7':
            if (eof() || peek() < '0' || peek() > '7') break;
            [[fallthrough]];
        case '0': {
            char32_t v = static_cast<char32_t>(e - '0');
            for (int k = 0; k < 2 && !eof() && peek() >= '0' && peek() <= '7'; ++k, ++i_)
                v = v * 8 + static_cast<char32_t>(peek() - '0');
            return v;
        }
        case 'x': {
            auto hex = [](char h) -> int {
                if (h >= '0' && h <= '9') return h - '0';
                if (h >= 'a' && h <= 'f') return h - 'a' + 10;
                if (h >= 'A' && h <= 'F') return h - 'A' + 10;
                return -1;
            };
            if (eof()) break;
            if (peek() == '{') {
                ++i_;
                char32_t v = 0;
                int n = 0;
                while (!eof() && hex(peek()) >= 0) {
                    v = v * 16 + static_cast<char32_t>(hex(peek()));
                    ++i_;
                    if (++n > 8 || v > kMaxRune)
                        fail("invalid escape sequence", s_.substr(start, i_ - start));
                }
                if (eof() || peek() != '}' || n == 0) break;
                ++i_;
                return v;
            }
            if (i_ + 1 >= s_.size() || hex(peek()) < 0 || hex(s_[i_ + 1]) < 0) break;
            char32_t v = static_cast<char32_t>(hex(peek()) * 16 + hex(s_[i_ + 1]));
            i_ += 2;
            return v;
        }
        default:
            if (static_cast<unsigned char>(e) < 0x80 && !is_word(static_cast<unsigned char>(e)))
                return static_cast<unsigned char>(e);
            break;
        }
        std::size_t w = 0;
        decode(s_, i_ - 1, w);
        fail("invalid escape sequence", s_.substr(start, i_ - 1 + w - start));
    }

    Node char_class() {
        std::size_t start = i_;
        ++i_;
        bool neg = false;
        if (!eof() && peek() == '^') {
            neg = true;
            ++i_;
        }
        Ranges r;
        bool first = true;
        for (;;) {
            if (eof()) fail("missing closing ]", s_.substr(start));
            char c = peek();
            if (c == ']' && !first) {
                ++i_;
                break;
            }
            first = false;
            if (c == '[' && i_ + 1 < s_.size() && s_[i_ + 1] == ':') {
                std::size_t e = s_.find(":]", i_ + 2);
                if (e != std::string_view::npos) {
                    std::string_view name = s_.substr(i_ + 2, e - i_ - 2);
                    bool pneg = !name.empty() && name[0] == '^';
                    if (pneg) name.remove_prefix(1);
                    Ranges p = posix(name);
                    if (p.empty()) fail("invalid character class range", s_.substr(i_, e + 2 - i_));
                    if (pneg) p = negate(p);
                    r.insert(r.end(), p.begin(), p.end());
                    i_ = e + 2;
                    continue;
                }
            }
            std::size_t item = i_;
            Ranges cls;
            if (c == '\\' && escape_class(cls)) {
                r.insert(r.end(), cls.begin(), cls.end());
                continue;
            }
            char32_t lo = c == '\\' ? escape() : next_rune();
            char32_t hi = lo;
            if (i_ + 1 < s_.size() && peek() == '-' && s_[i_ + 1] != ']') {
                ++i_;
                if (peek() == '\\') {
                    Ranges dummy;
                    std::size_t save = i_;
                    if (escape_class(dummy))
                        fail("invalid character class range", s_.substr(item, i_ - item));
                    i_ = save;
                    hi = escape();
                } else {
                    hi = next_rune();
                }
                if (hi < lo) fail("invalid character class range", s_.substr(item, i_ - item));
            }
            r.emplace_back(lo, hi);
        }
        if (f_.fold) add_fold(r);
        normalize(r);
        if (neg) r = negate(r);
        Node n;
        n.op = Op::chars;
        n.ranges = std::move(r);
        return n;
    }

    static Ranges posix(std::string_view n) {
        if (n == "alnum") return {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}};
        if (n == "alpha") return {{'A', 'Z'}, {'a', 'z'}};
        if (n == "ascii") return {{0, 0x7F}};
        if (n == "blank") return {{'\t', '\t'}, {' ', ' '}};
        if (n == "cntrl") return {{0, 0x1F}, {0x7F, 0x7F}};
        if (n == "digit") return {{'0', '9'}};
        if (n == "graph") return {{'!', '~'}};
        if (n == "lower") return {{'a', 'z'}};
        if (n == "print") return {{' ', '~'}};
        if (n == "punct") return {{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}};
        if (n == "space") return {{'\t', '\r'}, {' ', ' '}};
        if (n == "upper") return {{'A', 'Z'}};
        if (n == "word") return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
        if (n == "xdigit") return {{'0', '9'}, {'A', 'F'}, {'a', 'f'}};
        return {};
    }
};

// ---- program

enum class I : std::uint8_t { chars, any, any_nonl, split, jmp, save, assert_, match };

struct Inst {
    I op = I::match;
    int x = 0, y = 0; // split: x preferred; jmp: x; save: x = slot; chars: x = index of ranges
    Assert a = kBeginText;
};

} // namespace

struct Program {
    std::vector<Inst> code;
    std::vector<Ranges> classes;
    std::vector<std::string> names;
    int start = 0;
    bool empty_expr = false; // the expression's text is ""
};

namespace {

class Compiler {
public:
    explicit Compiler(Program& p) : p_(p) {}

    int emit(Inst in) {
        if (p_.code.size() >= static_cast<std::size_t>(kMaxProgram))
            throw SyntaxError("error parsing regexp: expression too large");
        p_.code.push_back(in);
        return static_cast<int>(p_.code.size()) - 1;
    }

    void compile(const Node& n) {
        switch (n.op) {
        case Op::empty:
            return;
        case Op::chars: {
            Inst in;
            in.op = I::chars;
            in.x = static_cast<int>(p_.classes.size());
            p_.classes.push_back(n.ranges);
            emit(in);
            return;
        }
        case Op::any: {
            Inst in;
            in.op = n.any_nl ? I::any : I::any_nonl;
            emit(in);
            return;
        }
        case Op::assert_: {
            Inst in;
            in.op = I::assert_;
            in.a = n.assertion;
            emit(in);
            return;
        }
        case Op::concat:
            for (const auto& s : n.subs)
                compile(s);
            return;
        case Op::capture: {
            Inst s;
            s.op = I::save;
            s.x = 2 * n.cap;
            emit(s);
            compile(n.subs[0]);
            s.x = 2 * n.cap + 1;
            emit(s);
            return;
        }
        case Op::alt: {
            std::vector<int> jumps;
            for (std::size_t k = 0; k < n.subs.size(); ++k) {
                if (k + 1 < n.subs.size()) {
                    int split = emit(Inst{I::split, 0, 0, kBeginText});
                    p_.code[static_cast<std::size_t>(split)].x = split + 1;
                    compile(n.subs[k]);
                    jumps.push_back(emit(Inst{I::jmp, 0, 0, kBeginText}));
                    p_.code[static_cast<std::size_t>(split)].y = static_cast<int>(p_.code.size());
                } else {
                    compile(n.subs[k]);
                }
            }
            for (int j : jumps)
                p_.code[static_cast<std::size_t>(j)].x = static_cast<int>(p_.code.size());
            return;
        }
        case Op::repeat: {
            const Node& sub = n.subs[0];
            if (n.max < 0) {
                // As Go simplifies and compiles them: x{n,} is n-1 copies and x+; x* is a loop,
                // or (x+)? when x can match empty (Go's fix for golang.org/issue/46123, which
                // makes captures of such loops come out as in Perl).
                for (int k = 1; k < n.min; ++k)
                    compile(sub);
                if (n.min >= 1) {
                    plus(sub, n.greedy);
                } else if (nullable(sub)) {
                    int split = emit(Inst{I::split, 0, 0, kBeginText});
                    plus(sub, n.greedy);
                    set_split(split, split + 1, static_cast<int>(p_.code.size()), n.greedy);
                } else {
                    int split = emit(Inst{I::split, 0, 0, kBeginText});
                    compile(sub);
                    emit(Inst{I::jmp, split, 0, kBeginText});
                    set_split(split, split + 1, static_cast<int>(p_.code.size()), n.greedy);
                }
                return;
            }
            for (int k = 0; k < n.min; ++k)
                compile(sub);
            std::vector<int> splits;
            for (int k = n.min; k < n.max; ++k) {
                splits.push_back(emit(Inst{I::split, 0, 0, kBeginText}));
                compile(sub);
            }
            for (int s : splits)
                set_split(s, s + 1, static_cast<int>(p_.code.size()), n.greedy);
            return;
        }
        }
    }

private:
    // x+: x, then a split back to x or on.
    void plus(const Node& sub, bool greedy) {
        int body = static_cast<int>(p_.code.size());
        compile(sub);
        int split = emit(Inst{I::split, 0, 0, kBeginText});
        set_split(split, body, split + 1, greedy);
    }

    static bool nullable(const Node& n) {
        switch (n.op) {
        case Op::empty:
        case Op::assert_:
            return true;
        case Op::chars:
        case Op::any:
            return false;
        case Op::concat:
            return std::all_of(n.subs.begin(), n.subs.end(), nullable);
        case Op::alt:
            return std::any_of(n.subs.begin(), n.subs.end(), nullable);
        case Op::repeat:
            return n.min == 0 || nullable(n.subs[0]);
        case Op::capture:
            return nullable(n.subs[0]);
        }
        return true;
    }

    void set_split(int at, int body, int out, bool greedy) {
        auto& in = p_.code[static_cast<std::size_t>(at)];
        in.x = greedy ? body : out;
        in.y = greedy ? out : body;
    }
    Program& p_;
};

bool in_class(const Ranges& r, char32_t c) {
    auto it = std::upper_bound(
        r.begin(), r.end(), c,
        [](char32_t v, const std::pair<char32_t, char32_t>& x) { return v < x.first; });
    if (it == r.begin()) return false;
    --it;
    return c >= it->first && c <= it->second;
}

struct Thread {
    int pc;
    std::size_t caps; // offset into the list's capture pool
};

struct ThreadList {
    std::vector<Thread> threads;
    std::vector<std::ptrdiff_t> pool;
};

class Vm {
public:
    // ncap: the capture slots to track (2: the match's bounds only; 0: none).
    // Draws on `budget` (or on one of its own, of the default size, when it is nullptr); what
    // the machine used is taken from it when the machine goes, LimitError or not.
    Vm(const Program& p, std::string_view s, std::size_t ncap, Budget* budget)
        : p_(p), s_(s), ncap_(std::min(ncap, 2 * p.names.size())), budget_(budget ? *budget : own_),
          left_(budget_.left),
          // copying capture slots is work too: a thread's copy counts for 1/16 step per slot
          cost_(1 + ncap_ / 16) {
        // starting (the compilation behind it, the marks below) costs the program's size
        charge(p.code.size());
        mark_.assign(p.code.size(), 0);
    }
    ~Vm() { budget_.left = left_; }
    Vm(const Vm&) = delete;
    Vm& operator=(const Vm&) = delete;

    // The leftmost-first match at or after `from`; with `first`, any match will do (stops at the
    // first thread that reaches Match).
    bool run(std::size_t from, std::vector<std::ptrdiff_t>& out, bool first) {
        ThreadList cur, next;
        std::vector<std::ptrdiff_t> caps(ncap_, -1);
        bool matched = false;
        std::size_t pos = from;
        ++gen_;
        for (;;) {
            if (!matched) { // a new thread starting here, after the running ones (lower priority)
                std::fill(caps.begin(), caps.end(), -1);
                add(cur, p_.start, pos, caps);
            }
            const bool at_end = pos >= s_.size();
            std::size_t width = 0;
            const char32_t c = at_end ? 0 : decode(s_, pos, width);
            ++gen_;
            if (cur.threads.empty()) { // nothing running: try from the next position
                if (matched || at_end) break;
                pos += width;
                continue;
            }
            next.threads.clear();
            next.pool.clear();
            for (const auto& t : cur.threads) {
                const Inst& in = p_.code[static_cast<std::size_t>(t.pc)];
                const std::ptrdiff_t* tc = cur.pool.data() + t.caps;
                if (in.op == I::match) {
                    out.assign(tc, tc + ncap_);
                    matched = true;
                    if (first) return true;
                    break; // lower-priority threads are cut off
                }
                if (at_end) continue;
                const bool ok =
                    in.op == I::any || (in.op == I::any_nonl && c != '\n') ||
                    (in.op == I::chars && in_class(p_.classes[static_cast<std::size_t>(in.x)], c));
                if (ok) {
                    caps.assign(tc, tc + ncap_);
                    add(next, t.pc + 1, pos + width, caps);
                }
            }
            std::swap(cur, next);
            if (at_end) break;
            pos += width;
        }
        return matched;
    }

private:
    void charge(std::uint64_t steps) {
        if (left_ < steps) {
            left_ = budget_.left = 0; // (written here too: a constructor that throws has no ~Vm)
            throw LimitError("regexp: matching takes too many steps: more than " +
                             std::to_string(budget_.limit) +
                             " in all (kpkg's limit on the regular-expression work of one "
                             "template render or one validation)");
        }
        left_ -= steps;
    }

    bool assert_holds(Assert a, std::size_t pos) const {
        auto before = [&]() -> char32_t {
            if (pos == 0) return static_cast<char32_t>(-1);
            std::size_t b = pos - 1;
            while (b > 0 && (static_cast<unsigned char>(s_[b]) & 0xC0) == 0x80 && pos - b < 4)
                --b;
            std::size_t w = 0;
            char32_t r = decode(s_, b, w);
            return b + w == pos ? r : 0xFFFD;
        };
        switch (a) {
        case kBeginText:
            return pos == 0;
        case kEndText:
            return pos == s_.size();
        case kBeginLine:
            return pos == 0 || s_[pos - 1] == '\n';
        case kEndLine:
            return pos == s_.size() || s_[pos] == '\n';
        case kWordB:
        case kNoWordB: {
            bool wb = pos > 0 && is_word(before());
            std::size_t w = 0;
            bool wa = pos < s_.size() && is_word(decode(s_, pos, w));
            return (wb != wa) == (a == kWordB);
        }
        }
        return false;
    }

    // Follows empty transitions from pc in priority order (explicit stack, no recursion), adding
    // the threads that consume input (or match) to `list`.
    void add(ThreadList& list, int pc0, std::size_t pos, std::vector<std::ptrdiff_t>& caps) {
        stack_.clear();
        stack_.push_back({pc0, -1, 0});
        while (!stack_.empty()) {
            StackFrame f = stack_.back();
            stack_.pop_back();
            if (f.slot >= 0) {
                caps[static_cast<std::size_t>(f.slot)] = f.old;
                continue;
            }
            int pc = f.pc;
            for (;;) {
                auto& m = mark_[static_cast<std::size_t>(pc)];
                if (m == gen_) break;
                m = gen_;
                const Inst& in = p_.code[static_cast<std::size_t>(pc)];
                charge(cost_);
                if (in.op == I::jmp) {
                    pc = in.x;
                } else if (in.op == I::split) {
                    stack_.push_back({in.y, -1, 0});
                    pc = in.x;
                } else if (in.op == I::save) {
                    if (static_cast<std::size_t>(in.x) < caps.size()) {
                        stack_.push_back({0, in.x, caps[static_cast<std::size_t>(in.x)]});
                        caps[static_cast<std::size_t>(in.x)] = static_cast<std::ptrdiff_t>(pos);
                    }
                    pc = pc + 1;
                } else if (in.op == I::assert_) {
                    if (!assert_holds(in.a, pos)) break;
                    pc = pc + 1;
                } else {
                    list.threads.push_back({pc, list.pool.size()});
                    list.pool.insert(list.pool.end(), caps.begin(), caps.end());
                    break;
                }
            }
        }
    }

    const Program& p_;
    std::string_view s_;
    std::size_t ncap_;
    std::vector<std::uint32_t> mark_;
    std::uint32_t gen_ = 0;
    Budget own_;
    Budget& budget_;
    std::uint64_t left_; // budget_.left while running (written back by the destructor)
    std::uint64_t cost_; // steps per instruction followed
    struct StackFrame {
        int pc;
        int slot; // >= 0: restores caps[slot] = old
        std::ptrdiff_t old;
    };
    std::vector<StackFrame> stack_;
};

} // namespace

Regex::Regex(std::string_view pattern) : prog_(std::make_unique<Program>()) {
    prog_->empty_expr = pattern.empty();
    Parser parser(pattern);
    Node root = parser.parse();
    prog_->names = parser.names;
    Compiler c(*prog_);
    // group 0 around the whole expression
    c.emit(Inst{I::save, 0, 0, kBeginText});
    c.compile(root);
    c.emit(Inst{I::save, 1, 0, kBeginText});
    c.emit(Inst{I::match, 0, 0, kBeginText});
    prog_->start = 0;
    // Threads carry their capture slots: bound what a list of them can hold.
    if (prog_->code.size() * prog_->names.size() > 20'000'000)
        throw SyntaxError("error parsing regexp: expression too large");
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

std::size_t Regex::groups() const {
    return prog_->names.size();
}
const std::vector<std::string>& Regex::names() const {
    return prog_->names;
}

bool Regex::search(std::string_view s, std::size_t from, std::vector<std::ptrdiff_t>& caps,
                   Budget* budget) const {
    Vm vm(*prog_, s, SIZE_MAX, budget);
    return vm.run(from, caps, false);
}

bool Regex::matches(std::string_view s, Budget* budget) const {
    std::vector<std::ptrdiff_t> caps;
    Vm vm(*prog_, s, 0, budget);
    return vm.run(0, caps, true);
}

std::vector<std::vector<std::ptrdiff_t>> Regex::find_all(std::string_view s, std::int64_t n,
                                                         Budget* budget) const {
    std::vector<std::vector<std::ptrdiff_t>> out;
    if (n < 0) n = static_cast<std::int64_t>(s.size()) + 1;
    std::size_t pos = 0;
    std::ptrdiff_t prev_end = -1;
    std::vector<std::ptrdiff_t> caps;
    Vm vm(*prog_, s, 2, budget);
    while (static_cast<std::int64_t>(out.size()) < n && pos <= s.size()) {
        if (!vm.run(pos, caps, false)) break;
        bool accept = true;
        if (caps[1] == static_cast<std::ptrdiff_t>(pos)) { // empty match here
            if (caps[0] == prev_end) accept = false;
            std::size_t w = 1;
            if (pos < s.size()) decode(s, pos, w);
            pos += w;
        } else {
            pos = static_cast<std::size_t>(caps[1]);
        }
        prev_end = caps[1];
        if (accept) out.push_back(caps);
    }
    return out;
}

std::string Regex::replace_all(std::string_view s, std::string_view repl, bool literal,
                               std::size_t max_bytes, Budget* budget) const {
    std::string out;
    std::size_t last = 0, pos = 0;
    std::vector<std::ptrdiff_t> caps;
    const bool groups = !literal && repl.find('$') != std::string_view::npos;
    Vm vm(*prog_, s, groups ? SIZE_MAX : 2, budget);
    const auto& names = prog_->names;
    auto group = [&](std::size_t g) -> std::string_view {
        if (2 * g + 1 >= caps.size() || caps[2 * g] < 0) return {};
        return s.substr(static_cast<std::size_t>(caps[2 * g]),
                        static_cast<std::size_t>(caps[2 * g + 1] - caps[2 * g]));
    };
    auto expand = [&]() {
        if (literal) {
            out += repl;
            return;
        }
        for (std::size_t k = 0; k < repl.size(); ++k) {
            if (repl[k] != '$' || k + 1 >= repl.size()) {
                out += repl[k];
                continue;
            }
            if (repl[k + 1] == '$') {
                out += '$';
                ++k;
                continue;
            }
            std::size_t b = k + 1, e;
            bool brace = repl[b] == '{';
            if (brace) ++b;
            e = b;
            while (e < repl.size() && is_word(static_cast<unsigned char>(repl[e])))
                ++e;
            if (e == b || (brace && (e >= repl.size() || repl[e] != '}'))) {
                out += '$'; // malformed: the '$' as text
                continue;
            }
            std::string_view name = repl.substr(b, e - b);
            k = brace ? e : e - 1;
            bool digits = std::all_of(name.begin(), name.end(),
                                      [](char ch) { return ch >= '0' && ch <= '9'; });
            if (digits) {
                std::size_t g = 0;
                bool big = false;
                for (char ch : name) {
                    g = g * 10 + static_cast<std::size_t>(ch - '0');
                    if (g > 100000) big = true;
                }
                if (!big) out += group(g);
            } else {
                for (std::size_t g = 0; g < names.size(); ++g)
                    if (names[g] == name) {
                        out += group(g);
                        break;
                    }
            }
        }
    };
    while (pos <= s.size()) {
        if (!vm.run(pos, caps, false)) break;
        auto b = static_cast<std::size_t>(caps[0]), e = static_cast<std::size_t>(caps[1]);
        out.append(s, last, b - last);
        if (e > last || b == 0) expand();
        if (out.size() > max_bytes)
            throw LimitError("regexp: the result exceeds " + std::to_string(max_bytes) + " bytes");
        last = e;
        std::size_t w = 1;
        if (pos < s.size()) decode(s, pos, w);
        if (pos + w > e)
            pos += w;
        else if (pos + 1 > e)
            ++pos;
        else
            pos = e;
    }
    out.append(s, last);
    return out;
}

std::vector<std::string> Regex::split(std::string_view s, std::int64_t n, Budget* budget) const {
    std::vector<std::string> out;
    if (n == 0) return out;
    if (s.empty() && !prog_->empty_expr) {
        // Go: a non-empty expression splits "" into [""]
        out.emplace_back();
        return out;
    }
    auto matches = find_all(s, n, budget);
    std::size_t beg = 0, end = 0;
    for (const auto& m : matches) {
        if (n > 0 && static_cast<std::int64_t>(out.size()) == n - 1) break;
        end = static_cast<std::size_t>(m[0]);
        if (m[1] != 0) out.emplace_back(s.substr(beg, end - beg));
        beg = static_cast<std::size_t>(m[1]);
    }
    if (end != s.size()) out.emplace_back(s.substr(beg));
    return out;
}

std::string quote_meta(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (std::strchr("\\.+*?()|[]{}^$", c) != nullptr && c != '\0') out += '\\';
        out += c;
    }
    return out;
}

namespace {

// gobwas/glob syntax to the regex syntax above.
std::string glob_to_regex(std::string_view g) {
    std::string out = "\\A(?s:";
    int braces = 0;
    for (std::size_t i = 0; i < g.size();) {
        char c = g[i];
        switch (c) {
        case '*':
            if (i + 1 < g.size() && g[i + 1] == '*') {
                out += ".*";
                i += 2;
            } else {
                out += "[^/]*";
                ++i;
            }
            continue;
        case '?':
            out += "[^/]";
            ++i;
            continue;
        case '[': {
            std::size_t j = i + 1;
            bool neg = j < g.size() && g[j] == '!';
            if (neg) ++j;
            std::string cls = neg ? "[^" : "[";
            bool closed = false;
            while (j < g.size()) {
                char d = g[j];
                if (d == ']') {
                    closed = true;
                    ++j;
                    break;
                }
                if (d == '\\' && j + 1 < g.size()) ++j, d = g[j];
                if (d == '\\' || d == '[' || d == ']' || d == '^' || (d == '-' && false))
                    cls += '\\';
                cls += d;
                ++j;
            }
            if (!closed) throw SyntaxError("unexpected end of input: unclosed [ in glob pattern");
            cls += ']';
            out += cls;
            i = j;
            continue;
        }
        case '{':
            ++braces;
            out += "(?:";
            ++i;
            continue;
        case '}':
            if (braces > 0) {
                --braces;
                out += ')';
                ++i;
                continue;
            }
            break;
        case ',':
            if (braces > 0) {
                out += '|';
                ++i;
                continue;
            }
            break;
        case '\\':
            if (i + 1 < g.size()) ++i;
            c = g[i];
            break;
        default:
            break;
        }
        std::size_t w = 0;
        decode(g, i, w);
        out += quote_meta(g.substr(i, w));
        i += w;
    }
    if (braces > 0) throw SyntaxError("unexpected end of input: unclosed { in glob pattern");
    out += ")\\z";
    return out;
}

} // namespace

Glob::Glob(std::string_view pattern) : re_(glob_to_regex(pattern)) {}

bool Glob::match(std::string_view path, Budget* budget) const {
    return re_.matches(path, budget);
}

} // namespace kpkg::re
