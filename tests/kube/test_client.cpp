// The Kubernetes client (kube::connect) against the test API server (tests/kube/apiserver.py):
// discovery aggregated and legacy, server-side apply (create, update, conflict, force, dry
// run), get, list with selectors and continue tokens, watch, delete, TLS with a CA and a client
// certificate, tls-server-name, tokens, basic auth, exec plugins re-run on a 401, and the
// retries: a 500, a 429 with Retry-After, a dropped connection; an unreachable server.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "kpkg/kube/connect.hpp"
#include "support/kube_server.hpp"
#include "support/support.hpp"

namespace kpkg::kube {
namespace {

using test::contains;
using test::KubeServer;
using test::KubeServerOptions;

std::unique_ptr<Api> open(const std::filesystem::path& kubeconfig, int retries = 3,
                          const std::string& ns = "") {
    ConnectOptions o;
    o.kubeconfig = kubeconfig.string();
    o.retries = retries;
    o.namespace_ = ns;
    o.request_timeout = std::chrono::milliseconds(20000);
    auto api = connect(o);
    EXPECT_TRUE(api.ok()) << api.error().str();
    return api.ok() ? std::move(*api) : nullptr;
}

Resource configmaps() {
    Resource r;
    r.version = "v1";
    r.kind = "ConfigMap";
    r.name = "configmaps";
    r.namespaced = true;
    return r;
}

Resource namespaces() {
    Resource r;
    r.version = "v1";
    r.kind = "Namespace";
    r.name = "namespaces";
    return r;
}

io::Node configmap(const std::string& name, const std::string& key, const std::string& value,
                   const std::string& label = "") {
    io::Node cm = io::Node::map();
    cm.set("apiVersion", io::Node::string("v1"));
    cm.set("kind", io::Node::string("ConfigMap"));
    io::Node& md = cm.set("metadata", io::Node::map());
    md.set("name", io::Node::string(name));
    md.set("namespace", io::Node::string("default"));
    if (!label.empty()) md.set("labels", io::Node::map()).set("app", io::Node::string(label));
    cm.set("data", io::Node::map()).set(key, io::Node::string(value));
    return cm;
}

// Strings built by appending ("literal" + std::string draws -Wrestrict false positives from
// GCC 12 in release builds).
std::string numbered(const std::string& prefix, int i) {
    std::string out = prefix;
    return out.append(std::to_string(i));
}

std::string loopback(int port) {
    std::string out = "http://127.0.0.1:";
    return out.append(std::to_string(port));
}

std::string data_of(const io::Node& obj, const std::string& key) {
    const io::Node* d = obj.get("data");
    const io::Node* v = d == nullptr ? nullptr : d->get(key);
    return v == nullptr ? std::string() : v->text;
}

std::string name_of(const io::Node& obj) {
    const io::Node* md = obj.get("metadata");
    const io::Node* n = md == nullptr ? nullptr : md->get("name");
    return n == nullptr ? std::string() : n->text;
}

// The server logs a request just after answering it, so the last entry may come a moment
// late: these wait (up to 3 s) until the log has at least `n` entries (to `path`).
std::vector<test::KubeRequest> requests_to(KubeServer& s, const std::string& path, std::size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (;;) {
        std::vector<test::KubeRequest> out;
        for (auto& r : s.requests())
            if (path.empty() || r.path == path) out.push_back(r);
        if (out.size() >= n || std::chrono::steady_clock::now() > deadline) return out;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

std::vector<test::KubeRequest> log_of(KubeServer& s, std::size_t n) {
    return requests_to(s, "", n);
}

TEST(KubeClient, AggregatedDiscovery) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    server.clear_requests();
    auto d = api->discover(false);
    ASSERT_TRUE(d.ok()) << d.error().str();
    EXPECT_TRUE((*d)->aggregated);
    const Resource* cm = (*d)->find("", "v1", "ConfigMap");
    ASSERT_NE(cm, nullptr);
    EXPECT_EQ(cm->name, "configmaps");
    EXPECT_TRUE(cm->namespaced);
    const Resource* dep = (*d)->find("apps", "v1", "Deployment");
    ASSERT_NE(dep, nullptr);
    EXPECT_EQ(dep->resource_group(), "deployments.apps");
    const Resource* ns = (*d)->find("", "v1", "Namespace");
    ASSERT_NE(ns, nullptr);
    EXPECT_FALSE(ns->namespaced);
    // Two requests, and cached after them.
    EXPECT_EQ(log_of(server, 2).size(), 2u);
    auto again = api->discover(false);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *d);
    EXPECT_EQ(server.requests().size(), 2u);
    auto fresh = api->discover(true);
    ASSERT_TRUE(fresh.ok());
    EXPECT_EQ(log_of(server, 4).size(), 4u);
    // The first pointer stays valid.
    EXPECT_NE((*d)->find("", "v1", "ConfigMap"), nullptr);
}

TEST(KubeClient, LegacyDiscovery) {
    KubeServerOptions o;
    o.legacy_discovery = true;
    KPKG_REQUIRE_KUBE_SERVER(server, o);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    server.clear_requests();
    auto d = api->discover(false);
    ASSERT_TRUE(d.ok()) << d.error().str();
    EXPECT_FALSE((*d)->aggregated);
    const Resource* cm = (*d)->find("", "v1", "ConfigMap");
    ASSERT_NE(cm, nullptr);
    EXPECT_EQ(cm->name, "configmaps");
    EXPECT_TRUE(cm->namespaced);
    const Resource* dep = (*d)->find("apps", "v1", "Deployment");
    ASSERT_NE(dep, nullptr);
    EXPECT_EQ(dep->name, "deployments");
    // No subresources.
    for (const auto& r : (*d)->resources)
        EXPECT_EQ(r.name.find('/'), std::string::npos) << r.name;
    EXPECT_EQ(requests_to(server, "/api/v1", 1).size(), 1u);
    EXPECT_EQ(requests_to(server, "/apis/apps/v1", 1).size(), 1u);
}

TEST(KubeClient, ApplyCreatesUpdatesConflictsForcesAndDryRuns) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    const Resource cm = configmaps();
    server.clear_requests();
    auto created = api->apply(cm, "default", configmap("cm1", "a", "1"), {});
    ASSERT_TRUE(created.ok()) << created.error().str();
    ASSERT_TRUE(created->ok()) << created->api->message;
    EXPECT_TRUE(created->value->created);
    EXPECT_EQ(data_of(created->value->object, "a"), "1");
    auto reqs = log_of(server, 1);
    ASSERT_EQ(reqs.size(), 1u);
    EXPECT_EQ(reqs[0].method, "PATCH");
    EXPECT_EQ(reqs[0].path, "/api/v1/namespaces/default/configmaps/cm1");
    EXPECT_EQ(reqs[0].param("fieldManager"), "kpkg");
    EXPECT_EQ(reqs[0].param("fieldValidation"), "Strict");
    EXPECT_EQ(reqs[0].param("force"), "false");
    EXPECT_EQ(reqs[0].param("dryRun"), "");
    EXPECT_EQ(reqs[0].content_type, "application/apply-patch+yaml");
    EXPECT_EQ(reqs[0].user_agent, "kpkg");

