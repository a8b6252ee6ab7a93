#include <gtest/gtest.h>

#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/query.hpp"
#include "kpkg/catalog/report.hpp"
#include "kpkg/catalog/validate.hpp"
#include "kpkg/io/emit.hpp"
#include "support/model_builder.hpp"
#include "support/support.hpp"

using namespace kpkg;

namespace {

std::vector<std::string> heads(const std::vector<test::EntrySpec>& entries) {
    const auto c = test::channel_catalog(entries);
    return catalog::names_of(c, catalog::channel_heads(c, c.channels[0]));
}

} // namespace

TEST(ChannelHeads, OneHead) {
    EXPECT_EQ(heads({{"a"}, {"b", "a"}, {"c", "b"}}), std::vector<std::string>{"c"});
}

TEST(ChannelHeads, SkippedEntriesAreNotHeads) {
    EXPECT_EQ(heads({{"a"}, {"b", "a"}, {"b2", "a"}, {"c", "b", {"b2"}}}),
              std::vector<std::string>{"c"});
}

TEST(ChannelHeads, SeveralHeadsSorted) {
    EXPECT_EQ(heads({{"z"}, {"a"}, {"m", "a"}}), (std::vector<std::string>{"m", "z"}));
}

TEST(ChannelHeads, CycleHasNoHead) {
    EXPECT_TRUE(heads({{"a", "b"}, {"b", "a"}}).empty());
}

TEST(CatalogQuery, ListsSampleCatalog) {
    auto cfg = catalog::load_catalog(test::testdata("catalog")).take();
    auto pkgs = catalog::list_packages(cfg);
    ASSERT_EQ(pkgs.size(), 2u);
    EXPECT_EQ(pkgs[1].name, "vault");
    EXPECT_EQ(pkgs[1].channels, 2u);
    EXPECT_EQ(pkgs[1].bundles, 5u);
    EXPECT_EQ(pkgs[1].head, "vault-operator.v1.2.0");

    auto chans = catalog::list_channels(cfg, std::string("etcd"));
    ASSERT_TRUE(chans.ok());
    ASSERT_EQ(chans->size(), 2u);
    EXPECT_EQ((*chans)[0].name, "alpha");
    EXPECT_EQ((*chans)[0].heads, std::vector<std::string>{"etcdoperator.v0.9.4"});

    auto all = catalog::list_bundles(cfg, std::nullopt);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->size(), 12u); // channel entries, not distinct bundles
    EXPECT_EQ(all->front().package, "etcd");
    EXPECT_EQ(all->front().version, "0.9.0");
}

TEST(CatalogQuery, UnknownPackage) {
    auto cfg = catalog::load_catalog(test::testdata("catalog")).take();
    auto r = catalog::list_bundles(cfg, std::string("etdc"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    ASSERT_EQ(r.error().notes.size(), 1u);
    EXPECT_EQ(r.error().notes[0], "did you mean \"etcd\"?");
}

// The -o json documents are built by the library: a caller gets what the commands print.
std::string compact(const io::Node& n) {
    std::string s = io::to_json(n, io::JsonStyle{.indent = 0});
    while (!s.empty() && s.back() == '\n')
        s.pop_back();
    return s;
}

TEST(CatalogReport, ListDocuments) {
    auto cfg = catalog::load_catalog(test::testdata("catalog")).take();
    EXPECT_EQ(compact(catalog::packages_node(catalog::list_packages(cfg))),
              R"([{"name":"etcd","defaultChannel":"stable","channels":2,"bundles":3,)"
              R"("head":"etcdoperator.v0.9.4"},{"name":"vault","defaultChannel":"stable",)"
              R"("channels":2,"bundles":5,"head":"vault-operator.v1.2.0"}])");
    EXPECT_EQ(
        compact(catalog::channels_node(catalog::list_channels(cfg, std::string("etcd")).take())),
        R"([{"package":"etcd","name":"alpha","head":"etcdoperator.v0.9.4",)"
        R"("heads":["etcdoperator.v0.9.4"],"entries":3},{"package":"etcd","name":"stable",)"
        R"("head":"etcdoperator.v0.9.4","heads":["etcdoperator.v0.9.4"],"entries":2}])");
    catalog::BundleRow row;
    row.package = "p";
    row.channel = "c";
    row.name = "p.v2";
    row.version = "2.0.0";
    row.replaces = "p.v1";
    row.skips = {"p.v1a", "p.v1b"};
    row.skip_range = "<2.0.0";
    row.image = "quay.io/p@sha256:00";
    EXPECT_EQ(compact(catalog::bundles_node({row})),
              R"([{"package":"p","channel":"c","name":"p.v2","version":"2.0.0",)"
              R"("replaces":"p.v1","skips":["p.v1a","p.v1b"],"skipRange":"<2.0.0",)"
              R"("image":"quay.io/p@sha256:00"}])");
}

TEST(CatalogReport, ValidateDocumentCountsAndFindings) {
    std::vector<catalog::Finding> issues(2);
    issues[0].severity = catalog::Severity::error;
    issues[0].scope = model::Scope::package;
    issues[0].rule = "a.rule";
    issues[0].package = "etcd";
    issues[0].message = "m";
    issues[0].pos.file = "f.yaml";
    issues[0].pos.line = 3;
    issues[0].pos.column = 5;
    issues[1].severity = catalog::Severity::warning;
    EXPECT_EQ(compact(catalog::validate_report_node(issues)),
              R"({"valid":false,"errors":1,"warnings":1,"findings":[)"
              R"({"severity":"error","scope":"package","rule":"a.rule","package":"etcd",)"
              R"("channel":"","bundle":"","message":"m","file":"f.yaml","line":3,"column":5},)"
              R"({"severity":"warning","scope":"catalog","rule":"","package":"","channel":"",)"
              R"("bundle":"","message":"","file":"","line":0,"column":0}]})");
    EXPECT_EQ(compact(catalog::validate_report_node({})),
              R"({"valid":true,"errors":0,"warnings":0,"findings":[]})");
}
