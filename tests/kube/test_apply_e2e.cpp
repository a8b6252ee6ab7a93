// kpkg apply and kpkg delete end to end: the built binary against the test API server
// (tests/kube/apiserver.py), with the real kubectl 1.32 reading kpkg's results back.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kpkg/io/load.hpp"
#include "kpkg/kube/apply.hpp"
#include "kube_server.hpp"

namespace kpkg::test {
namespace {

const char* const kKubectl = kubectl_1_32_path;

const char* const kManifests = R"(apiVersion: example.com/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: op}
spec:
  replicas: 1
  selector: {matchLabels: {app: op}}
  template:
    metadata: {labels: {app: op}}
    spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Namespace
metadata: {name: demo}
)";

// kpkg with the server's kubeconfig.
RunResult kpkg(const KubeServer& s, std::vector<std::string> args) {
    args.insert(args.begin() + 1, {"--kubeconfig", s.kubeconfig_path().string()});
    return run_kpkg(args);
}

io::Node json_of(const std::string& text) {
    auto docs = io::parse_json(text, "stdout");
    EXPECT_TRUE(docs.ok() && !docs->empty()) << text;
    return docs.ok() && !docs->empty() ? docs->front().root : io::Node{};
}

const io::Node* report_object(const io::Node& report, const std::string& name) {
    const io::Node* objs = report.get("objects");
    if (!objs) return nullptr;
    for (const auto& o : objs->items)
        if (o.get("name") && o.get("name")->text == name) return &o;
    return nullptr;
}

class Kubectl {
public:
    explicit Kubectl(const KubeServer& s) : kubeconfig_(s.kubeconfig_path()) {}
    ProgramResult run(std::vector<std::string> args) const {
        args.insert(args.begin(), {kKubectl, "--kubeconfig", kubeconfig_.string(), "--cache-dir",
                                   (home_ / "cache").string()});
        return run_program(
            args, {"HOME=" + home_.path().string(), "KUBECONFIG=", "KUBECTL_APPLYSET=true"});
    }
    fs::path write(const std::string& name, const std::string& content) const {
        return home_.write(name, content);
    }

private:
    fs::path kubeconfig_;
    TempDir home_;
};

#define REQUIRE_KUBECTL()                                                                          \
    if (access(kKubectl, X_OK) != 0) GTEST_SKIP() << missing_tool(kubectl_1_32, kKubectl)

TEST(KpkgApply, CustomResourceBesideItsCrdInPhasesThenPruneAndDelete) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    fs::path dir = s.dir() / "m";
    s.dir().write("m/all.yaml", kManifests);
    auto r = kpkg(s, {"apply", dir.string(), "-n", "demo", "--prune", "--applyset", "myset", "-o",
                      "json", "--timeout", "60s"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    io::Node rep = json_of(r.out);
    for (const char* n : {"demo", "widgets.example.com", "op", "w1"}) {
        const io::Node* o = report_object(rep, n);
        ASSERT_NE(o, nullptr) << n;
        EXPECT_EQ(o->get("action")->text, "created") << n;
        EXPECT_EQ(o->get("ready")->text, "true") << n;
    }
    EXPECT_EQ(report_object(rep, "w1")->get("phase")->text, "custom-resources");
    // Progress on stderr, phase by phase.
    EXPECT_TRUE(contains(r.err, "phase 1/4 namespaces: 1 object")) << r.err;
    EXPECT_TRUE(contains(r.err, "deployment/op is ready")) << r.err;
    // One server-side apply per object (plus the parent: before, and after the prune), with kpkg's
    // field manager.
    std::size_t patches = 0;
    for (const auto& q : s.requests())
        if (q.method == "PATCH") {
            ++patches;
            EXPECT_EQ(q.content_type, "application/apply-patch+yaml");
            EXPECT_TRUE(q.param("fieldManager") == "kpkg" ||
                        q.param("fieldManager") == "kpkg-applyset")
                << q.path;
        }
    EXPECT_EQ(patches, 4u + 2u);
    auto w = s.object("Widget", "w1", "demo");
    ASSERT_TRUE(w);
    const std::string id = kube::applyset_id("myset", "demo", "Secret", "");
    EXPECT_EQ(w->get("metadata")->get("labels")->get("applyset.kubernetes.io/part-of")->text, id);

    // Again: nothing moves.
    auto again = kpkg(
        s, {"apply", dir.string(), "-n", "demo", "--prune", "--applyset", "myset", "-o", "json"});
    ASSERT_EQ(again.exit_code, 0) << describe(again);
    EXPECT_EQ(report_object(json_of(again.out), "op")->get("action")->text, "unchanged");

    // The widget leaves the input: pruned.
    std::string fewer = kManifests;
    fewer = fewer.substr(fewer.find("---\n") + 4);
    s.dir().write("m/all.yaml", fewer);
    auto pruned = kpkg(
        s, {"apply", dir.string(), "-n", "demo", "--prune", "--applyset", "myset", "-o", "json"});
    ASSERT_EQ(pruned.exit_code, 0) << describe(pruned);
    EXPECT_EQ(report_object(json_of(pruned.out), "w1")->get("action")->text, "pruned");
    EXPECT_FALSE(s.object("Widget", "w1", "demo"));
    auto parent = s.object("Secret", "myset", "demo");
    ASSERT_TRUE(parent);
    EXPECT_EQ(parent->get("metadata")
                  ->get("annotations")
                  ->get("applyset.kubernetes.io/contains-group-kinds")
                  ->text,
              "CustomResourceDefinition.apiextensions.k8s.io,Deployment.apps,Namespace");

    // Delete the set: members in reverse phase order, then the parent.
    s.clear_requests();
    auto del = kpkg(s, {"delete", "--applyset", "myset", "-n", "demo", "--timeout", "60s"});
    ASSERT_EQ(del.exit_code, 0) << describe(del);
    EXPECT_FALSE(s.object("Deployment", "op", "demo"));
    EXPECT_FALSE(s.object("CustomResourceDefinition", "widgets.example.com"));
    EXPECT_FALSE(s.object("Namespace", "demo"));
    std::vector<std::string> deletes;
    for (const auto& q : s.requests())
        if (q.method == "DELETE") deletes.push_back(q.path);
    ASSERT_EQ(deletes.size(), 4u);
    EXPECT_TRUE(contains(deletes[0], "/deployments/op")) << deletes[0];
    EXPECT_TRUE(contains(deletes[1], "/customresourcedefinitions/")) << deletes[1];
    EXPECT_TRUE(contains(deletes[2], "/namespaces/demo")) << deletes[2];
    EXPECT_TRUE(contains(deletes[3], "/secrets/myset")) << deletes[3];
}

TEST(KpkgApply, KubectlReadsKpkgsApplySet) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    s.dir().write("m/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
                              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n");
    auto r = kpkg(
        s, {"apply", (s.dir() / "m").string(), "-n", "default", "--prune", "--applyset", "set1"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    // kubectl computes the same id for a set it makes itself.
    fs::path cm = k.write("c.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k1, "
                                    "namespace: default}\n");
    auto kr = k.run({"apply", "--server-side", "--prune", "--applyset=kset", "-n", "default", "-f",
                     cm.string()});
    ASSERT_EQ(kr.exit_code, 0) << kr.err;
    auto kid = k.run({"get", "secret", "kset", "-n", "default", "-o",
                      "jsonpath={.metadata.labels.applyset\\.kubernetes\\.io/id}"});
    EXPECT_EQ(kid.out, kube::applyset_id("kset", "default", "Secret", ""));
    // kpkg's parent and members as kubectl sees them.
    const std::string id = kube::applyset_id("set1", "default", "Secret", "");
    auto pid = k.run({"get", "secret", "set1", "-n", "default", "-o",
                      "jsonpath={.metadata.labels.applyset\\.kubernetes\\.io/id} "
                      "{.metadata.annotations.applyset\\.kubernetes\\.io/contains-group-kinds}"});
    EXPECT_EQ(pid.out, id + " ConfigMap") << pid.err;
    auto members = k.run({"get", "configmaps", "-n", "default", "-l",
                          "applyset.kubernetes.io/part-of=" + id, "-o", "name"});
    EXPECT_EQ(members.out, "configmap/a\nconfigmap/b\n") << members.err;
    // kubectl recognises the set as an ApplySet of another tool and leaves it alone, as the
    // ApplySet specification asks of tools; kpkg does the same with kubectl's.
    auto kp = k.run({"apply", "--server-side", "--prune", "--applyset=set1", "-n", "default", "-f",
                     cm.string()});
    EXPECT_NE(kp.exit_code, 0);
    EXPECT_TRUE(contains(kp.err, "managed by tooling \"kpkg\"")) << kp.err;
    auto mine = kpkg(
        s, {"apply", (s.dir() / "m").string(), "-n", "default", "--prune", "--applyset", "kset"});
    EXPECT_EQ(mine.exit_code, 1);
    EXPECT_TRUE(contains(mine.err, "managed by \"kubectl\"")) << mine.err;
}

TEST(KpkgApply, TimeoutNamesTheObjectAndWhy) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    ASSERT_TRUE(s.control(R"({"behaviours": [{"kind": "Deployment", "name": "op",
                                              "mode": "never"}]})"));
    std::string objs = kManifests;
    s.dir().write("m/all.yaml", objs.substr(objs.find("apiVersion: apps/v1")));
    auto r = kpkg(s, {"apply", (s.dir() / "m").string(), "-n", "demo", "--timeout", "2s"});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(contains(r.err, "timed out waiting for 1 object to be ready")) << r.err;
    EXPECT_TRUE(contains(r.err, "deployment/op in namespace demo: ")) << r.err;
    // What was applied is still reported.
    EXPECT_TRUE(contains(r.out, "namespace/demo")) << r.out;
    EXPECT_TRUE(contains(r.out, "created")) << r.out;
}

TEST(KpkgApply, FailingDeploymentIsAFailure) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    ASSERT_TRUE(s.control(R"({"behaviours": [{"kind": "Deployment", "name": "op",
                                              "mode": "fail"}]})"));
    std::string objs = kManifests;
    s.dir().write("m/all.yaml", objs.substr(objs.find("apiVersion: apps/v1")));
    auto r = kpkg(s, {"apply", (s.dir() / "m").string(), "-n", "demo", "--timeout", "60s"});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(contains(r.err, "deployment/op in namespace demo: progress deadline exceeded"))
        << r.err;
}

