#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/io/tree.hpp"
#include "support/support.hpp"

using namespace kpkg;
using bundle::Finding;
using bundle::Severity;
using test::contains;
using test::testdata;
namespace fs = std::filesystem;

namespace {

std::string dump(const std::vector<Finding>& fs) {
    std::string s;
    for (const auto& f : fs)
        s += "  " + f.pos.str() + ": " + f.rule + ": " + f.message + "\n";
    return s;
}

const Finding* find_rule(const std::vector<Finding>& fs, const std::string& rule,
                         std::size_t nth = 0) {
    for (const auto& f : fs)
        if (f.rule == rule && nth-- == 0) return &f;
    return nullptr;
}

// The finding whose file ends with `file_suffix` at line:col.
const Finding* find_at(const std::vector<Finding>& fs, const std::string& file_suffix,
                       std::uint32_t line, std::uint32_t col) {
    for (const auto& f : fs) {
        const std::string& p = f.pos.file;
        if (p.size() >= file_suffix.size() &&
            p.compare(p.size() - file_suffix.size(), file_suffix.size(), file_suffix) == 0 &&
            f.pos.line == line && f.pos.column == col)
            return &f;
    }
    return nullptr;
}

const std::string annotations_yaml =
    "annotations:\n"
    "  operators.operatorframework.io.bundle.package.v1: demo\n"
    "  operators.operatorframework.io.bundle.channels.v1: stable\n";

const std::string csv_yaml = "apiVersion: operators.coreos.com/v1alpha1\n"
                             "kind: ClusterServiceVersion\n"
                             "metadata:\n"
                             "  name: demo.v1.0.0\n"
                             "spec:\n"
                             "  version: 1.0.0\n";

} // namespace

// ---- the corpus bundles ---------------------------------------------------------------------

TEST(BundleLoad, CorpusEtcd) {
    KPKG_REQUIRE_CORPUS(corpus);
    const fs::path dir = corpus / "olm/bundles/etcd.0.9.2";
    auto r = bundle::load(dir);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_TRUE(r->findings.empty()) << dump(r->findings);
    const auto& b = r->bundle;
    EXPECT_EQ(b.annotations.package, "etcd");
    EXPECT_EQ(b.annotations.channels, (std::vector<std::string>{"alpha", "stable"}));
    EXPECT_EQ(b.annotations.default_channel, "alpha");
    EXPECT_EQ(b.annotations.file, (dir / "metadata/annotations.yaml").string());
    EXPECT_EQ(b.annotations.labels.size(), 3u);

    // File name order: etcdbackup, etcdcluster, etcdoperator (CSV), etcdrestore.
    ASSERT_EQ(b.manifests.size(), 4u);
    EXPECT_EQ(b.manifests[0].name, "etcdbackups.etcd.database.coreos.com");
    EXPECT_EQ(b.manifests[2].kind, "ClusterServiceVersion");
    EXPECT_EQ(b.manifests[2].file,
              (dir / "manifests/etcdoperator.v0.9.2.clusterserviceversion.yaml").string());
    // The first line is a "#!" comment, so the object starts on line 2.
    EXPECT_EQ(b.manifests[2].pos.line, 2u);

    ASSERT_TRUE(b.csv.has_value());
    const auto& c = *b.csv;
    EXPECT_EQ(c.manifest, 2u);
    EXPECT_EQ(c.name, "etcdoperator.v0.9.2");
    EXPECT_EQ(c.version, "0.9.2");
    EXPECT_EQ(c.replaces, "etcdoperator.v0.9.0");
    EXPECT_EQ(c.skips, (std::vector<std::string>{"etcdoperator.v0.9.1"}));
    EXPECT_EQ(c.skip_range, "");
    EXPECT_FALSE(c.has_install_modes);
    EXPECT_EQ(c.install_strategy, "deployment");
    EXPECT_EQ(c.annotations.count("alm-examples"), 1u);
    EXPECT_EQ(c.annotations.at("tectonic-visibility"), "ocs");

    ASSERT_EQ(b.crds.size(), 3u);
    for (const auto& crd : b.crds) {
        EXPECT_EQ(crd.group, "etcd.database.coreos.com");
        EXPECT_EQ(crd.versions, (std::vector<std::string>{"v1beta2"})); // v1beta1 spec.version
    }
    EXPECT_EQ(b.crds[1].kind, "EtcdCluster");
    EXPECT_EQ(b.crds[1].plural, "etcdclusters");

    ASSERT_EQ(c.owned_crds.size(), 3u);
    EXPECT_EQ(c.owned_crds[0].name, "etcdclusters.etcd.database.coreos.com");
    EXPECT_EQ(c.owned_crds[0].pos.line, 185u);
    EXPECT_EQ(c.owned_crds[2].kind, "EtcdRestore");
    ASSERT_EQ(c.required_crds.size(), 1u);
    EXPECT_EQ(c.required_crds[0].kind, "EtcdCluster");
    EXPECT_EQ(c.required_crds[0].version, "v1beta2");
    EXPECT_EQ(c.required_crds[0].pos.line, 168u);
    EXPECT_EQ(c.required_crds[0].pos.column, 9u);

    ASSERT_EQ(c.deployments.size(), 1u);
    EXPECT_EQ(c.deployments[0].name, "etcd-operator");
    ASSERT_EQ(c.deployments[0].containers.size(), 3u);
    EXPECT_EQ(c.deployments[0].containers[1].name, "etcd-backup-operator");
    for (const auto& ci : c.deployments[0].containers)
        EXPECT_EQ(ci.image, "quay.io/coreos/etcd-operator@sha256:"
                            "c0301e4686c3ed4206e370b42de5a3bd2229b9fb4906cf85f3f30650424abec2");
    EXPECT_TRUE(c.related_images.empty());

    ASSERT_EQ(b.dependencies.size(), 2u);
    EXPECT_EQ(b.dependencies[0].type, "olm.gvk");
    EXPECT_EQ(b.dependencies[0].value.get("group")->text, "testapi.coreos.com");
    EXPECT_EQ(b.dependencies[1].type, "olm.constraint");
    EXPECT_EQ(b.dependencies[1].value.get("failureMessage")->text, "require to have \"certified\"");
    EXPECT_EQ(b.dependencies[1].pos.line, 7u);
    EXPECT_EQ(b.dependencies_file, (dir / "metadata/dependencies.yaml").string());
    EXPECT_TRUE(b.properties.empty());
    EXPECT_TRUE(b.csv_properties.empty());
}

