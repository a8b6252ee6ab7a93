// kpkg apply | delete | install: objects from manifests, plan trees and Package Operator packages
// applied to a cluster phase by phase (server-side apply, readiness waits, an ApplySet), or
// deleted.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "command.hpp"
#include "images.hpp"
#include "input.hpp"
#include "kpkg/core/duration.hpp"
#include "kpkg/core/log.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/kube/apply.hpp"
#include "kpkg/kube/connect.hpp"
#include "kpkg/kube/kubeconfig.hpp"
#include "kpkg/plan/tree.hpp"
#include "kpkg/version.hpp"
#include "planning.hpp"

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

// A first SIGINT stops the run after the requests in flight (a credential plugin at once); a
// second one, SIGTERM and SIGHUP end the process as they would have, but first kill the
// credential plugins running (each in a process group of its own, which Ctrl-C does not reach).
extern "C" void on_signal(int sig) {
    if (sig == SIGINT && !g_interrupted.exchange(true)) return;
    kube::kill_running_plugins();
    ::signal(sig, SIG_DFL);
    ::raise(sig); // delivered when the handler returns
}

void catch_interrupts() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (int sig : signals)
        sigaddset(&sa.sa_mask, sig);
    for (int sig : signals) {
        struct sigaction old {};
        // SIGTERM or SIGHUP ignored (nohup) stays ignored; SIGINT is caught as it always was.
        if (sig != SIGINT && sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sig, &sa, nullptr);
    }
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
    co.interrupted = &g_interrupted;
    // The global --request-timeout bounds each API request as it bounds registry requests.
    if (const auto& t = image_flags().request_timeout) co.request_timeout = *t;
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
    if (!o.timeout.empty()) ro.timeout = parse_duration(o.timeout, "--timeout").take();
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
    if (!o.timeout.empty()) parse_duration(o.timeout, "--timeout").take();
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

