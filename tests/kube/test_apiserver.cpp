// The test API server (tests/kube/apiserver.py) driven by the real kubectl 1.32: what kubectl
// accepts from it is what kpkg's own kube tests may rely on. Also its control API directly.
#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include <unistd.h>

#include "kpkg/io/load.hpp"
#include "kpkg/io/node.hpp"
#include "kube_server.hpp"

namespace kpkg::test {
namespace {

const char* const kKubectl = kubectl_1_32_path;

// kubectl with its own HOME and discovery cache, talking to one server.
class Kubectl {
public:
    explicit Kubectl(const KubeServer& s) : kubeconfig_(s.kubeconfig_path()) {}
    Kubectl(const KubeServer&, fs::path kubeconfig) : kubeconfig_(std::move(kubeconfig)) {}

    ProgramResult run(std::vector<std::string> args, const std::vector<std::string>& env = {},
                      int timeout_s = 60) const {
        args.insert(args.begin(), {kKubectl, "--kubeconfig", kubeconfig_.string(), "--cache-dir",
                                   (home_ / "cache").string()});
        std::vector<std::string> e = {"HOME=" + home_.path().string(), "KUBECONFIG="};
        e.insert(e.end(), env.begin(), env.end());
        return run_program(args, e, {}, timeout_s);
    }
    // Writes a file into the test's home; its path.
    fs::path write(const std::string& name, const std::string& content) const {
        return home_.write(name, content);
    }
    // Writes manifests into the test's home and applies them server-side.
    ProgramResult apply(const std::string& yaml, std::vector<std::string> extra = {},
                        const std::vector<std::string>& env = {}) const {
        std::string name = "m";
        name.append(std::to_string(++n_)).append(".yaml");
        fs::path f = home_.write(name, yaml);
        std::vector<std::string> a = {"apply", "--server-side", "-f", f.string()};
        a.insert(a.end(), extra.begin(), extra.end());
        return run(a, env);
    }

private:
    fs::path kubeconfig_;
    TempDir home_;
    mutable int n_ = 0;
};

#define REQUIRE_KUBECTL()                                                                          \
    if (access(kKubectl, X_OK) != 0) GTEST_SKIP() << missing_tool(kubectl_1_32, kKubectl)

KubeUser token_user(const std::string& t) {
    KubeUser u;
    u.token = t;
    return u;
}

KubeUser basic_user(const std::string& b) {
    KubeUser u;
    u.basic = b;
    return u;
}

std::string describe(const ProgramResult& r) {
    return "exit " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") +
           "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

const io::Node* at(const io::Node& n, std::initializer_list<const char*> path) {
    const io::Node* cur = &n;
    for (const char* p : path) {
        cur = cur->get(p);
        if (cur == nullptr) return nullptr;
    }
    return cur;
}

std::string text_at(const io::Node& n, std::initializer_list<const char*> path) {
    const io::Node* v = at(n, path);
    return v != nullptr && v->is_scalar() ? v->text : std::string();
}

// The managers (manager/operation) of an object.
std::vector<std::string> managers(const io::Node& obj) {
    std::vector<std::string> out;
    const io::Node* mf = at(obj, {"metadata", "managedFields"});
    if (mf == nullptr) return out;
    for (const auto& e : mf->items)
        out.push_back(text_at(e, {"manager"}) + "/" + text_at(e, {"operation"}));
    return out;
}

io::Node parse_one(const std::string& json) {
    auto docs = io::parse_json(json, "kubectl output");
    if (!docs || docs->empty()) return {};
    return std::move((*docs)[0].root);
}

std::size_t count_requests(const std::vector<KubeRequest>& log, const std::string& method,
                           const std::string& path) {
    std::size_t n = 0;
    for (const auto& r : log)
        if (r.method == method && r.path == path) ++n;
    return n;
}

const char* const kBasics = R"(apiVersion: v1
kind: Namespace
metadata:
  name: demo
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: demo
  labels: {app: web}
data:
  mode: fast
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
        env:
        - name: MODE
          value: fast
)";

const char* const kCrd = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
    subresources: {status: {}}
)";

const char* const kWidget = R"(apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {size: 3}
)";

// ---- server-side apply, get, managed fields ----

TEST(KubeApiServer, ApplyServerSideThenGetShowsManagedFields) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    auto r = k.apply(kBasics);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "namespace/demo serverside-applied")) << r.out;
    EXPECT_TRUE(contains(r.out, "deployment.apps/web serverside-applied")) << r.out;

    r = k.run({"get", "deployment", "web", "-n", "demo", "-o", "json", "--show-managed-fields"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    io::Node d = parse_one(r.out);
    EXPECT_EQ(managers(d), std::vector<std::string>{"kubectl/Apply"});
    EXPECT_EQ(text_at(d, {"metadata", "generation"}), "1");
    EXPECT_FALSE(text_at(d, {"metadata", "uid"}).empty());
    EXPECT_FALSE(text_at(d, {"metadata", "creationTimestamp"}).empty());
    const io::Node* fields = at(d, {"metadata", "managedFields"});
    ASSERT_NE(fields, nullptr);
    const io::Node& f = fields->items.at(0);
    // Containers are a list keyed by name, ports by containerPort and protocol.
    const io::Node* c = at(f, {"fieldsV1", "f:spec", "f:template", "f:spec", "f:containers",
                               "k:{\"name\":\"nginx\"}"});
    ASSERT_NE(c, nullptr) << r.out;
    EXPECT_NE(at(*c, {"f:image"}), nullptr);
    EXPECT_NE(at(*c, {"f:ports", "k:{\"containerPort\":80,\"protocol\":\"TCP\"}"}), nullptr);
    EXPECT_NE(at(*c, {"f:env", "k:{\"name\":\"MODE\"}", "f:value"}), nullptr);

    r = k.run({"get", "configmap", "settings", "-n", "demo", "-o", "jsonpath={.data.mode}"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, "fast");

    // One PATCH per object, server-side field validation (no --validate=false needed).
    auto log = s.requests();
    std::size_t patches = 0;
    for (const auto& q : log) {
        if (q.method != "PATCH") continue;
        ++patches;
        EXPECT_EQ(q.content_type, "application/apply-patch+yaml");
        EXPECT_EQ(q.param("fieldManager"), "kubectl");
        EXPECT_EQ(q.param("fieldValidation"), "Strict");
        EXPECT_EQ(q.status, 201) << q.path;
    }
    EXPECT_EQ(patches, 3u);

    // Applying the same again changes nothing: 200, same resourceVersion. (Once the simulated
    // controller has made the Deployment ready: that status update is a change of its own.)
    r = k.run({"rollout", "status", "deployment/web", "-n", "demo", "--timeout=20s"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    auto before = s.object("Deployment", "web", "demo");
    ASSERT_TRUE(before);
    r = k.apply(kBasics);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    auto after = s.object("Deployment", "web", "demo");
    ASSERT_TRUE(after);
    EXPECT_EQ(text_at(*after, {"metadata", "resourceVersion"}),
              text_at(*before, {"metadata", "resourceVersion"}));
}

TEST(KubeApiServer, ApplyIntoMissingNamespaceFailsLikeARealServer) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    auto r = k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: nope}\n");
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "namespaces \"nope\" not found")) << r.err;
    EXPECT_FALSE(s.object("ConfigMap", "x"));
}

