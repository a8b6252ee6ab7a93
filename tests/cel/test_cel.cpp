// The CEL subset of olm.constraint rules: OLM's own examples, every literal and operator,
// precedence, CEL's error semantics, compile errors with their column, limits, and token soup.
#include <gtest/gtest.h>

#include "kpkg/cel/cel.hpp"
#include "kpkg/io/load.hpp"

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace cel = kpkg::cel;
using kpkg::cel::Outcome;
using kpkg::cel::Program;
using PropertyValue = kpkg::cel::Property;

namespace {

// Properties from a JSON list of {"type", "value"} objects.
std::vector<PropertyValue> props(const std::string& json) {
    auto docs = kpkg::io::parse_json(json, "test").take();
    std::vector<PropertyValue> out;
    for (const auto& item : docs.at(0).root.items)
        out.push_back({item.get("type")->text, *item.get("value")});
    return out;
}

const std::vector<PropertyValue>& bundle() {
    static const auto p = props(R"([
        {"type": "olm.package", "value": {"packageName": "etcd", "version": "0.9.4"}},
        {"type": "olm.gvk", "value": {"group": "etcd.database.coreos.com", "version": "v1beta2",
                                      "kind": "EtcdCluster"}},
        {"type": "olm.gvk", "value": {"group": "etcd.database.coreos.com", "version": "v1beta2",
                                      "kind": "EtcdBackup"}},
        {"type": "certified", "value": true},
        {"type": "numbers", "value": {"one": 1, "half": 0.5, "big": 1000000, "list": [1, 2, 3],
                                      "name": "x", "none": null}}
    ])");
    return p;
}

cel::Outcome run(const std::string& rule, const std::vector<PropertyValue>& p = bundle()) {
    auto prog = cel::Program::compile(rule);
    EXPECT_TRUE(prog.ok()) << rule << "\n" << prog.error().message;
    if (!prog.ok()) return cel::Outcome{cel::Outcome::Kind::error, "did not compile"};
    return (*prog)->evaluate(p);
}

bool holds(const std::string& rule, const std::vector<PropertyValue>& p = bundle()) {
    cel::Outcome o = run(rule, p);
    EXPECT_NE(o.kind, cel::Outcome::Kind::error) << rule << ": " << o.error;
    return o.holds();
}

// The error message of evaluating `rule`; fails the test when it evaluates to a value.
std::string eval_error(const std::string& rule, const std::vector<PropertyValue>& p = bundle()) {
    cel::Outcome o = run(rule, p);
    EXPECT_EQ(o.kind, cel::Outcome::Kind::error) << rule;
    return o.error;
}

// The compile error of `rule`; fails the test when it compiles.
kpkg::Error compile_error(const std::string& rule) {
    auto prog = cel::Program::compile(rule);
    EXPECT_FALSE(prog.ok()) << rule << " compiled";
    if (prog.ok()) return {};
    return prog.error();
}

std::string column_of(const std::string& rule, const std::string& token) {
    return "column " + std::to_string(rule.find(token) + 1) + ":";
}

#define EXPECT_CONTAINS(haystack, needle)                                                          \
    EXPECT_NE(std::string(haystack).find(needle), std::string::npos)                               \
        << "\"" << (haystack) << "\" does not contain \"" << (needle) << "\""

// --- OLM's own examples -------------------------------------------------------------------------

TEST(CelOlm, ApiCelLibraryTest) {
    // operator-framework/api pkg/constraints/cel_test.go
    const auto p = props(R"([{"type": "olm.test", "value": "1.0.0"}])");
    EXPECT_TRUE(holds("properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, "
                      "'1.0.0') == 0))",
                      p));
    EXPECT_FALSE(holds("properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, "
                       "'1.0.1') == 0))",
                       p));
    EXPECT_FALSE(holds("properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, "
                       "'1.0.0') < 0))",
                       p));
    EXPECT_FALSE(holds("properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, "
                       "'1.0.0') > 0))",
                       p));
    auto e = compile_error("properties.exists(p, p.type == 'olm.test' && (doesnt_exist(p.value, "
                           "'1.0.0') == 0))");
    EXPECT_CONTAINS(e.message, "undeclared reference to 'doesnt_exist'");
    EXPECT_EQ(e.code, kpkg::ExitCode::invalid);
    EXPECT_CONTAINS(compile_error("1").message, "of type int");
}

TEST(CelOlm, ResolverGenericConstraint) {
    // operator-lifecycle-manager resolver_test.go, TestSolveOperators_GenericConstraint
    const auto gvk = props(R"([
        {"type": "olm.package", "value": {"packageName": "packageB", "version": "1.0.0"}},
        {"type": "olm.gvk", "value": {"group": "g", "version": "v", "kind": "k"}}])");
    EXPECT_TRUE(holds("properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g', "
                      "'version': 'v', 'kind': 'k'})",
                      gvk));
    EXPECT_FALSE(holds("properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g2', "
                       "'version': 'v', 'kind': 'k'})",
                       gvk));
    const std::string rule = "properties.exists(p, p.type == 'olm.package' && p.value.packageName "
                             "== 'packageB' && (semver_compare(p.value.version, '1.0.1') == 0))";
    auto pkg = [](const char* version) {
        return props(
            std::string(
                R"([{"type": "olm.package", "value": {"packageName": "packageB", "version": ")") +
            version + "\"}}]");
    };
    EXPECT_FALSE(holds(rule, pkg("1.0.0")));
    EXPECT_TRUE(holds(rule, pkg("1.0.1")));
    EXPECT_FALSE(holds(rule, pkg("1.0.2")));
}

