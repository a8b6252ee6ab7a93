// kpkg plan: the InstallPlan OLM would create for a resolution (kpkg/plan/installplan.hpp).
#include <deque>
#include <filesystem>
#include <map>
#include <set>

#include "command.hpp"
#include "input.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/core/log.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/plan/installplan.hpp"
#include "kpkg/plan/tree.hpp"
#include "kpkg/resolve/resolve.hpp"
#include "paths.hpp"
#include "requests.hpp"

namespace kpkg::cli {
namespace {

struct PlanCliOptions {
    RequestFlags req;
    std::string namespace_name;
    std::string approval = "Automatic";
    std::string catalog_namespace = "olm";
    std::vector<std::string> bundle_dirs;
    // GitOps trees.
    std::string output_dir;
    std::string tree_format;
    std::vector<std::string> target_namespaces;
    std::vector<std::string> catalog_images;
    bool sync_waves = false;
    std::string cert_provider;
    bool check = false;
    bool force = false;
};

// The tree options of the flags (usage errors before anything is loaded).
plan::TreeOptions tree_options(const PlanCliOptions& o) {
    plan::TreeOptions t;
    if (o.tree_format.empty())
        throw Exception(Error::usage("--output-dir needs --format olm (Subscriptions for a "
                                     "cluster with OLM) or --format manifests (the objects "
                                     "themselves, without OLM)"));
    t.format = plan::parse_tree_format(o.tree_format).take();
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
    if (o.tree_format == "manifests" && !t.catalog_images.empty())
        throw Exception(Error::usage("--catalog-image is for --format olm (a manifests tree "
                                     "has no CatalogSource)"));
    t.sync_waves = o.sync_waves;
    if (!o.cert_provider.empty()) {
        if (t.format != plan::TreeFormat::manifests)
            throw Exception(Error::usage("--cert-provider is for --format manifests (with OLM, "
                                         "OLM provides the webhooks' certificates)"));
        t.cert_provider = plan::parse_cert_provider(o.cert_provider).take();
    }
    return t;
}

std::string changes_text(const std::string& dir, const plan::TreeChanges& ch, bool check) {
    std::string out;
    for (const auto& p : ch.added)
        out += (check ? "  missing  " : "  added    ") + p + "\n";
    for (const auto& p : ch.changed)
        out += (check ? "  differs  " : "  changed  ") + p + "\n";
    for (const auto& p : ch.removed)
        out += (check ? "  extra    " : "  removed  ") + p + "\n";
    const std::string counts = std::to_string(ch.added.size()) + " added, " +
                               std::to_string(ch.changed.size()) + " changed, " +
                               std::to_string(ch.removed.size()) + " removed, " +
                               std::to_string(ch.unchanged) + " unchanged";
    if (check)
        return (ch.empty() ? dir + " is up to date (" + std::to_string(ch.unchanged) + " files)\n"
                           : dir + " differs from the plan (" + counts + "):\n") +
               out;
    return "wrote " + dir + ": " + counts + "\n" + out;
}

io::Node changes_node(const std::string& dir, const plan::TreeChanges& ch) {
    io::Node n = io::Node::map();
    n.set("outputDir", io::Node::string(dir));
    auto list = [&](const char* k, const std::vector<std::string>& v) {
        io::Node& l = n.set(k, io::Node::seq());
        for (const auto& p : v)
            l.push(io::Node::string(p));
    };
    list("added", ch.added);
    list("changed", ch.changed);
    list("removed", ch.removed);
    n.set("unchanged", io::Node::integer(static_cast<std::int64_t>(ch.unchanged)));
    return n;
}

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

int run_plan(const Globals& g, const PlanCliOptions& o) {
    const RequestFlags& f = o.req;
    plan::check_namespace(o.namespace_name, "--namespace").take();
    const bool tree = !o.output_dir.empty();
    if (!tree &&
        (!o.tree_format.empty() || !o.target_namespaces.empty() || !o.catalog_images.empty() ||
         o.sync_waves || !o.cert_provider.empty() || o.check || o.force))
        throw Exception(
            Error::usage("--format, --target-namespaces, --catalog-image, "
                         "--sync-waves, --cert-provider, --check and --force are for trees: give "
                         "--output-dir DIR"));
    const plan::TreeOptions topts = tree ? tree_options(o) : plan::TreeOptions{};
    plan::check_namespace(o.catalog_namespace, "--catalog-namespace").take();
    plan::PlanOptions popts;
    popts.namespace_name = o.namespace_name;
    popts.approval = plan::parse_approval(o.approval).take();
    popts.catalog_namespace = o.catalog_namespace;
    if (!f.source.empty() && f.requests.empty())
        throw Exception(Error::usage("--source names the catalog of the requests: give a request"));
    plan::ContentOptions copts;
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
    if (tree) {
        auto t = plan::make_tree(p, topts).take();
        for (const auto& w : p.warnings)
            log::warning(w);
        plan::WriteOptions wo;
        wo.check = o.check;
        wo.force = o.force;
        auto ch = plan::write_tree(o.output_dir, t, wo).take();
        if (g.format == Format::text)
            print(changes_text(o.output_dir, ch, o.check));
        else
            print_structured(g, changes_node(o.output_dir, ch));
        return o.check && !ch.empty() ? static_cast<int>(ExitCode::differs) : 0;
    }
    if (g.format == Format::text) {
        print(plan::install_plan_text(p));
    } else {
        for (const auto& w : p.warnings)
            log::warning(w);
        print_structured(g, plan::install_plan_node(p));
    }
    return 0;
}

void setup(CLI::App& root, Context& ctx) {
    auto opts = std::make_shared<PlanCliOptions>();
    CLI::App* cmd = root.add_subcommand(
        "plan", "Render the InstallPlan OLM would create for operator subscriptions, offline");
    add_request_flags(cmd, opts->req);
    cmd->add_option("--namespace,-n", opts->namespace_name,
                    "The namespace of the Subscriptions and of the InstallPlan")
        ->option_text("NS")
        ->required();
    cmd->add_option("--approval", opts->approval,
                    "The Subscriptions' installPlanApproval: Automatic (default) or Manual")
        ->option_text("MODE");
    cmd->add_option("--catalog-namespace", opts->catalog_namespace,
                    "The namespace of the CatalogSources (default olm)")
        ->option_text("NS");
    cmd->add_option("--bundle-dir", opts->bundle_dirs,
                    "Read bundle NAME's manifests from DIR instead of its image (repeatable)")
        ->option_text("NAME=DIR");
    cmd->add_option("--output-dir", opts->output_dir,
                    "Write a GitOps tree of the plan to DIR (kustomization.yaml, one file per "
                    "object) instead of the InstallPlan")
        ->option_text("DIR");
    cmd->add_option("--format", opts->tree_format,
                    "The tree: olm (Namespace, OperatorGroup, CatalogSource, Subscriptions) or "
                    "manifests (the operators' objects, installed without OLM)")
        ->option_text("FORMAT");
    cmd->add_option("--target-namespaces", opts->target_namespaces,
                    "The namespaces the operators watch, comma-separated (default: all)")
        ->option_text("NS,...");
    cmd->add_option("--catalog-image", opts->catalog_images,
                    "The image of a catalog's CatalogSource (--format olm; repeatable)")
        ->option_text("[NAME=]REF");
    cmd->add_flag("--sync-waves", opts->sync_waves,
                  "Annotate the objects with Argo CD sync waves in apply order");
    cmd->add_option("--cert-provider", opts->cert_provider,
                    "Who provides webhook certificates without OLM (--format manifests): "
                    "cert-manager or openshift-service-ca")
        ->option_text("PROVIDER");
    cmd->add_flag("--check", opts->check,
                  "Only compare the tree in DIR with the plan: exit 5 when it differs");
    cmd->add_flag("--force", opts->force,
                  "Write into DIR even when it holds files kpkg plan did not write (they stay)");
    cmd->footer(
        "Bundle contents come from --bundle-dir, else the bundle image (pulled, cached; "
        "--offline: the cache only), else the catalog's olm.bundle.object properties "
        "(with a warning).\nExit 0 when planned, 1 when a bundle's contents cannot be "
        "had, 2 for bad arguments, 3 for invalid input or objects OLM does not create, "
        "4 when there is no solution, 5 when --check finds the tree differs.\nSee kpkg-plan(1).");
    cmd->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_plan(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(plan, 41, setup);

} // namespace kpkg::cli
