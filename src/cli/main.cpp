// kpkg's front end: global flags, the command table, and the mapping of errors to exit codes
// (main_entry; main itself is in kpkg.cpp).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <sys/ioctl.h>
#include <unistd.h>

#include "command.hpp"
#include "images.hpp"
#include "kpkg/core/duration.hpp"
#include "kpkg/core/error.hpp"
#include "kpkg/core/log.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/kube/apply.hpp"
#include "kpkg/version.hpp"

namespace kpkg::cli {

std::vector<Registration>& registry() {
    static std::vector<Registration> r;
    return r;
}

namespace {

std::set<const CLI::App*>& ci_format_commands() {
    static std::set<const CLI::App*> s;
    return s;
}

} // namespace

void accept_ci_formats(CLI::App* app) {
    ci_format_commands().insert(app);
}

std::size_t terminal_width(int fd) {
    if (::isatty(fd) != 1) return 0;
    struct winsize ws {};
    if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    if (const char* c = std::getenv("COLUMNS"); c != nullptr && std::atoi(c) > 0)
        return static_cast<std::size_t>(std::atoi(c));
    return 80;
}

namespace {

// The width help is wrapped at: the terminal's; else $COLUMNS; else 80.
std::size_t help_width() {
    if (std::size_t w = terminal_width(1); w > 0) return w;
    if (const char* c = std::getenv("COLUMNS"); c != nullptr && std::atoi(c) > 0)
        return static_cast<std::size_t>(std::atoi(c));
    return 80;
}

// CLI11's help with the global flags (the root's options) listed in every subcommand's help,
// and every line wrapped at the terminal width without breaking words.
class HelpFormatter : public CLI::Formatter {
public:
    std::string make_help(const CLI::App* app, std::string name,
                          CLI::AppFormatMode mode) const override {
        return text::wrap(CLI::Formatter::make_help(app, std::move(name), mode), help_width());
    }
    std::string make_footer(const CLI::App* app) const override {
        std::string globals;
        const CLI::App* root = app;
        while (root->get_parent() != nullptr)
            root = root->get_parent();
        if (root != app) {
            globals = "Global flags (before or after the command):\n";
            for (const CLI::Option* o : root->get_options())
                if (!o->get_lnames().empty() && o->get_lnames().front() != "help" &&
                    o->get_lnames().front() != "version")
                    globals += make_option(o, false);
        }
        std::string footer = CLI::Formatter::make_footer(app);
        if (!globals.empty() && !footer.empty()) globals += "\n";
        return globals + footer;
    }
};

void print_error_line(bool color, const std::string& msg) {
    std::string line = color ? "kpkg: \033[1;31merror\033[0m: " : "kpkg: error: ";
    line += msg;
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
}

void print_error(bool color, const Error& e) {
    print_error_line(color, e.str());
    for (const auto& n : e.notes) {
        std::string line = "  " + n + "\n";
        std::fwrite(line.data(), 1, line.size(), stderr);
    }
}

// Every app in the tree, parents before children.
void walk(CLI::App* app, std::vector<CLI::App*>& out) {
    out.push_back(app);
    for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; }))
        walk(sub, out);
}

// The deepest subcommand selected on this command line.
CLI::App* leaf_of(CLI::App* app) {
    for (CLI::App* sub : app->get_subcommands())
        if (sub->parsed()) return leaf_of(sub);
    return app;
}

std::string command_path(const CLI::App* app) {
    std::string p;
    for (const CLI::App* a = app; a != nullptr; a = a->get_parent())
        p = a->get_name() + (p.empty() ? "" : " " + p);
    return p;
}