TEST(CelOlm, DocumentedExamples) {
    // OLM's documentation of cel constraints
    const auto p =
        props(R"([{"type": "certified", "value": {}}, {"type": "stable", "value": {}}])");
    EXPECT_TRUE(holds(R"(properties.exists(p, p.type == "certified"))", p));
    EXPECT_TRUE(holds(
        R"(properties.exists(p, p.type == "certified") && properties.exists(p, p.type == "stable"))",
        p));
    EXPECT_FALSE(holds(
        R"(properties.exists(p, p.type == "certified") && properties.exists(p, p.type == "beta"))",
        p));
    EXPECT_TRUE(holds("properties.exists(p, p.type == 'olm.gvk' && p.value.group == "
                      "'etcd.database.coreos.com' && p.value.kind == 'EtcdBackup')"));
    EXPECT_TRUE(holds("properties.exists(p, p.type == 'olm.package' && "
                      "semver_compare(p.value.version, '0.9.0') >= 0)"));
}

// --- literals -----------------------------------------------------------------------------------

TEST(CelLiterals, Numbers) {
    EXPECT_TRUE(holds("1 == 1"));
    EXPECT_TRUE(holds("0x10 == 16 && 0xff == 255"));
    EXPECT_TRUE(holds("16u == 16u && 0x10u == 16u && 7U == 7u"));
    EXPECT_TRUE(holds("1.5 == 1.5 && 1e3 == 1000.0 && .5 == 0.5 && 2E-1 == 0.2 && 1.5e+1 == 15.0"));
    EXPECT_TRUE(
        holds("-5 < 0 && -0.5 < 0.0 && -9223372036854775808 < 0 && 9223372036854775807 > 0"));
    EXPECT_TRUE(holds("1e-400 == 0.0"));
    EXPECT_TRUE(holds("007 == 7"));
    EXPECT_CONTAINS(compile_error("9223372036854775808 > 0").message, "invalid int literal");
    EXPECT_CONTAINS(compile_error("18446744073709551616u > 0u").message, "invalid uint literal");
    EXPECT_TRUE(holds("18446744073709551615u > 0u"));
    EXPECT_CONTAINS(compile_error("1e400 > 0.0").message, "invalid double literal");
    EXPECT_CONTAINS(compile_error("0XfF == 255").message, "column 2"); // 0X is not a hex prefix
}

