// A registry+v1 bundle directory (manifests/ + metadata/) as loaded from disk: every object with
// its source position, and the facts OLM reads from them pulled out into plain fields.
// Loading is tolerant: what can be read is kept and every problem met on the way is a Finding,
// so `kpkg bundle validate` can report everything in one run. Only a missing or unreadable
// directory fails the load itself.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kpkg/core/error.hpp"
#include "kpkg/core/result.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/model/finding.hpp"

namespace kpkg::bundle {

// The annotation (label) keys of metadata/annotations.yaml.
inline constexpr const char* label_mediatype = "operators.operatorframework.io.bundle.mediatype.v1";
inline constexpr const char* label_manifests = "operators.operatorframework.io.bundle.manifests.v1";
inline constexpr const char* label_metadata = "operators.operatorframework.io.bundle.metadata.v1";
inline constexpr const char* label_package = "operators.operatorframework.io.bundle.package.v1";
inline constexpr const char* label_channels = "operators.operatorframework.io.bundle.channels.v1";
inline constexpr const char* label_default_channel =
    "operators.operatorframework.io.bundle.channel.default.v1";

// The vocabulary of findings (kpkg/model/finding.hpp), shared with catalog validation.
using model::count;
using model::has_errors;
using model::Severity;
using model::severity_name;

// One problem found while loading or validating: severity, rule (a short stable id, e.g.
// "annotations.default-channel"), message and position (file relative to the bundle's parent
// dir as given, line, column), and the object it is about when there is no position.
struct Finding : model::Finding {
    std::string subject; // e.g. a CRD's name
};

// One Kubernetes object from manifests/.
struct Manifest {
    std::string file; // path as given to the loader joined with manifests/<name>
    int document = 0; // index in its file
    io::Node object;
    std::string api_version;
    std::string kind;
    std::string name;
    SourcePos pos;
};

struct CrdInfo {
    std::size_t manifest = 0; // index into Bundle::manifests
    std::string name;         // metadata.name, "<plural>.<group>"
    std::string group;
    std::string kind;
    std::string plural;
    std::vector<std::string> versions; // every spec.versions[].name (and v1beta1 spec.version)
};

struct ContainerInfo {
    std::string name;
    std::string image;
    bool init = false;
};

struct DeploymentInfo {
    std::string name;
    std::vector<ContainerInfo> containers;
};

struct CrdRef { // an owned or required entry of spec.customresourcedefinitions
    std::string name;
    std::string version;
    std::string kind;
    SourcePos pos;
};

struct ApiServiceRef { // an owned or required entry of spec.apiservicedefinitions
    std::string group;
    std::string version;
    std::string kind;
    std::string name;
    SourcePos pos;
};

struct RelatedImage {
    std::string name;
    std::string image;
};

// What OLM reads from the ClusterServiceVersion.
struct CsvInfo {
    std::size_t manifest = 0; // index into Bundle::manifests
    std::string name;
    std::string version; // spec.version as written ("" when absent)
    std::string replaces;
    std::vector<std::string> skips;
    std::string skip_range; // metadata.annotations["olm.skipRange"]
    std::string min_kube_version;
    std::string install_strategy;                            // spec.install.strategy
    std::vector<std::pair<std::string, bool>> install_modes; // type, supported
    bool has_install_modes = false;
    std::vector<CrdRef> owned_crds;
    std::vector<CrdRef> required_crds;
    std::vector<ApiServiceRef> owned_apiservices;
    std::vector<ApiServiceRef> required_apiservices;
    std::vector<DeploymentInfo> deployments;
    std::vector<RelatedImage> related_images;
    std::map<std::string, std::string> annotations; // metadata.annotations
};

// A {type, value} entry of metadata/dependencies.yaml, metadata/properties.yaml or the CSV's
// olm.properties annotation.
struct TypedValue {
    std::string type;
    io::Node value;
    SourcePos pos;
};

struct Annotations {
    std::string file; // "" when metadata/annotations.yaml was not found
    std::map<std::string, std::string> labels;
    std::map<std::string, SourcePos> positions; // per label key
    std::string package;
    std::vector<std::string> channels; // the channels label split on ','
    std::string default_channel;
};

struct Bundle {
    std::filesystem::path dir;
    Annotations annotations;
    std::vector<Manifest> manifests; // file name order, then document order
    std::optional<CsvInfo> csv;      // the first ClusterServiceVersion
    std::vector<CrdInfo> crds;
    std::vector<TypedValue> dependencies;   // metadata/dependencies.yaml
    std::vector<TypedValue> properties;     // metadata/properties.yaml
    std::vector<TypedValue> csv_properties; // the CSV's olm.properties annotation
    std::string dependencies_file, properties_file;
};

struct Loaded {
    Bundle bundle;
    std::vector<Finding> findings; // problems met while loading (parse errors, wrong types)
    // The findings among them that keep the bundle from being rendered, as errors, in the order
    // met: a file or directory that cannot be read (ExitCode::error), a file over the size limit
    // or a symbolic link leaving the bundle directory (ExitCode::invalid). What such a file holds
    // is not in `bundle`, so a blob made without it would silently lack it.
    std::vector<Error> blocking;
};

// Loads a bundle directory. Fails (Result error) only when `dir` is not a readable directory or
// has no manifests/ directory (or manifests/ is a symbolic link leaving `dir`); everything else
// becomes a Finding. Symbolic links in manifests/ and metadata/ are followed while their target,
// every link resolved, stays inside `dir`; a link leaving it is an error finding ("load.link")
// and is not read, and so is a link that dangles or loops ("load.read").
Result<Loaded> load(const std::filesystem::path& dir);

struct LoadOptions {
    // Applied to every file read (size, nesting depth, alias expansion). A file over the size
    // limit is not read; it becomes a Finding naming the file and its size.
    io::Limits limits;
};

// The same with explicit limits (load(dir) uses the defaults).
Result<Loaded> load(const std::filesystem::path& dir, const LoadOptions& opts);

// The same for a bundle given as a Tree (a directory on disk, files in memory, an image's
// files): its manifests/ and metadata/ are read through the tree, links by the tree's rules, and
// positions name files as the tree shows them. A tree that is not a directory is refused.
Result<Loaded> load(const io::Tree& tree, const LoadOptions& opts = {});

} // namespace kpkg::bundle
