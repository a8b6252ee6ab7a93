// kpkg catalog render SRC... [--output-file FILE]: catalogs and bundle directories to one
// File-Based Catalog, as `opm render` writes it. -o json (the default) or -o yaml.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "command.hpp"
#include "input.hpp"
#include "kpkg/catalog/render.hpp"
#include "kpkg/core/atomic_file.hpp"
#include "kpkg/oci/location.hpp"
#include "paths.hpp"

namespace kpkg::cli {
namespace {

struct RenderCliOptions {
    std::vector<std::string> sources;
    std::string output_file;
};

int run_render(const Globals& g, const RenderCliOptions& o) {
    const auto format =
        g.format == Format::yaml ? catalog::RenderFormat::yaml : catalog::RenderFormat::json;
    std::vector<InputPath> inputs;
    for (const auto& s : o.sources)
        inputs.push_back({"SRC", s, true});
    check_stdin_once(inputs);
    check_output_outside({"--output-file", o.output_file}, inputs);
    // Every source is read and checked before anything is written: on an error, stdout gets
    // nothing and no output file is created.
    std::vector<catalog::RenderSource> sources;
    for (const auto& s : o.sources) {
        catalog::RenderSource src;
        src.path = s;
        if (auto where = oci::locate(s); where && where->is_image()) {
            Input in = open_any_input(s);
            src.tree = catalog::TreeSource{std::shared_ptr<const io::Tree>(std::move(in.tree)),
                                           in.bundle, in.reference};
        }
        sources.push_back(std::move(src));
    }
    const catalog::RenderedCatalog cat = catalog::prepare_render(sources).take();
    if (o.output_file.empty()) {
        bool failed = false;
        int err = 0;
        cat.write(format, [&](std::string_view s) {
            if (failed) return;
            if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size()) {
                failed = true;
                err = errno;
            }
        });
        if (std::fflush(stdout) != 0 && !failed) {
            failed = true;
            err = errno;
        }
        if (failed)
            throw Exception(Error::io(std::string("cannot write to standard output: ") +
                                      std::strerror(err != 0 ? err : EIO)));
        return 0;
    }
    AtomicFile out = AtomicFile::create_output(o.output_file).take();
    std::optional<Error> write_error;
    cat.write(format, [&](std::string_view s) {
        if (write_error) return;
        auto r = out.write(s);
        if (!r.ok()) write_error = r.error();
    });
    if (write_error) throw Exception(*write_error); // out's destructor removes the temporary
    out.commit().take();
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
