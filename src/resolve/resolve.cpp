// Resolution: the libsolv encoding of the candidates, OLM's choice procedure on top of it, the
// upgrade rounds, and --all-packages.
//
// OLM's solver (operator-lifecycle-manager pkg/controller/registry/resolver/solver, solve.go and
// search.go) takes "choices" breadth first: first the anchors (installed CSVs without a
// subscription, each subscription), then, for every variable it guesses, one choice per
// dependency of that variable, appended at the back. For a choice it guesses the first candidate
// (in the order the resolver built) that does not make the problem unsatisfiable, skipping the
// choice when an earlier guess already is one of its candidates, and backtracks chronologically
// when a later choice cannot be met. It then assumes every guess, forbids every variable that
// was false, and minimises the number of other true variables: the result is the guesses alone.
//
// With a complete satisfiability test at each guess, backtracking never happens: a guess that
// leaves a solution always leaves one for every later choice (the owner of that choice is in the
// solution, so one of its candidates is). So kpkg asks libsolv, at each choice, whether the
// candidates in order leave a solution, and takes the first that does; a candidate that the last
// solution libsolv found already contains needs no question. The outcome is the same sequence of
// guesses OLM's search ends with, found without its exponential backtracking.
#include <algorithm>
#include <deque>
#include <iterator>
#include <set>

#include "kpkg/core/text.hpp"
#include "kpkg/resolve/resolve.hpp"
#include "round.hpp"

namespace kpkg::resolve {

using namespace detail;

namespace {

std::string sanitize(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '/' || c == ':' || c == '+' || c == '~' || c == '-';
        out += ok ? c : '_';
    }
    return out;
}

// A repo name that is also a file name (libsolv's testcases write one file per repo).
std::string repo_name(const std::string& catalog, const std::string& channel) {
    std::string out;
    for (char c : channel.empty() ? catalog : catalog + "__" + channel) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        out += ok ? c : '_';
    }
    return out;
}

// libsolv only shows versions (kpkg orders candidates itself); '~' keeps a pre-release readable
// and below its release in rpm's order, where '-' would start the release part.
std::string evr_of(const std::string& version) {
    if (version.empty()) return "0";
    std::string s = sanitize(version);
    std::replace(s.begin(), s.end(), '-', '~');
    return s;
}

} // namespace

// --- Encoding ----------------------------------------------------------------------------------

