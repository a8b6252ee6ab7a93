// The differential test: random small catalogs and requests, each resolved by kpkg and by a
// brute-force solver written here from OLM's rules (channel order from the head, skipped entries
// never offered, candidate order, one bundle per package, one provider per API, olm.deprecated
// never chosen, OLM's breadth-first choice of the first candidate that leaves a solution).
// Requirements are olm.gvk.required, olm.package.required and olm.constraint (any of two APIs).
//
// The brute force enumerates every assignment (at most one bundle per package), so it is an
// independent oracle: the two must agree on satisfiability, kpkg's answer must obey every
// constraint, and it must be exactly the preferred one.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "world.hpp"

using namespace kpkg;
using kpkg::test::Cat;
using kpkg::test::World;

namespace {

const char* const kinds[] = {"K0", "K1", "K2"};

struct Bundle {
    std::string package, name;
    int version = 0;            // major version; the version is "<v>.0.0"
    int provides = -1;          // index into kinds, -1 none
    std::vector<int> requires_; // API requirements (kinds)
    std::vector<std::pair<std::string, std::string>> pkg_requires; // package, range
    std::vector<std::pair<int, int>> any_requires; // olm.constraint: any of two APIs
    bool deprecated = false;
};

struct Channel {
    std::string package, name;
    std::vector<std::string> entries;         // in replaces order, oldest first
    std::map<std::string, std::string> skips; // entry -> entry it skips
};

struct Catalog {
    std::string name;
    int priority = 0;
    std::vector<Bundle> bundles;
    std::vector<Channel> channels;
    std::map<std::string, std::string> default_channel;
};

// A variable: a bundle offered through a channel of a catalog.
struct Var {
    int catalog, channel, bundle;
    bool operator<(const Var& o) const {
        return std::tie(catalog, channel, bundle) < std::tie(o.catalog, o.channel, o.bundle);
    }
    bool operator==(const Var& o) const = default;
};

struct Model {
    std::vector<Catalog> cats;
    std::vector<std::string> packages;

