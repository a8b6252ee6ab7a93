// Go's fmt over template Values: Sprint, Sprintln and Sprintf with the common verbs.
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "kpkg/io/go.hpp"
#include "kpkg/io/scalars.hpp"
#include "kpkg/template/funcs.hpp"

namespace kpkg::tmpl {
namespace {

// fmt refuses widths and precisions above a million (either sign).
constexpr bool too_large(std::int64_t n) {
    return n > 1000000 || n < -1000000;
}

struct Spec {
    bool minus = false, plus = false, sharp = false, zero = false, space = false;
    int width = -1, prec = -1;
    char verb = 'v';
    std::string_view name; // the verb as written, when it is not one character of ASCII
};

void append_rune(std::string& out, std::uint32_t r) {
    if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = 0xFFFD;
    io::detail::append_utf8(out, r);
}

// %c and %q of an integer: fmt takes it as unsigned, and anything above U+10FFFF (a negative
// number too) is U+FFFD, not the low bits.
std::uint32_t rune_of(std::int64_t v) {
    return v < 0 || v > 0x10FFFF ? 0xFFFD : static_cast<std::uint32_t>(v);
}

std::size_t rune_count(std::string_view s) {
    std::size_t n = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    return n;
}

// Pads `s` to the width: spaces on the left (or right with '-'), or zeros after the sign.
void pad(std::string& out, const std::string& s, const Spec& sp, bool zero_ok) {
    std::size_t n = rune_count(s);
    if (sp.width < 0 || n >= static_cast<std::size_t>(sp.width)) {
        out += s;
        return;
    }
    std::size_t fill = static_cast<std::size_t>(sp.width) - n;
    if (sp.minus) {
        out += s;
        out.append(fill, ' ');
    } else if (sp.zero && zero_ok) {
        std::size_t sign = (!s.empty() && (s[0] == '-' || s[0] == '+' || s[0] == ' ')) ? 1 : 0;
        out.append(s, 0, sign);
        out.append(fill, '0');
        out.append(s, sign);
    } else {
        out.append(fill, ' ');
        out += s;
    }
}

std::string integer(std::int64_t v, const Spec& sp) {
    std::uint64_t u = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    int base = 10;
    const char* digits = "0123456789abcdef";
    switch (sp.verb) {
    case 'b':
        base = 2;
        break;
    case 'o':
    case 'O':
        base = 8;
        break;
    case 'x':
        base = 16;
        break;
    case 'X':
        base = 16, digits = "0123456789ABCDEF";
        break;
    default:
        break;
    }
    std::string d;
    do {
        d.insert(d.begin(), digits[u % static_cast<unsigned>(base)]);
        u /= static_cast<unsigned>(base);
    } while (u);
    if (sp.prec >= 0) {
        if (sp.prec == 0 && v == 0) d.clear();
        if (d.size() < static_cast<std::size_t>(sp.prec))
            d.insert(0, static_cast<std::size_t>(sp.prec) - d.size(), '0');
    }
    if (sp.sharp || sp.verb == 'O') {
        if (sp.verb == 'x')
            d = "0x" + d;
        else if (sp.verb == 'X')
            d = "0X" + d;
        else if (sp.verb == 'o' && (d.empty() || d[0] != '0'))
            d = "0" + d;
        else if (sp.verb == 'O')
            d = "0o" + d;
        else if (sp.verb == 'b')
            d = "0b" + d;
    }
    if (v < 0)
        d = "-" + d;
    else if (sp.plus)
        d = "+" + d;
    else if (sp.space)
        d = " " + d;
    return d;
}

std::string floating(double f, const Spec& sp) {
    char verb = sp.verb == 'v' ? 'g' : sp.verb;
    std::string s;
    if (std::isinf(f) || std::isnan(f)) {
        s = std::isnan(f) ? "NaN" : f < 0 ? "-Inf" : "+Inf";
        if (!std::isnan(f) && f > 0 && !sp.plus) s = sp.space ? " Inf" : "Inf";
        if (std::isnan(f) && sp.plus) s = "+NaN";
        return s;
    }
    if ((verb == 'g' || verb == 'G') && sp.prec < 0) {
        io::go::append_float_g(s, f);
        if (verb == 'G')
            for (auto& c : s)
                if (c == 'e') c = 'E';
    } else {
        std::string fmt = "%.*";
        fmt += verb == 'F' ? 'f' : verb;
        int prec = sp.prec < 0 ? 6 : sp.prec;
        char buf[512];
        int n = std::snprintf(buf, sizeof buf, fmt.c_str(), prec, f);
        if (n < 0 || static_cast<std::size_t>(n) >= sizeof buf) {
            std::vector<char> big(static_cast<std::size_t>(n > 0 ? n : 0) + 1);
            std::snprintf(big.data(), big.size(), fmt.c_str(), prec, f);
            s = big.data();
        } else {
            s = buf;
        }
    }
    if (s[0] != '-') {
        if (sp.plus)
            s = "+" + s;
        else if (sp.space)
            s = " " + s;
    }
    return s;
}

void format(std::string& out, const Value& v, const Spec& sp, std::size_t depth, std::size_t max);

// A verb the value has no form for: %!VERB(TYPE=VALUE), the value printed with %v and the
// verb's flags, width and precision (fmt's badVerb).
void bad_verb(std::string& out, const Value& v, const Spec& sp, std::size_t depth,
              std::size_t max) {
    out += "%!";
    if (sp.name.empty())
        out += sp.verb;
    else
        out += sp.name;
    out += '(';
    if (v.is_nil()) {
        out += "<nil>";
    } else {
        out += v.go_type();
        out += '=';
        Spec as_v = sp;
        as_v.verb = 'v';
        as_v.name = {};
        format(out, v, as_v, depth + 1, max);
    }
    out += ')';
}

void format(std::string& out, const Value& v, const Spec& sp, std::size_t depth, std::size_t max) {
    if (depth > kMaxNesting)
        throw std::length_error("value nested more than " + std::to_string(kMaxNesting) +
                                " levels deep (a map or list that contains itself?)");
    if (out.size() > max)
        throw std::length_error("value prints to more than " + std::to_string(max) + " bytes");
    char verb = sp.verb;
    if (verb == 'T') {
        pad(out, v.is_nil() ? "<nil>" : v.go_type(), sp, false);
        return;
    }
    switch (v.type()) {
    case Value::Type::nil:
        if (verb == 'v')
            pad(out, "<nil>", sp, false);
        else
            bad_verb(out, v, sp, depth, max);
        return;
    case Value::Type::boolean:
        if (verb == 'v' || verb == 't')
            pad(out, v.as_bool() ? "true" : "false", sp, false);
        else
            bad_verb(out, v, sp, depth, max);
        return;
    case Value::Type::integer:
        switch (verb) {
        case 'v':
        case 'd':
        case 'b':
        case 'o':
        case 'O':
        case 'x':
        case 'X': {
            Spec s2 = sp;
            if (verb == 'v') s2.verb = 'd';
            pad(out, integer(v.as_int(), s2), sp, sp.prec < 0);
            return;
        }
        case 'c': {
            std::string r;
            append_rune(r, rune_of(v.as_int()));
            pad(out, r, sp, false);
            return;
        }
        case 'q': {
            std::string r;
            append_rune(r, rune_of(v.as_int()));
            std::string q = io::go::quote(r);
            q.front() = q.back() = '\'';
            if (r == "'") q = "'\\''";
            if (r == "\"") q = "'\"'";
            pad(out, q, sp, false);
            return;
        }
        case 'U': {
            char buf[32];
            std::snprintf(buf, sizeof buf, "U+%04llX", static_cast<unsigned long long>(v.as_int()));
            pad(out, buf, sp, false);
            return;
        }
        default:
            bad_verb(out, v, sp, depth, max);
            return;
        }
    case Value::Type::floating:
        switch (verb) {
        case 'v':
        case 'e':
        case 'E':
        case 'f':
        case 'F':
        case 'g':
        case 'G':
            pad(out, floating(v.as_float(), sp), sp, true);
            return;
        default:
            bad_verb(out, v, sp, depth, max);
            return;
        }
    case Value::Type::string: {
        const std::string& s = v.as_string();
        switch (verb) {
        case 'v':
        case 's': {
            if (sp.prec >= 0) {
                std::size_t n = 0, i = 0;
                for (; i < s.size(); ++i) {
                    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
                        if (n == static_cast<std::size_t>(sp.prec)) break;
                        ++n;
                    }
                }
                pad(out, s.substr(0, i), sp, false);
            } else {
                pad(out, s, sp, false);
            }
            return;
        }
        case 'q':
            if (sp.sharp && s.find('`') == std::string::npos && s.find('\n') == std::string::npos)
                pad(out, "`" + s + "`", sp, false);
            else
                pad(out, io::go::quote(s), sp, false);
            return;
        case 'x':
        case 'X': {
            const char* hex = verb == 'x' ? "0123456789abcdef" : "0123456789ABCDEF";
            std::string h;
            for (std::size_t i = 0; i < s.size(); ++i) {
                if (sp.space && i > 0) h += ' ';
                auto c = static_cast<unsigned char>(s[i]);
                h += hex[c >> 4];
                h += hex[c & 15];
            }
            pad(out, h, sp, false);
            return;
        }
        default:
            bad_verb(out, v, sp, depth, max);
            return;
        }
    }
    case Value::Type::list: {
        out += '[';
        bool first = true;
        Spec inner = sp;
        for (const auto& i : v.items()) {
            if (!first) out += ' ';
            first = false;
            format(out, i, inner, depth + 1, max);
        }
        out += ']';
        return;
    }
    case Value::Type::dict: {
        out += "map[";
        bool first = true;
        for (const auto& [k, x] : v.entries()) {
            if (!first) out += ' ';
            first = false;
            format(out, Value::string(k), sp, depth + 1, max);
            out += ':';
            format(out, x, sp, depth + 1, max);
        }
        out += ']';
        return;
    }
    }
}

} // namespace