namespace detail {

void Encoding::build(std::vector<VarId> vars) {
    std::vector<VarId> use;
    for (VarId v : vars)
        if (u_.var(v).usable() && !u_.var(v).broken) use.push_back(v);
    const auto& order = u_.index().order();
    auto rank = [&](VarId v) {
        const Var& x = u_.var(v);
        if (x.catalog == none) return std::make_pair(0u, x.installed);
        auto pos = std::find(order.begin(), order.end(), x.catalog) - order.begin();
        return std::make_pair(1u, static_cast<std::uint32_t>(pos));
    };
    std::sort(use.begin(), use.end(), [&](VarId a, VarId b) {
        auto ra = rank(a), rb = rank(b);
        if (ra != rb) return ra < rb;
        const BundleInfo& ia = u_.info(a);
        const BundleInfo& ib = u_.info(b);
        if (ia.package != ib.package) return ia.package < ib.package;
        std::string ca = u_.channel_name(a), cb = u_.channel_name(b);
        if (ca != cb) return ca < cb;
        if (ia.name != ib.name) return ia.name < ib.name;
        return a < b;
    });
    std::unordered_set<VarId> in(use.begin(), use.end());
    std::unordered_map<VarId, std::vector<std::uint32_t>> member;
    std::set<std::uint32_t> lists;
    for (VarId v : use)
        for (std::uint32_t l : u_.var(v).lists) {
            lists.insert(l);
            for (VarId w : u_.list(l).vars)
                if (in.count(w)) {
                    auto& m = member[w];
                    if (m.empty() || m.back() != l) m.push_back(l);
                }
        }
    std::map<std::uint32_t, std::string> list_name;
    for (std::uint32_t l : lists) {
        const Dep& d = u_.index().dep(u_.list(l).dep);
        std::string what = d.kind == DepKind::gvk       ? "api:" + d.gvk.str()
                           : d.kind == DepKind::package ? "pkg:" + d.package
                           : d.kind == DepKind::label   ? "label:" + d.label
                                                        : std::string("constraint");
        std::string name = "req" + std::to_string(l) + ":" + sanitize(what);
        list_name[l] = name;
        list_names_[name] = l;
    }
    // At most one provider per API. Bundles of one package already exclude each other (one
    // name), so an API gets one capability per package providing it, and a provider conflicts
    // with those of the other packages only: no rules between bundles of the same package,
    // which would be quadratic in the versions of a package for every API it provides.
    std::map<GVK, std::set<std::string>> api_packages;
    for (VarId v : use)
        for (const GVK& g : u_.info(v).provides)
            api_packages[g].insert(u_.info(v).package);
    std::map<std::pair<GVK, std::string>, std::string> cap_name;
    auto api_cap = [&](const GVK& g, const std::string& package) -> const std::string& {
        auto key = std::make_pair(g, package);
        auto it = cap_name.find(key);
        if (it != cap_name.end()) return it->second;
        std::string name = "gvk:" + sanitize(g.str()) + "#" + sanitize(package);
        while (gvk_names_.count(name))
            name += "+";
        gvk_names_[name] = g;
        return cap_name.emplace(key, name).first->second;
    };
    for (VarId v : use) {
        const BundleInfo& bi = u_.info(v);
        solv::SolvableSpec s;
        // One repo per channel: bundles listed in several channels stay apart in testcases.
        s.repo = repo_name(u_.catalog_name(v),
                           u_.var(v).catalog == none ? std::string() : u_.channel_name(v));
        s.name = sanitize(bi.package);
        s.evr = evr_of(bi.version_text);
        for (const GVK& g : bi.provides) {
            s.provides.push_back(api_cap(g, bi.package));
            for (const auto& other : api_packages[g])
                if (other != bi.package) s.conflicts.push_back(api_cap(g, other));
        }
        if (auto it = member.find(v); it != member.end())
            for (std::uint32_t l : it->second)
                s.provides.push_back(list_name[l]);
        for (std::uint32_t l : u_.var(v).lists)
            s.requires_.push_back(list_name[l]);
        int idx = engine_.add(s);
        solvable_[v] = idx;
        vars_.push_back(v);
    }
    // Bundles that can never be installed: a requirement whose every candidate is such a
    // bundle (or that has none). The choice procedure passes them over without asking libsolv.
    // A usable candidate left out of this encoding might be installable: it counts as alive.
    for (bool changed = true; changed;) {
        changed = false;
        for (VarId v : use) {
            if (dead_.count(v)) continue;
            for (std::uint32_t l : u_.var(v).lists) {
                const auto& cands = u_.list(l).vars;
                auto alive = [&](VarId w) {
                    if (in.count(w)) return !dead_.count(w);
                    return u_.var(w).usable() && !u_.var(w).broken;
                };
                if (std::none_of(cands.begin(), cands.end(), alive)) {
                    dead_.insert(v);
                    changed = true;
                    break;
                }
            }
        }
    }
    engine_.finalize();
}

std::vector<VarId> Encoding::usable(const std::vector<VarId>& vars) const {
    std::vector<VarId> out;
    for (VarId v : vars)
        if (has(v)) out.push_back(v);
    return out;
}

solv::Job Encoding::one_of(const std::vector<VarId>& vars) const {
    solv::Job j{solv::Job::Kind::install_one_of, {}};
    for (VarId v : vars)
        if (has(v)) j.solvables.push_back(solvable(v));
    return j;
}

std::vector<std::string> Encoding::words(const std::vector<solv::Rule>& rules,
                                         const std::vector<std::string>& job_words) {
    std::vector<std::string> first, second, third;
    auto who = [&](int s) { return s >= 0 ? u_.label(var(s)) : std::string("?"); };
    for (const auto& r : rules) {
        switch (r.type) {
        case solv::Rule::Type::conflicts:
        case solv::Rule::Type::same_name: {
            // The pair in name order: libsolv's source and target depend on its search.
            std::string a = who(r.source), b = who(r.target);
            if (b < a) std::swap(a, b);
            if (r.type == solv::Rule::Type::same_name) {
                if (r.source >= 0)
                    first.push_back(a + " and " + b + " are both bundles of package " +
                                    u_.info(var(r.source)).package +
                                    " (at most one bundle per package)");
            } else if (auto it = gvk_names_.find(r.dep); it != gvk_names_.end()) {
                first.push_back(a + " and " + b + " both provide " + it->second.words() +
                                " (at most one provider per API)");
            } else {
                first.push_back(a + " conflicts with " + b);
            }
            break;
        }
        case solv::Rule::Type::requires_:
        case solv::Rule::Type::nothing_provides: {
            std::string what = r.dep;
            if (auto it = list_names_.find(r.dep); it != list_names_.end())
                what = u_.index().dep(u_.list(it->second).dep).words();
            second.push_back(who(r.source) + " requires " + what +
                             (r.type == solv::Rule::Type::nothing_provides
                                  ? ", but nothing offers it"
                                  : std::string()));
            break;
        }
        case solv::Rule::Type::job:
            if (r.job >= 0 && static_cast<std::size_t>(r.job) < job_words.size() &&
                !job_words[static_cast<std::size_t>(r.job)].empty())
                third.push_back(job_words[static_cast<std::size_t>(r.job)]);
            break;
        case solv::Rule::Type::other:
            break;
        }
    }
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (auto* part : {&first, &second, &third})
        for (auto& s : *part)
            if (seen.insert(s).second) out.push_back(std::move(s));
    return out;
}

} // namespace detail

