// The phased apply engine against an in-memory API (fake_api.hpp): ordering, waits, failures,
// conflicts, dry runs, diff, ApplySet, prune, delete, bad input.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fake_api.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/kube/apply.hpp"
#include "support/support.hpp"

namespace kpkg::kube {
namespace {

using test::FakeApi;

// The objects of a YAML text, as the plain input.
Input input_of(const std::string& yaml) {
    io::MemoryTree t("in");
    t.add_file("objects.yaml", yaml);
    Input in;
    auto r = read_source(t, {}, in);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
    return in;
}

RunOptions quick() {
    RunOptions o;
    o.ns = "default";
    o.timeout = std::chrono::milliseconds(3000);
    o.watch_slice = std::chrono::milliseconds(50);
    return o;
}

const ObjectReport* report_of(const RunReport& r, const std::string& name) {
    for (const auto& o : r.objects)
        if (o.name == name) return &o;
    return nullptr;
}

std::size_t index_of(const std::vector<std::string>& v, const std::string& s) {
    return static_cast<std::size_t>(std::find(v.begin(), v.end(), s) - v.begin());
}

const char* kCrdAndCr = R"(apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  size: 3
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    kind: Widget
    plural: widgets
  versions:
  - name: v1
    served: true
    storage: true
)";

TEST(Apply, CustomResourceBesideItsCrdIsAppliedOnceTheCrdIsEstablished) {
    FakeApi api;
    RunReport r = apply(api, input_of(kCrdAndCr), quick());
    ASSERT_FALSE(r.error) << r.error->str();
    const auto writes = api.writes();
    ASSERT_EQ(writes.size(), 2u);
    EXPECT_EQ(writes[0], "widgets.example.com");
    EXPECT_EQ(writes[1], "w1");
    // Discovery was read again after the CRD became Established.
    EXPECT_GE(api.count("discover"), 2u);
    EXPECT_NE(api.find("example.com", "Widget", "default", "w1"), nullptr);
    ASSERT_NE(report_of(r, "widgets.example.com"), nullptr);
    EXPECT_TRUE(report_of(r, "widgets.example.com")->ready);
    EXPECT_EQ(report_of(r, "widgets.example.com")->phase, "crds");
    EXPECT_EQ(report_of(r, "w1")->phase, "custom-resources");
    EXPECT_EQ(report_of(r, "w1")->action, "created");
}

TEST(Apply, CrdNeverEstablishedTimesOutNamingIt) {
    FakeApi api;
    api.never_ready = {"widgets.example.com"};
    RunOptions o = quick();
    o.timeout = std::chrono::milliseconds(300);
    RunReport r = apply(api, input_of(kCrdAndCr), o);
    ASSERT_TRUE(r.error);
    EXPECT_TRUE(test::contains(r.error->str(), "timed out")) << r.error->str();
    ASSERT_FALSE(r.error->notes.empty());
    EXPECT_TRUE(test::contains(r.error->notes[0],
                               "customresourcedefinition/widgets.example.com: not established"))
        << r.error->notes[0];
    // The CR was never sent; the report says so.
    EXPECT_EQ(api.writes().size(), 1u);
    EXPECT_EQ(report_of(r, "w1")->action, "");
}

TEST(Apply, WatchesThatEndAtOnceAreOpenedAgainWithABackOff) {
    FakeApi api;
    api.never_ready = {"widgets.example.com"};
    api.watch_ends_at_once = true;
    RunOptions o = quick();
    o.timeout = std::chrono::milliseconds(2000);
    o.watch_slice = std::chrono::milliseconds(2000);
    const auto start = std::chrono::steady_clock::now();
    RunReport r = apply(api, input_of(kCrdAndCr), o);
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(r.error);
    EXPECT_TRUE(test::contains(r.error->str(), "timed out")) << r.error->str();
    // 100, 200, 400, 800 ms apart: 5 watches in 2 s (without a back-off, thousands).
    EXPECT_LE(api.count("watch"), 8u);
    EXPECT_GE(api.count("watch"), 3u);
    // The back-off ends at the deadline.
    EXPECT_LT(took, std::chrono::milliseconds(4000));
}

// A watch refused because the run's time is up says nothing of the object: the wait ends with
// what was last read of it, not with the refusal.
TEST(Apply, AWaitCutByTheDeadlineEndsWithTheObjectsLastState) {
    FakeApi api;
    api.never_ready = {"widgets.example.com"};
    api.watch_refused_at_its_end = true;
    RunOptions o = quick();
    o.timeout = std::chrono::milliseconds(1000);
    o.watch_slice = std::chrono::milliseconds(5000);
    RunReport r = apply(api, input_of(kCrdAndCr), o);
    ASSERT_TRUE(r.error);
    EXPECT_TRUE(test::contains(r.error->str(), "timed out")) << r.error->str();
    bool seen = false;
    for (const auto& ob : r.objects)
        if (ob.name == "widgets.example.com") {
            seen = true;
            EXPECT_FALSE(ob.reason.empty());
            EXPECT_FALSE(test::contains(ob.reason, "cannot be watched")) << ob.reason;
        }
    EXPECT_TRUE(seen);
}

TEST(Apply, DefaultPhaseOrder) {
    FakeApi api;
    RunReport r = apply(api, input_of(R"(apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: hook}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: op, namespace: ops}
spec: {replicas: 1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: ops}
---
apiVersion: v1
kind: Namespace
metadata: {name: ops}
)"),
                        quick());
    ASSERT_FALSE(r.error) << r.error->str();
    EXPECT_EQ(api.writes(), (std::vector<std::string>{"ops", "cfg", "op", "hook"}));
    // The report is in phase order.
    ASSERT_EQ(r.objects.size(), 4u);
    EXPECT_EQ(r.objects[0].phase, "namespaces");
    EXPECT_EQ(r.objects[1].phase, "config");
    EXPECT_EQ(r.objects[2].phase, "workloads");
    EXPECT_EQ(r.objects[3].phase, "webhooks");
    EXPECT_TRUE(r.objects[2].ready);
}

TEST(Apply, WaitsForTheDeploymentBeforeTheNextPhase) {
    FakeApi api;
    api.ready_after = 3;
    RunReport r = apply(api, input_of(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: op}
spec: {replicas: 2}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: hook}
)"),
                        quick());
    ASSERT_FALSE(r.error) << r.error->str();
    // The webhook was applied after the deployment was watched to readiness.
    const auto reqs = api.requests();
    std::size_t last_watch = 0, hook = 0;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        if (reqs[i].verb == "watch" && reqs[i].resource == "deployments") last_watch = i;
        if (reqs[i].verb == "apply" && reqs[i].name == "hook") hook = i;
    }
    EXPECT_GT(last_watch, 0u);
    EXPECT_GT(hook, last_watch);
    EXPECT_TRUE(report_of(r, "op")->ready);
}

