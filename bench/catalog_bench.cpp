// Catalog loading speed and memory, in process and end to end.
//
// Usage: kpkg-bench-catalog [--runs N] [--threads N] [--keep-generated DIR] [CATALOG...]
//
// Without catalogs: the corpus catalogs (derived-community/catalog-valid, certified-v4.22,
// community-v4.21, when present) and a generated 100,000-bundle catalog (kpkg-bench-catalog-gen's
// default shape, in a temporary directory unless --keep-generated names one that already holds
// it). For each catalog it prints
//   - load_catalog in this process, no cache: median over N runs, and the peak RSS of a child
//     process doing one such load;
//   - load_catalog with the binary cache: cold (empty cache: parse, then write the image) and
//     warm (the image read back), medians;
//   - `kpkg catalog list packages` and `kpkg catalog validate` end to end (spawned, stdout to
//     /dev/null): median wall time and peak RSS, list both without the cache and with a warm one.
// It prints only what it measured in this run: no figures of other tools.
#include <fcntl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "measure.hpp"

#include "kpkg/catalog/load.hpp"

namespace fs = std::filesystem;

namespace {

using Run = bench::Measured;

// `kpkg ARGS` with stdout to /dev/null and the given environment additions.
Run spawn(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    return bench::run_measured(KPKG_BENCH_KPKG, args, [&] {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        for (const auto& e : env)
            putenv(const_cast<char*>(e.c_str()));
    });
}

template <class F>
double time_median(int runs, F fn) {
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
        auto t0 = bench::Clock::now();
        fn();
        t.push_back(bench::seconds_since(t0));
    }
    return bench::median(t);
}

std::uintmax_t tree_bytes(const fs::path& p, std::size_t& files) {
    std::uintmax_t n = 0;
    files = 0;
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
        files = 1;
        return fs::file_size(p, ec);
    }
    for (auto it = fs::recursive_directory_iterator(p, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec)) {
            n += it->file_size(ec);
            ++files;
        }
    return n;
}

struct Row {
    std::string name;
    std::size_t files = 0;
    double mb = 0;
    double load = 0, cold = 0, warm = 0;
    long load_rss_kb = 0;
    Run list, list_warm, validate;
    bool invalid = false; // validate exited 3
    bool failed = false;
};

} // namespace

