// kpkg bundle render: the olm.bundle blob of a bundle directory, byte for byte as opm writes it.
//
// opm reads YAML through sigs.k8s.io/yaml (gopkg.in/yaml.v2 typing, then encoding/json) and
// Kubernetes' unstructured decoding, and writes with encoding/json (and, for -o yaml, back
// through yaml.v2). To produce the same bytes, this file re-implements the parts of those
// libraries that show in the output, from their documented behaviour:
// - how yaml.v2 types a plain scalar (YAML 1.1 booleans, base-0 integers, timestamps kept as
//   strings), and how Go then prints it as JSON (integers as int64, other numbers as float64);
// - encoding/json's string escaping (with and without HTML escaping), key order and
//   indentation, including re-indenting raw property values without touching their bytes;
// - yaml.v2's emitter for -o yaml: key order, scalar styles, 80-column folding.
// Property values are kept as compact JSON bytes (RawProperty), since opm sorts on those bytes.
#include "kpkg/bundle/render.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "kpkg/core/text.hpp"
#include "kpkg/io/go_json.hpp"
#include "kpkg/io/json_reader.hpp" // io::detail::utf8_decode
#include "kpkg/io/load.hpp"

namespace kpkg::bundle {
namespace {

// ------------------------------------------------------------------------------------------------
// Scalars as gopkg.in/yaml.v2 types them

enum class GoType : std::uint8_t { null, boolean, int64, uint64, float64, string, timestamp };

struct GoScalar {
    GoType type = GoType::string;
    bool b = false;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double f = 0;
};

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equal_fold(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

// strconv.ParseUint(s, 0, 64) without underscores: "0x", "0o", "0b" prefixes, a leading "0"
// for octal, no sign.
std::optional<std::uint64_t> parse_go_uint(std::string_view s) {
    if (s.empty()) return std::nullopt;
    unsigned base = 10;
    if (s[0] == '0') {
        if (s.size() >= 3 && ascii_lower(s[1]) == 'b') {
            base = 2;
            s.remove_prefix(2);
        } else if (s.size() >= 3 && ascii_lower(s[1]) == 'o') {
            base = 8;
            s.remove_prefix(2);
        } else if (s.size() >= 3 && ascii_lower(s[1]) == 'x') {
            base = 16;
            s.remove_prefix(2);
        } else {
            base = 8;
            s.remove_prefix(1);
        }
    }
    std::uint64_t n = 0;
    for (char c : s) {
        unsigned d = 0;
        if (is_digit(c))
            d = static_cast<unsigned>(c - '0');
        else if (ascii_lower(c) >= 'a' && ascii_lower(c) <= 'z')
            d = static_cast<unsigned>(ascii_lower(c) - 'a' + 10);
        else
            return std::nullopt;
        if (d >= base) return std::nullopt;
        if (n > (UINT64_MAX - d) / base) return std::nullopt;
        n = n * base + d;
    }
    return n;
}

// strconv.ParseInt(s, base, 64) for base 0 (prefixes) or 10.
std::optional<std::int64_t> parse_go_int(std::string_view s, bool base0) {
    if (s.empty()) return std::nullopt;
    bool neg = false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    std::optional<std::uint64_t> u;
    if (base0) {
        u = parse_go_uint(s);
    } else {
        if (s.empty()) return std::nullopt;
        std::uint64_t n = 0;
        for (char c : s) {
            if (!is_digit(c)) return std::nullopt;
            const auto d = static_cast<unsigned>(c - '0');
            if (n > (UINT64_MAX - d) / 10) return std::nullopt;
            n = n * 10 + d;
        }
        u = n;
    }
    if (!u) return std::nullopt;
    constexpr std::uint64_t limit = std::uint64_t{1} << 63;
    if (!neg && *u >= limit) return std::nullopt;
    if (neg && *u > limit) return std::nullopt;
    if (neg) return *u == limit ? INT64_MIN : -static_cast<std::int64_t>(*u);
    return static_cast<std::int64_t>(*u);
}

// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`, yaml.v2's float syntax.
bool is_yaml_style_float(std::string_view s) {
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

// strconv.ParseFloat for decimal text: an overflow is an error (Go returns ±Inf with ErrRange),
// an underflow is not.
std::optional<double> parse_go_float(std::string_view s) {
    std::string buf(s);
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(buf.c_str(), &end);
    if (end != buf.c_str() + buf.size() || buf.empty()) return std::nullopt;
    if (errno == ERANGE && std::isinf(v)) return std::nullopt;
    return v;
}

int days_in_month(int month, int year) {
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0))) return 29;
    return days[month - 1];
}

// Whether yaml.v2 reads a plain scalar as a timestamp: Go's time.Parse with one of
// "2006-1-2T15:4:5.999999999Z07:00" (also with "t"), "2006-1-2 15:4:5.999999999", "2006-1-2".
bool is_yaml_timestamp(std::string_view s) {
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

// yaml.v2's resolve() for an untagged plain scalar.
GoScalar resolve_plain_v2(std::string_view in) {
    GoScalar r;
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
    static const std::string_view trues[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                             "True", "TRUE", "on",  "On",  "ON"};
    static const std::string_view falses[] = {"n",     "N",     "no",  "No",  "NO", "false",
                                              "False", "FALSE", "off", "Off", "OFF"};
    static const std::string_view nulls[] = {"", "~", "null", "Null", "NULL"};
    for (auto w : trues)
        if (in == w) {
            r.type = GoType::boolean;
            r.b = true;
            return r;
        }
    for (auto w : falses)
        if (in == w) {
            r.type = GoType::boolean;
            return r;
        }
    for (auto w : nulls)
        if (in == w) {
            r.type = GoType::null;
            return r;
        }
    static const std::string_view nans[] = {".nan", ".NaN", ".NAN"};
    static const std::string_view infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"};
    static const std::string_view ninfs[] = {"-.inf", "-.Inf", "-.INF"};
    for (auto w : nans)
        if (in == w) {
            r.type = GoType::float64;
            r.f = std::nan("");
            return r;
        }
    for (auto w : infs)
        if (in == w) {
            r.type = GoType::float64;
            r.f = HUGE_VAL;
            return r;
        }
    for (auto w : ninfs)
        if (in == w) {
            r.type = GoType::float64;
            r.f = -HUGE_VAL;
            return r;
        }
    if (hint == 'M') return r;
    if (hint == '.') {
        if (is_yaml_style_float(in)) {
            if (auto f = parse_go_float(in)) {
                r.type = GoType::float64;
                r.f = *f;
            }
        }
        return r;
    }
    if (is_yaml_timestamp(in)) {
        r.type = GoType::timestamp;
        return r;
    }
    std::string plain;
    plain.reserve(in.size());
    for (char c : in)
        if (c != '_') plain += c;
    if (auto i = parse_go_int(plain, true)) {
        r.type = GoType::int64;
        r.i = *i;
        return r;
    }
    if (plain[0] != '+' && plain[0] != '-') {
        if (auto u = parse_go_uint(plain)) {
            r.type = GoType::uint64;
            r.u = *u;
            return r;
        }
    }
    if (is_yaml_style_float(plain)) {
        if (auto f = parse_go_float(plain)) {
            r.type = GoType::float64;
            r.f = *f;
        }
    }
    return r;
}

// The Go value a scalar node holds once opm has it: plain YAML scalars typed by yaml.v2, JSON
// and tagged scalars by their kind.
GoScalar go_scalar(const io::Node& n) {
    if (n.plain) return resolve_plain_v2(n.text);
    GoScalar r;
    switch (n.kind) {
    case io::Kind::null:
        r.type = GoType::null;
        return r;
    case io::Kind::boolean:
        r.type = GoType::boolean;
        r.b = n.as_bool().value_or(false);
        return r;
    case io::Kind::integer:
    case io::Kind::floating:
        if (auto i = parse_go_int(n.text, false)) {
            r.type = GoType::int64;
            r.i = *i;
            return r;
        }
        if (is_yaml_style_float(n.text)) {
            if (auto f = parse_go_float(n.text)) {
                r.type = GoType::float64;
                r.f = *f;
                return r;
            }
        }
        return resolve_plain_v2(n.text); // a YAML-only literal behind an explicit tag
    default:
        return r;
    }
}

// ------------------------------------------------------------------------------------------------
// Go number formatting

// strconv.FormatFloat(v, 'g', -1, 64): shortest digits, %e when the exponent is below -4 or
// at least 6 (yaml.v2 writes floats so).
std::string go_format_g(double v) {
    if (std::isnan(v)) return ".nan";
    if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));
    const std::size_t e = sci.find('e');
    int exp = 0;
    std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp);
    if (v == 0) exp = 0;
    if (exp < -4 || exp >= 6) return std::string(sci);
    std::string out;
    io::go::append_fixed(out, v);
    return out;
}

