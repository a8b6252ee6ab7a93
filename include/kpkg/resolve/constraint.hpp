// olm.constraint properties (operator-framework/api pkg/constraints): parsed once, then asked of
// candidate bundles. A constraint is a predicate over ONE bundle's properties; a bundle carrying
// it needs some other bundle for which the predicate holds (the resolver turns that into a
// dependency on the set of bundles that satisfy it).
//
//   {"failureMessage": "...",                      optional
//    one of:
//    "gvk":     {"group", "version", "kind"}        the bundle provides that API (olm.gvk)
//    "package": {"packageName", "versionRange"}     the bundle is of that package, in the range
//    "cel":     {"rule": "<expression>"}            the expression is true of its properties
//    "all" | "any" | "not": {"constraints": [...]}  compound: all hold / one holds / none holds}
//
// CEL: kpkg evaluates the subset OLM documents itself (Debian has no C++ CEL library):
// `properties` (a list of {"type", "value"} maps), the macros `exists`/`all`/`exists_one` over
// lists, `p.type`, field access and indexing into `p.value`, `semver_compare(a, b)` (-1, 0, 1),
// `==` `!=` `<` `<=` `>` `>=`, `&&` `||` `!`, `in`, parentheses, and string, int, double and
// bool literals -- and a little more of CEL (see kpkg/cel/cel.hpp for the exact subset).
// Anything else is rejected when the constraint is parsed, with an error naming the expression
// and the column of the offending token.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/cel/cel.hpp"
#include "kpkg/core/result.hpp"
#include "kpkg/core/semver.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::model {
class Catalog;
struct Bundle;
} // namespace kpkg::model

namespace kpkg::resolve {

// One property of a candidate bundle as constraints see it (CEL rules see the same list).
using PropertyValue = cel::Property;

struct Constraint {
    enum class Kind { gvk, package, cel, all, any, none };
    Kind kind = Kind::gvk;
    std::string failure_message;

    // gvk
    std::string group, version, kind_name;
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

// OLM refuses an olm.constraint value larger than this (2<<16 bytes).
inline constexpr std::size_t max_constraint_bytes = 131072;

// Parses the value of an olm.constraint property. Errors (exit 3) name `where` and say what is
// wrong: no or several of gvk/package/cel/all/any/not, a missing field, a range or a CEL rule
// that does not parse (with the rule and column), a value larger than 128 KiB.
// Keys match case-insensitively and null counts as absent, as Go's encoding/json decodes them;
// unknown keys are errors (OLM disallows them). The deprecated `none` is an error unless `not` is
// also given (then it is ignored, as OLM does). Compound constraints nest at most 100 levels.
// The size of a node is measured as its compact JSON; the overload below measures the text.
Result<Constraint> parse_constraint(const io::Node& value, const SourcePos& where = {});
// The same from the value's JSON text (e.g. Property::json of the compact catalog model).
Result<Constraint> parse_constraint(std::string_view json, const SourcePos& where = {});

// True when a bundle with these properties satisfies the constraint. A CEL rule that fails at
// evaluation time (a missing field, a type mismatch) does not hold, as in OLM. The list must
// include the bundle's olm.package property (package constraints read its name and version) and
// its olm.gvk properties; CEL rules see the whole list.
bool satisfies(const Constraint& c, const std::vector<PropertyValue>& properties);

// A catalog bundle's properties as OLM shows them to constraints and CEL rules, in the bundle's
// order. Values the compact model keeps as JSON are parsed back; olm.package, olm.gvk,
// olm.gvk.required and olm.package.required, which it keeps as fields, are rebuilt as
// {"packageName", "version"[, "release"]}, {"group", "kind", "version"} and
// {"packageName", "versionRange"}; olm.bundle.object and olm.csv.metadata are null unless the
// catalog was loaded with keep_payloads (a rule reading them then fails to evaluate).
std::vector<PropertyValue> constraint_properties(const model::Catalog& cat,
                                                 const model::Bundle& bundle);

// The constraint in words, for explanations: "an API etcd.database.coreos.com/v1beta2
// EtcdCluster", "package etcd in range >=0.9.0", "CEL rule <rule>", "all of (...)",
// "any of (...)", "none of (...)"; failureMessage is not included. A CEL rule is shown on one
// line (white space runs collapsed) and cut after 200 bytes with "...".
std::string describe(const Constraint& c);

} // namespace kpkg::resolve
