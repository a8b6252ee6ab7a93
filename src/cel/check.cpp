// CEL, phase 3: the type checker: the static types cel-go's checker gives this subset, dyn where
// the data decides; names resolve to the macros' variables, then to the caller's declared ones.
#include <algorithm>

#include "internal.hpp"

namespace kpkg::cel {

TypeP prim(Type::K k) {
    static const TypeP t[] = {
        std::make_shared<Type>(Type{Type::K::dyn, {}, {}}),
        std::make_shared<Type>(Type{Type::K::null, {}, {}}),
        std::make_shared<Type>(Type{Type::K::boolean, {}, {}}),
        std::make_shared<Type>(Type{Type::K::int_, {}, {}}),
        std::make_shared<Type>(Type{Type::K::uint_, {}, {}}),
        std::make_shared<Type>(Type{Type::K::dbl, {}, {}}),
        std::make_shared<Type>(Type{Type::K::str, {}, {}}),
    };
    return t[static_cast<int>(k)];
}
TypeP list_of(TypeP e) {
    return std::make_shared<Type>(Type{Type::K::list, std::move(e), {}});
}
TypeP map_of(TypeP k, TypeP v) {
    return std::make_shared<Type>(Type{Type::K::map, std::move(k), std::move(v)});
}

std::string type_name(const TypeP& t) {
    switch (t->k) {
    case Type::K::dyn:
        return "dyn";
    case Type::K::null:
        return "null_type";
    case Type::K::boolean:
        return "bool";
    case Type::K::int_:
        return "int";
    case Type::K::uint_:
        return "uint";
    case Type::K::dbl:
        return "double";
    case Type::K::str:
        return "string";
    case Type::K::list:
        return "list(" + type_name(t->a) + ")";
    case Type::K::map:
        return "map(" + type_name(t->a) + ", " + type_name(t->b) + ")";
    }
    return "?";
}

} // namespace kpkg::cel

namespace kpkg::cel::detail {

namespace {

bool is(const TypeP& t, Type::K k) {
    return t->k == k;
}
bool dyn(const TypeP& t) {
    return t->k == Type::K::dyn;
}
bool same(const TypeP& x, const TypeP& y) {
    if (x->k != y->k) return false;
    if (x->k == Type::K::list) return same(x->a, y->a);
    if (x->k == Type::K::map) return same(x->a, y->a) && same(x->b, y->b);
    return true;
}
bool compatible(const TypeP& x, const TypeP& y) {
    if (dyn(x) || dyn(y)) return true;
    if (x->k != y->k) return false;
    if (x->k == Type::K::list) return compatible(x->a, y->a);
    if (x->k == Type::K::map) return compatible(x->a, y->a) && compatible(x->b, y->b);
    return true;
}
TypeP join(const TypeP& x, const TypeP& y) {
    return same(x, y) ? x : prim(Type::K::dyn);
}
bool orderable(const TypeP& t) {
    switch (t->k) {
    case Type::K::boolean:
    case Type::K::int_:
    case Type::K::uint_:
    case Type::K::dbl:
    case Type::K::str:
        return true;
    default:
        return false;
    }
}
bool numeric(const TypeP& t) {
    return t->k == Type::K::int_ || t->k == Type::K::uint_ || t->k == Type::K::dbl;
}

class Checker {
public:
    Checker(std::vector<Expr>& ex, const Env& env) : ex_(ex), env_(env) {}

