// How the catalog commands read catalogs: the binary cache on by default.
#include <cstdlib>

#include "command.hpp"
#include "input.hpp"
#include "kpkg/resolve/resolve.hpp"
#include "paths.hpp"

namespace kpkg::cli {

catalog::LoadOptions catalog_options(const Globals& g) {
    catalog::LoadOptions o;
    const char* off = std::getenv("KPKG_NO_CACHE");
    const bool env_off = off != nullptr && *off != '\0' && std::string_view(off) != "0";
    if (!g.no_cache && !env_off) o.cache_dir = catalog::default_cache_dir();
    return o;
}

model::Catalog load_clean_catalog(const Globals& g, const std::string& src) {
    model::Catalog c =
        catalog::load_catalog(*open_input(src, Want::catalog), catalog_options(g)).take();
    c.check().take();
    return c;
}

std::vector<resolve::CatalogSource> load_catalog_sources(const Globals& g,
                                                         const std::vector<std::string>& specs,
                                                         const std::vector<std::string>& priorities,
                                                         std::deque<model::Catalog>& store) {
    std::vector<resolve::CatalogSource> out;
    std::vector<InputPath> inputs;
    for (const auto& spec : specs)
        inputs.push_back({"--catalog", resolve::parse_catalog_spec(spec).take().second});
    check_stdin_once(inputs);
    for (const auto& spec : specs) {
        auto [name, path] = resolve::parse_catalog_spec(spec).take();
        store.push_back(
            catalog::load_catalog(*open_input(path, Want::catalog), catalog_options(g)).take());
        out.push_back({name, &store.back(), 0});
    }
    std::vector<std::pair<std::string, int>> prios;
    for (const auto& p : priorities)
        prios.push_back(resolve::parse_priority(p).take());
    resolve::check_catalogs(out, prios).take();
    return out;
}

} // namespace kpkg::cli
