// Package Operator packages: validating a package with templates, components and fixtures, and
// rendering a generated package of 10,000 objects, in process and end to end (kpkg package
// validate / render as a user runs them).
//
// Usage: kpkg-bench-package [--runs N] [PACKAGE_DIR]
// Default package: ../shared/corpus/pko/test-stub-multi. Prints medians over N runs (default 21).
#include <fcntl.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "measure.hpp"

#include "kpkg/io/tree.hpp"
#include "kpkg/pko/package.hpp"
#include "kpkg/pko/render.hpp"
#include "kpkg/pko/validate.hpp"

namespace fs = std::filesystem;
using bench::Clock;
using bench::median;
using bench::ms_since;

namespace {

// A package of one phase whose template renders `n` ConfigMaps.
fs::path generate(const fs::path& dir, int n) {
    fs::create_directories(dir);
    std::ofstream(dir / "manifest.yaml")
        << "apiVersion: manifests.package-operator.run/v1alpha1\nkind: PackageManifest\n"
           "metadata:\n  name: many\nspec:\n  scopes: [Namespaced]\n  phases:\n  - name: deploy\n"
           "  config:\n    openAPIV3Schema:\n      type: object\n      properties:\n"
           "        count: {type: integer, default: "
        << n << "}\n";
    std::ofstream(dir / "objects.yaml.gotmpl")
        << "{{- range $i := until (int .config.count) }}\n---\napiVersion: v1\nkind: ConfigMap\n"
           "metadata:\n  name: cm-{{ $i }}\n  namespace: {{ $.package.metadata.namespace }}\n"
           "  annotations:\n    package-operator.run/phase: deploy\ndata:\n  index: \"{{ $i }}\"\n"
           "{{- end }}\n";
    return dir;
}

// kpkg ARGS, output to /dev/null; with small_pages, KPKG_HUGE_PAGES=0 (the heap in 4 KiB pages).
double run_ms(const std::vector<std::string>& args, bool small_pages = false) {
    auto m = bench::run_measured(KPKG_BENCH_KPKG, args, [small_pages] {
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        if (small_pages) setenv("KPKG_HUGE_PAGES", "0", 1);
    });
    if (m.status != 0) {
        std::fprintf(stderr, "kpkg-bench-package: kpkg exited with status %d\n", m.status);
        std::exit(1);
    }
    return m.seconds * 1000;
}

} // namespace

int main(int argc, char** argv) {
    int runs = 21;
    fs::path pkg = fs::path(KPKG_BENCH_SOURCE_ROOT) / "../shared/corpus/pko/test-stub-multi";
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else
            pkg = a;
    }
    if (!fs::is_directory(pkg)) {
        std::fprintf(stderr, "kpkg-bench-package: %s is not a directory\n", pkg.c_str());
        return 1;
    }
    std::printf("kpkg-bench-package on %s, medians of %d runs\n", bench::cpu_model().c_str(), runs);

    // Validate: load with fixtures, every test case of every component rendered and compared.
    std::vector<double> in_proc;
    std::size_t renders = 0, problems = 0;
    for (int r = 0; r < runs; ++r) {
        const auto t0 = Clock::now();
        kpkg::io::DirectoryTree tree(pkg);
        kpkg::pko::LoadOptions lo;
        lo.fixtures = true;
        auto loaded = kpkg::pko::load(tree, lo);
        if (!loaded) {
            std::fprintf(stderr, "kpkg-bench-package: %s\n", loaded.error().str().c_str());
            return 1;
        }
        auto report = kpkg::pko::validate(*loaded);
        in_proc.push_back(ms_since(t0));
        renders = report.renders;
        problems = report.findings.size();
    }
    // End to end, interleaved with the same command in small pages and with the start-up alone.
    std::vector<double> e2e, e2e_small, startup;
    for (int r = 0; r < runs; ++r) {
        e2e.push_back(run_ms({"package", "validate", pkg.string()}));
        e2e_small.push_back(run_ms({"package", "validate", pkg.string()}, true));
        startup.push_back(run_ms({"version"}));
    }
    std::printf("validate %s (%zu renders, %zu problems): in process %.2f ms, kpkg package "
                "validate %.2f ms (with KPKG_HUGE_PAGES=0: %.2f ms; kpkg version, start-up "
                "alone: %.2f ms)\n",
                pkg.filename().c_str(), renders, problems, median(in_proc), median(e2e),
                median(e2e_small), median(startup));

    // Render 10,000 objects.
    const fs::path tmp =
        fs::temp_directory_path() / ("kpkg-bench-package-" + std::to_string(getpid()));
    const fs::path many = generate(tmp / "many", 10000);
    std::vector<double> render_in, render_e2e;
    std::size_t objects = 0;
    const int big_runs = std::max(1, runs / 3);
    for (int r = 0; r < big_runs; ++r) {
        const auto t0 = Clock::now();
        kpkg::io::DirectoryTree tree(many);
        auto loaded = kpkg::pko::load(tree);
        if (!loaded) return 1;
        const auto& m = loaded->package.manifest;
        kpkg::pko::RenderContext ctx;
        ctx.name = "many";
        ctx.ns = "bench";
        ctx.config = kpkg::pko::admit_package_config(m, kpkg::io::Node::map(), "").config;
        auto res = kpkg::pko::render(loaded->package, ctx);
        if (res.failed) {
            std::fprintf(stderr, "kpkg-bench-package: render failed: %s\n",
                         res.findings.empty() ? "" : res.findings[0].text().c_str());
            return 1;
        }
        objects = res.rendered.objects.size();
        render_in.push_back(ms_since(t0));
    }
    for (int r = 0; r < big_runs; ++r)
        render_e2e.push_back(run_ms({"package", "render", many.string(), "--namespace", "bench"}));
    std::printf("render a generated package of %zu objects: in process %.1f ms, kpkg package "
                "render (YAML to stdout) %.1f ms (medians of %d runs)\n",
                objects, median(render_in), median(render_e2e), big_runs);
    std::error_code ec;
    fs::remove_all(tmp, ec);
    return 0;
}
