// Node accessors, builders and comparison, plus the scalar helpers of kpkg/io/scalars.hpp
// (YAML core-schema resolution, number literals, UTF-8 decoding).
#include "kpkg/io/node.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "kpkg/io/scalars.hpp"

namespace kpkg::io {

// The helpers kpkg/io/scalars.hpp declares.
namespace detail {

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

// "0x1F": a byte for messages.
std::string hex_byte(unsigned char c) {
    static const char digits[] = "0123456789ABCDEF";
    std::string s = "0x";
    s += digits[c >> 4];
    s += digits[c & 15];
    return s;
}

// "U+001F" / "U+1F600": a code point for messages.
std::string code_point(char32_t cp) {
    static const char digits[] = "0123456789ABCDEF";
    std::string s = "U+";
    const int width = cp > 0xFFFF ? 6 : 4;
    for (int i = width - 1; i >= 0; --i)
        s += digits[(cp >> (4 * i)) & 15];
    return s;
}

// Length (1 to 4) of the well-formed UTF-8 sequence at p, with its code point in cp; 0 when the
// bytes there are not UTF-8 (stray continuation byte, truncated or overlong sequence, surrogate,
// beyond U+10FFFF). Requires p < end.
std::size_t utf8_decode(const char* p, const char* end, char32_t& cp) {
    const auto* s = reinterpret_cast<const unsigned char*>(p);
    const std::size_t avail = static_cast<std::size_t>(end - p);
    const unsigned char b0 = s[0];
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    }
    auto cont = [&](std::size_t i) { return i < avail && (s[i] & 0xC0) == 0x80; };
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        if (!cont(1)) return 0;
        cp = (char32_t(b0 & 0x1F) << 6) | (s[1] & 0x3F);
        return 2;
    }
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (!cont(1) || !cont(2)) return 0;
        cp = (char32_t(b0 & 0x0F) << 12) | (char32_t(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
        if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        return 3;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (!cont(1) || !cont(2) || !cont(3)) return 0;
        cp = (char32_t(b0 & 0x07) << 18) | (char32_t(s[1] & 0x3F) << 12) |
             (char32_t(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
        if (cp < 0x10000 || cp > 0x10FFFF) return 0;
        return 4;
    }
    return 0;
}

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool all_of(std::string_view s, bool (*pred)(char)) {
    if (s.empty()) return false;
    for (char c : s)
        if (!pred(c)) return false;
    return true;
}

bool is_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_oct(char c) {
    return c >= '0' && c <= '7';
}

int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;
}

// Splits an integer literal (decimal with optional sign, 0x hex, 0o octal; signs are accepted on
// all three) into sign, base and digits. False when the text is not such a literal.
bool split_int(std::string_view s, bool& neg, int& base, std::string_view& digits) {
    neg = false;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
        base = s[1] == 'x' ? 16 : 8;
        s.remove_prefix(2);
    }
    digits = s;
    if (base == 16) return all_of(s, is_hex);
    if (base == 8) return all_of(s, is_oct);
    return all_of(s, is_digit);
}

// The magnitude of a digit string, or nothing when it exceeds uint64.
std::optional<std::uint64_t> magnitude(std::string_view digits, int base) {
    std::uint64_t v = 0;
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    for (char c : digits) {
        const auto d = static_cast<std::uint64_t>(digit_value(c));
        if (v > (max - d) / static_cast<std::uint64_t>(base)) return std::nullopt;
        v = v * static_cast<std::uint64_t>(base) + d;
    }
    return v;
}

// Decimal exponent of the leading significant digit of a plain decimal float literal (no sign),
// used to tell underflow from overflow when from_chars reports out of range.
long leading_exponent(std::string_view s) {
    long exp = 0;
    const std::size_t e = s.find_first_of("eE");
    if (e != std::string_view::npos) {
        std::string_view es = s.substr(e + 1);
        bool neg = !es.empty() && es[0] == '-';
        if (!es.empty() && (es[0] == '-' || es[0] == '+')) es.remove_prefix(1);
        for (char c : es) {
            if (exp < 100000) exp = exp * 10 + (c - '0');
        }
        if (neg) exp = -exp;
        s = s.substr(0, e);
    }
    const std::size_t dot = s.find('.');
    const std::string_view int_part = s.substr(0, dot);
    std::size_t first = int_part.find_first_not_of('0');
    if (first != std::string_view::npos)
        return exp + static_cast<long>(int_part.size() - first) - 1;
    if (dot == std::string_view::npos) return exp;
    const std::string_view frac = s.substr(dot + 1);
    first = frac.find_first_not_of('0');
    if (first == std::string_view::npos) return exp;
    return exp - static_cast<long>(first) - 1;
}

} // namespace

bool is_yaml_null(std::string_view s) {
    return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

bool is_yaml_bool(std::string_view s) {
    return s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" ||
           s == "FALSE";
}

// Integers of the YAML 1.2 core schema: [-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+. Octal and hex
// literals that do not fit 64 bits stay strings (as in Go's yaml.v3), so every integer node has
// a decimal form a JSON writer can produce.
bool is_yaml_int(std::string_view s) {
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
        const int base = s[1] == 'x' ? 16 : 8;
        const std::string_view d = s.substr(2);
        if (!(base == 16 ? all_of(d, is_hex) : all_of(d, is_oct))) return false;
        return magnitude(d, base).has_value();
    }
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
    return all_of(s, is_digit);
}