// Several objects of one kind: what exists is read with one LIST, not a GET per object, and
// "unchanged" / "configured" / "created" still come out right.
TEST(Apply, ObjectsOfOneKindAreReadWithOneListThenOnePatchEach) {
    FakeApi api;
    const std::string two = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"
                            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"
                            "data: {k: v}\n";
    RunReport first = apply(api, input_of(two), quick());
    ASSERT_FALSE(first.error) << first.error->str();
    EXPECT_EQ(report_of(first, "a")->action, "created");
    const std::string three = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
                              "data: {k: v}\n---\napiVersion: v1\nkind: ConfigMap\n"
                              "metadata: {name: b}\ndata: {k: changed}\n---\napiVersion: v1\n"
                              "kind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n";
    const std::size_t before = api.requests().size();
    RunReport r = apply(api, input_of(three), quick());
    ASSERT_FALSE(r.error) << r.error->str();
    EXPECT_EQ(report_of(r, "a")->action, "unchanged");
    EXPECT_EQ(report_of(r, "b")->action, "configured");
    EXPECT_EQ(report_of(r, "c")->action, "created");
    const auto reqs = api.requests();
    std::size_t gets = 0, lists = 0, applies = 0;
    for (std::size_t i = before; i < reqs.size(); ++i) {
        if (reqs[i].resource != "configmaps") continue;
        gets += reqs[i].verb == "get";
        lists += reqs[i].verb == "list";
        applies += reqs[i].verb == "apply";
    }
    EXPECT_EQ(gets, 0u);
    EXPECT_EQ(lists, 1u);
    EXPECT_EQ(applies, 3u);
}

TEST(Apply, TimeoutNamesEveryObjectNotReadyAndWhy) {
    FakeApi api;
    api.never_ready = {"etcd-operator", "other"};
    RunOptions o = quick();
    o.timeout = std::chrono::milliseconds(300);
    RunReport r = apply(api, input_of(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: etcd-operator}
spec: {replicas: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: other}
spec: {replicas: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: fine}
spec: {replicas: 1}
)"),
                        o);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, ExitCode::error);
    EXPECT_TRUE(test::contains(r.error->message, "timed out waiting for 2 objects"))
        << r.error->message;
    std::string notes;
    for (const auto& n : r.error->notes)
        notes += n + "\n";
    EXPECT_TRUE(test::contains(
        notes, "deployment/etcd-operator in namespace default: 0 of 1 updated replicas available"))
        << notes;
    EXPECT_TRUE(test::contains(notes, "deployment/other")) << notes;
    EXPECT_FALSE(test::contains(notes, "deployment/fine")) << notes;
    EXPECT_TRUE(report_of(r, "fine")->ready);
    EXPECT_FALSE(report_of(r, "other")->ready);
    EXPECT_EQ(report_of(r, "other")->action, "created");
}

