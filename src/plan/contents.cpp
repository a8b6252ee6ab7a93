// Where the manifests of the bundles of a plan come from: bundle directories, bundle images, or
// the olm.bundle.object properties of the catalog.
#include <algorithm>
#include <set>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/plan/installplan.hpp"

namespace kpkg::plan {

const char* content_source_name(ContentSource s) {
    switch (s) {
    case ContentSource::directory:
        return "directory";
    case ContentSource::image:
        return "image";
    case ContentSource::catalog:
        return "catalog";
    }
    return "directory";
}

Result<BundleContents> contents_from_tree(const io::Tree& tree, ContentSource source,
                                          std::string origin) {
    auto loaded = bundle::load(tree);
    if (!loaded) return std::move(loaded).error();
    if (!loaded->blocking.empty()) return loaded->blocking.front();
    // What the loader could not read as an object is not in the bundle: a plan made without it
    // would silently lack it.
    for (const auto& f : loaded->findings)
        if (f.severity == bundle::Severity::error &&
            (f.rule == "load.read" || f.rule == "load.link" || f.rule == "load.parse" ||
             f.rule == "load.type"))
            return Error::invalid(f.message, f.pos);
    BundleContents c;
    c.source = source;
    c.origin = std::move(origin);
    for (auto& m : loaded->bundle.manifests) {
        BundleObject o;
        const auto slash = m.file.rfind('/');
        o.file = "manifests/" + (slash == std::string::npos ? m.file : m.file.substr(slash + 1));
        o.document = m.document;
        o.object = std::move(m.object);
        c.objects.push_back(std::move(o));
    }
    return c;
}

Result<std::optional<BundleContents>> contents_from_catalog(const model::Catalog& catalog,
                                                            const model::Bundle& bundle,
                                                            const std::string& catalog_name) {
    BundleContents c;
    c.source = ContentSource::catalog;
    c.origin = catalog_name;
    const std::string name = catalog.string(bundle.name);
    int n = 0;
    for (const auto& p : catalog.properties_of(bundle)) {
        if (p.kind != model::PropKind::bundle_object) continue;
        const std::string label = "olm.bundle.object[" + std::to_string(n++) + "]";
        if (p.json == 0)
            return Error::internal("the catalog was loaded without the olm.bundle.object values");
        auto docs = io::parse_json(catalog.str(p.json), label);
        const io::Node* data = docs && docs->size() == 1 ? docs->front().root.get("data") : nullptr;
        std::string decoded;
        std::size_t at = 0;
        if (data == nullptr || !data->is_string() ||
            !io::go::decode_base64(data->text, &decoded, at))
            return Error::invalid("bundle " + text::quote(name) + ": " + label +
                                  " has no base64 \"data\"");
        auto obj = io::parse_json(decoded, label);
        if (!obj || obj->size() != 1 || !obj->front().root.is_map())
            return Error::invalid("bundle " + text::quote(name) + ": " + label +
                                  " does not hold one JSON object");
        c.objects.push_back({label, 0, std::move(obj->front().root)});
    }
    if (c.objects.empty()) return std::optional<BundleContents>{};
    return std::optional<BundleContents>{std::move(c)};
}

namespace {

const model::Bundle* find_catalog_bundle(const std::vector<resolve::CatalogSource>& catalogs,
                                         const resolve::Selected& s,
                                         const resolve::CatalogSource** where) {
    for (const auto& c : catalogs) {
        if (c.name != s.catalog) continue;
        auto pkg = c.catalog->strings.find(s.package);
        auto name = c.catalog->strings.find(s.bundle);
        if (!pkg || !name) return nullptr;
        const std::uint32_t i = c.catalog->find_bundle(*pkg, *name);
        if (i == model::npos32) return nullptr;
        *where = &c;
        return &c.catalog->bundles[i];
    }
    return nullptr;
}

std::string csv_name_of(const BundleContents& c) {
    for (const auto& o : c.objects) {
        const io::Node* kind = o.object.get("kind");
        if (kind == nullptr || kind->text != "ClusterServiceVersion") continue;
        const io::Node* meta = o.object.get("metadata");
        const io::Node* name = meta != nullptr ? meta->get("name") : nullptr;
        return name != nullptr ? name->text : std::string();
    }
    return {};
}

} // namespace

Result<GatheredContents> gather_contents(const std::vector<resolve::CatalogSource>& catalogs,
                                         const resolve::Resolution& resolution,
                                         const GatherOptions& opts) {
    GatheredContents out;
    std::set<std::string> selected;
    for (const auto& s : resolution.selected)
        selected.insert(s.bundle);
    for (const auto& [name, dir] : opts.bundle_dirs)
        if (!selected.count(name)) {
            std::vector<std::string> names(selected.begin(), selected.end());
            return Error::usage("--bundle-dir " + text::quote(name + "=" + dir) + ": " +
                                text::quote(name) + " is not a bundle of the plan (" +
                                (names.empty() ? std::string("none") : text::join(names, ", ")) +
                                ")");
        }
    std::vector<std::string> missing;
    for (const auto& s : resolution.selected) {
        if (auto it = opts.bundle_dirs.find(s.bundle); it != opts.bundle_dirs.end()) {
            auto tree = io::open_path(it->second);
            auto c = contents_from_tree(*tree, ContentSource::directory, it->second);
            if (!c) {
                Error e = std::move(c).error();
                e.message =
                    "--bundle-dir " + text::quote(s.bundle + "=" + it->second) + ": " + e.message;
                return e;
            }
            const std::string csv = csv_name_of(*c);
            if (csv != s.bundle)
                return Error::invalid("--bundle-dir " + text::quote(s.bundle + "=" + it->second) +
                                      ": the directory holds " +
                                      (csv.empty() ? std::string("no ClusterServiceVersion")
                                                   : "the bundle " + text::quote(csv)) +
                                      ", not " + text::quote(s.bundle));
            out.bundles.emplace(s.bundle, std::move(*c));
            continue;
        }
        std::string why;
        if (opts.open_image && !s.image.empty()) {
            auto tree = opts.open_image(s.image);
            if (tree) {
                auto c = contents_from_tree(**tree, ContentSource::image, s.image);
                if (c && csv_name_of(*c) == s.bundle) {
                    out.bundles.emplace(s.bundle, std::move(*c));
                    continue;
                }
                why = c ? "the image holds " + text::quote(csv_name_of(*c)) + ", not this bundle"
                        : c.error().str();
            } else {
                why = tree.error().str();
            }
        } else {
            why = s.image.empty() ? "the bundle has no image" : "images are not read";
        }
        const resolve::CatalogSource* where = nullptr;
        if (const model::Bundle* b = find_catalog_bundle(catalogs, s, &where)) {
            auto c = contents_from_catalog(*where->catalog, *b, where->name);
            if (!c) return std::move(c).error();
            if (*c) {
                out.warnings.push_back("bundle " + text::quote(s.bundle) +
                                       ": manifests from the catalog's olm.bundle.object "
                                       "properties (the image " +
                                       text::quote(s.image) +
                                       " is authoritative and OLM reads only it; " + why + ")");
                out.bundles.emplace(s.bundle, std::move(**c));
                continue;
            }
        }
        missing.push_back(s.bundle + " (image " + text::quote(s.image) + ": " + why +
                          "; no olm.bundle.object in the catalog)");
    }
    if (!missing.empty()) {
        std::string msg = "the contents of " + std::to_string(missing.size()) +
                          (missing.size() == 1 ? " bundle" : " bundles") +
                          " cannot be had; give them with --bundle-dir NAME=DIR:";
        for (const auto& m : missing)
            msg += "\n  " + m;
        return Error::io(msg);
    }
    return out;
}

} // namespace kpkg::plan