// Floats of the core schema: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?,
// [-+]?\.(inf|Inf|INF) and \.(nan|NaN|NAN). Callers test is_yaml_int first.
bool is_yaml_float(std::string_view s) {
    if (s == ".nan" || s == ".NaN" || s == ".NAN") return true;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
    if (s == ".inf" || s == ".Inf" || s == ".INF") return true;
    std::size_t i = 0, n = s.size();
    std::size_t int_digits = 0, frac_digits = 0;
    while (i < n && is_digit(s[i]))
        ++i, ++int_digits;
    if (i < n && s[i] == '.') {
        ++i;
        while (i < n && is_digit(s[i]))
            ++i, ++frac_digits;
        // "1." is a float, "." is not, ".5" is.
        if (int_digits == 0 && frac_digits == 0) return false;
    } else if (int_digits == 0) {
        return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
        std::size_t exp_digits = 0;
        while (i < n && is_digit(s[i]))
            ++i, ++exp_digits;
        if (exp_digits == 0) return false;
    }
    return i == n;
}

Kind resolve_plain(std::string_view s) {
    if (is_yaml_null(s)) return Kind::null;
    // Everything else that resolves to a non-string starts with a character of this set; the
    // quick test keeps the common case (ordinary words) cheap.
    const char c = s[0];
    if (!(is_digit(c) || c == '-' || c == '+' || c == '.' || c == 't' || c == 'T' || c == 'f' ||
          c == 'F'))
        return Kind::string;
    if (is_yaml_bool(s)) return Kind::boolean;
    if (is_yaml_int(s)) return Kind::integer;
    if (is_yaml_float(s)) return Kind::floating;
    return Kind::string;
}

// The integer literal s in canonical decimal form (no '+', no leading zeros; "-0" stays as is),
// or nothing when s is not an integer literal or is an octal/hex literal beyond 64 bits.
// Decimal literals of any length are accepted.
std::optional<std::string> decimal_integer(std::string_view s) {
    bool neg = false;
    int base = 10;
    std::string_view digits;
    if (!split_int(s, neg, base, digits)) return std::nullopt;
    std::string out;
    if (base == 10) {
        const std::size_t first = digits.find_first_not_of('0');
        digits = first == std::string_view::npos ? std::string_view("0") : digits.substr(first);
        out.reserve(digits.size() + 1);
        if (neg) out += '-';
        out += digits;
        return out;
    }
    auto m = magnitude(digits, base);
    if (!m) return std::nullopt;
    if (neg) out += '-';
    out += std::to_string(*m);
    return out;
}

// A float literal in YAML core or JSON syntax as a double. Out-of-range magnitudes: tiny ones
// become (signed) zero, huge ones give nothing.
std::optional<double> parse_float(std::string_view s) {
    if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
    bool neg = false;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    if (s == ".inf" || s == ".Inf" || s == ".INF")
        return neg ? -std::numeric_limits<double>::infinity()
                   : std::numeric_limits<double>::infinity();
    if (!is_yaml_float(s) && !is_yaml_int(s)) return std::nullopt;
    if (s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) return std::nullopt;
    double v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range) {
        if (leading_exponent(s) >= 0) return std::nullopt;
        v = 0;
    } else if (ec != std::errc() || ptr != s.data() + s.size()) {
        return std::nullopt;
    }
    return neg ? -v : v;
}

} // namespace detail

const char* kind_name(Kind k) {
    switch (k) {
    case Kind::null:
        return "null";
    case Kind::boolean:
        return "boolean";
    case Kind::integer:
        return "integer";
    case Kind::floating:
        return "number";
    case Kind::string:
        return "string";
    case Kind::sequence:
        return "list";
    case Kind::mapping:
        return "object";
    }
    return "unknown";
}

const Node* Node::get(std::string_view key) const {
    const MapEntry* e = entry(key);
    return e != nullptr ? &e->value : nullptr;
}

Node* Node::get(std::string_view key) {
    return const_cast<Node*>(static_cast<const Node&>(*this).get(key));
}

const MapEntry* Node::entry(std::string_view key) const {
    if (kind != Kind::mapping) return nullptr;
    for (const MapEntry& e : fields)
        if (e.key == key) return &e;
    return nullptr;
}

const Node* Node::at_path(std::initializer_list<std::string_view> keys) const {
    const Node* cur = this;
    for (std::string_view k : keys) {
        cur = cur->get(k);
        if (cur == nullptr) return nullptr;
    }
    return cur;
}

std::string Node::text_at(std::initializer_list<std::string_view> keys) const {
    const Node* v = at_path(keys);
    return v != nullptr && v->is_scalar() && !v->is_null() ? v->text : std::string();
}

const Node* at_path(const Node* n, std::initializer_list<std::string_view> keys) {
    return n != nullptr ? n->at_path(keys) : nullptr;
}

