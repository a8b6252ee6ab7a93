// Regular expressions: kpkg's own engine (core/regex, a Pike VM drawing on a step budget)
// and, when the bench was built with libre2-dev installed, the RE2 library on the same
// expressions and texts in the same run; then the start-up cost that linking libre2 into kpkg
// would add to every command (kpkg version with and without libre2 preloaded).
// Usage: kpkg-bench-regex [--full] [--runs N]
//   --full: the hostile cases at the sizes that were reported (RE2 then takes minutes).
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <vector>

#include "kpkg/core/regex.hpp"
#include "measure.hpp"

#ifdef KPKG_BENCH_RE2
#include <re2/re2.h>
#endif

extern char** environ;

namespace {

namespace re = kpkg::re;

struct Case {
    const char* name;
    std::string pattern;
    std::string text;
};

std::string repeat(const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i)
        out += s;
    return out;
}

// One search with kpkg's engine under `budget` steps: seconds, steps used, outcome.
void own(const Case& c, std::uint64_t budget) {
    const auto t0 = bench::Clock::now();
    const re::Regex r(c.pattern);
    re::Budget b(budget);
    const char* outcome = "";
    try {
        outcome = r.matches(c.text, &b) ? "match" : "no match";
    } catch (const re::LimitError&) {
        outcome = "budget spent";
    }
    const double s = bench::seconds_since(t0);
    const double steps = static_cast<double>(budget - b.left);
    std::printf("  %-8s %-34s %10.3f s %14.0f steps %8.1f M steps/s  %s\n", "kpkg", c.name, s,
                steps, steps / s / 1e6, outcome);
}

#ifdef KPKG_BENCH_RE2
void with_re2(const Case& c) {
    const auto t0 = bench::Clock::now();
    RE2::Options o;
    o.set_log_errors(false);
    const RE2 r(c.pattern, o);
    if (!r.ok()) {
        std::printf("  %-8s %-34s %10.3f s  refused: %s\n", "re2", c.name, bench::seconds_since(t0),
                    r.error().c_str());
        return;
    }
    const bool m = RE2::PartialMatch(c.text, r);
    std::printf("  %-8s %-34s %10.3f s %14s %8s %13s  %s (program %d)\n", "re2", c.name,
                bench::seconds_since(t0), "", "", "", m ? "match" : "no match", r.ProgramSize());
}
#endif

double run_once(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    std::vector<char*> a, e;
    for (const auto& s : argv)
        a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    for (char** p = environ; *p; ++p)
        e.push_back(*p);
    for (const auto& s : env)
        e.push_back(const_cast<char*>(s.c_str()));
    e.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    const auto t0 = bench::Clock::now();
    pid_t pid;
    if (posix_spawn(&pid, a[0], &fa, nullptr, a.data(), e.data()) != 0) return -1;
    int status = 0;
    waitpid(pid, &status, 0);
    posix_spawn_file_actions_destroy(&fa);
    return bench::ms_since(t0);
}

} // namespace

int main(int argc, char** argv) {
    bool full = false;
    [[maybe_unused]] int runs = 200; // used only by the start-up comparison, with RE2
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--full"))
            full = true;
        else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s [--full] [--runs N]\n", argv[0]);
            return 2;
        }
    }
    std::printf("regex bench on %s\n", bench::cpu_model().c_str());
    const std::uint64_t unlimited = UINT64_MAX / 2;

    std::printf("\ntypical expressions over 1 MB (kpkg without a budget)\n");
    const std::vector<Case> typical = {
        {"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
         std::string(1000000, 'a') + "-"},
        {"[a-z]+@[a-z]+\\.com (no match)", "[a-z]+@[a-z]+\\.com", std::string(1000000, 'a')},
        {"(a|b)*c (no match)", "(a|b)*c", std::string(1000000, 'a')},
        {"(?i)hello (at the end)", "(?i)hello", std::string(1000000, 'x') + "HeLLo"},
    };
    for (const Case& c : typical) {
        own(c, unlimited);
#ifdef KPKG_BENCH_RE2
        with_re2(c);
#endif
    }

    // The reported cases: kpkg under its default budget (one render's or one validation's),
    // RE2 without any (it has none).
    [[maybe_unused]] const int scale = full ? 1 : 4;
    std::printf("\nhostile expressions (kpkg: default budget of %llu steps)%s\n",
                static_cast<unsigned long long>(re::Budget::kDefaultSteps),
                full ? "" : "; RE2 on a quarter of the text, --full for all of it");
    const std::vector<Case> hostile = {
        {"a{1000} x3 then b, 100 KB", "a{1000}a{1000}a{1000}b", std::string(100000, 'a')},
        {"a{1000} x20 then b, 200 KB", repeat("a{1000}", 20) + "b", std::string(200000, 'a')},
        {"a{1000} x150, 1 MB", repeat("a{1000}", 150), std::string(1000000, 'a')},
    };
    for (const Case& c : hostile) {
        own(c, re::Budget::kDefaultSteps);
#ifdef KPKG_BENCH_RE2
        if (!full && c.text.size() >= 1000000) {
            std::printf("  %-8s %-34s (--full only)\n", "re2", c.name);
            continue;
        }
        Case small = c;
        small.text.resize(c.text.size() / static_cast<std::size_t>(scale));
        if (scale != 1) small.name = "  same, a quarter of the text";
        with_re2(small);
#endif
    }

#if defined(KPKG_BENCH_RE2) && defined(KPKG_BENCH_KPKG) && defined(KPKG_BENCH_RE2_LIB)
    // What linking libre2 would cost every command: its loading and relocation, measured as a
    // preload of the library into kpkg version.
    std::printf("\nstart-up, kpkg version, %d runs each, median wall time\n", runs);
    const std::vector<std::string> cmd = {KPKG_BENCH_KPKG, "version"};
    for (int pass = 0; pass < 2; ++pass) {
        const std::vector<std::string> env =
            pass ? std::vector<std::string>{"LD_PRELOAD=" KPKG_BENCH_RE2_LIB}
                 : std::vector<std::string>{};
        for (int i = 0; i < 10; ++i)
            run_once(cmd, env);
        std::vector<double> t;
        for (int i = 0; i < runs; ++i)
            t.push_back(run_once(cmd, env));
        std::printf("  %-40s %8.2f ms\n", pass ? "with libre2 loaded (LD_PRELOAD)" : "as built",
                    bench::median(t));
    }
#endif
    return 0;
}
