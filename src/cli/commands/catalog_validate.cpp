// kpkg catalog validate SRC: every problem of a File-Based Catalog in one run, as opm's
// "invalid index" tree (text) or as data (-o json|yaml, schema in kpkg/catalog/report.hpp).
//
// Text output: the errors as opm's tree, then (unless -q) the warnings as a tree rooted at
// "warnings" and a summary line:
//   SRC: invalid: 3 errors in 2 packages, 1 warning
//   SRC: valid
//   SRC: valid, 31 warnings
// Exit codes: 0 no errors, 3 errors (files that do not parse included; a catalog without
// packages unless --allow-empty; with --strict warnings count as errors), 1 unreadable.
// --lenient reports the two findings older opm releases accept as warnings.
#include <set>

#include "command.hpp"
#include "input.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/report.hpp"
#include "kpkg/catalog/validate.hpp"

namespace kpkg::cli {
namespace {

struct ValidateCliOptions {
    std::string source;
    bool strict = false;
    bool lenient = false;
    bool allow_empty = false;
};

int run_validate(const Globals& g, const ValidateCliOptions& o) {
    // I/O errors (exit 1) throw; everything wrong with the content is in the catalog's problems.
    const model::Catalog cat =
        catalog::load_catalog(*open_input(o.source, Want::catalog), catalog_options(g)).take();
    catalog::ValidateOptions vopts;
    vopts.strict = o.strict;
    vopts.lenient = o.lenient;
    vopts.allow_empty = o.allow_empty;
    const std::vector<catalog::Finding> issues = catalog::validate(cat, vopts);
    const std::size_t errors = catalog::count(issues, catalog::Severity::error);
    const std::size_t warnings = catalog::count(issues, catalog::Severity::warning);

    if (g.format == Format::junit || g.format == Format::github) {
        std::vector<CiUnit> units{{o.source, {}}};
        for (const auto& i : issues) {
            // The message with what it is about, as the text tree shows it by nesting.
            std::string about;
            if (!i.package.empty()) about += "package " + i.package;
            if (!i.channel.empty()) about += (about.empty() ? "" : ", ") + ("channel " + i.channel);
            if (!i.bundle.empty()) about += (about.empty() ? "" : ", ") + ("bundle " + i.bundle);
            model::Finding f = i;
            f.message = (about.empty() ? "" : about + ": ") + i.message;
            units[0].findings.push_back(std::move(f));
        }
        print(g.format == Format::junit ? format_junit("kpkg catalog validate", units)
                                        : format_github(units));
    } else if (g.format == Format::text) {
        std::string out = catalog::format_tree(issues, catalog::Severity::error);
        if (!g.quiet) {
            out += catalog::format_tree(issues, catalog::Severity::warning);
            std::string summary = o.source + ": ";
            if (errors > 0) {
                std::set<std::string> packages;
                for (const auto& i : issues)
                    if (i.severity == catalog::Severity::error && !i.package.empty())
                        packages.insert(i.package);
                summary += "invalid: " + plural(errors, "error");
                if (!packages.empty()) summary += " in " + plural(packages.size(), "package");
            } else {
                summary += "valid";
            }
            if (warnings > 0) summary += ", " + plural(warnings, "warning");
            out += summary + "\n";
        }
        print(out);
    } else {
        print_structured(g, catalog::validate_report_node(issues));
    }
    return errors == 0 ? 0 : static_cast<int>(ExitCode::invalid);
}

void setup(CLI::App& root, Context& ctx) {
    CLI::App* cat = group(root, "catalog", "Work with File-Based Catalogs");
    auto opts = std::make_shared<ValidateCliOptions>();
    CLI::App* v = cat->add_subcommand(
        "validate", "Check a File-Based Catalog as opm validate does, reporting every problem");
    v->add_option("SRC", opts->source, "Catalog directory, file, or - for stdin")->required();
    CLI::Option* strict = v->add_flag("--strict", opts->strict, "Treat warnings as errors");
    v->add_flag("--lenient", opts->lenient,
                "As older opm: bad relatedImages and skipRanges are warnings")
        ->excludes(strict);
    v->add_flag("--allow-empty", opts->allow_empty,
                "Accept a catalog without packages (else \"no packages found\", exit 3)");
    v->footer("Errors are printed as opm's \"invalid index\" tree, grouped per package, channel\n"
              "and bundle, each with FILE:LINE:COL; then warnings, as a tree rooted at\n"
              "\"warnings\", and a summary line. With -o json|yaml: {\"valid\", \"errors\",\n"
              "\"warnings\", \"findings\": [{\"severity\", \"scope\", \"rule\", \"package\", "
              "\"channel\",\n\"bundle\", \"message\", \"file\", \"line\", \"column\"}]}.\n"
              "With -o junit: JUnit XML; with -o github: GitHub workflow annotations.\n"
              "Exit status: 0 valid, 3 invalid (--strict: or warnings; a catalog without\n"
              "packages unless --allow-empty), 1 unreadable.");
    accept_ci_formats(v);
    v->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_validate(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(catalog_validate, 24, setup);

} // namespace kpkg::cli
