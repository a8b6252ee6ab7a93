// parse_yaml: positions, documents, scalar typing, anchors, limits and every class of bad input;
// parse_auto, read_file and load_file.
#include "kpkg/io/emit.hpp"
#include "kpkg/io/load.hpp"

#include <csignal>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>

#include "support/support.hpp"

namespace kpkg::io {
namespace {

std::vector<Document> parse_ok(const std::string& text, const Limits& limits = {}) {
    auto r = parse_yaml(text, "test.yaml", limits);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str()) << "\ninput:\n" << text;
    if (!r.ok()) return {};
    return std::move(r).take();
}

Node parse_one(const std::string& text) {
    auto docs = parse_ok(text);
    EXPECT_EQ(docs.size(), 1u) << text;
    if (docs.size() != 1) return Node{};
    return std::move(docs[0].root);
}

Error parse_err(const std::string& text, const Limits& limits = {}) {
    auto r = parse_yaml(text, "test.yaml", limits);
    EXPECT_FALSE(r.ok()) << "parsed although it should not:\n" << text;
    if (r.ok()) return Error{};
    return std::move(r).error();
}

::testing::AssertionResult at(const Mark& m, std::uint32_t line, std::uint32_t col) {
    if (m.line == line && m.column == col) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "mark is " << m.line << ":" << m.column << ", expected " << line << ":" << col;
}

// ---------------------------------------------------------------------------------------------
// Positions

TEST(YamlPositions, NestedBlockAndFlow) {
    const std::string text = "apiVersion: v1\n"          // 1
                             "kind: ConfigMap\n"         // 2
                             "metadata:\n"               // 3
                             "  name: x\n"               // 4
                             "  labels:\n"               // 5
                             "    app: \"y\"\n"          // 6
                             "data:\n"                   // 7
                             "  - one\n"                 // 8
                             "  - key: val\n"            // 9
                             "    other: [1, {z: 2}]\n"; // 10
    Node root = parse_one(text);
    ASSERT_TRUE(root.is_map());
    EXPECT_TRUE(at(root.mark, 1, 1));
    EXPECT_TRUE(at(root.entry("apiVersion")->key_mark, 1, 1));
    EXPECT_TRUE(at(root.get("apiVersion")->mark, 1, 13));
    EXPECT_TRUE(at(root.entry("kind")->key_mark, 2, 1));
    EXPECT_TRUE(at(root.get("kind")->mark, 2, 7));
    const Node* md = root.get("metadata");
    ASSERT_NE(md, nullptr);
    EXPECT_TRUE(at(md->mark, 4, 3));
    EXPECT_TRUE(at(md->entry("name")->key_mark, 4, 3));
    EXPECT_TRUE(at(md->get("name")->mark, 4, 9));
    const Node* labels = md->get("labels");
    EXPECT_TRUE(at(labels->mark, 6, 5));
    EXPECT_TRUE(at(labels->get("app")->mark, 6, 10)); // the opening quote
    const Node* data = root.get("data");
    ASSERT_TRUE(data->is_seq());
    EXPECT_TRUE(at(data->mark, 8, 3));
    EXPECT_TRUE(at(data->items[0].mark, 8, 5));
    const Node& item = data->items[1];
    EXPECT_TRUE(at(item.mark, 9, 5));
    EXPECT_TRUE(at(item.entry("key")->key_mark, 9, 5));
    EXPECT_TRUE(at(item.get("key")->mark, 9, 10));
    const Node* other = item.get("other");
    EXPECT_TRUE(at(item.entry("other")->key_mark, 10, 5));
    EXPECT_TRUE(at(other->mark, 10, 12));
    EXPECT_TRUE(at(other->items[0].mark, 10, 13));
    EXPECT_TRUE(at(other->items[1].mark, 10, 16));
    EXPECT_TRUE(at(other->items[1].get("z")->mark, 10, 20));
}

TEST(YamlPositions, ColumnsCountBytes) {
    Node root = parse_one("é: x\nb: y\n");
    EXPECT_TRUE(at(root.get("é")->mark, 1, 5));
    EXPECT_TRUE(at(root.get("b")->mark, 2, 4));
}

TEST(YamlPositions, CrLfLineEndings) {
    Node root = parse_one("a: 1\r\nb:\r\n  c: \"x\"\r\n  d: |\r\n    l1\r\n    l2\r\n");
    EXPECT_TRUE(at(root.get("a")->mark, 1, 4));
    EXPECT_TRUE(at(root.get("b")->get("c")->mark, 3, 6));
    EXPECT_EQ(root.get("b")->get("c")->text, "x");
    EXPECT_EQ(root.get("b")->get("d")->text, "l1\nl2\n");
}

TEST(YamlPositions, ByteOrderMarkIsSkipped) {
    Node root = parse_one("\xEF\xBB\xBF"
                          "a: 1\n");
    EXPECT_TRUE(at(root.get("a")->mark, 1, 4));
    EXPECT_EQ(root.fields[0].key, "a");
}

TEST(YamlPositions, EmptyValueIsReportedAtItsKey) {
    Node root = parse_one("a:\nb: 2\n");
    ASSERT_TRUE(root.get("a")->is_null());
    EXPECT_EQ(root.get("a")->text, "");
    EXPECT_TRUE(at(root.get("a")->mark, 1, 1));
}

TEST(YamlPositions, PosOfCarriesFileAndDocument) {
    auto docs = parse_ok("a: 1\n---\nb:\n  c: 2\n");
    ASSERT_EQ(docs.size(), 2u);
    const Node* c = docs[1].root.get("b")->get("c");
    SourcePos p = pos_of("test.yaml", c->mark, docs[1].index);
    EXPECT_EQ(p.str(), "test.yaml:4:6");
    EXPECT_EQ(p.document, 1);
}

// ---------------------------------------------------------------------------------------------
// Documents

TEST(YamlDocuments, EmptyDocumentsAreSkippedButKeepTheirIndex) {
    const std::string text = "# only a comment\n" // 1
                             "---\n"              // 2  document 0: empty
                             "---\n"              // 3  document 1
                             "a: 1\n"             // 4
                             "--- # empty\n"      // 5  document 2: empty
                             "...\n"              // 6
                             "---\n"              // 7  document 3
                             "b: 2\n"             // 8
                             "---\n"              // 9  document 4: an explicit null
                             "null\n"             // 10
                             "---\n";             // 11 document 5: empty
    auto docs = parse_ok(text);
    ASSERT_EQ(docs.size(), 3u);
    EXPECT_EQ(docs[0].index, 1);
    EXPECT_TRUE(at(docs[0].start, 4, 1));
    EXPECT_EQ(docs[0].root.get("a")->text, "1");
    EXPECT_EQ(docs[1].index, 3);
    EXPECT_TRUE(at(docs[1].start, 8, 1));
    EXPECT_EQ(docs[2].index, 4);
    EXPECT_TRUE(docs[2].root.is_null());
    EXPECT_EQ(docs[2].root.text, "null");
    EXPECT_TRUE(at(docs[2].start, 10, 1));
}

TEST(YamlDocuments, NothingButCommentsOrBlanks) {
    for (const char* text : {"", "\n\n", "# a\n# b\n", "   \n", "---\n", "--- \n...\n"}) {
        auto docs = parse_ok(text);
        EXPECT_TRUE(docs.empty()) << text;
    }
}

TEST(YamlDocuments, StartIsTheFirstNode) {
    auto docs = parse_ok("--- # c\n\n  [1, 2]\n---\n- x\n--- |\n  text\n");
    ASSERT_EQ(docs.size(), 3u);
    EXPECT_TRUE(at(docs[0].start, 3, 3));
    EXPECT_TRUE(at(docs[1].start, 5, 1));
    EXPECT_TRUE(at(docs[2].start, 6, 5));
    EXPECT_EQ(docs[2].root.text, "text\n");
}

TEST(YamlDocuments, DocumentEndMarkerAllowsABareDocument) {
    auto docs = parse_ok("a: 1\n...\nb: 2\n");
    ASSERT_EQ(docs.size(), 2u);
    EXPECT_EQ(docs[1].index, 1);
}

TEST(YamlDocuments, DirectivesBeforeADocument) {
    auto docs = parse_ok("%YAML 1.2\n---\na: 1\n");
    ASSERT_EQ(docs.size(), 1u);
    EXPECT_TRUE(at(docs[0].start, 3, 1));
}

// ---------------------------------------------------------------------------------------------
// Scalars

struct ScalarCase {
    const char* yaml; // the value after "v: "
    Kind kind;
    const char* text;
};

class YamlScalar : public ::testing::TestWithParam<ScalarCase> {};

TEST_P(YamlScalar, Resolves) {
    const ScalarCase& c = GetParam();
    Node root = parse_one(std::string("v: ") + c.yaml + "\n");
    const Node* v = root.get("v");
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->kind, c.kind) << c.yaml << " is " << kind_name(v->kind);
    EXPECT_EQ(v->text, c.text) << c.yaml;
}

