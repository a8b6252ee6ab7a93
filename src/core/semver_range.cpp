// blang/semver v4 ranges (Range) and Masterminds/semver v3 constraints (Constraint).
//
// Both follow their Go originals step by step rather than a cleaned-up grammar, because OLM and
// Package Operator decide with those exact steps and kpkg must agree with them, odd cases included.
#include "kpkg/core/semver.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

namespace kpkg::semver {

namespace {

using detail::quote;

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

std::vector<std::string> split_all(std::string_view s, char sep) {
    std::vector<std::string> out;
    for (;;) {
        std::size_t k = s.find(sep);
        out.emplace_back(s.substr(0, k));
        if (k == std::string_view::npos) return out;
        s.remove_prefix(k + 1);
    }
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (std::size_t k = 0; k < parts.size(); ++k) {
        if (k) out += sep;
        out += parts[k];
    }
    return out;
}

std::string replace_first(std::string s, std::string_view from, std::string_view to) {
    std::size_t k = s.find(from);
    if (k != std::string::npos) s.replace(k, from.size(), to);
    return s;
}

// ---------------------------------------------------------------------------------------------
// blang/semver v4

// Splits the range into words at spaces the way blang does: a space right after '>', '<' or '='
// (ignoring other spaces) does not split, so "> 1.2.3" is one word; only ' ' counts as a space;
// a word of a single character is dropped; spaces inside a word are then removed.
std::vector<std::string> blang_words(std::string_view s, std::vector<std::string>& dropped) {
    std::vector<std::string> words;
    std::size_t last = 0;
    char last_char = 0;
    auto take = [&](std::size_t from, std::size_t to) {
        if (from + 1 < to) {
            words.emplace_back(s.substr(from, to - from));
        } else if (from + 1 == to) {
            dropped.emplace_back(s.substr(from, 1));
        }
    };
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == ' ' && last_char != '>' && last_char != '<' && last_char != '=') {
            take(last, i);
            last = i + 1;
        } else if (s[i] != ' ') {
            last_char = s[i];
        }
    }
    take(last, s.size());
    for (std::string& w : words)
        std::erase(w, ' ');
    return words;
}

// Unicode decimal digits (category Nd), which Go's unicode.IsDigit accepts: each range is the
// first code point of a run of ten, except the mathematical digits (fifty).
bool is_unicode_digit(char32_t c) {
    static const char32_t starts[] = {
        0x0030,  0x0660,  0x06F0,  0x07C0,  0x0966,  0x09E6,  0x0A66,  0x0AE6,  0x0B66,
        0x0BE6,  0x0C66,  0x0CE6,  0x0D66,  0x0DE6,  0x0E50,  0x0ED0,  0x0F20,  0x1040,
        0x1090,  0x17E0,  0x1810,  0x1946,  0x19D0,  0x1A80,  0x1A90,  0x1B50,  0x1BB0,
        0x1C40,  0x1C50,  0xA620,  0xA8D0,  0xA900,  0xA9D0,  0xA9F0,  0xAA50,  0xABF0,
        0xFF10,  0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450,
        0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0,
        0x11F50, 0x16A60, 0x16AC0, 0x16B50, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950, 0x1FBF0};
    if (c >= 0x1D7CE && c <= 0x1D7FF) return true;
    for (char32_t s : starts) {
        if (c >= s && c < s + 10) return true;
    }
    return false;
}

// The code point at s[i] and its length; a byte that does not start valid UTF-8 counts as one
// character that is not a digit (Go reads it as U+FFFD).
char32_t decode_at(std::string_view s, std::size_t i, std::size_t& len) {
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = b(i);
    len = 1;
    if (c < 0x80) return c;
    std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (n == 0 || i + n > s.size()) return 0xFFFD;
    char32_t cp = c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(i + k) & 0xC0) != 0x80) return 0xFFFD;
        cp = (cp << 6) | (b(i + k) & 0x3F);
    }
    bool overlong = (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0xFFFD;
    len = n;
    return cp;
}

// blang's splitComparatorVersion: the operator is what comes before the first digit (any
// Unicode decimal digit, as in Go), with white space trimmed; the version is the rest.
bool blang_split(std::string_view word, std::string& op, std::string& version) {
    std::size_t i = 0, len = 1;
    while (i < word.size() && !is_unicode_digit(decode_at(word, i, len)))
        i += len;
    if (i >= word.size()) return false;
    op = std::string(detail::trim_go_space(word.substr(0, i)));
    version = std::string(word.substr(i));
    return true;
}

