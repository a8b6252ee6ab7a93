// The default phase order of objects that come without phases, and Go durations.
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/kube/apply.hpp"

namespace kpkg::kube {

namespace {

enum : std::size_t {
    namespaces,
    crds,
    config,
    workloads,
    webhooks,
    operatorgroups,
    catalogsources,
    subscriptions,
    custom,
};

struct Kind {
    std::string_view group, kind;
    std::size_t phase;
};

// Kinds by group; anything not listed is a custom resource, applied last.
constexpr Kind kKinds[] = {
    {"", "Namespace", namespaces},
    {"apiextensions.k8s.io", "CustomResourceDefinition", crds},
    {"", "ServiceAccount", config},
    {"", "ConfigMap", config},
    {"", "Secret", config},
    {"", "Service", config},
    {"", "Endpoints", config},
    {"", "LimitRange", config},
    {"", "ResourceQuota", config},
    {"", "PersistentVolume", config},
    {"", "PersistentVolumeClaim", config},
    {"rbac.authorization.k8s.io", "ClusterRole", config},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", config},
    {"rbac.authorization.k8s.io", "Role", config},
    {"rbac.authorization.k8s.io", "RoleBinding", config},
    {"discovery.k8s.io", "EndpointSlice", config},
    {"networking.k8s.io", "NetworkPolicy", config},
    {"networking.k8s.io", "Ingress", config},
    {"networking.k8s.io", "IngressClass", config},
    {"policy", "PodDisruptionBudget", config},
    {"scheduling.k8s.io", "PriorityClass", config},
    {"storage.k8s.io", "StorageClass", config},
    {"storage.k8s.io", "CSIDriver", config},
    {"node.k8s.io", "RuntimeClass", config},
    {"coordination.k8s.io", "Lease", config},
    {"apps", "Deployment", workloads},
    {"apps", "StatefulSet", workloads},
    {"apps", "DaemonSet", workloads},
    {"apps", "ReplicaSet", workloads},
    {"", "ReplicationController", workloads},
    {"", "Pod", workloads},
    {"batch", "Job", workloads},
    {"batch", "CronJob", workloads},
    {"autoscaling", "HorizontalPodAutoscaler", workloads},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", webhooks},
    {"admissionregistration.k8s.io", "MutatingWebhookConfiguration", webhooks},
    {"admissionregistration.k8s.io", "ValidatingAdmissionPolicy", webhooks},
    {"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", webhooks},
    {"apiregistration.k8s.io", "APIService", webhooks},
    {"operators.coreos.com", "OperatorGroup", operatorgroups},
    {"operators.coreos.com", "CatalogSource", catalogsources},
    {"operators.coreos.com", "Subscription", subscriptions},
};

} // namespace

const std::vector<std::string>& default_phases() {
    static const std::vector<std::string> names = {
        "namespaces",     "crds",           "config",        "workloads",        "webhooks",
        "operatorgroups", "catalogsources", "subscriptions", "custom-resources",
    };
    return names;
}

std::size_t default_phase(const std::string& group, const std::string& kind) {
    for (const Kind& k : kKinds)
        if (k.kind == kind && k.group == group) return k.phase;
    return custom;
}

std::string object_name(const std::string& kind, const std::string& name) {
    std::string out;
    for (char c : kind)
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += '/';
    out += name;
    return out;
}

} // namespace kpkg::kube