// The leaves of the command tree with their descriptions, for `kpkg --help`.
std::string command_tree(const std::vector<CLI::App*>& all) {
    std::vector<std::pair<std::string, std::string>> rows;
    std::size_t width = 0;
    for (const CLI::App* a : all) {
        if (a->get_parent() == nullptr || a->get_group().empty()) continue;
        if (!a->get_subcommands([](const CLI::App*) { return true; }).empty()) continue;
        std::string usage = command_path(a).substr(5); // without "kpkg "
        for (const CLI::Option* o : a->get_options())
            if (o->get_positional())
                usage += o->get_required() ? " " + o->get_name() : " [" + o->get_name() + "]";
        width = std::max(width, usage.size());
        rows.emplace_back(usage, a->get_description());
    }
    std::string out = "Commands:\n";
    for (const auto& [usage, desc] : rows)
        out += "  " + usage + std::string(width - usage.size() + 2, ' ') + desc + "\n";
    return out;
}

// Arguments CLI11 could not place: unknown commands and flags. Reported as one line with the
// closest valid word, exit 2.
int report_extras(CLI::App& root, bool color) {
    std::vector<std::string> extras = root.remaining(true);
    if (extras.empty()) return 0;
    CLI::App* leaf = leaf_of(&root);
    const std::string& word = extras.front();
    std::vector<std::string> candidates;
    std::string msg;
    if (!word.empty() && word[0] == '-') {
        std::string flag = word.substr(0, word.find('='));
        for (const CLI::App* a = leaf; a != nullptr; a = a->get_parent())
            for (const CLI::Option* o : a->get_options()) {
                for (const auto& l : o->get_lnames())
                    candidates.push_back("--" + l);
                for (const auto& s : o->get_snames())
                    candidates.push_back("-" + s);
            }
        msg = "unknown flag " + text::quote(flag) + " for '" + command_path(leaf) + "'";
        if (auto c = text::closest(flag, candidates))
            msg += "; did you mean " + text::quote(*c) + "?";
    } else {
        auto subs = leaf->get_subcommands([](CLI::App* a) { return !a->get_group().empty(); });
        for (const CLI::App* s : subs)
            candidates.push_back(s->get_name());
        if (!candidates.empty()) {
            msg = "unknown command " + text::quote(word) + " for '" + command_path(leaf) + "'";
            if (auto c = text::closest(word, candidates))
                msg += "; did you mean " + text::quote(*c) + "?";
        } else {
            msg = "unexpected argument " + text::quote(word) + " for '" + command_path(leaf) + "'";
        }
    }
    msg += " (see '" + command_path(leaf) + " --help')";
    print_error_line(color, msg);
    return static_cast<int>(ExitCode::usage);
}

// The top-level words each registered setup adds. A run sets up only the setups of the command
// it runs: building every command's options is most of kpkg's own start-up (about 2M
// instructions and 60 fresh pages in CLI11). Setups not listed here are always run, so a new
// command works before it is listed (only slower to start).
const std::map<std::string_view, std::vector<std::string_view>>& setup_words() {
    static const std::map<std::string_view, std::vector<std::string_view>> m = {
        {"apply", {"apply", "delete", "install"}},
        {"build", {"build"}},
        {"bundle_inspect", {"bundle"}},
        {"bundle_render", {"bundle"}},
        {"bundle_validate", {"bundle"}},
        {"catalog", {"catalog"}},
        {"catalog_diff", {"catalog"}},
        {"catalog_graph", {"catalog"}},
        {"catalog_render", {"catalog"}},
        {"catalog_validate", {"catalog"}},
        {"completion", {"completion"}},
        {"help", {"help"}},
        {"images", {"pull", "push", "image", "cache"}},
        {"package", {"package"}},
        {"package_repo", {"package"}},
        {"package_update", {"package"}},
        {"plan", {"plan"}},
        {"resolve", {"resolve"}},
        {"upgrade_path", {"upgrade-path"}},
        {"version", {"version"}},
    };
    return m;
}