// ------------------------------------------------------------------------------------------------
// json.Marshal of a decoded object

// Writes a node as Go marshals the value opm decoded from it. Keys are sorted per mapping with a
// shared scratch stack, so deep documents do not allocate a vector per mapping.
class GoMarshal {
public:
    GoMarshal(std::string& out, bool escape_html) : out_(out), html_(escape_html) {}

    bool value(const io::Node& n) {
        switch (n.kind) {
        case io::Kind::sequence:
            if (n.items.empty()) {
                out_ += "[]";
                return true;
            }
            out_ += '[';
            for (std::size_t i = 0; i < n.items.size(); ++i) {
                if (i > 0) out_ += ',';
                if (!value(n.items[i])) return false;
                if (base64_ != nullptr && out_.size() >= kChunk) flush_base64();
            }
            out_ += ']';
            return true;
        case io::Kind::mapping:
            return mapping(n);
        case io::Kind::string:
            if (!n.plain) {
                io::go::append_string(out_, n.text, html_);
                return true;
            }
            [[fallthrough]];
        default:
            return scalar(n);
        }
    }

    // Keys in document order (a JSON file's raw bytes keep their order).
    bool keep_order = false;

    // Streams the output as base64 into `dest` instead of keeping it: whole 3-byte groups move
    // from the output buffer to `dest` whenever it holds kChunk bytes, so the JSON of a large
    // object never exists whole (fewer fresh pages, which cost more than the encoding).
    void stream_base64_to(std::string* dest) { base64_ = dest; }
    // Encodes what is left (with padding); call once the value is written.
    void finish_base64() {
        if (base64_ == nullptr) return;
        io::go::append_base64(*base64_, out_);
        out_.clear();
    }

private:
    static constexpr std::size_t kChunk = 48 * 1024;

    void flush_base64() {
        const std::size_t n = out_.size() / 3 * 3;
        io::go::append_base64(*base64_, std::string_view(out_).substr(0, n));
        out_.erase(0, n);
    }

    bool mapping(const io::Node& n) {
        if (n.fields.empty()) {
            out_ += "{}";
            return true;
        }
        const std::size_t base = scratch_.size();
        for (const auto& e : n.fields)
            scratch_.push_back(&e);
        if (!keep_order)
            std::sort(scratch_.begin() + static_cast<std::ptrdiff_t>(base), scratch_.end(),
                      [](const io::MapEntry* a, const io::MapEntry* b) { return a->key < b->key; });
        out_ += '{';
        bool ok = true;
        for (std::size_t i = base; i < base + n.fields.size(); ++i) {
            if (i > base) out_ += ',';
            const io::MapEntry* e = scratch_[i];
            io::go::append_string(out_, e->key, html_);
            out_ += ':';
            if (!value(e->value)) {
                ok = false;
                break;
            }
            if (base64_ != nullptr && out_.size() >= kChunk) flush_base64();
        }
        scratch_.resize(base);
        out_ += '}';
        return ok;
    }

    bool scalar(const io::Node& n) {
        if (keep_order && !n.plain &&
            (n.kind == io::Kind::integer || n.kind == io::Kind::floating)) {
            out_ += n.text; // json.RawMessage bytes of a JSON file
            return true;
        }
        const GoScalar s = go_scalar(n);
        switch (s.type) {
        case GoType::null:
            out_ += "null";
            return true;
        case GoType::boolean:
            out_ += s.b ? "true" : "false";
            return true;
        case GoType::int64: {
            char buf[24];
            auto r = std::to_chars(buf, buf + sizeof buf, s.i);
            out_.append(buf, r.ptr);
            return true;
        }
        case GoType::uint64: // beyond int64: unstructured decoding makes it a float64
            io::go::append_float(out_, static_cast<double>(s.u));
            return true;
        case GoType::float64:
            if (!std::isfinite(s.f)) return false;
            io::go::append_float(out_, s.f);
            return true;
        case GoType::string:
        case GoType::timestamp:
            io::go::append_string(out_, n.text, html_);
            return true;
        }
        return true;
    }

    std::string& out_;
    bool html_;
    std::string* base64_ = nullptr;
    std::vector<const io::MapEntry*> scratch_;
};

// ------------------------------------------------------------------------------------------------
// Raw JSON bytes: compacting and re-indenting as encoding/json does

// The end of the JSON string starting at s[i] == '"' (one past the closing quote), or npos.
// memchr finds the candidates, so long strings (base64 data) are skipped at memory speed.
std::size_t skip_string(std::string_view s, std::size_t i) {
    const char* p = s.data() + i + 1;
    const char* const end = s.data() + s.size();
    while (p < end) {
        const auto* quote =
            static_cast<const char*>(std::memchr(p, '"', static_cast<std::size_t>(end - p)));
        if (quote == nullptr) return std::string_view::npos;
        const auto* bs =
            static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(quote - p)));
        if (bs == nullptr) return static_cast<std::size_t>(quote + 1 - s.data());
        p = bs + 2; // past the escaped character
    }
    return std::string_view::npos;
}

bool is_json_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// json.Compact: the bytes without insignificant whitespace.
std::string compact_json(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const char c = s[i];
        if (c == '"') {
            std::size_t e = skip_string(s, i);
            if (e == std::string_view::npos) e = s.size();
            out.append(s.substr(i, e - i));
            i = e;
        } else {
            if (!is_json_space(c)) out += c;
            ++i;
        }
    }
    return out;
}

// Where the JSON writer puts its bytes: a string, or pieces handed to a sink.
struct StringOut {
    std::string& s;
    void put(char c) { s += c; }
    void put(std::string_view v) { s.append(v); }
    void spaces(std::size_t n) { s.append(n, ' '); }
};

// Collects small pieces up to 64 KiB and hands long ones (base64 data) to the sink as they are,
// so a large blob is never held whole.
class SinkOut {
public:
    explicit SinkOut(const std::function<void(std::string_view)>& sink) : sink_(sink) {
        buf_.reserve(kSize + 1024);
    }
    void put(char c) {
        buf_ += c;
        if (buf_.size() >= kSize) flush();
    }
    void put(std::string_view v) {
        if (v.size() >= kSize / 4) {
            flush();
            sink_(v);
            return;
        }
        buf_.append(v);
        if (buf_.size() >= kSize) flush();
    }
    void spaces(std::size_t n) {
        buf_.append(n, ' ');
        if (buf_.size() >= kSize) flush();
    }
    void flush() {
        if (buf_.empty()) return;
        sink_(buf_);
        buf_.clear();
    }

private:
    static constexpr std::size_t kSize = 64 * 1024;
    const std::function<void(std::string_view)>& sink_;
    std::string buf_;
};

template <class Out>
void newline(Out& out, int depth) {
    out.put('\n');
    out.spaces(static_cast<std::size_t>(depth) * 4);
}

// json.Indent with four spaces, for a value that starts at `depth`.
template <class Out>
void append_indented(Out& out, std::string_view s, int depth) {
    bool need_indent = false;
    for (std::size_t i = 0; i < s.size();) {
        const char c = s[i];
        if (is_json_space(c)) {
            ++i;
            continue;
        }
        if (need_indent && c != ']' && c != '}') {
            need_indent = false;
            ++depth;
            newline(out, depth);
        }
        switch (c) {
        case '"': {
            std::size_t e = skip_string(s, i);
            if (e == std::string_view::npos) e = s.size();
            out.put(s.substr(i, e - i));
            i = e;
            continue;
        }
        case '{':
        case '[':
            out.put(c);
            need_indent = true;
            break;
        case ',':
            out.put(c);
            newline(out, depth);
            break;
        case ':':
            out.put(std::string_view(": "));
            break;
        case '}':
        case ']':
            if (need_indent) {
                need_indent = false;
            } else {
                --depth;
                newline(out, depth);
            }
            out.put(c);
            break;
        default:
            out.put(c);
        }
        ++i;
    }
}

