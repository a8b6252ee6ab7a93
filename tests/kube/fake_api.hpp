// An in-memory kube::Api for the apply engine's tests: it stores objects, serves discovery
// (custom resources once their CRD is Established), plays the controllers (an object becomes
// ready after a number of controller steps, one step per watch tick), injects failures, and
// records every request.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kpkg/io/emit.hpp"
#include "kpkg/kube/api.hpp"

namespace kpkg::test {

using kube::ApiError;
using kube::Resource;

class FakeApi : public kube::Api {
public:
    struct Request {
        std::string verb; // get, apply, list, watch, delete, discover
        std::string resource, ns, name;
        bool dry_run = false;
        bool force = false;
        std::string field_manager;
        io::Node body;
    };

    // Controller behaviour.
    int ready_after = 1;                        // steps until a workload or CRD is ready
    std::set<std::string> never_ready;          // names that never get ready
    std::set<std::string> fail_progress;        // Deployments that exceed their progress deadline
    std::set<std::string> fail_job;             // Jobs that fail
    std::set<std::string> conflicts;            // names whose apply conflicts without force
    std::map<std::string, ApiError> fail_apply; // names whose apply is refused with this
    int delete_after = 0;            // steps a deleted object lingers (deletionTimestamp)
    bool watch_ends_at_once = false; // every watch ends as it opens, delivering nothing
    // Every watch is held for its whole time, then refused (as the real client refuses a request
    // opened when the run's time is up).
    bool watch_refused_at_its_end = false;
    std::string default_ns;

