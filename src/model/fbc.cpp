#include "kpkg/model/fbc.hpp"

namespace kpkg::declcfg {

std::optional<std::string> Bundle::version() const {
    std::optional<std::string> found;
    for (const auto& p : properties) {
        if (p.type != "olm.package") continue;
        if (found) return std::nullopt; // more than one: ambiguous
        const io::Node* v = p.value.get("version");
        if (v == nullptr || !v->is_string()) return std::nullopt;
        found = v->text;
    }
    return found;
}

} // namespace kpkg::declcfg
