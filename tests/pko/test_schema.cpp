// pko/schema and pko/regex: the config schema's checks, admission (prune, default, validate) with
// apiextensions' messages, and patterns that cannot hang.
#include <chrono>
#include <cstdint>

#include <gtest/gtest.h>

#include "kpkg/io/emit.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/pko/regex.hpp"
#include "kpkg/pko/schema.hpp"
#include "support/support.hpp"

namespace {

using kpkg::io::Node;
using namespace kpkg::pko;

Node yaml(const std::string& text) {
    auto docs = kpkg::io::parse_yaml(text, "test.yaml");
    EXPECT_TRUE(docs.ok()) << (docs.ok() ? "" : docs.error().str());
    if (!docs.ok() || docs->empty()) return Node::map();
    return (*docs)[0].root;
}

std::vector<std::string> messages(const std::vector<FieldError>& errs) {
    std::vector<std::string> out;
    for (const auto& e : errs)
        out.push_back(e.message);
    return out;
}

std::string json(const Node& n) {
    kpkg::io::JsonStyle st;
    st.indent = 0;
    st.sort_keys = true;
    return kpkg::io::to_json(n, st);
}

// --- regex ---------------------------------------------------------------------------------

bool matches(const std::string& pattern, const std::string& text) {
    auto re = Regex::compile(pattern);
    EXPECT_TRUE(re.ok()) << pattern << ": " << (re.ok() ? "" : re.error().message);
    std::uint64_t steps = 100'000'000;
    return re.ok() && re->search(text, steps) == Regex::Outcome::match;
}

TEST(PkoRegex, MatchesAnywhereLikeGo) {
    EXPECT_TRUE(matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "my-name"));
    EXPECT_FALSE(matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "My-name"));
    EXPECT_TRUE(matches("b+", "aaabbb"));
    EXPECT_FALSE(matches("^b+", "aaabbb"));
    EXPECT_TRUE(matches("(?i)^abc$", "ABC"));
    EXPECT_TRUE(matches(R"(^\d{3}-\d{2,}$)", "123-4567"));
    EXPECT_FALSE(matches(R"(^\d{3}-\d{2,}$)", "123-4"));
    EXPECT_TRUE(matches("^(foo|bar)+$", "foobarfoo"));
    EXPECT_TRUE(matches(R"(\bword\b)", "a word here"));
    EXPECT_FALSE(matches(R"(\bword\b)", "swordfish"));
    EXPECT_TRUE(matches("^[[:alpha:]]+$", "abcXYZ"));
    EXPECT_TRUE(matches("^[^0-9]*$", "héllo"));
    EXPECT_TRUE(matches("^.$", "é")); // one rune, two bytes
    EXPECT_TRUE(matches(R"(^\x41\x{42}$)", "AB"));
    EXPECT_TRUE(matches(R"(^a\.b$)", "a.b"));
    EXPECT_FALSE(matches(R"(^a\.b$)", "axb"));
    EXPECT_TRUE(matches("(?m)^b$", "a\nb\nc"));
    EXPECT_FALSE(matches("^b$", "a\nb\nc"));
    EXPECT_TRUE(matches("", "anything"));
}

TEST(PkoRegex, RefusesInvalidPatternsWithGoMessages) {
    auto msg = [](const std::string& p) {
        auto re = Regex::compile(p);
        return re.ok() ? std::string("compiled") : re.error().message;
    };
    EXPECT_EQ(msg("(abc"), "error parsing regexp: missing closing ): `(abc`");
    EXPECT_EQ(msg("abc)"), "error parsing regexp: unexpected ): `abc)`");
    EXPECT_EQ(msg("[abc"), "error parsing regexp: missing closing ]: `[abc`");
    EXPECT_EQ(msg("*a"), "error parsing regexp: missing argument to repetition operator: `*`");
    EXPECT_EQ(msg("a**"), "error parsing regexp: invalid nested repetition operator: `**`");
    EXPECT_EQ(msg("a{1001}"), "error parsing regexp: invalid repeat count: `{1001}`");
    EXPECT_EQ(msg("[z-a]"), "error parsing regexp: invalid character class range: `z-a`");
    EXPECT_EQ(msg(R"(\q)"), "error parsing regexp: invalid escape sequence: `\\q`");
    EXPECT_EQ(msg("(?=a)"), "error parsing regexp: invalid or unsupported Perl syntax: `(?=`");
    EXPECT_EQ(msg(R"((a)\1)"), "error parsing regexp: invalid escape sequence: `\\1`");
    EXPECT_EQ(msg("a\\"), "error parsing regexp: trailing backslash at end of expression: ``");
}