TEST(KubeApiServer, ServerDryRunStoresNothing) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    auto r = k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry}\ndata: {a: b}\n",
                     {"--dry-run=server"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "serverside-applied (server dry run)")) << r.out;
    EXPECT_FALSE(s.object("ConfigMap", "dry"));
    bool saw = false;
    for (const auto& q : s.requests())
        if (q.method == "PATCH" && q.param("dryRun") == "All") saw = true;
    EXPECT_TRUE(saw);
}

TEST(KubeApiServer, KubectlDiffShowsOnlyRealChanges) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply(kBasics).exit_code, 0);
    auto r = k.run({"diff", "--server-side", "-f", k.write("same.yaml", kBasics).string()});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, "");
    std::string changed = kBasics;
    changed.replace(changed.find("mode: fast"), 10, "mode: slow");
    r = k.run({"diff", "--server-side", "-f", k.write("changed.yaml", changed).string()});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(contains(r.out, "-  mode: fast\n+  mode: slow")) << r.out;
    auto c = s.object("ConfigMap", "settings", "demo");
    ASSERT_TRUE(c);
    EXPECT_EQ(text_at(*c, {"data", "mode"}), "fast") << "a diff changes nothing";
}

// ---- readiness: wait and rollout status ----

TEST(KubeApiServer, WaitAndRolloutStatusSucceed) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply(kBasics).exit_code, 0);
    auto r = k.run(
        {"wait", "--for=condition=Available", "deployment/web", "-n", "demo", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "condition met")) << r.out;
    r = k.run({"rollout", "status", "deployment/web", "-n", "demo", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "successfully rolled out")) << r.out;
}

TEST(KubeApiServer, WorkloadsBecomeReadyAfterTheDelay) {
    REQUIRE_KUBECTL();
    KubeServerOptions s_opts;
    s_opts.delay_ms = 300;
    KPKG_REQUIRE_KUBE_SERVER(s, s_opts);
    Kubectl k(s);
    auto r = k.apply(R"(apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: busybox}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: default}
spec:
  template:
    spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}
)");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    // Not ready before the delay.
    auto sts = s.object("StatefulSet", "db");
    ASSERT_TRUE(sts);
    EXPECT_EQ(at(*sts, {"status", "readyReplicas"}), nullptr);
    r = k.run({"rollout", "status", "statefulset/db", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"rollout", "status", "daemonset/agent", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"wait", "--for=condition=Complete", "job/once", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
}

TEST(KubeApiServer, PodsApiServicesAndCsvsToo) {
    REQUIRE_KUBECTL();
    KubeServerOptions s_opts;
    s_opts.olm = true;
    KPKG_REQUIRE_KUBE_SERVER(s, s_opts);
    ASSERT_TRUE(s.control(R"({"behaviours": [{"kind": "ClusterServiceVersion", "name": "bad.v1",
                                              "mode": "fail"}]})"));
    Kubectl k(s);
    auto r = k.apply(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.example.com}
spec: {group: metrics.example.com, version: v1beta1, groupPriorityMinimum: 100,
       versionPriority: 100, service: {name: m, namespace: default}}
---
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {name: bad.v1, namespace: default}
spec: {displayName: bad}
)");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"wait", "--for=condition=Ready", "pod/p", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"wait", "--for=condition=Available", "apiservice/v1beta1.metrics.example.com",
               "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"wait", "--for=jsonpath={.status.phase}=Failed", "csv/bad.v1", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
}

TEST(KubeApiServer, ControllerBehavioursNeverAndFail) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    ASSERT_TRUE(s.control(R"({"behaviours": [
        {"kind": "Deployment", "name": "stuck", "mode": "never"},
        {"kind": "Deployment", "name": "broken", "mode": "fail"},
        {"kind": "Job", "mode": "fail"}]})"));
    Kubectl k(s);
    std::string d = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME, namespace: default}
