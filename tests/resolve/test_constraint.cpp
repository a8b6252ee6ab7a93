// olm.constraint: parsing (OLM's api tests, field and type checks, limits), satisfies() on
// OLM's resolver scenarios, describe().
#include <gtest/gtest.h>

#include "kpkg/catalog/load.hpp"
#include "kpkg/cel/cel.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/model/constraint.hpp"
#include "support/support.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

using kpkg::ExitCode;
using kpkg::SourcePos;
using kpkg::model::Constraint;
using kpkg::model::describe;
using kpkg::model::parse_constraint;
using kpkg::model::PropertyValue;
using kpkg::model::satisfies;
using Kind = kpkg::model::Constraint::Kind;

namespace {

const SourcePos where{"catalog/etcd/index.json", 12, 7, 3};

kpkg::io::Node json(const std::string& text) {
    return kpkg::io::parse_json(text, "test").take().at(0).root;
}

Constraint parse_ok(const std::string& text) {
    auto r = parse_constraint(json(text), where);
    EXPECT_TRUE(r.ok()) << text << "\n" << (r.ok() ? "" : r.error().str());
    return r.ok() ? std::move(r).take() : Constraint{};
}

kpkg::Error parse_err(const std::string& text) {
    auto r = parse_constraint(json(text), where);
    EXPECT_FALSE(r.ok()) << text << " parsed";
    if (r.ok()) return {};
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(r.error().pos.file, where.file);
    EXPECT_EQ(r.error().pos.line, where.line);
    return r.error();
}

#define EXPECT_CONTAINS(haystack, needle)                                                          \
    EXPECT_NE(std::string(haystack).find(needle), std::string::npos)                               \
        << "\"" << (haystack) << "\" does not contain \"" << (needle) << "\""

// A bundle's properties: its olm.package and its olm.gvk properties, as in OLM's tests.
std::vector<PropertyValue> bundle(const std::string& package, const std::string& version,
                                  const std::vector<std::string>& gvks) {
    std::string text = R"([{"type": "olm.package", "value": {"packageName": ")" + package +
                       R"(", "version": ")" + version + "\"}}";
    for (const auto& g : gvks) { // "group/version/kind"
        const auto a = g.find('/'), b = g.rfind('/');
        text += R"(, {"type": "olm.gvk", "value": {"group": ")" + g.substr(0, a) +
                R"(", "version": ")" + g.substr(a + 1, b - a - 1) + R"(", "kind": ")" +
                g.substr(b + 1) + "\"}}";
    }
    text += "]";
    auto docs = kpkg::io::parse_json(text, "test").take();
    std::vector<PropertyValue> out;
    for (const auto& item : docs.at(0).root.items)
        out.push_back({item.get("type")->text, *item.get("value")});
    return out;
}

// --- operator-framework/api pkg/constraints/constraint_test.go ----------------------------------

TEST(ConstraintParse, ApiBasicGvkAndPackage) {
    Constraint c = parse_ok(R"({"failureMessage": "blah",
        "gvk": {"group": "example.com", "version": "v1", "kind": "Foo"}})");
    EXPECT_EQ(c.kind, Kind::gvk);
    EXPECT_EQ(c.failure_message, "blah");
    EXPECT_EQ(c.gvk.group, "example.com");
    EXPECT_EQ(c.gvk.version, "v1");
    EXPECT_EQ(c.gvk.kind, "Foo");

    c = parse_ok(R"({"failureMessage": "blah",
        "package": {"packageName": "foo", "versionRange": ">=1.0.0"}})");
    EXPECT_EQ(c.kind, Kind::package);
    EXPECT_EQ(c.package_name, "foo");
    EXPECT_EQ(c.version_range, ">=1.0.0");
    EXPECT_TRUE(c.range.contains(kpkg::semver::Version::parse("1.2.0").take()));
    EXPECT_FALSE(c.range.contains(kpkg::semver::Version::parse("0.9.0").take()));
}

TEST(ConstraintParse, ApiBasicCompound) {
    for (const char* key : {"all", "any", "not"}) {
        Constraint c = parse_ok(std::string(R"({"failureMessage": "blah", ")") + key +
                                R"(": {"constraints": [{"failureMessage": "blah blah",
                                   "package": {"packageName": "fuz", "versionRange": ">=1.0.0"}}]}})");
        EXPECT_EQ(c.kind, std::string(key) == "all"   ? Kind::all
                          : std::string(key) == "any" ? Kind::any
                                                      : Kind::none);
        ASSERT_EQ(c.children.size(), 1u);
        EXPECT_EQ(c.children[0].kind, Kind::package);
        EXPECT_EQ(c.children[0].failure_message, "blah blah");
        EXPECT_EQ(c.children[0].package_name, "fuz");
    }
}

