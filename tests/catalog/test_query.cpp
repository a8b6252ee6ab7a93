#include <gtest/gtest.h>

#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/query.hpp"
#include "support/support.hpp"

using namespace kpkg;

namespace {

declcfg::Channel channel(std::vector<declcfg::ChannelEntry> entries) {
    declcfg::Channel c;
    c.package = "p";
    c.name = "c";
    c.entries = std::move(entries);
    return c;
}

declcfg::ChannelEntry entry(std::string name, std::string replaces = {},
                          std::vector<std::string> skips = {}) {
    declcfg::ChannelEntry e;
    e.name = std::move(name);
    e.replaces = std::move(replaces);
    e.skips = std::move(skips);
    return e;
}

} // namespace

TEST(ChannelHeads, OneHead) {
    auto c = channel({entry("a"), entry("b", "a"), entry("c", "b")});
    EXPECT_EQ(catalog::channel_heads(c), std::vector<std::string>{"c"});
}

TEST(ChannelHeads, SkippedEntriesAreNotHeads) {
    auto c = channel({entry("a"), entry("b", "a"), entry("b2", "a"), entry("c", "b", {"b2"})});
    EXPECT_EQ(catalog::channel_heads(c), std::vector<std::string>{"c"});
}

TEST(ChannelHeads, SeveralHeadsSorted) {
    auto c = channel({entry("z"), entry("a"), entry("m", "a")});
    EXPECT_EQ(catalog::channel_heads(c), (std::vector<std::string>{"m", "z"}));
}

TEST(ChannelHeads, CycleHasNoHead) {
    auto c = channel({entry("a", "b"), entry("b", "a")});
    EXPECT_TRUE(catalog::channel_heads(c).empty());
}

TEST(CatalogQuery, ListsSampleCatalog) {
    auto cfg = catalog::load(test::testdata("catalog")).take();
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
    auto cfg = catalog::load(test::testdata("catalog")).take();
    auto r = catalog::list_bundles(cfg, std::string("etdc"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    ASSERT_EQ(r.error().notes.size(), 1u);
    EXPECT_EQ(r.error().notes[0], "did you mean \"etcd\"?");
}
