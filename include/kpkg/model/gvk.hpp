// A Kubernetes API: group, version and kind, the one type every area uses for it (the APIs a
// bundle provides and requires, olm.gvk properties, the resolver's API dependencies).
#pragma once

#include <compare>
#include <string>

namespace kpkg::model {

struct GVK {
    std::string group; // "" for the core API group
    std::string version;
    std::string kind;

    friend bool operator==(const GVK&, const GVK&) = default;
    // By group, then version, then kind.
    friend auto operator<=>(const GVK&, const GVK&) = default;

    // "group/version/Kind", as written in keys and identities ("/v1/Pod" for the core group).
    std::string str() const;
    // "API group/version Kind", as messages name it; each part escaped and cut as text::shown
    // does, so a value from the input stays one readable line.
    std::string words() const;
};

} // namespace kpkg::model