TEST(PkoRegex, HostilePatternsStayLinear) {
    // Catastrophic for a backtracking engine: (a+)+$ against "aaaa...b".
    auto re = Regex::compile("^(a+)+$");
    ASSERT_TRUE(re.ok());
    const std::string text = std::string(100000, 'a') + "b";
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t steps = 100'000'000;
    EXPECT_EQ(re->search(text, steps), Regex::Outcome::no_match);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    // Nested counted repetition grows the program: refused, not compiled into millions of steps.
    auto big = Regex::compile("((a{1000}){1000}){1000}");
    ASSERT_FALSE(big.ok());
    EXPECT_NE(big.error().message.find("expression too large"), std::string::npos);
    // A work budget bounds what a large program times a large input may cost.
    auto wide = Regex::compile("(x|y|z){0,500}q");
    ASSERT_TRUE(wide.ok());
    std::uint64_t few = 1'000'000;
    EXPECT_EQ(wide->search(std::string(200000, 'x'), few), Regex::Outcome::too_costly);
    EXPECT_EQ(few, 0u);
}

TEST(PkoRegex, SearchesShareTheCallersSteps) {
    auto re = Regex::compile("^(a|b)*c$");
    ASSERT_TRUE(re.ok());
    const std::string text(1000, 'a');
    std::uint64_t left = 50'000;
    EXPECT_EQ(re->search(text, left), Regex::Outcome::no_match);
    const std::uint64_t one = 50'000 - left;
    EXPECT_GT(one, 1000u);
    int n = 1;
    while (re->search(text, left) == Regex::Outcome::no_match)
        ++n;
    EXPECT_EQ(n, static_cast<int>(50'000 / one));
    EXPECT_EQ(left, 0u);
    EXPECT_EQ(re->search("c", left), Regex::Outcome::too_costly);
}

// --- check_schema -----------------------------------------------------------------------------

TEST(PkoSchema, CorpusSchemasAreValid) {
    KPKG_REQUIRE_CORPUS(corpus);
    int seen = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(corpus / "pko")) {
        const auto name = entry.path().filename().string();
        if (name != "manifest.yaml" && name != "manifest.yml") continue;
        auto docs = kpkg::io::load_file(entry.path());
        if (!docs.ok() || docs->empty()) continue; // broken manifests are the loader's business
        const Node* spec = (*docs)[0].root.get("spec");
        const Node* config = spec ? spec->get("config") : nullptr;
        const Node* schema = config ? config->get("openAPIV3Schema") : nullptr;
        if (!schema) continue;
        ++seen;
        EXPECT_EQ(messages(check_schema(*schema)), std::vector<std::string>{}) << entry.path();
    }
    EXPECT_GT(seen, 3);
}

TEST(PkoSchema, TestStubRequiresItsImage) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto docs = kpkg::io::load_file(corpus / "pko/test-stub/manifest.yaml");
    ASSERT_TRUE(docs.ok());
    const Node& schema = *(*docs)[0].root.get("spec")->get("config")->get("openAPIV3Schema");
    auto missing = admit_config(&schema, yaml("other: 1\n"));
    EXPECT_EQ(messages(missing.violations),
              std::vector<std::string>{"spec.config.testStubImage: Required value"});
    EXPECT_EQ(json(missing.config), "{}\n"); // `other` pruned
    auto ok = admit_config(&schema, yaml("testStubImage: chicken\nextra: {a: 1}\n"));
    EXPECT_TRUE(ok.violations.empty());
    EXPECT_EQ(json(ok.config), "{\"testStubImage\":\"chicken\"}\n");
    auto wrong = admit_config(&schema, yaml("testStubImage: 42\n"));
    EXPECT_EQ(messages(wrong.violations),
              std::vector<std::string>{"spec.config.testStubImage: Invalid value: \"number\": "
                                       "testStubImage in body must be of type string: \"number\""});
}

