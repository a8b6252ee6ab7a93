// CEL, phase 4: values and the evaluator. Strings, lists and maps are views into the caller's
// values or the syntax tree whenever possible; evaluation never throws: errors are values, as in
// CEL.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <system_error>
#include <utility>

#include "internal.hpp"
#include "kpkg/core/semver.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/scalars.hpp"

namespace kpkg::cel::detail {

namespace {

// Go's strconv.FormatFloat(d, 'g', -1, 64), which is what fmt.Sprint prints for a float64.
std::string go_format_float(double d) {
    std::string out;
    io::go::append_float_g(out, d, 64);
    return out;
}

// ------------------------------------------------------------------------------------------------
// Values. Strings, lists and maps are views into the bundle's properties or the syntax tree
// whenever possible; what evaluation creates is owned through a shared pointer.

enum class VT : std::uint8_t { null, boolean, int_, uint_, dbl, str, list, map, error };
enum class Back : std::uint8_t { none, node, props, prop, owned };

struct Owned;

struct Value {
    VT t = VT::null;
    Back back = Back::none;
    union {
        bool b;
        std::int64_t i;
        std::uint64_t u;
        double d;
        const io::Node* node;
        const std::vector<Property>* props;
        const Property* prop;
    };
    std::string_view s;
    std::shared_ptr<const Owned> own;

    // A view of a node (Back::node): its integers are int (typed data such as YAML) rather than
    // double (JSON, as Go's encoding/json reads it).
    bool typed = false;

