// The parser of text/template: tokens to trees, with Go's checks (undefined variables, unknown
// functions, break/continue outside range, misplaced else/end) and its messages.
#include "internal.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "kpkg/io/go.hpp"
#include "kpkg/io/scalars.hpp"

namespace kpkg::tmpl {
namespace {

struct ParseError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string quote_go(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

// Go's strconv.Unquote for "..." and '...' (the lexer has checked the quotes).
bool unquote(std::string_view lit, std::string& out) {
    char q = lit.front();
    std::string_view body = lit.substr(1, lit.size() - 2);
    auto put_rune = [&](std::uint32_t r) {
        if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) return false;
        io::detail::append_utf8(out, r);
        return true;
    };
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    for (std::size_t i = 0; i < body.size(); ++i) {
        char c = body[i];
        if (c == q) return false;
        if (c != '\\') {
            out += c;
            continue;
        }
        if (++i >= body.size()) return false;
        char e = body[i];
        switch (e) {
        case 'a':
            out += '\a';
            break;
        case 'b':
            out += '\b';
            break;
        case 'f':
            out += '\f';
            break;
        case 'n':
            out += '\n';
            break;
        case 'r':
            out += '\r';
            break;
        case 't':
            out += '\t';
            break;
        case 'v':
            out += '\v';
            break;
        case '\\':
            out += '\\';
            break;
        case '\'':
        case '"':
            if (e != q) return false;
            out += e;
            break;
        case 'x':
        case 'u':
        case 'U': {
            std::size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            if (i + n >= body.size() + 0 && i + n > body.size() - 1 + 1) return false;
            std::uint32_t v = 0;
            for (std::size_t k = 1; k <= n; ++k) {
                if (i + k >= body.size()) return false;
                int h = hex(body[i + k]);
                if (h < 0) return false;
                v = v * 16 + static_cast<std::uint32_t>(h);
            }
            i += n;
            if (e == 'x')
                out += static_cast<char>(v);
            else if (!put_rune(v))
                return false;
            break;
        }
        default:
            if (e >= '0' && e <= '7') {
                if (i + 2 >= body.size()) return false;
                std::uint32_t v = 0;
                for (std::size_t k = 0; k < 3; ++k) {
                    char d = body[i + k];
                    if (d < '0' || d > '7') return false;
                    v = v * 8 + static_cast<std::uint32_t>(d - '0');
                }
                if (v > 255) return false;
                i += 2;
                out += static_cast<char>(v);
                break;
            }
            return false;
        }
    }
    return true;
}

// The first UTF-8 rune of s (a char literal's decoded body), or -1 when s is not exactly one.
long one_rune(std::string_view s) {
    if (s.empty()) return -1;
    auto b = static_cast<unsigned char>(s[0]);
    std::size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || s.size() != n) return n == 1 && s.size() == 1 ? b : -1;
    if (n == 1) return b;
    long r = b & (0x7F >> n);
    for (std::size_t i = 1; i < n; ++i)
        r = (r << 6) | (static_cast<unsigned char>(s[i]) & 0x3F);
    return r;
}

class Parser {
public:
    Parser(const std::string& name, std::string_view text, const Funcs& funcs,
           std::size_t max_depth)
        : name_(name), funcs_(funcs), max_depth_(max_depth),
          source_(std::make_shared<const std::string>(text)), toks_(lex(text)) {}

    std::vector<std::shared_ptr<Tree>> run() {
        auto top = std::make_shared<Tree>();
        top->name = name_;
        top->parse_name = name_;
        top->source = source_;
        top->root = make(NodeKind::list, 0, 1);
        out_.push_back(top);
        vars_ = {"$"};
        for (;;) {
            const Token& t = peek();
            if (t.type == Tok::eof) break;
            if (t.type == Tok::left) {
                std::size_t save = i_;
                next();
                if (peek_non_space().type == Tok::kw_define) {
                    next_non_space();
                    definition();
                    continue;
                }
                i_ = save;
            }
            auto n = text_or_action();
            if (n->kind == NodeKind::list) { // {{end}} or {{else}} (as a marker)
                error("unexpected " + n->text);
            }
            top->root->kids.push_back(std::move(n));
        }
        return std::move(out_);
    }

private:
    const std::string& name_;
    const Funcs& funcs_;
    std::size_t max_depth_;
    std::shared_ptr<const std::string> source_;
    std::vector<Token> toks_;
    std::size_t i_ = 0;
    std::vector<std::string> vars_;
    int range_depth_ = 0;
    std::size_t depth_ = 0;
    std::vector<std::shared_ptr<Tree>> out_;
    std::uint32_t line_ = 1;

