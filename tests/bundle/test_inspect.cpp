#include <gtest/gtest.h>

#include "kpkg/bundle/inspect.hpp"
#include "kpkg/io/load.hpp"
#include "support/support.hpp"

using namespace kpkg;
using test::contains;
using test::run_kpkg;
using test::testdata;
namespace fs = std::filesystem;

namespace {

io::Node parse_one(const std::string& text, bool json) {
    auto docs = json ? io::parse_json(text, "<out>") : io::parse_yaml(text, "<out>");
    EXPECT_TRUE(docs.ok()) << docs.error().str() << "\n" << text;
    if (!docs.ok() || docs->size() != 1) return io::Node();
    return (*docs)[0].root;
}

std::string text_of(const io::Node& n, std::string_view key) {
    const io::Node* v = n.get(key);
    return v != nullptr ? v->text : std::string("<absent>");
}

const std::vector<std::string> top_keys = {
    "dir",          "package",     "channels",      "defaultChannel", "csv",
    "version",      "replaces",    "skips",         "skipRange",      "minKubeVersion",
    "installModes", "owned",       "required",      "crds",           "dependencies",
    "properties",   "deployments", "relatedImages", "findings"};

std::vector<std::string> keys_of(const io::Node& n) {
    std::vector<std::string> out;
    for (const auto& e : n.fields)
        out.push_back(e.key);
    return out;
}

} // namespace

// ---- library --------------------------------------------------------------------------------

TEST(BundleInspect, SampleDocument) {
    auto r = bundle::inspect_dir(testdata("bundles/sample-operator"));
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_TRUE(r->findings.empty());
    EXPECT_FALSE(r->has_errors());
    const io::Node& d = r->doc;
    EXPECT_EQ(keys_of(d), top_keys);
    EXPECT_EQ(text_of(d, "package"), "sample");
    EXPECT_EQ(d.get("channels")->items.size(), 2u);
    EXPECT_EQ(text_of(d, "defaultChannel"), "stable");
    EXPECT_EQ(text_of(d, "csv"), "sample.v2.1.0");
    EXPECT_EQ(text_of(d, "version"), "2.1.0");
    EXPECT_EQ(text_of(d, "replaces"), "sample.v2.0.0");
    EXPECT_EQ(d.get("skips")->items.size(), 2u);
    EXPECT_EQ(text_of(d, "skipRange"), ">=2.0.0 <2.1.0");
    EXPECT_EQ(text_of(d, "minKubeVersion"), "1.27.0");
    ASSERT_EQ(d.get("installModes")->items.size(), 4u);
    EXPECT_EQ(d.get("installModes")->items[2].get("supported")->as_bool(), false);

    const auto& owned = d.get("owned")->items;
    ASSERT_EQ(owned.size(), 2u);
    EXPECT_EQ(text_of(owned[0], "type"), "crd");
    EXPECT_EQ(text_of(owned[0], "group"), "sample.example.com"); // from the CRD name
    EXPECT_EQ(text_of(owned[0], "kind"), "Gadget");
    EXPECT_EQ(text_of(owned[1], "type"), "apiservice");
    EXPECT_EQ(text_of(owned[1], "group"), "metrics.sample.example.com");
    const auto& required = d.get("required")->items;
    ASSERT_EQ(required.size(), 2u);
    EXPECT_EQ(text_of(required[0], "group"), "storage.example.com");
    EXPECT_EQ(text_of(required[1], "kind"), "MetricValueList");

    ASSERT_EQ(d.get("crds")->items.size(), 1u);
    EXPECT_EQ(d.get("crds")->items[0].get("versions")->items.size(), 2u);

    const io::Node* deps = d.get("dependencies");
    ASSERT_NE(deps, nullptr);
    EXPECT_EQ(keys_of(*deps),
              (std::vector<std::string>{"packages", "gvks", "labels", "constraints", "other"}));
    ASSERT_EQ(deps->get("packages")->items.size(), 1u);
    EXPECT_EQ(text_of(deps->get("packages")->items[0], "packageName"), "storage");
    EXPECT_EQ(text_of(deps->get("packages")->items[0], "versionRange"), ">=1.2.0 <2.0.0");
    EXPECT_EQ(text_of(deps->get("gvks")->items[0], "kind"), "Volume");
    EXPECT_EQ(deps->get("labels")->items[0].text, "sample-ready");
    ASSERT_EQ(deps->get("constraints")->items.size(), 1u);
    const io::Node& c = deps->get("constraints")->items[0];
    EXPECT_EQ(text_of(c, "failureMessage"), "needs a certified storage operator");
    EXPECT_EQ(text_of(c, "summary"), "all(package storage >=1.2.0; cel: properties.exists(p, "
                                     "p.type == \"certified\"))");
    EXPECT_TRUE(c.get("value")->is_map());
    EXPECT_TRUE(deps->get("other")->items.empty());

    const auto& props = d.get("properties")->items;
    ASSERT_EQ(props.size(), 2u);
    EXPECT_EQ(text_of(props[0], "source"), "properties.yaml");
    EXPECT_EQ(text_of(props[1], "type"), "example.com/tier");
    EXPECT_EQ(text_of(props[1], "source"), "olm.properties");

    const auto& deployments = d.get("deployments")->items;
    ASSERT_EQ(deployments.size(), 1u);
    const auto& containers = deployments[0].get("containers")->items;
    ASSERT_EQ(containers.size(), 3u);
    EXPECT_EQ(text_of(containers[2], "image"), "registry.example.com/sample/migrate:v2.1.0");
    EXPECT_EQ(containers[2].get("init")->as_bool(), true);
    EXPECT_EQ(d.get("relatedImages")->items.size(), 2u);
    EXPECT_TRUE(d.get("findings")->items.empty());
}