// The end of the JSON value starting at s[i] (after whitespace), or npos when it is not one.
std::size_t skip_value(std::string_view s, std::size_t i, int depth = 0) {
    if (depth > 512) return std::string_view::npos;
    while (i < s.size() && is_json_space(s[i]))
        ++i;
    if (i >= s.size()) return std::string_view::npos;
    const char c = s[i];
    if (c == '"') return skip_string(s, i);
    if (c == '{' || c == '[') {
        const char close = c == '{' ? '}' : ']';
        ++i;
        bool first = true;
        for (;;) {
            while (i < s.size() && is_json_space(s[i]))
                ++i;
            if (i >= s.size()) return std::string_view::npos;
            if (s[i] == close) return i + 1;
            if (!first) {
                if (s[i] != ',') return std::string_view::npos;
                ++i;
            }
            first = false;
            if (c == '{') {
                while (i < s.size() && is_json_space(s[i]))
                    ++i;
                if (i >= s.size() || s[i] != '"') return std::string_view::npos;
                i = skip_string(s, i);
                if (i == std::string_view::npos) return i;
                while (i < s.size() && is_json_space(s[i]))
                    ++i;
                if (i >= s.size() || s[i] != ':') return std::string_view::npos;
                ++i;
            }
            i = skip_value(s, i, depth + 1);
            if (i == std::string_view::npos) return i;
        }
    }
    const std::size_t start = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '-' ||
                            s[i] == '+' || s[i] == '.'))
        ++i;
    const std::string_view word = s.substr(start, i - start);
    if (word == "true" || word == "false" || word == "null") return i;
    if (!word.empty() && (word[0] == '-' || is_digit(word[0]))) return i;
    return std::string_view::npos;
}

// ------------------------------------------------------------------------------------------------
// Reading the objects as Go's typed decoding would

Failure invalid(std::string msg, SourcePos pos = {}) {
    return fail(Error::invalid(std::move(msg), std::move(pos)));
}

// The value of the last field whose key matches `name` ignoring ASCII case, as encoding/json
// fills a struct field; nullptr when absent or when `obj` is not a mapping.
const io::Node* field(const io::Node* obj, std::string_view name) {
    if (obj == nullptr || !obj->is_map()) return nullptr;
    const io::Node* found = nullptr;
    for (const auto& e : obj->fields)
        if (equal_fold(e.key, name)) found = &e.value;
    return found;
}

// The value under an exact key (a Go map lookup).
const io::Node* exact(const io::Node* obj, std::string_view name) {
    if (obj == nullptr || !obj->is_map()) return nullptr;
    return obj->get(name);
}

bool is_null(const io::Node* n) {
    return n == nullptr || (n->is_scalar() && go_scalar(*n).type == GoType::null);
}

struct Reader {
    std::string file; // for error positions
    std::string what; // "ClusterServiceVersion", "metadata/dependencies.yaml", ...

    SourcePos pos(const io::Node* n) const {
        return n != nullptr ? io::pos_of(file, n->mark) : io::pos_of(file, {});
    }

    // A Go string field: absent or null is "", a string (or timestamp) is its text.
    Result<std::string> str(const io::Node* n, std::string_view label) const {
        if (is_null(n)) return std::string();
        if (n->is_scalar()) {
            const GoType t = go_scalar(*n).type;
            if (t == GoType::string || t == GoType::timestamp) return n->text;
        }
        return invalid(label_msg(label, "must be a string, not " + type_name(*n)), pos(n));
    }

    std::string label_msg(std::string_view label, const std::string& rest) const {
        return what + " " + std::string(label) + " " + rest;
    }

    static std::string type_name(const io::Node& n) {
        if (n.is_map()) return "an object";
        if (n.is_seq()) return "a list";
        switch (go_scalar(n).type) {
        case GoType::boolean:
            return "a boolean";
        case GoType::null:
            return "null";
        case GoType::string:
        case GoType::timestamp:
            return "a string";
        default:
            return "a number";
        }
    }

    // A list field: absent or null is empty.
    Result<const std::vector<io::Node>*> list(const io::Node* n, std::string_view label) const {
        static const std::vector<io::Node> none;
        if (is_null(n)) return &none;
        if (!n->is_seq())
            return invalid(label_msg(label, "must be a list, not " + type_name(*n)), pos(n));
        return &n->items;
    }

    Result<bool> object_or_null(const io::Node* n, std::string_view label) const {
        if (is_null(n)) return false;
        if (!n->is_map())
            return invalid(label_msg(label, "must be an object, not " + type_name(*n)), pos(n));
        return true;
    }
};

// ------------------------------------------------------------------------------------------------
// olm.csv.metadata (operator-registry property.CSVMetadata over operator-framework/api types)

class CsvMetadataWriter {
public:
    explicit CsvMetadataWriter(Reader r) : r_(std::move(r)) {}

    Result<std::string> build(const io::Node& csv) {
        const io::Node* meta = field(&csv, "metadata");
        const io::Node* spec = field(&csv, "spec");
        KPKG_TRY(r_.object_or_null(meta, "metadata"));
        KPKG_TRY(r_.object_or_null(spec, "spec"));
        out_ = "{";
        first_ = true;
        KPKG_TRY(string_map("annotations", field(meta, "annotations")));
        KPKG_TRY(definitions("apiServiceDefinitions", field(spec, "apiservicedefinitions"), true));
        KPKG_TRY(definitions("crdDescriptions", field(spec, "customresourcedefinitions"), false));
        KPKG_TRY(opt_string("description", field(spec, "description")));
        KPKG_TRY(opt_string("displayName", field(spec, "displayName")));
        KPKG_TRY(install_modes(field(spec, "installModes")));
        KPKG_TRY(string_list("keywords", field(spec, "keywords")));
        KPKG_TRY(string_map("labels", field(meta, "labels")));
        KPKG_TRY(links("links", field(spec, "links"), "name", "url"));
        KPKG_TRY(links("maintainers", field(spec, "maintainers"), "name", "email"));
        KPKG_TRY(opt_string("maturity", field(spec, "maturity")));
        KPKG_TRY(opt_string("minKubeVersion", field(spec, "minKubeVersion")));
        KPKG_TRY(native_apis(field(spec, "nativeAPIs")));
        key("provider");
        KPKG_TRY(link_object(field(spec, "provider"), "provider", "name", "url"));
        out_ += '}';
        return std::move(out_);
    }

private:
    void key(std::string_view k) {
        if (!first_) out_ += ',';
        first_ = false;
        io::go::append_string(out_, k, false);
        out_ += ':';
    }

    // Writes `"k":"v"` into `dst` (starting a member list) unless v is empty (omitempty).
    static void member(std::string& dst, bool& first, std::string_view k, const std::string& v,
                       bool always = false) {
        if (v.empty() && !always) return;
        if (!first) dst += ',';
        first = false;
        io::go::append_string(dst, k, false);
        dst += ':';
        io::go::append_string(dst, v, false);
    }

    Result<bool> opt_string(std::string_view k, const io::Node* n) {
        std::string v = KPKG_TRY(r_.str(n, "spec." + std::string(k)));
        if (!v.empty()) {
            key(k);
            io::go::append_string(out_, v, false);
        }
        return true;
    }

    Result<bool> string_list(std::string_view k, const io::Node* n) {
        const auto* items = KPKG_TRY(r_.list(n, "spec." + std::string(k)));
        if (items->empty()) return true;
        key(k);
        out_ += '[';
        for (std::size_t i = 0; i < items->size(); ++i) {
            if (i > 0) out_ += ',';
            io::go::append_string(out_, KPKG_TRY(r_.str(&(*items)[i], k)), false);
        }
        out_ += ']';
        return true;
    }

