// A first batch of the Sprig functions Package Operator allows, with Sprig's (v3) semantics.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "kpkg/io/go.hpp"
#include "kpkg/template/funcs.hpp"
#include "kpkg/template/template.hpp"
#include "sprig_util.hpp"

namespace kpkg::tmpl {
namespace sprig {

// Sprig's strval: strings as they are, anything else as fmt's %v.
std::string strval(const Value& v) {
    return v.is_string() ? v.as_string() : go_string(v);
}

// A Go `int` parameter: text/template converts only integers to it.
std::int64_t arg_int(Args a, std::size_t i) {
    const Value& v = a[i];
    if (v.type() == Value::Type::integer) return v.as_int();
    if (v.is_nil()) throw ArgError("invalid value; expected int");
    throw ArgError(std::string("wrong type for value; expected int; got ") + v.go_type());
}

bool arg_bool(Args a, std::size_t i) {
    const Value& v = a[i];
    if (v.type() == Value::Type::boolean) return v.as_bool();
    if (v.is_nil()) throw ArgError("invalid value; expected bool");
    throw ArgError(std::string("wrong type for value; expected bool; got ") + v.go_type());
}

const Value& arg_dict(Args a, std::size_t i) {
    const Value& v = a[i];
    if (v.is_dict()) return v;
    if (v.is_nil()) throw ArgError("invalid value; expected map[string]interface {}");
    throw ArgError(std::string("wrong type for value; expected map[string]interface {}; got ") +
                   v.go_type());
}

std::int64_t float_to_int64(double f) {
    if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0)) return INT64_MIN; // NaN too
    return static_cast<std::int64_t>(f);
}

namespace {

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// Whether the underscores of a base-0 literal each sit between two digits (a base prefix counts
// as a digit), as Go's integer literal syntax has them.
bool underscores_ok(std::string_view s) {
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
    char saw = '^'; // '^' start, '0' digit or prefix, '_' underscore, '!' anything else
    std::size_t i = 0;
    bool hex = false;
    if (s.size() >= 2 && s[0] == '0' &&
        (lower(s[1]) == 'b' || lower(s[1]) == 'o' || lower(s[1]) == 'x')) {
        i = 2;
        saw = '0';
        hex = lower(s[1]) == 'x';
    }
    for (; i < s.size(); ++i) {
        const char c = s[i];
        if ((c >= '0' && c <= '9') || (hex && lower(c) >= 'a' && lower(c) <= 'f')) {
            saw = '0';
        } else if (c == '_') {
            if (saw != '0') return false;
            saw = '_';
        } else {
            if (saw == '_') return false;
            saw = '!';
        }
    }
    return saw != '_';
}

// cast's trimZeroDecimal: "12.000" reads as "12" (a '.' followed by zeros only, at least one).
std::string_view trim_zero_decimal(std::string_view s) {
    bool zero = false;
    for (std::size_t i = s.size(); i > 0; --i) {
        if (s[i - 1] == '.') {
            if (zero) return s.substr(0, i - 1);
        } else if (s[i - 1] == '0') {
            zero = true;
        } else {
            return s;
        }
    }
    return s;
}

} // namespace

