// Validation of a File-Based Catalog on the compact model (kpkg/model/catalog.hpp): every check
// opm makes while loading a catalog and validating it (alpha/declcfg and alpha/model of
// operator-registry), but all findings of one run instead of the first only.
//
// The load problems of the catalog (Catalog::problems: files that do not parse, blobs without
// schema, fields of the wrong type, malformed property values) come first as errors; then every
// rule runs on what loaded. One pass over the blobs, linear in the size of the catalog; names are
// compared as interned ids.
//
// Findings are grouped per package, then channel or bundle, as opm's "invalid index" tree.
//
// Structured output (kpkg catalog validate -o json|yaml) is one document:
//   {"valid": false,            // no errors (warnings allowed)
//    "errors": 3,               // number of findings with severity "error"
//    "warnings": 1,             // number of findings with severity "warning"
//    "findings": [              // sorted by package, scope, channel/bundle, then position
//      {"severity": "error"|"warning",
//       "scope": "catalog"|"package"|"channel"|"bundle"|"deprecation",
//       "rule": "channel.head",  // stable identifier of the check (rules() lists them)
//       "package": "etcd",       // "" when the finding is about no package (load errors)
//       "channel": "alpha",      // "" unless the finding is about a channel or a channel entry
//       "bundle": "etcd.v0.9.2", // "" unless scope is bundle
//       "message": "multiple channel heads found in graph: a, b",
//       "file": "catalog/etcd/index.yaml", "line": 12, "column": 3}]}
// Every key is always present; file is "" and line/column 0 when unknown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/error.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::catalog {

using model::Finding;
using model::Scope;
using model::scope_name;

enum class Severity : std::uint8_t { error, warning };
// "error" or "warning".
const char* severity_name(Severity s);

// A finding of the validation and how serious it is. Errors make the catalog invalid.
struct Issue : Finding {
    Severity severity = Severity::error;
};

struct ValidateOptions {
    // Report every warning as an error (the issue's severity is changed).
    bool strict = false;
    // Report the two findings older opm releases accept (a relatedImages image that is not an
    // image reference, a skipRange blang/semver cannot parse) as warnings instead of errors, for
    // catalogs built by those releases. strict wins when both are set.
    bool lenient = false;
    // Accept a catalog without any olm.package blob (an empty directory, a path with no catalog
    // files); otherwise that is the error "no packages found" (rule catalog.empty).
    bool allow_empty = false;
};

// One rule: its stable id (Finding::rule), its default severity, where its findings are grouped,
// what it checks, and whether ValidateOptions::lenient makes it a warning. Load problems keep the
// rule ids the loader gives them ("catalog.*", "bundle.property", ...); they are not listed here.
struct RuleInfo {
    const char* id;
    Severity severity;
    Scope scope;
    const char* summary;
    bool lenient = false; // a warning under ValidateOptions::lenient
};

// Every rule validate() can report, in the order they run.
const std::vector<RuleInfo>& rules();

// The load problems of `cat` (errors) and the findings of every rule on what loaded, sorted by
// package, scope (catalog, package and deprecation, channel, bundle), channel or bundle name,
// then position and message. Empty when the catalog is valid and has nothing to warn about.
std::vector<Issue> validate(const model::Catalog& cat, const ValidateOptions& opts = {});

std::size_t count(const std::vector<Issue>& issues, Severity s);
inline bool has_errors(const std::vector<Issue>& issues) {
    return count(issues, Severity::error) > 0;
}

// The issues of one severity as opm's tree, each line prefixed with file:line:col. Errors are
// rooted at "invalid index", warnings at "warnings"; findings without a package sit at the root:
//   invalid index:
//   └── invalid package "foo":
//       ├── file:3:1: default channel "x" not found in channels list
//       └── invalid channel "alpha":
//           └── file:9:1: multiple channel heads found in graph: a, b
// "" when there are no issues of that severity. `issues` must be sorted as validate() sorts.
std::string format_tree(const std::vector<Issue>& issues, Severity which = Severity::error);

// Why `ref` is not an image reference opm accepts (it parses pull specs with the containers
// image library's ParseNormalizedNamed: [domain[:port]/]path[:tag][@digest], lower-case
// repository path, digest sha256/sha384/sha512 in lower-case hex); "" when it is one.
std::string image_reference_problem(std::string_view ref);

// Why `name` is not a DNS-1123 label (what opm requires of package names), as Kubernetes lists
// the reasons ("must not contain dots"); empty when it is one.
std::vector<std::string> dns1123_label_problems(std::string_view name);

} // namespace kpkg::catalog
