// The permissions of a CSV's deployment install strategy, shared by the InstallPlan (OLM's RBAC)
// and the manifests tree (OLM v1's RBAC).
#pragma once

#include <string>
#include <vector>

#include "kpkg/io/node.hpp"

namespace kpkg::plan::detail {

struct Rule {
    bool has_verbs = false;
    std::vector<std::string> verbs, api_groups, resources, resource_names, non_resource_urls;
};

struct Permission {
    std::string service_account;
    bool has_rules = false;
    std::vector<Rule> rules;
};

// spec.install.spec.permissions or clusterPermissions (nothing when absent).
std::vector<Permission> permissions_of(const io::Node* list);

// rbacv1.PolicyRule list as encoding/json writes it ("null" without rules).
std::string rules_json(const Permission& p);

// One rule as a Node (verbs always, the other lists when not empty).
io::Node rule_node(const Rule& r);

} // namespace kpkg::plan::detail