INSTANTIATE_TEST_SUITE_P(
    CoreSchema, YamlScalar,
    ::testing::Values(
        // null
        ScalarCase{"~", Kind::null, "~"}, ScalarCase{"null", Kind::null, "null"},
        ScalarCase{"Null", Kind::null, "Null"}, ScalarCase{"NULL", Kind::null, "NULL"},
        ScalarCase{"", Kind::null, ""}, ScalarCase{"nULL", Kind::string, "nULL"},
        // booleans: YAML 1.2 only
        ScalarCase{"true", Kind::boolean, "true"}, ScalarCase{"True", Kind::boolean, "True"},
        ScalarCase{"TRUE", Kind::boolean, "TRUE"}, ScalarCase{"false", Kind::boolean, "false"},
        ScalarCase{"False", Kind::boolean, "False"}, ScalarCase{"FALSE", Kind::boolean, "FALSE"},
        ScalarCase{"tRue", Kind::string, "tRue"}, ScalarCase{"yes", Kind::string, "yes"},
        ScalarCase{"no", Kind::string, "no"}, ScalarCase{"on", Kind::string, "on"},
        ScalarCase{"off", Kind::string, "off"}, ScalarCase{"y", Kind::string, "y"},
        // integers
        ScalarCase{"0", Kind::integer, "0"}, ScalarCase{"-1", Kind::integer, "-1"},
        ScalarCase{"+5", Kind::integer, "+5"}, ScalarCase{"007", Kind::integer, "007"},
        ScalarCase{"0x1F", Kind::integer, "0x1F"}, ScalarCase{"0x1f", Kind::integer, "0x1f"},
        ScalarCase{"0o17", Kind::integer, "0o17"},
        ScalarCase{"0xFFFFFFFFFFFFFFFF", Kind::integer, "0xFFFFFFFFFFFFFFFF"},
        ScalarCase{"123456789012345678901234567890", Kind::integer,
                   "123456789012345678901234567890"},
        ScalarCase{"0x10000000000000000", Kind::string, "0x10000000000000000"},
        ScalarCase{"0x", Kind::string, "0x"}, ScalarCase{"0o8", Kind::string, "0o8"},
        ScalarCase{"0x1G", Kind::string, "0x1G"}, ScalarCase{"-0x1F", Kind::string, "-0x1F"},
        ScalarCase{"0b101", Kind::string, "0b101"}, ScalarCase{"1_000", Kind::string, "1_000"},
        ScalarCase{"1,000", Kind::string, "1,000"},
        // floats
        ScalarCase{"1.5", Kind::floating, "1.5"}, ScalarCase{"-1.5", Kind::floating, "-1.5"},
        ScalarCase{".5", Kind::floating, ".5"}, ScalarCase{"1.", Kind::floating, "1."},
        ScalarCase{"1e3", Kind::floating, "1e3"}, ScalarCase{"1E-3", Kind::floating, "1E-3"},
        ScalarCase{"+1.5e+10", Kind::floating, "+1.5e+10"},
        ScalarCase{".inf", Kind::floating, ".inf"}, ScalarCase{"-.inf", Kind::floating, "-.inf"},
        ScalarCase{"+.INF", Kind::floating, "+.INF"}, ScalarCase{".Inf", Kind::floating, ".Inf"},
        ScalarCase{".nan", Kind::floating, ".nan"}, ScalarCase{".NaN", Kind::floating, ".NaN"},
        ScalarCase{".NAN", Kind::floating, ".NAN"}, ScalarCase{"-.nan", Kind::string, "-.nan"},
        ScalarCase{"inf", Kind::string, "inf"}, ScalarCase{"nan", Kind::string, "nan"},
        ScalarCase{".", Kind::string, "."}, ScalarCase{"1.2.3", Kind::string, "1.2.3"},
        ScalarCase{"1e", Kind::string, "1e"}, ScalarCase{"e3", Kind::string, "e3"},
        ScalarCase{".inF", Kind::string, ".inF"},
        // strings: quoted and block scalars never resolve
        ScalarCase{"\"1\"", Kind::string, "1"}, ScalarCase{"'true'", Kind::string, "true"},
        ScalarCase{"\"null\"", Kind::string, "null"}, ScalarCase{"''", Kind::string, ""},
        ScalarCase{"\"\"", Kind::string, ""}, ScalarCase{"'it''s'", Kind::string, "it's"},
        ScalarCase{"\"a\\tb\\u00e9\\x41\"", Kind::string,
                   "a\tb\xC3\xA9"
                   "A"},
        ScalarCase{"|\n  1\n", Kind::string, "1\n"},
        ScalarCase{">-\n  a\n  b\n", Kind::string, "a b"},
        ScalarCase{"hello world", Kind::string, "hello world"},
        ScalarCase{"a:b", Kind::string, "a:b"}, ScalarCase{"a#b", Kind::string, "a#b"},
        ScalarCase{"x # comment", Kind::string, "x"},
        // explicit tags
        ScalarCase{"!!str 1", Kind::string, "1"}, ScalarCase{"!!str", Kind::string, ""},
        ScalarCase{"!!int \"42\"", Kind::integer, "42"},
        ScalarCase{"!!float 1", Kind::floating, "1"},
        ScalarCase{"!!float \"2.5\"", Kind::floating, "2.5"},
        ScalarCase{"!!bool \"true\"", Kind::boolean, "true"},
        ScalarCase{"!!null \"\"", Kind::null, ""}, ScalarCase{"!custom 1", Kind::string, "1"},
        ScalarCase{"! 1", Kind::string, "1"}, ScalarCase{"!!binary aGk=", Kind::string, "aGk="},
        ScalarCase{"!!timestamp 2001-12-14", Kind::string, "2001-12-14"}));