    Value() : i(0) {}
};

struct Owned {
    std::string text; // an owned string, or an error message
    std::vector<Value> items;
    std::vector<std::pair<Value, Value>> entries;
};

Value v_bool(bool b) {
    Value v;
    v.t = VT::boolean;
    v.b = b;
    return v;
}
Value v_int(std::int64_t i) {
    Value v;
    v.t = VT::int_;
    v.i = i;
    return v;
}
Value v_uint(std::uint64_t u) {
    Value v;
    v.t = VT::uint_;
    v.u = u;
    return v;
}
Value v_dbl(double d) {
    Value v;
    v.t = VT::dbl;
    v.d = d;
    return v;
}
Value v_str(std::string_view s) {
    Value v;
    v.t = VT::str;
    v.s = s;
    return v;
}
// A value that evaluation built (a list, a map, or through v_text a string).
Value v_owned(VT t, std::shared_ptr<const Owned> o) {
    Value v;
    v.t = t;
    v.back = Back::owned;
    v.own = std::move(o);
    return v;
}
// A string (VT::str) or an error message (VT::error) that evaluation made.
Value v_text(VT t, std::string s) {
    auto o = std::make_shared<Owned>();
    o->text = std::move(s);
    const std::string_view text = o->text;
    Value v = v_owned(t, std::move(o));
    v.s = text;
    return v;
}
Value v_err(std::string msg) {
    return v_text(VT::error, std::move(msg));
}

const char* vt_name(VT t) {
    switch (t) {
    case VT::null:
        return "null_type";
    case VT::boolean:
        return "bool";
    case VT::int_:
        return "int";
    case VT::uint_:
        return "uint";
    case VT::dbl:
        return "double";
    case VT::str:
        return "string";
    case VT::list:
        return "list";
    case VT::map:
        return "map";
    case VT::error:
        return "error";
    }
    return "?";
}

Value from_node(const io::Node& n, bool typed = false) {
    Value v;
    switch (n.kind) {
    case io::Kind::null:
        return v;
    case io::Kind::boolean:
        if (auto b = n.as_bool()) return v_bool(*b);
        return v_err("unreadable boolean '" + shorten(n.text) + "'");
    case io::Kind::integer:
        if (typed) {
            if (auto i = n.as_int()) return v_int(*i);
        }
        [[fallthrough]];
    case io::Kind::floating:
        // Go's encoding/json turns every JSON number into a float64, and so CEL sees doubles.
        if (auto d = n.as_double()) return v_dbl(*d);
        return v_err("unreadable number '" + shorten(n.text) + "'");
    case io::Kind::string:
        return v_str(n.text);
    case io::Kind::sequence:
        v.t = VT::list;
        v.back = Back::node;
        v.node = &n;
        v.typed = typed;
        return v;
    case io::Kind::mapping:
        v.t = VT::map;
        v.back = Back::node;
        v.node = &n;
        v.typed = typed;
        return v;
    }
    return v;
}

std::size_t list_len(const Value& v) {
    switch (v.back) {
    case Back::node:
        return v.node->items.size();
    case Back::props:
        return v.props->size();
    case Back::owned:
        return v.own->items.size();
    default:
        return 0;
    }
}

Value list_at(const Value& v, std::size_t k) {
    switch (v.back) {
    case Back::node:
        return from_node(v.node->items[k], v.typed);
    case Back::props: {
        Value m;
        m.t = VT::map;
        m.back = Back::prop;
        m.prop = &(*v.props)[k];
        return m;
    }
    case Back::owned:
        return v.own->items[k];
    default:
        return Value{};
    }
}

std::size_t map_len(const Value& v) {
    switch (v.back) {
    case Back::node:
        return v.node->fields.size();
    case Back::prop:
        return 2;
    case Back::owned:
        return v.own->entries.size();
    default:
        return 0;
    }
}

Value map_key_at(const Value& v, std::size_t k) {
    switch (v.back) {
    case Back::node:
        return v_str(v.node->fields[k].key);
    case Back::prop:
        return v_str(k == 0 ? "type" : "value");
    case Back::owned:
        return v.own->entries[k].first;
    default:
        return Value{};
    }
}

Value map_value_at(const Value& v, std::size_t k) {
    switch (v.back) {
    case Back::node:
        return from_node(v.node->fields[k].value, v.typed);
    case Back::prop:
        return k == 0 ? v_str(v.prop->type) : from_node(v.prop->value);
    case Back::owned:
        return v.own->entries[k].second;
    default:
        return Value{};
    }
}

bool is_num(const Value& v) {
    return v.t == VT::int_ || v.t == VT::uint_ || v.t == VT::dbl;
}

// Compares an integer with a double exactly; nullopt when d is NaN.
std::optional<int> cmp_int_dbl(std::int64_t i, double d) {
    if (std::isnan(d)) return std::nullopt;
    if (d >= 9223372036854775808.0) return -1;
    if (d < -9223372036854775808.0) return 1;
    const double t = std::trunc(d);
    const auto ti = static_cast<std::int64_t>(t);
    if (i != ti) return i < ti ? -1 : 1;
    const double frac = d - t;
    return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}
std::optional<int> cmp_uint_dbl(std::uint64_t u, double d) {
    if (std::isnan(d)) return std::nullopt;
    if (d < 0) return 1;
    if (d >= 18446744073709551616.0) return -1;
    const double t = std::trunc(d);
    const auto tu = static_cast<std::uint64_t>(t);
    if (u != tu) return u < tu ? -1 : 1;
    return d > t ? -1 : 0;
}

// Numbers on one number line (CEL's heterogeneous numeric comparison).
std::optional<int> cmp_num(const Value& a, const Value& b) {
    auto sign = [](auto x, auto y) { return x < y ? -1 : y < x ? 1 : 0; };
    switch (a.t) {
    case VT::int_:
        if (b.t == VT::int_) return sign(a.i, b.i);
        if (b.t == VT::uint_) return a.i < 0 ? -1 : sign(static_cast<std::uint64_t>(a.i), b.u);
        return cmp_int_dbl(a.i, b.d);
    case VT::uint_:
        if (b.t == VT::uint_) return sign(a.u, b.u);
        if (b.t == VT::int_) return b.i < 0 ? 1 : sign(a.u, static_cast<std::uint64_t>(b.i));
        return cmp_uint_dbl(a.u, b.d);
    default:
        if (b.t == VT::dbl) {
            if (std::isnan(a.d) || std::isnan(b.d)) return std::nullopt;
            return sign(a.d, b.d);
        }
        if (auto r = b.t == VT::int_ ? cmp_int_dbl(b.i, a.d) : cmp_uint_dbl(b.u, a.d)) return -*r;
        return std::nullopt;
    }
}

// ------------------------------------------------------------------------------------------------
// Evaluator

} // namespace

// Values of constant subtrees, computed once when the rule is compiled (by node index).
struct Folded : std::vector<std::optional<Value>> {};

namespace {

class Evaluator {
public:
    Evaluator(const std::vector<Expr>& ex, std::span<const Global> globals, std::size_t slots,
              const Folded* folded)
        : ex_(ex), globals_(globals), vars_(slots), folded_(folded) {}