TEST(Apply, ProgressDeadlineExceededIsAFailureNotAWait) {
    FakeApi api;
    api.fail_progress = {"op"};
    RunOptions o = quick();
    o.timeout = std::chrono::milliseconds(60000);
    const auto start = std::chrono::steady_clock::now();
    RunReport r = apply(api,
                        input_of("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: "
                                 "op}\nspec: {replicas: 1}\n"),
                        o);
    ASSERT_TRUE(r.error);
    EXPECT_TRUE(test::contains(r.error->message, "deployment/op")) << r.error->message;
    EXPECT_TRUE(test::contains(r.error->message, "progress deadline exceeded")) << r.error->message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(Apply, FailedJobIsAFailure) {
    FakeApi api;
    api.fail_job = {"migrate"};
    RunReport r = apply(api,
                        input_of("apiVersion: batch/v1\nkind: Job\nmetadata: {name: "
                                 "migrate}\nspec: {}\n"),
                        quick());
    ASSERT_TRUE(r.error);
    EXPECT_TRUE(test::contains(r.error->message, "job/migrate")) << r.error->message;
    EXPECT_TRUE(test::contains(r.error->message, "job failed: BackoffLimitExceeded"))
        << r.error->message;
}

TEST(Apply, WaitFalseDoesNotWatch) {
    FakeApi api;
    api.never_ready = {"op"};
    RunOptions o = quick();
    o.wait = false;
    RunReport r = apply(api,
                        input_of("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: "
                                 "op}\nspec: {replicas: 1}\n"),
                        o);
    ASSERT_FALSE(r.error) << r.error->str();
    EXPECT_EQ(api.count("watch"), 0u);
    EXPECT_FALSE(report_of(r, "op")->ready);
}

TEST(Apply, ConflictWithoutForceNamesTheObjectAndSuggestsForce) {
    FakeApi api;
    api.conflicts = {"op"};
    const std::string yaml =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: op}\nspec: {replicas: 1}\n";
    RunReport r = apply(api, input_of(yaml), quick());
    ASSERT_TRUE(r.error);
    EXPECT_TRUE(test::contains(r.error->message, "deployment/op in namespace default"))
        << r.error->message;
    EXPECT_TRUE(test::contains(r.error->message, "conflict with \"kubectl-edit\""))
        << r.error->message;
    std::string notes;
    for (const auto& n : r.error->notes)
        notes += n;
    EXPECT_TRUE(test::contains(notes, "--force-conflicts")) << notes;
    EXPECT_TRUE(test::contains(notes, ".spec.replicas")) << notes;

    RunOptions o = quick();
    o.force_conflicts = true;
    RunReport forced = apply(api, input_of(yaml), o);
    ASSERT_FALSE(forced.error) << forced.error->str();
    bool forced_request = false;
    for (const auto& req : api.requests())
        if (req.verb == "apply" && req.name == "op" && req.force) forced_request = true;
    EXPECT_TRUE(forced_request);
}

TEST(Apply, InvalidIsExit3WithTheServersMessage) {
    FakeApi api;
    ApiError e;
    e.status = 422;
    e.reason = "Invalid";
    e.message = "Deployment.apps \"op\" is invalid: spec.replicas: Invalid value: -1";
    api.fail_apply["op"] = e;
    RunReport r = apply(api,
                        input_of("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: "
                                 "op}\nspec: {replicas: -1}\n"),
                        quick());
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, ExitCode::invalid);
    EXPECT_TRUE(test::contains(r.error->str(), "objects.yaml:1:1")) << r.error->str();
    EXPECT_TRUE(test::contains(r.error->message, "spec.replicas: Invalid value: -1"));
}

TEST(Apply, SecondApplyIsUnchangedThenConfigured) {
    FakeApi api;
    const std::string a = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n";
    ASSERT_EQ(report_of(apply(api, input_of(a), quick()), "c")->action, "created");
    EXPECT_EQ(report_of(apply(api, input_of(a), quick()), "c")->action, "unchanged");
    const std::string b = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: w}\n";
    EXPECT_EQ(report_of(apply(api, input_of(b), quick()), "c")->action, "configured");
    // Field manager kpkg on every apply.
    for (const auto& req : api.requests())
        if (req.verb == "apply") {
            EXPECT_EQ(req.field_manager, "kpkg");
        }
}

TEST(Apply, ServerDryRunChangesNothingAndReportsWhatItCannotCheck) {
    FakeApi api;
    RunOptions o = quick();
    o.dry_run = DryRun::server;
    RunReport r = apply(api, input_of(std::string(R"(apiVersion: v1
kind: Namespace
metadata: {name: fresh}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: inside, namespace: fresh}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: outside}
---
)") + kCrdAndCr),
                        o);
    ASSERT_FALSE(r.error) << r.error->str();
    EXPECT_FALSE(api.any_write());
    EXPECT_EQ(api.count("watch"), 0u);
    EXPECT_EQ(report_of(r, "inside")->action, "dry-run");
    EXPECT_EQ(report_of(r, "inside")->reason,
              "not checked: namespace fresh is created by this run");
    EXPECT_EQ(report_of(r, "w1")->reason,
              "not checked: its CustomResourceDefinition widgets.example.com is created by this "
              "run");
    EXPECT_EQ(report_of(r, "outside")->reason, "would be created");
    // The checkable objects went to the server as dry runs.
    const auto dry = api.writes("apply", true);
    EXPECT_NE(index_of(dry, "outside"), dry.size());
    EXPECT_EQ(index_of(dry, "inside"), dry.size());
}

TEST(Apply, ClientDryRunSendsNoWrite) {
    FakeApi api;
    RunOptions o = quick();
    o.dry_run = DryRun::client;
    RunReport r = apply(api, input_of(kCrdAndCr), o);
    ASSERT_FALSE(r.error) << r.error->str();
    EXPECT_EQ(api.count("apply"), 0u);
    EXPECT_EQ(api.count("delete"), 0u);
    EXPECT_EQ(report_of(r, "w1")->action, "dry-run");
}

