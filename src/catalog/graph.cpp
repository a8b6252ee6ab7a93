#include "kpkg/catalog/graph.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "kpkg/catalog/query.hpp"
#include "kpkg/core/semver.hpp"
#include "kpkg/core/text.hpp"

namespace kpkg::catalog {

const char* edge_kind_name(EdgeKind k) {
    switch (k) {
    case EdgeKind::replaces:
        return "replaces";
    case EdgeKind::skips:
        return "skips";
    case EdgeKind::skip_range:
        return "skipRange";
    }
    return "?";
}

VersionMap bundle_versions(const model::Catalog& c, model::Str package) {
    VersionMap out;
    const auto it = c.by_package().find(package);
    if (it == c.by_package().end()) return out;
    for (std::uint32_t i : it->second.bundles) {
        const model::Bundle& b = c.bundles[i];
        if (b.version != 0) out.emplace(b.name, b.version);
    }
    return out;
}

std::vector<Edge> upgrade_edges(const model::Catalog& c, const model::Channel& ch,
                                const VersionMap& versions) {
    const auto entries = c.entries_of(ch);
    std::set<Edge> edges;
    // Versions of the entries, parsed once.
    std::vector<std::pair<const model::Entry*, semver::Version>> parsed;
    for (const auto& e : entries) {
        auto it = versions.find(e.name);
        if (it == versions.end()) continue;
        if (auto v = semver::Version::parse(c.str(it->second))) parsed.emplace_back(&e, *v);
    }
    for (const auto& e : entries) {
        const std::string name = c.string(e.name);
        if (e.replaces != 0 && e.replaces != e.name)
            edges.insert({c.string(e.replaces), name, EdgeKind::replaces});
        for (model::Str s : c.skips_of(e))
            if (s != 0 && s != e.name) edges.insert({c.string(s), name, EdgeKind::skips});
        if (e.skip_range == 0) continue;
        auto range = semver::Range::parse(c.str(e.skip_range));
        if (!range) continue;
        for (const auto& [other, v] : parsed)
            if (other->name != e.name && range->contains(v))
                edges.insert({c.string(other->name), name, EdgeKind::skip_range});
    }
    std::vector<Edge> out(edges.begin(), edges.end());
    std::sort(out.begin(), out.end(), [](const Edge& a, const Edge& b) {
        return std::tie(a.to, a.kind, a.from) < std::tie(b.to, b.kind, b.from);
    });
    return out;
}

namespace {

// An entry with its version parsed once, for sorting.
struct Sortable {
    GraphEntry entry;
    std::optional<semver::Version> version;
};

// Newest first by version (entries without a parsable version last), then by name.
bool newer_first(const Sortable& a, const Sortable& b) {
    if (a.version.has_value() != b.version.has_value()) return a.version.has_value();
    if (a.version) {
        const int c = semver::compare(*a.version, *b.version);
        if (c != 0) return c > 0;
    }
    return a.entry.name < b.entry.name;
}

void append_sorted(std::vector<GraphEntry>& to, std::vector<Sortable>& from) {
    std::sort(from.begin(), from.end(), newer_first);
    for (auto& s : from)
        to.push_back(std::move(s.entry));
}

ChannelGraph build(const model::Catalog& c, const model::Channel& ch, const VersionMap& versions) {
    ChannelGraph g;
    g.package = c.string(ch.package);
    g.channel = c.string(ch.name);
    const auto head_ids = channel_heads(c, ch);
    g.heads = names_of(c, head_ids);
    g.edges = upgrade_edges(c, ch, versions);
    const auto stranded = stranded_entries(c, ch);
    const std::unordered_set<model::Str> stranded_set(stranded.begin(), stranded.end());
    const std::unordered_set<model::Str> head_set(head_ids.begin(), head_ids.end());

    const auto entries = c.entries_of(ch);
    std::unordered_map<model::Str, const model::Entry*> by_name;
    by_name.reserve(entries.size());
    for (const auto& e : entries)
        by_name.emplace(e.name, &e);
    auto make = [&](model::Str name, bool in_channel) {
        Sortable s;
        GraphEntry& ge = s.entry;
        ge.name = c.string(name);
        if (auto it = versions.find(name); it != versions.end()) {
            ge.version = c.string(it->second);
            if (auto v = semver::Version::parse(ge.version)) s.version = *v;
        }
        if (auto it = by_name.find(name); it != by_name.end())
            ge.skip_range = c.string(it->second->skip_range);
        ge.in_channel = in_channel;
        ge.head = head_set.count(name) > 0;
        ge.stranded = stranded_set.count(name) > 0;
        return s;
    };

    // The replaces chain from a single head first, in order.
    std::unordered_set<model::Str> placed;
    if (head_ids.size() == 1) {
        const model::Entry* cur = by_name.at(head_ids.front());
        while (cur != nullptr && placed.insert(cur->name).second) {
            g.entries.push_back(std::move(make(cur->name, true).entry));
            auto it = by_name.find(cur->replaces);
            cur = it == by_name.end() ? nullptr : it->second;
        }
    }
    std::vector<Sortable> rest;
    for (const auto& e : entries)
        if (placed.insert(e.name).second) rest.push_back(make(e.name, true));
    append_sorted(g.entries, rest);
    // Names only referenced by an edge.
    std::vector<Sortable> outside;
    std::unordered_set<std::string> placed_names;
    for (const auto& e : g.entries)
        placed_names.insert(e.name);
    for (const auto& e : g.edges)
        if (placed_names.insert(e.from).second) {
            Sortable s;
            s.entry.name = e.from;
            s.entry.in_channel = false;
            if (auto id = c.strings.find(e.from)) {
                s = make(*id, false);
            }
            outside.push_back(std::move(s));
        }
    append_sorted(g.entries, outside);

    // Edges in the order of the entries they reach, then kind, then the entries they leave.
    std::unordered_map<std::string, std::size_t> position;
    for (std::size_t i = 0; i < g.entries.size(); ++i)
        position.emplace(g.entries[i].name, i);
    std::stable_sort(g.edges.begin(), g.edges.end(), [&](const Edge& a, const Edge& b) {
        return std::make_tuple(position[a.to], a.kind, position[a.from]) <
               std::make_tuple(position[b.to], b.kind, position[b.from]);
    });
    return g;
}

} // namespace

Result<std::vector<ChannelGraph>> package_graph(const model::Catalog& c, const std::string& package,
                                                const std::optional<std::string>& channel) {
    const auto* info = c.package_info(package);
    if (info == nullptr || (info->package == model::npos32 && info->channels.empty())) {
        std::set<std::string> packages;
        for (const auto& p : c.packages)
            packages.insert(c.string(p.name));
        for (const auto& ch : c.channels)
            packages.insert(c.string(ch.package));
        Error e = Error::invalid("package " + text::quote(package) + " is not in the catalog");
        if (auto m = text::closest(package, {packages.begin(), packages.end()}))
            e.note("did you mean " + text::quote(*m) + "?");
        return fail(std::move(e));
    }
    std::vector<const model::Channel*> channels;
    for (std::uint32_t i : info->channels)
        channels.push_back(&c.channels[i]);
    std::stable_sort(channels.begin(), channels.end(),
                     [&](const model::Channel* a, const model::Channel* b) {
                         return c.str(a->name) < c.str(b->name);
                     });
    if (channel) {
        std::vector<std::string> names;
        const model::Channel* found = nullptr;
        for (const auto* ch : channels) {
            names.push_back(c.string(ch->name));
            if (c.str(ch->name) == *channel) found = ch;
        }
        if (found == nullptr) {
            Error e = Error::invalid("package " + text::quote(package) + " has no channel " +
                                     text::quote(*channel));
            if (auto m = text::closest(*channel, names))
                e.note("did you mean " + text::quote(*m) + "?");
            else if (!names.empty())
                e.note("its channels: " + text::join(names, ", "));
            return fail(std::move(e));
        }
        channels = {found};
    }
    const auto versions = bundle_versions(c, *c.strings.find(package));
    std::vector<ChannelGraph> out;
    for (const auto* ch : channels)
        out.push_back(build(c, *ch, versions));
    return out;
}

// ---- renderings ----------------------------------------------------------------------------

namespace {

std::string marks(const GraphEntry& e) {
    std::vector<std::string> m;
    if (e.head) m.push_back("head");
    if (e.stranded) m.push_back("stranded");
    if (!e.in_channel) m.push_back("not in channel");
    if (m.empty()) return "";
    std::string out = "[";
    out += text::join(m, ", ");
    out += ']';
    return out;
}

std::string dot_quote(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// Mermaid labels: quotes and markup characters as entities.
std::string mermaid_label(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '"':
            out += "#quot;";
            break;
        case '<':
            out += "#lt;";
            break;
        case '>':
            out += "#gt;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

} // namespace

std::string graph_text(const std::vector<ChannelGraph>& graphs) {
    std::string out;
    for (const auto& g : graphs) {
        if (!out.empty()) out += "\n";
        std::size_t in_channel = 0;
        for (const auto& e : g.entries)
            in_channel += e.in_channel ? 1 : 0;
        out += "package " + g.package + ", channel " + g.channel + ": ";
        if (g.heads.size() == 1)
            out += "head " + g.heads.front();
        else if (g.heads.empty())
            out += "no head";
        else
            out += std::to_string(g.heads.size()) + " heads (" + text::join(g.heads, ", ") + ")";
        out += ", " + std::to_string(in_channel) + (in_channel == 1 ? " entry\n" : " entries\n");
        // The edges reaching each entry, in edge order.
        std::unordered_map<std::string, std::vector<std::size_t>> edges_to;
        for (std::size_t k = 0; k < g.edges.size(); ++k)
            edges_to[g.edges[k].to].push_back(k);
        std::size_t width = 0, vwidth = 0;
        for (const auto& e : g.entries) {
            width = std::max(width, e.name.size());
            vwidth = std::max(vwidth, e.version.size());
        }
        for (const auto& e : g.entries) {
            std::string line = "  " + e.name;
            const std::string m = marks(e);
            if (!e.version.empty() || !m.empty()) {
                line += std::string(width - e.name.size() + 2, ' ') + e.version;
                if (!m.empty()) line += std::string(vwidth - e.version.size() + 2, ' ') + m;
            }
            out += line + "\n";
            auto it = edges_to.find(e.name);
            if (it == edges_to.end()) continue;
            for (std::size_t k : it->second) {
                const Edge& ed = g.edges[k];
                out += "    <- " + ed.from + "  (" + edge_kind_name(ed.kind);
                if (ed.kind == EdgeKind::skip_range) out += " " + e.skip_range;
                out += ")\n";
            }
        }
    }
    return out;
}

std::string graph_dot(const std::vector<ChannelGraph>& graphs) {
    std::string pkg = graphs.empty() ? "" : graphs.front().package;
    std::string out = "digraph " + dot_quote(pkg) + " {\n    rankdir=LR;\n    node [shape=box];\n";
    for (const auto& g : graphs) {
        const std::string prefix = g.channel + "/";
        out += "    subgraph " + dot_quote("cluster_" + g.channel) + " {\n";
        out += "        label=" + dot_quote(g.channel) + ";\n";
        for (const auto& e : g.entries) {
            std::string label = e.name;
            if (!e.version.empty()) label += "\\n" + e.version;
            std::string attrs = "label=\"";
            for (char c : label)
                attrs += c == '"' ? std::string("\\\"") : std::string(1, c);
            attrs += "\"";
            if (e.head) attrs += ", peripheries=2, style=bold";
            if (e.stranded) attrs += ", color=red, style=dashed";
            if (!e.in_channel) attrs += ", style=dotted";
            out += "        " + dot_quote(prefix + e.name) + " [" + attrs + "];\n";
        }
        out += "    }\n";
        for (const auto& ed : g.edges) {
            out += "    " + dot_quote(prefix + ed.from) + " -> " + dot_quote(prefix + ed.to) +
                   " [label=" + dot_quote(edge_kind_name(ed.kind));
            if (ed.kind == EdgeKind::skips) out += ", style=dashed";
            if (ed.kind == EdgeKind::skip_range) out += ", style=dotted";
            out += "];\n";
        }
    }
    return out + "}\n";
}

std::string graph_mermaid(const std::vector<ChannelGraph>& graphs) {
    std::string out = "flowchart LR\n";
    std::vector<std::string> heads, stranded, outside;
    for (std::size_t ci = 0; ci < graphs.size(); ++ci) {
        const auto& g = graphs[ci];
        std::unordered_map<std::string, std::string> ids;
        out += "    subgraph c" + std::to_string(ci) + "[\"" + mermaid_label(g.channel) + "\"]\n";
        for (std::size_t i = 0; i < g.entries.size(); ++i) {
            const auto& e = g.entries[i];
            std::string id = "c";
            id += std::to_string(ci);
            id += '_';
            id += std::to_string(i);
            ids[e.name] = id;
            std::string label = mermaid_label(e.name);
            if (!e.version.empty()) label += "<br/>" + mermaid_label(e.version);
            out += "        " + id + "[\"" + label + "\"]\n";
            if (e.head) heads.push_back(id);
            if (e.stranded) stranded.push_back(id);
            if (!e.in_channel) outside.push_back(id);
        }
        out += "    end\n";
        for (const auto& ed : g.edges) {
            const char* arrow = ed.kind == EdgeKind::replaces ? " -->" : " -.->";
            out += "    " + ids[ed.from] + arrow + "|" + edge_kind_name(ed.kind) + "| " +
                   ids[ed.to] + "\n";
        }
    }
    out += "    classDef head stroke-width:3px\n";
    out += "    classDef stranded stroke:#c00,stroke-dasharray:5 5\n";
    out += "    classDef outside stroke-dasharray:2 2\n";
    if (!heads.empty()) out += "    class " + text::join(heads, ",") + " head\n";
    if (!stranded.empty()) out += "    class " + text::join(stranded, ",") + " stranded\n";
    if (!outside.empty()) out += "    class " + text::join(outside, ",") + " outside\n";
    return out;
}

io::Node graph_node(const std::string& package, const std::vector<ChannelGraph>& graphs) {
    io::Node doc = io::Node::map();
    doc.set("package", io::Node::string(package));
    io::Node chans = io::Node::seq();
    for (const auto& g : graphs) {
        io::Node c = io::Node::map();
        c.set("name", io::Node::string(g.channel));
        io::Node heads = io::Node::seq();
        for (const auto& h : g.heads)
            heads.push(io::Node::string(h));
        c.set("heads", std::move(heads));
        io::Node entries = io::Node::seq();
        for (const auto& e : g.entries) {
            io::Node n = io::Node::map();
            n.set("name", io::Node::string(e.name));
            n.set("version", io::Node::string(e.version));
            n.set("skipRange", io::Node::string(e.skip_range));
            n.set("inChannel", io::Node::boolean(e.in_channel));
            n.set("head", io::Node::boolean(e.head));
            n.set("stranded", io::Node::boolean(e.stranded));
            entries.push(std::move(n));
        }
        c.set("entries", std::move(entries));
        io::Node edges = io::Node::seq();
        for (const auto& ed : g.edges) {
            io::Node n = io::Node::map();
            n.set("from", io::Node::string(ed.from));
            n.set("to", io::Node::string(ed.to));
            n.set("kind", io::Node::string(edge_kind_name(ed.kind)));
            edges.push(std::move(n));
        }
        c.set("edges", std::move(edges));
        chans.push(std::move(c));
    }
    doc.set("channels", std::move(chans));
    return doc;
}

} // namespace kpkg::catalog
