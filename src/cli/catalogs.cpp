// How the catalog commands read catalogs: the binary cache on by default.
#include <cstdlib>

#include "command.hpp"

namespace kpkg::cli {

catalog::LoadOptions catalog_options(const Globals& g) {
    catalog::LoadOptions o;
    const char* off = std::getenv("KPKG_NO_CACHE");
    const bool env_off = off != nullptr && *off != '\0' && std::string_view(off) != "0";
    if (!g.no_cache && !env_off) o.cache_dir = catalog::default_cache_dir();
    return o;
}

model::Catalog load_clean_catalog(const Globals& g, const std::string& src) {
    model::Catalog c = catalog::load_catalog(src, catalog_options(g)).take();
    c.check().take();
    return c;
}

} // namespace kpkg::cli