TEST(BundleInspect, SampleText) {
    auto r = bundle::inspect_dir(testdata("bundles/sample-operator"));
    ASSERT_TRUE(r.ok()) << r.error().str();
    const std::string t = bundle::inspect_text(r->doc);
    for (const char* line : {
             "Package:          sample\n",
             "Channels:         stable, fast\n",
             "Default channel:  stable\n",
             "CSV:              sample.v2.1.0\n",
             "Skip range:       >=2.0.0 <2.1.0\n",
             "Install modes:    OwnNamespace, SingleNamespace, AllNamespaces (not supported: "
             "MultiNamespace)\n",
             "\nOwned APIs (2)\n",
             "  Gadget         v1        sample.example.com          CRD         "
             "gadgets.sample.example.com\n",
             "\nRequired APIs (2)\n",
             "\nDependencies (4)\n",
             "  package     storage >=1.2.0 <2.0.0\n",
             "              failure message: needs a certified storage operator\n",
             "  olm.maxOpenShiftVersion  \"4.16\"            properties.yaml\n",
             "\nDeployments (1)\n  sample-operator\n",
             "    migrate (init)  registry.example.com/sample/migrate:v2.1.0\n",
             "\nRelated images (2)\n",
         })
        EXPECT_TRUE(contains(t, line)) << "missing: " << line << "\nin:\n" << t;
}

TEST(BundleInspect, MissingCsvIsAnError) {
    auto r = bundle::inspect_dir(testdata("bundles/load-empty-manifests"));
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_EQ(r->findings.size(), 1u);
    EXPECT_EQ(r->findings[0].rule, "csv.missing");
    EXPECT_TRUE(r->has_errors());
    EXPECT_EQ(text_of(r->doc, "csv"), "");
    EXPECT_EQ(text_of(r->doc, "package"), "demo");
    EXPECT_EQ(r->doc.get("findings")->items.size(), 1u);
    // The text still renders, with dashes and "none".
    const std::string t = bundle::inspect_text(r->doc);
    EXPECT_TRUE(contains(t, "CSV:              -\n")) << t;
    EXPECT_TRUE(contains(t, "Install modes:    none declared\n")) << t;
    EXPECT_TRUE(contains(t, "Deployments: none\n")) << t;
}

TEST(BundleInspect, HardFailuresPassThrough) {
    auto missing = bundle::inspect_dir(testdata("bundles/load-no-manifests"));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ExitCode::invalid);
    auto file = bundle::inspect_dir(testdata("bundles/load-not-a-directory"));
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.error().code, ExitCode::error);
}