    // The value of a subtree that reads no variable, unless it needs more than the step limit.
    std::optional<Value> fold(std::uint32_t id) {
        Value v = eval(id);
        if (exhausted_) return std::nullopt;
        return v;
    }

    Outcome run(std::uint32_t root) {
        Value v = eval(root);
        Outcome out;
        if (exhausted_) {
            out.kind = Outcome::Kind::error;
            out.error = "evaluation needs more than " + std::to_string(max_steps) + " steps";
        } else if (v.t == VT::boolean) {
            out.kind = v.b ? Outcome::Kind::holds : Outcome::Kind::fails;
        } else {
            out.kind = Outcome::Kind::error;
            out.error = v.t == VT::error ? std::string(v.s)
                                         : std::string("the rule evaluated to a ") + vt_name(v.t);
        }
        return out;
    }

private:
    // The value of the caller's variable `k` (checked against its declaration by the caller).
    Value global(std::size_t k) const {
        if (k >= globals_.size()) return v_err("no value given for a variable");
        const Global& g = globals_[k];
        Value v;
        switch (g.kind) {
        case Global::Kind::properties:
            v.t = VT::list;
            v.back = Back::props;
            v.props = g.properties;
            return v;
        case Global::Kind::node:
            return from_node(*g.node, g.typed);
        case Global::Kind::absent:
            break;
        }
        return v_err("no value given for variable '" + shorten(g.name) + "'");
    }

    // Work proportional to n bytes or elements.
    void charge(std::size_t n) {
        steps_ += n / 32;
        if (steps_ > max_steps) exhausted_ = true;
    }

    static Value no_overload(const char* op, const Value& a) {
        return v_err(std::string("no such overload: ") + op + " " + vt_name(a.t));
    }
    static Value no_overload(const char* op, const Value& a, const Value& b) {
        return v_err(std::string("no such overload: ") + vt_name(a.t) + " " + op + " " +
                     vt_name(b.t));
    }

    // A short rendering of a value for messages.
    std::string show(const Value& v) {
        switch (v.t) {
        case VT::null:
            return "null";
        case VT::boolean:
            return v.b ? "true" : "false";
        case VT::int_:
            return std::to_string(v.i);
        case VT::uint_:
            return std::to_string(v.u) + "u";
        case VT::dbl:
            return go_format_float(v.d);
        case VT::str:
            return std::string(1, '\'').append(shorten(v.s)).append(1, '\'');
        case VT::list:
            return "a list of " + std::to_string(list_len(v));
        case VT::map:
            return "a map of " + std::to_string(map_len(v));
        case VT::error:
            return std::string(v.s);
        }
        return "?";
    }

    bool equal(const Value& a, const Value& b) {
        ++steps_;
        if (is_num(a) && is_num(b)) {
            auto r = cmp_num(a, b);
            return r && *r == 0;
        }
        if (a.t != b.t) return false;
        switch (a.t) {
        case VT::null:
            return true;
        case VT::boolean:
            return a.b == b.b;
        case VT::str:
            charge(a.s.size());
            return a.s == b.s;
        case VT::list: {
            const std::size_t n = list_len(a);
            if (n != list_len(b)) return false;
            for (std::size_t k = 0; k < n; ++k)
                if (!equal(list_at(a, k), list_at(b, k))) return false;
            return true;
        }
        case VT::map: {
            const std::size_t n = map_len(a);
            if (n != map_len(b)) return false;
            for (std::size_t k = 0; k < n; ++k) {
                auto other = find(b, map_key_at(a, k));
                if (!other || !equal(map_value_at(a, k), *other)) return false;
            }
            return true;
        }
        default:
            return false;
        }
    }

