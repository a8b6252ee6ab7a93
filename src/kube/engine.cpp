// The phased apply engine: checks, phases, concurrent server-side apply, watch-based waits,
// ApplySet bookkeeping and prune, and delete in reverse phase order.
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kpkg/core/diff.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/core/threads.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/kube/apply.hpp"

namespace kpkg::kube {

namespace {

using Clock = std::chrono::steady_clock;

// The back-off before a watch that ended early is opened again: doubling from this to that.
constexpr std::chrono::milliseconds kFirstRewatch{100};
constexpr std::chrono::milliseconds kMaxRewatch{5000};

io::Node& map_at(io::Node& n, const std::string& key) {
    io::Node* v = n.get(key);
    if (!v || !v->is_map()) v = &n.set(key, io::Node::map());
    return *v;
}

void split_api_version(const std::string& av, std::string& group, std::string& version) {
    const auto slash = av.find('/');
    if (slash == std::string::npos) {
        group.clear();
        version = av;
    } else {
        group = av.substr(0, slash);
        version = av.substr(slash + 1);
    }
}

std::string gk_string(const std::string& group, const std::string& kind) {
    return group.empty() ? kind : kind + "." + group;
}

const Resource* find_resource(const Discovery& d, const std::string& group,
                              const std::string& version, const std::string& kind) {
    for (const Resource& r : d.resources)
        if (r.group == group && r.version == version && r.kind == kind) return &r;
    return nullptr;
}

// Any version of group/kind (the preferred one first, as discovery lists them).
const Resource* find_kind(const Discovery& d, const std::string& group, const std::string& kind) {
    for (const Resource& r : d.resources)
        if (r.group == group && r.kind == kind) return &r;
    return nullptr;
}

// How a report and messages name where an object is: "deployment/x in namespace ns".
std::string where(const std::string& kind, const std::string& name, const std::string& ns) {
    std::string s = object_name(kind, name);
    if (!ns.empty()) s += " in namespace " + ns;
    return s;
}

struct Entry {
    io::Node body;
    SourcePos pos;
    std::size_t phase = 0;
    std::string api_version, group, version, kind, name, ns;
    std::optional<Resource> res;
    bool namespaced = false;
    std::string crd; // set: the kind is defined by this CRD of the input, not served yet
    const std::vector<AvailabilityProbe>* probes = nullptr;
    std::size_t report = 0;
    std::string not_checked; // dry runs: why the server cannot check it
    std::string uid;
    bool applied = false;
    // Whether the object existed before its apply, and its resourceVersion then, when a LIST of
    // its kind told (prefetch); otherwise apply_one reads the object itself.
    bool known = false;
    bool existed = false;
    std::string rv_before;
};

struct CrdInfo {
    std::string name;
    bool namespaced = false;
    std::set<std::string> versions;
    std::size_t phase = 0;
};

struct PhaseInfo {
    std::string name;
    std::vector<std::size_t> entries;
};

struct ApplySetState {
    Resource res;
    std::string name, ns, id;
    std::set<std::string> old_gks, new_gks, old_ns, new_ns;
};

bool is_crd(const Entry& e) {
    return e.kind == "CustomResourceDefinition" && e.group == "apiextensions.k8s.io";
}

Error at_pos(Error e, const SourcePos& pos) {
    e.pos = pos;
    return e;
}

class Engine {
public:
    Engine(Api& api, const RunOptions& o) : api_(api), o_(o) {
        if (o.timeout.count() > 0) {
            has_deadline_ = true;
            deadline_ = Clock::now() + o.timeout;
            // Every request of the run, its retries and credential plugins end by then too.
            api_.set_deadline(Deadline{deadline_, o.timeout});
        }
    }
    ~Engine() {
        if (has_deadline_) api_.set_deadline(std::nullopt);
    }
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    RunReport run_apply(const Input& input);
    RunReport run_remove(const Input* input);

private:
    Api& api_;
    const RunOptions& o_;
    RunReport rep_;
    std::mutex mu_;
    std::vector<Entry> entries_;
    std::vector<PhaseInfo> phases_;
    std::map<std::string, CrdInfo> crds_; // by group/kind
    const Discovery* disc_ = nullptr;
    bool has_deadline_ = false;
    Clock::time_point deadline_{};
    std::optional<ApplySetState> set_;

    bool dry() const { return o_.dry_run != DryRun::none || o_.diff; }
    bool interrupted() const { return o_.interrupted && o_.interrupted->load(); }
    bool expired() const { return has_deadline_ && Clock::now() >= deadline_; }
    // Sleeps for d, or until the deadline or an interruption if sooner.
    void pause(std::chrono::milliseconds d) const {
        auto until = Clock::now() + d;
        if (has_deadline_) until = std::min(until, deadline_);
        for (auto now = Clock::now(); now < until && !interrupted(); now = Clock::now())
            std::this_thread::sleep_for(
                std::min<Clock::duration>(until - now, std::chrono::milliseconds(100)));
    }
    void progress(Progress::Kind k, std::string text) {
        if (!o_.progress) return;
        std::lock_guard<std::mutex> lock(mu_);
        o_.progress(Progress{k, std::move(text)});
    }
    RunReport finish(std::optional<Error> err) {
        // An error of an interrupted run (a credential plugin stopped, say) is its interruption.
        if (err && interrupted()) rep_.interrupted = true;
        if (err && !rep_.error) rep_.error = std::move(err);
        return std::move(rep_);
    }
    Error interrupted_error() {
        rep_.interrupted = true;
        return Error::io("interrupted: stopped after the requests in flight");
    }
    // e's row of the report, added in `phase` (e.report is its index).
    ObjectReport& add_report(Entry& e, std::string phase) {
        ObjectReport r;
        r.api_version = e.api_version;
        r.kind = e.kind;
        r.ns = e.ns;
        r.name = e.name;
        r.phase = std::move(phase);
        e.report = rep_.objects.size();
        rep_.objects.push_back(std::move(r));
        return rep_.objects.back();
    }