TEST(BundleLoad, CorpusKiali) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto r = bundle::load(corpus / "olm/bundles/kiali.1.4.2");
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_TRUE(r->findings.empty()) << dump(r->findings);
    const auto& b = r->bundle;
    EXPECT_EQ(b.annotations.package, "kiali-operator.v1.4.2");
    EXPECT_EQ(b.annotations.channels, (std::vector<std::string>{"alpha", "stable"}));
    EXPECT_EQ(b.annotations.default_channel, "stable");
    EXPECT_EQ(b.annotations.labels.size(), 6u);
    EXPECT_EQ(b.annotations.labels.at(bundle::label_manifests), "/manifests/");
    EXPECT_EQ(b.annotations.positions.at(bundle::label_package).line, 5u);

    ASSERT_TRUE(b.csv.has_value());
    const auto& c = *b.csv;
    EXPECT_EQ(c.name, "kiali-operator.v1.4.2");
    EXPECT_EQ(c.version, "1.4.2");
    EXPECT_EQ(c.replaces, "kiali-operator.v1.3.1");
    EXPECT_TRUE(c.skips.empty());
    // An unquoted timestamp stays a string (YAML 1.2 has no timestamp type).
    EXPECT_EQ(c.annotations.at("createdAt"), "2019-09-12T00:00:00Z");
    ASSERT_TRUE(c.has_install_modes);
    ASSERT_EQ(c.install_modes.size(), 4u);
    EXPECT_EQ(c.install_modes[2], (std::pair<std::string, bool>{"MultiNamespace", false}));
    EXPECT_EQ(c.install_modes[3], (std::pair<std::string, bool>{"AllNamespaces", true}));
    EXPECT_TRUE(c.owned_apiservices.empty());

    ASSERT_EQ(b.crds.size(), 2u);
    EXPECT_EQ(b.crds[0].name, "kialis.kiali.io");
    // spec.version and spec.versions both name v1alpha1: listed once.
    EXPECT_EQ(b.crds[0].versions, (std::vector<std::string>{"v1alpha1"}));
    EXPECT_EQ(b.crds[1].group, "monitoring.kiali.io");
    EXPECT_EQ(b.crds[1].versions, (std::vector<std::string>{"v1alpha1"}));
    ASSERT_EQ(c.owned_crds.size(), 2u);
    EXPECT_EQ(c.owned_crds[1].kind, "MonitoringDashboard");
    EXPECT_TRUE(c.required_crds.empty());

    ASSERT_EQ(c.deployments.size(), 1u);
    EXPECT_EQ(c.deployments[0].name, "kiali-operator");
    ASSERT_EQ(c.deployments[0].containers.size(), 2u);
    EXPECT_EQ(c.deployments[0].containers[0].name, "ansible");
    EXPECT_EQ(c.deployments[0].containers[1].name, "operator");
    EXPECT_EQ(c.deployments[0].containers[1].image, "quay.io/kiali/kiali-operator:v1.4.2");
    EXPECT_TRUE(b.dependencies.empty());
    EXPECT_EQ(b.dependencies_file, "");
}