TEST(KpkgApply, BadInputIsRefusedBeforeAnyWrite) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    s.dir().write("bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n"
                              "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n");
    auto r = kpkg(s, {"apply", (s.dir() / "bad.yaml").string(), "-n", "default"});
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(contains(r.err, "bad.yaml:5:1: gadget/g: the server does not serve Gadget in "
                                "example.com/v1"))
        << r.err;
    EXPECT_EQ(s.write_count(), 0u);
    // A namespaced object with no namespace anywhere.
    s.dir().write("nons.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
    auto n = kpkg(s, {"apply", (s.dir() / "nons.yaml").string()});
    EXPECT_EQ(n.exit_code, 3) << describe(n);
    EXPECT_TRUE(contains(n.err, "names no namespace")) << n.err;
    EXPECT_EQ(s.write_count(), 0u);
}

TEST(KpkgApply, ServerDryRunAndDiff) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    s.dir().write("m/all.yaml", kManifests);
    auto r = kpkg(
        s, {"apply", (s.dir() / "m").string(), "-n", "demo", "--dry-run=server", "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    io::Node rep = json_of(r.out);
    EXPECT_EQ(report_object(rep, "op")->get("reason")->text,
              "not checked: namespace demo is created by this run");
    EXPECT_EQ(report_object(rep, "w1")->get("reason")->text,
              "not checked: its CustomResourceDefinition widgets.example.com is created by this "
              "run");
    EXPECT_EQ(report_object(rep, "demo")->get("reason")->text, "would be created");
    EXPECT_EQ(s.write_count(), 0u);
    EXPECT_FALSE(s.object("Namespace", "demo"));

    // Apply, change, diff: exit 5 and a unified diff; nothing changes.
    ASSERT_EQ(kpkg(s, {"apply", (s.dir() / "m").string(), "-n", "demo"}).exit_code, 0);
    std::string changed = kManifests;
    changed.replace(changed.find("replicas: 1"), 11, "replicas: 2");
    s.dir().write("m/all.yaml", changed);
    s.clear_requests();
    auto d = kpkg(s, {"apply", (s.dir() / "m").string(), "-n", "demo", "--diff"});
    EXPECT_EQ(d.exit_code, 5) << describe(d);
    EXPECT_TRUE(contains(d.out, "--- live/Deployment.apps/demo/op")) << d.out;
    EXPECT_TRUE(contains(d.out, "-  replicas: 1\n+  replicas: 2")) << d.out;
    EXPECT_FALSE(contains(d.out, "managedFields")) << d.out;
    EXPECT_EQ(s.write_count(), 0u);
    auto same = kpkg(s, {"apply", (s.dir() / "m").string(), "-n", "demo", "--diff"});
    EXPECT_EQ(same.exit_code, 5);
    s.dir().write("m/all.yaml", kManifests);
    auto none = kpkg(s, {"apply", (s.dir() / "m").string(), "-n", "demo", "--diff"});
    EXPECT_EQ(none.exit_code, 0) << describe(none);
    EXPECT_EQ(none.out, "");
}

TEST(KpkgApply, ConflictNeedsForceConflicts) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    fs::path f = k.write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, "
                                    "namespace: default}\ndata: {k: theirs}\n");
    ASSERT_EQ(k.run({"apply", "--server-side", "-f", f.string()}).exit_code, 0);
    s.dir().write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                             "data: {k: mine}\n");
    auto r = kpkg(s, {"apply", (s.dir() / "cm.yaml").string(), "-n", "default"});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(contains(r.err, "configmap/c in namespace default")) << r.err;
    EXPECT_TRUE(contains(r.err, "kubectl")) << r.err;
    EXPECT_TRUE(contains(r.err, "--force-conflicts")) << r.err;
    auto forced =
        kpkg(s, {"apply", (s.dir() / "cm.yaml").string(), "-n", "default", "--force-conflicts"});
    EXPECT_EQ(forced.exit_code, 0) << describe(forced);
    auto got = k.run({"get", "configmap", "c", "-n", "default", "-o", "jsonpath={.data.k}"});
    EXPECT_EQ(got.out, "mine");
}

