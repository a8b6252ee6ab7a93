// Executing templates: Go's text/template semantics over Values, with bounds on nesting, steps
// and output so that a hostile template ends with an error.
#include <algorithm>
#include <stdexcept>

#include "internal.hpp"
#include "kpkg/core/regex.hpp"

namespace kpkg::tmpl {

// ------------------------------------------------------------------------------------------------
// Node::str: Go's String() of a node, for error contexts.

static void append_str(std::string& out, const Node& n);

static void append_pipe(std::string& out, const Node& p) {
    for (std::size_t i = 0; i < p.decl.size(); ++i) {
        if (i > 0) out += ", ";
        out += p.decl[i];
    }
    if (!p.decl.empty()) out += p.assign ? " = " : " := ";
    for (std::size_t i = 0; i < p.kids.size(); ++i) {
        if (i > 0) out += " | ";
        append_str(out, *p.kids[i]);
    }
}

static void append_str(std::string& out, const Node& n) {
    switch (n.kind) {
    case NodeKind::list:
        for (const auto& k : n.kids)
            append_str(out, *k);
        return;
    case NodeKind::text:
        out += n.text;
        return;
    case NodeKind::action:
        out += "{{";
        append_pipe(out, *n.pipe);
        out += "}}";
        return;
    case NodeKind::pipe:
        append_pipe(out, n);
        return;
    case NodeKind::command:
        for (std::size_t i = 0; i < n.kids.size(); ++i) {
            if (i > 0) out += ' ';
            if (n.kids[i]->kind == NodeKind::pipe) {
                out += '(';
                append_pipe(out, *n.kids[i]);
                out += ')';
            } else {
                append_str(out, *n.kids[i]);
            }
        }
        return;
    case NodeKind::field:
        for (const auto& f : n.idents)
            out += "." + f;
        return;
    case NodeKind::variable:
        for (std::size_t i = 0; i < n.idents.size(); ++i)
            out += (i ? "." : "") + n.idents[i];
        return;
    case NodeKind::chain:
        if (n.pipe->kind == NodeKind::pipe) {
            out += '(';
            append_pipe(out, *n.pipe);
            out += ')';
        } else {
            append_str(out, *n.pipe);
        }
        for (const auto& f : n.idents)
            out += "." + f;
        return;
    case NodeKind::identifier:
        out += n.text;
        return;
    case NodeKind::dot:
        out += '.';
        return;
    case NodeKind::nil:
        out += "nil";
        return;
    case NodeKind::boolean:
    case NodeKind::number:
    case NodeKind::string:
        out += n.text;
        return;
    case NodeKind::if_:
    case NodeKind::range:
    case NodeKind::with: {
        out += n.kind == NodeKind::if_     ? "{{if "
               : n.kind == NodeKind::range ? "{{range "
                                           : "{{with ";
        append_pipe(out, *n.pipe);
        out += "}}";
        append_str(out, *n.list);
        if (n.else_list) {
            out += "{{else}}";
            append_str(out, *n.else_list);
        }
        out += "{{end}}";
        return;
    }
    case NodeKind::template_:
        out += "{{template \"" + n.text + "\"";
        if (n.pipe) {
            out += ' ';
            append_pipe(out, *n.pipe);
        }
        out += "}}";
        return;
    case NodeKind::brk:
        out += "{{break}}";
        return;
    case NodeKind::cont:
        out += "{{continue}}";
        return;
    }
}

std::string Node::str() const {
    std::string s;
    append_str(s, *this);
    return s;
}

// ------------------------------------------------------------------------------------------------
// The executor.

namespace {

struct ExecError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A limit reached: passed through calls unwrapped (one message, not one per include level).
struct LimitError : ExecError {
    using ExecError::ExecError;
};

enum class Flow { normal, brk, cont };

class State : public Context {
public:
    State(const Set& set, std::string& out) : set_(set), out_(out) {}

    void run_top(const Tree& t, const Value& dot) {
        tree_ = &t;
        vars_.push_back({"$", dot});
        walk(dot, *t.root);
    }