    [[noreturn]] void error(const std::string& msg) {
        throw ParseError("template: " + name_ + ":" + std::to_string(line_) + ": " + msg);
    }

    const Token& peek() {
        const Token& t = toks_[i_];
        if (t.type == Tok::error) {
            line_ = t.line;
            error(t.val);
        }
        return t;
    }
    const Token& next() {
        const Token& t = peek();
        if (i_ + 1 < toks_.size()) ++i_;
        line_ = t.line;
        return t;
    }
    const Token& next_non_space() {
        while (peek().type == Tok::space)
            next();
        return next();
    }
    const Token& peek_non_space() {
        while (peek().type == Tok::space)
            next();
        return peek();
    }

    static std::string describe(const Token& t) {
        switch (t.type) {
        case Tok::eof:
            return "EOF";
        case Tok::dot: // Go counts these two among the keywords
        case Tok::nil:
        case Tok::kw_block:
        case Tok::kw_break:
        case Tok::kw_continue:
        case Tok::kw_define:
        case Tok::kw_else:
        case Tok::kw_end:
        case Tok::kw_if:
        case Tok::kw_range:
        case Tok::kw_template:
        case Tok::kw_with:
            return "<" + t.val + ">";
        default:
            if (t.val.size() > 10) return quote_go(t.val.substr(0, 10)) + "...";
            return quote_go(t.val);
        }
    }
    [[noreturn]] void unexpected(const Token& t, const std::string& context) {
        line_ = t.line;
        error("unexpected " + describe(t) + " in " + context);
    }

    std::unique_ptr<Node> make(NodeKind k, std::uint32_t pos, std::uint32_t line) {
        auto n = std::make_unique<Node>();
        n->kind = k;
        n->pos = pos;
        n->line = line;
        return n;
    }

    void deeper() {
        if (++depth_ > max_depth_) error("max expression depth exceeded");
    }

    void expect_right(const std::string& context) {
        const Token& t = next_non_space();
        if (t.type != Tok::right) unexpected(t, context);
    }

    // {{define "name"}} ... {{end}}
    void definition() {
        const Token& t = next_non_space();
        if (t.type != Tok::string && t.type != Tok::raw_string) unexpected(t, "define clause");
        std::string name = literal_string(t);
        expect_right("define clause");
        auto saved_vars = std::move(vars_);
        int saved_range = range_depth_;
        vars_ = {"$"};
        range_depth_ = 0;
        auto tree = std::make_shared<Tree>();
        tree->name = name;
        tree->parse_name = name_;
        tree->source = source_;
        auto [list, end] = item_list();
        if (end != Tok::kw_end) error("unexpected {{else}}");
        tree->root = std::move(list);
        add(std::move(tree));
        vars_ = std::move(saved_vars);
        range_depth_ = saved_range;
    }

    void add(std::shared_ptr<Tree> tree) {
        for (auto& t : out_) {
            if (t->name != tree->name) continue;
            if (is_empty_tree(*t->root)) {
                t = std::move(tree);
                return;
            }
            if (!is_empty_tree(*tree->root))
                error("template: multiple definition of template \"" + tree->name + "\"");
            return;
        }
        out_.push_back(std::move(tree));
    }

    std::string literal_string(const Token& t) {
        if (t.type == Tok::raw_string) return t.val.substr(1, t.val.size() - 2);
        std::string s;
        if (!unquote(t.val, s)) error("bad string syntax: " + t.val);
        return s;
    }

    // Nodes up to {{end}} or {{else}}: the list and which one ended it.
    std::pair<std::unique_ptr<Node>, Tok> item_list() {
        deeper();
        auto list = make(NodeKind::list, peek().pos, peek().line);
        for (;;) {
            if (peek_non_space_top().type == Tok::eof) error("unexpected EOF");
            auto n = text_or_action();
            if (n->kind == NodeKind::list) {
                --depth_;
                return {std::move(list), n->text == "{{end}}" ? Tok::kw_end : Tok::kw_else};
            }
            list->kids.push_back(std::move(n));
        }
    }
    const Token& peek_non_space_top() { return peek(); }

    // One text run or action. {{end}} and {{else}} come back as an (empty) list node whose text
    // names them: the caller decides whether they are in place.
    std::unique_ptr<Node> text_or_action() {
        const Token& t = next();
        if (t.type == Tok::text) {
            auto n = make(NodeKind::text, t.pos, t.line);
            n->text = t.val;
            return n;
        }
        if (t.type == Tok::left) return action();
        unexpected(t, "input");
    }