TEST(YamlScalarFlags, PlainOnlyForPlainScalars) {
    Node root = parse_one("a: x\nb: \"x\"\nc: |\n  x\nd: 1\ne: ~\n");
    EXPECT_TRUE(root.get("a")->plain);
    EXPECT_FALSE(root.get("b")->plain);
    EXPECT_FALSE(root.get("c")->plain);
    EXPECT_TRUE(root.get("d")->plain);
    EXPECT_TRUE(root.get("e")->plain);
}

TEST(YamlScalarFlags, KeysAreTheirText) {
    Node root = parse_one("1: a\ntrue: b\nnull: c\n~: d\n\"q\": e\n? f\n: g\n");
    ASSERT_EQ(root.fields.size(), 6u);
    EXPECT_EQ(root.fields[0].key, "1");
    EXPECT_EQ(root.fields[1].key, "true");
    EXPECT_EQ(root.fields[2].key, "null");
    EXPECT_EQ(root.fields[3].key, "~");
    EXPECT_EQ(root.fields[4].key, "q");
    EXPECT_EQ(root.fields[5].key, "f");
    EXPECT_TRUE(at(root.fields[5].key_mark, 6, 3));
}

TEST(YamlScalarFlags, BadlyTaggedValuesAreErrors) {
    struct Case {
        const char* text;
        const char* message;
    };
    for (const Case& c : {Case{"a: !!int x\n", "\"x\" is not an integer (tag !!int)"},
                          Case{"a: !!float 1.2.3\n", "\"1.2.3\" is not a number (tag !!float)"},
                          Case{"a: !!bool yes\n", "\"yes\" is not a boolean (tag !!bool)"},
                          Case{"a: !!null x\n", "\"x\" is not null (tag !!null)"}}) {
        Error e = parse_err(c.text);
        EXPECT_EQ(e.message, c.message);
        EXPECT_EQ(e.pos.str(), "test.yaml:1:4");
        EXPECT_EQ(e.code, ExitCode::invalid);
    }
}

