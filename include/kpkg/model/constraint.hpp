// olm.constraint properties (operator-framework/api pkg/constraints): the one grammar kpkg has
// for them. bundle validate, catalog validate and resolve all read a constraint through
// check_constraint() below and differ only in how they report what it finds.
//
//   {"failureMessage": "...",                      optional
//    one of:
//    "gvk":     {"group", "version", "kind"}        the bundle provides that API (olm.gvk)
//    "package": {"packageName", "versionRange"}     the bundle is of that package, in the range
//    "cel":     {"rule": "<expression>"}            the expression is true of its properties
//    "all" | "any" | "not": {"constraints": [...]}  compound: all hold / one holds / none holds}
//
// A constraint is a predicate over ONE bundle's properties; a bundle carrying it needs some other
// bundle for which the predicate holds (the resolver turns that into a dependency on the set of
// bundles that satisfy it).
//
// What OLM accepts (the value is decoded with Go's encoding/json into the Constraint struct with
// unknown fields disallowed): keys match fields case-insensitively, null counts as absent, a
// value larger than 128 KiB is refused before decoding, a constraint with none of the kinds is
// "constraint is empty", the deprecated `none` is decoded but no longer evaluated, a CEL rule
// that does not compile is refused. kpkg is stricter in one place: a constraint that sets several
// of gvk/package/cel/all/any/not is refused rather than silently using the first. Compound
// constraints nest at most 100 levels (kpkg's bound; deeper input is refused, not a crash).
//
// CEL: kpkg evaluates the subset of CEL described in kpkg/cel/cel.hpp; a rule outside it is
// refused when the constraint is checked, naming the column of the offending token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kpkg/cel/cel.hpp"
#include "kpkg/core/result.hpp"
#include "kpkg/core/semver.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/model/gvk.hpp"

namespace kpkg::model {

class Catalog;
struct Bundle;

// OLM refuses an olm.constraint value whose JSON encoding is larger than this (2<<16 bytes).
inline constexpr std::size_t max_constraint_bytes = 131072;
// Compound constraints nest at most this many levels.
inline constexpr int max_constraint_depth = 100;

struct Constraint {
    enum class Kind { gvk, package, cel, all, any, none };
    Kind kind = Kind::gvk;
    std::string failure_message;

    // gvk
    GVK gvk;
    // package
    std::string package_name;
    std::string version_range; // as written
    semver::Range range;
    // cel
    std::string rule;
    std::shared_ptr<const cel::Program> program;
    // all / any / none (written "not")
    std::vector<Constraint> children;
};

// One thing check_constraint() found. `fatal` problems make OLM (and kpkg resolve) refuse the
// value; the others are accepted by OLM but most likely a mistake, and each caller decides how
// loudly to report them (bundle validate: see kpkg/bundle/validate.hpp).
struct ConstraintProblem {
    enum class Code : std::uint8_t {
        too_large,         // the value's JSON is larger than max_constraint_bytes (`bytes`)
        too_deep,          // compound constraints nest deeper than max_constraint_depth
        not_object,        // a constraint is not an object (`found`)
        wrong_type,        // `field` is not `want` ("a string", "an object", "a list"; `found`)
        unknown_field,     // `key` is no field here (`allowed` lists the fields)
        duplicate_field,   // `other` and `key` name the same `field`
        case_variant,      // `key` is read as `field` only because keys match case-insensitively
        empty_constraint,  // none of gvk, package, cel, all, any, not
        several_kinds,     // more than one of them (`kinds` in OLM's order, `written` as written)
        none_deprecated,   // "none": fatal alone (OLM ignores it), not fatal next to "not"
        missing,           // required `field` absent
        empty,             // required `field` empty (white space only)
        bad_range,         // package.versionRange (`value`) does not parse (`detail`)
        range_warning,     // it parses, with a quirk (`detail`)
        rule_compile,      // cel.rule (`value`) does not compile (`detail`; `notes`: the
                           // rule's line and a caret under the column)
        no_constraints,    // a compound without a constraints list (OLM evaluates it as empty)
        empty_constraints, // a compound with an empty constraints list
    };
    Code code = Code::not_object;
    bool fatal = true;
    // The constraint or body the problem is in, as a path from the value: "" (the value itself),
    // "gvk", "all.constraints[1]", "all.constraints[1].any".
    std::string path;
    std::string field;
    std::string key, other, want, value, detail;
    io::Kind found = io::Kind::null;
    std::vector<std::string> allowed, kinds, written, notes;
    std::size_t bytes = 0;
    // Where, in the document the value was read from (0: unknown, e.g. a value read from text).
    io::Mark mark;