TEST(ConstraintParse, ApiComplex) {
    Constraint c = parse_ok(R"({"failureMessage": "blah", "all": {"constraints": [
        {"package": {"packageName": "fuz", "versionRange": ">=1.0.0"}},
        {"gvk": {"group": "fals.example.com", "version": "v1", "kind": "Fal"}},
        {"failureMessage": "foo and buf must be stable versions", "all": {"constraints": [
            {"package": {"packageName": "foo", "versionRange": ">=1.0.0"}},
            {"package": {"packageName": "buf", "versionRange": ">=1.0.0"}},
            {"gvk": {"group": "foos.example.com", "version": "v1", "kind": "Foo"}}]}},
        {"failureMessage": "blah blah", "any": {"constraints": [
            {"gvk": {"group": "foos.example.com", "version": "v1beta1", "kind": "Foo"}},
            {"gvk": {"group": "foos.example.com", "version": "v1beta2", "kind": "Foo"}},
            {"gvk": {"group": "foos.example.com", "version": "v1", "kind": "Foo"}}]}},
        {"not": {"constraints": [
            {"gvk": {"group": "bazs.example.com", "version": "v1alpha1", "kind": "Baz"}}]}}]}})");
    ASSERT_EQ(c.kind, Kind::all);
    ASSERT_EQ(c.children.size(), 5u);
    EXPECT_EQ(c.children[2].failure_message, "foo and buf must be stable versions");
    EXPECT_EQ(c.children[2].children.size(), 3u);
    EXPECT_EQ(c.children[3].kind, Kind::any);
    EXPECT_EQ(c.children[4].kind, Kind::none);
    EXPECT_EQ(describe(c),
              "all of (package fuz in range >=1.0.0, an API fals.example.com/v1 Fal, all of ("
              "package foo in range >=1.0.0, package buf in range >=1.0.0, an API "
              "foos.example.com/v1 Foo), any of (an API foos.example.com/v1beta1 Foo, an API "
              "foos.example.com/v1beta2 Foo, an API foos.example.com/v1 Foo), none of (an API "
              "bazs.example.com/v1alpha1 Baz))");
}

TEST(ConstraintParse, ApiTooLargeAndUnknownField) {
    // Larger than 2<<16 bytes, as a node and as text.
    const std::string big = R"({"failureMessage": ")" + std::string(131072, 'x') +
                            R"(", "gvk": {"group": "g", "version": "v", "kind": "k"}})";
    EXPECT_CONTAINS(parse_err(big).message, "larger than 131072 bytes (128 KiB");
    auto r = parse_constraint(std::string_view(big), where);
    ASSERT_FALSE(r.ok());
    EXPECT_CONTAINS(r.error().message, "bytes, larger than 131072");
    // Just under the limit is fine.
    const std::string fits = R"({"failureMessage": ")" + std::string(130000, 'x') +
                             R"(", "gvk": {"group": "g", "version": "v", "kind": "k"}})";
    EXPECT_EQ(parse_ok(fits).kind, Kind::gvk);
    EXPECT_TRUE(parse_constraint(std::string_view(fits), where).ok());

    auto e = parse_err(R"({"failureMessage": "something", "arbitrary": {"key": "value"}})");
    EXPECT_CONTAINS(e.message, R"(olm.constraint: unknown field "arbitrary")");
    ASSERT_FALSE(e.notes.empty());
    EXPECT_CONTAINS(e.notes[0], "failureMessage, gvk, package, cel, all, any, not");
    // OLM resolver_test.go, TestSolveOperators_OLMConstraint_Unknown
    EXPECT_CONTAINS(
        parse_err(R"({"failureMessage": "unknown constraint", "unknown": {"foo": "bar"}})").message,
        R"(unknown field "unknown")");
    EXPECT_CONTAINS(
        parse_err(R"({"gvk": {"group": "g", "version": "v", "kind": "k", "plural": "ks"}})")
            .message,
        R"(olm.constraint gvk: unknown field "plural")");
}

// --- exactly one kind, fields and types ---------------------------------------------------------

TEST(ConstraintParse, ExactlyOneKind) {
    EXPECT_CONTAINS(parse_err("{}").message, "constraint is empty");
    EXPECT_CONTAINS(parse_err(R"({"failureMessage": "x"})").message, "constraint is empty");
    EXPECT_CONTAINS(parse_err(R"({"gvk": null})").message, "constraint is empty");
    auto e = parse_err(R"({"package": {"packageName": "a", "versionRange": ">=1.0.0"},
                           "gvk": {"group": "g", "version": "v", "kind": "k"}})");
    EXPECT_CONTAINS(e.message, "gvk and package are all given; a constraint holds exactly one");
    ASSERT_FALSE(e.notes.empty());
    EXPECT_EQ(e.notes[0], "OLM would silently use only gvk");
    e = parse_err(R"({"cel": {"rule": "true"}, "any": {"constraints": []},
                      "not": {"constraints": []}})");
    EXPECT_CONTAINS(e.message, "any, not and cel are all given");
    EXPECT_EQ(e.notes.at(0), "OLM would silently use only any");
}

