// Generates a synthetic File-Based Catalog of the shape issue 4 measures opm on: by default
// 10,000 packages x 10 bundles (100,000 bundles, ~143 MB), one JSON file per package
// (<out>/<package>/catalog.json). Deterministic for a given seed and size.
//
// Usage: kpkg-bench-catalog-gen OUT_DIR [--packages N] [--bundles N] [--seed N]
//
// Per package: 1-3 GVKs; 1-3 channels ("stable" over every bundle, "fast" over the newer half,
// "candidate" over the last three), each a replaces chain in which every fourth entry replaces the
// one before its predecessor and skips that predecessor, and a skipRange on its head; ~30% of
// bundles require another package (olm.package.required) or a GVK of another package
// (olm.gvk.required); no olm.bundle.object or olm.csv.metadata.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// splitmix64: the same stream on every platform (std distributions are not portable).
struct Rng {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    unsigned below(unsigned n) { return static_cast<unsigned>(next() % n); }
};

std::string pkg_name(unsigned i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "pkg-%05u", i);
    return buf;
}
std::string version(unsigned b) {
    return "1." + std::to_string(b) + ".0";
}
std::string bundle_name(const std::string& p, unsigned b) {
    return p + ".v" + version(b);
}
std::string hex_digest(Rng& r) {
    static const char* h = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < 64; ++i)
        s += h[r.below(16)];
    return s;
}
std::string kind_of(unsigned pkg, unsigned g) {
    return "Kind" + std::to_string(pkg) + "x" + std::to_string(g);
}
std::string group_of(unsigned pkg) {
    return pkg_name(pkg) + ".example.com";
}

void write_package(std::ostream& o, unsigned pi, unsigned npkg, unsigned nb, Rng& rng) {
    const std::string p = pkg_name(pi);
    const unsigned ngvk = 1 + rng.below(3);
    const unsigned nch = 1 + rng.below(3);
    static const char* chans[] = {"stable", "fast", "candidate"};
    o << "{\n  \"schema\": \"olm.package\",\n  \"name\": \"" << p
      << "\",\n  \"defaultChannel\": \"stable\",\n  \"description\": \"Synthetic package " << p
      << " for load benchmarks.\"\n}\n";
    for (unsigned c = 0; c < nch; ++c) {
        unsigned first = c == 0 ? 0 : c == 1 ? nb / 2 : (nb > 3 ? nb - 3 : 0);
        o << "{\n  \"schema\": \"olm.channel\",\n  \"name\": \"" << chans[c]
          << "\",\n  \"package\": \"" << p << "\",\n  \"entries\": [\n";
        for (unsigned b = first; b < nb; ++b) {
            o << "    {\n      \"name\": \"" << bundle_name(p, b) << "\"";
            // Every fourth entry jumps over its predecessor: it replaces the one before that and
            // skips the one in between, which leaves the replaces chain through a skipped entry
            // (the usual shape, valid under opm's stranded-bundle rule).
            const bool jump = b >= first + 2 && b % 4 == 3;
            if (b > first)
                o << ",\n      \"replaces\": \"" << bundle_name(p, jump ? b - 2 : b - 1) << "\"";
            if (jump)
                o << ",\n      \"skips\": [\n        \"" << bundle_name(p, b - 1) << "\"\n      ]";
            if (b + 1 == nb) o << ",\n      \"skipRange\": \">=1.0.0 <" << version(b) << "\"";
            o << "\n    }" << (b + 1 < nb ? "," : "") << "\n";
        }
        o << "  ]\n}\n";
    }
    for (unsigned b = 0; b < nb; ++b) {
        const std::string name = bundle_name(p, b);
        const std::string image = "quay.io/example/" + p + "-bundle@sha256:" + hex_digest(rng);
        o << "{\n  \"schema\": \"olm.bundle\",\n  \"name\": \"" << name << "\",\n  \"package\": \""
          << p << "\",\n  \"image\": \"" << image << "\",\n  \"properties\": [\n";
        for (unsigned g = 0; g < ngvk; ++g)
            o << "    {\n      \"type\": \"olm.gvk\",\n      \"value\": {\n        \"group\": \""
              << group_of(pi) << "\",\n        \"kind\": \"" << kind_of(pi, g)
              << "\",\n        \"version\": \"v1\"\n      }\n    },\n";
        if (npkg > 1 && rng.below(10) < 3) {
            unsigned other = (pi + 1 + rng.below(npkg - 1)) % npkg;
            if (rng.below(2) == 0)
                o << "    {\n      \"type\": \"olm.package.required\",\n      \"value\": {\n      "
                     "  \"packageName\": \""
                  << pkg_name(other)
                  << "\",\n        \"versionRange\": \">=1.0.0\"\n      }\n    },\n";
            else
                o << "    {\n      \"type\": \"olm.gvk.required\",\n      \"value\": {\n        "
                     "\"group\": \""
                  << group_of(other) << "\",\n        \"kind\": \"" << kind_of(other, 0)
                  << "\",\n        \"version\": \"v1\"\n      }\n    },\n";
        }
        o << "    {\n      \"type\": \"olm.package\",\n      \"value\": {\n        "
             "\"packageName\": \""
          << p << "\",\n        \"version\": \"" << version(b) << "\"\n      }\n    }\n";
        o << "  ],\n  \"relatedImages\": [\n    {\n      \"name\": \"\",\n      \"image\": \""
          << image << "\"\n    }\n  ]\n}\n";
    }
}

} // namespace

int main(int argc, char** argv) {
    // An output directory that looks like a flag (--help) is a mistake, not a directory to fill.
    if (argc < 2 || argv[1][0] == '-') {
        std::cerr << "usage: " << argv[0] << " OUT_DIR [--packages N] [--bundles N] [--seed N]\n";
        return 2;
    }
    fs::path out = argv[1];
    unsigned npkg = 10000, nb = 10;
    std::uint64_t seed = 42;
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        unsigned long v = std::strtoul(argv[i + 1], nullptr, 10);
        if (a == "--packages")
            npkg = static_cast<unsigned>(v);
        else if (a == "--bundles")
            nb = static_cast<unsigned>(v);
        else if (a == "--seed")
            seed = v;
        else {
            std::cerr << "unknown option " << a << "\n";
            return 2;
        }
    }
    if (npkg == 0 || nb == 0) {
        std::cerr << "--packages and --bundles must be positive\n";
        return 2;
    }
    for (unsigned pi = 0; pi < npkg; ++pi) {
        Rng rng{seed * 1000003u + pi};
        fs::path dir = out / pkg_name(pi);
        std::error_code ec;
        fs::create_directories(dir, ec);
        std::ofstream f(dir / "catalog.json", std::ios::binary);
        if (!f) {
            std::cerr << "cannot write " << (dir / "catalog.json").string() << "\n";
            return 1;
        }
        write_package(f, pi, npkg, nb, rng);
        if (!f.flush()) {
            std::cerr << "write failed: " << (dir / "catalog.json").string() << "\n";
            return 1;
        }
    }
    return 0;
}
