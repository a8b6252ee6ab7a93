// io/go: Go's number text, encoding/json and encoding/base64 (see kpkg/io/go.hpp).
#include "kpkg/io/go.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "kpkg/io/scalars.hpp" // detail::utf8_decode

namespace kpkg::io::go {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Nonzero when one of the eight bytes in x needs a look: a control character, a quote, a
// backslash, a non-ASCII byte, or with Html one of '<', '>', '&'.
template <bool Html>
std::uint64_t special_bytes(std::uint64_t x) {
    constexpr std::uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    auto zero_byte = [](std::uint64_t v) { return (v - ones) & ~v & high; };
    std::uint64_t m =
        ((x - ones * 0x20) & ~x) | x | zero_byte(x ^ (ones * '"')) | zero_byte(x ^ (ones * '\\'));
    if constexpr (Html)
        m |=
            zero_byte(x ^ (ones * '<')) | zero_byte(x ^ (ones * '>')) | zero_byte(x ^ (ones * '&'));
    return m & high;
}

template <bool Html>
void append_string_impl(std::string& out, std::string_view s) {
    out.reserve(out.size() + s.size() + 2);
    out += '"';
    const char* p = s.data();
    const char* const end = p + s.size();
    const char* run = p; // start of the bytes not yet copied
    while (p < end) {
        while (end - p >= 8) {
            std::uint64_t x;
            std::memcpy(&x, p, 8);
            if (special_bytes<Html>(x) != 0) break;
            p += 8;
        }
        if (p >= end) break;
        const auto c = static_cast<unsigned char>(*p);
        if (c < 0x80) {
            if (c >= 0x20 && c != '"' && c != '\\' &&
                (!Html || (c != '<' && c != '>' && c != '&'))) {
                ++p;
                continue;
            }
            out.append(run, static_cast<std::size_t>(p - run));
            switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default: {
                const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
                out.append(esc, sizeof esc);
            }
            }
            run = ++p;
            continue;
        }
        char32_t cp = 0;
        const std::size_t len = detail::utf8_decode(p, end, cp);
        if (len == 0 || cp == 0x2028 || cp == 0x2029) {
            out.append(run, static_cast<std::size_t>(p - run));
            out += len == 0 ? "\\ufffd" : cp == 0x2028 ? "\\u2028" : "\\u2029";
            p += len == 0 ? 1 : len;
            run = p;
            continue;
        }
        p += len;
    }
    out.append(run, static_cast<std::size_t>(p - run));
    out += '"';
}

} // namespace

void append_string(std::string& out, std::string_view s, bool escape_html) {
    if (escape_html)
        append_string_impl<true>(out, s);
    else
        append_string_impl<false>(out, s);
}

namespace {

// The digits and decimal exponent of a number written by std::to_chars in scientific form
// ("-1.25e+02" -> "125", 2); a minus sign goes to `out` first.
std::pair<std::string, int> scientific_digits(std::string_view sci, std::string& out) {
    const std::size_t e = sci.find('e');
    int exp = 0;
    std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp);
    std::size_t i = 0;
    if (sci[0] == '-') {
        out += '-';
        i = 1;
    }
    std::string digits;
    for (; i < e; ++i)
        if (sci[i] != '.') digits += sci[i];
    return {std::move(digits), exp};
}

// `digits` x 10^(exp - digits + 1) without an exponent: 1250, 12.5, 0.0125 ("0" stays "0").
void append_positional(std::string& out, const std::string& digits, int exp) {
    if (digits == "0") {
        out += '0';
        return;
    }
    const int n = static_cast<int>(digits.size());
    if (exp >= n - 1) {
        out += digits;
        out.append(static_cast<std::size_t>(exp - (n - 1)), '0');
    } else if (exp >= 0) {
        out.append(digits, 0, static_cast<std::size_t>(exp + 1));
        out += '.';
        out.append(digits, static_cast<std::size_t>(exp + 1), std::string::npos);
    } else {
        out += "0.";
        out.append(static_cast<std::size_t>(-exp - 1), '0');
        out += digits;
    }
}

} // namespace