    auto updated = api->apply(cm, "default", configmap("cm1", "a", "2"), {});
    ASSERT_TRUE(updated.ok() && updated->ok());
    EXPECT_FALSE(updated->value->created);
    EXPECT_EQ(data_of(updated->value->object, "a"), "2");

    ApplyOptions other;
    other.field_manager = "someone-else";
    auto conflict = api->apply(cm, "default", configmap("cm1", "a", "3"), other);
    ASSERT_TRUE(conflict.ok()) << conflict.error().str();
    ASSERT_FALSE(conflict->ok());
    EXPECT_EQ(conflict->api->status, 409);
    EXPECT_EQ(conflict->api->reason, "Conflict");
    EXPECT_FALSE(conflict->api->message.empty());
    EXPECT_FALSE(conflict->api->transient);

    other.force = true;
    auto forced = api->apply(cm, "default", configmap("cm1", "a", "3"), other);
    ASSERT_TRUE(forced.ok() && forced->ok());
    EXPECT_EQ(data_of(forced->value->object, "a"), "3");
    EXPECT_EQ(log_of(server, 4).back().param("force"), "true");

    ApplyOptions dry;
    dry.dry_run = true;
    auto dried = api->apply(cm, "default", configmap("cm2", "b", "1"), dry);
    ASSERT_TRUE(dried.ok() && dried->ok());
    EXPECT_EQ(data_of(dried->value->object, "b"), "1");
    EXPECT_EQ(log_of(server, 5).back().param("dryRun"), "All");
    EXPECT_FALSE(server.object("ConfigMap", "cm2", "default").has_value());
    auto stored = server.object("ConfigMap", "cm1", "default");
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(data_of(*stored, "a"), "3");
}

TEST(KubeClient, ApplyClusterScopedAndBadObjects) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    io::Node ns = io::Node::map();
    ns.set("apiVersion", io::Node::string("v1"));
    ns.set("kind", io::Node::string("Namespace"));
    ns.set("metadata", io::Node::map()).set("name", io::Node::string("team-a"));
    server.clear_requests();
    auto r = api->apply(namespaces(), "ignored", ns, {});
    ASSERT_TRUE(r.ok() && r->ok());
    EXPECT_EQ(log_of(server, 1).back().path, "/api/v1/namespaces/team-a");
    // No name; a namespaced object without a namespace.
    io::Node noname = io::Node::map();
    noname.set("kind", io::Node::string("ConfigMap"));
    auto bad = api->apply(configmaps(), "default", noname, {});
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(contains(bad.error().message, "has no metadata.name")) << bad.error().message;
    auto nons = api->apply(configmaps(), "", configmap("x", "a", "b"), {});
    ASSERT_FALSE(nons.ok());
    EXPECT_TRUE(contains(nons.error().message, "no namespace")) << nons.error().message;
}

TEST(KubeClient, InvalidObjectCarriesTheCauses) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    auto r = api->apply(configmaps(), "default", configmap("Not_Valid", "a", "1"), {});
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_FALSE(r->ok());
    EXPECT_EQ(r->api->status, 422);
    EXPECT_EQ(r->api->reason, "Invalid");
    ASSERT_EQ(r->api->causes.size(), 1u);
    EXPECT_TRUE(contains(r->api->causes[0], "metadata.name: Invalid value")) << r->api->causes[0];
}

