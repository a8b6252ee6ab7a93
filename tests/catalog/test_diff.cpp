#include <gtest/gtest.h>

#include <set>

#include "kpkg/catalog/diff.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/io/load.hpp"
#include "support/support.hpp"

using namespace kpkg;
using catalog::EdgeKind;
using catalog::PackageChange;

namespace {

model::Catalog load(const std::filesystem::path& p) {
    auto cfg = catalog::load_catalog(p);
    EXPECT_TRUE(cfg.ok()) << (cfg.ok() ? "" : cfg.error().str());
    return cfg.ok() ? std::move(cfg).take() : model::Catalog{};
}

catalog::CatalogDiff fixture_diff() {
    return catalog::diff(load(test::testdata("catalogs/diff-old")),
                         load(test::testdata("catalogs/diff-new")));
}

const PackageChange* find(const catalog::CatalogDiff& d, const std::string& name) {
    for (const auto& p : d.packages)
        if (p.name == name) return &p;
    return nullptr;
}

} // namespace

TEST(CatalogDiff, IdenticalCatalogsHaveNoDifferences) {
    auto cfg = load(test::testdata("catalog"));
    const auto d = catalog::diff(cfg, cfg);
    EXPECT_TRUE(d.empty());
    EXPECT_EQ(catalog::diff_text(d), "no differences\n");
}

TEST(CatalogDiff, BlobOrderAndValueKeyOrderDoNotCount) {
    // delta is written differently in the two fixtures (blob order, map key order) but says
    // the same thing.
    const auto d = fixture_diff();
    EXPECT_EQ(find(d, "delta"), nullptr);
}

TEST(CatalogDiff, AddedAndRemovedPackagesListEverything) {
    const auto d = fixture_diff();
    ASSERT_EQ(d.packages.size(), 3u);
    const PackageChange* alpha = find(d, "alpha");
    ASSERT_NE(alpha, nullptr);
    EXPECT_EQ(alpha->status, PackageChange::Status::removed);
    EXPECT_EQ(alpha->channels_removed, std::vector<std::string>{"stable"});
    EXPECT_EQ(alpha->bundles_removed, std::vector<std::string>{"alpha.v1.0.0"});
    const PackageChange* gamma = find(d, "gamma");
    ASSERT_NE(gamma, nullptr);
    EXPECT_EQ(gamma->status, PackageChange::Status::added);
    EXPECT_EQ(gamma->new_default_channel, "stable");
    EXPECT_EQ(gamma->bundles_added, std::vector<std::string>{"gamma.v0.1.0"});
}

TEST(CatalogDiff, ChangedPackage) {
    const auto d = fixture_diff();
    const PackageChange* beta = find(d, "beta");
    ASSERT_NE(beta, nullptr);
    EXPECT_EQ(beta->status, PackageChange::Status::changed);
    EXPECT_EQ(beta->old_default_channel, "stable");
    EXPECT_EQ(beta->new_default_channel, "fast");
    EXPECT_EQ(beta->channels_added, std::vector<std::string>{"fast"});
    EXPECT_EQ(beta->channels_removed, std::vector<std::string>{"old"});
    ASSERT_EQ(beta->channels_changed.size(), 1u);
    const auto& stable = beta->channels_changed[0];
    EXPECT_EQ(stable.name, "stable");
    EXPECT_TRUE(stable.head_moved());
    EXPECT_EQ(stable.old_heads, std::vector<std::string>{"beta.v1.1.0"});
    EXPECT_EQ(stable.new_heads, std::vector<std::string>{"beta.v1.2.0"});
    EXPECT_EQ(stable.entries_added, std::vector<std::string>{"beta.v1.2.0"});
    EXPECT_TRUE(stable.entries_removed.empty());
    const std::set<catalog::Edge> added(stable.edges_added.begin(), stable.edges_added.end());
    const std::set<catalog::Edge> expected = {
        {"beta.v1.1.0", "beta.v1.2.0", EdgeKind::replaces},
        {"beta.v1.0.0", "beta.v1.2.0", EdgeKind::skip_range},
        {"beta.v1.1.0", "beta.v1.2.0", EdgeKind::skip_range},
    };
    EXPECT_EQ(added, expected);
    EXPECT_TRUE(stable.edges_removed.empty());

    EXPECT_EQ(beta->bundles_added, std::vector<std::string>{"beta.v1.2.0"});
    ASSERT_EQ(beta->bundles_changed.size(), 2u);
    const auto& repushed = beta->bundles_changed[0];
    EXPECT_EQ(repushed.name, "beta.v1.0.0");
    EXPECT_EQ(repushed.old_image, "registry.example.com/beta-bundle:v1.0.0");
    EXPECT_NE(repushed.new_image.find("@sha256:"), std::string::npos);
    EXPECT_FALSE(repushed.properties_changed);
    const auto& props = beta->bundles_changed[1];
    EXPECT_EQ(props.name, "beta.v1.1.0");
    EXPECT_TRUE(props.properties_changed);
    EXPECT_EQ(props.old_image, props.new_image);
    EXPECT_EQ(props.old_version, "1.1.0");
    EXPECT_EQ(props.new_version, "1.1.0");
}