    std::string run(const std::string& name, const Value& dot) override {
        const Tree* t = set_.find(name);
        if (!t)
            throw FuncError("template: no template \"" + name + "\" associated with template \"" +
                            set_.first_name() + "\"");
        std::string sub;
        State s(set_, sub);
        s.depth_ = depth_ + 1;
        s.nest_ = nest_;
        s.steps_ = steps_;
        s.base_output_ = base_output_ + out_.size();
        if (s.depth_ > set_.options().max_depth)
            limit("exceeded maximum template depth (" + std::to_string(set_.options().max_depth) +
                  ")");
        s.run_top(*t, dot);
        steps_ = s.steps_;
        return sub;
    }
    const Options& options() const override { return set_.options(); }
    re::Budget* regex_budget() override { return set_.regex_budget(); }

private:
    const Set& set_;
    std::string& out_;
    const Tree* tree_ = nullptr;
    const Node* at_ = nullptr;
    std::vector<std::pair<std::string, Value>> vars_;
    std::size_t depth_ = 0;
    std::uint64_t steps_ = 0;
    std::size_t base_output_ = 0; // output of the enclosing executions (include)
    // Nodes being evaluated, across template calls: bounds the C++ stack the execution uses.
    std::size_t own_nest_ = 0;
    std::size_t* nest_ = &own_nest_;

    struct Nest {
        State& s;
        explicit Nest(State& st) : s(st) {
            if (++*s.nest_ > s.set_.options().max_nesting)
                s.limit("exceeded the nesting limit of " +
                        std::to_string(s.set_.options().max_nesting) +
                        " (templates, controls and pipelines within each other)");
        }
        ~Nest() { --*s.nest_; }
        Nest(const Nest&) = delete;
        Nest& operator=(const Nest&) = delete;
    };

    [[noreturn]] void limit(const std::string& msg) {
        try {
            fail(msg);
        } catch (const ExecError& e) {
            throw LimitError(e.what());
        }
    }