// ---------------------------------------------------------------------------------------------
// Anchors and aliases

TEST(YamlAliases, AreDeepCopies) {
    Node root = parse_one("base: &b\n"
                          "  image: x\n"
                          "  ports: [80, 443]\n"
                          "copy: *b\n"
                          "list: &l [a, *b]\n"
                          "again: *l\n"
                          "s: &s text\n"
                          "t: *s\n"
                          "*s : key from alias\n");
    EXPECT_EQ(*root.get("copy"), *root.get("base"));
    EXPECT_TRUE(at(root.get("copy")->mark, 4, 7));
    EXPECT_TRUE(at(root.get("copy")->get("image")->mark, 2, 10)); // inner marks are the anchor's
    EXPECT_EQ(*root.get("again"), *root.get("list"));
    EXPECT_EQ(root.get("again")->items[1], *root.get("base"));
    EXPECT_EQ(root.get("t")->text, "text");
    EXPECT_EQ(root.get("text")->text, "key from alias");
}

TEST(YamlAliases, RedefinedAnchorUsesTheLatest) {
    Node root = parse_one("a: &x 1\nb: *x\nc: &x 2\nd: *x\n");
    EXPECT_EQ(root.get("b")->text, "1");
    EXPECT_EQ(root.get("d")->text, "2");
}

TEST(YamlAliases, AnchorsArePerDocument) {
    Error e = parse_err("a: &x 1\n---\nb: *x\n");
    EXPECT_EQ(e.pos.str(), "test.yaml:3:4");
    EXPECT_EQ(e.message, "alias *x has no anchor");
}

TEST(YamlAliases, RecursiveAliasIsAnError) {
    Error e = parse_err("a: &x\n  b: *x\n");
    EXPECT_EQ(e.pos.str(), "test.yaml:2:6");
    EXPECT_NE(e.message.find("recursive"), std::string::npos) << e.message;
}

TEST(YamlAliases, BillionLaughsIsStopped) {
    const std::string text = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                             "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                             "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                             "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                             "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                             "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                             "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                             "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
                             "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";
    // By default the expansion is stopped early: past 50,000 nodes, aliases may not expand to
    // more than 100 times the file's own nodes. a: 10 nodes, b: 91, c: 820, d: 7381; the
    // aliases of b..d copy 8289 nodes, and the sixth *d of e (each 7381) makes 52575, against
    // the 53 nodes written so far (the top mapping, 4 lines of 11, then e's key, list and six
    // aliases).
    Error e = parse_err(text);
    EXPECT_EQ(e.pos.str(), "test.yaml:5:28");
    EXPECT_NE(e.message.find("aliases expand to 52575 nodes, more than 100 times the file's own "
                             "53 (is this an alias bomb?)"),
              std::string::npos)
        << e.message;

    // The total limit alone: e: 66430 nodes, f: 597871; the aliases of b..f copy 672588 nodes,
    // so the first *f crosses the limit of 1000000.
    Limits total;
    total.max_alias_amplification = 0;
    e = parse_err(text, total);
    EXPECT_EQ(e.pos.str(), "test.yaml:7:8");
    EXPECT_NE(e.message.find("aliases expand to more than 1000000 nodes"), std::string::npos)
        << e.message;

    Limits small;
    small.max_alias_nodes = 100;
    e = parse_err(text, small);
    EXPECT_EQ(e.pos.str(), "test.yaml:3:8"); // 90 from b, then the first *b of c costs 91
}