    // The value under `key`, if present. JSON objects and property maps have string keys only.
    std::optional<Value> find(const Value& m, const Value& key) {
        switch (m.back) {
        case Back::node: {
            if (key.t != VT::str) return std::nullopt;
            const auto& f = m.node->fields;
            charge(f.size());
            for (const auto& e : f)
                if (e.key == key.s) return from_node(e.value, m.typed);
            return std::nullopt;
        }
        case Back::prop:
            if (key.t != VT::str) return std::nullopt;
            if (key.s == "type") return v_str(m.prop->type);
            if (key.s == "value") return from_node(m.prop->value);
            return std::nullopt;
        case Back::owned:
            charge(m.own->entries.size());
            for (const auto& [k, v] : m.own->entries) {
                if (k.t == key.t || (is_num(k) && is_num(key))) {
                    if (equal(k, key)) return v;
                }
            }
            return std::nullopt;
        default:
            return std::nullopt;
        }
    }

    Value eval(std::uint32_t id) {
        if (exhausted_ || ++steps_ > max_steps) {
            exhausted_ = true;
            return v_err("step limit");
        }
        if (folded_ && (*folded_)[id]) return *(*folded_)[id];
        const Expr& e = ex_[id];
        switch (e.op) {
        case Op::lit:
            switch (e.lit) {
            case LitKind::null:
                return Value{};
            case LitKind::boolean:
                return v_bool(e.b);
            case LitKind::int_:
                return v_int(e.i);
            case LitKind::uint_:
                return v_uint(e.u);
            case LitKind::dbl:
                return v_dbl(e.d);
            case LitKind::str:
                return v_str(e.text);
            }
            break;
        case Op::ident: {
            if (e.slot >= 0) return vars_[static_cast<std::size_t>(e.slot)];
            return global(static_cast<std::size_t>(-1 - e.slot));
        }
        case Op::select:
        case Op::has: {
            Value m = eval(e.kids[0]);
            if (m.t == VT::error) return m;
            if (m.t != VT::map)
                return v_err("field selection '." + shorten(e.text) + "' on " + show(m) + " (a " +
                             vt_name(m.t) + ")");
            auto v = find(m, v_str(e.text));
            if (e.op == Op::has) return v_bool(v.has_value());
            if (!v) return v_err("no such key: " + shorten(e.text));
            return *v;
        }
        case Op::index: {
            Value c = eval(e.kids[0]);
            if (c.t == VT::error) return c;
            Value k = eval(e.kids[1]);
            if (k.t == VT::error) return k;
            if (c.t == VT::list) {
                std::int64_t idx = 0;
                if (k.t == VT::int_)
                    idx = k.i;
                else if (k.t == VT::uint_ && k.u <= static_cast<std::uint64_t>(
                                                        std::numeric_limits<std::int64_t>::max()))
                    idx = static_cast<std::int64_t>(k.u);
                else if (k.t == VT::dbl && std::trunc(k.d) == k.d && std::fabs(k.d) < 9.0e18)
                    idx = static_cast<std::int64_t>(k.d);
                else if (k.t == VT::uint_ || k.t == VT::dbl)
                    return v_err("invalid list index " + show(k));
                else
                    return no_overload("[]", c, k);
                if (idx < 0 || static_cast<std::uint64_t>(idx) >= list_len(c))
                    return v_err("index out of range: " + std::to_string(idx));
                return list_at(c, static_cast<std::size_t>(idx));
            }
            if (c.t == VT::map) {
                auto v = find(c, k);
                if (!v) return v_err("no such key: " + show(k));
                return *v;
            }
            return no_overload("[]", c, k);
        }
        case Op::list: {
            auto o = std::make_shared<Owned>();
            o->items.reserve(e.kids.size());
            for (auto k : e.kids) {
                Value v = eval(k);
                if (v.t == VT::error) return v;
                o->items.push_back(std::move(v));
            }
            return v_owned(VT::list, std::move(o));
        }
        case Op::map: {
            auto o = std::make_shared<Owned>();
            for (std::size_t k = 0; k + 1 < e.kids.size(); k += 2) {
                Value key = eval(e.kids[k]);
                if (key.t == VT::error) return key;
                Value val = eval(e.kids[k + 1]);
                if (val.t == VT::error) return val;
                if (key.t != VT::str && key.t != VT::int_ && key.t != VT::uint_ &&
                    key.t != VT::boolean)
                    return v_err(std::string("unsupported map key type: ") + vt_name(key.t));
                if (find(v_owned(VT::map, o), key)) return v_err("duplicate map key: " + show(key));
                o->entries.emplace_back(std::move(key), std::move(val));
            }
            return v_owned(VT::map, std::move(o));
        }
        case Op::not_: {
            Value v = eval(e.kids[0]);
            if (v.t == VT::boolean) return v_bool(!v.b);
            if (v.t == VT::error) return v;
            return no_overload("!", v);
        }
        case Op::neg: {
            Value v = eval(e.kids[0]);
            if (v.t == VT::int_) {
                if (v.i == std::numeric_limits<std::int64_t>::min())
                    return v_err("integer overflow");
                return v_int(-v.i);
            }
            if (v.t == VT::dbl) return v_dbl(-v.d);
            if (v.t == VT::error) return v;
            return no_overload("-", v);
        }
        case Op::and_:
        case Op::or_: {
            // Commutative: the deciding value (false for &&, true for ||) wins over errors.
            const bool decides = e.op == Op::or_;
            Value err;
            bool have_err = false;
            for (auto k : e.kids) {
                Value v = eval(k);
                if (v.t == VT::boolean) {
                    if (v.b == decides) return v;
                } else if (!have_err) {
                    err = v.t == VT::error ? v : no_overload(op_text(e.op), v);
                    have_err = true;
                }
            }
            return have_err ? err : v_bool(!decides);
        }
        case Op::cond: {
            Value c = eval(e.kids[0]);
            if (c.t == VT::boolean) return eval(e.kids[c.b ? 1 : 2]);
            if (c.t == VT::error) return c;
            return v_err(std::string("the condition of '? :' is a ") + vt_name(c.t));
        }
        case Op::eq:
        case Op::ne: {
            Value a = eval(e.kids[0]);
            if (a.t == VT::error) return a;
            Value b = eval(e.kids[1]);
            if (b.t == VT::error) return b;
            return v_bool(equal(a, b) == (e.op == Op::eq));
        }
        case Op::lt:
        case Op::le:
        case Op::gt:
        case Op::ge: {
            Value a = eval(e.kids[0]);
            if (a.t == VT::error) return a;
            Value b = eval(e.kids[1]);
            if (b.t == VT::error) return b;
            int c = 0;
            if (is_num(a) && is_num(b)) {
                auto r = cmp_num(a, b);
                if (!r) return v_err("NaN values cannot be ordered");
                c = *r;
            } else if (a.t == VT::str && b.t == VT::str) {
                charge(std::min(a.s.size(), b.s.size()));
                c = a.s.compare(b.s);
                c = c < 0 ? -1 : c > 0 ? 1 : 0;
            } else if (a.t == VT::boolean && b.t == VT::boolean) {
                c = a.b == b.b ? 0 : a.b ? 1 : -1;
            } else {
                return no_overload(op_text(e.op), a, b);
            }
            switch (e.op) {
            case Op::lt:
                return v_bool(c < 0);
            case Op::le:
                return v_bool(c <= 0);
            case Op::gt:
                return v_bool(c > 0);
            default:
                return v_bool(c >= 0);
            }
        }
        case Op::in: {
            Value a = eval(e.kids[0]);
            if (a.t == VT::error) return a;
            Value b = eval(e.kids[1]);
            if (b.t == VT::error) return b;
            if (b.t == VT::list) {
                const std::size_t n = list_len(b);
                for (std::size_t k = 0; k < n; ++k)
                    if (equal(a, list_at(b, k))) return v_bool(true);
                return v_bool(false);
            }
            if (b.t == VT::map) return v_bool(find(b, a).has_value());
            return no_overload("in", a, b);
        }
        case Op::add:
        case Op::sub:
        case Op::mul:
        case Op::div:
        case Op::mod:
            return arithmetic(e);
        case Op::all:
        case Op::exists:
        case Op::exists_one:
            return comprehension(e);
        case Op::size: {
            Value v = eval(e.kids[0]);
            if (v.t == VT::error) return v;
            if (v.t == VT::str) {
                charge(v.s.size());
                return v_int(static_cast<std::int64_t>(count_code_points(v.s)));
            }
            if (v.t == VT::list) return v_int(static_cast<std::int64_t>(list_len(v)));
            if (v.t == VT::map) return v_int(static_cast<std::int64_t>(map_len(v)));
            return no_overload("size", v);
        }
        case Op::starts_with:
        case Op::ends_with:
        case Op::contains: {
            Value a = eval(e.kids[0]);
            if (a.t == VT::error) return a;
            Value b = eval(e.kids[1]);
            if (b.t == VT::error) return b;
            if (a.t != VT::str || b.t != VT::str) return no_overload(op_text(e.op), a, b);
            charge(a.s.size() + b.s.size());
            if (e.op == Op::starts_with) return v_bool(a.s.substr(0, b.s.size()) == b.s);
            if (e.op == Op::ends_with)
                return v_bool(a.s.size() >= b.s.size() &&
                              a.s.substr(a.s.size() - b.s.size()) == b.s);
            if (b.s.size() > 64) charge(a.s.size() * (b.s.size() / 64)); // worst case of find
            return v_bool(a.s.find(b.s) != std::string_view::npos);
        }
        case Op::semver_compare: {
            Value a = eval(e.kids[0]);
            if (a.t == VT::error) return a;
            Value b = eval(e.kids[1]);
            if (b.t == VT::error) return b;
            std::optional<semver::Version> va = as_semver(a), vb = as_semver(b);
            if (!va) return v_err("unable to parse " + show(a) + " to semver format");
            if (!vb) return v_err("unable to parse " + show(b) + " to semver format");
            const int c = semver::compare(*va, *vb);
            return v_int(c < 0 ? -1 : c > 0 ? 1 : 0);
        }
        }
        return v_err("internal error: unhandled expression");
    }

