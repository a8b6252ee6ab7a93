// The functions a template may call: a registry the caller fills before parsing (text/template
// checks at parse time that every function named exists).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kpkg/template/value.hpp"

namespace kpkg::tmpl {

struct Options;

// What a function sees of the execution that calls it (for include and the limits).
class Context {
public:
    virtual ~Context() = default;
    // Executes the template `name` with `dot` into a string, one level deeper.
    virtual std::string run(const std::string& name, const Value& dot) = 0;
    virtual const Options& options() const = 0;
};

// Thrown by a function: the executor reports "error calling NAME: <message>".
struct FuncError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// Thrown by a function for an argument of the wrong type: reported without "error calling",
// as text/template reports an argument it cannot convert ("wrong type for value; ...").
struct ArgError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

using Fn = std::function<Value(Context&, std::span<const Value>)>;

struct Func {
    Fn fn;
    std::size_t min_args = 0;
    std::size_t max_args = 0; // kVariadic: no maximum
    static constexpr std::size_t kVariadic = static_cast<std::size_t>(-1);
    // and/or: the executor evaluates the arguments one by one and stops early (Go 1.18 and later).
    bool short_circuit_and = false, short_circuit_or = false;
};

class Funcs {
public:
    // Adds or replaces `name`.
    void add(std::string name, std::size_t min_args, std::size_t max_args, Fn fn);
    void add(std::string name, Func f) { funcs_[std::move(name)] = std::move(f); }
    const Func* find(std::string_view name) const;
    bool has(std::string_view name) const { return find(name) != nullptr; }

private:
    std::map<std::string, Func, std::less<>> funcs_;
};

// text/template's builtins: and or not len index slice print printf println eq ne lt le gt ge
// html urlquery. Not provided: js (its escaping rules are not reproduced yet) and call (there are
// no Go function values to call).
void add_builtins(Funcs& f);

// A first batch of the Sprig (v3) functions in Package Operator's allow-list, with Sprig's
// semantics (argument order, "" for a missing get, quote's %q, b64dec's error text as result):
//   strings   trim trimAll trimPrefix trimSuffix upper lower title untitle replace contains
//             hasPrefix hasSuffix quote squote cat indent nindent repeat nospace trunc substr
//             toString join split splitList
//   defaults  default empty coalesce ternary toJson fail
//   lists     list first last rest initial has append push prepend reverse uniq compact
//             slice (Sprig's, which replaces the builtin: lists only) sortAlpha until dig
//   types     typeOf kindOf typeIs kindIs deepEqual
//   dicts     dict get set unset hasKey keys values pick omit (keys and values in key order)
//   encoding  b64enc b64dec
//   numbers   add add1 sub mul div mod max min int int64 float64 atoi (integers, as int64 in Go)
// upper/lower/title change ASCII letters only. indent, nindent and repeat refuse a result larger
// than the output limit.
void add_sprig(Funcs& f);

// Package Operator's include NAME DATA: the template's output as a string (to pipe into indent and
// the like). Nesting counts towards Options::max_depth, as {{template}} does.
void add_include(Funcs& f);

// Helpers for function implementations: the argument as a string, or an ArgError in Go's words
// ("wrong type for value; expected string; got float64").
const std::string& arg_string(std::span<const Value> args, std::size_t i);

// fmt.Sprintf, fmt.Sprint, fmt.Sprintln over Values. Verbs: %v %s %d %q %f %F %e %E %g %G %t
// %x %X %o %b %c %T %%, flags + - # 0 space, width and precision (also '*'). Wrong types, missing
// and extra operands are reported inline as fmt does (%!d(string=x), %!s(MISSING),
// %!(EXTRA int=1)).
// Output beyond max_bytes (and values nested beyond kMaxNesting) throw std::length_error.
std::string sprintf(std::string_view format, std::span<const Value> args,
                    std::size_t max_bytes = SIZE_MAX);
std::string sprint(std::span<const Value> args, std::size_t max_bytes = SIZE_MAX);
std::string sprintln(std::span<const Value> args, std::size_t max_bytes = SIZE_MAX);

} // namespace kpkg::tmpl