TEST(KpkgApply, PlanTreeOlmFormatWaitsForTheCsv) {
    KubeServerOptions so;
    so.olm = true;
    KPKG_REQUIRE_KUBE_SERVER(s, so);
    s.dir().write("tree/.kpkg-plan", "kustomization.yaml\n");
    s.dir().write("tree/kustomization.yaml",
                  "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                  "resources:\n- common/namespace-ops.yaml\n- common/operatorgroup-ops.yaml\n"
                  "- etcd/subscription-etcd.yaml\n");
    s.dir().write("tree/common/namespace-ops.yaml",
                  "apiVersion: v1\nkind: Namespace\nmetadata: {name: ops}\n");
    s.dir().write("tree/common/operatorgroup-ops.yaml",
                  "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: "
                  "ops, namespace: ops}\nspec: {}\n");
    s.dir().write("tree/etcd/subscription-etcd.yaml",
                  "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: "
                  "{name: etcd, namespace: ops}\nspec: {name: etcd, source: cat, "
                  "sourceNamespace: olm, startingCSV: etcdoperator.v0.9.4}\n");
    // The server's OLM never resolves this Subscription, so nothing installs the CSV: the wait
    // names it.
    ASSERT_TRUE(s.control(R"({"behaviours": [{"kind": "Subscription", "name": "etcd",
                                              "mode": "never"}]})"));
    auto r = kpkg(s, {"apply", (s.dir() / "tree").string(), "--timeout", "2s"});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(contains(r.err, "subscription/etcd in namespace ops: ClusterServiceVersion "
                                "etcdoperator.v0.9.4 does not exist yet"))
        << r.err;
    EXPECT_TRUE(contains(r.err, "phase 2/3 operatorgroups")) << r.err;
}