TEST(BundleInspect, ConstraintSummaries) {
    auto one = [](const std::string& yaml) {
        auto docs = io::parse_yaml(yaml, "c.yaml");
        EXPECT_TRUE(docs.ok());
        return bundle::constraint_summary((*docs)[0].root);
    };
    EXPECT_EQ(one("gvk: {group: example.com, version: v1, kind: Thing}"),
              "gvk example.com/v1 Thing");
    EXPECT_EQ(one("package: {packageName: etcd, versionRange: '>=0.9.0'}"), "package etcd >=0.9.0");
    EXPECT_EQ(one("failureMessage: x\ncel: {rule: 'true'}"), "cel: true");
    EXPECT_EQ(one("any:\n  constraints:\n    - gvk: {group: a, version: v1, kind: A}\n"
                  "    - not: {constraints: [{package: {packageName: b}}]}\n"),
              "any(gvk a/v1 A; not(package b))");
    EXPECT_EQ(one("weird: 1"), "?weird");
    EXPECT_EQ(one("failureMessage: only"), "?");
    EXPECT_EQ(one("[1, 2]"), "[1,2]");
}

TEST(BundleInspect, CorpusEtcdLibrary) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto r = bundle::inspect_dir(corpus / "olm/bundles/etcd.0.9.2");
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_FALSE(r->has_errors());
    const io::Node& d = r->doc;
    EXPECT_EQ(text_of(d, "csv"), "etcdoperator.v0.9.2");
    EXPECT_EQ(d.get("owned")->items.size(), 3u);
    ASSERT_EQ(d.get("required")->items.size(), 1u);
    EXPECT_EQ(text_of(d.get("required")->items[0], "group"), "etcd.database.coreos.com");
    const io::Node* deps = d.get("dependencies");
    ASSERT_EQ(deps->get("constraints")->items.size(), 1u);
    EXPECT_EQ(text_of(deps->get("constraints")->items[0], "summary"),
              "cel: properties.exists(p, p.type == \"certified\")");
    EXPECT_EQ(text_of(deps->get("constraints")->items[0], "failureMessage"),
              "require to have \"certified\"");
    EXPECT_TRUE(d.get("installModes")->items.empty());
}

// ---- the command ----------------------------------------------------------------------------

TEST(BundleInspectCli, SampleText) {
    const std::string dir = testdata("bundles/sample-operator").string();
    auto r = run_kpkg({"bundle", "inspect", dir});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_TRUE(contains(r.out, "Bundle:           " + dir + "\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "Version:          2.1.0\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "\nOwned APIs (2)\n")) << r.out;
}

TEST(BundleInspectCli, SampleJsonAndYamlAgree) {
    const std::string dir = testdata("bundles/sample-operator").string();
    auto j = run_kpkg({"bundle", "inspect", "-o", "json", dir});
    ASSERT_EQ(j.exit_code, 0) << j.err;
    auto y = run_kpkg({"-o", "yaml", "bundle", "inspect", dir});
    ASSERT_EQ(y.exit_code, 0) << y.err;
    io::Node jd = parse_one(j.out, true);
    io::Node yd = parse_one(y.out, false);
    EXPECT_EQ(keys_of(jd), top_keys);
    EXPECT_TRUE(jd == yd);
    EXPECT_EQ(text_of(jd, "csv"), "sample.v2.1.0");
    EXPECT_EQ(text_of(jd, "dir"), dir);
    // The same document as the library makes.
    auto lib = bundle::inspect_dir(dir);
    ASSERT_TRUE(lib.ok());
    EXPECT_TRUE(jd == lib->doc);
}