TEST(BundleLoad, CorpusFoo) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto r = bundle::load(corpus / "olm/bundles/foo-bundle-v0.2.0");
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_TRUE(r->findings.empty()) << dump(r->findings);
    const auto& b = r->bundle;
    EXPECT_EQ(b.annotations.package, "foo");
    EXPECT_EQ(b.annotations.channels, (std::vector<std::string>{"beta", "stable"}));
    EXPECT_EQ(b.annotations.default_channel, "beta");

    ASSERT_EQ(b.manifests.size(), 2u); // bundle.Dockerfile beside manifests/ is not read
    ASSERT_TRUE(b.csv.has_value());
    const auto& c = *b.csv;
    EXPECT_EQ(c.name, "foo.v0.2.0");
    EXPECT_EQ(c.version, "0.2.0");
    EXPECT_EQ(c.replaces, "foo.v0.1.0");
    EXPECT_EQ(c.skips, (std::vector<std::string>{"foo.v0.1.1", "foo.v0.1.2"}));
    EXPECT_EQ(c.skip_range, "<0.2.0");
    EXPECT_EQ(c.annotations.size(), 1u);

    ASSERT_EQ(b.crds.size(), 1u);
    EXPECT_EQ(b.crds[0].name, "foos.test.foo");
    EXPECT_EQ(b.crds[0].group, "test.foo");
    EXPECT_EQ(b.crds[0].versions, (std::vector<std::string>{"v1"}));
    ASSERT_EQ(c.owned_crds.size(), 1u);
    EXPECT_EQ(c.owned_crds[0].kind, "Foo");

    ASSERT_EQ(c.deployments.size(), 2u);
    const auto& d0 = c.deployments[0];
    EXPECT_EQ(d0.name, "foo-operator");
    ASSERT_EQ(d0.containers.size(), 2u);
    EXPECT_EQ(d0.containers[0].image, "test.registry/foo-operator/foo:v0.2.0");
    EXPECT_FALSE(d0.containers[0].init);
    EXPECT_EQ(d0.containers[0].name, "");
    EXPECT_EQ(d0.containers[1].image, "test.registry/foo-operator/foo-init:v0.2.0");
    EXPECT_TRUE(d0.containers[1].init);
    EXPECT_EQ(c.deployments[1].containers[0].image, "test.registry/foo-operator/foo-2:v0.2.0");

    ASSERT_EQ(c.related_images.size(), 2u);
    EXPECT_EQ(c.related_images[0].name, "operator");
    EXPECT_EQ(c.related_images[1].image, "test.registry/foo-operator/foo-other:v0.2.0");

    ASSERT_EQ(b.dependencies.size(), 2u);
    EXPECT_EQ(b.dependencies[0].type, "olm.package");
    EXPECT_EQ(b.dependencies[0].value.get("packageName")->text, "bar");
    EXPECT_EQ(b.dependencies[0].value.get("version")->text, "<0.1.0");
    EXPECT_EQ(b.dependencies[1].type, "olm.gvk");
    EXPECT_EQ(b.dependencies[1].value.get("kind")->text, "Bar");
}

TEST(BundleLoad, CorpusPrometheus) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto r = bundle::load(corpus / "olm/bundles/prometheus.0.22.2");
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_TRUE(r->findings.empty()) << dump(r->findings);
    const auto& b = r->bundle;
    EXPECT_EQ(b.annotations.package, "prometheus");
    EXPECT_EQ(b.annotations.channels, (std::vector<std::string>{"preview"}));
    EXPECT_EQ(b.annotations.default_channel, "preview");

    // "prometheus.crd.yaml" sorts before "prometheusoperator..." ('.' < 'o').
    ASSERT_EQ(b.manifests.size(), 5u);
    EXPECT_EQ(b.manifests[1].name, "prometheuses.monitoring.coreos.com");
    EXPECT_EQ(b.manifests[2].kind, "ClusterServiceVersion");

    ASSERT_TRUE(b.csv.has_value());
    const auto& c = *b.csv;
    EXPECT_EQ(c.name, "prometheusoperator.0.22.2");
    EXPECT_EQ(c.version, "0.22.2");
    EXPECT_EQ(c.replaces, "prometheusoperator.0.15.0");
    EXPECT_FALSE(c.has_install_modes);

    ASSERT_EQ(b.crds.size(), 4u);
    std::vector<std::string> kinds;
    for (const auto& crd : b.crds) {
        EXPECT_EQ(crd.versions, (std::vector<std::string>{"v1"}));
        EXPECT_EQ(crd.group, "monitoring.coreos.com");
        kinds.push_back(crd.kind);
    }
    EXPECT_EQ(kinds, (std::vector<std::string>{"Alertmanager", "Prometheus", "PrometheusRule",
                                               "ServiceMonitor"}));
    ASSERT_EQ(c.owned_crds.size(), 4u);
    EXPECT_EQ(c.owned_crds[0].name, "prometheuses.monitoring.coreos.com");
    EXPECT_TRUE(c.required_crds.empty());

    ASSERT_EQ(c.deployments.size(), 1u);
    ASSERT_EQ(c.deployments[0].containers.size(), 1u);
    EXPECT_EQ(c.deployments[0].containers[0].image,
              "quay.io/coreos/prometheus-operator@sha256:"
              "3daa69a8c6c2f1d35dcf1fe48a7cd8b230e55f5229a1ded438f687debade5bcf");

    ASSERT_EQ(b.dependencies.size(), 2u);
    EXPECT_EQ(b.dependencies[0].value.get("packageName")->text, "testoperator");
    EXPECT_EQ(b.dependencies[0].value.get("version")->text, "> 0.2.0");
    EXPECT_EQ(b.dependencies[1].value.get("kind")->text, "testtestprometheus");
}