TEST(KubeClient, GetAndNotFound) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    ASSERT_TRUE(api->apply(configmaps(), "default", configmap("cm1", "a", "1"), {})->ok());
    auto got = api->get(configmaps(), "default", "cm1");
    ASSERT_TRUE(got.ok() && got->ok());
    EXPECT_EQ(data_of(*got->value, "a"), "1");
    auto missing = api->get(configmaps(), "default", "nope");
    ASSERT_TRUE(missing.ok()) << missing.error().str();
    ASSERT_FALSE(missing->ok());
    EXPECT_EQ(missing->api->status, 404);
    EXPECT_EQ(missing->api->reason, "NotFound");
    EXPECT_TRUE(contains(missing->api->message, "nope")) << missing->api->message;
}

TEST(KubeClient, ListWithSelectorFollowsContinueTokens) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    for (int i = 0; i < 5; ++i)
        ASSERT_TRUE(
            api->apply(configmaps(), "default", configmap(numbered("x", i), "a", "1", "x"), {})
                ->ok());
    for (int i = 0; i < 2; ++i)
        ASSERT_TRUE(
            api->apply(configmaps(), "default", configmap(numbered("y", i), "a", "1", "y"), {})
                ->ok());
    server.clear_requests();
    ListOptions lo;
    lo.label_selector = "app=x";
    lo.limit = 2;
    auto l = api->list(configmaps(), "default", lo);
    ASSERT_TRUE(l.ok()) << l.error().str();
    ASSERT_TRUE(l->ok()) << l->api->message;
    ASSERT_EQ(l->value->items.size(), 5u);
    for (const auto& item : l->value->items) {
        EXPECT_EQ(name_of(item).substr(0, 1), "x");
        ASSERT_NE(item.get("kind"), nullptr);
        EXPECT_EQ(item.get("kind")->text, "ConfigMap");
    }
    EXPECT_FALSE(l->value->resource_version.empty());
    auto reqs = requests_to(server, "/api/v1/namespaces/default/configmaps", 3);
    ASSERT_EQ(reqs.size(), 3u);
    EXPECT_EQ(reqs[0].param("labelSelector"), "app=x");
    EXPECT_EQ(reqs[0].param("limit"), "2");
    EXPECT_EQ(reqs[0].param("continue"), "");
    EXPECT_NE(reqs[1].param("continue"), "");
    // Field selector, all namespaces.
    ListOptions by_name;
    by_name.field_selector = "metadata.name=y1";
    auto one = api->list(configmaps(), "", by_name);
    ASSERT_TRUE(one.ok() && one->ok());
    ASSERT_EQ(one->value->items.size(), 1u);
    EXPECT_EQ(name_of(one->value->items[0]), "y1");
}

TEST(KubeClient, WatchDeliversEventsUntilTheCallbackStops) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    auto l = api->list(configmaps(), "default", {});
    ASSERT_TRUE(l.ok() && l->ok());
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        auto a = api->apply(configmaps(), "default", configmap("w1", "a", "1"), {});
        EXPECT_TRUE(a.ok() && a->ok());
        auto b = api->apply(configmaps(), "default", configmap("w1", "a", "2"), {});
        EXPECT_TRUE(b.ok() && b->ok());
    });
    WatchOptions wo;
    wo.resource_version = l->value->resource_version;
    wo.timeout = std::chrono::milliseconds(10000);
    std::vector<std::string> seen;
    const auto start = std::chrono::steady_clock::now();
    auto w = api->watch(configmaps(), "default", wo, [&](const WatchEvent& ev) {
        seen.push_back(ev.type + " " + name_of(ev.object) + " " + data_of(ev.object, "a"));
        return !(ev.type == "MODIFIED" && name_of(ev.object) == "w1");
    });
    writer.join();
    ASSERT_TRUE(w.ok()) << w.error().str();
    ASSERT_TRUE(w->ok()) << w->api->message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
    std::vector<std::string> want = {"ADDED w1 1", "MODIFIED w1 2"};
    std::vector<std::string> got;
    for (const auto& s : seen)
        if (!contains(s, "BOOKMARK")) got.push_back(s);
    EXPECT_EQ(got, want);
}

TEST(KubeClient, WatchEndsAtItsTimeout) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    WatchOptions wo;
    wo.timeout = std::chrono::milliseconds(1200);
    int events = 0;
    const auto start = std::chrono::steady_clock::now();
    auto w = api->watch(configmaps(), "default", wo, [&](const WatchEvent& ev) {
        if (ev.type != "BOOKMARK") ++events;
        return true;
    });
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(w.ok()) << w.error().str();
    EXPECT_TRUE(w->ok());
    EXPECT_EQ(events, 0);
    EXPECT_GE(took, std::chrono::milliseconds(1000));
    EXPECT_LT(took, std::chrono::milliseconds(5000));
}