// The command word of this command line: the first argument that is not a global flag or its
// value. Empty when every setup is needed: no command, help asked for anywhere (the root's help
// lists every command), or a word that needs the whole tree (help, completion, an unknown word
// that gets a "did you mean").
std::string_view command_word(int argc, char** argv) {
    std::string_view word;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "-h" || a == "--help" || a == "--help-all") return {};
        if (word == "__spec" && !a.empty() && a[0] != '-') {
            word = a; // kpkg __spec WORD: the tree a run of WORD sets up
            continue;
        }
        if (!word.empty()) continue;
        if (a == "--") return {};
        if (a.size() > 1 && a[0] == '-') {
            if (a == "-o" || a == "--output" || a == "--platform") ++i; // the flag's value
            continue;
        }
        word = a;
    }
    if (word == "help" || word == "completion") return {};
    for (const auto& [_, words] : setup_words())
        for (std::string_view w : words)
            if (w == word) return word;
    return {};
}

bool needed(const Registration& r, std::string_view word) {
    if (word.empty()) return true;
    auto it = setup_words().find(r.name);
    if (it == setup_words().end()) return true;
    for (std::string_view w : it->second)
        if (w == word) return true;
    return false;
}

bool env_set(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
}

int run(int argc, char** argv) {
    Context ctx;
    bool no_color_env = env_set("NO_COLOR");
    bool stderr_tty = ::isatty(2) == 1;
    ctx.globals.color_stderr = stderr_tty && !no_color_env;

    CLI::App root{"kpkg builds, inspects and validates Kubernetes operator packages (OLM bundles,\n"
                  "Package Operator packages), works with File-Based Catalogs and resolves\n"
                  "operator dependencies offline.",
                  "kpkg"};
    root.set_version_flag("--version", "kpkg " KPKG_VERSION, "Print the version and exit");
    root.fallthrough();
    root.allow_extras();
    // One command per run: a later word that names another top-level command is an argument
    // (kpkg help catalog list; a catalog directory called "version").
    root.require_subcommand(0, 1);
    root.option_defaults()->always_capture_default();
    root.formatter(std::make_shared<HelpFormatter>());

    std::string format = "text";
    root.add_option("-o,--output", format,
                    "Output format: text, json or yaml; junit or github (CI annotations) for "
                    "bundle validate and catalog validate")
        ->check(CLI::IsMember({"text", "json", "yaml", "junit", "github"}))
        ->option_text("FORMAT");
    root.add_flag("-v,--verbose", ctx.globals.verbose, "More detail on stderr (repeatable)");
    root.add_flag("-q,--quiet", ctx.globals.quiet, "Only errors on stderr");
    root.add_flag("--no-color", ctx.globals.no_color, "No colour (also when NO_COLOR is set)");
    root.add_flag("--no-cache", ctx.globals.no_cache,
                  "Do not read or write the catalog cache (also when KPKG_NO_CACHE is set)");
    root.add_option("--platform", image_flags().platform,
                    "The platform image inputs are resolved to: OS/ARCH[/VARIANT] (default: "
                    "this machine's)")
        ->option_text("PLATFORM");
    root.add_flag("--offline", image_flags().offline,
                  "Images (and kubeconform schemas) from the cache only: no network (a tag "
                  "answers with what it last pointed to)");
    root.add_flag("--insecure", image_flags().insecure,
                  "The registries named may be spoken to over plain http (loopback registries "
                  "always may)");
    std::string request_timeout;
    root.add_option("--request-timeout", request_timeout,
                    "Registry and Kubernetes API requests: how long a manifest, token, API "
                    "object or other small document may take, and how long a blob may move "
                    "under 10 KiB/s (default 30s; 0: no limit)")
        ->option_text("DURATION");

    auto& regs = registry();
    std::stable_sort(regs.begin(), regs.end(), [](const Registration& a, const Registration& b) {
        return a.order < b.order;
    });
    const std::string_view word = command_word(argc, argv);
    std::string spec_word;
    for (const auto& r : regs)
        if (needed(r, word)) r.setup(root, ctx);
    std::vector<CLI::App*> all;
    walk(&root, all);
    for (CLI::App* a : all)
        a->allow_extras();
    root.footer(
        command_tree(all) +
        "\nExit codes: 0 ok, 1 error, 2 usage, 3 invalid input, 4 no solution, 5 differences.\n"
        "Run 'kpkg COMMAND --help' for a command's flags; see kpkg(1).");

    // Hidden: the command tree as "command PATH" / "flag PATH NAME" lines. The test suite checks
    // the man pages and shell completions against it, so they cannot drift from the code.
    CLI::App* spec = root.add_subcommand("__spec", "")->group("");
    spec->add_option("WORD", spec_word, "The command word whose run is shown (tests)");
    spec->callback([&ctx, &all] {
        ctx.action = [&all] {
            std::string out;
            for (const CLI::App* a : all) {
                std::string path = command_path(a);
                out += "command " + path + "\n";
                for (const CLI::Option* o : a->get_options()) {
                    for (const auto& l : o->get_lnames())
                        out += "flag " + path + " --" + l + "\n";
                    for (const auto& s : o->get_snames())
                        out += "flag " + path + " -" + s + "\n";
                }
            }
            print(out);
            return 0;
        };
    });

    try {
        root.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return root.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return root.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return root.exit(e);
    } catch (const CLI::ParseError& e) {
        std::string msg = e.what();
        CLI::App* leaf = leaf_of(&root);
        msg += " (see '" + command_path(leaf) + " --help')";
        print_error_line(ctx.globals.color_stderr, msg);
        return static_cast<int>(ExitCode::usage);
    }

    Globals& g = ctx.globals;
    g.format = format == "json"     ? Format::json
               : format == "yaml"   ? Format::yaml
               : format == "junit"  ? Format::junit
               : format == "github" ? Format::github
                                    : Format::text;
    g.width = terminal_width(1);
    bool no_color = g.no_color || no_color_env;
    g.color_stdout = !no_color && ::isatty(1) == 1;
    g.color_stderr = !no_color && stderr_tty;
    log::set_level(g.quiet          ? log::Level::error
                   : g.verbose >= 2 ? log::Level::trace
                   : g.verbose == 1 ? log::Level::debug
                                    : log::Level::info);
    log::set_sink(log::stderr_sink(g.color_stderr));
    image_flags().progress = stderr_tty && !g.quiet;

    if (int rc = report_extras(root, g.color_stderr); rc != 0) return rc;
    if (!request_timeout.empty()) {
        auto d = parse_duration(request_timeout, "--request-timeout");
        if (!d) {
            print_error(g.color_stderr, d.error());
            return static_cast<int>(ExitCode::usage);
        }
        image_flags().request_timeout = *d;
    }
    if ((g.format == Format::junit || g.format == Format::github) && ctx.action &&
        ci_format_commands().count(leaf_of(&root)) == 0) {
        print_error_line(g.color_stderr, "-o " + format +
                                             " is for 'kpkg bundle validate', 'kpkg catalog "
                                             "validate' and 'kpkg package validate'; '" +
                                             command_path(leaf_of(&root)) +
                                             "' writes text, json or yaml");
        return static_cast<int>(ExitCode::usage);
    }
    if (!ctx.action) {
        // No command given (or a group without its subcommand): show what there is.
        CLI::App* leaf = leaf_of(&root);
        std::fputs(leaf->help().c_str(), stderr);
        print_error_line(g.color_stderr, "a command is required");
        return static_cast<int>(ExitCode::usage);
    }
    try {
        return ctx.action();
    } catch (const Exception& e) {
        print_error(g.color_stderr, e.error());
        return static_cast<int>(e.error().code);
    }
}

} // namespace

int main_entry(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const kpkg::Exception& e) {
        std::fprintf(stderr, "kpkg: error: %s\n", e.what());
        return static_cast<int>(e.error().code);
    } catch (const OutOfMemory& e) {
        std::fprintf(stderr, "kpkg: error: %s\n", e.what());
        return 1;
    } catch (const std::bad_alloc&) {
        std::fputs("kpkg: error: out of memory\n", stderr);
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kpkg: error: internal error: %s\n", e.what());
        return 1;
    }
}

} // namespace kpkg::cli