std::string sprint(std::span<const Value> args, std::size_t max) {
    std::string out;
    bool prev_string = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        bool is_string = args[i].is_string();
        if (i > 0 && !is_string && !prev_string) out += ' ';
        append_go(out, args[i], max);
        prev_string = is_string;
    }
    return out;
}

std::string sprintln(std::span<const Value> args, std::size_t max) {
    std::string out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (i > 0) out += ' ';
        append_go(out, args[i], max);
    }
    out += '\n';
    return out;
}

std::string sprintf(std::string_view f, std::span<const Value> args, std::size_t max) {
    std::string out;
    std::size_t arg = 0;
    std::size_t i = 0;
    // fmt's parsenum: the digits at i; a number already above a million when another digit
    // follows makes the whole rest of the format unreadable (i jumps to the end).
    auto num = [&](int& into) {
        bool any = false;
        int n = 0;
        while (i < f.size() && f[i] >= '0' && f[i] <= '9') {
            if (too_large(n)) {
                i = f.size();
                into = 0;
                return false;
            }
            n = n * 10 + (f[i] - '0');
            ++i;
            any = true;
        }
        into = n;
        return any;
    };
    while (i < f.size()) {
        std::size_t pct = f.find('%', i);
        if (pct == std::string_view::npos) {
            out.append(f.substr(i));
            break;
        }
        out.append(f.substr(i, pct - i));
        i = pct + 1;
        Spec sp;
        for (; i < f.size(); ++i) {
            char c = f[i];
            if (c == '-')
                sp.minus = true, sp.zero = false;
            else if (c == '+')
                sp.plus = true;
            else if (c == '#')
                sp.sharp = true;
            else if (c == '0')
                sp.zero = !sp.minus;
            else if (c == ' ')
                sp.space = true;
            else
                break;
        }
        // fmt's intFromArg: a '*' takes an integer argument of at most a million either way;
        // anything else (or none) is a bad width or precision, and no width or precision.
        auto star = [&](int& into) {
            ++i;
            into = 0;
            if (arg >= args.size()) return false;
            const Value& v = args[arg++];
            if (v.type() != Value::Type::integer || too_large(v.as_int())) return false;
            into = static_cast<int>(v.as_int());
            return true;
        };
        if (i < f.size() && f[i] == '*') {
            if (!star(sp.width)) {
                out += "%!(BADWIDTH)";
                sp.width = -1;
            } else if (sp.width < 0) { // a negative width pads on the right
                sp.width = -sp.width;
                sp.minus = true, sp.zero = false;
            }
        } else if (!num(sp.width)) {
            sp.width = -1;
        }
        // A '.' starts a precision only when something follows it.
        if (i + 1 < f.size() && f[i] == '.') {
            ++i;
            if (f[i] == '*') {
                if (!star(sp.prec) || sp.prec < 0) {
                    out += "%!(BADPREC)";
                    sp.prec = -1;
                }
            } else if (!num(sp.prec)) {
                sp.prec = 0;
            }
        }
        if (i >= f.size()) {
            out += "%!(NOVERB)";
            break;
        }
        // The verb: one UTF-8 character.
        std::size_t vlen = 1;
        auto b = static_cast<unsigned char>(f[i]);
        if (b >= 0xC0) vlen = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
        std::string_view verb = f.substr(i, vlen);
        i += vlen;
        if (verb == "%") {
            out += '%';
            continue;
        }
        if (arg >= args.size()) {
            out += "%!";
            out += verb;
            out += "(MISSING)";
            continue;
        }
        // Any other verb reaches the values (a list's or map's items each): fmt marks each
        // one that has no form for it.
        sp.verb = vlen == 1 ? verb[0] : '\0';
        if (vlen != 1) sp.name = verb;
        format(out, args[arg++], sp, 0, max);
    }
    if (arg < args.size()) {
        out += "%!(EXTRA ";
        for (std::size_t k = arg; k < args.size(); ++k) {
            if (k > arg) out += ", ";
            if (args[k].is_nil()) {
                out += "<nil>";
                continue;
            }
            out += args[k].go_type();
            out += '=';
            append_go(out, args[k], max);
        }
        out += ')';
    }
    return out;
}

} // namespace kpkg::tmpl