TEST(ConstraintParse, DeprecatedNone) {
    EXPECT_CONTAINS(parse_err(R"({"none": {"constraints": []}})").message,
                    "\"none\" is deprecated and OLM no longer evaluates it");
    // Given with "not", OLM prefers "not" and ignores "none".
    Constraint c = parse_ok(R"({"not": {"constraints": [{"gvk": {"version": "v1", "kind": "Pod"}}]},
                                "none": {"constraints": []}})");
    EXPECT_EQ(c.kind, Kind::none);
    EXPECT_EQ(c.children.size(), 1u);
}

TEST(ConstraintParse, KeysMatchAsGoDecodesThem) {
    Constraint c =
        parse_ok(R"({"FailureMessage": "m", "GVK": {"Group": "g", "VERSION": "v1", "kind": "K"}})");
    EXPECT_EQ(c.kind, Kind::gvk);
    EXPECT_EQ(c.failure_message, "m");
    EXPECT_EQ(c.gvk.group, "g");
    EXPECT_EQ(c.gvk.version, "v1");
    EXPECT_CONTAINS(parse_err(R"({"gvk": {"group": "g", "version": "v", "kind": "k"},
                                  "GVK": {"group": "g", "version": "v", "kind": "k"}})")
                        .message,
                    R"("gvk" and "GVK" name the same field)");
    c = parse_ok(R"({"failureMessage": null, "cel": {"rule": "true"}})");
    EXPECT_EQ(c.failure_message, "");
}

TEST(ConstraintParse, FieldsAndTypes) {
    EXPECT_CONTAINS(parse_err(R"([1])").message, "a constraint must be an object, not a list");
    EXPECT_CONTAINS(parse_err(R"({"failureMessage": 1, "cel": {"rule": "true"}})").message,
                    "olm.constraint failureMessage: must be a string, not an integer");
    EXPECT_CONTAINS(parse_err(R"({"gvk": "g/v/k"})").message,
                    "olm.constraint gvk: must be an object");
    EXPECT_CONTAINS(parse_err(R"({"gvk": {"group": "g", "version": "v"}})").message,
                    "olm.constraint gvk.kind: missing");
    EXPECT_CONTAINS(parse_err(R"({"gvk": {"group": "g", "version": "", "kind": "k"}})").message,
                    "olm.constraint gvk.version: empty");
    EXPECT_CONTAINS(parse_err(R"({"gvk": {"group": 1, "version": "v", "kind": "k"}})").message,
                    "gvk.group: must be a string, not an integer");
    Constraint core = parse_ok(R"({"gvk": {"version": "v1", "kind": "Pod"}})"); // core group
    EXPECT_EQ(core.gvk.group, "");
    EXPECT_EQ(describe(core), "an API v1 Pod");

    EXPECT_CONTAINS(parse_err(R"({"package": {"versionRange": ">=1.0.0"}})").message,
                    "olm.constraint package.packageName: missing");
    EXPECT_CONTAINS(parse_err(R"({"package": {"packageName": "a"}})").message,
                    "package.versionRange: missing");
    EXPECT_CONTAINS(parse_err(R"({"package": {"packageName": "a", "versionRange": ""}})").message,
                    "package.versionRange: empty");
    auto e = parse_err(R"({"package": {"packageName": "a", "versionRange": ">=1.0"}})");
    EXPECT_CONTAINS(e.message, "olm.constraint package.versionRange: ");
    EXPECT_CONTAINS(e.message, "1.0");
    EXPECT_CONTAINS(parse_err(R"({"package": {"packageName": "a", "versionRange": ">=1.0.0",
                                             "version": "1.0.0"}})")
                        .message,
                    R"(package: unknown field "version")");

    EXPECT_CONTAINS(parse_err(R"({"cel": {}})").message, "olm.constraint cel.rule: missing");
    EXPECT_CONTAINS(parse_err(R"({"cel": {"rule": "  "}})").message, "cel.rule: empty");
    EXPECT_CONTAINS(parse_err(R"({"cel": {"rule": true}})").message,
                    "cel.rule: must be a string, not a boolean");
    EXPECT_CONTAINS(parse_err(R"({"cel": "true"})").message,
                    "cel: must be an object, not a string");

    EXPECT_CONTAINS(parse_err(R"({"all": []})").message, "olm.constraint all: must be an object");
    EXPECT_CONTAINS(parse_err(R"({"any": {"constraints": {}}})").message,
                    "any.constraints: must be a list, not an object");
    EXPECT_CONTAINS(parse_err(R"({"any": {"constraint": []}})").message,
                    R"(olm.constraint any: unknown field "constraint")");
    e = parse_err(R"({"all": {"constraints": [
        {"gvk": {"group": "g", "version": "v", "kind": "k"}},
        {"any": {"constraints": [{"package": {"packageName": "a", "versionRange": "bogus"}}]}}]}})");
    EXPECT_CONTAINS(e.message,
                    "olm.constraint all.constraints[1].any.constraints[0].package.versionRange:");
    EXPECT_CONTAINS(
        parse_err(R"({"all": {"constraints": [1]}})").message,
        "olm.constraint all.constraints[0]: a constraint must be an object, not an integer");
}