TEST(BundleInspectCli, CorpusBundles) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto t = run_kpkg({"bundle", "inspect", (corpus / "olm/bundles/etcd.0.9.2").string()});
    EXPECT_EQ(t.exit_code, 0) << t.err;
    EXPECT_TRUE(contains(t.out, "Package:          etcd\n")) << t.out;
    EXPECT_TRUE(contains(t.out, "Channels:         alpha, stable\n")) << t.out;
    EXPECT_TRUE(contains(t.out, "Replaces:         etcdoperator.v0.9.0\n")) << t.out;
    EXPECT_TRUE(contains(t.out, "    etcd-backup-operator   quay.io/coreos/etcd-operator@sha256:"))
        << t.out;

    auto j = run_kpkg(
        {"bundle", "inspect", "-o", "json", (corpus / "olm/bundles/foo-bundle-v0.2.0").string()});
    ASSERT_EQ(j.exit_code, 0) << j.err;
    io::Node d = parse_one(j.out, true);
    EXPECT_EQ(text_of(d, "package"), "foo");
    EXPECT_EQ(text_of(d, "skipRange"), "<0.2.0");
    const io::Node* pkgs = d.get("dependencies")->get("packages");
    ASSERT_EQ(pkgs->items.size(), 1u);
    EXPECT_EQ(text_of(pkgs->items[0], "packageName"), "bar");
    EXPECT_EQ(text_of(pkgs->items[0], "versionRange"), "<0.1.0");
    ASSERT_EQ(d.get("deployments")->items.size(), 2u);
    EXPECT_EQ(d.get("relatedImages")->items.size(), 2u);
}

TEST(BundleInspectCli, ErrorsPrintTheDataAndExit3) {
    const std::string dir = testdata("bundles/load-bad-yaml").string();
    auto r = run_kpkg({"bundle", "inspect", dir});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "kpkg: error: " + dir +
                                    "/manifests/broken.configmap.yaml:7:2: "
                                    "does not parse"))
        << r.err;
    EXPECT_TRUE(contains(r.out, "CSV:              demo.v1.0.0\n")) << r.out;

    auto j = run_kpkg({"bundle", "inspect", "-o", "json", dir});
    EXPECT_EQ(j.exit_code, 3);
    io::Node d = parse_one(j.out, true);
    ASSERT_EQ(d.get("findings")->items.size(), 2u);
    const io::Node& f = d.get("findings")->items[0];
    EXPECT_EQ(text_of(f, "severity"), "error");
    EXPECT_EQ(text_of(f, "rule"), "load.parse");
    EXPECT_EQ(text_of(f, "line"), "7");
    EXPECT_EQ(text_of(f, "column"), "2");
}

TEST(BundleInspectCli, NoCsvExits3) {
    auto r = run_kpkg({"bundle", "inspect", testdata("bundles/load-empty-manifests").string()});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "no ClusterServiceVersion")) << r.err;
    EXPECT_TRUE(contains(r.out, "Package:          demo\n")) << r.out;
}

TEST(BundleInspectCli, WarningsAloneExit0) {
    test::TempDir d;
    d.write("b/manifests/csv.yaml", "apiVersion: operators.coreos.com/v1alpha1\n"
                                    "kind: ClusterServiceVersion\nmetadata:\n  name: a.v1.0.0\n"
                                    "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n");
    auto r = run_kpkg({"bundle", "inspect", (d / "b").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "kpkg: warning: "));
    EXPECT_TRUE(contains(r.err, "csv.yaml:6:1: more than one document")) << r.err;
    auto q = run_kpkg({"-q", "bundle", "inspect", (d / "b").string()});
    EXPECT_EQ(q.exit_code, 0);
    EXPECT_EQ(q.err, "");
}

TEST(BundleInspectCli, HardFailures) {
    auto none = run_kpkg({"bundle", "inspect", testdata("bundles/load-no-manifests").string()});
    EXPECT_EQ(none.exit_code, 3);
    EXPECT_EQ(none.out, "");
    EXPECT_TRUE(contains(none.err, "no manifests/ directory")) << none.err;

    auto file = run_kpkg({"bundle", "inspect", testdata("bundles/load-not-a-directory").string()});
    EXPECT_EQ(file.exit_code, 1);
    EXPECT_TRUE(contains(file.err, "is not a directory")) << file.err;

    auto missing = run_kpkg({"bundle", "inspect", "/nonexistent/kpkg-bundle"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_TRUE(contains(missing.err, "no such file or directory")) << missing.err;

    auto usage = run_kpkg({"bundle", "inspect"});
    EXPECT_EQ(usage.exit_code, 2);
}
