// Rendering a registry+v1 bundle directory as the olm.bundle blob of a File-Based Catalog, the
// way `opm render DIR` does, down to the bytes it writes with -o json and -o yaml.
//
// What opm puts in the blob (operator-registry alpha/action/render.go and
// pkg/registry/registry_to_model.go), and so what render() builds:
// - name: the ClusterServiceVersion's metadata.name; package: the annotations' package label;
//   image: "" for a directory (opm has no image for it) unless RenderOptions::image is set.
// - properties, sorted by type and then by the bytes of the value, with every olm.bundle.object
//   (or olm.csv.metadata) moved to the end: olm.package {packageName, version[, release]};
//   olm.gvk for every version of every CRD in manifests/ (served or not) and every owned
//   APIService; olm.gvk.required for the CSV's required CRDs and APIServices and the olm.gvk
//   entries of metadata/dependencies.yaml; olm.package.required for its olm.package entries; every
//   other dependency and every entry of metadata/properties.yaml and of the CSV's olm.properties
//   annotation as written; one olm.bundle.object per manifest (base64 of the object's JSON).
// - relatedImages: the CSV's spec.relatedImages, the image (when set) and every container and
//   init container image of the CSV's deployments, without repeats, sorted by image.
// Only the first document of each manifest file counts, and only the first CSV, as in opm.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::bundle {

// A property of the blob: its type and its value as compact JSON, the bytes opm sorts on and
// writes (re-indented) into the blob.
struct RawProperty {
    std::string type;
    std::string value;
    friend bool operator==(const RawProperty&, const RawProperty&) = default;
};

struct RenderOptions {
    // The bundle's image reference. opm has none for a directory and writes "image": "". When set,
    // it becomes the blob's image and is added to relatedImages (as
    // `opm render DIR --alpha-image-ref-template REF` with a literal REF).
    std::string image;
    // One olm.csv.metadata property (the CSV's annotations, descriptions, install modes, ...)
    // instead of the olm.bundle.object properties, as opm's migration
    // bundle-object-to-csv-metadata does. opm applies that migration only to bundles with an
    // image; here it applies whenever it is asked for.
    bool csv_metadata = false;
};

// The olm.bundle blob (its schema is always "olm.bundle").
struct Rendered {
    std::string name;
    std::string package;
    std::string image;
    std::vector<RawProperty> properties;      // in opm's order
    std::vector<RelatedImage> related_images; // sorted by image
};

// The blob for a loaded bundle. Fails (ExitCode::invalid) where opm refuses to render: no
// ClusterServiceVersion, no annotations or no package name, an owned CRD that is not in
// manifests/, a CRD name without a group, a value that is not the type opm expects (a numeric
// spec.version, a dependency field that is not a string), a value with no JSON form (.inf, .nan).
// Load findings are not checked: what opm would skip (an unparsable file) is left out.
Result<Rendered> render(const Bundle& bundle, const RenderOptions& opts = {});
// The same for a loaded bundle, which also fails on the first of Loaded::blocking (a file that
// could not be read, a symbolic link leaving the bundle: rendering without it would publish an
// incomplete blob), and, when the bundle cannot be rendered while a file of manifests/ did not
// parse, with that parse error (file:line:col) rather than its consequence (no CSV found).
Result<Rendered> render(const Loaded& loaded, const RenderOptions& opts = {});

// The blob as `opm render -o json` writes it: Go's encoding/json with 4-space indentation and
// no HTML escaping, property values re-indented from their bytes, and a final newline.
std::string to_json(const Rendered& r);

// The same bytes handed to `sink` in pieces (long values as they are, the rest in pieces of up
// to 64 KiB), for writing a large blob without holding a copy of it.
void write_json(const Rendered& r, const std::function<void(std::string_view)>& sink);

// The blob as `opm render -o yaml` writes it: "---\n" and the YAML sigs.k8s.io/yaml makes of
// the JSON (gopkg.in/yaml.v2: keys in its order, its quoting, long lines folded at 80 columns).
std::string to_yaml(const Rendered& r);

// The blob as a tree (property values parsed), for callers that post-process it.
io::Node to_node(const Rendered& r);

} // namespace kpkg::bundle