// A watch from a resource version the server no longer keeps: as a real server does, the stream
// opens and carries one ERROR event whose object is a 410 Expired Status, then ends.
TEST(KubeClient, WatchFromATooOldVersionIsExpired) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    ASSERT_TRUE(api->apply(configmaps(), "default", configmap("e1", "a", "1"), {})->ok());
    ASSERT_TRUE(server.control(
        R"({"faults": [{"method": "GET", "query": "watch=", "watch_expired": true, "count": 1}]})"));
    WatchOptions wo;
    wo.resource_version = "1";
    wo.timeout = std::chrono::milliseconds(3000);
    std::vector<WatchEvent> events;
    auto w = api->watch(configmaps(), "default", wo, [&](const WatchEvent& e) {
        events.push_back(e);
        return true;
    });
    ASSERT_TRUE(w.ok()) << w.error().str();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].type, "ERROR");
    const io::Node* code = events[0].object.get("code");
    ASSERT_NE(code, nullptr);
    EXPECT_EQ(code->as_int(), 410);
    const io::Node* reason = events[0].object.get("reason");
    ASSERT_NE(reason, nullptr);
    EXPECT_EQ(reason->text, "Expired");
}

TEST(KubeClient, DeleteThenNotFound) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    ASSERT_TRUE(api->apply(configmaps(), "default", configmap("d1", "a", "1"), {})->ok());
    server.clear_requests();
    auto dry = api->remove(configmaps(), "default", "d1", Propagation::background, true);
    ASSERT_TRUE(dry.ok() && dry->ok());
    EXPECT_EQ(log_of(server, 1).back().param("dryRun"), "All");
    EXPECT_TRUE(server.object("ConfigMap", "d1", "default").has_value());
    auto del = api->remove(configmaps(), "default", "d1", Propagation::foreground, false);
    ASSERT_TRUE(del.ok()) << del.error().str();
    ASSERT_TRUE(del->ok()) << del->api->message;
    EXPECT_EQ(log_of(server, 2).back().method, "DELETE");
    auto got = api->get(configmaps(), "default", "d1");
    ASSERT_TRUE(got.ok());
    ASSERT_FALSE(got->ok());
    EXPECT_EQ(got->api->status, 404);
    auto again = api->remove(configmaps(), "default", "d1", Propagation::background, false);
    ASSERT_TRUE(again.ok());
    ASSERT_FALSE(again->ok());
    EXPECT_EQ(again->api->status, 404);
}

TEST(KubeClient, NamespaceAndDescribe) {
    KubeServerOptions o;
    o.context_namespace = "team";
    KPKG_REQUIRE_KUBE_SERVER(server, o);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    EXPECT_EQ(api->default_namespace(), "team");
    EXPECT_EQ(api->describe(), server.url() + " (context test)");
    auto flagged = open(server.kubeconfig_path(), 3, "other");
    ASSERT_TRUE(flagged);
    EXPECT_EQ(flagged->default_namespace(), "other");
}

TEST(KubeClient, ConcurrentApplies) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 6; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 10; ++i) {
                std::string name = "c";
                name.append(std::to_string(t)).append("-").append(std::to_string(i));
                auto r = api->apply(configmaps(), "default", configmap(name, "a", "1"), {});
                if (r.ok() && r->ok() && r->value->created) ++ok;
            }
        });
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(ok.load(), 60);
}

// --- TLS and credentials ----------------------------------------------------------------------

TEST(KubeClient, TlsWithCaAndClientCertificate) {
    KubeServerOptions o;
    o.tls = true;
    o.client_ca = true;
    KPKG_REQUIRE_KUBE_SERVER(server, o);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    auto got = api->get(namespaces(), "", "default");
    ASSERT_TRUE(got.ok()) << got.error().str();
    ASSERT_TRUE(got->ok()) << got->api->message;
    EXPECT_EQ(name_of(*got->value), "default");
    // Without the client certificate: the server refuses (401).
    auto anon = open(server.write_kubeconfig("anon", {}));
    ASSERT_TRUE(anon);
    auto refused = anon->get(namespaces(), "", "default");
    ASSERT_TRUE(refused.ok()) << refused.error().str();
    ASSERT_FALSE(refused->ok());
    EXPECT_EQ(refused->api->status, 401);
}

// A kubeconfig for `server` with a cluster section of our own.
std::filesystem::path custom(const KubeServer& server, const std::string& name,
                             const std::string& cluster, const std::string& user = " {}\n") {
    std::string y = "apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters:\n- name: c\n"
                    "  cluster:\n";
    y += cluster;
    y += "users:\n- name: u\n  user:";
    y += user;
    y += "contexts:\n- name: x\n  context: {cluster: c, user: u}\n";
    return server.dir().write(name, y);
}

