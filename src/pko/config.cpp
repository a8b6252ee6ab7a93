// A package's configuration admitted with its manifest's schema (pko/schema), as violations.
#include "kpkg/pko/schema.hpp"
#include "kpkg/pko/util.hpp"
#include "kpkg/pko/validate.hpp"

namespace kpkg::pko {

Admitted admit_package_config(const Manifest& m, const io::Node& config, const std::string& path) {
    Admitted out;
    auto j = to_json_node(config);
    const io::Node cfg = j && j->is_map() ? std::move(*j) : io::Node::map();
    Admission a = admit_config(m.schema(), cfg, path);
    out.config = a.config.is_map() ? std::move(a.config) : io::Node::map();
    for (FieldError& e : a.violations) {
        Violation v;
        v.reason = std::move(e.message);
        v.pos = io::pos_of(m.file, e.mark);
        out.errors.push_back(std::move(v));
    }
    return out;
}

} // namespace kpkg::pko
