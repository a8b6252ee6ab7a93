// Validation of a File-Based Catalog: every check opm makes while loading a catalog, converting it
// to its model and validating that model, but all findings of one run instead of the first only.
//
// Findings are grouped per package, then channel or bundle, as opm's "invalid index" tree.
//
// Structured output (kpkg catalog validate -o json|yaml) is one document:
//   {"valid": false,            // no findings
//    "errors": 3,               // number of findings
//    "findings": [              // sorted by package, channel, bundle, then position
//      {"scope": "catalog"|"package"|"channel"|"bundle"|"deprecation",
//       "rule": "channel.head",  // stable identifier of the check (see Rule names in validate.cpp)
//       "package": "etcd",       // "" when the finding is about no package (load errors)
//       "channel": "alpha",      // "" unless scope is channel
//       "bundle": "etcd.v0.9.2", // "" unless scope is bundle
//       "message": "multiple channel heads found in graph: a, b",
//       "file": "catalog/etcd/index.yaml", "line": 12, "column": 3}]}
// Every key is always present; file is "" and line/column 0 when unknown.
#pragma once

#include <string>
#include <vector>

#include "kpkg/core/error.hpp"
#include "kpkg/model/catalog.hpp"
#include "kpkg/model/fbc.hpp"

namespace kpkg::catalog {

using model::Finding;
using model::Scope;
using model::scope_name;

// Every problem of the loaded catalog, sorted by package, scope (package, channel, bundle,
// deprecation), channel/bundle name, then position. Empty when valid. Linear in the catalog size.
std::vector<Finding> validate(const declcfg::DeclarativeConfig& cfg);

// The findings as opm's tree, rooted at "invalid index", each line prefixed with file:line:col:
//   invalid index:
//   └── invalid package "foo":
//       ├── file:3:1: default channel "x" not found in channels list
//       └── invalid channel "alpha":
//           └── file:9:1: multiple channel heads found in graph: a, b
// "" when there are no findings.
std::string format_tree(const std::vector<Finding>& findings);

} // namespace kpkg::catalog
