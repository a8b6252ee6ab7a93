// The registry of functions and text/template's builtins.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kpkg/core/regex.hpp"
#include "kpkg/template/funcs.hpp"
#include "kpkg/template/template.hpp"

namespace kpkg::tmpl {

void Funcs::add(std::string name, std::size_t min_args, std::size_t max_args, Fn fn) {
    Func f;
    f.fn = std::move(fn);
    f.min_args = min_args;
    f.max_args = max_args;
    funcs_[std::move(name)] = std::move(f);
}

const Func* Funcs::find(std::string_view name) const {
    auto it = funcs_.find(name);
    if (it != funcs_.end()) return &it->second;
    return base_ ? base_->find(name) : nullptr;
}

std::vector<std::string> Funcs::names() const {
    std::vector<std::string> out = base_ ? base_->names() : std::vector<std::string>{};
    out.reserve(out.size() + funcs_.size());
    for (const auto& [n, _] : funcs_)
        out.push_back(n);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

const std::string& arg_string(std::span<const Value> args, std::size_t i) {
    const Value& v = args[i];
    if (!v.is_string()) {
        if (v.is_nil()) throw ArgError("invalid value; expected string");
        throw ArgError(std::string("wrong type for value; expected string; got ") + v.go_type());
    }
    return v.as_string();
}

namespace {

enum class Basic { invalid, boolean, integer, floating, string };

Basic basic(const Value& v) {
    switch (v.type()) {
    case Value::Type::boolean:
        return Basic::boolean;
    case Value::Type::integer:
        return Basic::integer;
    case Value::Type::floating:
        return Basic::floating;
    case Value::Type::string:
        return Basic::string;
    default:
        return Basic::invalid;
    }
}

constexpr const char* kBadComparison = "incompatible types for comparison";
constexpr const char* kBadComparisonType = "invalid type for comparison";

bool eq(std::span<const Value> args) {
    const Value& a = args[0];
    if (args.size() < 2) throw FuncError("missing argument for comparison");
    Basic k1 = basic(a);
    for (std::size_t i = 1; i < args.size(); ++i) {
        const Value& b = args[i];
        Basic k2 = basic(b);
        bool truth = false;
        if (k1 != k2) {
            if (!a.is_nil() && !b.is_nil()) throw FuncError(kBadComparison);
        } else {
            switch (k1) {
            case Basic::boolean:
                truth = a.as_bool() == b.as_bool();
                break;
            case Basic::integer:
                truth = a.as_int() == b.as_int();
                break;
            case Basic::floating:
                truth = a.as_float() == b.as_float();
                break;
            case Basic::string:
                truth = a.as_string() == b.as_string();
                break;
            case Basic::invalid:
                if (a.is_nil() || b.is_nil()) {
                    truth = a.is_nil() && b.is_nil();
                } else if (a.type() != b.type()) {
                    throw FuncError(std::string("non-comparable types ") + go_brief(a) + ": " +
                                    a.go_type() + ", " + b.go_type() + ": " + go_brief(b));
                } else {
                    throw FuncError(std::string("non-comparable type ") + go_brief(b) + ": " +
                                    b.go_type());
                }
                break;
            }
        }
        if (truth) return true;
    }
    return false;
}

bool lt(const Value& a, const Value& b) {
    Basic k1 = basic(a), k2 = basic(b);
    if (k1 == Basic::invalid || k2 == Basic::invalid) throw FuncError(kBadComparisonType);
    if (k1 != k2) throw FuncError(kBadComparison);
    switch (k1) {
    case Basic::integer:
        return a.as_int() < b.as_int();
    case Basic::floating:
        return a.as_float() < b.as_float();
    case Basic::string:
        return a.as_string() < b.as_string();
    default:
        throw FuncError(kBadComparisonType);
    }
}

std::int64_t index_of(const Value& v, const char* what) {
    if (v.type() == Value::Type::integer) return v.as_int();
    if (v.is_nil()) throw FuncError(std::string("cannot index ") + what + " with nil");
    throw FuncError(std::string("cannot index ") + what + " with type " + v.go_type());
}

Value index(std::span<const Value> args) {
    Value item = args[0];
    if (item.is_nil()) throw FuncError("index of untyped nil");
    for (std::size_t i = 1; i < args.size(); ++i) {
        const Value& ix = args[i];
        switch (item.type()) {
        case Value::Type::list:
        case Value::Type::string: {
            std::int64_t n = index_of(ix, "slice/array");
            std::size_t len = item.is_list() ? item.items().size() : item.as_string().size();
            if (n < 0 || static_cast<std::uint64_t>(n) >= len)
                throw FuncError("index out of range: " + std::to_string(n));
            if (item.is_list()) {
                Value next = item.items()[static_cast<std::size_t>(n)];
                item = std::move(next);
            } else {
                item = Value::integer(
                    static_cast<unsigned char>(item.as_string()[static_cast<std::size_t>(n)]));
            }
            break;
        }
        case Value::Type::dict: {
            if (!ix.is_string()) {
                if (ix.is_nil()) throw FuncError("value is nil; should be of type string");
                throw FuncError(std::string("value has type ") + ix.go_type() +
                                "; should be string");
            }
            auto it = item.entries().find(ix.as_string());
            Value next = it != item.entries().end() ? it->second
                         : item.is_string_dict()    ? Value::string("")
                                                    : Value();
            item = std::move(next);
            break;
        }
        case Value::Type::nil:
            throw FuncError("index of nil pointer");
        default:
            throw FuncError(std::string("can't index item of type ") + item.go_type());
        }
    }
    return item;
}

Value slice(std::span<const Value> args) {
    const Value& item = args[0];
    if (item.is_nil()) throw FuncError("slice of untyped nil");
    if (args.size() > 4)
        throw FuncError("too many slice indexes: " + std::to_string(args.size() - 1));
    std::size_t cap;
    if (item.is_string()) {
        if (args.size() == 4) throw FuncError("cannot 3-index slice a string");
        cap = item.as_string().size();
    } else if (item.is_list()) {
        cap = item.items().size();
    } else {
        throw FuncError(std::string("can't slice item of type ") + item.go_type());
    }
    std::int64_t idx[3] = {0, static_cast<std::int64_t>(cap), static_cast<std::int64_t>(cap)};
    for (std::size_t i = 1; i < args.size(); ++i) {
        std::int64_t n = index_of(args[i], "slice/array");
        if (n < 0 || static_cast<std::uint64_t>(n) > cap)
            throw FuncError("index out of range: " + std::to_string(n));
        idx[i - 1] = n;
    }
    if (idx[0] > idx[1])
        throw FuncError("invalid slice index: " + std::to_string(idx[0]) + " > " +
                        std::to_string(idx[1]));
    if (args.size() == 4 && idx[1] > idx[2])
        throw FuncError("invalid slice index: " + std::to_string(idx[1]) + " > " +
                        std::to_string(idx[2]));
    auto b = static_cast<std::size_t>(idx[0]), e = static_cast<std::size_t>(idx[1]);
    if (item.is_string()) return Value::string(item.as_string().substr(b, e - b));
    const List& l = item.items();
    return Value::list(List(l.begin() + static_cast<std::ptrdiff_t>(b),
                            l.begin() + static_cast<std::ptrdiff_t>(e)));
}

// The operands as one string: a single string as it is, else fmt.Sprint of them.
std::string operands(std::span<const Value> v, std::size_t max) {
    if (v.size() == 1 && v[0].is_string()) return v[0].as_string();
    return sprint(v, max);
}

// unicode.IsPrint for a rune above ASCII, approximately: Go's tables are not reproduced; the
// controls, format characters, non-ASCII spaces, line and paragraph separators and private-use
// runes are what it refuses in practice.
bool printable_rune(char32_t r) {
    if (r <= 0xA0 || r == 0xAD || r == 0x1680 || r == 0x3000 || r == 0xFEFF) return false;
    if ((r >= 0x2000 && r <= 0x200F) || (r >= 0x2028 && r <= 0x202F) ||
        (r >= 0x205F && r <= 0x206F) || (r >= 0xFFF9 && r <= 0xFFFB) || r == 0xFFFE ||
        r == 0xFFFF || (r >= 0xE000 && r <= 0xF8FF) || r >= 0xF0000)
        return false;
    return true;
}

// template.JSEscapeString.
std::string js_escape(std::string_view s) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            std::size_t w = 0;
            char32_t r = re::decode_rune(s, i, w);
            if (r == 0xFFFD || printable_rune(r)) { // a bad byte decodes to U+FFFD: kept
                out.append(s, i, w);
            } else {
                char buf[16];
                std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(r));
                out += buf;
            }
            i += w - 1;
            continue;
        }
        switch (c) {
        case '\\':
            out += "\\\\";
            break;
        case '\'':
            out += "\\'";
            break;
        case '"':
            out += "\\\"";
            break;
        case '<':
            out += "\\u003C";
            break;
        case '>':
            out += "\\u003E";
            break;
        case '&':
            out += "\\u0026";
            break;
        case '=':
            out += "\\u003D";
            break;
        default:
            if (c < ' ') {
                out += "\\u00";
                out += kHex[c >> 4];
                out += kHex[c & 15];
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    return out;
}

std::string html_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '\'':
            out += "&#39;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&#34;";
            break;
        case '\0':
            out += "\xEF\xBF\xBD";
            break; // U+FFFD
        default:
            out += c;
        }
    }
    return out;
}

