// The man pages and shell completions against the command tree of the binary (`kpkg __spec`):
// every command and flag must be documented and completed, so the docs cannot drift from the code.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "kpkg/core/error.hpp"
#include "support/support.hpp"

namespace fs = std::filesystem;
using kpkg::test::read_file;
using kpkg::test::run_kpkg;
using kpkg::test::source_root;

namespace {

// --- the command tree ------------------------------------------------------------------------

struct Command {
    std::string path;               // "kpkg catalog list bundles"
    std::vector<std::string> words; // {"kpkg", "catalog", "list", "bundles"}
    std::vector<std::string> flags; // {"-h", "--help"}
};

std::vector<std::string> split_words(const std::string& s) {
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

std::string join(const std::vector<std::string>& v, std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n && i < v.size(); ++i)
        s += (i == 0 ? "" : " ") + v[i];
    return s;
}

bool hidden(const std::vector<std::string>& words) {
    return std::any_of(words.begin(), words.end(),
                       [](const std::string& w) { return w.rfind("__", 0) == 0; });
}

// The visible commands, parents before children, from `kpkg __spec`.
std::vector<Command> load_spec() {
    auto r = run_kpkg({"__spec"});
    EXPECT_EQ(r.exit_code, 0) << "kpkg __spec failed: " << r.err;
    std::vector<Command> cmds;
    std::map<std::string, std::size_t> index;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
        auto words = split_words(line);
        if (words.empty()) continue;
        if (words[0] == "command" && words.size() >= 2) {
            words.erase(words.begin());
            if (hidden(words)) continue;
            std::string path = join(words, words.size());
            index[path] = cmds.size();
            cmds.push_back({path, words, {}});
        } else if (words[0] == "flag" && words.size() >= 3) {
            std::string flag = words.back();
            words.erase(words.begin());
            words.pop_back();
            if (hidden(words)) continue;
            auto it = index.find(join(words, words.size()));
            EXPECT_NE(it, index.end()) << "kpkg __spec: flag before its command: " << line;
            if (it != index.end()) cmds[it->second].flags.push_back(flag);
        } else {
            ADD_FAILURE() << "kpkg __spec: unexpected line: " << line;
        }
    }
    return cmds;
}

// --- matching --------------------------------------------------------------------------------

std::string regex_escape(const std::string& s) {
    static const std::string special = R"(\^$.|?*+()[]{})";
    std::string out;
    for (char c : s) {
        if (special.find(c) != std::string::npos) out += '\\';
        out += c;
    }
    return out;
}

// Characters that may not touch a word or flag for it to count as mentioned.
const std::string word_char = "[A-Za-z0-9_-]";
const std::string not_word_char = "[^A-Za-z0-9_-]";

bool any_line(const std::string& text, const std::regex& re) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (std::regex_search(line, re)) return true;
    return false;
}

// The file without its whole-line comments, so that a comment does not count as completing.
std::string strip_shell_comments(const std::string& text) {
    std::istringstream in(text);
    std::string out;
    for (std::string line; std::getline(in, line);) {
        auto first = line.find_first_not_of(" \t");
        if (first != std::string::npos && line[first] == '#') continue;
        out += line + "\n";
    }
    return out;
}

// The word or flag as a whole token: "-o" does not count inside "--output" or "-o-x".
bool has_token(const std::string& text, const std::string& token) {
    std::regex re("(^|" + not_word_char + ")" + regex_escape(token) + "(" + not_word_char + "|$)");
    return any_line(text, re);
}

// --- completion files ------------------------------------------------------------------------

struct CompletionFormat {
    std::string rel; // under the source root
    bool (*has_command)(const std::string& text, const std::string& word);
    bool (*has_flag)(const std::string& text, const std::string& flag);
    std::string (*hint_command)(const std::string& word);
    std::string (*hint_flag)(const std::string& flag);
};

// bash: the word and the flag appear as tokens (in the word lists given to compgen).
const CompletionFormat bash_format{
    "completions/kpkg.bash",
    [](const std::string& text, const std::string& word) { return has_token(text, word); },
    [](const std::string& text, const std::string& flag) { return has_token(text, flag); },
    [](const std::string& word) { return "the word " + word; },
    [](const std::string& flag) { return "the flag " + flag; },
};