TEST(CelLiterals, Strings) {
    EXPECT_TRUE(holds(R"('a' == "a")"));
    EXPECT_TRUE(holds(R"('''a'b''' == "a'b")"));
    EXPECT_TRUE(holds(R"("""two
lines""" == 'two\nlines')"));
    EXPECT_TRUE(holds(R"(r'\n' == '\\n' && R"\d" == "\\d")"));
    EXPECT_TRUE(holds(R"('\x41' == 'A' && '\X41' == 'A' && '\101' == 'A' && '\u00e9' == 'é')"));
    EXPECT_TRUE(holds(R"('\U0001F600'.size() == 1 && '😀'.size() == 1 && 'é'.size() == 1)"));
    EXPECT_TRUE(holds(R"('\a\b\f\n\r\t\v\\\?\"\'\`'.size() == 12)"));
    EXPECT_TRUE(holds(R"('' == "")"));
    EXPECT_CONTAINS(compile_error(R"('\q' == 'q')").message, "invalid escape sequence");
    EXPECT_CONTAINS(compile_error(R"('\uD800' == 'x')").message,
                    "U+D800 is not a Unicode character");
    EXPECT_CONTAINS(compile_error(R"('\U00110000' == 'x')").message, "U+110000 is not");
    EXPECT_CONTAINS(compile_error(R"('\u12' == 'x')").message, "hexadecimal");
    EXPECT_CONTAINS(compile_error("'abc == 'abc'").message, "unterminated");
    EXPECT_CONTAINS(compile_error("'a\nb' == 'x'").message, "unterminated");
    EXPECT_CONTAINS(compile_error("b'abc' == b'abc'").message, "bytes literals");
}

TEST(CelLiterals, BoolNullListMap) {
    EXPECT_TRUE(holds("true"));
    EXPECT_FALSE(holds("false"));
    EXPECT_TRUE(holds("null == null"));
    EXPECT_TRUE(holds("[1, 2] == [1, 2] && [1, 2] != [2, 1] && [] == [] && [1, 2,] == [1, 2]"));
    EXPECT_TRUE(holds("{'a': 1, 'b': 2} == {'b': 2, 'a': 1} && {} == {} && {'a': 1,} == {'a': 1}"));
    EXPECT_TRUE(holds("{1: 'x', true: 'y', 2u: 'z'}[1] == 'x'"));
    EXPECT_TRUE(holds("[[1], [2, 3]][1][0] == 2"));
    EXPECT_CONTAINS(eval_error("{'a': 1, 'a': 2}.a == 1"), "duplicate map key");
    EXPECT_CONTAINS(eval_error("{1.5: 'x'}.size() == 1"), "unsupported map key type");
}

// --- operators and precedence -------------------------------------------------------------------

TEST(CelOperators, LogicAndPrecedence) {
    EXPECT_TRUE(holds("true || false && false")); // && binds tighter than ||
    EXPECT_FALSE(holds("(true || false) && false"));
    EXPECT_TRUE(holds("!false"));
    EXPECT_TRUE(holds("!true || true"));
    EXPECT_FALSE(holds("!(true || true)"));
    EXPECT_TRUE(holds("!!true"));
    EXPECT_TRUE(holds("!!1 == 1"));   // cel-go drops an even run of '!'
    EXPECT_TRUE(holds("--1 == 1"));   // ... and of '-'
    EXPECT_TRUE(holds("---1 == -1")); // an odd run negates
    EXPECT_TRUE(holds("1 < 2 == true"));
    EXPECT_TRUE(holds("1 + 2 * 3 == 7 && (1 + 2) * 3 == 9 && 10 - 2 - 3 == 5"));
    EXPECT_TRUE(holds("7 / 2 == 3 && 7 % 3 == 1 && -7 / 2 == -3 && -7 % 3 == -1"));
    EXPECT_TRUE(holds("1 -1 == 0 && 2--1 == 3"));
    EXPECT_TRUE(holds("2 * 3 < 7 && 'a' + 'b' == 'ab'"));
    EXPECT_TRUE(holds("1 + 1 in [2, 3]")); // + binds tighter than in
}

TEST(CelOperators, Conditional) {
    EXPECT_TRUE(holds("(true ? 1 : 2) == 1"));
    EXPECT_TRUE(holds("false ? false : true"));
    EXPECT_TRUE(holds("false ? false : true ? true : false")); // right-associative
    EXPECT_TRUE(holds("true ? true : 1 / 0 == 1"));            // the other branch is not run
    // ?: has the lowest precedence: this is true ? 1 : (2 == 1), an int/bool mix.
    EXPECT_CONTAINS(compile_error("true ? 1 : 2 == 1").message, "no matching overload for '?:'");
    // As in CEL's grammar, the true-branch cannot itself be a conditional.
    EXPECT_CONTAINS(compile_error("true ? false ? true : false : true").message, "expected ':'");
    EXPECT_CONTAINS(compile_error("1 ? true : false").message, "condition of '? :'");
}

TEST(CelOperators, Relations) {
    EXPECT_TRUE(holds("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3 && 1 != 2"));
    EXPECT_TRUE(holds("1u < 2u && 1.5 < 2.5 && 'a' < 'b' && 'B' < 'a' && false < true"));
    EXPECT_TRUE(holds("'abc' < 'abd' && 'ab' < 'abc' && 'é' > 'z'"));
    EXPECT_TRUE(
        holds("'a' in ['a', 'b'] && !('c' in ['a']) && 'a' in {'a': 1} && !('b' in {'a': 1})"));
    EXPECT_TRUE(holds("[1] in [[1], [2]]"));
    EXPECT_CONTAINS(compile_error("1 == 'a'").message,
                    "no matching overload for '==' applied to (int, string)");
    EXPECT_CONTAINS(compile_error("1 == 1.0").message, "(int, double)"); // homogeneous when typed
    EXPECT_CONTAINS(compile_error("'a' < 1").message, "no matching overload for '<'");
    EXPECT_CONTAINS(compile_error("[1] < [2]").message, "no matching overload for '<'");
    EXPECT_CONTAINS(compile_error("1 in ['a']").message, "no matching overload for 'in'");
    EXPECT_CONTAINS(compile_error("1 in 1").message, "no matching overload for 'in'");
}

TEST(CelOperators, Arithmetic) {
    EXPECT_TRUE(holds("2u * 3u == 6u && 7u / 2u == 3u && 7u % 2u == 1u && 3u - 1u == 2u"));
    EXPECT_TRUE(holds("1.5 + 1.5 == 3.0 && 1.0 / 4.0 == 0.25 && 2.0 * 2.0 == 4.0"));
    EXPECT_TRUE(holds("1.0 / 0.0 > 1e308"));
    EXPECT_TRUE(holds("[1] + [2] == [1, 2] && [1] + [] == [1]"));
    EXPECT_TRUE(holds("-(2) == -2 && -(2.5) == -2.5"));
    EXPECT_CONTAINS(eval_error("9223372036854775807 + 1 > 0"), "integer overflow");
    EXPECT_CONTAINS(eval_error("-9223372036854775808 - 1 < 0"), "integer overflow");
    EXPECT_CONTAINS(eval_error("4611686018427387904 * 2 > 0"), "integer overflow");
    EXPECT_CONTAINS(eval_error("-9223372036854775808 / -1 > 0"), "integer overflow");
    EXPECT_CONTAINS(eval_error("-9223372036854775808 % -1 == 0"), "integer overflow");
    EXPECT_CONTAINS(eval_error("-(-9223372036854775808) > 0"), "integer overflow");
    EXPECT_CONTAINS(eval_error("1 / 0 == 1"), "division by zero");
    EXPECT_CONTAINS(eval_error("1 % 0 == 1"), "modulus by zero");
    EXPECT_CONTAINS(eval_error("1u - 2u == 0u"), "unsigned integer overflow");
    EXPECT_CONTAINS(eval_error("1u / 0u == 0u"), "division by zero");
    EXPECT_CONTAINS(compile_error("1 + 1u == 2").message, "no matching overload for '+'");
    EXPECT_CONTAINS(compile_error("1.5 % 1.0 == 0.5").message, "no matching overload for '%'");
    EXPECT_CONTAINS(compile_error("-1u == 1u").message, "no matching overload for '-'");
    EXPECT_CONTAINS(compile_error("-'a' == 'a'").message, "no matching overload for '-'");
    EXPECT_CONTAINS(compile_error("true + true").message, "no matching overload for '+'");
}

TEST(CelOperators, MembersAndFunctions) {
    EXPECT_TRUE(
        holds("properties[0].type == 'olm.package' && properties[0]['type'] == 'olm.package'"));
    EXPECT_TRUE(holds("properties[0].value.packageName == 'etcd'"));
    EXPECT_TRUE(holds("has(properties[0].value.version) && !has(properties[0].value.nope)"));
    EXPECT_TRUE(holds("has({'a': 1}.a) && !has({'a': 1}.b)"));
    EXPECT_TRUE(holds("[1, 2, 3][1] == 2"));
    EXPECT_CONTAINS(compile_error("[1, 2, 3][1u] == 2").message, "no matching overload for '[]'");
    EXPECT_TRUE(holds("size('héllo') == 5 && 'abc'.size() == 3 && [1, 2].size() == 2 && "
                      "size({'a': 1}) == 1 && properties.size() == 5"));
    EXPECT_TRUE(holds("'operator'.startsWith('op') && 'operator'.endsWith('tor') && "
                      "'operator'.contains('era') && !'operator'.contains('x') && "
                      "'a'.startsWith('')"));
    EXPECT_TRUE(holds(".properties.size() == 5"));
    EXPECT_TRUE(holds("properties.exists(p, p.value.package == 'x') || true")); // reserved as field
    EXPECT_CONTAINS(eval_error("properties[9].type == 'x'"), "index out of range: 9");
    EXPECT_CONTAINS(eval_error("properties[-1].type == 'x'"), "index out of range");
    EXPECT_CONTAINS(eval_error("properties[0].value.nope == 'x'"), "no such key: nope");
    EXPECT_CONTAINS(eval_error("properties[3].value.x == 'x'"), "field selection '.x'");
    EXPECT_CONTAINS(compile_error("properties[0][0] == 'x'").message,
                    "no matching overload for '[]'");
    EXPECT_CONTAINS(compile_error("properties['a'] == 'x'").message,
                    "no matching overload for '[]'");
    EXPECT_CONTAINS(compile_error("'a'.b == 'x'").message, "no fields");
    EXPECT_CONTAINS(compile_error("1.size() == 1").message, "no matching overload for 'size'");
    EXPECT_CONTAINS(compile_error("'a'.startsWith(1)").message,
                    "no matching overload for 'startsWith'");
}

TEST(CelOperators, Macros) {
    EXPECT_TRUE(holds("[1, 2, 3].all(x, x > 0) && ![1, 2, 0].all(x, x > 0)"));
    EXPECT_TRUE(holds("[1, 2, 3].exists(x, x == 2) && ![].exists(x, x == 2)"));
    EXPECT_TRUE(holds("[1, 2, 2].exists_one(x, x < 2) && ![1, 2, 3, 4].exists_one(x, x % 2 == 0)"));
    EXPECT_TRUE(holds("{'a': 1, 'b': 2}.all(k, k != 'c') && {'a': 1}.exists(k, k == 'a')"));
    EXPECT_TRUE(holds("properties.exists_one(p, p.type == 'olm.package')"));
    EXPECT_TRUE(holds("properties.all(p, has(p.value) && has(p.type))"));
    EXPECT_TRUE(holds("properties.exists(p, p.type == 'olm.gvk' && properties.exists(q, q.type == "
                      "'olm.gvk' && q.value.kind != p.value.kind))"));
    EXPECT_TRUE(holds("[1].exists(x, [2].exists(x, x == 2))")); // the inner x shadows the outer
    EXPECT_TRUE(holds("[[1, 2]].all(x, x.exists(y, y == 2))"));
    EXPECT_CONTAINS(compile_error("properties.exists(p.x, true)").message, "must be a simple name");
    EXPECT_CONTAINS(compile_error("properties.exists(p)").message, "takes a variable name");
    EXPECT_CONTAINS(compile_error("properties.exists(p, 1)").message, "of type int, not bool");
    EXPECT_CONTAINS(compile_error("1.exists(p, true)").message, "cannot range over");
    EXPECT_CONTAINS(compile_error("properties.exists(p, true) && p.type == 'x'").message,
                    "undeclared reference to 'p'");
    EXPECT_CONTAINS(compile_error("has(properties)").message, "has() takes one field selection");
    EXPECT_CONTAINS(compile_error("exists(properties, true)").message, "is called on a value");
}

// --- numbers from JSON and semver_compare -------------------------------------------------------

TEST(CelDynamic, JsonNumbersAreDoubles) {
    // Go's encoding/json reads every number as a float64, so CEL sees a double; equality and
    // ordering still work across int, uint and double at run time.
    EXPECT_TRUE(holds("properties[4].value.one == 1 && properties[4].value.one == 1u && "
                      "properties[4].value.one == 1.0"));
    EXPECT_TRUE(holds("properties[4].value.one < 2 && properties[4].value.half < 1 && "
                      "properties[4].value.half > 0u"));
    EXPECT_TRUE(holds("properties[4].value.list == [1, 2, 3] && 2 in properties[4].value.list"));
    EXPECT_TRUE(holds("properties[4].value.name != 1 && properties[4].value.none == null"));
    EXPECT_TRUE(holds("properties[3].value == true"));
    EXPECT_CONTAINS(eval_error("properties[4].value.one + 1 == 2"), "no such overload");
    EXPECT_CONTAINS(eval_error("properties[4].value.name < 1"), "no such overload");
    EXPECT_FALSE(holds("0.0 / 0.0 == 0.0 / 0.0")); // NaN is unequal to itself
    EXPECT_CONTAINS(eval_error("0.0 / 0.0 < 1.0"), "NaN");
    EXPECT_TRUE(holds("-1 < properties[4].value.big && properties[4].value.big > "
                      "18446744073709551615u == false"));
}

TEST(CelDynamic, SemverCompare) {
    EXPECT_TRUE(
        holds("semver_compare('1.0.0', '1.0.1') == -1 && semver_compare('1.0.1', '1.0.0') == 1"));
    EXPECT_TRUE(holds("semver_compare('1.0.0-rc.1', '1.0.0') == -1"));
    EXPECT_TRUE(holds("semver_compare('1.0.0+build', '1.0.0') == 0")); // build metadata ignored
    EXPECT_TRUE(
        holds("semver_compare('v1.2', '1.2.0') == 0 && semver_compare(' 1.2.3 ', '1.2.3') == 0"));
    EXPECT_TRUE(holds("semver_compare(2, '2.0.0') == 0 && semver_compare(2u, '2.0.0') == 0"));
    // A JSON number is a double formatted as Go's %v: 1 -> "1", 0.5 -> "0.5", 1e6 -> "1e+06".
    EXPECT_TRUE(holds("semver_compare(properties[4].value.one, '1.0.0') == 0"));
    EXPECT_TRUE(holds("semver_compare(properties[4].value.half, '0.5.0') == 0")); // "0.5" is 0.5.0
    EXPECT_CONTAINS(eval_error("semver_compare(properties[4].value.big, '1.0.0') == 1"),
                    "unable to parse 1e+06");
    EXPECT_TRUE(holds("semver_compare(1.5, '1.5.0') == 0"));
    EXPECT_CONTAINS(eval_error("semver_compare(true, '1.0.0') == 0"), "unable to parse true");
    EXPECT_CONTAINS(eval_error("semver_compare('1.0.0', 'banana') == 0"),
                    "unable to parse 'banana'");
    EXPECT_CONTAINS(eval_error("semver_compare(properties[4].value, '1.0.0') == 0"),
                    "unable to parse");
    EXPECT_CONTAINS(compile_error("semver_compare('1.0.0') == 0").message, "takes 2 arguments");
    EXPECT_CONTAINS(compile_error("'1.0.0'.semver_compare('1.0.0') == 0").message, "not a method");
}

// --- error propagation --------------------------------------------------------------------------

TEST(CelErrors, LogicalOperatorsAreCommutative) {
    const std::string err = "properties[9].type == 'x'"; // index out of range
    EXPECT_TRUE(holds(err + " || true"));
    EXPECT_TRUE(holds("true || " + err));
    EXPECT_FALSE(holds(err + " && false"));
    EXPECT_FALSE(holds("false && " + err));
    EXPECT_CONTAINS(eval_error(err + " && true"), "index out of range");
    EXPECT_CONTAINS(eval_error("true && " + err), "index out of range");
    EXPECT_CONTAINS(eval_error(err + " || false"), "index out of range");
    EXPECT_CONTAINS(eval_error("!(" + err + ")"), "index out of range");
    EXPECT_CONTAINS(eval_error("(" + err + ") == true"), "index out of range");
    EXPECT_CONTAINS(eval_error("(" + err + ") ? true : false"), "index out of range");
    EXPECT_TRUE(holds("false || false || " + err + " || true"));
    // A non-bool operand behaves like an error.
    EXPECT_TRUE(holds("properties[4].value.one || true"));
    EXPECT_CONTAINS(eval_error("properties[4].value.one && true"), "no such overload");
}

TEST(CelErrors, Macros) {
    EXPECT_CONTAINS(eval_error("[0, 1].all(x, 1 / x > 0)"), "division by zero");
    EXPECT_FALSE(holds("[0, -1].all(x, 1 / x > 0)"));  // false absorbs the error
    EXPECT_TRUE(holds("[0, 1].exists(x, 1 / x > 0)")); // true absorbs the error
    EXPECT_CONTAINS(eval_error("[0].exists(x, 1 / x > 0)"), "division by zero");
    EXPECT_CONTAINS(eval_error("[1, 0].exists_one(x, 1 / x > 0)"), "division by zero");
    EXPECT_FALSE(holds("[1, 1].exists_one(x, x == 1)"));
    EXPECT_CONTAINS(eval_error("properties[0].value.version.exists(x, true)"), "over '0.9.4'");
    // The usual OLM rule: properties of other types make the field access fail, but && with a
    // false type test absorbs it.
    EXPECT_TRUE(
        holds("properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'etcd')"));
    // Without the type test the rule errs on the properties that lack the key, unless one holds.
    EXPECT_TRUE(holds("properties.exists(p, p.value.packageName == 'etcd')"));
    cel::Outcome o = run("properties.exists(p, p.value.packageName == 'nope')");
    EXPECT_EQ(o.kind, cel::Outcome::Kind::error); // OLM: the rule does not hold
    EXPECT_FALSE(o.holds());
}

// --- compile errors name the column -------------------------------------------------------------

TEST(CelCompile, ErrorsNameTheColumn) {
    std::string rule = "properties.exists(p, p.type == 'olm.test' && (doesnt_exist(p.value, "
                       "'1.0.0') == 0))";
    auto e = compile_error(rule);
    EXPECT_CONTAINS(e.message, column_of(rule, "doesnt_exist"));
    ASSERT_EQ(e.notes.size(), 2u);
    EXPECT_EQ(e.notes[0], "  " + rule);
    EXPECT_EQ(e.notes[1], "  " + std::string(rule.find("doesnt_exist"), ' ') + "^");

    rule = "properties.exists(p, p.type = 'x')";
    EXPECT_CONTAINS(compile_error(rule).message, column_of(rule, "= ") + " '=' is not an operator");
    rule = "properties.exists(p, p.type == 'x'";
    EXPECT_CONTAINS(compile_error(rule).message,
                    "column " + std::to_string(rule.size() + 1) + ": expected ',' or ')'");
    EXPECT_CONTAINS(compile_error("1 +").message,
                    "column 4: expected an expression, found the end");
    EXPECT_CONTAINS(compile_error("true true").message, "column 6: unexpected 'true'");
    EXPECT_CONTAINS(compile_error("true & false").message, "column 6: unexpected character '&'");
    EXPECT_CONTAINS(compile_error("true # x").message, "column 6: unexpected character '#'");
    EXPECT_CONTAINS(compile_error("'é' == x").message, "column 8: undeclared reference to 'x'");
    EXPECT_CONTAINS(compile_error("package == 1").message, "reserved identifier 'package'");
    EXPECT_CONTAINS(compile_error("").message, "column 1: expected an expression");
    EXPECT_CONTAINS(compile_error("properties.map(p, p.type)").message,
                    "'map' is standard CEL but not in the subset");
    EXPECT_CONTAINS(compile_error("properties.filter(p, true).size() > 0").message, "'filter'");
    EXPECT_CONTAINS(compile_error("int('1') == 1").message, "'int' is standard CEL");
    EXPECT_CONTAINS(compile_error("'a'.matches('a')").message, "'matches' is standard CEL");
    EXPECT_CONTAINS(compile_error("properties.frobnicate()").message,
                    "undeclared reference to method 'frobnicate'");
    EXPECT_CONTAINS(compile_error("Foo{a: 1} == 1").message, "message construction");
    EXPECT_CONTAINS(compile_error("properties[0].?value == 1").message, "'.?'");
    EXPECT_CONTAINS(compile_error("properties[?0] == 1").message, "'[?'");
    EXPECT_CONTAINS(compile_error("properties.in").message, "expected a field or method name");
    EXPECT_CONTAINS(compile_error("!1").message, "no matching overload for '!' applied to (int)");
    EXPECT_CONTAINS(compile_error("1 && true").message, "operand of '&&' is of type int");
    EXPECT_CONTAINS(compile_error("properties[0].value").message, "of type dyn");
    EXPECT_CONTAINS(compile_error("properties.size()").message, "of type int");
    EXPECT_CONTAINS(compile_error("'x'").message, "of type string");
    EXPECT_CONTAINS(compile_error("true // a comment\n && foo").message,
                    "line 2, column 5: undeclared reference to 'foo'");
    EXPECT_TRUE(holds("true // a comment"));
}

TEST(CelCompile, MultiLineRule) {
    const std::string rule = "properties.exists(p,\n  p.type == 'olm.gvk' &&\n  p.value.kid == 'x' "
                             "&& bogus)";
    auto e = compile_error(rule);
    EXPECT_CONTAINS(e.message, "line 3, column 25: undeclared reference to 'bogus'");
    ASSERT_EQ(e.notes.size(), 2u);
    EXPECT_EQ(e.notes[0], "    p.value.kid == 'x' && bogus)");
    EXPECT_EQ(e.notes[1], "  " + std::string(24, ' ') + "^");
}

TEST(CelCompile, LongLineExcerptIsCut) {
    std::string rule = "true";
    for (int k = 0; k < 100; ++k)
        rule += " && true";
    rule += " && nope";
    auto e = compile_error(rule);
    ASSERT_EQ(e.notes.size(), 2u);
    EXPECT_LT(e.notes[0].size(), 120u);
    EXPECT_EQ(e.notes[0].substr(0, 5), "  ...");
    EXPECT_EQ(e.notes[0].substr(e.notes[1].size() - 1, 4), "nope");
}

// --- limits -------------------------------------------------------------------------------------

TEST(CelLimits, HundredThousandNestedParentheses) {
    // 100,000 nested parentheses make a rule longer than cel-go's 100,000 characters.
    std::string rule = std::string(100000, '(') + "true" + std::string(100000, ')');
    EXPECT_CONTAINS(compile_error(rule).message, "the limit is 100000");
    // Within the length limit, the nesting limit stops the parser (no stack overflow).
    rule = std::string(49000, '(') + "true" + std::string(49000, ')');
    EXPECT_CONTAINS(compile_error(rule).message,
                    "column 251: the rule nests deeper than 250 levels");
    EXPECT_CONTAINS(compile_error(std::string(100000, '(')).message, "nests deeper");
    EXPECT_CONTAINS(compile_error(std::string(100000, '[')).message, "nests deeper");
    EXPECT_CONTAINS(compile_error(std::string(100000, '{')).message, "nests deeper");
    EXPECT_CONTAINS(compile_error(std::string(50000, '(') + "1 + ").message, "nests deeper");
    EXPECT_CONTAINS(compile_error("properties" + std::string(30000, '[') + "0").message,
                    "nests deeper");
    EXPECT_TRUE(holds(std::string(200, '(') + "true" + std::string(200, ')')));
}

TEST(CelLimits, DeepTreesWithoutParentheses) {
    std::string chain = "properties[0].value";
    for (int k = 0; k < 300; ++k)
        chain += ".a";
    EXPECT_CONTAINS(compile_error(chain + " == 1").message, "nests deeper");
    std::string sum = "1";
    for (int k = 0; k < 300; ++k)
        sum += " + 1";
    EXPECT_CONTAINS(compile_error(sum + " == 301").message, "nests deeper");
    // && and || chains stay flat, as cel-go balances them.
    std::string conj = "true";
    for (int k = 0; k < 5000; ++k)
        conj += " && true";
    EXPECT_TRUE(holds(conj));
    // Runs of ! and - are read in a loop.
    EXPECT_TRUE(holds(std::string(99000, '!') + "true"));
    EXPECT_TRUE(holds(std::string(99001, '!') + "false"));
    EXPECT_TRUE(holds(std::string(99000, '-') + "1 == 1"));
}

TEST(CelLimits, RuleLength) {
    std::string rule = "'" + std::string(99990, 'a') + "' != ''";
    EXPECT_TRUE(holds(rule));
    rule = "'" + std::string(100000, 'a') + "' != ''";
    EXPECT_CONTAINS(compile_error(rule).message, "the limit is 100000");
    EXPECT_CONTAINS(compile_error("'\xff' == 'x'").message, "not valid UTF-8");
}

TEST(CelLimits, EvaluationSteps) {
    std::string rule = "true";
    for (int k = 0; k < 8; ++k)
        rule = "properties.all(p" + std::to_string(k) + ", " + rule + ")"; // 5^8 iterations... more
    rule = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, " + rule + "))";
    // 100 * 5^8 iterations if nothing stopped it: the step limit does.
    cel::Outcome o = run(rule);
    EXPECT_EQ(o.kind, cel::Outcome::Kind::error);
    EXPECT_CONTAINS(o.error, "more than 1000000 steps");

    // Big strings count by their size: 500 * 2 concatenations of 80,000 bytes.
    const std::string big = "'" + std::string(40000, 'x') + "'";
    std::string outer = "[0";
    for (int k = 1; k < 500; ++k) {
        outer += ',';
        outer += std::to_string(k);
    }
    outer += "]";
    cel::Outcome c = run(outer + ".all(i, [" + big + ", " + big + "].all(s, (s + s).size() > i))");
    EXPECT_EQ(c.kind, cel::Outcome::Kind::error);
    EXPECT_CONTAINS(c.error, "more than 1000000 steps");
    // The same work without a variable is done once, when the rule is compiled.
    const std::string mid = "'" + std::string(20000, 'x') + "'";
    EXPECT_TRUE(holds(outer + ".all(i, [" + mid + ", " + mid + "].all(s, (" + mid + " + " + mid +
                      ").size() > 0))"));
}

TEST(CelFolding, ConstantSubtreesKeepTheirMeaning) {
    // Constant parts (here 1 / 0 and the map literal) are computed once; errors stay errors and
    // && / || still absorb them.
    EXPECT_TRUE(holds("properties.exists(p, p.type == 'certified' || 1 / 0 == 1)"));
    EXPECT_FALSE(holds("(1 / 0 == 1) && false"));
    EXPECT_CONTAINS(eval_error("(1 / 0 == 1) || false"), "division by zero");
    EXPECT_CONTAINS(eval_error("properties.all(p, {'a': 1, 'a': 2}.size() == 1)"),
                    "duplicate map key");
    EXPECT_TRUE(holds("properties.exists(p, p.value == {'group': 'etcd.database.coreos.com', "
                      "'version': 'v1beta2', 'kind': 'EtcdBackup'})"));
}

TEST(CelFolding, OneProgramManyThreads) {
    auto prog = cel::Program::compile(
        "properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': "
        "'etcd.database.coreos.com', 'version': 'v1beta2', 'kind': 'EtcdBackup'}) && "
        "['a', 'b'] + ['c'] == ['a', 'b', 'c']");
    ASSERT_TRUE(prog.ok());
    const auto with = bundle();
    const auto without =
        props(R"([{"type": "olm.gvk", "value": {"group": "g", "version": "v", "kind": "k"}}])");
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int k = 0; k < 2000; ++k) {
                if (!(*prog)->evaluate(with).holds()) ++wrong;
                if ((*prog)->evaluate(without).holds()) ++wrong;
            }
        });
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(wrong.load(), 0);
}

// --- token soup never crashes -------------------------------------------------------------------

TEST(CelFuzz, TokenSoup) {
    static const std::vector<std::string> vocab = {
        "properties", "p",          "q",           ".",           ",",
        "(",          ")",          "[",           "]",           "{",
        "}",          ":",          "?",           "!",           "-",
        "+",          "*",          "/",           "%",           "==",
        "!=",         "<",          "<=",          ">",           ">=",
        "&&",         "||",         "in",          "true",        "false",
        "null",       "0",          "1",           "-1",          "2u",
        "1.5",        "'a'",        "\"olm.gvk\"", "'1.0.0'",     "exists",
        "all",        "exists_one", "has",         "size",        "semver_compare",
        "type",       "value",      "startsWith",  "map",         "0x1F",
        "'''x'''",    "r'\\d'",     "b'x'",        "=",           "#",
        "\\",         "'",          "\"",          "//",          "\n",
        " ",          "package",    "version",     "packageName", "group",
        "kind"};
    std::mt19937 rng(20240605);
    std::size_t compiled = 0;
    for (int iter = 0; iter < 20000; ++iter) {
        std::string rule;
        const int n = 1 + static_cast<int>(rng() % 24);
        for (int k = 0; k < n; ++k) {
            rule += vocab[rng() % vocab.size()];
            if (rng() % 3) rule += ' ';
        }
        auto prog = cel::Program::compile(rule);
        if (!prog) {
            EXPECT_EQ(prog.error().code, kpkg::ExitCode::invalid);
            EXPECT_FALSE(prog.error().message.empty());
            continue;
        }
        ++compiled;
        cel::Outcome o = (*prog)->evaluate(bundle());
        if (o.kind == cel::Outcome::Kind::error) {
            EXPECT_FALSE(o.error.empty()) << rule;
        }
    }
    // Shaped soup: well-formed skeletons with random holes, so that evaluation is exercised too.
    static const std::vector<std::string> atoms = {
        "p.type",   "p.value", "p.value.version", "p.value.group", "1", "1.5",
        "'x'",      "null",    "[1, 'a']",        "{'k': p}",      "p", "properties",
        "-p.value", "size(p)", "p.value[0]",      "true"};
    static const std::vector<std::string> ops = {"==", "!=", "<", ">=", "+",  "-",
                                                 "*",  "/",  "%", "in", "&&", "||"};
    for (int iter = 0; iter < 20000; ++iter) {
        std::string body = atoms[rng() % atoms.size()];
        const int n = static_cast<int>(rng() % 5);
        for (int k = 0; k < n; ++k)
            body = "(" + body + " " + ops[rng() % ops.size()] + " " + atoms[rng() % atoms.size()] +
                   ")";
        const std::string rule =
            "properties.exists(p, " + body + " == " + atoms[rng() % atoms.size()] + ")";
        auto prog = cel::Program::compile(rule);
        if (!prog) continue;
        ++compiled;
        cel::Outcome o = (*prog)->evaluate(bundle());
        if (o.kind == cel::Outcome::Kind::error) {
            EXPECT_FALSE(o.error.empty()) << rule;
        }
    }
    EXPECT_GT(compiled, 1000u); // the soup does reach the evaluator
    // Random bytes.
    for (int iter = 0; iter < 5000; ++iter) {
        std::string rule(rng() % 40, '\0');
        for (char& c : rule)
            c = static_cast<char>(rng() % 256);
        auto prog = cel::Program::compile(rule);
        if (prog) (void)(*prog)->evaluate(bundle());
    }
}

} // namespace

// --- caller-declared variables ------------------------------------------------------------------

namespace {

// A test-only environment, as another caller (Package Operator) declares its own: an int `n`, a
// map(string, dyn) `m`, no semver_compare.
cel::Env test_env() {
    cel::Env env;
    env.variable("n", cel::prim(cel::Type::K::int_));
    env.variable("m", cel::map_of(cel::prim(cel::Type::K::str), cel::prim(cel::Type::K::dyn)));
    env.noun("a test condition");
    return env;
}

std::string env_compile_error(const std::string& rule) {
    auto prog = cel::Program::compile(rule, test_env());
    EXPECT_FALSE(prog.ok()) << rule << " compiled";
    return prog.ok() ? std::string() : prog.error().message;
}

} // namespace

TEST(CelEnv, CheckResolvesTheDeclaredVariablesOnly) {
    EXPECT_TRUE(cel::Program::compile("n + 1 == 4 && m.a == 4", test_env()).ok());
    EXPECT_EQ(env_compile_error("k > 1"),
              "column 1: undeclared reference to 'k' (the rule sees `n` and `m` and the "
              "variables of its macros)");
    // OLM's variable and function are OLM's environment's, not every caller's.
    EXPECT_CONTAINS(env_compile_error("properties.size() > 0"),
                    "undeclared reference to 'properties'");
    EXPECT_CONTAINS(env_compile_error("semver_compare('1.0.0', '1.0.1') < 0"),
                    "undeclared reference to 'semver_compare'");
    // Types come from the declarations.
    EXPECT_EQ(env_compile_error("n == 'x'"),
              "column 3: no matching overload for '==' applied to (int, string)");
    EXPECT_CONTAINS(env_compile_error("n.field == 1"),
                    "on a value of type int, which has no fields");
    EXPECT_EQ(env_compile_error("n + 1"),
              "column 1: the rule is of type int; a test condition must be of type bool");
    // A macro variable shadows a declared one.
    EXPECT_TRUE(cel::Program::compile("[1, 2].all(n, n > 0)", test_env()).ok());
    // A declaration can be replaced.
    cel::Env env = test_env();
    env.variable("n", cel::prim(cel::Type::K::str));
    EXPECT_TRUE(cel::Program::compile("n.startsWith('a')", env).ok());
    EXPECT_EQ(env.variables().size(), 2u);
}

TEST(CelEnv, EvaluationUsesTheValuesGiven) {
    auto prog = cel::Program::compile("n + 1 == m.a && m.b == 'x' && m.c.size() == n", test_env());
    ASSERT_TRUE(prog.ok()) << prog.error().message;
    const kpkg::io::Node three = kpkg::io::Node::integer(3);
    auto docs = kpkg::io::parse_yaml("{a: 4, b: x, c: [1, 2, 3]}", "m.yaml").take();
    const kpkg::io::Node& m = docs.at(0).root;
    using Numbers = cel::Activation::Numbers;
    cel::Activation vars;
    vars.bind("n", three, Numbers::typed).bind("m", m, Numbers::typed);
    EXPECT_EQ((*prog)->evaluate(vars).kind, cel::Outcome::Kind::holds);

    const kpkg::io::Node two = kpkg::io::Node::integer(2);
    cel::Activation other;
    other.bind("n", two, Numbers::typed).bind("m", m, Numbers::typed);
    EXPECT_EQ((*prog)->evaluate(other).kind, cel::Outcome::Kind::fails);

    // A variable without a value, or with a value of another type, is an evaluation error.
    cel::Activation missing;
    missing.bind("m", m, Numbers::typed);
    cel::Outcome o = (*prog)->evaluate(missing);
    EXPECT_EQ(o.kind, cel::Outcome::Kind::error);
    EXPECT_EQ(o.error, "no value given for variable 'n'");
    cel::Activation wrong;
    wrong.bind("n", m, Numbers::typed).bind("m", m, Numbers::typed);
    o = (*prog)->evaluate(wrong);
    EXPECT_EQ(o.kind, cel::Outcome::Kind::error);
    EXPECT_EQ(o.error, "variable 'n' is declared int but given a map");
    // Read as JSON, every number is a double (as OLM's properties are): not an int.
    cel::Activation json;
    json.bind("n", three).bind("m", m);
    o = (*prog)->evaluate(json);
    EXPECT_EQ(o.error, "variable 'n' is declared int but given a double");
}

TEST(CelEnv, OlmEnvironmentThroughAnActivation) {
    auto prog = cel::Program::compile("properties.exists(p, p.type == 'certified')");
    ASSERT_TRUE(prog.ok());
    cel::Activation vars;
    vars.bind("properties", bundle());
    EXPECT_TRUE((*prog)->evaluate(vars).holds());
    EXPECT_EQ(cel::Env::olm().variables().size(), 1u);
    EXPECT_EQ(cel::type_name(cel::Env::olm().variables()[0].type), "list(map(string, dyn))");
}
