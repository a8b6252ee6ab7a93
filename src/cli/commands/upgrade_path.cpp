// kpkg upgrade-path PKG --from VERSION|CSV [--to VERSION|CSV] [--channel C] [--shortest]:
// the upgrades OLM steps through (kpkg/resolve/upgrade_path.hpp).
#include <deque>

#include "command.hpp"
#include "kpkg/resolve/upgrade_path.hpp"

namespace kpkg::cli {
namespace {

struct UpgradePathCliOptions {
    resolve::UpgradePathRequest req;
    std::vector<std::string> catalogs;
    std::vector<std::string> priorities;
};

int run_upgrade_path(const Globals& g, const UpgradePathCliOptions& o) {
    std::deque<model::Catalog> store;
    const auto catalogs = load_catalog_sources(g, o.catalogs, o.priorities, store);
    if (!o.req.source.empty()) resolve::check_source(catalogs, o.req.source).take();
    auto path = resolve::upgrade_path(catalogs, o.req).take();
    if (g.format == Format::text)
        print(resolve::upgrade_path_text(path));
    else
        print_structured(g, resolve::upgrade_path_node(path));
    return path.reached ? 0 : static_cast<int>(ExitCode::unsatisfiable);
}

void setup(CLI::App& root, Context& ctx) {
    auto opts = std::make_shared<UpgradePathCliOptions>();
    CLI::App* cmd = root.add_subcommand(
        "upgrade-path", "Show the upgrades OLM steps through from an installed version");
    cmd->add_option("PACKAGE", opts->req.package, "The package")->required();
    cmd->add_option("--from", opts->req.from, "The installed bundle (CSV name) or version")
        ->option_text("VERSION|CSV")
        ->required();
    cmd->add_option("--to", opts->req.to, "Stop at this bundle or version; fail if unreachable")
        ->option_text("VERSION|CSV");
    cmd->add_option("--channel", opts->req.channel, "Only this channel (default: every channel)")
        ->option_text("CHANNEL");
    cmd->add_option("--source", opts->req.source,
                    "Only this catalog (a Subscription's spec.source)")
        ->option_text("CATALOG");
    cmd->add_flag("--shortest", opts->req.shortest,
                  "The fewest hops through the same upgrade edges");
    cmd->add_option("--catalog", opts->catalogs,
                    "A catalog, named after its directory unless NAME is given (repeatable)")
        ->option_text("[NAME=]PATH")
        ->required();
    cmd->add_option("--priority", opts->priorities, "Priority of catalog NAME (higher first)")
        ->option_text("NAME=N");
    cmd->footer("Exit 0 with the path, 4 when --to cannot be reached (the reasons are shown), 3 "
                "for invalid input.\nSee kpkg-upgrade-path(1).");
    cmd->callback([&ctx, opts] {
        ctx.action = [&ctx, opts] { return run_upgrade_path(ctx.globals, *opts); };
    });
}

} // namespace

KPKG_COMMAND(upgrade_path, 41, setup);

} // namespace kpkg::cli