TEST(Apply, DiffShowsChangesWithoutServerFields) {
    FakeApi api;
    const std::string a =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v, same: x}\n";
    ASSERT_FALSE(apply(api, input_of(a), quick()).error);
    const std::size_t writes_before = api.writes().size();
    RunOptions o = quick();
    o.diff = true;
    RunReport same = apply(api, input_of(a), o);
    ASSERT_FALSE(same.error);
    EXPECT_FALSE(same.differs);
    EXPECT_EQ(report_of(same, "c")->diff, "");

    const std::string b =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: w, same: x}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\n";
    RunReport r = apply(api, input_of(b), o);
    ASSERT_FALSE(r.error);
    EXPECT_TRUE(r.differs);
    const std::string d = report_of(r, "c")->diff;
    EXPECT_TRUE(test::contains(d, "--- live/ConfigMap/default/c\n+++ applied/ConfigMap/default/c"))
        << d;
    EXPECT_TRUE(test::contains(d, "-  k: v\n+  k: w\n")) << d;
    EXPECT_FALSE(test::contains(d, "resourceVersion")) << d;
    EXPECT_FALSE(test::contains(d, "uid")) << d;
    const std::string n = report_of(r, "fresh")->diff;
    EXPECT_TRUE(test::contains(n, "--- /dev/null")) << n;
    EXPECT_TRUE(test::contains(n, "+kind: ConfigMap")) << n;
    // Nothing changed.
    EXPECT_EQ(api.writes().size(), writes_before);
    EXPECT_EQ(api.find("", "ConfigMap", "default", "fresh"), nullptr);
}

// --- bad input: exit 3, nothing written ------------------------------------------------------

void expect_refused(const std::string& yaml, const std::string& phrase, RunOptions o = quick()) {
    FakeApi api;
    RunReport r = apply(api, input_of(yaml), o);
    ASSERT_TRUE(r.error) << yaml;
    EXPECT_EQ(r.error->code, ExitCode::invalid) << r.error->str();
    std::string all = r.error->str();
    for (const auto& n : r.error->notes)
        all += "\n" + n;
    EXPECT_TRUE(test::contains(all, phrase)) << all;
    EXPECT_FALSE(api.any_write());
    EXPECT_EQ(api.count("apply"), 0u);
}

TEST(ApplyBadInput, MissingKindNameApiVersion) {
    expect_refused("apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: x}\n",
                   "objects.yaml:1:1: a ConfigMap has no metadata.name");
    expect_refused("apiVersion: v1\nmetadata: {name: x}\n", "has no kind");
    expect_refused("kind: ConfigMap\nmetadata: {name: x}\n", "has no apiVersion");
}

TEST(ApplyBadInput, KindNotServed) {
    expect_refused("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n"
                   "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n",
                   "objects.yaml:5:1: gadget/g: the server does not serve Gadget in "
                   "example.com/v1");
    expect_refused("apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: d}\n",
                   "it serves Deployment as apps/v1");
}

TEST(ApplyBadInput, NamespacedWithoutNamespace) {
    RunOptions o = quick();
    o.ns.clear();
    expect_refused("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
                   "configmap/c is namespaced and names no namespace", o);
}

TEST(ApplyBadInput, SameObjectTwice) {
    expect_refused("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"
                   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n",
                   "objects.yaml:5:1: configmap/c in namespace default is given twice");
}

TEST(ApplyBadInput, CustomResourceInAPhaseBeforeItsCrd) {
    Input plain = input_of(kCrdAndCr);
    Input in;
    Input::Package pkg;
    pkg.name = "p";
    pkg.phases.push_back({"first", {plain.plain[0]}});  // the Widget
    pkg.phases.push_back({"second", {plain.plain[1]}}); // its CRD
    in.packages.push_back(pkg);
    FakeApi api;
    RunReport r = apply(api, in, quick());
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, ExitCode::invalid);
    EXPECT_TRUE(test::contains(r.error->message,
                               "widget/w1 is in phase first, before its CustomResourceDefinition "
                               "widgets.example.com (phase second)"))
        << r.error->message;
    EXPECT_FALSE(api.any_write());
    // In the same phase it works: the CRD goes first and is waited for.
    Input same;
    Input::Package one;
    one.name = "p";
    one.phases.push_back({"only", {plain.plain[0], plain.plain[1]}});
    same.packages.push_back(one);
    FakeApi api2;
    RunReport ok = apply(api2, same, quick());
    ASSERT_FALSE(ok.error) << ok.error->str();
    EXPECT_EQ(api2.writes(), (std::vector<std::string>{"widgets.example.com", "w1"}));
}

TEST(ApplyBadInput, EveryProblemIsListed) {
    FakeApi api;
    RunReport r = apply(api,
                        input_of("kind: A\nmetadata: {name: a}\n---\nkind: B\nmetadata: {name: "
                                 "b}\n"),
                        quick());
    ASSERT_TRUE(r.error);
    std::string notes;
    for (const auto& n : r.error->notes)
        notes += n + "\n";
    EXPECT_TRUE(test::contains(notes, "and 1 more")) << notes;
    EXPECT_TRUE(test::contains(notes, "nothing was applied")) << notes;
}

// --- ApplySet --------------------------------------------------------------------------------