    const Bundle& bundle(const Var& v) const { return cats[v.catalog].bundles[v.bundle]; }
    int bundle_index(int c, const std::string& name) const {
        for (int i = 0; i < static_cast<int>(cats[c].bundles.size()); ++i)
            if (cats[c].bundles[i].name == name) return i;
        return -1;
    }
    // OLM's order inside a channel: from the head along replaces, skipped entries left out.
    std::vector<int> offered(int c, int ch) const {
        const Channel& chan = cats[c].channels[ch];
        std::set<std::string> skipped;
        for (const auto& [from, to] : chan.skips)
            skipped.insert(to);
        std::vector<int> out;
        for (auto it = chan.entries.rbegin(); it != chan.entries.rend(); ++it)
            if (!skipped.count(*it)) out.push_back(bundle_index(c, *it));
        return out;
    }
    std::vector<int> catalog_order(int preferred) const {
        std::vector<int> order;
        for (int i = 0; i < static_cast<int>(cats.size()); ++i)
            order.push_back(i);
        std::sort(order.begin(), order.end(), [&](int a, int b) {
            if (cats[a].priority != cats[b].priority) return cats[a].priority > cats[b].priority;
            return cats[a].name < cats[b].name;
        });
        if (preferred >= 0) {
            order.erase(std::find(order.begin(), order.end(), preferred));
            order.insert(order.begin(), preferred);
        }
        return order;
    }
    bool is_default(int c, int ch) const {
        const Channel& chan = cats[c].channels[ch];
        auto it = cats[c].default_channel.find(chan.package);
        return it != cats[c].default_channel.end() && it->second == chan.name;
    }
    std::vector<Var> request(const std::string& package) const {
        std::vector<Var> out;
        for (int c : catalog_order(-1)) {
            std::vector<int> chans;
            for (int ch = 0; ch < static_cast<int>(cats[c].channels.size()); ++ch)
                if (cats[c].channels[ch].package == package) chans.push_back(ch);
            std::sort(chans.begin(), chans.end(), [&](int a, int b) {
                if (is_default(c, a) != is_default(c, b)) return is_default(c, a);
                return cats[c].channels[a].name < cats[c].channels[b].name;
            });
            for (int ch : chans)
                for (int b : offered(c, ch))
                    out.push_back({c, ch, b});
        }
        return out;
    }
    using Pred = std::function<bool(const Bundle&)>;
    static Pred api(int kind) {
        return [kind](const Bundle& b) { return b.provides == kind; };
    }
    static Pred package_in(const std::pair<std::string, std::string>& pr) {
        return [pr](const Bundle& b) {
            if (b.package != pr.first) return false;
            int bound = std::stoi(pr.second.substr(pr.second[0] == '>' ? 2 : 1));
            return pr.second[0] == '>' ? b.version >= bound : b.version < bound;
        };
    }
    static Pred any_api(std::pair<int, int> kinds) {
        return [kinds](const Bundle& b) {
            return b.provides == kinds.first || b.provides == kinds.second;
        };
    }
    std::vector<Var> dependency(int preferred, const Pred& satisfies) const {
        std::vector<Var> out;
        for (int c : catalog_order(preferred)) {
            std::vector<int> groups;
            for (int ch = 0; ch < static_cast<int>(cats[c].channels.size()); ++ch)
                for (const auto& e : cats[c].channels[ch].entries)
                    if (satisfies(cats[c].bundles[bundle_index(c, e)])) {
                        groups.push_back(ch);
                        break;
                    }
            std::sort(groups.begin(), groups.end(), [&](int a, int b) {
                if (is_default(c, a) != is_default(c, b)) return is_default(c, a);
                const Channel& ca = cats[c].channels[a];
                const Channel& cb = cats[c].channels[b];
                if (ca.package != cb.package) return ca.package < cb.package;
                return ca.name < cb.name;
            });
            for (int ch : groups)
                for (int b : offered(c, ch))
                    if (satisfies(cats[c].bundles[b])) out.push_back({c, ch, b});
        }
        return out;
    }
    // Every requirement of v with its candidates, in property order (APIs, packages, constraints).
    std::vector<std::vector<Var>> deps(const Var& v) const {
        std::vector<std::vector<Var>> out;
        const Bundle& b = bundle(v);
        for (int k : b.requires_)
            out.push_back(dependency(v.catalog, api(k)));
        for (const auto& pr : b.pkg_requires)
            out.push_back(dependency(v.catalog, package_in(pr)));
        for (const auto& any : b.any_requires)
            out.push_back(dependency(v.catalog, any_api(any)));
        return out;
    }
};

bool contains(const std::vector<Var>& s, const Var& v) {
    return std::find(s.begin(), s.end(), v) != s.end();
}

// Does the set obey every constraint of the request?
std::string violation(const Model& m, const std::vector<std::string>& requests,
                      const std::vector<Var>& s) {
    std::set<std::string> pkgs;
    std::set<int> apis;
    for (const Var& v : s) {
        const Bundle& b = m.bundle(v);
        if (b.deprecated) return b.name + " is deprecated";
        if (!pkgs.insert(b.package).second) return "two bundles of " + b.package;
        if (b.provides >= 0 && !apis.insert(b.provides).second)
            return "two providers of " + std::string(kinds[b.provides]);
        auto offered = m.offered(v.catalog, v.channel);
        if (std::find(offered.begin(), offered.end(), v.bundle) == offered.end())
            return b.name + " is not offered by its channel";
        for (const auto& cands : m.deps(v))
            if (std::none_of(cands.begin(), cands.end(),
                             [&](const Var& w) { return contains(s, w); }))
                return b.name + " has a requirement without a provider";
    }
    for (const auto& r : requests) {
        auto cands = m.request(r);
        if (std::none_of(cands.begin(), cands.end(), [&](const Var& w) { return contains(s, w); }))
            return "request " + r + " is not met";
    }
    return {};
}

// Every solution: at most one variable per package, enumerated exhaustively.
std::vector<std::vector<Var>> solutions(const Model& m, const std::vector<std::string>& requests) {
    std::map<std::string, std::vector<Var>> by_package;
    for (int c = 0; c < static_cast<int>(m.cats.size()); ++c)
        for (int ch = 0; ch < static_cast<int>(m.cats[c].channels.size()); ++ch)
            for (int b : m.offered(c, ch))
                by_package[m.cats[c].bundles[b].package].push_back({c, ch, b});
    std::vector<std::vector<Var>> options;
    for (auto& [p, vars] : by_package)
        options.push_back(vars);
    std::vector<std::vector<Var>> out;
    std::vector<Var> cur;
    std::function<void(std::size_t)> rec = [&](std::size_t i) {
        if (i == options.size()) {
            if (violation(m, requests, cur).empty()) out.push_back(cur);
            return;
        }
        rec(i + 1);
        for (const Var& v : options[i]) {
            cur.push_back(v);
            rec(i + 1);
            cur.pop_back();
        }
    };
    rec(0);
    return out;
}

// OLM's breadth-first choice of the first candidate that leaves a solution.
std::vector<Var> preferred(const Model& m, std::vector<std::string> requests,
                           const std::vector<std::vector<Var>>& all) {
    std::sort(requests.begin(), requests.end());
    std::vector<Var> assumed;
    auto leaves_solution = [&](const Var& extra) {
        for (const auto& s : all) {
            if (!contains(s, extra)) continue;
            if (std::all_of(assumed.begin(), assumed.end(),
                            [&](const Var& a) { return contains(s, a); }))
                return true;
        }
        return false;
    };
    std::deque<std::vector<Var>> queue;
    for (const auto& r : requests)
        queue.push_back(m.request(r));
    while (!queue.empty()) {
        auto cands = queue.front();
        queue.pop_front();
        cands.erase(std::remove_if(cands.begin(), cands.end(),
                                   [&](const Var& v) { return m.bundle(v).deprecated; }),
                    cands.end());
        if (std::any_of(cands.begin(), cands.end(),
                        [&](const Var& v) { return contains(assumed, v); }))
            continue;
        for (const Var& x : cands)
            if (leaves_solution(x)) {
                assumed.push_back(x);
                for (auto& d : m.deps(x))
                    queue.push_back(d);
                break;
            }
    }
    return assumed;
}

Model generate(std::mt19937& rng) {
    auto roll = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    Model m;
    int npkg = 2 + roll(2);
    for (int p = 0; p < npkg; ++p)
        m.packages.push_back("p" + std::to_string(p));
    int ncat = 1 + roll(2);
    for (int c = 0; c < ncat; ++c) {
        Catalog cat;
        cat.name = "c" + std::to_string(c);
        cat.priority = roll(3) == 0 ? roll(3) : 0;
        bool any = false;
        for (const auto& p : m.packages) {
            // Later catalogs hold some of the packages (at least one: no empty catalog).
            if (c > 0 && roll(2) == 0 && (any || p != m.packages.back())) continue;
            any = true;
            int nb = 1 + roll(3);
            std::vector<std::string> names;
            for (int v = 1; v <= nb; ++v) {
                Bundle b;
                b.package = p;
                b.version = v;
                b.name = p + ".v" + std::to_string(v);
                if (roll(2) == 0) b.provides = roll(3);
                if (roll(3) == 0) b.requires_.push_back(roll(3));
                if (roll(3) == 0) {
                    std::string other = m.packages[static_cast<std::size_t>(roll(npkg))];
                    if (other != p)
                        b.pkg_requires.push_back(
                            {other, (roll(2) ? ">=" : "<") + std::to_string(1 + roll(3)) + ".0.0"});
                }
                if (roll(5) == 0) b.any_requires.push_back({roll(3), roll(3)});
                b.deprecated = roll(10) == 0;
                names.push_back(b.name);
                cat.bundles.push_back(std::move(b));
            }
            int nch = 1 + roll(2);
            for (int k = 0; k < nch; ++k) {
                Channel ch;
                ch.package = p;
                ch.name = k == 0 ? "stable" : "beta";
                for (const auto& n : names)
                    if (k == 0 || roll(3) != 0) ch.entries.push_back(n);
                if (ch.entries.empty()) ch.entries.push_back(names.back());
                for (std::size_t i = 1; i < ch.entries.size(); ++i)
                    if (roll(4) == 0) ch.skips[ch.entries[i]] = ch.entries[i - 1];
                cat.channels.push_back(std::move(ch));
            }
            cat.default_channel[p] = nch == 2 && roll(2) ? "beta" : "stable";
        }
        m.cats.push_back(std::move(cat));
    }
    return m;
}

Cat to_fbc(const Catalog& c) {
    Cat out;
    for (const auto& [p, def] : c.default_channel)
        out.package(p, def);
    for (const auto& ch : c.channels) {
        std::vector<std::string> entries;
        for (std::size_t i = 0; i < ch.entries.size(); ++i) {
            std::string e = ch.entries[i];
            if (i > 0) e += "<" + ch.entries[i - 1];
            if (auto it = ch.skips.find(ch.entries[i]); it != ch.skips.end()) e += "!" + it->second;
            entries.push_back(e);
        }
        out.channel(ch.package, ch.name, entries);
    }
    for (const auto& b : c.bundles) {
        std::vector<std::string> props;
        if (b.provides >= 0)
            props.push_back(std::string("gvk:example.com/v1/") + kinds[b.provides]);
        for (int k : b.requires_)
            props.push_back(std::string("req:example.com/v1/") + kinds[k]);
        for (const auto& [p, r] : b.pkg_requires)
            props.push_back("pkg:" + p + ":" + r);
        for (const auto& [k1, k2] : b.any_requires)
            props.push_back(std::string("constraint:{\"any\": {\"constraints\": [") +
                            "{\"gvk\": {\"group\": \"example.com\", \"version\": \"v1\", "
                            "\"kind\": \"" +
                            kinds[k1] +
                            "\"}}, {\"gvk\": {\"group\": \"example.com\", "
                            "\"version\": \"v1\", \"kind\": \"" +
                            kinds[k2] + "\"}}]}}");
        if (b.deprecated) props.push_back("deprecated");
        out.bundle(b.package, b.name, std::to_string(b.version) + ".0.0", props);
    }
    return out;
}

} // namespace

