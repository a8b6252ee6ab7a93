// The rest of the Sprig (v3.3) functions in Package Operator's allow-list: string helpers
// (goutils' and xstrings'), conversions, decimal float arithmetic, JSON, paths, base32, hashes,
// data structures (merge and friends), semver, regular expressions and URLs.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kpkg/core/digest.hpp"
#include "kpkg/core/regex.hpp"
#include "kpkg/core/semver.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/scalars.hpp"
#include "kpkg/template/funcs.hpp"
#include "kpkg/template/template.hpp"
#include "sprig_util.hpp"

namespace kpkg::tmpl {
namespace {

using namespace sprig;
constexpr auto V = Func::kVariadic;

// ---- runes (ASCII case rules; other runes have no case here)

using re::decode_rune;

void put_rune(std::string& out, char32_t r) {
    io::detail::append_utf8(out, r);
}

bool is_upper(char32_t r) {
    return r >= 'A' && r <= 'Z';
}
bool is_lower(char32_t r) {
    return r >= 'a' && r <= 'z';
}
bool is_alpha(char32_t r) {
    return is_upper(r) || is_lower(r);
}
bool is_digit(char32_t r) {
    return r >= '0' && r <= '9';
}
char32_t to_upper(char32_t r) {
    return is_lower(r) ? r - 32 : r;
}
char32_t to_lower(char32_t r) {
    return is_upper(r) ? r + 32 : r;
}
// unicode.IsSpace
bool is_uspace(char32_t r) {
    return (r >= '\t' && r <= '\r') || r == ' ' || r == 0x85 || r == 0xA0 || r == 0x1680 ||
           (r >= 0x2000 && r <= 0x200A) || r == 0x2028 || r == 0x2029 || r == 0x202F ||
           r == 0x205F || r == 0x3000;
}
// unicode.IsPunct for ASCII (the P categories; $ + < = > ^ ` | ~ are symbols)
bool is_punct(char32_t r) {
    return r < 0x80 && std::strchr("!\"#%&'()*,-./:;?@[\\]_{}", static_cast<int>(r)) != nullptr &&
           r != 0;
}

std::vector<char32_t> runes(std::string_view s) {
    std::vector<char32_t> out;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t w = 0;
        out.push_back(decode_rune(s, i, w));
        i += w;
    }
    return out;
}

// ---- xstrings (v1.5): ToPascalCase (Sprig's camelcase), ToSnakeCase, ToKebabCase

bool is_connector(char32_t r) {
    return r == '-' || r == '_' || is_uspace(r);
}

std::string pascal_case(std::string_view s) {
    std::vector<char32_t> rs = runes(s);
    std::string out;
    std::size_t i = 0;
    bool first_upper = false;
    char32_t r0 = 0;
    while (i < rs.size()) {
        r0 = rs[i++];
        if (!is_connector(r0)) {
            first_upper = is_upper(r0);
            r0 = to_upper(r0);
            break;
        }
        put_rune(out, r0);
    }
    if (i >= rs.size()) { // xstrings writes the last rune once more here, connector or not
        if (!rs.empty()) put_rune(out, r0);
        return out;
    }
    while (i < rs.size()) {
        char32_t r1 = r0;
        r0 = rs[i++];
        if (is_connector(r0) && is_connector(r1)) {
            put_rune(out, r1);
            continue;
        }
        if (is_connector(r1)) {
            first_upper = is_upper(r0);
            r0 = to_upper(r0);
        } else {
            if (first_upper) {
                if (is_upper(r0))
                    r0 = to_lower(r0);
                else
                    first_upper = false;
            }
            put_rune(out, r1);
        }
    }
    put_rune(out, r0);
    return out;
}

enum class Word { invalid, number, upper, alphabet, connector, punct, other };

struct Words {
    std::vector<char32_t> rs;
    std::size_t at = 0;