// zsh: a command is a _describe entry 'word:description'; a flag is an _arguments spec
// 'FLAG[description]' (also FLAG+[, FLAG=[, FLAG=-[, FLAG-[), possibly after an exclusion list
// "(...)" or "*"; one spec per flag, not brace expansions.
const CompletionFormat zsh_format{
    "completions/_kpkg",
    [](const std::string& text, const std::string& word) {
        return any_line(text, std::regex("(^|[\\s'\"(])" + regex_escape(word) + ":"));
    },
    [](const std::string& text, const std::string& flag) {
        return any_line(text,
                        std::regex("(^|[\\s'\")*])" + regex_escape(flag) + "(\\+|=-?|-)?\\["));
    },
    [](const std::string& word) { return "'" + word + ":description' for _describe"; },
    [](const std::string& flag) { return "'" + flag + "[description]' for _arguments"; },
};

std::string fish_flag_option(const std::string& flag) {
    if (flag.rfind("--", 0) == 0) return "-l " + flag.substr(2);
    if (flag.size() == 2) return "-s " + flag.substr(1);
    return "-o " + flag.substr(1); // old-style: -name
}

// fish: a command is `-a word` (its own complete line); a flag is -l name, -s c or -o name.
const CompletionFormat fish_format{
    "completions/kpkg.fish",
    [](const std::string& text, const std::string& word) {
        return any_line(text, std::regex("(^|\\s)(-a|--arguments)(\\s+|=)(['\"]?)" +
                                         regex_escape(word) + "\\4(\\s|$)"));
    },
    [](const std::string& text, const std::string& flag) {
        std::string opt, name;
        if (flag.rfind("--", 0) == 0)
            opt = "(-l|--long-option)", name = flag.substr(2);
        else if (flag.size() == 2)
            opt = "(-s|--short-option)", name = flag.substr(1);
        else
            opt = "(-o|--old-option)", name = flag.substr(1);
        return any_line(text, std::regex("(^|\\s)" + opt + "(\\s+|=)(['\"]?)" + regex_escape(name) +
                                         "\\4(\\s|$)"));
    },
    [](const std::string& word) { return "-a " + word; },
    [](const std::string& flag) { return fish_flag_option(flag); },
};

void expect_completion_covers(const CompletionFormat& f) {
    auto cmds = load_spec();
    ASSERT_FALSE(cmds.empty());
    std::string text = strip_shell_comments(read_file(source_root() / f.rel));
    ASSERT_FALSE(text.empty()) << f.rel << " is empty";
    for (const auto& c : cmds) {
        if (c.words.size() >= 2 && !f.has_command(text, c.words.back()))
            ADD_FAILURE() << f.rel << " does not mention command '" << c.path << "' (expected "
                          << f.hint_command(c.words.back()) << ")";
        for (const auto& flag : c.flags)
            if (!f.has_flag(text, flag))
                ADD_FAILURE() << f.rel << " does not mention flag " << flag << " of '" << c.path
                              << "' (expected " << f.hint_flag(flag) << ")";
    }
}

// --- man pages -------------------------------------------------------------------------------

// The page documenting a command: kpkg.1 for kpkg itself and `kpkg help`, kpkg-GROUP.1 for
// `kpkg GROUP ...`.
std::string page_of(const Command& c) {
    return c.words.size() < 2 || c.words[1] == "help" ? "man/kpkg.1"
                                                      : "man/kpkg-" + c.words[1] + ".1";
}

// roff source as text: no comments, `\-` as `-`, no font changes or zero-width escapes.
std::string normalise_roff(const std::string& roff) {
    std::istringstream in(roff);
    std::string text;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(".\\\"", 0) == 0 || line.rfind("'\\\"", 0) == 0) continue;
        text += line + "\n";
    }
    static const std::regex fonts(R"(\\f(\[[^\]]*\]|\(..|.))");
    static const std::regex zero_width(R"(\\[&c|^%])");
    text = std::regex_replace(text, fonts, "");
    text = std::regex_replace(text, zero_width, "");
    static const std::regex hyphen(R"(\\-)");
    return std::regex_replace(text, hyphen, "-");
}