int main(int argc, char** argv) {
    int runs = 5;
    unsigned threads = 0;
    std::vector<fs::path> cats;
    fs::path keep_generated;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--threads" && i + 1 < argc)
            threads = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (a == "--keep-generated" && i + 1 < argc)
            keep_generated = argv[++i];
        else
            cats.emplace_back(a);
    }
    const fs::path tmp =
        fs::temp_directory_path() / ("kpkg-bench-catalog-" + std::to_string(getpid()));
    fs::create_directories(tmp);
    fs::path generated;
    if (cats.empty()) {
        fs::path large = fs::path(KPKG_BENCH_SOURCE_ROOT) / "../shared/corpus/olm/large";
        for (const char* c :
             {"derived-community/catalog-valid", "certified-v4.22", "community-v4.21"})
            if (fs::exists(large / c)) cats.push_back(fs::canonical(large / c));
        generated = keep_generated.empty() ? tmp / "generated-100k" : keep_generated;
        if (!fs::exists(generated / "pkg-09999")) {
            std::string gen = std::string(KPKG_BENCH_GEN) + " " + generated.string();
            std::fprintf(stderr, "generating %s\n", generated.c_str());
            if (std::system(gen.c_str()) != 0) return 1;
        }
        cats.push_back(generated);
    }

    utsname u{};
    uname(&u);
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
    std::printf("kpkg-bench-catalog: %s, %ld cores, %s %s, %s; %d runs, medians\n",
                bench::cpu_model().c_str(), sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release,
                date, runs);

    std::vector<Row> rows;
    int rc = 0;
    for (const auto& c : cats) {
        Row row;
        row.name = c == generated ? "generated-100k" : c.filename().string();
        row.mb = static_cast<double>(tree_bytes(c, row.files)) / 1e6;
        std::fprintf(stderr, "%s...\n", row.name.c_str());
        const fs::path cache = tmp / ("cache-" + row.name);

        kpkg::catalog::LoadOptions plain;
        plain.threads = threads;
        // Warm the page cache and check the catalog loads.
        {
            auto r = kpkg::catalog::load_catalog(c, plain);
            if (!r.ok()) {
                std::fprintf(stderr, "%s: %s\n", c.c_str(), r.error().str().c_str());
                row.failed = true;
            }
        }
        row.load = time_median(runs, [&] { (void)kpkg::catalog::load_catalog(c, plain); });
        row.load_rss_kb = bench::in_child([&] {
                              return kpkg::catalog::load_catalog(c, plain).ok() ? 0 : 1;
                          }).max_rss_kb;
        kpkg::catalog::LoadOptions cached = plain;
        cached.cache_dir = cache;
        row.cold = time_median(runs, [&] {
            fs::remove_all(cache);
            (void)kpkg::catalog::load_catalog(c, cached);
        });
        kpkg::catalog::LoadInfo info;
        cached.info = &info;
        (void)kpkg::catalog::load_catalog(c, cached);
        row.warm = time_median(runs, [&] { (void)kpkg::catalog::load_catalog(c, cached); });
        if (!info.cache_hit)
            std::fprintf(stderr, "%s: warm load missed: %s\n", row.name.c_str(),
                         info.cache_note.c_str());

        const std::vector<std::string> no_cache = {"KPKG_NO_CACHE=1"};
        const std::vector<std::string> with_cache = {"KPKG_NO_CACHE=",
                                                     "KPKG_CACHE_DIR=" + cache.string()};
        std::vector<Run> list, list_warm, validate;
        for (int i = 0; i < runs; ++i) {
            list.push_back(spawn({"catalog", "list", "packages", c.string()}, no_cache));
            list_warm.push_back(spawn({"catalog", "list", "packages", c.string()}, with_cache));
            validate.push_back(spawn({"catalog", "validate", c.string()}, no_cache));
        }
        row.list = bench::median_run(list, 3);
        row.list_warm = bench::median_run(list_warm, 3);
        row.validate = bench::median_run(validate, 3);
        auto exited = [](const Run& r, int code) {
            return WIFEXITED(r.status) && WEXITSTATUS(r.status) == code;
        };
        // validate exits 3 on a catalog it finds invalid: a result, not a failure.
        row.invalid = exited(row.validate, 3);
        if (!exited(row.list, 0) || !exited(row.list_warm, 0) ||
            !(exited(row.validate, 0) || row.invalid))
            row.failed = true;
        if (row.failed) rc = 1;
        rows.push_back(row);
        fs::remove_all(cache);
    }

    std::printf("\n%-18s %6s %7s | %9s %8s | %10s %9s | %9s %8s %10s %8s | %11s %8s\n", "catalog",
                "files", "MB", "load ms", "load MB", "cold+img", "warm ms", "list ms", "list MB",
                "list warm", "warm MB", "validate ms", "val. MB");
    for (const auto& r : rows)
        std::printf("%-18s %6zu %7.1f | %9.1f %8.1f | %10.1f %9.2f | %9.1f %8.1f %10.1f %8.1f | "
                    "%11.1f %8.1f%s\n",
                    r.name.c_str(), r.files, r.mb, r.load * 1e3, r.load_rss_kb / 1024.0,
                    r.cold * 1e3, r.warm * 1e3, r.list.seconds * 1e3, r.list.max_rss_kb / 1024.0,
                    r.list_warm.seconds * 1e3, r.list_warm.max_rss_kb / 1024.0,
                    r.validate.seconds * 1e3, r.validate.max_rss_kb / 1024.0,
                    r.failed    ? "  (FAILED)"
                    : r.invalid ? "  (validate: invalid)"
                                : "");

    fs::remove_all(tmp);
    return rc;
}