    // The next word [b, e) and its type.
    Word next(std::size_t& b, std::size_t& e) {
        b = at;
        if (at >= rs.size()) return Word::invalid;
        char32_t r = rs[at++];
        Word wt;
        auto run = [&](auto pred) {
            while (at < rs.size() && pred(rs[at]))
                ++at;
        };
        if (r == 0xFFFD) {
            wt = Word::invalid;
        } else if (is_connector(r)) {
            wt = Word::connector;
            run(is_connector);
        } else if (is_punct(r)) {
            wt = Word::punct;
            run(is_punct);
        } else if (is_upper(r)) {
            wt = Word::upper;
            if (at < rs.size()) {
                if (is_upper(rs[at])) {
                    run(is_upper);
                    // "HTTPStatus": the S starts the next word
                    if (at < rs.size() && is_alpha(rs[at])) --at;
                } else if (is_alpha(rs[at])) {
                    run(is_lower);
                }
            }
        } else if (is_alpha(r)) {
            wt = Word::alphabet;
            run(is_lower);
        } else if (is_digit(r)) {
            wt = Word::number;
            run(is_digit);
        } else {
            wt = Word::other;
            run([](char32_t c) {
                return !is_connector(c) && !is_alpha(c) && !is_digit(c) && !is_punct(c);
            });
        }
        e = at;
        return wt;
    }
    bool more() const { return at < rs.size(); }
};

std::string lower_case(std::string_view s, char32_t conn) {
    if (s.empty()) return "";
    Words w{runes(s)};
    std::string out;
    auto lower = [&](Word wt, std::size_t b, std::size_t e) {
        for (std::size_t k = b; k < e; ++k) {
            char32_t r = w.rs[k];
            if (wt != Word::upper && wt != Word::connector)
                put_rune(out, r);
            else if (is_connector(r))
                put_rune(out, conn);
            else
                put_rune(out, to_lower(r));
        }
    };
    std::size_t b = 0, e = 0;
    Word wt = w.next(b, e);
    while (w.more()) {
        if (wt != Word::connector) lower(wt, b, e);
        Word prev = wt;
        std::size_t lb = b, le = e;
        wt = w.next(b, e);
        switch (prev) {
        case Word::number:
            while (wt == Word::alphabet || wt == Word::number) {
                lower(wt, b, e);
                wt = w.next(b, e);
            }
            if (wt != Word::invalid && wt != Word::punct && wt != Word::connector)
                put_rune(out, conn);
            break;
        case Word::connector:
            lower(prev, lb, le);
            break;
        case Word::punct:
            break;
        default: {
            if (wt != Word::number) {
                if (wt != Word::connector && wt != Word::punct) put_rune(out, conn);
                break;
            }
            if (!w.more()) break;
            std::size_t nb = b, ne = e;
            wt = w.next(b, e);
            if (wt != Word::alphabet) { // "Bld4Floor": the number belongs to the word before
                lower(Word::number, nb, ne);
                if (wt != Word::connector && wt != Word::punct) put_rune(out, conn);
                break;
            }
            put_rune(out, conn); // "HTTP2xx": a connector before the number
            lower(Word::number, nb, ne);
            while (wt == Word::alphabet || wt == Word::number) {
                lower(wt, b, e);
                wt = w.next(b, e);
            }
            if (wt != Word::invalid && wt != Word::connector && wt != Word::punct)
                put_rune(out, conn);
            break;
        }
        }
    }
    lower(wt, b, e);
    return out;
}

// ---- goutils

// Go's unicode.IsSpace of one byte taken as a rune (goutils works bytewise).
bool byte_space(unsigned char c) {
    return is_space(c) || c == 0x85 || c == 0xA0;
}

std::string abbreviate(const std::string& s, std::int64_t offset, std::int64_t width) {
    if (s.empty()) return "";
    if (width < 4) return "";
    auto n = static_cast<std::int64_t>(s.size());
    if (n <= width) return s;
    if (offset > n) offset = n;
    if (wrap_sub(n, offset) < width - 3) offset = n - (width - 3); // Go's int wraps here
    if (offset <= 4) return s.substr(0, static_cast<std::size_t>(width - 3)) + "...";
    if (width < 7) return "";
    if (offset + width - 3 < n)
        return "..." + abbreviate(s.substr(static_cast<std::size_t>(offset)), 0, width - 3);
    return "..." + s.substr(static_cast<std::size_t>(n - (width - 3)));
}

std::string wrap_custom(const std::string& s, std::int64_t len, std::string nl, bool long_words,
                        std::size_t max) {
    if (s.empty()) return "";
    if (nl.empty()) nl = "\n";
    if (len < 1) len = 1;
    const auto wl = static_cast<std::size_t>(len);
    std::string out;
    std::size_t off = 0;
    while (s.size() - off > wl) {
        if (out.size() > max) throw FuncError("result exceeds " + std::to_string(max) + " bytes");
        if (s[off] == ' ') {
            ++off;
            continue;
        }
        std::size_t sp = s.substr(off, wl + 1).rfind(' ');
        if (sp != std::string::npos) {
            out.append(s, off, sp);
            out += nl;
            off += sp + 1;
        } else if (long_words) {
            out.append(s, off, wl);
            out += nl;
            off += wl;
        } else {
            std::size_t next = s.find(' ', off + wl);
            if (next != std::string::npos) {
                out.append(s, off, next - off);
                out += nl;
                off = next + 1;
            } else {
                out.append(s, off);
                off = s.size();
            }
        }
    }
    out.append(s, off);
    return out;
}

// ---- decimal arithmetic (shopspring/decimal as Sprig's addf, subf, mulf, divf use it): values
// are exact decimals made from a float64's shortest digits; division rounds to 16 places, half
// away from zero; the result is the float64 nearest to the exact decimal.

struct Dec {
    bool neg = false;
    std::string digits = "0"; // no leading zeros
    int exp = 0;              // value = digits * 10^exp
};

std::string strip(std::string d) {
    std::size_t i = 0;
    while (i + 1 < d.size() && d[i] == '0')
        ++i;
    return d.substr(i);
}

int cmp_mag(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    int c = a.compare(b);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
}

std::string add_mag(const std::string& a, const std::string& b) {
    std::string out;
    int carry = 0;
    for (std::size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
        int s = carry;
        if (i < a.size()) s += a[a.size() - 1 - i] - '0';
        if (i < b.size()) s += b[b.size() - 1 - i] - '0';
        out += static_cast<char>('0' + s % 10);
        carry = s / 10;
    }
    std::reverse(out.begin(), out.end());
    return strip(out);
}

std::string sub_mag(const std::string& a, const std::string& b) { // a >= b
    std::string out;
    int borrow = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        int s = a[a.size() - 1 - i] - '0' - borrow;
        if (i < b.size()) s -= b[b.size() - 1 - i] - '0';
        borrow = s < 0;
        if (s < 0) s += 10;
        out += static_cast<char>('0' + s);
    }
    std::reverse(out.begin(), out.end());
    return strip(out);
}

std::string mul_mag(const std::string& a, const std::string& b) {
    std::vector<int> r(a.size() + b.size(), 0);
    for (std::size_t i = 0; i < a.size(); ++i)
        for (std::size_t j = 0; j < b.size(); ++j)
            r[i + j + 1] += (a[i] - '0') * (b[j] - '0');
    for (std::size_t k = r.size(); k-- > 1;) {
        r[k - 1] += r[k] / 10;
        r[k] %= 10;
    }
    std::string out;
    for (int d : r)
        out += static_cast<char>('0' + d);
    return strip(out);
}

// a / b (b != 0): quotient and remainder.
std::pair<std::string, std::string> divmod_mag(const std::string& a, const std::string& b) {
    std::string q, rem = "0";
    for (char c : a) {
        rem = strip(rem + c);
        int d = 0;
        while (cmp_mag(rem, b) >= 0) {
            rem = sub_mag(rem, b);
            ++d;
        }
        q += static_cast<char>('0' + d);
    }
    return {strip(q), rem};
}

Dec dec_of(double f) {
    if (!std::isfinite(f))
        throw FuncError(std::string("Cannot create a Decimal from ") + (std::isnan(f) ? "NaN"
                                                                        : f > 0       ? "+Inf"
                                                                                      : "-Inf"));
    std::string t;
    io::go::append_float_g(t, f);
    Dec d;
    std::size_t i = 0;
    if (t[0] == '-') d.neg = true, i = 1;
    std::string digits;
    int exp = 0;
    bool frac = false;
    for (; i < t.size(); ++i) {
        char c = t[i];
        if (c == '.') {
            frac = true;
        } else if (c == 'e') {
            exp += std::atoi(t.c_str() + i + 1);
            break;
        } else {
            digits += c;
            if (frac) --exp;
        }
    }
    d.digits = strip(digits);
    d.exp = exp;
    if (d.digits == "0") d.neg = false;
    return d;
}

void align(Dec& a, Dec& b) {
    int e = std::min(a.exp, b.exp);
    a.digits = strip(a.digits + std::string(static_cast<std::size_t>(a.exp - e), '0'));
    b.digits = strip(b.digits + std::string(static_cast<std::size_t>(b.exp - e), '0'));
    a.exp = b.exp = e;
}

Dec dec_add(Dec a, Dec b) {
    align(a, b);
    Dec r;
    r.exp = a.exp;
    if (a.neg == b.neg) {
        r.digits = add_mag(a.digits, b.digits);
        r.neg = a.neg;
    } else if (cmp_mag(a.digits, b.digits) >= 0) {
        r.digits = sub_mag(a.digits, b.digits);
        r.neg = a.neg;
    } else {
        r.digits = sub_mag(b.digits, a.digits);
        r.neg = b.neg;
    }
    if (r.digits == "0") r.neg = false;
    return r;
}

Dec dec_mul(const Dec& a, const Dec& b) {
    Dec r;
    r.digits = mul_mag(a.digits, b.digits);
    r.exp = a.exp + b.exp;
    r.neg = r.digits != "0" && a.neg != b.neg;
    return r;
}