TEST(ApplySet, IdIsKubectls) {
    // kubectl: base64.RawURLEncoding(sha256("<name>.<namespace>.<kind>.<group>")) in
    // "applyset-%s-v1".
    EXPECT_EQ(applyset_id("set1", "default", "Secret", ""),
              "applyset-TJSViJwF6UhFlL4bnPXMWRnXnH4yPVy5hhP1Y3SCHVU-v1");
    EXPECT_EQ(applyset_id("parent", "kube-system", "ConfigMap", ""),
              "applyset-sxt9dZP6H06ymeSrxFWULAGkx36sni8BT6nAPlN0BH4-v1");
}

TEST(ApplySet, ParseRef) {
    auto a = parse_applyset_ref("myset");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->resource, "secrets");
    EXPECT_EQ(a->name, "myset");
    auto b = parse_applyset_ref("widgets.example.com/w");
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->resource, "widgets");
    EXPECT_EQ(b->group, "example.com");
    EXPECT_EQ(b->name, "w");
    EXPECT_FALSE(parse_applyset_ref("secrets/").ok());
    EXPECT_EQ(parse_applyset_ref("/x").error().code, ExitCode::usage);
}

TEST(ApplySet, ParentLabelsAnnotationsAndMembers) {
    FakeApi api;
    RunOptions o = quick();
    o.prune = true;
    o.applyset = "set1";
    o.tooling = "kpkg/v0.1.0";
    RunReport r = apply(api, input_of(R"(apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: other}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: role}
)"),
                        o);
    ASSERT_FALSE(r.error) << r.error->str();
    const io::Node* parent = api.find("", "Secret", "default", "set1");
    ASSERT_NE(parent, nullptr);
    const std::string id = "applyset-TJSViJwF6UhFlL4bnPXMWRnXnH4yPVy5hhP1Y3SCHVU-v1";
    EXPECT_EQ(parent->get("metadata")->get("labels")->get(kApplySetIdLabel)->text, id);
    const io::Node* ann = parent->get("metadata")->get("annotations");
    EXPECT_EQ(ann->get(kApplySetToolingAnnotation)->text, "kpkg/v0.1.0");
    EXPECT_EQ(ann->get(kApplySetKindsAnnotation)->text,
              "ClusterRole.rbac.authorization.k8s.io,ConfigMap");
    EXPECT_EQ(ann->get(kApplySetNamespacesAnnotation)->text, "other");
    for (const auto& [g, k, ns, n] :
         std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
             {"", "ConfigMap", "default", "a"},
             {"", "ConfigMap", "other", "b"},
             {"rbac.authorization.k8s.io", "ClusterRole", "", "role"}}) {
        const io::Node* m = api.find(g, k, ns, n);
        ASSERT_NE(m, nullptr) << n;
        EXPECT_EQ(m->get("metadata")->get("labels")->get(kApplySetPartOfLabel)->text, id) << n;
    }
    // The parent was written with kubectl's field manager naming.
    bool parent_manager = false;
    for (const auto& req : api.requests())
        if (req.verb == "apply" && req.name == "set1")
            parent_manager = req.field_manager == "kpkg-applyset";
    EXPECT_TRUE(parent_manager);
}

TEST(ApplySet, PruneDeletesWhatLeftTheInputInReversePhaseOrder) {
    FakeApi api;
    RunOptions o = quick();
    o.prune = true;
    o.applyset = "set1";
    ASSERT_FALSE(apply(api, input_of(R"(apiVersion: v1
kind: Namespace
metadata: {name: gone-ns}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: keep}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: drop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: dep, namespace: gone-ns}
spec: {replicas: 1}
)"),
                       o)
                     .error);
    // Not a member: never pruned.
    api.put(api.resource("", "ConfigMap"),
            io::parse_yaml("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: foreign, namespace: "
                           "default}\n",
                           "x")
                ->front()
                .root);
    RunReport r =
        apply(api, input_of("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep}\n"), o);
    ASSERT_FALSE(r.error) << r.error->str();
    EXPECT_NE(api.find("", "ConfigMap", "default", "keep"), nullptr);
    EXPECT_NE(api.find("", "ConfigMap", "default", "foreign"), nullptr);
    EXPECT_EQ(api.find("", "ConfigMap", "default", "drop"), nullptr);
    EXPECT_EQ(api.find("apps", "Deployment", "gone-ns", "dep"), nullptr);
    EXPECT_EQ(api.find("", "Namespace", "", "gone-ns"), nullptr);
    EXPECT_EQ(report_of(r, "drop")->action, "pruned");
    const auto deleted = api.writes("delete");
    ASSERT_EQ(deleted.size(), 3u);
    EXPECT_LT(index_of(deleted, "dep"), index_of(deleted, "drop"));
    EXPECT_LT(index_of(deleted, "drop"), index_of(deleted, "gone-ns"));
    const io::Node* ann =
        api.find("", "Secret", "default", "set1")->get("metadata")->get("annotations");
    EXPECT_EQ(ann->get(kApplySetKindsAnnotation)->text, "ConfigMap");
    EXPECT_EQ(ann->get(kApplySetNamespacesAnnotation)->text, "");
}

