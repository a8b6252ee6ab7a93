// Catalog files of one blob with very many keys: time to load (the catalog loader behind list,
// validate, graph, diff, resolve; no cache) and to render (`catalog render`'s prepare and JSON
// write), in process. Work linear in the keys keeps every case here well under 100 ms; work
// quadratic in them took seconds.
//
// Usage: kpkg-bench-blob-keys [--runs N]
// Cases: YAML blobs of 20,000 and 40,000 (and 1 MB of) distinct top-level keys, 1 MB YAML and JSON
// blobs of one key repeated 100,000+ times, a 1 MB JSON blob of distinct keys, and a 1 MB YAML blob
// whose keys sit in one nested mapping; and a nested alias bomb of a few hundred bytes, which
// must be refused (quickly). Prints the median of N runs (default 5) per case and
// reader, wall time and CPU time (the CPU time is the figure to trust on a busy machine).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <vector>

#include "measure.hpp"

#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/render.hpp"

namespace fs = std::filesystem;

namespace {

// CPU time of this process (all threads), in milliseconds: on a shared machine the wall time
// also counts the time other processes hold the cores.
double cpu_ms() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

struct Case {
    std::string name;
    std::string file; // file name (its extension does not matter to the readers)
    std::string text;
    bool refused = false; // the file is bad: loading reports it, rendering fails
};

std::vector<Case> cases() {
    std::vector<Case> out;
    for (int n : {20000, 40000}) {
        std::string t = "schema: x.y\n";
        for (int i = 0; i < n; ++i)
            t += "key" + std::to_string(i) + ": " + std::to_string(i) + "\n";
        out.push_back({std::to_string(n) + " distinct top-level keys (YAML)", "a.yaml", t});
    }
    {
        std::string t = "schema: x.y\n";
        for (int i = 0; t.size() < (std::size_t{1} << 20); ++i)
            t += "key" + std::to_string(i) + ": " + std::to_string(i) + "\n";
        out.push_back({"1 MB of distinct top-level keys (YAML)", "a.yaml", t});
    }
    {
        std::string t = "schema: x.y\n";
        while (t.size() < (std::size_t{1} << 20))
            t += "k: 1\n";
        out.push_back({"1 MB of one repeated key (YAML)", "a.yaml", t});
    }
    {
        std::string t = "{\"schema\":\"x.y\"";
        while (t.size() < (std::size_t{1} << 20))
            t += ",\"k\":1";
        t += "}\n";
        out.push_back({"1 MB of one repeated key (JSON)", "a.json", t});
    }
    {
        std::string t = "{\"schema\":\"x.y\"";
        for (int i = 0; t.size() < (std::size_t{1} << 20); ++i)
            t += ",\"key" + std::to_string(i) + "\":" + std::to_string(i);
        t += "}\n";
        out.push_back({"1 MB of distinct top-level keys (JSON)", "a.json", t});
    }
    {
        std::string t = "schema: x.y\nnested:\n";
        for (int i = 0; t.size() < (std::size_t{1} << 20); ++i)
            t += "  key" + std::to_string(i) + ": " + std::to_string(i) + "\n";
        out.push_back({"1 MB of keys in one nested mapping (YAML)", "a.yaml", t});
    }
    {
        // Nine levels of nine aliases of the level below: 9^9 nodes if expanded.
        std::string t = "schema: x.y\nl0: &l0 [x, x, x, x, x, x, x, x, x]\n";
        for (int l = 1; l < 9; ++l) {
            const std::string n = std::to_string(l);
            const std::string below = std::to_string(l - 1);
            t += 'l';
            t += n;
            t += ": &l";
            t += n;
            t += " [";
            for (int i = 0; i < 9; ++i) {
                if (i > 0) t += ", ";
                t += "*l";
                t += below;
            }
            t += "]\n";
        }
        out.push_back({"alias bomb (YAML, refused)", "a.yaml", t, true});
    }
    return out;
}

} // namespace

int main(int argc, char** argv) {
    int runs = 5;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = std::max(1, std::atoi(argv[++i]));
        } else {
            std::fprintf(stderr, "usage: kpkg-bench-blob-keys [--runs N]\n");
            return 2;
        }
    }
    std::printf("blob keys bench (%s), median of %d runs\n", bench::cpu_model().c_str(), runs);
    std::printf("%-44s %8s %9s %9s %11s %11s\n", "case", "bytes", "load ms", "load cpu",
                "render ms", "render cpu");
    const fs::path dir = fs::temp_directory_path() /
                         ("kpkg-bench-blob-keys-" + std::to_string(static_cast<long>(getpid())));
    int status = 0;
    for (const Case& c : cases()) {
        fs::remove_all(dir);
        fs::create_directories(dir / "c");
        std::ofstream(dir / "c" / c.file, std::ios::binary) << c.text;
        std::vector<double> load_ms, render_ms, load_cpu, render_cpu;
        for (int r = 0; r < runs; ++r) {
            auto t0 = bench::Clock::now();
            double c0 = cpu_ms();
            auto loaded = kpkg::catalog::load_catalog(dir / "c");
            load_ms.push_back(bench::ms_since(t0));
            load_cpu.push_back(cpu_ms() - c0);
            if (!loaded.ok() || loaded->problems.empty() == c.refused) status = 1;
            kpkg::catalog::RenderOptions o;
            t0 = bench::Clock::now();
            c0 = cpu_ms();
            std::size_t bytes = 0;
            auto rendered = kpkg::catalog::render({(dir / "c").string()}, o,
                                                  [&](std::string_view s) { bytes += s.size(); });
            render_ms.push_back(bench::ms_since(t0));
            render_cpu.push_back(cpu_ms() - c0);
            if (rendered.ok() == c.refused || (!c.refused && bytes == 0)) status = 1;
        }
        std::printf("%-44s %8zu %9.1f %9.1f %11.1f %11.1f\n", c.name.c_str(), c.text.size(),
                    bench::median(load_ms), bench::median(load_cpu), bench::median(render_ms),
                    bench::median(render_cpu));
    }
    fs::remove_all(dir);
    if (status != 0) std::fprintf(stderr, "a case failed to load or render\n");
    return status;
}