TEST(KpkgApply, InterruptStopsAndReportsWhatWasApplied) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    ASSERT_TRUE(s.control(R"({"behaviours": [{"kind": "Deployment", "name": "op",
                                              "mode": "never"}]})"));
    std::string objs = kManifests;
    s.dir().write("m/all.yaml", objs.substr(objs.find("apiVersion: apps/v1")));
    const char* bin = std::getenv("KPKG_BIN");
    ASSERT_NE(bin, nullptr);
    // SIGINT once kpkg is waiting for the Deployment.
    const std::string cmd =
        std::string("\"$0\" apply \"$1\" --kubeconfig \"$2\" -n demo -o json "
                    "> \"$3\" 2> \"$4\" & p=$!; sleep 2; kill -INT $p; wait $p");
    auto r = run_program({"/bin/sh", "-c", cmd, bin, (s.dir() / "m").string(),
                          s.kubeconfig_path().string(), (s.dir() / "out.json").string(),
                          (s.dir() / "err.txt").string()},
                         {}, {}, 60);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const std::string err = read_file(s.dir() / "err.txt");
    EXPECT_TRUE(contains(err, "interrupted: stopped after the requests in flight")) << err;
    io::Node rep = json_of(read_file(s.dir() / "out.json"));
    ASSERT_NE(report_object(rep, "op"), nullptr);
    EXPECT_EQ(report_object(rep, "op")->get("action")->text, "created");
    EXPECT_EQ(report_object(rep, "op")->get("ready")->text, "false");
    EXPECT_EQ(report_object(rep, "demo")->get("action")->text, "created");
    EXPECT_EQ(rep.get("interrupted")->text, "true");
}

