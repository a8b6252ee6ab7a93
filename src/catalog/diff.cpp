#include "kpkg/catalog/diff.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "kpkg/catalog/query.hpp"
#include "kpkg/core/text.hpp"

namespace kpkg::catalog {
namespace {

// One package's side of the comparison.
struct Side {
    const model::Package* package = nullptr;
    std::map<std::string, const model::Channel*> channels; // first of a name wins
    std::map<std::string, const model::Bundle*> bundles;
};

std::map<std::string, Side> index(const model::Catalog& c) {
    std::map<std::string, Side> out;
    for (const auto& p : c.packages)
        if (out[c.string(p.name)].package == nullptr) out[c.string(p.name)].package = &p;
    for (const auto& ch : c.channels)
        out[c.string(ch.package)].channels.emplace(c.string(ch.name), &ch);
    for (const auto& b : c.bundles)
        out[c.string(b.package)].bundles.emplace(c.string(b.name), &b);
    return out;
}

template <typename Map>
std::vector<std::string> keys(const Map& m) {
    std::vector<std::string> out;
    for (const auto& [k, v] : m)
        out.push_back(k);
    return out;
}

// a \ b for sorted vectors.
std::vector<std::string> minus(const std::vector<std::string>& a,
                               const std::vector<std::string>& b) {
    std::vector<std::string> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

std::vector<Edge> minus(const std::vector<Edge>& a, const std::vector<Edge>& b) {
    std::set<Edge> bs(b.begin(), b.end());
    std::vector<Edge> out;
    for (const auto& e : a)
        if (!bs.count(e)) out.push_back(e);
    return out;
}

std::vector<std::string> entry_names(const model::Catalog& c, const model::Channel& ch) {
    std::set<std::string> s;
    for (const auto& e : c.entries_of(ch))
        s.insert(c.string(e.name));
    return {s.begin(), s.end()};
}

// The properties other than olm.package, as comparable keys, in a canonical order.
std::vector<std::tuple<std::string, std::uint64_t, std::uint32_t>>
property_keys(const model::Catalog& c, const model::Bundle& b) {
    std::vector<std::tuple<std::string, std::uint64_t, std::uint32_t>> out;
    for (const auto& p : c.properties_of(b))
        if (c.str(p.type) != "olm.package")
            out.emplace_back(c.string(p.type), p.digest, p.value_bytes);
    std::sort(out.begin(), out.end());
    return out;
}

ChannelChange compare(const model::Catalog& oc, const model::Channel& o, const model::Catalog& nc,
                      const model::Channel& n, const VersionMap& old_versions,
                      const VersionMap& new_versions) {
    ChannelChange c;
    c.name = nc.string(n.name);
    c.old_heads = names_of(oc, channel_heads(oc, o));
    c.new_heads = names_of(nc, channel_heads(nc, n));
    const auto oe = entry_names(oc, o), ne = entry_names(nc, n);
    c.entries_added = minus(ne, oe);
    c.entries_removed = minus(oe, ne);
    const auto oedges = upgrade_edges(oc, o, old_versions);
    const auto nedges = upgrade_edges(nc, n, new_versions);
    c.edges_added = minus(nedges, oedges);
    c.edges_removed = minus(oedges, nedges);
    return c;
}

bool has_change(const ChannelChange& c) {
    return c.head_moved() || !c.entries_added.empty() || !c.entries_removed.empty() ||
           !c.edges_added.empty() || !c.edges_removed.empty();
}

VersionMap versions_of(const model::Catalog& c, const std::string& package) {
    const auto id = c.strings.find(package);
    return id ? bundle_versions(c, *id) : VersionMap{};
}

} // namespace

CatalogDiff diff(const model::Catalog& oc, const model::Catalog& nc) {
    const auto olds = index(oc), news = index(nc);
    std::set<std::string> names;
    for (const auto& [k, v] : olds)
        names.insert(k);
    for (const auto& [k, v] : news)
        names.insert(k);

    CatalogDiff d;
    for (const auto& name : names) {
        auto oi = olds.find(name), ni = news.find(name);
        PackageChange pc;
        pc.name = name;
        if (oi == olds.end()) {
            pc.status = PackageChange::Status::added;
            const Side& n = ni->second;
            if (n.package) pc.new_default_channel = nc.string(n.package->default_channel);
            pc.channels_added = keys(n.channels);
            pc.bundles_added = keys(n.bundles);
            d.packages.push_back(std::move(pc));
            continue;
        }
        if (ni == news.end()) {
            pc.status = PackageChange::Status::removed;
            const Side& o = oi->second;
            if (o.package) pc.old_default_channel = oc.string(o.package->default_channel);
            pc.channels_removed = keys(o.channels);
            pc.bundles_removed = keys(o.bundles);
            d.packages.push_back(std::move(pc));
            continue;
        }
        const Side& o = oi->second;
        const Side& n = ni->second;
        pc.old_default_channel = o.package ? oc.string(o.package->default_channel) : "";
        pc.new_default_channel = n.package ? nc.string(n.package->default_channel) : "";
        const auto old_channels = keys(o.channels), new_channels = keys(n.channels);
        const auto old_bundles = keys(o.bundles), new_bundles = keys(n.bundles);
        pc.channels_added = minus(new_channels, old_channels);
        pc.channels_removed = minus(old_channels, new_channels);
        pc.bundles_added = minus(new_bundles, old_bundles);
        pc.bundles_removed = minus(old_bundles, new_bundles);

        const auto old_versions = versions_of(oc, name);
        const auto new_versions = versions_of(nc, name);
        for (const auto& [cname, nch] : n.channels) {
            auto it = o.channels.find(cname);
            if (it == o.channels.end()) continue;
            ChannelChange cc = compare(oc, *it->second, nc, *nch, old_versions, new_versions);
            if (has_change(cc)) pc.channels_changed.push_back(std::move(cc));
        }
        for (const auto& [bname, nb] : n.bundles) {
            auto it = o.bundles.find(bname);
            if (it == o.bundles.end()) continue;
            const model::Bundle& ob = *it->second;
            BundleChange bc;
            bc.name = bname;
            bc.old_version = oc.string(ob.version);
            bc.new_version = nc.string(nb->version);
            bc.old_image = oc.string(ob.image);
            bc.new_image = nc.string(nb->image);
            bc.properties_changed = property_keys(oc, ob) != property_keys(nc, *nb);
            if (bc.old_version != bc.new_version || bc.old_image != bc.new_image ||
                bc.properties_changed)
                pc.bundles_changed.push_back(std::move(bc));
        }
        const bool changed = pc.old_default_channel != pc.new_default_channel ||
                             !pc.channels_added.empty() || !pc.channels_removed.empty() ||
                             !pc.channels_changed.empty() || !pc.bundles_added.empty() ||
                             !pc.bundles_removed.empty() || !pc.bundles_changed.empty();
        if (changed) d.packages.push_back(std::move(pc));
    }
    return d;
}

namespace {

struct Summary {
    std::size_t packages_added = 0, packages_removed = 0, packages_changed = 0;
    std::size_t channels_added = 0, channels_removed = 0, heads_moved = 0;
    std::size_t bundles_added = 0, bundles_removed = 0, bundles_changed = 0;
    std::size_t edges_added = 0, edges_removed = 0;
};

Summary summarize(const CatalogDiff& d) {
    Summary s;
    for (const auto& p : d.packages) {
        switch (p.status) {
        case PackageChange::Status::added:
            ++s.packages_added;
            break;
        case PackageChange::Status::removed:
            ++s.packages_removed;
            break;
        case PackageChange::Status::changed:
            ++s.packages_changed;
            break;
        }
        s.channels_added += p.channels_added.size();
        s.channels_removed += p.channels_removed.size();
        s.bundles_added += p.bundles_added.size();
        s.bundles_removed += p.bundles_removed.size();
        s.bundles_changed += p.bundles_changed.size();
        for (const auto& c : p.channels_changed) {
            s.heads_moved += c.head_moved() ? 1 : 0;
            s.edges_added += c.edges_added.size();
            s.edges_removed += c.edges_removed.size();
        }
    }
    return s;
}

std::string heads_text(const std::vector<std::string>& h) {
    if (h.empty()) return "(no head)";
    if (h.size() == 1) return h.front();
    std::string out = "(";
    out += text::join(h, ", ");
    out += ')';
    return out;
}

std::string count(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string edge_text(const Edge& e) {
    return e.from + " -> " + e.to + " (" + edge_kind_name(e.kind) + ")";
}

io::Node strings(const std::vector<std::string>& v) {
    io::Node n = io::Node::seq();
    for (const auto& s : v)
        n.push(io::Node::string(s));
    return n;
}

io::Node old_new(io::Node o, io::Node n) {
    io::Node m = io::Node::map();
    m.set("old", std::move(o));
    m.set("new", std::move(n));
    return m;
}

io::Node edges_node(const std::vector<Edge>& edges) {
    io::Node list = io::Node::seq();
    for (const auto& e : edges) {
        io::Node n = io::Node::map();
        n.set("from", io::Node::string(e.from));
        n.set("to", io::Node::string(e.to));
        n.set("kind", io::Node::string(edge_kind_name(e.kind)));
        list.push(std::move(n));
    }
    return list;
}

io::Node added_removed(io::Node added, io::Node removed) {
    io::Node m = io::Node::map();
    m.set("added", std::move(added));
    m.set("removed", std::move(removed));
    return m;
}

io::Node integer(std::size_t n) {
    return io::Node::integer(static_cast<std::int64_t>(n));
}

} // namespace

std::string diff_text(const CatalogDiff& d) {
    std::string out;
    for (const auto& p : d.packages) {
        if (p.status == PackageChange::Status::added) {
            out += "+ package " + p.name + " (" +
                   count(p.channels_added.size(), "channel", "channels") + ", " +
                   count(p.bundles_added.size(), "bundle", "bundles") + ")\n";
            continue;
        }
        if (p.status == PackageChange::Status::removed) {
            out += "- package " + p.name + " (" +
                   count(p.channels_removed.size(), "channel", "channels") + ", " +
                   count(p.bundles_removed.size(), "bundle", "bundles") + ")\n";
            continue;
        }
        out += "~ package " + p.name + "\n";
        if (p.old_default_channel != p.new_default_channel)
            out += "    default channel: " + p.old_default_channel + " -> " +
                   p.new_default_channel + "\n";
        for (const auto& c : p.channels_added)
            out += "  + channel " + c + "\n";
        for (const auto& c : p.channels_removed)
            out += "  - channel " + c + "\n";
        for (const auto& c : p.channels_changed) {
            out += "  ~ channel " + c.name + "\n";
            if (c.head_moved())
                out += "      head: " + heads_text(c.old_heads) + " -> " + heads_text(c.new_heads) +
                       "\n";
            for (const auto& e : c.entries_added)
                out += "      + entry " + e + "\n";
            for (const auto& e : c.entries_removed)
                out += "      - entry " + e + "\n";
            for (const auto& e : c.edges_added)
                out += "      + edge " + edge_text(e) + "\n";
            for (const auto& e : c.edges_removed)
                out += "      - edge " + edge_text(e) + "\n";
        }
        for (const auto& b : p.bundles_added)
            out += "  + bundle " + b + "\n";
        for (const auto& b : p.bundles_removed)
            out += "  - bundle " + b + "\n";
        for (const auto& b : p.bundles_changed) {
            out += "  ~ bundle " + b.name + "\n";
            if (b.old_version != b.new_version)
                out += "      version: " + b.old_version + " -> " + b.new_version + "\n";
            if (b.old_image != b.new_image)
                out += "      image: " + b.old_image + " -> " + b.new_image + "\n";
            if (b.properties_changed) out += "      properties changed\n";
        }
    }
    const Summary s = summarize(d);
    if (d.empty()) return "no differences\n";
    std::vector<std::string> parts;
    auto add = [&](std::size_t n, const char* one, const char* many) {
        if (n > 0) parts.push_back(count(n, one, many));
    };
    add(s.packages_added, "package added", "packages added");
    add(s.packages_removed, "package removed", "packages removed");
    add(s.packages_changed, "package changed", "packages changed");
    add(s.channels_added, "channel added", "channels added");
    add(s.channels_removed, "channel removed", "channels removed");
    add(s.heads_moved, "head moved", "heads moved");
    add(s.bundles_added, "bundle added", "bundles added");
    add(s.bundles_removed, "bundle removed", "bundles removed");
    add(s.bundles_changed, "bundle changed", "bundles changed");
    add(s.edges_added, "edge added", "edges added");
    add(s.edges_removed, "edge removed", "edges removed");
    return out + text::join(parts, ", ") + "\n";
}

io::Node diff_node(const CatalogDiff& d) {
    io::Node doc = io::Node::map();
    io::Node pkgs = io::Node::seq();
    for (const auto& p : d.packages) {
        io::Node n = io::Node::map();
        n.set("name", io::Node::string(p.name));
        n.set("status", io::Node::string(p.status == PackageChange::Status::added     ? "added"
                                         : p.status == PackageChange::Status::removed ? "removed"
                                                                                      : "changed"));
        if (p.status == PackageChange::Status::changed &&
            p.old_default_channel != p.new_default_channel)
            n.set("defaultChannel", old_new(io::Node::string(p.old_default_channel),
                                            io::Node::string(p.new_default_channel)));
        io::Node chans = added_removed(strings(p.channels_added), strings(p.channels_removed));
        io::Node changed = io::Node::seq();
        for (const auto& c : p.channels_changed) {
            io::Node cn = io::Node::map();
            cn.set("name", io::Node::string(c.name));
            cn.set("heads", old_new(strings(c.old_heads), strings(c.new_heads)));
            cn.set("entries", added_removed(strings(c.entries_added), strings(c.entries_removed)));
            cn.set("edges", added_removed(edges_node(c.edges_added), edges_node(c.edges_removed)));
            changed.push(std::move(cn));
        }
        chans.set("changed", std::move(changed));
        n.set("channels", std::move(chans));
        io::Node bundles = added_removed(strings(p.bundles_added), strings(p.bundles_removed));
        io::Node bchanged = io::Node::seq();
        for (const auto& b : p.bundles_changed) {
            io::Node bn = io::Node::map();
            bn.set("name", io::Node::string(b.name));
            bn.set("version",
                   old_new(io::Node::string(b.old_version), io::Node::string(b.new_version)));
            bn.set("image", old_new(io::Node::string(b.old_image), io::Node::string(b.new_image)));
            bn.set("propertiesChanged", io::Node::boolean(b.properties_changed));
            bchanged.push(std::move(bn));
        }
        bundles.set("changed", std::move(bchanged));
        n.set("bundles", std::move(bundles));
        pkgs.push(std::move(n));
    }
    doc.set("packages", std::move(pkgs));
    const Summary s = summarize(d);
    io::Node sum = io::Node::map();
    sum.set("packagesAdded", integer(s.packages_added));
    sum.set("packagesRemoved", integer(s.packages_removed));
    sum.set("packagesChanged", integer(s.packages_changed));
    sum.set("channelsAdded", integer(s.channels_added));
    sum.set("channelsRemoved", integer(s.channels_removed));
    sum.set("headsMoved", integer(s.heads_moved));
    sum.set("bundlesAdded", integer(s.bundles_added));
    sum.set("bundlesRemoved", integer(s.bundles_removed));
    sum.set("bundlesChanged", integer(s.bundles_changed));
    sum.set("edgesAdded", integer(s.edges_added));
    sum.set("edgesRemoved", integer(s.edges_removed));
    doc.set("summary", std::move(sum));
    return doc;
}

} // namespace kpkg::catalog
