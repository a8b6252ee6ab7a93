#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/bundle/render.hpp"
#include "kpkg/core/digest.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "support/support.hpp"

using namespace kpkg;
using bundle::RawProperty;
using bundle::Rendered;
using test::testdata;
namespace fs = std::filesystem;

namespace {

Rendered render_dir(const fs::path& dir, const bundle::RenderOptions& opts = {}) {
    auto loaded = bundle::load(dir);
    EXPECT_TRUE(loaded.ok()) << (loaded.ok() ? "" : loaded.error().str());
    auto r = bundle::render(*loaded, opts);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
    return r.ok() ? std::move(r).take() : Rendered{};
}

int b64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

std::string b64_decode(std::string_view s) {
    std::string out;
    unsigned v = 0;
    int bits = 0;
    for (char c : s) {
        if (c == '=') break;
        const int d = b64_value(c);
        if (d < 0) return "<invalid base64>";
        v = (v << 6) | static_cast<unsigned>(d);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((v >> bits) & 0xFF);
        }
    }
    return out;
}

// The decoded JSON of an olm.bundle.object value {"data":"<base64>"}.
std::string object_json(const RawProperty& p) {
    const std::string prefix = "{\"data\":\"";
    if (p.value.compare(0, prefix.size(), prefix) != 0 || p.value.size() < prefix.size() + 2)
        return "<not a data value: " + p.value + ">";
    return b64_decode(
        std::string_view(p.value).substr(prefix.size(), p.value.size() - prefix.size() - 2));
}

std::string go_json(const io::Node& n) {
    std::string s;
    EXPECT_TRUE(io::go::append_marshal(s, n));
    return s;
}

std::string go_json_of_yaml(const std::string& yaml) {
    auto docs = io::parse_yaml(yaml, "test.yaml");
    EXPECT_TRUE(docs.ok());
    if (!docs.ok() || docs->empty()) return "<no document>";
    return go_json((*docs)[0].root);
}

const char* const kBundles[] = {"etcd.0.9.2", "kiali.1.4.2", "foo-bundle-v0.2.0",
                                "prometheus.0.22.2"};

// sha256 of `opm render DIR -o json` and `-o yaml` for the four corpus bundles. They come from
// two derivations of opm's rules made independently of kpkg, which agree byte for byte: a Python
// script following operator-registry's source (alpha/action/render.go,
// pkg/registry/registry_to_model.go), and a Go program doing opm's steps with the libraries opm
// uses (encoding/json, gopkg.in/yaml.v2, sigs.k8s.io/yaml's ancestor ghodss/yaml). For
// foo-bundle-v0.2.0 the content also agrees with upstream's own expectation in
// alpha/action/render_test.go (see FooMatchesUpstreamRenderTest).
struct Golden {
    const char* bundle;
    const char* json;
    const char* yaml;
};
const Golden kGolden[] = {
    {"etcd.0.9.2", "sha256:3db36c4eddeb7caf7538f0311b16a7030ad0906f680ea4a972672cc922ac7b59",
     "sha256:5bf21a707f65bfaa7c51cf149571ffa3511916d5a677402bdbcd3453184a5c89"},
    {"kiali.1.4.2", "sha256:797874a4efc040e394dc8fba90e7da9d903665300377549e8a6e7068a38eb98d",
     "sha256:88ef51e3b9df2111e6480c4c89a4ba21416c06165f48f378e169b522b7ef5407"},
    {"foo-bundle-v0.2.0", "sha256:cd55a32bba81341629f800b87809308cdf4e0eb8cb24b11542376c8760d8da2c",
     "sha256:6344073fe574f00ec3fe261e2ffa60134ebdd116ab1418b3b713d1608d90aad0"},
    {"prometheus.0.22.2", "sha256:7e7defd152740aa033bc76f6b0a96e234ceab00d3789182561b08e8b5f03944a",
     "sha256:023d119f641c88727e74444d8c6339a8ad8fa9e037e5e25c8a42b36c2e683ab7"},
};

fs::path corpus_bundle(const fs::path& corpus, const std::string& name) {
    return corpus / "olm" / "bundles" / name;
}

} // namespace

// ---- corpus: byte-exact output ----