    Result<bool> string_map(std::string_view k, const io::Node* n) {
        if (!KPKG_TRY(r_.object_or_null(n, "metadata." + std::string(k)))) return true;
        if (n->fields.empty()) return true;
        std::vector<std::pair<std::string_view, std::string>> entries;
        for (const auto& e : n->fields)
            entries.emplace_back(
                e.key, KPKG_TRY(r_.str(&e.value, "metadata." + std::string(k) + "." + e.key)));
        std::sort(entries.begin(), entries.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        key(k);
        out_ += '{';
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (i > 0) out_ += ',';
            io::go::append_string(out_, entries[i].first, false);
            out_ += ':';
            io::go::append_string(out_, entries[i].second, false);
        }
        out_ += '}';
        return true;
    }

    Result<bool> install_modes(const io::Node* n) {
        const auto* items = KPKG_TRY(r_.list(n, "spec.installModes"));
        if (items->empty()) return true;
        key("installModes");
        out_ += '[';
        for (std::size_t i = 0; i < items->size(); ++i) {
            const io::Node& m = (*items)[i];
            KPKG_TRY(r_.object_or_null(&m, "spec.installModes[]"));
            if (i > 0) out_ += ',';
            out_ += "{\"type\":";
            io::go::append_string(out_, KPKG_TRY(r_.str(field(&m, "type"), "installModes[].type")),
                                  false);
            out_ += ",\"supported\":";
            const io::Node* s = field(&m, "supported");
            bool supported = false;
            if (!is_null(s)) {
                const GoScalar g = s->is_scalar() ? go_scalar(*s) : GoScalar{};
                if (!s->is_scalar() || g.type != GoType::boolean)
                    return invalid("ClusterServiceVersion spec.installModes[].supported must be a "
                                   "boolean",
                                   r_.pos(s));
                supported = g.b;
            }
            out_ += supported ? "true}" : "false}";
        }
        out_ += ']';
        return true;
    }

    Result<bool> link_object(const io::Node* n, std::string_view label, std::string_view a,
                             std::string_view b) {
        KPKG_TRY(r_.object_or_null(n, label));
        std::string obj = "{";
        bool first = true;
        member(obj, first, a, KPKG_TRY(r_.str(field(n, a), a)));
        member(obj, first, b, KPKG_TRY(r_.str(field(n, b), b)));
        obj += '}';
        out_ += obj;
        return true;
    }

    Result<bool> links(std::string_view k, const io::Node* n, std::string_view a,
                       std::string_view b) {
        const auto* items = KPKG_TRY(r_.list(n, "spec." + std::string(k)));
        if (items->empty()) return true;
        key(k);
        out_ += '[';
        for (std::size_t i = 0; i < items->size(); ++i) {
            if (i > 0) out_ += ',';
            KPKG_TRY(link_object(&(*items)[i], k, a, b));
        }
        out_ += ']';
        return true;
    }

    Result<bool> native_apis(const io::Node* n) {
        const auto* items = KPKG_TRY(r_.list(n, "spec.nativeAPIs"));
        if (items->empty()) return true;
        key("nativeAPIs");
        out_ += '[';
        for (std::size_t i = 0; i < items->size(); ++i) {
            const io::Node& g = (*items)[i];
            KPKG_TRY(r_.object_or_null(&g, "spec.nativeAPIs[]"));
            if (i > 0) out_ += ',';
            std::string obj = "{";
            bool first = true;
            for (std::string_view f : {"group", "version", "kind"})
                member(obj, first, f, KPKG_TRY(r_.str(field(&g, f), f)), true);
            out_ += obj + "}";
        }
        out_ += ']';
        return true;
    }

    // {owned?: [...], required?: [...]}, always written (a struct is never omitted).
    Result<bool> definitions(std::string_view k, const io::Node* n, bool apiservices) {
        KPKG_TRY(r_.object_or_null(n, std::string("spec.") + (apiservices
                                                                  ? "apiservicedefinitions"
                                                                  : "customresourcedefinitions")));
        key(k);
        out_ += '{';
        bool first = true;
        for (std::string_view part : {"owned", "required"}) {
            const auto* items = KPKG_TRY(r_.list(field(n, part), part));
            if (items->empty()) continue;
            if (!first) out_ += ',';
            first = false;
            io::go::append_string(out_, part, false);
            out_ += ":[";
            for (std::size_t i = 0; i < items->size(); ++i) {
                if (i > 0) out_ += ',';
                KPKG_TRY(description(&(*items)[i], apiservices));
            }
            out_ += ']';
        }
        out_ += '}';
        return true;
    }

    // A CRDDescription or APIServiceDescription.
    Result<bool> description(const io::Node* d, bool apiservice) {
        KPKG_TRY(r_.object_or_null(d, "description"));
        std::string obj = "{";
        bool first = true;
        member(obj, first, "name", KPKG_TRY(r_.str(field(d, "name"), "name")), true);
        if (apiservice)
            member(obj, first, "group", KPKG_TRY(r_.str(field(d, "group"), "group")), true);
        member(obj, first, "version", KPKG_TRY(r_.str(field(d, "version"), "version")), true);
        member(obj, first, "kind", KPKG_TRY(r_.str(field(d, "kind"), "kind")), true);
        if (apiservice) {
            member(obj, first, "deploymentName",
                   KPKG_TRY(r_.str(field(d, "deploymentName"), "deploymentName")));
            const io::Node* port = field(d, "containerPort");
            if (!is_null(port)) {
                const GoScalar g = port->is_scalar() ? go_scalar(*port) : GoScalar{};
                std::int64_t v = 0;
                if (g.type == GoType::int64)
                    v = g.i;
                else if (g.type == GoType::float64 && std::trunc(g.f) == g.f &&
                         std::fabs(g.f) < 1e18)
                    v = static_cast<std::int64_t>(g.f);
                else
                    return invalid("ClusterServiceVersion containerPort must be an integer",
                                   r_.pos(port));
                if (v < INT32_MIN || v > INT32_MAX)
                    return invalid("ClusterServiceVersion containerPort is out of range",
                                   r_.pos(port));
                if (v != 0) {
                    obj += ",\"containerPort\":" + std::to_string(v);
                }
            }
        }
        member(obj, first, "displayName", KPKG_TRY(r_.str(field(d, "displayName"), "displayName")));
        member(obj, first, "description", KPKG_TRY(r_.str(field(d, "description"), "description")));
        const auto* res = KPKG_TRY(r_.list(field(d, "resources"), "resources"));
        if (!res->empty()) {
            obj += ",\"resources\":[";
            for (std::size_t i = 0; i < res->size(); ++i) {
                const io::Node& x = (*res)[i];
                KPKG_TRY(r_.object_or_null(&x, "resources[]"));
                if (i > 0) obj += ',';
                std::string ref = "{";
                bool f = true;
                for (std::string_view k : {"name", "kind", "version"})
                    member(ref, f, k, KPKG_TRY(r_.str(field(&x, k), k)), true);
                obj += ref + "}";
            }
            obj += ']';
        }
        for (auto [json_key, label] : {std::pair{"statusDescriptors", "statusDescriptors"},
                                       std::pair{"specDescriptors", "specDescriptors"},
                                       std::pair{"actionDescriptors", "actionDescriptors"}}) {
            const auto* ds = KPKG_TRY(r_.list(field(d, json_key), label));
            if (ds->empty()) continue;
            obj += ",\"";
            obj += json_key;
            obj += "\":[";
            for (std::size_t i = 0; i < ds->size(); ++i) {
                const io::Node& x = (*ds)[i];
                KPKG_TRY(r_.object_or_null(&x, label));
                if (i > 0) obj += ',';
                std::string desc = "{";
                bool f = true;
                member(desc, f, "path", KPKG_TRY(r_.str(field(&x, "path"), "path")), true);
                member(desc, f, "displayName",
                       KPKG_TRY(r_.str(field(&x, "displayName"), "displayName")));
                member(desc, f, "description",
                       KPKG_TRY(r_.str(field(&x, "description"), "description")));
                const auto* xd = KPKG_TRY(r_.list(field(&x, "x-descriptors"), "x-descriptors"));
                if (!xd->empty()) {
                    desc += ",\"x-descriptors\":[";
                    for (std::size_t j = 0; j < xd->size(); ++j) {
                        if (j > 0) desc += ',';
                        io::go::append_string(desc, KPKG_TRY(r_.str(&(*xd)[j], "x-descriptors[]")),
                                              false);
                    }
                    desc += ']';
                }
                if (const io::Node* v = field(&x, "value")) {
                    desc += ",\"value\":";
                    if (!append_go_json(desc, *v))
                        return invalid("a descriptor value has no JSON form", r_.pos(v));
                }
                obj += desc + "}";
            }
            obj += ']';
        }
        obj += '}';
        out_ += obj;
        return true;
    }

