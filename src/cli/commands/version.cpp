// kpkg version: the version and the libraries in use.
#include "command.hpp"
#include "kpkg/core/about.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/about.hpp"

namespace kpkg::cli {
namespace {

struct VersionOptions {
    bool libraries = false;
};

int run_version(const Globals& g, const VersionOptions& o) {
    About a = about(o.libraries);
    if (g.format != Format::text) {
        print_structured(g, io::about_document(a));
        return 0;
    }
    std::string out = "kpkg " + a.version + "\n";
    if (g.verbose > 0 || o.libraries) {
        out += "compiler: " + a.compiler + ", build type: " + a.build_type + "\n";
        std::vector<std::vector<std::string>> rows{{"LIBRARY", "VERSION", "LINKAGE", "DETAIL"}};
        for (const auto& c : a.components)
            rows.push_back({c.name, c.version.empty() ? "-" : c.version, c.linkage, c.detail});
        out += text::table(rows, {.width = g.width});
    }
    print(out);
    return 0;
}

void setup_version(CLI::App& root, Context& ctx) {
    auto opts = std::make_shared<VersionOptions>();
    CLI::App* cmd = root.add_subcommand("version", "Print the version of kpkg and its libraries");
    cmd->add_flag(
        "--libraries", opts->libraries,
        "Load the on-demand libraries (libcurl, libarchive, libsolv) and report their versions");
    cmd->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_version(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(version, 90, setup_version);

} // namespace kpkg::cli
