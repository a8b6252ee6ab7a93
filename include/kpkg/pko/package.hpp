// Package Operator packages: what a package directory (or image) holds, loaded from an io::Tree.
//
// A package is a manifest (manifest.yaml or manifest.yml, kind PackageManifest), an optional lock
// (manifest.lock.yaml or .yml, kind PackageManifestLock) and files: YAML object streams,
// *.gotmpl templates (rendered before their objects are read), helper templates whose name
// starts with `_`, and anything else, carried along. Names starting with `.` (files and
// directories, so .test-fixtures/) are not part of the package; symbolic links are skipped with a
// warning, as kubectl-package skips them.
//
// With spec.components set, every directory components/<name>/ is a package of its own (a
// component): its manifest's metadata.name is replaced by the folder name, it may not have
// components itself, and components/ may hold nothing but those folders and dot files.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kpkg/core/error.hpp"
#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/model/finding.hpp"

namespace kpkg::io {
class Tree;
}

namespace kpkg::pko {

inline constexpr std::string_view kPhaseAnnotation = "package-operator.run/phase";
inline constexpr std::string_view kConditionAnnotation = "package-operator.run/condition";
inline constexpr std::string_view kConditionMapAnnotation = "package-operator.run/condition-map";
inline constexpr std::string_view kCollisionAnnotation =
    "package-operator.run/collision-protection";
inline constexpr std::string_view kPackageLabel = "package-operator.run/package";
inline constexpr std::string_view kInstanceLabel = "package-operator.run/instance";
// What templates see as every `.images.<name>` (and `.dependencies.<name>`) when a package is
// validated: Package Operator's fixtures are written with it.
inline constexpr std::string_view kStaticImage = "registry.package-operator.run/static-image";

// The parts of a problem's message, as kubectl-package words it:
//   <reason>[ in <path>[ idx <index>]][: <details>][\n<subject>]
// with the subject (the document a problem is in) shown at most 2 KiB of it, control
// characters escaped.
struct Problem {
    std::string reason;
    std::string details;
    std::string path; // relative to the package root, e.g. "deployment.yaml"
    std::optional<int> index;
    std::string subject;

    Problem() = default;
    explicit Problem(std::string reason_, std::string details_ = {}, std::string path_ = {},
                     std::optional<int> index_ = {})
        : reason(std::move(reason_)), details(std::move(details_)), path(std::move(path_)),
          index(index_) {}

    std::string message() const;
};

// One problem of a package: an error (a package has no warnings) with the message a Problem
// words, a rule naming the check ("package.render", "package.fixture", ...) and, kpkg's addition
// to kubectl-package, the file and line it is at when known. A component's problem names the
// component.
struct Finding : model::Finding {
    std::string component; // "" for the root package's

    // The message, prefixed with `component "<name>": ` for a component's.
    std::string text() const;
};

// A finding of `rule` worded by `problem`, at `pos`, about `component`.
Finding finding(std::string rule, const Problem& problem, SourcePos pos = {},
                std::string component = {});

// One line (more when the message has several) as `kpkg package validate` prints a finding:
//   [FILE[:LINE[:COL]]: ]error: TEXT
std::string format(const Finding& f);

struct Phase {
    std::string name;
    std::string cls; // spec.phases[].class: the phase goes to an external controller
};

struct ImageRef {
    std::string name;
    std::string image;
};

struct NamedCondition {
    std::string name;
    std::string expression;
    io::Mark mark;
};

struct PathFilter {
    std::string glob;
    std::string expression;
    io::Mark mark;
};

struct TestCase {
    std::string name;
    // test.template[].context: {package: {metadata: ...}, config: ..., environment: ...}.
    io::Node context;
    io::Mark mark;
};

struct Manifest {
    std::string file; // its display name ("pkg/manifest.yaml")
    std::string rel;  // its name in the package ("manifest.yaml")
    io::Node doc;     // the whole document
    std::string name; // metadata.name (a component: its folder name)
    std::vector<std::string> scopes;
    std::vector<Phase> phases;
    std::vector<ImageRef> images;
    bool components = false; // spec.components present
    std::vector<NamedCondition> conditions;
    std::vector<PathFilter> paths;
    std::vector<TestCase> tests;

    // spec.availabilityProbes, spec.config.openAPIV3Schema, spec.constraints,
    // spec.repositories, spec.dependencies, test.kubeconform: nullptr when absent.
    const io::Node* probes() const;
    const io::Node* schema() const;
    const io::Node* constraints() const;
    const io::Node* repositories() const;
    const io::Node* dependencies() const;
    // Where a field is, for messages: the position of the node at the dotted path
    // ("spec.phases"), else of the document.
    SourcePos pos(std::string_view dotted = {}) const;
};

struct LockImage {
    std::string name, image, digest;
};
struct LockDependency {
    std::string name, image, digest, version;
};
struct Lock {
    std::string file;
    std::string rel;
    io::Node doc;
    std::vector<LockImage> images;
    std::vector<LockDependency> dependencies;
};

struct File {
    std::string bytes;
    std::string display; // for messages
};

struct Package {
    std::string component; // the component's name; "" for the root package
    std::string prefix;    // "" or "components/<name>/": where its files are in the tree
    Manifest manifest;
    std::optional<Lock> lock;
    // Every file of the package but its manifest and lock, by path relative to the package's
    // own root ('/' separated), in path order.
    std::map<std::string, File> files;
    std::vector<Package> components; // in name order
    // Fixture files (.test-fixtures/<case>/...), by path relative to the package root; only
    // read when asked for (LoadOptions::fixtures).
    std::map<std::string, File> fixtures;
};

struct LoadOptions {
    // Also read .test-fixtures/ of the package and of every component.
    bool fixtures = false;
    // Files larger than this are refused.
    std::size_t max_file_bytes = std::size_t{64} << 20;
};

struct Loaded {
    Package package;
    // Structure problems found while loading (a manifest that does not parse, two manifests, a
    // stray file under components/ ...): the package cannot be used when there are any.
    std::vector<Finding> findings;
    std::vector<std::string> warnings; // symbolic links skipped
};

// Loads a package. A tree that cannot be read is an error (exit 1); what is wrong with the
// package itself is reported as findings.
Result<Loaded> load(const io::Tree& tree, const LoadOptions& options = {});

// Whether `path` is a template (*.gotmpl), a YAML object file (.yaml/.yml after the template
// suffix is dropped, not starting with `_`).
bool is_template(std::string_view path);
bool is_yaml(std::string_view path);
std::string_view strip_template_suffix(std::string_view path);

} // namespace kpkg::pko
