// The documents `kpkg bundle validate -o json|yaml` writes, built here next to their schema so
// that a program calling the library gets the same data the command prints.
//
//   {"bundles": [{"dir": DIR, "valid": BOOL, "errors": N, "warnings": N,
//                 "findings": [FINDING, ...]}, ...],
//    "errors": N, "warnings": N}            (totals over all bundles)
//   FINDING: {"severity": "error"|"warning", "rule": RULE, "message": TEXT, "file": PATH,
//             "line": N, "column": N, "subject": TEXT}   (line/column 0: no position)
#pragma once

#include <string>
#include <vector>

#include "kpkg/bundle/validate.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::bundle {

// What was found in one bundle directory.
struct BundleReport {
    std::string dir; // as given
    std::vector<Finding> findings;
};

io::Node finding_node(const Finding& f);
// {"dir", "valid", "errors", "warnings", "findings"} of one bundle.
io::Node bundle_report_node(const BundleReport& r);
// The whole document.
io::Node validate_report_node(const std::vector<BundleReport>& reports);

} // namespace kpkg::bundle
