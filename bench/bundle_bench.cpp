// Cost of `kpkg bundle render` and `kpkg bundle validate` on the corpus bundles.
// 1. In process: median milliseconds per bundle for loading (reading and parsing the YAML),
//    rendering, writing the JSON, and validating; for the first bundle also its first run, when
//    the process is as cold as a fresh `kpkg` run.
// 2. End to end: the kpkg executable spawned as a user runs it (stdout to /dev/null), median and
//    p90 wall time from spawn to exit and peak RSS, with /bin/true measured in the same run.
// Usage: kpkg-bench-bundle [--runs N] [--corpus DIR] [--kpkg PATH] [BUNDLE_DIR...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure.hpp"

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/bundle/render.hpp"
#include "kpkg/bundle/validate.hpp"

namespace fs = std::filesystem;
using namespace kpkg;

extern char** environ;

namespace {

using bench::Clock;
using bench::median;
using bench::ms_since;

struct Spawned {
    double ms;
    long max_rss_kb;
};

// One run of argv with stdout and stderr to /dev/null; exits the bench when it fails.
Spawned spawn_once(const std::vector<std::string>& argv) {
    std::vector<char*> a;
    for (const auto& s : argv)
        a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    const auto t0 = Clock::now();
    pid_t pid;
    if (posix_spawn(&pid, a[0], &fa, nullptr, a.data(), environ) != 0) {
        std::fprintf(stderr, "cannot run %s\n", a[0]);
        std::exit(1);
    }
    int status = 0;
    struct rusage ru {};
    wait4(pid, &status, 0, &ru);
    const double ms = ms_since(t0);
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "%s %s exited with status %d\n", a[0], a.size() > 2 ? a[1] : "",
                     status);
        std::exit(1);
    }
    return {ms, ru.ru_maxrss};
}

std::string self_exe;

// Peak RSS of one run of argv. ru_maxrss also counts a child's memory before its exec, and a
// child spawned from this bench shares or copies the bench's memory until then; so the bench
// execs a fresh copy of itself (--peak-rss CMD...), small at that point, which spawns the command
// and writes its ru_maxrss to a pipe. The fresh copy's own size is the floor (see /bin/true).
long peak_rss_kb(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe(fds) != 0) return 0;
    std::vector<std::string> full = {self_exe, "--peak-rss", std::to_string(fds[1])};
    full.insert(full.end(), argv.begin(), argv.end());
    std::vector<char*> a;
    for (const auto& s : full)
        a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    pid_t pid;
    if (posix_spawn(&pid, a[0], nullptr, nullptr, a.data(), environ) != 0) return 0;
    close(fds[1]);
    char buf[64] = {};
    const ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return n > 0 ? std::atol(buf) : 0;
}

// The --peak-rss mode: run argv (from `first`) once, write its ru_maxrss in KB to fd.
int peak_rss_mode(int fd, char** argv) {
    std::vector<std::string> cmd;
    for (char** p = argv; *p != nullptr; ++p)
        cmd.emplace_back(*p);
    const Spawned s = spawn_once(cmd);
    const std::string out = std::to_string(s.max_rss_kb);
    if (write(fd, out.data(), out.size()) < 0) return 1;
    return 0;
}

void spawn_row(const char* label, const std::vector<std::string>& argv, int runs, double base) {
    for (int i = 0; i < 5; ++i)
        spawn_once(argv); // warm the page cache
    std::vector<double> t;
    long rss = 0;
    for (int i = 0; i < runs; ++i)
        t.push_back(spawn_once(argv).ms);
    rss = peak_rss_kb(argv);
    std::sort(t.begin(), t.end());
    const double med = t[t.size() / 2];
    std::printf("%-40s %9.2f %9.2f %9.1f", label, med, t[t.size() * 9 / 10], rss / 1024.0);
    if (base > 0) std::printf(" %9.2f", med / base);
    std::printf("\n");
}

} // namespace

