// kpkg upgrade-path: OLM's hops from an installed version, or the fewest hops.
#include "kpkg/resolve/upgrade_path.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "kpkg/core/text.hpp"
#include "nodes.hpp"
#include "universe.hpp"

namespace kpkg::resolve {

using namespace detail;

namespace {

struct Found {
    std::string name; // "" when only a version is known
    std::string version;
    std::string catalog; // the catalog it was found in ("" when not found)
};

// A bundle of the package by name, or else a version.
Result<Found> find(Index& index, const std::string& package, const std::string& source,
                   const std::string& what, const char* flag) {
    // The first bundle of the package, in catalog order, for which `pred` holds.
    auto first = [&](auto pred) -> std::optional<Found> {
        for (std::uint32_t c : index.order()) {
            if (!source.empty() && index.catalogs()[c].name != source) continue;
            const auto* pi = index.cat(c).package_info(package);
            if (pi == nullptr) continue;
            for (std::uint32_t b : pi->bundles) {
                const BundleInfo& bi = index.info(c, b);
                if (pred(bi)) return Found{bi.name, bi.version_text, index.catalogs()[c].name};
            }
        }
        return std::nullopt;
    };
    std::vector<std::string> names;
    auto by_name = first([&](const BundleInfo& bi) {
        names.push_back(bi.name);
        return bi.name == what;
    });
    if (by_name) return *by_name;
    if (auto v = semver::Version::parse(what)) {
        auto by_version = first([&](const BundleInfo& bi) {
            return bi.version && semver::compare(*bi.version, *v) == 0;
        });
        if (by_version) return *by_version;
        return Found{"", v->str(), source};
    }
    Error e = unknown_name("bundle", what, names, " for " + std::string(flag));
    e.message += " (give a bundle of package " + package + " or a semantic version)";
    return fail(std::move(e));
}

bool matches(const Found& target, const std::string& name, const std::string& version) {
    if (!target.name.empty()) return target.name == name;
    auto a = semver::Version::parse(target.version);
    auto b = semver::Version::parse(version);
    return a && b && semver::compare(*a, *b) == 0;
}

// One hop's candidates from `cur`, in OLM's order, with the edge that offers each.
struct Hop {
    Found next;
    UpgradeStep step;
};

Result<std::vector<Hop>> hops(Index& index, const Subscription& sub, const Found& cur) {
    InstalledState st;
    st.csv.package = sub.package;
    st.csv.name = cur.name;
    st.csv.version = cur.version;
    st.csv.catalog = cur.catalog;
    st.subscribed = true;
    st.info = index.add_unknown(sub.package, cur.name, cur.version);
    Universe u(index, {st});
    auto offer = u.offer(sub, 0, false);
    if (!offer) return fail(std::move(offer).error());
    std::optional<semver::Version> cur_v;
    if (auto v = semver::Version::parse(cur.version)) cur_v = std::move(v).take();
    std::vector<Hop> out;
    for (VarId v : offer->vars) {
        const Var& x = u.var(v);
        if (x.catalog == none) continue; // staying put
        const BundleInfo& bi = u.info(v);
        const model::Catalog& cat = index.cat(x.catalog);
        const model::Channel& ch = cat.channels[x.channel];
        Hop h;
        h.next = Found{bi.name, bi.version_text, index.catalogs()[x.catalog].name};
        h.step.bundle = bi.name;
        h.step.version = bi.version_text;
        h.step.channel = cat.string(ch.name);
        h.step.catalog = h.next.catalog;
        for (const auto& e : cat.entries_of(ch)) {
            if (cat.str(e.name) != bi.name) continue;
            if (!cur.name.empty() && cat.str(e.replaces) == cur.name) {
                h.step.edge = "replaces";
                h.step.detail = "replaces " + cur.name;
                break;
            }
            bool skips = false;
            for (model::Str s : cat.skips_of(e))
                skips |= !cur.name.empty() && cat.str(s) == cur.name;
            if (skips) {
                h.step.edge = "skips";
                h.step.detail = "skips " + cur.name;
                break;
            }
            h.step.edge = "skipRange";
            h.step.detail = "skipRange " + cat.string(e.skip_range) + " contains " + cur.version;
            break;
        }
        out.push_back(std::move(h));
    }
    return out;
}

// Identity of a bundle (or version) for the walks' visited sets.
std::string key(const Found& f) {
    return f.catalog + "\n" + f.name + "\n" + f.version;
}

std::string who(const Found& f) {
    return f.name.empty() ? "version " + f.version : f.name + " (" + f.version + ")";
}

} // namespace

Result<UpgradePath> upgrade_path(const std::vector<CatalogSource>& catalogs,
                                 const UpgradePathRequest& req) {
    Index index(catalogs, false);
    Subscription sub;
    sub.package = req.package;
    sub.channel = req.channel;
    sub.source = req.source;
    sub.spec = req.package + (req.channel.empty() ? "" : ":" + req.channel) +
               (req.source.empty() ? "" : "/" + req.source);
    {
        Universe probe(index, {});
        if (auto r = probe.check(sub); !r) return fail(std::move(r).error());
    }
    auto from = find(index, req.package, req.source, req.from, "--from");
    if (!from) return fail(std::move(from).error());
    std::optional<Found> to;
    if (!req.to.empty()) {
        auto t = find(index, req.package, req.source, req.to, "--to");
        if (!t) return fail(std::move(t).error());
        to = std::move(*t);
    }

    UpgradePath out;
    out.package = req.package;
    out.from = from->name;
    out.from_version = from->version;
    if (to) out.to = to->name.empty() ? to->version : to->name;

    // OLM's walk: the first candidate at every hop, until none or the target.
    std::vector<UpgradeStep> walk;
    Found cur = *from;
    std::set<std::string> seen{key(cur)};
    bool walk_reached = to && matches(*to, cur.name, cur.version);
    while (!walk_reached) {
        auto h = hops(index, sub, cur);
        if (!h) return fail(std::move(h).error());
        if (h->empty()) break;
        Hop& first = h->front();
        if (!seen.insert(key(first.next)).second)
            return fail(Error::invalid("the upgrades of package " + req.package +
                                       " go round in a cycle: " + first.next.name +
                                       " comes back after " + cur.name));
        walk.push_back(first.step);
        cur = first.next;
        walk_reached = to && matches(*to, cur.name, cur.version);
    }

    const bool walked = !walk.empty();
    if (!req.shortest) {
        out.steps = std::move(walk);
        out.reached = !to || walk_reached;
    } else {
        // Breadth first over every upgrade edge, candidates in OLM's order at each node.
        Found target = to ? *to : cur;
        struct Node {
            Found at;
            long parent = -1;
            UpgradeStep step;
        };
        std::vector<Node> nodes{{*from, -1, {}}};
        std::set<std::string> visited{key(*from)};
        long found = matches(target, from->name, from->version) ? 0 : -1;
        for (std::size_t i = 0; i < nodes.size() && found < 0; ++i) {
            auto h = hops(index, sub, nodes[i].at);
            if (!h) return fail(std::move(h).error());
            for (auto& hop : *h) {
                if (!visited.insert(key(hop.next)).second) continue;
                nodes.push_back({hop.next, static_cast<long>(i), hop.step});
                if (matches(target, hop.next.name, hop.next.version)) {
                    found = static_cast<long>(nodes.size() - 1);
                    break;
                }
            }
        }
        out.reached = found >= 0;
        for (long n = found; n > 0; n = nodes[static_cast<std::size_t>(n)].parent)
            out.steps.insert(out.steps.begin(), nodes[static_cast<std::size_t>(n)].step);
    }

    if (!out.reached) {
        Problem p{"no upgrade path leads from " + who(*from) + " to " + who(*to), {}};
        if (!walked)
            p.children.push_back({"nothing replaces or skips " + who(*from) +
                                      ", and no skipRange contains its version",
                                  {}});
        else
            p.children.push_back({"OLM's upgrades end at " + who(cur) +
                                      ": nothing replaces or skips it, and no skipRange "
                                      "contains its version",
                                  {}});
        auto fv = semver::Version::parse(from->version);
        auto tv = semver::Version::parse(to->version);
        if (fv && tv && semver::compare(*tv, *fv) <= 0)
            p.children.push_back({who(*to) + " is not newer than " + who(*from), {}});
        // The target may be in the channels but never offered.
        for (std::uint32_t c : index.order()) {
            if (!req.source.empty() && index.catalogs()[c].name != req.source) continue;
            const model::Catalog& cat = index.cat(c);
            const auto* pi = cat.package_info(req.package);
            if (pi == nullptr || to->name.empty()) continue;
            for (std::uint32_t b : pi->bundles) {
                if (cat.str(cat.bundles[b].name) != to->name) continue;
                for (std::uint32_t ch : index.channels_of(c, b)) {
                    if (!req.channel.empty() && cat.str(cat.channels[ch].name) != req.channel)
                        continue;
                    std::string why = index.not_offered(c, ch, b);
                    if (!why.empty()) p.children.push_back({to->name + " is " + why, {}});
                }
            }
        }
        out.problems.push_back(std::move(p));
    }
    return out;
}

io::Node upgrade_path_node(const UpgradePath& p) {
    io::Node n = io::Node::map();
    n.set("package", io::Node::string(p.package));
    io::Node from = io::Node::map();
    from.set("bundle", io::Node::string(p.from));
    from.set("version", io::Node::string(p.from_version));
    n.set("from", std::move(from));
    n.set("to", io::Node::string(p.to));
    n.set("reached", io::Node::boolean(p.reached));
    io::Node steps = io::Node::seq();
    for (const auto& s : p.steps) {
        io::Node e = io::Node::map();
        e.set("bundle", io::Node::string(s.bundle));
        e.set("version", io::Node::string(s.version));
        e.set("channel", io::Node::string(s.channel));
        e.set("catalog", io::Node::string(s.catalog));
        e.set("edge", io::Node::string(s.edge));
        e.set("detail", io::Node::string(s.detail));
        steps.push(std::move(e));
    }
    n.set("steps", std::move(steps));
    n.set("problems", problems_node(p.problems));
    return n;
}

std::string upgrade_path_text(const UpgradePath& p) {
    std::string from =
        p.from.empty() ? "version " + p.from_version : p.from + " (" + p.from_version + ")";
    if (!p.reached) return "no upgrade path:\n" + problems_text(p.problems, "  ");
    if (p.steps.empty())
        return "package " + p.package + ": " + from +
               (p.to.empty() ? " is where OLM's upgrades end: nothing replaces or skips it, and "
                               "no skipRange contains its version\n"
                             : " is already " + p.to + "\n");
    const UpgradeStep& last = p.steps.back();
    std::string out = "package " + p.package + ": " + from + " -> " + last.bundle + " (" +
                      last.version + "), " + std::to_string(p.steps.size()) +
                      (p.steps.size() == 1 ? " hop\n" : " hops\n");
    std::vector<std::vector<std::string>> rows{
        {"STEP", "BUNDLE", "VERSION", "CHANNEL", "CATALOG", "EDGE"}};
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
        const auto& s = p.steps[i];
        rows.push_back(
            {std::to_string(i + 1), s.bundle, s.version, s.channel, s.catalog, s.detail});
    }
    std::vector<std::size_t> w(rows.front().size(), 0);
    for (const auto& r : rows)
        for (std::size_t i = 0; i < r.size(); ++i)
            w[i] = std::max(w[i], r[i].size());
    for (const auto& r : rows) {
        std::string line = "  ";
        for (std::size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size()) line.append(w[i] - r[i].size() + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + "\n";
    }
    return out;
}

} // namespace kpkg::resolve
