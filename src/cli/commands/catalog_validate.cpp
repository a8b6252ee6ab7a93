// kpkg catalog validate SRC: every problem of a File-Based Catalog in one run, as opm's
// "invalid index" tree (text) or as data (-o json|yaml, schema in kpkg/catalog/validate.hpp).
// Exit codes: 0 valid, 3 invalid (including files that do not parse), 1 unreadable.
#include <cstdio>

#include "command.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/validate.hpp"

namespace kpkg::cli {
namespace {

struct ValidateOptions {
    std::string source;
};

io::Node finding_node(const catalog::Finding& f) {
    io::Node n = io::Node::map();
    n.set("scope", io::Node::string(catalog::scope_name(f.scope)));
    n.set("rule", io::Node::string(f.rule));
    n.set("package", io::Node::string(f.package));
    n.set("channel", io::Node::string(f.channel));
    n.set("bundle", io::Node::string(f.bundle));
    n.set("message", io::Node::string(f.message));
    n.set("file", io::Node::string(f.pos.file));
    n.set("line", io::Node::integer(f.pos.line));
    n.set("column", io::Node::integer(f.pos.column));
    return n;
}

int run_validate(const Globals& g, const ValidateOptions& o) {
    std::vector<catalog::Finding> findings;
    auto cfg = catalog::load(o.source);
    if (!cfg) {
        const Error& e = cfg.error();
        if (e.code != ExitCode::invalid) throw Exception(e);
        catalog::Finding f;
        f.rule = "catalog.load";
        f.message = e.subject.empty() ? e.message : e.subject + ": " + e.message;
        f.pos = e.pos;
        findings.push_back(std::move(f));
    } else {
        findings = catalog::validate(*cfg);
    }
    if (g.format == Format::text) {
        if (!findings.empty())
            print(catalog::format_tree(findings));
        else if (!g.quiet)
            print(o.source + ": valid\n");
    } else {
        io::Node doc = io::Node::map();
        doc.set("valid", io::Node::boolean(findings.empty()));
        doc.set("errors", io::Node::integer(static_cast<std::int64_t>(findings.size())));
        io::Node list = io::Node::seq();
        for (const auto& f : findings)
            list.push(finding_node(f));
        doc.set("findings", std::move(list));
        print_structured(g, doc);
    }
    return findings.empty() ? 0 : static_cast<int>(ExitCode::invalid);
}

void setup(CLI::App& root, Context& ctx) {
    CLI::App* cat = group(root, "catalog", "Work with File-Based Catalogs");
    auto opts = std::make_shared<ValidateOptions>();
    CLI::App* v = cat->add_subcommand(
        "validate", "Check a File-Based Catalog as opm validate does, reporting every problem");
    v->add_option("SRC", opts->source, "Catalog directory, file, or - for stdin")->required();
    v->footer("Problems are printed as opm's \"invalid index\" tree, grouped per package, channel\n"
              "and bundle, each with FILE:LINE:COL. With -o json|yaml: {\"valid\", \"errors\",\n"
              "\"findings\": [{\"scope\", \"rule\", \"package\", \"channel\", \"bundle\", "
              "\"message\",\n\"file\", \"line\", \"column\"}]}.\n"
              "Exit status: 0 valid, 3 invalid, 1 unreadable.");
    v->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_validate(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(catalog_validate, 24, setup);

} // namespace kpkg::cli
