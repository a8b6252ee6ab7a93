// The CEL subset of olm.constraint rules (the language is described in kpkg/cel/cel.hpp): the
// phases put together (lex.cpp, parse.cpp, check.cpp, eval.cpp), the caller's environment and
// the values of its variables.
//
// Facts this follows: the CEL language definition (cel-spec doc/langdef.md: grammar, precedence,
// literals and escapes, heterogeneous equality, commutative && and ||, macro semantics), how
// cel-go's parser treats some syntax, and how OLM sets up cel-go (operator-framework/api
// pkg/constraints/cel.go): the variable `properties` of type list(map(string, any)), the function
// semver_compare(any, any) -> int computed with blang's ParseTolerant on fmt.Sprint of each
// argument, a result that must be of type bool, and (operator-lifecycle-manager's resolver) a
// rule whose evaluation fails does not hold.
//
// The code is kpkg's own. Compilation errors travel as a CompileError exception that never
// leaves the compiler; evaluation never throws.
#include <array>

#include "internal.hpp"

namespace kpkg::cel {

using namespace detail;

// --- Env, Activation ----------------------------------------------------------------------------

const Env& Env::olm() {
    static const Env env = [] {
        Env e;
        e.variable("properties", list_of(map_of(prim(Type::K::str), prim(Type::K::dyn))));
        e.semver_compare();
        e.noun("an olm.constraint rule");
        return e;
    }();
    return env;
}

Env& Env::variable(std::string name, TypeP type) {
    if (auto k = find(name))
        vars_[*k].type = std::move(type);
    else
        vars_.push_back({std::move(name), std::move(type)});
    return *this;
}

Env& Env::semver_compare(bool on) {
    semver_compare_ = on;
    return *this;
}

Env& Env::dyn_result(bool on) {
    dyn_result_ = on;
    return *this;
}

Env& Env::noun(std::string what) {
    noun_ = std::move(what);
    return *this;
}

std::optional<std::size_t> Env::find(std::string_view name) const {
    for (std::size_t k = 0; k < vars_.size(); ++k)
        if (vars_[k].name == name) return k;
    return std::nullopt;
}

Activation& Activation::bind(std::string name, const io::Node& value, Numbers numbers) {
    Binding b;
    b.name = std::move(name);
    b.node = &value;
    b.typed = numbers == Numbers::typed;
    bindings_.push_back(std::move(b));
    return *this;
}

Activation& Activation::bind(std::string name, const std::vector<Property>& properties) {
    Binding b;
    b.name = std::move(name);
    b.properties = &properties;
    bindings_.push_back(std::move(b));
    return *this;
}

const Activation::Binding* Activation::find(std::string_view name) const {
    for (auto it = bindings_.rbegin(); it != bindings_.rend(); ++it)
        if (it->name == name) return &*it;
    return nullptr;
}

// --- Program ------------------------------------------------------------------------------------

struct Program::Impl {
    std::vector<Expr> exprs;
    std::uint32_t root = 0;
    std::size_t slots = 0;
    std::vector<Env::Variable> vars; // as declared when compiled
    std::shared_ptr<const Folded> folded;

    // Why `g` cannot be the value of variable `v` (its declared type says otherwise), or "".
    static std::string mismatch(const Env::Variable& v, const Global& g) {
        const Type::K want = v.type->k;
        if (want == Type::K::dyn || g.kind == Global::Kind::absent) return {};
        Type::K got = Type::K::list;
        if (g.kind == Global::Kind::node) {
            switch (g.node->kind) {
            case io::Kind::null:
                got = Type::K::null;
                break;
            case io::Kind::boolean:
                got = Type::K::boolean;
                break;
            case io::Kind::integer:
                got = g.typed && g.node->as_int() ? Type::K::int_ : Type::K::dbl;
                break;
            case io::Kind::floating:
                got = Type::K::dbl;
                break;
            case io::Kind::string:
                got = Type::K::str;
                break;
            case io::Kind::sequence:
                got = Type::K::list;
                break;
            case io::Kind::mapping:
                got = Type::K::map;
                break;
            }
        }
        if (got == want) return {};
        static const std::array<const char*, 9> names = {"dyn",    "null",   "bool", "int", "uint",
                                                         "double", "string", "list", "map"};
        return "variable '" + v.name + "' is declared " + type_name(v.type) + " but given a " +
               names[static_cast<std::size_t>(got)];
    }

    Outcome run_with(std::span<const Global> globals) const {
        for (std::size_t k = 0; k < vars.size() && k < globals.size(); ++k) {
            std::string why = mismatch(vars[k], globals[k]);
            if (!why.empty()) {
                Outcome out;
                out.kind = Outcome::Kind::error;
                out.error = std::move(why);
                return out;
            }
        }
        return detail::run(exprs, root, slots, folded.get(), globals);
    }
};

Program::Program(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Program::~Program() = default;

Result<std::shared_ptr<const Program>> Program::compile(std::string_view rule, const Env& env) {
    auto impl = std::make_unique<Impl>();
    const std::string_view src = rule;
    try {
        if (auto bad = invalid_utf8(src))
            fail_at(static_cast<std::uint32_t>(*bad), "the rule is not valid UTF-8");
        const std::size_t chars = count_code_points(src);
        if (chars > max_rule_chars)
            return fail(Error::invalid("the CEL rule is " + std::to_string(chars) +
                                       " characters long; the limit is " +
                                       std::to_string(max_rule_chars) + " (as in cel-go)"));
        impl->root = parse(lex(src), impl->exprs);
        const Checked checked = check(impl->exprs, impl->root, env);
        if (checked.type->k != Type::K::boolean &&
            !(checked.type->k == Type::K::dyn && env.allows_dyn_result()))
            fail_at(0, "the rule is of type " + type_name(checked.type) + "; " + env.noun() +
                           " must be of type bool");
        impl->slots = checked.slots;
        impl->vars = env.variables();
        impl->folded = fold_constants(impl->exprs, impl->root, impl->slots);
    } catch (const CompileError& e) {
        Error err = Error::invalid(location(src, e.pos) + ": " + e.message);
        auto [line, caret] = excerpt(src, e.pos);
        err.note("  " + line);
        err.note("  " + caret);
        return fail(std::move(err));
    }
    return std::shared_ptr<const Program>(std::make_shared<Program>(std::move(impl)));
}

Outcome Program::evaluate(const Activation& vars) const {
    std::vector<Global> globals(impl_->vars.size());
    for (std::size_t k = 0; k < globals.size(); ++k) {
        Global& g = globals[k];
        g.name = impl_->vars[k].name;
        if (const Activation::Binding* b = vars.find(g.name)) {
            g.kind = b->properties ? Global::Kind::properties : Global::Kind::node;
            g.properties = b->properties;
            g.node = b->node;
            g.typed = b->typed;
        }
    }
    return impl_->run_with(globals);
}

Outcome Program::evaluate(const std::vector<Property>& properties) const {
    // OLM's one variable, without building an Activation for every bundle.
    if (impl_->vars.size() == 1 && impl_->vars[0].name == "properties") {
        Global g;
        g.kind = Global::Kind::properties;
        g.name = impl_->vars[0].name;
        g.properties = &properties;
        return impl_->run_with(std::span<const Global>(&g, 1));
    }
    Activation a;
    a.bind("properties", properties);
    return evaluate(a);
}

} // namespace kpkg::cel