// ---- the sample bundle ----------------------------------------------------------------------

TEST(BundleLoad, SampleBundleEveryField) {
    const fs::path dir = testdata("bundles/sample-operator");
    auto r = bundle::load(dir);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_TRUE(r->findings.empty()) << dump(r->findings);
    const auto& b = r->bundle;
    EXPECT_EQ(b.dir, dir);
    EXPECT_EQ(b.annotations.package, "sample");
    // "stable, fast": split on ',' and trimmed.
    EXPECT_EQ(b.annotations.channels, (std::vector<std::string>{"stable", "fast"}));
    EXPECT_EQ(b.annotations.labels.at(bundle::label_channels), "stable, fast");

    ASSERT_TRUE(b.csv.has_value());
    const auto& c = *b.csv;
    EXPECT_EQ(c.name, "sample.v2.1.0");
    EXPECT_EQ(c.version, "2.1.0");
    EXPECT_EQ(c.replaces, "sample.v2.0.0");
    EXPECT_EQ(c.skips, (std::vector<std::string>{"sample.v2.0.1", "sample.v2.0.2"}));
    EXPECT_EQ(c.skip_range, ">=2.0.0 <2.1.0");
    EXPECT_EQ(c.min_kube_version, "1.27.0");
    EXPECT_EQ(c.install_modes.size(), 4u);
    EXPECT_EQ(c.annotations.size(), 4u);
    EXPECT_EQ(c.annotations.at("capabilities"), "Basic Install");

    ASSERT_EQ(c.owned_apiservices.size(), 1u);
    EXPECT_EQ(c.owned_apiservices[0].group, "metrics.sample.example.com");
    EXPECT_EQ(c.owned_apiservices[0].kind, "GadgetMetrics");
    EXPECT_EQ(c.owned_apiservices[0].name, "gadgetmetrics");
    ASSERT_EQ(c.required_apiservices.size(), 1u);
    EXPECT_EQ(c.required_apiservices[0].version, "v1beta1");
    EXPECT_EQ(c.required_apiservices[0].pos.line, 47u);
    ASSERT_EQ(c.required_crds.size(), 1u);
    EXPECT_EQ(c.required_crds[0].name, "volumes.storage.example.com");

    ASSERT_EQ(b.crds.size(), 1u);
    EXPECT_EQ(b.crds[0].versions, (std::vector<std::string>{"v1", "v1beta1"}));

    ASSERT_EQ(c.deployments.size(), 1u);
    const auto& cs = c.deployments[0].containers;
    ASSERT_EQ(cs.size(), 3u);
    EXPECT_EQ(cs[0].name, "manager");
    EXPECT_EQ(cs[1].name, "proxy");
    EXPECT_EQ(cs[2].name, "migrate");
    EXPECT_TRUE(cs[2].init);
    ASSERT_EQ(c.related_images.size(), 2u);
    EXPECT_EQ(c.related_images[1].name, "gadget-agent");

    ASSERT_EQ(b.dependencies.size(), 4u);
    EXPECT_EQ(b.dependencies[3].type, "olm.constraint");
    ASSERT_EQ(b.properties.size(), 1u);
    EXPECT_EQ(b.properties[0].type, "olm.maxOpenShiftVersion");
    EXPECT_EQ(b.properties[0].value.text, "4.16");
    EXPECT_EQ(b.properties_file, (dir / "metadata/properties.yaml").string());

    // olm.properties: the entries of the JSON list, positioned at the annotation's value.
    ASSERT_EQ(b.csv_properties.size(), 1u);
    EXPECT_EQ(b.csv_properties[0].type, "example.com/tier");
    EXPECT_EQ(b.csv_properties[0].value.get("level")->text, "gold");
    EXPECT_EQ(b.csv_properties[0].pos.file,
              (dir / "manifests/sample.v2.1.0.clusterserviceversion.yaml").string());
    EXPECT_EQ(b.csv_properties[0].pos.line, 7u);
    EXPECT_EQ(b.csv_properties[0].pos.column, 21u);
}