void append_fixed(std::string& out, double v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    auto [digits, exp] =
        scientific_digits(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)), out);
    append_positional(out, digits, exp);
}

void append_float(std::string& out, double v) {
    const double a = std::fabs(v);
    if (a != 0 && (a < 1e-6 || a >= 1e21)) {
        char buf[64];
        auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
        std::size_t len = static_cast<std::size_t>(r.ptr - buf);
        if (len >= 4 && buf[len - 4] == 'e' && buf[len - 3] == '-' && buf[len - 2] == '0') {
            buf[len - 2] = buf[len - 1];
            --len;
        }
        out.append(buf, len);
    } else {
        append_fixed(out, v);
    }
}

void append_float_g(std::string& out, double v, int bits) {
    if (std::isnan(v)) {
        out += "NaN";
        return;
    }
    char buf[64];
    std::to_chars_result r{};
    if (bits == 32) {
        const auto f = static_cast<float>(v);
        if (std::isinf(f)) {
            out += f > 0 ? "+Inf" : "-Inf";
            return;
        }
        r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
    } else {
        if (std::isinf(v)) {
            out += v > 0 ? "+Inf" : "-Inf";
            return;
        }
        r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    }
    auto [digits, exp] =
        scientific_digits(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)), out);
    if (digits != "0" && (exp < -4 || exp >= 6)) {
        out += digits[0];
        if (digits.size() > 1) {
            out += '.';
            out.append(digits, 1, std::string::npos);
        }
        out += 'e';
        out += exp < 0 ? '-' : '+';
        const int a = exp < 0 ? -exp : exp;
        if (a < 10) out += '0';
        out += std::to_string(a);
        return;
    }
    append_positional(out, digits, exp);
}

void append_base64(std::string& out, std::string_view in) {
    static constexpr char kB64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const std::size_t n = in.size();
    const std::size_t start = out.size();
    out.resize(start + (n + 2) / 3 * 4);
    char* o = out.data() + start;
    const auto* p = reinterpret_cast<const unsigned char*>(in.data());
    std::size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        const std::uint32_t v =
            (std::uint32_t{p[i]} << 16) | (std::uint32_t{p[i + 1]} << 8) | p[i + 2];
        o[0] = kB64[v >> 18];
        o[1] = kB64[(v >> 12) & 63];
        o[2] = kB64[(v >> 6) & 63];
        o[3] = kB64[v & 63];
        o += 4;
    }
    if (i < n) {
        std::uint32_t v = std::uint32_t{p[i]} << 16;
        if (i + 1 < n) v |= std::uint32_t{p[i + 1]} << 8;
        o[0] = kB64[v >> 18];
        o[1] = kB64[(v >> 12) & 63];
        o[2] = i + 1 < n ? kB64[(v >> 6) & 63] : '=';
        o[3] = '=';
    }
}

namespace {

// What each byte is in base64 text: its value (0..63), or one of these.
constexpr std::int8_t b64_bad = -1, b64_break = -2, b64_pad = -3;
constexpr std::array<std::int8_t, 256> b64_table = [] {
    std::array<std::int8_t, 256> t{};
    for (auto& v : t)
        v = b64_bad;
    for (int c = 'A'; c <= 'Z'; ++c)
        t[c] = static_cast<std::int8_t>(c - 'A');
    for (int c = 'a'; c <= 'z'; ++c)
        t[c] = static_cast<std::int8_t>(c - 'a' + 26);
    for (int c = '0'; c <= '9'; ++c)
        t[c] = static_cast<std::int8_t>(c - '0' + 52);
    t['+'] = 62;
    t['/'] = 63;
    t['\r'] = t['\n'] = b64_break;
    t['='] = b64_pad;
    return t;
}();

void put_group(std::string& out, const int* quad, std::size_t have) {
    const unsigned w = (static_cast<unsigned>(quad[0]) << 18) |
                       (static_cast<unsigned>(quad[1]) << 12) |
                       (have > 2 ? static_cast<unsigned>(quad[2]) << 6 : 0u) |
                       (have > 3 ? static_cast<unsigned>(quad[3]) : 0u);
    out += static_cast<char>((w >> 16) & 0xFF);
    if (have > 2) out += static_cast<char>((w >> 8) & 0xFF);
    if (have > 3) out += static_cast<char>(w & 0xFF);
}

} // namespace