    TypeP check(std::uint32_t id) {
        Expr& e = ex_[id];
        auto kid = [&](std::size_t k) { return check(e.kids[k]); };
        auto no_overload = [&](std::initializer_list<TypeP> args) -> TypeP {
            std::string list;
            for (const auto& a : args)
                list += (list.empty() ? "" : ", ") + type_name(a);
            fail_at(e.pos, std::string("no matching overload for '") + op_text(e.op) +
                               "' applied to (" + list + ")");
        };
        switch (e.op) {
        case Op::lit:
            switch (e.lit) {
            case LitKind::null:
                return prim(Type::K::null);
            case LitKind::boolean:
                return prim(Type::K::boolean);
            case LitKind::int_:
                return prim(Type::K::int_);
            case LitKind::uint_:
                return prim(Type::K::uint_);
            case LitKind::dbl:
                return prim(Type::K::dbl);
            case LitKind::str:
                return prim(Type::K::str);
            }
            break;
        case Op::ident: {
            if (!e.root)
                for (std::size_t k = scope_.size(); k-- > 0;)
                    if (scope_[k].first == e.text) {
                        e.slot = static_cast<std::int32_t>(k);
                        return scope_[k].second;
                    }
            if (auto k = env_.find(e.text)) {
                e.slot = -1 - static_cast<std::int32_t>(*k);
                return env_.variables()[*k].type;
            }
            fail_at(e.pos, "undeclared reference to '" + shorten(e.text) + "' (the rule sees " +
                               seen() + " and the variables of its macros)");
        }
        case Op::select:
        case Op::has: {
            const TypeP t = kid(0);
            if (is(t, Type::K::map)) {
                if (!compatible(t->a, prim(Type::K::str)))
                    fail_at(e.pos, "field selection '." + e.text + "' on a map with keys of type " +
                                       type_name(t->a));
                return e.op == Op::has ? prim(Type::K::boolean) : t->b;
            }
            if (dyn(t)) return e.op == Op::has ? prim(Type::K::boolean) : prim(Type::K::dyn);
            fail_at(e.pos, "field selection '." + shorten(e.text) + "' on a value of type " +
                               type_name(t) + ", which has no fields");
        }
        case Op::index: {
            const TypeP t = kid(0), i = kid(1);
            if (is(t, Type::K::list) && (is(i, Type::K::int_) || dyn(i))) return t->a;
            if (is(t, Type::K::map) && compatible(i, t->a)) return t->b;
            if (dyn(t)) return prim(Type::K::dyn);
            return no_overload({t, i});
        }
        case Op::list: {
            TypeP elem;
            for (std::size_t k = 0; k < e.kids.size(); ++k) {
                const TypeP t = kid(k);
                elem = elem ? join(elem, t) : t;
            }
            return list_of(elem ? elem : prim(Type::K::dyn));
        }
        case Op::map: {
            TypeP kt, vt;
            for (std::size_t k = 0; k + 1 < e.kids.size(); k += 2) {
                const TypeP a = kid(k), b = kid(k + 1);
                kt = kt ? join(kt, a) : a;
                vt = vt ? join(vt, b) : b;
            }
            return map_of(kt ? kt : prim(Type::K::dyn), vt ? vt : prim(Type::K::dyn));
        }
        case Op::not_: {
            const TypeP t = kid(0);
            if (is(t, Type::K::boolean) || dyn(t)) return prim(Type::K::boolean);
            return no_overload({t});
        }
        case Op::neg: {
            const TypeP t = kid(0);
            if (is(t, Type::K::int_) || is(t, Type::K::dbl) || dyn(t)) return t;
            return no_overload({t});
        }
        case Op::and_:
        case Op::or_: {
            for (std::size_t k = 0; k < e.kids.size(); ++k) {
                const TypeP t = kid(k);
                if (!is(t, Type::K::boolean) && !dyn(t)) {
                    e.pos = ex_[e.kids[k]].pos;
                    fail_at(e.pos, std::string("an operand of '") + op_text(e.op) +
                                       "' is of type " + type_name(t) + ", not bool");
                }
            }
            return prim(Type::K::boolean);
        }
        case Op::cond: {
            const TypeP c = kid(0), t = kid(1), f = kid(2);
            if (!is(c, Type::K::boolean) && !dyn(c))
                fail_at(e.pos, "the condition of '? :' is of type " + type_name(c) + ", not bool");
            if (!compatible(t, f)) return no_overload({c, t, f});
            return join(t, f);
        }
        case Op::eq:
        case Op::ne: {
            const TypeP a = kid(0), b = kid(1);
            if (!compatible(a, b)) return no_overload({a, b});
            return prim(Type::K::boolean);
        }
        case Op::lt:
        case Op::le:
        case Op::gt:
        case Op::ge: {
            const TypeP a = kid(0), b = kid(1);
            const bool ok = (dyn(a) && (dyn(b) || orderable(b))) || (dyn(b) && orderable(a)) ||
                            (orderable(a) && a->k == b->k);
            if (!ok) return no_overload({a, b});
            return prim(Type::K::boolean);
        }
        case Op::in: {
            const TypeP a = kid(0), b = kid(1);
            if (dyn(b) || (is(b, Type::K::list) && compatible(a, b->a)) ||
                (is(b, Type::K::map) && compatible(a, b->a)))
                return prim(Type::K::boolean);
            return no_overload({a, b});
        }
        case Op::add:
        case Op::sub:
        case Op::mul:
        case Op::div:
        case Op::mod: {
            const TypeP a = kid(0), b = kid(1);
            auto allowed = [&](const TypeP& t) {
                switch (e.op) {
                case Op::add:
                    return numeric(t) || is(t, Type::K::str) || is(t, Type::K::list);
                case Op::mod:
                    return is(t, Type::K::int_) || is(t, Type::K::uint_);
                default:
                    return numeric(t);
                }
            };
            if (dyn(a) && dyn(b)) return a;
            if (dyn(a) && allowed(b)) return b;
            if (dyn(b) && allowed(a)) return a;
            if (allowed(a) && a->k == b->k) {
                if (is(a, Type::K::list)) {
                    if (!compatible(a->a, b->a)) return no_overload({a, b});
                    return list_of(join(a->a, b->a));
                }
                return a;
            }
            return no_overload({a, b});
        }
        case Op::all:
        case Op::exists:
        case Op::exists_one: {
            const TypeP range = kid(0);
            TypeP var;
            if (is(range, Type::K::list))
                var = range->a;
            else if (is(range, Type::K::map))
                var = range->a;
            else if (dyn(range))
                var = range;
            else
                fail_at(e.pos, std::string(op_text(e.op)) +
                                   "() cannot range over a value of type " + type_name(range));
            if (scope_.size() >= max_depth)
                fail_at(e.pos,
                        "the rule nests deeper than " + std::to_string(max_depth) + " levels");
            e.slot = static_cast<std::int32_t>(scope_.size());
            scope_.emplace_back(e.text, var);
            slots_ = std::max(slots_, scope_.size());
            const TypeP p = kid(1);
            scope_.pop_back();
            if (!is(p, Type::K::boolean) && !dyn(p))
                fail_at(ex_[e.kids[1]].pos, std::string("the condition of ") + op_text(e.op) +
                                                "() is of type " + type_name(p) + ", not bool");
            return prim(Type::K::boolean);
        }
        case Op::size: {
            const TypeP t = kid(0);
            if (is(t, Type::K::str) || is(t, Type::K::list) || is(t, Type::K::map) || dyn(t))
                return prim(Type::K::int_);
            return no_overload({t});
        }
        case Op::starts_with:
        case Op::ends_with:
        case Op::contains: {
            const TypeP a = kid(0), b = kid(1);
            if ((is(a, Type::K::str) || dyn(a)) && (is(b, Type::K::str) || dyn(b)))
                return prim(Type::K::boolean);
            return no_overload({a, b});
        }
        case Op::semver_compare:
            if (!env_.has_semver_compare())
                fail_at(e.pos, "undeclared reference to 'semver_compare' (the rule sees " + seen() +
                                   " and the variables of its macros)");
            kid(0);
            kid(1);
            return prim(Type::K::int_);
        }
        fail_at(e.pos, "internal error: unhandled expression");
    }

    std::size_t slots() const { return slots_; }

private:
    // "`properties`", "`a`, `b`", "no variables": what an undeclared name could have been.
    std::string seen() const {
        const auto& vars = env_.variables();
        if (vars.empty()) return "no variables";
        std::string out;
        for (std::size_t k = 0; k < vars.size(); ++k)
            out += (k == 0                 ? ""
                    : k + 1 == vars.size() ? " and "
                                           : ", ") +
                   ("`" + vars[k].name + "`");
        return out;
    }

    std::vector<Expr>& ex_;
    const Env& env_;
    std::vector<std::pair<std::string, TypeP>> scope_;
    std::size_t slots_ = 0;
};

} // namespace

Checked check(std::vector<Expr>& exprs, std::uint32_t root, const Env& env) {
    Checker checker(exprs, env);
    Checked out;
    out.type = checker.check(root);
    out.slots = checker.slots();
    return out;
}

} // namespace kpkg::cel::detail
