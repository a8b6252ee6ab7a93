// The phased apply engine: objects read from manifests, plan trees and Package Operator packages,
// applied to a cluster phase by phase with server-side apply, each phase waited for until its
// objects are ready (by watching them), recorded as a kubectl ApplySet (KEP-3659) so that what
// left the input can be pruned; and the reverse, deleting in reverse phase order.
//
// Everything here talks to the cluster through kube::Api only (api.hpp), so tests drive it with
// an in-memory Api.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kpkg/core/duration.hpp"
#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/kube/api.hpp"

namespace kpkg::io {
class Tree;
}

namespace kpkg::kube {

// --- input -----------------------------------------------------------------------------------

// One object of the input, as JSON.
struct InputObject {
    io::Node object;
    SourcePos pos; // where it starts (file:line), or the package file it was rendered from
};

struct InputPhase {
    std::string name;
    std::vector<InputObject> objects;
};

// A Package Operator availability probe (spec.availabilityProbes[]).
struct AvailabilityProbe {
    std::string group, kind; // selector.kind
    io::Node selector;       // selector.selector: a label selector, or null (every object)
    io::Node probes;         // the probes: [{condition|fieldsEqual|cel}]
};

struct Input {
    // Plain manifests and plan trees: placed in the default phases (default_phase()).
    std::vector<InputObject> plain;
    // Package Operator packages: each its phases in manifest order, after the plain objects.
    struct Package {
        std::string name;
        std::vector<InputPhase> phases;
        std::vector<AvailabilityProbe> probes;
    };
    std::vector<Package> packages;
};

struct SourceOptions {
    // A Package Operator package's configuration file (--config), YAML or JSON.
    std::string config_path;
    // The namespace a namespaced Package is rendered in ("" = cluster scope).
    std::string ns;
};

// What a source is: a YAML/JSON file or a directory of manifests (every .yaml, .yml and .json
// file below it, in path order; multi-document; List kinds unpacked), a tree written by `kpkg plan
// --output-dir` (its kustomization.yaml's resources, in that order), or a Package Operator
// package (a directory with manifest.yaml: rendered with the configuration, by phase).
// Appends to `into`. Errors: what does not parse (file:line, exit 3), what cannot be read (1).
Result<void> read_source(const io::Tree& tree, const SourceOptions& opts, Input& into);

// --- phases ----------------------------------------------------------------------------------

// The default phases, in order: namespaces, crds, config (ServiceAccounts, RBAC, ConfigMaps,
// Secrets, Services and the other core configuration kinds), workloads, webhooks (admission
// webhook configurations and policies, APIServices), operatorgroups, catalogsources,
// subscriptions (OLM's objects), custom-resources (anything else).
const std::vector<std::string>& default_phases();
// The index in default_phases() of an object of this group and kind.
std::size_t default_phase(const std::string& group, const std::string& kind);

// --- readiness -------------------------------------------------------------------------------

struct Readiness {
    enum class State : std::uint8_t { ready, waiting, failed };
    State state = State::waiting;
    std::string reason; // why not ready (or why it failed); "" when ready