// url.QueryEscape.
std::string query_escape(std::string_view s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~') {
            out += ch;
        } else if (c == ' ') {
            out += '+';
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

} // namespace

void add_builtins(Funcs& f) {
    f.add("html", 0, Func::kVariadic, [](Context& c, std::span<const Value> v) {
        return Value::string(html_escape(operands(v, c.options().max_output)));
    });
    f.add("urlquery", 0, Func::kVariadic, [](Context& c, std::span<const Value> v) {
        return Value::string(query_escape(operands(v, c.options().max_output)));
    });
    f.add("js", 0, Func::kVariadic, [](Context& c, std::span<const Value> v) {
        return Value::string(js_escape(operands(v, c.options().max_output)));
    });
    // call FUNC ARGS...: values here are data, never functions, so every call fails as Go's does
    // for a non-function (the name exists so that templates using it parse as in Go).
    f.add("call", 1, Func::kVariadic, [](Context&, std::span<const Value> v) -> Value {
        if (v[0].is_nil()) throw FuncError("call of nil");
        throw FuncError(std::string("non-function of type ") + v[0].go_type());
    });
    constexpr auto V = Func::kVariadic;
    Func a;
    a.min_args = 1;
    a.max_args = V;
    a.short_circuit_and = true;
    f.add("and", a);
    Func o = a;
    o.short_circuit_and = false;
    o.short_circuit_or = true;
    f.add("or", o);
    f.add("not", 1, 1,
          [](Context&, std::span<const Value> v) { return Value::boolean(!v[0].truth()); });
    f.add("len", 1, 1, [](Context&, std::span<const Value> v) {
        const Value& x = v[0];
        switch (x.type()) {
        case Value::Type::string:
            return Value::integer(static_cast<std::int64_t>(x.as_string().size()));
        case Value::Type::list:
            return Value::integer(static_cast<std::int64_t>(x.items().size()));
        case Value::Type::dict:
            return Value::integer(static_cast<std::int64_t>(x.entries().size()));
        case Value::Type::nil:
            throw FuncError("len of nil pointer");
        default:
            throw FuncError(std::string("len of type ") + x.go_type());
        }
    });
    f.add("index", 1, V, [](Context&, std::span<const Value> v) { return index(v); });
    f.add("slice", 1, V, [](Context&, std::span<const Value> v) { return slice(v); });
    f.add("print", 0, V, [](Context& c, std::span<const Value> v) {
        return Value::string(sprint(v, c.options().max_output));
    });
    f.add("println", 0, V, [](Context& c, std::span<const Value> v) {
        return Value::string(sprintln(v, c.options().max_output));
    });
    f.add("printf", 1, V, [](Context& c, std::span<const Value> v) {
        return Value::string(sprintf(arg_string(v, 0), v.subspan(1), c.options().max_output));
    });
    f.add("eq", 1, V, [](Context&, std::span<const Value> v) { return Value::boolean(eq(v)); });
    f.add("ne", 2, 2, [](Context&, std::span<const Value> v) { return Value::boolean(!eq(v)); });
    f.add("lt", 2, 2,
          [](Context&, std::span<const Value> v) { return Value::boolean(lt(v[0], v[1])); });
    f.add("le", 2, 2, [](Context&, std::span<const Value> v) {
        return Value::boolean(lt(v[0], v[1]) || eq(v));
    });
    f.add("gt", 2, 2, [](Context&, std::span<const Value> v) {
        return Value::boolean(!(lt(v[0], v[1]) || eq(v)));
    });
    f.add("ge", 2, 2,
          [](Context&, std::span<const Value> v) { return Value::boolean(!lt(v[0], v[1])); });
}

} // namespace kpkg::tmpl