// --- time limits ----------------------------------------------------------------------------

const char* const kConfigMap = R"(apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {a: "1"}
)";

const char* const kCrd = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
)";

struct Timed {
    ProgramResult run;
    double seconds = 0;
};

// kpkg with this kubeconfig, killed after `limit_s` seconds (a run that used to hang for minutes
// then fails here instead of holding the suite), and how long it took.
Timed timed_kpkg(const fs::path& kubeconfig, std::vector<std::string> args, int limit_s = 60) {
    const char* bin = std::getenv("KPKG_BIN");
    EXPECT_NE(bin, nullptr);
    args.insert(args.begin(), bin == nullptr ? "kpkg" : bin);
    args.insert(args.begin() + 2, {"--kubeconfig", kubeconfig.string()});
    const auto start = std::chrono::steady_clock::now();
    Timed t;
    t.run = run_program(args, {}, {}, limit_s, {"NO_COLOR"});
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return t;
}

std::size_t watches(KubeServer& s) {
    std::size_t n = 0;
    for (const auto& q : s.requests())
        if (q.param("watch") == "true") ++n;
    return n;
}

TEST(KpkgApplyTimeLimit, APatchNeverAnsweredEndsAtTheTimeout) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    ASSERT_TRUE(s.control(R"({"faults": [{"method": "PATCH", "count": -1, "hang": true}]})"));
    s.dir().write("m/cm.yaml", kConfigMap);
    auto t =
        timed_kpkg(s.kubeconfig_path(), {"apply", (s.dir() / "m").string(), "--timeout", "5s"});
    EXPECT_EQ(t.run.exit_code, 1) << describe(t.run);
    // It used to take 6 attempts of 30 s.
    EXPECT_LT(t.seconds, 15.0) << describe(t.run);
    EXPECT_TRUE(contains(t.run.err, "apply configmap/settings in namespace default: PATCH "))
        << t.run.err;
    EXPECT_TRUE(contains(t.run.err, "the time limit of 5s passed")) << t.run.err;
    std::size_t patches = 0;
    for (const auto& q : s.requests())
        if (q.method == "PATCH") ++patches;
    EXPECT_EQ(patches, 1u);
}