    bool ready() const { return state == State::ready; }
    bool failed() const { return state == State::failed; }
};

// Whether a live object is ready, by its kind (Deployment, StatefulSet, DaemonSet, Job, Pod,
// CustomResourceDefinition, ClusterServiceVersion, APIService; anything else once present).
// Failures that are no waits: a Deployment past its progress deadline, a Job Failed, a CSV
// Failed, a CRD whose names were not accepted.
Readiness readiness(const io::Node& live);

// Package Operator's availability: every probe selecting the object (by kind and label selector)
// passes; an object no probe selects is available. Errors of a probe (a CEL rule that does not
// compile) fail.
Readiness probe_readiness(const io::Node& live, const std::vector<AvailabilityProbe>& probes);

// Whether labels (a map, or null) match a Kubernetes label selector ({matchLabels,
// matchExpressions}); a null or empty selector matches everything.
bool selector_matches(const io::Node& selector, const io::Node* labels);

// --- ApplySet (KEP-3659) -----------------------------------------------------------------------

inline constexpr const char* kApplySetIdLabel = "applyset.kubernetes.io/id";
inline constexpr const char* kApplySetPartOfLabel = "applyset.kubernetes.io/part-of";
inline constexpr const char* kApplySetToolingAnnotation = "applyset.kubernetes.io/tooling";
inline constexpr const char* kApplySetKindsAnnotation =
    "applyset.kubernetes.io/contains-group-kinds";
inline constexpr const char* kApplySetNamespacesAnnotation =
    "applyset.kubernetes.io/additional-namespaces";

// kubectl's ApplySet id of a parent: "applyset-" + unpadded base64url of the SHA-256 of
// "<name>.<namespace>.<kind>.<group>" + "-v1".
std::string applyset_id(const std::string& name, const std::string& ns, const std::string& kind,
                        const std::string& group);

// --applyset [RESOURCE[.GROUP]/]NAME: the resource (default "secrets") and group, and the name.
struct ApplySetRef {
    std::string resource = "secrets";
    std::string group;
    std::string name;
};
Result<ApplySetRef> parse_applyset_ref(const std::string& text);

// --- the engine ------------------------------------------------------------------------------

enum class DryRun : std::uint8_t { none, client, server };

struct Progress {
    enum class Kind : std::uint8_t { phase, applied, waiting, ready, pruned, deleted, note };
    Kind kind = Kind::note;
    std::string text; // one line, for people
};

struct RunOptions {
    DryRun dry_run = DryRun::none;
    bool diff = false; // server dry run, then a diff against the live objects
    bool wait = true;
    bool force_conflicts = false;
    bool prune = false;
    std::string applyset; // --applyset [RESOURCE[.GROUP]/]NAME
    // The namespace of namespaced objects naming none ("" = error for such objects); the
    // ApplySet parent's namespace.
    std::string ns;
    // The whole run: its requests and their retries, credential plugins and waits (set on the
    // Api with set_deadline for the length of the run); 0 = no limit.
    std::chrono::milliseconds timeout{0};
    int concurrency = 8;
    std::string tooling = "kpkg/v0"; // applyset.kubernetes.io/tooling
    // Set (by a signal handler) to stop after the requests in flight.
    const std::atomic<bool>* interrupted = nullptr;
    // Re-watch at least this often (for interruptions to be seen while nothing happens). A
    // watch that ends early (before half of this, or of the time left) with no event is opened
    // again only after a back-off: 100 ms, doubling up to 5 s, back to none after a watch that
    // delivered events or lived its time.
    std::chrono::milliseconds watch_slice{2000};
    std::function<void(const Progress&)> progress;
};

// What happened to one object.
struct ObjectReport {
    std::string api_version, kind, ns, name;
    std::string phase;
    // created | configured | unchanged | pruned | deleted | dry-run | "" (not applied)
    std::string action;
    bool ready = false;
    std::string reason; // why not ready, what a dry run found, why it was not applied
    std::string diff;   // --diff: the unified diff ("" when equal)
};

struct RunReport {
    std::vector<ObjectReport> objects; // in phase order (prune and delete: in deletion order)
    bool differs = false;              // --diff found differences
    bool interrupted = false;
    std::optional<Error> error; // the run failed (the objects say how far it got)
};

// Applies the input phase by phase. Every check that can be made before writing is made first
// (exit 3: apiVersion/kind/name missing, a kind the server does not serve and no CRD of the
// input defines, a namespaced object without a namespace, an object given twice, a custom
// resource in an earlier phase than its CRD): then nothing is written.
RunReport apply(Api& api, const Input& input, const RunOptions& opts);

// Deletes the input's objects (or, with input null, the members of opts.applyset and then its
// parent) in reverse phase order, waiting for each phase's objects to be gone.
RunReport remove(Api& api, const Input* input, const RunOptions& opts);

// "deployment/etcd-operator": how messages name an object.
std::string object_name(const std::string& kind, const std::string& name);

} // namespace kpkg::kube
