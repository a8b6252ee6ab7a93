// What "ready" means per kind (the rules kubectl's rollout status and wait use, OLM's for CRDs and
// CSVs), and Package Operator's availability probes.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "kpkg/cel/cel.hpp"
#include "kpkg/cel/env.hpp"
#include "kpkg/kube/apply.hpp"

namespace kpkg::kube {

namespace {

using State = Readiness::State;

std::int64_t int_at(const io::Node& n, std::initializer_list<std::string_view> path,
                    std::int64_t def = 0) {
    const io::Node* v = n.at_path(path);
    if (!v) return def;
    if (auto i = v->as_int()) return *i;
    if (auto d = v->as_double()) return static_cast<std::int64_t>(*d);
    return def;
}

Readiness ready() {
    return {State::ready, {}};
}
Readiness waiting(std::string why) {
    return {State::waiting, std::move(why)};
}
Readiness failed(std::string why) {
    return {State::failed, std::move(why)};
}

std::string num(std::int64_t v) {
    return std::to_string(v);
}

// The condition `type` of the object, unless it describes an older generation than the
// object's (its own observedGeneration, else status.observedGeneration).
const io::Node* condition(const io::Node& obj, std::string_view type) {
    const io::Node* conds = obj.at_path({"status", "conditions"});
    if (!conds || !conds->is_seq()) return nullptr;
    const std::int64_t generation = int_at(obj, {"metadata", "generation"}, 0);
    for (const io::Node& c : conds->items) {
        const io::Node* t = c.get("type");
        if (!t || t->text != type) continue;
        std::int64_t observed = int_at(c, {"observedGeneration"}, -1);
        if (observed < 0) observed = int_at(obj, {"status", "observedGeneration"}, -1);
        if (observed >= 0 && generation > 0 && observed < generation) return nullptr;
        return &c;
    }
    return nullptr;
}

bool condition_is(const io::Node& obj, std::string_view type, std::string_view status) {
    const io::Node* c = condition(obj, type);
    return c && c->text_at({"status"}) == status;
}

std::string condition_text(const io::Node& c) {
    std::string r = c.text_at({"reason"});
    std::string m = c.text_at({"message"});
    if (!r.empty() && !m.empty()) return r + ": " + m;
    return r.empty() ? m : r;
}

Readiness deployment(const io::Node& d) {
    const std::int64_t gen = int_at(d, {"metadata", "generation"});
    const std::int64_t observed = int_at(d, {"status", "observedGeneration"});
    if (gen > observed)
        return waiting("generation " + num(gen) + " not observed yet (observed " + num(observed) +
                       ")");
    if (const io::Node* p = condition(d, "Progressing");
        p && p->text_at({"reason"}) == "ProgressDeadlineExceeded")
        return failed("progress deadline exceeded" +
                      (p->text_at({"message"}).empty() ? "" : ": " + p->text_at({"message"})));
    const std::int64_t replicas = int_at(d, {"spec", "replicas"}, 1);
    const std::int64_t updated = int_at(d, {"status", "updatedReplicas"});
    const std::int64_t total = int_at(d, {"status", "replicas"});
    const std::int64_t available = int_at(d, {"status", "availableReplicas"});
    if (updated < replicas)
        return waiting(num(updated) + " of " + num(replicas) + " replicas updated");
    if (total > updated) return waiting(num(total - updated) + " old replicas pending termination");
    if (available < updated)
        return waiting(num(available) + " of " + num(updated) + " updated replicas available");
    return ready();
}

Readiness statefulset(const io::Node& s) {
    const std::string strategy = s.text_at({"spec", "updateStrategy", "type"});
    if (!strategy.empty() && strategy != "RollingUpdate") return ready();
    const std::int64_t gen = int_at(s, {"metadata", "generation"});
    const std::int64_t observed = int_at(s, {"status", "observedGeneration"});
    if (observed == 0 || gen > observed)
        return waiting("generation " + num(gen) + " not observed yet (observed " + num(observed) +
                       ")");
    const std::int64_t replicas = int_at(s, {"spec", "replicas"}, 1);
    const std::int64_t ready_n = int_at(s, {"status", "readyReplicas"});
    if (ready_n < replicas)
        return waiting(num(ready_n) + " of " + num(replicas) + " replicas ready");
    if (const io::Node* part = s.at_path({"spec", "updateStrategy", "rollingUpdate", "partition"});
        part && part->as_int()) {
        const std::int64_t want = replicas - *part->as_int();
        const std::int64_t updated = int_at(s, {"status", "updatedReplicas"});
        if (updated < want)
            return waiting(num(updated) + " of " + num(want) + " partitioned replicas updated");
        return ready();
    }
    const std::string update = s.text_at({"status", "updateRevision"});
    const std::string current = s.text_at({"status", "currentRevision"});
    if (update != current)
        return waiting("revision " + update + " not rolled out yet (current " + current + ")");
    return ready();
}

Readiness daemonset(const io::Node& s) {
    const std::string strategy = s.text_at({"spec", "updateStrategy", "type"});
    if (!strategy.empty() && strategy != "RollingUpdate") return ready();
    const std::int64_t gen = int_at(s, {"metadata", "generation"});
    const std::int64_t observed = int_at(s, {"status", "observedGeneration"});
    if (gen > observed)
        return waiting("generation " + num(gen) + " not observed yet (observed " + num(observed) +
                       ")");
    const std::int64_t desired = int_at(s, {"status", "desiredNumberScheduled"});
    const std::int64_t updated = int_at(s, {"status", "updatedNumberScheduled"});
    const std::int64_t available = int_at(s, {"status", "numberAvailable"});
    if (updated < desired)
        return waiting(num(updated) + " of " + num(desired) + " scheduled pods updated");
    if (available < desired)
        return waiting(num(available) + " of " + num(desired) + " scheduled pods available");
    return ready();
}

Readiness job(const io::Node& j) {
    if (const io::Node* f = condition(j, "Failed"); f && f->text_at({"status"}) == "True")
        return failed("job failed" + (condition_text(*f).empty() ? "" : ": " + condition_text(*f)));
    if (condition_is(j, "Complete", "True")) return ready();
    return waiting("not complete (" + num(int_at(j, {"status", "succeeded"})) + " succeeded, " +
                   num(int_at(j, {"status", "active"})) + " active)");
}

Readiness pod(const io::Node& p) {
    if (p.text_at({"status", "phase"}) == "Failed")
        return failed("pod failed" + (p.text_at({"status", "reason"}).empty()
                                          ? std::string()
                                          : ": " + p.text_at({"status", "reason"})));
    if (condition_is(p, "Ready", "True")) return ready();
    const std::string phase = p.text_at({"status", "phase"});
    return waiting("not ready (phase " + (phase.empty() ? std::string("unknown") : phase) + ")");
}

Readiness crd(const io::Node& c) {
    if (const io::Node* n = condition(c, "NamesAccepted"); n && n->text_at({"status"}) == "False")
        return failed("names not accepted" +
                      (condition_text(*n).empty() ? "" : ": " + condition_text(*n)));
    const bool names = condition_is(c, "NamesAccepted", "True");
    const bool established = condition_is(c, "Established", "True");
    if (names && established) return ready();
    if (!established) return waiting("not established yet");
    return waiting("names not accepted yet");
}

Readiness csv(const io::Node& c) {
    const std::string phase = c.text_at({"status", "phase"});
    if (phase == "Succeeded") return ready();
    const std::string why = c.text_at({"status", "message"});
    if (phase == "Failed") return failed("install failed" + (why.empty() ? "" : ": " + why));
    return waiting("phase " + (phase.empty() ? std::string("not set yet") : phase) +
                   (why.empty() ? "" : " (" + why + ")"));
}

Readiness apiservice(const io::Node& a) {
    if (condition_is(a, "Available", "True")) return ready();
    const io::Node* c = condition(a, "Available");
    return waiting("not available" +
                   (c && !condition_text(*c).empty() ? ": " + condition_text(*c) : std::string()));
}

std::string group_of(const io::Node& obj) {
    const std::string av = obj.text_at({"apiVersion"});
    const auto slash = av.find('/');
    return slash == std::string::npos ? std::string() : av.substr(0, slash);
}

// --- availability probes ---------------------------------------------------------------------

// ".status.availableReplicas" (or without the leading dot) in the object.
const io::Node* field_path(const io::Node& obj, const std::string& path) {
    const io::Node* cur = &obj;
    std::size_t i = !path.empty() && path[0] == '.' ? 1 : 0;
    while (i <= path.size() && cur) {
        std::size_t dot = path.find('.', i);
        if (dot == std::string::npos) dot = path.size();
        cur = cur->get(std::string_view(path).substr(i, dot - i));
        i = dot + 1;
        if (dot == path.size()) break;
    }
    return cur;
}

const cel::Env& probe_env() {
    static const cel::Env env = [] {
        cel::Env e;
        e.variable("self", cel::map_of(cel::prim(cel::Type::K::str), cel::prim(cel::Type::K::dyn)));
        e.noun("an availability probe's rule");
        return e;
    }();
    return env;
}

std::shared_ptr<const cel::Program> compiled(const std::string& rule, std::string& why) {
    static std::mutex mu;
    static std::map<std::string, std::shared_ptr<const cel::Program>> programs;
    static std::map<std::string, std::string> errors;
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = programs.find(rule); it != programs.end()) return it->second;
    if (auto it = errors.find(rule); it != errors.end()) {
        why = it->second;
        return nullptr;
    }
    auto p = cel::Program::compile(rule, probe_env());
    if (!p) {
        why = "CEL rule " + rule + " does not compile: " + p.error().message;
        errors[rule] = why;
        return nullptr;
    }
    programs[rule] = *p;
    return *p;
}

Readiness one_probe(const io::Node& obj, const io::Node& probe) {
    if (const io::Node* c = probe.get("condition")) {
        const std::string type = c->text_at({"type"});
        const std::string status = c->text_at({"status"});
        const io::Node* cond = condition(obj, type);
        if (!cond) return waiting("missing condition " + type);
        if (cond->text_at({"status"}) != status)
            return waiting("condition " + type + " is " + cond->text_at({"status"}) + ", not " +
                           status);
        return ready();
    }
    if (const io::Node* f = probe.get("fieldsEqual")) {
        const std::string a = f->text_at({"fieldA"});
        const std::string b = f->text_at({"fieldB"});
        const io::Node* va = field_path(obj, a);
        const io::Node* vb = field_path(obj, b);
        if (!va) return waiting(a + " missing");
        if (!vb) return waiting(b + " missing");
        const bool equal = va->is_scalar() && vb->is_scalar() ? va->text == vb->text : *va == *vb;
        if (!equal)
            return waiting(a + " (" + (va->is_scalar() ? va->text : "...") + ") != " + b + " (" +
                           (vb->is_scalar() ? vb->text : "...") + ")");
        return ready();
    }
    if (const io::Node* c = probe.get("cel")) {
        const std::string rule = c->text_at({"rule"});
        const std::string message = c->text_at({"message"});
        std::string why;
        auto prog = compiled(rule, why);
        if (!prog) return failed(why);
        cel::Activation act;
        act.bind("self", obj, cel::Activation::Numbers::typed);
        const cel::Outcome out = prog->evaluate(act);
        if (out.holds()) return ready();
        if (out.kind == cel::Outcome::Kind::error)
            return waiting(message.empty() ? "CEL rule " + rule + ": " + out.error : message);
        return waiting(message.empty() ? "CEL rule " + rule + " is false" : message);
    }
    return ready();
}

} // namespace