// The words of `phrase` in sequence, separated by white space, not inside a longer word.
bool mentions(const std::string& text, const std::string& phrase) {
    std::string re = "(^|" + not_word_char + ")";
    auto words = split_words(phrase);
    for (std::size_t i = 0; i < words.size(); ++i)
        re += (i ? "\\s+" : "") + regex_escape(words[i]);
    re += "(" + not_word_char + "|$)";
    return std::regex_search(text, std::regex(re));
}

// The lines of section `name` (from its .SH to the next .SH), or "" when the page has none.
std::string roff_section(const std::string& roff, const std::string& name) {
    auto start = roff.find("\n.SH " + name + "\n");
    if (start == std::string::npos) return "";
    auto end = roff.find("\n.SH ", start + 1);
    return roff.substr(start, end == std::string::npos ? end : end - start);
}

// The tags of the .TP/.TQ items of a section: the lines that name what an item documents.
std::string item_tags(const std::string& section) {
    std::istringstream in(section);
    std::string tags;
    bool tag_next = false;
    for (std::string line; std::getline(in, line);) {
        if (tag_next) tags += line + "\n";
        tag_next = line == ".TP" || line.rfind(".TP ", 0) == 0 || line == ".TQ";
    }
    return tags;
}

struct ManPage {
    std::string text;     // the whole page, normalised
    std::string synopsis; // its SYNOPSIS, normalised
    std::string options;  // the item tags of its OPTIONS, normalised
};

class ManPages {
public:
    // A page, or nullptr when it does not exist or is empty.
    const ManPage* get(const std::string& rel) {
        auto it = pages_.find(rel);
        if (it == pages_.end()) {
            fs::path p = source_root() / rel;
            ManPage page;
            if (fs::exists(p)) {
                std::string roff = read_file(p);
                page.text = normalise_roff(roff);
                page.synopsis = normalise_roff(roff_section(roff, "SYNOPSIS"));
                page.options = normalise_roff(item_tags(roff_section(roff, "OPTIONS")));
            }
            it = pages_.emplace(rel, std::move(page)).first;
        }
        return it->second.text.empty() ? nullptr : &it->second;
    }

private:
    std::map<std::string, ManPage> pages_;
};

// --- running shells --------------------------------------------------------------------------

struct ShellResult {
    int exit_code = -1;
    std::string out; // stdout and stderr
};

ShellResult run_shell(const std::string& command) {
    ShellResult r;
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
        r.out.append(buf, n);
    int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    return r;
}