TEST(KubeClient, TlsServerNameAndVerificationFailures) {
    KubeServerOptions o;
    o.tls = true;
    KPKG_REQUIRE_KUBE_SERVER(server, o);
    const std::string ca = server.tls()->ca_cert.string();
    const std::string port = std::to_string(server.port());
    // The certificate names localhost: the URL's 127.0.0.1 is kept for the connection.
    auto named = open(custom(server, "named",
                             "    server: https://127.0.0.1:" + port + "\n" +
                                 "    certificate-authority: " + ca + "\n" +
                                 "    tls-server-name: localhost\n"));
    ASSERT_TRUE(named);
    auto ok = named->get(namespaces(), "", "default");
    ASSERT_TRUE(ok.ok()) << ok.error().str();
    EXPECT_TRUE(ok->ok());
    // A name the certificate does not have: verification fails, no retries, a clear error.
    auto wrong = open(custom(server, "wrong",
                             "    server: https://127.0.0.1:" + port + "\n" +
                                 "    certificate-authority: " + ca + "\n" +
                                 "    tls-server-name: other.example\n"));
    ASSERT_TRUE(wrong);
    server.clear_requests();
    auto bad = wrong->get(namespaces(), "", "default");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ExitCode::error);
    EXPECT_TRUE(contains(bad.error().message, "https://127.0.0.1:" + port)) << bad.error().message;
    // No CA: the system's bundle does not know the test CA.
    auto noca = open(custom(server, "noca", "    server: https://127.0.0.1:" + port + "\n"));
    ASSERT_TRUE(noca);
    auto unknown = noca->get(namespaces(), "", "default");
    ASSERT_FALSE(unknown.ok());
    EXPECT_TRUE(contains(unknown.error().message, "cannot connect to https://127.0.0.1:" + port))
        << unknown.error().message;
    // insecure-skip-tls-verify: accepted.
    auto insecure = open(custom(server, "insecure",
                                "    server: https://127.0.0.1:" + port + "\n" +
                                    "    insecure-skip-tls-verify: true\n"));
    ASSERT_TRUE(insecure);
    auto fine = insecure->get(namespaces(), "", "default");
    ASSERT_TRUE(fine.ok()) << fine.error().str();
    EXPECT_TRUE(fine->ok());
}

TEST(KubeClient, BearerTokenAndWrongToken) {
    KubeServerOptions o;
    o.tokens = {"good-token"};
    KPKG_REQUIRE_KUBE_SERVER(server, o);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    auto ok = api->get(namespaces(), "", "default");
    ASSERT_TRUE(ok.ok() && ok->ok());
    test::KubeUser wrong;
    wrong.token = "bad-token";
    auto bad = open(server.write_kubeconfig("wrong", wrong));
    ASSERT_TRUE(bad);
    auto refused = bad->get(namespaces(), "", "default");
    ASSERT_TRUE(refused.ok()) << refused.error().str();
    ASSERT_FALSE(refused->ok());
    EXPECT_EQ(refused->api->status, 401);
    EXPECT_EQ(refused->api->reason, "Unauthorized");
    // Discovery refused: an error naming the server.
    auto d = bad->discover(false);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(contains(d.error().message, "Unauthorized")) << d.error().message;
}

TEST(KubeClient, BasicAuth) {
    KubeServerOptions o;
    o.basic = "admin:s3cret";
    KPKG_REQUIRE_KUBE_SERVER(server, o);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    auto ok = api->get(namespaces(), "", "default");
    ASSERT_TRUE(ok.ok() && ok->ok());
    test::KubeUser wrong;
    wrong.basic = "admin:nope";
    auto bad = open(server.write_kubeconfig("wrong", wrong));
    auto refused = bad->get(namespaces(), "", "default");
    ASSERT_TRUE(refused.ok());
    EXPECT_EQ(refused->api->status, 401);
}

TEST(KubeClient, ExecPluginRunsAgainAfterA401) {
    KubeServerOptions o;
    o.tokens = {"fresh"};
    KPKG_REQUIRE_KUBE_SERVER(server, o);
    const auto dir = server.dir().path();
    // First run: a token the server refuses; later runs: the accepted one.
    auto plugin = server.dir().write(
        "plugin.sh",
        "#!/bin/sh\necho run >> " + (dir / "count").string() + "\n" + "if [ $(wc -l < " +
            (dir / "count").string() +
            ") -eq 1 ]; then t=stale; else t=fresh; fi\n"
            "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":"
            "\"client.authentication.k8s.io/v1beta1\",\"status\":{\"token\":\"'$t'\"}}'\n");
    ::chmod(plugin.c_str(), 0755);
    auto api = open(custom(server, "exec", "    server: " + server.url() + "\n",
                           "\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
                           "      command: " +
                               plugin.string() + "\n"));
    ASSERT_TRUE(api);
    auto ok = api->get(namespaces(), "", "default");
    ASSERT_TRUE(ok.ok()) << ok.error().str();
    ASSERT_TRUE(ok->ok()) << ok->api->message;
    auto again = api->get(namespaces(), "", "default");
    ASSERT_TRUE(again.ok() && again->ok());
    std::string count = test::read_file(dir / "count");
    EXPECT_EQ(std::count(count.begin(), count.end(), '\n'), 2);
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '\n')
            out += "\\n";
        else if (c == '"' || c == '\\')
            out.append(1, '\\').append(1, c);
        else
            out += c;
    }
    return out + "\"";
}