TEST(ConstraintParse, CelRuleErrorsNameRuleAndColumn) {
    auto e = parse_err(R"j({"failureMessage": "m", "cel": {"rule":
        "properties.exists(p, p.type == 'olm.test' && (doesnt_exist(p.value, '1.0.0') == 0))"}})j");
    EXPECT_CONTAINS(e.message, "olm.constraint cel.rule: column 47: undeclared reference to "
                               "'doesnt_exist'");
    ASSERT_EQ(e.notes.size(), 2u);
    EXPECT_CONTAINS(e.notes[0], "properties.exists(p, p.type == 'olm.test'");
    EXPECT_EQ(e.notes[1].find('^'), 2u + 46u);
    e = parse_err(R"({"all": {"constraints": [{"cel": {"rule": "1"}}]}})");
    EXPECT_CONTAINS(e.message, "all.constraints[0].cel.rule: column 1: the rule is of type int");
}

TEST(ConstraintParse, Nesting) {
    std::string deep = R"({"gvk": {"group": "g", "version": "v", "kind": "k"}})";
    for (int k = 0; k < 50; ++k)
        deep = R"({"not": {"constraints": [)" + deep + "]}}";
    Constraint c = parse_ok(deep);
    EXPECT_EQ(c.kind, Kind::none);
    std::string deeper = deep;
    for (int k = 0; k < 51; ++k)
        deeper = R"({"all": {"constraints": [)" + deeper + "]}}";
    // 101 compound levels: beyond kpkg's limit, within the JSON reader's.
    auto r = parse_constraint(std::string_view(deeper), where);
    ASSERT_FALSE(r.ok());
    EXPECT_CONTAINS(r.error().message, "nest deeper than 100 levels");
    // Nesting beyond the JSON reader's own limit is refused by the reader, not by a crash.
    std::string hostile;
    for (int k = 0; k < 5000; ++k)
        hostile += R"({"all": {"constraints": [)";
    r = parse_constraint(std::string_view(hostile), where);
    ASSERT_FALSE(r.ok());
    EXPECT_CONTAINS(r.error().message, "not valid JSON");
}

// The one grammar bundle validate, catalog validate and resolve share: every problem of a value
// (not only the first), which of them OLM refuses, and the first of those as resolve's error.
TEST(ConstraintCheck, EveryProblemAndWhichAreFatal) {
    using Code = kpkg::model::ConstraintProblem::Code;
    const std::string value =
        R"j({"gvk": {"version": 1, "Kind": "K", "plural": "ks"}, "cel": {"rule": "nope(1)"}})j";
    auto check = kpkg::model::check_constraint(json(value));
    std::vector<Code> codes;
    for (const auto& p : check.problems)
        codes.push_back(p.code);
    const std::vector<Code> want = {Code::several_kinds, Code::case_variant, Code::unknown_field,
                                    Code::wrong_type, Code::rule_compile};
    EXPECT_EQ(codes, want);
    ASSERT_EQ(check.problems.size(), want.size());
    EXPECT_FALSE(check.problems[1].fatal); // "Kind" is read as "kind", as Go does
    EXPECT_EQ(check.problems[4].path, "cel");
    EXPECT_FALSE(check.ok());
    EXPECT_EQ(check.first_fatal(), &check.problems[0]);
    EXPECT_EQ(check.problems[0].written, (std::vector<std::string>{"gvk", "cel"}));

    // OLM accepts these: noted, not fatal.
    check = kpkg::model::check_constraint(json(R"({"all": {"constraints": []}})"));
    ASSERT_EQ(check.problems.size(), 1u);
    EXPECT_EQ(check.problems[0].code, Code::empty_constraints);
    EXPECT_TRUE(check.ok());
}

TEST(ConstraintCheck, NoneNextToAnotherKindIsIgnored) {
    // OLM never looks at "none": next to gvk it uses the gvk (only "none" alone is empty).
    Constraint c = parse_ok(R"({"gvk": {"group": "g", "version": "v", "kind": "k"},
                                "none": {"constraints": [{"cel": {"rule": "true"}}]}})");
    EXPECT_EQ(c.kind, Kind::gvk);
    EXPECT_CONTAINS(parse_err(R"({"none": {"constraints": [{"gvk": {"kind": "k"}}]}})").message,
                    "\"none\" is deprecated");
}

TEST(ConstraintCheck, RulesCompiledOnceThroughTheCache) {
    kpkg::model::RuleCache rules;
    const std::string a = R"j({"cel": {"rule": "properties.exists(p, p.type == 'a')"}})j";
    const std::string b = R"j({"failureMessage": "other text, same rule",
                              "cel": {"rule": "properties.exists(p, p.type == 'a')"}})j";
    auto ca = parse_constraint(std::string_view(a), where, &rules);
    auto cb = parse_constraint(std::string_view(b), where, &rules);
    ASSERT_TRUE(ca.ok() && cb.ok());
    EXPECT_EQ(rules.size(), 1u);
    EXPECT_EQ(ca->program, cb->program); // one compiled program
    auto bad = parse_constraint(std::string_view(R"({"cel": {"rule": "nope"}})"), where, &rules);
    ASSERT_FALSE(bad.ok());
    EXPECT_CONTAINS(bad.error().message, "cel.rule: column 1: undeclared reference to 'nope'");
    EXPECT_EQ(rules.size(), 2u);
}

