// A package's configuration admitted with its manifest's schema (pko/schema), as findings.
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
    for (FieldError& e : a.violations)
        out.errors.push_back(
            finding("package.config", Problem(std::move(e.message)), io::pos_of(m.file, e.mark)));
    return out;
}

} // namespace kpkg::pko
