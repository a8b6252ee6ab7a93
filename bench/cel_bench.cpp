// olm.constraint and CEL cost: compile time per rule and evaluation time per bundle, over the
// bundles of a real catalog (the resolver asks a constraint of every candidate bundle).
//
// Usage: kpkg-bench-cel [--runs N] [CATALOG_DIR]
// Default catalog: ../shared/corpus/olm/large/derived-community/catalog-valid. For each rule it
// prints the median compile time (over 1000 compilations), the number of bundles satisfying it,
// and the median time of one pass over all bundles (over N passes, default 21) with the time
// per bundle.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "measure.hpp"

#include "kpkg/cel/cel.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/model/constraint.hpp"

namespace fs = std::filesystem;
using clk = bench::Clock;
using kpkg::model::Constraint;
using kpkg::model::PropertyValue;

using bench::median;
using bench::seconds_since;

int main(int argc, char** argv) {
    int runs = 21;
    fs::path dir = fs::path(KPKG_BENCH_SOURCE_ROOT) /
                   "../shared/corpus/olm/large/derived-community/catalog-valid";
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else
            dir = a;
    }
    if (!fs::is_directory(dir)) {
        std::fprintf(stderr, "kpkg-bench-cel: %s is not a directory\n", dir.c_str());
        return 1;
    }

    // The bundles' properties, as the resolver would hand them over.
    std::vector<kpkg::io::Document> docs;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        auto d = kpkg::io::load_file(f);
        if (!d) {
            std::fprintf(stderr, "kpkg-bench-cel: %s\n", d.error().str().c_str());
            return 1;
        }
        for (auto& doc : *d)
            docs.push_back(std::move(doc));
    }
    std::vector<std::vector<PropertyValue>> bundles;
    std::size_t nprops = 0;
    for (const auto& doc : docs) {
        const auto* schema = doc.root.get("schema");
        const auto* props = doc.root.get("properties");
        if (!schema || schema->text != "olm.bundle" || !props) continue;
        std::vector<PropertyValue> pv;
        for (const auto& p : props->items)
            pv.push_back({p.get("type")->text, *p.get("value")});
        nprops += pv.size();
        bundles.push_back(std::move(pv));
    }
    std::printf("catalog %s: %zu bundles, %zu properties; %d passes per rule\n", dir.c_str(),
                bundles.size(), nprops, runs);

    const char* constraints[] = {
        // etcd.0.9.2's dependencies.yaml
        R"j({"cel": {"rule": "properties.exists(p, p.type == \"certified\")"}})j",
        // OLM's resolver test: a package in a version, by CEL
        R"j({"cel": {"rule": "properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'service-binding-operator' && semver_compare(p.value.version, '1.0.0') >= 0)"}})j",
        // OLM's resolver test: a GVK by map equality, by CEL
        R"j({"cel": {"rule": "properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'binding.operators.coreos.com', 'version': 'v1alpha1', 'kind': 'ServiceBinding'})"}})j",
        // dbaas-operator's real constraint
        R"j({"any": {"constraints": [{"package": {"packageName": "rh-service-binding-operator", "versionRange": ">=1.0.0"}}, {"package": {"packageName": "service-binding-operator", "versionRange": ">=1.0.0"}}]}})j",
        // the GVK, natively
        R"j({"gvk": {"group": "binding.operators.coreos.com", "version": "v1alpha1", "kind": "ServiceBinding"}})j",
    };
    std::printf("%-10s %-12s %-8s %-12s %-10s %s\n", "kind", "compile_us", "matches", "pass_ms",
                "ns/bundle", "constraint");
    for (const char* json : constraints) {
        std::vector<double> compile;
        Constraint c;
        for (int k = 0; k < 1000; ++k) {
            auto t0 = clk::now();
            auto r = kpkg::model::parse_constraint(std::string_view(json));
            compile.push_back(seconds_since(t0));
            if (!r) {
                std::fprintf(stderr, "kpkg-bench-cel: %s\n", r.error().str().c_str());
                return 1;
            }
            c = std::move(r).take();
        }
        std::vector<double> pass;
        std::size_t matches = 0;
        for (int k = 0; k < runs; ++k) {
            std::size_t m = 0;
            auto t0 = clk::now();
            for (const auto& b : bundles)
                m += kpkg::model::satisfies(c, b);
            pass.push_back(seconds_since(t0));
            matches = m;
        }
        const double p = median(pass);
        const char* kind = c.kind == Constraint::Kind::cel   ? "cel"
                           : c.kind == Constraint::Kind::gvk ? "gvk"
                                                             : "compound";
        std::printf("%-10s %-12.1f %-8zu %-12.3f %-10.0f %s\n", kind, median(compile) * 1e6,
                    matches, p * 1e3, p * 1e9 / double(bundles.size()),
                    kpkg::model::describe(c).c_str());
    }
    return 0;
}