bool have_program(const std::string& name) {
    return run_shell("command -v " + name + " >/dev/null").exit_code == 0;
}

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Runs the bash completion function for each command line (the last word is the one being
// completed) and returns the candidates offered for each.
std::vector<std::vector<std::string>>
bash_complete(const std::vector<std::vector<std::string>>& lines) {
    std::string script = "source " +
                         shell_quote((source_root() / "completions/kpkg.bash").string()) +
                         "\n"
                         "q() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _kpkg;\n"
                         "      echo \"${COMPREPLY[*]}\"; }\n";
    for (const auto& words : lines) {
        script += "q";
        for (const auto& w : words) {
            script += ' ';
            script += shell_quote(w);
        }
        script += "\n";
    }
    kpkg::test::TempDir dir;
    fs::path file = dir.write("complete.bash", script);
    auto r = run_shell("bash --norc --noprofile " + shell_quote(file.string()));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    std::vector<std::vector<std::string>> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
        out.push_back(split_words(line));
    EXPECT_EQ(out.size(), lines.size()) << "bash output:\n" << r.out;
    out.resize(lines.size());
    return out;
}

std::string show(const std::vector<std::string>& words) {
    std::string s;
    for (const auto& w : words)
        s += (s.empty() ? "" : " ") + (w.empty() ? "''" : w);
    return s;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

// The global flags: those of the root command, minus the ones only meaningful there.
std::vector<std::string> global_flags(const std::vector<Command>& cmds) {
    std::vector<std::string> out;
    for (const auto& f : cmds.front().flags)
        if (f != "--version") out.push_back(f);
    return out;
}

} // namespace

TEST(Docs, SpecListsTheCommandTree) {
    auto cmds = load_spec();
    ASSERT_FALSE(cmds.empty());
    EXPECT_EQ(cmds.front().path, "kpkg");
    EXPECT_TRUE(has(cmds.front().flags, "--output"));
    EXPECT_TRUE(has(cmds.front().flags, "-h"));
    EXPECT_GE(cmds.size(), 2u);
    for (const auto& c : cmds)
        EXPECT_EQ(c.words.front(), "kpkg") << c.path;
}

TEST(Docs, BashCompletionMentionsEveryCommandAndFlag) {
    expect_completion_covers(bash_format);
}
TEST(Docs, ZshCompletionMentionsEveryCommandAndFlag) {
    expect_completion_covers(zsh_format);
}
TEST(Docs, FishCompletionMentionsEveryCommandAndFlag) {
    expect_completion_covers(fish_format);
}

// kpkg.1 names every top-level command; the page of each command (kpkg-GROUP.1 for
// `kpkg GROUP ...`) shows its path in SYNOPSIS and documents each of its flags as an item of
// OPTIONS.
TEST(Docs, ManPagesMentionEveryCommandAndFlag) {
    auto cmds = load_spec();
    ASSERT_FALSE(cmds.empty());
    ManPages pages;
    const ManPage* top = pages.get("man/kpkg.1");
    ASSERT_NE(top, nullptr) << "man/kpkg.1 is missing or empty";
    for (const auto& c : cmds) {
        if (c.words.size() == 2 && !mentions(top->text, c.path))
            ADD_FAILURE() << "man/kpkg.1 does not mention command '" << c.path << "'";
        std::string rel = page_of(c);
        const ManPage* page = pages.get(rel);
        if (page == nullptr) {
            ADD_FAILURE() << rel << " is missing or empty: it documents '" << c.path
                          << "' (and belongs in install_man in meson.build)";
            continue;
        }
        if (c.words.size() >= 2 && !mentions(page->synopsis, c.path))
            ADD_FAILURE() << rel << " does not mention command '" << c.path << "' in SYNOPSIS";
        for (const auto& flag : c.flags)
            if (!has_token(page->options, flag))
                ADD_FAILURE() << rel << " does not mention flag " << flag << " of '" << c.path
                              << "' in OPTIONS (as the tag of a .TP item)";
    }
}

TEST(Docs, ManPageListsEveryExitCode) {
    std::string section = roff_section(read_file(source_root() / "man/kpkg.1"), "EXIT STATUS");
    ASSERT_NE(section, "") << "man/kpkg.1 has no EXIT STATUS section";
    using kpkg::ExitCode;
    for (ExitCode c : {ExitCode::ok, ExitCode::error, ExitCode::usage, ExitCode::invalid,
                       ExitCode::unsatisfiable, ExitCode::differs}) {
        std::string item = "\n.TP\n.B " + std::to_string(static_cast<int>(c)) + "\n";
        EXPECT_NE(section.find(item), std::string::npos)
            << "man/kpkg.1 EXIT STATUS does not list exit code " << static_cast<int>(c);
    }
}

TEST(Docs, ManPagesRenderWithoutWarnings) {
    if (!have_program("groff")) GTEST_SKIP() << ::kpkg::test::missing_tool("groff");
    std::vector<std::string> pages;
    for (const auto& e : std::filesystem::directory_iterator(source_root() / "man"))
        if (e.path().extension() == ".1") pages.push_back("man/" + e.path().filename().string());
    std::sort(pages.begin(), pages.end());
    EXPECT_GE(pages.size(), 4u);
    for (const auto& rel : pages) {
        // -t: tables (pages that have them say so with a '\" t first line, as man(1) expects).
        auto r =
            run_shell("groff -t -man -Tutf8 -ww -z " + shell_quote((source_root() / rel).string()));
        EXPECT_EQ(r.exit_code, 0) << rel;
        EXPECT_EQ(r.out, "") << rel << " renders with warnings:\n" << r.out;
    }
}

// The bash completion offers each subcommand after its parent, and each flag of a command
// (the global ones too) after it.
TEST(Docs, BashCompletionCompletesTheTree) {
    if (!have_program("bash")) GTEST_SKIP() << ::kpkg::test::missing_tool("bash");
    auto cmds = load_spec();
    ASSERT_FALSE(cmds.empty());
    auto globals = global_flags(cmds);
    std::vector<std::vector<std::string>> lines;
    std::vector<std::string> expected;
    for (const auto& c : cmds) {
        if (c.words.size() >= 2) {
            std::vector<std::string> line(c.words.begin(), c.words.end() - 1);
            line.push_back(c.words.back().substr(0, 1)); // "kpkg catalog l<TAB>"
            lines.push_back(line);
            expected.push_back(c.words.back());
        }
        std::vector<std::string> flags = c.flags;
        if (c.words.size() >= 2) flags.insert(flags.end(), globals.begin(), globals.end());
        for (const auto& f : flags) {
            std::vector<std::string> line = c.words;
            line.push_back(f.substr(0, f.size() - 1)); // "kpkg version --librarie<TAB>"
            lines.push_back(line);
            expected.push_back(f);
        }
    }
    auto got = bash_complete(lines);
    for (std::size_t i = 0; i < lines.size(); ++i)
        EXPECT_TRUE(has(got[i], expected[i]))
            << "completions/kpkg.bash: '" << show(lines[i]) << "<TAB>' does not offer "
            << expected[i] << "; it offers: " << show(got[i]);
}

TEST(Docs, BashCompletionCompletesValues) {
    if (!have_program("bash")) GTEST_SKIP() << ::kpkg::test::missing_tool("bash");
    std::string bin = std::getenv("KPKG_BIN") != nullptr ? std::getenv("KPKG_BIN") : "kpkg";
    std::string catalog = (source_root() / "testdata/catalog").string();
    struct Case {
        std::vector<std::string> line;
        std::vector<std::string> expected; // in any order
        bool exact = true;                 // only these; otherwise at least these
    };
    std::vector<Case> cases{
        {{"kpkg", "cat"}, {"catalog"}},
        {{"kpkg", "catalog", "list", ""}, {"packages", "channels", "bundles"}},
        {{"kpkg", "-o", ""}, {"text", "json", "yaml", "junit", "github"}},
        {{"kpkg", "--output", "j"}, {"json", "junit"}},
        {{"kpkg", "--output", "=", ""},
         {"text", "json", "yaml", "junit", "github"}}, // --output=<TAB>
        {{"kpkg", "completion", ""}, {"bash", "zsh", "fish"}},
        {{"kpkg", "help", "catalog", "l"}, {"list"}},
        {{"kpkg", "-o", "json", "catalog", "list", "b"}, {"bundles"}},
        {{"kpkg", "-v", "catalog", "list", "bundles", catalog + "/"},
         {catalog + "/etcd", catalog + "/vault"},
         false},
        {{bin, "catalog", "list", "channels", catalog, ""}, {"etcd", "vault"}, false},
        {{bin, "catalog", "list", "bundles", "-o", "yaml", catalog, "v"}, {"vault"}},
        {{bin, "catalog", "list", "packages", catalog, ""}, {}},
        {{"kpkg", "ins"}, {"install"}},
        {{"kpkg", "install", "--mode", ""}, {"manifests", "olm"}},
        {{"kpkg", "install", "--dry-run", "s"}, {"server"}},
        {{"kpkg", "install", "--cert-provider", "c"}, {"cert-manager"}},
        {{"kpkg", "install", "--context", ""}, {}},
        {{bin, "install", "--catalog", catalog, "-n", "ops", "e"}, {"etcd"}},
    };
    std::vector<std::vector<std::string>> lines;
    for (const auto& c : cases)
        lines.push_back(c.line);
    auto got = bash_complete(lines);
    for (std::size_t i = 0; i < cases.size(); ++i) {
        auto want = cases[i].expected;
        auto have = got[i];
        std::sort(want.begin(), want.end());
        std::sort(have.begin(), have.end());
        if (cases[i].exact) {
            EXPECT_EQ(have, want) << "completions/kpkg.bash: '" << show(cases[i].line) << "<TAB>'";
        } else {
            for (const auto& w : want)
                EXPECT_TRUE(has(have, w))
                    << "completions/kpkg.bash: '" << show(cases[i].line) << "<TAB>' does not offer "
                    << w << "; it offers: " << show(have);
        }
    }
}

TEST(Docs, ZshCompletionParses) {
    if (!have_program("zsh")) GTEST_SKIP() << ::kpkg::test::missing_tool("zsh");
    auto r = run_shell("zsh -n " + shell_quote((source_root() / "completions/_kpkg").string()));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out, "");
}

