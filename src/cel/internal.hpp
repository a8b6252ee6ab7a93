// Internals of the CEL implementation shared by its phases (not a public header): compile
// errors, tokens, the syntax tree, and each phase's entry point.
//   lex.cpp      text helpers (UTF-8, positions, excerpts) and the lexer
//   parse.cpp    the parser (macros expanded as cel-go does when parsing)
//   check.cpp    the type checker, against the caller's declared variables
//   eval.cpp     values, the evaluator, folding of constant subtrees
//   program.cpp  Program, Env, Activation: the phases put together
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kpkg/cel/cel.hpp"

namespace kpkg::cel::detail {

// A compile error; thrown inside the compiler only (Program::compile turns it into an Error).
struct CompileError {
    std::uint32_t pos; // byte offset in the rule
    std::string message;
};

[[noreturn]] inline void fail_at(std::uint32_t pos, std::string message) {
    throw CompileError{pos, std::move(message)};
}

// --- text (lex.cpp) ---

// The length of the UTF-8 sequence starting at s[i], or 0 when it is not valid UTF-8.
std::size_t utf8_len(std::string_view s, std::size_t i);
std::size_t count_code_points(std::string_view s);
// The first invalid UTF-8 byte of s, if any.
std::optional<std::size_t> invalid_utf8(std::string_view s);
// An input text for a message, cut when long.
std::string shorten(std::string_view s);
// "column 5" or "line 2, column 5" of a byte offset.
std::string location(std::string_view src, std::uint32_t pos);
// The line of `pos` and a caret under its column.
std::pair<std::string, std::string> excerpt(std::string_view src, std::uint32_t pos);

// --- tokens (lex.cpp) ---

enum class Tok : std::uint8_t {
    end,
    ident,
    int_lit,
    uint_lit,
    dbl_lit,
    str_lit,
    bytes_lit,
    kw_true,
    kw_false,
    kw_null,
    kw_in,
    lparen,
    rparen,
    lbracket,
    rbracket,
    lbrace,
    rbrace,
    dot,
    comma,
    colon,
    question,
    oror,
    andand,
    bang,
    eq,
    ne,
    lt,
    le,
    gt,
    ge,
    plus,
    minus,
    star,
    slash,
    percent,
};

struct Token {
    Tok t = Tok::end;
    std::uint32_t pos = 0;
    std::uint32_t end = 0;
    std::uint64_t mag = 0; // int and uint literals: the magnitude
    bool overflow = false; // the magnitude does not fit in 64 bits
    double d = 0;
    std::string text; // identifier, or the decoded string literal
};

std::vector<Token> lex(std::string_view src);

// --- syntax tree (parse.cpp) ---

enum class Op : std::uint8_t {
    lit,
    ident,
    select,
    has,
    index,
    list,
    map,
    not_,
    neg,
    and_,
    or_,
    cond,
    eq,
    ne,
    lt,
    le,
    gt,
    ge,
    in,
    add,
    sub,
    mul,
    div,
    mod,
    all,
    exists,
    exists_one,
    size,
    starts_with,
    ends_with,
    contains,
    semver_compare,
};

const char* op_text(Op op);

enum class LitKind : std::uint8_t { null, boolean, int_, uint_, dbl, str };

struct Expr {
    Op op = Op::lit;
    LitKind lit = LitKind::null;
    bool root = false; // identifier written with a leading '.'
    std::uint32_t pos = 0;
    std::uint32_t depth = 1;
    // identifier: its macro variable's slot (>= 0) or -1 - the index of the declared variable;
    // macro: the slot of its variable
    std::int32_t slot = -1;
    bool b = false;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double d = 0;
    std::string text; // string literal, identifier, field name, macro variable
    std::vector<std::uint32_t> kids;
};

// Parses the tokens of a rule into `out` (children before their parents); returns the root.
std::uint32_t parse(std::vector<Token> toks, std::vector<Expr>& out);

// --- checker (check.cpp) ---

struct Checked {
    TypeP type;            // of the whole rule
    std::size_t slots = 0; // macro variables needed at once
};
// Types the tree, resolving names against the macros' variables and `env`'s.
Checked check(std::vector<Expr>& exprs, std::uint32_t root, const Env& env);

// --- evaluator (eval.cpp) ---

// The value of a declared variable for one evaluation.
struct Global {
    enum class Kind : std::uint8_t { absent, properties, node };
    Kind kind = Kind::absent;
    std::string_view name;
    const std::vector<Property>* properties = nullptr;
    const io::Node* node = nullptr;
    bool typed = false; // node: integers are int
};

// The values of the subtrees that read no variable, computed once.
struct Folded;
std::shared_ptr<const Folded> fold_constants(const std::vector<Expr>& exprs, std::uint32_t root,
                                             std::size_t slots);
Outcome run(const std::vector<Expr>& exprs, std::uint32_t root, std::size_t slots,
            const Folded* folded, std::span<const Global> globals);

} // namespace kpkg::cel::detail