TEST(KubeClient, ExecPluginClientCertificateOverTls) {
    KubeServerOptions o;
    o.tls = true;
    o.client_ca = true;
    KPKG_REQUIRE_KUBE_SERVER(server, o);
    const auto& tls = *server.tls();
    auto answer = server.dir().write(
        "credential.json",
        "{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
        "\"status\":{\"clientCertificateData\":" +
            json_string(test::read_file(tls.client_cert)) +
            ",\"clientKeyData\":" + json_string(test::read_file(tls.client_key)) + "}}\n");
    auto plugin = server.dir().write("plugin.sh", "#!/bin/sh\ncat " + answer.string() + "\n");
    ::chmod(plugin.c_str(), 0755);
    auto api = open(custom(server, "exec-cert",
                           "    server: " + server.url() +
                               "\n    certificate-authority: " + tls.ca_cert.string() + "\n",
                           "\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                           "      interactiveMode: Never\n      command: " +
                               plugin.string() + "\n"));
    ASSERT_TRUE(api);
    auto got = api->get(namespaces(), "", "default");
    ASSERT_TRUE(got.ok()) << got.error().str();
    ASSERT_TRUE(got->ok()) << got->api->message;
}

// --- retries and failures -------------------------------------------------------------------

TEST(KubeClient, A500IsRetried) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    ASSERT_TRUE(
        server.control(R"({"faults": [{"method": "GET", "path": "^/api/v1/namespaces/default$",
                                  "count": 1, "status": 500}]})"));
    server.clear_requests();
    auto got = api->get(namespaces(), "", "default");
    ASSERT_TRUE(got.ok()) << got.error().str();
    ASSERT_TRUE(got->ok()) << got->api->message;
    auto reqs = requests_to(server, "/api/v1/namespaces/default", 2);
    ASSERT_EQ(reqs.size(), 2u);
    EXPECT_EQ(reqs[0].status, 500);
    EXPECT_EQ(reqs[1].status, 200);
}

TEST(KubeClient, A500ThatLastsIsAnApiErrorAfterTheRetries) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path(), 2);
    ASSERT_TRUE(api);
    ASSERT_TRUE(server.control(R"({"faults": [{"path": "^/api/v1/namespaces/default$",
                                  "count": -1, "status": 503, "message": "etcd is down"}]})"));
    server.clear_requests();
    auto got = api->get(namespaces(), "", "default");
    ASSERT_TRUE(got.ok()) << got.error().str();
    ASSERT_FALSE(got->ok());
    EXPECT_EQ(got->api->status, 503);
    EXPECT_TRUE(got->api->transient);
    EXPECT_EQ(got->api->message, "etcd is down");
    EXPECT_EQ(requests_to(server, "/api/v1/namespaces/default", 3).size(), 3u);
}

TEST(KubeClient, A429HonoursRetryAfter) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    ASSERT_TRUE(server.control(R"({"faults": [{"path": "^/api/v1/namespaces/default$",
                                  "count": 1, "status": 429, "retry_after": 1}]})"));
    const auto start = std::chrono::steady_clock::now();
    auto got = api->get(namespaces(), "", "default");
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(got.ok()) << got.error().str();
    ASSERT_TRUE(got->ok()) << got->api->message;
    // The first backoff alone would be 250 ms.
    EXPECT_GE(took, std::chrono::milliseconds(950));
}

TEST(KubeClient, ADroppedConnectionIsRetried) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    ASSERT_TRUE(server.control(R"({"faults": [{"method": "PATCH", "count": 1, "drop": true}]})"));
    server.clear_requests();
    auto r = api->apply(configmaps(), "default", configmap("dropped", "a", "1"), {});
    ASSERT_TRUE(r.ok()) << r.error().str();
    ASSERT_TRUE(r->ok()) << r->api->message;
    auto reqs = requests_to(server, "/api/v1/namespaces/default/configmaps/dropped", 2);
    ASSERT_EQ(reqs.size(), 2u);
    EXPECT_EQ(reqs[0].status, 0);
}

std::unique_ptr<Api> open_with(const std::filesystem::path& kubeconfig,
                               std::chrono::milliseconds request_timeout, int retries) {
    ConnectOptions o;
    o.kubeconfig = kubeconfig.string();
    o.retries = retries;
    o.request_timeout = request_timeout;
    auto api = connect(o);
    EXPECT_TRUE(api.ok()) << api.error().str();
    return api.ok() ? std::move(*api) : nullptr;
}

TEST(KubeClient, ARequestThatTimesOutIsNotSentAgain) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open_with(server.kubeconfig_path(), std::chrono::milliseconds(1000), 3);
    ASSERT_TRUE(api);
    ASSERT_TRUE(server.control(R"({"faults": [{"method": "PATCH", "count": -1, "hang": true}]})"));
    server.clear_requests();
    const auto start = std::chrono::steady_clock::now();
    auto r = api->apply(configmaps(), "default", configmap("silent", "a", "1"), {});
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::error);
    EXPECT_TRUE(contains(r.error().message, "no answer within 1s")) << r.error().message;
    // One attempt of 1 s (it used to be 4 of them, with back-offs between).
    EXPECT_LT(took, std::chrono::milliseconds(3000));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(requests_to(server, "/api/v1/namespaces/default/configmaps/silent", 1).size(), 1u);
}

