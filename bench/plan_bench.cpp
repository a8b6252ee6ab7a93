// Planning speed: `kpkg plan eclipse-che` on the corpus catalog catalog-valid end to end, with a
// warm catalog cache and the bundle contents on disk: the InstallPlan printed as YAML, and the
// GitOps trees (olm and manifests) written into an existing tree (a rerun).
//
// catalog-valid carries no olm.bundle.object and its bundle images cannot be pulled, so the bench
// writes a bundle directory for each resolved bundle from what the catalog says of it: a CSV
// (deployment install strategy, permissions, owned CRDs for its olm.gvk properties, a large
// description) and one CRD per provided API, given to kpkg with --bundle-dir.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "kpkg/catalog/load.hpp"
#include "kpkg/resolve/resolve.hpp"
#include "measure.hpp"

namespace fs = std::filesystem;

namespace {

struct Gvk {
    std::string group, version, kind;
};

std::string lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

// A bundle directory for `bundle` of package `pkg` providing `gvks`.
void write_bundle(const fs::path& dir, const std::string& pkg, const std::string& bundle,
                  const std::string& version, const std::vector<Gvk>& gvks) {
    write(dir / "metadata/annotations.yaml",
          "annotations:\n"
          "  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n"
          "  operators.operatorframework.io.bundle.manifests.v1: manifests/\n"
          "  operators.operatorframework.io.bundle.metadata.v1: metadata/\n"
          "  operators.operatorframework.io.bundle.package.v1: " +
              pkg + "\n  operators.operatorframework.io.bundle.channels.v1: stable\n");
    std::string owned, rules;
    for (const auto& g : gvks) {
        const std::string plural = lower(g.kind) + "s";
        const std::string name = plural + "." + g.group;
        owned += "      - name: " + name + "\n        version: " + g.version +
                 "\n        kind: " + g.kind + "\n";
        rules += "          - apiGroups: [" + g.group + "]\n            resources: [" + plural +
                 ", " + plural + "/status, " + plural +
                 "/finalizers]\n            verbs: [get, list, watch, create, update, patch, "
                 "delete]\n";
        std::string crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                          "metadata:\n  name: " +
                          name + "\nspec:\n  group: " + g.group +
                          "\n  names:\n    kind: " + g.kind + "\n    plural: " + plural +
                          "\n  scope: Namespaced\n  versions:\n  - name: " + g.version +
                          "\n    served: true\n    storage: true\n    schema:\n"
                          "      openAPIV3Schema:\n        type: object\n        properties:\n";
        for (int i = 0; i < 40; ++i)
            crd += "          field" + std::to_string(i) +
                   ":\n            type: string\n            description: A field of the "
                   "resource, described at some length as real CRDs do.\n";
        write(dir / "manifests" / (name + ".crd.yaml"), crd);
    }
    std::string description(20000, 'x');
    for (std::size_t i = 79; i < description.size(); i += 80)
        description[i] = ' ';
    std::string csv = "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n"
                      "metadata:\n  name: " +
                      bundle +
                      "\n  annotations:\n    capabilities: Full Lifecycle\n    alm-examples: "
                      "'[]'\nspec:\n  version: " +
                      version + "\n  description: " + description +
                      "\n  installModes:\n"
                      "  - {type: OwnNamespace, supported: true}\n"
                      "  - {type: SingleNamespace, supported: true}\n"
                      "  - {type: MultiNamespace, supported: false}\n"
                      "  - {type: AllNamespaces, supported: true}\n"
                      "  customresourcedefinitions:\n    owned:\n" +
                      owned +
                      "  install:\n    strategy: deployment\n    spec:\n"
                      "      permissions:\n      - serviceAccountName: " +
                      pkg +
                      "\n        rules:\n"
                      "          - apiGroups: ['']\n            resources: [configmaps, "
                      "secrets, services]\n            verbs: ['*']\n" +
                      "      clusterPermissions:\n      - serviceAccountName: " + pkg +
                      "\n        rules:\n" + rules + "      deployments:\n      - name: " + pkg +
                      "\n        spec:\n          replicas: 1\n          selector:\n"
                      "            matchLabels: {app: " +
                      pkg +
                      "}\n          template:\n            metadata:\n              labels: "
                      "{app: " +
                      pkg + "}\n            spec:\n              serviceAccountName: " + pkg +
                      "\n              containers:\n              - name: operator\n"
                      "                image: quay.io/example/" +
                      pkg + ":" + version + "\n";
    write(dir / "manifests" / (bundle + ".clusterserviceversion.yaml"), csv);
}

struct Run {
    double ms = 0;
    int exit_code = 0;
};

Run run(const std::vector<std::string>& args, const fs::path& cache) {
    auto m = bench::run_measured(KPKG_BENCH_KPKG, args, [&] {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        setenv("KPKG_CACHE_DIR", cache.c_str(), 1);
    });
    return {m.seconds * 1000, WIFEXITED(m.status) ? WEXITSTATUS(m.status) : 128};
}

void measure(const char* label, const std::vector<std::string>& args, const fs::path& cache,
             int runs) {
    int exit_code = run(args, cache).exit_code; // warms the cache (and writes the tree)
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
        Run r = run(args, cache);
        ms.push_back(r.ms);
        if (r.exit_code != 0) exit_code = r.exit_code;
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%-44s %9.1f %9.1f %9.1f %5d\n", label, bench::median(ms), ms.front(), ms.back(),
                exit_code);
}

} // namespace

