// The vocabulary of validation, shared by every validator (bundle, catalog, and the load
// problems of both): how serious a finding is, and the shape every finding has. Each area adds
// what its findings are about: a catalog finding its scope and package/channel/bundle
// (kpkg/model/catalog.hpp: CatalogFinding), a bundle finding its subject (kpkg/bundle/bundle.hpp).
//
// A finding is something observed about the input, not the failure of an operation (that is an
// Error, kpkg/core/error.hpp): a run collects all of them and reports them together.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kpkg/core/error.hpp"

namespace kpkg::model {

// Errors make the input invalid (exit 3); warnings do not, unless the caller is strict.
enum class Severity : std::uint8_t { error, warning };

// "error" or "warning", as every output (text, -o json|yaml, junit, github) spells it.
const char* severity_name(Severity s);

// One thing found, with where it is.
struct Finding {
    Severity severity = Severity::error;
    std::string rule;    // stable identifier of the check, e.g. "channel.head", "csv.version"
    std::string message; // one sentence, no trailing period
    SourcePos pos;       // file, line and column; empty when the finding has no position
};

// How many of `findings` (of any kind of finding) have severity `s`.
template <std::derived_from<Finding> F>
std::size_t count(const std::vector<F>& findings, Severity s) {
    return static_cast<std::size_t>(std::count_if(
        findings.begin(), findings.end(), [s](const Finding& f) { return f.severity == s; }));
}

template <std::derived_from<Finding> F>
bool has_errors(const std::vector<F>& findings) {
    return std::any_of(findings.begin(), findings.end(),
                       [](const Finding& f) { return f.severity == Severity::error; });
}

} // namespace kpkg::model