spec:
  selector: {matchLabels: {app: NAME}}
  template:
    metadata: {labels: {app: NAME}}
    spec: {containers: [{name: c, image: busybox}]}
)";
    auto named = [&](const std::string& n) {
        std::string y = d;
        for (auto p = y.find("NAME"); p != std::string::npos; p = y.find("NAME"))
            y.replace(p, 4, n);
        return y;
    };
    ASSERT_EQ(k.apply(named("stuck") + "---\n" + named("broken")).exit_code, 0);
    auto r = k.run({"wait", "--for=condition=Available", "deployment/stuck", "--timeout=2s"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "timed out")) << r.err;
    r = k.run({"rollout", "status", "deployment/broken", "--timeout=20s"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "exceeded its progress deadline")) << r.err;

    ASSERT_EQ(k.apply("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
                      "  template: {spec: {restartPolicy: Never, containers: [{name: c, image: "
                      "busybox}]}}\n")
                  .exit_code,
              0);
    r = k.run({"wait", "--for=condition=Failed", "job/j", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
}

// ---- client-side apply, replace, patch, label ----

TEST(KubeApiServer, ClientSideApplyThenMigrationToServerSide) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    auto r = k.run({"apply", "-f", k.write("basics.yaml", kBasics).string()});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "deployment.apps/web created")) << r.out;
    std::string changed = kBasics;
    changed.replace(changed.find("nginx:1.27"), 10, "nginx:1.28");
    r = k.run({"apply", "-f", k.write("changed.yaml", changed).string()});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "deployment.apps/web configured")) << r.out;
    EXPECT_TRUE(contains(r.out, "configmap/settings unchanged")) << r.out;
    EXPECT_FALSE(contains(r.err, "warning")) << r.err;
    auto d = s.object("Deployment", "web", "demo");
    ASSERT_TRUE(d);
    const io::Node* cs = at(*d, {"spec", "template", "spec", "containers"});
    ASSERT_NE(cs, nullptr);
    ASSERT_EQ(cs->items.size(), 1u);
    EXPECT_EQ(text_at(cs->items[0], {"image"}), "nginx:1.28");
    EXPECT_EQ(text_at(*d, {"metadata", "generation"}), "2");
    bool smp = false;
    for (const auto& q : s.requests())
        if (q.method == "PATCH" && q.content_type == "application/strategic-merge-patch+json")
            smp = true;
    EXPECT_TRUE(smp);
    EXPECT_EQ(managers(*d), std::vector<std::string>{"kubectl-client-side-apply/Update"});

    // Server-side apply of the same takes the fields over from the client-side manager
    // (kubectl rewrites the managed fields with a JSON patch), so no conflict.
    r = k.run({"apply", "--server-side", "-f", k.write("changed.yaml", changed).string()});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    d = s.object("Deployment", "web", "demo");
    ASSERT_TRUE(d);
    auto m = managers(*d);
    EXPECT_NE(std::find(m.begin(), m.end(), "kubectl/Apply"), m.end());
    EXPECT_EQ(std::find(m.begin(), m.end(), "kubectl-client-side-apply/Update"), m.end());
}

TEST(KubeApiServer, ReplacePatchAndLabel) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply(kBasics).exit_code, 0);
    auto r = k.run({"patch", "deployment", "web", "-n", "demo", "--type=json", "-p",
                    R"([{"op":"replace","path":"/spec/replicas","value":3}])"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"label", "configmap", "settings", "-n", "demo", "tier=gold"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    auto d = s.object("Deployment", "web", "demo");
    ASSERT_TRUE(d);
    EXPECT_EQ(text_at(*d, {"spec", "replicas"}), "3");
    EXPECT_EQ(text_at(*d, {"metadata", "generation"}), "2");
    auto c = s.object("ConfigMap", "settings", "demo");
    ASSERT_TRUE(c);
    EXPECT_EQ(text_at(*c, {"metadata", "labels", "tier"}), "gold");

    // PUT with the current resourceVersion replaces; with a stale one it is a Conflict.
    r = k.run({"get", "configmap", "settings", "-n", "demo", "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    std::string current = r.out;
    auto at_mode = current.find("\"fast\"");
    ASSERT_NE(at_mode, std::string::npos) << current;
    current.replace(at_mode, 6, "\"slow\"");
    r = k.run({"replace", "-f", k.write("cm.json", current).string()});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "configmap/settings replaced")) << r.out;
    r = k.run({"replace", "-f", k.write("cm.json", current).string()});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "the object has been modified")) << r.err;
    c = s.object("ConfigMap", "settings", "demo");
    ASSERT_TRUE(c);
    EXPECT_EQ(text_at(*c, {"data", "mode"}), "slow");
}

TEST(KubeApiServer, InvalidObjectsAreRefused) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    auto r = k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_Valid}\n");
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "is invalid")) << r.err;
    EXPECT_TRUE(contains(r.err, "metadata.name")) << r.err;
    r = k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: l, labels: {a: 'no spaces'}}\n");
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "metadata.labels: Invalid value: \"no spaces\"")) << r.err;
    r = k.apply("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {}\n");
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "spec.selector: Required value")) << r.err;
    EXPECT_FALSE(s.object("Deployment", "d"));
}

TEST(KubeApiServer, UnknownFieldsRefusedWhenStrictDroppedWithAWarning) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    std::string typo = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t}\ndata: {a: b}\n"
                       "datta: {c: d}\n";
    // kubectl asks for Strict: a 400 naming the field.
    auto r = k.apply(typo);
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, ".datta: field not declared in schema")) << r.err;
    EXPECT_FALSE(s.object("ConfigMap", "t"));
    // Warn: stored without the field, with a warning.
    r = k.run({"create", "--validate=warn", "-f", k.write("typo.yaml", typo).string()});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "unknown field \"datta\"")) << r.err;
    auto c = s.object("ConfigMap", "t");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->get("datta"), nullptr);
    EXPECT_EQ(text_at(*c, {"data", "a"}), "b");
}

// ---- CRDs ----