namespace detail {

// Looks the installed CSVs up in the catalogs.
Result<std::vector<InstalledState>> installed_states(Index& index,
                                                     const std::vector<Installed>& installed,
                                                     std::vector<std::string>& warnings) {
    std::vector<InstalledState> out;
    std::vector<std::string> names;
    for (const auto& c : index.catalogs())
        names.push_back(c.name);
    for (const auto& csv : installed) {
        InstalledState st;
        st.csv = csv;
        std::vector<std::uint32_t> cats;
        if (!csv.catalog.empty()) {
            for (std::uint32_t c = 0; c < index.catalogs().size(); ++c)
                if (index.catalogs()[c].name == csv.catalog) cats.push_back(c);
            if (cats.empty()) {
                Error e = unknown_name("catalog", csv.catalog, names,
                                       " for installed " + text::quote(csv.name));
                e.pos = csv.pos;
                return fail(std::move(e));
            }
        } else {
            cats = index.order();
        }
        for (std::uint32_t c : cats) {
            const model::Catalog& cat = index.cat(c);
            auto pkg = cat.strings.find(csv.package);
            auto name = cat.strings.find(csv.name);
            if (!pkg || !name) continue;
            std::uint32_t b = cat.find_bundle(*pkg, *name);
            if (b == model::npos32) continue;
            st.info = index.info_id(c, b);
            break;
        }
        if (st.info == none) {
            st.info = index.add_unknown(csv.package, csv.name, csv.version);
            warnings.push_back("installed " + csv.name +
                               " is in no catalog given: its APIs and "
                               "dependencies are not known");
        } else if (index.info_at(st.info).version_text != csv.version) {
            warnings.push_back("installed " + csv.name + " has version " + csv.version +
                               ", the catalog says " + index.info_at(st.info).version_text);
        }
        out.push_back(std::move(st));
    }
    std::sort(out.begin(), out.end(), [](const InstalledState& a, const InstalledState& b) {
        return a.csv.package < b.csv.package;
    });
    return out;
}

} // namespace detail

namespace {

struct RoundOutput {
    bool satisfiable = false;
    std::vector<VarId> chosen; // in the order they were guessed
    std::unordered_map<VarId, std::string> reasons;
    std::vector<Problem> problems;
};

struct Choice {
    std::vector<VarId> candidates;
    std::string reason; // for the bundle chosen
};

// The libsolv encodings of a round, from a small part of the candidates to all of them.
//
// OLM builds every variable reachable from the request: every candidate of every requirement,
// transitively, which on a large catalog is most of it. A solution found among fewer candidates
// is a solution among all of them (the left-out candidates are simply not installed), so kpkg
// first encodes, besides the requests' own candidates and the bundles already chosen, only the
// first candidate of every requirement, transitively; then the first 4, the first 16, and
// finally all of them, moving on only when a question cannot be answered "yes" at the smaller
// size. "No" is only believed from the encoding of all candidates.
class Stages {
public:
    Stages(Universe& u, std::vector<VarId> roots, bool complete)
        : u_(u), roots_(std::move(roots)), level_(complete ? std::size(limits) - 1 : 0) {}

