// Rendering a Package Operator package: its templates with a context, its files into objects
// (split, labelled, filtered by CEL), as the Package Operator manager does before it deploys.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kpkg/io/node.hpp"
#include "kpkg/pko/package.hpp"

namespace kpkg::pko {

// What templates and CEL expressions see. Built as Package Operator builds it: a struct turned
// into JSON and back, so every number is a float64 and missing maps are empty maps.
struct RenderContext {
    std::string name;     // .package.metadata.name
    std::string ns;       // .package.metadata.namespace ("" for a ClusterPackage)
    io::Node labels;      // .package.metadata.labels (a map, or null for none)
    io::Node annotations; // .package.metadata.annotations
    std::string image;    // .package.image
    io::Node config;      // .config: the admitted configuration (a map, or null)
    std::map<std::string, std::string> images;       // .images
    std::map<std::string, std::string> dependencies; // .dependencies
    io::Node environment; // .environment: {kubernetes: {version}, openShift?, proxy?, ...}
};

// The context as a JSON document: {package: {metadata: {name, namespace, labels,
// annotations}, image}, config, images, dependencies, environment}.
io::Node context_json(const RenderContext& ctx);

// The context of a test case (test.template[].context): its package metadata, config and
// environment, with every image and dependency the static image.
RenderContext test_context(const Manifest& m, const TestCase& tc);

struct Object {
    io::Node node;    // the object as JSON (numbers as written, keys as written)
    std::string path; // the file it is from, relative to the package (template suffix dropped)
    int index = 0;    // its document in that file
    SourcePos pos;    // where it starts, for files that are not templates

    std::string phase() const; // its phase annotation, "" when it has none
};

struct Rendered {
    // Every file of the package after rendering: templates by the name of their output (the
    // .gotmpl suffix dropped), other files as they are; files excluded by spec.filter.paths
    // are not here.
    std::map<std::string, std::string> files;
    // Files excluded by spec.filter.paths.
    std::set<std::string> excluded;
    // The objects, in Package Operator's order (paths sorted with '/' before every other byte,
    // then document order), without those whose condition annotation is false.
    std::vector<Object> objects;
    // Documents dropped by their condition annotation, by path.
    std::map<std::string, std::set<int>> dropped;
};

struct RenderOptions {
    // Check the objects as kubectl-package does (duplicates, GVK, labels, phase annotation);
    // their findings are reported and the objects still returned.
    bool validate = true;
    // Stop after the templates (no objects).
    bool templates_only = false;
};

struct RenderResult {
    Rendered rendered;
    std::vector<Finding> findings;
    // A failure that stops rendering (a template that does not parse or execute, an object
    // that is not valid YAML, a condition that does not compile): nothing after it is known.
    bool failed = false;
};

// Renders one package (a component is rendered on its own, with its own files).
RenderResult render(const Package& pkg, const RenderContext& ctx, const RenderOptions& opts = {});

// The text of a fixture for the file `path` of `r`: the file's text without the documents its
// conditions dropped; "" when nothing would be written (excluded, all dropped, blank).
std::string fixture_text(const Rendered& r, const std::string& path);

// A rendered YAML file split into its documents as Package Operator splits it, each with the
// 1-based line it starts at.
std::vector<std::pair<std::string_view, std::uint32_t>> split_yaml_documents(std::string_view text);

// Go's path.Match: `*` any run of characters but '/', `?` one, [...] classes, '\' escapes.
// nullopt for a malformed pattern.
std::optional<bool> glob_match(std::string_view pattern, std::string_view name);

} // namespace kpkg::pko

namespace kpkg::pko {

// An object as Package Operator deploys it: its phase, condition mappings and collision
// protection read from its annotations, which are then removed (an annotations map left empty
// is removed too).
struct PhasedObject {
    io::Node object;
    io::Node condition_mappings; // [{sourceType, destinationType}] or null
    std::string collision_protection;
    bool external = false; // package-operator.run/external: "True"
};
struct PhaseObjects {
    Phase phase;
    std::vector<PhasedObject> objects;
    std::vector<PhasedObject> external;
};

// The objects by phase in the manifest's order, phases without objects left out. Errors (exit
// 3): a condition-map annotation that does not parse ("expected 2 part mapping got 1 in line
// 2"), naming the object.
Result<std::vector<PhaseObjects>> by_phase(const Package& pkg, const Rendered& r);

// kubectl-package's tree: the manifest's name, "Package <ns>/<name>" (ClusterPackage for the
// cluster scope), then each phase and its objects drawn as gotree v1 draws them.
std::string tree_text(const Package& pkg, const std::vector<PhaseObjects>& phases,
                      const std::string& name, const std::string& ns, bool cluster);

// The (Cluster)ObjectDeployment the Package Operator manager creates for a (Cluster)Package named
// `name` in `ns` ("" for a ClusterPackage) with image `image` and configuration `config` (the
// Package's spec.config as JSON, or null).
io::Node object_deployment(const Package& pkg, const std::vector<PhaseObjects>& phases,
                           const std::string& name, const std::string& ns, const std::string& image,
                           const io::Node& config);

} // namespace kpkg::pko