TEST(KubeApiServer, CustomResourcesAreServedOnceTheirCrdIsEstablished) {
    REQUIRE_KUBECTL();
    KubeServerOptions s_opts;
    s_opts.delay_ms = 500;
    KPKG_REQUIRE_KUBE_SERVER(s, s_opts);
    Kubectl k(s);
    // A CR beside its CRD fails as it does with a real server: no mapping yet.
    auto r = k.apply(std::string(kCrd) + "---\n" + kWidget);
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "ensure CRDs are installed first")) << r.err;
    EXPECT_TRUE(
        contains(r.out, "customresourcedefinition.apiextensions.k8s.io/widgets.example.com"))
        << r.out;

    r = k.run({"wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=20s"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    auto crd = s.object("CustomResourceDefinition", "widgets.example.com");
    ASSERT_TRUE(crd);
    EXPECT_TRUE(contains(text_at(*crd, {"status", "acceptedNames", "kind"}), "Widget"));
    // A change to an established CRD does not take it (or its resources) away.
    std::string changed = kCrd;
    changed.replace(changed.find("listKind: WidgetList"), 20,
                    "listKind: WidgetList, shortNames: [wd]");
    ASSERT_EQ(k.apply(changed).exit_code, 0);
    crd = s.object("CustomResourceDefinition", "widgets.example.com");
    ASSERT_TRUE(crd);
    EXPECT_EQ(text_at(*crd, {"metadata", "generation"}), "2");
    const io::Node* conds = at(*crd, {"status", "conditions"});
    ASSERT_NE(conds, nullptr);
    for (const auto& c : conds->items)
        EXPECT_EQ(text_at(c, {"status"}), "True") << text_at(c, {"type"});

    r = k.apply(kWidget);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "widget.example.com/w1 serverside-applied")) << r.out;
    // The CRD's schema decides which fields a custom resource may have.
    r = k.apply("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w2}\n"
                "spec: {size: 1}\ncolour: red\n");
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, ".colour: field not declared in schema")) << r.err;
    r = k.run({"get", "widgets", "-o", "jsonpath={.items[0].spec.size}"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, "3");

    // The status subresource: a merge patch of status through /status.
    r = k.run({"patch", "widget", "w1", "--subresource=status", "--type=merge", "-p",
               R"({"status":{"phase":"Ready"}})"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    auto w = s.object("Widget", "w1");
    ASSERT_TRUE(w);
    EXPECT_EQ(text_at(*w, {"status", "phase"}), "Ready");

    // Deleting the CRD takes its resources out of discovery.
    r = k.run({"delete", "crd", "widgets.example.com"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"get", "widgets"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
}

TEST(KubeApiServer, StatusGivenByABehaviourOrSetDirectly) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    ASSERT_TRUE(s.control(R"({"behaviours": [{"kind": "Widget", "delay_ms": 300, "status":
        {"conditions": [{"type": "Ready", "status": "True", "reason": "Done",
                         "observedGeneration": "$generation"}]}}]})"));
    Kubectl k(s);
    ASSERT_EQ(k.apply(kCrd).exit_code, 0);
    ASSERT_EQ(
        k.run({"wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=20s"})
            .exit_code,
        0);
    ASSERT_EQ(k.apply(kWidget).exit_code, 0);
    auto w = s.object("Widget", "w1");
    ASSERT_TRUE(w);
    EXPECT_EQ(at(*w, {"status"}), nullptr) << "not before the delay";
    auto r = k.run({"wait", "--for=condition=Ready", "widget/w1", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    w = s.object("Widget", "w1");
    ASSERT_TRUE(w);
    const io::Node* conds = at(*w, {"status", "conditions"});
    ASSERT_NE(conds, nullptr);
    EXPECT_EQ(text_at(conds->items.at(0), {"observedGeneration"}), "1");

    ASSERT_TRUE(s.set_status("example.com/v1", "Widget", "default", "w1",
                             R"({"conditions": [{"type": "Ready", "status": "False"}]})"));
    r = k.run({"get", "widget", "w1", "-o", "jsonpath={.status.conditions[0].status}"});
    EXPECT_EQ(r.out, "False") << describe(r);
    EXPECT_FALSE(s.set_status("example.com/v1", "Widget", "default", "nope", "{}"));
}

TEST(KubeApiServer, ResourceVersionInAnApplyIsAPrecondition) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\n").exit_code, 0);
    auto c = s.object("ConfigMap", "p");
    ASSERT_TRUE(c);
    std::string rv = text_at(*c, {"metadata", "resourceVersion"});
    auto r = k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p, resourceVersion: '1'}"
                     "\ndata: {a: b}\n");
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "the object has been modified")) << r.err;
    r = k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p, resourceVersion: '" + rv +
                "'}\ndata: {a: b}\n");
    EXPECT_EQ(r.exit_code, 0) << describe(r);
}

TEST(KubeApiServer, LargeCrdNeedsServerSideApply) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    // Client-side apply keeps the whole object in an annotation, which a real server caps at
    // 256 KiB: a large CRD fails that way and goes in with server-side apply.
    std::string big = kCrd;
    const std::string schema = "openAPIV3Schema:\n        type: object\n";
    big.replace(big.find(schema), schema.size(),
                schema + "        description: '" + std::string(300000, 'x') + "'\n");
    fs::path f = k.write("big.yaml", big);
    auto r = k.run({"apply", "-f", f.string()});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "metadata.annotations: Too long: must have at most 262144 bytes"))
        << r.err;
    EXPECT_FALSE(s.object("CustomResourceDefinition", "widgets.example.com"));
    r = k.run({"apply", "--server-side", "-f", f.string()});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(s.object("CustomResourceDefinition", "widgets.example.com"));
}

