// The inside of kpkg's text/template: tokens, the syntax tree, the lexer and the parser.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/template/template.hpp"

namespace kpkg::tmpl {

enum class Tok : std::uint8_t {
    error,
    eof,
    text,
    left,
    right,
    space,
    pipe,
    assign,
    declare,
    comma,
    lparen,
    rparen,
    ch_other,
    string,
    raw_string,
    char_const,
    number,
    boolean,
    dot,
    field,
    variable,
    identifier,
    nil,
    // keywords
    kw_block,
    kw_break,
    kw_continue,
    kw_define,
    kw_else,
    kw_end,
    kw_if,
    kw_range,
    kw_template,
    kw_with,
};

struct Token {
    Tok type = Tok::eof;
    std::uint32_t pos = 0;  // byte offset in the text
    std::uint32_t line = 1; // line of the token's start
    std::string val;
};

// The whole text as tokens (comments dropped, trimming applied to text tokens); ends with eof or
// an error token carrying the message.
std::vector<Token> lex(std::string_view text);

enum class NodeKind : std::uint8_t {
    list,
    text,
    action,
    pipe,
    command, // structure
    field,
    variable,
    chain,
    identifier,
    dot,
    nil,
    boolean,
    number,
    string, // operands
    if_,
    range,
    with,
    template_,
    brk,
    cont,
};

struct Node {
    NodeKind kind = NodeKind::list;
    std::uint32_t pos = 0;
    std::uint32_t line = 1;
    std::string text;                // text; identifier; the literal as written; template name
    std::vector<std::string> idents; // field/variable/chain: the names (variable: "$x" first)
    std::vector<std::unique_ptr<Node>> kids; // list: nodes; pipe: commands; command: args
    std::unique_ptr<Node> pipe; // action, if, range, with, template; chain: its operand
    std::unique_ptr<Node> list, else_list;
    std::vector<std::string> decl; // pipe: declared or assigned variables
    bool assign = false;           // pipe: '=' rather than ':='
    bool overflows = false;        // number: an integer above int64's range (an error when used)
    Value constant;                // boolean, number, string
    // Go's String() of the node, for "at <...>" in execution errors.
    std::string str() const;
};

struct Tree {
    std::string name;       // the template's name
    std::string parse_name; // the file it was parsed from (positions are in that text)
    std::shared_ptr<const std::string> source;
    std::unique_ptr<Node> root;
};

// Parses `text` (from the file `name`) into trees: the first is `name`, then the defines and
// blocks in order. The Error's message is Go's "template: NAME:LINE: ...".
Result<std::vector<std::shared_ptr<Tree>>> parse_trees(const std::string& name,
                                                       std::string_view text, const Funcs& funcs,
                                                       std::size_t max_depth);

bool is_empty_tree(const Node& n);

} // namespace kpkg::tmpl
