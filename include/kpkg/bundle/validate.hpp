// Validation of a loaded registry+v1 bundle: every check OLM, opm and operator-sdk make on a
// bundle directory (and a few they miss), each reported as a Finding with its file and position,
// all in one pass. Nothing is printed; the caller decides how to show the findings.
#pragma once

#include <compare>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/model/constraint.hpp"

namespace kpkg::bundle {

// A Kubernetes release, major.minor ("1.25").
struct KubeRelease {
    unsigned major = 0;
    unsigned minor = 0;
    friend auto operator<=>(const KubeRelease&, const KubeRelease&) = default;
};

// "1.25", "v1.25", "1.25.3" (a patch or pre-release is ignored); nothing when `s` is not such a
// version.
std::optional<KubeRelease> parse_kube_release(std::string_view s);

struct ValidateOptions {
    // Report every warning as an error (the finding's severity is changed).
    bool strict = false;
    // The Kubernetes release the bundle is meant for: an object whose apiVersion was removed in
    // that release or earlier is an error (rule manifests.removed-api); without it, or for a
    // removal in a later release, a warning.
    std::optional<KubeRelease> k8s_version;
};

// An apiVersion and kind Kubernetes stopped serving, per its deprecated API migration guide.
struct RemovedApi {
    const char* api_version; // "apiextensions.k8s.io/v1beta1"
    const char* kind;        // "CustomResourceDefinition"
    KubeRelease removed_in;  // the first release that no longer serves it
    const char* use;         // the apiVersion to migrate to ("" when there is none)
};
const std::vector<RemovedApi>& removed_apis();

// One validation rule: its stable id (Finding::rule), the severity it usually reports with, and
// what it checks. Some rules report a lesser case as a warning (a missing optional label) and a
// wrong value as an error; `severity` is then "error" and the summary says when it warns.
struct RuleInfo {
    const char* id;
    Severity severity;
    const char* summary;
};

// Every rule validate() can report, in the order it runs them. The load findings of
// bundle::load() use their own rule ids and are not listed here.
const std::vector<RuleInfo>& rules();

// The load findings of `loaded` followed by the findings of every rule, sorted by file, line and
// column (findings without a position keep their order, after the positioned ones of their
// bundle). Findings that repeat one already reported (same rule, position and message) are
// dropped.
std::vector<Finding> validate(const Loaded& loaded, const ValidateOptions& opts = {});

// The rules alone, without load findings, for bundles built in code.
std::vector<Finding> validate(const Bundle& bundle, const ValidateOptions& opts = {});

// count(), has_errors() and severity_name() are those of kpkg/model/finding.hpp.

// "file:line:col: error: message [rule]"; when there is no position, "subject: " comes before the
// message and `fallback` (typically the bundle directory) stands in for the file.
std::string format(const Finding& f, std::string_view fallback = {});

// Checks an olm.constraint value (dependencies.yaml, properties.yaml) with the grammar of
// kpkg/model/constraint.hpp and reports every problem it finds: what OLM refuses as errors (also
// a CEL rule that does not compile, at the rule, with its column), and besides an empty or
// missing compound constraints list (an error), the deprecated "none" and a key matching only
// when case is ignored (warnings). Findings use `rule`; positions are `file` with the nodes'
// marks, or `fallback` for every finding when the nodes have no usable marks.
void check_constraint(const io::Node& value, const std::string& rule, const SourcePos& fallback,
                      bool use_marks, std::vector<Finding>& out);

// The kinds OLM can install from a registry+v1 bundle (operator-registry's supported resources).
const std::vector<std::string>& supported_kinds();

} // namespace kpkg::bundle
