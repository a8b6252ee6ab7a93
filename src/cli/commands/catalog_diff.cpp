// kpkg catalog diff OLD NEW: what a catalog update changes.
//
// Exit codes: 0 (differences or not), or with --exit-code 5 when anything differs; 3 when a
// catalog does not load; 1 when one cannot be read.
#include "command.hpp"
#include "kpkg/catalog/diff.hpp"
#include "kpkg/catalog/load.hpp"
#include "paths.hpp"

namespace kpkg::cli {
namespace {

struct DiffCliOptions {
    std::string old_src;
    std::string new_src;
    bool exit_code = false;
};

int run_diff(const Globals& g, const DiffCliOptions& o) {
    check_stdin_once({{"OLD", o.old_src}, {"NEW", o.new_src}});
    const model::Catalog old_cfg = load_clean_catalog(g, o.old_src);
    const model::Catalog new_cfg = load_clean_catalog(g, o.new_src);
    const catalog::CatalogDiff d = catalog::diff(old_cfg, new_cfg);
    if (g.format == Format::text)
        print(catalog::diff_text(d));
    else
        print_structured(g, catalog::diff_node(d));
    return o.exit_code && !d.empty() ? static_cast<int>(ExitCode::differs) : 0;
}

void setup(CLI::App& root, Context& ctx) {
    CLI::App* cat = group(root, "catalog", "Work with File-Based Catalogs");
    auto opts = std::make_shared<DiffCliOptions>();
    CLI::App* cmd = cat->add_subcommand(
        "diff", "Show what changes from one catalog to another: packages, channels, heads, "
                "bundles, upgrade edges");
    cmd->add_option("OLD", opts->old_src, "The catalog before: directory, file, or - for stdin")
        ->required();
    cmd->add_option("NEW", opts->new_src, "The catalog after: directory, file, or - for stdin")
        ->required();
    cmd->add_flag("--exit-code", opts->exit_code, "Exit with status 5 when the catalogs differ");
    cmd->footer("Lines start with + (added), - (removed) or ~ (changed); a summary line ends "
                "the output.\nExit status: 0, or 5 with --exit-code when anything differs; 3 a "
                "catalog does not load.");
    cmd->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_diff(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(catalog_diff, 23, setup);

} // namespace kpkg::cli