TEST(ConstraintParse, FromJsonText) {
    auto r = parse_constraint(std::string_view(R"({"cel": {"rule": "true"}})"), where);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->kind, Kind::cel);
    r = parse_constraint(std::string_view(R"({"cel": )"), where);
    ASSERT_FALSE(r.ok());
    EXPECT_CONTAINS(r.error().message, "olm.constraint: the value is not valid JSON");
    EXPECT_EQ(r.error().pos.file, where.file);
    r = parse_constraint(std::string_view(R"({} {})"), where);
    ASSERT_FALSE(r.ok());
    EXPECT_CONTAINS(r.error().message, "one JSON value, not 2");
}

// --- satisfies: OLM's resolver scenarios --------------------------------------------------------

TEST(ConstraintSatisfies, GvkAndPackage) {
    Constraint gvk = parse_ok(R"({"gvk": {"group": "g1", "version": "v1", "kind": "k1"}})");
    EXPECT_TRUE(satisfies(gvk, bundle("foo", "1.0.0", {"g1/v1/k1"})));
    EXPECT_FALSE(satisfies(gvk, bundle("foo", "1.0.0", {"g1/v2/k1", "g2/v1/k1"})));
    EXPECT_FALSE(satisfies(gvk, bundle("foo", "1.0.0", {})));
    // Go decodes property values case-insensitively; a value of the wrong type is skipped.
    auto odd = kpkg::io::parse_json(R"([
        {"type": "olm.gvk", "value": {"Group": "g1", "VERSION": "v1", "kind": "k1"}},
        {"type": "olm.gvk", "value": {"group": "g1", "version": "v1", "kind": 1}}])",
                                    "test")
                   .take();
    std::vector<PropertyValue> props;
    for (const auto& item : odd.at(0).root.items)
        props.push_back({item.get("type")->text, *item.get("value")});
    EXPECT_TRUE(satisfies(gvk, {props[0]}));
    EXPECT_FALSE(satisfies(gvk, {props[1]}));

    Constraint pkg = parse_ok(R"({"package": {"packageName": "foo", "versionRange": ">=1.0.0"}})");
    EXPECT_TRUE(satisfies(pkg, bundle("foo", "1.0.1", {})));
    EXPECT_TRUE(satisfies(pkg, bundle("foo", "1.0.0", {})));
    EXPECT_FALSE(satisfies(pkg, bundle("foo", "0.99.0", {})));
    EXPECT_FALSE(satisfies(pkg, bundle("bar", "1.0.1", {})));
    EXPECT_FALSE(satisfies(pkg, bundle("foo", "v1.0.1", {}))); // OLM parses strictly
    EXPECT_FALSE(satisfies(pkg, {}));
    Constraint pre = parse_ok(R"({"package": {"packageName": "foo", "versionRange": "<2.0.0"}})");
    EXPECT_TRUE(satisfies(pre, bundle("foo", "2.0.0-rc.1", {}))); // blang: plain precedence
}

