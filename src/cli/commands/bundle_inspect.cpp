// kpkg bundle inspect: what a registry+v1 bundle directory is, provides, needs and runs.
//
// Text output is a set of aligned sections; -o json / -o yaml write the document described in
// kpkg/bundle/inspect.hpp. Problems met while loading are printed on stderr (warnings and errors,
// with file:line:col) and also listed under "findings" in the structured output.
//
// Exit codes: 0 when the bundle loaded without errors (warnings allowed); 3 when there were error
// findings (the data that could be read is still printed) or the directory has no manifests/;
// 1 when the directory does not exist or cannot be read.
#include "command.hpp"
#include "input.hpp"
#include "kpkg/bundle/inspect.hpp"
#include "kpkg/core/log.hpp"

namespace kpkg::cli {
namespace {

struct InspectCliOptions {
    std::string dir;
};

int run_inspect(const Globals& g, const InspectCliOptions& o) {
    auto result = bundle::inspect_dir(*open_input(o.dir, Want::bundle)).take();
    for (const auto& f : result.findings) {
        std::string where = f.pos.str();
        std::string line = (where.empty() ? o.dir : where) + ": " + f.message;
        if (f.severity == bundle::Severity::error)
            log::error(line);
        else
            log::warning(line);
    }
    if (g.format == Format::text)
        print(bundle::inspect_text(result.doc));
    else
        print_structured(g, result.doc);
    return result.has_errors() ? static_cast<int>(ExitCode::invalid) : 0;
}

void setup(CLI::App& root, Context& ctx) {
    CLI::App* b = group(root, "bundle", "Inspect, validate and render OLM registry+v1 bundles");
    auto opts = std::make_shared<InspectCliOptions>();
    CLI::App* cmd = b->add_subcommand(
        "inspect", "Show a bundle's package, channels, CSV, APIs, dependencies and images");
    cmd->add_option("DIR", opts->dir, "Bundle directory (with manifests/ and metadata/)")
        ->required();
    cmd->footer("With -o json|yaml: {dir, package, channels, defaultChannel, csv, version, "
                "replaces,\nskips, skipRange, minKubeVersion, installModes, owned, required, "
                "crds,\ndependencies, properties, deployments, relatedImages, findings}.\n"
                "Problems found while loading are printed on stderr.\n"
                "Exit status: 0 ok, 3 the bundle has errors (what could be read is still "
                "printed),\n1 unreadable directory.");
    cmd->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_inspect(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(bundle_inspect, 10, setup);

} // namespace kpkg::cli
