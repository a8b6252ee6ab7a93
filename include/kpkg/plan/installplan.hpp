// The InstallPlan OLM would create for a resolution (operators.coreos.com/v1alpha1), built
// offline from the catalogs, the resolver's answer and each selected bundle's contents.
//
// What OLM writes and kpkg reproduces (../shared/design/OLM.md, "InstallPlan — what OLM
// writes"):
//  - One InstallPlan for the namespace: metadata.generateName "install-", a non-blocking owner
//    reference to every Subscription it covers (the requests and, with --upgrade, the installed
//    operators; each named after its package); spec {clusterServiceVersionNames (the CSV steps
//    in step order), approval, approved (approval is Automatic), generation 1}; status {phase
//    Installing, or RequiresApproval when Manual; catalogSources; plan}.
//  - Steps in the order OLM stores them for image bundles: first a Subscription step for every
//    dependency no request asked for, named <package>-<channel>-<catalog>-<catalogNamespace>
//    and pinned (startingCSV) to the resolved bundle; then per bundle, in the resolver's order
//    (by package): the CSV (in the plan's namespace, spec.replaces set to the channel entry's
//    replaces on a fresh install or to the installed CSV on an upgrade, annotation
//    operatorframework.io/properties holding the bundle's catalog properties but
//    olm.bundle.object), the bundle's other manifests in sorted file-name order (a Secret's step
//    kind is BundleSecret), then the RBAC of the CSV's deployment install strategy per service
//    account — sorted by name, where OLM's order is a Go map's — ServiceAccount (not for
//    "default"), Roles, RoleBindings, ClusterRoles, ClusterRoleBindings.
//  - RBAC names and labels as OLM's rbac.go makes them (see rbac_name below).
//  - Every manifest is a JSON string ending in a newline, as Kubernetes' serializer writes it:
//    bundle objects with their keys sorted (as an unstructured object); the objects OLM makes
//    (Subscription, ServiceAccount, Role, RoleBinding, ClusterRole, ClusterRoleBinding) with
//    the fields of their Go types in declaration order and without kind/apiVersion (the step's
//    group, version and kind say what they are), as OLM stores them.
// Data for trees of manifests (GitOps output) is kept apart from its rendering: Plan::operators
// and the steps hold every object, InstallPlan rendering is install_plan_node().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/model/catalog.hpp"
#include "kpkg/resolve/resolve.hpp"