bool decode_base64(std::string_view in, std::string* decoded, std::size_t& at) {
    int quad[4] = {0, 0, 0, 0};
    std::size_t have = 0;
    std::size_t pads = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int8_t v = b64_table[static_cast<unsigned char>(in[i])];
        if (v >= 0 && pads == 0) {
            quad[have++] = v;
            if (have == 4) {
                if (decoded != nullptr) put_group(*decoded, quad, 4);
                have = 0;
            }
            continue;
        }
        if (v == b64_break) continue;
        if (pads > 0) {
            // After padding only more padding completing the quantum may follow.
            if (v != b64_pad || have + pads >= 4) {
                at = i;
                return false;
            }
            ++pads;
            continue;
        }
        if (v == b64_pad && have >= 2) {
            pads = 1;
            continue;
        }
        at = i;
        return false;
    }
    if (pads > 0) {
        if (have + pads != 4) {
            at = in.size();
            return false;
        }
        if (decoded != nullptr) put_group(*decoded, quad, have);
        return true;
    }
    if (have != 0) {
        at = in.size();
        return false;
    }
    return true;
}

// ------------------------------------------------------------------------------------------------
// strconv parsing

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

} // namespace

std::optional<std::uint64_t> parse_uint(std::string_view s) {
    if (s.empty()) return std::nullopt;
    unsigned base = 10;
    if (s[0] == '0') {
        const char l = s.size() >= 3 ? ascii_lower(s[1]) : '\0';
        if (l == 'b') {
            base = 2;
            s.remove_prefix(2);
        } else if (l == 'o') {
            base = 8;
            s.remove_prefix(2);
        } else if (l == 'x') {
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

std::optional<std::int64_t> parse_int(std::string_view s, bool base0) {
    if (s.empty()) return std::nullopt;
    bool neg = false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    std::optional<std::uint64_t> u;
    if (base0) {
        u = parse_uint(s);
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

std::optional<double> parse_float(std::string_view s) {
    if (s.empty()) return std::nullopt;
    std::string buf(s);
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(buf.c_str(), &end);
    if (end != buf.c_str() + buf.size()) return std::nullopt;
    if (errno == ERANGE && std::isinf(v)) return std::nullopt;
    return v;
}

// ------------------------------------------------------------------------------------------------
// encoding/json

std::size_t string_size(std::string_view s) {
    std::size_t size = 2 + s.size();
    const char* p = s.data();
    const char* end = p + s.size();
    while (p < end) {
        if (end - p >= 8) {
            std::uint64_t w;
            std::memcpy(&w, p, 8);
            if (special_bytes<false>(w) == 0) {
                p += 8;
                continue;
            }
        }
        const auto c = static_cast<unsigned char>(*p);
        if (c >= 0x80) {
            char32_t cp = 0;
            const std::size_t len = detail::utf8_decode(p, end, cp);
            if (len == 0) {
                size += 5; // one byte becomes \ufffd
                ++p;
            } else {
                if (cp == 0x2028 || cp == 0x2029) size += 3; // 3 bytes become 6
                p += len;
            }
            continue;
        }
        if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
            size += 1;
        else if (c < 0x20)
            size += 5;
        ++p;
    }
    return size;
}

bool append_json_number(std::string& out, std::string_view lit) {
    // Integers of up to 15 digits are exact in a float64 and Go prints them as written.
    if (lit.size() <= 16 && lit.find_first_of(".eE") == std::string_view::npos) {
        const std::size_t digits = lit.size() - (lit[0] == '-' ? 1 : 0);
        if (digits <= 15) {
            out.append(lit);
            return true;
        }
    }
    double v = 0;
    const char* first = lit.data();
    const char* last = lit.data() + lit.size();
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec == std::errc::result_out_of_range) {
        // Overflow is an error in Go (ParseFloat returns ±Inf with ErrRange); an underflow reads
        // as zero. Tell them apart by the decimal exponent of the literal.
        const std::size_t e = lit.find_first_of("eE");
        const bool negative_exp =
            e != std::string_view::npos && e + 1 < lit.size() && lit[e + 1] == '-';
        if (!negative_exp) return false;
        v = lit[0] == '-' ? -0.0 : 0.0;
    } else if (ec != std::errc() || ptr != last || !std::isfinite(v)) {
        return false;
    }
    append_float(out, v);
    return true;
}

JsonScalar append_scalar(std::string& out, const Node& n) {
    if (n.kind == Kind::string && !n.plain) return JsonScalar::string;
    const Scalar s = scalar_of(n);
    switch (s.type) {
    case Type::null:
        out += "null";
        return JsonScalar::literal;
    case Type::boolean:
        out += s.b ? "true" : "false";
        return JsonScalar::literal;
    case Type::int64:
    case Type::uint64: {
        char buf[24];
        auto r = s.type == Type::int64 ? std::to_chars(buf, buf + sizeof buf, s.i)
                                       : std::to_chars(buf, buf + sizeof buf, s.u);
        out.append(buf, r.ptr);
        return JsonScalar::literal;
    }
    case Type::float64:
        if (!std::isfinite(s.f)) return JsonScalar::invalid;
        append_float(out, s.f);
        return JsonScalar::literal;
    case Type::string:
    case Type::timestamp:
        return JsonScalar::string;
    }
    return JsonScalar::string;
}

namespace {
constexpr std::size_t kBase64Chunk = 48 * 1024;
} // namespace

bool Marshaller::value(const Node& n) {
    switch (n.kind) {
    case Kind::sequence:
        if (n.items.empty()) {
            out_ += "[]";
            return true;
        }
        out_ += '[';
        for (std::size_t i = 0; i < n.items.size(); ++i) {
            if (i > 0) out_ += ',';
            if (!value(n.items[i])) return false;
            if (base64_ != nullptr && out_.size() >= kBase64Chunk) flush_base64();
        }
        out_ += ']';
        return true;
    case Kind::mapping:
        return mapping(n);
    case Kind::string:
        if (!n.plain) {
            append_string(out_, n.text, html_);
            return true;
        }
        [[fallthrough]];
    default:
        return scalar(n);
    }
}

void Marshaller::finish_base64() {
    if (base64_ == nullptr) return;
    append_base64(*base64_, out_);
    out_.clear();
}

void Marshaller::flush_base64() {
    const std::size_t n = out_.size() / 3 * 3;
    append_base64(*base64_, std::string_view(out_).substr(0, n));
    out_.erase(0, n);
}

bool Marshaller::mapping(const Node& n) {
    if (n.fields.empty()) {
        out_ += "{}";
        return true;
    }
    // Keys are sorted per mapping with a shared scratch stack, so deep documents do not allocate
    // a vector per mapping.
    const std::size_t base = scratch_.size();
    for (const auto& e : n.fields)
        scratch_.push_back(&e);
    if (!keep_order)
        std::sort(scratch_.begin() + static_cast<std::ptrdiff_t>(base), scratch_.end(),
                  [](const MapEntry* a, const MapEntry* b) { return a->key < b->key; });
    out_ += '{';
    bool ok = true;
    for (std::size_t i = base; i < base + n.fields.size(); ++i) {
        if (i > base) out_ += ',';
        const MapEntry* e = scratch_[i];
        append_string(out_, e->key, html_);
        out_ += ':';
        if (!value(e->value)) {
            ok = false;
            break;
        }
        if (base64_ != nullptr && out_.size() >= kBase64Chunk) flush_base64();
    }
    scratch_.resize(base);
    out_ += '}';
    return ok;
}

bool Marshaller::scalar(const Node& n) {
    if (keep_order && !n.plain && (n.kind == Kind::integer || n.kind == Kind::floating)) {
        out_ += n.text; // json.RawMessage bytes of a JSON file
        return true;
    }
    const Scalar s = scalar_of(n);
    switch (s.type) {
    case Type::null:
        out_ += "null";
        return true;
    case Type::boolean:
        out_ += s.b ? "true" : "false";
        return true;
    case Type::int64: {
        char buf[24];
        auto r = std::to_chars(buf, buf + sizeof buf, s.i);
        out_.append(buf, r.ptr);
        return true;
    }
    case Type::uint64: // beyond int64: unstructured decoding makes it a float64
        append_float(out_, static_cast<double>(s.u));
        return true;
    case Type::float64:
        if (!std::isfinite(s.f)) return false;
        append_float(out_, s.f);
        return true;
    case Type::string:
    case Type::timestamp:
        append_string(out_, n.text, html_);
        return true;
    }
    return true;
}

bool append_marshal(std::string& out, const Node& node, bool escape_html) {
    Marshaller m(out, escape_html);
    return m.value(node);
}

// ------------------------------------------------------------------------------------------------
// Raw JSON text

namespace {

bool is_json_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::size_t skip_value_at(std::string_view s, std::size_t i, int depth) {
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
            i = skip_value_at(s, i, depth + 1);
            if (i == std::string_view::npos) return i;
        }
    }
    const std::size_t start = i;
    while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                            is_digit(s[i]) || s[i] == '-' || s[i] == '+' || s[i] == '.'))
        ++i;
    const std::string_view word = s.substr(start, i - start);
    if (word == "true" || word == "false" || word == "null") return i;
    if (!word.empty() && (word[0] == '-' || is_digit(word[0]))) return i;
    return std::string_view::npos;
}

// Bytes gathered in a local buffer and appended to a string in blocks: cheaper than one
// std::string append per character.
class BlockWriter {
public:
    explicit BlockWriter(std::string& out) : out_(out) {}
    BlockWriter(const BlockWriter&) = delete;
    BlockWriter& operator=(const BlockWriter&) = delete;
    ~BlockWriter() { flush(); }
    void put(char c) {
        if (n_ == sizeof buf_) flush();
        buf_[n_++] = c;
    }
    void put(const char* p, std::size_t len) {
        if (len > sizeof buf_ - n_) {
            flush();
            if (len > sizeof buf_ / 2) {
                out_.append(p, len);
                return;
            }
        }
        std::memcpy(buf_ + n_, p, len);
        n_ += len;
    }
    void spaces(std::size_t len) {
        while (len > 0) {
            if (n_ == sizeof buf_) flush();
            const std::size_t k = std::min(len, sizeof buf_ - n_);
            std::memset(buf_ + n_, ' ', k);
            n_ += k;
            len -= k;
        }
    }
    void flush() {
        out_.append(buf_, n_);
        n_ = 0;
    }

private:
    std::string& out_;
    char buf_[8192];
    std::size_t n_ = 0;
};

} // namespace

std::size_t skip_string(std::string_view s, std::size_t i) {
    // memchr finds the candidates, so long strings (base64 data) are skipped at memory speed.
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

std::size_t skip_value(std::string_view s, std::size_t i) {
    return skip_value_at(s, i, 0);
}

std::string compact(std::string_view s) {
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

void append_indented(std::string& out, std::string_view compact_json, int depth) {
    BlockWriter w(out);
    indent(w, compact_json, depth);
}

} // namespace kpkg::io::go
