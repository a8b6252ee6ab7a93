// kpkg apply | delete: objects from manifests, plan trees and Package Operator packages applied to
// a cluster phase by phase (server-side apply, readiness waits, an ApplySet), or deleted.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "command.hpp"
#include "input.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/kube/apply.hpp"
#include "kpkg/kube/connect.hpp"
#include "kpkg/version.hpp"

namespace kpkg::cli {
namespace {

struct ApplyCliOptions {
    std::vector<std::string> sources;
    std::string kubeconfig, context, ns;
    std::string dry_run = "none";
    bool diff = false;
    bool wait = true;
    std::string timeout;
    bool force_conflicts = false;
    bool prune = false;
    std::string applyset;
    std::string config;
    int concurrency = 8;
};

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
    g_interrupted.store(true);
}

// SIGINT stops the run after the requests in flight; a second one ends the process.
void catch_interrupts() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, nullptr);
}

// Progress on stderr: on a terminal the current wait is one line rewritten in place; otherwise
// plain lines.
std::function<void(const kube::Progress&)> progress_printer(const Globals& g) {
    if (g.quiet) return {};
    const bool tty = ::isatty(2) == 1;
    auto pending = std::make_shared<bool>(false);
    return [tty, pending](const kube::Progress& p) {
        std::string line;
        if (tty && *pending) line += "\r\033[K";
        *pending = false;
        if (p.kind == kube::Progress::Kind::waiting) {
            line += "waiting for " + p.text;
            if (tty) {
                *pending = true;
                std::fputs(line.c_str(), stderr);
                std::fflush(stderr);
                return;
            }
        } else {
            line += p.text;
        }
        line += '\n';
        std::fputs(line.c_str(), stderr);
    };
}

io::Node report_node(const kube::RunReport& r, bool with_diff) {
    io::Node doc = io::Node::map();
    io::Node& list = doc.set("objects", io::Node::seq());
    for (const auto& o : r.objects) {
        io::Node n = io::Node::map();
        n.set("apiVersion", io::Node::string(o.api_version));
        n.set("kind", io::Node::string(o.kind));
        n.set("namespace", io::Node::string(o.ns));
        n.set("name", io::Node::string(o.name));
        n.set("phase", io::Node::string(o.phase));
        n.set("action", io::Node::string(o.action));
        n.set("ready", io::Node::boolean(o.ready));
        n.set("reason", io::Node::string(o.reason));
        if (with_diff) n.set("diff", io::Node::string(o.diff));
        list.push(std::move(n));
    }
    if (with_diff) doc.set("differs", io::Node::boolean(r.differs));
    doc.set("interrupted", io::Node::boolean(r.interrupted));
    doc.set("error", io::Node::string(r.error ? r.error->str() : std::string()));
    return doc;
}

std::string report_text(const Globals& g, const kube::RunReport& r) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"PHASE", "OBJECT", "NAMESPACE", "ACTION", "READY", "REASON"});
    for (const auto& o : r.objects)
        rows.push_back({o.phase, kube::object_name(o.kind, o.name), o.ns,
                        o.action.empty() ? "-" : o.action, o.ready ? "yes" : "no", o.reason});
    text::TableOptions to;
    to.width = g.width;
    return text::table(rows, to);
}

std::unique_ptr<kube::Api> connect(const ApplyCliOptions& o) {
    kube::ConnectOptions co;
    co.kubeconfig = o.kubeconfig;
    co.context = o.context;
    co.namespace_ = o.ns;
    co.user_agent = "kpkg/" KPKG_VERSION;
    co.concurrency = o.concurrency;
    return kube::connect(co).take();
}

kube::RunOptions run_options(const ApplyCliOptions& o, const kube::Api& api, const Globals& g) {
    kube::RunOptions ro;
    ro.dry_run = o.dry_run == "client"   ? kube::DryRun::client
                 : o.dry_run == "server" ? kube::DryRun::server
                                         : kube::DryRun::none;
    ro.diff = o.diff;
    ro.wait = o.wait;
    ro.force_conflicts = o.force_conflicts;
    ro.prune = o.prune;
    ro.applyset = o.applyset;
    ro.ns = api.default_namespace();
    if (!o.timeout.empty()) ro.timeout = kube::parse_duration(o.timeout, "--timeout").take();
    ro.concurrency = o.concurrency;
    ro.tooling = "kpkg/v" KPKG_VERSION;
    ro.interrupted = &g_interrupted;
    ro.progress = progress_printer(g);
    return ro;
}

kube::Input read_inputs(const ApplyCliOptions& o, const kube::Api& api) {
    kube::Input in;
    kube::SourceOptions so;
    so.config_path = o.config;
    so.ns = api.default_namespace();
    for (const auto& src : o.sources) {
        auto tree = open_input(src);
        kube::read_source(*tree, so, in).take();
    }
    return in;
}

// Prints the report and turns its outcome into the exit code (an error is thrown after it).
int finish(const Globals& g, const kube::RunReport& r, bool diff) {
    if (g.format == Format::text) {
        std::string out;
        if (diff) {
            for (const auto& o : r.objects)
                out += o.diff;
        } else if (!r.objects.empty()) {
            out = report_text(g, r);
        }
        print(out);
    } else {
        print_structured(g, report_node(r, diff));
    }
    if (r.error) throw Exception(*r.error);
    if (diff && r.differs) return static_cast<int>(ExitCode::differs);
    return 0;
}

void check_common(const ApplyCliOptions& o) {
    if (o.concurrency < 1 || o.concurrency > 64)
        throw Exception(Error::usage("--concurrency must be between 1 and 64"));
    if (!o.timeout.empty()) kube::parse_duration(o.timeout, "--timeout").take();
}

