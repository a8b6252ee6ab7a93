// kpkg catalog render: catalogs and bundle directories to one FBC in opm's layout.
//
// The expected files under testdata/catalogs/render-*/ were written by kpkg and then checked by
// hand against operator-registry's alpha/declcfg (write.go: blob order; declcfg.go: field order
// and omitempty; load.go: values read from YAML go through sigs.k8s.io/yaml, so their keys are
// sorted and <, > and & escaped, while values read from JSON are kept as json.RawMessage). They
// were not produced by opm.
#include <gtest/gtest.h>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/bundle/render.hpp"
#include "kpkg/catalog/render.hpp"
#include "kpkg/core/digest.hpp"
#include "support/support.hpp"

using namespace kpkg;
using namespace kpkg::test;

namespace {

std::string render_str(const std::vector<std::string>& srcs, catalog::RenderFormat f) {
    catalog::RenderOptions o;
    o.format = f;
    return catalog::render_to_string(srcs, o).take();
}

} // namespace

TEST(CatalogRender, YamlCatalogJsonMatchesHandCheckedFixture) {
    auto dir = testdata("catalogs/render-basic");
    EXPECT_EQ(render_str({(dir / "catalog").string()}, catalog::RenderFormat::json),
              read_file(dir / "expected.json"));
}

TEST(CatalogRender, YamlCatalogYamlMatchesHandCheckedFixture) {
    auto dir = testdata("catalogs/render-basic");
    EXPECT_EQ(render_str({(dir / "catalog").string()}, catalog::RenderFormat::yaml),
              read_file(dir / "expected.yaml"));
}

TEST(CatalogRender, JsonCatalogKeepsKeyOrderAndDoesNotEscape) {
    auto dir = testdata("catalogs/render-json");
    std::string out = render_str({(dir / "catalog").string()}, catalog::RenderFormat::json);
    EXPECT_EQ(out, read_file(dir / "expected.json"));
    EXPECT_NE(out.find("\"a\": \"<&>\""), std::string::npos);
}

TEST(CatalogRender, PackagesSortedAndMerged) {
    TempDir t;
    t.write("a.yaml", "schema: olm.package\nname: b\n");
    t.write("b.yaml", "schema: olm.package\nname: a\n");
    std::string out =
        render_str({(t / "a.yaml").string(), (t / "b.yaml").string()}, catalog::RenderFormat::json);
    EXPECT_EQ(out, "{\n    \"schema\": \"olm.package\",\n    \"name\": \"a\"\n}\n"
                   "{\n    \"schema\": \"olm.package\",\n    \"name\": \"b\"\n}\n");
}

TEST(CatalogRender, BundleDirectoryRenderedAsBundleRender) {
    auto bdir = testdata("bundles/render-edge");
    auto loaded = bundle::load(bdir).take();
    std::string expected = bundle::to_json(bundle::render(loaded).take());
    EXPECT_EQ(render_str({bdir.string()}, catalog::RenderFormat::json), expected);
    EXPECT_EQ(render_str({bdir.string()}, catalog::RenderFormat::yaml),
              bundle::to_yaml(bundle::render(loaded).take()));
}

TEST(CatalogRender, MissingSourceIsAnError) {
    auto r = catalog::render_to_string({"/nonexistent/kpkg-render"});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("/nonexistent/kpkg-render"), std::string::npos);
}

TEST(CatalogRender, BundleWithoutCsvIsAnError) {
    auto r = catalog::render_to_string({testdata("bundles/load-empty-manifests").string()});
    EXPECT_FALSE(r.ok());
}

TEST(CatalogRender, MalformedCatalogIsAnError) {
    TempDir t;
    t.write("c/bad.yaml", "schema: [unclosed\n");
    auto r = catalog::render_to_string({(t / "c").string()});
    EXPECT_FALSE(r.ok());
}

TEST(CatalogRenderCli, OutputFileWrittenAndNothingOnFailure) {
    TempDir t;
    auto dir = testdata("catalogs/render-basic");
    auto ok = run_kpkg({"catalog", "render", (dir / "catalog").string(), "--output-file",
                        (t / "out.json").string()});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_EQ(read_file(t / "out.json"), read_file(dir / "expected.json"));
    auto bad = run_kpkg({"catalog", "render", (dir / "catalog").string(), "/nonexistent/x",
                         "--output-file", (t / "bad.json").string()});
    EXPECT_EQ(bad.exit_code, 3);
    EXPECT_FALSE(fs::exists(t / "bad.json"));
    auto yaml = run_kpkg({"-o", "yaml", "catalog", "render", (dir / "catalog").string()});
    EXPECT_EQ(yaml.exit_code, 0);
    EXPECT_EQ(yaml.out, read_file(dir / "expected.yaml"));
}

// sha256 of the output of /tmp/render-oracle (a Go program written for this task, not opm): it
// decodes each corpus file as opm's loader does (JSON as json.RawMessage, YAML documents through
// github.com/ghodss/yaml, the library behind sigs.k8s.io/yaml), holds blobs in structs with
// declcfg's field order and omitempty, sorts them as declcfg.WriteJSON does and writes them with
// encoding/json (4-space indent, no HTML escaping) or ghodss/yaml.JSONToYAML. It was run with Go
// and the Debian packages of those libraries; opm itself was not run.
TEST(CatalogRender, CorpusMatchesGoOracle) {
    KPKG_REQUIRE_CORPUS(corpus);
    const std::pair<const char*, const char*> golden[] = {
        {"olm-e2e-deprecations",
         "3d93ca3ddeb4a65f7c36cd70d35d85ac14f8cb4171047005d794340405cf660d"},
        {"registry-action-index-latest",
         "f000bfca20901088164d4cdeecd531ca6bc53c761bf663c23e7df92df9fff128"},
        {"registry-action-index-old",
         "20862abd61581aa080a33195569da27437dc7c3f6d7cb7b5b7c9deba5efaee37"},
        {"registry-action-list-index",
         "06338570c2f50147d284566b5d518bfed1c5b713eecca929c3978ac19977e50b"},
        {"registry-e2e-test-configs",
         "38101407c64deb3669c1f6d2129241dc9c425cad724b0f2b40b9a211146e5a0d"},
        {"registry-fbc-dir-example",
         "6ed38e966baeaf395d781c4c95936898a76ebdab0d130ae7505da22926d93099"},
    };
    for (const auto& [name, sum] : golden) {
        std::string out =
            render_str({(corpus / "olm/fbc" / name).string()}, catalog::RenderFormat::json);
        EXPECT_EQ(sha256_digest(out), std::string("sha256:") + sum) << name;
    }
}
