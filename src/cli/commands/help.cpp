// kpkg help [--man] [COMMAND...] and kpkg completion bash|zsh|fish: help on any command, the
// man pages and the shell completion scripts, all carried by the binary (embedded.hpp).
#include <cstdio>

#include <unistd.h>

#include "command.hpp"
#include "embedded.hpp"
#include "kpkg/core/error.hpp"
#include "kpkg/core/text.hpp"

namespace kpkg::cli {
namespace {

struct HelpOptions {
    std::vector<std::string> words;
    bool man = false;
};

std::vector<std::string> visible_subcommands(const CLI::App* app) {
    std::vector<std::string> names;
    for (const CLI::App* s : app->get_subcommands([](const CLI::App*) { return true; }))
        if (!s->get_group().empty()) names.push_back(s->get_name());
    return names;
}

// The man page of a command path: kpkg-GROUP(1) for `kpkg GROUP ...`, kpkg(1) for the rest.
std::string_view man_page(const std::vector<std::string>& words) {
    const std::string first = words.empty() ? "" : words.front();
    if (first == "bundle") return embedded::man_bundle;
    if (first == "catalog") return embedded::man_catalog;
    if (first == "resolve") return embedded::man_resolve;
    if (first == "plan") return embedded::man_plan;
    if (first == "upgrade-path") return embedded::man_upgrade_path;
    if (first == "version") return embedded::man_version;
    if (first == "completion") return embedded::man_completion;
    if (first == "build") return embedded::man_build;
    if (first == "push") return embedded::man_push;
    if (first == "pull") return embedded::man_pull;
    if (first == "package") return embedded::man_package;
    if (first == "image") return embedded::man_image;
    if (first == "cache") return embedded::man_cache;
    if (first == "apply") return embedded::man_apply;
    if (first == "delete") return embedded::man_delete;
    if (first == "install") return embedded::man_install;
    return embedded::man_kpkg;
}

int run_help(CLI::App& root, const HelpOptions& o) {
    const CLI::App* app = &root;
    std::string path = "kpkg";
    for (const auto& w : o.words) {
        const CLI::App* next = nullptr;
        for (const CLI::App* s : app->get_subcommands([](const CLI::App*) { return true; }))
            if (!s->get_group().empty() && s->get_name() == w) next = s;
        if (next == nullptr) {
            Error e;
            e.code = ExitCode::usage;
            e.message = "unknown command " + text::quote(w) + " for '" + path + "'";
            if (auto c = text::closest(w, visible_subcommands(app)))
                e.message += "; did you mean " + text::quote(*c) + "?";
            e.message += " (see 'kpkg --help')";
            throw Exception(std::move(e));
        }
        app = next;
        path += " " + w;
    }
    if (!o.man) {
        // The formatter itself: App::help would show the help of the command parsed (`help`).
        print(app->get_formatter()->make_help(app, path, CLI::AppFormatMode::Normal));
        return 0;
    }
    const std::string_view page = man_page(o.words);
    // On a terminal the page is shown with man(1), as `man -l` shows a file; otherwise its roff
    // source is written, for `| man -l -` or a file.
    if (::isatty(1) == 1) {
        std::fflush(stdout);
        if (FILE* man = ::popen("man -l -", "w")) {
            std::fwrite(page.data(), 1, page.size(), man);
            if (::pclose(man) == 0) return 0;
        }
    }
    print(std::string(page));
    return 0;
}

void setup_help(CLI::App& root, Context& ctx) {
    auto opts = std::make_shared<HelpOptions>();
    CLI::App* h = root.add_subcommand("help", "Show the help or the man page of a command");
    h->add_option("COMMAND", opts->words, "The command, e.g. catalog list bundles")
        ->default_str("");
    h->add_flag("--man", opts->man,
                "The command's man page (through man(1) on a terminal, else its roff source)");
    h->callback(
        [&ctx, &root, opts] { ctx.action = [&root, opts] { return run_help(root, *opts); }; });
}

void setup_completion(CLI::App& root, Context& ctx) {
    auto shell = std::make_shared<std::string>();
    CLI::App* c = root.add_subcommand("completion",
                                      "Print the shell completion script for bash, zsh or fish");
    c->add_option("SHELL", *shell, "bash, zsh or fish")
        ->required()
        ->check(CLI::IsMember({"bash", "zsh", "fish"}));
    c->footer("Load it in the current shell:\n"
              "  bash:  source <(kpkg completion bash)\n"
              "  zsh:   source <(kpkg completion zsh)\n"
              "  fish:  kpkg completion fish | source\n"
              "or install it where the shell looks (see kpkg-completion(1)).");
    c->callback([&ctx, shell] {
        ctx.action = [shell] {
            print(std::string(*shell == "bash"  ? embedded::bash
                              : *shell == "zsh" ? embedded::zsh
                                                : embedded::fish));
            return 0;
        };
    });
}

} // namespace

KPKG_COMMAND(completion, 95, setup_completion);
KPKG_COMMAND(help, 96, setup_help);

} // namespace kpkg::cli
