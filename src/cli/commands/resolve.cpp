// kpkg resolve: OLM Subscriptions resolved offline against catalogs (kpkg/resolve/resolve.hpp).
#include <deque>
#include <optional>

#include "command.hpp"
#include "input.hpp"
#include "kpkg/core/atomic_file.hpp"
#include "kpkg/core/log.hpp"
#include "kpkg/resolve/lockfile.hpp"
#include "kpkg/resolve/resolve.hpp"
#include "paths.hpp"
#include "requests.hpp"

namespace kpkg::cli {
namespace {

struct ResolveCliOptions {
    RequestFlags req;
    bool one_hop = false;
    bool all_packages = false;
    std::string debug_testcase;
    std::string lockfile;
    std::string locked;
};

int run_resolve(const Globals& g, const ResolveCliOptions& o) {
    const RequestFlags& f = o.req;
    if (o.all_packages && (!f.requests.empty() || !f.installed.empty() || f.upgrade ||
                           !f.starting_csvs.empty() || !f.source.empty()))
        throw Exception(Error::usage("--all-packages resolves every package on its own: it takes "
                                     "no request, --installed, --upgrade, --starting-csv or "
                                     "--source"));
    if (!f.source.empty() && f.requests.empty())
        throw Exception(Error::usage("--source names the catalog of the requests: give a request"));
    if (!o.lockfile.empty() && !o.locked.empty())
        throw Exception(Error::usage("--lockfile writes a lock and --locked reproduces one: "
                                     "give one of them"));
    if (o.all_packages && (!o.lockfile.empty() || !o.locked.empty()))
        throw Exception(Error::usage("--all-packages does not write or read lockfiles"));
    if (o.one_hop && !f.upgrade && f.installed.empty())
        throw Exception(Error::usage("--one-hop limits upgrades: it needs --installed"));
    // Every input read once, no output written over or into one, before anything is read.
    std::vector<InputPath> inputs = request_inputs(f);
    if (!o.locked.empty()) inputs.push_back({"--locked", o.locked});
    check_stdin_once(inputs);
    check_output_outside({"--lockfile", o.lockfile}, inputs);
    check_output_outside({"--debug-testcase", o.debug_testcase}, inputs);
    resolve::Options opts;
    opts.upgrade = f.upgrade;
    opts.one_hop = o.one_hop;
    opts.exclude_deprecated = f.exclude_deprecated;
    opts.starting_csvs = f.starting_csvs;
    opts.debug_testcase = o.debug_testcase;

    if (o.all_packages) {
        std::deque<model::Catalog> store;
        auto catalogs = load_catalog_sources(g, f.catalogs, f.priorities, store);
        auto reports = resolve::resolve_all_packages(catalogs, opts).take();
        if (g.format == Format::text)
            print(resolve::packages_text(reports));
        else
            print_structured(g, resolve::packages_node(reports));
        bool invalid = false, unsat = false;
        for (const auto& r : reports) {
            invalid |= r.status == resolve::PackageReport::Status::invalid;
            unsat |= r.status == resolve::PackageReport::Status::unsatisfiable;
        }
        return invalid ? static_cast<int>(ExitCode::invalid)
               : unsat ? static_cast<int>(ExitCode::unsatisfiable)
                       : 0;
    }

    resolve::Request req;
    fill_request(f, req);
    req.options = opts;
    std::optional<resolve::Lock> lock;
    if (!o.locked.empty()) lock = resolve::load_lock(*io::open_path(o.locked)).take();
    std::deque<model::Catalog> store;
    auto catalogs = load_request_catalogs(g, f, store);
    if (lock) {
        auto check = resolve::resolve_locked(catalogs, req, *lock).take();
        if (!check.holds) {
            if (g.format == Format::text) {
                std::string out = "the lock " + o.locked + " does not hold:\n";
                for (const auto& d : check.drift)
                    out += "  " + d + "\n";
                print(out);
            } else {
                print_structured(g, resolve::drift_node(check));
            }
            return static_cast<int>(ExitCode::differs);
        }
        for (const auto& w : check.resolution.warnings)
            log::warning(w);
        if (g.format == Format::text)
            print(resolve::resolution_text(check.resolution));
        else
            print_structured(g, resolve::resolution_node(check.resolution));
        return 0;
    }
    auto res = resolve::resolve(catalogs, req).take();
    for (const auto& w : res.warnings)
        log::warning(w);
    if (res.satisfiable && !o.lockfile.empty())
        write_output_file(o.lockfile, resolve::lock_yaml(resolve::make_lock(catalogs, req, res)))
            .take();
    if (g.format == Format::text)
        print(resolve::resolution_text(res));
    else
        print_structured(g, resolve::resolution_node(res));
    return res.satisfiable ? 0 : static_cast<int>(ExitCode::unsatisfiable);
}

void setup(CLI::App& root, Context& ctx) {
    auto opts = std::make_shared<ResolveCliOptions>();
    CLI::App* cmd = root.add_subcommand(
        "resolve", "Resolve operator subscriptions and their dependencies against catalogs, as "
                   "OLM would");
    add_request_flags(cmd, opts->req);
    cmd->add_flag("--one-hop", opts->one_hop,
                  "Upgrade by one step only, as one OLM InstallPlan does");
    cmd->add_flag("--all-packages", opts->all_packages,
                  "Resolve every package of the catalogs on its own; exit 4 if any fails");
    cmd->add_option("--lockfile", opts->lockfile,
                    "Write the resolution with the catalogs' digests to FILE (atomically)")
        ->option_text("FILE");
    cmd->add_option("--locked", opts->locked,
                    "Reproduce the lock in FILE exactly, or say what drifted (exit 5)")
        ->option_text("FILE");
    cmd->add_option("--debug-testcase", opts->debug_testcase,
                    "Write the libsolv testcase of the final solve into DIR (replay: testsolv)")
        ->option_text("DIR");
    cmd->footer("Exit 0 when resolved, 4 when there is no solution (the problems are explained), "
                "5 when a --locked lock does not hold, 3 for invalid input.\nSee kpkg-resolve(1) "
                "for the semantics, the lockfile and the json/yaml schema.");
    cmd->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_resolve(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(resolve, 40, setup);

} // namespace kpkg::cli