    static constexpr std::size_t limits[] = {1, 4, 16, static_cast<std::size_t>(-1)};

    // (Re)builds the encoding at the current level with these extra roots.
    Result<void> build(const std::unordered_set<VarId>& extra) {
        std::vector<VarId> roots = roots_;
        roots.insert(roots.end(), extra.begin(), extra.end());
        std::sort(roots.begin() + static_cast<long>(roots_.size()), roots.end());
        std::vector<VarId> closure;
        std::unordered_set<VarId> seen;
        if (auto r = u_.close(roots, closure, seen, limits[level_]); !r) return r;
        auto engine = solv::Engine::create();
        if (!engine) return fail(std::move(engine).error());
        enc_.reset();
        engine_ = std::make_unique<solv::Engine>(std::move(engine).take());
        enc_ = std::make_unique<Encoding>(u_, *engine_);
        enc_->build(std::move(closure));
        return {};
    }
    // The next level; false when already at all candidates.
    bool escalate() {
        if (complete()) return false;
        ++level_;
        return true;
    }
    bool complete() const { return level_ + 1 == std::size(limits); }
    Encoding& enc() { return *enc_; }

private:
    Universe& u_;
    std::vector<VarId> roots_;
    std::size_t level_;
    std::unique_ptr<solv::Engine> engine_;
    std::unique_ptr<Encoding> enc_;
};

// The jobs of a round on the current encoding: installed CSVs without a subscription stay,
// each subscription gets one of its candidates, the guesses so far are installed.
std::vector<solv::Job> jobs_of(Encoding& enc, const std::vector<VarId>& mandatory,
                               const std::vector<std::vector<VarId>>& offers,
                               const std::vector<VarId>& assumed) {
    std::vector<solv::Job> jobs;
    for (VarId m : mandatory)
        jobs.push_back(enc.install(m));
    for (const auto& o : offers)
        jobs.push_back(enc.one_of(o));
    for (VarId v : assumed)
        jobs.push_back(enc.install(v));
    return jobs;
}

// OLM's choice procedure (see the top of this file). On return, stages.enc() is the encoding
// of the final solve (of all candidates when there is no solution).
Result<void> choose(Stages& stages, const std::vector<VarId>& mandatory,
                    const std::vector<SubState>& subs,
                    const std::vector<std::vector<VarId>>& offers, RoundOutput& out) {
    Universe& u = stages.enc().universe();
    std::unordered_set<VarId> assumed(mandatory.begin(), mandatory.end());
    std::vector<VarId> order;
    std::unordered_set<VarId> model; // the last solution found, as variables
    auto solve_with = [&](const std::vector<VarId>& extra) {
        std::vector<VarId> a = order;
        a.insert(a.end(), extra.begin(), extra.end());
        return stages.enc().engine().solve(jobs_of(stages.enc(), mandatory, offers, a));
    };
    auto set_model = [&](const solv::Outcome& o) {
        model.clear();
        for (int s : o.installed)
            model.insert(stages.enc().var(s));
    };
    // Is there a solution at all?
    for (;;) {
        auto first = solve_with({});
        if (first.satisfiable) {
            set_model(first);
            break;
        }
        if (!stages.escalate()) return {};
        if (auto r = stages.build(assumed); !r) return r;
    }

    std::deque<Choice> queue;
    auto guess = [&](VarId v, std::string reason) {
        assumed.insert(v);
        order.push_back(v);
        out.chosen.push_back(v);
        out.reasons.emplace(v, std::move(reason));
        for (std::uint32_t l : u.var(v).lists)
            queue.push_back({u.list(l).vars, "required by " + u.info(v).name + " for " +
                                                 u.index().dep(u.list(l).dep).words()});
    };
    // The anchors: installed CSVs without a subscription, then the subscriptions.
    for (VarId m : mandatory)
        guess(m, "installed");
    order.clear(); // the mandatory ones are jobs of their own
    for (std::size_t i = 0; i < subs.size(); ++i)
        queue.push_back({offers[i], subs[i].reason});

    // Does installing x with the guesses so far leave a solution?
    auto leaves_solution = [&](VarId x) -> Result<bool> {
        for (;;) {
            if (!stages.enc().has(x)) {
                std::unordered_set<VarId> extra = assumed;
                extra.insert(x);
                if (auto r = stages.build(extra); !r) return fail(std::move(r).error());
                if (!stages.enc().has(x)) return false; // not installable at all
            }
            if (stages.enc().dead(x)) return false;
            if (model.count(x)) return true;
            auto r = solve_with({x});
            if (r.satisfiable) {
                set_model(r);
                return true;
            }
            if (!stages.escalate()) return false;
            std::unordered_set<VarId> extra = assumed;
            extra.insert(x);
            if (auto b = stages.build(extra); !b) return fail(std::move(b).error());
        }
    };

    while (!queue.empty()) {
        Choice c = std::move(queue.front());
        queue.pop_front();
        std::vector<VarId> cands;
        for (VarId v : c.candidates)
            if (u.var(v).usable() && !u.var(v).broken) cands.push_back(v);
        if (std::any_of(cands.begin(), cands.end(), [&](VarId v) { return assumed.count(v); }))
            continue;
        bool done = false;
        for (VarId x : cands) {
            auto ok = leaves_solution(x);
            if (!ok) return fail(std::move(ok).error());
            if (!*ok) continue;
            guess(x, c.reason);
            done = true;
            break;
        }
        if (!done && !cands.empty())
            return fail(Error::internal("no candidate of a choice leaves a solution although "
                                        "the request is satisfiable"));
    }

    // OLM then keeps its guesses and drops everything else: what libsolv installs beyond them
    // is locked out, and the guesses must still be a solution on their own.
    Encoding& enc = stages.enc();
    std::vector<solv::Job> jobs = jobs_of(enc, mandatory, offers, order);
    auto final_outcome = enc.engine().solve(jobs);
    if (!final_outcome.satisfiable)
        return fail(Error::internal("the chosen bundles are not a solution"));
    std::size_t before = jobs.size();
    for (int s : final_outcome.installed)
        if (!assumed.count(enc.var(s))) jobs.push_back(enc.lock(enc.var(s)));
    if (jobs.size() > before && !enc.engine().solve(jobs).satisfiable)
        return fail(Error::internal("the chosen bundles need more than themselves"));
    out.satisfiable = true;
    return {};
}

struct RoundInput {
    std::vector<InstalledState> installed;
    std::vector<SubState> subs;
};

// One round. The universe is kept in `keep` for the caller to read the chosen variables.
// With --debug-testcase every round writes its final solve; the last one written stays.
Result<RoundOutput> run_round(Index& index, RoundInput& in, std::unique_ptr<Universe>& keep,
                              const Options& opts) {
    keep = std::make_unique<Universe>(index, in.installed);
    Universe& u = *keep;
    std::vector<std::vector<VarId>> offers;
    for (const auto& s : in.subs) {
        auto o = u.offer(s.sub, s.current, false);
        if (!o) return fail(std::move(o).error());
        offers.push_back(std::move(o->vars));
    }
    std::vector<VarId> mandatory;
    for (std::uint32_t i = 0; i < u.installed().size(); ++i)
        if (!u.installed()[i].subscribed) mandatory.push_back(u.installed_var(i));
    std::vector<VarId> roots = mandatory;
    for (const auto& o : offers)
        roots.insert(roots.end(), o.begin(), o.end());
    Stages stages(u, roots, false);
    if (auto r = stages.build({}); !r) return fail(std::move(r).error());

    RoundOutput out;
    if (auto r = choose(stages, mandatory, in.subs, offers, out); !r)
        return fail(std::move(r).error());
    Encoding& enc = stages.enc();
    if (!out.satisfiable) {
        ExplainInput ei;
        ei.subs = &in.subs;
        ei.offers = &offers;
        ei.mandatory = mandatory;
        out.problems = explain(enc, ei);
    }
    if (!opts.debug_testcase.empty()) {
        std::vector<VarId> chosen;
        for (VarId v : out.chosen)
            if (std::find(mandatory.begin(), mandatory.end(), v) == mandatory.end())
                chosen.push_back(v);
        if (auto r = enc.engine().write_testcase(jobs_of(enc, mandatory, offers, chosen),
                                                 opts.debug_testcase);
            !r)
            return fail(std::move(r).error());
    }
    return out;
}

Selected selected_of(Universe& u, VarId v, const std::string& reason) {
    const BundleInfo& bi = u.info(v);
    Selected s;
    s.package = bi.package;
    s.bundle = bi.name;
    s.version = bi.version_text;
    s.channel = u.channel_name(v);
    s.catalog = u.catalog_name(v);
    s.image = bi.image;
    s.reason = reason;
    return s;
}

// olm.deprecations of a selected bundle (catalog c, channel, bundle).
void deprecation_warnings(Index& index, std::uint32_t c, std::uint32_t channel,
                          std::uint32_t bundle, std::vector<std::string>& out) {
    if (c == none) return;
    const model::Catalog& cat = index.cat(c);
    const BundleInfo& bi = index.info(c, bundle);
    const model::Bundle& bu = cat.bundles[bundle];
    auto id = [&](std::string_view s) { return cat.strings.find(s).value_or(0); };
    std::string m;
    if (!(m = index.deprecation(c, bu.package, id("olm.package"), 0)).empty())
        out.push_back("package " + bi.package + " is deprecated: " + m);
    if (!(m = index.deprecation(c, bu.package, id("olm.channel"), cat.channels[channel].name))
             .empty())
        out.push_back("channel " + cat.string(cat.channels[channel].name) + " of package " +
                      bi.package + " is deprecated: " + m);
    if (!bi.deprecated.empty())
        out.push_back("bundle " + bi.name + " is deprecated: " + bi.deprecated);
}

} // namespace

