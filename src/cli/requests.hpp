// The requests and flags `kpkg resolve` and `kpkg plan` share: PKG[:CHANNEL][@RANGE][/CATALOG]
// arguments, --catalog, --priority, --installed, --starting-csv, --source, --upgrade and
// --exclude-deprecated, and how they become a resolve::Request over loaded catalogs.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "command.hpp"
#include "kpkg/model/catalog.hpp"
#include "kpkg/resolve/resolve.hpp"
#include "paths.hpp"

namespace kpkg::cli {

struct RequestFlags {
    std::vector<std::string> requests;
    std::vector<std::string> catalogs;
    std::vector<std::string> priorities;
    std::string installed;
    std::vector<std::string> starting_csvs;
    std::string source;
    bool upgrade = false;
    bool exclude_deprecated = false;
};

// Adds the REQUEST arguments and the shared flags to `cmd` (--catalog is required).
void add_request_flags(CLI::App* cmd, RequestFlags& f);

// The inputs the flags name (--catalog paths, --installed), for the stdin and output checks.
std::vector<InputPath> request_inputs(const RequestFlags& f);

// Fills `req` from the flags: the subscriptions parsed (with --source as their catalog), the
// installed CSVs read, the starting CSVs and --upgrade / --exclude-deprecated in its options.
// Throws Exception (exit 2 or 3).
void fill_request(const RequestFlags& f, resolve::Request& req);

// The catalogs of the flags, loaded (keep_payloads: the olm.bundle.object and olm.csv.metadata
// values are kept) and checked, --source checked against them. Throws Exception.
std::vector<resolve::CatalogSource> load_request_catalogs(const Globals& g, const RequestFlags& f,
                                                          std::deque<model::Catalog>& store,
                                                          bool keep_payloads = false);

} // namespace kpkg::cli
