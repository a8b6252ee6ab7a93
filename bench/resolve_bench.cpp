// Resolution speed: `kpkg resolve` end to end, cold (an empty catalog cache) and warm (the
// binary cache filled by a previous run), and the resolver alone in process.
//
// Usage: kpkg-bench-resolve [--runs N] [--catalog DIR] [--generated DIR]
//   --catalog    the real catalog (default ../shared/corpus/olm/large/derived-community/
//                catalog-valid)
//   --generated  a catalog made by kpkg-bench-catalog-gen (default: generated now, 100,000
//                bundles, in a temporary directory removed at the end)
// Prints, per case, the median and 90th percentile wall time over N runs (cold: over
// max(3, N/3) runs, each with a fresh cache directory) and the peak RSS, then the in-process
// medians of resolve() on catalogs already loaded.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "measure.hpp"

#include "kpkg/catalog/load.hpp"
#include "kpkg/resolve/resolve.hpp"

namespace fs = std::filesystem;

namespace {

struct Run {
    double seconds = 0;
    long max_rss_kb = 0;
    int exit_code = 0;
};

struct Stats {
    double median = 0, p90 = 0;
    long max_rss_kb = 0;
    int exit_code = 0;
};

Stats stats(std::vector<Run> v) {
    std::sort(v.begin(), v.end(), [](const Run& a, const Run& b) { return a.seconds < b.seconds; });
    Stats s;
    s.median = v[v.size() / 2].seconds;
    s.p90 = v[std::min(v.size() - 1, (v.size() * 9) / 10)].seconds;
    for (const auto& r : v)
        s.max_rss_kb = std::max(s.max_rss_kb, r.max_rss_kb);
    s.exit_code = v.front().exit_code;
    return s;
}

// Runs kpkg with args and KPKG_CACHE_DIR=cache, stdout and stderr to /dev/null.
Run run_kpkg(const std::vector<std::string>& args, const fs::path& cache) {
    auto m = bench::run_measured(KPKG_BENCH_KPKG, args, [&] {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        setenv("KPKG_CACHE_DIR", cache.c_str(), 1);
    });
    Run r;
    r.seconds = m.seconds;
    r.max_rss_kb = m.max_rss_kb;
    r.exit_code = WIFEXITED(m.status) ? WEXITSTATUS(m.status) : 128;
    return r;
}

void print_row(const std::string& what, const char* mode, const Stats& s) {
    std::printf("%-58s %-5s %9.1f %9.1f %8.1f %5d\n", what.c_str(), mode, s.median * 1000,
                s.p90 * 1000, s.max_rss_kb / 1024.0, s.exit_code);
}

// Cold: every run with a new, empty cache directory. Warm: one run fills the cache, then the
// measured runs read it.
void end_to_end(const std::string& label, const std::vector<std::string>& args, int runs,
                const fs::path& scratch) {
    std::vector<Run> cold, warm;
    int cold_runs = std::max(3, runs / 3);
    for (int i = 0; i < cold_runs; ++i) {
        fs::path dir = scratch / ("cold-" + std::to_string(i));
        fs::remove_all(dir);
        cold.push_back(run_kpkg(args, dir));
        fs::remove_all(dir);
    }
    fs::path warm_dir = scratch / "warm";
    fs::remove_all(warm_dir);
    run_kpkg(args, warm_dir);
    for (int i = 0; i < runs; ++i)
        warm.push_back(run_kpkg(args, warm_dir));
    print_row(label, "cold", stats(cold));
    print_row(label, "warm", stats(warm));
    std::error_code ec;
    bool cached = fs::exists(warm_dir, ec) && !fs::is_empty(warm_dir, ec);
    if (!cached) std::printf("%-58s (no cache was written: warm is cold)\n", "");
    fs::remove_all(warm_dir);
}

double in_process(int runs, const std::function<void()>& fn) {
    std::vector<double> v;
    for (int i = 0; i < runs; ++i) {
        auto t0 = bench::Clock::now();
        fn();
        v.push_back(bench::seconds_since(t0));
    }
    return bench::median(v);
}

} // namespace