TEST(ConstraintSatisfies, OlmCompoundAll) {
    // resolver_test.go TestSolveOperators_OLMConstraint_CompoundAll
    Constraint c = parse_ok(R"({"failureMessage": "all constraint", "all": {"constraints": [
        {"package": {"packageName": "foo", "versionRange": ">=1.0.0"}},
        {"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
        {"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}})");
    EXPECT_TRUE(satisfies(c, bundle("foo", "1.0.1", {"g1/v1/k1", "g2/v2/k2", "g3/v3/k3"})));
    EXPECT_FALSE(satisfies(c, bundle("foo", "1.0.0", {"g2/v2/k2", "g3/v3/k3"})));
    EXPECT_FALSE(satisfies(c, bundle("foo", "0.99.0", {"g1/v1/k1", "g2/v2/k2", "g3/v3/k3"})));
}

TEST(ConstraintSatisfies, OlmCompoundAny) {
    // resolver_test.go TestSolveOperators_OLMConstraint_CompoundAny
    Constraint c = parse_ok(R"({"failureMessage": "any constraint", "any": {"constraints": [
        {"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
        {"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}})");
    EXPECT_FALSE(satisfies(c, bundle("foo", "0.99.0", {"g0/v0/k0"})));
    EXPECT_TRUE(satisfies(c, bundle("foo", "1.0.0", {"g1/v1/k1", "g2/v2/k2"})));
    EXPECT_TRUE(satisfies(c, bundle("foo", "1.0.1", {"g2/v2/k2"})));
}

TEST(ConstraintSatisfies, OlmCompoundNotIsPerBundle) {
    // resolver_test.go TestSolveOperators_OLMConstraint_CompoundNot: "not" is a predicate over
    // one bundle (none of its children hold for it), so foo.v0.99.0, which provides g0 but
    // neither g1 nor g2, is the only bundle that satisfies the constraint.
    Constraint c =
        parse_ok(R"({"failureMessage": "compound not constraint", "all": {"constraints": [
        {"gvk": {"group": "g0", "version": "v0", "kind": "k0"}},
        {"not": {"constraints": [
            {"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
            {"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}}]}})");
    EXPECT_TRUE(satisfies(c, bundle("foo", "0.99.0", {"g0/v0/k0"})));
    EXPECT_FALSE(satisfies(c, bundle("foo", "1.0.0", {"g0/v0/k0", "g1/v1/k1", "g2/v2/k2"})));
    EXPECT_FALSE(satisfies(c, bundle("foo", "1.0.1", {"g0/v0/k0", "g2/v2/k2", "g3/v3/k3"})));
    EXPECT_FALSE(satisfies(c, bundle("foo", "1.0.1", {"g3/v3/k3"})));
}

TEST(ConstraintSatisfies, EmptyCompounds) {
    const auto b = bundle("foo", "1.0.0", {});
    EXPECT_TRUE(satisfies(parse_ok(R"({"all": {"constraints": []}})"), b));
    EXPECT_FALSE(satisfies(parse_ok(R"({"any": {"constraints": []}})"), b));
    EXPECT_TRUE(satisfies(parse_ok(R"({"not": {}})"), b));
    EXPECT_EQ(describe(parse_ok(R"({"any": {"constraints": null}})")), "any of ()");
}

TEST(ConstraintSatisfies, CelRules) {
    // resolver_test.go TestSolveOperators_GenericConstraint
    Constraint gvk = parse_ok(R"j({"failureMessage": "gvk-constraint", "cel": {"rule":
        "properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g', 'version': 'v', 'kind': 'k'})"}})j");
    EXPECT_TRUE(satisfies(gvk, bundle("packageB", "1.0.0", {"g/v/k"})));
    EXPECT_FALSE(satisfies(gvk, bundle("packageB", "1.0.0", {"g2/v/k"})));
    Constraint pkg = parse_ok(R"j({"failureMessage": "package-constraint", "cel": {"rule":
        "properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'packageB' && (semver_compare(p.value.version, '1.0.1') == 0))"}})j");
    EXPECT_FALSE(satisfies(pkg, bundle("packageB", "1.0.0", {})));
    EXPECT_TRUE(satisfies(pkg, bundle("packageB", "1.0.1", {})));
    EXPECT_FALSE(satisfies(pkg, bundle("packageB", "1.0.2", {})));
    // A rule that fails to evaluate does not hold.
    Constraint err = parse_ok(R"({"cel": {"rule": "properties[7].type == 'x' || false"}})");
    EXPECT_EQ(err.program->evaluate(bundle("a", "1.0.0", {})).kind,
              kpkg::cel::Outcome::Kind::error);
    EXPECT_FALSE(satisfies(err, bundle("a", "1.0.0", {})));
    // OLM's Not negates its children's verdicts, and an erring rule's verdict is "false".
    Constraint n =
        parse_ok(R"({"not": {"constraints": [{"cel": {"rule": "properties[7].type == 'x'"}}]}})");
    EXPECT_TRUE(satisfies(n, bundle("a", "1.0.0", {})));
}

// The compact catalog's bundles as constraints see them.
TEST(ConstraintProperties, FromTheCompactCatalog) {
    kpkg::test::TempDir dir;
    dir.write("index.json", R"j({"schema": "olm.package", "name": "etcd", "defaultChannel": "alpha"}
{"schema": "olm.channel", "package": "etcd", "name": "alpha", "entries": [{"name": "etcd.v0.9.4"}]}
{"schema": "olm.bundle", "package": "etcd", "name": "etcd.v0.9.4", "image": "quay.io/etcd:0.9.4",
 "properties": [
  {"type": "olm.package", "value": {"packageName": "etcd", "version": "0.9.4"}},
  {"type": "olm.gvk", "value": {"group": "etcd.database.coreos.com", "kind": "EtcdCluster", "version": "v1beta2"}},
  {"type": "olm.gvk.required", "value": {"group": "g", "kind": "K", "version": "v1"}},
  {"type": "olm.package.required", "value": {"packageName": "prometheus", "versionRange": ">=0.27.0"}},
  {"type": "olm.label", "value": {"label": "stable"}},
  {"type": "certified", "value": {"by": "me", "level": 3}},
  {"type": "olm.bundle.object", "value": {"data": "eyJraW5kIjoiQ1NWIn0="}}
 ]}
)j");
    for (bool keep : {false, true}) {
        kpkg::catalog::LoadOptions opts;
        opts.keep_payloads = keep;
        auto cat = kpkg::catalog::load_catalog(dir.path(), opts);
        ASSERT_TRUE(cat.ok()) << cat.error().str();
        ASSERT_TRUE(cat->problems.empty()) << cat->problems[0].message;
        ASSERT_EQ(cat->bundles.size(), 1u);
        const auto props = kpkg::model::constraint_properties(*cat, cat->bundles[0]);
        ASSERT_EQ(props.size(), 7u);
        EXPECT_EQ(props[0].type, "olm.package");
        EXPECT_EQ(props[0].value, json(R"({"packageName": "etcd", "version": "0.9.4"})"));
        EXPECT_EQ(props[1].type, "olm.gvk");
        EXPECT_EQ(
            props[1].value,
            json(
                R"({"group": "etcd.database.coreos.com", "kind": "EtcdCluster", "version": "v1beta2"})"));
        EXPECT_EQ(props[2].value, json(R"({"group": "g", "kind": "K", "version": "v1"})"));
        EXPECT_EQ(props[3].value,
                  json(R"({"packageName": "prometheus", "versionRange": ">=0.27.0"})"));
        EXPECT_EQ(props[4].value, json(R"({"label": "stable"})"));
        EXPECT_EQ(props[5].type, "certified");
        EXPECT_EQ(props[5].value, json(R"({"by": "me", "level": 3})"));
        EXPECT_EQ(props[6].type, "olm.bundle.object");
        EXPECT_EQ(props[6].value.is_null(), !keep);

        auto rule = [&](const std::string& r) {
            return satisfies(parse_ok(R"({"cel": {"rule": ")" + r + "\"}}"), props);
        };
        EXPECT_TRUE(rule("properties.exists(p, p.type == 'certified' && p.value.level >= 3)"));
        EXPECT_TRUE(rule("properties.exists(p, p.type == 'olm.package' && "
                         "semver_compare(p.value.version, '0.9.0') > 0)"));
        EXPECT_TRUE(
            rule("properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': "
                 "'etcd.database.coreos.com', 'version': 'v1beta2', 'kind': 'EtcdCluster'})"));
        EXPECT_EQ(rule("properties.exists(p, p.type == 'olm.bundle.object' && has(p.value.data))"),
                  keep);
        EXPECT_TRUE(satisfies(parse_ok(R"({"gvk": {"group": "etcd.database.coreos.com",
                                         "version": "v1beta2", "kind": "EtcdCluster"}})"),
                              props));
        EXPECT_TRUE(satisfies(
            parse_ok(R"({"package": {"packageName": "etcd", "versionRange": "0.9.x"}})"), props));
    }
}

TEST(ConstraintDocs, ManPageExample) {
    // The example of the CONSTRAINTS section of the man page, as written there.
    auto docs = kpkg::io::parse_yaml(R"(- type: olm.constraint
  value:
    failureMessage: needs a certified etcd 0.9 or later
    cel:
      rule: >-
        properties.exists(p, p.type == "certified") &&
        properties.exists(p, p.type == "olm.package" &&
          p.value.packageName == "etcd" &&
          semver_compare(p.value.version, "0.9.0") >= 0)
)",
                                     "kpkg-resolve.1")
                    .take();
    const kpkg::io::Node& value = *docs.at(0).root.items.at(0).get("value");
    auto c = parse_constraint(value, where);
    ASSERT_TRUE(c.ok()) << c.error().str();
    EXPECT_EQ(c->failure_message, "needs a certified etcd 0.9 or later");
    auto props = bundle("etcd", "0.9.4", {});
    EXPECT_FALSE(satisfies(*c, props));
    props.push_back({"certified", kpkg::io::Node::boolean(true)});
    EXPECT_TRUE(satisfies(*c, props));
    auto old = bundle("etcd", "0.8.9", {});
    old.push_back({"certified", kpkg::io::Node::boolean(true)});
    EXPECT_FALSE(satisfies(*c, old));
    // The error shown there.
    auto e = parse_err(
        R"j({"cel": {"rule": "properties.exists(p, p.type == 'olm.test' && (doesnt_exist(p.value, '1.0.0') == 0))"}})j");
    EXPECT_EQ(e.message,
              "olm.constraint cel.rule: column 47: undeclared reference to 'doesnt_exist'");
}

// --- describe -----------------------------------------------------------------------------------

TEST(ConstraintDescribe, Words) {
    EXPECT_EQ(
        describe(parse_ok(
            R"({"gvk": {"group": "etcd.database.coreos.com", "version": "v1beta2", "kind": "EtcdCluster"}})")),
        "an API etcd.database.coreos.com/v1beta2 EtcdCluster");
    EXPECT_EQ(
        describe(parse_ok(R"({"package": {"packageName": "etcd", "versionRange": ">=0.9.0"}})")),
        "package etcd in range >=0.9.0");
    EXPECT_EQ(
        describe(parse_ok(R"({"cel": {"rule": "properties.exists(p,\n   p.type == 'x')\n"}})")),
        "CEL rule properties.exists(p, p.type == 'x')");
    EXPECT_EQ(describe(parse_ok(R"({"failureMessage": "not shown", "not": {"constraints": [
                  {"gvk": {"group": "g", "version": "v", "kind": "k"}},
                  {"cel": {"rule": "true"}}]}})")),
              "none of (an API g/v k, CEL rule true)");
    // Long rules are cut after 200 bytes of their one-line form, never inside a character.
    auto cel = [](const std::string& rule) {
        return describe(parse_ok(R"({"cel": {"rule": ")" + rule + "\"}}"));
    };
    EXPECT_EQ(cel("true" + std::string(300, ' ') + "&& 'é" + std::string(300, 'x') + "' != ''"),
              "CEL rule true && 'é" + std::string(189, 'x') + "...");
    EXPECT_EQ(cel("true && '" + std::string(190, 'x') + "é" + std::string(50, 'x') + "' != ''"),
              "CEL rule true && '" + std::string(190, 'x') + "...");
}

