// kpkg plan and plan::make_install_plan: the InstallPlan OLM would create. The RBAC names are
// checked against the golden values of OLM's own code and documentation (independent of kpkg);
// whole plans against golden files reviewed step by step.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kpkg/catalog/load.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/plan/installplan.hpp"
#include "support/support.hpp"

namespace kpkg::plan {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::read_file;
using test::run_kpkg;
using test::testdata;

std::string sample() {
    return testdata("catalog").string();
}
std::string bundle_dir(const std::string& name) {
    return name + "=" + testdata("plan/bundles/" + name).string();
}

// `kpkg plan vault` on the sample catalog with both bundles given as directories.
std::vector<std::string> vault_args(const std::string& ns = "operators") {
    return {"plan",         "vault",
            "--catalog",    sample(),
            "--namespace",  ns,
            "--bundle-dir", bundle_dir("vault-operator.v1.2.0"),
            "--bundle-dir", bundle_dir("etcdoperator.v0.9.4"),
            "--offline"};
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// The JSON document kpkg printed.
io::Node parse(const std::string& json) {
    auto docs = io::parse_json(json, "<stdout>");
    EXPECT_TRUE(docs) << docs.error().message;
    if (!docs || docs->empty()) return {};
    return docs->front().root;
}

struct StepView {
    std::string resolving, group, version, kind, name;
    io::Node manifest;
    std::string manifest_text;
};

std::vector<StepView> steps_of(const io::Node& plan) {
    std::vector<StepView> out;
    const io::Node* status = plan.get("status");
    const io::Node* steps = status != nullptr ? status->get("plan") : nullptr;
    if (steps == nullptr) return out;
    for (const auto& s : steps->items) {
        const io::Node& r = *s.get("resource");
        StepView v{s.get("resolving")->text, r.get("group")->text, r.get("version")->text,
                   r.get("kind")->text,      r.get("name")->text,  {},
                   r.get("manifest")->text};
        v.manifest = parse(v.manifest_text);
        out.push_back(std::move(v));
    }
    return out;
}

const StepView* find_step(const std::vector<StepView>& steps, const std::string& kind,
                          const std::string& name_prefix = "") {
    for (const auto& s : steps)
        if (s.kind == kind && s.name.rfind(name_prefix, 0) == 0) return &s;
    return nullptr;
}

std::string label(const StepView& s, const std::string& key) {
    const io::Node* labels = s.manifest.get("metadata")->get("labels");
    const io::Node* v = labels != nullptr ? labels->get(key) : nullptr;
    return v != nullptr ? v->text : "";
}

// --- OLM's RBAC naming ---------------------------------------------------------------------------

TEST(RbacName, MatchesOlmGenerateNameTests) {
    // OLM's rbac_test.go TestGenerateName: json.Encoder output of []string{"something"}.
    EXPECT_EQ(base62_sha224("[\"something\"]\n"), "5L9sNXi3Y6mcOevFzYY3WOLIukKOeZwz1pfUlT");
    EXPECT_EQ(rbac_name("myname", base62_sha224("[\"something\"]\n")),
              "myname-5L9sNXi3Y6mcOevFzYY3WOLIukKOeZwz1pfUlT");
    std::string base;
    for (int i = 0; i < 100; ++i)
        base += "name";
    const std::string name = rbac_name(base, base62_sha224("[\"something\",\"else\"]\n"));
    EXPECT_EQ(name, "namenamenamenamenamename-6XtefCelEzfYlFOD1fARIK5vhWVfWfGHja7H3q");
    EXPECT_LE(name.size(), 63u);
}

TEST(RbacName, ShortBaseIsKept) {
    EXPECT_EQ(rbac_name("a", "xyz"), "a-xyz");
    // As OLM: only a base longer than 63 - len(hash) is cut.
    EXPECT_EQ(rbac_name(std::string(60, 'b'), "xyz").size(), 64u);
    EXPECT_EQ(rbac_name(std::string(61, 'b'), "xyz"), std::string(59, 'b') + "-xyz");
}

TEST(RbacName, GoldenNamesOfOlmMd) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto r = run_kpkg({"plan", "etcd", "kiali", "--catalog", testdata("plan/rbac-catalog").string(),
                       "-n", "operators", "--bundle-dir",
                       "etcdoperator.v0.9.2=" + (corpus / "olm/bundles/etcd.0.9.2").string(),
                       "--bundle-dir",
                       "kiali-operator.v1.4.2=" + (corpus / "olm/bundles/kiali.1.4.2").string(),
                       "--offline", "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto steps = steps_of(parse(r.out));
    const std::string etcd = "etcdoperator.v0.9.2-etcd-30atNWjXK8MnnHeblLJ9IBRDjI8OsSMB3wso8m";
    const std::string kiali = "kiali-operator.v1.4.2-UyH95SPG8u4yveO7oHcWOWllUSNrNHN5z5RRh";
    const StepView* role = find_step(steps, "Role", "etcdoperator.v0.9.2");
    const StepView* rb = find_step(steps, "RoleBinding", "etcdoperator.v0.9.2");
    const StepView* cr = find_step(steps, "ClusterRole", "kiali-operator.v1.4.2");
    const StepView* crb = find_step(steps, "ClusterRoleBinding", "kiali-operator.v1.4.2");
    ASSERT_TRUE(role && rb && cr && crb) << r.out;
    EXPECT_EQ(role->name, etcd);
    EXPECT_EQ(rb->name, etcd);
    EXPECT_EQ(label(*role, "olm.permissions.hash"), "2yopnz5NTItaVA9ySSXhLaM94ZfQ5fhp6RSIHH");
    EXPECT_EQ(cr->name, kiali);
    EXPECT_EQ(crb->name, kiali);
    EXPECT_EQ(label(*cr, "olm.permissions.hash"), "bIMcZjwrxUPtPLDGPaFvnMf53PjpM78XIjEsW0");
    // The manifests name themselves as the steps do, and their owner labels.
    EXPECT_EQ(role->manifest.get("metadata")->get("name")->text, etcd);
    EXPECT_EQ(label(*role, "olm.owner"), "etcdoperator.v0.9.2");
    EXPECT_EQ(label(*role, "olm.owner.namespace"), "operators");
    EXPECT_EQ(label(*cr, "olm.owner.kind"), "ClusterServiceVersion");
    const io::Node* ref = crb->manifest.get("roleRef");
    ASSERT_NE(ref, nullptr);
    EXPECT_EQ(ref->get("kind")->text, "ClusterRole");
    EXPECT_EQ(ref->get("name")->text, kiali);
}

// --- whole plans
// -----------------------------------------------------------------------------------

TEST(PlanCli, SampleCatalogGolden) {
    auto r = run_kpkg(with(vault_args(), {"-o", "yaml"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, read_file(testdata("plan/expected/vault.yaml")));
    // Same input, same bytes.
    EXPECT_EQ(run_kpkg(with(vault_args(), {"-o", "yaml"})).out, r.out);
}

TEST(PlanCli, SampleCatalogStepOrder) {
    auto r = run_kpkg(with(vault_args(), {"-o", "json"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const io::Node plan = parse(r.out);
    // Kind and name (RBAC names: the part before the hash).
    const std::vector<std::pair<std::string, std::string>> want = {
        // The dependency no request asked for gets its Subscription first.
        {"Subscription", "etcd-stable-catalog-olm"},
        // Then each bundle: CSV, manifests by file name, RBAC per service account by name.
        {"ClusterServiceVersion", "etcdoperator.v0.9.4"},
        {"BundleSecret", "etcd-backup-credentials"}, // etcd-backup-credentials.secret.yaml
        {"ConfigMap", "etcd-defaults"},              // "etcd defaults+config.yaml"
        {"Service", "etcd-operator-metrics"},        // etcd-operator-metrics.service.yaml
        {"CustomResourceDefinition", "etcdbackups.etcd.database.coreos.com"},
        {"CustomResourceDefinition", "etcdclusters.etcd.database.coreos.com"},
        {"CustomResourceDefinition", "etcdrestores.etcd.database.coreos.com"},
        {"ServiceAccount", "etcd-backup"},
        {"Role", "etcdoperator.v0.9.4-etcd-"}, // "-etcd-backup" cut to fit 63 characters
        {"RoleBinding", "etcdoperator.v0.9.4-etcd-"},
        {"ServiceAccount", "etcd-operator"},
        {"Role", "etcdoperator.v0.9.4-etcd-"},
        {"RoleBinding", "etcdoperator.v0.9.4-etcd-"},
        {"ClusterRole", "etcdoperator.v0.9.4-"},
        {"ClusterRoleBinding", "etcdoperator.v0.9.4-"},
        {"ClusterServiceVersion", "vault-operator.v1.2.0"},
        {"PrometheusRule", "vault-alerts"},
        {"CustomResourceDefinition", "vaultservices.vault.security.coreos.com"},
        // The "default" service account gets no ServiceAccount step.
        {"Role", "vault-operator.v1.2.0-de-"},
        {"RoleBinding", "vault-operator.v1.2.0-de-"},
        {"ServiceAccount", "vault-operator"},
        {"ClusterRole", "vault-operator.v1.2.0-"},
        {"ClusterRoleBinding", "vault-operator.v1.2.0-"},
    };
    auto got = steps_of(plan);
    ASSERT_EQ(got.size(), want.size()) << r.out;
    for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].kind, want[i].first) << i;
        const bool prefix = want[i].second.back() == '-';
        if (prefix) {
            EXPECT_EQ(got[i].name.rfind(want[i].second, 0), 0u) << i << " " << got[i].name;
            EXPECT_LE(got[i].name.size(), 63u) << got[i].name;
        } else {
            EXPECT_EQ(got[i].name, want[i].second) << i;
        }
        EXPECT_EQ(got[i].resolving, i < 16 ? "etcdoperator.v0.9.4" : "vault-operator.v1.2.0");
    }
    // A Role and its RoleBinding share their name; the two accounts' Roles differ.
    EXPECT_EQ(got[9].name, got[10].name);
    EXPECT_NE(got[9].name, got[12].name);
    const io::Node& spec = *plan.get("spec");
    ASSERT_EQ(spec.get("clusterServiceVersionNames")->items.size(), 2u);
    EXPECT_EQ(spec.get("clusterServiceVersionNames")->items[0].text, "etcdoperator.v0.9.4");
    EXPECT_EQ(spec.get("clusterServiceVersionNames")->items[1].text, "vault-operator.v1.2.0");
    EXPECT_EQ(spec.get("approval")->text, "Automatic");
    EXPECT_EQ(spec.get("approved")->text, "true");
    EXPECT_EQ(plan.get("status")->get("phase")->text, "Installing");
    // Owner references: the requested Subscription only.
    const io::Node* refs = plan.get("metadata")->get("ownerReferences");
    ASSERT_NE(refs, nullptr);
    ASSERT_EQ(refs->items.size(), 1u);
    EXPECT_EQ(refs->items[0].get("name")->text, "vault");

    const auto& steps = got;
    const StepView& sub = steps.front();
    EXPECT_EQ(sub.name, "etcd-stable-catalog-olm");
    EXPECT_EQ(sub.resolving, "etcdoperator.v0.9.4");
    const io::Node& sspec = *sub.manifest.get("spec");
    EXPECT_EQ(sspec.get("source")->text, "catalog");
    EXPECT_EQ(sspec.get("sourceNamespace")->text, "olm");
    EXPECT_EQ(sspec.get("name")->text, "etcd");
    EXPECT_EQ(sspec.get("channel")->text, "stable");
    EXPECT_EQ(sspec.get("startingCSV")->text, "etcdoperator.v0.9.4");
    EXPECT_EQ(sspec.get("installPlanApproval")->text, "Automatic");

    // The CSV: in the plan's namespace, spec.replaces from the channel entry (the bundle's own
    // says etcdoperator.v0.9.0), the catalog properties as an annotation.
    const StepView* csv = find_step(steps, "ClusterServiceVersion", "etcdoperator");
    ASSERT_NE(csv, nullptr);
    EXPECT_EQ(csv->manifest.get("metadata")->get("namespace")->text, "operators");
    EXPECT_EQ(csv->manifest.get("spec")->get("replaces")->text, "etcdoperator.v0.9.2");
    const io::Node* ann = csv->manifest.get("metadata")->get("annotations");
    ASSERT_NE(ann, nullptr);
    EXPECT_EQ(ann->get("operatorframework.io/properties")->text,
              "{\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"etcd\","
              "\"version\":\"0.9.4\"}},{\"type\":\"olm.gvk\",\"value\":{\"group\":\"etcd.database."
              "coreos.com\",\"kind\":\"EtcdCluster\",\"version\":\"v1beta2\"}},{\"type\":\"olm."
              "gvk\",\"value\":{\"group\":\"etcd.database.coreos.com\",\"kind\":\"EtcdBackup\","
              "\"version\":\"v1beta2\"}},{\"type\":\"olm.gvk\",\"value\":{\"group\":\"etcd."
              "database.coreos.com\",\"kind\":\"EtcdRestore\",\"version\":\"v1beta2\"}}]}");
    // Manifests are JSON strings ending in a newline, with HTML characters escaped as Go does.
    EXPECT_EQ(csv->manifest_text.back(), '\n');
    EXPECT_TRUE(contains(csv->manifest_text, "Creates \\u0026 maintains")) << csv->manifest_text;
    // The Secret keeps its kind in the manifest.
    const StepView* secret = find_step(steps, "BundleSecret");
    ASSERT_NE(secret, nullptr);
    EXPECT_EQ(secret->manifest.get("kind")->text, "Secret");
    EXPECT_EQ(secret->group, "");
    EXPECT_EQ(secret->version, "v1");
}

TEST(PlanCli, PackageSplitOverFilesGivesTheSamePlan) {
    // The plan reads the selected bundles' properties again from the one file holding their
    // package; a package spread over two files is read from the whole catalog instead, and the
    // plan is the same.
    test::TempDir tmp;
    const std::string vault = read_file(testdata("catalog/vault/catalog.yaml"));
    const auto cut = vault.find("---\nschema: olm.bundle");
    ASSERT_NE(cut, std::string::npos);
    tmp.write("catalog/etcd/catalog.json", read_file(testdata("catalog/etcd/catalog.json")));
    tmp.write("catalog/vault/package.yaml", vault.substr(0, cut));
    tmp.write("catalog/vault/bundles.yaml", vault.substr(cut));
    auto args = with(vault_args(), {"-o", "yaml"});
    for (auto& a : args)
        if (a == sample()) a = (tmp / "catalog").string();
    auto r = run_kpkg(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, read_file(testdata("plan/expected/vault.yaml")));
}

TEST(PlanCli, ManualApproval) {
    auto r = run_kpkg(with(vault_args(), {"--approval", "Manual", "-o", "json"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const io::Node plan = parse(r.out);
    EXPECT_EQ(plan.get("spec")->get("approval")->text, "Manual");
    EXPECT_EQ(plan.get("spec")->get("approved")->text, "false");
    EXPECT_EQ(plan.get("status")->get("phase")->text, "RequiresApproval");
    auto bad = run_kpkg(with(vault_args(), {"--approval", "manual"}));
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "Automatic or Manual")) << bad.err;
}

TEST(PlanCli, TextSummary) {
    auto r = run_kpkg(vault_args());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "InstallPlan for namespace operators (approval Automatic"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "2 operators, 24 steps")) << r.out;
    EXPECT_TRUE(contains(r.out, "Subscription etcd-stable-catalog-olm created")) << r.out;
    EXPECT_TRUE(contains(r.out, "  CustomResourceDefinition  4\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "  BundleSecret              1\n")) << r.out;
}

TEST(PlanCli, CorpusCatalogGolden) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto r = run_kpkg({"plan", "etcd:singlenamespace-alpha@0.9.2", "--catalog",
                       (corpus / "olm/large/derived-community/catalog-valid").string(), "-n",
                       "operators", "--bundle-dir",
                       "etcdoperator.v0.9.2=" + (corpus / "olm/bundles/etcd.0.9.2").string(),
                       "--offline", "-o", "yaml"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, read_file(testdata("plan/expected/corpus-etcd.yaml")));
}

TEST(PlanCli, UpgradeHopReplacesTheInstalledCsv) {
    auto r = run_kpkg({"plan", "etcd", "--catalog", sample(), "-n", "operators", "--installed",
                       testdata("plan/installed-etcd.yaml").string(), "--bundle-dir",
                       bundle_dir("etcdoperator.v0.9.4"), "--offline", "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const io::Node plan = parse(r.out);
    auto steps = steps_of(plan);
    ASSERT_FALSE(steps.empty());
    // No Subscription step: the installed operator's Subscription asked for it.
    EXPECT_EQ(steps.front().kind, "ClusterServiceVersion");
    EXPECT_EQ(steps.front().manifest.get("spec")->get("replaces")->text, "etcdoperator.v0.9.2");
    EXPECT_EQ(plan.get("metadata")->get("ownerReferences")->items[0].get("name")->text, "etcd");
}

TEST(PlanCli, InstalledDependencyStays) {
    auto r = run_kpkg({"plan", "vault", "--catalog", sample(), "-n", "operators", "--installed",
                       testdata("plan/installed-etcd.yaml").string(), "--bundle-dir",
                       bundle_dir("vault-operator.v1.2.0"), "--offline"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "1 operator, 8 steps")) << r.out;
    EXPECT_TRUE(contains(r.out, "\nUnchanged: etcdoperator.v0.9.2\n")) << r.out;
    EXPECT_FALSE(contains(r.out, "Subscription")) << r.out;
}

TEST(PlanCli, UpgradeMovesOneHop) {
    // Installed 0.9.0 in alpha: 0.9.2 is the next hop (0.9.4 is two away), replacing 0.9.0.
    test::TempDir tmp;
    auto installed = tmp.write("installed.yaml", "installed:\n  - package: etcd\n"
                                                 "    name: etcdoperator.v0.9.0\n"
                                                 "    version: 0.9.0\n    channel: alpha\n");
    auto r = run_kpkg({"plan", "--upgrade", "--catalog", sample(), "-n", "operators", "--installed",
                       installed.string(), "--offline", "-o", "json"});
    // 0.9.2 has no contents here: the error names it, so the hop was to 0.9.2.
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "etcdoperator.v0.9.2 (image")) << r.err;
    EXPECT_FALSE(contains(r.err, "etcdoperator.v0.9.4")) << r.err;
}

TEST(PlanCli, ContentsFromTheCatalogWarn) {
    auto r = run_kpkg({"plan", "etcd", "--catalog", testdata("plan/catalog-objects").string(), "-n",
                       "operators", "--offline", "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "olm.bundle.object")) << r.err;
    EXPECT_TRUE(contains(r.err, "authoritative")) << r.err;
    auto steps = steps_of(parse(r.out));
    ASSERT_EQ(steps.size(), 15u);
    EXPECT_EQ(steps.front().kind, "ClusterServiceVersion");
    // The same bundle from its directory gives the same steps.
    auto d = run_kpkg({"plan", "etcd", "--catalog", testdata("plan/catalog-objects").string(), "-n",
                       "operators", "--offline", "-o", "json", "--bundle-dir",
                       bundle_dir("etcdoperator.v0.9.4")});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    EXPECT_EQ(d.err, "");
    // Objects of the catalog come in property order (there are no file names to sort by).
    auto pairs = [](const std::vector<StepView>& v) {
        std::vector<std::string> out;
        for (const auto& s : v)
            out.push_back(s.kind + " " + s.name);
        std::sort(out.begin(), out.end());
        return out;
    };
    EXPECT_EQ(pairs(steps_of(parse(d.out))), pairs(steps));
}

TEST(PlanCli, CorpusCatalogWithBundleObjects) {
    KPKG_REQUIRE_CORPUS(corpus);
    const std::string catalog = (corpus / "olm/fbc/registry-action-index-latest").string();
    // opm's test bundles carry their manifests as olm.bundle.object, but their CSVs have no
    // install strategy: OLM would fail the plan, and so does kpkg, naming the CSV.
    auto bar = run_kpkg({"plan", "bar", "--catalog", catalog, "-n", "operators", "--offline"});
    EXPECT_EQ(bar.exit_code, 3);
    EXPECT_EQ(bar.out, "");
    EXPECT_TRUE(contains(bar.err, "bundle \"bar.v1.0.0\": olm.bundle.object[1]: the CSV has no "
                                  "install strategy"))
        << bar.err;
    // foo has no solution (OLM.md's worked example): exit 4 with the explanation.
    auto foo = run_kpkg({"plan", "foo", "--catalog", catalog, "-n", "operators", "--offline"});
    EXPECT_EQ(foo.exit_code, 4);
    EXPECT_TRUE(contains(foo.err, "is skipped in channel alpha (bar.v0.2.0 skips it)")) << foo.err;
}

// --- bad input
// -------------------------------------------------------------------------------------

TEST(PlanCli, UnsupportedKindFailsThePlan) {
    auto r = run_kpkg(
        {"plan", "vault", "--catalog", sample(), "-n", "operators", "--bundle-dir",
         "vault-operator.v1.2.0=" + testdata("plan/podmonitor/vault-operator.v1.2.0").string(),
         "--bundle-dir", bundle_dir("etcdoperator.v0.9.4"), "--offline"});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(contains(r.err,
                         "bundle \"vault-operator.v1.2.0\": manifests/vault.podmonitor.yaml: "
                         "PodMonitor \"vault\" (monitoring.coreos.com/v1) is not a kind OLM "
                         "creates"))
        << r.err;
}

TEST(PlanCli, BadNamespace) {
    for (const std::string& ns :
         std::vector<std::string>{"Operators", "ops_1", "-ops", std::string(64, 'a'), ""}) {
        auto r = run_kpkg(vault_args(ns));
        EXPECT_EQ(r.exit_code, 2) << ns;
        EXPECT_EQ(r.out, "") << ns;
        EXPECT_TRUE(contains(r.err, "is not a valid namespace name")) << r.err;
    }
    auto r = run_kpkg(vault_args("Ops"));
    EXPECT_TRUE(contains(r.err, "--namespace \"Ops\" is not a valid namespace name: character 1 "
                                "\"O\" is not allowed"))
        << r.err;
    EXPECT_EQ(run_kpkg(with(vault_args(), {"--catalog-namespace", "x.y"})).exit_code, 2);
}

TEST(PlanCli, MissingContentsNameTheBundles) {
    auto r = run_kpkg({"plan", "vault", "--catalog", sample(), "-n", "operators", "--offline"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(contains(r.err, "the contents of 2 bundles cannot be had")) << r.err;
    EXPECT_TRUE(contains(r.err, "  etcdoperator.v0.9.4 (image")) << r.err;
    EXPECT_TRUE(contains(r.err, "  vault-operator.v1.2.0 (image")) << r.err;
    // One given: only the other is named.
    auto one = run_kpkg({"plan", "vault", "--catalog", sample(), "-n", "operators", "--offline",
                         "--bundle-dir", bundle_dir("vault-operator.v1.2.0")});
    EXPECT_EQ(one.exit_code, 1);
    EXPECT_TRUE(contains(one.err, "the contents of 1 bundle cannot be had")) << one.err;
    EXPECT_FALSE(contains(one.err, "vault-operator.v1.2.0 (image")) << one.err;
}

TEST(PlanCli, BundleDirMistakes) {
    auto unknown =
        run_kpkg(with(vault_args(), {"--bundle-dir", bundle_dir("etcdoperator.v0.9.2")}));
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_TRUE(contains(unknown.err, "is not a bundle of the plan")) << unknown.err;
    auto wrong = run_kpkg(
        {"plan", "vault", "--catalog", sample(), "-n", "operators", "--offline", "--bundle-dir",
         "vault-operator.v1.2.0=" + testdata("plan/bundles/etcdoperator.v0.9.4").string(),
         "--bundle-dir", bundle_dir("etcdoperator.v0.9.4")});
    EXPECT_EQ(wrong.exit_code, 3);
    EXPECT_TRUE(contains(wrong.err, "holds the bundle \"etcdoperator.v0.9.4\"")) << wrong.err;
    EXPECT_EQ(run_kpkg(with(vault_args(), {"--bundle-dir", "nodir"})).exit_code, 2);
}

TEST(PlanCli, NoSolution) {
    auto r = run_kpkg({"plan", "vault@>=9.0.0", "--catalog", sample(), "-n", "operators"});
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_EQ(r.out, "");
}

// --- library: contents and plans without a process ---------------------------------------------

struct SampleWorld {
    model::Catalog catalog;
    std::vector<resolve::CatalogSource> catalogs;
    resolve::Request request;
    resolve::Resolution resolution;
};

// `vault` resolved against the sample catalog, loaded with its property values.
void resolve_vault(SampleWorld& w) {
    catalog::LoadOptions lo;
    lo.keep_payloads = true;
    w.catalog = catalog::load_catalog(testdata("catalog"), lo).take();
    w.catalogs = {{"catalog", &w.catalog, 0}};
    w.request.subscriptions.push_back(resolve::parse_subscription("vault").take());
    w.request.options.one_hop = true;
    w.resolution = resolve::resolve(w.catalogs, w.request).take();
    ASSERT_TRUE(w.resolution.satisfiable);
}

TEST(GatherContents, ImagesAreReadThroughTheCallback) {
    SampleWorld w;
    resolve_vault(w);
    GatherOptions opts;
    opts.bundle_dirs["vault-operator.v1.2.0"] =
        testdata("plan/bundles/vault-operator.v1.2.0").string();
    std::vector<std::string> asked;
    opts.open_image = [&](const std::string& image) -> Result<std::unique_ptr<io::Tree>> {
        asked.push_back(image);
        return std::unique_ptr<io::Tree>(
            new io::DirectoryTree(testdata("plan/bundles/etcdoperator.v0.9.4")));
    };
    auto got = gather_contents(w.catalogs, w.resolution, opts);
    ASSERT_TRUE(got) << got.error().message;
    // The directory wins: only etcd's image is asked for.
    EXPECT_EQ(asked, (std::vector<std::string>{"quay.io/example/etcd-operator-bundle:v0.9.4"}));
    EXPECT_EQ(got->bundles.at("etcdoperator.v0.9.4").source, ContentSource::image);
    EXPECT_EQ(got->bundles.at("etcdoperator.v0.9.4").origin,
              "quay.io/example/etcd-operator-bundle:v0.9.4");
    EXPECT_EQ(got->bundles.at("vault-operator.v1.2.0").source, ContentSource::directory);
    EXPECT_TRUE(got->warnings.empty());

    PlanOptions po;
    po.namespace_name = "team-a";
    po.catalog_namespace = "openshift-marketplace";
    auto plan = make_install_plan(w.catalogs, w.request, w.resolution, got->bundles, po);
    ASSERT_TRUE(plan) << plan.error().message;
    ASSERT_EQ(plan->operators.size(), 2u);
    EXPECT_TRUE(plan->operators[0].dependency);
    EXPECT_EQ(plan->operators[0].subscription, "etcd-stable-catalog-openshift-marketplace");
    EXPECT_FALSE(plan->operators[1].dependency);
    EXPECT_EQ(plan->subscriptions, (std::vector<std::string>{"vault"}));
    EXPECT_EQ(plan->steps.front().kind, "Subscription");
    EXPECT_EQ(plan->steps.front().name, "etcd-stable-catalog-openshift-marketplace");
    for (const auto& st : plan->steps) {
        EXPECT_EQ(st.source_namespace, "openshift-marketplace");
        EXPECT_EQ(st.status, "Unknown");
        EXPECT_EQ(st.manifest.back(), '\n');
    }
    // Each operator's steps are its own.
    for (const auto& op : plan->operators)
        for (std::size_t i = op.first_step; i < op.first_step + op.step_count; ++i)
            EXPECT_EQ(plan->steps[i].resolving, op.selected.bundle);
    EXPECT_EQ(plan->operators[0].step_count + plan->operators[1].step_count + 1,
              plan->steps.size());
}

TEST(GatherContents, ImageErrorsAreNamedWhenNothingElseHasTheContents) {
    SampleWorld w;
    resolve_vault(w);
    GatherOptions opts;
    opts.open_image = [](const std::string& image) -> Result<std::unique_ptr<io::Tree>> {
        return Error::io("cannot reach the registry of " + image);
    };
    auto got = gather_contents(w.catalogs, w.resolution, opts);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ExitCode::error);
    EXPECT_TRUE(
        contains(got.error().message,
                 "cannot reach the registry of quay.io/example/vault-operator-bundle:v1.2.0"))
        << got.error().message;
}

TEST(MakeInstallPlan, BundleWithoutCsvIsInvalid) {
    SampleWorld w;
    resolve_vault(w);
    std::map<std::string, BundleContents> contents;
    for (const auto& s : w.resolution.selected) {
        BundleContents c;
        c.origin = "memory";
        io::Node cm = io::Node::map();
        cm.set("apiVersion", io::Node::string("v1"));
        cm.set("kind", io::Node::string("ConfigMap"));
        cm.set("metadata", io::Node::map()).set("name", io::Node::string("x"));
        c.objects.push_back({"manifests/x.yaml", 0, cm});
        contents[s.bundle] = c;
    }
    PlanOptions po;
    po.namespace_name = "ops";
    auto plan = make_install_plan(w.catalogs, w.request, w.resolution, contents, po);
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(plan.error().message, "has no ClusterServiceVersion"))
        << plan.error().message;
}

// --- library -------------------------------------------------------------------------------------

TEST(CheckNamespace, Dns1123Label) {
    EXPECT_TRUE(check_namespace("operators", "--namespace"));
    EXPECT_TRUE(check_namespace("a", "--namespace"));
    EXPECT_TRUE(check_namespace("openshift-operators-2", "--namespace"));
    EXPECT_TRUE(check_namespace(std::string(63, 'a'), "--namespace"));
    for (std::string_view bad : {"", "A", "a_b", "a.b", "-a", "a-", "ä"}) {
        auto r = check_namespace(bad, "--namespace");
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().code, ExitCode::usage);
    }
    EXPECT_FALSE(check_namespace(std::string(64, 'a'), "--namespace"));
}

// The messages name the flag and say what is wrong, the first bad character by its position.
TEST(CheckNamespace, Messages) {
    auto message = [](std::string_view ns) {
        auto r = check_namespace(ns, "--namespace");
        return r ? std::string() : r.error().message;
    };
    EXPECT_EQ(message(""), "--namespace \"\" is not a valid namespace name: it is empty");
    EXPECT_EQ(message(std::string(64, 'a')),
              "--namespace \"" + std::string(64, 'a') +
                  "\" is not a valid namespace name: it has 64 characters, at most 63 are "
                  "allowed (a DNS-1123 label)");
    EXPECT_EQ(message("ab_C"), "--namespace \"ab_C\" is not a valid namespace name: character 3 "
                               "\"_\" is not allowed; a DNS-1123 label has only lower-case "
                               "letters, digits and '-'");
    EXPECT_EQ(message("a\xC3\xA4"), "--namespace \"a\xC3\xA4\" is not a valid namespace name: "
                                    "character 2 \"\\xc3\" is not allowed; a DNS-1123 label has "
                                    "only lower-case letters, digits and '-'");
    EXPECT_EQ(message("-a"), "--namespace \"-a\" is not a valid namespace name: it must start and "
                             "end with a lower-case letter or a digit");
    EXPECT_EQ(message("a-"), "--namespace \"a-\" is not a valid namespace name: it must start and "
                             "end with a lower-case letter or a digit");
    EXPECT_EQ(message("-A"), "--namespace \"-A\" is not a valid namespace name: character 2 "
                             "\"A\" is not allowed; a DNS-1123 label has only lower-case "
                             "letters, digits and '-'");
}

TEST(OlmCreates, Kinds) {
    for (const char* k : {"ClusterServiceVersion", "CustomResourceDefinition", "Secret", "Service",
                          "ConfigMap", "PrometheusRule", "ServiceMonitor", "NetworkPolicy",
                          "ConsolePlugin", "VerticalPodAutoscaler", "PriorityClass"})
        EXPECT_TRUE(olm_creates(k)) << k;
    for (const char* k : {"PodMonitor", "Deployment", "Namespace", "ValidatingWebhookConfiguration",
                          "APIService", "Pod"})
        EXPECT_FALSE(olm_creates(k)) << k;
}

} // namespace
} // namespace kpkg::plan
