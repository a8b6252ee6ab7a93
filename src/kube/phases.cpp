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

Result<std::chrono::milliseconds> parse_duration(const std::string& text, const std::string& flag) {
    auto bad = [&] {
        return Error::usage(flag + " " + text + ": not a duration (e.g. 90s, 5m, 1h30m, 500ms)");
    };
    if (text.empty()) return bad();
    if (text == "0") return std::chrono::milliseconds{0};
    double total_ms = 0;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t start = i;
        while (i < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
            ++i;
        if (i == start) return bad();
        double value = 0;
        try {
            value = std::stod(text.substr(start, i - start));
        } catch (...) {
            return bad();
        }
        std::size_t ustart = i;
        while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i])))
            ++i;
        const std::string_view unit = std::string_view(text).substr(ustart, i - ustart);
        double scale = 0;
        if (unit == "ms")
            scale = 1;
        else if (unit == "s")
            scale = 1000;
        else if (unit == "m")
            scale = 60'000;
        else if (unit == "h")
            scale = 3'600'000;
        else
            return bad();
        total_ms += value * scale;
    }
    if (total_ms > 1e12) return bad();
    return std::chrono::milliseconds{static_cast<std::int64_t>(total_ms + 0.5)};
}

std::string object_name(const std::string& kind, const std::string& name) {
    std::string out;
    for (char c : kind)
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += '/';
    out += name;
    return out;
}

std::string format_duration(std::chrono::milliseconds d) {
    std::int64_t ms = d.count();
    if (ms <= 0) return "0s";
    if (ms < 1000) return std::to_string(ms) + "ms";
    std::string out;
    if (ms >= 3'600'000) {
        out += std::to_string(ms / 3'600'000) + "h";
        ms %= 3'600'000;
    }
    if (!out.empty() || ms >= 60'000) {
        out += std::to_string(ms / 60'000) + "m";
        ms %= 60'000;
    }
    out += std::to_string(ms / 1000);
    if (const std::int64_t frac = ms % 1000; frac != 0) {
        std::string f = std::to_string(1000 + frac).substr(1); // three digits
        while (f.back() == '0')
            f.pop_back();
        out += "." + f;
    }
    return out + "s";
}

} // namespace kpkg::kube