TEST(KubeApiServer, MultiVersionCrdServesEveryVersionAndPrefersGa) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply(R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Cluster
  versions:
  - {name: v1alpha1, served: true, storage: true,
     schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v1, served: true, storage: false,
     schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
)")
                  .exit_code,
              0);
    ASSERT_EQ(
        k.run({"wait", "--for=condition=Established", "crd/gadgets.example.com", "--timeout=20s"})
            .exit_code,
        0);
    auto r = k.apply("apiVersion: example.com/v1alpha1\nkind: Gadget\nmetadata: {name: g}\n"
                     "spec: {size: 1}\n");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"get", "gadget", "g", "-o", "jsonpath={.apiVersion}"});
    EXPECT_EQ(r.out, "example.com/v1") << describe(r);
    r = k.run({"get", "gadgets.v1alpha1.example.com", "g", "-o", "jsonpath={.apiVersion}"});
    EXPECT_EQ(r.out, "example.com/v1alpha1") << describe(r);
    // A dry run that would add a version serves nothing new.
    r = k.apply(R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Cluster
  versions:
  - {name: v1alpha1, served: true, storage: true,
     schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v1, served: true, storage: false,
     schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v2, served: true, storage: false,
     schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
)",
                {"--dry-run=server"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"get", "--raw", "/apis/example.com/v2/gadgets"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    auto crd = s.object("CustomResourceDefinition", "gadgets.example.com");
    ASSERT_TRUE(crd);
    const io::Node* stored = at(*crd, {"status", "storedVersions"});
    ASSERT_NE(stored, nullptr);
    ASSERT_EQ(stored->items.size(), 1u);
    EXPECT_EQ(stored->items[0].text, "v1alpha1");
}

TEST(KubeApiServer, CrdNeverEstablishedTimesOut) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    ASSERT_TRUE(s.control(R"({"behaviours": [{"kind": "CustomResourceDefinition",
                                              "mode": "never"}]})"));
    Kubectl k(s);
    ASSERT_EQ(k.apply(kCrd).exit_code, 0);
    auto r =
        k.run({"wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=2s"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    r = k.apply(kWidget);
    EXPECT_NE(r.exit_code, 0) << describe(r);
}

// ---- conflicts ----

TEST(KubeApiServer, ConflictingManagersNeedForceConflicts) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                      "data: {shared: one, mine: x}\n")
                  .exit_code,
              0);
    std::string other = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                        "data: {shared: two}\n";
    auto r = k.apply(other, {"--field-manager=other"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "conflict with \"kubectl\"")) << r.err;
    EXPECT_TRUE(contains(r.err, ".data.shared")) << r.err;
    EXPECT_TRUE(contains(r.err, "--force-conflicts")) << r.err;
    auto c = s.object("ConfigMap", "c");
    ASSERT_TRUE(c);
    EXPECT_EQ(text_at(*c, {"data", "shared"}), "one");

    // The same value is no conflict: both own it.
    r = k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {mine: x}\n",
                {"--field-manager=third"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);

    r = k.apply(other, {"--field-manager=other", "--force-conflicts"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    c = s.object("ConfigMap", "c");
    ASSERT_TRUE(c);
    EXPECT_EQ(text_at(*c, {"data", "shared"}), "two");
    auto m = managers(*c);
    EXPECT_EQ(m, (std::vector<std::string>{"kubectl/Apply", "third/Apply", "other/Apply"}));

    // Fields kubectl stops applying are removed only where no other manager owns them: "mine"
    // stays ("third" owns it too), "extra" goes (kubectl alone had it), "shared" stays ("other"
    // took it over).
    r = k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                "data: {mine: x, extra: z}\n");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    r = k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {}\n");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    c = s.object("ConfigMap", "c");
    ASSERT_TRUE(c);
    EXPECT_EQ(text_at(*c, {"data", "mine"}), "x");     // still owned by "third"
    EXPECT_EQ(at(*c, {"data", "extra"}), nullptr);     // only kubectl had it
    EXPECT_EQ(text_at(*c, {"data", "shared"}), "two"); // owned by "other"
}

// ---- ApplySet prune, delete ----

TEST(KubeApiServer, ApplySetPruneDeletesWhatLeftTheSet) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n").exit_code, 0);
    std::vector<std::string> env = {"KUBECTL_APPLYSET=true"};
    std::vector<std::string> flags = {"--prune", "--applyset=myset", "-n", "apps"};
    std::string a = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: '1'}\n";
    std::string b = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {x: '2'}\n";
    auto r = k.apply(a + "---\n" + b, flags, env);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    auto parent = s.object("Secret", "myset", "apps");
    ASSERT_TRUE(parent) << "the ApplySet parent Secret";
    std::string id = text_at(*parent, {"metadata", "labels", "applyset.kubernetes.io/id"});
    EXPECT_FALSE(id.empty());
    auto cb = s.object("ConfigMap", "b", "apps");
    ASSERT_TRUE(cb);
    EXPECT_EQ(text_at(*cb, {"metadata", "labels", "applyset.kubernetes.io/part-of"}), id);

    r = k.apply(a, flags, env);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "configmap/b pruned")) << r.out;
    EXPECT_FALSE(s.object("ConfigMap", "b", "apps"));
    EXPECT_TRUE(s.object("ConfigMap", "a", "apps"));
    bool listed = false;
    for (const auto& q : s.requests())
        if (q.method == "GET" && q.path == "/api/v1/namespaces/apps/configmaps" &&
            q.param("labelSelector") == "applyset.kubernetes.io/part-of=" + id)
            listed = true;
    EXPECT_TRUE(listed) << "the prune LIST by label selector";
}