    // semver_compare's reading of a value: fmt.Sprint of it, then blang's ParseTolerant.
    static std::optional<semver::Version> as_semver(const Value& v) {
        std::string text;
        switch (v.t) {
        case VT::str:
            text = std::string(v.s);
            break;
        case VT::int_:
            text = std::to_string(v.i);
            break;
        case VT::uint_:
            text = std::to_string(v.u);
            break;
        case VT::dbl:
            text = go_format_float(v.d);
            break;
        default:
            return std::nullopt; // Go prints these as true, <nil>, [..], map[..]: no version
        }
        auto r = semver::Version::parse_tolerant(text);
        if (!r) return std::nullopt;
        return std::move(r).take();
    }

    Value arithmetic(const Expr& e) {
        Value a = eval(e.kids[0]);
        if (a.t == VT::error) return a;
        Value b = eval(e.kids[1]);
        if (b.t == VT::error) return b;
        const char* op = op_text(e.op);
        if (a.t != b.t) return no_overload(op, a, b);
        switch (a.t) {
        case VT::int_: {
            std::int64_t r = 0;
            switch (e.op) {
            case Op::add:
                if (__builtin_add_overflow(a.i, b.i, &r)) return v_err("integer overflow");
                return v_int(r);
            case Op::sub:
                if (__builtin_sub_overflow(a.i, b.i, &r)) return v_err("integer overflow");
                return v_int(r);
            case Op::mul:
                if (__builtin_mul_overflow(a.i, b.i, &r)) return v_err("integer overflow");
                return v_int(r);
            case Op::div:
            case Op::mod:
                if (b.i == 0)
                    return v_err(e.op == Op::div ? "division by zero" : "modulus by zero");
                if (a.i == std::numeric_limits<std::int64_t>::min() && b.i == -1)
                    return v_err("integer overflow");
                return v_int(e.op == Op::div ? a.i / b.i : a.i % b.i);
            default:
                break;
            }
            break;
        }
        case VT::uint_: {
            std::uint64_t r = 0;
            switch (e.op) {
            case Op::add:
                if (__builtin_add_overflow(a.u, b.u, &r)) return v_err("unsigned integer overflow");
                return v_uint(r);
            case Op::sub:
                if (__builtin_sub_overflow(a.u, b.u, &r)) return v_err("unsigned integer overflow");
                return v_uint(r);
            case Op::mul:
                if (__builtin_mul_overflow(a.u, b.u, &r)) return v_err("unsigned integer overflow");
                return v_uint(r);
            case Op::div:
            case Op::mod:
                if (b.u == 0)
                    return v_err(e.op == Op::div ? "division by zero" : "modulus by zero");
                return v_uint(e.op == Op::div ? a.u / b.u : a.u % b.u);
            default:
                break;
            }
            break;
        }
        case VT::dbl:
            switch (e.op) {
            case Op::add:
                return v_dbl(a.d + b.d);
            case Op::sub:
                return v_dbl(a.d - b.d);
            case Op::mul:
                return v_dbl(a.d * b.d);
            case Op::div:
                return v_dbl(a.d / b.d);
            default:
                break;
            }
            break;
        case VT::str:
            if (e.op != Op::add) break;
            charge(a.s.size() + b.s.size());
            return v_text(VT::str, std::string(a.s) + std::string(b.s));
        case VT::list: {
            if (e.op != Op::add) break;
            auto o = std::make_shared<Owned>();
            const std::size_t na = list_len(a), nb = list_len(b);
            charge((na + nb) * 8);
            o->items.reserve(na + nb);
            for (std::size_t k = 0; k < na; ++k)
                o->items.push_back(list_at(a, k));
            for (std::size_t k = 0; k < nb; ++k)
                o->items.push_back(list_at(b, k));
            return v_owned(VT::list, std::move(o));
        }
        default:
            break;
        }
        return no_overload(op, a, b);
    }