TEST(Docs, FishCompletionParses) {
    if (!have_program("fish")) GTEST_SKIP() << ::kpkg::test::missing_tool("fish");
    auto r = run_shell("fish --no-execute " +
                       shell_quote((source_root() / "completions/kpkg.fish").string()));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out, "");
}

// `source <(kpkg completion zsh)` registers the completion instead of running it.
TEST(Docs, ZshCompletionCanBeSourced) {
    if (!have_program("zsh")) GTEST_SKIP() << ::kpkg::test::missing_tool("zsh");
    auto r =
        run_shell("zsh -fc 'autoload -U compinit && compinit -D -u && source " +
                  (source_root() / "completions/_kpkg").string() + " && print -- $_comps[kpkg]'");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out, "_kpkg\n");
}

// --- README and the user guides --------------------------------------------------------------

namespace {

// README.md, the user guides and the other pages of docs/, and bench/RESULTS.md, by path
// relative to the source root.
std::vector<std::string> markdown_files() {
    std::vector<std::string> out{"README.md", "bench/RESULTS.md"};
    std::vector<std::string> docs;
    for (const auto& e : fs::directory_iterator(source_root() / "docs"))
        if (e.path().extension() == ".md") docs.push_back("docs/" + e.path().filename().string());
    std::sort(docs.begin(), docs.end());
    out.insert(out.end(), docs.begin(), docs.end());
    return out;
}

// The text outside fenced code blocks, line by line.
std::vector<std::string> prose_lines(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    bool fenced = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("```", 0) == 0) {
            fenced = !fenced;
            continue;
        }
        if (!fenced) out.push_back(line);
    }
    return out;
}