    // The problem in words, e.g. "olm.constraint gvk.kind: missing",
    // "olm.constraint cel.rule: column 3: undeclared reference to 'foo'".
    std::string message() const;
};

// CEL rules compiled by their text, so that a rule repeated across a catalog's bundles is
// compiled once. Not thread-safe.
class RuleCache {
public:
    const Result<std::shared_ptr<const cel::Program>>& compile(const std::string& rule);
    // How many distinct rules were compiled.
    std::size_t size() const { return map_.size(); }

private:
    std::unordered_map<std::string, Result<std::shared_ptr<const cel::Program>>> map_;
};

struct ConstraintCheck {
    Constraint constraint;                   // meaningful only when ok()
    std::vector<ConstraintProblem> problems; // in the order found (fatal or not)

    bool ok() const;
    // The first fatal problem; nullptr when ok().
    const ConstraintProblem* first_fatal() const;
};

struct ConstraintOptions {
    // Where compiled rules are looked up and kept; nullptr compiles each rule.
    RuleCache* rules = nullptr;
    // The size of the value's JSON when the caller has it (the value was read from that text);
    // 0: measured by encoding the value.
    std::size_t json_bytes = 0;
};

// Reads an olm.constraint value: every problem in it (not only the first) and, when none is
// fatal, the typed constraint.
ConstraintCheck check_constraint(const io::Node& value, const ConstraintOptions& opts = {});

// The constraint, or the first fatal problem as an error (exit 3) at `where`, with its notes.
Result<Constraint> parse_constraint(const io::Node& value, const SourcePos& where = {},
                                    RuleCache* rules = nullptr);
// The same from the value's JSON text (e.g. Property::json of the compact catalog model); text
// that is not one JSON value is an error too.
Result<Constraint> parse_constraint(std::string_view json, const SourcePos& where = {},
                                    RuleCache* rules = nullptr);

// One property of a candidate bundle as constraints see it (CEL rules see the same list).
using PropertyValue = cel::Property;

// True when a bundle with these properties satisfies the constraint. A CEL rule that fails at
// evaluation time (a missing field, a type mismatch) does not hold, as in OLM. The list must
// include the bundle's olm.package property (package constraints read its name and version) and
// its olm.gvk properties; CEL rules see the whole list. gvk holds when some olm.gvk property has
// that group, version and kind; package when some olm.package names the package and some has a
// version (strict semver) in the range; all/any/not are and/or/nor of the children over the same
// bundle (all of nothing holds, any of nothing does not, not of nothing holds).
bool satisfies(const Constraint& c, const std::vector<PropertyValue>& properties);

// A catalog bundle's properties as OLM shows them to constraints and CEL rules, in the bundle's
// order. Values the compact model keeps as JSON are parsed back; olm.package, olm.gvk,
// olm.gvk.required and olm.package.required, which it keeps as fields, are rebuilt as
// {"packageName", "version"[, "release"]}, {"group", "kind", "version"} and
// {"packageName", "versionRange"}; olm.bundle.object and olm.csv.metadata are null unless the
// catalog was loaded with keep_payloads (a rule reading them then fails to evaluate).
std::vector<PropertyValue> constraint_properties(const Catalog& cat, const Bundle& bundle);

// The constraint in words, for explanations: "an API etcd.database.coreos.com/v1beta2
// EtcdCluster", "package etcd in range >=0.9.0", "CEL rule <rule>", "all of (...)",
// "any of (...)", "none of (...)"; failureMessage is not included. A CEL rule is shown on one
// line (white space runs collapsed) and cut after 200 bytes with "...".
std::string describe(const Constraint& c);

} // namespace kpkg::model