TEST(ApplySet, DiffShowsWhatPruneWouldDeleteAndChangesNothing) {
    FakeApi api;
    RunOptions o = quick();
    o.prune = true;
    o.applyset = "set1";
    ASSERT_FALSE(apply(api,
                       input_of("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep}\n---\n"
                                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: drop}\n"),
                       o)
                     .error);
    const std::size_t writes = api.writes().size() + api.writes("delete").size();
    o.diff = true;
    RunReport r =
        apply(api, input_of("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep}\n"), o);
    ASSERT_FALSE(r.error) << r.error->str();
    EXPECT_TRUE(r.differs);
    ASSERT_NE(report_of(r, "drop"), nullptr);
    EXPECT_TRUE(test::contains(report_of(r, "drop")->diff,
                               "--- live/ConfigMap/default/drop\n+++ /dev/null\n"))
        << report_of(r, "drop")->diff;
    EXPECT_EQ(report_of(r, "keep")->diff, "");
    EXPECT_EQ(api.writes().size() + api.writes("delete").size(), writes);
    EXPECT_NE(api.find("", "ConfigMap", "default", "drop"), nullptr);
}

TEST(ApplySet, ParentOfAnotherToolIsLeftAlone) {
    FakeApi api;
    api.put(api.resource("", "Secret"),
            io::parse_yaml("apiVersion: v1\nkind: Secret\nmetadata:\n  name: set1\n  namespace: "
                           "default\n  annotations: {applyset.kubernetes.io/tooling: "
                           "helm/v3}\n",
                           "x")
                ->front()
                .root);
    RunOptions o = quick();
    o.prune = true;
    o.applyset = "set1";
    RunReport r = apply(api, input_of("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), o);
    ASSERT_TRUE(r.error);
    EXPECT_TRUE(test::contains(r.error->message, "managed by \"helm\"")) << r.error->message;
    EXPECT_FALSE(api.any_write());
}

TEST(Delete, ReversePhaseOrderAndWaitsForEachToGo) {
    FakeApi api;
    const std::string yaml = std::string(R"(apiVersion: v1
kind: Namespace
metadata: {name: ops}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: op, namespace: ops}
spec: {replicas: 1}
---
)") + kCrdAndCr;
    ASSERT_FALSE(apply(api, input_of(yaml), quick()).error);
    api.delete_after = 3;
    const Input in = input_of(yaml);
    RunReport r = remove(api, &in, quick());
    ASSERT_FALSE(r.error) << r.error->str();
    const auto deleted = api.writes("delete");
    EXPECT_EQ(deleted, (std::vector<std::string>{"w1", "op", "widgets.example.com", "ops"}));
    EXPECT_EQ(api.find("", "Namespace", "", "ops"), nullptr);
    // The deployment was watched until it was gone before the CRD was deleted.
    const auto reqs = api.requests();
    std::size_t watch_dep = 0, del_crd = 0;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        if (reqs[i].verb == "watch" && reqs[i].resource == "deployments") watch_dep = i;
        if (reqs[i].verb == "delete" && reqs[i].name == "widgets.example.com") del_crd = i;
    }
    EXPECT_GT(watch_dep, 0u);
    EXPECT_GT(del_crd, watch_dep);
    EXPECT_EQ(report_of(r, "op")->action, "deleted");
}

TEST(Delete, ApplySetMembersThenTheParent) {
    FakeApi api;
    RunOptions o = quick();
    o.prune = true;
    o.applyset = "set1";
    ASSERT_FALSE(apply(api,
                       input_of("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
                                "apiVersion: v1\nkind: Namespace\nmetadata: {name: nsx}\n"),
                       o)
                     .error);
    RunOptions d = quick();
    d.applyset = "set1";
    RunReport r = remove(api, nullptr, d);
    ASSERT_FALSE(r.error) << r.error->str();
    EXPECT_EQ(api.writes("delete"), (std::vector<std::string>{"a", "nsx", "set1"}));
    EXPECT_EQ(api.find("", "Secret", "default", "set1"), nullptr);
}

// --- readiness -------------------------------------------------------------------------------

io::Node obj(const std::string& yaml) {
    auto docs = io::parse_yaml(yaml, "t");
    EXPECT_TRUE(docs.ok());
    return docs->front().root;
}

TEST(Readiness, Deployment) {
    const std::string head = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {generation: 2}\n"
                             "spec: {replicas: 3}\n";
    EXPECT_EQ(readiness(obj(head + "status: {observedGeneration: 1}")).reason,
              "generation 2 not observed yet (observed 1)");
    EXPECT_EQ(readiness(obj(head + "status: {observedGeneration: 2, updatedReplicas: 1}")).reason,
              "1 of 3 replicas updated");
    EXPECT_EQ(readiness(obj(head + "status: {observedGeneration: 2, updatedReplicas: 3, replicas: "
                                   "4}"))
                  .reason,
              "1 old replicas pending termination");
    EXPECT_EQ(readiness(obj(head + "status: {observedGeneration: 2, updatedReplicas: 3, replicas: "
                                   "3, availableReplicas: 0}"))
                  .reason,
              "0 of 3 updated replicas available");
    EXPECT_TRUE(readiness(obj(head + "status: {observedGeneration: 2, updatedReplicas: 3, "
                                     "replicas: 3, availableReplicas: 3}"))
                    .ready());
    Readiness f = readiness(obj(head + "status:\n  observedGeneration: 2\n  conditions:\n  - "
                                       "{type: Progressing, status: 'False', reason: "
                                       "ProgressDeadlineExceeded, message: too slow}\n"));
    EXPECT_TRUE(f.failed());
    EXPECT_EQ(f.reason, "progress deadline exceeded: too slow");
    // spec.replicas defaults to 1.
    EXPECT_EQ(readiness(obj("apiVersion: apps/v1\nkind: Deployment\nmetadata: {generation: 1}\n"
                            "status: {observedGeneration: 1}"))
                  .reason,
              "0 of 1 replicas updated");
}

