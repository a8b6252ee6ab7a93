// kpkg catalog render SRC... [--output-file FILE]: catalogs and bundle directories to one
// File-Based Catalog, as `opm render` writes it. -o json (the default) or -o yaml.
#include <cstdio>

#include "command.hpp"
#include "kpkg/catalog/render.hpp"
#include "kpkg/core/atomic_file.hpp"

namespace kpkg::cli {
namespace {

struct RenderCliOptions {
    std::vector<std::string> sources;
    std::string output_file;
};

int run_render(const Globals& g, const RenderCliOptions& o) {
    catalog::RenderOptions ro;
    ro.format =
        g.format == Format::yaml ? catalog::RenderFormat::yaml : catalog::RenderFormat::json;
    if (o.output_file.empty()) {
        catalog::render(o.sources, ro, [](std::string_view s) {
            std::fwrite(s.data(), 1, s.size(), stdout);
        }).take();
        std::fflush(stdout);
        return 0;
    }
    // Render fully before creating the file, so a failed run leaves nothing behind.
    std::string out = catalog::render_to_string(o.sources, ro).take();
    write_file_atomic(o.output_file, out).take();
    return 0;
}

void setup(CLI::App& root, Context& ctx) {
    CLI::App* cat = group(root, "catalog", "Work with File-Based Catalogs");
    auto opts = std::make_shared<RenderCliOptions>();
    CLI::App* cmd = cat->add_subcommand(
        "render", "Render catalogs and bundle directories as one File-Based Catalog");
    cmd->add_option("SRC", opts->sources,
                    "Catalog directory, file, - for stdin, or bundle directory")
        ->required();
    cmd->add_option("--output-file", opts->output_file, "Write to FILE (atomically)")
        ->option_text("FILE");
    cmd->footer("Writes JSON unless -o yaml is given, byte for byte as opm render does.");
    cmd->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_render(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(catalog_render, 25, setup);

} // namespace kpkg::cli
