// The one findings vocabulary: model::Severity, severity_name, count and has_errors, shared by
// bundle findings (with a subject) and catalog findings (with scope, package, channel, bundle).
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "kpkg/bundle/validate.hpp"
#include "kpkg/catalog/validate.hpp"
#include "kpkg/model/finding.hpp"

using namespace kpkg;

// Both validators speak the model's vocabulary: no copies of the enum or of the base shape.
static_assert(std::is_same_v<bundle::Severity, model::Severity>);
static_assert(std::is_same_v<catalog::Severity, model::Severity>);
static_assert(std::is_base_of_v<model::Finding, bundle::Finding>);
static_assert(std::is_base_of_v<model::Finding, catalog::Finding>);

TEST(Finding, SeverityNames) {
    EXPECT_STREQ(model::severity_name(model::Severity::error), "error");
    EXPECT_STREQ(model::severity_name(model::Severity::warning), "warning");
    EXPECT_STREQ(bundle::severity_name(bundle::Severity::warning), "warning");
    EXPECT_STREQ(catalog::severity_name(catalog::Severity::error), "error");
}

TEST(Finding, DefaultsToAnErrorWithoutPosition) {
    const model::Finding f;
    EXPECT_EQ(f.severity, model::Severity::error);
    EXPECT_TRUE(f.rule.empty());
    EXPECT_TRUE(f.pos.empty());
}

template <class F>
std::vector<F> three(model::Severity last) {
    std::vector<F> v(3);
    v[0].severity = model::Severity::warning;
    v[1].severity = model::Severity::warning;
    v[2].severity = last;
    return v;
}

TEST(Finding, CountAndHasErrorsOverEveryKindOfFinding) {
    const auto b = three<bundle::Finding>(model::Severity::error);
    EXPECT_EQ(model::count(b, model::Severity::warning), 2u);
    EXPECT_EQ(bundle::count(b, bundle::Severity::error), 1u);
    EXPECT_TRUE(bundle::has_errors(b));

    const auto c = three<catalog::Finding>(model::Severity::warning);
    EXPECT_EQ(catalog::count(c, catalog::Severity::warning), 3u);
    EXPECT_EQ(catalog::count(c, catalog::Severity::error), 0u);
    EXPECT_FALSE(catalog::has_errors(c));

    const auto m = three<model::Finding>(model::Severity::error);
    EXPECT_TRUE(model::has_errors(m));
    EXPECT_FALSE(model::has_errors(std::vector<model::Finding>{}));
}

// A catalog's own findings carry their severity: load problems are errors, notes warnings.
TEST(Finding, CatalogFindingIsAFindingWithWhatItIsAbout) {
    model::CatalogFinding f;
    f.severity = model::Severity::warning;
    f.scope = model::Scope::channel;
    f.rule = "channel.head";
    f.package = "etcd";
    f.channel = "alpha";
    const model::Finding& base = f;
    EXPECT_EQ(base.rule, "channel.head");
    EXPECT_EQ(base.severity, model::Severity::warning);
    EXPECT_STREQ(model::scope_name(f.scope), "channel");
}