TEST(BundleLoad, PositionsUseThePathAsGiven) {
    test::TempDir d;
    d.write("b/manifests/x.csv.yaml", csv_yaml);
    d.write("b/metadata/annotations.yaml", annotations_yaml);
    const fs::path old = fs::current_path();
    fs::current_path(d.path());
    auto r = bundle::load("b");
    auto r2 = bundle::load("b/");
    fs::current_path(old);
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_EQ(r->bundle.manifests.size(), 1u);
    EXPECT_EQ(r->bundle.manifests[0].file, "b/manifests/x.csv.yaml");
    EXPECT_EQ(r->bundle.manifests[0].pos.str(), "b/manifests/x.csv.yaml:1:1");
    EXPECT_EQ(r->bundle.annotations.file, "b/metadata/annotations.yaml");
    EXPECT_EQ(r->bundle.annotations.positions.at(bundle::label_package).str(),
              "b/metadata/annotations.yaml:2:53");
    ASSERT_TRUE(r2.ok());
    EXPECT_EQ(r2->bundle.manifests[0].file, "b/manifests/x.csv.yaml");
}

// ---- hard failures --------------------------------------------------------------------------

TEST(BundleLoad, MissingDirectoryIsAnIoError) {
    auto r = bundle::load(testdata("bundles/load-does-not-exist"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::error);
    EXPECT_TRUE(contains(r.error().message, "load-does-not-exist")) << r.error().message;
    EXPECT_TRUE(contains(r.error().message, "no such file or directory")) << r.error().message;
}

TEST(BundleLoad, NotADirectoryIsAnIoError) {
    auto r = bundle::load(testdata("bundles/load-not-a-directory"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::error);
    EXPECT_TRUE(contains(r.error().message, "is not a directory")) << r.error().message;
}

TEST(BundleLoad, NoManifestsDirectoryIsInvalid) {
    const fs::path dir = testdata("bundles/load-no-manifests");
    auto r = bundle::load(dir);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(r.error().pos.file, dir.string());
    EXPECT_TRUE(contains(r.error().message, "no manifests/ directory")) << r.error().message;
    EXPECT_TRUE(contains(r.error().message, "ClusterServiceVersion")) << r.error().message;
    EXPECT_TRUE(contains(r.error().message, "annotations.yaml")) << r.error().message;
}

TEST(BundleLoad, ManifestsThatIsAFileIsInvalid) {
    test::TempDir d;
    d.write("b/manifests", "not a directory\n");
    auto r = bundle::load(d / "b");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
}

// ---- bad input becomes findings -------------------------------------------------------------

TEST(BundleLoad, UnparsableFilesAreFindingsWithPositions) {
    auto r = bundle::load(testdata("bundles/load-bad-yaml"));
    ASSERT_TRUE(r.ok()) << r.error().str();
    const auto& fs = r->findings;
    ASSERT_EQ(fs.size(), 2u) << dump(fs);
    const Finding* yaml = find_at(fs, "load-bad-yaml/manifests/broken.configmap.yaml", 7, 2);
    ASSERT_NE(yaml, nullptr) << dump(fs);
    EXPECT_EQ(yaml->severity, Severity::error);
    EXPECT_EQ(yaml->rule, "load.parse");
    EXPECT_TRUE(contains(yaml->message, "does not parse")) << yaml->message;
    EXPECT_TRUE(contains(yaml->pos.str(), "broken.configmap.yaml:7:2"));
    const Finding* json =
        find_at(fs, "load-bad-yaml/manifests/trailing-comma.configmap.json", 2, 29);
    ASSERT_NE(json, nullptr) << dump(fs);
    EXPECT_TRUE(contains(json->message, "trailing comma")) << json->message;
    // Loading went on: the CSV (between the two broken files) is there.
    ASSERT_TRUE(r->bundle.csv.has_value());
    EXPECT_EQ(r->bundle.csv->name, "demo.v1.0.0");
    EXPECT_EQ(r->bundle.manifests.size(), 1u);
    EXPECT_EQ(r->bundle.annotations.package, "demo");
}

TEST(BundleLoad, CsvThatIsAList) {
    auto r = bundle::load(testdata("bundles/load-csv-list"));
    ASSERT_TRUE(r.ok()) << r.error().str();
    const auto& fs = r->findings;
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].severity, Severity::error);
    EXPECT_EQ(fs[0].rule, "load.type");
    EXPECT_EQ(fs[0].pos.line, 1u);
    EXPECT_EQ(fs[0].pos.column, 1u);
    EXPECT_TRUE(contains(fs[0].pos.file, "manifests/demo.clusterserviceversion.yaml"));
    EXPECT_TRUE(contains(fs[0].message, "must be a Kubernetes object")) << fs[0].message;
    EXPECT_TRUE(contains(fs[0].message, "not a list")) << fs[0].message;
    EXPECT_FALSE(r->bundle.csv.has_value());
    EXPECT_TRUE(r->bundle.manifests.empty());
}