int main(int argc, char** argv) {
    int runs = 21;
    std::string package = "eclipse-che";
    bool keep = false; // leave the scratch directory (bundles, cache, trees) for a look
    fs::path catalog = fs::path(KPKG_BENCH_SOURCE_ROOT) /
                       "../shared/corpus/olm/large/derived-community/catalog-valid";
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--catalog" && i + 1 < argc)
            catalog = argv[++i];
        else if (a == "--package" && i + 1 < argc)
            package = argv[++i];
        else if (a == "--keep")
            keep = true;
        else {
            std::fprintf(stderr, "usage: kpkg-bench-plan [--runs N] [--catalog DIR] "
                                 "[--package PKG] [--keep]\n");
            return 2;
        }
    }
    if (!fs::exists(catalog)) {
        std::fprintf(stderr, "%s is absent: nothing to measure\n", catalog.c_str());
        return 0;
    }
    const fs::path scratch =
        fs::temp_directory_path() / ("kpkg-bench-plan-" + std::to_string(getpid()));
    fs::create_directories(scratch);

    // The resolution, to know which bundles need contents.
    auto cat = kpkg::catalog::load_catalog(catalog).take();
    std::vector<kpkg::resolve::CatalogSource> cats{{catalog.filename().string(), &cat, 0}};
    kpkg::resolve::Request req;
    req.subscriptions.push_back(kpkg::resolve::parse_subscription(package).take());
    req.options.one_hop = true;
    auto res = kpkg::resolve::resolve(cats, req).take();
    if (!res.satisfiable) {
        std::fprintf(stderr, "%s has no solution in %s\n", package.c_str(), catalog.c_str());
        return 1;
    }
    std::vector<std::string> args = {"plan", package,     "--catalog", catalog.string(),
                                     "-n",   "operators", "--offline"};
    for (const auto& s : res.selected) {
        std::vector<Gvk> gvks;
        auto pkg = cat.strings.find(s.package);
        auto name = cat.strings.find(s.bundle);
        const auto bi = cat.find_bundle(*pkg, *name);
        for (const auto& p : cat.properties_of(cat.bundles[bi]))
            if (p.kind == kpkg::model::PropKind::gvk)
                gvks.push_back({cat.string(p.a), cat.string(p.b), cat.string(p.c)});
        const fs::path dir = scratch / "bundles" / s.bundle;
        write_bundle(dir, s.package, s.bundle, s.version, gvks);
        args.push_back("--bundle-dir");
        args.push_back(s.bundle + "=" + dir.string());
    }
    std::printf("kpkg plan %s (%s): %zu bundles, end to end, warm catalog cache, contents from "
                "bundle directories\n",
                package.c_str(), catalog.filename().c_str(), res.selected.size());
    const std::string head = "command (ms, " + std::to_string(runs) + " runs)";
    std::printf("%-44s %9s %9s %9s %5s\n", head.c_str(), "median", "min", "max", "exit");
    const fs::path cache = scratch / "cache";
    auto with = [&](std::vector<std::string> more) {
        std::vector<std::string> a = args;
        a.insert(a.end(), more.begin(), more.end());
        return a;
    };
    // For scale on a busy machine: the resolution alone, the same catalog image read.
    measure(("resolve " + package + " (for scale)").c_str(),
            {"resolve", package, "--catalog", catalog.string()}, cache, runs);
    measure("plan -o yaml (the InstallPlan)", with({"-o", "yaml"}), cache, runs);
    measure("plan --output-dir --format olm (rerun)",
            with({"--output-dir", (scratch / "olm").string(), "--format", "olm", "--catalog-image",
                  "quay.io/example/catalog:v1"}),
            cache, runs);
    measure("plan --output-dir --format manifests (rerun)",
            with({"--output-dir", (scratch / "manifests").string(), "--format", "manifests"}),
            cache, runs);
    std::error_code ec;
    if (keep)
        std::printf("kept %s\n", scratch.c_str());
    else
        fs::remove_all(scratch, ec);
    return 0;
}