Result<Resolution> resolve(const std::vector<CatalogSource>& catalogs, const Request& request) {
    const Options& opts = request.options;
    if (request.subscriptions.empty() && !(opts.upgrade && !request.installed.empty()))
        return fail(Error::usage(
            opts.upgrade ? "nothing to resolve: no request, and --upgrade has no installed CSV"
                         : "nothing to resolve: give a request PKG[:CHANNEL][@RANGE][/CATALOG], or "
                           "--upgrade with --installed"));
    {
        std::map<std::string, std::string> seen;
        for (const auto& s : request.subscriptions) {
            auto [it, fresh] = seen.emplace(s.package, s.spec);
            if (!fresh)
                return fail(Error::usage("conflicting requests " + text::quote(it->second) +
                                         " and " + text::quote(s.spec) + ": package " + s.package +
                                         " is requested twice (one subscription "
                                         "per package)"));
        }
    }
    Index index(catalogs, opts.exclude_deprecated);
    Resolution res;
    auto states = installed_states(index, request.installed, res.warnings);
    if (!states) return fail(std::move(states).error());

    RoundInput in;
    in.installed = std::move(*states);
    std::vector<Subscription> subs = request.subscriptions;
    // Starting CSVs go to the request of their package.
    for (const auto& csv : opts.starting_csvs) {
        std::vector<Subscription*> owners;
        for (auto& s : subs)
            for (const auto& c : catalogs) {
                if (!s.source.empty() && c.name != s.source) continue;
                auto pkg = c.catalog->strings.find(s.package);
                auto name = c.catalog->strings.find(csv);
                if (pkg && name && c.catalog->find_bundle(*pkg, *name) != model::npos32) {
                    owners.push_back(&s);
                    break;
                }
            }
        if (owners.empty())
            return fail(Error::invalid("--starting-csv " + text::quote(csv) +
                                       " is not a bundle of any requested package"));
        if (owners.size() > 1 || !owners.front()->starting_csv.empty())
            return fail(Error::usage("--starting-csv " + text::quote(csv) +
                                     ": more than one starting CSV for request " +
                                     text::quote(owners.front()->spec)));
        owners.front()->starting_csv = csv;
    }
    {
        Universe probe(index, {});
        for (const auto& s : subs)
            if (auto r = probe.check(s); !r) return fail(std::move(r).error());
    }
    std::sort(subs.begin(), subs.end(),
              [](const Subscription& a, const Subscription& b) { return a.package < b.package; });
    std::map<std::string, Subscription> requested; // kept for the later rounds
    for (const auto& s : subs) {
        requested[s.package] = s;
        SubState st;
        st.sub = s;
        st.reason = "requested";
        for (std::uint32_t i = 0; i < in.installed.size(); ++i)
            if (in.installed[i].csv.package == s.package) {
                st.current = i;
                st.reason = "upgrade of installed " + in.installed[i].csv.name + " (requested)";
                in.installed[i].subscribed = true;
                if (st.sub.channel.empty()) st.sub.channel = in.installed[i].csv.channel;
            }
        in.subs.push_back(std::move(st));
    }
    if (opts.upgrade)
        for (std::uint32_t i = 0; i < in.installed.size(); ++i) {
            if (in.installed[i].subscribed) continue;
            InstalledState& st = in.installed[i];
            st.subscribed = true;
            SubState sub;
            sub.sub.package = st.csv.package;
            sub.sub.channel = st.csv.channel;
            sub.sub.spec = st.csv.package + (st.csv.channel.empty() ? "" : ":" + st.csv.channel);
            sub.current = i;
            sub.reason = "upgrade of installed " + st.csv.name;
            in.subs.push_back(std::move(sub));
        }
    std::sort(in.subs.begin(), in.subs.end(),
              [](const SubState& a, const SubState& b) { return a.sub.package < b.sub.package; });

    // What each package went through: the original installed CSV, the reason, the hops.
    struct Track {
        std::string original; // installed CSV before the first round ("" for a new install)
        std::string reason;
        std::vector<std::string> path;
        Selected last;
        std::uint32_t catalog = none, channel = none, bundle = none;
    };
    std::map<std::string, Track> tracks;
    std::set<std::string> states_seen;
    std::size_t max_rounds = 1;
    for (const auto& c : catalogs)
        max_rounds += c.catalog->bundles.size();
    for (std::size_t round = 0;; ++round) {
        std::unique_ptr<Universe> keep;
        auto out = run_round(index, in, keep, opts);
        if (!out) return fail(std::move(out).error());
        Universe* u = keep.get();
        if (!out->satisfiable) {
            if (round == 0) {
                res.satisfiable = false;
                res.problems = std::move(out->problems);
                return res;
            }
            return fail(Error::internal("an upgrade round found no solution although staying "
                                        "put is one"));
        }
        bool moved = false;
        for (VarId v : out->chosen) {
            if (u->var(v).catalog == none) continue; // an installed CSV that stays
            const BundleInfo& bi = u->info(v);
            Selected sel = selected_of(*u, v, out->reasons[v]);
            std::uint32_t slot = none;
            for (std::uint32_t i = 0; i < in.installed.size(); ++i)
                if (in.installed[i].csv.package == bi.package) slot = i;
            auto [it, fresh] = tracks.try_emplace(bi.package);
            Track& t = it->second;
            if (fresh) {
                t.reason = sel.reason;
                if (slot != none) t.original = in.installed[slot].csv.name;
            }
            t.path.push_back(bi.name);
            t.last = sel;
            t.catalog = u->var(v).catalog;
            t.channel = u->var(v).channel;
            t.bundle = bi.bundle;
            InstalledState st;
            st.csv.package = bi.package;
            st.csv.name = bi.name;
            st.csv.version = bi.version_text;
            st.csv.catalog = sel.catalog;
            st.csv.channel = sel.channel;
            st.subscribed = true;
            st.info = u->var(v).info;
            if (slot != none) {
                moved = true;
                in.installed[slot] = std::move(st);
            } else {
                in.installed.push_back(std::move(st));
            }
        }
        if (opts.one_hop || !moved) break;
        // The next round: everything now installed is subscribed and may move on.
        std::sort(in.installed.begin(), in.installed.end(),
                  [](const InstalledState& a, const InstalledState& b) {
                      return a.csv.package < b.csv.package;
                  });
        in.subs.clear();
        for (std::uint32_t i = 0; i < in.installed.size(); ++i) {
            if (!in.installed[i].subscribed) continue;
            const InstalledState& st = in.installed[i];
            SubState sub;
            if (auto it = requested.find(st.csv.package); it != requested.end()) {
                // A request keeps its channel and range at every step.
                sub.sub = it->second;
                sub.sub.starting_csv.clear();
            } else {
                sub.sub.package = st.csv.package;
                sub.sub.channel = st.csv.channel;
                sub.sub.spec = st.csv.package;
            }
            sub.current = i;
            sub.reason = "upgrade of installed " + st.csv.name;
            in.subs.push_back(std::move(sub));
        }
        std::string key;
        for (const auto& st : in.installed)
            key += st.csv.name + "\n";
        if (!states_seen.insert(key).second || round + 1 >= max_rounds)
            return fail(Error::invalid("upgrades go round in a cycle (replaces, skips and "
                                       "skipRange lead back to a version already passed)"));
    }

    std::set<std::string> changed;
    for (auto& [package, t] : tracks) {
        Selected s = t.last;
        s.reason = t.reason;
        s.replaces = t.original;
        if (!t.original.empty() || t.path.size() > 1) s.path = t.path;
        res.selected.push_back(std::move(s));
        changed.insert(package);
        deprecation_warnings(index, t.catalog, t.channel, t.bundle, res.warnings);
    }
    for (const auto& csv : request.installed)
        if (!changed.count(csv.package)) res.unchanged.push_back(csv.name);
    std::sort(res.unchanged.begin(), res.unchanged.end());
    res.satisfiable = true;
    return res;
}