TEST(BundleLoad, WrongTypesAreReportedWhereTheyAre) {
    auto r = bundle::load(testdata("bundles/load-wrong-types"));
    ASSERT_TRUE(r.ok()) << r.error().str();
    const auto& fs = r->findings;
    const std::string csv = "manifests/demo.v1.0.0.clusterserviceversion.yaml";
    struct Want {
        std::string file;
        std::uint32_t line, col;
        std::string text;
    };
    const std::vector<Want> wants = {
        {csv, 7, 21, "annotation olm.properties is not valid JSON"},
        {csv, 8, 16, "metadata.annotations[\"certified\"] must be a string, not a boolean"},
        {csv, 10, 12, "spec.version must be a string, not a number; quote it (\"1.0\")"},
        {csv, 12, 10, "spec.skips must be a list of strings, not a string"},
        {csv, 15, 18, "spec.installModes[0].supported must be true or false, not a string"},
        {csv, 16, 7, "spec.installModes[1] must be an object"},
        {csv, 19, 9, "spec.customresourcedefinitions.owned[0] must be an object"},
        {csv, 23, 15, "spec.customresourcedefinitions.required must be a list, not an object"},
        {csv, 34, 28, "containers[0].image must be a string, not an integer"},
        {csv, 35, 33, "spec.template.spec.initContainers must be a list, not a string"},
        {csv, 37, 5, "spec.relatedImages must be a list, not an object"},
        {"metadata/annotations.yaml", 3, 54, "must be a string, not a list"},
        {"metadata/dependencies.yaml", 6, 5, "dependencies[1] must be an object"},
        {"metadata/dependencies.yaml", 7, 11, "dependencies[2].type must be a string"},
        {"metadata/properties.yaml", 2, 3, "properties must be a list"},
    };
    EXPECT_EQ(fs.size(), wants.size()) << dump(fs);
    for (const auto& w : wants) {
        const Finding* f = find_at(fs, w.file, w.line, w.col);
        ASSERT_NE(f, nullptr) << w.file << ":" << w.line << ":" << w.col << "\n" << dump(fs);
        EXPECT_EQ(f->severity, Severity::error);
        EXPECT_TRUE(contains(f->message, w.text)) << f->message;
    }
    // The JSON error inside the annotation says where in the string it is.
    const Finding* props = find_rule(fs, "csv.olm-properties");
    ASSERT_NE(props, nullptr);
    EXPECT_TRUE(contains(props->message, "line 1, column 66")) << props->message;

    // Everything else was still read; wrong values count as absent.
    ASSERT_TRUE(r->bundle.csv.has_value());
    const auto& c = *r->bundle.csv;
    EXPECT_EQ(c.version, "");
    EXPECT_EQ(c.replaces, "demo.v0.9.0");
    EXPECT_EQ(c.skip_range, ">=0.9.0 <1.0.0");
    EXPECT_TRUE(c.skips.empty());
    EXPECT_EQ(c.annotations.count("certified"), 0u);
    ASSERT_EQ(c.install_modes.size(), 1u);
    EXPECT_FALSE(c.install_modes[0].second);
    ASSERT_EQ(c.owned_crds.size(), 1u);
    EXPECT_EQ(c.owned_crds[0].name, "gadgets.demo.example.com");
    ASSERT_EQ(c.deployments.size(), 1u);
    ASSERT_EQ(c.deployments[0].containers.size(), 1u);
    EXPECT_EQ(c.deployments[0].containers[0].image, "");
    EXPECT_TRUE(r->bundle.csv_properties.empty());
    EXPECT_EQ(r->bundle.annotations.package, "demo");
    EXPECT_TRUE(r->bundle.annotations.channels.empty());
    ASSERT_EQ(r->bundle.dependencies.size(), 1u);
    EXPECT_EQ(r->bundle.dependencies[0].type, "olm.package");
    EXPECT_TRUE(r->bundle.properties.empty());
}

TEST(BundleLoad, BinaryGarbageIsAParseFinding) {
    auto r = bundle::load(testdata("bundles/load-binary"));
    ASSERT_TRUE(r.ok()) << r.error().str();
    const auto& fs = r->findings;
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].rule, "load.parse");
    EXPECT_EQ(fs[0].severity, Severity::error);
    EXPECT_TRUE(contains(fs[0].pos.file, "load-binary/manifests/operator.bin"));
    EXPECT_EQ(fs[0].pos.line, 1u);
    EXPECT_EQ(fs[0].pos.column, 1u);
    ASSERT_TRUE(r->bundle.csv.has_value());
}

TEST(BundleLoad, EmptyManifestsDirectory) {
    // manifests/ holds only a hidden .gitkeep, which is not YAML: it is not read at all.
    auto r = bundle::load(testdata("bundles/load-empty-manifests"));
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_TRUE(r->findings.empty()) << dump(r->findings);
    EXPECT_TRUE(r->bundle.manifests.empty());
    EXPECT_FALSE(r->bundle.csv.has_value());
    EXPECT_EQ(r->bundle.annotations.package, "demo");
}