TEST(Render, CorpusJsonMatchesDerivedOpmOutput) {
    KPKG_REQUIRE_CORPUS(corpus);
    for (const auto& g : kGolden) {
        SCOPED_TRACE(g.bundle);
        const Rendered r = render_dir(corpus_bundle(corpus, g.bundle));
        EXPECT_EQ(sha256_digest(bundle::to_json(r)), g.json);
    }
}

TEST(Render, CorpusYamlMatchesDerivedOpmOutput) {
    KPKG_REQUIRE_CORPUS(corpus);
    for (const auto& g : kGolden) {
        SCOPED_TRACE(g.bundle);
        const Rendered r = render_dir(corpus_bundle(corpus, g.bundle));
        EXPECT_EQ(sha256_digest(bundle::to_yaml(r)), g.yaml);
    }
}

TEST(Render, StreamedJsonIsTheSame) {
    KPKG_REQUIRE_CORPUS(corpus);
    const Rendered r = render_dir(corpus_bundle(corpus, "prometheus.0.22.2"));
    std::string joined;
    std::size_t pieces = 0;
    bundle::write_json(r, [&](std::string_view piece) {
        joined.append(piece);
        ++pieces;
    });
    EXPECT_EQ(joined, bundle::to_json(r));
    EXPECT_GT(pieces, 3u);
}

TEST(Render, CliWritesTheSameBytes) {
    KPKG_REQUIRE_CORPUS(corpus);
    for (const auto& g : kGolden) {
        SCOPED_TRACE(g.bundle);
        const std::string dir = corpus_bundle(corpus, g.bundle).string();
        auto res = test::run_kpkg({"bundle", "render", dir});
        EXPECT_EQ(res.exit_code, 0) << res.err;
        EXPECT_EQ(sha256_digest(res.out), g.json);
        res = test::run_kpkg({"-o", "json", "bundle", "render", dir});
        EXPECT_EQ(sha256_digest(res.out), g.json);
        res = test::run_kpkg({"bundle", "render", dir, "-o", "yaml"});
        EXPECT_EQ(res.exit_code, 0) << res.err;
        EXPECT_EQ(sha256_digest(res.out), g.yaml);
    }
}

// alpha/action/render_test.go "Success/BundleDirectory": the bundle opm renders from
// testdata/foo-bundle-v0.2.0, field by field.
TEST(Render, FooMatchesUpstreamRenderTest) {
    KPKG_REQUIRE_CORPUS(corpus);
    const fs::path dir = corpus_bundle(corpus, "foo-bundle-v0.2.0");
    const Rendered r = render_dir(dir);
    EXPECT_EQ(r.name, "foo.v0.2.0");
    EXPECT_EQ(r.package, "foo");
    EXPECT_EQ(r.image, "");

    ASSERT_EQ(r.properties.size(), 6u);
    const std::vector<RawProperty> head = {
        {"olm.gvk", R"({"group":"test.foo","kind":"Foo","version":"v1"})"},
        {"olm.gvk.required", R"({"group":"test.bar","kind":"Bar","version":"v1alpha1"})"},
        {"olm.package", R"({"packageName":"foo","version":"0.2.0"})"},
        {"olm.package.required", R"({"packageName":"bar","versionRange":"<0.1.0"})"},
    };
    for (std::size_t i = 0; i < head.size(); ++i)
        EXPECT_EQ(r.properties[i], head[i]) << i;
    EXPECT_EQ(r.properties[4].type, "olm.bundle.object");
    EXPECT_EQ(r.properties[5].type, "olm.bundle.object");
    // The CRD, then the CSV (they sort by their base64 text).
    EXPECT_EQ(object_json(r.properties[4]),
              R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",)"
              R"("metadata":{"name":"foos.test.foo"},"spec":{"group":"test.foo","names":)"
              R"({"kind":"Foo","plural":"foos"},"versions":[{"name":"v1"}]}})");
    const std::string csv = object_json(r.properties[5]);
    EXPECT_EQ(csv.rfind(R"({"apiVersion":"operators.coreos.com/v1alpha1",)"
                        R"("kind":"ClusterServiceVersion","metadata":{"annotations":)",
                        0),
              0u)
        << csv;
    EXPECT_NE(csv.find(R"("olm.skipRange":"\u003c0.2.0")"), std::string::npos) << csv;

    const std::vector<std::pair<std::string, std::string>> images = {
        {"", "test.registry/foo-operator/foo-2:v0.2.0"},
        {"", "test.registry/foo-operator/foo-init-2:v0.2.0"},
        {"", "test.registry/foo-operator/foo-init:v0.2.0"},
        {"other", "test.registry/foo-operator/foo-other:v0.2.0"},
        {"operator", "test.registry/foo-operator/foo:v0.2.0"},
    };
    ASSERT_EQ(r.related_images.size(), images.size());
    for (std::size_t i = 0; i < images.size(); ++i) {
        EXPECT_EQ(r.related_images[i].name, images[i].first) << i;
        EXPECT_EQ(r.related_images[i].image, images[i].second) << i;
    }
}

