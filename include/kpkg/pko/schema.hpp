// pko/schema: a package's spec.config.openAPIV3Schema, checked as Package Operator checks it (a
// CRD structural schema, apiextensions' rules) and used to admit a configuration: unknown fields
// pruned, defaults filled in, the result validated, with violations worded as the Kubernetes API
// server words them ("spec.config.replicas: Invalid value: \"string\": replicas in body must be of
// type integer: \"string\"").
//
// Not covered: x-kubernetes-validations rules are checked for an empty rule only (kubectl-package
// also compiles them with cel-go; admission never runs them, neither upstream nor here); the
// x-kubernetes-list-type=map key checks; string formats other than date, date-time, byte, ipv4,
// ipv6, cidr, mac, uuid (3/4/5), hostname, email, uri and hexcolor are not checked; Unicode
// classes (\pL) in patterns are refused; anyOf/oneOf/allOf/not failures are worded after
// kube-openapi but their accompanying errors are approximated (the closest alternative's).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::pko {

// One violation, as field.Error.Error() prints it: "<field>: <type>[: <value>][: <detail>]".
struct FieldError {
    std::string field;   // e.g. "spec.config.replicas"; empty at an unnamed root
    std::string message; // the whole line, field included
    io::Mark mark;       // where in the schema or the configuration, when known
};

// The checks kubectl-package runs on spec.config.openAPIV3Schema (`path` names the schema in
// messages): structural-schema invariants, forbidden keywords, types, patterns that compile,
// defaults that validate against their schema and carry no unknown fields. Empty when valid.
std::vector<FieldError> check_schema(const io::Node& schema,
                                     std::string_view path = "spec.config.openAPIV3Schema");

// Bounds on one admission or validation of a configuration.
struct AdmissionLimits {
    // Configuration nesting beyond this is reported, not followed.
    std::size_t max_depth = 512;
    // Schema-value checks (a junctor checks a value once per alternative, a list schema once per
    // item); past this the validation stops with a violation saying so.
    std::uint64_t max_checks = 10'000'000;
    // Steps of pattern matching (re::Budget), every pattern of the validation together;
    // past this the validation stops with a violation saying so.
    std::uint64_t max_regex_steps = 100'000'000;
};

struct Admission {
    io::Node config;                    // pruned and defaulted
    std::vector<FieldError> violations; // empty when the configuration is admitted
};

// Package Operator's admission of a configuration: without a schema (nullptr) every field is
// dropped; otherwise fields the schema does not know are pruned (at the root apiVersion, kind and
// metadata stay), defaults are filled in, and the result is validated. `path` prefixes the field
// paths ("spec.config" in the cluster; empty for kubectl-package's template tests). The schema
// should have passed check_schema; keywords of the wrong kind are ignored here. Patterns run in
// linear time (pko/regex); `limits` bound the work, the patterns' included. A violation shows at
// most text::max_shown bytes of a value.
Admission admit_config(const io::Node* schema, const io::Node& config,
                       std::string_view path = "spec.config", const AdmissionLimits& limits = {});

// Validation only (no pruning or defaulting), as the manifest's test.template configs are checked.
std::vector<FieldError> validate_config(const io::Node& schema, const io::Node& config,
                                        std::string_view path, const AdmissionLimits& limits = {});

// JSON Schema as kubeconform reads kubernetes-json-schema's files (draft 4, with the checks and
// wording of santhosh-tekuri/jsonschema v5, the library of kubeconform 0.6): the same validator
// in another mode. Each error has the value's JSON pointer ("/spec/replicas", "" at the root),
// the keywords followed from the root schema to the one that failed
// ("/properties/spec/properties/replicas/type", through "/$ref"), and the library's message
// ("expected integer or null, but got string"). Also honoured: x-kubernetes-int-or-string (an
// integer or a string) and x-kubernetes-preserve-unknown-fields (no additional-property errors
// below it); formats checked: date-time, date, ipv4, ipv6, hostname, email, uuid (others, such
// as int-or-string or int32, are accepted as the library accepts unknown formats).
//
// A $ref is "#/json/pointer" into the document it appears in, or "file.json#/pointer" into
// another document, which `load` returns (its argument: the part before '#'; the node must
// outlive the validation). The error (exit 3) names the schema: a $ref that cannot be resolved,
// a chain of $refs that never reaches a schema (a cycle), more work than the limits allow (the
// matching of patterns and patternProperties included).
struct JsonSchemaError {
    std::string instance; // JSON pointer of the value
    std::string keyword;  // keyword location from the root schema
    std::string message;
    io::Mark mark;
};

using SchemaLoader = std::function<Result<const io::Node*>(const std::string& uri)>;

struct JsonSchemaLimits {
    std::size_t max_depth = 512;           // value nesting
    std::uint64_t max_checks = 10'000'000; // schema-value checks, junctor attempts included
    std::size_t max_ref_hops = 64;         // $refs and junctors without descending into the value
    std::size_t max_documents = 256;       // distinct documents a $ref may load
    std::size_t max_frames = 1024;         // schema and value nesting together (stack used)
    std::uint64_t max_regex_steps = 100'000'000; // pattern matching, every pattern together
};

Result<std::vector<JsonSchemaError>> validate_json_schema(const io::Node& schema,
                                                          const io::Node& value,
                                                          const SchemaLoader& load = {},
                                                          const JsonSchemaLimits& limits = {});

} // namespace kpkg::pko
