// Validating a Package Operator package: every check kubectl-package makes, all in one run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kpkg/pko/kubeconform.hpp"
#include "kpkg/pko/package.hpp"
#include "kpkg/pko/render.hpp"

namespace kpkg::pko {

// A fixture file to write (or remove) so that the fixtures match what the templates render.
struct FixtureChange {
    std::string
        rel; // relative to the package root: [components/<name>/].test-fixtures/<case>/<path>
    std::string content;
    bool remove = false;
};

struct ValidateOptions {
    // Missing or different fixtures are changes to make (fixture_changes), not findings.
    bool update_fixtures = false;
    // Test cases compared with their fixtures; false for a package read from an image, which
    // holds no .test-fixtures/ (kubectl-package only renders them then).
    bool compare_fixtures = true;
    // How test.kubeconform's schemas are read (http locations through `fetch`).
    KubeconformOptions kubeconform;
};

struct Report {
    std::vector<Finding> findings;
    std::vector<FixtureChange> fixture_changes;
    std::size_t renders = 0; // test cases rendered (and renders with defaults)
};

// The checks of the manifest's fields (and the lock's), as "path: message" findings of rule
// "package.manifest" ("package.lock" for the lock's) with the field's position.
std::vector<Finding> check_manifest(const Package& pkg);
// The lock against the manifest's images (rule "package.lock").
std::vector<Finding> check_lock(const Package& pkg);

// The admitted configuration of a package: the schema's defaults applied to `config`, unknown
// fields pruned, and the findings of the schema (rule "package.config", as "path: message"),
// with `path` the field path the configuration is at ("spec.config",
// "test.template[0].context.config").
// Without a schema every field is dropped, as Package Operator does.
struct Admitted {
    io::Node config;
    std::vector<Finding> errors;
};
Admitted admit_package_config(const Manifest& m, const io::Node& config, const std::string& path);

// Everything: structure (the findings of loading), manifest and lock, then every test case of
// every component and of the root package rendered with its context (the static image for
// .images and .dependencies), its objects checked and compared with the fixtures; a package
// without test cases is rendered once with the schema's defaults.
Report validate(const Loaded& loaded, const ValidateOptions& options = {});

} // namespace kpkg::pko