TEST(BundleLoad, TwoCsvsKeepTheFirst) {
    auto r = bundle::load(testdata("bundles/load-two-csvs"));
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_EQ(r->findings.size(), 1u) << dump(r->findings);
    const Finding& f = r->findings[0];
    EXPECT_EQ(f.rule, "csv.multiple");
    EXPECT_EQ(f.severity, Severity::error);
    EXPECT_TRUE(contains(f.pos.file, "manifests/b.clusterserviceversion.yaml"));
    EXPECT_EQ(f.pos.line, 1u);
    EXPECT_TRUE(contains(f.message, "more than one ClusterServiceVersion")) << f.message;
    EXPECT_TRUE(contains(f.message, "\"demo.v1.0.1\"")) << f.message;
    ASSERT_TRUE(r->bundle.csv.has_value());
    EXPECT_EQ(r->bundle.csv->name, "demo.v1.0.0");
    EXPECT_EQ(r->bundle.csv->manifest, 0u);
    EXPECT_EQ(r->bundle.manifests.size(), 2u);
}

TEST(BundleLoad, HiddenFilesAndSubdirectoriesAreNotRead) {
    // manifests/ has .broken.yaml (not YAML), .hidden.clusterserviceversion.yaml (a second
    // CSV) and extra/cm.yaml: none of them is read.
    auto r = bundle::load(testdata("bundles/load-hidden"));
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_TRUE(r->findings.empty()) << dump(r->findings);
    ASSERT_EQ(r->bundle.manifests.size(), 1u);
    ASSERT_TRUE(r->bundle.csv.has_value());
    EXPECT_EQ(r->bundle.csv->name, "demo.v1.0.0");
}

TEST(BundleLoad, EveryDocumentIsKeptWithAWarning) {
    io::MemoryTree d("b"); // built in memory, shown as "b"
    d.add_file("manifests/a.csv.yaml", csv_yaml);
    d.add_file("manifests/objects.yaml",
               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n---\n"
               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n");
    d.add_file("metadata/annotations.yaml", annotations_yaml);
    auto r = bundle::load(d);
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_EQ(r->findings.size(), 1u) << dump(r->findings);
    const Finding& f = r->findings[0];
    EXPECT_EQ(f.severity, Severity::warning);
    EXPECT_EQ(f.rule, "manifests.multi-document");
    EXPECT_TRUE(contains(f.message, "more than one document in manifests/objects.yaml"))
        << f.message;
    EXPECT_TRUE(contains(f.message, "opm uses only the first")) << f.message;
    EXPECT_EQ(f.pos.line, 6u); // where the second document starts
    ASSERT_EQ(r->bundle.manifests.size(), 3u);
    EXPECT_EQ(r->bundle.manifests[1].name, "one");
    EXPECT_EQ(r->bundle.manifests[1].document, 0);
    EXPECT_EQ(r->bundle.manifests[2].name, "two");
    EXPECT_EQ(r->bundle.manifests[2].document, 1);
    EXPECT_EQ(r->bundle.manifests[2].pos.line, 6u);
    EXPECT_EQ(r->bundle.manifests[2].pos.document, 1);
}

TEST(BundleLoad, JsonManifestsAndEmptyFiles) {
    io::MemoryTree d("b"); // built in memory, shown as "b"
    d.add_file("manifests/csv.json",
               R"({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",)"
               "\n"
               R"( "metadata": {"name": "demo.v1.0.0"}, "spec": {"version": "1.0.0"}})");
    d.add_file("manifests/empty.yaml", "# nothing here\n");
    d.add_file("metadata/annotations.yaml", annotations_yaml);
    auto r = bundle::load(d);
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_TRUE(r->bundle.csv.has_value());
    EXPECT_EQ(r->bundle.csv->version, "1.0.0");
    ASSERT_EQ(r->findings.size(), 1u) << dump(r->findings);
    EXPECT_EQ(r->findings[0].severity, Severity::warning);
    EXPECT_TRUE(contains(r->findings[0].pos.file, "empty.yaml"));
}

TEST(BundleLoad, CrdOfAnUnknownApiVersionIsNotReadAsACrd) {
    io::MemoryTree d("b"); // built in memory, shown as "b"
    d.add_file("manifests/a.csv.yaml", csv_yaml);
    d.add_file("manifests/crd.yaml",
               "apiVersion: apiextensions.k8s.io/v2\nkind: CustomResourceDefinition\nmetadata:\n"
               "  name: things.example.com\nspec:\n  group: example.com\n");
    d.add_file("metadata/annotations.yaml", annotations_yaml);
    auto r = bundle::load(d);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_TRUE(r->bundle.crds.empty());
    ASSERT_EQ(r->findings.size(), 1u) << dump(r->findings);
    EXPECT_EQ(r->findings[0].severity, Severity::warning);
    EXPECT_TRUE(contains(r->findings[0].message, "apiextensions.k8s.io/v2"));
}

