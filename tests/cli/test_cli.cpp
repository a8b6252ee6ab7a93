// End-to-end runs of the kpkg binary: global flags, exit codes, usage hints, catalog list.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "kpkg/core/text.hpp"
#include "kpkg/io/load.hpp"
#include "support/support.hpp"

using kpkg::test::contains;
using kpkg::test::run_kpkg;
using kpkg::test::testdata;

namespace {

std::string catalog() {
    return testdata("catalog").string();
}

} // namespace

TEST(Cli, Version) {
    auto r = run_kpkg({"--version"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_TRUE(
        kpkg::test::read_file(kpkg::test::source_root() / "meson.build").find("version: '") !=
        std::string::npos);
    EXPECT_EQ(r.out.rfind("kpkg ", 0), 0u) << r.out;
    auto v = run_kpkg({"version"});
    EXPECT_EQ(v.exit_code, 0);
    EXPECT_EQ(v.out, r.out);
}

TEST(Cli, VersionJsonIsData) {
    auto r = run_kpkg({"version", "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto docs = kpkg::io::parse_json(r.out, "stdout");
    ASSERT_TRUE(docs.ok()) << docs.error().str();
    ASSERT_EQ(docs->size(), 1u);
    const auto& root = (*docs)[0].root;
    ASSERT_NE(root.get("version"), nullptr);
    ASSERT_NE(root.get("libraries"), nullptr);
    EXPECT_TRUE(root.get("libraries")->is_seq());
    // Global flags are accepted before the command too.
    auto y = run_kpkg({"-o", "yaml", "version"});
    ASSERT_EQ(y.exit_code, 0);
    EXPECT_TRUE(contains(y.out, "version: ")) << y.out;
}

TEST(Cli, HelpShowsTheCommandTree) {
    auto r = run_kpkg({"--help"});
    EXPECT_EQ(r.exit_code, 0);
    for (const char* w :
         {"catalog", "version", "--output", "--verbose", "--quiet", "--no-color", "Exit codes"})
        EXPECT_TRUE(contains(r.out, w)) << w << " missing from --help:\n" << r.out;
    EXPECT_FALSE(contains(r.out, "__spec"));
    auto sub = run_kpkg({"catalog", "list", "--help"});
    EXPECT_EQ(sub.exit_code, 0);
    for (const char* w : {"packages", "channels", "bundles"})
        EXPECT_TRUE(contains(sub.out, w));
}

TEST(Cli, UnknownCommandSuggestsClosest) {
    auto r = run_kpkg({"catlog", "list"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "unknown command \"catlog\"")) << r.err;
    EXPECT_TRUE(contains(r.err, "did you mean \"catalog\"?")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line expected:\n" << r.err;
    EXPECT_TRUE(r.out.empty());

    auto nested = run_kpkg({"catalog", "list", "bundels", catalog()});
    EXPECT_EQ(nested.exit_code, 2);
    EXPECT_TRUE(contains(nested.err, "did you mean \"bundles\"?")) << nested.err;
}

TEST(Cli, UnknownFlagSuggestsClosest) {
    auto r = run_kpkg({"version", "--librarys"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "unknown flag \"--librarys\"")) << r.err;
    EXPECT_TRUE(contains(r.err, "did you mean \"--libraries\"?")) << r.err;
    auto g = run_kpkg({"--verbos", "version"});
    EXPECT_EQ(g.exit_code, 2);
    EXPECT_TRUE(contains(g.err, "did you mean \"--verbose\"?")) << g.err;
}

TEST(Cli, UsageErrorsExit2) {
    EXPECT_EQ(run_kpkg({}).exit_code, 2);
    EXPECT_EQ(run_kpkg({"catalog"}).exit_code, 2);
    auto bad = run_kpkg({"-o", "xml", "version"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "xml")) << bad.err;
    auto missing = run_kpkg({"catalog", "list", "packages"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_TRUE(contains(missing.err, "SRC")) << missing.err;
}

TEST(Cli, NoColourWithoutTerminal) {
    auto r = run_kpkg({"catlog"});
    EXPECT_FALSE(contains(r.err, "\033[")) << r.err;
    auto n = run_kpkg({"catlog"}, {}, {"NO_COLOR=1"});
    EXPECT_FALSE(contains(n.err, "\033["));
}

TEST(Cli, VerboseAndQuietControlStderr) {
    auto v = run_kpkg({"-v", "catalog", "list", "packages", catalog()});
    ASSERT_EQ(v.exit_code, 0);
    EXPECT_TRUE(contains(v.err, "kpkg: debug: read ")) << v.err;
    EXPECT_TRUE(contains(v.err, "vault/catalog.yaml (8 documents)")) << v.err;
    auto plain = run_kpkg({"catalog", "list", "packages", catalog()});
    EXPECT_TRUE(plain.err.empty()) << plain.err;
    auto q = run_kpkg({"catalog", "list", "packages", catalog(), "-q", "-v"});
    EXPECT_TRUE(q.err.empty()) << q.err;
    EXPECT_EQ(q.out, plain.out);
}

TEST(CatalogList, Packages) {
    auto r = run_kpkg({"catalog", "list", "packages", catalog()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "NAME   DEFAULT CHANNEL  CHANNELS  BUNDLES  LATEST\n"
                     "etcd   stable           2         3        etcdoperator.v0.9.4\n"
                     "vault  stable           2         5        vault-operator.v1.2.0\n");
}

TEST(CatalogList, Channels) {
    auto r = run_kpkg({"catalog", "list", "channels", catalog(), "vault"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "PACKAGE  CHANNEL  HEAD                        ENTRIES\n"
                     "vault    fast     vault-operator.v1.3.0-rc.1  4\n"
                     "vault    stable   vault-operator.v1.2.0       3\n");
}

TEST(CatalogList, BundlesAsJson) {
    auto r = run_kpkg({"-o", "json", "catalog", "list", "bundles", catalog(), "vault"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto docs = kpkg::io::parse_json(r.out, "stdout");
    ASSERT_TRUE(docs.ok()) << docs.error().str();
    const auto& rows = (*docs)[0].root;
    ASSERT_TRUE(rows.is_seq());
    ASSERT_EQ(rows.items.size(), 7u);
    const auto& first = rows.items[0]; // sorted by package, channel, name
    EXPECT_EQ(first.get("channel")->text, "fast");
    EXPECT_EQ(first.get("name")->text, "vault-operator.v1.1.0");
    const auto& rc = rows.items[3];
    EXPECT_EQ(rc.get("name")->text, "vault-operator.v1.3.0-rc.1");
    EXPECT_EQ(rc.get("version")->text, "1.3.0-rc.1");
    EXPECT_EQ(rc.get("skipRange")->text, ">=1.1.0 <1.3.0-rc.1");
    ASSERT_EQ(rc.get("skips")->items.size(), 1u);
    EXPECT_EQ(rc.get("skips")->items[0].text, "vault-operator.v1.1.1");
}

TEST(CatalogList, FromStdin) {
    std::string json = kpkg::test::read_file(testdata("catalog/etcd/catalog.json"));
    auto r = run_kpkg({"catalog", "list", "channels", "-"}, json);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "etcd     stable   etcdoperator.v0.9.4")) << r.out;
}

TEST(CatalogList, UnknownPackageSuggests) {
    auto r = run_kpkg({"catalog", "list", "bundles", catalog(), "valt"});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "package \"valt\" is not in the catalog")) << r.err;
    EXPECT_TRUE(contains(r.err, "did you mean \"vault\"?")) << r.err;
}

TEST(CatalogList, BadInputNamesFileAndPosition) {
    kpkg::test::TempDir d;
    d.write("cat/a.yaml",
            "schema: olm.package\nname: a\n---\nschema: olm.channel\nentries: {x: 1}\n");
    auto r = run_kpkg({"catalog", "list", "packages", (d / "cat").string()});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "a.yaml:5:10")) << r.err;
    EXPECT_TRUE(contains(r.err, "\"entries\" must be a list")) << r.err;
    EXPECT_TRUE(r.out.empty());

    d.write("broken/b.json", "{\"schema\": \"olm.package\",\n \"name\": }\n");
    auto j = run_kpkg({"catalog", "list", "packages", (d / "broken").string()});
    EXPECT_EQ(j.exit_code, 3);
    EXPECT_TRUE(contains(j.err, "b.json:2:10")) << j.err;

    d.write("noschema/c.yaml", "name: x\n");
    auto s = run_kpkg({"catalog", "list", "packages", (d / "noschema").string()});
    EXPECT_EQ(s.exit_code, 3);
    EXPECT_TRUE(contains(s.err, "c.yaml:1:1")) << s.err;
    EXPECT_TRUE(contains(s.err, "no \"schema\"")) << s.err;

    d.write("garbage/bin", std::string("\x7f"
                                       "ELF\x01\x02\x00\xff\xfe",
                                       9));
    auto g = run_kpkg({"catalog", "list", "packages", (d / "garbage").string()});
    EXPECT_EQ(g.exit_code, 3) << g.err;
    EXPECT_TRUE(contains(g.err, "bin")) << g.err;
}

TEST(CatalogList, MissingSourceIsAnIoError) {
    auto r = run_kpkg({"catalog", "list", "packages", "/nonexistent/kpkg-catalog"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "/nonexistent/kpkg-catalog")) << r.err;
}

// --- help ------------------------------------------------------------------------------------

namespace {

std::vector<std::string> words_of(const std::string& s) {
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

// Every command path of the binary, from `kpkg __spec` ("kpkg catalog list bundles", ...).
std::vector<std::vector<std::string>> command_paths() {
    auto r = run_kpkg({"__spec"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::vector<std::string>> paths;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
        auto w = words_of(line);
        if (w.size() < 3 || w[0] != "command" || w[2].rfind("__", 0) == 0) continue;
        paths.emplace_back(w.begin() + 2, w.end()); // without "command kpkg"
    }
    return paths;
}

} // namespace

TEST(Help, EverySubcommandShowsTheGlobalFlags) {
    auto paths = command_paths();
    ASSERT_GE(paths.size(), 10u);
    for (auto args : paths) {
        args.push_back("--help");
        auto r = run_kpkg(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_TRUE(contains(r.out, "Global flags")) << r.out;
        for (const char* f : {"--output", "--verbose", "--quiet", "--no-cache", "--no-color"})
            EXPECT_TRUE(contains(r.out, f)) << f << " missing from the help of " << args[0] << ":\n"
                                            << r.out;
    }
}

// A run without --help sets up only the command it runs. `kpkg __spec WORD` shows the tree such
// a run of WORD has: every command under WORD, with every flag, must be in it as in the whole
// tree, and nothing else but the root.
TEST(Cli, EveryCommandAndItsFlagsExistWhenOnlyItIsSetUp) {
    auto whole = run_kpkg({"__spec"});
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    std::set<std::string> words;
    for (const auto& p : command_paths())
        words.insert(p.front());
    ASSERT_GE(words.size(), 10u);
    for (const std::string& w : words) {
        if (w == "help" || w == "completion") continue; // these set up everything
        auto lazy = run_kpkg({"__spec", w});
        ASSERT_EQ(lazy.exit_code, 0) << w << ": " << lazy.err;
        auto under = [&](const std::string& text) {
            std::string out;
            std::istringstream in(text);
            for (std::string line; std::getline(in, line);) {
                auto x = words_of(line);
                if (x.size() >= 3 && x[2] == w) out += line + "\n";
            }
            return out;
        };
        EXPECT_FALSE(under(lazy.out).empty()) << w;
        EXPECT_EQ(under(lazy.out), under(whole.out)) << w;
        // Few of the other commands were set up (one setup may add several: pull, push, image
        // and cache come together).
        std::size_t others = 0;
        for (const std::string& other : words)
            if (other != w && contains(lazy.out, "command kpkg " + other + "\n")) ++others;
        EXPECT_LE(others, 3u) << w << ":\n" << lazy.out;
    }
}

TEST(Help, HelpCommandShowsACommandsHelp) {
    auto direct = run_kpkg({"catalog", "list", "bundles", "--help"});
    auto via = run_kpkg({"help", "catalog", "list", "bundles"});
    EXPECT_EQ(via.exit_code, 0) << via.err;
    EXPECT_EQ(via.out, direct.out);
    EXPECT_TRUE(contains(via.out, "kpkg catalog list bundles")) << via.out;
    auto top = run_kpkg({"help"});
    EXPECT_EQ(top.exit_code, 0);
    EXPECT_EQ(top.out, run_kpkg({"--help"}).out);
    auto bad = run_kpkg({"help", "catalog", "lst"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "unknown command \"lst\" for 'kpkg catalog'")) << bad.err;
    EXPECT_TRUE(contains(bad.err, "did you mean \"list\"?")) << bad.err;
    EXPECT_TRUE(bad.out.empty());
}

// Piped, `kpkg help --man CMD` writes the command's man page as it is in man/.
TEST(Help, ManPagesComeWithTheBinary) {
    for (auto [cmd, page] :
         std::vector<std::pair<std::string, std::string>>{{"", "kpkg.1"},
                                                          {"bundle", "kpkg-bundle.1"},
                                                          {"catalog", "kpkg-catalog.1"},
                                                          {"resolve", "kpkg-resolve.1"},
                                                          {"upgrade-path", "kpkg-upgrade-path.1"},
                                                          {"version", "kpkg-version.1"},
                                                          {"completion", "kpkg-completion.1"},
                                                          {"build", "kpkg-build.1"},
                                                          {"push", "kpkg-push.1"},
                                                          {"pull", "kpkg-pull.1"},
                                                          {"image", "kpkg-image.1"},
                                                          {"cache", "kpkg-cache.1"}}) {
        std::vector<std::string> args{"help", "--man"};
        if (!cmd.empty()) args.push_back(cmd);
        auto r = run_kpkg(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, kpkg::test::read_file(kpkg::test::source_root() / "man" / page)) << page;
    }
}

// Help is wrapped at the width ($COLUMNS when not on a terminal) at spaces: the words are the
// same as unwrapped, and no line is longer than the width unless it is one word.
TEST(Help, WrapsAtTheWidthWithoutBreakingWords) {
    for (std::vector<std::string> args : {std::vector<std::string>{"--help"},
                                          {"catalog", "validate", "--help"},
                                          {"resolve", "--help"},
                                          {"bundle", "validate", "--help"}}) {
        auto wide = run_kpkg(args, {}, {"COLUMNS=1000"});
        auto narrow = run_kpkg(args, {}, {"COLUMNS=50"});
        ASSERT_EQ(narrow.exit_code, 0);
        EXPECT_EQ(words_of(narrow.out), words_of(wide.out)) << narrow.out;
        std::istringstream in(narrow.out);
        for (std::string line; std::getline(in, line);) {
            if (kpkg::text::display_width(line) > 50) {
                EXPECT_EQ(words_of(line).size(), 1u) << "line longer than 50:\n" << line;
            }
        }
        EXPECT_NE(narrow.out, wide.out);
    }
}

// --- completion ------------------------------------------------------------------------------

TEST(Completion, PrintsTheScriptsOfTheSourceTree) {
    for (auto [shell, file] : std::vector<std::pair<std::string, std::string>>{
             {"bash", "kpkg.bash"}, {"zsh", "_kpkg"}, {"fish", "kpkg.fish"}}) {
        auto r = run_kpkg({"completion", shell});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, kpkg::test::read_file(kpkg::test::source_root() / "completions" / file))
            << shell;
    }
    auto bad = run_kpkg({"completion", "tcsh"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "tcsh")) << bad.err;
    EXPECT_EQ(run_kpkg({"completion"}).exit_code, 2);
}

// --- suggestions -----------------------------------------------------------------------------

TEST(Cli, NoSuggestionWhenNothingIsClose) {
    for (std::vector<std::string> args : {std::vector<std::string>{"version", "-x"},
                                          {"version", "--xyz"},
                                          {"frobnicate"},
                                          {"catalog", "list", "xy", catalog()}}) {
        auto r = run_kpkg(args);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_FALSE(contains(r.err, "did you mean")) << r.err;
        EXPECT_TRUE(contains(r.err, "unknown")) << r.err;
    }
}

// --- tables ----------------------------------------------------------------------------------

namespace {

// A catalog whose channel head skips `n` bundles.
std::string catalog_with_skips(const kpkg::test::TempDir& d, int n) {
    std::string y = "schema: olm.package\nname: p\ndefaultChannel: c\n---\n"
                    "schema: olm.channel\npackage: p\nname: c\nentries:\n"
                    "  - name: p.v2.0.0\n    skips:\n";
    for (int i = 0; i < n; ++i)
        y += "      - p.v1.0." + std::to_string(i) + "\n";
    d.write("cat/p.yaml", y);
    return (d / "cat").string();
}

} // namespace

TEST(CatalogList, LongSkipListsAreSummarised) {
    kpkg::test::TempDir d;
    std::string cat = catalog_with_skips(d, 11);
    auto r = run_kpkg({"catalog", "list", "bundles", cat});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "PACKAGE  CHANNEL  BUNDLE    VERSION  REPLACES  SKIPS     SKIP RANGE\n"
                     "p        c        p.v2.0.0  -        -         11 skips  -\n");
    auto j = run_kpkg({"-o", "json", "catalog", "list", "bundles", cat});
    auto docs = kpkg::io::parse_json(j.out, "stdout");
    ASSERT_TRUE(docs.ok());
    EXPECT_EQ((*docs)[0].root.items[0].get("skips")->items.size(), 11u);

    kpkg::test::TempDir d2;
    auto two = run_kpkg({"catalog", "list", "bundles", catalog_with_skips(d2, 2)});
    EXPECT_TRUE(contains(two.out, "p.v1.0.0,p.v1.0.1")) << two.out;
}

namespace {

// Runs kpkg on a pseudo-terminal `cols` columns wide; returns what it wrote there.
std::string run_on_terminal(const std::vector<std::string>& args, unsigned short cols) {
    struct winsize ws {};
    ws.ws_col = cols;
    ws.ws_row = 50;
    int master = -1;
    pid_t pid = ::forkpty(&master, nullptr, nullptr, &ws);
    if (pid < 0) return "forkpty failed";
    if (pid == 0) {
        std::vector<char*> argv;
        std::string bin = std::getenv("KPKG_BIN");
        argv.push_back(bin.data());
        std::vector<std::string> copy = args;
        for (auto& a : copy)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        ::setenv("NO_COLOR", "1", 1);
        ::execv(bin.c_str(), argv.data());
        ::_exit(127);
    }
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;)
        out.append(buf, static_cast<std::size_t>(n));
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(master);
    // The terminal turns each "\n" into "\r\n".
    std::string clean;
    for (char c : out)
        if (c != '\r') clean += c;
    return clean;
}

} // namespace

// On a terminal, rows wider than it wrap within their columns; piped they stay one line each.
TEST(CatalogList, RowsWrapOnATerminalOnly) {
    auto piped = run_kpkg({"catalog", "list", "bundles", catalog(), "vault"});
    ASSERT_EQ(piped.exit_code, 0);
    auto wide = run_on_terminal({"catalog", "list", "bundles", catalog(), "vault"}, 200);
    EXPECT_EQ(wide, piped.out);
    auto narrow = run_on_terminal({"catalog", "list", "bundles", catalog(), "vault"}, 80);
    std::istringstream in(narrow);
    std::size_t lines = 0;
    for (std::string line; std::getline(in, line); ++lines)
        EXPECT_LE(line.size(), 80u) << line;
    EXPECT_GT(lines, 8u) << narrow; // 8 rows, some of them on two lines
    // The same characters, only laid out differently.
    auto letters = [](std::string s) {
        s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
        s.erase(std::remove(s.begin(), s.end(), '\n'), s.end());
        std::sort(s.begin(), s.end());
        return s;
    };
    EXPECT_EQ(letters(narrow), letters(piped.out)) << narrow;
}

// --- CI formats ------------------------------------------------------------------------------

namespace {

// A copy of the invalid-csv-version bundle in a directory named `name`, its CSV's version set
// to `version` (a YAML double-quoted scalar's content).
std::string bundle_copy(const kpkg::test::TempDir& d, const std::string& name,
                        const std::string& version) {
    namespace fs = std::filesystem;
    fs::path src = testdata("bundles/invalid-csv-version");
    fs::path dst = d / name;
    fs::copy(src, dst, fs::copy_options::recursive);
    fs::path csv = dst / "manifests/demo.v1.0.0.clusterserviceversion.yaml";
    std::string y = kpkg::test::read_file(csv);
    auto at = y.find("version: v1.0.0");
    y.replace(at, 15, "version: \"" + version + "\"");
    d.write(fs::relative(csv, d.path()).string(), y);
    return dst.string();
}

struct Shell {
    int exit_code = -1;
    std::string out;
};

// `command` run by sh with `input` on its stdin.
Shell sh(const std::string& command, const std::string& input) {
    kpkg::test::TempDir d;
    auto in = d.write("in", input);
    Shell r;
    FILE* p = ::popen((command + " < '" + in.string() + "' 2>&1").c_str(), "r");
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
        r.out.append(buf, n);
    int st = ::pclose(p);
    r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

// The JUnit document read back by Python's XML parser, as JSON: {"name", "tests", "failures",
// "cases": [[suite, case, failure message or null, system-out or null]]}.
Shell parse_junit(const std::string& xml) {
    return sh("python3 -c '\n"
              "import sys, json, xml.etree.ElementTree as ET\n"
              "r = ET.parse(sys.stdin).getroot()\n"
              "assert r.tag == \"testsuites\", r.tag\n"
              "cases = []\n"
              "for s in r.iter(\"testsuite\"):\n"
              "  for c in s.iter(\"testcase\"):\n"
              "    f = c.find(\"failure\"); o = c.find(\"system-out\")\n"
              "    cases.append([s.get(\"name\"), c.get(\"name\"), f.get(\"message\") if f is "
              "not None else None, o.text if o is not None else None])\n"
              "print(json.dumps({\"name\": r.get(\"name\"), \"tests\": r.get(\"tests\"), "
              "\"failures\": r.get(\"failures\"), \"cases\": cases}))\n"
              "'",
              xml);
}

std::string text_or_null(const kpkg::io::Node* n) {
    return n == nullptr || n->is_null() ? "null" : n->text;
}

} // namespace

TEST(CiFormats, GithubAnnotations) {
    std::string dir = testdata("bundles/invalid-csv-version").string();
    auto r = run_kpkg({"bundle", "validate", "-o", "github", dir});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(r.out, "::error file=" + dir +
                         "/manifests/demo.v1.0.0.clusterserviceversion.yaml,line=10,col=12,"
                         "title=csv.version::spec.version: invalid semantic version \"v1.0.0\": a "
                         "leading 'v' is not part of a semantic version (write \"1.0.0\")\n" +
                         dir + ": invalid: 1 error\n");
    auto ok = run_kpkg({"catalog", "validate", "-o", "github", catalog()});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_EQ(ok.out, catalog() + ": valid\n");
    auto cat = run_kpkg(
        {"-o", "github", "catalog", "validate", testdata("catalogs/validate-many").string()});
    EXPECT_EQ(cat.exit_code, 3);
    EXPECT_TRUE(contains(cat.out, "::error file=")) << cat.out;
    EXPECT_TRUE(contains(cat.out, "alpha.yaml,line=2,col=1,title=")) << cat.out;
    EXPECT_TRUE(contains(cat.out, "::package alpha: default channel \"beta\" not found"))
        << cat.out;
}

// GitHub's workflow commands: in a message '%', CR and LF are %25, %0D, %0A; in a property
// value ':' and ',' are %3A and %2C as well.
TEST(CiFormats, GithubEscaping) {
    kpkg::test::TempDir d;
    std::string dir = bundle_copy(d, "a,b:c%d\nx\ry", "v1%x");
    auto r = run_kpkg({"bundle", "validate", "-o", "github", dir});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    std::string escaped = d.path().string() + "/a%2Cb%3Ac%25d%0Ax%0Dy";
    std::istringstream in(r.out);
    std::string first, second, rest;
    std::getline(in, first);
    std::getline(in, second);
    std::getline(in, rest, '\0');
    EXPECT_EQ(
        first.rfind("::error file=" + escaped +
                        "/manifests/demo.v1.0.0.clusterserviceversion.yaml,line=10,col=12,"
                        "title=csv.version::spec.version: invalid semantic version \"v1%25x\"",
                    0),
        0u)
        << first;
    // The plain line escapes as a message does: '%' and line breaks, not ':' or ','.
    EXPECT_EQ(second, d.path().string() + "/a,b:c%25d%0Ax%0Dy: invalid: 1 error");
    EXPECT_EQ(rest, "");
    EXPECT_FALSE(contains(r.out, "\r"));
}

TEST(CiFormats, JunitIsValidXmlWithEscaping) {
    kpkg::test::TempDir d;
    const std::string name = "b<&>\"'\x01\n";
    std::string bad = bundle_copy(d, name, "v1 <&> \\\"q\\\" 'a'");
    std::string good = testdata("bundles/valid-minimal").string();
    auto r = run_kpkg({"bundle", "validate", "-o", "junit", bad, good});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(r.out.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u) << r.out;
    auto parsed = parse_junit(r.out);
    ASSERT_EQ(parsed.exit_code, 0) << parsed.out << "\n" << r.out;
    auto docs = kpkg::io::parse_json(parsed.out, "python");
    ASSERT_TRUE(docs.ok()) << parsed.out;
    const auto& doc = (*docs)[0].root;
    EXPECT_EQ(doc.get("name")->text, "kpkg bundle validate");
    EXPECT_EQ(doc.get("tests")->text, "2");
    EXPECT_EQ(doc.get("failures")->text, "1");
    const auto& cases = doc.get("cases")->items;
    ASSERT_EQ(cases.size(), 2u) << parsed.out;
    // The names and the message come back exactly, the control character XML cannot hold as
    // U+FFFD, the line break kept.
    const std::string shown = (d / "b<&>\"'\xEF\xBF\xBD\n").string();
    EXPECT_EQ(cases[0].items[0].text, shown);
    EXPECT_EQ(cases[0].items[1].text,
              "csv.version at " + shown +
                  "/manifests/demo.v1.0.0.clusterserviceversion.yaml:10:12");
    EXPECT_EQ(text_or_null(&cases[0].items[2])
                  .rfind("spec.version: invalid semantic version \"v1 <&> \\\"q\\\" 'a'\"", 0),
              0u)
        << text_or_null(&cases[0].items[2]);
    EXPECT_EQ(cases[1].items[0].text, good);
    EXPECT_EQ(cases[1].items[1].text, "valid");
    EXPECT_EQ(text_or_null(&cases[1].items[2]), "null");
}

TEST(CiFormats, OnlyForTheValidateCommands) {
    auto r = run_kpkg({"-o", "junit", "catalog", "list", "packages", catalog()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "-o junit is for 'kpkg bundle validate', 'kpkg catalog "
                                "validate' and 'kpkg package validate'"))
        << r.err;
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(run_kpkg({"version", "-o", "github"}).exit_code, 2);
    auto junit = run_kpkg({"catalog", "validate", "-o", "junit", catalog()});
    EXPECT_EQ(junit.exit_code, 0) << junit.err;
    auto parsed = parse_junit(junit.out);
    EXPECT_EQ(parsed.exit_code, 0) << parsed.out;
    EXPECT_EQ(parsed.out, "{\"name\": \"kpkg catalog validate\", \"tests\": \"1\", \"failures\": "
                          "\"0\", \"cases\": [[\"" +
                              catalog() + "\", \"valid\", null, null]]}\n");
}

// A Package Operator package's findings as GitHub annotations: file, line and column when known,
// the rule as the title, then the verdict line; exit 3 as with text output.
TEST(CiFormats, PackageValidateGithub) {
    const std::string pkg = testdata("packages/broken").string();
    auto r = run_kpkg({"package", "validate", "-o", "github", pkg});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(r.out, "::error file=" + pkg +
                         "/manifest.yaml,line=9,col=5,title=package.manifest::spec.phases[1].name: "
                         "Invalid value: \"deploy\": must be unique\n"
                         "::error file=" +
                         pkg +
                         "/deployment.yaml,line=1,title=package.object::Missing "
                         "package-operator.run/phase Annotation in deployment.yaml idx 0\n" +
                         pkg + ": invalid: 2 errors\n");
    EXPECT_EQ(r.err, "");
    auto ok =
        run_kpkg({"-o", "github", "package", "validate", testdata("packages/greeter").string()});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_EQ(ok.out, testdata("packages/greeter").string() + ": valid\n");
}

// JUnit XML for `kpkg package validate`: the package a test suite, each finding a failing test
// case named by its rule and position; a component's findings name the component.
TEST(CiFormats, PackageValidateJunit) {
    kpkg::test::TempDir d;
    const char* manifest = "apiVersion: manifests.package-operator.run/v1alpha1\n"
                           "kind: PackageManifest\nmetadata:\n  name: %s\nspec:\n"
                           "  scopes: [Namespaced]\n  phases:\n  - name: deploy\n%s";
    auto manifest_of = [&](const std::string& name, const std::string& extra) {
        std::string m = manifest;
        m.replace(m.find("%s"), 2, name);
        m.replace(m.find("%s"), 2, extra);
        return m;
    };
    d.write("pkg/manifest.yaml", manifest_of("multi", "  components: {}\n"));
    d.write("pkg/components/front/manifest.yaml", manifest_of("front", ""));
    d.write("pkg/components/front/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n");
    const std::string pkg = (d / "pkg").string();
    auto r = run_kpkg({"package", "validate", "-o", "junit", pkg});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    auto parsed = parse_junit(r.out);
    ASSERT_EQ(parsed.exit_code, 0) << parsed.out << "\n" << r.out;
    EXPECT_EQ(parsed.out,
              "{\"name\": \"kpkg package validate\", \"tests\": \"1\", \"failures\": \"1\", "
              "\"cases\": [[\"" +
                  pkg + "\", \"package.object at " + pkg +
                  "/components/front/cm.yaml:1\", \"component \\\"front\\\": Missing "
                  "package-operator.run/phase Annotation in cm.yaml idx 0\", null]]}\n");
    // The text output of the same run, for comparison: one finding, the same words.
    auto text = run_kpkg({"package", "validate", pkg});
    EXPECT_EQ(text.exit_code, 3);
    EXPECT_TRUE(contains(text.out, pkg + "/components/front/cm.yaml:1: error: component "
                                         "\"front\": Missing package-operator.run/phase "
                                         "Annotation in cm.yaml idx 0\n"))
        << text.out;
}

// --- README ----------------------------------------------------------------------------------

namespace {

// The output README.md or a user guide of docs/ shows under "$ COMMAND" (up to the next "$ " line
// or the block's end).
std::string readme_output(const std::string& command) {
    namespace fs = std::filesystem;
    std::vector<fs::path> files{kpkg::test::source_root() / "README.md"};
    for (const auto& e : fs::directory_iterator(kpkg::test::source_root() / "docs"))
        if (e.path().extension() == ".md") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::string readme;
    auto at = std::string::npos;
    for (const auto& f : files) {
        readme = kpkg::test::read_file(f);
        at = readme.find("\n$ " + command + "\n");
        if (at != std::string::npos) break;
    }
    if (at == std::string::npos) return "<not in README.md or docs/>";
    at += command.size() + 4;
    auto end = readme.find("```", at);
    auto next = readme.find("\n$ ", at - 1);
    if (next != std::string::npos && next < end) end = next + 1;
    return readme.substr(at, end - at);
}

std::vector<std::string> argv_of(const std::string& command) {
    auto w = words_of(command);
    w.erase(w.begin()); // "kpkg"
    return w;
}

} // namespace

// README and docs/ examples run on testdata/ and show what kpkg prints, byte for byte.
TEST(Readme, ExamplesShowWhatKpkgPrints) {
    for (const std::string command :
         {"kpkg resolve dashboard --catalog index=testdata/catalogs/resolve-no-solution",
          "kpkg bundle validate -o github testdata/bundles/invalid-csv-version",
          "kpkg bundle validate testdata/bundles/invalid-csv-version", "kpkg frobnicate"}) {
        auto args = argv_of(command);
        for (auto& a : args)
            if (a.rfind("testdata/", 0) == 0 || a.find("=testdata/") != std::string::npos)
                a.replace(a.find("testdata/"), 9,
                          kpkg::test::source_root().string() + "/testdata/");
        auto r = run_kpkg(args);
        std::string shown = r.out + r.err;
        const std::string root = kpkg::test::source_root().string() + "/";
        for (std::size_t p; (p = shown.find(root)) != std::string::npos;)
            shown.erase(p, root.size());
        EXPECT_EQ(shown, readme_output(command)) << command;
    }
}

// A template that divides the smallest integer by -1 renders Go's answer (the same integer; the
// remainder 0) instead of killing kpkg with SIGFPE; validate accepts the package.
TEST(PackageRender, IntegerEdgesGiveGoAnswersNotACrash) {
    const std::string pkg = testdata("packages/integer-edges").string();
    auto r = run_kpkg({"package", "render", pkg, "--namespace", "ns"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_TRUE(contains(r.out, "  div: \"-9223372036854775808\"\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "  divLiteral: \"-9223372036854775808\"\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "  mod: \"0\"\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "  atoi: \"9223372036854775807\"\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "  printf: '%!(NOVERB)%!(EXTRA int=1)'\n")) << r.out;
    auto v = run_kpkg({"package", "validate", pkg});
    EXPECT_EQ(v.exit_code, 0) << v.err;
}