int main(int argc, char** argv) {
    int runs = 11;
    fs::path real = fs::path(KPKG_BENCH_SOURCE_ROOT) /
                    "../shared/corpus/olm/large/derived-community/catalog-valid";
    fs::path generated;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--catalog" && i + 1 < argc)
            real = argv[++i];
        else if (a == "--generated" && i + 1 < argc)
            generated = argv[++i];
        else {
            std::fprintf(stderr, "usage: kpkg-bench-resolve [--runs N] [--catalog DIR] "
                                 "[--generated DIR]\n");
            return 2;
        }
    }
    fs::path scratch =
        fs::temp_directory_path() / ("kpkg-bench-resolve-" + std::to_string(getpid()));
    fs::create_directories(scratch);
    bool own_generated = generated.empty();
    if (own_generated) {
        generated = scratch / "generated";
        std::fprintf(stderr, "generating %s\n", generated.c_str());
        std::string gen = std::string(KPKG_BENCH_GEN) + " " + generated.string() + " >/dev/null";
        if (std::system(gen.c_str()) != 0) return 1;
    }
    bool have_real = fs::exists(real);
    if (!have_real) std::fprintf(stderr, "%s is absent: its cases are left out\n", real.c_str());

    std::printf("end to end (ms; runs: %d warm, %d cold)\n", runs, std::max(3, runs / 3));
    std::printf("%-58s %-5s %9s %9s %8s %5s\n", "command", "cache", "median", "p90", "RSS MB",
                "exit");
    std::string r = real.string(), g = generated.string();
    if (have_real) {
        for (const char* pkg : {"kuadrant-operator", "eclipse-che", "kogito-operator"})
            end_to_end(std::string("resolve ") + pkg + " (catalog-valid)",
                       {"resolve", pkg, "--catalog", r}, runs, scratch);
        end_to_end("resolve --all-packages (catalog-valid)",
                   {"resolve", "--all-packages", "--catalog", r}, runs, scratch);
    }
    end_to_end("resolve pkg-04242 (generated, 100,000 bundles)",
               {"resolve", "pkg-04242", "--catalog", g}, runs, scratch);

    // The resolver alone, on catalogs already in memory.
    std::printf("\nin process, catalogs loaded (ms, median of %d)\n", runs);
    auto load = [](const fs::path& p) { return kpkg::catalog::load_catalog(p).take(); };
    auto one = [&](const kpkg::model::Catalog& cat, const std::string& name, const char* pkg) {
        std::vector<kpkg::resolve::CatalogSource> cats{{name, &cat, 0}};
        kpkg::resolve::Request req;
        req.subscriptions.push_back(kpkg::resolve::parse_subscription(pkg).take());
        double t = in_process(runs, [&] { (void)kpkg::resolve::resolve(cats, req); });
        auto res = kpkg::resolve::resolve(cats, req);
        std::printf("%-58s %9.2f  (selected: %zu)\n",
                    ("resolve " + std::string(pkg) + " (" + name + ")").c_str(), t * 1000,
                    res ? res->selected.size() : 0);
    };
    if (have_real) {
        auto cat = load(real);
        for (const char* pkg : {"kuadrant-operator", "eclipse-che", "kogito-operator"})
            one(cat, "catalog-valid", pkg);
        std::vector<kpkg::resolve::CatalogSource> cats{{"catalog-valid", &cat, 0}};
        double t = in_process(std::max(3, runs / 3),
                              [&] { (void)kpkg::resolve::resolve_all_packages(cats); });
        std::printf("%-58s %9.2f\n", "resolve --all-packages (catalog-valid)", t * 1000);
    }
    {
        auto cat = load(generated);
        one(cat, "generated", "pkg-04242");
    }
    fs::remove_all(scratch);
    return 0;
}
