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
#include "planning.hpp"

namespace kpkg::cli {
namespace {

struct PlanCliOptions {
    PlanFlags plan;
    // GitOps trees.
    std::string output_dir;
    TreeFlags tree;
    bool check = false;
    bool force = false;
};

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

int run_plan(const Globals& g, const PlanCliOptions& o) {
    check_plan_flags(o.plan);
    const bool tree = !o.output_dir.empty();
    const TreeFlags& t = o.tree;
    if (!tree && (!t.format.empty() || !t.target_namespaces.empty() || !t.catalog_images.empty() ||
                  t.sync_waves || !t.cert_provider.empty() || o.check || o.force))
        throw Exception(
            Error::usage("--format, --target-namespaces, --catalog-image, "
                         "--sync-waves, --cert-provider, --check and --force are for trees: give "
                         "--output-dir DIR"));
    if (tree && t.format.empty())
        throw Exception(Error::usage("--output-dir needs --format olm (Subscriptions for a "
                                     "cluster with OLM) or --format manifests (the objects "
                                     "themselves, without OLM)"));
    const plan::TreeOptions topts = tree ? tree_options(t, "--format") : plan::TreeOptions{};
    // The tree is no input's, and holds none: it is replaced as a whole.
    plan::InstallPlan p = make_plan(g, o.plan,
                                    tree ? std::vector<OutputPath>{{"--output-dir", o.output_dir}}
                                         : std::vector<OutputPath>{});
    if (tree) {
        auto files = plan::make_tree(p, topts).take();
        for (const auto& w : p.warnings)
            log::warning(w);
        plan::WriteOptions wo;
        wo.check = o.check;
        wo.force = o.force;
        auto ch = plan::write_tree(o.output_dir, files, wo).take();
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
    add_plan_flags(cmd, opts->plan, "The namespace of the Subscriptions and of the InstallPlan");
    cmd->add_option("--output-dir", opts->output_dir,
                    "Write a GitOps tree of the plan to DIR (kustomization.yaml, one file per "
                    "object) instead of the InstallPlan")
        ->option_text("DIR");
    cmd->add_option("--format", opts->tree.format,
                    "The tree: olm (Namespace, OperatorGroup, CatalogSource, Subscriptions) or "
                    "manifests (the operators' objects, installed without OLM)")
        ->option_text("FORMAT");
    add_tree_flags(cmd, opts->tree, true);
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