// "Success/BundleDirectoryWithImageRefTemplate": the image is set; it is already a CSV related
// image, so relatedImages do not change. A new image joins them, in image order.
TEST(Render, ImageSetsImageAndRelatedImages) {
    KPKG_REQUIRE_CORPUS(corpus);
    const fs::path dir = corpus_bundle(corpus, "foo-bundle-v0.2.0");
    const Rendered plain = render_dir(dir);

    bundle::RenderOptions known;
    known.image = "test.registry/foo-operator/foo:v0.2.0";
    const Rendered r1 = render_dir(dir, known);
    EXPECT_EQ(r1.image, known.image);
    EXPECT_EQ(r1.properties, plain.properties);
    ASSERT_EQ(r1.related_images.size(), plain.related_images.size());

    bundle::RenderOptions fresh;
    fresh.image = "test.registry/foo-operator/foo-bundle:v0.2.0";
    const Rendered r2 = render_dir(dir, fresh);
    EXPECT_EQ(r2.image, fresh.image);
    EXPECT_EQ(r2.properties, plain.properties);
    ASSERT_EQ(r2.related_images.size(), plain.related_images.size() + 1);
    // Between foo-2 and foo-init-2, as in upstream's "Success/BundleImage" case.
    EXPECT_EQ(r2.related_images[1].name, "");
    EXPECT_EQ(r2.related_images[1].image, fresh.image);
    const std::string json = bundle::to_json(r2);
    EXPECT_NE(json.find("    \"image\": \"test.registry/foo-operator/foo-bundle:v0.2.0\",\n"),
              std::string::npos);

    auto res = test::run_kpkg({"bundle", "render", dir.string(), "--image", fresh.image});
    EXPECT_EQ(res.exit_code, 0) << res.err;
    EXPECT_EQ(res.out, json);
}

TEST(Render, CsvMetadataReplacesBundleObjects) {
    KPKG_REQUIRE_CORPUS(corpus);
    const fs::path dir = corpus_bundle(corpus, "foo-bundle-v0.2.0");
    bundle::RenderOptions opts;
    opts.csv_metadata = true;
    const Rendered r = render_dir(dir, opts);
    ASSERT_EQ(r.properties.size(), 5u);
    for (const auto& p : r.properties)
        EXPECT_NE(p.type, "olm.bundle.object");
    EXPECT_EQ(r.properties.back().type, "olm.csv.metadata");
    EXPECT_EQ(r.properties.back().value,
              R"({"annotations":{"olm.skipRange":"<0.2.0"},"apiServiceDefinitions":{},)"
              R"("crdDescriptions":{"owned":[{"name":"foos.test.foo","version":"v1",)"
              R"("kind":"Foo"}]},"displayName":"Foo Operator","provider":{}})");
    auto res = test::run_kpkg({"bundle", "render", "--csv-metadata", dir.string()});
    EXPECT_EQ(res.exit_code, 0) << res.err;
    EXPECT_EQ(res.out, bundle::to_json(r));
}

// ---- structure ----