int run_apply(const Globals& g, const ApplyCliOptions& o) {
    check_common(o);
    if (o.prune && o.applyset.empty())
        throw Exception(Error::usage("--prune needs --applyset NAME (the set whose members "
                                     "left the input are deleted)"));
    if (!o.applyset.empty() && !o.prune)
        throw Exception(Error::usage("--applyset is used with --prune (as kubectl does)"));
    if (o.diff && o.dry_run != "none")
        throw Exception(Error::usage("--diff is a server dry run already: leave out --dry-run"));
    auto api = connect(o);
    const kube::Input in = read_inputs(o, *api);
    kube::RunOptions ro = run_options(o, *api, g);
    catch_interrupts();
    const kube::RunReport r = kube::apply(*api, in, ro);
    return finish(g, r, o.diff);
}

int run_delete(const Globals& g, const ApplyCliOptions& o) {
    check_common(o);
    if (o.sources.empty() == o.applyset.empty())
        throw Exception(Error::usage("kpkg delete takes either SRC... or --applyset NAME"));
    auto api = connect(o);
    kube::RunOptions ro = run_options(o, *api, g);
    catch_interrupts();
    kube::RunReport r;
    if (o.applyset.empty()) {
        const kube::Input in = read_inputs(o, *api);
        r = kube::remove(*api, &in, ro);
    } else {
        r = kube::remove(*api, nullptr, ro);
    }
    return finish(g, r, false);
}

void add_connection(CLI::App* c, ApplyCliOptions& o) {
    c->add_option("--kubeconfig", o.kubeconfig,
                  "The kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
        ->option_text("FILE");
    c->add_option("--context", o.context, "The kubeconfig context (default: its current one)")
        ->option_text("NAME");
    c->add_option("--namespace,-n", o.ns,
                  "The namespace of objects that name none, and of the ApplySet parent "
                  "(default: the context's)")
        ->option_text("NS");
    c->add_option("--timeout", o.timeout,
                  "Give up waiting after this long for the whole run (90s, 5m, 1h30m; default: "
                  "no limit)")
        ->option_text("DURATION");
    c->add_flag("--wait,!--no-wait", o.wait,
                "Wait for each phase's objects to be ready (deleted) before the next; "
                "--wait=false only waits for CRDs the input's custom resources need");
    c->add_option("--concurrency", o.concurrency, "Requests in flight at once (default 8)")
        ->option_text("N");
}

void setup(CLI::App& root, Context& ctx) {
    auto ao = std::make_shared<ApplyCliOptions>();
    CLI::App* a = root.add_subcommand(
        "apply", "Apply manifests, plan trees or Package Operator packages to a cluster in phases");
    a->add_option("SRC", ao->sources,
                  "Manifest files or directories, kpkg plan trees, Package Operator packages")
        ->required();
    add_connection(a, *ao);
    a->add_option("--dry-run", ao->dry_run,
                  "client: check locally, send nothing; server: the server checks, nothing "
                  "changes")
        ->check(CLI::IsMember({"none", "client", "server"}))
        ->option_text("client|server");
    a->add_flag("--diff", ao->diff,
                "Show what would change (server dry run against the live objects) and exit 5 "
                "when something would");
    a->add_flag("--force-conflicts", ao->force_conflicts,
                "Take over fields another field manager owns");
    a->add_flag("--prune", ao->prune,
                "Delete the members of the --applyset set that are no longer in the input");
    a->add_option("--applyset", ao->applyset,
                  "The ApplySet's parent, [RESOURCE[.GROUP]/]NAME (default resource: secrets in "
                  "-n NS)")
        ->option_text("NAME");
    a->add_option("--config", ao->config,
                  "A Package Operator package's configuration (YAML or JSON)")
        ->option_text("FILE");
    a->footer("Exit 0 when applied (and ready), 1 on a server error, a timeout or an "
              "interruption, 2 for bad arguments, 3 for invalid input (nothing is applied), 5 "
              "when --diff finds differences.\nSee kpkg-apply(1).");
    a->callback([&ctx, ao] { ctx.action = [&ctx, ao] { return run_apply(ctx.globals, *ao); }; });

    auto d_o = std::make_shared<ApplyCliOptions>();
    CLI::App* d = root.add_subcommand(
        "delete", "Delete what kpkg apply applied, in reverse phase order, waiting for it to go");
    d->add_option("SRC", d_o->sources,
                  "Manifest files or directories, kpkg plan trees, Package Operator packages");
    add_connection(d, *d_o);
    d->add_option("--applyset", d_o->applyset,
                  "Delete the members of this ApplySet, then its parent ([RESOURCE[.GROUP]/]NAME)")
        ->option_text("NAME");
    d->add_option("--dry-run", d_o->dry_run,
                  "client: list what would be deleted; server: the server checks, nothing "
                  "changes")
        ->check(CLI::IsMember({"none", "client", "server"}))
        ->option_text("client|server");
    d->add_option("--config", d_o->config,
                  "A Package Operator package's configuration (YAML or JSON)")
        ->option_text("FILE");
    d->footer("Exit 0 when deleted, 1 on a server error or a timeout, 2 for bad arguments, 3 "
              "for invalid input.\nSee kpkg-delete(1).");
    d->callback(
        [&ctx, d_o] { ctx.action = [&ctx, d_o] { return run_delete(ctx.globals, *d_o); }; });
}

} // namespace

KPKG_COMMAND(apply, 43, setup);

} // namespace kpkg::cli