enum class Wildcard { none, major, minor, patch };

// blang's getWildcardType: only a last part of exactly "x" counts, and its place gives the kind.
Wildcard blang_wildcard_type(const std::string& v) {
    std::vector<std::string> parts = split_all(v, '.');
    if (parts.back() != "x") return Wildcard::none;
    switch (parts.size()) {
    case 1:
        return Wildcard::major;
    case 2:
        return Wildcard::minor;
    case 3:
        return Wildcard::patch;
    default:
        return Wildcard::none;
    }
}

// blang's createVersionFromWildcard: the first ".x.x" becomes ".x", the first ".x" becomes ".0",
// and a version left with two parts gets ".0".
std::string blang_flatten(const std::string& v) {
    std::string out = replace_first(replace_first(v, ".x.x", ".x"), ".x", ".0");
    if (split_all(out, '.').size() == 2) out += ".0";
    return out;
}

// Go's strconv.Atoi on a 64-bit platform: optional sign, decimal digits, int64 range.
std::optional<std::int64_t> go_atoi(std::string_view s) {
    bool neg = false;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    if (s.empty()) return std::nullopt;
    const std::uint64_t limit = neg ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    std::uint64_t v = 0;
    for (char c : s) {
        if (!is_digit(c)) return std::nullopt;
        auto d = static_cast<std::uint64_t>(c - '0');
        if (v > (limit - d) / 10) return std::nullopt;
        v = v * 10 + d;
    }
    return neg ? static_cast<std::int64_t>(~v + 1) : static_cast<std::int64_t>(v);
}

// blang's incrementMajorVersion / incrementMinorVersion: "" when the part is not a number. Like Go,
// the addition wraps around at the int64 maximum (the result then fails to parse as a version).
std::string blang_increment(const std::string& v, std::size_t part) {
    std::vector<std::string> parts = split_all(v, '.');
    if (part >= parts.size()) return {};
    std::optional<std::int64_t> n = go_atoi(parts[part]);
    if (!n) return {};
    auto next = static_cast<std::int64_t>(static_cast<std::uint64_t>(*n) + 1);
    parts[part] = std::to_string(next);
    return join(parts, ".");
}

struct Word {
    std::string text;   // comparator text after wildcard expansion
    std::string origin; // the word it came from
};

// blang's expandWildcardVersion for one word. Any lower-case 'x' in the word starts it.
bool blang_expand(const std::string& word, std::vector<Word>& out,
                  std::vector<std::string>& warnings, std::string& why) {
    if (word.find('x') == std::string::npos) {
        out.push_back({word, word});
        return true;
    }
    std::string op, ver;
    if (!blang_split(word, op, ver)) {
        why = "comparator " + quote(word) + " has no version number";
        return false;
    }
    const Wildcard kind = blang_wildcard_type(ver);
    const std::string flat = blang_flatten(ver);
    std::string result_op;
    bool increment = false;
    if (op == ">") {
        result_op = ">=", increment = true;
    } else if (op == ">=") {
        result_op = ">=";
    } else if (op == "<") {
        result_op = "<";
    } else if (op == "<=") {
        result_op = "<", increment = true;
    } else if (op.empty() || op == "=" || op == "==") {
        out.push_back({">=" + flat, word});
        result_op = "<", increment = true;
    } else if (op == "!=" || op == "!") {
        out.push_back({"<" + flat, word});
        result_op = ">=", increment = true;
    } else {
        // blang keeps no operator it does not know here, leaving a bare version (equality).
        warnings.push_back("blang/semver drops the operator " + quote(op) + " of " + quote(word) +
                           ", which then means " + quote("=" + flat));
    }
    std::string result_version = flat;
    if (increment) {
        result_version.clear();
        if (kind == Wildcard::patch) result_version = blang_increment(flat, 1);
        if (kind == Wildcard::minor) result_version = blang_increment(flat, 0);
        if (result_version.empty()) {
            why = "cannot expand " + quote(word) +
                  ": blang/semver takes any 'x' in a comparator for a wildcard, and " + quote(ver) +
                  " is not a version it can expand (only MAJOR.x and MAJOR.MINOR.x)";
            return false;
        }
    }
    out.push_back({result_op + result_version, word});
    if (kind == Wildcard::patch && ver.find(".x.x") != std::string::npos) {
        warnings.push_back(quote(word) + " is read by blang/semver as " +
                           quote(flat.substr(0, flat.rfind('.')) + ".x") + ", not as " +
                           quote(ver.substr(0, ver.find('.')) + ".x"));
    }
    if ((op == "!=" || op == "!") && kind != Wildcard::none) {
        warnings.push_back(quote(word) + " matches no version: blang/semver requires both " +
                           quote("<" + flat) + " and " + quote(result_op + result_version));
    }
    if (kind == Wildcard::none && flat != ver) {
        warnings.push_back("blang/semver reads the \".x\" in " + quote(word) + " as \".0\"");
    }
    return true;
}

