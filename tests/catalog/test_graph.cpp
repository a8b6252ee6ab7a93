#include <gtest/gtest.h>

#include <algorithm>

#include "kpkg/catalog/graph.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/query.hpp"
#include "kpkg/io/load.hpp"
#include "support/model_builder.hpp"
#include "support/support.hpp"

using namespace kpkg;
using catalog::Edge;
using catalog::EdgeKind;

namespace {

model::Catalog load(const std::string& rel) {
    auto c = catalog::load_catalog(test::testdata(rel));
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().str());
    if (!c.ok()) return {};
    EXPECT_TRUE(c->problems.empty()) << c->problems.front().message;
    return std::move(c).take();
}

using test::channel_catalog;

const catalog::GraphEntry* find(const catalog::ChannelGraph& g, const std::string& name) {
    for (const auto& e : g.entries)
        if (e.name == name) return &e;
    return nullptr;
}

std::vector<std::string> names(const catalog::ChannelGraph& g) {
    std::vector<std::string> out;
    for (const auto& e : g.entries)
        out.push_back(e.name);
    return out;
}

} // namespace

TEST(UpgradeEdges, ReplacesSkipsAndSkipRange) {
    auto c = channel_catalog({{"a"}, {"b", "a"}, {"c", "b", {"x"}, ">=1.0.0 <1.2.0"}});
    const auto versions = test::versions(c, {{"a", "1.0.0"}, {"b", "1.1.0"}, {"c", "1.2.0"}});
    const std::vector<Edge> expected = {
        {"a", "b", EdgeKind::replaces},   {"b", "c", EdgeKind::replaces},
        {"x", "c", EdgeKind::skips},      {"a", "c", EdgeKind::skip_range},
        {"b", "c", EdgeKind::skip_range},
    };
    EXPECT_EQ(catalog::upgrade_edges(c, c.channels[0], versions), expected);
}

TEST(UpgradeEdges, SkipRangeFollowsBlangPrereleaseRules) {
    // ">=1.1.0 <1.3.0-rc.1" covers 1.2.0 and 1.3.0-rc.0 but not 1.3.0-rc.1 itself or 1.0.0.
    auto c = channel_catalog({{"v100"}, {"v120"}, {"rc0"}, {"rc1", {}, {}, ">=1.1.0 <1.3.0-rc.1"}});
    const auto versions = test::versions(
        c, {{"v100", "1.0.0"}, {"v120", "1.2.0"}, {"rc0", "1.3.0-rc.0"}, {"rc1", "1.3.0-rc.1"}});
    const std::vector<Edge> expected = {{"rc0", "rc1", EdgeKind::skip_range},
                                        {"v120", "rc1", EdgeKind::skip_range}};
    EXPECT_EQ(catalog::upgrade_edges(c, c.channels[0], versions), expected);
}

TEST(UpgradeEdges, BadSkipRangeAndSelfReferencesGiveNoEdges) {
    auto c = channel_catalog({{"a", "a", {"a", ""}, "not a range"}, {"b"}});
    const auto versions = test::versions(c, {{"a", "1.0.0"}, {"b", "0.1.0"}});
    EXPECT_TRUE(catalog::upgrade_edges(c, c.channels[0], versions).empty());
}

TEST(StrandedEntries, NotOnTheChainAndNotSkipped) {
    // Chain: c -> b -> a. x is skipped by c; w is replaced by x only, so nothing reaches it.
    auto c = channel_catalog({{"w"}, {"x", "w"}, {"a"}, {"b", "a"}, {"c", "b", {"x"}}});
    EXPECT_EQ(catalog::names_of(c, catalog::stranded_entries(c, c.channels[0])),
              std::vector<std::string>{"w"});
}

TEST(StrandedEntries, ChainStopsAtASkippedEntry) {
    // c replaces b, but b is skipped (by c): the chain stops at b's reference, so a, which only
    // b replaces, is stranded; b itself is skipped, not stranded.
    auto c = channel_catalog({{"a"}, {"b", "a"}, {"c", "b", {"b"}}});
    EXPECT_EQ(catalog::names_of(c, catalog::stranded_entries(c, c.channels[0])),
              std::vector<std::string>{"a"});
}