Dec dec_div(const Dec& a, const Dec& b) {
    if (b.digits == "0") throw FuncError("decimal division by zero");
    constexpr int kPrec = 16;
    // q * 10^16 = a.digits * 10^(a.exp - b.exp + 16) / b.digits
    int k = a.exp - b.exp + kPrec;
    std::string num = a.digits, den = b.digits;
    if (k >= 0)
        num += std::string(static_cast<std::size_t>(k), '0');
    else
        den += std::string(static_cast<std::size_t>(-k), '0');
    auto [q, rem] = divmod_mag(strip(num), strip(den));
    if (cmp_mag(add_mag(rem, rem), den) >= 0) q = add_mag(q, "1"); // half away from zero
    Dec r;
    r.digits = q;
    r.exp = -kPrec;
    r.neg = q != "0" && a.neg != b.neg;
    return r;
}

double dec_float(const Dec& d) {
    std::string t = (d.neg ? "-" : "") + d.digits + "e" + std::to_string(d.exp);
    return std::strtod(t.c_str(), nullptr);
}

Value dec_op(const Value& first, Args rest, Dec (*op)(const Dec&, const Dec&)) {
    Dec acc = dec_of(to_float64(first));
    for (const auto& v : rest)
        acc = op(acc, dec_of(to_float64(v)));
    return Value::floating(dec_float(acc));
}

Dec op_add(const Dec& a, const Dec& b) {
    return dec_add(a, b);
}
Dec op_sub(const Dec& a, const Dec& b) {
    Dec nb = b;
    if (nb.digits != "0") nb.neg = !nb.neg;
    return dec_add(a, nb);
}
Dec op_mul(const Dec& a, const Dec& b) {
    return dec_mul(a, b);
}
Dec op_div(const Dec& a, const Dec& b) {
    return dec_div(a, b);
}

// A float64 parameter: numbers (constants convert), anything else an argument error.
double arg_float(Args a, std::size_t i) {
    const Value& v = a[i];
    if (v.type() == Value::Type::floating) return v.as_float();
    if (v.type() == Value::Type::integer) return static_cast<double>(v.as_int());
    if (v.is_nil()) throw ArgError("invalid value; expected float64");
    throw ArgError(std::string("wrong type for value; expected float64; got ") + v.go_type());
}

// ---- paths (Go's package path)

std::string path_clean(std::string_view p) {
    if (p.empty()) return ".";
    bool rooted = p[0] == '/';
    std::vector<std::string_view> parts;
    std::size_t i = 0;
    while (i < p.size()) {
        std::size_t j = p.find('/', i);
        if (j == std::string_view::npos) j = p.size();
        std::string_view seg = p.substr(i, j - i);
        i = j + 1;
        if (seg.empty() || seg == ".") continue;
        if (seg == "..") {
            if (!parts.empty() && parts.back() != "..")
                parts.pop_back();
            else if (!rooted)
                parts.push_back(seg);
            continue;
        }
        parts.push_back(seg);
    }
    std::string out = rooted ? "/" : "";
    for (std::size_t k = 0; k < parts.size(); ++k) {
        if (k) out += '/';
        out += parts[k];
    }
    return out.empty() ? "." : out;
}

std::string path_base(std::string_view p) {
    if (p.empty()) return ".";
    while (p.size() > 0 && p.back() == '/')
        p.remove_suffix(1);
    std::size_t i = p.rfind('/');
    if (i != std::string_view::npos) p = p.substr(i + 1);
    if (p.empty()) return "/";
    return std::string(p);
}

std::string path_dir(std::string_view p) {
    std::size_t i = p.rfind('/');
    return path_clean(p.substr(0, i == std::string_view::npos ? 0 : i + 1));
}

std::string path_ext(std::string_view p) {
    for (std::size_t i = p.size(); i-- > 0 && p[i] != '/';)
        if (p[i] == '.') return std::string(p.substr(i));
    return "";
}

// ---- base32 (StdEncoding)

constexpr char kB32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

std::string b32enc(std::string_view in) {
    std::string out;
    for (std::size_t i = 0; i < in.size(); i += 5) {
        std::uint64_t buf = 0;
        std::size_t n = std::min<std::size_t>(5, in.size() - i);
        for (std::size_t k = 0; k < 5; ++k)
            buf = (buf << 8) | (k < n ? static_cast<unsigned char>(in[i + k]) : 0);
        static constexpr std::size_t kChars[] = {0, 2, 4, 5, 7, 8};
        for (std::size_t k = 0; k < 8; ++k)
            out += k < kChars[n] ? kB32[(buf >> (35 - 5 * k)) & 31] : '=';
    }
    return out;
}

// Decoded, or the error text Sprig returns as the result.
std::string b32dec(std::string_view raw) {
    std::string in;
    for (char c : raw)
        if (c != '\r' && c != '\n') in += c;
    std::string out;
    auto err = [](std::size_t at) {
        return "illegal base32 data at input byte " + std::to_string(at);
    };
    for (std::size_t i = 0; i < in.size(); i += 8) {
        if (in.size() - i < 8) return err(i);
        std::uint64_t buf = 0;
        std::size_t n = 8;
        for (std::size_t k = 0; k < 8; ++k) {
            char c = in[i + k];
            if (c == '=') {
                // padding: only at the end, in the lengths base32 allows, to the quantum's end
                if (i + 8 != in.size() || (k != 2 && k != 4 && k != 5 && k != 7)) return err(i + k);
                for (std::size_t m = k; m < 8; ++m)
                    if (in[i + m] != '=') return err(i + m);
                n = k;
                buf <<= 5 * (8 - k);
                break;
            }
            const char* p = std::strchr(kB32, c);
            if (p == nullptr || c == '\0') return err(i + k);
            buf = (buf << 5) | static_cast<std::uint64_t>(p - kB32);
        }
        static constexpr std::size_t kBytes[] = {0, 0, 1, 0, 2, 3, 0, 4, 5};
        for (std::size_t k = 0; k < kBytes[n]; ++k)
            out += static_cast<char>((buf >> (32 - 8 * k)) & 0xFF);
    }
    return out;
}

// ---- SHA-1 and Adler-32

std::string sha1_hex(std::string_view s) {
    std::uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    std::string m(s);
    std::uint64_t bits = static_cast<std::uint64_t>(s.size()) * 8;
    m += static_cast<char>(0x80);
    while (m.size() % 64 != 56)
        m += '\0';
    for (int i = 7; i >= 0; --i)
        m += static_cast<char>((bits >> (8 * i)) & 0xFF);
    auto rol = [](std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); };
    for (std::size_t off = 0; off < m.size(); off += 64) {
        std::uint32_t w[80];
        for (int i = 0; i < 16; ++i) {
            w[i] = 0;
            for (int k = 0; k < 4; ++k)
                w[i] = (w[i] << 8) |
                       static_cast<unsigned char>(m[off + static_cast<std::size_t>(4 * i + k)]);
        }
        for (int i = 16; i < 80; ++i)
            w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; ++i) {
            std::uint32_t f, k;
            if (i < 20)
                f = (b & c) | (~b & d), k = 0x5A827999;
            else if (i < 40)
                f = b ^ c ^ d, k = 0x6ED9EBA1;
            else if (i < 60)
                f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
            else
                f = b ^ c ^ d, k = 0xCA62C1D6;
            std::uint32_t t = rol(a, 5) + f + e + k + w[i];
            e = d, d = c, c = rol(b, 30), b = a, a = t;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
    }
    std::uint8_t out[20];
    for (int i = 0; i < 20; ++i)
        out[i] = static_cast<std::uint8_t>(h[i / 4] >> (24 - 8 * (i % 4)));
    return to_hex(out, 20);
}

