// One version per package for a graph of versioned packages, with libsolv (see versions.hpp).
#include "kpkg/resolve/versions.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <unordered_set>

#include "solv.hpp"

namespace kpkg::resolve::versions {

namespace {

std::string release(const semver::Version& v) {
    return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

// The rpm-scheme version of a candidate. A '-' inside a pre-release would split rpm's
// version-release: it becomes '_' (a separator all the same).
std::string evr(const semver::Version& v) {
    std::string s = release(v);
    if (!v.prerelease()) return s;
    s += '~';
    for (std::size_t i = 0; i < v.pre.size(); ++i) {
        if (i) s += '.';
        for (char c : v.pre[i])
            s += c == '-' ? '_' : c;
    }
    return s;
}

solv::Dep dep_of(const Requirement& r) {
    solv::Dep any{solv::Dep::Op::any, {}, {}, {}};
    for (const auto& i : r.any_of) {
        solv::Dep lo{solv::Dep::Op::ge, r.package, release(i.lo), {}};
        if (!i.hi) {
            any.parts.push_back(std::move(lo));
            continue;
        }
        solv::Dep hi{solv::Dep::Op::le, r.package, release(*i.hi), {}};
        any.parts.push_back({solv::Dep::Op::with, {}, {}, {std::move(lo), std::move(hi)}});
    }
    if (any.parts.size() == 1) return std::move(any.parts[0]);
    return any;
}

constexpr const char* root_name = "kpkg-root";

} // namespace

bool contains(const Interval& i, const semver::Version& v) {
    auto cmp3 = [](const semver::Version& a, const semver::Version& b) {
        if (a.major != b.major) return a.major < b.major ? -1 : 1;
        if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
        if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
        return 0;
    };
    const int lo = cmp3(i.lo, v);
    const bool above = v.prerelease() ? lo < 0 : lo <= 0;
    return above && (!i.hi || cmp3(v, *i.hi) <= 0);
}

Result<Outcome> solve(const Problem& problem) {
    auto created = solv::Engine::create();
    if (!created) return fail(std::move(created).error());
    solv::Engine engine = std::move(created).take();
    const auto& cands = problem.candidates;

    // Solvable 0 is the root, candidate i is solvable i + 1.
    {
        solv::SolvableSpec root;
        root.repo = "root";
        root.name = root_name;
        root.evr = "0";
        for (const auto& r : problem.requires_)
            root.relations.push_back(dep_of(r));
        engine.add(root);
    }
    for (const auto& c : cands) {
        solv::SolvableSpec s;
        s.repo = "repositories";
        s.name = c.package;
        s.evr = evr(c.version);
        for (const auto& r : c.requires_)
            s.relations.push_back(dep_of(r));
        engine.add(s);
    }
    engine.finalize();

    std::map<std::string, std::vector<std::size_t>> of_package; // in preference order
    for (std::size_t c = 0; c < cands.size(); ++c)
        of_package[cands[c].package].push_back(c);
    static const std::vector<std::size_t> no_candidates;
    auto candidates_of = [&](const std::string& package) -> const std::vector<std::size_t>& {
        auto it = of_package.find(package);
        return it == of_package.end() ? no_candidates : it->second;
    };
    auto meets = [&](std::size_t c, const Requirement& r) {
        return cands[c].package == r.package &&
               std::any_of(r.any_of.begin(), r.any_of.end(),
                           [&](const Interval& i) { return contains(i, cands[c].version); });
    };

    std::vector<std::size_t> chosen;
    std::map<std::string, std::size_t> chosen_of; // package -> its chosen candidate
    std::unordered_set<std::size_t> model;        // candidates of the last solution found
    auto jobs_with = [&](const std::vector<std::size_t>& extra) {
        std::vector<solv::Job> jobs{{solv::Job::Kind::install, {0}}};
        for (std::size_t c : chosen)
            jobs.push_back({solv::Job::Kind::install, {static_cast<int>(c + 1)}});
        for (std::size_t c : extra)
            jobs.push_back({solv::Job::Kind::install, {static_cast<int>(c + 1)}});
        return jobs;
    };
    auto remember = [&](const solv::Outcome& o) {
        model.clear();
        for (int s : o.installed)
            if (s > 0) model.insert(static_cast<std::size_t>(s - 1));
    };

    Outcome out;
    auto first = engine.solve(jobs_with({}), true);
    if (!first.satisfiable) {
        // The chain to every candidate: breadth first from the root, first requirer wins.
        std::vector<long> parent(cands.size(), -2); // -2 unreached, -1 the root
        std::deque<std::size_t> queue;
        auto reach = [&](long from, const std::vector<Requirement>& reqs) {
            for (const auto& r : reqs)
                for (std::size_t c : candidates_of(r.package))
                    if (parent[c] == -2 && meets(c, r)) {
                        parent[c] = from;
                        queue.push_back(c);
                    }
        };
        reach(-1, problem.requires_);
        while (!queue.empty()) {
            const std::size_t c = queue.front();
            queue.pop_front();
            reach(static_cast<long>(c), cands[c].requires_);
        }
        auto chain = [&](int solvable) {
            if (solvable <= 0) return problem.root;
            std::vector<std::string> labels;
            for (long c = solvable - 1; c >= 0 && labels.size() <= cands.size();
                 c = parent[static_cast<std::size_t>(c)])
                labels.push_back(cands[static_cast<std::size_t>(c)].label);
            std::string s = problem.root;
            for (auto it = labels.rbegin(); it != labels.rend(); ++it)
                s += " -> " + *it;
            return s;
        };
        auto label = [&](int solvable) {
            return solvable <= 0 ? problem.root
                                 : cands[static_cast<std::size_t>(solvable - 1)].label;
        };
        // The requirements, the root's first, then by the length of their chains; the
        // candidates that exclude each other, by package.
        std::vector<std::pair<std::size_t, std::string>> needs; // (chain length, words)
        std::map<std::string, std::set<int>> same;              // package -> solvables
        auto depth = [&](int solvable) {
            std::size_t n = 0;
            for (long c = solvable - 1; c >= 0 && n <= cands.size();
                 c = parent[static_cast<std::size_t>(c)])
                ++n;
            return n;
        };
        for (const auto& r : first.rules) {
            switch (r.type) {
            case solv::Rule::Type::requires_:
            case solv::Rule::Type::nothing_provides: {
                if (r.source < 0) break;
                const auto& reqs = r.source == 0
                                       ? problem.requires_
                                       : cands[static_cast<std::size_t>(r.source - 1)].requires_;
                std::string what = r.dep;
                if (r.requirement >= 0 && static_cast<std::size_t>(r.requirement) < reqs.size())
                    what = reqs[static_cast<std::size_t>(r.requirement)].words;
                needs.emplace_back(depth(r.source),
                                   chain(r.source) + " requires " + what +
                                       (r.type == solv::Rule::Type::nothing_provides
                                            ? ", which no candidate meets"
                                            : std::string()));
                break;
            }
            case solv::Rule::Type::same_name:
            case solv::Rule::Type::conflicts: {
                if (r.source <= 0 || r.target <= 0) break;
                auto& set = same[cands[static_cast<std::size_t>(r.source - 1)].package];
                set.insert(r.source);
                set.insert(r.target);
                break;
            }
            case solv::Rule::Type::job:
            case solv::Rule::Type::other:
                break;
            }
        }
        std::stable_sort(needs.begin(), needs.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        std::set<std::string> seen;
        for (auto& [d, words] : needs)
            if (seen.insert(words).second) out.explanation.push_back(std::move(words));
        for (const auto& [package, set] : same) {
            std::string list;
            std::size_t k = 0;
            for (int x : set) {
                list += (k == 0 ? "" : k + 1 == set.size() ? " and " : ", ") + label(x);
                ++k;
            }
            out.explanation.push_back(list + " are versions of one package " + package +
                                      ": at most one of them");
        }
        return out;
    }
    remember(first);

    // The choice, breadth first from the root's requirements.
    std::deque<const Requirement*> queue;
    for (const auto& r : problem.requires_)
        queue.push_back(&r);
    while (!queue.empty()) {
        const Requirement& r = *queue.front();
        queue.pop_front();
        if (auto it = chosen_of.find(r.package); it != chosen_of.end() && meets(it->second, r))
            continue;
        bool done = false;
        for (std::size_t x : candidates_of(r.package)) {
            if (done) break;
            if (!meets(x, r)) continue;
            if (!model.count(x)) {
                auto o = engine.solve(jobs_with({x}));
                if (!o.satisfiable) continue;
                remember(o);
            }
            chosen.push_back(x);
            chosen_of.emplace(cands[x].package, x);
            for (const auto& next : cands[x].requires_)
                queue.push_back(&next);
            done = true;
        }
        if (!done)
            return fail(Error::internal("no candidate for " + r.words +
                                        " leaves a solution although there is one"));
    }
    // Nothing beyond the choice: it must be a solution on its own.
    std::vector<solv::Job> jobs = jobs_with({});
    const std::size_t before = jobs.size();
    for (std::size_t c = 0; c < cands.size(); ++c)
        if (std::find(chosen.begin(), chosen.end(), c) == chosen.end())
            jobs.push_back({solv::Job::Kind::lock, {static_cast<int>(c + 1)}});
    if (jobs.size() > before && !engine.solve(jobs).satisfiable)
        return fail(Error::internal("the chosen versions need more than themselves"));
    std::sort(chosen.begin(), chosen.end());
    out.satisfiable = true;
    out.chosen = std::move(chosen);
    return out;
}

} // namespace kpkg::resolve::versions