namespace kpkg::plan {

// --- bundle contents ---------------------------------------------------------------------------

// Where a bundle's manifests came from.
enum class ContentSource : std::uint8_t { directory, image, catalog };
const char* content_source_name(ContentSource s); // "directory", "image", "catalog"

// One object of a bundle's manifests/ directory.
struct BundleObject {
    // manifests/<name> for a file of a directory or an image; "olm.bundle.object[N]" (the Nth
    // such property, from 0) for an object of the catalog.
    std::string file;
    int document = 0;
    io::Node object;
};

struct BundleContents {
    ContentSource source = ContentSource::directory;
    std::string origin;                // the directory or image reference; the catalog's name
    std::vector<BundleObject> objects; // in the order they were found
};

// The objects of the bundle `tree` holds (a directory or an image's root): every document of
// manifests/. Errors: the tree is no bundle, a file cannot be read (exit 1) or does not parse
// (exit 3), each naming the file.
Result<BundleContents> contents_from_tree(const io::Tree& tree, ContentSource source,
                                          std::string origin);

// The objects of the bundle's olm.bundle.object properties (base64 JSON), in property order;
// nothing when it has none. The catalog must be loaded with keep_payloads. Errors (exit 3): a
// payload that is not base64 of a JSON object, naming the bundle.
Result<std::optional<BundleContents>> contents_from_catalog(const model::Catalog& catalog,
                                                            const model::Bundle& bundle,
                                                            const std::string& catalog_name);

// How to get the contents of the resolved bundles, first source first:
//  1. bundle_dirs: bundle (CSV) name -> directory given by the user;
//  2. open_image, when set: the bundle image's root as a tree (the caller pulls or reads the
//     image, or fails: a pull error, an image not in the cache when offline);
//  3. the catalog's olm.bundle.object properties, with a warning that the image is
//     authoritative.
struct GatherOptions {
    std::map<std::string, std::string> bundle_dirs;
    std::function<Result<std::unique_ptr<io::Tree>>(const std::string& image)> open_image;
};

struct GatheredContents {
    std::map<std::string, BundleContents> bundles; // by bundle name
    std::vector<std::string> warnings;
};

// The contents of every selected bundle. A --bundle-dir naming no selected bundle is a usage
// error (exit 2); a directory that is no bundle or does not hold the bundle it is given for is
// invalid input (exit 3). Bundles whose contents cannot be had from any source are an error
// (exit 1) naming each with why (never are manifests made up).
Result<GatheredContents> gather_contents(const std::vector<resolve::CatalogSource>& catalogs,
                                         const resolve::Resolution& resolution,
                                         const GatherOptions& opts);

// --- the plan ----------------------------------------------------------------------------------

enum class Approval : std::uint8_t { automatic, manual };
const char* approval_name(Approval a); // "Automatic", "Manual"
// "Automatic" or "Manual" (exit 2 otherwise, naming the flag).
Result<Approval> parse_approval(std::string_view s);

// A Kubernetes namespace name: a DNS-1123 label (at most 63 characters of [a-z0-9-], starting
// and ending with a letter or digit). Usage error (exit 2) naming `flag` and saying why.
Result<void> check_namespace(std::string_view ns, std::string_view flag);

struct PlanOptions {
    std::string namespace_name;
    Approval approval = Approval::automatic;
    // The namespace of the CatalogSources (a Subscription's spec.sourceNamespace); OLM's global
    // catalog namespace upstream is "olm" ("openshift-marketplace" on OpenShift).
    std::string catalog_namespace = "olm";
};

// One step of status.plan.
struct Step {
    std::string resolving; // the CSV the step belongs to
    std::string source_name, source_namespace;
    std::string group, version, kind, name;
    std::string manifest; // JSON text ending in "\n"
    std::string status = "Unknown";
};

// A resolved operator in the plan.
struct PlannedOperator {
    resolve::Selected selected;
    bool dependency = false;  // no Subscription asked for it: the plan creates one
    std::string subscription; // the Subscription's name (an existing one's or the plan's)
    ContentSource source = ContentSource::directory;
    std::string origin;
    std::size_t first_step = 0, step_count = 0; // its steps (the Subscription step excluded)
    // The bundle's CSV as the bundle has it, and its other objects in step order (for trees).
    io::Node csv;
    std::vector<io::Node> objects;
};

struct InstallPlan {
    std::string namespace_name;
    Approval approval = Approval::automatic;
    std::string catalog_namespace;
    std::vector<std::string> csv_names;     // spec.clusterServiceVersionNames
    std::vector<std::string> subscriptions; // the Subscriptions it covers, sorted
    std::vector<std::string> catalog_sources;
    std::vector<Step> steps;
    std::vector<PlannedOperator> operators; // in step order
    std::vector<std::string> unchanged;     // installed CSVs the plan leaves as they are
    std::vector<std::string> warnings;
};

// The InstallPlan of a satisfiable resolution of `request`. Errors: invalid input (exit 3) when a
// bundle has no ClusterServiceVersion, an install strategy other than "deployment", a manifest
// without kind or name, or objects of kinds OLM does not create (PodMonitor, Deployment, ...):
// every such object is listed with its bundle and file; a bundle without contents is an
// internal error (gather_contents reports those).
Result<InstallPlan> make_install_plan(const std::vector<resolve::CatalogSource>& catalogs,
                                      const resolve::Request& request,
                                      const resolve::Resolution& resolution,
                                      const std::map<std::string, BundleContents>& contents,
                                      const PlanOptions& opts);

// The kinds OLM's InstallPlan execution creates (catalog/operator.go ExecutePlan).
bool olm_creates(std::string_view kind);

// The InstallPlan object (apiVersion, kind, metadata, spec, status).
io::Node install_plan_node(const InstallPlan& plan);
// A summary for people: the operators (bundle, version, channel, catalog, why, where their
// contents came from), the number of steps per kind, and the warnings.
std::string install_plan_text(const InstallPlan& plan);

// --- OLM's RBAC naming (pkg/controller/registry/resolver/rbac.go) -------------------------------

// base62 (0-9a-zA-Z, most significant digit first) of the SHA-224 of `bytes`.
std::string base62_sha224(std::string_view bytes);
// `base` + "-" + `hash`, `base` first cut to 63 - len(hash) - 1 bytes when base and hash
// together are longer than 63 (as OLM does, a base of exactly 63 - len(hash) bytes is kept).
std::string rbac_name(std::string_view base, std::string_view hash);

} // namespace kpkg::plan