    FakeApi() {
        serve("", "v1", "Namespace", "namespaces", false);
        serve("", "v1", "ConfigMap", "configmaps", true);
        serve("", "v1", "Secret", "secrets", true);
        serve("", "v1", "Service", "services", true);
        serve("", "v1", "ServiceAccount", "serviceaccounts", true);
        serve("", "v1", "Pod", "pods", true);
        serve("apps", "v1", "Deployment", "deployments", true);
        serve("batch", "v1", "Job", "jobs", true);
        serve("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false);
        serve("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
              false);
        serve("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
              "validatingwebhookconfigurations", false);
    }

    void serve(const std::string& group, const std::string& version, const std::string& kind,
               const std::string& plural, bool namespaced) {
        std::lock_guard<std::mutex> lock(mu_);
        serve_locked(group, version, kind, plural, namespaced);
    }

    // An object put in place as if someone else had created it (no request recorded).
    void put(const Resource& r, io::Node obj) {
        std::lock_guard<std::mutex> lock(mu_);
        const std::string ns = text(obj, {"metadata", "namespace"});
        const std::string name = text(obj, {"metadata", "name"});
        stamp(obj, true);
        objects_[key(r, ns, name)] = Stored{r, std::move(obj), 0, ""};
    }

    Resource resource(const std::string& group, const std::string& kind) const {
        std::lock_guard<std::mutex> lock(mu_);
        for (const auto& r : served_)
            if (r.group == group && r.kind == kind) return r;
        return {};
    }

    const io::Node* find(const std::string& group, const std::string& kind, const std::string& ns,
                         const std::string& name) const {
        std::lock_guard<std::mutex> lock(mu_);
        for (const auto& [k, s] : objects_)
            if (s.res.group == group && s.res.kind == kind &&
                text(s.obj, {"metadata", "namespace"}) == ns &&
                text(s.obj, {"metadata", "name"}) == name)
                return &s.obj;
        return nullptr;
    }

    std::vector<Request> requests() const {
        std::lock_guard<std::mutex> lock(mu_);
        return requests_;
    }
    // The names of the objects written (apply, delete; not dry runs unless asked), in order.
    std::vector<std::string> writes(const std::string& verb = "apply", bool dry = false) const {
        std::vector<std::string> out;
        for (const auto& r : requests())
            if (r.verb == verb && r.dry_run == dry) out.push_back(r.name);
        return out;
    }
    bool any_write() const {
        for (const auto& r : requests())
            if ((r.verb == "apply" || r.verb == "delete") && !r.dry_run) return true;
        return false;
    }
    std::size_t count(const std::string& verb) const {
        std::size_t n = 0;
        for (const auto& r : requests())
            if (r.verb == verb) ++n;
        return n;
    }

    // --- kube::Api ---------------------------------------------------------------------------

    Result<const kube::Discovery*> discover(bool refresh) override {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back({"discover", "", "", "", false, false, "", {}});
        if (refresh || snapshots_.empty()) {
            kube::Discovery d;
            d.resources = served_;
            snapshots_.push_back(std::move(d));
        }
        return &snapshots_.back();
    }

    Result<kube::Reply<kube::Applied>> apply(const Resource& r, const std::string& ns,
                                             const io::Node& object,
                                             const kube::ApplyOptions& opts) override {
        std::lock_guard<std::mutex> lock(mu_);
        const std::string name = text(object, {"metadata", "name"});
        requests_.push_back(
            {"apply", r.name, ns, name, opts.dry_run, opts.force, opts.field_manager, object});
        kube::Reply<kube::Applied> reply;
        if (auto it = fail_apply.find(name); it != fail_apply.end()) {
            reply.api = it->second;
            return reply;
        }
        if (conflicts.count(name) && !opts.force) {
            ApiError e;
            e.status = 409;
            e.reason = "Conflict";
            e.message = "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using "
                        "apps/v1: .spec.replicas";
            e.causes = {".spec.replicas: conflict with \"kubectl-edit\""};
            reply.api = e;
            return reply;
        }
        const std::string k = key(r, ns, name);
        auto it = objects_.find(k);
        io::Node stored = object;
        bool created = it == objects_.end();
        if (!created) {
            const io::Node& old = it->second.obj;
            // Server-kept fields carried over.
            io::Node& md = *stored.get("metadata");
            for (const char* f : {"uid", "creationTimestamp", "resourceVersion", "generation"})
                if (const io::Node* v = old.get("metadata")->get(f)) md.set(f, *v);
            if (const io::Node* st = old.get("status")) stored.set("status", *st);
            const bool same = it->second.applied == io::to_json(object, {0, false, false});
            if (!same) {
                const io::Node* os = old.get("spec");
                const io::Node* ns2 = object.get("spec");
                if ((os == nullptr) != (ns2 == nullptr) || (os && !(*os == *ns2)))
                    md.set("generation",
                           io::Node::integer(int_at(old, {"metadata", "generation"}) + 1));
                if (!opts.dry_run) {
                    md.set("resourceVersion", io::Node::string(std::to_string(++rv_)));
                }
            }
        } else {
            stamp(stored, !opts.dry_run);
        }
        if (!opts.dry_run) {
            Stored s{r, stored, 0, io::to_json(object, {0, false, false})};
            if (!created) s.steps = 0;
            objects_[k] = std::move(s);
        }
        reply.value = kube::Applied{stored, created};
        return reply;
    }

    Result<kube::Reply<io::Node>> get(const Resource& r, const std::string& ns,
                                      const std::string& name) override {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back({"get", r.name, ns, name, false, false, "", {}});
        kube::Reply<io::Node> reply;
        auto it = objects_.find(key(r, ns, name));
        if (it == objects_.end()) {
            reply.api = not_found(r, name);
            return reply;
        }
        reply.value = it->second.obj;
        return reply;
    }

    Result<kube::Reply<kube::ListResult>> list(const Resource& r, const std::string& ns,
                                               const kube::ListOptions& opts) override {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(
            {"list", r.name, ns, opts.label_selector + opts.field_selector, false, false, "", {}});
        kube::Reply<kube::ListResult> reply;
        kube::ListResult lr;
        for (const auto& [k, s] : objects_)
            if (matches(s, r, ns, opts.label_selector, opts.field_selector))
                lr.items.push_back(s.obj);
        lr.resource_version = std::to_string(rv_);
        reply.value = std::move(lr);
        return reply;
    }

    Result<kube::Reply<bool>>
    watch(const Resource& r, const std::string& ns, const kube::WatchOptions& opts,
          const std::function<bool(const kube::WatchEvent&)>& on_event) override {
        {
            std::lock_guard<std::mutex> lock(mu_);
            requests_.push_back({"watch", r.name, ns, opts.field_selector, false, false, "", {}});
            if (watch_ends_at_once) return kube::Reply<bool>{true, std::nullopt};
        }
        if (watch_refused_at_its_end) {
            std::this_thread::sleep_for(opts.timeout + std::chrono::milliseconds(5));
            return Error::io("GET watch: the time limit passed");
        }
        const auto end =
            std::chrono::steady_clock::now() +
            (opts.timeout.count() > 0 ? opts.timeout : std::chrono::milliseconds(2000));
        long since = opts.resource_version.empty() ? 0 : std::stol(opts.resource_version);
        while (true) {
            std::vector<kube::WatchEvent> events;
            {
                std::lock_guard<std::mutex> lock(mu_);
                step(r, ns);
                for (const auto& [k, s] : objects_)
                    if (matches(s, r, ns, opts.label_selector, opts.field_selector) &&
                        std::stol(text(s.obj, {"metadata", "resourceVersion"})) > since)
                        events.push_back({"MODIFIED", s.obj});
                for (auto it = gone_.begin(); it != gone_.end();) {
                    if (matches(it->second, r, ns, opts.label_selector, opts.field_selector) &&
                        it->first > since) {
                        events.push_back({"DELETED", it->second.obj});
                        since = std::max(since, it->first);
                    }
                    ++it;
                }
            }
            for (const auto& ev : events) {
                since =
                    std::max(since, std::stol(text(ev.object, {"metadata", "resourceVersion"})));
                if (!on_event(ev)) return kube::Reply<bool>{true, std::nullopt};
            }
            if (std::chrono::steady_clock::now() >= end)
                return kube::Reply<bool>{true, std::nullopt};
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }

    Result<kube::Reply<bool>> remove(const Resource& r, const std::string& ns,
                                     const std::string& name, kube::Propagation,
                                     bool dry_run) override {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back({"delete", r.name, ns, name, dry_run, false, "", {}});
        kube::Reply<bool> reply;
        auto it = objects_.find(key(r, ns, name));
        if (it == objects_.end()) {
            reply.api = not_found(r, name);
            return reply;
        }
        if (!dry_run) {
            if (delete_after > 0) {
                io::Node& md = *it->second.obj.get("metadata");
                md.set("deletionTimestamp", io::Node::string("2026-01-01T00:00:00Z"));
                md.set("resourceVersion", io::Node::string(std::to_string(++rv_)));
                it->second.deleting = true;
                it->second.steps = 0;
            } else {
                erase(it);
            }
        }
        reply.value = true;
        return reply;
    }

    std::string default_namespace() const override { return default_ns; }
    std::string describe() const override { return "fake"; }

private:
    struct Stored {
        Resource res;
        io::Node obj;
        int steps = 0;
        std::string applied; // what was last applied, as JSON
        bool deleting = false;
    };

    static std::string text(const io::Node& n, std::initializer_list<const char*> path) {
        const io::Node* cur = &n;
        for (const char* p : path) {
            cur = cur->get(p);
            if (!cur) return {};
        }
        return cur->text;
    }
    static std::int64_t int_at(const io::Node& n, std::initializer_list<const char*> path) {
        const io::Node* cur = &n;
        for (const char* p : path) {
            cur = cur->get(p);
            if (!cur) return 0;
        }
        return cur->as_int().value_or(0);
    }
    static std::string key(const Resource& r, const std::string& ns, const std::string& name) {
        return r.group + "/" + r.name + "/" + ns + "/" + name;
    }
    static ApiError not_found(const Resource& r, const std::string& name) {
        ApiError e;
        e.status = 404;
        e.reason = "NotFound";
        e.message = r.name + " \"" + name + "\" not found";
        return e;
    }
    bool matches(const Stored& s, const Resource& r, const std::string& ns,
                 const std::string& labels, const std::string& fields) const {
        if (s.res.group != r.group || s.res.name != r.name) return false;
        if (!ns.empty() && text(s.obj, {"metadata", "namespace"}) != ns) return false;
        if (!fields.empty() && fields != "metadata.name=" + text(s.obj, {"metadata", "name"}))
            return false;
        if (!labels.empty()) {
            const auto eq = labels.find('=');
            const io::Node* md = s.obj.get("metadata");
            const io::Node* ls = md ? md->get("labels") : nullptr;
            const io::Node* v = ls ? ls->get(labels.substr(0, eq)) : nullptr;
            if (!v || v->text != labels.substr(eq + 1)) return false;
        }
        return true;
    }
    void serve_locked(const std::string& group, const std::string& version, const std::string& kind,
                      const std::string& plural, bool namespaced) {
        for (const auto& r : served_)
            if (r.group == group && r.version == version && r.kind == kind) return;
        Resource r;
        r.group = group;
        r.version = version;
        r.kind = kind;
        r.name = plural;
        r.namespaced = namespaced;
        served_.push_back(r);
    }
    void stamp(io::Node& obj, bool bump) {
        io::Node* md = obj.get("metadata");
        md->set("uid", io::Node::string("uid-" + std::to_string(++uid_)));
        md->set("creationTimestamp", io::Node::string("2026-01-01T00:00:00Z"));
        md->set("generation", io::Node::integer(1));
        md->set("resourceVersion", io::Node::string(std::to_string(bump ? ++rv_ : rv_)));
    }
    void erase(std::map<std::string, Stored>::iterator it) {
        Stored s = std::move(it->second);
        objects_.erase(it);
        s.obj.get("metadata")->set("resourceVersion", io::Node::string(std::to_string(++rv_)));
        gone_.emplace_back(rv_, std::move(s));
    }
    // One controller step for the objects of r in ns.
    void step(const Resource& r, const std::string& ns) {
        for (auto it = objects_.begin(); it != objects_.end();) {
            Stored& s = it->second;
            if (s.res.group != r.group || s.res.name != r.name ||
                (!ns.empty() && text(s.obj, {"metadata", "namespace"}) != ns)) {
                ++it;
                continue;
            }
            ++s.steps;
            if (s.deleting) {
                if (s.steps >= delete_after) {
                    auto next = std::next(it);
                    erase(it);
                    it = next;
                    continue;
                }
                ++it;
                continue;
            }
            const std::string name = text(s.obj, {"metadata", "name"});
            if (s.steps == ready_after) {
                if (control(s, name))
                    s.obj.get("metadata")
                        ->set("resourceVersion", io::Node::string(std::to_string(++rv_)));
            }
            ++it;
        }
    }
    static io::Node condition(const char* type, const char* status, const char* reason = "") {
        io::Node c = io::Node::map();
        c.set("type", io::Node::string(type));
        c.set("status", io::Node::string(status));
        if (*reason) c.set("reason", io::Node::string(reason));
        return c;
    }
    // The controller of the object's kind: its status after `ready_after` steps.
    bool control(Stored& s, const std::string& name) {
        io::Node& o = s.obj;
        const std::int64_t gen = int_at(o, {"metadata", "generation"});
        if (s.res.kind == "Deployment") {
            const std::int64_t replicas = o.get("spec") && o.get("spec")->get("replicas")
                                              ? int_at(o, {"spec", "replicas"})
                                              : 1;
            io::Node st = io::Node::map();
            st.set("observedGeneration", io::Node::integer(gen));
            st.set("replicas", io::Node::integer(replicas));
            st.set("updatedReplicas", io::Node::integer(replicas));
            const bool ok = !never_ready.count(name) && !fail_progress.count(name);
            st.set("availableReplicas", io::Node::integer(ok ? replicas : 0));
            io::Node& cs = st.set("conditions", io::Node::seq());
            cs.push(condition("Available", ok ? "True" : "False"));
            if (fail_progress.count(name))
                cs.push(condition("Progressing", "False", "ProgressDeadlineExceeded"));
            o.set("status", std::move(st));
            return true;
        }
        if (s.res.kind == "Job") {
            if (never_ready.count(name)) return false;
            io::Node st = io::Node::map();
            st.set("conditions", io::Node::seq())
                .push(fail_job.count(name) ? condition("Failed", "True", "BackoffLimitExceeded")
                                           : condition("Complete", "True"));
            o.set("status", std::move(st));
            return true;
        }
        if (s.res.kind == "CustomResourceDefinition") {
            if (never_ready.count(name)) return false;
            io::Node st = io::Node::map();
            io::Node& cs = st.set("conditions", io::Node::seq());
            cs.push(condition("NamesAccepted", "True"));
            cs.push(condition("Established", "True"));
            o.set("status", std::move(st));
            const io::Node* spec = o.get("spec");
            const std::string group = text(*spec, {"group"});
            const std::string kind = text(*spec, {"names", "kind"});
            const std::string plural = text(*spec, {"names", "plural"});
            const bool namespaced = text(*spec, {"scope"}) != "Cluster";
            if (const io::Node* vs = spec->get("versions"))
                for (const auto& v : vs->items)
                    serve_locked(group, text(v, {"name"}), kind, plural, namespaced);
            return true;
        }
        if (s.res.kind == "ClusterServiceVersion") {
            if (never_ready.count(name)) return false;
            io::Node st = io::Node::map();
            st.set("phase", io::Node::string("Succeeded"));
            o.set("status", std::move(st));
            return true;
        }
        return false;
    }

    mutable std::mutex mu_;
    std::vector<Resource> served_;
    std::deque<kube::Discovery> snapshots_;
    std::map<std::string, Stored> objects_;
    std::vector<std::pair<long, Stored>> gone_;
    std::vector<Request> requests_;
    long rv_ = 100;
    long uid_ = 0;
};

} // namespace kpkg::test
