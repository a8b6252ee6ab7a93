// Go's encoding/json spellings (see kpkg/io/go_json.hpp).
#include "kpkg/io/go_json.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "kpkg/io/json_reader.hpp" // detail::utf8_decode

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

void append_float32_g(std::string& out, double v) {
    if (std::isnan(v)) {
        out += "NaN";
        return;
    }
    const auto f = static_cast<float>(v);
    if (std::isinf(f)) {
        out += f > 0 ? "+Inf" : "-Inf";
        return;
    }
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
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

} // namespace kpkg::io::go