    Result<void> discover(bool refresh) {
        auto d = api_.discover(refresh);
        if (!d) return std::move(d).error();
        disc_ = *d;
        return {};
    }
    Result<void> build(const Input& input, bool for_delete);
    Result<void> add_object(const InputObject& in, std::size_t phase,
                            const std::vector<AvailabilityProbe>* probes,
                            std::map<std::string, SourcePos>& seen, std::vector<Error>& errors,
                            bool for_delete);
    Error api_error(const Entry& e, const char* verb, const ApiError& a);
    Result<void> apply_one(Entry& e);
    void prefetch(const std::vector<std::size_t>& idx);
    Result<void> run_batch(const std::vector<std::size_t>& idx,
                           const std::function<Result<void>(Entry&)>& f);
    Readiness wait_object(const Resource& res, const std::string& ns, const std::string& name,
                          const std::function<Readiness(const io::Node*)>& check,
                          const std::string& label);
    Readiness wait_entry(Entry& e);
    Result<void> wait_all(const std::vector<std::size_t>& idx, bool gone);
    Result<void> applyset_begin();
    Result<void> applyset_patch(bool superset);
    // The ApplySet's members: the objects labelled part-of its id of each group-kind in `gks`
    // ("Kind.group"), in each namespace of `nss` (cluster-scoped kinds once), each as an Entry
    // (not yet in entries_) beside the object listed. Kinds no longer served are skipped.
    // `purpose` (" to prune", or "" for a delete) goes into the error of a refused LIST.
    Result<std::vector<std::pair<Entry, io::Node>>> list_members(const std::set<std::string>& gks,
                                                                 const std::set<std::string>& nss,
                                                                 const char* purpose);
    Result<void> prune();
    Result<void> delete_phases(std::vector<std::vector<std::size_t>> groups, const char* action);
};

Result<void> Engine::add_object(const InputObject& in, std::size_t phase,
                                const std::vector<AvailabilityProbe>* probes,
                                std::map<std::string, SourcePos>& seen, std::vector<Error>& errors,
                                bool for_delete) {
    Entry e;
    e.body = in.object;
    e.pos = in.pos;
    e.phase = phase;
    e.probes = probes;
    e.api_version = e.body.text_at({"apiVersion"});
    e.kind = e.body.text_at({"kind"});
    e.name = e.body.text_at({"metadata", "name"});
    std::vector<std::string> missing;
    if (e.api_version.empty()) missing.push_back("apiVersion");
    if (e.kind.empty()) missing.push_back("kind");
    if (e.name.empty()) missing.push_back("metadata.name");
    if (!missing.empty()) {
        std::string what = e.kind.empty() ? std::string("an object") : "a " + e.kind;
        if (!e.name.empty()) what += " " + text::quote(e.name);
        errors.push_back(
            at_pos(Error::invalid(what + " has no " + text::join(missing, ", ") +
                                  " (every object needs apiVersion, kind and metadata.name)"),
                   e.pos));
        return {};
    }
    split_api_version(e.api_version, e.group, e.version);
    const std::string gk = e.group + "/" + e.kind;
    if (const Resource* r = find_resource(*disc_, e.group, e.version, e.kind)) {
        e.res = *r;
        e.namespaced = r->namespaced;
    } else if (auto it = crds_.find(gk);
               it != crds_.end() && it->second.versions.count(e.version)) {
        e.crd = it->second.name;
        e.namespaced = it->second.namespaced;
        if (it->second.phase > phase)
            errors.push_back(at_pos(
                Error::invalid(object_name(e.kind, e.name) + " is in phase " + phases_[phase].name +
                               ", before its CustomResourceDefinition " + it->second.name +
                               " (phase " + phases_[it->second.phase].name + ")"),
                e.pos));
        if (for_delete) e.crd.clear(); // nothing of an unserved kind can exist
    } else {
        Error err = Error::invalid(object_name(e.kind, e.name) + ": the server does not serve " +
                                   e.kind + " in " + e.api_version);
        if (const Resource* other = find_kind(*disc_, e.group, e.kind))
            err.note("it serves " + e.kind + " as " +
                     (other->group.empty() ? other->version : other->group + "/" + other->version));
        else if (auto it2 = crds_.find(gk); it2 != crds_.end())
            err.note("the CustomResourceDefinition " + it2->second.name +
                     " of the input does not serve version " + e.version);
        else
            err.note("no CustomResourceDefinition of the input defines it either");
        errors.push_back(at_pos(std::move(err), e.pos));
        return {};
    }
    io::Node& md = map_at(e.body, "metadata");
    if (e.namespaced) {
        e.ns = e.body.text_at({"metadata", "namespace"});
        if (e.ns.empty()) e.ns = o_.ns;
        if (e.ns.empty()) {
            errors.push_back(at_pos(
                Error::invalid(object_name(e.kind, e.name) +
                               " is namespaced and names no namespace, and neither -n nor the "
                               "kubeconfig's context gives one"),
                e.pos));
            return {};
        }
        md.set("namespace", io::Node::string(e.ns));
    } else if (md.get("namespace")) {
        io::Node stripped = io::Node::map();
        for (auto& f : md.fields)
            if (f.key != "namespace") stripped.set(f.key, f.value);
        md = std::move(stripped);
    }
    const std::string key = gk + "/" + e.ns + "/" + e.name;
    if (auto [it, fresh] = seen.emplace(key, e.pos); !fresh) {
        Error err = Error::invalid(where(e.kind, e.name, e.ns) + " is given twice");
        err.note("first at " + (it->second.empty() ? std::string("?") : it->second.str()));
        errors.push_back(at_pos(std::move(err), e.pos));
        return {};
    }
    if (set_) {
        io::Node& labels = map_at(md, "labels");
        if (const io::Node* l = labels.get(kApplySetPartOfLabel); l && l->text != set_->id) {
            errors.push_back(at_pos(
                Error::invalid(object_name(e.kind, e.name) + " already has the label " +
                               kApplySetPartOfLabel + "=" + l->text + " of another ApplySet"),
                e.pos));
            return {};
        }
        labels.set(kApplySetPartOfLabel, io::Node::string(set_->id));
        set_->new_gks.insert(gk_string(e.group, e.kind));
        if (e.namespaced) set_->new_ns.insert(e.ns);
    }
    add_report(e, phases_[phase].name);
    phases_[phase].entries.push_back(entries_.size());
    entries_.push_back(std::move(e));
    return {};
}

Result<void> Engine::build(const Input& input, bool for_delete) {
    for (const std::string& p : default_phases())
        phases_.push_back({p, {}});
    std::vector<std::pair<const InputObject*, std::size_t>> all;
    std::vector<const std::vector<AvailabilityProbe>*> probes;
    for (const InputObject& o : input.plain) {
        std::string g, v;
        split_api_version(o.object.text_at({"apiVersion"}), g, v);
        all.push_back({&o, default_phase(g, o.object.text_at({"kind"}))});
        probes.push_back(nullptr);
    }
    for (const Input::Package& pkg : input.packages)
        for (const InputPhase& ph : pkg.phases) {
            phases_.push_back({input.packages.size() > 1 ? pkg.name + "/" + ph.name : ph.name, {}});
            for (const InputObject& o : ph.objects) {
                all.push_back({&o, phases_.size() - 1});
                probes.push_back(&pkg.probes);
            }
        }
    // The CRDs of the input: their kinds may be used before the server serves them.
    for (const auto& [o, phase] : all) {
        if (o->object.text_at({"kind"}) != "CustomResourceDefinition" ||
            o->object.text_at({"apiVersion"}).rfind("apiextensions.k8s.io/", 0) != 0)
            continue;
        CrdInfo c;
        c.name = o->object.text_at({"metadata", "name"});
        c.namespaced = o->object.text_at({"spec", "scope"}) != "Cluster";
        c.phase = phase;
        if (const io::Node* vs =
                o->object.get("spec") ? o->object.get("spec")->get("versions") : nullptr;
            vs && vs->is_seq())
            for (const io::Node& v : vs->items)
                if (v.text_at({"served"}) != "false") c.versions.insert(v.text_at({"name"}));
        if (const std::string v = o->object.text_at({"spec", "version"}); !v.empty())
            c.versions.insert(v);
        crds_[o->object.text_at({"spec", "group"}) + "/" +
              o->object.text_at({"spec", "names", "kind"})] = std::move(c);
    }
    std::map<std::string, SourcePos> seen;
    std::vector<Error> errors;
    for (std::size_t i = 0; i < all.size(); ++i)
        if (auto r = add_object(*all[i].first, all[i].second, probes[i], seen, errors, for_delete);
            !r)
            return r;
    if (!errors.empty()) {
        Error first = errors.front();
        if (errors.size() > 1) {
            first.note("and " + std::to_string(errors.size() - 1) + " more:");
            for (std::size_t i = 1; i < errors.size(); ++i)
                first.note(errors[i].str());
        }
        first.note("nothing was applied");
        return first;
    }
    // The report in phase order.
    std::vector<ObjectReport> ordered;
    for (const PhaseInfo& p : phases_)
        for (std::size_t i : p.entries) {
            Entry& e = entries_[i];
            ordered.push_back(std::move(rep_.objects[e.report]));
            e.report = ordered.size() - 1;
        }
    rep_.objects = std::move(ordered);
    return {};
}

Error Engine::api_error(const Entry& e, const char* verb, const ApiError& a) {
    Error err = a.status == 422 ? Error::invalid("") : Error::io("");
    err.message = std::string(verb) + " " + where(e.kind, e.name, e.ns) + ": ";
    err.message +=
        a.message.empty() ? "the server answered " + std::to_string(a.status) : a.message;
    if (!a.reason.empty() && a.message.find(a.reason) == std::string::npos)
        err.message += " (" + a.reason + ")";
    err.pos = e.pos;
    for (const std::string& c : a.causes)
        err.note(c);
    if (a.status == 409)
        err.note("another field manager owns these fields: run again with --force-conflicts to "
                 "take them over");
    return err;
}

// The object as a diff shows it: what the server keeps for itself left out.
std::string diff_yaml(const io::Node& obj) {
    io::Node copy = io::Node::map();
    for (const auto& f : obj.fields) {
        if (f.key == "status") continue;
        if (f.key == "metadata" && f.value.is_map()) {
            io::Node md = io::Node::map();
            for (const auto& m : f.value.fields)
                if (m.key != "managedFields" && m.key != "resourceVersion" &&
                    m.key != "generation" && m.key != "uid" && m.key != "creationTimestamp")
                    md.set(m.key, m.value);
            copy.set("metadata", std::move(md));
            continue;
        }
        copy.set(f.key, f.value);
    }
    std::string out;
    io::go::append_yaml(out, copy);
    return out;
}

std::string diff_label(const Entry& e) {
    std::string s = gk_string(e.group, e.kind) + "/";
    if (!e.ns.empty()) s += e.ns + "/";
    return s + e.name;
}

Result<void> Engine::apply_one(Entry& e) {
    if (interrupted()) return {};
    auto set_report = [&](auto&& f) {
        std::lock_guard<std::mutex> lock(mu_);
        f(rep_.objects[e.report]);
    };
    if (o_.dry_run == DryRun::client) {
        set_report([](ObjectReport& r) {
            r.action = "dry-run";
            r.reason = "checked locally, not sent (client dry run)";
        });
        return {};
    }
    if (!e.not_checked.empty()) {
        std::string diff;
        if (o_.diff) diff = text::unified_diff("", diff_yaml(e.body), "/dev/null", diff_label(e));
        if (!diff.empty()) diff += '\n';
        set_report([&](ObjectReport& r) {
            r.action = "dry-run";
            r.reason = e.not_checked;
            r.diff = diff;
        });
        if (!diff.empty()) {
            std::lock_guard<std::mutex> lock(mu_);
            rep_.differs = true;
        }
        return {};
    }
    bool existed = e.existed;
    io::Node live;
    // A request that got no answer (a timeout, a dead server): the error names the object.
    const auto no_answer = [&](const char* verb, Error err) {
        err.message = std::string(verb) + " " + where(e.kind, e.name, e.ns) + ": " + err.message;
        return at_pos(std::move(err), e.pos);
    };
    if (!e.known) {
        auto got = api_.get(*e.res, e.ns, e.name);
        if (!got) return no_answer("read", std::move(got).error());
        if (got->ok()) {
            existed = true;
            live = *got->value;
        } else if (got->api->status != 404) {
            return api_error(e, "read", *got->api);
        }
    }
    ApplyOptions ao;
    ao.force = o_.force_conflicts;
    ao.dry_run = dry();
    auto applied = api_.apply(*e.res, e.ns, e.body, ao);
    if (!applied) return no_answer("apply", std::move(applied).error());
    if (!applied->ok()) return api_error(e, "apply", *applied->api);
    const io::Node& stored = applied->value->object;
    const std::string rv_before =
        e.known ? e.rv_before : live.text_at({"metadata", "resourceVersion"});
    if (dry()) {
        const std::string before = existed ? diff_yaml(live) : std::string();
        const std::string after = diff_yaml(stored);
        std::string diff;
        if (o_.diff)
            diff =
                text::unified_diff(before, after, existed ? "live/" + diff_label(e) : "/dev/null",
                                   "applied/" + diff_label(e));
        if (!diff.empty()) diff += '\n';
        const char* would = !existed          ? "would be created"
                            : before == after ? "would be unchanged"
                                              : "would be configured";
        set_report([&](ObjectReport& r) {
            r.action = "dry-run";
            r.reason = would;
            r.diff = diff;
        });
        if (!diff.empty()) {
            std::lock_guard<std::mutex> lock(mu_);
            rep_.differs = true;
        }
        progress(Progress::Kind::applied, object_name(e.kind, e.name) + " " + would);
        return {};
    }
    e.uid = stored.text_at({"metadata", "uid"});
    e.applied = true;
    const char* action = !existed || applied->value->created ? "created"
                         : stored.text_at({"metadata", "resourceVersion"}) == rv_before
                             ? "unchanged"
                             : "configured";
    Readiness now = e.probes && !is_crd(e) ? probe_readiness(stored, *e.probes) : readiness(stored);
    if (e.kind == "Subscription" && e.group == "operators.coreos.com")
        now = {Readiness::State::waiting, "waiting for its ClusterServiceVersion"};
    set_report([&](ObjectReport& r) {
        r.action = action;
        r.ready = now.ready();
        r.reason = now.reason;
    });
    progress(Progress::Kind::applied, object_name(e.kind, e.name) + " " + action);
    return {};
}

// Before a phase is applied: what exists already, read with one LIST per resource type and
// namespace instead of one GET per object (so that an apply costs one PATCH per object). Only
// for real applies (a dry run's diff needs the live objects whole) and only for groups of two
// or more objects; a LIST the server refuses leaves its objects to apply_one's GET.
void Engine::prefetch(const std::vector<std::size_t>& idx) {
    if (dry()) return;
    std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> groups;
    for (std::size_t i : idx) {
        const Entry& e = entries_[i];
        if (!e.res) continue;
        std::string key = e.res->group;
        key.append("/").append(e.res->version).append("/").append(e.res->name);
        groups[{key, e.namespaced ? e.ns : std::string()}].push_back(i);
    }
    for (const auto& [key, members] : groups) {
        if (members.size() < 2 || interrupted()) continue;
        const Entry& first = entries_[members.front()];
        ListOptions lo;
        lo.limit = 500;
        auto listed = api_.list(*first.res, key.second, lo);
        if (!listed || !listed->ok()) continue;
        std::map<std::string, std::string> rvs;
        for (const auto& item : listed->value->items)
            rvs.emplace(item.text_at({"metadata", "name"}),
                        item.text_at({"metadata", "resourceVersion"}));
        for (std::size_t i : members) {
            Entry& e = entries_[i];
            auto it = rvs.find(e.name);
            e.known = true;
            e.existed = it != rvs.end();
            e.rv_before = e.existed ? it->second : std::string();
        }
    }
}

Result<void> Engine::run_batch(const std::vector<std::size_t>& idx,
                               const std::function<Result<void>(Entry&)>& f) {
    if (idx.empty()) return {};
    const auto n = static_cast<unsigned>(
        std::min<std::size_t>(idx.size(), static_cast<std::size_t>(std::max(1, o_.concurrency))));
    // The first error stops the other threads taking more (anything else thrown, out of memory,
    // passes through); after an interrupt the rest are skipped.
    auto r = catch_error([&] {
        parallel_for(idx.size(), n, [&](std::size_t k, unsigned) {
            if (interrupted()) return;
            if (auto x = f(entries_[idx[k]]); !x) throw Exception(std::move(x).error());
        });
    });
    if (!r) return r;
    if (interrupted()) return interrupted_error();
    return {};
}

Readiness Engine::wait_object(const Resource& res, const std::string& ns, const std::string& name,
                              const std::function<Readiness(const io::Node*)>& check,
                              const std::string& label) {
    std::string rv;
    bool need_list = true;
    Readiness last{Readiness::State::waiting, "not seen yet"};
    bool read_once = false; // `last` comes from the object as the server gave it
    // A list or watch that fails once the run's time is up was refused for that (a request
    // opened at the deadline is): what was last read of the object is then the reason the wait
    // ends with, not the refusal. A failure before the deadline (a server gone) stays the reason.
    auto ended_by_deadline = [&] { return read_once && expired(); };
    std::string shown;
    int failures = 0;
    // The pause before opening again a watch that ended early with nothing delivered.
    std::chrono::milliseconds rewatch{0};
    auto note = [&] {
        if (last.state == Readiness::State::waiting && last.reason != shown) {
            shown = last.reason;
            progress(Progress::Kind::waiting, label + ": " + last.reason);
        }
    };
    while (true) {
        if (need_list) {
            ListOptions lo;
            lo.field_selector = "metadata.name=" + name;
            auto l = api_.list(res, ns, lo);
            if (!l || !l->ok()) {
                const std::string why =
                    "cannot be read: " + (!l ? l.error().message : l->api->message);
                if (ended_by_deadline()) return last;
                if (++failures > 5) return {Readiness::State::failed, why};
                pause(std::chrono::milliseconds(200 * failures));
                // Out of time (or interrupted): still waiting, for this reason.
                if (expired() || interrupted()) return {Readiness::State::waiting, why};
                continue;
            }
            const io::Node* obj = nullptr;
            for (const io::Node& it : l->value->items)
                if (it.text_at({"metadata", "name"}) == name) obj = &it;
            last = check(obj);
            read_once = true;
            rv = l->value->resource_version;
            if (last.state != Readiness::State::waiting) return last;
            note();
            need_list = false;
        }
        const auto now = Clock::now();
        if ((has_deadline_ && now >= deadline_) || interrupted()) return last;
        WatchOptions wo;
        wo.field_selector = "metadata.name=" + name;
        wo.resource_version = rv;
        wo.timeout = o_.watch_slice;
        if (has_deadline_)
            wo.timeout = std::min(
                wo.timeout, std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - now) +
                                std::chrono::milliseconds(1));
        bool decided = false;
        bool delivered = false;
        const auto opened = Clock::now();
        auto w = api_.watch(res, ns, wo, [&](const WatchEvent& ev) {
            if (ev.type == "ERROR") {
                need_list = true;
                return false;
            }
            delivered = true;
            if (const std::string v = ev.object.text_at({"metadata", "resourceVersion"});
                !v.empty())
                rv = v;
            if (ev.type == "BOOKMARK") return true;
            if (ev.object.text_at({"metadata", "name"}) != name) return true;
            last = check(ev.type == "DELETED" ? nullptr : &ev.object);
            if (last.state != Readiness::State::waiting) {
                decided = true;
                return false;
            }
            note();
            return !interrupted();
        });
        if (decided) return last;
        if (!w || !w->ok()) {
            need_list = true;
            const std::string why =
                "cannot be watched: " + (!w ? w.error().message : w->api->message);
            if (ended_by_deadline()) return last;
            if (++failures > 5) return {Readiness::State::failed, why};
            pause(std::chrono::milliseconds(100 * failures));
            if (expired() || interrupted()) return {Readiness::State::waiting, why};
            continue;
        }
        failures = 0;
        // A watch that delivered events or lived half its time is healthy; one the server ended
        // at once is opened again only after a back-off, so that such a server is not flooded.
        if (delivered || Clock::now() - opened >= wo.timeout / 2) {
            rewatch = std::chrono::milliseconds(0);
        } else {
            rewatch = rewatch.count() == 0 ? kFirstRewatch : std::min(rewatch * 2, kMaxRewatch);
            pause(rewatch);
        }
    }
}

Readiness Engine::wait_entry(Entry& e) {
    const std::string label = object_name(e.kind, e.name);
    if (e.kind == "Subscription" && e.group == "operators.coreos.com") {
        std::string csv;
        Readiness r = wait_object(
            *e.res, e.ns, e.name,
            [&](const io::Node* o) -> Readiness {
                if (!o) return {Readiness::State::waiting, "not found"};
                csv = o->text_at({"status", "installedCSV"});
                if (csv.empty()) csv = o->text_at({"spec", "startingCSV"});
                if (csv.empty())
                    return {Readiness::State::waiting, "no ClusterServiceVersion installed yet"};
                return {Readiness::State::ready, {}};
            },
            label);
        if (!r.ready()) return r;
        const Resource* res = find_kind(*disc_, "operators.coreos.com", "ClusterServiceVersion");
        if (!res)
            return {Readiness::State::failed,
                    "the server does not serve ClusterServiceVersions (is OLM installed?)"};
        const Resource copy = *res;
        Readiness c = wait_object(
            copy, e.ns, csv,
            [&](const io::Node* o) -> Readiness {
                if (!o)
                    return {Readiness::State::waiting,
                            "ClusterServiceVersion " + csv + " does not exist yet"};
                Readiness x = readiness(*o);
                if (!x.ready()) x.reason = "ClusterServiceVersion " + csv + ": " + x.reason;
                return x;
            },
            label);
        return c;
    }
    return wait_object(
        *e.res, e.ns, e.name,
        [&](const io::Node* o) -> Readiness {
            if (!o) return {Readiness::State::waiting, "not found"};
            // CRDs are always waited for until Established: their custom resources need it.
            return e.probes && !is_crd(e) ? probe_readiness(*o, *e.probes) : readiness(*o);
        },
        label);
}

Result<void> Engine::wait_all(const std::vector<std::size_t>& idx, bool gone) {
    std::vector<std::size_t> todo;
    for (std::size_t i : idx) {
        const Entry& e = entries_[i];
        // What was ready as the server answered the apply needs no wait.
        if (gone ? rep_.objects[e.report].action == "deleted" ||
                       rep_.objects[e.report].action == "pruned"
                 : e.applied && !rep_.objects[e.report].ready)
            todo.push_back(i);
    }
    if (todo.empty()) return {};
    std::vector<Readiness> results(entries_.size());
    auto r = run_batch(todo, [&](Entry& e) -> Result<void> {
        Readiness x;
        if (gone) {
            x = wait_object(
                *e.res, e.ns, e.name,
                [](const io::Node* o) -> Readiness {
                    if (!o) return {Readiness::State::ready, {}};
                    std::string why = "still present";
                    if (!o->text_at({"metadata", "deletionTimestamp"}).empty()) {
                        why = "being deleted";
                        if (const io::Node* f = o->get("metadata")->get("finalizers");
                            f && f->is_seq() && !f->items.empty()) {
                            std::vector<std::string> names;
                            for (const auto& n : f->items)
                                names.push_back(n.text);
                            why += " (finalizers: " + text::join(names, ", ") + ")";
                        }
                    }
                    return {Readiness::State::waiting, why};
                },
                object_name(e.kind, e.name));
        } else {
            x = wait_entry(e);
        }
        {
            std::lock_guard<std::mutex> lock(mu_);
            ObjectReport& rr = rep_.objects[e.report];
            if (!gone) {
                rr.ready = x.ready();
                rr.reason = x.reason;
            } else if (!x.ready()) {
                rr.reason = x.reason;
            }
        }
        if (x.ready())
            progress(Progress::Kind::ready,
                     object_name(e.kind, e.name) + (gone ? " is gone" : " is ready"));
        results[&e - entries_.data()] = x;
        return {};
    });
    if (!r) return r;
    std::vector<std::string> failed, waiting;
    for (std::size_t i : todo) {
        const Readiness& x = results[i];
        const Entry& e = entries_[i];
        const std::string line = where(e.kind, e.name, e.ns) + ": " + x.reason;
        if (x.failed())
            failed.push_back(line);
        else if (!x.ready())
            waiting.push_back(line);
    }
    if (!failed.empty()) {
        Error err =
            Error::io(failed.size() == 1 ? failed.front()
                                         : std::to_string(failed.size()) + " objects failed");
        if (failed.size() > 1)
            for (const auto& f : failed)
                err.note(f);
        return err;
    }
    if (!waiting.empty()) {
        if (interrupted()) return interrupted_error();
        Error err = Error::io("timed out waiting for " + std::to_string(waiting.size()) +
                              (waiting.size() == 1 ? " object" : " objects") +
                              (gone ? " to be deleted" : " to be ready"));
        for (const auto& w : waiting)
            err.note(w);
        return err;
    }
    return {};
}

// --- ApplySet ------------------------------------------------------------------------------------

std::set<std::string> split_set(const std::string& s) {
    std::set<std::string> out;
    for (std::string_view p : text::split(s, ','))
        if (!p.empty()) out.insert(std::string(p));
    return out;
}

Result<void> Engine::applyset_begin() {
    auto ref = parse_applyset_ref(o_.applyset);
    if (!ref) return std::move(ref).error();
    const Resource* res = nullptr;
    for (const Resource& r : disc_->resources)
        if (r.name == ref->resource && r.group == ref->group) {
            res = &r;
            break;
        }
    if (!res)
        return Error::usage(
            "--applyset " + o_.applyset + ": the server does not serve " +
            (ref->group.empty() ? ref->resource : ref->resource + "." + ref->group));
    ApplySetState s;
    s.res = *res;
    s.name = ref->name;
    if (res->namespaced) {
        s.ns = o_.ns;
        if (s.ns.empty())
            return Error::usage("--applyset " + o_.applyset +
                                ": the parent is namespaced: give its namespace with -n NS");
    }
    s.id = applyset_id(s.name, s.ns, res->kind, res->group);
    if (!s.ns.empty()) s.old_ns.insert(s.ns);
    auto got = api_.get(s.res, s.ns, s.name);
    if (!got) return std::move(got).error();
    const std::string parent = object_name(res->kind, s.name);
    if (got->ok()) {
        const io::Node& p = *got->value;
        const std::string tooling =
            p.text_at({"metadata", "annotations", kApplySetToolingAnnotation});
        const std::string id = p.text_at({"metadata", "labels", kApplySetIdLabel});
        if (!tooling.empty()) {
            const std::string base = tooling.substr(0, tooling.rfind('/'));
            const std::string mine = o_.tooling.substr(0, o_.tooling.rfind('/'));
            if (base != mine)
                return Error::io("ApplySet parent " + parent + " is managed by " +
                                 text::quote(base) + ", not " + text::quote(mine) +
                                 ": kpkg leaves it alone");
        } else if (!id.empty()) {
            return Error::io("ApplySet parent " + parent + " has no " + kApplySetToolingAnnotation +
                             " annotation");
        }
        if (!id.empty() && id != s.id)
            return Error::io("ApplySet parent " + parent + " has the id " + id + ", expected " +
                             s.id);
        s.old_gks = split_set(p.text_at({"metadata", "annotations", kApplySetKindsAnnotation}));
        for (const auto& n :
             split_set(p.text_at({"metadata", "annotations", kApplySetNamespacesAnnotation})))
            s.old_ns.insert(n);
    } else if (got->api->status != 404) {
        Error e = Error::io("read ApplySet parent " + parent + ": " + got->api->message);
        return e;
    }
    set_ = std::move(s);
    return {};
}

Result<void> Engine::applyset_patch(bool superset) {
    // Dry runs leave the parent alone (its namespace may not even exist yet).
    if (!set_ || dry()) return {};
    ApplySetState& s = *set_;
    std::set<std::string> gks = s.new_gks, nss = s.new_ns;
    if (superset) {
        gks.insert(s.old_gks.begin(), s.old_gks.end());
        nss.insert(s.old_ns.begin(), s.old_ns.end());
    }
    nss.erase(s.ns);
    io::Node body = io::Node::map();
    body.set(
        "apiVersion",
        io::Node::string(s.res.group.empty() ? s.res.version : s.res.group + "/" + s.res.version));
    body.set("kind", io::Node::string(s.res.kind));
    io::Node& md = body.set("metadata", io::Node::map());
    md.set("name", io::Node::string(s.name));
    if (!s.ns.empty()) md.set("namespace", io::Node::string(s.ns));
    md.set("labels", io::Node::map()).set(kApplySetIdLabel, io::Node::string(s.id));
    io::Node& ann = md.set("annotations", io::Node::map());
    ann.set(kApplySetToolingAnnotation, io::Node::string(o_.tooling));
    ann.set(kApplySetKindsAnnotation,
            io::Node::string(text::join(std::vector<std::string>(gks.begin(), gks.end()), ",")));
    ann.set(kApplySetNamespacesAnnotation,
            io::Node::string(text::join(std::vector<std::string>(nss.begin(), nss.end()), ",")));
    ApplyOptions ao;
    ao.field_manager = o_.tooling.substr(0, o_.tooling.rfind('/')) + "-applyset";
    ao.dry_run = o_.dry_run == DryRun::server;
    auto r = api_.apply(s.res, s.ns, body, ao);
    if (r && !r->ok() && r->api->status == 409) {
        ao.force = true;
        r = api_.apply(s.res, s.ns, body, ao);
    }
    if (!r) return std::move(r).error();
    if (!r->ok())
        return Error::io("update ApplySet parent " + object_name(s.res.kind, s.name) + ": " +
                         r->api->message);
    return {};
}

// The entries of what a list found: objects to delete, grouped by reverse default phase.
Result<void> Engine::delete_phases(std::vector<std::vector<std::size_t>> groups,
                                   const char* action) {
    const bool is_dry = o_.dry_run != DryRun::none || o_.diff;
    for (auto& g : groups) {
        if (g.empty()) continue;
        auto r = run_batch(g, [&](Entry& e) -> Result<void> {
            if (o_.dry_run == DryRun::client) {
                std::lock_guard<std::mutex> lock(mu_);
                rep_.objects[e.report].action = "dry-run";
                rep_.objects[e.report].reason =
                    std::string("would be ") + action + " (client dry run)";
                return {};
            }
            auto d = api_.remove(*e.res, e.ns, e.name, Propagation::background, is_dry);
            if (!d) return std::move(d).error();
            std::lock_guard<std::mutex> lock(mu_);
            ObjectReport& rr = rep_.objects[e.report];
            if (!d->ok()) {
                if (d->api->status == 404) {
                    rr.action = "unchanged";
                    rr.reason = "not found";
                    return {};
                }
                return api_error(e, "delete", *d->api);
            }
            rr.action = is_dry ? "dry-run" : action;
            if (is_dry) rr.reason = std::string("would be ") + action;
            if (o_.progress)
                o_.progress({Progress::Kind::deleted, object_name(e.kind, e.name) + " " + action});
            return {};
        });
        if (!r) return r;
        if (o_.wait && !is_dry)
            if (auto w = wait_all(g, true); !w) return w;
    }
    return {};
}

Result<std::vector<std::pair<Entry, io::Node>>>
Engine::list_members(const std::set<std::string>& gks, const std::set<std::string>& nss,
                     const char* purpose) {
    std::vector<std::pair<Entry, io::Node>> out;
    ListOptions lo;
    lo.label_selector = std::string(kApplySetPartOfLabel) + "=" + set_->id;
    for (const std::string& gk : gks) {
        const auto dot = gk.find('.');
        const std::string kind = gk.substr(0, dot);
        const std::string group = dot == std::string::npos ? "" : gk.substr(dot + 1);
        const Resource* res = find_kind(*disc_, group, kind);
        if (!res) continue; // no longer served: nothing of it can be left
        const Resource copy = *res;
        std::vector<std::string> where_ns;
        if (copy.namespaced)
            where_ns.assign(nss.begin(), nss.end());
        else
            where_ns.push_back("");
        for (const std::string& ns : where_ns) {
            auto l = api_.list(copy, ns, lo);
            if (!l) return std::move(l).error();
            if (!l->ok()) {
                std::string msg = "list " + gk;
                if (*purpose && !ns.empty()) msg.append(" in namespace ").append(ns);
                msg.append(purpose).append(": ").append(l->api->message);
                return Error::io(msg);
            }
            for (io::Node& item : l->value->items) {
                Entry e;
                e.res = copy;
                e.group = group;
                e.kind = kind;
                e.version = copy.version;
                e.api_version = group.empty() ? copy.version : group + "/" + copy.version;
                e.name = item.text_at({"metadata", "name"});
                e.ns = copy.namespaced ? item.text_at({"metadata", "namespace"}) : "";
                e.phase = default_phase(group, kind);
                out.emplace_back(std::move(e), std::move(item));
            }
        }
    }
    return out;
}

Result<void> Engine::prune() {
    if (!set_) return {};
    ApplySetState& s = *set_;
    std::set<std::string> applied;
    std::set<std::string> keys;
    for (const Entry& e : entries_) {
        if (!e.uid.empty()) applied.insert(e.uid);
        keys.insert(e.group + "/" + e.kind + "/" + e.ns + "/" + e.name);
    }
    std::set<std::string> gks = s.old_gks;
    gks.insert(s.new_gks.begin(), s.new_gks.end());
    std::set<std::string> nss = s.old_ns;
    nss.insert(s.new_ns.begin(), s.new_ns.end());
    auto members = list_members(gks, nss, " to prune");
    if (!members) return std::move(members).error();
    std::vector<std::vector<std::size_t>> groups(default_phases().size());
    for (auto& [e, item] : *members) {
        const std::string uid = item.text_at({"metadata", "uid"});
        if ((!uid.empty() && applied.count(uid)) ||
            keys.count(e.group + "/" + e.kind + "/" + e.ns + "/" + e.name))
            continue;
        ObjectReport& r = add_report(e, "prune");
        if (o_.diff) {
            r.diff = text::unified_diff(diff_yaml(item), "", "live/" + diff_label(e), "/dev/null") +
                     "\n";
            rep_.differs = true;
        }
        groups[e.phase].push_back(entries_.size());
        entries_.push_back(std::move(e));
    }
    std::reverse(groups.begin(), groups.end());
    if (auto r = delete_phases(std::move(groups), "pruned"); !r) return r;
    return applyset_patch(false);
}

RunReport Engine::run_apply(const Input& input) {
    if (auto d = discover(false); !d) return finish(std::move(d).error());
    if (!o_.applyset.empty())
        if (auto r = applyset_begin(); !r) return finish(std::move(r).error());
    if (auto b = build(input, false); !b) return finish(std::move(b).error());
    // Dry runs: what the server cannot check because this run would create what it needs.
    if (o_.dry_run == DryRun::server || o_.diff) {
        std::set<std::string> new_ns;
        for (const Entry& e : entries_)
            if (e.group.empty() && e.kind == "Namespace" && e.res) {
                auto g = api_.get(*e.res, "", e.name);
                if (!g) return finish(std::move(g).error());
                if (!g->ok() && g->api->status == 404) new_ns.insert(e.name);
            }
        for (Entry& e : entries_) {
            if (!e.crd.empty())
                e.not_checked = "not checked: its CustomResourceDefinition " + e.crd +
                                " is created by this run";
            else if (!e.ns.empty() && new_ns.count(e.ns))
                e.not_checked = "not checked: namespace " + e.ns + " is created by this run";
        }
    }
    // The parent records the superset before anything is applied (so an interrupted run
    // leaks nothing); when its namespace is created by this run, right after that.
    bool parent_pending = set_.has_value();
    std::size_t parent_after = phases_.size();
    if (set_ && !set_->ns.empty())
        for (const Entry& e : entries_)
            if (e.group.empty() && e.kind == "Namespace" && e.name == set_->ns) {
                auto g = e.res ? api_.get(*e.res, "", e.name)
                               : Result<Reply<io::Node>>(Reply<io::Node>{});
                if (!g) return finish(std::move(g).error());
                if (!g->ok()) parent_after = e.phase;
            }
    if (parent_pending && parent_after == phases_.size()) {
        if (auto r = applyset_patch(true); !r) return finish(std::move(r).error());
        parent_pending = false;
    }

    std::size_t shown = 0, total = 0;
    for (const PhaseInfo& p : phases_)
        if (!p.entries.empty()) ++total;
    for (PhaseInfo& p : phases_) {
        if (p.entries.empty()) continue;
        if (interrupted()) return finish(interrupted_error());
        ++shown;
        progress(Progress::Kind::phase, "phase " + std::to_string(shown) + "/" +
                                            std::to_string(total) + " " + p.name + ": " +
                                            std::to_string(p.entries.size()) +
                                            (p.entries.size() == 1 ? " object" : " objects"));
        std::vector<std::size_t> crds, rest;
        for (std::size_t i : p.entries) {
            const Entry& e = entries_[i];
            (e.kind == "CustomResourceDefinition" && e.group == "apiextensions.k8s.io" ? crds
                                                                                       : rest)
                .push_back(i);
        }
        auto apply_fn = [this](Entry& e) { return apply_one(e); };
        prefetch(crds);
        if (auto r = run_batch(crds, apply_fn); !r) return finish(std::move(r).error());
        if (!crds.empty() && !dry()) {
            // Custom resources need their CRDs served: always waited for.
            if (auto w = wait_all(crds, false); !w) return finish(std::move(w).error());
            if (auto d = discover(true); !d) return finish(std::move(d).error());
        }
        for (std::size_t i : rest) {
            Entry& e = entries_[i];
            if (e.crd.empty() || dry()) continue;
            const Resource* r = find_resource(*disc_, e.group, e.version, e.kind);
            if (!r)
                return finish(at_pos(Error::io(object_name(e.kind, e.name) +
                                               ": the server does "
                                               "not serve " +
                                               e.kind + " in " + e.api_version +
                                               " although its CustomResourceDefinition " + e.crd +
                                               " is established"),
                                     e.pos));
            e.res = *r;
        }
        prefetch(rest);
        if (auto r = run_batch(rest, apply_fn); !r) return finish(std::move(r).error());
        if (parent_pending && static_cast<std::size_t>(&p - phases_.data()) == parent_after) {
            if (auto r = applyset_patch(true); !r) return finish(std::move(r).error());
            parent_pending = false;
        }
        if (o_.wait && !dry())
            if (auto w = wait_all(rest, false); !w) return finish(std::move(w).error());
    }
    if (o_.prune)
        if (auto r = prune(); !r) return finish(std::move(r).error());
    if (interrupted()) return finish(interrupted_error());
    return finish(std::nullopt);
}

RunReport Engine::run_remove(const Input* input) {
    if (auto d = discover(false); !d) return finish(std::move(d).error());
    std::vector<std::vector<std::size_t>> groups;
    if (input) {
        if (auto b = build(*input, true); !b) return finish(std::move(b).error());
        for (auto it = phases_.rbegin(); it != phases_.rend(); ++it) {
            std::vector<std::size_t> g;
            for (std::size_t i : it->entries)
                if (entries_[i].res)
                    g.push_back(i);
                else {
                    rep_.objects[entries_[i].report].action = "unchanged";
                    rep_.objects[entries_[i].report].reason = "not found (its kind is not served)";
                }
            groups.push_back(std::move(g));
        }
        if (auto r = delete_phases(std::move(groups), "deleted"); !r)
            return finish(std::move(r).error());
        return finish(std::nullopt);
    }
    if (auto r = applyset_begin(); !r) return finish(std::move(r).error());
    // Everything the parent records, deleted as a prune of an empty input, then the parent.
    {
        auto got = api_.get(set_->res, set_->ns, set_->name);
        if (!got) return finish(std::move(got).error());
        if (!got->ok())
            return finish(Error::io("ApplySet parent " + object_name(set_->res.kind, set_->name) +
                                    (set_->ns.empty() ? "" : " in namespace " + set_->ns) +
                                    " does not exist"));
    }
    phases_.push_back({"prune", {}});
    ApplySetState& s = *set_;
    auto members = list_members(s.old_gks, s.old_ns, "");
    if (!members) return finish(std::move(members).error());
    groups.assign(default_phases().size(), {});
    for (auto& member : *members) {
        Entry& e = member.first;
        add_report(e, default_phases()[e.phase]);
        groups[e.phase].push_back(entries_.size());
        entries_.push_back(std::move(e));
    }
    std::reverse(groups.begin(), groups.end());
    // The parent last.
    {
        Entry e;
        e.res = s.res;
        e.kind = s.res.kind;
        e.group = s.res.group;
        e.api_version = s.res.group.empty() ? s.res.version : s.res.group + "/" + s.res.version;
        e.name = s.name;
        e.ns = s.ns;
        add_report(e, "applyset");
        groups.push_back({entries_.size()});
        entries_.push_back(std::move(e));
    }
    if (auto r = delete_phases(std::move(groups), "deleted"); !r)
        return finish(std::move(r).error());
    return finish(std::nullopt);
}

} // namespace

RunReport apply(Api& api, const Input& input, const RunOptions& opts) {
    Engine e(api, opts);
    return e.run_apply(input);
}

RunReport remove(Api& api, const Input* input, const RunOptions& opts) {
    Engine e(api, opts);
    return e.run_remove(input);
}

} // namespace kpkg::kube