ParsedInt parse_int(std::string_view s, int base) {
    using Err = ParsedInt::Err;
    if (s.empty()) return {0, Err::syntax};
    bool neg = false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    if (s.empty()) return {0, Err::syntax};
    const std::string_view digits_of = s; // what the underscore rule looks at
    const bool base0 = base == 0;
    if (base0) {
        base = 10;
        if (s[0] == '0') {
            const char p = s.size() >= 3 ? lower(s[1]) : '\0';
            base = p == 'b' ? 2 : p == 'o' ? 8 : p == 'x' ? 16 : 8;
            s.remove_prefix(base == 8 && p != 'o' ? 1 : 2);
        }
    }
    const auto b = static_cast<std::uint64_t>(base);
    const std::uint64_t cutoff = UINT64_MAX / b + 1; // the smallest n with n * base > UINT64_MAX
    std::uint64_t n = 0;
    bool underscores = false;
    bool range = false;
    for (const char c : s) {
        std::uint64_t d = 0;
        if (c == '_' && base0) {
            underscores = true;
            continue;
        }
        if (c >= '0' && c <= '9')
            d = static_cast<std::uint64_t>(c - '0');
        else if (lower(c) >= 'a' && lower(c) <= 'z')
            d = static_cast<std::uint64_t>(lower(c) - 'a' + 10);
        else
            return {0, Err::syntax};
        if (d >= b) return {0, Err::syntax};
        // strconv stops at the first digit that overflows: what follows it is not looked at.
        if (n >= cutoff || n * b + d < n * b) {
            range = true;
            break;
        }
        n = n * b + d;
    }
    if (!range && underscores && !underscores_ok(digits_of)) return {0, Err::syntax};
    constexpr std::uint64_t limit = std::uint64_t{1} << 63;
    if (range || (!neg && n >= limit) || (neg && n > limit))
        return {neg ? INT64_MIN : INT64_MAX, Err::range};
    return {neg ? static_cast<std::int64_t>(0 - n) : static_cast<std::int64_t>(n), Err::none};
}

// spf13/cast's ToInt64 as Sprig's arithmetic uses it: floats converted as Go converts them,
// strings read by strconv.ParseInt with Go's base prefixes once a zero fraction ("12.0") is cut
// off (0 when that fails, out of range included), booleans 1/0, nil 0.
std::int64_t to_int64(const Value& v) {
    switch (v.type()) {
    case Value::Type::integer:
        return v.as_int();
    case Value::Type::floating:
        return float_to_int64(v.as_float());
    case Value::Type::boolean:
        return v.as_bool() ? 1 : 0;
    case Value::Type::string: {
        const ParsedInt r = parse_int(trim_zero_decimal(v.as_string()), 0);
        return r.err == ParsedInt::Err::none ? r.value : 0;
    }
    default:
        return 0;
    }
}

namespace {

// Whether `s` starts with `word` (lower case), ignoring the case of s.
bool starts_folded(std::string_view s, std::string_view word) {
    if (s.size() < word.size()) return false;
    for (std::size_t i = 0; i < word.size(); ++i)
        if (lower(s[i]) != word[i]) return false;
    return true;
}

// Whether s is a float as strconv.ParseFloat reads it: the Go literal syntax (decimal, or
// hexadecimal with a 'p' exponent; '_' between digits), nothing before or after it.
bool go_float_syntax(std::string_view s) {
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    bool hex = false;
    if (i + 2 < s.size() && s[i] == '0' && lower(s[i + 1]) == 'x') {
        hex = true;
        i += 2;
    }
    bool dot = false, digits = false, underscores = false;
    for (; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '_') {
            underscores = true;
        } else if (c == '.' && !dot) {
            dot = true;
        } else if ((c >= '0' && c <= '9') || (hex && lower(c) >= 'a' && lower(c) <= 'f')) {
            digits = true;
        } else {
            break;
        }
    }
    if (!digits) return false;
    if (i < s.size() && lower(s[i]) == (hex ? 'p' : 'e')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
        for (; i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_'); ++i)
            underscores = underscores || s[i] == '_';
    } else if (hex) {
        return false; // a hexadecimal mantissa needs its exponent
    }
    return i == s.size() && (!underscores || underscores_ok(s));
}

// strconv.ParseFloat(s, 64) as cast's ToFloat64 uses it: nothing on any error (an overflow
// included: Go's ±Inf comes with an error there).
std::optional<double> go_parse_float(std::string_view s) {
    std::string_view t = s;
    const bool sign = !t.empty() && (t[0] == '+' || t[0] == '-');
    if (sign) t.remove_prefix(1);
    if (t.size() == 3 || t.size() == 8) { // inf, infinity (signed or not), nan (unsigned)
        const double inf = HUGE_VAL;
        if (starts_folded(t, t.size() == 3 ? "inf" : "infinity"))
            return sign && s[0] == '-' ? -inf : inf;
        if (!sign && t.size() == 3 && starts_folded(t, "nan")) return NAN;
    }
    if (!go_float_syntax(s)) return std::nullopt;
    std::string plain;
    for (const char c : s)
        if (c != '_') plain += c;
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(plain.c_str(), &end);
    if (end != plain.c_str() + plain.size() || (errno == ERANGE && std::isinf(v)))
        return std::nullopt;
    return v;
}

} // namespace