std::optional<Range::Op> blang_op(const std::string& s) {
    if (s.empty() || s == "=" || s == "==") return Range::Op::eq;
    if (s == "!=" || s == "!") return Range::Op::ne;
    if (s == ">") return Range::Op::gt;
    if (s == ">=") return Range::Op::ge;
    if (s == "<") return Range::Op::lt;
    if (s == "<=") return Range::Op::le;
    return std::nullopt;
}

const char* op_text(Range::Op op) {
    switch (op) {
    case Range::Op::eq:
        return "=";
    case Range::Op::ne:
        return "!=";
    case Range::Op::lt:
        return "<";
    case Range::Op::le:
        return "<=";
    case Range::Op::gt:
        return ">";
    case Range::Op::ge:
        return ">=";
    }
    return "?";
}

bool holds(Range::Op op, const Version& v, const Version& bound) {
    int c = compare(v, bound);
    switch (op) {
    case Range::Op::eq:
        return c == 0;
    case Range::Op::ne:
        return c != 0;
    case Range::Op::lt:
        return c < 0;
    case Range::Op::le:
        return c <= 0;
    case Range::Op::gt:
        return c > 0;
    case Range::Op::ge:
        return c >= 0;
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// Masterminds/semver v3

constexpr std::size_t mm_max_length = 512;
constexpr std::size_t mm_max_groups = 32;

// Go's \s in regular expressions.
bool mm_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}
// The characters of a version part in a constraint: digits and wildcards, and '|' too, a slip in
// Masterminds' character class (it fails as a number unless an earlier wildcard makes the part
// irrelevant, as in "x.|").
bool mm_part_char(char c) {
    return is_digit(c) || c == 'x' || c == 'X' || c == '*' || c == '|';
}
bool mm_ident_char(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}
bool mm_version_char(char c) {
    return mm_ident_char(c) || c == '.' || c == '+' || c == '*' || c == '|';
}
bool mm_op_char(char c) {
    return c == '=' || c == '!' || c == '<' || c == '>' || c == '~' || c == '^';
}
bool mm_is_x(std::string_view p) {
    return p == "x" || p == "X" || p == "*";
}

// A version as Masterminds' constraint pattern splits it:
//   v?(PART)(\.PART)?(\.PART)?(-IDS)?(\+IDS)?
struct MmVersion {
    std::string_view major, minor, patch; // without their dots
    std::string_view pre;                 // with its '-'
    std::size_t end = 0;                  // where the match stops
};

// The longest match of that pattern at s[i], or false when not even a major part is there.
bool mm_match_version(std::string_view s, std::size_t i, MmVersion& m) {
    const std::size_t n = s.size();
    std::size_t p = i;
    if (p < n && s[p] == 'v') ++p;
    std::size_t a = p;
    while (p < n && mm_part_char(s[p]))
        ++p;
    if (p == a) return false;
    m.major = s.substr(a, p - a);
    for (std::string_view* part : {&m.minor, &m.patch}) {
        if (!(p + 1 < n && s[p] == '.' && mm_part_char(s[p + 1]))) break;
        a = ++p;
        while (p < n && mm_part_char(s[p]))
            ++p;
        *part = s.substr(a, p - a);
    }
    for (char lead : {'-', '+'}) {
        if (!(p + 1 < n && s[p] == lead && mm_ident_char(s[p + 1]))) continue;
        a = p++;
        for (;;) {
            while (p < n && mm_ident_char(s[p]))
                ++p;
            if (!(p + 1 < n && s[p] == '.' && mm_ident_char(s[p + 1]))) break;
            ++p;
        }
        if (lead == '-') m.pre = s.substr(a, p - a);
    }
    m.end = p;
    return true;
}

// Masterminds rewrites each hyphen range "A - B" (spaces required around '-') into ">= A, <= B ",
// taking the spaces around the range with it, before anything else is parsed.
std::string mm_rewrite_hyphens(std::string_view s) {
    const std::size_t n = s.size();
    std::string out;
    std::size_t copied = 0;
    std::size_t p = 0;
    while (p < n) {
        std::size_t q = p;
        while (q < n && mm_space(s[q]))
            ++q;
        MmVersion a, b;
        bool found = false;
        std::size_t r = 0, end = 0;
        if (mm_match_version(s, q, a) && a.end < n && mm_space(s[a.end])) {
            r = a.end;
            while (r < n && mm_space(s[r]))
                ++r;
            if (r + 1 < n && s[r] == '-' && mm_space(s[r + 1])) {
                ++r;
                while (r < n && mm_space(s[r]))
                    ++r;
                if (mm_match_version(s, r, b)) {
                    end = b.end;
                    while (end < n && mm_space(s[end]))
                        ++end;
                    found = true;
                }
            }
        }
        if (!found) {
            ++p;
            continue;
        }
        out.append(s.substr(copied, p - copied));
        out += ">= ";
        out.append(s.substr(q, a.end - q));
        out += ", <= ";
        out.append(s.substr(r, b.end - r));
        out += ' ';
        copied = p = end;
    }
    out.append(s.substr(copied));
    return out;
}

struct MmItem {
    std::string op;
    std::string version;
};

// One alternative: comparators "OP VERSION" separated by white space or a comma.
bool mm_items(std::string_view s, std::vector<MmItem>& items, std::string& why) {
    const std::size_t n = s.size();
    auto skip = [&](std::size_t i) {
        while (i < n && mm_space(s[i]))
            ++i;
        return i;
    };
    std::size_t i = skip(0);
    for (;;) {
        std::size_t j = i;
        while (j < n && mm_op_char(s[j]))
            ++j;
        std::string op(s.substr(i, j - i));
        static const char* const ops[] = {
            "", "=", "!=", ">", "<", ">=", "=>", "<=", "=<", "~", "~>", "^"};
        bool known = false;
        for (const char* o : ops)
            known = known || op == o;
        if (!known) {
            why = "unknown operator " + quote(op) +
                  " (expected one of =, !=, >, <, >=, =>, <=, =<, ~, ~>, ^)";
            return false;
        }
        i = skip(j);
        j = i;
        while (j < n && mm_version_char(s[j]))
            ++j;
        if (j == i) {
            std::string after = op.empty() ? "" : " after " + quote(op);
            if (i == n) {
                why = "missing version" + after;
            } else {
                std::string bad(s.substr(i, 1));
                why = "expected a version" + after + ", found " + quote(bad);
            }
            return false;
        }
        std::string_view text = s.substr(i, j - i);
        MmVersion m;
        if (!mm_match_version(s, i, m) || m.end != j) {
            why = "malformed version " + quote(text);
            return false;
        }
        items.push_back({op, std::string(text)});
        std::size_t k = skip(j);
        if (k == n) return true;
        if (s[k] == ',') {
            i = skip(k + 1);
            if (i == n) {
                why = "nothing after ','";
                return false;
            }
        } else if (k > j) {
            i = k;
        } else {
            why = "unexpected " + quote(s.substr(k, 1)) + " after " + quote(text) +
                  " (comparators are separated by spaces or commas)";
            return false;
        }
    }
}

} // namespace

