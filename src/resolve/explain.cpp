// Why there is no solution, in domain words (a tree like mamba's problem tree, never libsolv's
// rule text).
//
// The tree is built from kpkg's own model and libsolv is only asked yes/no questions ("can these
// be installed together?"), so every line names a request, a bundle, a channel, an API or a
// version range:
//  - the installed CSVs that must stay cannot stay together, or
//  - a request has no candidate: what its channels do not offer and why (skipped, off the
//    replaces chain, outside the range, not an upgrade of the installed version, deprecated), or
//  - no candidate of a request can be installed: for each candidate, the first reason found:
//    a requirement nothing offers (and which bundles would have satisfied it, and why they are
//    not offered), a conflict with an installed CSV, or a requirement none of whose candidates
//    fits, each candidate then explained in turn (same package, same API, or its own reasons),
//  - or the requests are each satisfiable but not together: which pairs conflict and over what.
#include <algorithm>
#include <set>

#include "kpkg/core/text.hpp"
#include "round.hpp"

namespace kpkg::resolve::detail {

namespace {

constexpr int max_depth = 3;
constexpr std::size_t max_children = 8;
constexpr std::size_t max_nodes = 400;

struct JobSet {
    std::vector<solv::Job> jobs;
    std::vector<std::string> words;
    void add(solv::Job j, std::string w = {}) {
        jobs.push_back(std::move(j));
        words.push_back(std::move(w));
    }
};

Problem leaf(std::string s) {
    return Problem{std::move(s), {}};
}

class Explainer {
public:
    Explainer(Encoding& enc, ExplainInput& in) : enc_(enc), u_(enc.universe()), in_(in) {}

    std::vector<Problem> run() {
        std::vector<Problem> out;
        JobSet mand = mandatory();
        if (!sat(mand)) {
            Problem p{"the installed operators without a subscription cannot stay together", {}};
            for (auto& w : words(mand))
                p.children.push_back(leaf(std::move(w)));
            out.push_back(std::move(p));
            return out;
        }
        auto& subs = *in_.subs;
        auto& offers = *in_.offers;
        for (std::size_t i = 0; i < subs.size(); ++i) {
            std::vector<VarId> usable = enc_.usable(offers[i]);
            if (usable.empty()) {
                out.push_back(no_candidates(i));
                continue;
            }
            JobSet js = mand;
            js.add(enc_.one_of(offers[i]), request_words(i));
            if (!sat(js)) out.push_back(request(i, usable));
        }
        if (!out.empty()) return out;
        // Every request can be met on its own: they conflict with each other.
        for (std::size_t i = 0; i < subs.size(); ++i)
            for (std::size_t j = i + 1; j < subs.size(); ++j) {
                JobSet js = mand;
                js.add(enc_.one_of(offers[i]), request_words(i));
                js.add(enc_.one_of(offers[j]), request_words(j));
                if (sat(js)) continue;
                Problem p{"requests " + subs[i].sub.spec + " and " + subs[j].sub.spec +
                              " cannot both be satisfied",
                          {}};
                for (auto& w : words(js))
                    p.children.push_back(leaf(std::move(w)));
                out.push_back(std::move(p));
            }
        if (out.empty()) {
            JobSet js = mand;
            std::vector<std::string> specs;
            for (std::size_t i = 0; i < subs.size(); ++i) {
                js.add(enc_.one_of(offers[i]), request_words(i));
                specs.push_back(subs[i].sub.spec);
            }
            Problem p{"the requests " + join_and(specs) + " cannot be satisfied together", {}};
            for (auto& w : words(js))
                p.children.push_back(leaf(std::move(w)));
            out.push_back(std::move(p));
        }
        return out;
    }

private:
    static std::string join_and(const std::vector<std::string>& v) {
        std::string s;
        for (std::size_t i = 0; i < v.size(); ++i)
            s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
        return s;
    }

    std::string request_words(std::size_t i) const {
        const SubState& s = (*in_.subs)[i];
        if (s.current != none)
            return "the subscription to " + s.sub.package + " (installed " +
                   u_.installed()[s.current].csv.name + ")";
        return "request " + s.sub.spec;
    }

