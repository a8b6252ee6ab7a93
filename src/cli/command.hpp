// The command table: each file in commands/ registers one command group with KPKG_COMMAND, so
// adding a command is adding one file (and its line in commands/meson.build).
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kpkg/catalog/load.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::resolve {
struct CatalogSource;
} // namespace kpkg::resolve

namespace kpkg::cli {

enum class Format { text, json, yaml };

// Global flags, filled before any command runs.
struct Globals {
    Format format = Format::text;
    int verbose = 0;
    bool quiet = false;
    bool no_color = false;
    // --no-cache (or KPKG_NO_CACHE): catalogs are not read from or written to the binary cache.
    bool no_cache = false;
    // Colour decisions: only on a terminal, never with --no-color or NO_COLOR set.
    bool color_stdout = false;
    bool color_stderr = false;
};

// What a command's parse callback leaves behind: the work to run once parsing succeeded.
// It returns the process exit code; errors travel as kpkg::Exception.
struct Context {
    Globals globals;
    std::function<int()> action;
};

using Setup = void (*)(CLI::App& root, Context& ctx);

struct Registration {
    const char* name;
    int order; // position in --help
    Setup setup;
};

std::vector<Registration>& registry();

struct Registrar {
    Registrar(const char* name, int order, Setup setup) {
        registry().push_back({name, order, setup});
    }
};

#define KPKG_COMMAND(name, order, setup_fn)                                                        \
    static const ::kpkg::cli::Registrar kpkg_command_##name {                                      \
#name, order, setup_fn                                                                     \
    }

// The command group `name` under root, created on first use, so several files can add
// subcommands to one group (kpkg bundle inspect|validate|render).
CLI::App* group(CLI::App& root, const std::string& name, const std::string& description);

// Writes structured output (json/yaml per the global format) to stdout.
void print_structured(const Globals& g, const io::Node& doc);

// Writes to stdout in one call.
void print(const std::string& s);

// Catalogs as the commands read them (catalogs.cpp): load_catalog with the binary cache in
// kpkg::catalog::default_cache_dir() unless --no-cache or KPKG_NO_CACHE (set, not "0") turns it
// off.
catalog::LoadOptions catalog_options(const Globals& g);
// The catalog at `src`; throws Exception: exit 1 when it cannot be read, 3 when it has load
// problems (the first one, with a count of the others).
model::Catalog load_clean_catalog(const Globals& g, const std::string& src);
// The catalogs of resolve and upgrade-path: each --catalog [NAME=]PATH loaded as above, the
// --priority NAME=N applied, then resolve::check_catalogs; `store` keeps the catalogs the
// sources point to. Throws Exception (exit 2 for bad arguments, 1 or 3 for the catalogs).
std::vector<resolve::CatalogSource> load_catalog_sources(const Globals& g,
                                                         const std::vector<std::string>& specs,
                                                         const std::vector<std::string>& priorities,
                                                         std::deque<model::Catalog>& store);

} // namespace kpkg::cli