// ---------------------------------------------------------------------------------------------

Result<Range> Range::parse(std::string_view s) {
    auto error = [&](const std::string& why) {
        return fail(Error::invalid("invalid version range " + quote(s) + ": " + why));
    };
    Range range;
    std::vector<std::string> dropped;
    std::vector<std::string> words = blang_words(s, dropped);
    for (const std::string& d : dropped) {
        range.warnings_.push_back("blang/semver ignores the one-character word " + quote(d));
    }
    if (words.empty()) return error(dropped.empty() ? "empty range" : "no comparator");

    // Words up to a "||" form one alternative; each word gives one or two comparators.
    std::vector<Comparator> all;
    std::vector<Word> expanded;
    std::string why;
    for (std::size_t k = 0; k < words.size(); ++k) {
        if (words[k] == "||") {
            if (k == 0) return error("\"||\" with nothing before it");
            // blang accepts "a || || b" but then fails when it checks a version; refuse it here.
            if (all.empty()) return error("\"||\" right after another \"||\"");
            range.any_.push_back(std::move(all));
            all.clear();
            continue;
        }
        expanded.clear();
        if (!blang_expand(words[k], expanded, range.warnings_, why)) return error(why);
        for (const Word& w : expanded) {
            auto where = [&] {
                std::string at = quote(w.text);
                if (w.text != w.origin) at += " (expanded from " + quote(w.origin) + ")";
                return at;
            };
            std::string op, ver;
            if (!blang_split(w.text, op, ver))
                return error("comparator " + where() + " has no version number");
            std::optional<Op> o = blang_op(op);
            if (!o) {
                return error("unknown operator " + quote(op) + " in " + where() +
                             " (expected =, ==, !=, !, >, >=, <, <= or none)");
            }
            Comparator c;
            c.op = *o;
            if (!detail::parse_strict(ver, c.version, why))
                return error("version " + quote(ver) + " in " + where() + ": " + why);
            all.push_back(std::move(c));
        }
    }
    if (all.empty()) return error("\"||\" with nothing after it");
    range.any_.push_back(std::move(all));
    return range;
}