    JobSet mandatory() const {
        JobSet js;
        for (VarId m : in_.mandatory)
            js.add(enc_.install(m), "installed " + enc_.universe().label(m) + " stays");
        return js;
    }

    bool sat(const JobSet& js) { return enc_.engine().solve(js.jobs).satisfiable; }

    std::vector<std::string> words(const JobSet& js) {
        auto o = enc_.engine().solve(js.jobs, true);
        return enc_.words(o.rules, js.words);
    }

    void add(Problem& parent, Problem child) {
        if (++nodes_ > max_nodes) return;
        parent.children.push_back(std::move(child));
    }

    void unusable(Problem& p, const std::vector<VarId>& vars) {
        for (VarId v : vars) {
            const Var& x = u_.var(v);
            if (x.prohibited)
                add(p, leaf(u_.label(v) +
                            " is deprecated (olm.deprecated property): OLM never installs it"));
            else if (!x.excluded.empty())
                add(p, leaf(u_.label(v) + " is left out by --exclude-deprecated: " + x.excluded));
        }
    }

    std::vector<std::string> left_out(std::size_t i) {
        const SubState& s = (*in_.subs)[i];
        auto o = u_.offer(s.sub, s.current, true);
        return o ? o->left_out : std::vector<std::string>{};
    }

    Problem no_candidates(std::size_t i) {
        const SubState& s = (*in_.subs)[i];
        Problem p{request_words(i) + " has no candidate", {}};
        unusable(p, (*in_.offers)[i]);
        for (auto& n : left_out(i))
            add(p, leaf(std::move(n)));
        if (p.children.empty())
            add(p, leaf("package " + s.sub.package + " has no bundle" +
                        (s.sub.channel.empty() ? "" : " in channel " + s.sub.channel)));
        return p;
    }

    Problem request(std::size_t i, const std::vector<VarId>& usable) {
        Problem p{request_words(i) + " cannot be satisfied: no candidate can be installed", {}};
        for (std::size_t k = 0; k < usable.size(); ++k) {
            if (k == max_children) {
                add(p, leaf("and " + std::to_string(usable.size() - k) + " more candidates"));
                break;
            }
            add(p, candidate(usable[k], 0));
        }
        unusable(p, (*in_.offers)[i]);
        auto notes = left_out(i);
        if (!notes.empty()) {
            Problem n{"not offered:", {}};
            for (auto& s : notes)
                n.children.push_back(leaf(std::move(s)));
            add(p, std::move(n));
        }
        return p;
    }

    // A requirement in words, with the failureMessage of an olm.constraint.
    std::string requirement(std::uint32_t list) const {
        const Dep& d = u_.index().dep(u_.list(list).dep);
        std::string w = d.words();
        if (d.kind == DepKind::constraint && d.constraint && !d.constraint->failure_message.empty())
            w += " (" + text::quote(d.constraint->failure_message) + ")";
        return w;
    }