std::uint32_t adler32(std::string_view s) {
    std::uint32_t a = 1, b = 0;
    for (char c : s) {
        a = (a + static_cast<unsigned char>(c)) % 65521;
        b = (b + a) % 65521;
    }
    return (b << 16) | a;
}

// ---- data structures

Value deep_copy(const Value& v, std::size_t depth) {
    if (depth > kMaxNesting) throw FuncError("deepCopy: value nested too deeply");
    if (v.is_list()) {
        List l;
        l.reserve(v.items().size());
        for (const auto& i : v.items())
            l.push_back(deep_copy(i, depth + 1));
        return Value::list(std::move(l));
    }
    if (v.is_dict()) {
        Dict d;
        for (const auto& [k, x] : v.entries())
            d.emplace(k, deep_copy(x, depth + 1));
        return Value::dict(std::move(d));
    }
    return v;
}

// mergo.Merge (WithOverride when `over`) of two map[string]interface{} as Sprig calls it: nil
// source values are skipped (or copied over with override); maps on both sides merge
// recursively, in place; otherwise the source value goes in when overriding, or when the
// destination lacks the key or holds an empty value.
void merge_into(const Value& dst, const Value& src, bool over, std::size_t depth) {
    if (depth > kMaxNesting) throw FuncError("merge: maps nested too deeply");
    Dict& d = dst.entries();
    for (const auto& [k, sv] : src.entries()) {
        auto it = d.find(k);
        if (sv.is_nil()) {
            if (over) d.insert_or_assign(k, sv);
            continue;
        }
        if (sv.is_dict() && it != d.end() && it->second.is_dict()) {
            const bool was_empty = it->second.entries().empty();
            merge_into(it->second, sv, over, depth + 1);
            if (was_empty) it->second = sv; // mergo sets an empty destination map to the source
            continue;
        }
        if (over || it == d.end() || !it->second.truth()) d.insert_or_assign(k, sv);
    }
}

// ---- semver

Value semver_value(const std::string& text) {
    auto v = semver::Version::parse_lenient(text);
    if (!v) throw FuncError(v.error().message);
    Dict d;
    d["Major"] = Value::integer(static_cast<std::int64_t>(v->major));
    d["Minor"] = Value::integer(static_cast<std::int64_t>(v->minor));
    d["Patch"] = Value::integer(static_cast<std::int64_t>(v->patch));
    std::string pre, meta;
    for (std::size_t i = 0; i < v->pre.size(); ++i)
        pre += (i ? "." : "") + v->pre[i];
    for (std::size_t i = 0; i < v->build.size(); ++i)
        meta += (i ? "." : "") + v->build[i];
    d["Prerelease"] = str(pre);
    d["Metadata"] = str(meta);
    d["Original"] = str(text);
    return Value::dict(std::move(d));
}

// ---- net/url (Parse and URL.String as Sprig's urlParse and urlJoin use them)

enum class Enc { path, host, user, query, fragment };

bool should_escape(unsigned char c, Enc mode) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return false;
    if (mode == Enc::host && std::strchr("!$&'()*+,;=:[]<>\"", c) != nullptr && c != 0)
        return false;
    switch (c) {
    case '-':
    case '_':
    case '.':
    case '~':
        return false;
    case '$':
    case '&':
    case '+':
    case ',':
    case '/':
    case ':':
    case ';':
    case '=':
    case '?':
    case '@':
        switch (mode) {
        case Enc::path:
            return c == '?';
        case Enc::user:
            return c == '@' || c == '/' || c == '?' || c == ':';
        case Enc::query:
            return true;
        case Enc::fragment:
            return false;
        default:
            break;
        }
        break;
    default:
        break;
    }
    if (mode == Enc::fragment && (c == '!' || c == '(' || c == ')' || c == '*')) return false;
    return true;
}

std::string url_escape(std::string_view s, Enc mode) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        if (!should_escape(c, mode)) {
            out += ch;
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

int unhex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// url.unescape; throws the Go error text.
std::string url_unescape(std::string_view s, Enc mode) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= s.size() || unhex(s[i + 1]) < 0 || unhex(s[i + 2]) < 0)
                throw FuncError("invalid URL escape " + io::go::quote(s.substr(i, 3)));
            if (mode == Enc::host && unhex(s[i + 1]) < 8 && s.substr(i, 3) != "%25")
                throw FuncError("invalid URL escape " + io::go::quote(s.substr(i, 3)));
            out += static_cast<char>(unhex(s[i + 1]) * 16 + unhex(s[i + 2]));
            i += 2;
            continue;
        }
        if (mode == Enc::host && static_cast<unsigned char>(c) < 0x80 &&
            should_escape(static_cast<unsigned char>(c), mode))
            throw FuncError("invalid character " + io::go::quote(std::string_view(&s[i], 1)) +
                            " in host name");
        if (c == '+' && mode == Enc::query) c = ' ';
        out += c;
    }
    return out;
}

struct Url {
    std::string scheme, opaque, host, path, raw_query, fragment;
    bool has_user = false, has_password = false;
    std::string username, password;
    bool force_query = false;
};

bool valid_port(std::string_view p) {
    if (p.empty()) return true;
    if (p[0] != ':') return false;
    for (char c : p.substr(1))
        if (c < '0' || c > '9') return false;
    return true;
}

std::string parse_host(std::string_view host) {
    if (!host.empty() && host[0] == '[') {
        std::size_t i = host.rfind(']');
        if (i == std::string_view::npos) throw FuncError("missing ']' in host");
        std::string_view port = host.substr(i + 1);
        if (!valid_port(port))
            throw FuncError("invalid port " + io::go::quote(port) + " after host");
    } else {
        std::size_t i = host.rfind(':');
        if (i != std::string_view::npos && !valid_port(host.substr(i)))
            throw FuncError("invalid port " + io::go::quote(host.substr(i)) + " after host");
    }
    return url_unescape(host, Enc::host);
}

bool valid_userinfo(std::string_view s) {
    for (char c : s) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) continue;
        if (std::strchr("-._:~!$&'()*+,;=%@", c) == nullptr || c == 0) return false;
    }
    return true;
}

