// A summary of a registry+v1 bundle for people and scripts (`kpkg bundle inspect`): what the
// bundle is (package, channels, CSV, version, upgrade edges), what it provides and needs (APIs,
// packages, constraints), and what it runs (deployments, images).
//
// The structured document (-o json / -o yaml). Every key is always present; strings are "" and
// lists [] when the bundle does not say:
//
//   dir             string   the bundle directory as given
//   package         string   package label of metadata/annotations.yaml
//   channels        [string] channels label, split on ',' and trimmed, empty names dropped
//   defaultChannel  string   default channel label
//   csv             string   metadata.name of the ClusterServiceVersion
//   version         string   spec.version
//   replaces        string   spec.replaces
//   skips           [string] spec.skips
//   skipRange       string   the olm.skipRange annotation
//   minKubeVersion  string   spec.minKubeVersion
//   installModes    [{type: string, supported: bool}]           spec.installModes as written
//   owned           [{type: "crd"|"apiservice", group, version, kind, name}]
//   required        [{type: "crd"|"apiservice", group, version, kind, name}]
//                   the CSV's owned/required CRDs (group: the CRD name after its first '.') and
//                   API services (group as written)
//   crds            [{name, group, kind, plural, versions: [string]}]   CRD objects in manifests/
//   dependencies    {packages:    [{packageName, versionRange}],        olm.package
//                    gvks:        [{group, version, kind}],             olm.gvk
//                    labels:      [string],                             olm.label
//                    constraints: [{failureMessage, summary, value}],   olm.constraint
//                    other:       [{type, value}]}   unknown types and malformed entries
//                   from metadata/dependencies.yaml; `summary` is a one-line reading of the
//                   constraint, e.g. "all(package storage >=1.2.0; cel: properties.exists(...))",
//                   `value` the constraint as written
//   properties      [{type, value, source: "properties.yaml"|"olm.properties"}]
//                   metadata/properties.yaml, then the CSV's olm.properties annotation
//   deployments     [{name, containers: [{name, image, init: bool}]}]
//                   spec.install.spec.deployments: containers, then initContainers (init: true)
//   relatedImages   [{name, image}]  spec.relatedImages as written
//   findings        [{severity: "error"|"warning", rule, message, file, line, column}]
//                   problems met while loading (file "" and line/column 0 when unknown)
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::bundle {

// The load findings of `loaded`, plus an error when it has no ClusterServiceVersion (there is
// nothing to inspect without one) unless a file of manifests/ could not be read or parsed (its
// error says why).
std::vector<Finding> inspect_findings(const Loaded& loaded);

// The structured document described above. Never fails: what the bundle lacks is left empty.
io::Node inspect(const Loaded& loaded);

// The document as aligned text in sections, for a terminal.
std::string inspect_text(const io::Node& doc);

struct Inspection {
    io::Node doc;
    std::vector<Finding> findings; // inspect_findings(); also in doc["findings"]
    bool has_errors() const;
};

// load() + inspect(). Fails only as load() does (not a directory: I/O error; no manifests/:
// invalid input).
Result<Inspection> inspect_dir(const std::filesystem::path& dir, const LoadOptions& opts = {});
// The same for a bundle given as a Tree (see load(const io::Tree&, ...)).
Result<Inspection> inspect_dir(const io::Tree& tree, const LoadOptions& opts = {});

// A one-line reading of an olm.constraint value: "gvk group/version Kind", "package name range",
// "cel: rule", "all(a; b)", "any(...)", "not(...)"; parts it does not know show as "?".
std::string constraint_summary(const io::Node& value);

} // namespace kpkg::bundle