    std::unique_ptr<Node> action() {
        const Token& t = next_non_space();
        switch (t.type) {
        case Tok::kw_block:
            return block(t);
        case Tok::kw_break:
        case Tok::kw_continue: {
            bool brk = t.type == Tok::kw_break;
            auto n = make(brk ? NodeKind::brk : NodeKind::cont, t.pos, t.line);
            const Token& r = next_non_space();
            if (r.type != Tok::right) unexpected(r, brk ? "{{break}}" : "{{continue}}");
            if (range_depth_ == 0)
                error(brk ? "{{break}} outside {{range}}" : "{{continue}} outside {{range}}");
            return n;
        }
        case Tok::kw_else: {
            auto n = make(NodeKind::list, t.pos, t.line);
            n->text = "{{else}}";
            // "else if" and "else with" are left to the control that reads them.
            const Token& p = peek_non_space();
            if (p.type == Tok::kw_if || p.type == Tok::kw_with) {
                n->text = p.type == Tok::kw_if ? "{{else if}}" : "{{else with}}";
                last_else_ = n->text;
                last_else_pos_ = p.pos;
                next_non_space();
                n->text = "{{else}}";
                return n;
            }
            expect_right("else");
            last_else_ = n->text;
            return n;
        }
        case Tok::kw_end: {
            auto n = make(NodeKind::list, t.pos, t.line);
            n->text = "{{end}}";
            expect_right("end");
            return n;
        }
        case Tok::kw_if:
            return control(NodeKind::if_, "if", t);
        case Tok::kw_range:
            return control(NodeKind::range, "range", t);
        case Tok::kw_with:
            return control(NodeKind::with, "with", t);
        case Tok::kw_template:
            return template_call(t);
        default:
            break;
        }
        --i_; // give the token back
        auto n = make(NodeKind::action, t.pos, t.line);
        n->pipe = pipeline("command", Tok::right);
        return n;
    }

    std::unique_ptr<Node> control(NodeKind kind, const std::string& context, const Token& kw) {
        std::size_t nvars = vars_.size();
        auto n = make(kind, kw.pos, kw.line);
        n->pipe = pipeline(context, Tok::right);
        n->pos = n->pipe->pos; // Go places a control at its pipeline
        n->line = n->pipe->line;
        if (kind == NodeKind::range) ++range_depth_;
        auto [list, end] = item_list();
        if (kind == NodeKind::range) --range_depth_;
        n->list = std::move(list);
        if (end == Tok::kw_else) {
            std::string which = last_else_;
            if ((which == "{{else if}}" && kind == NodeKind::if_) ||
                (which == "{{else with}}" && kind == NodeKind::with)) {
                // {{else if ...}}: a nested control that reads the one {{end}}.
                auto else_list = make(NodeKind::list, last_else_pos_, line_);
                const Token& kw2 = toks_[i_ - 1];
                else_list->kids.push_back(control(kind, context, kw2));
                n->else_list = std::move(else_list);
            } else {
                if (which != "{{else}}")
                    error(std::string("unexpected <") + (which == "{{else if}}" ? "if" : "with") +
                          "> in input");
                auto [list2, end2] = item_list();
                if (end2 != Tok::kw_end) error("expected end; found {{else}}");
                n->else_list = std::move(list2);
            }
        }
        vars_.resize(nvars);
        return n;
    }
    std::string last_else_;
    std::uint32_t last_else_pos_ = 0;

    std::unique_ptr<Node> template_call(const Token& kw) {
        const Token& t = next_non_space();
        if (t.type != Tok::string && t.type != Tok::raw_string) unexpected(t, "template clause");
        auto n = make(NodeKind::template_, t.pos, t.line); // at the name, as Go
        (void)kw;
        n->text = literal_string(t);
        if (peek_non_space().type != Tok::right)
            n->pipe = pipeline("template clause", Tok::right);
        else
            next_non_space();
        return n;
    }

    std::unique_ptr<Node> block(const Token& kw) {
        const Token& t = next_non_space();
        if (t.type != Tok::string && t.type != Tok::raw_string) unexpected(t, "block clause");
        auto n = make(NodeKind::template_, t.pos, t.line);
        (void)kw;
        n->text = literal_string(t);
        n->pipe = pipeline("block clause", Tok::right);
        auto saved_vars = std::move(vars_);
        int saved_range = range_depth_;
        vars_ = {"$"};
        range_depth_ = 0;
        auto tree = std::make_shared<Tree>();
        tree->name = n->text;
        tree->parse_name = name_;
        tree->source = source_;
        auto [list, end] = item_list();
        if (end != Tok::kw_end) error("unexpected {{else}}");
        tree->root = std::move(list);
        add(std::move(tree));
        vars_ = std::move(saved_vars);
        range_depth_ = saved_range;
        return n;
    }

