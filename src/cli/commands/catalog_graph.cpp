// kpkg catalog graph SRC PACKAGE [--channel C] [--format text|dot|mermaid]: the upgrade graph
// of a package, per channel, with heads and stranded entries marked.
//
// -o json|yaml writes the graph as data (kpkg/catalog/graph.hpp) whatever --format says.
#include "command.hpp"
#include "kpkg/catalog/graph.hpp"
#include "kpkg/catalog/load.hpp"

namespace kpkg::cli {
namespace {

struct GraphCliOptions {
    std::string source;
    std::string package;
    std::string channel;
    std::string format = "text";
};

int run_graph(const Globals& g, const GraphCliOptions& o) {
    const model::Catalog cfg = load_clean_catalog(g, o.source);
    std::optional<std::string> channel;
    if (!o.channel.empty()) channel = o.channel;
    auto graphs = catalog::package_graph(cfg, o.package, channel).take();
    if (g.format != Format::text)
        print_structured(g, catalog::graph_node(o.package, graphs));
    else if (o.format == "dot")
        print(catalog::graph_dot(graphs));
    else if (o.format == "mermaid")
        print(catalog::graph_mermaid(graphs));
    else
        print(catalog::graph_text(graphs));
    return 0;
}

void setup(CLI::App& root, Context& ctx) {
    CLI::App* cat = group(root, "catalog", "Work with File-Based Catalogs");
    auto opts = std::make_shared<GraphCliOptions>();
    CLI::App* cmd = cat->add_subcommand(
        "graph", "Show the upgrade graph of a package: replaces, skips and skipRange edges");
    cmd->add_option("SRC", opts->source, "Catalog directory, file, or - for stdin")->required();
    cmd->add_option("PACKAGE", opts->package, "The package")->required();
    cmd->add_option("--channel", opts->channel, "Only this channel")->option_text("CHANNEL");
    cmd->add_option("--format", opts->format, "text, dot (Graphviz) or mermaid")
        ->check(CLI::IsMember({"text", "dot", "mermaid"}))
        ->option_text("FORMAT");
    cmd->footer("Edges go from the entry upgraded from to the entry upgraded to.\nHeads, "
                "stranded entries and names outside the channel are marked.");
    cmd->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_graph(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(catalog_graph, 24, setup);

} // namespace kpkg::cli