double to_float64(const Value& v) {
    switch (v.type()) {
    case Value::Type::integer:
        return static_cast<double>(v.as_int());
    case Value::Type::floating:
        return v.as_float();
    case Value::Type::boolean:
        return v.as_bool() ? 1 : 0;
    case Value::Type::string:
        return go_parse_float(v.as_string()).value_or(0);
    default:
        return 0;
    }
}

// Sprig's strslice: a list's non-nil items as strings; a scalar as a one-item list.
std::vector<std::string> strslice(const Value& v) {
    std::vector<std::string> out;
    if (v.is_list()) {
        for (const auto& i : v.items())
            if (!i.is_nil()) out.push_back(strval(i));
    } else if (!v.is_nil()) {
        out.push_back(strval(v));
    }
    return out;
}

bool is_space(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}

std::string trim_space(std::string_view s) {
    std::size_t b = 0, e = s.size();
    while (b < e && is_space(static_cast<unsigned char>(s[b])))
        ++b;
    while (e > b && is_space(static_cast<unsigned char>(s[e - 1])))
        --e;
    return std::string(s.substr(b, e - b));
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
    if (from.empty()) { // Go inserts `to` around every character (bytewise here)
        std::string out(to);
        for (char c : s) {
            out += c;
            out += to;
        }
        return out;
    }
    std::string out;
    std::size_t i = 0;
    for (;;) {
        std::size_t j = s.find(from, i);
        if (j == std::string::npos) break;
        out.append(s, i, j - i);
        out += to;
        i = j + from.size();
    }
    out.append(s, i);
    return out;
}

std::size_t max_list_items(const Context& c) {
    return static_cast<std::size_t>(std::min<std::uint64_t>(c.options().max_steps, kMaxListItems));
}

bool b64_decode(const std::string& in, std::string& out, std::size_t& at) {
    if (io::go::decode_base64(in, &out, at)) return true;
    if (at >= in.size()) { // ended early: Go names the start of the unfinished quantum
        std::size_t n = 0;
        for (char c : in)
            n += c != '\r' && c != '\n';
        std::size_t want = n / 4 * 4, seen = 0;
        at = in.size();
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i] == '\r' || in[i] == '\n') continue;
            if (seen++ == want) {
                at = i;
                break;
            }
        }
    }
    return false;
}

const List& list_arg(const Value& v, const char* fn) {
    if (!v.is_list())
        throw FuncError(std::string("Cannot find ") + fn + " on type " +
                        (v.is_nil()                      ? "<nil>"
                         : v.type() == Value::Type::dict ? "map"
                                                         : v.go_type()));
    return v.items();
}

Value str(std::string s) {
    return Value::string(std::move(s));
}

// encoding/json's Marshal of a Value (map keys sorted, HTML characters escaped).
void marshal(std::string& out, const Value& v, std::size_t depth, std::size_t max, bool html) {
    if (depth > kMaxNesting)
        throw FuncError("json: unsupported value: encountered a cycle via " +
                        std::string(v.go_type()));
    if (out.size() > max) throw FuncError("json: output exceeds " + std::to_string(max) + " bytes");
    switch (v.type()) {
    case Value::Type::nil:
        out += "null";
        return;
    case Value::Type::boolean:
        out += v.as_bool() ? "true" : "false";
        return;
    case Value::Type::integer:
        out += std::to_string(v.as_int());
        return;
    case Value::Type::floating:
        if (!std::isfinite(v.as_float()))
            throw FuncError("json: unsupported value: " + go_string(v));
        io::go::append_float(out, v.as_float());
        return;
    case Value::Type::string:
        io::go::append_string(out, v.as_string(), html);
        return;
    case Value::Type::list: {
        out += '[';
        bool first = true;
        for (const auto& i : v.items()) {
            if (!first) out += ',';
            first = false;
            marshal(out, i, depth + 1, max, html);
        }
        out += ']';
        return;
    }
    case Value::Type::dict: {
        out += '{';
        bool first = true;
        for (const auto& [k, x] : v.entries()) {
            if (!first) out += ',';
            first = false;
            io::go::append_string(out, k, html);
            out += ':';
            marshal(out, x, depth + 1, max, html);
        }
        out += '}';
        return;
    }
    }
}