    Value comprehension(const Expr& e) {
        Value range = eval(e.kids[0]);
        if (range.t == VT::error) return range;
        if (range.t != VT::list && range.t != VT::map)
            return v_err(std::string(op_text(e.op)) + "() over " + show(range) + " (a " +
                         vt_name(range.t) + ")");
        const bool is_list = range.t == VT::list;
        const std::size_t n = is_list ? list_len(range) : map_len(range);
        Value& var = vars_[static_cast<std::size_t>(e.slot)];
        Value err;
        bool have_err = false;
        std::size_t count = 0;
        for (std::size_t k = 0; k < n; ++k) {
            if (exhausted_) return v_err("step limit");
            var = is_list ? list_at(range, k) : map_key_at(range, k);
            Value p = eval(e.kids[1]);
            if (p.t != VT::boolean) {
                Value why = p.t == VT::error ? p : no_overload(op_text(e.op), p);
                if (e.op == Op::exists_one) return why; // exists_one propagates every error
                if (!have_err) {
                    err = why;
                    have_err = true;
                }
                continue;
            }
            if (e.op == Op::all && !p.b) return v_bool(false);
            if (e.op == Op::exists && p.b) return v_bool(true);
            if (e.op == Op::exists_one && p.b) ++count;
        }
        if (e.op == Op::exists_one) return v_bool(count == 1);
        if (have_err) return err;
        return v_bool(e.op == Op::all);
    }

