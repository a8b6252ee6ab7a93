// kpkg bundle render: the olm.bundle blob of a registry+v1 bundle directory, as `opm render DIR`
// writes it (JSON by default, like opm; -o yaml for YAML; -o text is taken as JSON).
//
//   kpkg bundle render DIR [--image REF] [--csv-metadata]
//
// Exit codes: 0 rendered, 3 the bundle cannot be rendered (opm would refuse it too), 1 the
// directory cannot be read.
#include <cstdio>

#include "command.hpp"
#include "input.hpp"
#include "kpkg/bundle/bundle.hpp"
#include "kpkg/bundle/render.hpp"
#include "kpkg/oci/location.hpp"

namespace kpkg::cli {
namespace {

struct RenderCliOptions {
    std::string dir;
    std::string image;
    bool csv_metadata = false;
};

int run_render(const Globals& g, const RenderCliOptions& o) {
    auto loaded = bundle::load(*open_input(o.dir, Want::bundle)).take();
    bundle::RenderOptions ropts;
    ropts.image = o.image;
    // A bundle image in a registry is rendered as opm renders it: "image" is its reference.
    if (ropts.image.empty())
        if (auto where = oci::locate(o.dir); where && where->kind == oci::Location::Kind::registry)
            ropts.image = where->reference.str();
    ropts.csv_metadata = o.csv_metadata;
    auto rendered = bundle::render(loaded, ropts).take();
    if (g.format == Format::yaml) {
        print(bundle::to_yaml(rendered));
    } else {
        // Streamed: the blob of a large bundle is never copied whole.
        bundle::write_json(rendered, [](std::string_view piece) {
            std::fwrite(piece.data(), 1, piece.size(), stdout);
        });
    }
    return 0;
}

void setup(CLI::App& root, Context& ctx) {
    CLI::App* b = group(root, "bundle", "Inspect, validate and render OLM registry+v1 bundles");
    auto opts = std::make_shared<RenderCliOptions>();
    CLI::App* r = b->add_subcommand(
        "render", "Write the olm.bundle catalog blob of a bundle directory, as opm render does");
    r->add_option("DIR", opts->dir, "Bundle directory (with manifests/ and metadata/)")->required();
    r->add_option("--image", opts->image,
                  "The bundle's image reference: fills \"image\" and joins relatedImages "
                  "(default: none, image is \"\" as opm writes for a directory)")
        ->option_text("REF");
    r->add_flag("--csv-metadata", opts->csv_metadata,
                "One olm.csv.metadata property instead of an olm.bundle.object per manifest "
                "(opm's bundle-object-to-csv-metadata migration)");
    r->footer("Output is the blob opm render writes, byte for byte: JSON indented by 4 spaces "
              "(also for -o text),\nor with -o yaml the YAML opm writes (\"---\" first, keys "
              "sorted).\nExit status: 0 rendered, 3 not renderable (no CSV, no package, an owned "
              "CRD missing, ...),\n1 unreadable directory.");
    r->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_render(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(bundle_render, 12, setup);

} // namespace kpkg::cli