std::string title(std::string_view s, bool upper) {
    std::string out(s);
    bool start = true;
    for (auto& ch : out) {
        auto c = static_cast<unsigned char>(ch);
        bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c >= 0x80;
        if (word && start) {
            if (upper && c >= 'a' && c <= 'z') ch = static_cast<char>(c - 32);
            if (!upper && c >= 'A' && c <= 'Z') ch = static_cast<char>(c + 32);
        }
        // strings.Title treats letters, digits, '_' and non-ASCII as part of a word; untitle
        // (Sprig's) starts a word after white space only.
        start = upper ? !word : is_space(c);
    }
    return out;
}

// reflect.Kind's name, as Sprig's kindOf spells it.
const char* kind_of(const Value& v) {
    switch (v.type()) {
    case Value::Type::nil:
        return "invalid";
    case Value::Type::list:
        return "slice";
    case Value::Type::dict:
        return "map";
    default:
        return v.go_type();
    }
}

} // namespace sprig

namespace {
using namespace sprig;
constexpr auto V = Func::kVariadic;
} // namespace

void add_sprig(Funcs& f) {
    // Strings
    f.add("trim", 1, 1, [](Context&, Args a) { return str(trim_space(arg_string(a, 0))); });
    f.add("trimAll", 2, 2, [](Context&, Args a) {
        const std::string& cut = arg_string(a, 0);
        std::string s = arg_string(a, 1);
        std::size_t b = s.find_first_not_of(cut);
        if (b == std::string::npos) return str("");
        std::size_t e = s.find_last_not_of(cut);
        return str(s.substr(b, e - b + 1));
    });
    f.add("trimPrefix", 2, 2, [](Context&, Args a) {
        const std::string &p = arg_string(a, 0), &s = arg_string(a, 1);
        return str(s.starts_with(p) ? s.substr(p.size()) : s);
    });
    f.add("trimSuffix", 2, 2, [](Context&, Args a) {
        const std::string &p = arg_string(a, 0), &s = arg_string(a, 1);
        return str(s.ends_with(p) ? s.substr(0, s.size() - p.size()) : s);
    });
    f.add("upper", 1, 1, [](Context&, Args a) {
        std::string s = arg_string(a, 0);
        for (auto& c : s)
            if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
        return str(s);
    });
    f.add("lower", 1, 1, [](Context&, Args a) {
        std::string s = arg_string(a, 0);
        for (auto& c : s)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
        return str(s);
    });
    f.add("title", 1, 1, [](Context&, Args a) { return str(title(arg_string(a, 0), true)); });
    f.add("untitle", 1, 1, [](Context&, Args a) { return str(title(arg_string(a, 0), false)); });
    f.add("replace", 3, 3, [](Context&, Args a) {
        return str(replace_all(arg_string(a, 2), arg_string(a, 0), arg_string(a, 1)));
    });
    f.add("contains", 2, 2, [](Context&, Args a) {
        return Value::boolean(arg_string(a, 1).find(arg_string(a, 0)) != std::string::npos);
    });
    f.add("hasPrefix", 2, 2, [](Context&, Args a) {
        return Value::boolean(arg_string(a, 1).starts_with(arg_string(a, 0)));
    });
    f.add("hasSuffix", 2, 2, [](Context&, Args a) {
        return Value::boolean(arg_string(a, 1).ends_with(arg_string(a, 0)));
    });
    f.add("quote", 0, V, [](Context&, Args a) {
        std::string out;
        for (const auto& v : a) {
            if (v.is_nil()) continue;
            if (!out.empty()) out += ' ';
            out += io::go::quote(strval(v));
        }
        return str(out);
    });
    f.add("squote", 0, V, [](Context&, Args a) {
        std::string out;
        for (const auto& v : a) {
            if (v.is_nil()) continue;
            if (!out.empty()) out += ' ';
            out += '\'';
            out += strval(v);
            out += '\'';
        }
        return str(out);
    });
    f.add("cat", 0, V, [](Context&, Args a) {
        std::string out;
        for (const auto& v : a) {
            if (v.is_nil()) continue;
            if (!out.empty()) out += ' ';
            out += strval(v);
        }
        return str(out);
    });
    auto indent = [](Context& c, Args a, bool newline) {
        std::int64_t n = arg_int(a, 0);
        const std::string& s = arg_string(a, 1);
        if (n < 0) throw FuncError("strings: negative Repeat count");
        std::size_t lines = static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')) + 1;
        const std::uint64_t max = c.options().max_output;
        if (static_cast<std::uint64_t>(n) > max / lines ||
            static_cast<std::uint64_t>(n) * lines + s.size() > max)
            throw FuncError("result exceeds " + std::to_string(max) + " bytes");
        std::string pad(static_cast<std::size_t>(n), ' ');
        return str((newline ? "\n" : "") + pad + replace_all(s, "\n", "\n" + pad));
    };
    f.add("indent", 2, 2, [indent](Context& c, Args a) { return indent(c, a, false); });
    f.add("nindent", 2, 2, [indent](Context& c, Args a) { return indent(c, a, true); });
    f.add("repeat", 2, 2, [](Context& c, Args a) {
        std::int64_t n = arg_int(a, 0);
        const std::string& s = arg_string(a, 1);
        if (n < 0) throw FuncError("strings: negative Repeat count");
        if (!s.empty() && static_cast<std::uint64_t>(n) > c.options().max_output / s.size())
            throw FuncError("result exceeds " + std::to_string(c.options().max_output) + " bytes");
        std::string out;
        out.reserve(s.size() * static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i)
            out += s;
        return str(out);
    });
    f.add("nospace", 1, 1, [](Context&, Args a) {
        std::string out;
        for (char c : arg_string(a, 0))
            if (!is_space(static_cast<unsigned char>(c))) out += c;
        return str(out);
    });
    f.add("trunc", 2, 2, [](Context&, Args a) {
        std::int64_t c = arg_int(a, 0);
        const std::string& s = arg_string(a, 1);
        auto n = static_cast<std::int64_t>(s.size());
        if (c < 0 && n + c > 0) return str(s.substr(static_cast<std::size_t>(n + c)));
        if (c >= 0 && n > c) return str(s.substr(0, static_cast<std::size_t>(c)));
        return str(s);
    });
    f.add("substr", 3, 3, [](Context&, Args a) {
        std::int64_t b = arg_int(a, 0), e = arg_int(a, 1);
        const std::string& s = arg_string(a, 2);
        auto n = static_cast<std::int64_t>(s.size());
        if (b < 0) b = 0, e = std::min(e, n);
        if (e < 0 || e > n) e = n;
        if (b > e)
            throw FuncError("runtime error: slice bounds out of range [" + std::to_string(b) + ":" +
                            std::to_string(e) + "]");
        return str(s.substr(static_cast<std::size_t>(b), static_cast<std::size_t>(e - b)));
    });
    f.add("toString", 1, 1, [](Context&, Args a) { return str(strval(a[0])); });
    f.add("join", 2, 2, [](Context&, Args a) {
        const std::string& sep = arg_string(a, 0);
        std::string out;
        bool first = true;
        for (const auto& s : strslice(a[1])) {
            if (!first) out += sep;
            first = false;
            out += s;
        }
        return str(out);
    });
    auto split = [](const std::string& sep, const std::string& s) {
        std::vector<std::string> parts;
        if (sep.empty()) {
            for (char c : s)
                parts.emplace_back(1, c);
            return parts;
        }
        std::size_t i = 0;
        for (;;) {
            std::size_t j = s.find(sep, i);
            if (j == std::string::npos) break;
            parts.push_back(s.substr(i, j - i));
            i = j + sep.size();
        }
        parts.push_back(s.substr(i));
        return parts;
    };
    f.add("splitList", 2, 2, [split](Context&, Args a) {
        List l;
        for (auto& p : split(arg_string(a, 0), arg_string(a, 1)))
            l.push_back(str(std::move(p)));
        return Value::list(std::move(l));
    });
    f.add("split", 2, 2, [split](Context&, Args a) {
        Dict d;
        std::size_t i = 0;
        for (auto& p : split(arg_string(a, 0), arg_string(a, 1))) {
            std::string key = "_";
            key += std::to_string(i++);
            d[std::move(key)] = str(std::move(p));
        }
        return Value::dict(std::move(d));
    });

    // Defaults
    f.add("default", 1, V, [](Context&, Args a) {
        if (a.size() < 2 || !a[1].truth()) return a[0];
        return a[1];
    });
    f.add("empty", 1, 1, [](Context&, Args a) { return Value::boolean(!a[0].truth()); });
    f.add("coalesce", 0, V, [](Context&, Args a) {
        for (const auto& v : a)
            if (v.truth()) return v;
        return Value();
    });
    f.add("ternary", 3, 3, [](Context&, Args a) { return arg_bool(a, 2) ? a[0] : a[1]; });
    f.add("toJson", 1, 1, [](Context& c, Args a) {
        std::string out;
        try {
            marshal(out, a[0], 0, c.options().max_output, true);
        } catch (const FuncError&) {
            out.clear(); // Sprig's toJson gives "" when encoding fails
        }
        return str(out);
    });
    f.add("fail", 1, 1, [](Context&, Args a) -> Value { throw FuncError(arg_string(a, 0)); });

    // Lists
    f.add("list", 0, V, [](Context&, Args a) { return Value::list(List(a.begin(), a.end())); });
    f.add("first", 1, 1, [](Context&, Args a) {
        const List& l = list_arg(a[0], "first");
        return l.empty() ? Value() : l.front();
    });
    f.add("last", 1, 1, [](Context&, Args a) {
        const List& l = list_arg(a[0], "last");
        return l.empty() ? Value() : l.back();
    });
    f.add("rest", 1, 1, [](Context&, Args a) {
        const List& l = list_arg(a[0], "rest");
        return l.empty() ? Value() : Value::list(List(l.begin() + 1, l.end()));
    });
    f.add("initial", 1, 1, [](Context&, Args a) {
        const List& l = list_arg(a[0], "initial");
        return l.empty() ? Value() : Value::list(List(l.begin(), l.end() - 1));
    });
    f.add("has", 2, 2, [](Context&, Args a) {
        if (a[1].is_nil()) return Value::boolean(false);
        const List& l = list_arg(a[1], "has");
        return Value::boolean(std::find(l.begin(), l.end(), a[0]) != l.end());
    });
    auto append = [](Context&, Args a) {
        List l = list_arg(a[0], "append");
        l.push_back(a[1]);
        return Value::list(std::move(l));
    };
    f.add("append", 2, 2, append);
    f.add("push", 2, 2, append);
    f.add("prepend", 2, 2, [](Context&, Args a) {
        List l = list_arg(a[0], "prepend");
        l.insert(l.begin(), a[1]);
        return Value::list(std::move(l));
    });
    f.add("reverse", 1, 1, [](Context&, Args a) {
        List l = list_arg(a[0], "reverse");
        std::reverse(l.begin(), l.end());
        return Value::list(std::move(l));
    });
    f.add("uniq", 1, 1, [](Context&, Args a) {
        List out;
        for (const auto& v : list_arg(a[0], "uniq"))
            if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
        return Value::list(std::move(out));
    });
    f.add("compact", 1, 1, [](Context&, Args a) {
        List out;
        for (const auto& v : list_arg(a[0], "compact"))
            if (v.truth()) out.push_back(v);
        return Value::list(std::move(out));
    });

    // Sprig's slice replaces text/template's: lists only, indexes converted as cast.ToInt does.
    f.add("slice", 1, V, [](Context&, Args a) {
        const Value& l = a[0];
        if (!l.is_list())
            throw FuncError(std::string("list should be type of slice or array but ") +
                            (l.is_nil()    ? "invalid"
                             : l.is_dict() ? "map"
                                           : l.go_type()));
        auto n = static_cast<std::int64_t>(l.items().size());
        if (n == 0) return Value();
        std::int64_t b = a.size() > 1 ? to_int64(a[1]) : 0;
        std::int64_t e = a.size() > 2 ? to_int64(a[2]) : n;
        if (b < 0 || e < b || e > n) throw FuncError("reflect: slice index out of range");
        return Value::list(List(l.items().begin() + b, l.items().begin() + e));
    });
    f.add("sortAlpha", 1, 1, [](Context&, Args a) {
        auto s = strslice(a[0]);
        std::sort(s.begin(), s.end());
        List out;
        for (auto& x : s)
            out.push_back(str(std::move(x)));
        return Value::list(std::move(out));
    });
    f.add("until", 1, 1, [](Context& c, Args a) {
        std::int64_t n = arg_int(a, 0);
        std::int64_t step = n < 0 ? -1 : 1;
        if (n > static_cast<std::int64_t>(max_list_items(c)) ||
            n < -static_cast<std::int64_t>(max_list_items(c)))
            throw FuncError("until: " + std::to_string(n) + " items is over the limit of " +
                            std::to_string(max_list_items(c)));
        List out;
        for (std::int64_t i = 0; i != n; i += step)
            out.push_back(Value::integer(i));
        return Value::list(std::move(out));
    });
    f.add("dig", 2, V, [](Context&, Args a) {
        // dig KEY... DEFAULT DICT: the value at the path of keys, or the default.
        Value cur = arg_dict(a, a.size() - 1);
        for (std::size_t i = 0; i + 2 < a.size(); ++i) {
            const std::string& k = arg_string(a, i);
            if (!cur.is_dict()) return a[a.size() - 2];
            auto it = cur.entries().find(k);
            if (it == cur.entries().end()) return a[a.size() - 2];
            Value next = it->second;
            cur = std::move(next);
        }
        return cur;
    });

    // Types
    f.add("typeOf", 1, 1, [](Context&, Args a) { return str(a[0].go_type()); });
    f.add("kindOf", 1, 1, [](Context&, Args a) { return str(kind_of(a[0])); });
    f.add("typeIs", 2, 2,
          [](Context&, Args a) { return Value::boolean(arg_string(a, 0) == a[1].go_type()); });
    f.add("kindIs", 2, 2,
          [](Context&, Args a) { return Value::boolean(arg_string(a, 0) == kind_of(a[1])); });
    f.add("deepEqual", 2, 2, [](Context&, Args a) { return Value::boolean(a[0] == a[1]); });

    // Dicts (maps are shared: set and unset change the map they are given, as in Go)
    f.add("dict", 0, V, [](Context&, Args a) {
        Dict d;
        for (std::size_t i = 0; i < a.size(); i += 2)
            d.insert_or_assign(strval(a[i]), i + 1 < a.size() ? a[i + 1] : str(""));
        return Value::dict(std::move(d));
    });
    f.add("get", 2, 2, [](Context&, Args a) {
        const Dict& d = arg_dict(a, 0).entries();
        auto it = d.find(arg_string(a, 1));
        return it == d.end() ? str("") : it->second;
    });
    f.add("set", 3, 3, [](Context&, Args a) {
        const Value& d = arg_dict(a, 0);
        d.entries().insert_or_assign(arg_string(a, 1), a[2]);
        return d;
    });
    f.add("unset", 2, 2, [](Context&, Args a) {
        const Value& d = arg_dict(a, 0);
        auto it = d.entries().find(arg_string(a, 1));
        if (it != d.entries().end()) d.entries().erase(it);
        return d;
    });
    f.add("hasKey", 2, 2, [](Context&, Args a) {
        const Dict& d = arg_dict(a, 0).entries();
        return Value::boolean(d.find(arg_string(a, 1)) != d.end());
    });
    f.add("keys", 0, V, [](Context&, Args a) {
        List out;
        for (std::size_t i = 0; i < a.size(); ++i)
            for (const auto& [k, _] : arg_dict(a, i).entries())
                out.push_back(str(k));
        return Value::list(std::move(out));
    });
    f.add("values", 1, 1, [](Context&, Args a) {
        List out;
        for (const auto& [_, v] : arg_dict(a, 0).entries())
            out.push_back(v);
        return Value::list(std::move(out));
    });
    f.add("pick", 1, V, [](Context&, Args a) {
        const Dict& d = arg_dict(a, 0).entries();
        Dict out;
        for (std::size_t i = 1; i < a.size(); ++i) {
            auto it = d.find(arg_string(a, i));
            if (it != d.end()) out.insert_or_assign(it->first, it->second);
        }
        return Value::dict(std::move(out));
    });
    f.add("omit", 1, V, [](Context&, Args a) {
        Dict out = arg_dict(a, 0).entries();
        for (std::size_t i = 1; i < a.size(); ++i) {
            auto it = out.find(arg_string(a, i));
            if (it != out.end()) out.erase(it);
        }
        return Value::dict(std::move(out));
    });

    // Encoding
    f.add("b64enc", 1, 1, [](Context&, Args a) {
        std::string out;
        io::go::append_base64(out, arg_string(a, 0));
        return str(out);
    });
    f.add("b64dec", 1, 1, [](Context&, Args a) {
        // Sprig returns the decoder's error text as the result.
        std::string out;
        std::size_t at = 0;
        if (!b64_decode(arg_string(a, 0), out, at))
            return str("illegal base64 data at input byte " + std::to_string(at));
        return str(out);
    });

    // Numbers (Sprig's arithmetic works on int64; the results are ints here)
    f.add("add", 0, V, [](Context&, Args a) {
        std::int64_t s = 0;
        for (const auto& v : a)
            s = wrap_add(s, to_int64(v));
        return Value::integer(s);
    });
    f.add("add1", 1, 1,
          [](Context&, Args a) { return Value::integer(wrap_add(to_int64(a[0]), 1)); });
    f.add("sub", 2, 2, [](Context&, Args a) {
        return Value::integer(wrap_sub(to_int64(a[0]), to_int64(a[1])));
    });
    f.add("mul", 1, V, [](Context&, Args a) {
        std::int64_t p = to_int64(a[0]);
        for (std::size_t i = 1; i < a.size(); ++i)
            p = wrap_mul(p, to_int64(a[i]));
        return Value::integer(p);
    });
    f.add("div", 2, 2, [](Context&, Args a) {
        std::int64_t d = to_int64(a[1]);
        if (d == 0) throw FuncError("runtime error: integer divide by zero");
        return Value::integer(wrap_div(to_int64(a[0]), d));
    });
    f.add("mod", 2, 2, [](Context&, Args a) {
        std::int64_t d = to_int64(a[1]);
        if (d == 0) throw FuncError("runtime error: integer divide by zero");
        return Value::integer(wrap_mod(to_int64(a[0]), d));
    });
    f.add("max", 1, V, [](Context&, Args a) {
        std::int64_t m = to_int64(a[0]);
        for (std::size_t i = 1; i < a.size(); ++i)
            m = std::max(m, to_int64(a[i]));
        return Value::integer(m);
    });
    f.add("min", 1, V, [](Context&, Args a) {
        std::int64_t m = to_int64(a[0]);
        for (std::size_t i = 1; i < a.size(); ++i)
            m = std::min(m, to_int64(a[i]));
        return Value::integer(m);
    });
    f.add("int", 1, 1, [](Context&, Args a) { return Value::integer(to_int64(a[0])); });
    f.add("int64", 1, 1, [](Context&, Args a) { return Value::integer(to_int64(a[0])); });
    f.add("float64", 1, 1, [](Context&, Args a) { return Value::floating(to_float64(a[0])); });
    f.add("atoi", 1, 1, [](Context&, Args a) {
        // strconv.Atoi with its error dropped: 0 for text that is no number, and the nearest
        // bound for one out of int64's range.
        return Value::integer(parse_int(arg_string(a, 0), 10).value);
    });
    add_sprig_more(f);
}

void add_include(Funcs& f) {
    f.add("include", 2, 2, [](Context& c, Args a) { return str(c.run(arg_string(a, 0), a[1])); });
}

} // namespace kpkg::tmpl