TEST(CatalogDiff, RemovedEntriesAndEdgesGoTheOtherWay) {
    // The reverse diff swaps every addition for a removal.
    const auto d = catalog::diff(load(test::testdata("catalogs/diff-new")),
                                 load(test::testdata("catalogs/diff-old")));
    const PackageChange* beta = find(d, "beta");
    ASSERT_NE(beta, nullptr);
    ASSERT_EQ(beta->channels_changed.size(), 1u);
    EXPECT_EQ(beta->channels_changed[0].entries_removed, std::vector<std::string>{"beta.v1.2.0"});
    EXPECT_EQ(beta->channels_changed[0].edges_removed.size(), 3u);
    EXPECT_TRUE(beta->channels_changed[0].edges_added.empty());
    EXPECT_EQ(find(d, "alpha")->status, PackageChange::Status::added);
    EXPECT_EQ(find(d, "gamma")->status, PackageChange::Status::removed);
}

TEST(CatalogDiff, Text) {
    EXPECT_EQ(catalog::diff_text(fixture_diff()),
              "- package alpha (1 channel, 1 bundle)\n"
              "~ package beta\n"
              "    default channel: stable -> fast\n"
              "  + channel fast\n"
              "  - channel old\n"
              "  ~ channel stable\n"
              "      head: beta.v1.1.0 -> beta.v1.2.0\n"
              "      + entry beta.v1.2.0\n"
              "      + edge beta.v1.1.0 -> beta.v1.2.0 (replaces)\n"
              "      + edge beta.v1.0.0 -> beta.v1.2.0 (skipRange)\n"
              "      + edge beta.v1.1.0 -> beta.v1.2.0 (skipRange)\n"
              "  + bundle beta.v1.2.0\n"
              "  ~ bundle beta.v1.0.0\n"
              "      image: registry.example.com/beta-bundle:v1.0.0 -> "
              "registry.example.com/beta-bundle@sha256:"
              "1111111111111111111111111111111111111111111111111111111111111111\n"
              "  ~ bundle beta.v1.1.0\n"
              "      properties changed\n"
              "+ package gamma (1 channel, 1 bundle)\n"
              "1 package added, 1 package removed, 1 package changed, 2 channels added, 2 "
              "channels removed, 1 head moved, 2 bundles added, 1 bundle removed, 2 bundles "
              "changed, 3 edges added\n");
}