TEST(BundleLoad, MetadataFilesAreFoundByTheirKeys) {
    io::MemoryTree d("b"); // built in memory, shown as "b"
    d.add_file("manifests/a.csv.yaml", csv_yaml);
    // Not named annotations.yaml / dependencies.yaml: found by their top-level keys. As in opm,
    // hidden files count in metadata/, and an empty dependencies list does not claim the role.
    d.add_file("metadata/.labels.yaml",
               "annotations:\n"
               "  operators.operatorframework.io.bundle.package.v1: one\n");
    d.add_file("metadata/a-empty.yaml", "dependencies: []\n");
    d.add_file("metadata/labels.yaml", annotations_yaml);
    d.add_file("metadata/needs.yml", "dependencies:\n  - type: olm.label\n    value:\n"
                                     "      label: x\n");
    d.add_file("metadata/notes.txt", "just some words\n");
    auto r = bundle::load(d);
    ASSERT_TRUE(r.ok()) << r.error().str();
    const auto& b = r->bundle;
    EXPECT_EQ(b.annotations.file, "b/metadata/.labels.yaml");
    EXPECT_EQ(b.annotations.package, "one");
    EXPECT_EQ(b.dependencies_file, "b/metadata/needs.yml");
    ASSERT_EQ(b.dependencies.size(), 1u);
    EXPECT_EQ(b.dependencies[0].type, "olm.label");
    ASSERT_EQ(r->findings.size(), 1u) << dump(r->findings);
    EXPECT_EQ(r->findings[0].severity, Severity::warning);
    EXPECT_TRUE(contains(r->findings[0].pos.file, "metadata/labels.yaml"));
    EXPECT_TRUE(contains(r->findings[0].message, ".labels.yaml")) << r->findings[0].message;
}

TEST(BundleLoad, TypedEntriesWithoutTypeOrValueAreKept) {
    // The validator reports these; the loader keeps them as they are.
    io::MemoryTree d("b"); // built in memory, shown as "b"
    d.add_file("manifests/a.csv.yaml",
               "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n"
               "metadata:\n  name: demo.v1.0.0\n  annotations:\n"
               "    olm.properties: '[{\"value\": 1}, {\"type\": \"t\"}, 5]'\n");
    d.add_file("metadata/properties.yaml", "properties:\n  - type: example.com/empty\n");
    auto r = bundle::load(d);
    ASSERT_TRUE(r.ok()) << r.error().str();
    const auto& b = r->bundle;
    ASSERT_EQ(b.properties.size(), 1u);
    EXPECT_TRUE(b.properties[0].value.is_null());
    ASSERT_EQ(b.csv_properties.size(), 2u);
    EXPECT_EQ(b.csv_properties[0].type, "");
    EXPECT_EQ(b.csv_properties[1].type, "t");
    ASSERT_EQ(r->findings.size(), 1u) << dump(r->findings);
    EXPECT_EQ(r->findings[0].rule, "csv.olm-properties");
    EXPECT_TRUE(contains(r->findings[0].message, "entry 2 must be an object"));
    EXPECT_EQ(r->findings[0].pos.line, 6u);
    EXPECT_EQ(r->findings[0].pos.column, 21u);
}

TEST(BundleLoad, FilesOverTheSizeLimitAreNotRead) {
    test::TempDir d;
    d.write("b/manifests/a.csv.yaml", csv_yaml);
    d.write("b/metadata/annotations.yaml", annotations_yaml);
    // 50 MB of zero bytes, made sparse so the test stays fast and small on disk.
    const fs::path big = d / "b/manifests/huge.yaml";
    { std::ofstream(big).put('\0'); }
    fs::resize_file(big, 50u * 1000 * 1000);

    bundle::LoadOptions opts;
    opts.limits.max_file_bytes = 10u * 1024 * 1024;
    auto r = bundle::load(d / "b", opts);
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_EQ(r->findings.size(), 1u) << dump(r->findings);
    const Finding& f = r->findings[0];
    EXPECT_EQ(f.severity, Severity::error);
    EXPECT_EQ(f.rule, "load.read");
    EXPECT_EQ(f.pos.file, big.string());
    EXPECT_TRUE(contains(f.message, "50000000 bytes")) << f.message;
    EXPECT_TRUE(contains(f.message, "limit of 10485760 bytes")) << f.message;
    ASSERT_TRUE(r->bundle.csv.has_value());

    // With the default limit (1 GiB) the file is read, and fails to parse at its first byte.
    auto r2 = bundle::load(d / "b");
    ASSERT_TRUE(r2.ok()) << r2.error().str();
    ASSERT_EQ(r2->findings.size(), 1u) << dump(r2->findings);
    EXPECT_EQ(r2->findings[0].rule, "load.parse");
    EXPECT_EQ(r2->findings[0].pos.line, 1u);
}
