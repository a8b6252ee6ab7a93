// The CEL rules of olm.constraint properties, compiled and evaluated by kpkg itself (Debian has
// no C++ CEL library). OLM compiles a rule with cel-go against one variable and one function and
// rejects the constraint when compilation fails; kpkg does the same for the subset below and
// rejects anything outside it, naming the rule and the column of the offending token.
//
// Input. The caller declares the variables (kpkg/cel/env.hpp). OLM's environment has one:
// `properties`, the candidate bundle's property list, typed list(map(string, dyn)): each item is
// a map with "type" (string) and "value" (the property value as JSON: objects are maps, arrays
// lists, every number a double as Go's encoding/json reads it, strings, booleans, null).
// The code is split by phase: src/cel/lex.cpp, parse.cpp, check.cpp, eval.cpp, program.cpp.
//
// Subset (CEL syntax and semantics, cel-spec langdef):
//   literals    int (12, 0x1F, -5), uint (12u), double (1.5, 1e3, .5), string ('x', "x",
//               '''x''', r'raw', with CEL's escapes), true, false, null; list [a, b];
//               map {k: v} (keys int, uint, bool or string)
//   names       the declared variables (properties); the variable of an enclosing macro;
//               .properties
//   members     e.f and e['f'] on maps; e[i] on lists (int index); has(e.f)
//   macros      e.all(x, p)  e.exists(x, p)  e.exists_one(x, p)  over lists (elements) and
//               maps (keys)
//   functions   semver_compare(a, b) -> int when the environment has it (-1, 0, 1; blang
//               ParseTolerant of each argument, a number formatted as Go's %v); size(e) and
//               e.size() on strings, lists, maps;
//               s.startsWith(t), s.endsWith(t), s.contains(t)
//   operators   by precedence: ?:   ||   &&   == != < <= > >= in   + -   * / %   ! - (unary)
// Precedence and associativity are CEL's. Equality is heterogeneous (values of different types
// are unequal, int/uint/double compare on one number line, NaN is unequal to itself); ordering is
// defined on bool, int, uint, double and string (numbers across types). Arithmetic follows CEL
// (int and uint overflow, division or modulus by zero are errors; no mixed-type arithmetic; +
// also joins strings and lists). && and || are commutative as CEL defines them: false && error
// is false, true || error is true; all() and exists() absorb errors the same way; exists_one()
// propagates them. A missing map key, an index out of range or an operand of the wrong type is an
// evaluation error; OLM treats a rule that fails to evaluate as not satisfied, and so does kpkg.
//
// Checked when compiled (as cel-go's type checker does): unknown names and functions, operand
// types that cannot match (1 == 'a', 'a' < 1, !1), and a result that is not of type bool (a rule
// of type dyn, e.g. `properties[0].value`, is rejected as OLM rejects it). Not in the subset,
// and rejected with that reason: bytes literals, the map() and filter() macros, type
// conversions (int(), string(), dyn(), type() ...), matches(), timestamps and durations,
// message construction, optional syntax (.? and [?]).
//
// Limits: a rule of at most 100,000 characters (cel-go's default), nesting at most 250 levels
// deep (cel-go's default recursion limit; 100,000 nested parentheses are an error, not a crash),
// and at most 1,000,000 evaluation steps per bundle (a rule that needs more fails to evaluate).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/cel/env.hpp"
#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::cel {

inline constexpr std::size_t max_rule_chars = 100'000; // code points
inline constexpr std::size_t max_depth = 250;
inline constexpr std::uint64_t max_steps = 1'000'000;

// What a rule says about one bundle.
struct Outcome {
    enum class Kind : std::uint8_t { holds, fails, error };
    Kind kind = Kind::fails;
    std::string error; // kind == error: why, e.g. "no such key: version"

    bool holds() const { return kind == Kind::holds; }
};

class Program {
public:
    // Parses and type-checks `rule` against the variables (and functions) `env` declares; the
    // rule must be of type bool. Errors are Error::invalid (exit 3) with a message of the form
    // "column 23: undeclared reference to 'foo'" ("line 2, column 5: ..." for a rule of several
    // lines; columns count characters from 1) and two notes: the rule's line and a caret under
    // the column.
    static Result<std::shared_ptr<const Program>> compile(std::string_view rule,
                                                          const Env& env = Env::olm());

    // Evaluates the rule with these values of its variables. A variable without a value, or
    // with a value of another type than declared, makes the evaluation an error when the rule
    // reads it. Never throws on any input; thread-safe.
    Outcome evaluate(const Activation& vars) const;
    // The same with `properties` bound to one bundle's properties (OLM's environment).
    Outcome evaluate(const std::vector<Property>& properties) const;

    struct Impl;
    explicit Program(std::unique_ptr<Impl> impl);
    ~Program();
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;

private:
    std::unique_ptr<Impl> impl_;
};

} // namespace kpkg::cel