    const std::vector<Expr>& ex_;
    std::span<const Global> globals_;
    std::vector<Value> vars_;
    const Folded* folded_;
    std::uint64_t steps_ = 0;
    bool exhausted_ = false;
};

} // namespace

std::shared_ptr<const Folded> fold_constants(const std::vector<Expr>& exprs, std::uint32_t root,
                                             std::size_t slots) {
    // The largest subtrees that read no variable (a list or map literal compared with each
    // property, say) are computed once, instead of for every evaluation. Children precede their
    // parents in `exprs`, so one pass in index order finds them. A subtree that would exceed the
    // step limit is left to run time, where it fails the same way.
    std::vector<char> constant(exprs.size(), 0);
    for (std::size_t i = 0; i < exprs.size(); ++i) {
        bool c = exprs[i].op != Op::ident;
        for (auto k : exprs[i].kids)
            c = c && constant[k];
        constant[i] = c;
    }
    auto folded = std::make_shared<Folded>();
    folded->assign(exprs.size(), std::nullopt);
    std::vector<std::uint32_t> todo = {root};
    while (!todo.empty()) {
        const std::uint32_t id = todo.back();
        todo.pop_back();
        if (constant[id] && exprs[id].op != Op::lit) {
            Evaluator ev(exprs, {}, slots, nullptr);
            if (auto v = ev.fold(id)) {
                (*folded)[id] = std::move(*v);
                continue;
            }
        }
        for (auto k : exprs[id].kids)
            todo.push_back(k);
    }
    return folded;
}

Outcome run(const std::vector<Expr>& exprs, std::uint32_t root, std::size_t slots,
            const Folded* folded, std::span<const Global> globals) {
    Evaluator ev(exprs, globals, slots, folded);
    return ev.run(root);
}

} // namespace kpkg::cel::detail