Url url_parse(std::string_view raw) {
    Url u;
    std::string_view rest = raw;
    std::size_t hash = rest.find('#');
    std::string_view frag;
    bool has_frag = hash != std::string_view::npos;
    if (has_frag) {
        frag = rest.substr(hash + 1);
        rest = rest.substr(0, hash);
    }
    for (char c : raw)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
            throw FuncError("net/url: invalid control character in URL");
    if (rest.empty()) {
        if (has_frag) u.fragment = url_unescape(frag, Enc::fragment);
        return u;
    }
    if (rest == "*") {
        u.path = "*";
        return u;
    }
    // scheme
    for (std::size_t i = 0; i < rest.size(); ++i) {
        char c = rest[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) continue;
        if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
            if (i == 0) break;
            continue;
        }
        if (c == ':') {
            if (i == 0) throw FuncError("missing protocol scheme");
            u.scheme = std::string(rest.substr(0, i));
            for (auto& ch : u.scheme)
                if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch + 32);
            rest = rest.substr(i + 1);
        }
        break;
    }
    if (!rest.empty() && rest.back() == '?' && std::count(rest.begin(), rest.end(), '?') == 1) {
        u.force_query = true;
        rest.remove_suffix(1);
    } else {
        std::size_t q = rest.find('?');
        if (q != std::string_view::npos) {
            u.raw_query = std::string(rest.substr(q + 1));
            rest = rest.substr(0, q);
        }
    }
    if (rest.empty() || rest[0] != '/') {
        if (!u.scheme.empty()) {
            u.opaque = std::string(rest);
            if (has_frag) u.fragment = url_unescape(frag, Enc::fragment);
            return u;
        }
        std::size_t colon = rest.find(':'), slash = rest.find('/');
        if (colon != std::string_view::npos && (slash == std::string_view::npos || colon < slash))
            throw FuncError("first path segment in URL cannot contain colon");
    }
    if ((!u.scheme.empty() || !rest.starts_with("///")) && rest.starts_with("//")) {
        std::string_view auth = rest.substr(2);
        std::size_t slash = auth.find('/');
        rest = slash == std::string_view::npos ? std::string_view() : auth.substr(slash);
        if (slash != std::string_view::npos) auth = auth.substr(0, slash);
        std::size_t at = auth.rfind('@');
        if (at == std::string_view::npos) {
            u.host = parse_host(auth);
        } else {
            u.host = parse_host(auth.substr(at + 1));
            std::string_view ui = auth.substr(0, at);
            if (!valid_userinfo(ui)) throw FuncError("net/url: invalid userinfo");
            u.has_user = true;
            std::size_t colon = ui.find(':');
            if (colon == std::string_view::npos) {
                u.username = url_unescape(ui, Enc::user);
            } else {
                u.username = url_unescape(ui.substr(0, colon), Enc::user);
                u.password = url_unescape(ui.substr(colon + 1), Enc::user);
                u.has_password = true;
            }
        }
    }
    u.path = url_unescape(rest, Enc::path);
    if (has_frag) u.fragment = url_unescape(frag, Enc::fragment);
    return u;
}

std::string userinfo_string(const Url& u) {
    std::string s = url_escape(u.username, Enc::user);
    if (u.has_password) s += ":" + url_escape(u.password, Enc::user);
    return s;
}

// URL.Hostname: the host without a valid port, without IPv6 brackets.
std::string hostname(const std::string& host) {
    std::string_view h = host;
    std::size_t c = h.rfind(':');
    if (c != std::string_view::npos && valid_port(h.substr(c))) h = h.substr(0, c);
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    return std::string(h);
}

std::string url_string(const Url& u) {
    std::string out;
    if (!u.scheme.empty()) out = u.scheme + ":";
    if (!u.opaque.empty()) {
        out += u.opaque;
    } else {
        if (!u.scheme.empty() || !u.host.empty() || u.has_user) {
            if (!u.host.empty() || !u.path.empty() || u.has_user) out += "//";
            if (u.has_user) out += userinfo_string(u) + "@";
            if (!u.host.empty()) out += url_escape(u.host, Enc::host);
        }
        std::string path = u.path == "*" ? "*" : url_escape(u.path, Enc::path);
        if (!path.empty() && path[0] != '/' && !u.host.empty()) out += '/';
        if (out.empty()) {
            std::size_t colon = path.find(':'), slash = path.find('/');
            if (colon != std::string::npos && (slash == std::string::npos || colon < slash))
                out += "./";
        }
        out += path;
    }
    if (u.force_query || !u.raw_query.empty()) out += "?" + u.raw_query;
    if (!u.fragment.empty()) out += "#" + url_escape(u.fragment, Enc::fragment);
    return out;
}

std::string dict_string(const Dict& d, const char* key) {
    auto it = d.find(key);
    if (it == d.end()) return "";
    if (!it->second.is_string())
        throw FuncError(std::string("interface conversion: interface {} is ") +
                        (it->second.is_nil() ? "nil" : it->second.go_type()) + ", not string");
    return it->second.as_string();
}

// ---- helpers

std::vector<std::string> go_split_n(const std::string& s, const std::string& sep, std::int64_t n) {
    std::vector<std::string> parts;
    if (n == 0) return parts;
    if (sep.empty()) {
        for (std::size_t i = 0; i < s.size();) {
            if (n > 0 && static_cast<std::int64_t>(parts.size()) == n - 1) {
                parts.push_back(s.substr(i));
                return parts;
            }
            std::size_t w = 0;
            decode_rune(s, i, w);
            parts.push_back(s.substr(i, w));
            i += w;
        }
        return parts;
    }
    std::size_t i = 0;
    while (n < 0 || static_cast<std::int64_t>(parts.size()) < n - 1) {
        std::size_t j = s.find(sep, i);
        if (j == std::string::npos) break;
        parts.push_back(s.substr(i, j - i));
        i = j + sep.size();
    }
    parts.push_back(s.substr(i));
    return parts;
}

Value string_list(std::vector<std::string> v) {
    List l;
    l.reserve(v.size());
    for (auto& s : v)
        l.push_back(str(std::move(s)));
    return Value::list(std::move(l));
}

// Sprig's untilStep: start, start+step, ... while short of stop (counting down when stop is
// below start and the step is negative), the additions wrapping around as Go's do; at most
// `limit` items, else an error naming `fn`.
std::vector<std::int64_t> until_ints(std::int64_t start, std::int64_t stop, std::int64_t step,
                                     std::size_t limit, const char* fn) {
    std::vector<std::int64_t> out;
    const bool down = stop < start;
    if (down ? step >= 0 : step <= 0) return out;
    for (std::int64_t i = start; down ? i > stop : i < stop; i = wrap_add(i, step)) {
        if (out.size() >= limit)
            throw FuncError(std::string(fn) + ": more than " + std::to_string(limit) + " items");
        out.push_back(i);
    }
    return out;
}

std::string json_text(Context& c, const Value& v, bool html) {
    std::string out;
    marshal(out, v, 0, c.options().max_output, html);
    return out;
}

// json.MarshalIndent(v, "", "  ") from compact JSON.
std::string pretty_json(std::string_view compact) {
    struct Out {
        std::string s;
        void put(char c) { s += c; }
        void put(const char* p, std::size_t n) { s.append(p, n); }
        void spaces(std::size_t n) { s.append(n / 2, ' '); } // indent() counts four per level
    } out;
    io::go::indent(out, compact, 0);
    return out.s;
}

Value from_json_text(const std::string& text) {
    auto docs = io::parse_json(text, "fromJson argument");
    if (!docs) throw FuncError(docs.error().message);
    if (docs->empty()) throw FuncError("unexpected end of JSON input");
    if (docs->size() > 1) throw FuncError("invalid character after top-level value");
    return from_json(docs->front().root);
}