TEST(CatalogDiff, Data) {
    const io::Node doc = catalog::diff_node(fixture_diff());
    const io::Node* pkgs = doc.get("packages");
    ASSERT_NE(pkgs, nullptr);
    ASSERT_EQ(pkgs->items.size(), 3u);
    const io::Node& beta = pkgs->items[1];
    EXPECT_EQ(beta.get("name")->text, "beta");
    EXPECT_EQ(beta.get("status")->text, "changed");
    EXPECT_EQ(beta.get("defaultChannel")->get("old")->text, "stable");
    EXPECT_EQ(beta.get("defaultChannel")->get("new")->text, "fast");
    const io::Node& stable = beta.get("channels")->get("changed")->items.at(0);
    EXPECT_EQ(stable.get("heads")->get("new")->items.at(0).text, "beta.v1.2.0");
    EXPECT_EQ(stable.get("edges")->get("added")->items.at(0).get("kind")->text, "replaces");
    EXPECT_EQ(beta.get("bundles")->get("changed")->items.size(), 2u);
    // Added and removed packages carry no defaultChannel change.
    EXPECT_EQ(pkgs->items[0].get("defaultChannel"), nullptr);
    const io::Node* sum = doc.get("summary");
    ASSERT_NE(sum, nullptr);
    EXPECT_EQ(sum->get("headsMoved")->text, "1");
    EXPECT_EQ(sum->get("edgesAdded")->text, "3");
    EXPECT_EQ(sum->get("packagesRemoved")->text, "1");
}

TEST(CatalogDiffCli, ExitCodes) {
    const std::string old_src = test::testdata("catalogs/diff-old").string();
    const std::string new_src = test::testdata("catalogs/diff-new").string();
    auto r = test::run_kpkg({"catalog", "diff", old_src, new_src});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, catalog::diff_text(fixture_diff()));
    r = test::run_kpkg({"catalog", "diff", old_src, new_src, "--exit-code"});
    EXPECT_EQ(r.exit_code, 5);
    r = test::run_kpkg({"catalog", "diff", old_src, old_src, "--exit-code"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, "no differences\n");
}

TEST(CatalogDiffCli, JsonAndStdin) {
    const std::string new_src = test::testdata("catalogs/diff-new").string();
    const std::string old_text =
        test::read_file(test::testdata("catalogs/diff-old") / "catalog.yaml");
    auto r = test::run_kpkg({"-o", "json", "catalog", "diff", "-", new_src}, old_text);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto docs = io::parse_json(r.out, "out.json");
    ASSERT_TRUE(docs.ok()) << docs.error().str();
    EXPECT_EQ((*docs)[0].root.get("summary")->get("packagesAdded")->text, "1");
}

TEST(CatalogDiffCli, BadInput) {
    const std::string good = test::testdata("catalogs/diff-old").string();
    auto r = test::run_kpkg({"catalog", "diff", good, "/nonexistent/catalog"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "");
    test::TempDir d;
    d.write("bad/catalog.yaml", "schema: olm.package\nname: [unclosed\n");
    r = test::run_kpkg({"catalog", "diff", good, (d / "bad").string(), "--exit-code"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("bad/catalog.yaml:3:1: unclosed '['"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    r = test::run_kpkg({"catalog", "diff", good});
    EXPECT_EQ(r.exit_code, 2);
}

TEST(CatalogDiffCorpus, CommunityUpdate) {
    KPKG_REQUIRE_CORPUS(corpus);
    const auto large = corpus / "olm" / "large";
    auto old_cfg = load(large / "community-v4.21");
    auto new_cfg = load(large / "community-v4.22");
    const auto d = catalog::diff(old_cfg, new_cfg);
    // The packages of v4.21 that v4.22 no longer has: the directories missing from it.
    std::set<std::string> missing;
    for (const auto& e : std::filesystem::directory_iterator(large / "community-v4.21"))
        if (!std::filesystem::exists(large / "community-v4.22" / e.path().filename()))
            missing.insert(e.path().filename().string());
    std::set<std::string> removed, added;
    for (const auto& p : d.packages) {
        if (p.status == PackageChange::Status::removed) removed.insert(p.name);
        if (p.status == PackageChange::Status::added) added.insert(p.name);
    }
    EXPECT_FALSE(missing.empty());
    EXPECT_EQ(removed, missing);
    EXPECT_TRUE(added.empty());
    // Each direction is the other's mirror image.
    const auto back = catalog::diff(new_cfg, old_cfg);
    EXPECT_EQ(back.packages.size(), d.packages.size());
    EXPECT_TRUE(catalog::diff(new_cfg, new_cfg).empty());
}