// Each olm.bundle.object decodes to the JSON of one manifest (the first document of each file),
// and that JSON reads back as the manifest.
TEST(Render, BundleObjectsDecodeToTheManifests) {
    KPKG_REQUIRE_CORPUS(corpus);
    for (const char* name : kBundles) {
        SCOPED_TRACE(name);
        auto loaded = bundle::load(corpus_bundle(corpus, name));
        ASSERT_TRUE(loaded.ok());
        auto r = bundle::render(*loaded);
        ASSERT_TRUE(r.ok()) << r.error().str();
        std::vector<std::string> expected;
        for (const auto& m : loaded->bundle.manifests)
            expected.push_back(go_json(m.object));
        std::vector<std::string> got;
        for (const auto& p : r->properties)
            if (p.type == "olm.bundle.object") got.push_back(object_json(p));
        ASSERT_EQ(got.size(), expected.size());
        for (const auto& j : got) {
            EXPECT_NE(std::find(expected.begin(), expected.end(), j), expected.end()) << j;
            auto docs = io::parse_json(j, "object.json");
            ASSERT_TRUE(docs.ok());
            ASSERT_EQ(docs->size(), 1u);
            const auto it = std::find_if(
                loaded->bundle.manifests.begin(), loaded->bundle.manifests.end(),
                [&](const bundle::Manifest& m) { return (*docs)[0].root == m.object; });
            EXPECT_NE(it, loaded->bundle.manifests.end()) << j.substr(0, 120);
        }
    }
}

// Properties are sorted by type and then by the bytes of their value, with every
// olm.bundle.object moved to the end (in the same order among themselves).
TEST(Render, PropertyOrder) {
    KPKG_REQUIRE_CORPUS(corpus);
    for (const char* name : kBundles) {
        SCOPED_TRACE(name);
        const Rendered r = render_dir(corpus_bundle(corpus, name));
        std::vector<RawProperty> others, objects;
        for (const auto& p : r.properties)
            (p.type == "olm.bundle.object" ? objects : others).push_back(p);
        std::vector<RawProperty> joined = others;
        joined.insert(joined.end(), objects.begin(), objects.end());
        EXPECT_EQ(joined, r.properties) << "bundle objects are not all at the end";
        auto less = [](const RawProperty& a, const RawProperty& b) {
            return a.type != b.type ? a.type < b.type : a.value < b.value;
        };
        EXPECT_TRUE(std::is_sorted(others.begin(), others.end(), less));
        EXPECT_TRUE(std::is_sorted(objects.begin(), objects.end(), less));
        EXPECT_EQ(std::count_if(r.properties.begin(), r.properties.end(),
                                [](const RawProperty& p) { return p.type == "olm.package"; }),
                  1);
        EXPECT_TRUE(std::is_sorted(r.related_images.begin(), r.related_images.end(),
                                   [](const auto& a, const auto& b) { return a.image < b.image; }));
    }
}

TEST(Render, EtcdKeepsConstraintAndRequiresWhatItOwns) {
    KPKG_REQUIRE_CORPUS(corpus);
    const Rendered r = render_dir(corpus_bundle(corpus, "etcd.0.9.2"));
    std::vector<std::string> types;
    for (const auto& p : r.properties)
        types.push_back(p.type);
    const std::vector<std::string> expected = {
        "olm.constraint",    "olm.gvk",           "olm.gvk",          "olm.gvk",
        "olm.gvk.required",  "olm.gvk.required",  "olm.package",      "olm.bundle.object",
        "olm.bundle.object", "olm.bundle.object", "olm.bundle.object"};
    EXPECT_EQ(types, expected);
    // The constraint passes through with its keys sorted, as sigs.k8s.io/yaml writes it.
    EXPECT_EQ(r.properties[0].value,
              R"j({"cel":{"rule":"properties.exists(p, p.type == \"certified\")"},)j"
              R"j("failureMessage":"require to have \"certified\""})j");
    EXPECT_EQ(r.properties[4].value,
              R"({"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"})");
}

// ---- a bundle made for the corners (expected output from an independent Go derivation) ----