TEST(ResolveDifferential, RandomCatalogsAgainstBruteForce) {
    int satisfiable = 0, unsatisfiable = 0, with_deps = 0;
    for (unsigned seed = 1; seed <= 400; ++seed) {
        std::mt19937 rng(seed);
        Model m = generate(rng);
        World w;
        for (const auto& c : m.cats)
            w.add(c.name, to_fbc(c), c.priority);
        std::vector<std::string> requests{m.packages[rng() % m.packages.size()]};
        if (rng() % 3 == 0) {
            std::string second = m.packages[rng() % m.packages.size()];
            if (second != requests[0]) requests.push_back(second);
        }
        SCOPED_TRACE("seed " + std::to_string(seed) + ", requests " + requests[0] +
                     (requests.size() > 1 ? " " + requests[1] : ""));
        auto all = solutions(m, requests);
        auto got = w.run(requests);
        ASSERT_TRUE(got.ok()) << got.error().str();
        ASSERT_EQ(got->satisfiable, !all.empty()) << kpkg::test::explain(*got);
        if (!got->satisfiable) {
            ++unsatisfiable;
            EXPECT_FALSE(got->problems.empty());
            continue;
        }
        ++satisfiable;
        // kpkg's answer as variables of the model.
        std::vector<Var> answer;
        for (const auto& s : got->selected) {
            int c = -1;
            for (int i = 0; i < static_cast<int>(m.cats.size()); ++i)
                if (m.cats[i].name == s.catalog) c = i;
            ASSERT_GE(c, 0);
            int ch = -1;
            for (int i = 0; i < static_cast<int>(m.cats[c].channels.size()); ++i)
                if (m.cats[c].channels[i].package == s.package &&
                    m.cats[c].channels[i].name == s.channel)
                    ch = i;
            ASSERT_GE(ch, 0);
            answer.push_back({c, ch, m.bundle_index(c, s.bundle)});
        }
        if (answer.size() > requests.size()) ++with_deps;
        EXPECT_EQ(violation(m, requests, answer), "") << kpkg::test::explain(*got);
        auto expected = preferred(m, requests, all);
        std::sort(answer.begin(), answer.end());
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(answer, expected) << kpkg::test::explain(*got);
    }
    // The generator must exercise both outcomes and dependencies.
    EXPECT_GT(satisfiable, 100);
    EXPECT_GT(unsatisfiable, 10);
    EXPECT_GT(with_deps, 30);
}