void add_connection(CLI::App* c, ApplyCliOptions& o, bool with_namespace = true) {
    c->add_option("--kubeconfig", o.kubeconfig,
                  "The kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
        ->option_text("FILE");
    c->add_option("--context", o.context, "The kubeconfig context (default: its current one)")
        ->option_text("NAME");
    if (with_namespace)
        c->add_option("--namespace,-n", o.ns,
                      "The namespace of objects that name none, and of the ApplySet parent "
                      "(default: the context's)")
            ->option_text("NS");
    c->add_option("--timeout", o.timeout,
                  "A time limit for the whole run from its first request: requests, retries, "
                  "credential plugins and waits (90s, 5m, 1h30m; default: no limit, 30s per "
                  "request)")
        ->option_text("DURATION");
    c->add_flag("--wait,!--no-wait", o.wait,
                "Wait for each phase's objects to be ready (deleted) before the next; "
                "--wait=false only waits for CRDs the input's custom resources need");
    c->add_option("--concurrency", o.concurrency, "Requests in flight at once (default 8)")
        ->option_text("N");
}

// --- kpkg install: resolve + plan + apply -----------------------------------------------------

struct InstallCliOptions {
    PlanFlags plan;
    TreeFlags tree;
    ApplyCliOptions apply;
    bool yes = false;
};

// What is about to happen, for people (stderr): the operators, the objects by kind, where.
std::string install_summary(const plan::InstallPlan& p, const kube::Input& in,
                            const std::string& mode, const kube::Api& api) {
    std::string out = "Installing into ";
    out.append(api.describe()).append(", namespace ").append(p.namespace_name);
    out.append(" (").append(mode).append("):\n");
    for (const auto& op : p.operators) {
        const auto& s = op.selected;
        out.append("  ").append(s.bundle).append("  ").append(s.package).append(" ");
        out.append(s.version).append(" from ").append(s.catalog).append(", channel ");
        out.append(s.channel);
        if (!s.replaces.empty()) out.append(", upgrades ").append(s.replaces);
        if (op.dependency) out.append(" (").append(s.reason).append(")");
        out.append("\n");
    }
    std::map<std::string, std::size_t> kinds;
    std::size_t total = 0;
    for (const auto& o : in.plain) {
        const io::Node* k = o.object.get("kind");
        ++kinds[k && k->is_string() ? k->text : std::string("?")];
        ++total;
    }
    out.append("  ").append(std::to_string(total)).append(total == 1 ? " object:" : " objects:");
    bool first = true;
    for (const auto& [kind, n] : kinds) {
        out.append(first ? " " : ", ").append(std::to_string(n)).append(" ").append(kind);
        first = false;
    }
    out.append("\n");
    return out;
}

// On a terminal, asks before changing the cluster; true to go on.
bool confirm(const std::string& question) {
    std::fputs(question.c_str(), stderr);
    std::fflush(stderr);
    std::string answer;
    for (int c = std::getchar(); c != EOF && c != '\n'; c = std::getchar())
        answer.push_back(static_cast<char>(c));
    return answer == "y" || answer == "Y" || answer == "yes" || answer == "Yes";
}

int run_install(const Globals& g, InstallCliOptions& o) {
    check_common(o.apply);
    check_plan_flags(o.plan);
    if (o.apply.prune && o.apply.applyset.empty())
        throw Exception(Error::usage("--prune needs --applyset NAME (the set whose members "
                                     "left the input are deleted)"));
    if (!o.apply.applyset.empty() && !o.apply.prune)
        throw Exception(Error::usage("--applyset is used with --prune (as kubectl does)"));
    if (o.apply.diff && o.apply.dry_run != "none")
        throw Exception(Error::usage("--diff is a server dry run already: leave out --dry-run"));
    const plan::TreeOptions topts = tree_options(o.tree, "--mode");
    o.apply.ns = o.plan.namespace_name;
    // The kubeconfig is read (and refused) before the catalogs are loaded.
    auto api = connect(o.apply);
    const plan::InstallPlan p = make_plan(g, o.plan);
    const plan::GitOpsTree files = plan::make_tree(p, topts).take();
    for (const auto& w : p.warnings)
        log::warning(w);
    io::MemoryTree tree("kpkg install");
    for (const auto& f : files.files)
        tree.add_file(f.path, f.content);
    kube::Input in;
    kube::SourceOptions so;
    so.ns = o.plan.namespace_name;
    kube::read_source(tree, so, in).take();
    if (!g.quiet) std::fputs(install_summary(p, in, o.tree.format, *api).c_str(), stderr);
    const bool changes = o.apply.dry_run == "none" && !o.apply.diff;
    if (changes && !o.yes && ::isatty(0) == 1 && ::isatty(2) == 1 &&
        !confirm("Apply these objects? [y/N] "))
        throw Exception(Error::io("install cancelled: nothing was applied"));
    kube::RunOptions ro = run_options(o.apply, *api, g);
    catch_interrupts();
    const kube::RunReport r = kube::apply(*api, in, ro);
    return finish(g, r, o.apply.diff);
}

void setup_install(CLI::App& root, Context& ctx) {
    auto io_ = std::make_shared<InstallCliOptions>();
    io_->tree.format = "manifests";
    CLI::App* c = root.add_subcommand(
        "install", "Resolve operators from catalogs, plan them and apply them to a cluster");
    add_plan_flags(c, io_->plan,
                   "The namespace the operators are installed in (their Subscriptions, "
                   "Deployments, ServiceAccounts, ...)");
    c->add_option("--mode", io_->tree.format,
                  "manifests (default: the operators' objects, installed without OLM) or olm "
                  "(Namespace, OperatorGroup, CatalogSource and Subscriptions, for OLM to "
                  "install)")
        ->check(CLI::IsMember({"manifests", "olm"}))
        ->option_text("MODE");
    add_tree_flags(c, io_->tree, false);
    add_connection(c, io_->apply, false);
    c->add_option("--dry-run", io_->apply.dry_run,
                  "client: check locally, send nothing; server: the server checks, nothing "
                  "changes")
        ->check(CLI::IsMember({"none", "client", "server"}))
        ->option_text("client|server");
    c->add_flag("--diff", io_->apply.diff,
                "Show what would change (server dry run against the live objects) and exit 5 "
                "when something would");
    c->add_flag("--force-conflicts", io_->apply.force_conflicts,
                "Take over fields another field manager owns");
    c->add_flag("--prune", io_->apply.prune,
                "Delete the members of the --applyset set that are no longer installed");
    c->add_option("--applyset", io_->apply.applyset,
                  "Record what is installed as an ApplySet, [RESOURCE[.GROUP]/]NAME (default "
                  "resource: secrets in -n NS)")
        ->option_text("NAME");
    c->add_flag("--yes,-y", io_->yes, "Do not ask before applying (on a terminal it asks)");
    c->footer("The summary of what will be installed goes to stderr first; on a terminal kpkg "
              "asks before applying unless --yes.\nExit 0 when installed (and ready), 1 on a "
              "server error, a timeout, an interruption or a refused confirmation, 2 for bad "
              "arguments, 3 for invalid input (nothing is applied), 4 when there is no "
              "solution, 5 when --diff finds differences.\nSee kpkg-install(1).");
    c->callback(
        [&ctx, io_] { ctx.action = [&ctx, io_] { return run_install(ctx.globals, *io_); }; });
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
    setup_install(root, ctx);
}

} // namespace

KPKG_COMMAND(apply, 43, setup);

} // namespace kpkg::cli
