// Discovery documents: the aggregated apidiscovery.k8s.io/v2 list, recognised by its reply's
// Content-Type only, and the legacy APIVersions / APIGroupList / APIResourceList. Also the
// lookups of kube::Discovery and kube::Resource.
#include "discovery.hpp"

#include <algorithm>

#include "kpkg/core/text.hpp"

namespace kpkg::kube {

std::string Resource::resource_group() const {
    std::string out = name;
    if (!group.empty()) out.append(".").append(group);
    return out;
}

const Resource* Discovery::find(const std::string& group, const std::string& version,
                                const std::string& kind) const {
    for (const auto& r : resources)
        if (r.kind == kind && r.version == version && r.group == group) return &r;
    return nullptr;
}

namespace detail {

namespace {

std::string str(const io::Node* n, std::string_view key) {
    if (n == nullptr) return {};
    const io::Node* v = n->get(key);
    return v != nullptr && v->is_scalar() && !v->is_null() ? v->text : std::string();
}

std::vector<std::string> strings(const io::Node* n, std::string_view key) {
    std::vector<std::string> out;
    const io::Node* v = n == nullptr ? nullptr : n->get(key);
    if (v == nullptr || !v->is_seq()) return out;
    for (const auto& i : v->items)
        if (i.is_scalar() && !i.is_null()) out.push_back(i.text);
    return out;
}

} // namespace

bool is_aggregated(std::string_view content_type) {
    bool json = false, g = false, v = false, as = false;
    for (auto part : text::split(content_type, ';')) {
        std::string p(text::trim(part));
        for (auto& c : p)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
        if (p == "application/json")
            json = true;
        else if (p == "g=apidiscovery.k8s.io")
            g = true;
        else if (p == "v=v2")
            v = true;
        else if (p == "as=apigroupdiscoverylist")
            as = true;
    }
    return json && g && v && as;
}

void read_aggregated(const io::Node& list, std::vector<Resource>& out,
                     std::vector<std::string>& stale) {
    const io::Node* items = list.get("items");
    if (items == nullptr || !items->is_seq()) return;
    for (const auto& group : items->items) {
        const std::string gname = str(group.get("metadata"), "name");
        const io::Node* versions = group.get("versions");
        if (versions == nullptr || !versions->is_seq()) continue;
        for (const auto& ver : versions->items) {
            const std::string vname = str(&ver, "version");
            if (vname.empty()) continue;
            if (str(&ver, "freshness") == "Stale") {
                stale.push_back(gname.empty() ? vname : gname + "/" + vname);
            }
            const io::Node* resources = ver.get("resources");
            if (resources == nullptr || !resources->is_seq()) continue;
            for (const auto& res : resources->items) {
                Resource r;
                r.group = gname;
                r.version = vname;
                r.name = str(&res, "resource");
                r.kind = str(res.get("responseKind"), "kind");
                if (r.name.empty() || r.kind.empty()) continue;
                r.namespaced = str(&res, "scope") == "Namespaced";
                r.verbs = strings(&res, "verbs");
                r.short_names = strings(&res, "shortNames");
                out.push_back(std::move(r));
            }
        }
    }
}

std::vector<GroupVersions> read_api_versions(const io::Node& doc) {
    std::vector<GroupVersions> out;
    GroupVersions core;
    core.versions = strings(&doc, "versions");
    if (!core.versions.empty()) out.push_back(std::move(core));
    return out;
}

std::vector<GroupVersions> read_group_list(const io::Node& doc) {
    std::vector<GroupVersions> out;
    const io::Node* groups = doc.get("groups");
    if (groups == nullptr || !groups->is_seq()) return out;
    for (const auto& g : groups->items) {
        GroupVersions gv;
        gv.group = str(&g, "name");
        if (gv.group.empty()) continue;
        const std::string preferred = str(g.get("preferredVersion"), "version");
        if (!preferred.empty()) gv.versions.push_back(preferred);
        if (const io::Node* vs = g.get("versions"); vs != nullptr && vs->is_seq()) {
            for (const auto& v : vs->items) {
                std::string name = str(&v, "version");
                if (name.empty()) continue;
                if (std::find(gv.versions.begin(), gv.versions.end(), name) == gv.versions.end())
                    gv.versions.push_back(std::move(name));
            }
        }
        if (!gv.versions.empty()) out.push_back(std::move(gv));
    }
    return out;
}

void read_resource_list(const io::Node& doc, const std::string& group, const std::string& version,
                        std::vector<Resource>& out) {
    const io::Node* resources = doc.get("resources");
    if (resources == nullptr || !resources->is_seq()) return;
    for (const auto& res : resources->items) {
        Resource r;
        r.name = str(&res, "name");
        if (r.name.empty() || r.name.find('/') != std::string::npos) continue;
        r.group = group;
        r.version = version;
        r.kind = str(&res, "kind");
        if (r.kind.empty()) continue;
        const io::Node* ns = res.get("namespaced");
        r.namespaced = ns != nullptr && ns->as_bool().value_or(false);
        r.verbs = strings(&res, "verbs");
        r.short_names = strings(&res, "shortNames");
        out.push_back(std::move(r));
    }
}

} // namespace detail
} // namespace kpkg::kube