TEST(Render, EdgeBundleMatchesDerivedOutput) {
    const fs::path dir = testdata("bundles/render-edge");
    const fs::path exp = testdata("bundles/render-edge-expected");
    const Rendered plain = render_dir(dir);
    EXPECT_EQ(bundle::to_json(plain), test::read_file(exp / "render.json"));
    EXPECT_EQ(bundle::to_yaml(plain), test::read_file(exp / "render.yaml"));

    bundle::RenderOptions meta;
    meta.csv_metadata = true;
    const Rendered m = render_dir(dir, meta);
    EXPECT_EQ(bundle::to_json(m), test::read_file(exp / "csv-metadata.json"));
    EXPECT_EQ(bundle::to_yaml(m), test::read_file(exp / "csv-metadata.yaml"));

    bundle::RenderOptions image;
    image.image = "quay.io/edge/bundle:v1.2.3";
    EXPECT_EQ(bundle::to_json(render_dir(dir, image)), test::read_file(exp / "image.json"));
}

TEST(Render, ToNodeHasTheBlobShape) {
    const Rendered r = render_dir(testdata("bundles/render-edge"));
    const io::Node n = bundle::to_node(r);
    ASSERT_TRUE(n.is_map());
    EXPECT_EQ(n.get("schema")->text, "olm.bundle");
    EXPECT_EQ(n.get("name")->text, "edge.v1.2.3");
    EXPECT_EQ(n.get("package")->text, "edge");
    ASSERT_TRUE(n.get("properties")->is_seq());
    EXPECT_EQ(n.get("properties")->items.size(), r.properties.size());
    EXPECT_TRUE(n.get("properties")->items[0].get("value")->is_map());
}

// ---- refusals (where opm does not render either) ----

namespace {

const std::string kAnnotations = "annotations:\n"
                                 "  operators.operatorframework.io.bundle.package.v1: demo\n"
                                 "  operators.operatorframework.io.bundle.channels.v1: stable\n";

std::string csv_with(const std::string& spec_extra) {
    return "apiVersion: operators.coreos.com/v1alpha1\n"
           "kind: ClusterServiceVersion\n"
           "metadata:\n"
           "  name: demo.v1.0.0\n"
           "spec:\n" +
           spec_extra;
}

Error render_error(const test::TempDir& d) {
    auto loaded = bundle::load(d.path());
    EXPECT_TRUE(loaded.ok());
    if (!loaded.ok()) return loaded.error();
    auto r = bundle::render(*loaded);
    EXPECT_FALSE(r.ok());
    return r.ok() ? Error{} : r.error();
}

} // namespace

TEST(Render, MinimalBundle) {
    test::TempDir d;
    d.write("manifests/csv.yaml", csv_with("  version: 1.0.0\n"));
    d.write("metadata/annotations.yaml", kAnnotations);
    const Rendered r = render_dir(d.path());
    const std::string json = bundle::to_json(r);
    EXPECT_EQ(json.rfind(
                  "{\n    \"schema\": \"olm.bundle\",\n    \"name\": \"demo.v1.0.0\",\n    "
                  "\"package\": \"demo\",\n    \"image\": \"\",\n    \"properties\": [\n        {\n"
                  "            \"type\": \"olm.package\",\n            \"value\": {\n"
                  "                \"packageName\": \"demo\",\n                \"version\": "
                  "\"1.0.0\"\n            }\n",
                  0),
              0u)
        << json;
    EXPECT_TRUE(r.related_images.empty());
    EXPECT_EQ(bundle::to_json(r).find("relatedImages"), std::string::npos);
}

TEST(Render, RefusesWithoutCsv) {
    test::TempDir d;
    d.write("manifests/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n");
    d.write("metadata/annotations.yaml", kAnnotations);
    const Error e = render_error(d);
    EXPECT_EQ(e.code, ExitCode::invalid);
    EXPECT_NE(e.message.find("no ClusterServiceVersion"), std::string::npos) << e.str();
    auto res = test::run_kpkg({"bundle", "render", d.path().string()});
    EXPECT_EQ(res.exit_code, 3);
    EXPECT_TRUE(res.out.empty());
    EXPECT_NE(res.err.find("no ClusterServiceVersion"), std::string::npos) << res.err;
}

TEST(Render, RefusesWithoutPackage) {
    test::TempDir d;
    d.write("manifests/csv.yaml", csv_with("  version: 1.0.0\n"));
    d.write("metadata/annotations.yaml",
            "annotations:\n  operators.operatorframework.io.bundle.channels.v1: stable\n");
    EXPECT_NE(render_error(d).message.find("no package"), std::string::npos);
}