TEST(KubeApiServer, DeleteThenNotFound) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply(kBasics).exit_code, 0);
    auto r = k.run({"delete", "deployment", "web", "-n", "demo"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "deployment.apps \"web\" deleted")) << r.out;
    r = k.run({"get", "deployment", "web", "-n", "demo"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(contains(r.err, "deployments.apps \"web\" not found")) << r.err;
    // A namespace delete takes its objects with it (kubectl waits for it to go).
    r = k.run({"delete", "namespace", "demo", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_FALSE(s.object("Namespace", "demo"));
    EXPECT_FALSE(s.object("ConfigMap", "settings", "demo"));
}

TEST(KubeApiServer, FinalizersHoldADelete) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, finalizers: "
                      "[example.com/hold]}\n")
                  .exit_code,
              0);
    auto r = k.run({"delete", "configmap", "held", "--wait=false"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    auto c = s.object("ConfigMap", "held");
    ASSERT_TRUE(c) << "still there, marked";
    EXPECT_FALSE(text_at(*c, {"metadata", "deletionTimestamp"}).empty());
    r = k.run({"wait", "--for=delete", "configmap/held", "--timeout=1s"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    r = k.run({"patch", "configmap", "held", "--type=merge", "-p",
               R"({"metadata":{"finalizers":null}})"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_FALSE(s.object("ConfigMap", "held"));
}

TEST(KubeApiServer, DelayedDeleteIsWaitedFor) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    ASSERT_TRUE(s.control(R"({"behaviours": [{"kind": "ConfigMap", "delete_delay_ms": 1500}]})"));
    Kubectl k(s);
    ASSERT_EQ(k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: slow}\n").exit_code, 0);
    auto t0 = std::chrono::steady_clock::now();
    auto r = k.run({"delete", "configmap", "slow", "--timeout=20s"});
    auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_GE(took, std::chrono::milliseconds(1400));
    EXPECT_FALSE(s.object("ConfigMap", "slow"));
}

TEST(KubeApiServer, ConcurrentClientsEachGetTheirOwnResourceVersions) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    std::vector<std::unique_ptr<Kubectl>> clients;
    std::vector<ProgramResult> results(4);
    std::vector<std::thread> threads;
    for (int c = 0; c < 4; ++c) {
        clients.push_back(std::make_unique<Kubectl>(s));
        std::string y;
        for (int i = 0; i < 25; ++i)
            y += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c" + std::to_string(c) +
                 "-" + std::to_string(i) + "}\ndata: {k: v}\n";
        threads.emplace_back([&, c, y] { results[c] = clients[c]->apply(y); });
    }
    for (auto& t : threads)
        t.join();
    for (const auto& r : results)
        EXPECT_EQ(r.exit_code, 0) << describe(r);
    io::Node all = s.objects();
    const io::Node* items = all.get("items");
    ASSERT_NE(items, nullptr);
    std::set<std::string> rvs;
    std::size_t cms = 0;
    for (const auto& o : items->items) {
        rvs.insert(text_at(o, {"metadata", "resourceVersion"}));
        if (text_at(o, {"kind"}) == "ConfigMap") ++cms;
    }
    EXPECT_EQ(cms, 100u);
    EXPECT_EQ(rvs.size(), items->items.size()) << "every write has its own resourceVersion";
}

// ---- list and watch ----

TEST(KubeApiServer, ListInChunksAndBySelector) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    std::string y;
    for (int i = 0; i < 5; ++i)
        y += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c" + std::to_string(i) +
             ", labels: {tier: " + (i % 2 ? "odd" : "even") + "}}\n";
    ASSERT_EQ(k.apply(y).exit_code, 0);
    auto r = k.run({"get", "configmaps", "--chunk-size=2", "-o", "name"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, "configmap/c0\nconfigmap/c1\nconfigmap/c2\nconfigmap/c3\nconfigmap/c4\n");
    std::size_t continued = 0;
    for (const auto& q : s.requests())
        if (q.path == "/api/v1/namespaces/default/configmaps" && !q.param("continue").empty())
            ++continued;
    EXPECT_EQ(continued, 2u);
    r = k.run({"get", "configmaps", "-l", "tier in (odd)", "-o", "name"});
    EXPECT_EQ(r.out, "configmap/c1\nconfigmap/c3\n") << describe(r);
    r = k.run({"get", "configmaps", "-l", "tier!=odd,tier", "-o", "name"});
    EXPECT_EQ(r.out, "configmap/c0\nconfigmap/c2\nconfigmap/c4\n") << describe(r);
    r = k.run({"get", "configmaps", "--field-selector", "metadata.name=c3", "-o", "name"});
    EXPECT_EQ(r.out, "configmap/c3\n") << describe(r);
    r = k.run({"get", "configmaps", "-A", "-o", "name"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "configmap/c4")) << r.out;
}

// Waits (up to 20 s) until the server has logged a watch request; false if it never did.
bool wait_for_watch(KubeServer& s) {
    for (int i = 0; i < 400; ++i) {
        for (const auto& q : s.requests())
            if (q.param("watch") == "true" || q.param("watch") == "1") return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

TEST(KubeApiServer, WatchSeesAddedModifiedDeleted) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    Kubectl k2(s);
    ProgramResult watched;
    std::thread t([&] {
        watched =
            k.run({"get", "configmaps", "-w", "--output-watch-events", "-o",
                   "jsonpath={.type} {.object.metadata.name}{\"\\n\"}", "--request-timeout=5s"},
                  {}, 30);
    });
    bool watching = wait_for_watch(s);
    auto r1 = k2.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\n");
    auto r2 = k2.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\ndata: {a: b}\n");
    auto r3 = k2.run({"delete", "configmap", "late"});
    t.join();
    ASSERT_TRUE(watching) << describe(watched);
    EXPECT_EQ(r1.exit_code, 0) << describe(r1);
    EXPECT_EQ(r2.exit_code, 0) << describe(r2);
    EXPECT_EQ(r3.exit_code, 0) << describe(r3);
    EXPECT_EQ(watched.out, "ADDED late\nMODIFIED late\nDELETED late\n") << describe(watched);
    bool from_list = false;
    for (const auto& q : s.requests())
        if (q.param("watch") == "true" && !q.param("resourceVersion").empty()) from_list = true;
    EXPECT_TRUE(from_list) << "the watch starts at the list's resourceVersion";
}

TEST(KubeApiServer, WatchWithASelectorSeesObjectsEnterAndLeaveIt) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    Kubectl k2(s);
    ASSERT_EQ(k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n").exit_code, 0);
    ProgramResult watched;
    std::thread t([&] {
        watched =
            k.run({"get", "configmaps", "-l", "tier=gold", "-w", "--output-watch-events", "-o",
                   "jsonpath={.type} {.object.metadata.name}{\"\\n\"}", "--request-timeout=5s"},
                  {}, 30);
    });
    bool watching = wait_for_watch(s);
    auto r1 = k2.run({"label", "configmap", "c", "tier=gold"});
    auto r2 = k2.run({"label", "--overwrite", "configmap", "c", "tier=silver"});
    t.join();
    ASSERT_TRUE(watching) << describe(watched);
    EXPECT_EQ(r1.exit_code, 0) << describe(r1);
    EXPECT_EQ(r2.exit_code, 0) << describe(r2);
    EXPECT_EQ(watched.out, "ADDED c\nDELETED c\n") << describe(watched);
}

TEST(KubeApiServer, WatchFromATooOldVersionIsExpiredAndInitialEventsEndWithABookmark) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n").exit_code, 0);
    auto r = k.run({"get", "--raw",
                    "/api/v1/namespaces/default/configmaps?watch=1&"
                    "resourceVersion=5&timeoutSeconds=5"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "\"type\": \"ERROR\"")) << r.out;
    EXPECT_TRUE(contains(r.out, "\"code\": 410")) << r.out;
    r = k.run({"get", "--raw",
               "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&"
               "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    auto added = r.out.find("\"type\": \"ADDED\"");
    auto bookmark = r.out.find("\"k8s.io/initial-events-end\": \"true\"");
    EXPECT_NE(added, std::string::npos) << r.out;
    EXPECT_NE(bookmark, std::string::npos) << r.out;
    EXPECT_LT(added, bookmark) << r.out;
}

// ---- connecting: TLS, tokens, discovery modes ----

TEST(KubeApiServer, TlsWithAClientCertificate) {
    REQUIRE_KUBECTL();
    KubeServerOptions s_opts;
    s_opts.client_ca = true;
    KPKG_REQUIRE_KUBE_SERVER(s, s_opts);
    EXPECT_EQ(s.url().rfind("https://", 0), 0u);
    Kubectl k(s);
    auto r = k.run({"get", "namespaces", "-o", "name"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "namespace/default")) << r.out;
    // Without the certificate (and a token the server does not know): 401. (With no
    // credentials at all kubectl would prompt for a user name, as with a real server.)
    Kubectl anon(s, s.write_kubeconfig("anon", token_user("unknown")));
    r = anon.run({"get", "namespaces"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "Unauthorized") || contains(r.err, "must be logged in")) << r.err;
}

TEST(KubeApiServer, BearerTokenAcceptedWrongTokenRejected) {
    REQUIRE_KUBECTL();
    KubeServerOptions s_opts;
    s_opts.tls = true;
    s_opts.tokens = {"s3cret"};
    KPKG_REQUIRE_KUBE_SERVER(s, s_opts);
    Kubectl k(s);
    auto r = k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t}\n");
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    Kubectl wrong(s, s.write_kubeconfig("wrong", token_user("nope")));
    r = wrong.run({"get", "configmaps"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "Unauthorized") || contains(r.err, "must be logged in")) << r.err;
    bool rejected = false;
    for (const auto& q : s.requests())
        if (q.status == 401) rejected = true;
    EXPECT_TRUE(rejected);
}

TEST(KubeApiServer, BasicAuthOverTls) {
    REQUIRE_KUBECTL();
    KubeServerOptions s_opts;
    s_opts.tls = true;
    s_opts.basic = "admin:pw";
    KPKG_REQUIRE_KUBE_SERVER(s, s_opts);
    Kubectl k(s);
    auto r = k.run({"get", "namespaces", "-o", "name"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    Kubectl wrong(s, s.write_kubeconfig("wrong", basic_user("admin:bad")));
    r = wrong.run({"get", "namespaces"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
}

TEST(KubeApiServer, LegacyDiscoveryWorksWithKubectl) {
    REQUIRE_KUBECTL();
    KubeServerOptions s_opts;
    s_opts.legacy_discovery = true;
    KPKG_REQUIRE_KUBE_SERVER(s, s_opts);
    Kubectl k(s);
    auto r = k.apply(kBasics);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"rollout", "status", "deployment/web", "-n", "demo", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    auto log = s.requests();
    EXPECT_GE(count_requests(log, "GET", "/api/v1"), 1u);
    EXPECT_GE(count_requests(log, "GET", "/apis/apps/v1"), 1u);
}

TEST(KubeApiServer, AggregatedDiscoveryNeedsNoPerGroupRequests) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply(kBasics).exit_code, 0);
    auto log = s.requests();
    EXPECT_EQ(count_requests(log, "GET", "/api/v1"), 0u);
    EXPECT_EQ(count_requests(log, "GET", "/apis/apps/v1"), 0u);
    EXPECT_GE(count_requests(log, "GET", "/apis"), 1u);
}

TEST(KubeApiServer, OlmTypesWhenAsked) {
    REQUIRE_KUBECTL();
    KubeServerOptions s_opts;
    s_opts.olm = true;
    KPKG_REQUIRE_KUBE_SERVER(s, s_opts);
    Kubectl k(s);
    auto r = k.apply(R"(apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {name: etcd.v1.0.0, namespace: default}
spec: {displayName: etcd, install: {strategy: deployment}}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: default}
spec: {}
)");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    r = k.run(
        {"wait", "--for=jsonpath={.status.phase}=Succeeded", "csv/etcd.v1.0.0", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);

    KPKG_REQUIRE_KUBE_SERVER(plain);
    Kubectl k2(plain);
    r = k2.run({"get", "csv"});
    EXPECT_NE(r.exit_code, 0) << "no OLM types without --olm: " << describe(r);
}

TEST(KubeApiServer, OlmSubscriptionsInstallTheirCsv) {
    REQUIRE_KUBECTL();
    KubeServerOptions s_opts;
    s_opts.olm = true;
    KPKG_REQUIRE_KUBE_SERVER(s, s_opts);
    Kubectl k(s);
    auto r = k.apply(R"(apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: cat, namespace: default}
spec: {sourceType: grpc, image: example.com/cat:latest}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd, namespace: default}
spec: {name: etcd, channel: alpha, source: cat, sourceNamespace: default,
       startingCSV: etcdoperator.v0.9.4}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: man, namespace: default}
spec: {name: manual, channel: stable, source: cat, sourceNamespace: default,
       installPlanApproval: Manual}
)");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"wait", "--for=jsonpath={.status.state}=AtLatestKnown", "subscription/etcd",
               "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"wait", "--for=jsonpath={.status.phase}=Succeeded", "csv/etcdoperator.v0.9.4",
               "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"wait", "--for=jsonpath={.status.connectionState.lastObservedState}=READY",
               "catalogsource/cat", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);

    // Manual approval: no CSV until the InstallPlan is approved.
    r = k.run({"wait", "--for=jsonpath={.status.state}=UpgradePending", "subscription/man",
               "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    r = k.run({"get", "subscription", "man", "-o", "jsonpath={.status.installPlanRef.name}"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    std::string ip = r.out;
    ASSERT_FALSE(ip.empty());
    EXPECT_FALSE(s.object("ClusterServiceVersion", "manual.v0.0.1"));
    r = k.run({"patch", "installplan", ip, "--type=merge", "-p", R"({"spec":{"approved":true}})"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    // The CSV appears once the simulated OLM has run the plan; kubectl wait needs it to exist.
    for (int i = 0; i < 400 && !s.object("ClusterServiceVersion", "manual.v0.0.1"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    r = k.run(
        {"wait", "--for=jsonpath={.status.phase}=Succeeded", "csv/manual.v0.0.1", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
}

// ---- faults ----

TEST(KubeApiServer, InjectedServerErrorIsReportedOrRetried) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_EQ(k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\n").exit_code, 0);
    // A plain 500: reported as a real server's InternalError is.
    ASSERT_TRUE(s.control(R"({"faults": [{"method": "GET", "count": 1, "status": 500,
        "path": "^/api/v1/namespaces/default/configmaps/f$"}]})"));
    auto r = k.run({"get", "configmap", "f", "-o", "name"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "InternalError")) << r.err;
    r = k.run({"get", "configmap", "f", "-o", "name"});
    EXPECT_EQ(r.exit_code, 0) << "the fault fired once only: " << describe(r);

    // A 503 with Retry-After: client-go waits and retries.
    ASSERT_TRUE(s.clear_requests());
    ASSERT_TRUE(s.control(R"({"faults": [{"method": "GET", "count": 1, "status": 503,
        "retry_after": 1, "path": "^/api/v1/namespaces/default/configmaps/f$"}]})"));
    r = k.run({"get", "configmap", "f", "-o", "name"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    std::vector<int> statuses;
    for (const auto& q : s.requests())
        if (q.path == "/api/v1/namespaces/default/configmaps/f") statuses.push_back(q.status);
    EXPECT_EQ(statuses, (std::vector<int>{503, 200}));
}

TEST(KubeApiServer, InjectedForbiddenSlowAndDroppedReplies) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_TRUE(s.control(R"({"faults": [{"method": "GET", "count": 1, "forbidden": true,
        "path": "/secrets$"}]})"));
    auto r = k.run({"get", "secrets"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.err, "Forbidden")) << r.err;

    ASSERT_TRUE(s.control(R"({"faults": [{"count": 1, "delay_ms": 3000,
        "path": "^/api/v1/namespaces/default/services$"}]})"));
    r = k.run({"get", "services", "--request-timeout=1s"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    r = k.run({"get", "services", "--request-timeout=5s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);

    ASSERT_TRUE(s.control(R"({"faults": [{"count": 1, "drop": true,
        "path": "^/api/v1/namespaces/default/pods$"}]})"));
    r = k.run({"get", "pods"});
    bool dropped = false;
    for (const auto& q : s.requests())
        if (q.path == "/api/v1/namespaces/default/pods" && q.status == 0) dropped = true;
    EXPECT_TRUE(dropped);
    // Either client-go retried the GET on a fresh connection, or it reported the dropped one.
    if (r.exit_code != 0) {
        EXPECT_TRUE(contains(r.err, "EOF") || contains(r.err, "connection")) << r.err;
    }
}

TEST(KubeApiServer, InjectedWatchFaultsEndOrExpireTheStream) {
    REQUIRE_KUBECTL();
    KubeServerOptions s_opts;
    s_opts.delay_ms = 3000; // the Deployment is not ready before kubectl wait watches it
    KPKG_REQUIRE_KUBE_SERVER(s, s_opts);
    Kubectl k(s);
    // A watch cut short: kubectl get -w ends when the stream does.
    ASSERT_TRUE(s.control(R"({"faults": [{"count": 1, "query": "watch=", "watch_end_ms": 300,
        "path": "/configmaps$"}]})"));
    auto t0 = std::chrono::steady_clock::now();
    auto r = k.run({"get", "configmaps", "-w", "--request-timeout=15s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(12));

    // An expired watch: kubectl wait lists again and still sees the Deployment become ready.
    ASSERT_EQ(k.apply(kBasics).exit_code, 0);
    ASSERT_TRUE(s.clear_requests());
    ASSERT_TRUE(s.control(R"({"faults": [{"count": 1, "query": "watch=", "watch_expired": true,
        "path": "/deployments$"}]})"));
    r = k.run(
        {"wait", "--for=condition=Available", "deployment/web", "-n", "demo", "--timeout=30s"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    std::size_t watches = 0;
    for (const auto& q : s.requests())
        if (q.path == "/apis/apps/v1/namespaces/demo/deployments" && q.param("watch") == "true")
            ++watches;
    EXPECT_GE(watches, 2u) << "watched again after the expired one";
}

// ---- the control API itself ----

TEST(KubeApiServerControl, FaultsFireTheGivenNumberOfTimes) {
    REQUIRE_KUBECTL();
    KPKG_REQUIRE_KUBE_SERVER(s);
    Kubectl k(s);
    ASSERT_TRUE(s.control(R"({"faults": [{"method": "GET", "count": 2, "status": 500,
        "path": "^/version$"}]})"));
    for (int i = 0; i < 3; ++i)
        k.run({"get", "--raw", "/version"});
    std::vector<int> statuses;
    for (const auto& q : s.requests())
        if (q.path == "/version") statuses.push_back(q.status);
    EXPECT_EQ(statuses, (std::vector<int>{500, 500, 200}));
    // A fault for another method does not fire.
    ASSERT_TRUE(s.clear_requests());
    ASSERT_TRUE(s.control(R"({"faults": [{"method": "DELETE", "count": -1, "status": 500,
        "path": "^/version$"}]})"));
    auto r = k.run({"get", "--raw", "/version"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains(r.out, "\"minor\": \"32\"")) << r.out;
}

TEST(KubeApiServerControl, ResetForgetsObjectsConfigAndLog) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    ASSERT_TRUE(s.control(R"({"faults": [{"count": -1, "status": 500, "path": "^/version$"}]})"));
    EXPECT_TRUE(s.object("Namespace", "default"));
    ASSERT_TRUE(s.reset());
    EXPECT_TRUE(s.requests().empty());
    EXPECT_TRUE(s.object("Namespace", "kube-system"));
    EXPECT_FALSE(s.control("{not json"));
    EXPECT_FALSE(s.control(R"({"fautls": []})"));
    EXPECT_FALSE(s.control(R"({"faults": [{"path": "(unclosed"}]})"));
    EXPECT_FALSE(s.control(R"({"behaviours": [{"kind": "Job", "mode": "sometimes"}]})"));
}

TEST(KubeApiServerControl, StartsAndStopsCleanly) {
    KPKG_REQUIRE_KUBE_SERVER(s);
    EXPECT_GT(s.port(), 0);
    EXPECT_TRUE(fs::exists(s.kubeconfig_path()));
    std::string kc = read_file(s.kubeconfig_path());
    EXPECT_TRUE(contains(kc, s.url())) << kc;
    s.stop();
    EXPECT_FALSE(s.running());
    EXPECT_TRUE(s.requests().empty()); // no answer any more
}

} // namespace
} // namespace kpkg::test
