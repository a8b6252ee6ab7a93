// CEL, phase 2: the parser, recursive descent over CEL's grammar with macros expanded as
// cel-go does when parsing (a run of ! or - with an even count cancels out, "-5" is one literal,
// && and || chains do not nest, reserved words may still be field names, the true-branch of ?:
// is not itself a conditional).
#include <limits>

#include "internal.hpp"

namespace kpkg::cel::detail {

const char* op_text(Op op) {
    switch (op) {
    case Op::not_:
        return "!";
    case Op::neg:
        return "-";
    case Op::and_:
        return "&&";
    case Op::or_:
        return "||";
    case Op::cond:
        return "?:";
    case Op::eq:
        return "==";
    case Op::ne:
        return "!=";
    case Op::lt:
        return "<";
    case Op::le:
        return "<=";
    case Op::gt:
        return ">";
    case Op::ge:
        return ">=";
    case Op::in:
        return "in";
    case Op::add:
        return "+";
    case Op::sub:
        return "-";
    case Op::mul:
        return "*";
    case Op::div:
        return "/";
    case Op::mod:
        return "%";
    case Op::index:
        return "[]";
    case Op::size:
        return "size";
    case Op::starts_with:
        return "startsWith";
    case Op::ends_with:
        return "endsWith";
    case Op::contains:
        return "contains";
    case Op::semver_compare:
        return "semver_compare";
    case Op::all:
        return "all";
    case Op::exists:
        return "exists";
    case Op::exists_one:
        return "exists_one";
    default:
        return "?";
    }
}

namespace {

// ------------------------------------------------------------------------------------------------
// Parser: recursive descent over CEL's grammar, macros expanded as cel-go does when parsing.

// cel-go's reserved identifiers besides the literal keywords (allowed after '.', as field names).
bool reserved_word(std::string_view w) {
    static const char* words[] = {"as",        "break",  "const",  "continue", "else", "for",
                                  "function",  "if",     "import", "let",      "loop", "package",
                                  "namespace", "return", "var",    "void",     "while"};
    for (const char* r : words)
        if (w == r) return true;
    return false;
}

// Standard CEL functions and macros kpkg does not evaluate: rejected with that reason rather
// than as unknown names.
bool standard_cel_name(std::string_view w) {
    static const char* names[] = {
        "map",          "filter",       "matches",     "int",       "uint",
        "double",       "string",       "bytes",       "bool",      "dyn",
        "type",         "duration",     "timestamp",   "getDate",   "getDayOfMonth",
        "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",  "getMilliseconds",
        "getMinutes",   "getMonth",     "getSeconds",  "existsOne", "optional"};
    for (const char* n : names)
        if (w == n) return true;
    return false;
}

std::string describe_token(const Token& t) {
    switch (t.t) {
    case Tok::end:
        return "the end of the rule";
    case Tok::ident:
        return std::string(1, '\'').append(shorten(t.text)).append(1, '\'');
    case Tok::int_lit:
    case Tok::uint_lit:
    case Tok::dbl_lit:
        return "a number";
    case Tok::str_lit:
        return "a string";
    case Tok::bytes_lit:
        return "a bytes literal";
    case Tok::kw_true:
        return "'true'";
    case Tok::kw_false:
        return "'false'";
    case Tok::kw_null:
        return "'null'";
    case Tok::kw_in:
        return "'in'";
    case Tok::lparen:
        return "'('";
    case Tok::rparen:
        return "')'";
    case Tok::lbracket:
        return "'['";
    case Tok::rbracket:
        return "']'";
    case Tok::lbrace:
        return "'{'";
    case Tok::rbrace:
        return "'}'";
    case Tok::dot:
        return "'.'";
    case Tok::comma:
        return "','";
    case Tok::colon:
        return "':'";
    case Tok::question:
        return "'?'";
    case Tok::oror:
        return "'||'";
    case Tok::andand:
        return "'&&'";
    case Tok::bang:
        return "'!'";
    case Tok::eq:
        return "'=='";
    case Tok::ne:
        return "'!='";
    case Tok::lt:
        return "'<'";
    case Tok::le:
        return "'<='";
    case Tok::gt:
        return "'>'";
    case Tok::ge:
        return "'>='";
    case Tok::plus:
        return "'+'";
    case Tok::minus:
        return "'-'";
    case Tok::star:
        return "'*'";
    case Tok::slash:
        return "'/'";
    case Tok::percent:
        return "'%'";
    }
    return "a token";
}

class Parser {
public:
    Parser(std::vector<Token> toks, std::vector<Expr>& out) : toks_(std::move(toks)), ex_(out) {}