bool Range::contains(const Version& v) const {
    for (const std::vector<Comparator>& all : any_) {
        bool ok = true;
        for (const Comparator& c : all) {
            if (!holds(c.op, v, c.version)) {
                ok = false;
                break;
            }
        }
        if (ok) return true;
    }
    return false;
}

std::string Range::str() const {
    std::vector<std::string> alts;
    for (const std::vector<Comparator>& all : any_) {
        std::vector<std::string> parts;
        for (const Comparator& c : all)
            parts.push_back(op_text(c.op) + c.version.str());
        alts.push_back(join(parts, " "));
    }
    return join(alts, " || ");
}

// ---------------------------------------------------------------------------------------------

Result<Constraint> Constraint::parse(std::string_view s) {
    auto error = [&](const std::string& why) {
        return fail(Error::invalid("invalid version constraint " + quote(s) + ": " + why));
    };
    if (s.size() > mm_max_length) {
        return error("longer than " + std::to_string(mm_max_length) +
                     " bytes (the limit of Masterminds/semver)");
    }
    const std::string text = mm_rewrite_hyphens(s);
    std::vector<std::string> segments;
    for (std::string_view rest = text;;) {
        std::size_t k = rest.find("||");
        segments.emplace_back(rest.substr(0, k));
        if (k == std::string_view::npos) break;
        rest.remove_prefix(k + 2);
    }
    if (segments.size() > mm_max_groups) {
        return error("more than " + std::to_string(mm_max_groups) +
                     " alternatives joined by \"||\" (the limit of Masterminds/semver)");
    }
    Constraint out;
    for (std::size_t g = 0; g < segments.size(); ++g) {
        const std::string& seg = segments[g];
        std::string why;
        bool blank = true;
        for (char c : seg)
            blank = blank && mm_space(c);
        if (blank) {
            if (segments.size() == 1) return error("empty constraint");
            if (g == 0) return error("nothing before \"||\"");
            if (g + 1 == segments.size()) return error("nothing after \"||\"");
            return error("nothing between two \"||\"");
        }
        std::vector<MmItem> items;
        if (!mm_items(seg, items, why)) {
            std::string where = segments.size() > 1 || text != s ? " in " + quote(seg) : "";
            if (text != s) where += " (hyphen ranges rewritten to >= and <= as Masterminds does)";
            return error(why + where);
        }
        Group group;
        for (const MmItem& item : items) {
            Term t;
            t.op_text = item.op;
            t.text = item.version;
            const std::string& o = item.op;
            t.op = (o.empty() || o == "=")    ? Op::eq
                   : o == "!="                ? Op::ne
                   : o == ">"                 ? Op::gt
                   : o == "<"                 ? Op::lt
                   : (o == ">=" || o == "=>") ? Op::ge
                   : (o == "<=" || o == "=<") ? Op::le
                   : (o == "~" || o == "~>")  ? Op::tilde
                                              : Op::caret;
            MmVersion m;
            mm_match_version(item.version, 0, m);
            // The parts that count must be numbers or wildcards ('|' and mixes like "1x" are not).
            for (std::string_view part : {m.major, m.minor, m.patch}) {
                if (part.empty() || mm_is_x(part)) break;
                for (char c : part) {
                    if (!is_digit(c)) {
                        return error("version " + quote(item.version) + ": part " + quote(part) +
                                     " is neither a number nor a wildcard (x, X or *)");
                    }
                }
            }
            // Wildcards and missing parts: the first one decides, later parts are ignored.
            std::string ver;
            if (mm_is_x(m.major)) {
                ver = "0.0.0" + std::string(m.pre);
                t.dirty = true;
            } else if (m.minor.empty() || mm_is_x(m.minor)) {
                ver = std::string(m.major) + ".0.0" + std::string(m.pre);
                t.dirty = t.minor_dirty = true;
            } else if (m.patch.empty() || mm_is_x(m.patch)) {
                ver = std::string(m.major) + "." + std::string(m.minor) + ".0" + std::string(m.pre);
                t.dirty = t.patch_dirty = true;
            } else {
                ver = item.version;
            }
            if (!detail::parse_lenient(ver, t.version, why)) {
                std::string shown = ver == item.version ? "" : " (read as " + quote(ver) + ")";
                return error("version " + quote(item.version) + shown + ": " + why);
            }
            group.has_pre = group.has_pre || t.version.prerelease();
            group.terms.push_back(std::move(t));
        }
        out.groups_.push_back(std::move(group));
    }
    return out;
}

