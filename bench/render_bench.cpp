// `kpkg catalog render` speed and peak memory, end to end and in process.
//
// Usage: kpkg-bench-render [--runs N] [--threads N] [--gen-dir DIR] [CATALOG...]
// Without catalogs: the corpus catalogs derived-community/catalog-valid, certified-v4.22 and
// community-v4.21 (when ../shared/corpus is present) and a generated 100,000-bundle catalog
// (kpkg-bench-catalog-gen's default shape, in a temporary directory or in --gen-dir, reused when it
// exists). For each catalog it prints:
// - end to end: the median (and fastest) wall time and the peak RSS over N runs (after one
//   warm-up run) of `kpkg catalog render CATALOG` and `kpkg -o yaml catalog render CATALOG`,
//   stdout to /dev/null;
// - in process (one child per run, median): prepare_render (read and check every blob), and
//   writing the result as JSON and as YAML into a sink that only counts bytes.
// It prints only what it measured in this run: no figures of other tools.
#include <fcntl.h>
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

#include "kpkg/catalog/render.hpp"

namespace fs = std::filesystem;

namespace {

using Run = bench::Measured;

double fastest(const std::vector<Run>& v) {
    double m = v.empty() ? 0 : v[0].seconds;
    for (const auto& r : v)
        m = std::min(m, r.seconds);
    return m;
}

Run kpkg_render(const fs::path& cat, bool yaml) {
    std::vector<std::string> args;
    if (yaml) args = {"-o", "yaml"};
    args.insert(args.end(), {"catalog", "render", cat.string()});
    return bench::run_measured(KPKG_BENCH_KPKG, args, [] {
        const int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
    });
}

// In a child: prepare, write JSON, write YAML; the three times go back through a pipe.
bool phases(const fs::path& cat, unsigned threads, double out[3], double bytes[2]) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    Run r = bench::in_child([&] {
        close(fds[0]);
        double res[5] = {0, 0, 0, 0, 0};
        kpkg::catalog::RenderOptions o;
        o.threads = threads;
        auto t0 = bench::Clock::now();
        auto prepared = kpkg::catalog::prepare_render({cat.string()}, o);
        if (!prepared.ok()) {
            std::fprintf(stderr, "%s\n", prepared.error().str().c_str());
            return 1;
        }
        res[0] = bench::seconds_since(t0);
        for (int f = 0; f < 2; ++f) {
            std::size_t n = 0;
            t0 = bench::Clock::now();
            prepared->write(
                f == 0 ? kpkg::catalog::RenderFormat::json : kpkg::catalog::RenderFormat::yaml,
                [&](std::string_view s) { n += s.size(); }, threads);
            res[1 + f] = bench::seconds_since(t0);
            res[3 + f] = static_cast<double>(n);
        }
        return write(fds[1], res, sizeof res) == static_cast<ssize_t>(sizeof res) ? 0 : 1;
    });
    close(fds[1]);
    double res[5];
    const bool ok = read(fds[0], res, sizeof res) == static_cast<ssize_t>(sizeof res);
    close(fds[0]);
    if (!ok || r.status != 0) return false;
    for (int i = 0; i < 3; ++i)
        out[i] = res[i];
    bytes[0] = res[3];
    bytes[1] = res[4];
    return true;
}

} // namespace

int main(int argc, char** argv) {
    int runs = 5;
    unsigned threads = 0;
    fs::path gen_dir;
    std::vector<fs::path> cats;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--threads" && i + 1 < argc)
            threads = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (a == "--gen-dir" && i + 1 < argc)
            gen_dir = argv[++i];
        else
            cats.emplace_back(a);
    }
    bool remove_gen = false;
    if (cats.empty()) {
        const fs::path large = fs::path(KPKG_BENCH_SOURCE_ROOT) / "../shared/corpus/olm/large";
        for (const char* c :
             {"derived-community/catalog-valid", "certified-v4.22", "community-v4.21"})
            if (fs::exists(large / c)) cats.push_back(large / c);
        if (gen_dir.empty()) {
            gen_dir = fs::temp_directory_path() / ("kpkg-bench-render-" + std::to_string(getpid()));
            remove_gen = true;
        }
        if (!fs::exists(gen_dir)) {
            const std::string gen = std::string(KPKG_BENCH_GEN) + " " + gen_dir.string();
            std::fprintf(stderr, "generating %s\n", gen_dir.c_str());
            if (std::system(gen.c_str()) != 0) return 1;
        }
        cats.push_back(gen_dir);
    }
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    std::printf("kpkg catalog render, %s, %ld cores (%s), median of %d runs\n", date,
                sysconf(_SC_NPROCESSORS_ONLN), bench::cpu_model().c_str(), runs);
    std::printf("%-20s %7s %7s %7s %7s %7s %7s | %9s %9s %9s %8s %8s\n", "catalog", "json s",
                "(min)", "json MB", "yaml s", "(min)", "yaml MB", "prepare s", "write j s",
                "write y s", "out MB j", "out MB y");
    int rc = 0;
    for (const auto& c : cats) {
        kpkg_render(c, false); // warm-up: page cache
        std::vector<Run> js, ys;
        std::vector<double> prep, wj, wy;
        double bytes[2] = {0, 0};
        for (int i = 0; i < runs; ++i) {
            js.push_back(kpkg_render(c, false));
            ys.push_back(kpkg_render(c, true));
            double ph[3];
            if (phases(c, threads, ph, bytes)) {
                prep.push_back(ph[0]);
                wj.push_back(ph[1]);
                wy.push_back(ph[2]);
            } else {
                rc = 1;
            }
        }
        const Run j = bench::median_run(js), y = bench::median_run(ys);
        if (j.status != 0 || y.status != 0) rc = 1;
        const std::string name =
            c == gen_dir ? std::string("generated-100k") : c.filename().string();
        std::printf("%-20s %7.3f %7.3f %7.1f %7.3f %7.3f %7.1f | %9.3f %9.3f %9.3f %8.1f %8.1f%s\n",
                    name.c_str(), j.seconds, fastest(js), j.max_rss_kb / 1024.0, y.seconds,
                    fastest(ys), y.max_rss_kb / 1024.0, bench::median(prep), bench::median(wj),
                    bench::median(wy), bytes[0] / 1e6, bytes[1] / 1e6,
                    (j.status != 0 || y.status != 0) ? "  (FAILED)" : "");
    }
    if (remove_gen) fs::remove_all(gen_dir);
    return rc;
}