    std::uint32_t parse_rule() {
        const std::uint32_t root = expr();
        if (peek().t != Tok::end)
            fail_at(peek().pos,
                    "unexpected " + describe_token(peek()) + " after a complete expression");
        return root;
    }

private:
    struct DepthGuard {
        explicit DepthGuard(Parser& p) : p_(p) {
            if (++p_.depth_ > max_depth)
                fail_at(p_.peek().pos,
                        "the rule nests deeper than " + std::to_string(max_depth) + " levels");
        }
        ~DepthGuard() { --p_.depth_; }
        Parser& p_;
    };

    const Token& peek(std::size_t k = 0) const { return toks_[std::min(k_ + k, toks_.size() - 1)]; }
    const Token& take() {
        const Token& t = toks_[k_];
        if (k_ + 1 < toks_.size()) ++k_;
        return t;
    }
    bool accept(Tok t) {
        if (peek().t != t) return false;
        take();
        return true;
    }
    void expect(Tok t, const char* what) {
        if (peek().t != t)
            fail_at(peek().pos,
                    std::string("expected ") + what + ", found " + describe_token(peek()));
        take();
    }

    std::uint32_t add(Expr e) {
        std::uint32_t d = 0;
        for (auto k : e.kids)
            d = std::max(d, ex_[k].depth);
        e.depth = d + 1;
        if (e.depth > max_depth)
            fail_at(e.pos, "the rule nests deeper than " + std::to_string(max_depth) + " levels");
        ex_.push_back(std::move(e));
        return static_cast<std::uint32_t>(ex_.size() - 1);
    }
    std::uint32_t node(Op op, std::uint32_t pos, std::vector<std::uint32_t> kids) {
        Expr e;
        e.op = op;
        e.pos = pos;
        e.kids = std::move(kids);
        return add(std::move(e));
    }

    // Expr = ConditionalOr ["?" ConditionalOr ":" Expr]
    std::uint32_t expr() {
        DepthGuard g(*this);
        const std::uint32_t c = logical(Tok::oror);
        if (peek().t != Tok::question) return c;
        const std::uint32_t pos = take().pos;
        const std::uint32_t t = logical(Tok::oror);
        expect(Tok::colon, "':' of the conditional '? :'");
        const std::uint32_t f = expr();
        return node(Op::cond, pos, {c, t, f});
    }

    // ConditionalOr and ConditionalAnd, flat (a || b || c is one node, as cel-go balances it).
    std::uint32_t logical(Tok which) {
        std::vector<std::uint32_t> terms;
        terms.push_back(which == Tok::oror ? logical(Tok::andand) : relation());
        std::uint32_t pos = 0;
        while (peek().t == which) {
            const std::uint32_t p = take().pos;
            if (terms.size() == 1) pos = p;
            terms.push_back(which == Tok::oror ? logical(Tok::andand) : relation());
        }
        if (terms.size() == 1) return terms[0];
        return node(which == Tok::oror ? Op::or_ : Op::and_, pos, std::move(terms));
    }

    std::uint32_t relation() {
        std::uint32_t left = addition();
        for (;;) {
            Op op;
            switch (peek().t) {
            case Tok::eq:
                op = Op::eq;
                break;
            case Tok::ne:
                op = Op::ne;
                break;
            case Tok::lt:
                op = Op::lt;
                break;
            case Tok::le:
                op = Op::le;
                break;
            case Tok::gt:
                op = Op::gt;
                break;
            case Tok::ge:
                op = Op::ge;
                break;
            case Tok::kw_in:
                op = Op::in;
                break;
            default:
                return left;
            }
            const std::uint32_t pos = take().pos;
            const std::uint32_t right = addition();
            left = node(op, pos, {left, right});
        }
    }

    std::uint32_t addition() {
        std::uint32_t left = multiplication();
        while (peek().t == Tok::plus || peek().t == Tok::minus) {
            const Op op = peek().t == Tok::plus ? Op::add : Op::sub;
            const std::uint32_t pos = take().pos;
            const std::uint32_t right = multiplication();
            left = node(op, pos, {left, right});
        }
        return left;
    }

    std::uint32_t multiplication() {
        std::uint32_t left = unary();
        while (peek().t == Tok::star || peek().t == Tok::slash || peek().t == Tok::percent) {
            const Op op = peek().t == Tok::star    ? Op::mul
                          : peek().t == Tok::slash ? Op::div
                                                   : Op::mod;
            const std::uint32_t pos = take().pos;
            const std::uint32_t right = unary();
            left = node(op, pos, {left, right});
        }
        return left;
    }