// The global --request-timeout sets the per-request limit of the cluster's requests too (it was
// the registry's alone: a PATCH never answered took the fixed 30 s).
TEST(KpkgApplyTimeLimit, RequestTimeoutFlagBoundsEachRequest) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    ASSERT_TRUE(s.control(R"({"faults": [{"method": "PATCH", "count": -1, "hang": true}]})"));
    s.dir().write("m/cm.yaml", kConfigMap);
    auto t = timed_kpkg(s.kubeconfig_path(),
                        {"apply", (s.dir() / "m").string(), "--request-timeout", "2s"});
    EXPECT_EQ(t.run.exit_code, 1) << describe(t.run);
    EXPECT_LT(t.seconds, 12.0) << describe(t.run);
    EXPECT_TRUE(contains(t.run.err, "apply configmap/settings in namespace default: PATCH "))
        << t.run.err;
    EXPECT_TRUE(contains(t.run.err, "no answer within 2s")) << t.run.err;
}

// A kubeconfig for the server whose user's credentials come from this exec plugin.
fs::path exec_kubeconfig(const KubeServer& s, const fs::path& plugin) {
    return s.dir().write(
        "exec-config",
        "apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters:\n- name: c\n  cluster:\n"
        "    server: " +
            s.url() +
            "\nusers:\n- name: u\n  user:\n    exec:\n"
            "      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Never\n"
            "      command: " +
            plugin.string() + "\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n");
}

TEST(KpkgApplyTimeLimit, AnExecPluginThatNeverAnswersIsKilledAtTheTimeout) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    auto plugin = s.dir().write("plugin.sh", "#!/bin/sh\nsleep 600 &\nwait\n");
    ::chmod(plugin.c_str(), 0755);
    auto kc = exec_kubeconfig(s, plugin);
    s.dir().write("m/cm.yaml", kConfigMap);
    auto t = timed_kpkg(kc, {"apply", (s.dir() / "m").string(), "--timeout", "3s"});
    EXPECT_EQ(t.run.exit_code, 1) << describe(t.run);
    // It used to wait for the plugin's own 120 s.
    EXPECT_LT(t.seconds, 13.0) << describe(t.run);
    EXPECT_TRUE(contains(t.run.err, "exec credential plugin")) << t.run.err;
    EXPECT_TRUE(contains(t.run.err, "the time limit of 3s passed")) << t.run.err;
    EXPECT_EQ(s.write_count(), 0u);
}

TEST(KpkgApplyTimeLimit, AServerThatDiesDuringACrdWaitEndsAtTheTimeout) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    // The CRD is never Established, and the server ends as kpkg starts watching it.
    ASSERT_TRUE(s.control(R"({"behaviours": [{"kind": "CustomResourceDefinition",
                                              "name": "widgets.example.com", "mode": "never"}],
                              "faults": [{"method": "GET", "query": "watch=", "exit": true}]})"));
    s.dir().write("m/crd.yaml", kCrd);
    auto t =
        timed_kpkg(s.kubeconfig_path(), {"apply", (s.dir() / "m").string(), "--timeout", "5s"});
    EXPECT_EQ(t.run.exit_code, 1) << describe(t.run);
    // It used to try each list and watch 6 times, up to 8 s apart, 6 times over (about 50 s).
    EXPECT_LT(t.seconds, 15.0) << describe(t.run);
    EXPECT_TRUE(contains(t.run.err, "customresourcedefinition/widgets.example.com: ")) << t.run.err;
    EXPECT_TRUE(contains(t.run.err, "cannot connect to " + s.url())) << t.run.err;
}