    std::unique_ptr<Node> pipeline(const std::string& context, Tok end) {
        deeper();
        const Token& first = peek_non_space();
        auto pipe = make(NodeKind::pipe, first.pos, first.line);
        // Declarations: $x := , $x = , and in range $i, $v :=
        if (first.type == Tok::variable) {
            std::size_t save = i_;
            const Token& v = next();
            const Token& after = peek_non_space();
            if (after.type == Tok::declare || after.type == Tok::assign) {
                pipe->assign = after.type == Tok::assign;
                next_non_space();
                pipe->decl.push_back(v.val);
                vars_.push_back(v.val);
            } else if (after.type == Tok::comma) {
                next_non_space();
                pipe->decl.push_back(v.val);
                vars_.push_back(v.val);
                if (context != "range") error("too many declarations in " + context);
                const Token& v2 = next_non_space();
                if (v2.type != Tok::variable) error("range can only initialize variables");
                const Token& op = next_non_space();
                if (op.type != Tok::declare && op.type != Tok::assign)
                    error("range can only initialize variables");
                pipe->assign = op.type == Tok::assign;
                pipe->decl.push_back(v2.val);
                vars_.push_back(v2.val);
            } else {
                i_ = save;
            }
        }
        for (;;) {
            const Token& t = next_non_space();
            if (t.type == end) break;
            switch (t.type) {
            case Tok::boolean:
            case Tok::char_const:
            case Tok::dot:
            case Tok::field:
            case Tok::identifier:
            case Tok::number:
            case Tok::nil:
            case Tok::raw_string:
            case Tok::string:
            case Tok::variable:
            case Tok::lparen:
                --i_;
                pipe->kids.push_back(command(end));
                break;
            default:
                unexpected(t, context);
            }
            if (toks_[i_ - 1].type == end) break;
        }
        if (pipe->kids.empty()) error("missing value for " + context);
        for (std::size_t k = 1; k < pipe->kids.size(); ++k) {
            switch (pipe->kids[k]->kids[0]->kind) {
            case NodeKind::boolean:
            case NodeKind::dot:
            case NodeKind::nil:
            case NodeKind::number:
            case NodeKind::string:
                error("non executable command in pipeline stage " + std::to_string(k + 1));
            default:
                break;
            }
        }
        --depth_;
        return pipe;
    }

    // Operands separated by spaces, up to '|' (consumed) or the end (consumed).
    std::unique_ptr<Node> command(Tok end) {
        auto cmd = make(NodeKind::command, peek().pos, peek().line);
        for (;;) {
            peek_non_space();
            auto op = operand();
            if (op) cmd->kids.push_back(std::move(op));
            const Token& t = next();
            if (t.type == Tok::space) continue;
            if (t.type == end) break;
            if (t.type == Tok::pipe) break;
            if (t.type == Tok::right || t.type == Tok::rparen) unexpected(t, "operand");
            unexpected(t, "operand");
        }
        if (cmd->kids.empty()) error("empty command");
        return cmd;
    }

    std::unique_ptr<Node> operand() {
        auto n = term();
        if (!n) return n;
        if (peek().type != Tok::field) return n;
        auto chain_pos = peek().pos;
        std::vector<std::string> fields;
        while (peek().type == Tok::field)
            fields.push_back(next().val.substr(1));
        switch (n->kind) {
        case NodeKind::field:
        case NodeKind::variable:
            for (auto& f : fields)
                n->idents.push_back(f);
            return n;
        case NodeKind::boolean:
        case NodeKind::string:
        case NodeKind::number:
        case NodeKind::nil:
        case NodeKind::dot:
            error("unexpected . after term " + quote_go(n->str()));
        default: {
            auto chain = make(NodeKind::chain, chain_pos, n->line);
            chain->pipe = std::move(n);
            chain->idents = std::move(fields);
            return chain;
        }
        }
    }