    Reader r_;
    std::string out_;
    bool first_ = true;
};

// ------------------------------------------------------------------------------------------------
// Properties while they are assembled

struct Prop {
    std::string type;
    std::string raw;     // the bytes opm compares (json.RawMessage as decoded)
    std::string compact; // what it writes
};

struct GvkKey {
    std::string group, kind, version;
    friend auto operator<=>(const GvkKey&, const GvkKey&) = default;
};

std::string gvk_value(const GvkKey& k) {
    std::string v = "{\"group\":";
    io::go::append_string(v, k.group, false);
    v += ",\"kind\":";
    io::go::append_string(v, k.kind, false);
    v += ",\"version\":";
    io::go::append_string(v, k.version, false);
    v += '}';
    return v;
}

std::string package_value(const std::string& name, const std::string& version,
                          const std::string& release) {
    std::string v = "{\"packageName\":";
    io::go::append_string(v, name, false);
    v += ",\"version\":";
    io::go::append_string(v, version, false);
    if (!release.empty()) {
        v += ",\"release\":";
        io::go::append_string(v, release, false);
    }
    v += '}';
    return v;
}

Prop make_prop(std::string type, std::string value) {
    Prop p{std::move(type), std::move(value), {}};
    p.compact = p.raw;
    return p;
}

// Whether a metadata file holds JSON (opm then keeps each value's raw bytes).
bool is_json_file(const std::string& path) {
    if (path.empty()) return false;
    auto text = io::read_file(path);
    if (!text) return false;
    for (char c : *text) {
        if (is_json_space(c)) continue;
        return c == '{';
    }
    return false;
}

// The raw value of a {type, value} entry of a metadata file.
Result<std::string> raw_value(const TypedValue& tv, bool json_source) {
    std::string out;
    GoMarshal m(out, !json_source);
    m.keep_order = json_source;
    if (!m.value(tv.value))
        return invalid("the value of " + tv.type + " has no JSON form (.inf or .nan)", tv.pos);
    return out;
}

// One {type, value} entry of the CSV's olm.properties annotation, with the value's raw bytes.
struct AnnotationProp {
    std::string type;
    std::string raw;
};

// Decodes the annotation as json.Unmarshal into []Property: nothing on a syntax error; entries
// that are not objects, or types that are not strings, come out empty.
std::vector<AnnotationProp> parse_properties_annotation(std::string_view s) {
    std::vector<AnnotationProp> out;
    if (!io::parse_json(s, "olm.properties")) return out; // Go's syntax check comes first
    std::size_t end = skip_value(s, 0);
    if (end == std::string_view::npos) return out;
    for (std::size_t k = end; k < s.size(); ++k)
        if (!is_json_space(s[k])) return out;
    std::size_t i = 0;
    while (is_json_space(s[i]))
        ++i;
    if (s[i] != '[') return out;
    ++i;
    for (;;) {
        while (is_json_space(s[i]))
            ++i;
        if (s[i] == ']') break;
        if (s[i] == ',') {
            ++i;
            continue;
        }
        const std::size_t vend = skip_value(s, i);
        const std::string_view elem = s.substr(i, vend - i);
        AnnotationProp p;
        if (elem[0] == '{') {
            std::size_t j = 1;
            for (;;) {
                while (is_json_space(elem[j]) || elem[j] == ',')
                    ++j;
                if (elem[j] == '}') break;
                const std::size_t kend = skip_string(elem, j);
                std::string key;
                auto kdoc = io::parse_json(elem.substr(j, kend - j), "olm.properties");
                if (kdoc && !kdoc->empty()) key = (*kdoc)[0].root.text;
                j = kend;
                while (is_json_space(elem[j]) || elem[j] == ':')
                    ++j;
                const std::size_t e2 = skip_value(elem, j);
                const std::string_view val = elem.substr(j, e2 - j);
                if (equal_fold(key, "type")) {
                    p.type.clear();
                    if (!val.empty() && val[0] == '"') {
                        auto tdoc = io::parse_json(val, "olm.properties");
                        if (tdoc && !tdoc->empty()) p.type = (*tdoc)[0].root.text;
                    }
                } else if (equal_fold(key, "value")) {
                    p.raw = std::string(val);
                }
                j = e2;
            }
        }
        out.push_back(std::move(p));
        i = vend;
    }
    return out;
}

// The objects opm reads from manifests/: the first document of each file, when it is an object
// with a kind; only the first ClusterServiceVersion.
struct Objects {
    std::vector<const Manifest*> list;
    const Manifest* csv = nullptr;
};

Objects visible_objects(const Bundle& b) {
    Objects o;
    std::set<std::string_view> files;
    for (const auto& m : b.manifests) {
        if (!files.insert(m.file).second) continue;
        if (!m.object.is_map()) continue;
        const io::Node* kind = m.object.get("kind");
        if (kind == nullptr || !kind->is_scalar() || kind->text.empty()) continue;
        if (const GoType t = go_scalar(*kind).type; t != GoType::string && t != GoType::timestamp)
            continue;
        if (kind->text == "ClusterServiceVersion") {
            if (o.csv != nullptr) continue;
            o.csv = &m;
        }
        o.list.push_back(&m);
    }
    return o;
}

// Group and version of an apiVersion ("group/version" or "version").
std::pair<std::string, std::string> split_api_version(std::string_view av) {
    const std::size_t slash = av.find('/');
    if (slash == std::string_view::npos) return {"", std::string(av)};
    if (av.find('/', slash + 1) != std::string_view::npos) return {"", ""};
    return {std::string(av.substr(0, slash)), std::string(av.substr(slash + 1))};
}

struct ApiKey {
    std::string group, version, kind, plural;
    friend auto operator<=>(const ApiKey&, const ApiKey&) = default;
};

} // namespace

bool append_go_json(std::string& out, const io::Node& node) {
    GoMarshal m(out, true);
    return m.value(node);
}

GoScalarKind append_go_scalar(std::string& out, const io::Node& n) {
    if (n.kind == io::Kind::string && !n.plain) return GoScalarKind::string;
    const GoScalar s = go_scalar(n);
    switch (s.type) {
    case GoType::null:
        out += "null";
        return GoScalarKind::literal;
    case GoType::boolean:
        out += s.b ? "true" : "false";
        return GoScalarKind::literal;
    case GoType::int64:
    case GoType::uint64: {
        char buf[24];
        auto r = s.type == GoType::int64 ? std::to_chars(buf, buf + sizeof buf, s.i)
                                         : std::to_chars(buf, buf + sizeof buf, s.u);
        out.append(buf, r.ptr);
        return GoScalarKind::literal;
    }
    case GoType::float64:
        if (!std::isfinite(s.f)) return GoScalarKind::invalid;
        io::go::append_float(out, s.f);
        return GoScalarKind::literal;
    case GoType::string:
    case GoType::timestamp:
        return GoScalarKind::string;
    }
    return GoScalarKind::string;
}

std::string base64_encode(std::string_view data) {
    std::string out;
    io::go::append_base64(out, data);
    return out;
}