TEST(KpkgApplyTimeLimit, WatchesThatEndAtOnceAreReopenedWithABackOff) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    ASSERT_TRUE(s.control(R"({"behaviours": [{"kind": "CustomResourceDefinition",
                                              "name": "widgets.example.com", "mode": "never"}],
                              "faults": [{"method": "GET", "query": "watch=", "count": -1,
                                          "watch_end_ms": 0}]})"));
    s.dir().write("m/crd.yaml", kCrd);
    auto t =
        timed_kpkg(s.kubeconfig_path(), {"apply", (s.dir() / "m").string(), "--timeout", "4s"});
    EXPECT_EQ(t.run.exit_code, 1) << describe(t.run);
    EXPECT_TRUE(contains(t.run.err, "timed out waiting for 1 object to be ready")) << t.run.err;
    // 100, 200, 400, 800, 1600 ms apart: 6 in 4 s (it used to be about 90).
    const std::size_t n = watches(s);
    EXPECT_LE(n, 12u);
    EXPECT_GE(n, 3u);
}

// --- signals while an exec credential plugin runs -------------------------------------------

bool process_gone(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!f || !std::getline(f, stat)) return true;
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

// kpkg apply of a ConfigMap whose credentials come from a plugin that never answers: it
// starts a child, writes both pids and waits. `signals` are sent to kpkg once the plugin runs,
// `gap` apart. Returns kpkg's wait status (-1: still running 10 s after the last signal, then
// killed) and the plugin's and its child's pids; kills whatever is left at the end.
struct Interrupted {
    int status = -1;
    double seconds = 0; // from the first signal to kpkg's end
    pid_t plugin = 0, child = 0;
    std::string out, err;
    bool plugin_gone = false;
};

