// parse_json: positions, concatenated streams, strings, numbers, duplicate keys, limits and
// every class of malformed input with its exact position.
#include "kpkg/io/emit.hpp"
#include "kpkg/io/json_reader.hpp"
#include "kpkg/io/load.hpp"

#include <string>
#include <vector>

#include "support/support.hpp"

namespace kpkg::io {
namespace {

std::vector<Document> parse_ok(const std::string& text, const Limits& limits = {}) {
    auto r = parse_json(text, "c.json", limits);
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
    auto r = parse_json(text, "c.json", limits);
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
// Positions and structure

TEST(JsonPositions, PrettyPrintedCatalogBlob) {
    const std::string text = "{\n"                                      // 1
                             "    \"schema\": \"olm.bundle\",\n"        // 2
                             "    \"properties\": [\n"                  // 3
                             "        {\n"                              // 4
                             "            \"type\": \"olm.package\",\n" // 5
                             "            \"value\": {\"v\": 1.5e3}\n"  // 6
                             "        },\n"                             // 7
                             "        true, null, -12\n"                // 8
                             "    ],\n"                                 // 9
                             "    \"empty\": {}, \"list\": []\n"        // 10
                             "}\n";
    Node root = parse_one(text);
    ASSERT_TRUE(root.is_map());
    EXPECT_TRUE(at(root.mark, 1, 1));
    EXPECT_TRUE(at(root.entry("schema")->key_mark, 2, 5));
    EXPECT_TRUE(at(root.get("schema")->mark, 2, 15));
    const Node* props = root.get("properties");
    EXPECT_TRUE(at(root.entry("properties")->key_mark, 3, 5));
    EXPECT_TRUE(at(props->mark, 3, 19));
    ASSERT_EQ(props->items.size(), 4u);
    const Node& p0 = props->items[0];
    EXPECT_TRUE(at(p0.mark, 4, 9));
    EXPECT_TRUE(at(p0.entry("type")->key_mark, 5, 13));
    EXPECT_TRUE(at(p0.get("type")->mark, 5, 21));
    EXPECT_TRUE(at(p0.get("value")->mark, 6, 22));
    EXPECT_TRUE(at(p0.get("value")->entry("v")->key_mark, 6, 23));
    EXPECT_TRUE(at(p0.get("value")->get("v")->mark, 6, 28));
    EXPECT_EQ(p0.get("value")->get("v")->kind, Kind::floating);
    EXPECT_EQ(p0.get("value")->get("v")->text, "1.5e3");
    EXPECT_TRUE(at(props->items[1].mark, 8, 9));
    EXPECT_TRUE(at(props->items[2].mark, 8, 15));
    EXPECT_TRUE(at(props->items[3].mark, 8, 21));
    EXPECT_EQ(props->items[3].kind, Kind::integer);
    EXPECT_EQ(props->items[1].text, "true");
    EXPECT_EQ(props->items[2].text, "null");
    EXPECT_TRUE(at(root.get("empty")->mark, 10, 14));
    EXPECT_TRUE(root.get("empty")->is_map());
    EXPECT_TRUE(at(root.get("list")->mark, 10, 26));
    EXPECT_TRUE(root.get("list")->is_seq());
}

TEST(JsonPositions, CrLfAndTabs) {
    Node root = parse_one("{\r\n\t\"a\":\r\n\t\t[1,\r\n\t\t 2]\r\n}");
    EXPECT_TRUE(at(root.entry("a")->key_mark, 2, 2));
    EXPECT_TRUE(at(root.get("a")->mark, 3, 3));
    EXPECT_TRUE(at(root.get("a")->items[1].mark, 4, 4));
}

TEST(JsonPositions, ByteOrderMarkIsSkipped) {
    auto docs = parse_ok("\xEF\xBB\xBF{\"a\": 1}");
    ASSERT_EQ(docs.size(), 1u);
    EXPECT_TRUE(at(docs[0].root.get("a")->mark, 1, 7));
}

TEST(JsonPositions, ColumnsCountBytes) {
    Node root = parse_one("{\"é\": \"ü\", \"b\": 1}");
    EXPECT_TRUE(at(root.get("b")->mark, 1, 19));
}

TEST(JsonStream, ConcatenatedValues) {
    const std::string text = "{\"a\":1}{\"b\":2}\n"
                             "[1]\n"
                             "  \"s\" 3 true\n"
                             "null -1.5\n";
    auto docs = parse_ok(text);
    ASSERT_EQ(docs.size(), 8u);
    for (int i = 0; i < 8; ++i)
        EXPECT_EQ(docs[static_cast<std::size_t>(i)].index, i);
    EXPECT_TRUE(at(docs[0].start, 1, 1));
    EXPECT_TRUE(at(docs[1].start, 1, 8));
    EXPECT_TRUE(at(docs[2].start, 2, 1));
    EXPECT_TRUE(at(docs[3].start, 3, 3));
    EXPECT_EQ(docs[3].root.text, "s");
    EXPECT_TRUE(at(docs[4].start, 3, 7));
    EXPECT_EQ(docs[4].root.text, "3");
    EXPECT_EQ(docs[5].root.kind, Kind::boolean);
    EXPECT_EQ(docs[6].root.kind, Kind::null);
    EXPECT_TRUE(at(docs[6].start, 4, 1));
    EXPECT_EQ(docs[7].root.text, "-1.5");
    EXPECT_TRUE(at(docs[7].start, 4, 6));
}

TEST(JsonStream, StreamOfManyObjects) {
    std::string text;
    for (int i = 0; i < 2000; ++i)
        text += "{\n    \"schema\": \"olm.bundle\",\n    \"n\": " + std::to_string(i) + "\n}\n";
    auto docs = parse_ok(text);
    ASSERT_EQ(docs.size(), 2000u);
    EXPECT_EQ(docs[1999].root.get("n")->as_int(), 1999);
    EXPECT_TRUE(at(docs[1999].start, 1999 * 4 + 1, 1));
    EXPECT_TRUE(at(docs[1999].root.get("n")->mark, 1999 * 4 + 3, 10));
}

TEST(JsonStream, BlankInputHasNoDocuments) {
    for (const char* t : {"", " ", "\n\r\n\t ", "\xEF\xBB\xBF", "\xEF\xBB\xBF\n"})
        EXPECT_TRUE(parse_ok(t).empty()) << t;
}

TEST(JsonStream, ErrorInALaterValueNamesItsIndex) {
    Error e = parse_err("{}\n{}\n{\"a\" 1}");
    EXPECT_EQ(e.pos.document, 2);
    EXPECT_EQ(e.str(), "c.json:3:6: expected ':' after object key, found '1'");
}

// ---------------------------------------------------------------------------------------------
// Strings

struct StringCase {
    const char* json; // a JSON string literal
    std::string value;
};

class JsonString : public ::testing::TestWithParam<StringCase> {};

TEST_P(JsonString, Decodes) {
    Node n = parse_one(GetParam().json);
    EXPECT_EQ(n.kind, Kind::string);
    EXPECT_EQ(n.text, GetParam().value) << GetParam().json;
}

INSTANTIATE_TEST_SUITE_P(
    Escapes, JsonString,
    ::testing::Values(StringCase{R"("")", ""}, StringCase{R"("plain")", "plain"},
                      StringCase{R"("a\"b")", "a\"b"}, StringCase{R"("a\\b")", "a\\b"},
                      StringCase{R"("a\/b")", "a/b"}, StringCase{R"("\b\f\n\r\t")", "\b\f\n\r\t"},
                      StringCase{R"("\u0041\u00e9\u20AC")", "A\xC3\xA9\xE2\x82\xAC"},
                      StringCase{R"("\ud83d\ude00")", "\xF0\x9F\x98\x80"},
                      StringCase{R"("\uD83D\uDE00x")", "\xF0\x9F\x98\x80x"},
                      // lone surrogates become U+FFFD, as in Go
                      StringCase{R"("\ud800")", "\xEF\xBF\xBD"},
                      StringCase{R"("\udc00")", "\xEF\xBF\xBD"},
                      StringCase{R"("\ud800\u0041")", "\xEF\xBF\xBD"
                                                      "A"},
                      StringCase{R"("\ud800\ud800\udc00")", "\xEF\xBF\xBD\xF0\x90\x80\x80"},
                      StringCase{R"("\ud800x")", "\xEF\xBF\xBDx"},
                      StringCase{R"("\u0000")", std::string(1, '\0')},
                      StringCase{"\"raw \xC3\xA9 \xF0\x9F\x98\x80 utf-8\"",
                                 "raw \xC3\xA9 \xF0\x9F\x98\x80 utf-8"},
                      StringCase{"\"\x7F del is allowed\"", "\x7F del is allowed"},
                      StringCase{R"("a long string without escapes, longer than sixteen bytes")",
                                 "a long string without escapes, longer than sixteen bytes"},
                      StringCase{R"("a long string with an escape at the very end of it\n")",
                                 "a long string with an escape at the very end of it\n"},
                      StringCase{R"("\\\\\\\"")", "\\\\\\\""}));

// ---------------------------------------------------------------------------------------------
// Numbers and literals

struct NumberCase {
    const char* json;
    Kind kind;
};

class JsonNumber : public ::testing::TestWithParam<NumberCase> {};

TEST_P(JsonNumber, KeepsTheLiteral) {
    Node n = parse_one(GetParam().json);
    EXPECT_EQ(n.kind, GetParam().kind) << GetParam().json;
    EXPECT_EQ(n.text, GetParam().json);
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, JsonNumber,
    ::testing::Values(NumberCase{"0", Kind::integer}, NumberCase{"-0", Kind::integer},
                      NumberCase{"1", Kind::integer}, NumberCase{"-1", Kind::integer},
                      NumberCase{"1234567890", Kind::integer},
                      NumberCase{"12345678901234567890123", Kind::integer},
                      NumberCase{"9223372036854775807", Kind::integer},
                      NumberCase{"1.5", Kind::floating}, NumberCase{"-1.5e10", Kind::floating},
                      NumberCase{"1E5", Kind::floating}, NumberCase{"1e-5", Kind::floating},
                      NumberCase{"1e+5", Kind::floating}, NumberCase{"0.0", Kind::floating},
                      NumberCase{"-0.0e-0", Kind::floating}, NumberCase{"1e400", Kind::floating},
                      NumberCase{"0e0", Kind::floating},
                      NumberCase{"3.141592653589793238462643383279", Kind::floating}));

TEST(JsonNumber, Values) {
    EXPECT_EQ(parse_one("9223372036854775807").as_int(), INT64_MAX);
    EXPECT_EQ(parse_one("-9223372036854775808").as_int(), INT64_MIN);
    EXPECT_FALSE(parse_one("9223372036854775808").as_int().has_value());
    EXPECT_EQ(parse_one("1.5e3").as_double(), 1500.0);
    EXPECT_FALSE(parse_one("1.5").as_int().has_value());
    EXPECT_EQ(parse_one("7").as_double(), 7.0);
}

TEST(JsonLiterals, TrueFalseNull) {
    auto docs = parse_ok("[true, false, null]");
    const Node& a = docs[0].root;
    EXPECT_EQ(a.items[0].as_bool(), true);
    EXPECT_EQ(a.items[1].as_bool(), false);
    EXPECT_TRUE(a.items[2].is_null());
}

// ---------------------------------------------------------------------------------------------
// Duplicate keys: the last value wins at the first key's place

TEST(JsonDuplicates, LastValueWinsAtTheFirstPosition) {
    Node root = parse_one("{\"a\": 1, \"b\": 2, \"a\": 3, \"c\": 4, \"a\": {\"x\": 5}}");
    ASSERT_EQ(root.fields.size(), 3u);
    EXPECT_EQ(root.fields[0].key, "a");
    EXPECT_TRUE(at(root.fields[0].key_mark, 1, 2));
    EXPECT_TRUE(root.fields[0].value.is_map());
    EXPECT_EQ(root.fields[0].value.get("x")->text, "5");
    EXPECT_EQ(root.fields[1].key, "b");
    EXPECT_EQ(root.fields[2].key, "c");
}

TEST(JsonDuplicates, InBigObjects) {
    std::string text = "{";
    for (int i = 0; i < 100; ++i)
        text += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
    text += "\"k5\": \"five\", \"k99\": \"last\", \"k5\": \"again\"}";
    Node root = parse_one(text);
    ASSERT_EQ(root.fields.size(), 100u);
    EXPECT_EQ(root.fields[5].key, "k5");
    EXPECT_EQ(root.fields[5].value.text, "again");
    EXPECT_EQ(root.fields[99].value.text, "last");
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(root.fields[static_cast<std::size_t>(i)].key,
                  std::string("k").append(std::to_string(i)));
}

TEST(JsonDuplicates, NestedObjectsAreIndependent) {
    Node root = parse_one(R"({"a": {"x": 1}, "b": {"x": 2}, "x": 3})");
    EXPECT_EQ(root.get("a")->get("x")->text, "1");
    EXPECT_EQ(root.get("b")->get("x")->text, "2");
    EXPECT_EQ(root.get("x")->text, "3");
}

// ---------------------------------------------------------------------------------------------
// Malformed input: exact positions and messages

struct BadCase {
    const char* name;
    std::string text;
    const char* pos; // "line:col"
    const char* message;
};

class JsonBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(JsonBad, Fails) {
    const BadCase& c = GetParam();
    Error e = parse_err(c.text);
    EXPECT_EQ(e.code, ExitCode::invalid);
    EXPECT_EQ(e.pos.file, "c.json");
    EXPECT_EQ(e.pos.str(), std::string("c.json:") + c.pos) << e.str();
    EXPECT_EQ(e.message, c.message) << e.str();
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, JsonBad,
    ::testing::Values(
        // structure
        BadCase{"UnclosedArray", "[1, 2", "1:6",
                "unexpected end of input (expected ',' or ']' after array element)"},
        BadCase{"UnclosedObject", "{\"a\": 1", "1:8",
                "unexpected end of input (expected ',' or '}' after object member)"},
        BadCase{"UnclosedNested", "{\"a\": [\n  {\"b\": 1}\n", "3:1",
                "unexpected end of input (expected ',' or ']' after array element)"},
        BadCase{"MismatchedBracket", "{\"a\": [1, 2}", "1:12",
                "expected ',' or ']' after array element, found '}'"},
        BadCase{"TrailingCommaArray", "[1, 2,]", "1:6", "trailing comma before ']'"},
        BadCase{"TrailingCommaObject", "{\"a\": 1,\n}", "1:8", "trailing comma before '}'"},
        BadCase{"MissingComma", "[1 2]", "1:4",
                "expected ',' or ']' after array element, found '2'"},
        BadCase{"MissingCommaObject", "{\"a\": 1 \"b\": 2}", "1:9",
                "expected ',' or '}' after object member, found '\"'"},
        BadCase{"MissingColon", "{\"a\" 1}", "1:6", "expected ':' after object key, found '1'"},
        BadCase{"MissingValue", "{\"a\":}", "1:6", "expected a value, found '}'"},
        BadCase{"LeadingComma", "[,1]", "1:2", "expected a value, found ','"},
        BadCase{"UnquotedKey", "{a: 1}", "1:2",
                "object keys must be strings in double quotes, found 'a'"},
        BadCase{"NumberKey", "{1: 1}", "1:2",
                "object keys must be strings in double quotes, found '1'"},
        BadCase{"SingleQuotes", "['a']", "1:2",
                "expected a value, found \"'\" (strings must be in double quotes)"},
        BadCase{"ExtraClosing", "{}}", "1:3", "unexpected '}' after a complete value"},
        BadCase{"StrayColon", ":", "1:1", "expected a value, found ':'"},
        BadCase{"ObjectAfterKey", "{\"a\": 1, 2}", "1:10",
                "object keys must be strings in double quotes, found '2'"},
        BadCase{"Comment", "{\"a\": 1 // c\n}", "1:9",
                "expected ',' or '}' after object member, found '/'"},
        // bare words
        BadCase{"BareWord", "{\"a\": yes}", "1:7",
                "invalid literal \"yes\" (strings must be in double quotes)"},
        BadCase{"CapitalTrue", "[True]", "1:2", "invalid literal \"True\" (did you mean true?)"},
        BadCase{"Nul", "[nul]", "1:2",
                "invalid literal \"nul\" (strings must be in double quotes)"},
        BadCase{"TrueX", "truex", "1:1",
                "invalid literal \"truex\" (strings must be in double quotes)"},
        BadCase{"NaN", "[NaN]", "1:2",
                "invalid literal \"NaN\" (strings must be in double quotes)"},
        BadCase{"Infinity", "[-Infinity]", "1:3", "expected a digit after '-', found 'I'"},
        // numbers
        BadCase{"LeadingZero", "[01]", "1:3", "invalid number: leading zeros are not allowed"},
        BadCase{"NegativeLeadingZero", "-012", "1:3",
                "invalid number: leading zeros are not allowed"},
        BadCase{"LoneMinus", "[-]", "1:3", "expected a digit after '-', found ']'"},
        BadCase{"MinusAtEnd", "-", "1:2", "unexpected end of input (expected a digit after '-')"},
        BadCase{"TrailingDot", "[1.]", "1:4", "expected a digit after '.' in a number, found ']'"},
        BadCase{"LeadingDot", "[.5]", "1:2", "expected a value, found '.'"},
        BadCase{"PlusSign", "[+1]", "1:2", "expected a value, found '+'"},
        BadCase{"EmptyExponent", "[1e]", "1:4", "expected a digit in the exponent, found ']'"},
        BadCase{"SignOnlyExponent", "[1e+]", "1:5", "expected a digit in the exponent, found ']'"},
        BadCase{"TwoDots", "[1.5.3]", "1:5", "invalid number: unexpected '.'"},
        BadCase{"Hex", "[0x1F]", "1:3", "invalid number: unexpected 'x'"},
        BadCase{"Underscore", "[1_000]", "1:3", "invalid number: unexpected '_'"},
        BadCase{"NumberThenWord", "12abc", "1:3", "invalid number: unexpected 'a'"},
        // strings
        BadCase{"UnterminatedString", "{\"a\": \"abc", "1:7", "unterminated string"},
        BadCase{"UnterminatedKey", "{\"abc", "1:2", "unterminated string"},
        BadCase{"UnterminatedAtLineEnd", "[\"abc\n\"]", "1:2",
                "unterminated string (a string cannot span lines; write a line break as \\n)"},
        BadCase{"BackslashAtEnd", "\"abc\\", "1:1", "unterminated string"},
        BadCase{"BadEscape", "[\"a\\x41\"]", "1:4",
                "invalid escape sequence: backslash followed by 'x'"},
        BadCase{"BadEscapeSingleQuote", "\"\\'\"", "1:2",
                "invalid escape sequence: backslash followed by \"'\""},
        BadCase{"ShortUnicodeEscape", "\"\\u12\"", "1:2",
                "invalid \\u escape: expected four hex digits"},
        BadCase{"BadUnicodeEscape", "\"ab\\u12G4\"", "1:4",
                "invalid \\u escape: expected four hex digits"},
        BadCase{"RawTab", "\"a\tb\"", "1:3",
                "control character U+0009 must be escaped in a string"},
        BadCase{"RawNul", std::string("\"a\0b\"", 5), "1:3",
                "control character U+0000 must be escaped in a string"},
        // UTF-8
        BadCase{"InvalidUtf8InString", "{\"a\": \"x\xFFy\"}", "1:9", "invalid UTF-8 byte 0xFF"},
        BadCase{"InvalidUtf8InKey", "{\"\xC3\": 1}", "1:3", "invalid UTF-8 byte 0xC3"},
        BadCase{"OverlongUtf8", "\"\xC0\xAF\"", "1:2", "invalid UTF-8 byte 0xC0"},
        BadCase{"EncodedSurrogate", "\"\xED\xA0\x80\"", "1:2", "invalid UTF-8 byte 0xED"},
        BadCase{"BeyondUnicode", "\"\xF4\x90\x80\x80\"", "1:2", "invalid UTF-8 byte 0xF4"},
        BadCase{"TruncatedUtf8AtEnd", "\"\xE2\x82", "1:2", "invalid UTF-8 byte 0xE2"},
        BadCase{"InvalidUtf8OutsideString", "[1, \xFF]", "1:5", "invalid UTF-8 byte 0xFF"},
        BadCase{"InvalidUtf8AfterBackslash", "\"\\\xFF\"", "1:3", "invalid UTF-8 byte 0xFF"},
        BadCase{"NonAsciiOutsideString", "[\xC3\xA9]", "1:2",
                "expected a value, found '\xC3\xA9' (U+00E9)"},
        // truncated input and garbage
        BadCase{"TruncatedLiteral", "{\"a\": [1, {\"b\": tr", "1:17",
                "invalid literal \"tr\" (strings must be in double quotes)"},
        BadCase{"TruncatedAfterColon", "{\"a\":", "1:6",
                "unexpected end of input (expected a value)"},
        BadCase{"TruncatedAfterComma", "[1,", "1:4", "unexpected end of input (expected a value)"},
        BadCase{"TruncatedAfterMember", "{\"a\": 1,", "1:9",
                "unexpected end of input (expected a string key)"},
        BadCase{"TruncatedAfterBrace", "{", "1:2",
                "unexpected end of input (expected a string key or '}')"},
        BadCase{"BinaryGarbage", std::string("\0\x01\x02\xFE\xFF", 5), "1:1",
                "expected a value, found control character U+0000"},
        BadCase{"GarbageInArray", "[\x01]", "1:2",
                "expected a value, found control character U+0001"},
        BadCase{"PositionOnLaterLine", "{\n  \"a\": 1,\n  \"b\": [1, 2,],\n}", "3:13",
                "trailing comma before ']'"}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(JsonBadInput, EndOfInputNamesTheOpenContainer) {
    Error e = parse_err("{\"a\": [\n  {\"b\": 1}\n");
    ASSERT_EQ(e.notes.size(), 1u);
    EXPECT_EQ(e.notes[0], "the array opened at 1:7 is not closed");
    e = parse_err("[{\"a\": 1");
    ASSERT_EQ(e.notes.size(), 1u);
    EXPECT_EQ(e.notes[0], "the object opened at 1:2 is not closed");
}

TEST(JsonBadInput, DeepArrayNestingIsAnErrorNotACrash) {
    Error e = parse_err(std::string(100000, '[') + std::string(100000, ']'));
    EXPECT_EQ(e.message, "nesting deeper than 512 levels");
    EXPECT_EQ(e.pos.str(), "c.json:1:513");
}

TEST(JsonBadInput, DeepObjectNestingIsAnErrorNotACrash) {
    std::string text;
    for (int i = 0; i < 100000; ++i)
        text += "{\"a\":";
    Error e = parse_err(text);
    EXPECT_EQ(e.message, "nesting deeper than 512 levels");
    EXPECT_EQ(e.pos.str(), "c.json:1:" + std::to_string(512 * 5 + 1));
}

TEST(JsonLimits, MaxDepthIsExact) {
    const std::string ok = std::string(512, '[') + std::string(512, ']');
    auto docs = parse_ok(ok);
    ASSERT_EQ(docs.size(), 1u);
    Limits l;
    l.max_depth = 2;
    parse_ok("[[1], {\"a\": 2}]", l);
    Error e = parse_err("[[1], {\"a\": [2]}]", l);
    EXPECT_EQ(e.pos.str(), "c.json:1:13");
    EXPECT_EQ(e.message, "nesting deeper than 2 levels");
}

TEST(JsonLimits, LongStringsAndManyElements) {
    std::string big(1 << 20, 'x');
    big[1000] = '\\';
    big[1001] = 'n';
    Node n = parse_one("\"" + big + "\"");
    EXPECT_EQ(n.text.size(), big.size() - 1);
    EXPECT_EQ(n.text[1000], '\n');
    std::string arr = "[";
    for (int i = 0; i < 100000; ++i)
        arr += "1,";
    arr += "2]";
    Node a = parse_one(arr);
    EXPECT_EQ(a.items.size(), 100001u);
    EXPECT_EQ(a.items.capacity(), a.items.size()); // exactly sized
}

// The JSON reader and the YAML reader agree on JSON input (YAML being a superset).
TEST(JsonVsYaml, SameTreesAndPositions) {
    const std::string text = "{\"a\": [1, 2.5, \"x\", true, null, {\"b\": {}}, []],\n"
                             " \"c\": \"\\u00e9\\n\", \"d\": -0, \"e\": 1e5}";
    auto j = parse_json(text, "x");
    auto y = parse_yaml(text, "x");
    ASSERT_TRUE(j.ok()) << j.error().str();
    ASSERT_TRUE(y.ok()) << y.error().str();
    EXPECT_EQ(j->at(0).root, y->at(0).root);
    EXPECT_TRUE(at(j->at(0).root.get("c")->mark, 2, 7));
    EXPECT_TRUE(at(y->at(0).root.get("c")->mark, 2, 7));
    EXPECT_TRUE(at(j->at(0).root.get("a")->items[5].get("b")->mark, 1, 39));
    EXPECT_TRUE(at(y->at(0).root.get("a")->items[5].get("b")->mark, 1, 39));
}

} // namespace
} // namespace kpkg::io

// ------------------------------------------------------------------------------------------------
// The reader's modes for Go's decoding of a stream one value at a time (catalog render)

namespace kpkg::io {

namespace {

// Records scalars as text; refuses the number 13.
struct Recorder {
    std::vector<std::string> seen;
    void document_start(int, Mark) {}
    void document_end() {}
    void mapping_start(Mark) { seen.push_back("{"); }
    void mapping_end() { seen.push_back("}"); }
    void sequence_start(Mark) { seen.push_back("["); }
    void sequence_end() { seen.push_back("]"); }
    void key(const ScalarEvent& ev) { seen.push_back("k:" + std::string(ev.text)); }
    bool scalar(const ScalarEvent& ev) {
        if (ev.text == "13") return false;
        seen.push_back(std::string(ev.text));
        return true;
    }
    std::string refusal() const { return "no 13"; }
};

} // namespace

TEST(JsonReaderModes, ReadsOneValueAtATimeFromWhereItResumes) {
    const std::string text = "{\"a\":1}\n  [2, \"x\"] 3";
    const std::string file = "s.json";
    const Limits limits;
    Recorder h;
    detail::JsonReader<Recorder> r(text, file, limits, h);
    ASSERT_TRUE(r.read_one());
    EXPECT_EQ(r.offset(), 7u);
    r.resume(r.offset(), r.line(), r.line_start());
    ASSERT_TRUE(r.read_one());
    EXPECT_EQ(r.line(), 2u);
    EXPECT_EQ(r.line_start(), 8u);
    ASSERT_TRUE(r.read_one());
    EXPECT_EQ(r.offset(), text.size());
    EXPECT_EQ(h.seen, (std::vector<std::string>{"{", "k:a", "1", "}", "[", "2", "x", "]", "3"}));

    // Resuming on line 5 at a value that starts a new line: positions count from there.
    const std::string bad = "xxxx\n]";
    Recorder h2;
    detail::JsonReader<Recorder> r2(bad, file, limits, h2);
    r2.resume(5, 5, 5);
    EXPECT_FALSE(r2.read_one());
    EXPECT_EQ(r2.error().pos.line, 5u);
    EXPECT_EQ(r2.error().pos.column, 1u);
    EXPECT_NE(r2.error().message.find("expected a value, found ']'"), std::string::npos);
}

TEST(JsonReaderModes, InvalidUtf8ReplacedOnlyWhenAsked) {
    const std::string text = "[\"a\xFF"
                             "b\", \"\\n\xC3\"]";
    const std::string file = "s.json";
    const Limits limits;
    Recorder strict;
    detail::JsonReader<Recorder> r(text, file, limits, strict);
    EXPECT_FALSE(r.read_one());
    EXPECT_NE(r.error().message.find("invalid UTF-8 byte 0xFF"), std::string::npos)
        << r.error().message;
    Recorder go;
    detail::JsonReader<Recorder> g(text, file, limits, go);
    g.replace_invalid_utf8(true);
    ASSERT_TRUE(g.read_one()) << g.error().message;
    EXPECT_EQ(go.seen, (std::vector<std::string>{"[",
                                                 "a\xEF\xBF\xBD"
                                                 "b",
                                                 "\n\xEF\xBF\xBD", "]"}));
}

TEST(JsonReaderModes, HandlerRefusesAValueAtItsPosition) {
    const std::string text = "{\"a\": [1,\n  13]}";
    const std::string file = "s.json";
    const Limits limits;
    Recorder h;
    detail::JsonReader<Recorder> r(text, file, limits, h);
    EXPECT_FALSE(r.read_one());
    EXPECT_EQ(r.error().message, "no 13");
    EXPECT_EQ(r.error().pos.line, 2u);
    EXPECT_EQ(r.error().pos.column, 3u);
}

} // namespace kpkg::io