// A result count n (negative: all) capped one past the list limit, so that check_count can tell
// an over-long result without the engine producing all of it.
std::int64_t capped_count(const Context& c, std::int64_t n, const char*) {
    auto cap = static_cast<std::int64_t>(max_list_items(c)) + 1;
    return n < 0 || n > cap ? cap : n;
}

void check_count(const Context& c, std::size_t n, const char* fn) {
    if (n > max_list_items(c))
        throw FuncError(std::string(fn) + ": more than " + std::to_string(max_list_items(c)) +
                        " items");
}

// regexp's quote(): the expression in backquotes when strconv.CanBackquote, else %q.
std::string backquoted(const std::string& s) {
    bool ok = true;
    for (std::size_t i = 0; i < s.size() && ok;) {
        std::size_t w = 0;
        char32_t r = decode_rune(s, i, w);
        if ((r == 0xFFFD && w == 1) || r == '`' || r == 0xFEFF || (r < 0x20 && r != '\t') ||
            r == 0x7F)
            ok = false;
        i += w;
    }
    if (ok) return "`" + s + "`";
    return io::go::quote(s);
}

// f(), with the regex engine's refusals as function errors.
template <class F>
auto limited(F f) -> decltype(f()) {
    try {
        return f();
    } catch (const re::LimitError& e) {
        throw FuncError(e.what());
    }
}

void must_alias(Funcs& f, const char* alias, const char* name) {
    const Func* fn = f.find(name);
    if (fn != nullptr) f.add(alias, *fn);
}

} // namespace