// --- the corpus ---------------------------------------------------------------------------------

TEST(ConstraintCorpus, EtcdBundleCelRule) {
    KPKG_REQUIRE_CORPUS(corpus);
    const auto file = corpus / "olm/bundles/etcd.0.9.2/metadata/dependencies.yaml";
    auto docs = kpkg::io::load_file(file).take();
    const kpkg::io::Node* deps = docs.at(0).root.get("dependencies");
    ASSERT_NE(deps, nullptr);
    int seen = 0;
    for (const auto& d : deps->items) {
        if (d.get("type")->text != "olm.constraint") continue;
        ++seen;
        const kpkg::io::Node& value = *d.get("value");
        auto c = parse_constraint(value, kpkg::io::pos_of(file.string(), value.mark));
        ASSERT_TRUE(c.ok()) << c.error().str();
        EXPECT_EQ(c->kind, Kind::cel);
        EXPECT_EQ(c->failure_message, "require to have \"certified\"");
        EXPECT_EQ(describe(*c), "CEL rule properties.exists(p, p.type == \"certified\")");
        auto props = bundle("etcd", "0.9.2", {});
        EXPECT_FALSE(satisfies(*c, props));
        props.push_back({"certified", kpkg::io::Node::map()});
        EXPECT_TRUE(satisfies(*c, props));
    }
    EXPECT_EQ(seen, 1);
}

