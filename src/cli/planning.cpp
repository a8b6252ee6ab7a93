// The planning pipeline kpkg plan and kpkg install share (planning.hpp).
#include "planning.hpp"

#include <deque>
#include <filesystem>
#include <map>
#include <set>

#include "input.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/resolve/resolve.hpp"
#include "paths.hpp"

namespace kpkg::cli {
namespace {

// The catalog directories of the flags by name, when every catalog is a local directory.
std::map<std::string, std::string> catalog_directories(const RequestFlags& f) {
    std::map<std::string, std::string> paths;
    for (const auto& spec : f.catalogs) {
        auto [name, path] = resolve::parse_catalog_spec(spec).take();
        std::error_code ec;
        if (!std::filesystem::is_directory(path, ec)) return {};
        paths[name] = path;
    }
    return paths;
}

// The catalogs the plan reads the selected bundles' property values (and olm.bundle.object
// contents) from, when the resolution ran on the catalog directories `paths` loaded without
// those values (the smaller cached image `kpkg resolve` also reads): where one file holds every
// blob of each selected bundle's package (the usual layout, a file per package), only that file
// is loaded again with the values; otherwise the whole catalog is.
std::vector<resolve::CatalogSource>
payload_catalogs(const Globals& g, const std::map<std::string, std::string>& paths,
                 const std::vector<resolve::CatalogSource>& catalogs,
                 const resolve::Resolution& res, std::deque<model::Catalog>& store) {
    std::vector<resolve::CatalogSource> out;
    for (const auto& c : catalogs) {
        std::set<std::string> files;
        std::vector<const resolve::Selected*> mine;
        for (const auto& s : res.selected)
            if (s.catalog == c.name) mine.push_back(&s);
        if (mine.empty()) {
            out.push_back(c);
            continue;
        }
        const model::Catalog& cat = *c.catalog;
        for (const auto* s : mine) {
            auto pkg = cat.strings.find(s->package);
            auto name = cat.strings.find(s->bundle);
            const std::uint32_t bi = pkg && name ? cat.find_bundle(*pkg, *name) : model::npos32;
            if (bi != model::npos32) files.insert(cat.files[cat.bundles[bi].pos.file]);
        }
        catalog::LoadOptions lo = catalog_options(g);
        lo.keep_payloads = true;
        const std::string& dir = paths.at(c.name);
        if (files.size() == 1 && !files.begin()->empty()) {
            std::filesystem::path file = *files.begin();
            if (file.is_relative()) file = std::filesystem::path(dir) / file;
            auto part = catalog::load_catalog(file, lo);
            // Every blob of each package must be in that file.
            bool whole = static_cast<bool>(part);
            for (const auto* s : mine) {
                if (!whole) break;
                const auto* a = cat.package_info(s->package);
                const auto* b = part->package_info(s->package);
                whole = a != nullptr && b != nullptr && b->package != model::npos32 &&
                        a->channels.size() == b->channels.size() &&
                        a->bundles.size() == b->bundles.size();
            }
            if (whole) {
                store.push_back(std::move(*part));
                out.push_back({c.name, &store.back(), c.priority});
                continue;
            }
        }
        store.push_back(catalog::load_catalog(std::filesystem::path(dir), lo).take());
        out.push_back({c.name, &store.back(), c.priority});
    }
    return out;
}

} // namespace

void add_plan_flags(CLI::App* cmd, PlanFlags& f, const std::string& namespace_help) {
    add_request_flags(cmd, f.req);
    cmd->add_option("--namespace,-n", f.namespace_name, namespace_help)
        ->option_text("NS")
        ->required();
    cmd->add_option("--approval", f.approval,
                    "The Subscriptions' installPlanApproval: Automatic (default) or Manual")
        ->option_text("MODE");
    cmd->add_option("--catalog-namespace", f.catalog_namespace,
                    "The namespace of the CatalogSources (default olm)")
        ->option_text("NS");
    cmd->add_option("--bundle-dir", f.bundle_dirs,
                    "Read bundle NAME's manifests from DIR instead of its image (repeatable)")
        ->option_text("NAME=DIR");
}

void add_tree_flags(CLI::App* cmd, TreeFlags& f, bool sync_waves) {
    cmd->add_option("--target-namespaces", f.target_namespaces,
                    "The namespaces the operators watch, comma-separated (default: all)")
        ->option_text("NS,...");
    cmd->add_option("--catalog-image", f.catalog_images,
                    "The image of a catalog's CatalogSource (olm format; repeatable)")
        ->option_text("[NAME=]REF");
    if (sync_waves)
        cmd->add_flag("--sync-waves", f.sync_waves,
                      "Annotate the objects with Argo CD sync waves in apply order");
    cmd->add_option("--cert-provider", f.cert_provider,
                    "Who provides webhook certificates without OLM (manifests format): "
                    "cert-manager or openshift-service-ca")
        ->option_text("PROVIDER");
}

plan::TreeOptions tree_options(const TreeFlags& o, const std::string& format_flag) {
    plan::TreeOptions t;
    t.format = plan::parse_tree_format(o.format).take();
    for (const auto& list : o.target_namespaces) {
        std::size_t start = 0;
        while (true) {
            const auto comma = list.find(',', start);
            t.target_namespaces.push_back(list.substr(start, comma - start));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    for (const auto& spec : o.catalog_images) {
        const auto eq = spec.find('=');
        const auto slash = spec.find('/');
        // NAME=REF, or REF alone (the plan's one catalog); a reference has no '=' before a '/'.
        const bool named = eq != std::string::npos && (slash == std::string::npos || eq < slash);
        const std::string name = named ? spec.substr(0, eq) : std::string();
        const std::string ref = named ? spec.substr(eq + 1) : spec;
        if (ref.empty() || (named && name.empty()))
            throw Exception(Error::usage("--catalog-image " + text::quote(spec) +
                                         ": give [NAME=]REF (a catalog's image)"));
        if (!t.catalog_images.emplace(name, ref).second)
            throw Exception(Error::usage("--catalog-image: catalog " +
                                         text::quote(name.empty() ? "(unnamed)" : name) +
                                         " given twice"));
    }
    if (t.format == plan::TreeFormat::manifests && !t.catalog_images.empty()) {
        std::string msg = "--catalog-image is for ";
        msg.append(format_flag).append(" olm (a manifests tree has no CatalogSource)");
        throw Exception(Error::usage(msg));
    }
    t.sync_waves = o.sync_waves;
    if (!o.cert_provider.empty()) {
        if (t.format != plan::TreeFormat::manifests) {
            std::string msg = "--cert-provider is for ";
            msg.append(format_flag)
                .append(" manifests (with OLM, OLM provides the webhooks' certificates)");
            throw Exception(Error::usage(msg));
        }
        t.cert_provider = plan::parse_cert_provider(o.cert_provider).take();
    }
    return t;
}

void check_plan_flags(const PlanFlags& f) {
    plan::check_namespace(f.namespace_name, "--namespace").take();
    plan::check_namespace(f.catalog_namespace, "--catalog-namespace").take();
    plan::parse_approval(f.approval).take();
    if (!f.req.source.empty() && f.req.requests.empty())
        throw Exception(Error::usage("--source names the catalog of the requests: give a request"));
}

plan::InstallPlan make_plan(const Globals& g, const PlanFlags& o,
                            const std::vector<OutputPath>& outputs) {
    const RequestFlags& f = o.req;
    check_plan_flags(o);
    plan::PlanOptions popts;
    popts.namespace_name = o.namespace_name;
    popts.approval = plan::parse_approval(o.approval).take();
    popts.catalog_namespace = o.catalog_namespace;
    plan::GatherOptions copts;
    std::vector<InputPath> inputs = request_inputs(f);
    for (const auto& spec : o.bundle_dirs) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
            throw Exception(Error::usage("--bundle-dir " + text::quote(spec) +
                                         ": give NAME=DIR (the bundle's CSV name and its "
                                         "directory)"));
        const std::string name = spec.substr(0, eq);
        if (!copts.bundle_dirs.emplace(name, spec.substr(eq + 1)).second)
            throw Exception(
                Error::usage("--bundle-dir: bundle " + text::quote(name) + " given twice"));
        inputs.push_back({"--bundle-dir", spec.substr(eq + 1)});
    }
    check_stdin_once(inputs);
    for (const auto& out : outputs)
        check_output_outside(out, inputs);

    resolve::Request req;
    fill_request(f, req);
    // One InstallPlan moves each operator by one hop.
    req.options.one_hop = true;
    std::deque<model::Catalog> store;
    const auto dirs = catalog_directories(f);
    auto catalogs = load_request_catalogs(g, f, store, dirs.empty());
    auto res = resolve::resolve(catalogs, req).take();
    if (!res.satisfiable) {
        std::string msg = "no InstallPlan: the request has no solution\n" +
                          resolve::problems_text(res.problems, "  ");
        while (!msg.empty() && msg.back() == '\n')
            msg.pop_back();
        throw Exception(Error{ExitCode::unsatisfiable, msg, {}, {}, {}});
    }
    copts.open_image = [](const std::string& image) -> Result<std::unique_ptr<io::Tree>> {
        return catch_error([&] { return open_input(image, Want::bundle); });
    };
    if (!dirs.empty()) catalogs = payload_catalogs(g, dirs, catalogs, res, store);
    auto gathered = plan::gather_contents(catalogs, res, copts).take();
    auto p = plan::make_install_plan(catalogs, req, res, gathered.bundles, popts).take();
    std::vector<std::string> warnings = res.warnings;
    warnings.insert(warnings.end(), gathered.warnings.begin(), gathered.warnings.end());
    warnings.insert(warnings.end(), p.warnings.begin(), p.warnings.end());
    p.warnings = warnings;
    return p;
}

} // namespace kpkg::cli