TEST(Readiness, StatefulSetDaemonSetJobPod) {
    EXPECT_EQ(readiness(obj("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {generation: 1}\n"
                            "spec: {replicas: 2}\nstatus: {observedGeneration: 1, readyReplicas: "
                            "1}"))
                  .reason,
              "1 of 2 replicas ready");
    EXPECT_EQ(readiness(obj("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {generation: 1}\n"
                            "spec: {replicas: 2}\nstatus: {observedGeneration: 1, readyReplicas: "
                            "2, updateRevision: b, currentRevision: a}"))
                  .reason,
              "revision b not rolled out yet (current a)");
    EXPECT_TRUE(readiness(obj("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {generation: 1}\n"
                              "spec: {replicas: 1, updateStrategy: {type: OnDelete}}"))
                    .ready());
    EXPECT_EQ(readiness(obj("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {generation: 1}\n"
                            "status: {observedGeneration: 1, desiredNumberScheduled: 3, "
                            "updatedNumberScheduled: 3, numberAvailable: 2}"))
                  .reason,
              "2 of 3 scheduled pods available");
    EXPECT_TRUE(readiness(obj("apiVersion: batch/v1\nkind: Job\nstatus: {conditions: [{type: "
                              "Complete, status: 'True'}]}"))
                    .ready());
    EXPECT_TRUE(readiness(obj("apiVersion: batch/v1\nkind: Job\nstatus: {conditions: [{type: "
                              "Failed, status: 'True', reason: DeadlineExceeded}]}"))
                    .failed());
    EXPECT_TRUE(readiness(obj("apiVersion: v1\nkind: Pod\nstatus: {conditions: [{type: Ready, "
                              "status: 'True'}]}"))
                    .ready());
    EXPECT_EQ(readiness(obj("apiVersion: v1\nkind: Pod\nstatus: {phase: Pending}")).reason,
              "not ready (phase Pending)");
}

TEST(Readiness, CrdCsvApiServiceAndOthers) {
    const std::string crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n";
    EXPECT_TRUE(readiness(obj(crd + "status: {conditions: [{type: Established, status: 'True'}, "
                                    "{type: NamesAccepted, status: 'True'}]}"))
                    .ready());
    EXPECT_EQ(readiness(obj(crd + "status: {conditions: [{type: NamesAccepted, status: 'True'}]}"))
                  .reason,
              "not established yet");
    Readiness n = readiness(obj(crd + "status: {conditions: [{type: NamesAccepted, status: "
                                      "'False', reason: MultipleNamesNotAllowed}]}"));
    EXPECT_TRUE(n.failed());
    EXPECT_EQ(n.reason, "names not accepted: MultipleNamesNotAllowed");
    const std::string csv =
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n";
    EXPECT_TRUE(readiness(obj(csv + "status: {phase: Succeeded}")).ready());
    EXPECT_TRUE(readiness(obj(csv + "status: {phase: Failed, message: no}")).failed());
    EXPECT_EQ(readiness(obj(csv + "status: {phase: Installing}")).reason, "phase Installing");
    EXPECT_FALSE(
        readiness(obj("apiVersion: apiregistration.k8s.io/v1\nkind: APIService\n")).ready());
    EXPECT_TRUE(readiness(obj("apiVersion: v1\nkind: ConfigMap\n")).ready());
    // A condition about an older generation does not count.
    EXPECT_FALSE(readiness(obj(crd + "metadata: {generation: 3}\nstatus: {conditions: [{type: "
                                     "Established, status: 'True', observedGeneration: 2}, {type: "
                                     "NamesAccepted, status: 'True'}]}"))
                     .ready());
}

TEST(Readiness, AvailabilityProbes) {
    std::vector<AvailabilityProbe> probes(3);
    probes[0].group = "apps";
    probes[0].kind = "Deployment";
    probes[0].probes = obj("- condition: {type: Available, status: 'True'}\n"
                           "- fieldsEqual: {fieldA: .status.updatedReplicas, fieldB: "
                           ".status.replicas}\n");
    probes[1].group = "";
    probes[1].kind = "ConfigMap";
    probes[1].selector = obj("matchLabels: {probe: me}");
    probes[1].probes = obj("- cel: {rule: 'self.data.ready == \"yes\"', message: not ready yet}");
    const std::string dep = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {generation: 1}\n";
    EXPECT_EQ(probe_readiness(obj(dep + "status: {}"), probes).reason,
              "missing condition Available");
    EXPECT_EQ(probe_readiness(obj(dep + "status: {conditions: [{type: Available, status: "
                                        "'True'}], updatedReplicas: 1, replicas: 2}"),
                              probes)
                  .reason,
              ".status.updatedReplicas (1) != .status.replicas (2)");
    EXPECT_TRUE(probe_readiness(obj(dep + "status: {conditions: [{type: Available, status: "
                                          "'True'}], updatedReplicas: 2, replicas: 2}"),
                                probes)
                    .ready());
    EXPECT_EQ(probe_readiness(obj(dep + "status: {observedGeneration: 0}"), probes).reason,
              "status.observedGeneration 0 is not metadata.generation 1");
    const std::string cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {probe: me}}\n";
    EXPECT_EQ(probe_readiness(obj(cm + "data: {ready: 'no'}"), probes).reason, "not ready yet");
    EXPECT_TRUE(probe_readiness(obj(cm + "data: {ready: 'yes'}"), probes).ready());
    // Not selected: available.
    EXPECT_TRUE(probe_readiness(obj("apiVersion: v1\nkind: ConfigMap\ndata: {ready: 'no'}"), probes)
                    .ready());
}

