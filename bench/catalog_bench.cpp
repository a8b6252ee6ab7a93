// Catalog load time and peak memory, in process and end to end.
//
// Usage: kpkg-bench-catalog [--runs N] [--threads N] [CATALOG...]
// Without catalogs: the corpus catalogs (derived-community/catalog-valid, certified-v4.22,
// community-v4.21, when present) and a generated 100,000-bundle catalog in a temporary
// directory (kpkg-bench-catalog-gen's default shape). For each catalog it prints the median load
// time over N runs (catalog::load in a child process, whose peak RSS is printed too) and the
// median wall time and peak RSS of `kpkg catalog list packages CATALOG`.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kpkg/catalog/load.hpp"

namespace fs = std::filesystem;
using clk = std::chrono::steady_clock;

namespace {

struct Run {
    double seconds = 0;
    long max_rss_kb = 0;
    int status = 0;
};

// Runs fn in a child; returns its wall time and peak RSS.
template <class F>
Run in_child(F fn) {
    auto t0 = clk::now();
    pid_t pid = fork();
    if (pid == 0) _exit(fn());
    int status = 0;
    rusage ru{};
    wait4(pid, &status, 0, &ru);
    Run r;
    r.seconds = std::chrono::duration<double>(clk::now() - t0).count();
    r.max_rss_kb = ru.ru_maxrss;
    r.status = status;
    return r;
}

Run median(std::vector<Run> v) {
    std::sort(v.begin(), v.end(), [](const Run& a, const Run& b) { return a.seconds < b.seconds; });
    Run m = v[v.size() / 2];
    for (const auto& r : v)
        m.max_rss_kb = std::max(m.max_rss_kb, r.max_rss_kb);
    return m;
}

} // namespace

int main(int argc, char** argv) {
    int runs = 3;
    unsigned threads = 0;
    std::vector<fs::path> cats;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--threads" && i + 1 < argc)
            threads = static_cast<unsigned>(std::atoi(argv[++i]));
        else
            cats.emplace_back(a);
    }
    fs::path tmp;
    if (cats.empty()) {
        fs::path large = fs::path(KPKG_BENCH_SOURCE_ROOT) / "../shared/corpus/olm/large";
        for (const char* c :
             {"derived-community/catalog-valid", "certified-v4.22", "community-v4.21"})
            if (fs::exists(large / c)) cats.push_back(large / c);
        tmp = fs::temp_directory_path() / ("kpkg-bench-catalog-" + std::to_string(getpid()));
        std::string gen = std::string(KPKG_BENCH_GEN) + " " + tmp.string();
        std::fprintf(stderr, "generating %s\n", tmp.c_str());
        if (std::system(gen.c_str()) != 0) return 1;
        cats.push_back(tmp);
    }
    std::printf("%-60s %12s %10s %12s %10s\n", "catalog", "load s", "load MB", "list s", "list MB");
    int rc = 0;
    for (const auto& c : cats) {
        std::vector<Run> load_runs, list_runs;
        for (int i = 0; i < runs; ++i) {
            load_runs.push_back(in_child([&] {
                kpkg::catalog::LoadOptions o;
                o.threads = threads;
                auto cfg = kpkg::catalog::load(c, o);
                if (!cfg.ok()) {
                    std::fprintf(stderr, "%s\n", cfg.error().str().c_str());
                    return 1;
                }
                return 0;
            }));
            list_runs.push_back(in_child([&] {
                int devnull = open("/dev/null", O_WRONLY);
                dup2(devnull, 1);
                execl(KPKG_BENCH_KPKG, "kpkg", "catalog", "list", "packages", c.c_str(),
                      static_cast<char*>(nullptr));
                return 127;
            }));
        }
        Run l = median(load_runs), e = median(list_runs);
        if (l.status != 0 || e.status != 0) rc = 1;
        std::printf("%-60s %12.3f %10.1f %12.3f %10.1f%s\n", c.filename().c_str(), l.seconds,
                    l.max_rss_kb / 1024.0, e.seconds, e.max_rss_kb / 1024.0,
                    (l.status != 0 || e.status != 0) ? "  (FAILED)" : "");
    }
    if (!tmp.empty()) fs::remove_all(tmp);
    return rc;
}