void add_sprig_more(Funcs& f) {
    f.add("hello", 0, 0, [](Context&, Args) { return str("Hello!"); });

    // Strings
    f.add("abbrev", 2, 2, [](Context&, Args a) {
        std::int64_t w = arg_int(a, 0);
        const std::string& s = arg_string(a, 1);
        return str(w < 4 ? s : abbreviate(s, 0, w));
    });
    f.add("abbrevboth", 3, 3, [](Context&, Args a) {
        std::int64_t l = arg_int(a, 0), r = arg_int(a, 1);
        const std::string& s = arg_string(a, 2);
        if (r < 4 || (l > 0 && r < 7)) return str(s);
        return str(abbreviate(s, l, r));
    });
    f.add("initials", 1, 1, [](Context&, Args a) {
        std::string out;
        bool gap = true;
        for (char ch : arg_string(a, 0)) {
            auto c = static_cast<unsigned char>(ch);
            if (byte_space(c)) {
                gap = true;
            } else if (gap) {
                put_rune(out, c); // goutils takes each byte for a rune
                gap = false;
            }
        }
        return str(out);
    });
    f.add("swapcase", 1, 1, [](Context&, Args a) {
        // goutils.SwapCase: upper to lower, lower to title case after white space, else upper.
        std::string out;
        const std::string& s = arg_string(a, 0);
        for (std::size_t i = 0; i < s.size();) {
            std::size_t w = 0;
            char32_t r = decode_rune(s, i, w);
            if (r == 0xFFFD && w == 1)
                put_rune(out, r); // []rune(s) makes a bad byte U+FFFD
            else if (is_upper(r))
                put_rune(out, to_lower(r));
            else if (is_lower(r)) // title case after white space; the same for ASCII
                put_rune(out, to_upper(r));
            else
                out.append(s, i, w);
            i += w;
        }
        return str(out);
    });
    f.add("snakecase", 1, 1,
          [](Context&, Args a) { return str(lower_case(arg_string(a, 0), '_')); });
    f.add("kebabcase", 1, 1,
          [](Context&, Args a) { return str(lower_case(arg_string(a, 0), '-')); });
    f.add("camelcase", 1, 1, [](Context&, Args a) { return str(pascal_case(arg_string(a, 0))); });
    f.add("wrap", 2, 2, [](Context&, Args a) {
        return str(wrap_custom(arg_string(a, 1), arg_int(a, 0), "", false, SIZE_MAX));
    });
    f.add("wrapWith", 3, 3, [](Context& c, Args a) {
        std::int64_t l = arg_int(a, 0);
        return str(
            wrap_custom(arg_string(a, 2), l, arg_string(a, 1), true, c.options().max_output));
    });
    f.add("plural", 3, 3, [](Context&, Args a) {
        return arg_int(a, 2) == 1 ? str(arg_string(a, 0)) : str(arg_string(a, 1));
    });
    f.add("sha1sum", 1, 1, [](Context&, Args a) { return str(sha1_hex(arg_string(a, 0))); });
    f.add("sha256sum", 1, 1, [](Context&, Args a) {
        Sha256 h;
        h.update(arg_string(a, 0));
        auto d = h.finish();
        return str(to_hex(d.data(), d.size()));
    });
    f.add("adler32sum", 1, 1,
          [](Context&, Args a) { return str(std::to_string(adler32(arg_string(a, 0)))); });

    // Conversions
    f.add("seq", 0, V, [](Context& c, Args a) {
        std::vector<std::int64_t> p;
        for (std::size_t i = 0; i < a.size(); ++i)
            p.push_back(arg_int(a, i));
        std::vector<std::int64_t> v;
        auto lim = max_list_items(c);
        if (p.size() == 1) {
            std::int64_t inc = p[0] < 1 ? -1 : 1;
            v = until_ints(1, wrap_add(p[0], inc), inc, lim, "seq");
        } else if (p.size() == 2) {
            std::int64_t step = p[1] < p[0] ? -1 : 1;
            v = until_ints(p[0], wrap_add(p[1], step), step, lim, "seq");
        } else if (p.size() == 3) {
            std::int64_t inc = 1;
            if (p[2] < p[0]) {
                inc = -1;
                if (p[1] > 0) return str("");
            }
            v = until_ints(p[0], wrap_add(p[2], inc), p[1], lim, "seq");
        } else {
            return str("");
        }
        std::string out;
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) out += ' ';
            out += std::to_string(v[i]);
        }
        return str(out);
    });
    f.add("toDecimal", 1, 1, [](Context&, Args a) {
        // strconv.ParseInt(fmt.Sprint(v), 8, 64), 0 on any error (out of range too)
        const ParsedInt r = parse_int(go_string(a[0]), 8);
        return Value::integer(r.err == ParsedInt::Err::none ? r.value : 0);
    });

    // Split
    f.add("splitn", 3, 3, [](Context& c, Args a) {
        Dict d;
        std::size_t i = 0;
        auto parts = go_split_n(arg_string(a, 2), arg_string(a, 0),
                                capped_count(c, arg_int(a, 1), "splitn"));
        check_count(c, parts.size(), "splitn");
        for (auto& p : parts) {
            std::string key = "_"; // appended, not "_" + ...: GCC 12 -Wrestrict at -O3
            key += std::to_string(i++);
            d[key] = str(std::move(p));
        }
        return Value::dict(std::move(d));
    });
    f.add("toStrings", 1, 1, [](Context&, Args a) { return string_list(strslice(a[0])); });

    f.add("untilStep", 3, 3, [](Context& c, Args a) {
        List l;
        for (std::int64_t i : until_ints(arg_int(a, 0), arg_int(a, 1), arg_int(a, 2),
                                         max_list_items(c), "untilStep"))
            l.push_back(Value::integer(i));
        return Value::list(std::move(l));
    });

    // Arithmetic on floats
    f.add("add1f", 1, 1, [](Context&, Args a) {
        Value one = Value::integer(1);
        return dec_op(a[0], std::span<const Value>(&one, 1), op_add);
    });
    f.add("addf", 0, V, [](Context&, Args a) { return dec_op(Value::floating(0), a, op_add); });
    f.add("subf", 1, V, [](Context&, Args a) { return dec_op(a[0], a.subspan(1), op_sub); });
    f.add("mulf", 1, V, [](Context&, Args a) { return dec_op(a[0], a.subspan(1), op_mul); });
    f.add("divf", 1, V, [](Context&, Args a) { return dec_op(a[0], a.subspan(1), op_div); });
    must_alias(f, "biggest", "max");
    f.add("maxf", 1, V, [](Context&, Args a) {
        double m = to_float64(a[0]);
        for (std::size_t i = 1; i < a.size(); ++i) {
            double b = to_float64(a[i]);
            m = std::isnan(m) || std::isnan(b) ? NAN : std::max(m, b);
        }
        return Value::floating(m);
    });
    f.add("minf", 1, V, [](Context&, Args a) {
        double m = to_float64(a[0]);
        for (std::size_t i = 1; i < a.size(); ++i) {
            double b = to_float64(a[i]);
            m = std::isnan(m) || std::isnan(b) ? NAN : std::min(m, b);
        }
        return Value::floating(m);
    });
    f.add("ceil", 1, 1,
          [](Context&, Args a) { return Value::floating(std::ceil(to_float64(a[0]))); });
    f.add("floor", 1, 1,
          [](Context&, Args a) { return Value::floating(std::floor(to_float64(a[0]))); });
    f.add("round", 2, V, [](Context&, Args a) {
        double on = a.size() > 2 ? arg_float(a, 2) : 0.5;
        double val = to_float64(a[0]);
        double pow = std::pow(10.0, static_cast<double>(arg_int(a, 1)));
        double digit = pow * val;
        double ip = 0;
        double frac = std::modf(digit, &ip);
        double r = frac >= on ? std::ceil(digit) : std::floor(digit);
        return Value::floating(r / pow);
    });

    // Defaults
    f.add("all", 0, V, [](Context&, Args a) {
        for (const auto& v : a)
            if (!v.truth()) return Value::boolean(false);
        return Value::boolean(true);
    });
    f.add("any", 0, V, [](Context&, Args a) {
        for (const auto& v : a)
            if (v.truth()) return Value::boolean(true);
        return Value::boolean(false);
    });
    must_alias(f, "mustCompact", "compact");
    f.add("fromJson", 1, 1, [](Context&, Args a) {
        try {
            return from_json_text(arg_string(a, 0));
        } catch (const FuncError&) {
            return Value();
        }
    });
    f.add("mustFromJson", 1, 1, [](Context&, Args a) { return from_json_text(arg_string(a, 0)); });
    f.add("mustToJson", 1, 1, [](Context& c, Args a) { return str(json_text(c, a[0], true)); });
    f.add("toPrettyJson", 1, 1, [](Context& c, Args a) {
        try {
            return str(pretty_json(json_text(c, a[0], true)));
        } catch (const FuncError&) {
            return str("");
        }
    });
    f.add("mustToPrettyJson", 1, 1,
          [](Context& c, Args a) { return str(pretty_json(json_text(c, a[0], true))); });
    f.add("toRawJson", 1, 1, [](Context& c, Args a) {
        try {
            return str(json_text(c, a[0], false));
        } catch (const FuncError&) {
            return str("");
        }
    });
    f.add("mustToRawJson", 1, 1, [](Context& c, Args a) { return str(json_text(c, a[0], false)); });
    f.add("deepCopy", 1, 1, [](Context&, Args a) { return deep_copy(a[0], 0); });
    f.add("mustDeepCopy", 1, 1, [](Context&, Args a) { return deep_copy(a[0], 0); });

    // Reflection
    f.add("typeIsLike", 2, 2, [](Context&, Args a) {
        const std::string& t = arg_string(a, 0);
        std::string actual = a[1].go_type();
        return Value::boolean(t == actual || "*" + t == actual);
    });

    // Paths
    f.add("base", 1, 1, [](Context&, Args a) { return str(path_base(arg_string(a, 0))); });
    f.add("dir", 1, 1, [](Context&, Args a) { return str(path_dir(arg_string(a, 0))); });
    f.add("clean", 1, 1, [](Context&, Args a) { return str(path_clean(arg_string(a, 0))); });
    f.add("ext", 1, 1, [](Context&, Args a) { return str(path_ext(arg_string(a, 0))); });
    f.add("isAbs", 1, 1, [](Context&, Args a) {
        const std::string& p = arg_string(a, 0);
        return Value::boolean(!p.empty() && p[0] == '/');
    });

    // Encoding
    f.add("b32enc", 1, 1, [](Context&, Args a) { return str(b32enc(arg_string(a, 0))); });
    f.add("b32dec", 1, 1, [](Context&, Args a) { return str(b32dec(arg_string(a, 0))); });

    // Data structures
    must_alias(f, "tuple", "list");
    f.add("pluck", 1, V, [](Context&, Args a) {
        const std::string& k = arg_string(a, 0);
        List out;
        for (std::size_t i = 1; i < a.size(); ++i) {
            const Dict& d = arg_dict(a, i).entries();
            auto it = d.find(k);
            if (it != d.end()) out.push_back(it->second);
        }
        return Value::list(std::move(out));
    });
    auto merge = [](bool over) {
        return [over](Context&, Args a) {
            const Value& dst = arg_dict(a, 0);
            for (std::size_t i = 1; i < a.size(); ++i)
                merge_into(dst, arg_dict(a, i), over, 0);
            return dst;
        };
    };
    f.add("merge", 1, V, merge(false));
    f.add("mustMerge", 1, V, merge(false));
    f.add("mergeOverwrite", 1, V, merge(true));
    f.add("mustMergeOverwrite", 1, V, merge(true));
    for (const char* n : {"append", "push", "prepend", "first", "rest", "last", "initial",
                          "reverse", "uniq", "has", "slice"}) {
        std::string must = std::string("must") + n;
        must[4] = static_cast<char>(must[4] - 32);
        must_alias(f, must.c_str(), n);
    }
    f.add("without", 1, V, [](Context&, Args a) {
        List out;
        for (const auto& v : list_arg(a[0], "without"))
            if (std::find(a.begin() + 1, a.end(), v) == a.end()) out.push_back(v);
        return Value::list(std::move(out));
    });
    must_alias(f, "mustWithout", "without");
    f.add("concat", 0, V, [](Context&, Args a) {
        List out;
        for (const auto& l : a) {
            if (!l.is_list())
                throw FuncError(std::string("Cannot concat type ") + kind_of(l) + " as list");
            out.insert(out.end(), l.items().begin(), l.items().end());
        }
        return Value::list(std::move(out));
    });
    f.add("chunk", 2, 2, [](Context&, Args a) {
        std::int64_t size = arg_int(a, 0);
        const Value& l = a[1];
        if (!l.is_list()) throw FuncError(std::string("Cannot chunk type ") + kind_of(l));
        if (size <= 0) throw FuncError("runtime error: makeslice: len out of range");
        const List& items = l.items();
        List out;
        auto n = static_cast<std::size_t>(size);
        for (std::size_t i = 0; i < items.size(); i += n)
            out.push_back(Value::list(
                List(items.begin() + static_cast<std::ptrdiff_t>(i),
                     items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), i + n)))));
        return Value::list(std::move(out));
    });
    must_alias(f, "mustChunk", "chunk");

    // SemVer (Masterminds/semver v3)
    f.add("semver", 1, 1, [](Context&, Args a) { return semver_value(arg_string(a, 0)); });
    f.add("semverCompare", 2, 2, [](Context&, Args a) {
        auto c = semver::Constraint::parse(arg_string(a, 0));
        if (!c) throw FuncError(c.error().message);
        auto v = semver::Version::parse_lenient(arg_string(a, 1));
        if (!v) throw FuncError(v.error().message);
        return Value::boolean(c->check(*v));
    });

    // Regular expressions (Go's RE2 syntax)
    // A bad expression: the must* forms return Go's error; the others (Sprig calls MustCompile)
    // fail with its panic's text.
    auto rx = [](const std::string& p, bool must) {
        try {
            return re::Regex(p);
        } catch (const re::SyntaxError& e) {
            if (must) throw FuncError(e.what());
            throw FuncError("regexp: Compile(" + backquoted(p) + "): " + e.what());
        }
    };
    f.add("regexMatch", 2, 2, [](Context& c, Args a) {
        try {
            return Value::boolean(
                re::Regex(arg_string(a, 0)).matches(arg_string(a, 1), c.regex_budget()));
        } catch (const re::SyntaxError&) {
            return Value::boolean(false);
        } catch (const re::LimitError& e) {
            throw FuncError(e.what());
        }
    });
    f.add("mustRegexMatch", 2, 2, [rx](Context& c, Args a) {
        const re::Regex r = rx(arg_string(a, 0), true);
        return Value::boolean(
            limited([&] { return r.matches(arg_string(a, 1), c.regex_budget()); }));
    });
    auto find_all = [rx](bool must) {
        return [rx, must](Context& c, Args a) {
            const std::string& s = arg_string(a, 1);
            const std::int64_t n = capped_count(c, arg_int(a, 2), "regexFindAll");
            const re::Regex r = rx(arg_string(a, 0), must);
            std::vector<std::string> out;
            auto all = limited([&] { return r.find_all(s, n, c.regex_budget()); });
            check_count(c, all.size(), "regexFindAll");
            for (const auto& m : all)
                out.push_back(s.substr(static_cast<std::size_t>(m[0]),
                                       static_cast<std::size_t>(m[1] - m[0])));
            return string_list(std::move(out));
        };
    };
    f.add("regexFindAll", 3, 3, find_all(false));
    f.add("mustRegexFindAll", 3, 3, find_all(true));
    auto find = [rx](bool must) {
        return [rx, must](Context& c, Args a) {
            const std::string& s = arg_string(a, 1);
            const re::Regex r = rx(arg_string(a, 0), must);
            std::vector<std::ptrdiff_t> caps;
            if (!limited([&] { return r.search(s, 0, caps, c.regex_budget()); })) return str("");
            return str(s.substr(static_cast<std::size_t>(caps[0]),
                                static_cast<std::size_t>(caps[1] - caps[0])));
        };
    };
    f.add("regexFind", 2, 2, find(false));
    f.add("mustRegexFind", 2, 2, find(true));
    auto replace = [rx](bool literal, bool must) {
        return [rx, literal, must](Context& c, Args a) {
            const re::Regex r = rx(arg_string(a, 0), must);
            return str(limited([&] {
                return r.replace_all(arg_string(a, 1), arg_string(a, 2), literal,
                                     c.options().max_output, c.regex_budget());
            }));
        };
    };
    f.add("regexReplaceAll", 3, 3, replace(false, false));
    f.add("mustRegexReplaceAll", 3, 3, replace(false, true));
    f.add("regexReplaceAllLiteral", 3, 3, replace(true, false));
    f.add("mustRegexReplaceAllLiteral", 3, 3, replace(true, true));
    auto split = [rx](bool must) {
        return [rx, must](Context& c, Args a) {
            const re::Regex r = rx(arg_string(a, 0), must);
            const std::int64_t n = capped_count(c, arg_int(a, 2), "regexSplit");
            auto parts = limited([&] { return r.split(arg_string(a, 1), n, c.regex_budget()); });
            check_count(c, parts.size(), "regexSplit");
            return string_list(std::move(parts));
        };
    };
    f.add("regexSplit", 3, 3, split(false));
    f.add("mustRegexSplit", 3, 3, split(true));
    f.add("regexQuoteMeta", 1, 1,
          [](Context&, Args a) { return str(re::quote_meta(arg_string(a, 0))); });

    // URLs (net/url)
    f.add("urlParse", 1, 1, [](Context&, Args a) {
        const std::string& raw = arg_string(a, 0);
        Url u;
        try {
            u = url_parse(raw);
        } catch (const FuncError& e) {
            throw FuncError("unable to parse url: parse " +
                            io::go::quote(raw.substr(0, raw.find('#'))) + ": " + e.what());
        }
        Dict d;
        d["scheme"] = str(u.scheme);
        d["host"] = str(u.host);
        d["hostname"] = str(hostname(u.host));
        d["path"] = str(u.path);
        d["query"] = str(u.raw_query);
        d["opaque"] = str(u.opaque);
        d["fragment"] = str(u.fragment);
        d["userinfo"] = str(u.has_user ? userinfo_string(u) : "");
        return Value::dict(std::move(d));
    });
    f.add("urlJoin", 1, 1, [](Context&, Args a) {
        const Dict& d = arg_dict(a, 0).entries();
        Url u;
        u.scheme = dict_string(d, "scheme");
        u.host = dict_string(d, "host");
        u.path = dict_string(d, "path");
        u.raw_query = dict_string(d, "query");
        u.opaque = dict_string(d, "opaque");
        u.fragment = dict_string(d, "fragment");
        std::string ui = dict_string(d, "userinfo");
        if (!ui.empty()) {
            Url t;
            try {
                t = url_parse("proto://" + ui + "@host");
            } catch (const FuncError& e) {
                throw FuncError(std::string("unable to parse userinfo in dict: parse ") +
                                io::go::quote("proto://" + ui + "@host") + ": " + e.what());
            }
            u.has_user = t.has_user;
            u.has_password = t.has_password;
            u.username = t.username;
            u.password = t.password;
        }
        return str(url_string(u));
    });
}

} // namespace kpkg::tmpl