Result<Rendered> render(const Bundle& b, const RenderOptions& opts) {
    const Objects objs = visible_objects(b);
    if (objs.list.empty())
        return invalid("no bundle objects found in manifests/", io::pos_of(b.dir.string(), {}));
    if (objs.csv == nullptr)
        return invalid("no ClusterServiceVersion in manifests/", io::pos_of(b.dir.string(), {}));
    const io::Node& csv = objs.csv->object;
    Reader rd{objs.csv->file, "ClusterServiceVersion"};

    if (b.annotations.file.empty())
        return invalid("no annotations file in metadata/ (metadata/annotations.yaml with the "
                       "operators.operatorframework.io.bundle.* labels)",
                       io::pos_of(b.dir.string(), {}));
    const std::string& package = b.annotations.package;
    if (package.empty())
        return invalid(std::string("the annotations name no package (") + label_package +
                           "); opm writes nothing for such a bundle",
                       io::pos_of(b.annotations.file, {}));

    const io::Node* meta = exact(&csv, "metadata");
    const io::Node* spec = exact(&csv, "spec");
    Rendered out;
    if (const io::Node* name = exact(meta, "name"); name != nullptr && name->is_scalar())
        out.name = name->text;
    out.package = package;
    out.image = opts.image;

    // Version and release.
    std::string version = KPKG_TRY(rd.str(exact(spec, "version"), "spec.version"));
    std::string release = KPKG_TRY(rd.str(exact(spec, "release"), "spec.release"));
    const io::Node* annotations = exact(meta, "annotations");
    auto annotation = [&](std::string_view key) -> std::string {
        const io::Node* a = exact(annotations, key);
        if (a == nullptr || !a->is_scalar()) return {};
        const GoType t = go_scalar(*a).type;
        return t == GoType::string || t == GoType::timestamp ? a->text : std::string();
    };
    if (release.empty() && !annotation("olm.substitutesFor").empty()) {
        const std::size_t plus = version.find('+');
        if (plus == std::string::npos)
            return invalid("the CSV has olm.substitutesFor but its version " + version +
                               " has no build metadata to take the release from",
                           rd.pos(exact(spec, "version")));
        release = version.substr(plus + 1);
        version.resize(plus);
    }

    // APIs the bundle provides: every version of every CRD, and the CSV's owned APIServices.
    std::set<ApiKey> provided_apis;
    for (const Manifest* m : objs.list) {
        if (m->object.get("kind")->text != "CustomResourceDefinition") continue;
        const io::Node* av = m->object.get("apiVersion");
        const auto [group, ver] = split_api_version(av != nullptr ? av->text : std::string());
        if (ver != "v1" && ver != "v1beta1") continue;
        if (group != "apiextensions.k8s.io")
            return invalid("CustomResourceDefinition has apiVersion " + group + "/" + ver +
                               ", not apiextensions.k8s.io/" + ver,
                           m->pos);
        Reader cr{m->file, "CustomResourceDefinition"};
        const io::Node* cspec = field(&m->object, "spec");
        KPKG_TRY(cr.object_or_null(cspec, "spec"));
        const io::Node* names = field(cspec, "names");
        KPKG_TRY(cr.object_or_null(names, "spec.names"));
        const std::string g = KPKG_TRY(cr.str(field(cspec, "group"), "spec.group"));
        const std::string k = KPKG_TRY(cr.str(field(names, "kind"), "spec.names.kind"));
        const std::string p = KPKG_TRY(cr.str(field(names, "plural"), "spec.names.plural"));
        for (const io::Node& v : *KPKG_TRY(cr.list(field(cspec, "versions"), "spec.versions"))) {
            KPKG_TRY(cr.object_or_null(&v, "spec.versions[]"));
            std::string name = KPKG_TRY(cr.str(field(&v, "name"), "spec.versions[].name"));
            provided_apis.insert({g, std::move(name), k, p});
        }
        if (ver == "v1beta1") {
            const std::string single = KPKG_TRY(cr.str(field(cspec, "version"), "spec.version"));
            if (!single.empty()) provided_apis.insert({g, single, k, p});
        }
    }
    const io::Node* apisvc = exact(spec, "apiservicedefinitions");
    const io::Node* crddefs = exact(spec, "customresourcedefinitions");
    KPKG_TRY(rd.object_or_null(apisvc, "spec.apiservicedefinitions"));
    KPKG_TRY(rd.object_or_null(crddefs, "spec.customresourcedefinitions"));
    for (const io::Node& a :
         *KPKG_TRY(rd.list(field(apisvc, "owned"), "spec.apiservicedefinitions.owned"))) {
        std::string group = KPKG_TRY(rd.str(field(&a, "group"), "apiservice group"));
        std::string version = KPKG_TRY(rd.str(field(&a, "version"), "apiservice version"));
        std::string kind = KPKG_TRY(rd.str(field(&a, "kind"), "apiservice kind"));
        std::string plural = KPKG_TRY(rd.str(field(&a, "name"), "apiservice name"));
        provided_apis.insert(
            {std::move(group), std::move(version), std::move(kind), std::move(plural)});
    }
    // Every owned CRD must be among them (opm refuses the bundle otherwise).
    for (const io::Node& c :
         *KPKG_TRY(rd.list(field(crddefs, "owned"), "spec.customresourcedefinitions.owned"))) {
        const std::string name = KPKG_TRY(rd.str(field(&c, "name"), "owned CRD name"));
        const std::size_t dot = name.find('.');
        if (dot == std::string::npos)
            return invalid("owned CRD name " + text::quote(name) + " is not <plural>.<group>",
                           rd.pos(&c));
        std::string version = KPKG_TRY(rd.str(field(&c, "version"), "version"));
        std::string kind = KPKG_TRY(rd.str(field(&c, "kind"), "kind"));
        ApiKey key{name.substr(dot + 1), std::move(version), std::move(kind), name.substr(0, dot)};
        if (!provided_apis.count(key))
            return invalid("owned CRD " + text::shown(name) + " " + text::shown(key.version) +
                               " (kind " + text::shown(key.kind) +
                               ") is not among the CRDs in manifests/; opm refuses to render it",
                           rd.pos(&c));
    }
    // APIs it requires.
    std::set<GvkKey> required;
    for (const io::Node& c : *KPKG_TRY(
             rd.list(field(crddefs, "required"), "spec.customresourcedefinitions.required"))) {
        const std::string name = KPKG_TRY(rd.str(field(&c, "name"), "required CRD name"));
        const std::size_t dot = name.find('.');
        if (dot == std::string::npos)
            return invalid("required CRD name " + text::quote(name) + " is not <plural>.<group>",
                           rd.pos(&c));
        std::string kind = KPKG_TRY(rd.str(field(&c, "kind"), "kind"));
        std::string version = KPKG_TRY(rd.str(field(&c, "version"), "version"));
        required.insert({name.substr(dot + 1), std::move(kind), std::move(version)});
    }
    for (const io::Node& a :
         *KPKG_TRY(rd.list(field(apisvc, "required"), "spec.apiservicedefinitions.required"))) {
        std::string group = KPKG_TRY(rd.str(field(&a, "group"), "apiservice group"));
        std::string kind = KPKG_TRY(rd.str(field(&a, "kind"), "apiservice kind"));
        std::string version = KPKG_TRY(rd.str(field(&a, "version"), "apiservice version"));
        required.insert({std::move(group), std::move(kind), std::move(version)});
    }

    // bundle.Properties as opm's parser leaves them: properties.yaml, then the derived ones
    // (annotations' package first, the CSV's olm.properties, one olm.gvk per provided API), each
    // list without repeats.
    auto dedup = [](std::vector<Prop>& v) {
        std::set<std::pair<std::string, std::string>> seen;
        std::vector<Prop> out;
        for (auto& p : v)
            if (seen.emplace(p.type, p.raw).second) out.push_back(std::move(p));
        v = std::move(out);
    };
    std::vector<Prop> bundle_props;
    const bool props_json = is_json_file(b.properties_file);
    for (const auto& tv : b.properties) {
        std::string raw = KPKG_TRY(raw_value(tv, props_json));
        bundle_props.push_back(make_prop(tv.type, std::move(raw)));
    }
    std::vector<Prop> derived;
    derived.push_back(make_prop("olm.package", package_value(package, version, release)));
    if (const std::string ann = annotation("olm.properties"); !ann.empty())
        for (auto& ap : parse_properties_annotation(ann)) {
            Prop p;
            p.type = std::move(ap.type);
            p.raw = std::move(ap.raw);
            p.compact = p.raw.empty() ? std::string("null") : compact_json(p.raw);
            derived.push_back(std::move(p));
        }
    {
        std::set<GvkKey> gvks;
        for (const auto& a : provided_apis)
            gvks.insert({a.group, a.kind, a.version});
        for (const auto& g : gvks)
            derived.push_back(make_prop("olm.gvk", gvk_value(g)));
    }
    dedup(derived);
    for (auto& p : derived)
        bundle_props.push_back(std::move(p));
    dedup(bundle_props);

    // ObjectsAndPropertiesFromBundle.
    std::set<GvkKey> provided;
    std::optional<Prop> package_prop;
    std::vector<Prop> others, package_required;
    auto parse_value = [&](const std::string& raw, const std::string& what) -> Result<io::Node> {
        auto docs = io::parse_json(raw.empty() ? std::string_view("null") : raw, what);
        if (!docs || docs->empty()) return invalid("cannot parse the value of " + what);
        return std::move((*docs)[0].root);
    };
    Reader pr{b.properties_file, "property"};
    for (auto& p : bundle_props) {
        if (p.type == "olm.gvk") {
            io::Node v = KPKG_TRY(parse_value(p.raw, "olm.gvk property"));
            KPKG_TRY(pr.object_or_null(&v, "olm.gvk value"));
            std::string group = KPKG_TRY(pr.str(field(&v, "group"), "olm.gvk group"));
            std::string kind = KPKG_TRY(pr.str(field(&v, "kind"), "olm.gvk kind"));
            std::string version = KPKG_TRY(pr.str(field(&v, "version"), "olm.gvk version"));
            provided.insert({std::move(group), std::move(kind), std::move(version)});
        } else if (p.type == "olm.package") {
            io::Node v = KPKG_TRY(parse_value(p.raw, "olm.package property"));
            KPKG_TRY(pr.object_or_null(&v, "olm.package value"));
            const std::string name = KPKG_TRY(pr.str(field(&v, "packageName"), "packageName"));
            const std::string version = KPKG_TRY(pr.str(field(&v, "version"), "version"));
            const std::string release = KPKG_TRY(pr.str(field(&v, "release"), "release"));
            package_prop = make_prop("olm.package", package_value(name, version, release));
        } else {
            others.push_back(std::move(p));
        }
    }
    const bool deps_json = is_json_file(b.dependencies_file);
    for (const auto& tv : b.dependencies) {
        Reader dr{tv.pos.file, "dependency " + tv.type};
        const io::Node* v = &tv.value;
        if (tv.type == "olm.gvk") {
            KPKG_TRY(dr.object_or_null(v, "value"));
            std::string group = KPKG_TRY(dr.str(field(v, "group"), "group"));
            std::string kind = KPKG_TRY(dr.str(field(v, "kind"), "kind"));
            std::string version = KPKG_TRY(dr.str(field(v, "version"), "version"));
            required.insert({std::move(group), std::move(kind), std::move(version)});
        } else if (tv.type == "olm.package") {
            KPKG_TRY(dr.object_or_null(v, "value"));
            std::string pv = "{\"packageName\":";
            io::go::append_string(pv, KPKG_TRY(dr.str(field(v, "packageName"), "packageName")),
                                  false);
            pv += ",\"versionRange\":";
            io::go::append_string(pv, KPKG_TRY(dr.str(field(v, "version"), "version")), false);
            pv += '}';
            package_required.push_back(make_prop("olm.package.required", std::move(pv)));
        } else {
            std::string raw = KPKG_TRY(raw_value(tv, deps_json));
            others.push_back(make_prop(tv.type, std::move(raw)));
        }
    }
    for (const auto& a : provided_apis)
        provided.insert({a.group, a.kind, a.version});

    std::vector<Prop> props;
    props.reserve(objs.list.size() + provided.size() + required.size() + others.size() + 4);
    std::string json; // reused: a window of the JSON on its way to base64
    json.reserve(64 * 1024);
    for (const Manifest* m : objs.list) {
        json.clear();
        if (opts.csv_metadata) {
            if (!append_go_json(json, m->object))
                return invalid("a value in this object has no JSON form (.inf or .nan)", m->pos);
            continue;
        }
        Prop p;
        p.type = "olm.bundle.object";
        // Room for the base64 of up to twice the file's size: reserved pages that are never
        // written cost nothing, and the string does not move while it grows.
        std::error_code ec;
        const auto file_size = std::filesystem::file_size(m->file, ec);
        p.raw.reserve(ec ? 64 * 1024 : static_cast<std::size_t>(file_size) * 8 / 3 + 64);
        p.raw = "{\"data\":\"";
        GoMarshal gm(json, true);
        gm.stream_base64_to(&p.raw);
        if (!gm.value(m->object))
            return invalid("a value in this object has no JSON form (.inf or .nan)", m->pos);
        gm.finish_base64();
        p.raw += "\"}";
        props.push_back(std::move(p));
    }
    props.push_back(package_prop
                        ? std::move(*package_prop)
                        : make_prop("olm.package", package_value(package, version, release)));
    for (const auto& g : provided)
        props.push_back(make_prop("olm.gvk", gvk_value(g)));
    for (const auto& g : required)
        props.push_back(make_prop("olm.gvk.required", gvk_value(g)));
    for (auto& p : package_required)
        props.push_back(std::move(p));
    for (auto& p : others) {
        if (p.compact.empty()) p.compact = compact_json(p.raw);
        props.push_back(std::move(p));
    }
    std::sort(props.begin(), props.end(), [](const Prop& a, const Prop& c) {
        if (a.type != c.type) return a.type < c.type;
        return a.raw < c.raw;
    });
    if (opts.csv_metadata) {
        CsvMetadataWriter w(rd);
        std::string metadata = KPKG_TRY(w.build(csv));
        props.push_back(make_prop("olm.csv.metadata", std::move(metadata)));
    }
    // Bundle objects (and CSV metadata) last, keeping their order.
    std::stable_partition(props.begin(), props.end(), [](const Prop& p) {
        return p.type != "olm.bundle.object" && p.type != "olm.csv.metadata";
    });
    out.properties.reserve(props.size());
    for (auto& p : props) {
        std::string value = p.compact.empty() ? std::move(p.raw) : std::move(p.compact);
        out.properties.push_back({std::move(p.type), std::move(value)});
    }

    // relatedImages: the CSV's list, the image, then the deployments' container images.
    std::set<std::string> seen;
    const io::Node* ri = exact(spec, "relatedImages");
    for (const io::Node& r : *KPKG_TRY(rd.list(ri, "spec.relatedImages"))) {
        KPKG_TRY(rd.object_or_null(&r, "spec.relatedImages[]"));
        std::string name = KPKG_TRY(rd.str(field(&r, "name"), "spec.relatedImages[].name"));
        std::string image = KPKG_TRY(rd.str(field(&r, "image"), "spec.relatedImages[].image"));
        RelatedImage img{std::move(name), std::move(image)};
        seen.insert(img.image);
        out.related_images.push_back(std::move(img));
    }
    if (!opts.image.empty() && !seen.count(opts.image))
        out.related_images.push_back({"", opts.image});
    const io::Node* install = field(spec, "install");
    KPKG_TRY(rd.object_or_null(install, "spec.install"));
    if (KPKG_TRY(rd.str(field(install, "strategy"), "spec.install.strategy")) == "deployment") {
        const io::Node* ispec = field(install, "spec");
        KPKG_TRY(rd.object_or_null(ispec, "spec.install.spec"));
        std::set<std::string> images;
        for (const io::Node& d :
             *KPKG_TRY(rd.list(field(ispec, "deployments"), "spec.install.spec.deployments"))) {
            KPKG_TRY(rd.object_or_null(&d, "deployment"));
            const io::Node* ds = field(&d, "spec");
            KPKG_TRY(rd.object_or_null(ds, "deployment spec"));
            const io::Node* tmpl = field(ds, "template");
            KPKG_TRY(rd.object_or_null(tmpl, "deployment spec.template"));
            const io::Node* pod = field(tmpl, "spec");
            KPKG_TRY(rd.object_or_null(pod, "deployment spec.template.spec"));
            for (const char* list : {"containers", "initContainers"})
                for (const io::Node& c : *KPKG_TRY(rd.list(field(pod, list), list))) {
                    KPKG_TRY(rd.object_or_null(&c, "container"));
                    images.insert(KPKG_TRY(rd.str(field(&c, "image"), "container image")));
                }
        }
        for (const auto& img : images)
            if (seen.insert(img).second) out.related_images.push_back({"", img});
    }
    std::stable_sort(
        out.related_images.begin(), out.related_images.end(),
        [](const RelatedImage& a, const RelatedImage& c) { return a.image < c.image; });
    return out;
}

