// The bundle validation rules. Each check_* function below is one area (annotations, CSV, CRDs,
// manifests, dependencies and properties); every rule id it reports is listed in k_rules.
#include "kpkg/bundle/validate.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "kpkg/core/semver.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/model/constraint.hpp"
#include "kpkg/model/names.hpp"

namespace kpkg::bundle {
namespace {

using io::Node;

const std::vector<RuleInfo> k_rules = {
    {"annotations.file", Severity::error,
     "metadata/ has an annotations file (an `annotations` map, usually metadata/annotations.yaml)"},
    {"annotations.package", Severity::error, "the package label is set and not empty"},
    {"annotations.package-name", Severity::warning,
     "the package name is a DNS-1123 label (opm refuses other names inside a catalog)"},
    {"annotations.channels", Severity::error,
     "the channels label is set, not empty, and has no empty channel name"},
    {"annotations.default-channel", Severity::error,
     "the default channel, when set, is not empty and is one of the channels; a missing default "
     "with several channels is a warning"},
    {"annotations.mediatype", Severity::error,
     "the media type label is registry+v1; a missing label is a warning"},
    {"annotations.manifests-dir", Severity::error,
     "the manifests label names manifests/ (\"/manifests/\" is accepted); a missing label is a "
     "warning"},
    {"annotations.metadata-dir", Severity::error,
     "the metadata label names metadata/ (\"/metadata/\" is accepted); a missing label is a "
     "warning"},
    {"annotations.unknown-label", Severity::warning,
     "no unknown operators.operatorframework.io.bundle.* label (likely a typo)"},
    {"csv.missing", Severity::error, "manifests/ has a ClusterServiceVersion"},
    {"csv.multiple", Severity::error, "manifests/ has only one ClusterServiceVersion"},
    {"csv.api-version", Severity::error, "the CSV's apiVersion is operators.coreos.com/v1alpha1"},
    {"csv.name", Severity::error,
     "metadata.name is set, a DNS-1123 subdomain and at most 63 characters"},
    {"csv.version", Severity::error, "spec.version is set and a semantic version"},
    {"csv.install", Severity::error, "spec.install.strategy is \"deployment\""},
    {"csv.deployments", Severity::error,
     "spec.install.spec.deployments is not empty; each deployment has a unique name and a spec"},
    {"csv.install-modes", Severity::error,
     "install mode types are OwnNamespace, SingleNamespace, MultiNamespace or AllNamespaces, none "
     "twice, at least one supported; missing spec.installModes is a warning"},
    {"csv.min-kube-version", Severity::error, "spec.minKubeVersion, when set, is a version"},
    {"csv.replaces", Severity::error, "spec.replaces, when set, is a valid CSV name, not its own"},
    {"csv.skips", Severity::error, "spec.skips entries are non-empty names, not its own"},
    {"csv.skip-range", Severity::error,
     "the olm.skipRange annotation is a valid range; readings where OLM's range parser differs "
     "from the likely intent are warnings"},
    {"csv.annotation-case", Severity::error,
     "OLM annotations (olm.skipRange, olm.operatorGroup, ...) are spelt with the right case"},
    {"csv.alm-examples", Severity::error,
     "the alm-examples annotation is a JSON list of objects, each of a kind the CSV owns or "
     "requires"},
    {"csv.olm-properties", Severity::error,
     "the olm.properties annotation is a JSON list of {type, value} objects"},
    {"crd.fields", Severity::error,
     "each CRD has spec.group, spec.names.kind, spec.names.plural and at least one version"},
    {"crd.name", Severity::error, "each CRD is named <plural>.<group>"},
    {"crd.owned", Severity::error,
     "each owned CRD of the CSV is in the bundle with the same kind and the version among its "
     "versions"},
    {"crd.not-owned", Severity::error, "each CRD in the bundle is owned by the CSV"},
    {"crd.required", Severity::error,
     "each required CRD entry has a <plural>.<group> name, a version and a kind"},
    {"crd.owned-and-required", Severity::warning, "the CSV does not require a CRD it owns"},
    {"manifests.object", Severity::error, "each object has apiVersion, kind and metadata.name"},
    {"manifests.kind", Severity::error, "each object is of a kind OLM installs from a bundle"},
    {"manifests.duplicate", Severity::error,
     "no two objects share group, kind, namespace and name"},
    {"manifests.multi-document", Severity::warning,
     "each manifests file holds one document (opm reads only the first)"},
    {"manifests.removed-api", Severity::warning,
     "no object uses an apiVersion a Kubernetes release has removed (such as "
     "apiextensions.k8s.io/v1beta1 CRDs, removed in 1.22); an error when --k8s-version or the "
     "CSV's minKubeVersion is at or past that release"},
    {"dependencies.entry", Severity::error, "each dependency is {type: string, value: object}"},
    {"dependencies.type", Severity::error,
     "each dependency type is olm.gvk, olm.package, olm.label or olm.constraint"},
    {"dependencies.gvk", Severity::error, "an olm.gvk dependency has group, version and kind"},
    {"dependencies.package", Severity::error,
     "an olm.package dependency has packageName and a version that is a valid range"},
    {"dependencies.label", Severity::error, "an olm.label dependency has a label"},
    {"dependencies.constraint", Severity::error,
     "an olm.constraint is exactly one of gvk, package, cel, all, any, not, recursively, with "
     "no unknown fields, at most 128 KiB as JSON, and every cel rule compiles"},
    {"properties.entry", Severity::error,
     "each property (properties.yaml, the CSV's olm.properties) is {type: string, value}"},
    {"properties.gvk", Severity::error,
     "olm.gvk and olm.gvk.required properties have group, version and kind"},
    {"properties.package", Severity::error,
     "an olm.package property has packageName and a semantic version; olm.package.required has "
     "packageName and a valid versionRange"},
    {"properties.label", Severity::error, "an olm.label property has a label"},
    {"properties.constraint", Severity::error,
     "an olm.constraint property is valid as for dependencies"},
};

const std::vector<std::string> k_supported_kinds = {
    "ClusterServiceVersion",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "Service",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "PrometheusRule",
    "ServiceMonitor",
    "Secret",
    "ConfigMap",
    "PodDisruptionBudget",
    "PriorityClass",
    "VerticalPodAutoscaler",
    "ConsoleYAMLSample",
};

const char* const k_install_mode_types[] = {"OwnNamespace", "SingleNamespace", "MultiNamespace",
                                            "AllNamespaces"};

// Kubernetes' deprecated API migration guide, release by release (the releases operator-sdk's
// alpha-deprecated-apis check knows, 1.22, 1.25 and 1.26, and the others the guide lists).
const std::vector<RemovedApi> k_removed_apis = {
    {"extensions/v1beta1", "NetworkPolicy", {1, 16}, "networking.k8s.io/v1"},
    {"extensions/v1beta1", "PodSecurityPolicy", {1, 16}, "policy/v1beta1"},
    {"extensions/v1beta1", "DaemonSet", {1, 16}, "apps/v1"},
    {"apps/v1beta2", "DaemonSet", {1, 16}, "apps/v1"},
    {"extensions/v1beta1", "Deployment", {1, 16}, "apps/v1"},
    {"apps/v1beta1", "Deployment", {1, 16}, "apps/v1"},
    {"apps/v1beta2", "Deployment", {1, 16}, "apps/v1"},
    {"apps/v1beta1", "StatefulSet", {1, 16}, "apps/v1"},
    {"apps/v1beta2", "StatefulSet", {1, 16}, "apps/v1"},
    {"extensions/v1beta1", "ReplicaSet", {1, 16}, "apps/v1"},
    {"apps/v1beta1", "ReplicaSet", {1, 16}, "apps/v1"},
    {"apps/v1beta2", "ReplicaSet", {1, 16}, "apps/v1"},
    {"admissionregistration.k8s.io/v1beta1",
     "MutatingWebhookConfiguration",
     {1, 22},
     "admissionregistration.k8s.io/v1"},
    {"admissionregistration.k8s.io/v1beta1",
     "ValidatingWebhookConfiguration",
     {1, 22},
     "admissionregistration.k8s.io/v1"},
    {"apiextensions.k8s.io/v1beta1",
     "CustomResourceDefinition",
     {1, 22},
     "apiextensions.k8s.io/v1"},
    {"apiregistration.k8s.io/v1beta1", "APIService", {1, 22}, "apiregistration.k8s.io/v1"},
    {"authentication.k8s.io/v1beta1", "TokenReview", {1, 22}, "authentication.k8s.io/v1"},
    {"authorization.k8s.io/v1beta1",
     "LocalSubjectAccessReview",
     {1, 22},
     "authorization.k8s.io/v1"},
    {"authorization.k8s.io/v1beta1", "SelfSubjectAccessReview", {1, 22}, "authorization.k8s.io/v1"},
    {"authorization.k8s.io/v1beta1", "SubjectAccessReview", {1, 22}, "authorization.k8s.io/v1"},
    {"certificates.k8s.io/v1beta1", "CertificateSigningRequest", {1, 22}, "certificates.k8s.io/v1"},
    {"coordination.k8s.io/v1beta1", "Lease", {1, 22}, "coordination.k8s.io/v1"},
    {"extensions/v1beta1", "Ingress", {1, 22}, "networking.k8s.io/v1"},
    {"networking.k8s.io/v1beta1", "Ingress", {1, 22}, "networking.k8s.io/v1"},
    {"networking.k8s.io/v1beta1", "IngressClass", {1, 22}, "networking.k8s.io/v1"},
    {"rbac.authorization.k8s.io/v1beta1", "ClusterRole", {1, 22}, "rbac.authorization.k8s.io/v1"},
    {"rbac.authorization.k8s.io/v1beta1",
     "ClusterRoleBinding",
     {1, 22},
     "rbac.authorization.k8s.io/v1"},
    {"rbac.authorization.k8s.io/v1beta1", "Role", {1, 22}, "rbac.authorization.k8s.io/v1"},
    {"rbac.authorization.k8s.io/v1beta1", "RoleBinding", {1, 22}, "rbac.authorization.k8s.io/v1"},
    {"scheduling.k8s.io/v1beta1", "PriorityClass", {1, 22}, "scheduling.k8s.io/v1"},
    {"storage.k8s.io/v1beta1", "CSIDriver", {1, 22}, "storage.k8s.io/v1"},
    {"storage.k8s.io/v1beta1", "CSINode", {1, 22}, "storage.k8s.io/v1"},
    {"storage.k8s.io/v1beta1", "StorageClass", {1, 22}, "storage.k8s.io/v1"},
    {"storage.k8s.io/v1beta1", "VolumeAttachment", {1, 22}, "storage.k8s.io/v1"},
    {"batch/v1beta1", "CronJob", {1, 25}, "batch/v1"},
    {"discovery.k8s.io/v1beta1", "EndpointSlice", {1, 25}, "discovery.k8s.io/v1"},
    {"events.k8s.io/v1beta1", "Event", {1, 25}, "events.k8s.io/v1"},
    {"autoscaling/v2beta1", "HorizontalPodAutoscaler", {1, 25}, "autoscaling/v2"},
    {"policy/v1beta1", "PodDisruptionBudget", {1, 25}, "policy/v1"},
    {"policy/v1beta1", "PodSecurityPolicy", {1, 25}, ""},
    {"node.k8s.io/v1beta1", "RuntimeClass", {1, 25}, "node.k8s.io/v1"},
    {"flowcontrol.apiserver.k8s.io/v1beta1",
     "FlowSchema",
     {1, 26},
     "flowcontrol.apiserver.k8s.io/v1"},
    {"flowcontrol.apiserver.k8s.io/v1beta1",
     "PriorityLevelConfiguration",
     {1, 26},
     "flowcontrol.apiserver.k8s.io/v1"},
    {"autoscaling/v2beta2", "HorizontalPodAutoscaler", {1, 26}, "autoscaling/v2"},
    {"storage.k8s.io/v1beta1", "CSIStorageCapacity", {1, 27}, "storage.k8s.io/v1"},
    {"flowcontrol.apiserver.k8s.io/v1beta2",
     "FlowSchema",
     {1, 29},
     "flowcontrol.apiserver.k8s.io/v1"},
    {"flowcontrol.apiserver.k8s.io/v1beta2",
     "PriorityLevelConfiguration",
     {1, 29},
     "flowcontrol.apiserver.k8s.io/v1"},
    {"flowcontrol.apiserver.k8s.io/v1beta3",
     "FlowSchema",
     {1, 32},
     "flowcontrol.apiserver.k8s.io/v1"},
    {"flowcontrol.apiserver.k8s.io/v1beta3",
     "PriorityLevelConfiguration",
     {1, 32},
     "flowcontrol.apiserver.k8s.io/v1"},
};

std::string release_text(const KubeRelease& r) {
    return std::to_string(r.major) + "." + std::to_string(r.minor);
}

std::string q(std::string_view s) {
    return semver::detail::quote(s);
}

std::string trim_copy(std::string_view s) {
    return std::string(text::trim(s));
}

// The group of an apiVersion: "" for the core group ("v1").
std::string group_of(std::string_view api_version) {
    auto slash = api_version.find('/');
    return slash == std::string_view::npos ? std::string()
                                           : std::string(api_version.substr(0, slash));
}

// The group part of a "<plural>.<group>" CRD name, or nothing.
std::optional<std::string> group_of_crd_name(std::string_view name) {
    auto dot = name.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return std::nullopt;
    return std::string(name.substr(dot + 1));
}

std::string gvk_text(std::string_view group, std::string_view version, std::string_view kind) {
    std::string s = text::shown(group);
    if (!s.empty()) s += '/';
    s += text::shown(version);
    s += ", Kind=";
    s += text::shown(kind);
    return s;
}

// Whether a field the loader reads as a string is really missing: absent, null or "". A value of
// another type is not missing: the loader reports it as a wrong type, and the rules stay quiet.
bool missing(const Node* n) {
    return n == nullptr || n->is_null() || (n->is_string() && text::trim(n->text).empty());
}

// The item of `list` at `p` (the position the loader recorded for it), or nullptr.
const Node* item_at(const Node* list, const SourcePos& p) {
    if (list == nullptr || !list->is_seq() || p.line == 0) return nullptr;
    for (const auto& i : list->items)
        if (i.mark.line == p.line && i.mark.column == p.column) return &i;
    return nullptr;
}

std::string ordinal(std::size_t i) {
    return "#" + std::to_string(i + 1);
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// A CSV name as operator-framework/api checks it: a DNS-1123 subdomain that also fits a label
// value (OLM copies it into labels such as olm.owner).
std::string csv_name_problem(std::string_view s) {
    std::string p = model::dns1123_problem(model::check_dns1123_subdomain(s), true);
    if (!p.empty()) return p;
    if (s.size() > 63) return "must be at most 63 characters (OLM copies it into label values)";
    return {};
}

class Checker {
public:
    // `load_rules`: also make the checks bundle::load() makes itself (a second CSV, files with
    // several documents, the olm.properties annotation's JSON), for bundles built in code.
    Checker(const Bundle& b, std::vector<Finding>& out, bool load_rules)
        : b_(b), out_(out), load_rules_(load_rules) {}

    // Set when a file of metadata/ could not be read or parsed (the loader said so): a missing
    // annotations map may then be in that file.
    bool metadata_unreadable = false;
    // Set when a file of manifests/ could not be read or parsed: the CSV or a CRD found missing
    // may be in it, so that consequence is not reported on top of the reason.
    bool manifests_unreadable = false;
    // ValidateOptions::k8s_version.
    std::optional<KubeRelease> k8s_version;

    void run() {
        check_annotations();
        check_csv_count();
        if (b_.csv && b_.csv->manifest < b_.manifests.size()) check_csv(*b_.csv);
        check_crds();
        check_manifests();
        check_removed_apis();
        for (const auto& tv : b_.dependencies)
            check_typed(tv, "dependencies", true);
        for (const auto& tv : b_.properties)
            check_typed(tv, "properties", true);
        for (const auto& tv : b_.csv_properties)
            check_typed(tv, "properties", false, " in the olm.properties annotation");
    }

private:
    const Bundle& b_;
    std::vector<Finding>& out_;
    bool load_rules_;

    void add(Severity s, std::string rule, std::string msg, SourcePos pos,
             std::string subject = {}) {
        Finding f;
        f.severity = s;
        f.rule = std::move(rule);
        f.message = std::move(msg);
        f.pos = std::move(pos);
        f.subject = std::move(subject);
        out_.push_back(std::move(f));
    }
    void error(std::string rule, std::string msg, SourcePos pos, std::string subject = {}) {
        add(Severity::error, std::move(rule), std::move(msg), std::move(pos), std::move(subject));
    }
    void warn(std::string rule, std::string msg, SourcePos pos, std::string subject = {}) {
        add(Severity::warning, std::move(rule), std::move(msg), std::move(pos), std::move(subject));
    }

    // dir/<sub> as a position without line.
    SourcePos dir_pos(const char* sub) const {
        SourcePos p;
        p.file = b_.dir.empty() ? std::string(sub) : (b_.dir / sub).string();
        return p;
    }

    static SourcePos manifest_pos(const Manifest& m) {
        if (!m.pos.empty()) return m.pos;
        SourcePos p;
        p.file = m.file;
        p.document = m.document;
        return p;
    }

    // The position of node `n` of manifest `m`, or of the manifest when `n` has none.
    static SourcePos at(const Manifest& m, const Node* n) {
        if (n != nullptr && n->mark.line != 0) return io::pos_of(m.file, n->mark, m.document);
        return manifest_pos(m);
    }

    // ---- annotations ------------------------------------------------------------------------

    void check_annotations() {
        const Annotations& a = b_.annotations;
        if (a.file.empty()) {
            error("annotations.file",
                  metadata_unreadable
                      ? "no usable annotations: no file in metadata/ has a valid `annotations` "
                        "map naming the package and channels (see the errors reported there)"
                      : "no annotations file: metadata/annotations.yaml with an `annotations` "
                        "map naming the package and channels is missing",
                  dir_pos("metadata"));
            return;
        }
        SourcePos file_pos;
        file_pos.file = a.file;
        auto pos_of_label = [&](const char* key) {
            auto it = a.positions.find(key);
            return it != a.positions.end() && !it->second.empty() ? it->second : file_pos;
        };
        auto label = [&](const char* key) -> const std::string* {
            auto it = a.labels.find(key);
            return it == a.labels.end() ? nullptr : &it->second;
        };
        auto missing = [](const char* key) { return "annotation " + q(key) + " is missing"; };

        // package
        if (const std::string* pkg = label(label_package); pkg == nullptr) {
            error("annotations.package", missing(label_package) + ": the bundle names no package",
                  file_pos);
        } else if (text::trim(*pkg).empty()) {
            error("annotations.package",
                  "annotation " + q(label_package) + " is empty: the bundle names no package",
                  pos_of_label(label_package));
        } else if (std::string p = model::dns1123_problem(model::check_dns1123_label(*pkg), false);
                   !p.empty()) {
            warn("annotations.package-name",
                 "package name " + q(*pkg) + " is not a DNS-1123 label (it " + p +
                     "); current opm refuses such a package name inside a File-Based Catalog",
                 pos_of_label(label_package));
        }

        // channels
        std::vector<std::string> channels;
        if (const std::string* ch = label(label_channels); ch == nullptr) {
            error("annotations.channels", missing(label_channels) + ": the bundle is in no channel",
                  file_pos);
        } else if (text::trim(*ch).empty()) {
            error("annotations.channels",
                  "annotation " + q(label_channels) + " is empty: the bundle is in no channel",
                  pos_of_label(label_channels));
        } else {
            bool reported = false;
            for (auto part : text::split(*ch, ',')) {
                std::string name = trim_copy(part);
                if (name.empty()) {
                    if (!reported)
                        error("annotations.channels",
                              "channel list " + q(*ch) + " has an empty channel name",
                              pos_of_label(label_channels));
                    reported = true;
                    continue;
                }
                channels.push_back(std::move(name));
            }
        }

        // default channel
        if (const std::string* def = label(label_default_channel); def != nullptr) {
            std::string d = trim_copy(*def);
            if (d.empty()) {
                error("annotations.default-channel",
                      "annotation " + q(label_default_channel) + " is empty",
                      pos_of_label(label_default_channel));
            } else if (!channels.empty() &&
                       std::find(channels.begin(), channels.end(), d) == channels.end()) {
                error("annotations.default-channel",
                      "default channel " + q(d) + " is not one of the bundle's channels (" +
                          q(*label(label_channels)) + ")",
                      pos_of_label(label_default_channel));
            }
        } else if (channels.size() > 1) {
            warn("annotations.default-channel",
                 missing(label_default_channel) + ": the bundle is in " +
                     std::to_string(channels.size()) +
                     " channels and opm picks a default channel only when there is one",
                 file_pos);
        }

        // media type
        if (const std::string* mt = label(label_mediatype); mt == nullptr) {
            warn("annotations.mediatype",
                 missing(label_mediatype) + "; it should be \"registry+v1\"", file_pos);
        } else if (*mt != "registry+v1") {
            error("annotations.mediatype",
                  "media type " + q(*mt) +
                      " is not \"registry+v1\", the type of a bundle with a ClusterServiceVersion",
                  pos_of_label(label_mediatype));
        }

        // manifests/ and metadata/
        auto dir_label = [&](const char* key, const char* dir, const char* rule) {
            const std::string* v = label(key);
            if (v == nullptr) {
                warn(rule, missing(key) + "; it should be \"" + std::string(dir) + "/\"", file_pos);
                return;
            }
            std::string_view s = text::trim(*v);
            if (!s.empty() && s.front() == '/') s.remove_prefix(1);
            if (!s.empty() && s.back() == '/') s.remove_suffix(1);
            if (s != dir)
                error(rule,
                      "annotation " + q(key) + " is " + q(*v) + ", but the bundle's " + dir +
                          " are in " + dir + "/ (the value should be \"" + dir + "/\")",
                      pos_of_label(key));
        };
        dir_label(label_manifests, "manifests", "annotations.manifests-dir");
        dir_label(label_metadata, "metadata", "annotations.metadata-dir");

        // typos in the bundle label family
        static const std::vector<std::string> known = {label_mediatype, label_manifests,
                                                       label_metadata,  label_package,
                                                       label_channels,  label_default_channel};
        for (const auto& [key, value] : a.labels) {
            if (!text::starts_with(key, "operators.operatorframework.io.bundle.")) continue;
            if (std::find(known.begin(), known.end(), key) != known.end()) continue;
            std::string msg = "unknown bundle annotation " + q(key);
            if (auto c = text::closest(key, known)) msg += "; did you mean " + q(*c) + "?";
            warn("annotations.unknown-label", msg, pos_of_label(key.c_str()));
        }
    }

    // ---- ClusterServiceVersion --------------------------------------------------------------

    void check_csv_count() {
        std::vector<const Manifest*> csvs;
        for (const auto& m : b_.manifests)
            if (m.kind == "ClusterServiceVersion") csvs.push_back(&m);
        if (csvs.empty()) {
            if (manifests_unreadable) return; // the reason is reported where it is
            error("csv.missing",
                  "no ClusterServiceVersion in manifests/: a registry+v1 bundle has exactly one",
                  dir_pos("manifests"));
            return;
        }
        for (std::size_t i = 1; load_rules_ && i < csvs.size(); ++i)
            error("csv.multiple",
                  "another ClusterServiceVersion " + q(csvs[i]->name) +
                      ": a bundle has exactly one, and OLM uses only the first, " +
                      q(csvs[0]->name) + " (" + manifest_pos(*csvs[0]).str() + ")",
                  manifest_pos(*csvs[i]));
    }

    void check_csv(const CsvInfo& csv) {
        const Manifest& m = b_.manifests[csv.manifest];
        const Node* obj = &m.object;
        const Node* meta = io::at_path(obj, {"metadata"});
        const Node* spec = io::at_path(obj, {"spec"});
        const Node* annotations = io::at_path(obj, {"metadata", "annotations"});
        auto pos = [&](const Node* n, const Node* fallback = nullptr) {
            return at(m, n != nullptr ? n : fallback);
        };

        if (m.api_version != "operators.coreos.com/v1alpha1")
            error("csv.api-version",
                  "ClusterServiceVersion apiVersion " + q(m.api_version) +
                      " is not \"operators.coreos.com/v1alpha1\"",
                  pos(io::at_path(obj, {"apiVersion"})));

        // name (a missing one is manifests.object's)
        if (std::string p = csv.name.empty() ? "" : csv_name_problem(csv.name); !p.empty())
            error("csv.name", "CSV name " + q(csv.name) + " is not valid: it " + p,
                  pos(io::at_path(meta, {"name"}), meta));

        // version
        const Node* version = io::at_path(spec, {"version"});
        if (csv.version.empty()) {
            if (missing(version) && (spec == nullptr || spec->is_map()))
                error("csv.version", "spec.version is missing", pos(version, spec));
        } else if (auto v = semver::Version::parse(csv.version); !v) {
            error("csv.version", "spec.version: " + v.error().message, pos(version, spec));
        }

        check_install(m, obj, spec);
        check_install_modes(csv, m, spec);

        // minKubeVersion
        if (!csv.min_kube_version.empty())
            if (auto v = semver::Version::parse_tolerant(csv.min_kube_version); !v)
                error("csv.min-kube-version", "spec.minKubeVersion: " + v.error().message,
                      pos(io::at_path(spec, {"minKubeVersion"}), spec));

        // replaces, skips
        if (!csv.replaces.empty()) {
            const Node* n = io::at_path(spec, {"replaces"});
            if (std::string p = csv_name_problem(csv.replaces); !p.empty())
                error("csv.replaces",
                      "spec.replaces " + q(csv.replaces) + " is not a valid CSV name: it " + p,
                      pos(n, spec));
            else if (csv.replaces == csv.name)
                error("csv.replaces", "spec.replaces names the CSV itself", pos(n, spec));
        }
        check_skips(csv, m, spec);

        // skipRange
        if (auto it = csv.annotations.find("olm.skipRange"); it != csv.annotations.end()) {
            SourcePos p = pos(io::at_path(annotations, {"olm.skipRange"}), annotations);
            auto r = semver::Range::parse(it->second);
            if (!r)
                error("csv.skip-range", "olm.skipRange: " + r.error().message, p);
            else
                for (const auto& w : r->warnings())
                    warn("csv.skip-range", "olm.skipRange " + q(it->second) + ": " + w, p);
        }

        // wrong-case OLM annotations
        static const std::vector<std::string> olm_keys = {
            "olm.operatorGroup", "olm.operatorNamespace", "olm.targetNamespaces",
            "olm.providedAPIs", "olm.skipRange"};
        for (const auto& [key, value] : csv.annotations)
            for (const auto& k : olm_keys)
                if (key != k && lower(key) == lower(k)) {
                    const io::MapEntry* e = annotations ? annotations->entry(key) : nullptr;
                    SourcePos p = e != nullptr && e->key_mark.line != 0
                                      ? io::pos_of(m.file, e->key_mark, m.document)
                                      : pos(annotations);
                    error("csv.annotation-case",
                          "annotation " + q(key) + " has the wrong case: OLM reads " + q(k), p);
                }

        check_examples(csv, m, annotations);
        if (load_rules_) check_olm_properties(csv, m, annotations);
    }

    void check_install(const Manifest& m, const Node* obj, const Node* spec) {
        const Node* install = io::at_path(obj, {"spec", "install"});
        const Node* strategy = io::at_path(install, {"strategy"});
        const std::string& name = b_.csv->install_strategy;
        if (install == nullptr || install->is_null()) {
            if (spec == nullptr || spec->is_map())
                error("csv.install",
                      "spec.install is missing: OLM installs the operator with the "
                      "\"deployment\" strategy given there",
                      at(m, spec));
            return;
        }
        if (!install->is_map()) return; // the loader reports the type
        if (name.empty()) {
            if (!missing(strategy)) return;
            error("csv.install",
                  "spec.install.strategy is missing: OLM installs only the "
                  "\"deployment\" strategy",
                  at(m, strategy != nullptr  ? strategy
                        : install != nullptr ? install
                                             : spec));
            return;
        }
        if (name != "deployment") {
            error("csv.install",
                  "install strategy " + q(name) +
                      " is not supported: OLM installs only the \"deployment\" strategy",
                  at(m, strategy != nullptr ? strategy : install));
            return;
        }
        const Node* deps = io::at_path(install, {"spec", "deployments"});
        if (deps == nullptr || !deps->is_seq() || deps->items.empty()) {
            if (deps == nullptr && !b_.csv->deployments.empty()) return; // built in code
            error("csv.deployments",
                  "spec.install.spec.deployments is empty: the CSV installs no operator",
                  at(m, deps != nullptr                  ? deps
                        : io::at_path(install, {"spec"}) ? io::at_path(install, {"spec"})
                                                         : install));
            return;
        }
        std::map<std::string, std::size_t> seen;
        for (std::size_t i = 0; i < deps->items.size(); ++i) {
            const Node& d = deps->items[i];
            if (!d.is_map()) {
                error("csv.deployments",
                      "deployment " + ordinal(i) + " must be an object, not " +
                          io::kind_name(d.kind),
                      at(m, &d));
                continue;
            }
            const Node* n = d.get("name");
            std::string label;
            if (n == nullptr || !n->is_string() || text::trim(n->text).empty()) {
                error("csv.deployments",
                      "deployment " + ordinal(i) + " in spec.install.spec.deployments has no name",
                      at(m, n != nullptr ? n : &d));
                label = "deployment " + ordinal(i);
            } else {
                label = "deployment " + q(n->text);
                auto [it, fresh] = seen.emplace(n->text, i);
                if (!fresh)
                    error("csv.deployments",
                          "deployment name " + q(n->text) + " is used twice (deployments " +
                              ordinal(it->second) + " and " + ordinal(i) + ")",
                          at(m, n));
            }
            const Node* s = d.get("spec");
            if (s == nullptr || !s->is_map())
                error("csv.deployments", label + " has no spec", at(m, s != nullptr ? s : &d));
        }
    }

    void check_install_modes(const CsvInfo& csv, const Manifest& m, const Node* spec) {
        const Node* modes = io::at_path(spec, {"installModes"});
        if (!csv.has_install_modes || csv.install_modes.empty()) {
            if (modes != nullptr && !modes->is_null() && !modes->is_seq()) return; // load reports
            warn("csv.install-modes",
                 "spec.installModes is missing: the CSV declares no supported install mode, so "
                 "OLM finds no OperatorGroup it can run in (operator-sdk reports this as an "
                 "error)",
                 at(m, modes != nullptr ? modes : spec));
            return;
        }
        std::set<std::string> seen;
        bool any_supported = false;
        for (std::size_t i = 0; i < csv.install_modes.size(); ++i) {
            const auto& [type, supported] = csv.install_modes[i];
            const Node* item = modes != nullptr && modes->is_seq() && i < modes->items.size()
                                   ? &modes->items[i]
                                   : nullptr;
            const Node* tn = item != nullptr ? item->get("type") : nullptr;
            SourcePos p = at(m, tn != nullptr ? tn : item != nullptr ? item : modes);
            bool valid =
                std::any_of(std::begin(k_install_mode_types), std::end(k_install_mode_types),
                            [&](const char* t) { return type == t; });
            if (!valid) {
                std::string msg = "install mode type " + q(type) +
                                  " is not one of OwnNamespace, SingleNamespace, MultiNamespace, "
                                  "AllNamespaces";
                std::vector<std::string> cands(std::begin(k_install_mode_types),
                                               std::end(k_install_mode_types));
                if (auto c = text::closest(type, cands)) msg += "; did you mean " + q(*c) + "?";
                error("csv.install-modes", msg, p);
                continue;
            }
            if (!seen.insert(type).second)
                error("csv.install-modes", "install mode " + q(type) + " is listed twice", p);
            any_supported = any_supported || supported;
        }
        if (!any_supported && !seen.empty())
            error("csv.install-modes",
                  "no install mode is supported: OLM cannot run the CSV in any OperatorGroup",
                  at(m, modes != nullptr ? modes : spec));
    }

    void check_skips(const CsvInfo& csv, const Manifest& m, const Node* spec) {
        const Node* skips = io::at_path(spec, {"skips"});
        if (skips != nullptr && skips->is_seq()) {
            for (std::size_t i = 0; i < skips->items.size(); ++i) {
                const Node& s = skips->items[i];
                if (s.is_scalar() && !s.is_null() && text::trim(s.text).empty() == false) {
                    if (s.text == csv.name)
                        error("csv.skips", "spec.skips names the CSV itself", at(m, &s));
                    continue;
                }
                if (s.is_null() || (s.is_string() && text::trim(s.text).empty()))
                    error("csv.skips", "spec.skips entry " + ordinal(i) + " is empty", at(m, &s));
                else if (!s.is_scalar())
                    error("csv.skips",
                          "spec.skips entry " + ordinal(i) + " must be a string, not " +
                              io::kind_name(s.kind),
                          at(m, &s));
            }
            return;
        }
        for (std::size_t i = 0; i < csv.skips.size(); ++i) { // built in code
            if (text::trim(csv.skips[i]).empty())
                error("csv.skips", "spec.skips entry " + ordinal(i) + " is empty", at(m, spec));
            else if (csv.skips[i] == csv.name)
                error("csv.skips", "spec.skips names the CSV itself", at(m, spec));
        }
    }

    // Group and kind of every API the CSV owns or requires.
    std::set<std::pair<std::string, std::string>> owned_or_required_kinds(const CsvInfo& csv) {
        std::set<std::pair<std::string, std::string>> kinds;
        for (const auto* list : {&csv.owned_crds, &csv.required_crds})
            for (const auto& r : *list)
                if (auto g = group_of_crd_name(r.name)) kinds.emplace(*g, r.kind);
        for (const auto* list : {&csv.owned_apiservices, &csv.required_apiservices})
            for (const auto& r : *list)
                kinds.emplace(r.group, r.kind);
        return kinds;
    }

    // A JSON annotation parsed, or a finding at the annotation.
    std::optional<Node> parse_json_annotation(const std::string& key, const std::string& value,
                                              const SourcePos& p, const char* rule) {
        if (text::trim(value).empty()) {
            error(rule, key + " annotation is empty: it must be a JSON list", p);
            return std::nullopt;
        }
        auto docs = io::parse_json(value, key);
        if (!docs) {
            const Error& e = docs.error();
            std::string where;
            if (e.pos.line != 0)
                where = " (line " + std::to_string(e.pos.line) + ", column " +
                        std::to_string(e.pos.column) + " of the annotation)";
            error(rule, key + " annotation is not valid JSON" + where + ": " + e.message, p);
            return std::nullopt;
        }
        if (docs->size() != 1) {
            error(rule,
                  key + " annotation holds " + std::to_string(docs->size()) +
                      " JSON values: it must be one list",
                  p);
            return std::nullopt;
        }
        Node root = std::move(docs->front().root);
        if (!root.is_seq()) {
            error(rule,
                  key + " annotation must be a JSON list, not " +
                      (root.is_map() ? std::string("an object") : io::kind_name(root.kind)),
                  p);
            return std::nullopt;
        }
        return root;
    }

    void check_examples(const CsvInfo& csv, const Manifest& m, const Node* annotations) {
        auto it = csv.annotations.find("alm-examples");
        if (it == csv.annotations.end()) return;
        SourcePos p = at(m, annotations != nullptr && annotations->get("alm-examples") != nullptr
                                ? annotations->get("alm-examples")
                                : annotations);
        auto root = parse_json_annotation("alm-examples", it->second, p, "csv.alm-examples");
        if (!root) return;
        auto kinds = owned_or_required_kinds(csv);
        for (std::size_t i = 0; i < root->items.size(); ++i) {
            const Node& ex = root->items[i];
            std::string which = "alm-examples item " + ordinal(i);
            if (!ex.is_map()) {
                error("csv.alm-examples",
                      which + " must be an object, not " + io::kind_name(ex.kind), p);
                continue;
            }
            const Node* av = ex.get("apiVersion");
            const Node* kind = ex.get("kind");
            if (av == nullptr || !av->is_string() || av->text.empty()) {
                error("csv.alm-examples", which + " has no apiVersion", p);
                continue;
            }
            if (kind == nullptr || !kind->is_string() || kind->text.empty()) {
                error("csv.alm-examples", which + " has no kind", p);
                continue;
            }
            std::string group = group_of(av->text);
            if (kinds.count({group, kind->text}) == 0) {
                std::string version = av->text.substr(av->text.find('/') + 1);
                error("csv.alm-examples",
                      which + " is a " + gvk_text(group, version, kind->text) +
                          ", which the CSV neither owns nor requires",
                      p);
            }
        }
    }

    void check_olm_properties(const CsvInfo& csv, const Manifest& m, const Node* annotations) {
        auto it = csv.annotations.find("olm.properties");
        if (it == csv.annotations.end()) return;
        SourcePos p = at(m, annotations != nullptr && annotations->get("olm.properties") != nullptr
                                ? annotations->get("olm.properties")
                                : annotations);
        auto root = parse_json_annotation("olm.properties", it->second, p, "csv.olm-properties");
        if (!root) return;
        for (std::size_t i = 0; i < root->items.size(); ++i) {
            const Node& e = root->items[i];
            std::string which = "olm.properties item " + ordinal(i);
            if (!e.is_map()) {
                error("csv.olm-properties",
                      which + " must be an object, not " + io::kind_name(e.kind), p);
                continue;
            }
            const Node* type = e.get("type");
            if (type == nullptr || !type->is_string() || type->text.empty())
                error("csv.olm-properties", which + " has no type", p);
            if (e.get("value") == nullptr) error("csv.olm-properties", which + " has no value", p);
        }
    }

    // ---- CRDs -------------------------------------------------------------------------------

    void check_crds() {
        for (const auto& crd : b_.crds) {
            if (crd.manifest >= b_.manifests.size()) continue;
            const Manifest& m = b_.manifests[crd.manifest];
            const Node* spec = m.object.at_path({"spec"});
            std::string who = "CRD " + q(crd.name);
            SourcePos p = at(m, spec);
            // A null spec, spec.names or spec.versions is as good as none (and render refuses
            // the bundle for it); another type is the loader's to report.
            auto absent = [](const Node* n) { return n == nullptr || n->is_null(); };
            if (!absent(spec) && !spec->is_map()) continue;
            const Node* names = io::at_path(spec, {"names"});
            if (crd.group.empty() && missing(io::at_path(spec, {"group"})))
                error("crd.fields", who + " has no spec.group", p);
            if (absent(names) || names->is_map()) {
                if (crd.kind.empty() && missing(io::at_path(names, {"kind"})))
                    error("crd.fields", who + " has no spec.names.kind",
                          at(m, names ? names : spec));
                if (crd.plural.empty() && missing(io::at_path(names, {"plural"})))
                    error("crd.fields", who + " has no spec.names.plural",
                          at(m, names ? names : spec));
            }
            const Node* versions = io::at_path(spec, {"versions"});
            if (crd.versions.empty() && (absent(versions) || versions->is_seq()))
                error("crd.fields", who + " has no version (spec.versions or spec.version)",
                      at(m, versions != nullptr ? versions : spec));
            if (!crd.group.empty() && !crd.plural.empty() &&
                crd.name != crd.plural + "." + crd.group)
                error("crd.name",
                      who + " must be named <plural>.<group>: " + q(crd.plural + "." + crd.group),
                      at(m, m.object.at_path({"metadata", "name"})));
        }
        if (!b_.csv) return;
        const CsvInfo& csv = *b_.csv;
        SourcePos csv_pos = csv.manifest < b_.manifests.size()
                                ? manifest_pos(b_.manifests[csv.manifest])
                                : SourcePos{};
        auto ref_pos = [&](const CrdRef& r) { return r.pos.empty() ? csv_pos : r.pos; };
        auto find_crd = [&](const std::string& name) -> const CrdInfo* {
            for (const auto& c : b_.crds)
                if (c.name == name) return &c;
            return nullptr;
        };

        const Node* csv_obj =
            csv.manifest < b_.manifests.size() ? &b_.manifests[csv.manifest].object : nullptr;
        const Node* owned_list =
            io::at_path(csv_obj, {"spec", "customresourcedefinitions", "owned"});
        const Node* required_list =
            io::at_path(csv_obj, {"spec", "customresourcedefinitions", "required"});
        // Whether field `f` of a CRD entry is missing (not merely of a wrong type).
        auto ref_missing = [](const Node* item, const std::string& value, const char* f) {
            return value.empty() && (item == nullptr || missing(item->get(f)));
        };

        for (const auto& r : csv.owned_crds) {
            SourcePos p = ref_pos(r);
            const Node* item = item_at(owned_list, r.pos);
            if (r.name.empty()) {
                if (ref_missing(item, r.name, "name"))
                    error("crd.owned", "an owned CRD entry of the CSV has no name", p);
                continue;
            }
            std::string who = "owned CRD " + q(r.name);
            if (!group_of_crd_name(r.name))
                error("crd.owned", who + " is not named <plural>.<group>", p);
            if (ref_missing(item, r.version, "version"))
                error("crd.owned", who + " has no version", p);
            if (ref_missing(item, r.kind, "kind")) error("crd.owned", who + " has no kind", p);
            const CrdInfo* crd = find_crd(r.name);
            if (crd == nullptr && manifests_unreadable) continue; // maybe in the unread file
            if (crd == nullptr) {
                error("crd.owned",
                      who + " (" +
                          gvk_text(group_of_crd_name(r.name).value_or(""), r.version, r.kind) +
                          ") is not in the bundle: no CustomResourceDefinition of that name in "
                          "manifests/",
                      p);
                continue;
            }
            if (!r.kind.empty() && !crd->kind.empty() && r.kind != crd->kind)
                error("crd.owned",
                      who + " has kind " + q(r.kind) + " in the CSV but " + q(crd->kind) +
                          " in its CustomResourceDefinition",
                      p);
            if (!r.version.empty() && !crd->versions.empty() &&
                std::find(crd->versions.begin(), crd->versions.end(), r.version) ==
                    crd->versions.end())
                error("crd.owned",
                      who + " has version " + q(r.version) +
                          ", which is not a version of its CustomResourceDefinition (" +
                          text::join(crd->versions, ", ") + ")",
                      p);
        }

        for (const auto& crd : b_.crds) {
            bool owned = std::any_of(csv.owned_crds.begin(), csv.owned_crds.end(),
                                     [&](const CrdRef& r) { return r.name == crd.name; });
            if (!owned && crd.manifest < b_.manifests.size())
                error("crd.not-owned",
                      "CRD " + q(crd.name) +
                          " is in the bundle but the CSV does not own it "
                          "(spec.customresourcedefinitions.owned)",
                      manifest_pos(b_.manifests[crd.manifest]));
        }

        std::set<std::string> warned;
        for (const auto& r : csv.required_crds) {
            SourcePos p = ref_pos(r);
            const Node* item = item_at(required_list, r.pos);
            if (r.name.empty()) {
                if (ref_missing(item, r.name, "name"))
                    error("crd.required", "a required CRD entry of the CSV has no name", p);
                continue;
            }
            std::string who = "required CRD " + q(r.name);
            if (!group_of_crd_name(r.name))
                error("crd.required", who + " is not named <plural>.<group>", p);
            if (ref_missing(item, r.version, "version"))
                error("crd.required", who + " has no version", p);
            if (ref_missing(item, r.kind, "kind")) error("crd.required", who + " has no kind", p);
            bool owned = std::any_of(csv.owned_crds.begin(), csv.owned_crds.end(),
                                     [&](const CrdRef& o) { return o.name == r.name; });
            if (owned && warned.insert(r.name).second)
                warn("crd.owned-and-required",
                     "the CSV both owns and requires CRD " + q(r.name) +
                         ": the requirement is met by the bundle itself",
                     p);
        }
    }

    // ---- manifests --------------------------------------------------------------------------

    void check_manifests() {
        using Key = std::tuple<std::string, std::string, std::string, std::string>;
        std::map<Key, const Manifest*> seen;
        std::map<std::string, int> documents; // file -> highest document index + 1
        std::vector<std::string> file_order;
        for (const auto& m : b_.manifests) {
            auto [dit, fresh_file] = documents.emplace(m.file, 0);
            if (fresh_file) file_order.push_back(m.file);
            dit->second = std::max(dit->second, m.document + 1);
            dit->second = std::max(dit->second, 1);

            SourcePos p = manifest_pos(m);
            const std::string what = m.kind.empty() ? std::string("object") : m.kind;
            if (m.kind.empty() && missing(m.object.get("kind")))
                error("manifests.object", "object has no kind", p);
            if (m.api_version.empty() && missing(m.object.get("apiVersion")))
                error("manifests.object", what + " has no apiVersion", p);
            const Node* meta = m.object.get("metadata");
            if (m.name.empty() && (meta == nullptr || meta->is_null()))
                error("manifests.object", what + " has no metadata", p);
            else if (m.name.empty() && meta->is_map() && missing(meta->get("name")))
                error("manifests.object", what + " has no metadata.name", at(m, meta));
            if (!m.kind.empty() && std::find(k_supported_kinds.begin(), k_supported_kinds.end(),
                                             m.kind) == k_supported_kinds.end())
                error("manifests.kind",
                      "kind " + q(m.kind) +
                          " cannot be installed by OLM from a registry+v1 bundle (it installs " +
                          text::join(k_supported_kinds, ", ") + ")",
                      at(m, m.object.at_path({"kind"})));
            if (m.kind.empty() || m.name.empty()) continue;
            const Node* ns = m.object.at_path({"metadata", "namespace"});
            std::string nss = ns != nullptr && ns->is_scalar() ? ns->text : "";
            Key key{group_of(m.api_version), m.kind, nss, m.name};
            auto [it, fresh] = seen.emplace(key, &m);
            if (!fresh)
                error("manifests.duplicate",
                      m.kind + " " + q(m.name) + " is defined twice: also at " +
                          manifest_pos(*it->second).str(),
                      p);
        }
        for (const auto& f : file_order) {
            if (!load_rules_) break;
            int n = documents[f];
            if (n > 1) {
                SourcePos p;
                p.file = f;
                warn("manifests.multi-document",
                     "file holds " + std::to_string(n) +
                         " documents; opm reads only the first document of each manifests file, "
                         "so it leaves out the others",
                     p);
            }
        }
    }

    // ---- removed Kubernetes APIs -------------------------------------------------------------

    void check_removed_apis() {
        // The CSV's minKubeVersion: the bundle says it needs that release or later.
        std::optional<KubeRelease> min_kube;
        if (b_.csv && !b_.csv->min_kube_version.empty())
            min_kube = parse_kube_release(b_.csv->min_kube_version);
        for (const auto& m : b_.manifests) {
            if (m.api_version.empty() || m.kind.empty()) continue;
            for (const RemovedApi& r : k_removed_apis) {
                if (m.api_version != r.api_version || m.kind != r.kind) continue;
                const std::string rel = release_text(r.removed_in);
                std::string msg = m.kind + (m.name.empty() ? std::string() : " " + q(m.name)) +
                                  " uses " + r.api_version + ", which Kubernetes " + rel +
                                  " no longer serves";
                msg += *r.use != '\0' ? std::string("; use ") + r.use : "; it has no successor";
                bool err = false;
                if (k8s_version && *k8s_version >= r.removed_in) {
                    msg += " (checked for Kubernetes " + release_text(*k8s_version) + ")";
                    err = true;
                } else if (min_kube && *min_kube >= r.removed_in) {
                    msg += " (the CSV's spec.minKubeVersion is " + b_.csv->min_kube_version +
                           ", so no cluster the bundle supports serves it)";
                    err = true;
                }
                const SourcePos p = at(m, m.object.get("apiVersion"));
                if (err)
                    error("manifests.removed-api", std::move(msg), p);
                else
                    warn("manifests.removed-api", std::move(msg), p);
                break;
            }
        }
    }

    // ---- dependencies and properties --------------------------------------------------------

    struct TypedCtx {
        const TypedValue* tv;
        std::string family; // "dependencies" or "properties"
        bool use_marks;
    };

    SourcePos typed_pos(const TypedCtx& c, const Node* n) const {
        if (c.use_marks && n != nullptr && n->mark.line != 0 && !c.tv->pos.file.empty())
            return io::pos_of(c.tv->pos.file, n->mark, c.tv->pos.document);
        return c.tv->pos;
    }

    // A required non-empty string field of `value`; false (with a finding) when it is not one.
    bool require_string(const TypedCtx& c, const Node& value, const char* field,
                        const std::string& rule, const std::string& what,
                        const std::string& hint = {}) {
        const Node* f = value.get(field);
        if (f == nullptr || f->is_null()) {
            error(rule, what + " has no " + q(field) + hint, typed_pos(c, &value));
            return false;
        }
        if (!f->is_string()) {
            error(rule,
                  what + " field " + q(field) + " must be a string, not " + io::kind_name(f->kind),
                  typed_pos(c, f));
            return false;
        }
        if (text::trim(f->text).empty()) {
            error(rule, what + " field " + q(field) + " is empty", typed_pos(c, f));
            return false;
        }
        return true;
    }

    void check_range_field(const TypedCtx& c, const Node& value, const char* field,
                           const std::string& rule, const std::string& what,
                           const std::string& hint = {}) {
        if (!require_string(c, value, field, rule, what, hint)) return;
        const Node* f = value.get(field);
        auto r = semver::Range::parse(f->text);
        if (!r)
            error(rule, what + " " + field + ": " + r.error().message, typed_pos(c, f));
        else
            for (const auto& w : r->warnings())
                warn(rule, what + " " + field + " " + q(f->text) + ": " + w, typed_pos(c, f));
    }

    void check_typed(const TypedValue& tv, const std::string& family, bool use_marks,
                     const std::string& source = {}) {
        TypedCtx c{&tv, family, use_marks};
        const bool dep = family == "dependencies";
        const std::string base = dep ? "dependency" : "property";
        const std::string noun = base + source;
        if (text::trim(tv.type).empty()) {
            error(family + ".entry", "a " + base + " entry" + source + " has no type", tv.pos);
            return;
        }
        const std::string& t = tv.type;
        const std::string what = t + " " + noun;
        static const std::vector<std::string> dep_types = {"olm.gvk", "olm.package", "olm.label",
                                                           "olm.constraint"};
        static const std::vector<std::string> object_props = {"olm.gvk",     "olm.gvk.required",
                                                              "olm.package", "olm.package.required",
                                                              "olm.label",   "olm.constraint"};
        bool known =
            dep ? std::find(dep_types.begin(), dep_types.end(), t) != dep_types.end()
                : std::find(object_props.begin(), object_props.end(), t) != object_props.end();
        if (dep && !known) {
            std::string msg = "unknown dependency type " + q(t) +
                              ": OLM resolves olm.gvk, olm.package, olm.label and olm.constraint";
            if (auto cand = text::closest(t, dep_types)) msg += "; did you mean " + q(*cand) + "?";
            error("dependencies.type", msg, tv.pos);
            return;
        }
        if (tv.value.is_null()) {
            error(family + ".entry", "the " + what + " has no value", tv.pos);
            return;
        }
        if (!known) return; // a custom property: any value
        if (!tv.value.is_map()) {
            error(family + ".entry",
                  "the value of the " + what + " must be an object, not " +
                      io::kind_name(tv.value.kind),
                  typed_pos(c, &tv.value));
            return;
        }
        const Node& v = tv.value;
        if (t == "olm.gvk" || t == "olm.gvk.required") {
            std::string rule = family + ".gvk";
            for (const char* f : {"group", "version", "kind"})
                require_string(c, v, f, rule, what);
        } else if (t == "olm.package") {
            std::string rule = family + ".package";
            require_string(c, v, "packageName", rule, what);
            if (dep) {
                std::string hint = v.get("versionRange") != nullptr
                                       ? " (a dependency spells its range \"version\")"
                                       : "";
                check_range_field(c, v, "version", rule, what, hint);
            } else if (require_string(c, v, "version", rule, what)) {
                const Node* f = v.get("version");
                if (auto ver = semver::Version::parse(f->text); !ver)
                    error(rule, what + " version: " + ver.error().message, typed_pos(c, f));
            }
        } else if (t == "olm.package.required") {
            std::string rule = family + ".package";
            require_string(c, v, "packageName", rule, what);
            check_range_field(c, v, "versionRange", rule, what);
        } else if (t == "olm.label") {
            require_string(c, v, "label", family + ".label", what);
        } else if (t == "olm.constraint") {
            check_constraint(v, family + ".constraint", tv.pos, use_marks, out_);
        }
    }
};

// ---- olm.constraint ---------------------------------------------------------------------------

// A problem of the model's constraint grammar in validation's words: "olm.constraint.all.
// constraints[0].gvk has no \"kind\"". Problems OLM accepts are reported too: an empty or missing
// constraints list as an error (a compound of nothing is surely a mistake), a deprecated "none",
// a range quirk and a key that matches only when case is ignored as warnings.
Finding constraint_finding(const model::ConstraintProblem& p) {
    using Code = model::ConstraintProblem::Code;
    const std::string who = p.path.empty() ? "olm.constraint" : "olm.constraint." + p.path;
    Finding f;
    f.severity = Severity::error;
    switch (p.code) {
    case Code::too_large:
        f.message = "olm.constraint is " + std::to_string(p.bytes) +
                    " bytes as JSON, more than OLM's limit of " +
                    std::to_string(model::max_constraint_bytes) + " bytes";
        break;
    case Code::too_deep:
        f.message = who + " nests compound constraints deeper than " +
                    std::to_string(model::max_constraint_depth) + " levels";
        break;
    case Code::not_object:
        f.message = who + " must be an object, not " + io::kind_name(p.found);
        break;
    case Code::wrong_type: {
        // "an object" -> "object": the bodies are named by their own path.
        const std::string want = p.want.substr(p.want.find(' ') + 1);
        f.message = (want == "object" ? who + "." + p.field : who + " " + p.field) + " must be " +
                    p.want + ", not " + io::kind_name(p.found);
        break;
    }
    case Code::unknown_field:
        f.message = who + " has unknown field " + q(p.key) + " (OLM refuses unknown fields)";
        if (auto c = text::closest(p.key, p.allowed)) f.message += "; did you mean " + q(*c) + "?";
        break;
    case Code::duplicate_field:
        f.message = who + ": " + q(p.other) + " and " + q(p.key) + " name the same field";
        break;
    case Code::case_variant:
        f.severity = Severity::warning;
        f.message = who + " field " + q(p.key) + " is read as " + q(p.field) +
                    " only because OLM matches keys case-insensitively; write " + q(p.field);
        break;
    case Code::empty_constraint:
        f.message = who + " has none of gvk, package, cel, all, any, not: it constrains nothing";
        break;
    case Code::several_kinds:
        f.message = who + " has both " + q(p.written.at(0)) + " and " + q(p.written.at(1)) +
                    ": a constraint is exactly one of gvk, package, cel, all, any, not";
        break;
    case Code::none_deprecated:
        f.severity = Severity::warning;
        f.message = who + " uses \"none\", a deprecated spelling of \"not\"";
        break;
    case Code::missing:
        f.message = who + " has no " + q(p.field);
        break;
    case Code::empty:
        f.message = who + " " + p.field + " is empty";
        break;
    case Code::bad_range:
        f.message = who + " " + p.field + ": " + p.detail;
        break;
    case Code::range_warning:
        f.severity = Severity::warning;
        f.message = who + " " + p.field + " " + q(p.value) + ": " + p.detail;
        break;
    case Code::rule_compile:
        // The resolver compiles the rule and fails on one that does not compile: so does
        // validation, naming the column in the rule.
        f.message = who + " " + p.field + " does not compile: " + p.detail;
        break;
    case Code::no_constraints:
        f.message = who + " has no \"constraints\" list";
        break;
    case Code::empty_constraints:
        f.message = who + " constraints is empty";
        break;
    }
    return f;
}

std::tuple<int, std::string, std::uint32_t, std::uint32_t> sort_key(const Finding& f) {
    return {f.pos.file.empty() ? 1 : 0, f.pos.file, f.pos.line, f.pos.column};
}

void finish(std::vector<Finding>& v, const ValidateOptions& opts) {
    std::stable_sort(v.begin(), v.end(),
                     [](const Finding& a, const Finding& b) { return sort_key(a) < sort_key(b); });
    std::set<std::tuple<std::string, std::string, std::string, std::string>> seen;
    std::vector<Finding> out;
    out.reserve(v.size());
    for (auto& f : v) {
        if (!seen.emplace(f.rule, f.pos.str(), f.subject, f.message).second) continue;
        if (opts.strict) f.severity = Severity::error;
        out.push_back(std::move(f));
    }
    v = std::move(out);
}

} // namespace

const std::vector<RuleInfo>& rules() {
    return k_rules;
}

const std::vector<RemovedApi>& removed_apis() {
    return k_removed_apis;
}

std::optional<KubeRelease> parse_kube_release(std::string_view s) {
    auto v = semver::Version::parse_tolerant(s);
    if (!v || v->major > 1000 || v->minor > 100000) return std::nullopt;
    return KubeRelease{static_cast<unsigned>(v->major), static_cast<unsigned>(v->minor)};
}

const std::vector<std::string>& supported_kinds() {
    return k_supported_kinds;
}

void check_constraint(const io::Node& value, const std::string& rule, const SourcePos& fallback,
                      bool use_marks, std::vector<Finding>& out) {
    const model::ConstraintCheck check = model::check_constraint(value);
    for (const auto& p : check.problems) {
        Finding f = constraint_finding(p);
        f.rule = rule;
        f.pos = use_marks && p.mark.line != 0 && !fallback.file.empty()
                    ? io::pos_of(fallback.file, p.mark, fallback.document)
                    : fallback;
        out.push_back(std::move(f));
    }
}

std::vector<Finding> validate(const Bundle& bundle, const ValidateOptions& opts) {
    std::vector<Finding> out;
    Checker checker(bundle, out, true);
    checker.k8s_version = opts.k8s_version;
    checker.run();
    finish(out, opts);
    return out;
}

std::vector<Finding> validate(const Loaded& loaded, const ValidateOptions& opts) {
    std::vector<Finding> out = loaded.findings;
    Checker checker(loaded.bundle, out, false);
    checker.k8s_version = opts.k8s_version;
    const std::string metadata_dir = (loaded.bundle.dir / "metadata").string();
    const std::string manifests_dir = (loaded.bundle.dir / "manifests").string() + "/";
    for (const auto& f : loaded.findings) {
        if (f.severity != Severity::error) continue;
        if (text::starts_with(f.rule, "load.") && text::starts_with(f.pos.file, metadata_dir))
            checker.metadata_unreadable = true;
        // A file of manifests/ left unread: not read (load.read, load.link) or not parsed.
        if ((f.rule == "load.read" || f.rule == "load.link" || f.rule == "load.parse") &&
            text::starts_with(f.pos.file, manifests_dir))
            checker.manifests_unreadable = true;
    }
    checker.run();
    finish(out, opts);
    return out;
}

std::string format(const Finding& f, std::string_view fallback) {
    std::string loc = f.pos.str();
    if (loc.empty()) loc = std::string(fallback);
    std::string s;
    if (!loc.empty()) s += loc + ": ";
    s += severity_name(f.severity);
    s += ": ";
    if (f.pos.line == 0 && !f.subject.empty()) s += f.subject + ": ";
    s += f.message;
    if (!f.rule.empty()) s += " [" + f.rule + "]";
    return s;
}

} // namespace kpkg::bundle
