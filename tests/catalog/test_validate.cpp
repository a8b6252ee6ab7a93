// kpkg catalog validate: one small invalid catalog per rule, the CLI, and the corpus verdicts.
#include <algorithm>
#include <set>
#include <sstream>

#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/validate.hpp"
#include "support/support.hpp"

namespace kpkg::test {
namespace {

using catalog::Finding;

std::vector<Finding> validate_dir(const fs::path& dir) {
    auto cfg = catalog::load(dir);
    EXPECT_TRUE(cfg.ok()) << (cfg.ok() ? "" : cfg.error().str());
    if (!cfg) return {};
    return catalog::validate(*cfg);
}

std::vector<Finding> fixture(const std::string& rule) {
    return validate_dir(testdata("catalogs/validate-" + rule));
}

// The one finding with this rule; fails the test unless there is exactly one.
Finding only(const std::vector<Finding>& fs, const std::string& rule) {
    std::vector<Finding> hit;
    for (const auto& f : fs)
        if (f.rule == rule) hit.push_back(f);
    EXPECT_EQ(hit.size(), 1u) << "rule " << rule << ": " << catalog::format_tree(fs);
    return hit.empty() ? Finding{} : hit.front();
}

void expect_at(const Finding& f, std::uint32_t line) {
    EXPECT_NE(f.pos.file.find("index.yaml"), std::string::npos) << f.pos.str();
    EXPECT_EQ(f.pos.line, line) << f.message;
}

TEST(CatalogValidate, PackageName) {
    auto f = only(fixture("package-name"), "package.name");
    EXPECT_NE(f.message.find("invalid package name \"Foo_Bar\""), std::string::npos);
    expect_at(f, 2);
}

TEST(CatalogValidate, DuplicatePackage) {
    auto f = only(fixture("duplicate-package"), "package.duplicate");
    EXPECT_EQ(f.message, "duplicate package \"foo\"");
    expect_at(f, 22);
}

TEST(CatalogValidate, UnknownPackage) {
    auto fs = fixture("unknown-package");
    auto c = only(fs, "channel.unknown-package");
    EXPECT_EQ(c.message, "unknown package \"bar\" for channel \"stable\"");
    expect_at(c, 22);
    auto b = only(fs, "bundle.unknown-package");
    EXPECT_EQ(b.message, "unknown package \"bar\" for bundle \"bar.v1.0.0\"");
    expect_at(b, 28);
}

TEST(CatalogValidate, DuplicateChannel) {
    auto f = only(fixture("duplicate-channel"), "channel.duplicate");
    EXPECT_EQ(f.message, "package \"foo\" contains duplicate channel \"stable\"");
    expect_at(f, 12);
}

TEST(CatalogValidate, DuplicateBundle) {
    auto f = only(fixture("duplicate-bundle"), "bundle.duplicate");
    EXPECT_EQ(f.message, "package \"foo\" has duplicate bundle \"foo.v1.0.0\"");
    expect_at(f, 22);
}

TEST(CatalogValidate, OlmPackageProperty) {
    auto f = only(fixture("olm-package"), "bundle.olm-package");
    EXPECT_EQ(f.bundle, "foo.v1.0.1");
    EXPECT_NE(f.message.find("does not match \"olm.package\" property \"bar\""), std::string::npos);
    expect_at(f, 24);
}

TEST(CatalogValidate, BundleInNoChannel) {
    auto f = only(fixture("no-channel"), "bundle.no-channel");
    EXPECT_EQ(f.message, "package \"foo\", bundle \"foo.v2.0.0\" not found in any channel entries");
    expect_at(f, 22);
}

TEST(CatalogValidate, EntryWithoutBundle) {
    auto f = only(fixture("missing-bundle"), "channel.missing-bundle");
    EXPECT_NE(f.message.find("\"foo.v1.0.0\""), std::string::npos);
    EXPECT_GT(f.pos.line, 0u);
}

TEST(CatalogValidate, MultipleHeads) {
    auto f = only(fixture("heads"), "channel.head");
    EXPECT_EQ(f.message, "multiple channel heads found in graph: foo.v1.0.0, foo.v1.1.0");
    EXPECT_EQ(f.channel, "stable");
    expect_at(f, 6);
}

TEST(CatalogValidate, NoHead) {
    auto f = only(fixture("no-head"), "channel.head");
    EXPECT_EQ(f.message, "no channel head found in graph");
    expect_at(f, 6);
}

TEST(CatalogValidate, ReplacesCycle) {
    auto f = only(fixture("cycle"), "channel.cycle");
    EXPECT_EQ(f.message, "detected cycle in replaces chain of upgrade graph: "
                         "foo.v1.1.0 -> foo.v1.0.0 -> foo.v1.1.0");
    expect_at(f, 6);
}

TEST(CatalogValidate, StrandedBundles) {
    auto f = only(fixture("stranded"), "channel.stranded");
    EXPECT_EQ(f.message, "channel contains one or more stranded bundles: foo.v1.0.0");
    expect_at(f, 6);
}

TEST(CatalogValidate, DefaultChannel) {
    auto fs = fixture("default-channel");
    int n = 0;
    for (const auto& f : fs) {
        if (f.rule != "package.default-channel") continue;
        ++n;
        if (f.package == "foo") {
            EXPECT_EQ(f.message, "default channel \"beta\" not found in channels list");
            expect_at(f, 2);
        } else {
            EXPECT_EQ(f.message, "default channel must be set");
            expect_at(f, 22);
        }
    }
    EXPECT_EQ(n, 2) << catalog::format_tree(fs);
}

TEST(CatalogValidate, DuplicateVersion) {
    auto f = only(fixture("duplicate-version"), "package.duplicate-version");
    EXPECT_EQ(f.message,
              "duplicate versions found in bundles: {1.0.0: [foo.v1.0.0, foo.v1.0.0-copy]}");
    expect_at(f, 2);
}

TEST(CatalogValidate, SkipRangeAndEmptySkip) {
    auto fs = fixture("skip-range");
    // Like opm, an unparsable skipRange is not an error of the catalog.
    for (const auto& f : fs)
        EXPECT_NE(f.rule, "bundle.skip-range") << f.message;
    auto s = only(fs, "bundle.skip");
    EXPECT_EQ(s.message, "skip[0] is empty");
}

TEST(CatalogValidate, Image) {
    auto fs = fixture("image");
    int n = 0;
    for (const auto& f : fs) {
        if (f.rule != "bundle.image") continue;
        ++n;
        if (f.bundle == "foo.v1.0.0") {
            EXPECT_EQ(f.message, "bundle image must be set");
            expect_at(f, 14);
        } else {
            EXPECT_EQ(f.message, "invalid image reference \"quay.io/x/foo bar:v1\"");
        }
    }
    EXPECT_EQ(n, 2) << catalog::format_tree(fs);
}

TEST(CatalogValidate, Version) {
    auto f = only(fixture("version"), "bundle.version");
    EXPECT_NE(f.message.find("error parsing bundle \"foo.v1.1.0\" version \"1.1.x\""),
              std::string::npos);
    expect_at(f, 22);
}

TEST(CatalogValidate, Deprecations) {
    auto fs = fixture("deprecations");
    std::vector<std::string> msgs;
    for (const auto& f : fs) {
        EXPECT_EQ(f.scope, catalog::Scope::deprecation) << f.message;
        EXPECT_GT(f.pos.line, 0u) << f.message;
        msgs.push_back(f.message);
    }
    auto has = [&](const std::string& m) {
        return std::find(msgs.begin(), msgs.end(), m) != msgs.end();
    };
    EXPECT_TRUE(has("deprecated channel \"beta\" not found in package \"foo\""));
    EXPECT_TRUE(has("deprecated bundle \"foo.v0.9.0\" not found in package \"foo\""));
    EXPECT_TRUE(has("olm.deprecations refers to unknown package \"nope\""));
    EXPECT_TRUE(has("olm.deprecations entry: message must be set"));
    EXPECT_EQ(msgs.size(), 5u) << catalog::format_tree(fs);
}

TEST(CatalogValidate, AllErrorsInOneRunAsTree) {
    auto fs = fixture("default-channel");
    std::string tree = catalog::format_tree(fs);
    EXPECT_EQ(tree.rfind("invalid index:\n", 0), 0u) << tree;
    EXPECT_NE(tree.find("├── invalid package \"bar\":"), std::string::npos) << tree;
    EXPECT_NE(tree.find("└── invalid package \"foo\":"), std::string::npos) << tree;
    EXPECT_NE(tree.find("index.yaml:2:1: default channel \"beta\""), std::string::npos) << tree;
}

TEST(CatalogValidateCli, ExitCodesAndJson) {
    auto bad = run_kpkg({"catalog", "validate", testdata("catalogs/validate-heads").string()});
    EXPECT_EQ(bad.exit_code, 3) << bad.err;
    EXPECT_NE(bad.out.find("invalid channel \"stable\""), std::string::npos) << bad.out;
    auto j = run_kpkg(
        {"-o", "json", "catalog", "validate", testdata("catalogs/validate-heads").string()});
    EXPECT_EQ(j.exit_code, 3);
    EXPECT_NE(j.out.find("\"rule\": \"channel.head\""), std::string::npos) << j.out;
    EXPECT_NE(j.out.find("\"valid\": false"), std::string::npos) << j.out;
    auto load =
        run_kpkg({"catalog", "validate", testdata("catalogs/validate-load-error").string()});
    EXPECT_EQ(load.exit_code, 3) << load.err;
    EXPECT_NE(load.out.find("index.yaml:"), std::string::npos) << load.out;
    auto missing = run_kpkg({"catalog", "validate", "/nonexistent/catalog"});
    EXPECT_EQ(missing.exit_code, 1) << missing.out;
}

// Packages named by the findings (load errors name none).
std::set<std::string> invalid_packages(const std::vector<Finding>& fs) {
    std::set<std::string> out;
    for (const auto& f : fs)
        out.insert(f.package);
    return out;
}

TEST(CatalogValidateCorpus, DerivedCommunityNamesExactlyTheInvalidPackages) {
    KPKG_REQUIRE_CORPUS(corpus);
    fs::path base = corpus / "olm/large/derived-community";
    std::set<std::string> want;
    std::istringstream in(read_file(base / "invalid-packages.txt"));
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) want.insert(line);
    ASSERT_EQ(want.size(), 16u);
    auto fs = validate_dir(base / "catalog");
    EXPECT_EQ(invalid_packages(fs), want) << catalog::format_tree(fs);
    for (const auto& f : fs)
        EXPECT_TRUE(f.rule == "channel.head" || f.rule == "channel.stranded") << f.message;
}

TEST(CatalogValidateCorpus, ValidCatalogsPass) {
    KPKG_REQUIRE_CORPUS(corpus);
    for (const char* rel :
         {"olm/large/derived-community/catalog-valid", "olm/large/certified-v4.22",
          "olm/large/community-v4.21", "olm/large/community-v4.22",
          "olm/fbc/registry-action-index-latest", "olm/fbc/registry-action-index-old",
          "olm/fbc/registry-action-list-index", "olm/fbc/registry-fbc-dir-example",
          "olm/fbc/olm-e2e-deprecations"}) {
        auto fs = validate_dir(corpus / rel);
        EXPECT_TRUE(fs.empty()) << rel << "\n" << catalog::format_tree(fs);
    }
}

TEST(CatalogValidateCorpus, LegacyStreamIsInvalid) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto fs = validate_dir(corpus / "olm/fbc/registry-e2e-test-configs");
    ASSERT_FALSE(fs.empty());
    bool no_channel = false;
    for (const auto& f : fs)
        no_channel = no_channel || f.rule == "bundle.no-channel";
    EXPECT_TRUE(no_channel) << catalog::format_tree(fs);
}

} // namespace
} // namespace kpkg::test
