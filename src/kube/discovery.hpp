// Reading discovery documents (private to src/kube): the aggregated APIGroupDiscoveryList
// (apidiscovery.k8s.io/v2) and the legacy APIVersions, APIGroupList and APIResourceList.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kpkg/io/node.hpp"
#include "kpkg/kube/api.hpp"

namespace kpkg::kube::detail {

// The Accept header of GET /api and /apis, and whether a reply's Content-Type is aggregated.
inline constexpr const char* kDiscoveryAccept =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
bool is_aggregated(std::string_view content_type);

// Appends the resources of an APIGroupDiscoveryList, preferred version of each group first (the
// order of the document). Group versions whose freshness is Stale are appended to `stale`.
void read_aggregated(const io::Node& list, std::vector<Resource>& out,
                     std::vector<std::string>& stale);

// A group and its versions, preferred first.
struct GroupVersions {
    std::string group;
    std::vector<std::string> versions;
};

// GET /api (APIVersions) and GET /apis (APIGroupList).
std::vector<GroupVersions> read_api_versions(const io::Node& doc);
std::vector<GroupVersions> read_group_list(const io::Node& doc);

// An APIResourceList of group/version; subresources ("deployments/status") are left out.
void read_resource_list(const io::Node& doc, const std::string& group, const std::string& version,
                        std::vector<Resource>& out);

} // namespace kpkg::kube::detail
