// How the catalog commands read catalogs: the binary cache on by default.
#include <cstdlib>
#include <filesystem>

#include "command.hpp"
#include "input.hpp"
#include "kpkg/oci/location.hpp"
#include "kpkg/resolve/resolve.hpp"
#include "paths.hpp"

namespace kpkg::cli {
namespace {

// The name of a catalog given as an image without NAME=: its repository's last component
// ("quay.io/org/catalog:v4.15" is "catalog"), or the layout directory's or archive's name; ""
// when `path` is no image.
std::string image_catalog_name(const std::string& path) {
    auto where = oci::locate(path);
    if (!where || !where->is_image()) return {};
    if (where->kind == oci::Location::Kind::registry) {
        const std::string& repo = where->reference.path;
        return repo.substr(repo.rfind('/') + 1);
    }
    std::filesystem::path p(where->path);
    while (!p.empty() && !p.has_filename() && p.has_parent_path() && p != p.parent_path())
        p = p.parent_path();
    return where->kind == oci::Location::Kind::oci_layout ? p.filename().string()
                                                          : p.stem().string();
}

} // namespace

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
                                                         std::deque<model::Catalog>& store,
                                                         bool keep_payloads) {
    std::vector<resolve::CatalogSource> out;
    std::vector<InputPath> inputs;
    for (const auto& spec : specs)
        inputs.push_back({"--catalog", resolve::parse_catalog_spec(spec).take().second});
    check_stdin_once(inputs);
    for (const auto& spec : specs) {
        auto [name, path] = resolve::parse_catalog_spec(spec).take();
        if (spec.find('=') == std::string::npos || name + "=" + path != spec)
            if (std::string n = image_catalog_name(path); !n.empty()) name = n;
        catalog::LoadOptions lo = catalog_options(g);
        lo.keep_payloads = keep_payloads;
        store.push_back(catalog::load_catalog(*open_input(path, Want::catalog), lo).take());
        out.push_back({name, &store.back(), 0});
    }
    std::vector<std::pair<std::string, int>> prios;
    for (const auto& p : priorities)
        prios.push_back(resolve::parse_priority(p).take());
    resolve::check_catalogs(out, prios).take();
    return out;
}

} // namespace kpkg::cli