const char* status_name(PackageReport::Status s) {
    switch (s) {
    case PackageReport::Status::installable:
        return "installable";
    case PackageReport::Status::unsatisfiable:
        return "unsatisfiable";
    case PackageReport::Status::invalid:
        return "invalid";
    }
    return "invalid";
}

Result<std::vector<PackageReport>> resolve_all_packages(const std::vector<CatalogSource>& catalogs,
                                                        const Options& options) {
    Index index(catalogs, options.exclude_deprecated);
    Universe u(index, {});
    std::set<std::string> names;
    for (const auto& c : catalogs)
        for (const auto& [name, pi] : c.catalog->by_package())
            if (pi.package != model::npos32 || !pi.channels.empty())
                names.insert(c.catalog->string(name));

    std::vector<PackageReport> reports;
    std::vector<std::vector<VarId>> offers;
    std::vector<VarId> closure;
    std::unordered_set<VarId> seen;
    for (const auto& name : names) {
        PackageReport rep;
        rep.package = name;
        Subscription s;
        s.spec = name;
        s.package = name;
        auto o = u.offer(s, none, false);
        std::vector<VarId> out;
        Result<void> closed = o ? u.close(o->vars, out, seen) : Result<void>(o.error());
        if (!closed) {
            rep.status = PackageReport::Status::invalid;
            rep.problems.push_back({closed.error().str(), {}});
            offers.emplace_back();
        } else {
            closure.insert(closure.end(), out.begin(), out.end());
            offers.push_back(std::move(o->vars));
        }
        reports.push_back(std::move(rep));
    }
    // One encoding of every candidate reachable from any package, shared by all of them.
    Stages stages(u, closure, true);
    if (auto r = stages.build({}); !r) return fail(std::move(r).error());
    for (std::size_t i = 0; i < reports.size(); ++i) {
        PackageReport& rep = reports[i];
        if (rep.status == PackageReport::Status::invalid) continue;
        std::vector<SubState> subs(1);
        subs[0].sub.spec = rep.package;
        subs[0].sub.package = rep.package;
        subs[0].reason = "requested";
        std::vector<std::vector<VarId>> one{offers[i]};
        RoundOutput out;
        if (auto r = choose(stages, {}, subs, one, out); !r) return fail(std::move(r).error());
        Encoding& enc = stages.enc();
        if (!out.satisfiable) {
            rep.status = PackageReport::Status::unsatisfiable;
            ExplainInput ei;
            ei.subs = &subs;
            ei.offers = &one;
            rep.problems = explain(enc, ei);
            continue;
        }
        std::vector<Selected> sel;
        for (VarId v : out.chosen) {
            sel.push_back(selected_of(u, v, out.reasons[v]));
            deprecation_warnings(index, u.var(v).catalog, u.var(v).channel, u.info(v).bundle,
                                 rep.warnings);
        }
        std::sort(sel.begin(), sel.end(),
                  [](const Selected& a, const Selected& b) { return a.package < b.package; });
        rep.selected = std::move(sel);
    }
    return reports;
}

} // namespace kpkg::resolve
