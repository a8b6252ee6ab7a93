// Go's text/template, kpkg's own: a set of named templates parsed from several files (as Package
// Operator parses every *.gotmpl of a package into one set, so a `define` in one file is usable
// from another), executed over Values with Go's semantics.
//
// Syntax (text/template): text and actions {{ }}, trim markers {{- and -}}, comments {{/* */}},
// pipelines with |, variables ($x := ..., $x = ..., $), fields and chains (.a.b, $x.a, (pipe).a),
// literals (Go strings with escapes, raw strings, characters, integers in decimal, hex, octal and
// binary with underscores, floats, true, false, nil), if / else if / else, range (one or two
// variables, else, break, continue; over lists, maps in key order and integers), with / else with
// / else, define, template, block. No methods (values are data only), no custom delimiters.
//
// Errors read as Go writes them: parse errors "template: NAME:LINE: message", execution errors
// "template: NAME:LINE:COL: executing \"NAME\" at <node>: message" (COL 0-based, as Go's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/template/funcs.hpp"
#include "kpkg/template/value.hpp"

namespace kpkg::tmpl {

struct Options {
    // missingkey=error (Package Operator's choice): a missing map key is an error naming it.
    // Off: the missing value is nil and prints "<no value>" (Go's default).
    bool missing_key_error = true;
    // Nesting of {{template}}, {{block}} and include calls. Go allows 100000; kpkg stops earlier
    // so that a self-calling template ends with an error long before the stack does.
    std::size_t max_depth = 1000;
    // Nodes being evaluated within each other at once, across template calls (what the stack
    // holds: a template at depth 1000 nested in 1000 ifs would otherwise exhaust it).
    std::size_t max_nesting = 2500;
    // Nodes evaluated in one execution (a guard against endless ranges).
    std::uint64_t max_steps = 50'000'000;
    // Bytes of output of one execution.
    std::size_t max_output = std::size_t{64} << 20;
    // Steps of regular-expression matching (the regex functions, getFileGlob) of every execution
    // of the Set together, so of one package render (re::Budget says what a step is); past it the
    // calling function fails.
    std::uint64_t max_regex_steps = 100'000'000;
    // Nesting of parentheses and control structures when parsing.
    std::size_t max_parse_depth = 1000;
};

struct Tree;

class Set {
public:
    explicit Set(std::shared_ptr<const Funcs> funcs, Options options = {});
    ~Set();
    Set(Set&&) noexcept;
    Set& operator=(Set&&) noexcept;

    // Parses one file: a template named `name` (its text outside any define) and one per define
    // and block in it. A second definition in the same file is an error; a later file replaces
    // an earlier definition unless the new one is empty (Go's rule for sets).
    Result<void> parse(const std::string& name, std::string_view text);

    bool has(std::string_view name) const;
    std::vector<std::string> names() const; // sorted

    // Executes the template `name` with `data` as dot and $.
    Result<std::string> execute(std::string_view name, const Value& data) const;

    const Options& options() const { return options_; }
    const Funcs& funcs() const { return *funcs_; }
    const Tree* find(std::string_view name) const;
    const std::string& first_name() const { return first_; }
    // What is left of Options::max_regex_steps to the executions of this set (shared by them:
    // execute one set from one thread at a time).
    re::Budget* regex_budget() const { return regex_budget_.get(); }

private:
    std::shared_ptr<const Funcs> funcs_;
    Options options_;
    std::map<std::string, std::shared_ptr<const Tree>, std::less<>> trees_;
    std::string first_; // the first file parsed: the set's name in messages
    std::shared_ptr<re::Budget> regex_budget_;
};

} // namespace kpkg::tmpl