// The anchor GitHub gives a heading: lower case, spaces as hyphens, other punctuation dropped.
std::string heading_anchor(const std::string& heading) {
    std::string out;
    for (unsigned char c : heading) {
        if (std::isalnum(c) != 0)
            out += static_cast<char>(std::tolower(c));
        else if (c == ' ' || c == '-')
            out += '-';
        else if (c == '_' || c >= 0x80)
            out += static_cast<char>(c);
    }
    return out;
}

std::vector<std::string> anchors_of(const std::string& text) {
    std::vector<std::string> out;
    for (const auto& line : prose_lines(text)) {
        auto hashes = line.find_first_not_of('#');
        if (hashes == 0 || hashes == std::string::npos || line[hashes] != ' ') continue;
        out.push_back(heading_anchor(line.substr(hashes + 1)));
    }
    return out;
}

// The commands of README's command table that can run as they are in a test: those on the
// sample data of testdata/, and those that name no file at all.
std::vector<std::string> readme_table_examples() {
    std::vector<std::string> out;
    for (const auto& line : prose_lines(read_file(source_root() / "README.md"))) {
        if (line.rfind("| `kpkg ", 0) != 0) continue;
        auto end = line.rfind("` |");
        auto start = line.rfind("| `", end);
        if (end == std::string::npos || start == std::string::npos) continue;
        out.push_back(line.substr(start + 3, end - start - 3));
    }
    return out;
}

} // namespace

