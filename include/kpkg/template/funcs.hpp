// The functions a template may call: a registry the caller fills before parsing (text/template
// checks at parse time that every function named exists).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/template/value.hpp"

namespace kpkg::re {
struct Budget;
}

namespace kpkg::tmpl {

struct Options;

// What a function sees of the execution that calls it (for include and the limits).
class Context {
public:
    virtual ~Context() = default;
    // Executes the template `name` with `dot` into a string, one level deeper.
    virtual std::string run(const std::string& name, const Value& dot) = 0;
    virtual const Options& options() const = 0;
    // The regular-expression work left to the execution (Options::max_regex_steps), for every
    // search of the regex functions and getFileGlob; nullptr: each search has a budget of its own.
    virtual re::Budget* regex_budget() { return nullptr; }
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
    std::vector<std::string> names() const; // sorted, the base's included
    // A set shared by many (built once): its functions are found when this set has none of
    // the name.
    void set_base(std::shared_ptr<const Funcs> base) { base_ = std::move(base); }

private:
    std::map<std::string, Func, std::less<>> funcs_;
    std::shared_ptr<const Funcs> base_;
};

// text/template's builtins: and or not len index slice print printf println eq ne lt le gt ge
// html urlquery js call. js escapes as JSEscapeString (which runes above ASCII count as
// printable is approximated); call exists for parsing, and fails when run, as Go's does on a
// non-function (values here are data: there are no Go function values to call).
void add_builtins(Funcs& f);

// The Sprig (v3.3) functions in Package Operator's allow-list (internal/transform/
// transformfiles_funcs.go: "all sprig functions except dates, random, crypto, os, network and
// filepath"), 164 names, each with Sprig's semantics (argument order, "" or nil versus an error,
// quote's %q, b64dec's and b32dec's error text as the result):
//   strings   hello abbrev abbrevboth trunc trim upper lower title untitle substr repeat trimAll
//             trimSuffix trimPrefix nospace initials swapcase snakecase camelcase kebabcase wrap
//             wrapWith contains hasPrefix hasSuffix quote squote cat indent nindent replace plural
//             sha1sum sha256sum adler32sum toString
//   convert   atoi int64 int float64 seq toDecimal split splitList splitn toStrings until
//             untilStep
//   numbers   add1 add sub div mod mul max biggest min (int64) add1f addf subf divf mulf (exact
//             decimals, as shopspring/decimal; divf to 16 places) maxf minf ceil floor round
//   lists     join sortAlpha list tuple first rest last initial append push prepend reverse uniq
//             without has slice (Sprig's: replaces the builtin, lists only) concat chunk compact
//             and their must* forms (mustFirst ... mustChunk, mustCompact: the same functions,
//             Sprig's non-must forms fail the same way)
//   defaults  default empty coalesce all any ternary fail
//   JSON      toJson toPrettyJson toRawJson ("" when the value has no JSON form) fromJson (nil on
//             bad input) mustToJson mustToPrettyJson mustToRawJson mustFromJson (errors)
//   types     typeOf typeIs typeIsLike kindOf kindIs deepEqual deepCopy mustDeepCopy
//   dicts     dict get set unset hasKey pluck keys values pick omit dig merge mustMerge
//             mergeOverwrite mustMergeOverwrite (mergo's rules: empty destination values are
//             filled, maps merge recursively in place) (keys and values in key order)
//   paths     base dir clean ext isAbs (package path, '/' only)
//   encoding  b64enc b64dec b32enc b32dec
//   semver    semver (a map of Major Minor Patch Prerelease Metadata Original: there are no
//             methods here) semverCompare (Masterminds/semver v3 constraints)
//   regex     regexMatch (false on a bad expression) regexFind regexFindAll regexReplaceAll
//             regexReplaceAllLiteral regexSplit (an error on a bad expression, as MustCompile's
//             panic) and their must* forms, regexQuoteMeta; Go RE2 syntax (see regex.hpp)
//   urls      urlParse urlJoin (net/url's Parse and URL.String)
// Not in the list, hence not provided: dates, random strings and shuffle, crypto, uuidv4, env,
// expandenv, getHostByName, os* paths, the deprecated trimall. Case conversion (upper, lower,
// title, swapcase, the *case functions) changes ASCII letters only. Functions that build large
// strings (indent, nindent, repeat, wrapWith, regexReplaceAll) refuse a result larger than the
// output limit; until, untilStep and seq stop at a million items (or the step limit); regex
// matching draws on the execution's regex budget (Options::max_regex_steps), an error once spent.
// Values are kpkg's: every list is a []interface {} to typeOf (Go's regexFindAll, splitList,
// keys... give []string), integers are int (Sprig's arithmetic gives int64).
void add_sprig(Funcs& f);

// Package Operator's include NAME DATA: the template's output as a string (to pipe into indent and
// the like). Nesting counts towards Options::max_depth, as {{template}} does.
void add_include(Funcs& f);

// What Package Operator's own functions need from the package being rendered. Paths are relative
// to the package root, '/'-separated ("manifest.yaml", "files/cm.yaml"), as PKO keys its file map:
// every file of the package, templates under their .gotmpl names. (PKO stores each rendered
// output into that same map while it renders, in Go's random map order, so whether getFile sees
// another template's output is left to chance there; serving the files as loaded is the
// deterministic choice.)
struct PackageHooks {
    // getFile: the content of the file at `path` exactly, or nothing when there is none.
    std::function<std::optional<std::string>(std::string_view path)> file;
    // getFileGlob: every path `file` knows (the glob is matched here).
    std::function<std::vector<std::string>()> paths;
    // cel: the value of a CEL expression, which must be a bool; throw FuncError for a compile or
    // evaluation error or another result type (PKO's message: "invalid return type: ...").
    std::function<bool(std::string_view expression)> cel;
};

// Exactly the functions Package Operator gives its *.gotmpl templates, nothing else:
// text/template's builtins (add_builtins), the allowed Sprig functions (add_sprig), include, and
//   toYAML V      sigs.k8s.io/yaml's Marshal (through JSON, keys sorted, yaml.v2's style) with
//                 the trailing newline trimmed
//   fromYAML S    sigs.k8s.io/yaml's Unmarshal of the first document into interface{}: maps,
//                 lists, strings, bools, nil and float64 numbers (scalars typed as yaml.v2 types
//                 them); an error on invalid YAML or a non-string argument; of duplicate keys
//                 the last wins, as in Go.
//   b64decMap M   the map's string values base64-decoded (other values dropped); an error naming
//                 the key of a bad value
//   getFile P     the file's content; "file not found" when there is none
//   getFileGlob G a map path -> content of the files whose path matches the gobwas/glob pattern G
//                 (separator '/': * and ? stop at '/', ** crosses it; {a,b} [a-z] [!a-z])
//   cel E         the CEL expression's bool value (hooks.cel)
// A missing hook makes its function fail when called.
void add_package_operator(Funcs& f, PackageHooks hooks);

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
