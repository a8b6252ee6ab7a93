// The cost of explaining "no solution": a request whose bundle needs an API that N bundles
// provide, none of which can be installed because each requires a package no catalog has.
//
// Usage: kpkg-bench-explain [--runs N] [--sizes N,N,...] [--budget SECONDS]
// Two shapes, each at every size (default 100,200,400):
//  - versions: one provider package with N versions (one channel, a replaces chain);
//  - packages: N provider packages with one version each.
// Prints, per case, the median wall time of resolve() in process (catalog already loaded) over
// N runs (default 3; a case whose first run takes longer than --budget, default 30 s, runs once),
// the number of lines of the explanation and the exit status kpkg would give (4).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "measure.hpp"

#include "kpkg/catalog/load.hpp"
#include "kpkg/resolve/resolve.hpp"

namespace fs = std::filesystem;

namespace {

std::string bundle(const std::string& pkg, const std::string& name, const std::string& version,
                   const std::string& extra) {
    return "---\nschema: olm.bundle\npackage: " + pkg + "\nname: " + name +
           "\nimage: example.com/" + name +
           ":latest\nproperties:\n"
           "  - type: olm.package\n    value: {packageName: " +
           pkg + ", version: \"" + version + "\"}\n" + extra;
}

const char* provides = "  - type: olm.gvk\n    value: {group: g, version: v1, kind: X}\n";
const char* needs_missing = "  - type: olm.package.required\n    value: {packageName: missing, "
                            "versionRange: \">=1.0.0\"}\n";

// The request's package r: one bundle requiring API g/v1 X.
std::string requester() {
    return "---\nschema: olm.package\nname: r\ndefaultChannel: stable\n---\nschema: olm.channel\n"
           "package: r\nname: stable\nentries:\n  - name: r.v1\n" +
           bundle("r", "r.v1", "1.0.0",
                  "  - type: olm.gvk.required\n    value: {group: g, version: v1, kind: X}\n");
}

// One package p with n versions, each providing X and requiring the missing package.
std::string versions(int n) {
    std::string y = requester();
    y += "---\nschema: olm.package\nname: p\ndefaultChannel: stable\n---\nschema: olm.channel\n"
         "package: p\nname: stable\nentries:\n";
    for (int i = 1; i <= n; ++i) {
        y += "  - name: p.v" + std::to_string(i) + "\n";
        if (i > 1) y += "    replaces: p.v" + std::to_string(i - 1) + "\n";
    }
    for (int i = 1; i <= n; ++i)
        y += bundle("p", "p.v" + std::to_string(i), std::to_string(i) + ".0.0",
                    std::string(provides) + needs_missing);
    return y;
}

// n packages p0..p(n-1), one version each, each providing X and requiring the missing package.
std::string packages(int n) {
    std::string y = requester();
    for (int i = 0; i < n; ++i) {
        // (Appended, not "p" + to_string(i): GCC 12 -O2 warns about the latter, wrongly.)
        std::string p = std::to_string(i);
        p.insert(p.begin(), 'p');
        y += "---\nschema: olm.package\nname: " + p +
             "\ndefaultChannel: stable\n---\n"
             "schema: olm.channel\npackage: " +
             p + "\nname: stable\nentries:\n  - name: " + p + ".v1\n" +
             bundle(p, p + ".v1", "1.0.0", std::string(provides) + needs_missing);
    }
    return y;
}

std::size_t lines(const std::vector<kpkg::resolve::Problem>& ps) {
    std::size_t n = 0;
    for (const auto& p : ps)
        n += 1 + lines(p.children);
    return n;
}

} // namespace

int main(int argc, char** argv) {
    int runs = 3;
    double budget = 30;
    std::vector<int> sizes{100, 200, 400};
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc) {
            runs = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--budget" && i + 1 < argc) {
            budget = std::atof(argv[++i]);
        } else if (a == "--sizes" && i + 1 < argc) {
            sizes.clear();
            std::string s = argv[++i];
            for (std::size_t at = 0; at <= s.size();) {
                auto comma = s.find(',', at);
                if (comma == std::string::npos) comma = s.size();
                if (int n = std::atoi(s.substr(at, comma - at).c_str()); n > 0) sizes.push_back(n);
                at = comma + 1;
            }
        } else {
            std::fprintf(stderr, "usage: kpkg-bench-explain [--runs N] [--sizes N,N,...] "
                                 "[--budget SECONDS]\n");
            return 2;
        }
    }
    fs::path scratch =
        fs::temp_directory_path() / ("kpkg-bench-explain-" + std::to_string(getpid()));
    std::printf("explaining an unsatisfiable request, resolve() in process (%s)\n",
                bench::cpu_model().c_str());
    std::printf("%-10s %6s %12s %8s %11s\n", "shape", "N", "median ms", "runs", "tree lines");
    struct Shape {
        const char* name;
        std::function<std::string(int)> make;
    };
    for (const Shape& shape : {Shape{"versions", versions}, Shape{"packages", packages}}) {
        for (int n : sizes) {
            fs::path dir = scratch / (std::string(shape.name) + "-" + std::to_string(n));
            fs::create_directories(dir);
            std::ofstream(dir / "catalog.yaml") << shape.make(n);
            auto cat = kpkg::catalog::load_catalog(dir);
            if (!cat) {
                std::fprintf(stderr, "%s\n", cat.error().str().c_str());
                return 1;
            }
            std::vector<kpkg::resolve::CatalogSource> cats{{"ops", &*cat, 0}};
            kpkg::resolve::Request req;
            req.subscriptions.push_back(kpkg::resolve::parse_subscription("r").take());
            std::vector<double> times;
            std::size_t tree = 0;
            bool unsat = false;
            for (int i = 0; i < runs; ++i) {
                auto t0 = bench::Clock::now();
                auto res = kpkg::resolve::resolve(cats, req);
                times.push_back(bench::seconds_since(t0));
                if (res) {
                    unsat = !res->satisfiable;
                    tree = lines(res->problems);
                }
                if (times.back() > budget) break;
            }
            std::printf("%-10s %6d %12.1f %8zu %11zu%s\n", shape.name, n,
                        bench::median(times) * 1000, times.size(), tree,
                        unsat ? "" : "  (unexpected: satisfiable or an error)");
            std::fflush(stdout);
        }
    }
    fs::remove_all(scratch);
    return 0;
}