TEST(ConstraintCorpus, EveryCatalogConstraintParsesAndSelects) {
    KPKG_REQUIRE_CORPUS(corpus);
    const auto dir = corpus / "olm/large/derived-community/catalog-valid";
    if (!std::filesystem::exists(dir))
        GTEST_SKIP() << ::kpkg::test::corpus_absent() << " (" << dir.string() << " is absent)";
    struct Bundle {
        std::string name;
        std::vector<PropertyValue> props;
    };
    std::vector<Bundle> bundles;
    std::vector<std::pair<std::string, Constraint>> constraints; // bundle name, constraint
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        auto docs = kpkg::io::load_file(file);
        ASSERT_TRUE(docs.ok()) << docs.error().str();
        for (const auto& doc : *docs) {
            const auto* schema = doc.root.get("schema");
            if (!schema || schema->text != "olm.bundle") continue;
            Bundle b;
            b.name = doc.root.get("name")->text;
            for (const auto& p : doc.root.get("properties")->items) {
                b.props.push_back({p.get("type")->text, *p.get("value")});
                if (b.props.back().type != "olm.constraint") continue;
                auto c = parse_constraint(b.props.back().value,
                                          kpkg::io::pos_of(file.string(), p.mark, doc.index));
                ASSERT_TRUE(c.ok()) << c.error().str();
                constraints.emplace_back(b.name, std::move(c).take());
            }
            bundles.push_back(std::move(b));
        }
    }
    EXPECT_EQ(bundles.size(), 6002u);
    ASSERT_EQ(constraints.size(), 1u);
    EXPECT_EQ(constraints[0].first, "dbaas-operator.v0.5.0");
    const Constraint& c = constraints[0].second;
    EXPECT_EQ(describe(c), "any of (package rh-service-binding-operator in range >=1.0.0, package "
                           "service-binding-operator in range >=1.0.0)");
    // The bundles that can satisfy it: service-binding-operator from 1.0.0 on (the catalog has
    // no rh-service-binding-operator).
    std::vector<std::string> chosen;
    for (const auto& b : bundles)
        if (satisfies(c, b.props)) chosen.push_back(b.name);
    std::sort(chosen.begin(), chosen.end());
    const std::vector<std::string> want = {
        "service-binding-operator.v1.0.0", "service-binding-operator.v1.0.1",
        "service-binding-operator.v1.1.0", "service-binding-operator.v1.1.1",
        "service-binding-operator.v1.2.0", "service-binding-operator.v1.3.0",
        "service-binding-operator.v1.3.1", "service-binding-operator.v1.3.2",
        "service-binding-operator.v1.3.3", "service-binding-operator.v1.3.4",
        "service-binding-operator.v1.4.0"};
    EXPECT_EQ(chosen, want);
    // The same through a CEL rule.
    Constraint rule = parse_ok(
        R"j({"cel": {"rule": "properties.exists(p, p.type == 'olm.package' && p.value.packageName in ['rh-service-binding-operator', 'service-binding-operator'] && semver_compare(p.value.version, '1.0.0') >= 0)"}})j");
    std::vector<std::string> by_rule;
    for (const auto& b : bundles)
        if (satisfies(rule, b.props)) by_rule.push_back(b.name);
    std::sort(by_rule.begin(), by_rule.end());
    EXPECT_EQ(by_rule, want);
}

} // namespace