TEST(PkoSchema, StructuralRules) {
    auto errs = messages(check_schema(yaml(R"(
properties:
  foo:
    description: no type
  list:
    type: array
  n:
    type: integer
    uniqueItems: true
  bad:
    type: strin
  pat:
    type: string
    pattern: "(a"
)")));
    const std::vector<std::string> want = {
        "spec.config.openAPIV3Schema.properties[foo].type: Required value: must not be empty for "
        "specified object fields",
        "spec.config.openAPIV3Schema.properties[list].items: Required value: must be specified",
        "spec.config.openAPIV3Schema.properties[pat].pattern: Invalid value: \"(a\": must be a "
        "valid regular expression, but isn't: error parsing regexp: missing closing ): `(a`",
        "spec.config.openAPIV3Schema.type: Required value: must not be empty at the root",
        "spec.config.openAPIV3Schema.properties[n].uniqueItems: Forbidden: uniqueItems cannot be "
        "set to true since the runtime complexity becomes quadratic",
        "spec.config.openAPIV3Schema.properties[bad].type: Unsupported value: \"strin\": "
        "supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"",
    };
    EXPECT_EQ(errs, want);
}

TEST(PkoSchema, JunctorsMustStayStructural) {
    auto errs = messages(check_schema(yaml(R"(
type: object
nullable: true
properties:
  a:
    type: string
anyOf:
- type: object
- properties:
    b:
      minLength: 1
additionalProperties: true
)")));
    const std::vector<std::string> want = {
        "spec.config.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root",
        "spec.config.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root",
        "spec.config.openAPIV3Schema.anyOf[0].type: Forbidden: must be empty to be structural",
        "spec.config.openAPIV3Schema.properties[b]: Required value: because it is defined in "
        "spec.config.openAPIV3Schema.anyOf[1].properties[b]",
    };
    EXPECT_EQ(errs, want);
}

TEST(PkoSchema, RootObjectFields) {
    // A config is admitted as a resource root: apiVersion, kind and metadata are special there.
    auto errs = messages(check_schema(yaml(R"(
type: object
properties:
  kind: {type: string, default: x}
  metadata:
    type: object
    properties:
      labels: {type: object}
  nested:
    type: object
    properties:
      kind: {type: string, default: fine}
)")));
    const std::vector<std::string> want = {
        "spec.config.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything "
        "other than name and generateName, but metadata is implicitly specified",
        "spec.config.openAPIV3Schema.properties[kind].default: Forbidden: must not be set in "
        "top-level kind",
    };
    EXPECT_EQ(errs, want);
}

TEST(PkoSchema, IntOrStringPatternIsAllowed) {
    EXPECT_TRUE(check_schema(yaml(R"(
type: object
properties:
  port:
    x-kubernetes-int-or-string: true
    anyOf:
    - type: integer
    - type: string
)"))
                    .empty());
}

TEST(PkoSchema, DefaultsMustValidateAndBePruned) {
    auto errs = messages(check_schema(yaml(R"(
type: object
properties:
  replicas:
    type: integer
    default: "three"
  obj:
    type: object
    properties:
      a: {type: string}
    default: {a: x, b: y}
)")));
    const std::vector<std::string> want = {
        "spec.config.openAPIV3Schema.properties[replicas].default: Invalid value: \"string\":  in "
        "body must be of type integer: \"string\"",
        "spec.config.openAPIV3Schema.properties[obj].default: Invalid value: {\"a\":\"x\",\"b\":"
        "\"y\"}: must not have unknown fields",
    };
    EXPECT_EQ(errs, want);
}

TEST(PkoSchema, WrongKeywordKinds) {
    auto errs = messages(check_schema(yaml(R"(
type: object
properties:
  a:
    type: [string]
    required: x
)")));
    ASSERT_EQ(errs.size(), 2u);
    EXPECT_EQ(errs[0], "spec.config.openAPIV3Schema.properties[a].type: Invalid value: "
                       "[\"string\"]: must be a string");
    EXPECT_EQ(errs[1], "spec.config.openAPIV3Schema.properties[a].required: Invalid value: "
                       "\"x\": must be a list of strings");
}

// --- admission ----------------------------------------------------------------------------------

const char* const rich_schema = R"(
type: object
required: [name]
properties:
  name:
    type: string
    minLength: 3
    maxLength: 8
    pattern: "^[a-z]+$"
  replicas:
    type: integer
    default: 1
    minimum: 1
    maximum: 10
  ratio:
    type: number
    exclusiveMaximum: true
    maximum: 1
  mode:
    type: string
    enum: [fast, slow]
    default: fast
  tags:
    type: array
    maxItems: 2
    minItems: 1
    items:
      type: string
      format: hostname
  nested:
    type: object
    default: {}
    properties:
      enabled:
        type: boolean
        default: true
      keep:
        type: object
        x-kubernetes-preserve-unknown-fields: true
  labels:
    type: object
    additionalProperties:
      type: string
  since:
    type: string
    format: date-time
  maybe:
    type: string
    nullable: true
)";

TEST(PkoAdmission, PrunesDefaultsAndValidates) {
    const Node schema = yaml(rich_schema);
    ASSERT_EQ(messages(check_schema(schema)), std::vector<std::string>{});
    auto a = admit_config(&schema, yaml(R"(
name: abc
unknown: 1
apiVersion: v1
nested:
  keep: {anything: [1, 2]}
  drop: me
labels: {a: b}
maybe: null
mode: null
)"));
    EXPECT_EQ(messages(a.violations), std::vector<std::string>{});
    // apiVersion is a resource-root field and stays, as pruning.Prune keeps it at the root.
    EXPECT_EQ(json(a.config), "{\"apiVersion\":\"v1\",\"labels\":{\"a\":\"b\"},\"maybe\":null,"
                              "\"mode\":\"fast\",\"name\":\"abc\",\"nested\":{\"enabled\":true,"
                              "\"keep\":{\"anything\":[1,2]}},\"replicas\":1}\n");
}

TEST(PkoAdmission, ViolationsInApiServerWording) {
    const Node schema = yaml(rich_schema);
    auto a = admit_config(&schema, yaml(R"(
name: Ab
replicas: 11
ratio: 1
mode: medium
tags: [a, b, "not a host"]
labels: {a: 1}
since: yesterday
)"));
    const std::vector<std::string> want = {
        "spec.config.name: Invalid value: \"Ab\": name in body should be at least 3 chars long",
        "spec.config.name: Invalid value: \"Ab\": name in body should match '^[a-z]+$'",
        "spec.config.replicas: Invalid value: 11: replicas in body should be less than or equal "
        "to 10",
        "spec.config.ratio: Invalid value: 1: ratio in body should be less than 1",
        "spec.config.mode: Unsupported value: \"medium\": supported values: \"fast\", \"slow\"",
        "spec.config.tags: Too many: 3: must have at most 2 items",
        "spec.config.tags.2: Invalid value: \"not a host\": tags.2 in body must be of type "
        "hostname: \"not a host\"",
        "spec.config.labels.a: Invalid value: \"number\": labels.a in body must be of type "
        "string: \"number\"",
        "spec.config.since: Invalid value: \"yesterday\": since in body must be of type "
        "date-time: \"yesterday\"",
    };
    EXPECT_EQ(messages(a.violations), want);
}

TEST(PkoAdmission, TypesAsGoDecodesThem) {
    const Node schema = yaml(rich_schema);
    // 2.0 is an integer for kube-openapi (a float64 with no fraction); 2.5 is not.
    auto a = admit_config(&schema, yaml("name: abc\nreplicas: 2.0\n"));
    EXPECT_TRUE(a.violations.empty()) << messages(a.violations)[0];
    auto b = admit_config(&schema, yaml("name: abc\nreplicas: 2.5\n"));
    EXPECT_EQ(messages(b.violations),
              std::vector<std::string>{"spec.config.replicas: Invalid value: \"number\": replicas "
                                       "in body must be of type integer: \"number\""});
    // yaml.v2 reads `yes` as a boolean, and a string schema refuses it.
    auto c = admit_config(&schema, yaml("name: yes\n"));
    EXPECT_EQ(messages(c.violations),
              std::vector<std::string>{"spec.config.name: Invalid value: \"boolean\": name in "
                                       "body must be of type string: \"boolean\""});
    // A null for a non-nullable field without a default.
    auto d = admit_config(&schema, yaml("name: null\n"));
    EXPECT_EQ(messages(d.violations),
              std::vector<std::string>{"spec.config.name: Invalid value: \"null\": name in body "
                                       "must be of type string: \"null\""});
    // Up to 2^53 a float64 without a fraction counts as an integer (swag.IsFloat64AJSONInteger).
    const Node ints = yaml("type: object\nproperties:\n  n: {type: integer}\n");
    EXPECT_TRUE(admit_config(&ints, yaml("n: 9007199254740992\n")).violations.empty());
    EXPECT_EQ(messages(admit_config(&ints, yaml("n: 9007199254740994.0\n")).violations),
              std::vector<std::string>{"spec.config.n: Invalid value: \"number\": n in body must "
                                       "be of type integer: \"number\""});
    // Large numbers print as Go's %v does.
    auto e = admit_config(&schema, yaml("name: abc\nreplicas: 1000000\n"));
    EXPECT_EQ(messages(e.violations),
              std::vector<std::string>{"spec.config.replicas: Invalid value: 1e+06: replicas in "
                                       "body should be less than or equal to 10"});
}

TEST(PkoAdmission, PathPrefixAndNoSchema) {
    const Node schema = yaml("type: object\nproperties:\n  a: {type: string}\nrequired: [a, b]\n");
    auto a = admit_config(&schema, yaml("a: 42\n"), "");
    // PKO's own unit test: an empty prefix, as kubectl-package's template tests use.
    EXPECT_EQ(messages(a.violations),
              (std::vector<std::string>{
                  "b: Required value",
                  "a: Invalid value: \"number\": a in body must be of type string: \"number\""}));
    auto none = admit_config(nullptr, yaml("a: 1\nb: {c: 2}\n"));
    EXPECT_TRUE(none.violations.empty());
    EXPECT_EQ(json(none.config), "{}\n");
    auto list = admit_config(&schema, yaml("[1, 2]\n"));
    EXPECT_EQ(messages(list.violations),
              std::vector<std::string>{"spec.config: Invalid value: \"array\": must be an object"});
}

TEST(PkoAdmission, JunctorsAtRuntime) {
    const Node schema = yaml(R"(
type: object
properties:
  port:
    x-kubernetes-int-or-string: true
    anyOf:
    - type: integer
    - type: string
  size:
    type: integer
    not:
      enum: [13]
)");
    ASSERT_EQ(messages(check_schema(schema)), std::vector<std::string>{});
    EXPECT_TRUE(admit_config(&schema, yaml("port: 80\nsize: 3\n")).violations.empty());
    EXPECT_TRUE(admit_config(&schema, yaml("port: http\n")).violations.empty());
    auto bad = admit_config(&schema, yaml("port: true\nsize: 13\n"));
    ASSERT_FALSE(bad.violations.empty());
    EXPECT_EQ(bad.violations[0].message,
              "spec.config.port: Invalid value: \"boolean\": port in body must be of type "
              "integer,string: \"boolean\"");
    EXPECT_EQ(bad.violations.back().message,
              "spec.config: Invalid value: \"\": size must not validate the schema (not)");
}

TEST(PkoAdmission, HugeAndDeepInput) {
    const Node schema = yaml(R"(
type: object
properties:
  list:
    type: array
    items:
      type: string
      pattern: "^(a|aa)+$"
  free:
    type: object
    x-kubernetes-preserve-unknown-fields: true
)");
    // 10000 items of 1000 characters each: linear work, no hang (some 110 million steps of
    // matching, more than the default budget allows one validation).
    Node cfg = Node::map();
    Node& list = cfg.set("list", Node::seq());
    for (int i = 0; i < 10000; ++i)
        list.push(Node::string(std::string(1000, 'a')));
    list.push(Node::string(std::string(1000, 'a') + "b"));
    const auto t0 = std::chrono::steady_clock::now();
    auto a = admit_config(&schema, cfg, "spec.config", {.max_regex_steps = 1'000'000'000});
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
    ASSERT_EQ(a.violations.size(), 1u);
    EXPECT_NE(a.violations[0].message.find("spec.config.list.10000: Invalid value:"),
              std::string::npos);

    // Nesting deeper than the limit is reported, not followed.
    Node deep = Node::map();
    Node* cur = &deep.set("free", Node::map());
    for (int i = 0; i < 40; ++i)
        cur = &cur->set("x", Node::map());
    const Node deep_schema = yaml(R"(
type: object
properties:
  free:
    type: object
    additionalProperties:
      type: object
      additionalProperties:
        type: object
        additionalProperties:
          type: object
          x-kubernetes-preserve-unknown-fields: true
)");
    auto d = admit_config(&deep_schema, deep, "spec.config", {.max_depth = 2});
    ASSERT_FALSE(d.violations.empty());
    EXPECT_NE(d.violations[0].message.find("nesting deeper than 2 levels"), std::string::npos);
}

// The patterns of one validation share one budget of matching steps; values are quoted by a
// bounded prefix.
TEST(PkoAdmission, PatternWorkIsBoundedPerValidation) {
    const Node schema = yaml(R"(
type: object
properties:
  l:
    type: array
    items: {type: string, pattern: "^(a|b)*c$", minLength: 1}
  n:
    type: string
    pattern: "^x"
)");
    Node cfg = Node::map();
    Node& l = cfg.set("l", Node::seq());
    for (int i = 0; i < 50; ++i)
        l.push(Node::string(std::string(10000, 'a')));
    cfg.set("n", Node::string("y"));
    auto v = validate_config(schema, cfg, "spec.config", {.max_regex_steps = 1'000'000});
    ASSERT_GE(v.size(), 2u);
    // Some values were matched (and did not match), then the budget ran out: one violation says
    // so, and nothing is checked after it.
    const std::string shown = "\"" + std::string(256, 'a') + "...\" (10000 bytes)";
    EXPECT_EQ(v[0].message, "spec.config.l.0: Invalid value: " + shown +
                                ": l.0 in body should match '^(a|b)*c$'");
    EXPECT_EQ(v.back().message.substr(0, 14), "spec.config.l.");
    EXPECT_NE(v.back().message.find(": Invalid value: " + shown +
                                    ": validation stopped: the schema's patterns need more than "
                                    "1000000 steps of regular-expression matching"),
              std::string::npos)
        << v.back().message;
    EXPECT_LT(v.size(), 50u);
    for (const auto& e : v) {
        EXPECT_LT(e.message.size(), 450u);
        EXPECT_EQ(e.message.find("spec.config.n"), std::string::npos) << e.message;
    }
    // The default budget is enough for them all: 50 violations, then the one of n.
    auto all = validate_config(schema, cfg, "spec.config");
    EXPECT_EQ(all.size(), 51u);

    // JSON Schema mode (kubeconform): running out abandons the validation with an error.
    const Node js = yaml(R"(
type: object
properties:
  l: {type: array, items: {type: string, pattern: "^(a|b)*c$"}}
)");
    auto j = validate_json_schema(js, cfg, {}, {.max_regex_steps = 1'000'000});
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.error().message, "matching the schema's patterns needs more than 1000000 steps "
                                 "of regular-expression matching");
    EXPECT_TRUE(validate_json_schema(js, cfg).ok());
    const Node pp = yaml("type: object\npatternProperties:\n  \"^(a|b)*c$\": {type: string}\n");
    Node keys = Node::map();
    for (int i = 0; i < 50; ++i)
        keys.set(std::string(10000, 'a') + std::to_string(i), Node::string("v"));
    auto k = validate_json_schema(pp, keys, {}, {.max_regex_steps = 1'000'000});
    ASSERT_FALSE(k.ok());
    EXPECT_NE(k.error().message.find("needs more than 1000000 steps"), std::string::npos);
}

TEST(PkoAdmission, WorkIsBounded) {
    // uniqueItems (which check_schema refuses, but admission may meet) on a long list.
    const Node uniq = yaml("type: object\nproperties:\n  l: {type: array, uniqueItems: true, "
                           "items: {type: integer}}\n");
    Node cfg = Node::map();
    Node& l = cfg.set("l", Node::seq());
    for (int i = 0; i < 100000; ++i)
        l.push(Node::integer(i));
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(admit_config(&uniq, cfg).violations.empty());
    l.push(Node::integer(5));
    auto dup = admit_config(&uniq, cfg);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
    EXPECT_EQ(messages(dup.violations),
              std::vector<std::string>{
                  "spec.config.l: Invalid value: \"\": l in body shouldn't contain duplicates"});

    // Alternatives multiply the checks; the budget stops a validation that would run too long.
    const Node alts = yaml(R"(
type: object
properties:
  l:
    type: array
    items:
      anyOf:
      - {type: string}
      - {type: boolean}
      - {type: object}
)");
    auto limited = admit_config(&alts, cfg, "spec.config", {.max_checks = 1000});
    ASSERT_FALSE(limited.violations.empty());
    EXPECT_EQ(limited.violations.back().message,
              "spec.config.l.249: Invalid value: \"\": validation stopped: the schema and "
              "configuration need more than 1000 checks");
}

} // namespace