TEST(Render, RefusesOwnedCrdNotInBundle) {
    test::TempDir d;
    d.write("manifests/csv.yaml", csv_with("  version: 1.0.0\n"
                                           "  customresourcedefinitions:\n"
                                           "    owned:\n"
                                           "    - name: widgets.example.com\n"
                                           "      version: v1\n"
                                           "      kind: Widget\n"));
    d.write("metadata/annotations.yaml", kAnnotations);
    const Error e = render_error(d);
    EXPECT_NE(e.message.find("widgets.example.com"), std::string::npos) << e.str();
    EXPECT_NE(e.pos.file.find("csv.yaml"), std::string::npos) << e.str();
    EXPECT_EQ(e.pos.line, 9u) << e.str();
}

TEST(Render, RefusesNumericVersion) {
    test::TempDir d;
    d.write("manifests/csv.yaml", csv_with("  version: 1.0\n"));
    d.write("metadata/annotations.yaml", kAnnotations);
    const Error e = render_error(d);
    EXPECT_NE(e.message.find("spec.version must be a string"), std::string::npos) << e.str();
    EXPECT_EQ(e.pos.line, 6u) << e.str();
}

TEST(Render, RefusesValuesWithoutJsonForm) {
    test::TempDir d;
    d.write("manifests/csv.yaml", csv_with("  version: 1.0.0\n  ratio: .inf\n"));
    d.write("metadata/annotations.yaml", kAnnotations);
    EXPECT_NE(render_error(d).message.find("no JSON form"), std::string::npos);
}

// A field of the wrong type after others of the same value were read: an error naming it (and,
// under the sanitizers, the strings read before it, longer than std::string keeps inline, do not
// leak; see docs/building.md).
TEST(Render, RefusesWrongTypeAfterOtherFieldsOfAValue) {
    struct Case {
        const char* file;
        std::string text;
        const char* want;
    };
    const std::vector<Case> cases = {
        {"metadata/properties.yaml",
         "properties:\n- type: olm.gvk\n  value: {group: widgets.example.com, kind: [K], version: "
         "v1}\n",
         "olm.gvk kind must be a string, not a list"},
        {"metadata/properties.yaml",
         "properties:\n- type: olm.package\n  value: {packageName: a-package-name-longer-than-sso, "
         "version: {}}\n",
         "version must be a string, not an object"},
        {"metadata/dependencies.yaml",
         "dependencies:\n- type: olm.gvk\n  value: {group: widgets.example.com, kind: "
         "AVeryLongKindName, version: [1]}\n",
         "version must be a string, not a list"},
        {"manifests/csv.yaml",
         csv_with("  version: 1.0.0\n  relatedImages:\n  - name: an-image-name-longer-than-sso\n   "
                  " image: [x]\n"),
         "spec.relatedImages[].image must be a string, not a list"},
        {"manifests/csv.yaml",
         csv_with("  version: 1.0.0\n  apiservicedefinitions:\n    owned:\n    - group: "
                  "widgets.example.com\n"
                  "      version: v1alpha1-long-version\n      kind: [K]\n      name: ks\n"),
         "apiservice kind must be a string, not a list"},
    };
    for (const auto& c : cases) {
        test::TempDir d;
        d.write("manifests/csv.yaml", csv_with("  version: 1.0.0\n"));
        d.write("metadata/annotations.yaml", kAnnotations);
        d.write(c.file, c.text);
        auto res = test::run_kpkg({"bundle", "render", d.path().string()});
        EXPECT_EQ(res.exit_code, 3) << c.want << ": " << res.err;
        EXPECT_TRUE(res.out.empty()) << c.want;
        EXPECT_NE(res.err.find(c.want), std::string::npos) << res.err;
    }
}

TEST(Render, ReleaseFromSubstitutesFor) {
    test::TempDir d;
    d.write("manifests/csv.yaml",
            "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n"
            "metadata:\n  name: demo.v1.0.0\n  annotations:\n    olm.substitutesFor: demo.v1.0.0\n"
            "spec:\n  version: 1.0.0+2\n");
    d.write("metadata/annotations.yaml", kAnnotations);
    const Rendered r = render_dir(d.path());
    ASSERT_FALSE(r.properties.empty());
    EXPECT_EQ(
        r.properties[0],
        (RawProperty{"olm.package", R"({"packageName":"demo","version":"1.0.0","release":"2"})"}));
}

