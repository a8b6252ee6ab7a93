// The command table: each file in commands/ registers one command group with KPKG_COMMAND, so
// adding a command is adding one file (and its line in commands/meson.build).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kpkg/catalog/load.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/model/catalog.hpp"
#include "kpkg/model/finding.hpp"

namespace kpkg::resolve {
struct CatalogSource;
} // namespace kpkg::resolve

namespace kpkg::cli {

// junit and github (JUnit XML, GitHub workflow annotations) only for the validate commands that
// call accept_ci_formats; the others are refused with a usage error.
enum class Format { text, json, yaml, junit, github };

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
    // The width of the terminal stdout is, 0 when it is not one: tables wrap to fit a terminal
    // and are never wrapped into a pipe or file.
    std::size_t width = 0;
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

// The whole command line run once: parse, run the command, and map what escapes to a message and
// an exit code (main.cpp). kpkg's main is only this; the fuzzing fork server calls it in each of
// its children.
int main_entry(int argc, char** argv);

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

// Marks `app` as a command that writes its findings as JUnit XML and GitHub workflow annotations
// with -o junit / -o github (see ci_output.cpp).
void accept_ci_formats(CLI::App* app);

// "1 error", "2 warnings": a count and its noun, plural unless the count is 1 (ci_output.cpp).
std::string plural(std::size_t n, const char* word);
// "1 error, 2 warnings", "3 errors", "1 warning", or "" when both are 0: how a validation's
// verdict line ends.
std::string counts(std::size_t errors, std::size_t warnings);

// What one run checked as a unit (a bundle directory, a catalog, a package) and its findings,
// each written by the CI formats (ci_output.cpp) with its severity, rule, message and position.
struct CiUnit {
    std::string name;
    std::vector<model::Finding> findings;
};

// JUnit XML for `command` ("kpkg bundle validate"): a <testsuite> per unit, a <testcase> per
// finding (an error as its <failure>, a warning passing with its text in <system-out>), and one
// passing "valid" test case for a unit without findings.
std::string format_junit(const std::string& command, const std::vector<CiUnit>& units);

// GitHub Actions workflow commands: an ::error or ::warning line per finding, with file, line,
// col and title (the rule) escaped as workflow commands require, then a plain verdict line per
// unit.
std::string format_github(const std::vector<CiUnit>& units);

// The columns of the terminal `fd` is, or 0 when it is not a terminal.
std::size_t terminal_width(int fd);

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
// sources point to; `keep_payloads`: olm.bundle.object and olm.csv.metadata values are kept.
// Throws Exception (exit 2 for bad arguments, 1 or 3 for the catalogs).
std::vector<resolve::CatalogSource> load_catalog_sources(const Globals& g,
                                                         const std::vector<std::string>& specs,
                                                         const std::vector<std::string>& priorities,
                                                         std::deque<model::Catalog>& store,
                                                         bool keep_payloads = false);

} // namespace kpkg::cli