bool Constraint::check_term(const Term& t, const Version& v, bool include_pre) {
    const Version& c = t.version;
    if (v.prerelease() && !include_pre) return false;
    switch (t.op) {
    case Op::ne:
        if (t.dirty) {
            if (c.major != v.major) return true;
            if (c.minor != v.minor && !t.minor_dirty) return true;
            if (t.minor_dirty) return false;
            if (c.patch != v.patch && !t.patch_dirty) return true;
            if (t.patch_dirty) {
                // Same major.minor: only a different pre-release makes it unequal.
                return v.pre != c.pre;
            }
        }
        return compare(v, c) != 0;
    case Op::gt:
        if (!t.dirty) return compare(v, c) > 0;
        if (v.major != c.major) return v.major > c.major;
        if (t.minor_dirty) return false;
        if (t.patch_dirty) return v.minor > c.minor;
        return compare(v, c) > 0;
    case Op::lt:
        return compare(v, c) < 0;
    case Op::ge:
        return compare(v, c) >= 0;
    case Op::le:
        if (!t.dirty) return compare(v, c) <= 0;
        if (v.major > c.major) return false;
        if (v.major == c.major && v.minor > c.minor && !t.minor_dirty) return false;
        return true;
    case Op::eq:
        if (!t.dirty) return compare(v, c) == 0;
        [[fallthrough]]; // with a wildcard, "=" works as "~"
    case Op::tilde:
        if (compare(v, c) < 0) return false;
        // "~0.0.0" and "~*" accept everything from 0.0.0 up.
        if (c.major == 0 && c.minor == 0 && c.patch == 0 && !t.minor_dirty && !t.patch_dirty)
            return true;
        if (v.major != c.major) return false;
        return v.minor == c.minor || t.minor_dirty;
    case Op::caret:
        if (compare(v, c) < 0) return false;
        if (c.major > 0 || t.minor_dirty) return v.major == c.major;
        if (v.major > 0) return false;
        if (c.minor > 0 || t.patch_dirty) return v.minor == c.minor;
        if (v.minor > 0) return false;
        return v.patch == c.patch;
    }
    return false;
}

bool Constraint::check(const Version& v, bool include_prerelease) const {
    for (const Group& g : groups_) {
        bool ok = true;
        for (const Term& t : g.terms) {
            if (!check_term(t, v, include_prerelease || g.has_pre)) {
                ok = false;
                break;
            }
        }
        if (ok) return true;
    }
    return false;
}

std::string Constraint::str() const {
    std::vector<std::string> alts;
    for (const Group& g : groups_) {
        std::vector<std::string> parts;
        for (const Term& t : g.terms)
            parts.push_back(t.op_text + t.text);
        alts.push_back(join(parts, " "));
    }
    return join(alts, " || ");
}

} // namespace kpkg::semver