int main(int argc, char** argv) {
    if (argc > 3 && std::strcmp(argv[1], "--peak-rss") == 0)
        return peak_rss_mode(std::atoi(argv[2]), argv + 3);
    self_exe = fs::canonical("/proc/self/exe").string();
    int runs = 50;
    fs::path corpus = fs::path(KPKG_BENCH_SOURCE_ROOT).parent_path() / "shared" / "corpus";
    std::vector<fs::path> dirs;
    std::string kpkg = KPKG_BENCH_KPKG;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = std::max(1, std::atoi(argv[++i]));
        } else if (std::strcmp(argv[i], "--corpus") == 0 && i + 1 < argc) {
            corpus = argv[++i];
        } else if (std::strcmp(argv[i], "--kpkg") == 0 && i + 1 < argc) {
            kpkg = argv[++i];
        } else if (argv[i][0] == '-') {
            std::fprintf(
                stderr,
                "usage: kpkg-bench-bundle [--runs N] [--corpus DIR] [--kpkg PATH] [DIR...]\n");
            return 2;
        } else {
            dirs.emplace_back(argv[i]);
        }
    }
    if (dirs.empty())
        for (const char* b :
             {"etcd.0.9.2", "kiali.1.4.2", "foo-bundle-v0.2.0", "prometheus.0.22.2"})
            dirs.push_back(corpus / "olm" / "bundles" / b);

    std::printf("%-20s %9s %9s %9s %9s %9s %10s   (median ms of %d runs)\n", "bundle", "load",
                "render", "json", "validate", "total", "json bytes", runs);
    for (const auto& dir : dirs) {
        std::vector<double> t_load, t_render, t_json, t_validate, t_total;
        std::size_t bytes = 0;
        for (int i = 0; i < runs + 3; ++i) { // the first 3 warm the page cache
            const auto t0 = Clock::now();
            auto loaded = bundle::load(dir);
            if (!loaded) {
                std::fprintf(stderr, "%s\n", loaded.error().str().c_str());
                return 1;
            }
            const double l = ms_since(t0);
            auto t1 = Clock::now();
            auto rendered = bundle::render(*loaded);
            if (!rendered) {
                std::fprintf(stderr, "%s\n", rendered.error().str().c_str());
                return 1;
            }
            const double r = ms_since(t1);
            t1 = Clock::now();
            const std::string json = bundle::to_json(*rendered);
            const double j = ms_since(t1);
            t1 = Clock::now();
            const auto findings = bundle::validate(*loaded);
            const double v = ms_since(t1);
            if (i == 0 && &dir == &dirs.front())
                std::printf("%-20s %9.3f %9.3f %9.3f %9.3f %9.3f   (first run, cold process)\n", "",
                            l, r, j, v, l + r + j + v);
            if (i < 3) continue;
            bytes = json.size();
            (void)findings;
            t_load.push_back(l);
            t_render.push_back(r);
            t_json.push_back(j);
            t_validate.push_back(v);
            t_total.push_back(l + r + j + v);
        }
        std::printf("%-20s %9.3f %9.3f %9.3f %9.3f %9.3f %10zu\n", dir.filename().c_str(),
                    median(t_load), median(t_render), median(t_json), median(t_validate),
                    median(t_total), bytes);
    }

    std::printf("\nend to end: %s, stdout to /dev/null, %d runs each\n", kpkg.c_str(), runs);
    std::printf("%-40s %9s %9s %9s %9s\n", "command", "median ms", "p90 ms", "max MB", "x true");
    // /bin/true: what starting any process costs on this machine, measured in the same run.
    std::vector<double> base_t;
    for (int i = 0; i < runs + 5; ++i)
        base_t.push_back(spawn_once({"/bin/true"}).ms);
    const double base = median(base_t);
    std::printf("%-40s %9.2f %9s %9.1f\n", "/bin/true (baseline)", base, "",
                peak_rss_kb({"/bin/true"}) / 1024.0);
    for (const auto& dir : dirs) {
        const std::string name = dir.filename().string();
        spawn_row(("render " + name).c_str(), {kpkg, "bundle", "render", dir.string()}, runs, base);
        spawn_row(("render -o yaml " + name).c_str(),
                  {kpkg, "-o", "yaml", "bundle", "render", dir.string()}, runs, base);
        spawn_row(("validate " + name).c_str(), {kpkg, "bundle", "validate", dir.string()}, runs,
                  base);
    }
    return 0;
}
