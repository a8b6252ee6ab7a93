// kpkg install end to end: resolve + plan + apply from the sample catalog (testdata/catalog) and
// the plan fixtures' bundle directories, against the test API server.
#include <string>
#include <vector>

#include "kpkg/io/load.hpp"
#include "kube_server.hpp"

namespace kpkg::test {
namespace {

// kpkg install etcd (and `extra`) with the server's kubeconfig.
RunResult install(const KubeServer& s, std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "install",
        "etcd",
        "--catalog",
        "cat=" + testdata("catalog").string(),
        "-n",
        "ops",
        "--bundle-dir",
        "etcdoperator.v0.9.4=" + testdata("plan/bundles/etcdoperator.v0.9.4").string(),
        "--kubeconfig",
        s.kubeconfig_path().string(),
        "--timeout",
        "30s"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_kpkg(args);
}

TEST(KpkgInstall, ManifestsModeInstallsTheOperatorInPhasesAndWaitsForIt) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    auto r = install(s, {"--target-namespaces", "ops", "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    // The summary first, on stderr.
    EXPECT_TRUE(contains(r.err, "namespace ops (manifests):")) << r.err;
    EXPECT_TRUE(contains(r.err, "etcdoperator.v0.9.4  etcd 0.9.4 from cat, channel")) << r.err;
    EXPECT_TRUE(contains(r.err, "3 CustomResourceDefinition")) << r.err;
    // Everything the bundle holds is on the server, the Deployment made ready by its controller.
    EXPECT_TRUE(s.object("Namespace", "ops"));
    EXPECT_TRUE(s.object("CustomResourceDefinition", "etcdclusters.etcd.database.coreos.com"));
    EXPECT_TRUE(s.object("ServiceAccount", "etcd-operator", "ops"));
    auto dep = s.object("Deployment", "etcd-operator", "ops");
    ASSERT_TRUE(dep);
    auto docs = io::parse_json(r.out, "stdout");
    ASSERT_TRUE(docs.ok()) << r.out;
    const io::Node* objs = docs->front().root.get("objects");
    ASSERT_NE(objs, nullptr);
    bool deployment_ready = false;
    for (const auto& o : objs->items)
        if (o.get("kind")->text == "Deployment")
            deployment_ready = o.get("ready")->kind == io::Kind::boolean &&
                               o.get("ready")->text == "true" && o.get("action")->text == "created";
    EXPECT_TRUE(deployment_ready) << r.out;
    // The CRDs went in (and were established) before the ServiceAccounts.
    std::size_t crd = 0, sa = 0, i = 0;
    for (const auto& q : s.requests()) {
        ++i;
        if (q.method != "PATCH") continue;
        if (contains(q.path, "customresourcedefinitions/") && crd == 0) crd = i;
        if (contains(q.path, "serviceaccounts/") && sa == 0) sa = i;
    }
    EXPECT_GT(crd, 0u);
    EXPECT_GT(sa, crd);
    // A second install changes nothing.
    auto again = install(s, {"--target-namespaces", "ops"});
    ASSERT_EQ(again.exit_code, 0) << describe(again);
    EXPECT_FALSE(contains(again.out, "created")) << again.out;
    EXPECT_TRUE(contains(again.out, "unchanged")) << again.out;
}

TEST(KpkgInstall, OlmModeAppliesSubscriptionsAndWaitsForTheCsv) {
    KubeServerOptions so;
    so.olm = true;
    KPKG_REQUIRE_KUBE_SERVER(s, so);
    auto r = install(s, {"--mode", "olm", "--catalog-image", "cat=example.com/cat:latest",
                         "--target-namespaces", "ops"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "namespace ops (olm):")) << r.err;
    auto sub = s.object("Subscription", "etcd", "ops");
    ASSERT_TRUE(sub) << r.err;
    EXPECT_TRUE(s.object("OperatorGroup", "ops", "ops") || contains(r.out, "operatorgroup/"))
        << r.out;
    // The test server plays OLM: the CSV the Subscription starts at reached Succeeded.
    auto csv = s.object("ClusterServiceVersion", "etcdoperator.v0.9.4", "ops");
    ASSERT_TRUE(csv) << r.err;
    const io::Node* phase = csv->get("status") ? csv->get("status")->get("phase") : nullptr;
    ASSERT_NE(phase, nullptr);
    EXPECT_EQ(phase->text, "Succeeded");
}

TEST(KpkgInstall, ClientDryRunWritesNothing) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    auto r = install(s, {"--target-namespaces", "ops", "--dry-run", "client"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(s.write_count(), 0u);
    EXPECT_FALSE(s.object("Namespace", "ops"));
    EXPECT_TRUE(contains(r.out, "dry-run")) << r.out;
}

TEST(KpkgInstall, NoSolutionExits4BeforeAnyRequest) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    s.clear_requests();
    auto r =
        run_kpkg({"install", "etcd@>=99.0.0", "--catalog", "cat=" + testdata("catalog").string(),
                  "-n", "ops", "--kubeconfig", s.kubeconfig_path().string()});
    EXPECT_EQ(r.exit_code, 4) << describe(r);
    EXPECT_TRUE(s.requests().empty());
}

TEST(KpkgInstall, KubeconfigProblemsComeBeforeTheCatalogIsRead) {
    TempDir d;
    const fs::path bad = d.write("kubeconfig", "apiVersion: v1\nkind: Config\n"
                                               "current-context: missing\n");
    // The catalog does not exist either: the kubeconfig is refused first.
    auto r = run_kpkg({"install", "etcd", "--catalog", "cat=" + (d.path() / "nope").string(), "-n",
                       "ops", "--kubeconfig", bad.string()});
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(contains(r.err, "missing")) << r.err;
}

TEST(KpkgInstall, UsageErrors) {
    auto r = run_kpkg({"install", "etcd", "--catalog", "cat=x", "-n", "ops", "--mode", "helm"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    auto p = run_kpkg({"install", "etcd", "--catalog", "cat=x", "-n", "ops", "--prune"});
    EXPECT_EQ(p.exit_code, 2) << describe(p);
    EXPECT_TRUE(contains(p.err, "--prune needs --applyset")) << p.err;
    auto c = run_kpkg({"install", "etcd", "--catalog", "cat=x", "-n", "ops", "--cert-provider",
                       "cert-manager", "--mode", "olm"});
    EXPECT_EQ(c.exit_code, 2) << describe(c);
    EXPECT_TRUE(contains(c.err, "--cert-provider is for --mode manifests")) << c.err;
}

} // namespace
} // namespace kpkg::test