TEST(Readiness, SelectorExpressions) {
    io::Node labels = obj("{a: x, b: y}");
    EXPECT_TRUE(selector_matches(obj("matchExpressions: [{key: a, operator: In, values: [x, z]}]"),
                                 &labels));
    EXPECT_FALSE(selector_matches(obj("matchExpressions: [{key: a, operator: NotIn, values: [x]}]"),
                                  &labels));
    EXPECT_TRUE(
        selector_matches(obj("matchExpressions: [{key: c, operator: DoesNotExist}]"), &labels));
    EXPECT_FALSE(selector_matches(obj("matchExpressions: [{key: c, operator: Exists}]"), &labels));
}

TEST(Phases, DurationsAndDefaultPhases) {
    EXPECT_EQ(parse_duration("90s", "--timeout")->count(), 90000);
    EXPECT_EQ(parse_duration("1h30m", "--timeout")->count(), 5400000);
    EXPECT_EQ(parse_duration("250ms", "--timeout")->count(), 250);
    EXPECT_EQ(parse_duration("1.5s", "--timeout")->count(), 1500);
    EXPECT_FALSE(parse_duration("5", "--timeout").ok());
    EXPECT_FALSE(parse_duration("5x", "--timeout").ok());
    EXPECT_EQ(default_phases()[default_phase("", "Namespace")], "namespaces");
    EXPECT_EQ(default_phases()[default_phase("rbac.authorization.k8s.io", "Role")], "config");
    EXPECT_EQ(default_phases()[default_phase("example.com", "Role")], "custom-resources");
    EXPECT_EQ(default_phases()[default_phase("operators.coreos.com", "Subscription")],
              "subscriptions");
}

// --- inputs ----------------------------------------------------------------------------------

TEST(Input, ListsAreUnpackedAndFilesReadInPathOrder) {
    io::MemoryTree t("dir");
    t.add_file("b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n");
    t.add_file("a.json",
               R"({"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a1"}},
  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a2"}}]})");
    t.add_file("notes.txt", "not a manifest");
    t.add_file(".hidden/x.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: h}\n");
    Input in;
    ASSERT_TRUE(read_source(t, {}, in).ok());
    ASSERT_EQ(in.plain.size(), 3u);
    EXPECT_EQ(in.plain[0].object.get("metadata")->get("name")->text, "a1");
    EXPECT_EQ(in.plain[0].pos.str(), "dir/a.json:2:3");
    EXPECT_EQ(in.plain[2].object.get("metadata")->get("name")->text, "b");
}

TEST(Input, PlanTreeInKustomizationOrder) {
    io::MemoryTree t("tree");
    t.add_file(".kpkg-plan", "kustomization.yaml\n");
    t.add_file("kustomization.yaml",
               "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
               "- z/second.yaml\n- a/first.yaml\n");
    t.add_file("a/first.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n");
    t.add_file("z/second.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: second}\n");
    Input in;
    ASSERT_TRUE(read_source(t, {}, in).ok());
    ASSERT_EQ(in.plain.size(), 2u);
    EXPECT_EQ(in.plain[0].object.get("metadata")->get("name")->text, "second");
}

TEST(Input, ParseErrorNamesFileAndLine) {
    io::MemoryTree t("dir");
    t.add_file("bad.yaml", "apiVersion: v1\nkind: [unclosed\n");
    Input in;
    auto r = read_source(t, {}, in);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(test::contains(r.error().str(), "dir/bad.yaml:")) << r.error().str();
}

TEST(Input, PackageOperatorPackageByPhaseWithProbes) {
    io::DirectoryTree t(test::testdata("packages/greeter"));
    SourceOptions so;
    so.ns = "greet";
    Input in;
    auto r = read_source(t, so, in);
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_EQ(in.packages.size(), 1u);
    const auto& p = in.packages[0];
    ASSERT_EQ(p.phases.size(), 2u);
    EXPECT_EQ(p.phases[0].name, "config");
    EXPECT_EQ(p.phases[1].name, "deploy");
    ASSERT_EQ(p.probes.size(), 1u);
    EXPECT_EQ(p.probes[0].kind, "Deployment");

    // Applied phase by phase; the Deployment waited for by the package's probe.
    FakeApi api;
    RunReport rep = apply(api, in, quick());
    ASSERT_FALSE(rep.error) << rep.error->str();
    ASSERT_FALSE(rep.objects.empty());
    EXPECT_EQ(rep.objects.front().phase, "config");
    EXPECT_EQ(rep.objects.back().phase, "deploy");
    EXPECT_TRUE(rep.objects.back().ready);
    EXPECT_GE(api.count("watch"), 1u);
}

} // namespace
} // namespace kpkg::kube
