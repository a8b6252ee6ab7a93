// PROVISIONAL: configuration admission, until the schema module lands.
#include "kpkg/pko/util.hpp"
#include "kpkg/pko/validate.hpp"

namespace kpkg::pko {

Admitted admit_config(const Manifest& m, const io::Node& config, const std::string& path) {
    (void)m;
    (void)path;
    Admitted a;
    auto j = to_json_node(config);
    a.config = j ? std::move(*j) : io::Node::map();
    if (!a.config.is_map()) a.config = io::Node::map();
    return a;
}

std::vector<std::string> check_schema(const Manifest& m) {
    (void)m;
    return {};
}

} // namespace kpkg::pko
