// kpkg plan: the InstallPlan OLM would create for a resolution (kpkg/plan/installplan.hpp).
#include <deque>
#include <map>

#include "command.hpp"
#include "input.hpp"
#include "kpkg/core/log.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/plan/installplan.hpp"
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
};

int run_plan(const Globals& g, const PlanCliOptions& o) {
    const RequestFlags& f = o.req;
    plan::check_namespace(o.namespace_name, "--namespace").take();
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
    auto catalogs = load_request_catalogs(g, f, store, true);
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
    auto gathered = plan::gather_contents(catalogs, res, copts).take();
    auto p = plan::make_install_plan(catalogs, req, res, gathered.bundles, popts).take();
    std::vector<std::string> warnings = res.warnings;
    warnings.insert(warnings.end(), gathered.warnings.begin(), gathered.warnings.end());
    warnings.insert(warnings.end(), p.warnings.begin(), p.warnings.end());
    p.warnings = warnings;
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
    cmd->footer("Bundle contents come from --bundle-dir, else the bundle image (pulled, cached; "
                "--offline: the cache only), else the catalog's olm.bundle.object properties "
                "(with a warning).\nExit 0 when planned, 1 when a bundle's contents cannot be "
                "had, 2 for bad arguments, 3 for invalid input or objects OLM does not create, "
                "4 when there is no solution.\nSee kpkg-plan(1).");
    cmd->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_plan(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(plan, 41, setup);

} // namespace kpkg::cli