TEST(YamlAliases, ReusingAnAnchorManyTimesIsNoBomb) {
    // An anchor of 601 nodes (a list of 600 strings) used 100 times: 60,100 nodes from aliases,
    // past the 50,000 from which the amplification limit applies, but only about 85 times the
    // 705 nodes the file writes.
    std::string text = "base: &base [";
    for (int i = 0; i < 600; ++i)
        text += (i ? ", v" : "v") + std::to_string(i);
    text += "]\nuses:\n";
    for (int i = 0; i < 100; ++i)
        text += "  - *base\n";
    auto r = parse_yaml(text, "test.yaml");
    ASSERT_TRUE(r.ok()) << r.error().str();
    const Node* uses = r->at(0).root.get("uses");
    ASSERT_NE(uses, nullptr);
    ASSERT_EQ(uses->items.size(), 100u);
    EXPECT_EQ(uses->items[99].items.size(), 600u);
}

TEST(YamlAliases, HugeAliasedStringsCountToo) {
    std::string text = "a: &a " + std::string(64 * 1000, 'x') + "\nb: [";
    for (int i = 0; i < 2000; ++i)
        text += "*a, ";
    text += "*a]\n";
    Limits small;
    small.max_alias_nodes = 100000; // each alias costs 1001
    Error e = parse_err(text, small);
    EXPECT_NE(e.message.find("aliases expand"), std::string::npos) << e.message;
}

// ---------------------------------------------------------------------------------------------
// Bad input: every error names file:line:col (1-based)

struct BadCase {
    const char* name;
    const char* text;
    const char* pos;     // "line:col"
    const char* message; // a part of the message
};

class YamlBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(YamlBad, Fails) {
    const BadCase& c = GetParam();
    Error e = parse_err(c.text);
    EXPECT_EQ(e.code, ExitCode::invalid);
    EXPECT_EQ(e.pos.str(), std::string("test.yaml:") + c.pos) << e.str();
    EXPECT_NE(e.message.find(c.message), std::string::npos) << e.str();
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, YamlBad,
    ::testing::Values(
        BadCase{"TabIndentation", "a:\n\tb: 1\n", "2:1", "tab character in indentation"},
        BadCase{"TabIndentationScalar", "a:\n\tb\n", "2:1", "tab character in indentation"},
        BadCase{"TabIndentationNested", "a:\n  b: 1\n\tc: 2\n", "3:1",
                "tab character in indentation"},
        BadCase{"TabAfterSpaces", "a:\n  b:\n  \tc: 1\n", "3:3", "tab character in indentation"},
        BadCase{"BadIndentation", "a:\n  b: 1\n c: 2\n", "3:2", "did not find the expected key"},
        BadCase{"BadSequenceIndentation", "a:\n  - b\n - c\n", "3:2", "expected"},
        BadCase{"ValueContainsColon", "a: b: c\n", "1:5", "unexpected ':'"},
        BadCase{"DuplicateKey", "a: 1\nb: 2\na: 3\n", "3:1", "duplicate key \"a\""},
        BadCase{"DuplicateKeyNested", "x:\n  k: 1\n  k: 2\n", "3:3", "duplicate key \"k\""},
        BadCase{"DuplicateKeyFlow", "{x: 1, x: 2}\n", "1:8", "duplicate key \"x\""},
        BadCase{"DuplicateQuotedKey", "\"a\": 1\n'a': 2\n", "2:1", "duplicate key \"a\""},
        BadCase{"UnterminatedDoubleQuote", "a: \"abc\nb: 1\n", "1:4", "unterminated quoted string"},
        BadCase{"UnterminatedDoubleQuoteAtEnd", "a: \"abc", "1:4", "unterminated quoted string"},
        BadCase{"UnterminatedSingleQuote", "a: 'it''s\n", "1:4", "unterminated quoted string"},
        BadCase{"UnterminatedQuoteLaterLine", "a: 1\nb:\n  - \"x\n", "3:5",
                "unterminated quoted string"},
        BadCase{"UnclosedFlowSequence", "a: [1, 2\n", "2:1", "unclosed '['"},
        BadCase{"UnclosedFlowMapping", "a: {b: 1\n", "2:1", "unclosed '{'"},
        BadCase{"TruncatedFlowInList", "a:\n  - b\n  - {c: ", "3:9", "unclosed '{'"},
        BadCase{"ExtraClosingBracket", "x: [a, b]]\n", "1:10", "unexpected closing bracket"},
        BadCase{"BadEscape", "a: \"\\q\"\n", "1:5", "invalid escape sequence \"\\q\""},
        BadCase{"ReservedIndicator", "a: @x\n", "1:4", "'@' is reserved"},
        BadCase{"Backquote", "a: `x`\n", "1:4", "'`' is reserved"},
        BadCase{"UndefinedAlias", "a: *nope\n", "1:4", "alias *nope has no anchor"},
        BadCase{"ComplexKeyFlow", "? [x]\n: y\n", "1:3", "a mapping key must be a scalar"},
        BadCase{"ComplexKeyMap", "? {a: 1}\n: y\n", "1:3", "a mapping key must be a scalar"},
        BadCase{"AliasOfListAsKey", "a: &l [1]\n*l : x\n", "2:1",
                "a mapping key must be a scalar, not a list"},
        BadCase{"MissingDocumentSeparator", "- a\nb: 1\n", "2:1", "must start with \"---\""},
        BadCase{"ControlCharacter", "a: \x01\n", "1:4", "control character U+0001"},
        BadCase{"EotByteWouldEndTheInput",
                "a: 1\n\x04"
                "b: 2\n",
                "2:1", "control character U+0004"},
        BadCase{"Delete", "a: x\x7F\n", "1:5", "control character U+007F"},
        BadCase{"C1Control", "a: x\xC2\x80\n", "1:5", "character U+0080 is not allowed"},
        BadCase{"InvalidUtf8", "a: ok\nb: \xFF\n", "2:4", "invalid UTF-8 byte 0xFF"},
        BadCase{"Overlong", "a: \xC0\xAF\n", "1:4", "invalid UTF-8 byte 0xC0"},
        BadCase{"EncodedSurrogate", "a: \xED\xA0\x80\n", "1:4", "invalid UTF-8 byte 0xED"},
        BadCase{"TruncatedUtf8", "a: \xE2\x82", "1:4", "invalid UTF-8 byte 0xE2"},
        BadCase{"Utf16Bom",
                "\xFF\xFE"
                "a\0:\0",
                "1:1", "invalid UTF-8 byte 0xFF"},
        BadCase{"BinaryGarbage", "\x01\x02\x03garbage", "1:1", "control character U+0001"},
        BadCase{"BlockScalarBadIndent", "a: |\n  x\n y\n", "3:2", "did not find the expected key"}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(YamlBadInput, BinaryGarbageWithNul) {
    const std::string text("a: 1\n\0\0\xFF", 8);
    Error e = parse_err(text);
    EXPECT_EQ(e.pos.str(), "test.yaml:2:1");
}

TEST(YamlBadInput, UnclosedFlowNamesItsStart) {
    Error e = parse_err("a:\n  - b\n  - {c: ");
    ASSERT_EQ(e.notes.size(), 1u);
    EXPECT_EQ(e.notes[0], "the '{' at line 3, column 5 is not closed");
    e = parse_err("x: [1, [2, 3], [4,\n");
    EXPECT_EQ(e.pos.str(), "test.yaml:2:1");
    ASSERT_EQ(e.notes.size(), 1u);
    EXPECT_EQ(e.notes[0], "the '[' at line 1, column 16 is not closed");
}

TEST(YamlBadInput, DuplicateKeyNamesTheFirstOne) {
    Error e = parse_err("a: 1\nb: 2\na: 3\n");
    EXPECT_EQ(e.message, "duplicate key \"a\"");
    ASSERT_EQ(e.notes.size(), 1u);
    EXPECT_EQ(e.notes[0], "first defined at line 1, column 1");
    EXPECT_EQ(e.pos.document, 0);
}

TEST(YamlBadInput, DuplicateKeyInABigMapping) {
    std::string text;
    for (int i = 0; i < 100; ++i)
        text.append("k")
            .append(std::to_string(i))
            .append(": ")
            .append(std::to_string(i))
            .append("\n");
    text += "k57: again\n";
    Error e = parse_err(text);
    EXPECT_EQ(e.message, "duplicate key \"k57\"");
    EXPECT_EQ(e.pos.str(), "test.yaml:101:1");
}

TEST(YamlBadInput, ErrorInALaterDocumentNamesIt) {
    Error e = parse_err("a: 1\n---\nb: 1\n---\nc: [\n");
    EXPECT_EQ(e.pos.document, 2);
    EXPECT_EQ(e.pos.line, 6u);
}

TEST(YamlBadInput, DeepFlowNestingIsAnErrorNotACrash) {
    const std::string text = std::string(100000, '[') + std::string(100000, ']');
    Error e = parse_err(text);
    EXPECT_NE(e.message.find("nesting deeper than"), std::string::npos) << e.str();
    EXPECT_EQ(e.pos.line, 1u);
}

TEST(YamlBadInput, DeepBlockNestingIsAnErrorNotACrash) {
    std::string text;
    for (int i = 0; i < 100000; ++i)
        text += "- ";
    text += "x\n";
    Error e = parse_err(text);
    EXPECT_NE(e.message.find("nesting deeper than"), std::string::npos) << e.str();
}

TEST(YamlBadInput, DeepMappingNestingIsAnErrorNotACrash) {
    std::string text;
    for (int i = 0; i < 100000; ++i)
        text += "{a: ";
    Error e = parse_err(text);
    EXPECT_EQ(e.code, ExitCode::invalid);
    EXPECT_EQ(e.pos.line, 1u);
}

TEST(YamlLimits, MaxDepthIsExact) {
    Limits l;
    l.max_depth = 3;
    parse_ok("a:\n  b:\n    - x\n", l);
    Error e = parse_err("a:\n  b:\n    - [x]\n", l);
    EXPECT_EQ(e.message, "nesting deeper than 3 levels");
    EXPECT_EQ(e.pos.str(), "test.yaml:3:7");
}

TEST(YamlLimits, DepthBelowTheParsersOwnLimitWorks) {
    const std::string text = std::string(400, '[') + std::string(400, ']');
    auto docs = parse_ok(text);
    ASSERT_EQ(docs.size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Valid YAML that libfyaml 0.7.12 gets wrong on its own, and what it must not do

TEST(YamlParserQuirks, EmptyItemsOfAnUnindentedList) {
    Node root = parse_one("a:\n-\n- x\n- # empty\nb: 1\n");
    const Node* a = root.get("a");
    ASSERT_TRUE(a->is_seq());
    ASSERT_EQ(a->items.size(), 3u);
    EXPECT_TRUE(a->items[0].is_null());
    EXPECT_EQ(a->items[0].text, "");
    EXPECT_TRUE(at(a->items[0].mark, 2, 1));
    EXPECT_EQ(a->items[1].text, "x");
    EXPECT_TRUE(at(a->items[1].mark, 3, 3));
    EXPECT_TRUE(a->items[2].is_null());
    EXPECT_TRUE(at(a->items[2].mark, 4, 1));
    EXPECT_TRUE(at(root.get("b")->mark, 5, 4));
    // Positions after the items stay those of the original text.
    Error e = parse_err("a:\n-\n- x\nb: [\n");
    EXPECT_EQ(e.pos.str(), "test.yaml:5:1");
}

TEST(YamlParserQuirks, BlockScalarEndsAtALineNotIndentedMoreThanItsKey) {
    Node root = parse_one("a:\n  b: |\n  c: 1\n");
    EXPECT_EQ(root.get("a")->get("b")->text, "");
    EXPECT_EQ(root.get("a")->get("c")->text, "1");
    EXPECT_TRUE(at(root.get("a")->get("c")->mark, 3, 6));
    root = parse_one("- a: >-\n  b: 1\n");
    EXPECT_EQ(root.items[0].get("a")->text, "");
    EXPECT_EQ(root.items[0].get("b")->kind, Kind::integer);
    Error e = parse_err("a:\n  b: |\n  text\n");
    EXPECT_EQ(e.pos.str(), "test.yaml:3:3");
    EXPECT_EQ(e.message, "did not find the expected ':' after a mapping key");
}

TEST(YamlParserQuirks, BlockScalarAfterPropertiesOnTheirOwnLine) {
    Node root = parse_one("a:\n  &x |\n    text\nb: *x\n");
    EXPECT_EQ(root.get("a")->text, "text\n");
    EXPECT_TRUE(at(root.get("a")->mark, 2, 3));
    EXPECT_EQ(root.get("b")->text, "text\n");
}

TEST(YamlParserQuirks, BlanksEndingInATab) {
    EXPECT_TRUE(parse_ok("---\n \t").empty());
    EXPECT_EQ(parse_ok("a: 1\n\t").size(), 1u);
}

TEST(YamlParserQuirks, FlowCollectionClosedAtTheKeysColumn) {
    Node root = parse_one("a: [\n  b,\n  c\n]\nd: {\n  e: f\n}\n");
    EXPECT_EQ(root.get("a")->items.size(), 2u);
    EXPECT_EQ(root.get("d")->get("e")->text, "f");
}

TEST(YamlParserQuirks, NoBlockMappingOnTheLineOfItsKey) {
    Error e = parse_err("x: : y\n");
    EXPECT_EQ(e.pos.str(), "test.yaml:1:4");
    EXPECT_NE(e.message.find("unexpected ':'"), std::string::npos) << e.message;
}

TEST(YamlParserQuirks, NothingIsPrintedOnStandardError) {
    ::testing::internal::CaptureStderr();
    Error version = parse_err("%YAML 2.0\n---\na: 1\n");
    Error flow = parse_err("a: [1, 2\n");
    Error indent = parse_err("a: |0\n  x\n");
    const std::string printed = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(printed, "");
    EXPECT_EQ(version.str(), "test.yaml:1:1: unsupported YAML version 2.0");
    EXPECT_EQ(flow.pos.str(), "test.yaml:2:1");
    EXPECT_EQ(indent.str(), "test.yaml:1:5: a block scalar cannot have an indentation of zero");
}

TEST(YamlParserQuirks, ParsersInThreadsAreIndependent) {
    const std::string text = "a: &x [1, {b: \"c\"}]\nd: *x\ne: |\n  text\n";
    const Node expected = parse_one(text);
    std::vector<std::thread> threads;
    std::vector<int> same(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i) {
                auto r = parse_yaml(text, "t.yaml");
                if (r.ok() && r->size() == 1 && r->at(0).root == expected) ++same[t];
            }
        });
    for (auto& th : threads)
        th.join();
    for (int n : same)
        EXPECT_EQ(n, 200);
}

// ---------------------------------------------------------------------------------------------
// parse_auto, read_file, load_file

TEST(ParseAuto, ChoosesByFirstCharacter) {
    auto j = parse_auto("  \n{\"a\": 1}\n{\"b\": 2}", "x");
    ASSERT_TRUE(j.ok()) << j.error().str();
    EXPECT_EQ(j->size(), 2u);
    auto y = parse_auto("# c\na: 1\n", "x");
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(y->at(0).root.get("a")->kind, Kind::integer);
    auto bom = parse_auto("\xEF\xBB\xBF[1]", "x");
    ASSERT_TRUE(bom.ok());
    EXPECT_EQ(bom->at(0).root.items.size(), 1u);
}

TEST(ParseAuto, NoYamlFallbackForJsonLookingInput) {
    // A JSON typo must not turn into a YAML flow collection with different content.
    auto r = parse_auto("{\"a\": tru}\n", "x.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().str(), "x.json:1:7: invalid literal \"tru\" (strings must be in double "
                               "quotes)");
    r = parse_auto("[1, 2,]", "x.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().pos.str(), "x.json:1:6");
    // YAML flow style is read as JSON too, and reported as such.
    r = parse_auto("{a: 1}", "x.yaml");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().pos.str(), "x.yaml:1:2");
}

TEST(ParseAuto, ReportsJsonErrors) {
    auto r = parse_auto("{\"a\": [1, 2}", "cat.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().str(), "cat.json:1:12: expected ',' or ']' after array element, found '}'");
}

TEST(ReadFile, ReadsWholeFiles) {
    test::TempDir dir;
    std::string big(300000, 'x');
    big[12345] = '\n';
    auto p = dir.write("f.txt", big);
    auto r = read_file(p);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ(*r, big);
    auto e = read_file(dir.write("empty", ""));
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(*e, "");
}

TEST(ReadFile, MissingFile) {
    test::TempDir dir;
    auto r = read_file(dir / "nope.yaml");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::error);
    EXPECT_NE(r.error().message.find((dir / "nope.yaml").string()), std::string::npos);
    EXPECT_NE(r.error().message.find("no such file"), std::string::npos) << r.error().message;
}

TEST(ReadFile, Directory) {
    test::TempDir dir;
    auto r = read_file(dir.path());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::error);
    EXPECT_EQ(r.error().message, "cannot read \"" + dir.path().string() + "\": it is a directory");
}

TEST(ReadFile, OversizedFileIsRefused) {
    test::TempDir dir;
    auto p = dir.write("big.json", std::string(2000, ' '));
    Limits l;
    l.max_file_bytes = 1000;
    auto r = read_file(p, l);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message,
              std::string("\"")
                  .append(p.string())
                  .append("\" is too large: 2000 bytes (the limit is 1000 bytes)"));
    l.max_file_bytes = 2000;
    EXPECT_TRUE(read_file(p, l).ok());
}

