#include "requests.hpp"

#include "kpkg/core/error.hpp"
#include "kpkg/io/tree.hpp"

namespace kpkg::cli {

void add_request_flags(CLI::App* cmd, RequestFlags& f) {
    cmd->add_option("REQUEST", f.requests,
                    "PKG[:CHANNEL][@RANGE][/CATALOG], one per subscription (an OLM "
                    "Subscription)");
    cmd->add_option("--catalog", f.catalogs,
                    "A catalog, named after its directory unless NAME is given (repeatable)")
        ->option_text("[NAME=]PATH")
        ->required();
    cmd->add_option("--priority", f.priorities,
                    "Priority of catalog NAME (higher first, default 0), as a CatalogSource's")
        ->option_text("NAME=N");
    cmd->add_option("--installed", f.installed, "YAML file of the installed CSVs")
        ->option_text("FILE");
    cmd->add_option("--starting-csv", f.starting_csvs,
                    "Start the request of this bundle's package at this bundle (repeatable)")
        ->option_text("CSV");
    cmd->add_option("--source", f.source,
                    "The catalog of every request that names none (a Subscription's spec.source)")
        ->option_text("CATALOG");
    cmd->add_flag("--upgrade", f.upgrade, "Subscribe every installed CSV and move it forward");
    cmd->add_flag("--exclude-deprecated", f.exclude_deprecated,
                  "Leave out candidates deprecated by olm.deprecations");
}

std::vector<InputPath> request_inputs(const RequestFlags& f) {
    std::vector<InputPath> inputs;
    for (const auto& spec : f.catalogs)
        inputs.push_back({"--catalog", resolve::parse_catalog_spec(spec).take().second, true});
    if (!f.installed.empty()) inputs.push_back({"--installed", f.installed});
    return inputs;
}

void fill_request(const RequestFlags& f, resolve::Request& req) {
    req.options.upgrade = f.upgrade;
    req.options.exclude_deprecated = f.exclude_deprecated;
    req.options.starting_csvs = f.starting_csvs;
    for (const auto& s : f.requests) {
        req.subscriptions.push_back(resolve::parse_subscription(s).take());
        resolve::default_source(req.subscriptions.back(), f.source);
    }
    if (!f.installed.empty())
        req.installed = resolve::load_installed(*io::open_path(f.installed)).take();
}

std::vector<resolve::CatalogSource> load_request_catalogs(const Globals& g, const RequestFlags& f,
                                                          std::deque<model::Catalog>& store,
                                                          bool keep_payloads) {
    auto catalogs = load_catalog_sources(g, f.catalogs, f.priorities, store, keep_payloads);
    if (!f.source.empty()) resolve::check_source(catalogs, f.source).take();
    return catalogs;
}

} // namespace kpkg::cli