    Problem candidate(VarId x, int depth) {
        std::string label = u_.label(x);
        if (!explained_.insert(x).second) return leaf(label + " cannot be installed (see above)");
        const Var& var = u_.var(x);
        // A requirement nothing offers.
        for (std::uint32_t l : var.lists)
            if (enc_.usable(u_.list(l).vars).empty()) {
                Problem p{label + " requires " + requirement(l) + ", but nothing offers it", {}};
                for (auto& s : u_.near_misses(l))
                    add(p, leaf(std::move(s)));
                return p;
            }
        JobSet alone;
        alone.add(enc_.install(x));
        if (!enc_.dead(x) && sat(alone)) {
            // Installable on its own: an installed CSV is in the way.
            for (VarId m : in_.mandatory) {
                JobSet js = alone;
                js.add(enc_.install(m), "installed " + u_.label(m) + " stays");
                if (sat(js)) continue;
                Problem p{label + " conflicts with installed " + u_.label(m), {}};
                for (auto& w : words(js))
                    add(p, leaf(std::move(w)));
                return p;
            }
            JobSet js = mandatory();
            js.add(enc_.install(x));
            Problem p{label + " cannot be installed beside the installed operators", {}};
            for (auto& w : words(js))
                add(p, leaf(std::move(w)));
            return p;
        }
        // x cannot be installed, so no candidate of any of its requirements fits beside it (no
        // solve needs to say so, one per candidate would make this quadratic or worse). The
        // requirements shown are those whose every candidate fails for a reason of its own
        // (it can never be installed, or it is another bundle of x's package or provides an API
        // x provides); when there is none, every requirement, each candidate explained.
        std::vector<std::uint32_t> lists;
        for (std::uint32_t l : var.lists) {
            std::vector<VarId> providers = enc_.usable(u_.list(l).vars);
            if (std::all_of(providers.begin(), providers.end(),
                            [&](VarId y) { return excluded_by(x, y); }))
                lists.push_back(l);
        }
        if (lists.empty()) lists = var.lists;
        std::vector<Problem> blocking;
        for (std::uint32_t l : lists) {
            std::vector<VarId> providers = enc_.usable(u_.list(l).vars);
            Problem p{label + " requires " + requirement(l) + ", but no candidate fits", {}};
            for (std::size_t k = 0; k < providers.size(); ++k) {
                if (k == max_children) {
                    add(p, leaf("and " + std::to_string(providers.size() - k) + " more"));
                    break;
                }
                add(p, pair(x, providers[k], depth));
            }
            blocking.push_back(std::move(p));
        }
        if (blocking.size() == 1) return std::move(blocking.front());
        if (!blocking.empty()) {
            Problem p{label + " cannot be installed", {}};
            for (auto& b : blocking)
                add(p, std::move(b));
            return p;
        }
        Problem p{label + " cannot be installed: its requirements exclude each other", {}};
        for (auto& w : words(alone))
            add(p, leaf(std::move(w)));
        return p;
    }

    // Whether y fails beside x whatever else is installed: y can never be installed, or it is
    // another bundle of x's package, or it provides an API x provides.
    bool excluded_by(VarId x, VarId y) {
        if (enc_.dead(y)) return true;
        const BundleInfo& bx = u_.info(x);
        const BundleInfo& by = u_.info(y);
        if (bx.package == by.package) return true;
        for (const GVK& g : by.provides)
            if (std::find(bx.provides.begin(), bx.provides.end(), g) != bx.provides.end())
                return true;
        return false;
    }

    // Why provider y of one of x's requirements cannot be installed with x.
    Problem pair(VarId x, VarId y, int depth) {
        const BundleInfo& bx = u_.info(x);
        const BundleInfo& by = u_.info(y);
        std::string ylabel = u_.label(y);
        if (bx.package == by.package)
            return leaf(ylabel + " is another bundle of package " + bx.package +
                        " (at most one bundle per package)");
        for (const GVK& g : by.provides)
            if (std::find(bx.provides.begin(), bx.provides.end(), g) != bx.provides.end())
                return leaf(ylabel + " also provides " + g.words() + ", as " + bx.name +
                            " does (at most one provider per API)");
        JobSet alone;
        alone.add(enc_.install(y));
        if (enc_.dead(y) || !sat(alone)) {
            if (depth + 1 <= max_depth) return candidate(y, depth + 1);
            return leaf(ylabel + " cannot be installed");
        }
        JobSet js = alone;
        js.add(enc_.install(x));
        Problem p{ylabel + " cannot be installed together with " + bx.name, {}};
        for (auto& w : words(js))
            add(p, leaf(std::move(w)));
        return p;
    }

    Encoding& enc_;
    Universe& u_;
    ExplainInput& in_;
    std::set<VarId> explained_;
    std::size_t nodes_ = 0;
};

} // namespace

std::vector<Problem> explain(Encoding& enc, ExplainInput& in) {
    return Explainer(enc, in).run();
}

} // namespace kpkg::resolve::detail