Interrupted interrupt_kpkg(KubeServer& s, const std::vector<int>& signals,
                           std::vector<std::string> extra = {},
                           std::chrono::milliseconds gap = std::chrono::milliseconds(300)) {
    Interrupted r;
    const fs::path pids = s.dir() / "pids";
    auto plugin = s.dir().write("plugin.sh", "#!/bin/sh\nsleep 600 &\necho \"$$ $!\" > " +
                                                 pids.string() + ".tmp\nmv " + pids.string() +
                                                 ".tmp " + pids.string() + "\nwait\n");
    ::chmod(plugin.c_str(), 0755);
    auto kc = exec_kubeconfig(s, plugin);
    s.dir().write("m/cm.yaml", kConfigMap);
    const char* bin = std::getenv("KPKG_BIN");
    EXPECT_NE(bin, nullptr);
    if (bin == nullptr) return r;
    std::vector<std::string> args{bin, "apply", "--kubeconfig", kc.string(),
                                  (s.dir() / "m").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const fs::path out = s.dir() / "out", err = s.dir() / "err";
    const pid_t pid = ::fork();
    if (pid < 0) return r;
    if (pid == 0) {
        ::setpgid(0, 0);
        for (int sig : {SIGINT, SIGTERM, SIGHUP})
            ::signal(sig, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(o, 1);
        ::dup2(e, 2);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    const auto wait_for = [](const std::function<bool()>& done, std::chrono::seconds limit) {
        const auto until = std::chrono::steady_clock::now() + limit;
        while (!done() && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return done();
    };
    int status = 0;
    bool ended = false;
    const auto kpkg_ended = [&] {
        return ended || (ended = ::waitpid(pid, &status, WNOHANG) == pid);
    };
    if (wait_for([&] { return fs::exists(pids) || kpkg_ended(); }, std::chrono::seconds(20))) {
        std::istringstream in(test::read_file(pids));
        in >> r.plugin >> r.child;
    }
    EXPECT_GT(r.plugin, 0) << "the plugin did not start";
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < signals.size() && !kpkg_ended(); ++i) {
        if (i > 0) std::this_thread::sleep_for(gap);
        ::kill(pid, signals[i]);
    }
    if (wait_for(kpkg_ended, std::chrono::seconds(10))) r.status = status;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r.plugin > 0)
        r.plugin_gone = wait_for([&] { return process_gone(r.plugin) && process_gone(r.child); },
                                 std::chrono::seconds(3));
    // Whatever is left (the code before killed neither).
    if (!ended) {
        ::kill(-pid, SIGKILL);
        ::waitpid(pid, &status, 0);
    }
    if (r.plugin > 0 && !r.plugin_gone) ::kill(-r.plugin, SIGKILL);
    r.out = test::read_file(out);
    r.err = test::read_file(err);
    return r;
}

std::string describe(const Interrupted& r) {
    return "status " + std::to_string(r.status) + " after " + std::to_string(r.seconds) +
           " s\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

TEST(KpkgApplyInterrupt, AFirstInterruptStopsARunningExecPluginAtOnce) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    // It used to go on waiting for the plugin (its own 120 s), which Ctrl-C no longer reached.
    auto r = interrupt_kpkg(s, {SIGINT}, {"-o", "json"});
    ASSERT_NE(r.status, -1) << "kpkg still ran 10 s after SIGINT\n" << describe(r);
    ASSERT_TRUE(WIFEXITED(r.status)) << describe(r);
    EXPECT_EQ(WEXITSTATUS(r.status), 1) << describe(r);
    EXPECT_TRUE(r.plugin_gone) << "the plugin (" << r.plugin << ") or its child (" << r.child
                               << ") outlived the interrupt";
    EXPECT_TRUE(contains(r.err, "interrupted: exec credential plugin")) << r.err;
    io::Node rep = json_of(r.out);
    ASSERT_NE(rep.get("interrupted"), nullptr) << r.out;
    EXPECT_EQ(rep.get("interrupted")->text, "true") << r.out;
    EXPECT_EQ(s.write_count(), 0u);
}

TEST(KpkgApplyInterrupt, ASecondInterruptLeavesNoPluginBehind) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    // kpkg ends on the first (exit 1) or dies of the second; either way the plugin goes too. It
    // used to be left running when the second ended kpkg.
    auto r = interrupt_kpkg(s, {SIGINT, SIGINT}, {}, std::chrono::milliseconds(50));
    ASSERT_NE(r.status, -1) << "kpkg still ran 10 s after SIGINT\n" << describe(r);
    EXPECT_TRUE((WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1) ||
                (WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGINT))
        << describe(r);
    EXPECT_TRUE(r.plugin_gone) << "the plugin (" << r.plugin << ") or its child (" << r.child
                               << ") outlived kpkg";
}

TEST(KpkgApplyInterrupt, TermAndHangupLeaveNoPluginBehind) {
    for (int sig : {SIGTERM, SIGHUP}) {
        SCOPED_TRACE(strsignal(sig));
        KPKG_REQUIRE_KUBE_SERVER(s);
        auto r = interrupt_kpkg(s, {sig});
        ASSERT_NE(r.status, -1) << "kpkg still ran 10 s after the signal\n" << describe(r);
        // It dies of the signal, as before, but no longer leaves the plugin running.
        ASSERT_TRUE(WIFSIGNALED(r.status)) << describe(r);
        EXPECT_EQ(WTERMSIG(r.status), sig);
        EXPECT_TRUE(r.plugin_gone)
            << "the plugin (" << r.plugin << ") or its child (" << r.child << ") outlived kpkg";
    }
}

} // namespace
} // namespace kpkg::test
