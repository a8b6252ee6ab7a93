// Catalog validation time: the validation pass alone (in process, on an already-loaded catalog)
// and `kpkg catalog validate` end to end (wall time and peak RSS of the process).
//
// Usage: kpkg-bench-validate [--runs N] [--no-e2e] [CATALOG...]
// Without catalogs: the corpus catalogs (derived-community/catalog-valid and catalog,
// certified-v4.22, community-v4.21, when present) and a generated 100,000-bundle catalog in a
// temporary directory (kpkg-bench-catalog-gen's default shape). For each catalog it prints the
// load time (once), the median and minimum of N validation passes, the number of findings, and
// the median wall time and peak RSS of N runs of `kpkg catalog validate CATALOG`, first with the
// catalog cache off (every run parses) and then with a warm cache in a temporary directory.
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

#include "measure.hpp"

#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/validate.hpp"

namespace fs = std::filesystem;

namespace {

using Run = bench::Measured;

// `kpkg catalog validate CATALOG` with stdout to /dev/null; wall time and peak RSS. With an
// empty cache_dir the catalog cache is off (every run parses), otherwise it lives there.
Run kpkg_validate(const fs::path& cat, const fs::path& cache_dir) {
    return bench::run_measured(KPKG_BENCH_KPKG, {"catalog", "validate", cat.string()}, [&] {
        if (cache_dir.empty()) {
            setenv("KPKG_NO_CACHE", "1", 1);
        } else {
            unsetenv("KPKG_NO_CACHE");
            setenv("KPKG_CACHE_DIR", cache_dir.c_str(), 1);
        }
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
    });
}

} // namespace

int main(int argc, char** argv) {
    int runs = 5;
    bool e2e = true;
    std::vector<fs::path> cats;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--no-e2e")
            e2e = false;
        else
            cats.emplace_back(a);
    }
    fs::path tmp;
    if (cats.empty()) {
        fs::path large = fs::path(KPKG_BENCH_SOURCE_ROOT) / "../shared/corpus/olm/large";
        for (const char* c : {"derived-community/catalog-valid", "derived-community/catalog",
                              "certified-v4.22", "community-v4.21"})
            if (fs::exists(large / c)) cats.push_back(large / c);
        tmp = fs::temp_directory_path() / ("kpkg-bench-validate-" + std::to_string(getpid()));
        std::string gen = std::string(KPKG_BENCH_GEN) + " " + tmp.string();
        std::fprintf(stderr, "generating %s\n", tmp.c_str());
        if (std::system(gen.c_str()) != 0) return 1;
        cats.push_back(tmp);
    }
    // The warm runs use a cache of their own, primed by one run, never the user's.
    fs::path cache =
        fs::temp_directory_path() / ("kpkg-bench-validate-cache-" + std::to_string(getpid()));
    std::printf("%-32s %8s %8s %9s %9s %8s %8s %8s %8s %8s %8s\n", "catalog", "bundles", "load s",
                "pass ms", "min ms", "errors", "warns", "cold s", "cold MB", "warm s", "warm MB");
    int rc = 0;
    for (const auto& c : cats) {
        auto t0 = bench::Clock::now();
        auto cat = kpkg::catalog::load_catalog(c);
        double load = bench::seconds_since(t0);
        if (!cat) {
            std::fprintf(stderr, "%s: %s\n", c.c_str(), cat.error().str().c_str());
            rc = 1;
            continue;
        }
        std::vector<double> pass;
        std::size_t errors = 0, warnings = 0;
        for (int i = 0; i < runs; ++i) {
            auto p0 = bench::Clock::now();
            auto issues = kpkg::catalog::validate(*cat);
            pass.push_back(bench::ms_since(p0));
            errors = kpkg::catalog::count(issues, kpkg::catalog::Severity::error);
            warnings = kpkg::catalog::count(issues, kpkg::catalog::Severity::warning);
        }
        double cold_s = 0, cold_mb = 0, warm_s = 0, warm_mb = 0;
        if (e2e) {
            auto measure = [&](const fs::path& cache_dir, double& secs, double& mb) {
                std::vector<double> wall;
                long rss = 0;
                for (int i = 0; i < runs; ++i) {
                    Run r = kpkg_validate(c, cache_dir);
                    // 0 (valid) and 3 (invalid) are both answers; anything else is a failure.
                    int code = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
                    if (code != 0 && code != 3) rc = 1;
                    wall.push_back(r.seconds);
                    rss = std::max(rss, r.max_rss_kb);
                }
                secs = bench::median(wall);
                mb = static_cast<double>(rss) / 1024.0;
            };
            measure({}, cold_s, cold_mb);
            kpkg_validate(c, cache); // prime the cache
            measure(cache, warm_s, warm_mb);
        }
        std::string name = c.filename().string();
        if (name == "catalog" || name == "catalog-valid")
            name = c.parent_path().filename().string() + "/" + name;
        if (c == tmp) name = "generated-100k";
        std::printf("%-32s %8zu %8.3f %9.2f %9.2f %8zu %8zu %8.3f %8.1f %8.3f %8.1f\n",
                    name.c_str(), cat->bundles.size(), load, bench::median(pass),
                    *std::min_element(pass.begin(), pass.end()), errors, warnings, cold_s, cold_mb,
                    warm_s, warm_mb);
    }
    if (!tmp.empty()) fs::remove_all(tmp);
    fs::remove_all(cache);
    return rc;
}