    // Unary = Member | "!" {"!"} Member | "-" {"-"} Member; "-5" is the literal -5.
    std::uint32_t unary() {
        if (peek().t == Tok::bang) {
            const std::uint32_t pos = peek().pos;
            std::size_t n = 0;
            while (accept(Tok::bang))
                ++n;
            const std::uint32_t m = member();
            return n % 2 ? node(Op::not_, pos, {m}) : m;
        }
        if (peek().t == Tok::minus) {
            const std::uint32_t pos = peek().pos;
            if (peek(1).t == Tok::int_lit || peek(1).t == Tok::dbl_lit) {
                take();
                return member(true, pos);
            }
            std::size_t n = 0;
            while (accept(Tok::minus))
                ++n;
            const std::uint32_t m = member();
            return n % 2 ? node(Op::neg, pos, {m}) : m;
        }
        return member();
    }

    std::uint32_t member(bool negative = false, std::uint32_t minus_pos = 0) {
        std::uint32_t e = primary(negative, minus_pos);
        for (;;) {
            if (peek().t == Tok::dot) {
                const std::uint32_t dot = take().pos;
                if (peek().t == Tok::question)
                    fail_at(dot, "optional field selection '.?' is not in the CEL subset kpkg "
                                 "evaluates");
                if (peek().t != Tok::ident)
                    fail_at(peek().pos, "expected a field or method name after '.', found " +
                                            describe_token(peek()));
                const Token& name = take();
                if (accept(Tok::lparen)) {
                    e = receiver_call(name, e, arguments());
                } else {
                    Expr s;
                    s.op = Op::select;
                    s.pos = name.pos;
                    s.text = name.text;
                    s.kids = {e};
                    e = add(std::move(s));
                }
            } else if (peek().t == Tok::lbracket) {
                const std::uint32_t pos = take().pos;
                if (peek().t == Tok::question)
                    fail_at(pos, "optional indexing '[?' is not in the CEL subset kpkg evaluates");
                const std::uint32_t idx = expr();
                expect(Tok::rbracket, "']'");
                e = node(Op::index, pos, {e, idx});
            } else if (peek().t == Tok::lbrace) {
                fail_at(peek().pos, "message construction (Name{field: value}) is not in the CEL "
                                    "subset kpkg evaluates");
            } else {
                return e;
            }
        }
    }

    // Arguments after '(' up to and including ')'.
    std::vector<std::uint32_t> arguments() {
        std::vector<std::uint32_t> args;
        if (accept(Tok::rparen)) return args;
        for (;;) {
            args.push_back(expr());
            if (accept(Tok::rparen)) return args;
            expect(Tok::comma, "',' or ')' in the argument list");
        }
    }

    static Expr literal(LitKind k, std::uint32_t pos) {
        Expr e;
        e.op = Op::lit;
        e.lit = k;
        e.pos = pos;
        return e;
    }

    // Recursion goes through expr() (parentheses, lists, maps, arguments), which guards the depth.
    std::uint32_t primary(bool negative, std::uint32_t minus_pos) {
        const Token& t = take();
        switch (t.t) {
        case Tok::int_lit: {
            constexpr auto max =
                static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
            if (t.overflow || t.mag > max + (negative ? 1 : 0))
                fail_at(negative ? minus_pos : t.pos,
                        "invalid int literal: out of the 64-bit range");
            Expr e = literal(LitKind::int_, negative ? minus_pos : t.pos);
            e.i = negative ? (t.mag == max + 1 ? std::numeric_limits<std::int64_t>::min()
                                               : -static_cast<std::int64_t>(t.mag))
                           : static_cast<std::int64_t>(t.mag);
            return add(std::move(e));
        }
        case Tok::uint_lit: {
            if (t.overflow) fail_at(t.pos, "invalid uint literal: out of the 64-bit range");
            Expr e = literal(LitKind::uint_, t.pos);
            e.u = t.mag;
            return add(std::move(e));
        }
        case Tok::dbl_lit: {
            Expr e = literal(LitKind::dbl, negative ? minus_pos : t.pos);
            e.d = negative ? -t.d : t.d;
            return add(std::move(e));
        }
        case Tok::str_lit: {
            Expr e = literal(LitKind::str, t.pos);
            e.text = t.text;
            return add(std::move(e));
        }
        case Tok::bytes_lit:
            fail_at(t.pos, "bytes literals are not in the CEL subset kpkg evaluates");
        case Tok::kw_true:
        case Tok::kw_false: {
            Expr e = literal(LitKind::boolean, t.pos);
            e.b = t.t == Tok::kw_true;
            return add(std::move(e));
        }
        case Tok::kw_null:
            return add(literal(LitKind::null, t.pos));
        case Tok::lparen: {
            const std::uint32_t e = expr();
            expect(Tok::rparen, "')'");
            return e;
        }
        case Tok::lbracket: {
            std::vector<std::uint32_t> items;
            while (peek().t != Tok::rbracket) {
                items.push_back(expr());
                if (!accept(Tok::comma)) break;
            }
            expect(Tok::rbracket, "',' or ']' in the list");
            return node(Op::list, t.pos, std::move(items));
        }
        case Tok::lbrace: {
            std::vector<std::uint32_t> kv;
            while (peek().t != Tok::rbrace) {
                kv.push_back(expr());
                expect(Tok::colon, "':' between a map key and its value");
                kv.push_back(expr());
                if (!accept(Tok::comma)) break;
            }
            expect(Tok::rbrace, "',' or '}' in the map");
            return node(Op::map, t.pos, std::move(kv));
        }
        case Tok::dot: {
            if (peek().t != Tok::ident)
                fail_at(peek().pos,
                        "expected a name after the leading '.', found " + describe_token(peek()));
            return identifier(take(), true);
        }
        case Tok::ident:
            return identifier(t, false);
        default:
            break;
        }
        fail_at(t.pos, "expected an expression, found " + describe_token(t));
    }