TEST(StrandedEntries, NoneWithoutASingleHead) {
    auto two = channel_catalog({{"a"}, {"b"}});
    EXPECT_TRUE(catalog::stranded_entries(two, two.channels[0]).empty());
    // A replaces cycle has no head at all; nothing loops.
    auto cycle = channel_catalog({{"a", "b"}, {"b", "a"}});
    EXPECT_TRUE(catalog::stranded_entries(cycle, cycle.channels[0]).empty());
}

TEST(PackageGraph, SampleCatalogFastChannel) {
    auto cfg = load("catalog");
    auto graphs = catalog::package_graph(cfg, "vault", std::string("fast"));
    ASSERT_TRUE(graphs.ok()) << graphs.error().str();
    ASSERT_EQ(graphs->size(), 1u);
    const auto& g = graphs->front();
    EXPECT_EQ(g.heads, std::vector<std::string>{"vault-operator.v1.3.0-rc.1"});
    // Chain from the head, then the skipped entry.
    EXPECT_EQ(names(g),
              (std::vector<std::string>{"vault-operator.v1.3.0-rc.1", "vault-operator.v1.2.0",
                                        "vault-operator.v1.1.0", "vault-operator.v1.1.1"}));
    for (const auto& e : g.entries) {
        EXPECT_FALSE(e.stranded) << e.name;
        EXPECT_TRUE(e.in_channel) << e.name;
    }
    EXPECT_TRUE(find(g, "vault-operator.v1.3.0-rc.1")->head);
    EXPECT_EQ(find(g, "vault-operator.v1.2.0")->version, "1.2.0");
    const std::vector<Edge> expected = {
        {"vault-operator.v1.2.0", "vault-operator.v1.3.0-rc.1", EdgeKind::replaces},
        {"vault-operator.v1.1.1", "vault-operator.v1.3.0-rc.1", EdgeKind::skips},
        {"vault-operator.v1.2.0", "vault-operator.v1.3.0-rc.1", EdgeKind::skip_range},
        {"vault-operator.v1.1.0", "vault-operator.v1.3.0-rc.1", EdgeKind::skip_range},
        {"vault-operator.v1.1.1", "vault-operator.v1.3.0-rc.1", EdgeKind::skip_range},
        {"vault-operator.v1.1.0", "vault-operator.v1.2.0", EdgeKind::replaces},
        {"vault-operator.v1.1.0", "vault-operator.v1.1.1", EdgeKind::replaces},
    };
    EXPECT_EQ(g.edges, expected);
}

TEST(PackageGraph, EveryChannelSortedByName) {
    auto cfg = load("catalogs/graph-edge");
    auto graphs = catalog::package_graph(cfg, "p");
    ASSERT_TRUE(graphs.ok());
    ASSERT_EQ(graphs->size(), 3u);
    EXPECT_EQ((*graphs)[0].channel, "stable");
    EXPECT_EQ((*graphs)[1].channel, "tail");
    EXPECT_EQ((*graphs)[2].channel, "two-heads");
}

TEST(PackageGraph, StrandedTwoHeadsAndNamesOutsideTheChannel) {
    auto cfg = load("catalogs/graph-edge");
    auto graphs = catalog::package_graph(cfg, "p").take();
    const auto& stable = graphs[0];
    EXPECT_EQ(stable.heads, std::vector<std::string>{"p.v1.2.0"});
    ASSERT_NE(find(stable, "p.v0.9.0"), nullptr);
    EXPECT_TRUE(find(stable, "p.v0.9.0")->stranded);
    EXPECT_FALSE(find(stable, "p.v0.9.1")->stranded); // skipped by the head
    EXPECT_EQ(find(stable, "p.v1.2.0")->skip_range, ">=1.0.0 <1.2.0");

    const auto& tail = graphs[1];
    ASSERT_NE(find(tail, "p.v0.5.0"), nullptr);
    EXPECT_FALSE(find(tail, "p.v0.5.0")->in_channel);
    EXPECT_EQ(find(tail, "p.v0.5.0")->version, ""); // no bundle of that name
    EXPECT_FALSE(find(tail, "p.v1.0.0")->in_channel);
    EXPECT_EQ(find(tail, "p.v1.0.0")->version, "1.0.0");
    EXPECT_EQ(names(tail).back(), "p.v0.5.0"); // outside names come last, newest first

    const auto& two = graphs[2];
    EXPECT_EQ(two.heads, (std::vector<std::string>{"p.v1.0.0", "p.v1.1.0"}));
    EXPECT_TRUE(find(two, "p.v1.0.0")->head);
    EXPECT_TRUE(find(two, "p.v1.1.0")->head);
    EXPECT_TRUE(two.edges.empty());
}