// README is a front page; the two commands of its install section are there as CI runs them.
TEST(Docs, ReadmeIsAFrontPageWithTheInstallCommands) {
    std::string readme = read_file(source_root() / "README.md");
    EXPECT_LE(readme.size(), 25u * 1000u) << "README.md is no front page any more";
    EXPECT_LE(std::count(readme.begin(), readme.end(), '\n'), 300);
    const std::string build =
        "scripts/bootstrap && build/kpkg resolve vault --catalog testdata/catalog";
    EXPECT_NE(readme.find("\n```sh\n" + build + "\n```\n"), std::string::npos)
        << "README.md does not show: " << build;
    // CI (.ci/run) runs README's test command verbatim.
    std::string ci = read_file(source_root() / ".ci/run");
    auto at = ci.find("\nscripts/bootstrap --tests");
    ASSERT_NE(at, std::string::npos) << ".ci/run does not run scripts/bootstrap --tests";
    std::string test_command = ci.substr(at + 1, ci.find('\n', at + 1) - at - 1);
    EXPECT_NE(readme.find("\n```sh\n" + test_command + "\n```\n"), std::string::npos)
        << "README.md does not show the command .ci/run runs: " << test_command;
    // The output shown after the first command is what kpkg prints.
    auto shown = readme.find(build + "\n```\n");
    ASSERT_NE(shown, std::string::npos);
    shown = readme.find("```\n", shown + build.size() + 5);
    ASSERT_NE(shown, std::string::npos);
    shown += 4;
    std::string expected = readme.substr(shown, readme.find("```", shown) - shown);
    auto r =
        run_kpkg({"resolve", "vault", "--catalog", (source_root() / "testdata/catalog").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, expected);
}

// README's table of commands names every command and every command of a group; the overview of
// docs/commands.md names every command word.
TEST(Docs, ReadmeTableNamesEveryCommand) {
    auto cmds = load_spec();
    ASSERT_FALSE(cmds.empty());
    std::string table;
    for (const auto& line : prose_lines(read_file(source_root() / "README.md")))
        if (line.rfind("| `kpkg ", 0) == 0) table += line + "\n";
    std::string overview = read_file(source_root() / "docs/commands.md");
    for (const auto& c : cmds) {
        if ((c.words.size() == 2 || c.words.size() == 3) && !mentions(table, c.path))
            ADD_FAILURE() << "README.md's table of commands does not name '" << c.path << "'";
        if (c.words.size() == 2 && !mentions(overview, c.path))
            ADD_FAILURE() << "docs/commands.md does not name '" << c.path << "'";
    }
}

// The examples of README's table that run on testdata/ (or name no file) are commands kpkg
// accepts: each exits with success or with the verdict on its input (3, 4, 5), never with a
// usage error or a failure.
TEST(Docs, ReadmeTableExamplesRun) {
    auto examples = readme_table_examples();
    EXPECT_GE(examples.size(), 25u);
    std::size_t ran = 0;
    static const std::regex plain_word("[a-z][a-z-]*|--?[a-z][a-z-]*");
    for (const auto& example : examples) {
        auto words = split_words(example);
        if (words.empty() || words[0] != "kpkg") continue;
        bool on_testdata = example.find("testdata/") != std::string::npos;
        bool names_no_file = std::all_of(words.begin() + 1, words.end(), [](const std::string& w) {
            return std::regex_match(w, plain_word) && w != "prune";
        });
        // Not those that reach a registry (a reference, a tag, a transport).
        bool names_an_image = std::any_of(words.begin(), words.end(), [](const std::string& w) {
            return w.find(':') != std::string::npos;
        });
        if ((!on_testdata && !names_no_file) || names_an_image) continue;
        std::vector<std::string> args(words.begin() + 1, words.end());
        const std::string root = (source_root() / "testdata").string() + "/";
        for (auto& a : args) {
            if (a.rfind("testdata/", 0) == 0)
                a.replace(0, 9, root);
            else if (auto eq = a.find("=testdata/"); eq != std::string::npos)
                a.replace(eq + 1, 9, root);
        }
        auto r = run_kpkg(args);
        ++ran;
        EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3 || r.exit_code == 4 || r.exit_code == 5)
            << "README.md's example '" << example << "' exits " << r.exit_code << ": " << r.err;
        EXPECT_FALSE(r.out.empty() && r.err.empty()) << example << " prints nothing";
    }
    EXPECT_GE(ran, 15u);
}

