// Values, their Go type names, truth, equality, JSON conversion and fmt's %v.
#include "kpkg/template/value.hpp"

#include <algorithm>
#include <stdexcept>

#include "kpkg/io/go.hpp"

namespace kpkg::tmpl {

Value Value::boolean(bool b) {
    Value v;
    v.type_ = Type::boolean;
    v.b_ = b;
    return v;
}
Value Value::integer(std::int64_t i) {
    Value v;
    v.type_ = Type::integer;
    v.i_ = i;
    return v;
}
Value Value::floating(double f) {
    Value v;
    v.type_ = Type::floating;
    v.f_ = f;
    return v;
}
Value Value::string(std::string s) {
    Value v;
    v.type_ = Type::string;
    v.s_ = std::move(s);
    return v;
}
Value Value::list(List items) {
    Value v;
    v.type_ = Type::list;
    v.l_ = std::make_shared<List>(std::move(items));
    return v;
}
Value Value::dict(Dict entries) {
    Value v;
    v.type_ = Type::dict;
    v.d_ = std::make_shared<Dict>(std::move(entries));
    return v;
}

Value Value::string_dict(Dict entries) {
    Value v = dict(std::move(entries));
    v.string_dict_ = true;
    return v;
}

const char* Value::go_type() const {
    if (string_dict_) return "map[string]string";
    switch (type_) {
    case Type::nil:
        return "<nil>";
    case Type::boolean:
        return "bool";
    case Type::integer:
        return "int";
    case Type::floating:
        return "float64";
    case Type::string:
        return "string";
    case Type::list:
        return "[]interface {}";
    case Type::dict:
        return "map[string]interface {}";
    }
    return "?";
}

bool Value::truth() const {
    switch (type_) {
    case Type::nil:
        return false;
    case Type::boolean:
        return b_;
    case Type::integer:
        return i_ != 0;
    case Type::floating:
        return f_ != 0;
    case Type::string:
        return !s_.empty();
    case Type::list:
        return !l_->empty();
    case Type::dict:
        return !d_->empty();
    }
    return false;
}

static void check_nesting(std::size_t depth) {
    if (depth > kMaxNesting)
        throw std::length_error("value nested more than " + std::to_string(kMaxNesting) +
                                " levels deep (a map or list that contains itself?)");
}

static bool equal(const Value& a, const Value& b, std::size_t depth) {
    check_nesting(depth);
    if (a.type() != b.type()) return false;
    if (a.is_list()) {
        const List &x = a.items(), &y = b.items();
        if (&x == &y) return true;
        if (x.size() != y.size()) return false;
        for (std::size_t i = 0; i < x.size(); ++i)
            if (!equal(x[i], y[i], depth + 1)) return false;
        return true;
    }
    if (a.is_dict()) {
        const Dict &x = a.entries(), &y = b.entries();
        if (&x == &y) return true;
        if (x.size() != y.size()) return false;
        for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j)
            if (i->first != j->first || !equal(i->second, j->second, depth + 1)) return false;
        return true;
    }
    return a == b;
}

bool operator==(const Value& a, const Value& b) {
    if (a.type_ != b.type_) return false;
    switch (a.type_) {
    case Value::Type::nil:
        return true;
    case Value::Type::boolean:
        return a.b_ == b.b_;
    case Value::Type::integer:
        return a.i_ == b.i_;
    case Value::Type::floating:
        return a.f_ == b.f_;
    case Value::Type::string:
        return a.s_ == b.s_;
    case Value::Type::list:
    case Value::Type::dict:
        return equal(a, b, 0);
    }
    return false;
}

Value from_json(const io::Node& node) {
    switch (node.kind) {
    case io::Kind::null:
        return {};
    case io::Kind::boolean:
        return Value::boolean(node.as_bool().value_or(false));
    case io::Kind::integer:
    case io::Kind::floating:
        return Value::floating(node.as_double().value_or(0));
    case io::Kind::string:
        return Value::string(node.text);
    case io::Kind::sequence: {
        List items;
        items.reserve(node.items.size());
        for (const auto& i : node.items)
            items.push_back(from_json(i));
        return Value::list(std::move(items));
    }
    case io::Kind::mapping: {
        Dict d;
        for (const auto& e : node.fields)
            d.insert_or_assign(e.key, from_json(e.value));
        return Value::dict(std::move(d));
    }
    }
    return {};
}

static void append_v(std::string& out, const Value& v, std::size_t depth, std::size_t max) {
    check_nesting(depth);
    if (out.size() > max)
        throw std::length_error("value prints to more than " + std::to_string(max) + " bytes");
    switch (v.type()) {
    case Value::Type::nil:
        out += "<nil>";
        return;
    case Value::Type::boolean:
        out += v.as_bool() ? "true" : "false";
        return;
    case Value::Type::integer:
        out += std::to_string(v.as_int());
        return;
    case Value::Type::floating:
        io::go::append_float_g(out, v.as_float());
        return;
    case Value::Type::string:
        out += v.as_string();
        return;
    case Value::Type::list: {
        out += '[';
        bool first = true;
        for (const auto& i : v.items()) {
            if (!first) out += ' ';
            first = false;
            append_v(out, i, depth + 1, max);
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
            out += k;
            out += ':';
            append_v(out, x, depth + 1, max);
        }
        out += ']';
        return;
    }
    }
}

void append_go(std::string& out, const Value& v, std::size_t max_bytes) {
    append_v(out, v, 0, max_bytes);
}

std::string go_string(const Value& v, std::size_t max_bytes) {
    std::string s;
    append_go(s, v, max_bytes);
    return s;
}

std::string go_brief(const Value& v) {
    std::string s;
    try {
        append_go(s, v, 200);
    } catch (const std::length_error&) {
        s.resize(std::min<std::size_t>(s.size(), 200));
        s += "...";
    }
    return s;
}

} // namespace kpkg::tmpl