TEST(KubeClient, TheDeadlineBoundsRequestsRetriesAndBackOffs) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    // Its own limits are long: the deadline is what ends each case.
    auto api = open_with(server.kubeconfig_path(), std::chrono::milliseconds(20000), 5);
    ASSERT_TRUE(api);
    const auto limit = std::chrono::milliseconds(1000);
    const auto within = [&](const std::chrono::steady_clock::time_point start) {
        return std::chrono::steady_clock::now() - start < std::chrono::milliseconds(2500);
    };
    // A PATCH that is never answered.
    ASSERT_TRUE(server.control(R"({"faults": [{"method": "PATCH", "count": -1, "hang": true}]})"));
    auto start = std::chrono::steady_clock::now();
    api->set_deadline(Deadline{start + limit, limit});
    auto r = api->apply(configmaps(), "default", configmap("silent", "a", "1"), {});
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.error().message, "the time limit of 1s passed")) << r.error().message;
    EXPECT_TRUE(within(start));
    // A 503 that lasts: the retries stop when no time is left for the next, with its answer.
    ASSERT_TRUE(server.control(R"({"faults": [{"method": "GET", "count": -1, "status": 503}]})"));
    start = std::chrono::steady_clock::now();
    api->set_deadline(Deadline{start + limit, limit});
    auto got = api->get(namespaces(), "", "default");
    ASSERT_TRUE(got.ok()) << got.error().str();
    ASSERT_FALSE(got->ok());
    EXPECT_EQ(got->api->status, 503);
    EXPECT_TRUE(within(start));
    // After the deadline nothing is sent at all; lifted, requests go again.
    ASSERT_TRUE(server.reset());
    server.clear_requests();
    api->set_deadline(Deadline{std::chrono::steady_clock::now(), limit});
    auto late = api->get(namespaces(), "", "default");
    ASSERT_FALSE(late.ok());
    EXPECT_TRUE(contains(late.error().message, "the time limit of 1s passed"))
        << late.error().message;
    api->set_deadline(std::nullopt);
    auto again = api->get(namespaces(), "", "default");
    ASSERT_TRUE(again.ok() && again->ok());
    EXPECT_EQ(requests_to(server, "/api/v1/namespaces/default", 1).size(), 1u);
}

// An interrupted run does not wait out a retry's pause (a Retry-After of 60 s here): the server's
// last answer stands and nothing is sent again.
TEST(KubeClient, AnInterruptCutsThePauseBeforeARetryShort) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    std::atomic<bool> interrupted{false};
    ConnectOptions o;
    o.kubeconfig = server.kubeconfig_path().string();
    o.retries = 5;
    o.interrupted = &interrupted;
    auto api = connect(o);
    ASSERT_TRUE(api.ok()) << api.error().str();
    ASSERT_TRUE(server.control(
        R"({"faults": [{"method": "GET", "count": -1, "status": 503, "retry_after": 60}]})"));
    server.clear_requests();
    std::jthread ctrl_c([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        interrupted.store(true);
    });
    const auto start = std::chrono::steady_clock::now();
    auto got = (*api)->get(namespaces(), "", "default");
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(got.ok()) << got.error().str();
    ASSERT_FALSE(got->ok());
    EXPECT_EQ(got->api->status, 503);
    EXPECT_LT(took, std::chrono::milliseconds(5000)); // it used to sleep the whole minute
    EXPECT_EQ(requests_to(server, "/api/v1/namespaces/default", 1).size(), 1u);
}

TEST(KubeClient, AReplyOverTheLimitIsAnError) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    auto api = open(server.kubeconfig_path());
    ASSERT_TRUE(api);
    ASSERT_TRUE(
        api->apply(configmaps(), "default", configmap("big", "a", std::string(8000, 'x')), {})
            ->ok());
    ConnectOptions o;
    o.kubeconfig = server.kubeconfig_path().string();
    o.max_reply_bytes = 4096;
    auto small = connect(o);
    ASSERT_TRUE(small.ok());
    auto got = (*small)->get(configmaps(), "default", "big");
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code, ExitCode::error);
    EXPECT_TRUE(contains(got.error().message, "larger than 4096 bytes")) << got.error().message;
    // A small one still fits.
    auto fits = (*small)->get(namespaces(), "", "default");
    ASSERT_TRUE(fits.ok()) << fits.error().str();
}

int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

TEST(KubeClient, ProxyUrlIsUsed) {
    KPKG_REQUIRE_KUBE_SERVER(server);
    // A proxy that is not there: the request fails, though the server itself is reachable.
    const std::string proxy = loopback(free_port());
    auto api = open(custom(server, "proxied",
                           "    server: " + server.url() + "\n    proxy-url: " + proxy + "\n"),
                    0);
    ASSERT_TRUE(api);
    auto got = api->get(namespaces(), "", "default");
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code, ExitCode::error);
    EXPECT_TRUE(contains(got.error().message, "through the proxy " + proxy)) << got.error().message;
    auto direct = open(server.kubeconfig_path(), 0);
    auto fine = direct->get(namespaces(), "", "default");
    ASSERT_TRUE(fine.ok() && fine->ok());
}

