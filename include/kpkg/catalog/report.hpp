// The documents the catalog commands write with -o json|yaml, built here next to their schema so
// that a program calling the library gets the same data the commands print.
//
// kpkg catalog validate:
//   {"valid": BOOL, "errors": N, "warnings": N, "findings": [FINDING, ...]}
//   FINDING: {"severity": "error"|"warning", "scope": "catalog"|"package"|"channel"|"bundle"|
//           "deprecation", "rule": RULE, "package", "channel", "bundle": NAME or "",
//           "message": TEXT, "file": PATH, "line": N, "column": N}   (0: no position)
// kpkg catalog list packages:
//   [{"name", "defaultChannel", "channels": N, "bundles": N, "head"}, ...]
// kpkg catalog list channels:
//   [{"package", "name", "head" ("" unless exactly one), "heads": [NAME, ...], "entries": N}]
// kpkg catalog list bundles:
//   [{"package", "channel", "name", "version", "replaces", "skips": [NAME, ...], "skipRange",
//     "image"}, ...]
// Rows come in the order the list functions give (by package, channel, bundle).
#pragma once

#include <vector>

#include "kpkg/catalog/query.hpp"
#include "kpkg/catalog/validate.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::catalog {

io::Node finding_node(const Finding& f);
io::Node validate_report_node(const std::vector<Finding>& findings);

io::Node packages_node(const std::vector<PackageRow>& rows);
io::Node channels_node(const std::vector<ChannelRow>& rows);
io::Node bundles_node(const std::vector<BundleRow>& rows);

} // namespace kpkg::catalog