Readiness readiness(const io::Node& live) {
    const std::string kind = live.text_at({"kind"});
    const std::string group = group_of(live);
    if (group == "apps" && kind == "Deployment") return deployment(live);
    if (group == "apps" && kind == "StatefulSet") return statefulset(live);
    if (group == "apps" && kind == "DaemonSet") return daemonset(live);
    if (group == "batch" && kind == "Job") return job(live);
    if (group.empty() && kind == "Pod") return pod(live);
    if (group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition") return crd(live);
    if (group == "operators.coreos.com" && kind == "ClusterServiceVersion") return csv(live);
    if (group == "apiregistration.k8s.io" && kind == "APIService") return apiservice(live);
    return ready();
}

bool selector_matches(const io::Node& selector, const io::Node* labels) {
    if (!selector.is_map()) return true;
    auto label = [&](const std::string& key) -> const io::Node* {
        return labels && labels->is_map() ? labels->get(key) : nullptr;
    };
    if (const io::Node* ml = selector.get("matchLabels"); ml && ml->is_map())
        for (const auto& f : ml->fields) {
            const io::Node* v = label(f.key);
            if (!v || v->text != f.value.text) return false;
        }
    if (const io::Node* me = selector.get("matchExpressions"); me && me->is_seq())
        for (const io::Node& e : me->items) {
            const std::string key = e.text_at({"key"});
            const std::string op = e.text_at({"operator"});
            const io::Node* v = label(key);
            bool in = false;
            if (const io::Node* vals = e.get("values"); vals && vals->is_seq() && v)
                for (const io::Node& x : vals->items)
                    if (x.text == v->text) in = true;
            if (op == "In" && !in) return false;
            if (op == "NotIn" && in) return false;
            if (op == "Exists" && !v) return false;
            if (op == "DoesNotExist" && v) return false;
        }
    return true;
}

Readiness probe_readiness(const io::Node& live, const std::vector<AvailabilityProbe>& probes) {
    const std::string kind = live.text_at({"kind"});
    const std::string group = group_of(live);
    const io::Node* labels = live.at_path({"metadata", "labels"});
    bool selected = false;
    for (const AvailabilityProbe& p : probes) {
        if (p.kind != kind || p.group != group) continue;
        if (!selector_matches(p.selector, labels)) continue;
        selected = true;
        // Every probe first needs the object's status to describe its current generation.
        if (const io::Node* og = live.at_path({"status", "observedGeneration"});
            og && og->as_int()) {
            const std::int64_t gen = int_at(live, {"metadata", "generation"});
            if (*og->as_int() != gen)
                return waiting("status.observedGeneration " + og->text +
                               " is not metadata.generation " + num(gen));
        }
        if (!p.probes.is_seq()) continue;
        for (const io::Node& probe : p.probes.items) {
            Readiness r = one_probe(live, probe);
            if (!r.ready()) return r;
        }
    }
    (void)selected;
    return ready();
}

} // namespace kpkg::kube
