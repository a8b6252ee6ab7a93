// kpkg catalog: File-Based Catalogs.
#include "command.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/query.hpp"
#include "kpkg/catalog/report.hpp"
#include "kpkg/core/log.hpp"
#include "kpkg/core/text.hpp"

namespace kpkg::cli {
namespace {

struct ListOptions {
    std::string what; // packages | channels | bundles
    std::string source;
    std::string package;
};

std::string or_dash(const std::string& s) {
    return s.empty() ? "-" : s;
}

int run_list(const Globals& g, const ListOptions& o) {
    const model::Catalog cfg = load_clean_catalog(g, o.source);
    // An empty list is an answer (exit 0), but a wrong path should not pass unnoticed.
    if (cfg.packages.empty()) log::warning(o.source + ": no packages found");
    std::optional<std::string> pkg;
    if (!o.package.empty()) pkg = o.package;
    io::Node doc;
    std::vector<std::vector<std::string>> rows;

    if (o.what == "packages") {
        rows.push_back({"NAME", "DEFAULT CHANNEL", "CHANNELS", "BUNDLES", "LATEST"});
        const auto list = catalog::list_packages(cfg);
        for (const auto& r : list)
            rows.push_back({r.name, or_dash(r.default_channel), std::to_string(r.channels),
                            std::to_string(r.bundles), or_dash(r.head)});
        doc = catalog::packages_node(list);
    } else if (o.what == "channels") {
        rows.push_back({"PACKAGE", "CHANNEL", "HEAD", "ENTRIES"});
        const auto list = catalog::list_channels(cfg, pkg).take();
        for (const auto& r : list) {
            std::string head = r.heads.size() == 1 ? r.heads.front()
                               : r.heads.empty()   ? "<no head>"
                                                   : "<several: " + text::join(r.heads, ", ") + ">";
            rows.push_back({r.package, r.name, head, std::to_string(r.entries)});
        }
        doc = catalog::channels_node(list);
    } else {
        rows.push_back(
            {"PACKAGE", "CHANNEL", "BUNDLE", "VERSION", "REPLACES", "SKIPS", "SKIP RANGE"});
        const auto list = catalog::list_bundles(cfg, pkg).take();
        for (const auto& r : list) {
            // A long skips list as its count: the names are in -o json|yaml.
            std::string skips = text::join(r.skips, ",");
            if (text::display_width(skips) > 40) skips = std::to_string(r.skips.size()) + " skips";
            rows.push_back({r.package, r.channel, r.name, or_dash(r.version), or_dash(r.replaces),
                            or_dash(skips), or_dash(r.skip_range)});
        }
        doc = catalog::bundles_node(list);
    }
    if (g.format == Format::text)
        print(text::table(rows, {.width = g.width}));
    else
        print_structured(g, doc);
    return 0;
}

void setup_catalog(CLI::App& root, Context& ctx) {
    CLI::App* cat = group(root, "catalog", "Work with File-Based Catalogs");
    CLI::App* list =
        cat->add_subcommand("list", "List the packages, channels or bundles of a catalog");
    for (const char* what : {"packages", "channels", "bundles"}) {
        auto opts = std::make_shared<ListOptions>();
        opts->what = what;
        std::string help = std::string("List the ") + what + " of a catalog";
        CLI::App* sub = list->add_subcommand(what, help);
        sub->add_option("SRC", opts->source, "Catalog directory, file, or - for stdin")->required();
        if (opts->what != "packages")
            sub->add_option("PACKAGE", opts->package, "Only this package");
        sub->callback(
            [&ctx, opts] { ctx.action = [&ctx, opts] { return run_list(ctx.globals, *opts); }; });
    }
}

} // namespace

KPKG_COMMAND(catalog, 20, setup_catalog);

} // namespace kpkg::cli