    std::unique_ptr<Node> term() {
        const Token& t = next_non_space();
        switch (t.type) {
        case Tok::identifier: {
            if (!funcs_.has(t.val)) error("function \"" + t.val + "\" not defined");
            auto n = make(NodeKind::identifier, t.pos, t.line);
            n->text = t.val;
            return n;
        }
        case Tok::dot:
            return make(NodeKind::dot, t.pos, t.line);
        case Tok::nil:
            return make(NodeKind::nil, t.pos, t.line);
        case Tok::variable: {
            bool known = false;
            for (const auto& v : vars_)
                known = known || v == t.val;
            if (!known) error("undefined variable \"" + t.val + "\"");
            auto n = make(NodeKind::variable, t.pos, t.line);
            n->idents.push_back(t.val);
            return n;
        }
        case Tok::field: {
            auto n = make(NodeKind::field, t.pos, t.line);
            n->idents.push_back(t.val.substr(1));
            return n;
        }
        case Tok::boolean: {
            auto n = make(NodeKind::boolean, t.pos, t.line);
            n->text = t.val;
            n->constant = Value::boolean(t.val == "true");
            return n;
        }
        case Tok::char_const:
        case Tok::number:
            return number(t);
        case Tok::lparen: {
            auto p = pipeline("parenthesized pipeline", Tok::rparen);
            p->pos = t.pos;
            return p;
        }
        case Tok::string:
        case Tok::raw_string: {
            auto n = make(NodeKind::string, t.pos, t.line);
            n->text = t.val;
            n->constant = Value::string(literal_string(t));
            return n;
        }
        default:
            --i_;
            return nullptr;
        }
    }

    std::unique_ptr<Node> number(const Token& t) {
        auto n = make(NodeKind::number, t.pos, t.line);
        n->text = t.val;
        if (t.type == Tok::char_const) {
            std::string s;
            long r = unquote(t.val, s) ? one_rune(s) : -1;
            if (r < 0) error("malformed character constant: " + t.val);
            n->constant = Value::integer(r);
            return n;
        }
        std::string digits;
        for (char c : t.val)
            if (c != '_') digits += c;
        bool prefixed = digits.find_first_of("xXoObB") != std::string::npos;
        if (!t.val.empty() && t.val.back() == 'i') error("complex constants are not supported");
        bool floaty = !prefixed && digits.find_first_of(".eE") != std::string::npos;
        if (!floaty) {
            std::string_view d = digits;
            bool neg = false;
            if (!d.empty() && (d[0] == '+' || d[0] == '-')) neg = d[0] == '-', d.remove_prefix(1);
            // Go reads a leading 0 as octal ("0755").
            std::string norm(d);
            if (norm.size() > 1 && norm[0] == '0' && (norm[1] == 'o' || norm[1] == 'O'))
                norm = "0" + norm.substr(2);
            auto u = io::go::parse_uint(norm);
            if (u) {
                if (!neg && *u <= static_cast<std::uint64_t>(INT64_MAX)) {
                    n->constant = Value::integer(static_cast<std::int64_t>(*u));
                    return n;
                }
                if (neg && *u <= static_cast<std::uint64_t>(INT64_MAX) + 1) {
                    n->constant = Value::integer(static_cast<std::int64_t>(0 - *u));
                    return n;
                }
                if (neg) error("integer overflow: \"" + t.val + "\"");
                n->overflows = true; // Go reports it when the value is used
                return n;
            }
            if (!prefixed && io::go::parse_float(d)) error("integer overflow: \"" + t.val + "\"");
            error("illegal number syntax: \"" + t.val + "\"");
        }
        std::string_view d = digits;
        bool neg = false;
        if (!d.empty() && (d[0] == '+' || d[0] == '-')) neg = d[0] == '-', d.remove_prefix(1);
        auto f = io::go::parse_float(d);
        if (!f || d.empty() || d == ".") error("illegal number syntax: \"" + t.val + "\"");
        n->constant = Value::floating(neg ? -*f : *f);
        return n;
    }
};

} // namespace

bool is_empty_tree(const Node& n) {
    switch (n.kind) {
    case NodeKind::list:
        for (const auto& k : n.kids)
            if (!is_empty_tree(*k)) return false;
        return true;
    case NodeKind::text:
        for (char c : n.text)
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
        return true;
    default:
        return false;
    }
}

Result<std::vector<std::shared_ptr<Tree>>> parse_trees(const std::string& name,
                                                       std::string_view text, const Funcs& funcs,
                                                       std::size_t max_depth) {
    try {
        return Parser(name, text, funcs, max_depth).run();
    } catch (const ParseError& e) {
        return Error::invalid(e.what());
    }
}

} // namespace kpkg::tmpl