// A one-connection HTTP server on loopback that answers with `pieces`, each written on its own
// after a pause (so that the client reads them separately), then closes.
class PieceServer {
public:
    explicit PieceServer(std::vector<std::string> pieces) : pieces_(std::move(pieces)) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
        ::listen(fd_, 1);
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] {
            const int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) return;
            std::string req;
            char buf[4096];
            while (req.find("\r\n\r\n") == std::string::npos) {
                const ssize_t n = ::read(c, buf, sizeof buf);
                if (n <= 0) break;
                req.append(buf, static_cast<std::size_t>(n));
            }
            request_ = req;
            for (const auto& p : pieces_) {
                if (::write(c, p.data(), p.size()) < 0) break;
                std::this_thread::sleep_for(std::chrono::milliseconds(30));
            }
            ::close(c);
        });
    }
    ~PieceServer() {
        ::shutdown(fd_, SHUT_RDWR);
        thread_.join();
        ::close(fd_);
    }
    int port() const { return port_; }
    const std::string& request() const { return request_; }

private:
    std::vector<std::string> pieces_;
    int fd_ = -1;
    int port_ = 0;
    std::thread thread_;
    std::string request_;
};

std::string chunk(const std::string& data) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    std::string out(size);
    return out.append(data).append("\r\n");
}

TEST(KubeClient, WatchEventsSplitAcrossReadsAreFramed) {
    // Events cut in odd places, strings with braces and escaped quotes, two events in one
    // chunk, no newline between them.
    const std::string e1 =
        R"({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"}{\"]["}}})";
    const std::string e2 =
        R"({"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"name":"b"}}})";
    const std::string e3 =
        R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})";
    const std::string stream = e1 + "\n" + e2 + e3 + "\n";
    std::vector<std::string> pieces = {
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"};
    pieces.push_back(chunk(stream.substr(0, 20)));
    pieces.push_back(chunk(stream.substr(20, 37)));
    pieces.push_back(chunk(stream.substr(57)));
    pieces.push_back("0\r\n\r\n");
    PieceServer ps(pieces);
    test::TempDir dir;
    std::string config = "current-context: x\nclusters:\n- name: c\n  cluster:\n    server: ";
    config.append(loopback(ps.port())).append("\ncontexts:\n- name: x\n  context: {cluster: c}\n");
    auto kc = dir.write("config", config);
    auto api = open(kc, 0);
    ASSERT_TRUE(api);
    std::vector<std::string> seen;
    WatchOptions wo;
    wo.label_selector = "app in (a,b)";
    auto w = api->watch(configmaps(), "ns 1", wo, [&](const WatchEvent& ev) {
        seen.push_back(ev.type + " " + name_of(ev.object) + data_of(ev.object, "k"));
        if (ev.type == "ERROR") {
            const io::Node* reason = ev.object.get("reason");
            seen.back() += reason == nullptr ? std::string("?") : reason->text;
        }
        return true;
    });
    ASSERT_TRUE(w.ok()) << w.error().str();
    ASSERT_TRUE(w->ok());
    EXPECT_EQ(seen, (std::vector<std::string>{"ADDED a}{\"][", "MODIFIED b", "ERROR Expired"}));
    // The namespace and the selector are escaped.
    EXPECT_TRUE(contains(ps.request(), "GET /api/v1/namespaces/ns%201/configmaps?watch=true"))
        << ps.request();
    EXPECT_TRUE(contains(ps.request(), "labelSelector=app%20in%20%28a%2Cb%29")) << ps.request();
}

TEST(KubeClient, UnreachableServerIsAClearError) {
    test::TempDir dir;
    const std::string url = loopback(free_port());
    auto kc = dir.write("config",
                        "current-context: x\nclusters:\n- name: c\n  cluster:\n    server: " + url +
                            "\ncontexts:\n- name: x\n  context: {cluster: c}\n");
    auto api = open(kc, 1);
    ASSERT_TRUE(api);
    auto d = api->discover(false);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code, ExitCode::error);
    EXPECT_TRUE(contains(d.error().message, "cannot connect to " + url + " (context x)"))
        << d.error().message;
    EXPECT_TRUE(contains(d.error().message, "after 2 attempts")) << d.error().message;
}

TEST(KubeClient, TheDeadlineEndsTheRetriesOfARefusedConnection) {
    test::TempDir dir;
    const std::string url = loopback(free_port());
    auto kc = dir.write("config",
                        "current-context: x\nclusters:\n- name: c\n  cluster:\n    server: " + url +
                            "\ncontexts:\n- name: x\n  context: {cluster: c}\n");
    auto api = open_with(kc, std::chrono::milliseconds(20000), 5);
    ASSERT_TRUE(api);
    const auto start = std::chrono::steady_clock::now();
    // Five retries would take 250 + 500 + 1000 + 2000 + 4000 ms.
    api->set_deadline(
        Deadline{start + std::chrono::milliseconds(1200), std::chrono::milliseconds(1200)});
    auto d = api->discover(false);
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code, ExitCode::error);
    EXPECT_TRUE(contains(d.error().message, "cannot connect to " + url)) << d.error().message;
    EXPECT_TRUE(
        contains(d.error().message, "the time limit of 1.2s leaves no time for another attempt"))
        << d.error().message;
    EXPECT_LT(took, std::chrono::milliseconds(2500));
}

} // namespace
} // namespace kpkg::kube