// Every relative link of README, docs/ and bench/RESULTS.md leads to a file of the repository, and
// an anchor to a heading of it.
TEST(Docs, LinksLeadToFilesAndHeadings) {
    static const std::regex link(R"(\]\(([^)\s]+)\))");
    for (const auto& rel : markdown_files()) {
        fs::path dir = (source_root() / rel).parent_path();
        for (const auto& line : prose_lines(read_file(source_root() / rel))) {
            for (std::sregex_iterator it(line.begin(), line.end(), link), end; it != end; ++it) {
                std::string target = (*it)[1];
                if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0)
                    continue;
                auto hash = target.find('#');
                std::string file = target.substr(0, hash);
                fs::path path = file.empty() ? source_root() / rel : dir / file;
                if (!fs::exists(path)) {
                    ADD_FAILURE() << rel << ": link to " << target << ": no such file";
                    continue;
                }
                if (hash == std::string::npos) continue;
                auto anchors = anchors_of(read_file(path));
                if (!has(anchors, target.substr(hash + 1)))
                    ADD_FAILURE() << rel << ": link to " << target << ": no such heading";
            }
        }
    }
}

// docs/ARCHITECTURE.md's table of areas has a row for every area of src/ and none for an area
// that does not exist.
TEST(Docs, ArchitectureListsTheAreasOfTheCode) {
    std::string arch = read_file(source_root() / "docs/ARCHITECTURE.md");
    ASSERT_NE(arch, "");
    std::vector<std::string> areas;
    for (const auto& e : fs::directory_iterator(source_root() / "src"))
        if (e.is_directory() && e.path().filename() != "cli")
            areas.push_back(e.path().filename().string());
    ASSERT_GE(areas.size(), 10u);
    for (const auto& a : areas)
        EXPECT_NE(arch.find("\n| " + a + " | "), std::string::npos)
            << "docs/ARCHITECTURE.md has no row for the area " << a;
    auto table = arch.find("\n| area |");
    ASSERT_NE(table, std::string::npos) << "docs/ARCHITECTURE.md has no table of areas";
    std::istringstream in(arch.substr(table + 1));
    std::string line;
    std::getline(in, line); // header
    std::getline(in, line); // |---|
    while (std::getline(in, line) && line.rfind("| ", 0) == 0) {
        std::string area = line.substr(2, line.find(' ', 2) - 2);
        EXPECT_TRUE(has(areas, area))
            << "docs/ARCHITECTURE.md lists an area src/ does not have: " << area;
    }
}

// The exit codes are listed where a user looks them up, and in the architecture.
TEST(Docs, GuidesListEveryExitCode) {
    using kpkg::ExitCode;
    for (const std::string rel : {"docs/commands.md", "docs/ARCHITECTURE.md"}) {
        std::string text = read_file(source_root() / rel);
        for (ExitCode c : {ExitCode::ok, ExitCode::error, ExitCode::usage, ExitCode::invalid,
                           ExitCode::unsatisfiable, ExitCode::differs})
            EXPECT_NE(text.find("| " + std::to_string(static_cast<int>(c)) + " | "),
                      std::string::npos)
                << rel << " does not list exit code " << static_cast<int>(c);
    }
}

// The docs speak to users: no issue or pull-request numbers, no paths outside the repository.
TEST(Docs, GuidesSpeakToUsers) {
    static const std::regex tracker(R"(\b(issue|pull request|PR)\s*#?[0-9]+)", std::regex::icase);
    for (const auto& rel : markdown_files()) {
        std::istringstream in(read_file(source_root() / rel));
        int n = 0;
        for (std::string line; std::getline(in, line);) {
            ++n;
            EXPECT_FALSE(std::regex_search(line, tracker)) << rel << ":" << n << ": " << line;
            EXPECT_EQ(line.find("../shared"), std::string::npos) << rel << ":" << n << ": " << line;
        }
    }
}