    [[noreturn]] void fail(const std::string& msg) {
        if (!at_ || !tree_)
            throw ExecError("template: " + (tree_ ? tree_->name : std::string()) + ": " + msg);
        const std::string& src = *tree_->source;
        std::size_t pos = std::min<std::size_t>(at_->pos, src.size());
        std::size_t nl = src.rfind('\n', pos == 0 ? std::string::npos : pos - 1);
        std::size_t line =
            1 + static_cast<std::size_t>(
                    std::count(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
        std::size_t col = (pos == 0 || nl == std::string::npos) ? pos : pos - nl - 1;
        throw ExecError("template: " + tree_->parse_name + ":" + std::to_string(line) + ":" +
                        std::to_string(col) + ": executing \"" + tree_->name + "\" at <" +
                        at_->str() + ">: " + msg);
    }

    void step(std::uint64_t n = 1) {
        steps_ += n;
        if (steps_ > set_.options().max_steps)
            limit("exceeded the limit of " + std::to_string(set_.options().max_steps) +
                  " evaluation steps");
    }

    void write(std::string_view s) {
        if (base_output_ + out_.size() + s.size() > set_.options().max_output)
            limit("output exceeds " + std::to_string(set_.options().max_output) + " bytes");
        out_.append(s);
    }

    Flow walk_list(const Value& dot, const Node& list) {
        for (const auto& k : list.kids) {
            Flow f = walk(dot, *k);
            if (f != Flow::normal) return f;
        }
        return Flow::normal;
    }

    // {{template}}: out of walk() so that walk's frame stays small (it recurses).
    [[gnu::noinline]] Flow call_template(const Value& dot, const Node& n) {
        Value v = n.pipe ? pipeline(dot, *n.pipe) : Value();
        at_ = &n;
        const Tree* t = set_.find(n.text);
        if (!t) fail("template \"" + n.text + "\" not defined");
        if (depth_ + 1 > set_.options().max_depth)
            limit("exceeded maximum template depth (" + std::to_string(set_.options().max_depth) +
                  ")");
        State s(set_, out_);
        s.depth_ = depth_ + 1;
        s.nest_ = nest_;
        s.steps_ = steps_;
        s.base_output_ = base_output_;
        s.run_top(*t, v);
        steps_ = s.steps_;
        return Flow::normal;
    }

    Flow walk(const Value& dot, const Node& n) {
        step();
        Nest nest(*this);
        at_ = &n;
        switch (n.kind) {
        case NodeKind::list:
            return walk_list(dot, n);
        case NodeKind::text:
            write(n.text);
            return Flow::normal;
        case NodeKind::action: {
            Value v = pipeline(dot, *n.pipe);
            if (n.pipe->decl.empty()) print(n, v);
            return Flow::normal;
        }
        case NodeKind::if_:
        case NodeKind::with: {
            std::size_t mark = vars_.size();
            Value v = pipeline(dot, *n.pipe);
            Flow f;
            if (v.truth())
                f = walk_list(n.kind == NodeKind::with ? v : dot, *n.list);
            else if (n.else_list)
                f = walk_list(dot, *n.else_list);
            else
                f = Flow::normal;
            vars_.resize(mark);
            return f;
        }
        case NodeKind::range:
            return range(dot, n);
        case NodeKind::template_:
            return call_template(dot, n);
        case NodeKind::brk:
            return Flow::brk;
        case NodeKind::cont:
            return Flow::cont;
        default:
            fail("unknown node");
        }
    }

    void print(const Node& n, const Value& v) {
        at_ = &n;
        if (v.is_nil()) {
            write("<no value>");
            return;
        }
        if (v.is_string()) {
            write(v.as_string());
            return;
        }
        std::string s;
        try {
            append_go(s, v,
                      set_.options().max_output -
                          std::min(set_.options().max_output, base_output_ + out_.size()));
        } catch (const std::length_error& e) {
            limit(e.what());
        }
        write(s);
    }

    [[gnu::noinline]] Flow range(const Value& dot, const Node& n) {
        std::size_t mark = vars_.size();
        Value v = pipeline(dot, *n.pipe);
        const auto& decl = n.pipe->decl;
        auto one = [&](const Value& key, const Value& elem) {
            if (!decl.empty()) {
                if (n.pipe->assign) {
                    set_var(decl.back(), elem);
                    if (decl.size() > 1) set_var(decl[0], key);
                } else {
                    vars_[vars_.size() - 1].second = elem;
                    if (decl.size() > 1) vars_[vars_.size() - 2].second = key;
                }
            }
            std::size_t inner = vars_.size();
            Flow f = walk_list(elem, *n.list);
            vars_.resize(inner);
            return f;
        };
        bool any = false;
        switch (v.type()) {
        case Value::Type::list: {
            // Every iteration is a step, even with an empty body, and so is copying the list
            // (a few elements a step), so that nested ranges cannot run unbounded.
            step(1 + v.items().size() / 8);
            List items = v.items(); // a copy: the body may change the list (sprig's append)
            for (std::size_t i = 0; i < items.size(); ++i) {
                any = true;
                step();
                if (one(Value::integer(static_cast<std::int64_t>(i)), items[i]) == Flow::brk) break;
            }
            break;
        }
        case Value::Type::dict: {
            step(1 + v.entries().size() / 8);
            Dict d = v.entries();
            for (const auto& [k, x] : d) {
                any = true;
                step();
                if (one(Value::string(k), x) == Flow::brk) break;
            }
            break;
        }
        case Value::Type::integer: {
            if (decl.size() > 1) {
                at_ = &n;
                fail("can't use " + go_brief(v) + " to iterate over more than one variable");
            }
            for (std::int64_t i = 0; i < v.as_int(); ++i) {
                any = true;
                step();
                if (one(Value::integer(i), Value::integer(i)) == Flow::brk) break;
            }
            break;
        }
        case Value::Type::nil:
            break;
        default:
            at_ = &n;
            fail("range can't iterate over " + go_brief(v));
        }
        Flow f = Flow::normal;
        if (!any && n.else_list) f = walk_list(dot, *n.else_list);
        vars_.resize(mark);
        return f;
    }

    void set_var(const std::string& name, const Value& v) {
        for (auto it = vars_.rbegin(); it != vars_.rend(); ++it)
            if (it->first == name) {
                it->second = v;
                return;
            }
        fail("undefined variable: " + name);
    }

    const Value& var(const std::string& name) {
        for (auto it = vars_.rbegin(); it != vars_.rend(); ++it)
            if (it->first == name) return it->second;
        fail("undefined variable: " + name);
    }

    Value pipeline(const Value& dot, const Node& p) {
        Nest nest(*this);
        std::optional<Value> v;
        for (const auto& cmd : p.kids)
            v = command(dot, *cmd, v ? &*v : nullptr);
        Value out = v ? std::move(*v) : Value();
        for (const auto& d : p.decl) {
            if (p.assign)
                set_var(d, out);
            else
                vars_.push_back({d, out});
        }
        return out;
    }

    [[noreturn]] void not_a_function(const Node& cmd, const Node& first) {
        at_ = &first;
        (void)cmd;
        fail("can't give argument to non-function " + first.str());
    }

    Value command(const Value& dot, const Node& cmd, const Value* final) {
        step();
        const Node& first = *cmd.kids[0];
        bool args = cmd.kids.size() > 1 || final;
        switch (first.kind) {
        case NodeKind::field:
            at_ = &first;
            return field_chain(dot, dot, first, first.idents, 0, cmd, final);
        case NodeKind::chain: {
            at_ = &first;
            if (first.pipe->kind == NodeKind::nil)
                fail("indirection through explicit nil in " + first.str());
            Value recv = arg(dot, *first.pipe);
            at_ = &first;
            return field_chain(dot, recv, first, first.idents, 0, cmd, final);
        }
        case NodeKind::identifier:
            return call(dot, first, cmd, final);
        case NodeKind::pipe:
            if (args) not_a_function(cmd, first);
            return pipeline(dot, first);
        case NodeKind::variable: {
            at_ = &first;
            const Value& v = var(first.idents[0]);
            if (first.idents.size() == 1) {
                if (args) not_a_function(cmd, first);
                return v;
            }
            Value recv = v;
            return field_chain(dot, recv, first, first.idents, 1, cmd, final);
        }
        default:
            break;
        }
        at_ = &first;
        if (args) not_a_function(cmd, first);
        switch (first.kind) {
        case NodeKind::number:
            if (first.overflows) fail(first.text + " overflows int");
            return first.constant;
        case NodeKind::boolean:
        case NodeKind::string:
            return first.constant;
        case NodeKind::dot:
            return dot;
        case NodeKind::nil:
            fail("nil is not a command");
        default:
            fail("can't evaluate command " + first.str());
        }
    }

    // Fields idents[from..] of `recv`; the last one gets the command's arguments (an error for
    // data, which has no methods).
    Value field_chain(const Value&, Value recv, const Node& node,
                      const std::vector<std::string>& idents, std::size_t from, const Node& cmd,
                      const Value* final) {
        for (std::size_t i = from; i < idents.size(); ++i) {
            bool last = i + 1 == idents.size();
            bool has_args = last && (cmd.kids.size() > 1 || final);
            recv = field(recv, idents[i], node, has_args);
        }
        return recv;
    }

    Value field(const Value& recv, const std::string& name, const Node& node, bool has_args) {
        at_ = &node;
        switch (recv.type()) {
        case Value::Type::nil:
            fail("nil pointer evaluating interface {}." + name);
        case Value::Type::dict: {
            if (has_args) fail(name + " is not a method but has arguments");
            auto it = recv.entries().find(name);
            if (it == recv.entries().end()) {
                if (set_.options().missing_key_error)
                    fail("map has no entry for key \"" + name + "\"");
                return {};
            }
            return it->second;
        }
        default:
            fail("can't evaluate field " + name + " in type " + recv.go_type());
        }
    }

    // An argument of a function: any operand; an identifier is a call without arguments.
    Value arg(const Value& dot, const Node& n) {
        at_ = &n;
        switch (n.kind) {
        case NodeKind::dot:
            return dot;
        case NodeKind::nil:
            return {};
        case NodeKind::field:
            return field_chain(dot, dot, n, n.idents, 0, n, nullptr);
        case NodeKind::variable: {
            Value v = var(n.idents[0]);
            return field_chain(dot, v, n, n.idents, 1, n, nullptr);
        }
        case NodeKind::pipe:
            return pipeline(dot, n);
        case NodeKind::identifier:
            return call(dot, n, n, nullptr);
        case NodeKind::chain: {
            if (n.pipe->kind == NodeKind::nil)
                fail("indirection through explicit nil in " + n.str());
            Value recv = arg(dot, *n.pipe);
            return field_chain(dot, recv, n, n.idents, 0, n, nullptr);
        }
        case NodeKind::number:
            if (n.overflows) fail(n.text + " overflows int");
            return n.constant;
        case NodeKind::boolean:
        case NodeKind::string:
            return n.constant;
        default:
            fail("can't handle " + n.str() + " as an argument");
        }
    }

    // Calls the function named by `ident`; `cmd` holds it and its arguments (or is the
    // identifier itself when it is an argument of another call).
    Value call(const Value& dot, const Node& ident, const Node& cmd, const Value* final) {
        at_ = &ident;
        const std::string& name = ident.text;
        const Func* f = set_.funcs().find(name);
        if (!f) fail("\"" + name + "\" is not a defined function");
        std::size_t nargs = (&cmd == &ident ? 0 : cmd.kids.size() - 1) + (final ? 1 : 0);
        if (f->max_args == Func::kVariadic) {
            if (nargs < f->min_args)
                fail("wrong number of args for " + name + ": want at least " +
                     std::to_string(f->min_args) + " got " +
                     std::to_string(nargs - (final ? 1 : 0)));
        } else if (nargs < f->min_args || nargs > f->max_args) {
            fail("wrong number of args for " + name + ": want " + std::to_string(f->max_args) +
                 " got " + std::to_string(nargs));
        }
        std::size_t first = 1;
        if (f->short_circuit_and || f->short_circuit_or) {
            Value v;
            std::size_t count = nargs - (final ? 1 : 0);
            for (std::size_t i = 0; i < count; ++i) {
                v = arg(dot, *cmd.kids[first + i]);
                if (v.truth() == f->short_circuit_or) return v;
            }
            if (final) v = *final;
            return v;
        }
        std::vector<Value> values;
        values.reserve(nargs);
        if (&cmd != &ident)
            for (std::size_t i = first; i < cmd.kids.size(); ++i)
                values.push_back(arg(dot, *cmd.kids[i]));
        if (final) values.push_back(*final);
        at_ = &cmd;
        try {
            return f->fn(*this, values);
        } catch (const LimitError&) {
            throw;
        } catch (const ExecError& e) { // from a template the function ran (include)
            at_ = &cmd;
            fail("error calling " + name + ": " + e.what());
        } catch (const ArgError& e) {
            at_ = &cmd;
            fail(e.what());
        } catch (const FuncError& e) {
            at_ = &cmd;
            fail("error calling " + name + ": " + e.what());
        } catch (const std::length_error& e) { // a value too large or too deep to print
            at_ = &cmd;
            limit("error calling " + name + ": " + e.what());
        }
    }
};

} // namespace

// ------------------------------------------------------------------------------------------------
// Set

Set::Set(std::shared_ptr<const Funcs> funcs, Options options)
    : funcs_(std::move(funcs)), options_(options),
      regex_budget_(std::make_shared<re::Budget>(options.max_regex_steps)) {
    if (!funcs_) {
        auto f = std::make_shared<Funcs>();
        add_builtins(*f);
        funcs_ = std::move(f);
    }
}
Set::~Set() = default;
Set::Set(Set&&) noexcept = default;
Set& Set::operator=(Set&&) noexcept = default;

Result<void> Set::parse(const std::string& name, std::string_view text) {
    auto trees = parse_trees(name, text, *funcs_, options_.max_parse_depth);
    if (!trees) return std::move(trees).error();
    if (first_.empty()) first_ = name;
    for (auto& t : *trees) {
        auto it = trees_.find(t->name);
        // A later empty definition does not replace a non-empty one.
        if (it != trees_.end() && is_empty_tree(*t->root) && !is_empty_tree(*it->second->root))
            continue;
        trees_[t->name] = std::move(t);
    }
    return {};
}

bool Set::has(std::string_view name) const {
    return trees_.find(name) != trees_.end();
}

const Tree* Set::find(std::string_view name) const {
    auto it = trees_.find(name);
    return it == trees_.end() ? nullptr : it->second.get();
}

std::vector<std::string> Set::names() const {
    std::vector<std::string> out;
    for (const auto& [k, _] : trees_)
        out.push_back(k);
    return out;
}

Result<std::string> Set::execute(std::string_view name, const Value& data) const {
    const Tree* t = find(name);
    if (!t)
        return Error::invalid("template: no template \"" + std::string(name) +
                              "\" associated with template \"" + first_ + "\"");
    std::string out;
    try {
        State s(*this, out);
        s.run_top(*t, data);
    } catch (const ExecError& e) {
        return Error::invalid(e.what());
    } catch (const std::length_error& e) {
        return Error::invalid("template: " + std::string(name) + ": " + e.what());
    }
    return out;
}

} // namespace kpkg::tmpl