Result<Rendered> render(const Loaded& loaded, const RenderOptions& opts) {
    if (!loaded.blocking.empty()) return fail(Error(loaded.blocking.front()));
    auto r = render(loaded.bundle, opts);
    if (r || r.error().code != ExitCode::invalid) return r;
    // A file of manifests/ that does not parse may hold what render found missing (the CSV, an
    // owned CRD): its parse error, with its position, is what to fix first.
    const std::string mdir = (loaded.bundle.dir / "manifests").string() + "/";
    for (const auto& f : loaded.findings)
        if (f.severity == Severity::error && f.rule == "load.parse" &&
            f.pos.file.compare(0, mdir.size(), mdir) == 0)
            return fail(Error::invalid(f.message, f.pos));
    return r;
}

// ------------------------------------------------------------------------------------------------
// -o json

namespace {

template <class Out>
void put_go_string(Out& out, std::string_view v) {
    std::string tmp;
    io::go::append_string(tmp, v, false);
    out.put(std::string_view(tmp));
}

template <class Out>
void write_blob(Out& out, const Rendered& r) {
    out.put(std::string_view("{\n    \"schema\": \"olm.bundle\",\n"));
    if (!r.name.empty()) {
        out.put(std::string_view("    \"name\": "));
        put_go_string(out, r.name);
        out.put(std::string_view(",\n"));
    }
    if (!r.package.empty()) {
        out.put(std::string_view("    \"package\": "));
        put_go_string(out, r.package);
        out.put(std::string_view(",\n"));
    }
    out.put(std::string_view("    \"image\": "));
    put_go_string(out, r.image);
    if (!r.properties.empty()) {
        out.put(std::string_view(",\n    \"properties\": ["));
        for (std::size_t i = 0; i < r.properties.size(); ++i) {
            out.put(std::string_view(i == 0 ? "\n        {\n            \"type\": "
                                            : ",\n        {\n            \"type\": "));
            put_go_string(out, r.properties[i].type);
            out.put(std::string_view(",\n            \"value\": "));
            append_indented(out, r.properties[i].value, 3);
            out.put(std::string_view("\n        }"));
        }
        out.put(std::string_view("\n    ]"));
    }
    if (!r.related_images.empty()) {
        out.put(std::string_view(",\n    \"relatedImages\": ["));
        for (std::size_t i = 0; i < r.related_images.size(); ++i) {
            out.put(std::string_view(i == 0 ? "\n        {\n            \"name\": "
                                            : ",\n        {\n            \"name\": "));
            put_go_string(out, r.related_images[i].name);
            out.put(std::string_view(",\n            \"image\": "));
            put_go_string(out, r.related_images[i].image);
            out.put(std::string_view("\n        }"));
        }
        out.put(std::string_view("\n    ]"));
    }
    out.put(std::string_view("\n}\n"));
}

} // namespace

