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

// The vocabulary of findings (kpkg/model/finding.hpp): a finding of catalog validation is a
// model::CatalogFinding, with its severity, rule, message, position and what it is about.
// Errors make the catalog invalid.
using Finding = model::CatalogFinding;
using model::count;
using model::has_errors;
using model::Scope;
using model::scope_name;
using model::Severity;
using model::severity_name;

struct ValidateOptions {
    // Report every warning as an error (the finding's severity is changed).
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
std::vector<Finding> validate(const model::Catalog& cat, const ValidateOptions& opts = {});

// The findings of one severity as opm's tree, each line prefixed with file:line:col. Errors are
// rooted at "invalid index", warnings at "warnings"; findings without a package sit at the root:
//   invalid index:
//   └── invalid package "foo":
//       ├── file:3:1: default channel "x" not found in channels list
//       └── invalid channel "alpha":
//           └── file:9:1: multiple channel heads found in graph: a, b
// "" when there are no findings of that severity. `findings` must be sorted as validate() sorts.
std::string format_tree(const std::vector<Finding>& findings, Severity which = Severity::error);

} // namespace kpkg::catalog
