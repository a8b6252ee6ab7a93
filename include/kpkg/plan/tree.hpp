// GitOps trees of a plan: the files to commit so that a cluster installs the planned operators.
//
// Two formats:
//  - olm: for clusters with OLM. common/ holds the Namespace, its OperatorGroup (target
//    namespaces, checked against every planned CSV's install modes as OLM checks them) and a
//    CatalogSource per catalog the planned operators come from (OLM resolves their dependencies
//    there again); <package>/ holds the Subscription of each
//    requested package, startingCSV pinned to the resolved CSV, with the approval asked for
//    (OLM resolves the dependencies itself).
//  - manifests: for clusters without OLM, the objects OLM v1 (operator-controller) makes of a
//    registry+v1 bundle: common/ holds the Namespace; <package>/ holds, per operator in
//    dependency order, its CRDs, ServiceAccounts, Roles and RoleBindings per target namespace,
//    ClusterRoles and ClusterRoleBindings (the namespaced permissions too when all namespaces are
//    targeted), the bundle's other objects and the Deployments of the CSV's install strategy;
//    with a certificate provider, what its webhooks need (src/plan/webhooks.hpp).
// One file per object, <kind>-<name>.yaml (kind in lower case; a namespaced object outside the
// install namespace is <kind>-<namespace>-<name>.yaml), and kustomization.yaml listing them in
// apply order with sortOptions.order fifo (kustomize otherwise reorders by kind).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/plan/installplan.hpp"

namespace kpkg::plan {

enum class TreeFormat : std::uint8_t { olm, manifests };
// Who provides the serving certificates of webhooks in the manifests format.
enum class CertProvider : std::uint8_t { none, cert_manager, openshift_service_ca };
// "cert-manager" or "openshift-service-ca" (exit 2 otherwise).
Result<CertProvider> parse_cert_provider(std::string_view s);
// "olm" or "manifests" (exit 2 otherwise, naming the flag).
Result<TreeFormat> parse_tree_format(std::string_view s);

struct TreeOptions {
    TreeFormat format = TreeFormat::olm;
    // The namespaces the operators watch; empty: all namespaces.
    std::vector<std::string> target_namespaces;
    // The image of each catalog's CatalogSource (olm format), by catalog name.
    std::map<std::string, std::string> catalog_images;
    // argocd.argoproj.io/sync-wave annotations on every object.
    bool sync_waves = false;
    // The manifests format: webhooks are refused without a certificate provider.
    CertProvider cert_provider = CertProvider::none;
};

struct TreeFile {
    std::string path; // relative, '/'-separated
    std::string content;
};

struct GitOpsTree {
    // The objects' files in apply order, then kustomization.yaml.
    std::vector<TreeFile> files;
};

// The tree of `plan` (made with make_install_plan, whose operators hold their CSV and objects).
// Errors: target namespaces an operator's install modes do not allow, or none given when one
// does not support all namespaces (exit 2, naming the bundle and its modes); a catalog without
// --catalog-image in the olm format (exit 2); two bundles owning the same CRD, and in the
// manifests format what OLM v1 refuses: webhooks without a certificate provider or failing its
// checks, APIServices (exit 3, naming the bundle).
Result<GitOpsTree> make_tree(const InstallPlan& plan, const TreeOptions& opts);

// The name of the file listing the files of a tree kpkg wrote (one relative path a line).
inline constexpr const char* owned_list = ".kpkg-plan";

struct TreeChanges {
    std::vector<std::string> added, changed, removed;
    std::size_t unchanged = 0;
    bool empty() const { return added.empty() && changed.empty() && removed.empty(); }
};

struct WriteOptions {
    bool check = false; // compare only, write nothing
    bool force = false; // write even when the directory holds files kpkg does not own
};

// Writes `tree` to `dir`, all or nothing: the new directory is built beside `dir` and swapped in
// (files kpkg does not own, with --force, are carried over; symbolic links as links, named as
// themselves). Files kpkg wrote before (listed in dir/.kpkg-plan) that the tree no longer has are
// removed. With check, only compares. Errors: a symbolic link where the tree writes a file or
// below which it writes one (exit 2, naming it; force or not: a link is never replaced or
// written through); `dir` holds files not listed in .kpkg-plan and force is off (exit 2, naming
// them); `dir` is not a directory (exit 2); I/O (exit 1).
Result<TreeChanges> write_tree(const std::filesystem::path& dir, const GitOpsTree& tree,
                               const WriteOptions& opts);

// "base36 of SHA-224" as Go's big.Int Text(36) writes it (OLM v1's object name hashes).
std::string base36_sha224(std::string_view bytes);

} // namespace kpkg::plan