TEST(ReadFile, PipesAreReadToTheEnd) {
    test::TempDir dir;
    const auto fifo = dir / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const std::string payload(200000, 'p');
    std::thread writer([&] {
        std::ofstream f(fifo, std::ios::binary);
        f << payload;
    });
    auto r = read_file(fifo);
    writer.join();
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ(*r, payload);

    // A stream over the limit is refused once the limit is passed (the writer then gets EPIPE).
    std::signal(SIGPIPE, SIG_IGN);
    std::thread writer2([&] {
        std::ofstream f(fifo, std::ios::binary);
        f << payload;
    });
    Limits l;
    l.max_file_bytes = 1000;
    auto big = read_file(fifo, l);
    writer2.join();
    ASSERT_FALSE(big.ok());
    EXPECT_EQ(big.error().message,
              std::string("\"")
                  .append(fifo.string())
                  .append("\" is too large: more than the limit of 1000 bytes"));
}

TEST(LoadFile, PositionsNameTheFile) {
    test::TempDir dir;
    auto y = dir.write("a.yaml", "a: 1\nb: [\n");
    auto r = load_file(y);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().pos.file, y.string());
    EXPECT_EQ(r.error().pos.line, 3u);
    auto j = dir.write("b.json", "{\n  \"a\": tru\n}\n");
    r = load_file(j);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().str(), j.string() + ":2:8: invalid literal \"tru\" (strings must be in "
                                            "double quotes)");
    auto ok = dir.write("c.yaml", "---\nschema: olm.package\n---\nschema: olm.channel\n");
    auto docs = load_file(ok);
    ASSERT_TRUE(docs.ok());
    EXPECT_EQ(docs->size(), 2u);
    EXPECT_FALSE(load_file(dir / "missing.yaml").ok());
}