std::optional<bool> Node::as_bool() const {
    if (kind != Kind::boolean) return std::nullopt;
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
    return std::nullopt;
}

std::optional<std::int64_t> Node::as_int() const {
    if (kind != Kind::integer) return std::nullopt;
    bool neg = false;
    int base = 10;
    std::string_view digits;
    if (!detail::split_int(text, neg, base, digits)) return std::nullopt;
    auto m = detail::magnitude(digits, base);
    if (!m) return std::nullopt;
    constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (neg) {
        if (*m > max + 1) return std::nullopt;
        if (*m == max + 1) return std::numeric_limits<std::int64_t>::min();
        return -static_cast<std::int64_t>(*m);
    }
    if (*m > max) return std::nullopt;
    return static_cast<std::int64_t>(*m);
}

std::optional<double> Node::as_double() const {
    if (kind == Kind::integer) {
        if (auto i = as_int()) return static_cast<double>(*i);
        // Decimal integers beyond 64 bits still have a (rounded) double value.
        return detail::parse_float(text);
    }
    if (kind != Kind::floating) return std::nullopt;
    return detail::parse_float(text);
}

Node Node::string(std::string s) {
    Node n;
    n.kind = Kind::string;
    n.text = std::move(s);
    return n;
}

Node Node::integer(std::int64_t v) {
    Node n;
    n.kind = Kind::integer;
    n.text = std::to_string(v);
    return n;
}

Node Node::boolean(bool v) {
    Node n;
    n.kind = Kind::boolean;
    n.text = v ? "true" : "false";
    return n;
}

Node Node::map() {
    Node n;
    n.kind = Kind::mapping;
    return n;
}

Node Node::seq() {
    Node n;
    n.kind = Kind::sequence;
    return n;
}

// set() and push() turn a node of another kind (typically a default-constructed null) into a
// mapping or sequence first.
Node& Node::set(std::string key, Node value) {
    if (kind != Kind::mapping) {
        *this = map();
    }
    for (MapEntry& e : fields) {
        if (e.key == key) {
            e.value = std::move(value);
            return e.value;
        }
    }
    fields.push_back(MapEntry{std::move(key), Mark{}, std::move(value)});
    return fields.back().value;
}

Node& Node::push(Node value) {
    if (kind != Kind::sequence) {
        *this = seq();
    }
    items.push_back(std::move(value));
    return items.back();
}

namespace {

bool scalar_equal(const Node& a, const Node& b) {
    switch (a.kind) {
    case Kind::null:
        return true;
    case Kind::boolean: {
        auto x = a.as_bool(), y = b.as_bool();
        if (x && y) return *x == *y;
        return a.text == b.text;
    }
    case Kind::integer: {
        if (a.text == b.text) return true;
        auto x = detail::decimal_integer(a.text), y = detail::decimal_integer(b.text);
        if (x && y) {
            // "-0" and "0" are the same integer.
            if ((*x == "-0" || *x == "0") && (*y == "-0" || *y == "0")) return true;
            return *x == *y;
        }
        return false;
    }
    case Kind::floating: {
        if (a.text == b.text) return true;
        auto x = a.as_double(), y = b.as_double();
        if (x && y) return (std::isnan(*x) && std::isnan(*y)) || *x == *y;
        return false;
    }
    case Kind::string:
        return a.text == b.text;
    default:
        return false;
    }
}

bool maps_equal(const Node& a, const Node& b) {
    const std::size_t n = a.fields.size();
    if (n != b.fields.size()) return false;
    // Usually the keys are in the same order; fall back to sorted views when they are not.
    std::size_t i = 0;
    for (; i < n; ++i) {
        if (a.fields[i].key != b.fields[i].key) break;
        if (!(a.fields[i].value == b.fields[i].value)) return false;
    }
    if (i == n) return true;
    std::vector<const MapEntry*> x, y;
    x.reserve(n - i);
    y.reserve(n - i);
    for (std::size_t j = i; j < n; ++j) {
        x.push_back(&a.fields[j]);
        y.push_back(&b.fields[j]);
    }
    auto by_key = [](const MapEntry* l, const MapEntry* r) { return l->key < r->key; };
    std::sort(x.begin(), x.end(), by_key);
    std::sort(y.begin(), y.end(), by_key);
    for (std::size_t j = 0; j < x.size(); ++j) {
        if (x[j]->key != y[j]->key) return false;
        if (!(x[j]->value == y[j]->value)) return false;
    }
    return true;
}

} // namespace

bool operator==(const Node& a, const Node& b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
    case Kind::sequence:
        if (a.items.size() != b.items.size()) return false;
        for (std::size_t i = 0; i < a.items.size(); ++i)
            if (!(a.items[i] == b.items[i])) return false;
        return true;
    case Kind::mapping:
        return maps_equal(a, b);
    default:
        return scalar_equal(a, b);
    }
}

SourcePos pos_of(const std::string& file, const Mark& mark, int doc) {
    SourcePos p;
    p.file = file;
    p.line = mark.line;
    p.column = mark.column;
    p.document = doc;
    return p;
}

} // namespace kpkg::io