// ---- Go encoding ----

TEST(RenderGoJson, YamlScalarsAsOpmTypesThem) {
    EXPECT_EQ(go_json_of_yaml("a: yes\nb: off\nc: 'yes'\nd: ~\ne: null\n"),
              R"({"a":true,"b":false,"c":"yes","d":null,"e":null})");
    EXPECT_EQ(go_json_of_yaml("[017, 0o17, 0x1F, 1_000, +5, -0, 08, 0b101]"),
              "[15,15,31,1000,5,0,8,5]");
    EXPECT_EQ(go_json_of_yaml("[1.0, 1.5, .5, 1e3, 2e21, 1.5e-7, 0.000001, 3.14159265358979]"),
              "[1,1.5,0.5,1000,2e+21,1.5e-7,0.000001,3.14159265358979]");
    EXPECT_EQ(go_json_of_yaml("[9223372036854775807, 9223372036854775808, 99999999999999999999]"),
              "[9223372036854775807,9223372036854776000,100000000000000000000]");
    EXPECT_EQ(go_json_of_yaml("[2019-09-12T00:00:00Z, 2019-01-01, 1:20, 1e400, \"1.0\"]"),
              R"(["2019-09-12T00:00:00Z","2019-01-01","1:20","1e400","1.0"])");
    EXPECT_EQ(go_json_of_yaml("{b: 1, a: {d: [], c: {}}, A: x}"),
              R"({"A":"x","a":{"c":{},"d":[]},"b":1})");
}

TEST(RenderGoJson, StringsEscapedAsGoDoes) {
    EXPECT_EQ(go_json_of_yaml("s: \"<a href='x'>&amp;</a>\"\n"),
              R"({"s":"\u003ca href='x'\u003e\u0026amp;\u003c/a\u003e"})");
    EXPECT_EQ(go_json_of_yaml("s: \"tab\\tnl\\ncr\\rbs\\bff\\f\\x01 \\u2028 caf\\u00e9\"\n"),
              "{\"s\":\"tab\\tnl\\ncr\\rbs\\bff\\f\\u0001 \\u2028 caf\xC3\xA9\"}");
}

// Property values are re-indented from their bytes: escapes and number spellings stay as they
// are, empty collections stay on one line.
TEST(RenderJson, ValuesReindentedVerbatim) {
    Rendered r;
    r.name = "x.v1";
    r.package = "x";
    r.properties.push_back({"custom", R"({"a":"\u003c","b":[],"c":{},"d":[1.50,{"e":null}]})"});
    EXPECT_EQ(bundle::to_json(r), "{\n"
                                  "    \"schema\": \"olm.bundle\",\n"
                                  "    \"name\": \"x.v1\",\n"
                                  "    \"package\": \"x\",\n"
                                  "    \"image\": \"\",\n"
                                  "    \"properties\": [\n"
                                  "        {\n"
                                  "            \"type\": \"custom\",\n"
                                  "            \"value\": {\n"
                                  "                \"a\": \"\\u003c\",\n"
                                  "                \"b\": [],\n"
                                  "                \"c\": {},\n"
                                  "                \"d\": [\n"
                                  "                    1.50,\n"
                                  "                    {\n"
                                  "                        \"e\": null\n"
                                  "                    }\n"
                                  "                ]\n"
                                  "            }\n"
                                  "        }\n"
                                  "    ]\n"
                                  "}\n");
    EXPECT_EQ(bundle::to_yaml(r), "---\n"
                                  "image: \"\"\n"
                                  "name: x.v1\n"
                                  "package: x\n"
                                  "properties:\n"
                                  "- type: custom\n"
                                  "  value:\n"
                                  "    a: <\n"
                                  "    b: []\n"
                                  "    c: {}\n"
                                  "    d:\n"
                                  "    - 1.5\n"
                                  "    - e: null\n"
                                  "schema: olm.bundle\n");
}