    std::uint32_t identifier(const Token& name, bool root) {
        if (reserved_word(name.text)) fail_at(name.pos, "reserved identifier '" + name.text + "'");
        if (accept(Tok::lparen)) return global_call(name, arguments());
        Expr e;
        e.op = Op::ident;
        e.pos = name.pos;
        e.root = root;
        e.text = name.text;
        return add(std::move(e));
    }

    [[noreturn]] void unknown_function(const Token& name, bool receiver) {
        if (standard_cel_name(name.text))
            fail_at(name.pos, "'" + name.text +
                                  "' is standard CEL but not in the subset kpkg evaluates "
                                  "(see kpkg-resolve(1))");
        fail_at(name.pos, std::string("undeclared reference to ") + (receiver ? "method '" : "'") +
                              shorten(name.text) + "'");
    }

    std::uint32_t global_call(const Token& name, std::vector<std::uint32_t> args) {
        const std::string& f = name.text;
        if (f == "has") {
            if (args.size() != 1 || ex_[args[0]].op != Op::select)
                fail_at(name.pos,
                        "has() takes one field selection, as in has(p.value.packageName)");
            Expr e;
            e.op = Op::has;
            e.pos = name.pos;
            e.text = ex_[args[0]].text;
            e.kids = ex_[args[0]].kids;
            return add(std::move(e));
        }
        if (f == "semver_compare") {
            if (args.size() != 2)
                fail_at(name.pos,
                        "semver_compare takes 2 arguments, not " + std::to_string(args.size()));
            return node(Op::semver_compare, name.pos, std::move(args));
        }
        if (f == "size") {
            if (args.size() != 1)
                fail_at(name.pos, "size takes 1 argument, not " + std::to_string(args.size()));
            return node(Op::size, name.pos, std::move(args));
        }
        if (f == "all" || f == "exists" || f == "exists_one" || f == "startsWith" ||
            f == "endsWith" || f == "contains")
            fail_at(name.pos, f + "() is called on a value, as in properties." + f + "(...)");
        unknown_function(name, false);
    }

    std::uint32_t receiver_call(const Token& name, std::uint32_t target,
                                std::vector<std::uint32_t> args) {
        const std::string& f = name.text;
        if (f == "all" || f == "exists" || f == "exists_one") {
            if (args.size() != 2)
                fail_at(name.pos, f +
                                      "() takes a variable name and a condition, as in "
                                      "properties." +
                                      f + "(p, p.type == 'olm.gvk')");
            const Expr& var = ex_[args[0]];
            if (var.op != Op::ident || var.root)
                fail_at(var.pos, "the first argument of " + f + "() must be a simple name");
            Expr e;
            e.op = f == "all" ? Op::all : f == "exists" ? Op::exists : Op::exists_one;
            e.pos = name.pos;
            e.text = var.text;
            e.kids = {target, args[1]};
            return add(std::move(e));
        }
        if (f == "size") {
            if (!args.empty()) fail_at(name.pos, "size() takes no argument when called on a value");
            return node(Op::size, name.pos, {target});
        }
        if (f == "startsWith" || f == "endsWith" || f == "contains") {
            if (args.size() != 1) fail_at(name.pos, f + "() takes 1 argument");
            const Op op = f == "startsWith" ? Op::starts_with
                          : f == "endsWith" ? Op::ends_with
                                            : Op::contains;
            return node(op, name.pos, {target, args[0]});
        }
        if (f == "semver_compare" || f == "has")
            fail_at(name.pos, f + "() is a function, not a method: write " + f + "(...)");
        unknown_function(name, true);
    }

    std::vector<Token> toks_;
    std::size_t k_ = 0;
    std::size_t depth_ = 0;
    std::vector<Expr>& ex_;
};

} // namespace

std::uint32_t parse(std::vector<Token> toks, std::vector<Expr>& out) {
    return Parser(std::move(toks), out).parse_rule();
}

} // namespace kpkg::cel::detail
