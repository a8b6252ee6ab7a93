// Messages show at most 256 bytes of any value from the input (text::quote, text::shown): a
// 1,000,000-byte value in a catalog, a bundle or a resolve request gives a short message, on
// stdout (validation trees, -o json) and on stderr alike.
#include <string>
#include <vector>

#include "kpkg/core/text.hpp"
#include "support/support.hpp"

namespace kpkg::test {
namespace {

const std::string huge(1000000, '7');

// stdout and stderr of a run that saw a huge value: short.
void expect_bounded(const RunResult& r, const std::string& what) {
    EXPECT_LT(r.out.size() + r.err.size(), 20000u) << what << ":\n"
                                                   << r.out.substr(0, 2000) << "\n"
                                                   << r.err.substr(0, 2000);
    EXPECT_NE(r.exit_code, -1) << what;
}

TEST(TextQuote, CutsAtACharacterBoundary) {
    EXPECT_EQ(text::quote("a\"b\\c\n\x01\xff"), "\"a\\\"b\\\\c\\n\\x01\\xff\"");
    EXPECT_EQ(text::quote(std::string(256, 'x')), "\"" + std::string(256, 'x') + "\"");
    EXPECT_EQ(text::quote(std::string(257, 'x')),
              "\"" + std::string(256, 'x') + "...\" (257 bytes)");
    // A two-byte character that starts at byte 255 is shown whole, never split.
    const std::string s = std::string(255, 'a') + "\xc3\xa9" + "bb";
    EXPECT_EQ(text::quote(s),
              std::string("\"").append(255, 'a').append("\xc3\xa9...\" (259 bytes)"));
    EXPECT_EQ(text::shown(huge), std::string(256, '7') + "... (1000000 bytes)");
    EXPECT_EQ(text::shown("a\"b\\c"), "a\"b\\c");
    EXPECT_EQ(text::quote("abcdef", 3), "\"abc...\" (6 bytes)");
}

// A copy of testdata/bundles/valid-minimal with `from` replaced by `to` in `file`.
fs::path bundle_with(const TempDir& t, const std::string& name, const std::string& file,
                     const std::string& from, const std::string& to) {
    const fs::path src = testdata("bundles/valid-minimal");
    const fs::path dst = t / name;
    for (const auto& e : fs::recursive_directory_iterator(src)) {
        if (!e.is_regular_file()) continue;
        const std::string rel = fs::relative(e.path(), src).string();
        std::string text = read_file(e.path());
        if (rel == file) {
            auto at = text.find(from);
            EXPECT_NE(at, std::string::npos) << name << ": " << from;
            if (at != std::string::npos) text.replace(at, from.size(), to);
        }
        t.write(name + "/" + rel, text);
    }
    return dst;
}

TEST(MessageBounds, BundleValidate) {
    // 200,000 bytes rather than 1,000,000 here: 51 runs, each parsing the value several times.
    const std::string huge(200000, '7');
    const std::string csv = "manifests/demo.v1.0.0.clusterserviceversion.yaml";
    const std::string ann = "metadata/annotations.yaml";
    const std::string deps = "metadata/dependencies.yaml";
    struct Case {
        const char* name;
        std::string file, from, to;
    };
    const std::vector<Case> cases = {
        {"csv-name", csv, "name: demo.v1.0.0", "name: demo.v" + huge},
        {"version", csv, "version: 1.0.0", "version: 1.0." + huge + "x"},
        {"number", csv, "displayName: Demo", "displayName: Demo\n  replicas: " + huge},
        {"replaces", csv, "replaces: demo.v0.9.0", "replaces: demo." + huge},
        {"skips", csv, "- demo.v0.9.1", "- " + huge + "!"},
        {"skip-range", csv, "\">=0.9.0 <1.0.0\"", "\">=0.9.0 <" + huge + "x\""},
        {"min-kube", csv, "minKubeVersion: 1.25.0", "minKubeVersion: x" + huge},
        {"install-mode", csv, "type: OwnNamespace", "type: Own" + huge},
        {"image", csv, "image: registry.example.com/demo/operator:v1.0.0",
         "image: registry.example.com/demo/Operator:" + huge},
        {"crd", csv, "name: widgets.demo.example.com", "name: widgets." + huge},
        {"alm-examples", csv, "alm-examples: '[", "alm-examples: '[" + huge + ", "},
        {"annotation-key", csv, "olm.skipRange:", huge + ":"},
        {"package", ann, "package.v1: demo", "package.v1: Demo" + huge},
        {"channels", ann, "channels.v1: stable,fast", "channels.v1: stable,," + huge},
        {"default-channel", ann, "default.v1: stable", "default.v1: s" + huge},
        {"dependency", deps, "version: \">=1.0.0 <2.0.0\"", "version: \">=" + huge + "x\""},
        {"cel", deps, "rule: 'properties", "rule: '" + huge + " properties"},
    };
    TempDir t;
    for (const Case& c : cases) {
        const fs::path dir = bundle_with(t, c.name, c.file, c.from, c.to);
        for (const char* fmt : {"text", "json"}) {
            auto r = run_kpkg({"-o", fmt, "bundle", "validate", dir.string()});
            expect_bounded(r, std::string("bundle validate ") + c.name + " " + fmt);
        }
        auto r = run_kpkg({"bundle", "render", dir.string()});
        if (r.exit_code != 0) expect_bounded(r, std::string("bundle render ") + c.name);
    }
}

TEST(MessageBounds, Resolve) {
    // A catalog whose bundle requires things named by huge values, and requests naming them.
    TempDir t;
    const std::string cat =
        "{\"schema\": \"olm.package\", \"name\": \"p\", \"defaultChannel\": \"stable\"}\n"
        "{\"schema\": \"olm.channel\", \"package\": \"p\", \"name\": \"stable\", \"entries\": "
        "[{\"name\": \"p.v1.0.0\"}]}\n"
        "{\"schema\": \"olm.bundle\", \"package\": \"p\", \"name\": \"p.v1.0.0\", \"image\": "
        "\"quay.io/p/p:v1\", \"properties\": [{\"type\": \"olm.package\", \"value\": "
        "{\"packageName\": \"p\", \"version\": \"1.0.0\"}}, {\"type\": \"olm.package.required\", "
        "\"value\": {\"packageName\": \"q" +
        huge +
        "\", \"versionRange\": \">=1.0.0\"}}, {\"type\": \"olm.gvk.required\", \"value\": "
        "{\"group\": \"g" +
        huge +
        "\", \"version\": \"v1\", \"kind\": \"K\"}}, {\"type\": \"olm.constraint\", \"value\": "
        "{\"failureMessage\": \"" +
        huge + "\", \"package\": {\"packageName\": \"r\", \"versionRange\": \">=" + huge +
        "x\"}}}]}\n";
    t.write("c/index.json", cat);
    // An unsatisfiable constraint whose failureMessage is 100,000 bytes (under OLM's 128 KiB
    // limit for a value) and a required label as long: the explanation quotes both.
    const std::string big(100000, '8');
    t.write("u/index.json",
            "{\"schema\": \"olm.package\", \"name\": \"p\", \"defaultChannel\": \"stable\"}\n"
            "{\"schema\": \"olm.channel\", \"package\": \"p\", \"name\": \"stable\", "
            "\"entries\": [{\"name\": \"p.v1.0.0\"}]}\n"
            "{\"schema\": \"olm.bundle\", \"package\": \"p\", \"name\": \"p.v1.0.0\", "
            "\"image\": \"quay.io/p/p:v1\", \"properties\": [{\"type\": \"olm.package\", "
            "\"value\": {\"packageName\": \"p\", \"version\": \"1.0.0\"}}, {\"type\": "
            "\"olm.constraint\", \"value\": {\"failureMessage\": \"" +
                big +
                "\", \"package\": {\"packageName\": \"r\", \"versionRange\": \">=1.0.0\"}}}, "
                "{\"type\": \"olm.label.required\", "
                "\"value\": {\"label\": \"" +
                big + "\"}}]}\n");
    for (const char* fmt : {"text", "json"}) {
        auto r = run_kpkg({"-o", fmt, "resolve", "p", "--catalog", (t / "u").string()});
        EXPECT_EQ(r.exit_code, 4) << r.err.substr(0, 2000);
        expect_bounded(r, std::string("resolve unsatisfiable ") + fmt);
        EXPECT_NE((r.out + r.err).find("(100000 bytes)"), std::string::npos)
            << r.out.substr(0, 3000);
    }
    const std::string c = (t / "c").string();
    const std::string arg(100000, 'z'); // command-line arguments are at most 128 KiB each
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"resolve", "p", "--catalog", c},
          std::vector<std::string>{"resolve", "p", "--catalog", c, "-o", "json"},
          std::vector<std::string>{"resolve", arg, "--catalog", c},
          std::vector<std::string>{"resolve", "p@" + arg, "--catalog", c},
          std::vector<std::string>{"resolve", "p:" + arg, "--catalog", c},
          std::vector<std::string>{"resolve", "p", "--catalog", c, "--starting-csv", arg},
          std::vector<std::string>{"catalog", "list", "channels", c, arg},
          std::vector<std::string>{"catalog", "graph", c, arg}}) {
        auto r = run_kpkg(args);
        std::string what;
        for (const auto& a : args)
            what.append(" ").append(a.substr(0, 30));
        expect_bounded(r, what);
    }
}

TEST(MessageBounds, CatalogRenderAndList) {
    TempDir t;
    t.write("n/index.yaml", "schema: olm.package\nname: p\nx: " + huge + "\n");
    t.write("k/index.json", "{\"schema\": \"olm.package\", \"name\": \"p\", \"" + huge +
                                "A\": 1, \"" + huge + "a\": 2}\n");
    t.write("t/index.yaml", "schema: olm.package\nname: p\nicon: !!int " + huge + "x\n");
    for (const char* dir : {"n", "k", "t"}) {
        const std::string d = (t / dir).string();
        expect_bounded(run_kpkg({"catalog", "render", d}), std::string("render ") + dir);
        expect_bounded(run_kpkg({"catalog", "list", "packages", d}), std::string("list ") + dir);
        expect_bounded(run_kpkg({"catalog", "validate", d}), std::string("validate ") + dir);
    }
}

} // namespace
} // namespace kpkg::test