// ---------------------------------------------------------------------------------------------
// A realistic document

TEST(YamlRealistic, CatalogStream) {
    const std::string text = "---\n"
                             "schema: olm.package\n"
                             "name: etcd\n"
                             "defaultChannel: stable\n"
                             "description: |\n"
                             "  An etcd operator.\n"
                             "  Second line.\n"
                             "---\n"
                             "schema: olm.bundle\n"
                             "name: etcd.v0.9.4\n"
                             "package: etcd\n"
                             "properties:\n"
                             "- type: olm.package\n"
                             "  value:\n"
                             "    packageName: etcd\n"
                             "    version: 0.9.4\n"
                             "- type: olm.gvk\n"
                             "  value: {group: etcd.database.coreos.com, kind: EtcdCluster, "
                             "version: v1beta2}\n";
    auto docs = parse_ok(text);
    ASSERT_EQ(docs.size(), 2u);
    EXPECT_EQ(docs[0].root.get("description")->text, "An etcd operator.\nSecond line.\n");
    const Node& props = *docs[1].root.get("properties");
    EXPECT_EQ(props.items[0].get("value")->get("version")->text, "0.9.4");
    EXPECT_EQ(props.items[0].get("value")->get("version")->kind, Kind::string);
    EXPECT_TRUE(at(props.items[1].get("value")->get("kind")->mark, 18, 50));
}

} // namespace
} // namespace kpkg::io