std::string to_json(const Rendered& r) {
    std::size_t size = 256 + r.name.size() + r.package.size() + r.image.size();
    for (const auto& p : r.properties)
        size += p.type.size() + p.value.size() * 5 / 4 + 80;
    for (const auto& i : r.related_images)
        size += i.name.size() + i.image.size() + 80;
    std::string out;
    out.reserve(size);
    StringOut o{out};
    write_blob(o, r);
    return out;
}

void write_json(const Rendered& r, const std::function<void(std::string_view)>& sink) {
    SinkOut o(sink);
    write_blob(o, r);
    o.flush();
}

io::Node to_node(const Rendered& r) {
    io::Node n = io::Node::map();
    n.set("schema", io::Node::string("olm.bundle"));
    if (!r.name.empty()) n.set("name", io::Node::string(r.name));
    if (!r.package.empty()) n.set("package", io::Node::string(r.package));
    n.set("image", io::Node::string(r.image));
    if (!r.properties.empty()) {
        io::Node list = io::Node::seq();
        for (const auto& p : r.properties) {
            io::Node e = io::Node::map();
            e.set("type", io::Node::string(p.type));
            auto docs = io::parse_json(p.value, p.type);
            e.set("value", docs && !docs->empty() ? std::move((*docs)[0].root) : io::Node{});
            list.push(std::move(e));
        }
        n.set("properties", std::move(list));
    }
    if (!r.related_images.empty()) {
        io::Node list = io::Node::seq();
        for (const auto& i : r.related_images) {
            io::Node e = io::Node::map();
            e.set("name", io::Node::string(i.name));
            e.set("image", io::Node::string(i.image));
            list.push(std::move(e));
        }
        n.set("relatedImages", std::move(list));
    }
    return n;
}

// ------------------------------------------------------------------------------------------------
// -o yaml: gopkg.in/yaml.v2's Marshal of the JSON document

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
        std::size_t n = io::detail::utf8_decode(p, end, cp);
        if (n == 0) {
            cp = 0xFFFD;
            n = 1;
        }
        r += cp;
        p += n;
    }
    return r;
}

// yaml.v2's keyList.Less for two string keys: letters compare as runes, runs of digits as
// numbers, and a letter sorts after anything else.
bool v2_key_less(std::string_view as, std::string_view bs) {
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

    void document(const io::Node& root) {
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
    struct Scalar {
        std::string_view text; // into the node, or into scratch_
        Style style;
    };

    // A string as yaml.v2 writes it: plain unless it would read back as another type, literal
    // when it has line breaks.
    Scalar string_scalar(std::string_view s) {
        if (s.find("\xC2\x85") != std::string_view::npos) {
            scratch_ = fold_nel(s);
            s = scratch_;
        }
        const GoType t = resolve_plain_v2(s).type;
        const bool can_plain = t == GoType::string && !is_base60_float(s);
        if (s.find('\n') != std::string_view::npos) return {s, Style::literal};
        return {s, can_plain ? Style::plain : Style::dbl};
    }

    // The text and requested style of a scalar node, as yaml.v2's encoder chooses them. The text
    // stays valid until the next call.
    Scalar scalar_text(const io::Node& n) {
        if (n.kind == io::Kind::string && !n.plain) return string_scalar(n.text);
        // The JSON text is read back by yaml.v2, which types a number literal by its own rules
        // (an integer beyond int64 stays an integer, as uint64).
        const bool number = n.kind == io::Kind::integer || n.kind == io::Kind::floating;
        const GoScalar g = number ? resolve_plain_v2(n.text) : go_scalar(n);
        switch (g.type) {
        case GoType::null:
            return {"null", Style::plain};
        case GoType::boolean:
            return {g.b ? "true" : "false", Style::plain};
        case GoType::int64:
            scratch_ = std::to_string(g.i);
            return {scratch_, Style::plain};
        case GoType::uint64:
            scratch_ = std::to_string(g.u);
            return {scratch_, Style::plain};
        case GoType::float64:
            scratch_ = go_format_g(g.f);
            return {scratch_, Style::plain};
        default:
            return string_scalar(n.text);
        }
    }

    // yaml.v2's key order; keys without digits in plain ASCII compare without decoding runes.
    static bool key_less(std::string_view a, std::string_view b) {
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
        if (!simple) return v2_key_less(a, b);
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

    void node(const io::Node& n, bool root, bool sequence, bool mapping, bool simple_key) {
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
            std::sort(entries_[d].begin(), entries_[d].end(),
                      [](const io::MapEntry* a, const io::MapEntry* b) {
                          return key_less(a->key, b->key);
                      });
            increase_indent(false, false);
            for (std::size_t k = 0; k < entries_[d].size(); ++k) {
                const io::MapEntry* e = entries_[d][k];
                write_indent();
                const Scalar key = string_scalar(e->key);
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
            for (const io::Node& item : n.items) {
                write_indent();
                write_indicator("-", true, false, true);
                node(item, false, true, false, false);
            }
            pop_indent();
            return;
        }
        const Scalar sc = scalar_text(n);
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
    std::vector<std::vector<const io::MapEntry*>> entries_;
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

void append_json_as_yaml(std::string& out, const io::Node& json_doc) {
    V2Emitter(out).document(json_doc);
}

std::string to_yaml(const Rendered& r) {
    const io::Node doc = to_node(r);
    std::string out = "---\n";
    std::size_t size = 256;
    for (const auto& p : r.properties)
        size += p.value.size() * 2 + 64;
    out.reserve(size);
    V2Emitter(out).document(doc);
    return out;
}

} // namespace kpkg::bundle