TEST(PackageGraph, UnknownPackageOrChannelSuggestsTheClosest) {
    auto cfg = load("catalog");
    auto r = catalog::package_graph(cfg, "valut");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(r.error().notes, std::vector<std::string>{"did you mean \"vault\"?"});
    r = catalog::package_graph(cfg, "vault", std::string("fsat"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().str().find("has no channel \"fsat\""), std::string::npos);
    EXPECT_EQ(r.error().notes, std::vector<std::string>{"did you mean \"fast\"?"});
}

TEST(GraphRender, Text) {
    auto cfg = load("catalogs/graph-edge");
    auto graphs = catalog::package_graph(cfg, "p", std::string("stable")).take();
    EXPECT_EQ(catalog::graph_text(graphs), "package p, channel stable: head p.v1.2.0, 5 entries\n"
                                           "  p.v1.2.0  1.2.0  [head]\n"
                                           "    <- p.v1.1.0  (replaces)\n"
                                           "    <- p.v0.9.1  (skips)\n"
                                           "    <- p.v1.1.0  (skipRange >=1.0.0 <1.2.0)\n"
                                           "    <- p.v1.0.0  (skipRange >=1.0.0 <1.2.0)\n"
                                           "  p.v1.1.0  1.1.0\n"
                                           "    <- p.v1.0.0  (replaces)\n"
                                           "  p.v1.0.0  1.0.0\n"
                                           "  p.v0.9.1  0.9.1\n"
                                           "    <- p.v0.9.0  (replaces)\n"
                                           "  p.v0.9.0  0.9.0  [stranded]\n");
}

TEST(GraphRender, Dot) {
    auto cfg = load("catalogs/graph-edge");
    auto graphs = catalog::package_graph(cfg, "p").take();
    const std::string dot = catalog::graph_dot(graphs);
    EXPECT_EQ(dot.rfind("digraph \"p\" {\n", 0), 0u) << dot;
    EXPECT_NE(dot.find("subgraph \"cluster_two-heads\""), std::string::npos);
    EXPECT_NE(dot.find("\"stable/p.v1.2.0\" [label=\"p.v1.2.0\\n1.2.0\", peripheries=2, "
                       "style=bold];"),
              std::string::npos)
        << dot;
    EXPECT_NE(dot.find("\"stable/p.v0.9.0\" [label=\"p.v0.9.0\\n0.9.0\", color=red, "
                       "style=dashed];"),
              std::string::npos)
        << dot;
    EXPECT_NE(dot.find("\"tail/p.v0.5.0\" [label=\"p.v0.5.0\", style=dotted];"), std::string::npos);
    EXPECT_NE(dot.find("\"stable/p.v1.1.0\" -> \"stable/p.v1.2.0\" [label=\"replaces\"];"),
              std::string::npos);
    EXPECT_NE(dot.find("\"stable/p.v0.9.1\" -> \"stable/p.v1.2.0\" [label=\"skips\", "
                       "style=dashed];"),
              std::string::npos);
    EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
    // Balanced braces: every subgraph is closed.
    EXPECT_EQ(std::count(dot.begin(), dot.end(), '{'), std::count(dot.begin(), dot.end(), '}'));
}

TEST(GraphRender, DotQuotesNames) {
    auto ch = channel_catalog({{"a\"b"}, {"c", "a\"b"}});
    catalog::ChannelGraph g;
    g.package = "p";
    g.channel = "c";
    g.entries = {{"a\"b", "", "", true, false, false}, {"c", "", "", true, true, false}};
    g.edges = catalog::upgrade_edges(ch, ch.channels[0], {});
    const std::string dot = catalog::graph_dot({g});
    EXPECT_NE(dot.find("\"c/a\\\"b\" -> \"c/c\""), std::string::npos) << dot;
}

TEST(GraphRender, Mermaid) {
    auto cfg = load("catalogs/graph-edge");
    auto graphs = catalog::package_graph(cfg, "p", std::string("stable")).take();
    EXPECT_EQ(catalog::graph_mermaid(graphs),
              "flowchart LR\n"
              "    subgraph c0[\"stable\"]\n"
              "        c0_0[\"p.v1.2.0<br/>1.2.0\"]\n"
              "        c0_1[\"p.v1.1.0<br/>1.1.0\"]\n"
              "        c0_2[\"p.v1.0.0<br/>1.0.0\"]\n"
              "        c0_3[\"p.v0.9.1<br/>0.9.1\"]\n"
              "        c0_4[\"p.v0.9.0<br/>0.9.0\"]\n"
              "    end\n"
              "    c0_1 -->|replaces| c0_0\n"
              "    c0_3 -.->|skips| c0_0\n"
              "    c0_1 -.->|skipRange| c0_0\n"
              "    c0_2 -.->|skipRange| c0_0\n"
              "    c0_2 -->|replaces| c0_1\n"
              "    c0_4 -->|replaces| c0_3\n"
              "    classDef head stroke-width:3px\n"
              "    classDef stranded stroke:#c00,stroke-dasharray:5 5\n"
              "    classDef outside stroke-dasharray:2 2\n"
              "    class c0_0 head\n"
              "    class c0_4 stranded\n");
}

TEST(GraphCli, FormatsAndData) {
    const std::string src = test::testdata("catalogs/graph-edge").string();
    auto r = test::run_kpkg({"catalog", "graph", src, "p", "--channel", "stable"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("package p, channel stable: head p.v1.2.0", 0), 0u) << r.out;
    r = test::run_kpkg({"catalog", "graph", src, "p", "--format", "dot"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("digraph", 0), 0u);
    r = test::run_kpkg({"catalog", "graph", src, "p", "--format", "mermaid"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("flowchart LR\n", 0), 0u);

    r = test::run_kpkg({"-o", "json", "catalog", "graph", src, "p", "--channel", "tail"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto docs = io::parse_json(r.out, "out.json");
    ASSERT_TRUE(docs.ok()) << docs.error().str();
    const io::Node& doc = (*docs)[0].root;
    EXPECT_EQ(doc.get("package")->text, "p");
    const io::Node& ch = doc.get("channels")->items.at(0);
    EXPECT_EQ(ch.get("name")->text, "tail");
    EXPECT_EQ(ch.get("heads")->items.at(0).text, "p.v1.2.0");
    const io::Node& edge = ch.get("edges")->items.back();
    EXPECT_EQ(edge.get("from")->text, "p.v0.5.0");
    EXPECT_EQ(edge.get("to")->text, "p.v1.1.0");
    EXPECT_EQ(edge.get("kind")->text, "replaces");
    bool saw_outside = false;
    for (const auto& e : ch.get("entries")->items)
        if (e.get("name")->text == "p.v0.5.0") {
            saw_outside = true;
            EXPECT_EQ(e.get("inChannel")->as_bool(), std::optional<bool>(false));
        }
    EXPECT_TRUE(saw_outside);
}

TEST(GraphCli, Errors) {
    const std::string src = test::testdata("catalogs/graph-edge").string();
    auto r = test::run_kpkg({"catalog", "graph", src, "q"});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("package \"q\" is not in the catalog"), std::string::npos) << r.err;
    r = test::run_kpkg({"catalog", "graph", src, "p", "--channel", "nope"});
    EXPECT_EQ(r.exit_code, 3);
    r = test::run_kpkg({"catalog", "graph", src, "p", "--format", "png"});
    EXPECT_EQ(r.exit_code, 2);
    r = test::run_kpkg({"catalog", "graph", src});
    EXPECT_EQ(r.exit_code, 2);
    r = test::run_kpkg({"catalog", "graph", "/nonexistent/catalog", "p"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(GraphCorpus, EveryPackageOfARealCatalogHasAGraph) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto cfg = catalog::load_catalog(corpus / "olm" / "large" / "certified-v4.22");
    ASSERT_TRUE(cfg.ok()) << cfg.error().str();
    std::size_t channels = 0, heads = 0;
    for (const auto& p : cfg->packages) {
        auto graphs = catalog::package_graph(*cfg, cfg->string(p.name));
        ASSERT_TRUE(graphs.ok()) << cfg->str(p.name) << ": " << graphs.error().str();
        for (const auto& g : *graphs) {
            ++channels;
            heads += g.heads.size() == 1 ? 1 : 0;
            EXPECT_FALSE(catalog::graph_dot({g}).empty());
        }
    }
    EXPECT_GT(channels, 0u);
    EXPECT_EQ(heads, channels); // a valid catalog: one head per channel
}
