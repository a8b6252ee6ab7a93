#include <gtest/gtest.h>

#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/query.hpp"
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
