// io/go: Go's encodings as opm writes them (encoding/json, strconv float text, base64, yaml.v2
// typing, key order and emitter). Expected values are what Go prints for the same input.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"

using namespace kpkg;
using namespace kpkg::io;

namespace {

std::string str(std::string_view s, bool html = false) {
    std::string out;
    go::append_string(out, s, html);
    return out;
}

std::string json_float(double v) {
    std::string out;
    go::append_float(out, v);
    return out;
}

std::string g(double v, int bits = 64) {
    std::string out;
    go::append_float_g(out, v, bits);
    return out;
}

Node json_doc(std::string_view text) {
    auto docs = parse_json(text, "test.json");
    EXPECT_TRUE(docs.ok());
    return docs.ok() && !docs->empty() ? (*docs)[0].root : Node{};
}

Node yaml_doc(std::string_view text) {
    auto docs = parse_yaml(text, "test.yaml");
    EXPECT_TRUE(docs.ok());
    return docs.ok() && !docs->empty() ? (*docs)[0].root : Node{};
}

} // namespace

// ------------------------------------------------------------------------------------------------
// encoding/json strings

struct EscapeCase {
    std::string in;
    std::string out;  // without html escaping
    std::string html; // with html escaping; empty: same as out
};

TEST(GoString, EscapesAsEncodingJson) {
    const std::vector<EscapeCase> cases = {
        {"", R"("")", ""},
        {"plain", R"("plain")", ""},
        {"a\"b\\c/d", R"("a\"b\\c/d")", ""},
        {"\n\r\t", R"("\n\r\t")", ""},
        // Go 1.22 writes \b and \f by name, other control characters as \u00XX.
        {"\x01\x1f\b\f", R"("\u0001\u001f\b\f")", ""},
        {std::string(1, '\0'), R"("\u0000")", ""},
        {"\x7f", "\"\x7f\"", ""},
        {"\xC3\xA9\xF0\x9F\x98\x80", "\"\xC3\xA9\xF0\x9F\x98\x80\"", ""},
        {"\xE2\x80\xA8\xE2\x80\xA9", R"("\u2028\u2029")", ""},
        {"a\xE2\x80\xA8"
         "b",
         R"("a\u2028b")", ""},
        {"<a href=\"x\">&amp;</a>", R"("<a href=\"x\">&amp;</a>")",
         R"("\u003ca href=\"x\"\u003e\u0026amp;\u003c/a\u003e")"},
        {"<>&", R"("<>&")", R"("\u003c\u003e\u0026")"},
        // Runs longer than eight bytes take the word-at-a-time path.
        {"abcdefghijklmnop<q", R"("abcdefghijklmnop<q")", R"("abcdefghijklmnop\u003cq")"},
        {"\xFF", R"("\ufffd")", ""},
        {"a\xC3", R"("a\ufffd")", ""},
        {"\xED\xA0\x80", R"("\ufffd\ufffd\ufffd")", ""},
        {"\xC0\xAF"
         "ok",
         R"("\ufffd\ufffdok")", ""},
        {"\xF4\x90\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")", ""},
    };
    for (const EscapeCase& c : cases) {
        EXPECT_EQ(str(c.in), c.out) << c.in;
        EXPECT_EQ(str(c.in, true), c.html.empty() ? c.out : c.html) << c.in;
        EXPECT_EQ(go::string_size(c.in), c.out.size()) << c.in;
    }
}

TEST(GoString, AppendsToExistingText) {
    std::string s = "x=";
    go::append_string(s, "y", false);
    EXPECT_EQ(s, "x=\"y\"");
}

// strconv.Quote as kpkg spells it (fmt's %q in templates, values in Kubernetes' field errors):
// Go's escapes for ASCII, every byte from 0x80 up as it is.
TEST(GoQuote, EscapesAsciiAsStrconv) {
    EXPECT_EQ(go::quote(""), R"("")");
    EXPECT_EQ(go::quote("plain text 1.0"), R"("plain text 1.0")");
    EXPECT_EQ(go::quote("say \"hi\" \\ bye"), R"("say \"hi\" \\ bye")");
    EXPECT_EQ(go::quote("\a\b\f\n\r\t\v"), R"("\a\b\f\n\r\t\v")");
    EXPECT_EQ(go::quote(std::string("\0\x01\x1f\x7f", 4)), R"("\x00\x01\x1f\x7f")");
    EXPECT_EQ(go::quote("'single'`back`"), R"("'single'`back`")");
}

TEST(GoQuote, KeepsBytesAboveAscii) {
    EXPECT_EQ(go::quote("caf\xC3\xA9 \xE2\x9C\x93"), "\"caf\xC3\xA9 \xE2\x9C\x93\"");
    // Unlike text::quote (and Go's own Quote), neither C1 controls nor bytes that are not UTF-8
    // are escaped: the template and schema messages printed them so.
    EXPECT_EQ(go::quote("\xC2\x85"), "\"\xC2\x85\"");
    EXPECT_EQ(go::quote("\xFF\xC3"), "\"\xFF\xC3\"");
}

TEST(GoQuote, IsNotCut) {
    const std::string big(100000, 'a');
    EXPECT_EQ(go::quote(big), "\"" + big + "\"");
}

// ------------------------------------------------------------------------------------------------
// float64 text

TEST(GoFloat, EncodingJsonSpelling) {
    EXPECT_EQ(json_float(0), "0");
    EXPECT_EQ(json_float(-0.0), "-0");
    EXPECT_EQ(json_float(1), "1");
    EXPECT_EQ(json_float(1.5), "1.5");
    EXPECT_EQ(json_float(-2.25), "-2.25");
    EXPECT_EQ(json_float(0.1), "0.1");
    EXPECT_EQ(json_float(1e20), "100000000000000000000");
    EXPECT_EQ(json_float(1e21), "1e+21");
    EXPECT_EQ(json_float(12345678901234567168.0), "12345678901234567000");
    EXPECT_EQ(json_float(1e-6), "0.000001");
    EXPECT_EQ(json_float(1e-7), "1e-7");
    EXPECT_EQ(json_float(1.5e-10), "1.5e-10");
    EXPECT_EQ(json_float(5e-324), "5e-324");
    EXPECT_EQ(json_float(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
    EXPECT_EQ(json_float(9007199254740993.0), "9007199254740992");
}

TEST(GoFloat, FixedSpelling) {
    std::string s;
    go::append_fixed(s, 1e21);
    EXPECT_EQ(s, "1000000000000000000000");
    s.clear();
    go::append_fixed(s, 1.25e-7);
    EXPECT_EQ(s, "0.000000125");
}

TEST(GoFloat, FormatFloatG) {
    EXPECT_EQ(g(0), "0");
    EXPECT_EQ(g(-0.0), "-0");
    EXPECT_EQ(g(1), "1");
    EXPECT_EQ(g(100000), "100000");
    EXPECT_EQ(g(1e6), "1e+06");
    EXPECT_EQ(g(123456789), "1.23456789e+08");
    EXPECT_EQ(g(0.0001), "0.0001");
    EXPECT_EQ(g(0.00001), "1e-05");
    EXPECT_EQ(g(1.5e-5), "1.5e-05");
    EXPECT_EQ(g(1e21), "1e+21");
    EXPECT_EQ(g(1e100), "1e+100");
    EXPECT_EQ(g(5e-324), "5e-324");
    EXPECT_EQ(g(std::numeric_limits<double>::infinity()), "+Inf");
    EXPECT_EQ(g(-std::numeric_limits<double>::infinity()), "-Inf");
    EXPECT_EQ(g(std::nan("")), "NaN");
    // 32 bits: rounded to a float32 first, then its shortest digits.
    EXPECT_EQ(g(0.1, 32), "0.1");
    EXPECT_EQ(g(3.14159265358979, 32), "3.1415927");
    EXPECT_EQ(g(16777217, 32), "1.6777216e+07");
    EXPECT_EQ(g(1e39, 32), "+Inf");
}

TEST(GoFloat, JsonNumberReadsAsFloat64) {
    auto num = [](std::string_view lit) {
        std::string out;
        if (!go::append_json_number(out, lit)) return std::string("<overflow>");
        return out;
    };
    EXPECT_EQ(num("0"), "0");
    EXPECT_EQ(num("-12"), "-12");
    EXPECT_EQ(num("1.0"), "1");
    EXPECT_EQ(num("1E2"), "100");
    EXPECT_EQ(num("123456789012345678"), "123456789012345680");
    EXPECT_EQ(num("12345678901234567168"), "12345678901234567000");
    EXPECT_EQ(num("1e21"), "1e+21");
    EXPECT_EQ(num("-0.0"), "-0");
    EXPECT_EQ(num("1e-400"), "0");
    EXPECT_EQ(num("-1e-400"), "-0");
    EXPECT_EQ(num("1e400"), "<overflow>");
}

TEST(GoParse, IntegersAsStrconv) {
    EXPECT_EQ(go::parse_int("0x1F"), 31);
    EXPECT_EQ(go::parse_int("0o17"), 15);
    EXPECT_EQ(go::parse_int("017"), 15);
    EXPECT_EQ(go::parse_int("0b101"), 5);
    EXPECT_EQ(go::parse_int("-0x10"), -16);
    EXPECT_EQ(go::parse_int("+5"), 5);
    EXPECT_EQ(go::parse_int("-9223372036854775808"), std::numeric_limits<std::int64_t>::min());
    EXPECT_FALSE(go::parse_int("9223372036854775808"));
    EXPECT_FALSE(go::parse_int("08"));
    EXPECT_FALSE(go::parse_int("0x1F", false));
    EXPECT_EQ(go::parse_int("017", false), 17);
    EXPECT_EQ(go::parse_uint("18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
    EXPECT_FALSE(go::parse_uint("18446744073709551616"));
    EXPECT_FALSE(go::parse_uint("-1"));
    EXPECT_EQ(go::parse_float("1e-400"), 0.0);
    EXPECT_FALSE(go::parse_float("1e400"));
    EXPECT_FALSE(go::parse_float("1x"));
}

// ------------------------------------------------------------------------------------------------
// base64

TEST(GoBase64, EncodesWithPadding) {
    auto enc = [](std::string_view s) {
        std::string out;
        go::append_base64(out, s);
        return out;
    };
    EXPECT_EQ(enc(""), "");
    EXPECT_EQ(enc("f"), "Zg==");
    EXPECT_EQ(enc("fo"), "Zm8=");
    EXPECT_EQ(enc("foo"), "Zm9v");
    EXPECT_EQ(enc("foob"), "Zm9vYg==");
    EXPECT_EQ(enc("\xff\xfe\xfd"), "//79");
}

TEST(GoBase64, DecodesAsStdEncoding) {
    auto dec = [](std::string_view s) {
        std::string out;
        std::size_t at = 0;
        if (!go::decode_base64(s, &out, at)) return "<error at " + std::to_string(at) + ">";
        return out;
    };
    EXPECT_EQ(dec(""), "");
    EXPECT_EQ(dec("Zm9vYg=="), "foob");
    EXPECT_EQ(dec("Zm9v\r\nYmE="), "fooba");
    EXPECT_EQ(dec("//79"), "\xff\xfe\xfd");
    EXPECT_EQ(dec("Zm9vYg"), "<error at 6>"); // padding is required
    EXPECT_EQ(dec("Zm9v!"), "<error at 4>");
    EXPECT_EQ(dec("Zg==Zg=="), "<error at 4>"); // data after padding
    EXPECT_EQ(dec("Z==="), "<error at 1>");
    // Line breaks are skipped anywhere, also among and after the padding.
    EXPECT_EQ(dec("Zm8=\n"), "fo");
    EXPECT_EQ(dec("Zg=\r\n="), "f");
    EXPECT_EQ(dec("\n"), "");
    EXPECT_EQ(dec("Zm8=\nZ"), "<error at 5>");
    EXPECT_EQ(dec("Zg==="), "<error at 4>"); // more padding than the quantum has room for
    EXPECT_EQ(dec("Zg=A"), "<error at 3>");
    EXPECT_EQ(dec("Zm9v\x80"), "<error at 4>");
    // Checking without decoding gives the same verdict and position.
    for (std::string_view s :
         {"Zm9vYg==", "Zm9v\r\nYmE=", "Zm9vYg", "Zm9v!", "Zg==Zg==", "Zg==="}) {
        std::string out;
        std::size_t a1 = 0, a2 = 0;
        EXPECT_EQ(go::decode_base64(s, nullptr, a1), go::decode_base64(s, &out, a2)) << s;
        EXPECT_EQ(a1, a2) << s;
    }
}

// ------------------------------------------------------------------------------------------------
// yaml.v2 typing

struct TypingCase {
    std::string in;
    go::Type type;
};

TEST(GoYaml, ResolvesPlainScalarsAsYamlV2) {
    using T = go::Type;
    const std::vector<TypingCase> cases = {
        {"", T::null},
        {"~", T::null},
        {"null", T::null},
        {"Null", T::null},
        {"NULL", T::null},
        {"nULL", T::string},
        {"y", T::boolean},
        {"Y", T::boolean},
        {"yes", T::boolean},
        {"Yes", T::boolean},
        {"YES", T::boolean},
        {"yEs", T::string},
        {"n", T::boolean},
        {"no", T::boolean},
        {"on", T::boolean},
        {"On", T::boolean},
        {"off", T::boolean},
        {"OFF", T::boolean},
        {"true", T::boolean},
        {"True", T::boolean},
        {"FALSE", T::boolean},
        {"tRUE", T::string},
        {"0", T::int64},
        {"-17", T::int64},
        {"+5", T::int64},
        {"0x1F", T::int64},
        {"0o17", T::int64},
        {"017", T::int64},
        {"0b11", T::int64},
        {"1_000", T::int64},
        {"08", T::float64},
        {"9223372036854775808", T::uint64},
        {"18446744073709551616", T::float64},
        {"-9223372036854775809", T::float64},
        {"0x10000000000000000", T::string},
        {"1.5", T::float64},
        {".5", T::float64},
        {"1.", T::float64},
        {"1e3", T::float64},
        {"1E+3", T::float64},
        {"1e400", T::string},
        {".inf", T::float64},
        {"-.Inf", T::float64},
        {"+.INF", T::float64},
        {".NaN", T::float64},
        {".nan.", T::string},
        {"2001-12-14", T::timestamp},
        {"2001-12-14t21:59:43.10-05:00", T::timestamp},
        {"2001-02-30", T::string},
        {"1:20", T::string},
        {"0.1.2", T::string},
        {"-", T::string},
        {"+", T::string},
        {"abc", T::string},
        {"1.2.3-beta", T::string},
    };
    for (const TypingCase& c : cases)
        EXPECT_EQ(static_cast<int>(go::resolve(c.in).type), static_cast<int>(c.type)) << c.in;
    EXPECT_TRUE(go::resolve("yes").b);
    EXPECT_FALSE(go::resolve("Off").b);
    EXPECT_EQ(go::resolve("0x1F").i, 31);
    EXPECT_EQ(go::resolve("9223372036854775808").u, 9223372036854775808ULL);
    EXPECT_EQ(go::resolve(".5").f, 0.5);
    EXPECT_TRUE(std::isinf(go::resolve("-.inf").f));
}

TEST(GoYaml, ScalarOfAJsonNodeGoesByItsKind) {
    const Node n = json_doc(R"({"a":"yes","c":1.5,"d":null,"e":true})");
    ASSERT_TRUE(n.is_map());
    EXPECT_EQ(static_cast<int>(go::scalar_of(*n.get("a")).type),
              static_cast<int>(go::Type::string));
    EXPECT_EQ(static_cast<int>(go::scalar_of(*n.get("c")).type),
              static_cast<int>(go::Type::float64));
    EXPECT_EQ(static_cast<int>(go::scalar_of(*n.get("d")).type), static_cast<int>(go::Type::null));
    EXPECT_TRUE(go::scalar_of(*n.get("e")).b);
}

TEST(GoYaml, KeyOrderOfYamlV2) {
    EXPECT_TRUE(go::key_less("a", "b"));
    EXPECT_TRUE(go::key_less("B", "a"));    // runes compare as numbers between letters
    EXPECT_TRUE(go::key_less("_x", "a"));   // a letter sorts after anything else
    EXPECT_TRUE(go::key_less("a2", "a10")); // runs of digits compare as numbers
    EXPECT_FALSE(go::key_less("a10", "a2"));
    EXPECT_TRUE(go::key_less("a", "ab"));
    EXPECT_TRUE(go::key_less("x\xC3\xA9", "x\xC3\xAA")); // non-ASCII letters as runes
    EXPECT_FALSE(go::key_less("a", "a"));
}

TEST(GoYaml, MarshalsAJsonDocument) {
    std::string out;
    go::append_yaml(out, json_doc(R"({"b":"yes","a":[1,2.5,1e21,"x"],"c":{},"d":[],)"
                                  R"("e":"two\nlines","f":"","g":null,"h":" lead","i":"1:20"})"));
    EXPECT_EQ(out, "a:\n"
                   "- 1\n"
                   "- 2.5\n"
                   "- 1e+21\n"
                   "- x\n"
                   "b: \"yes\"\n"
                   "c: {}\n"
                   "d: []\n"
                   "e: |-\n"
                   "  two\n"
                   "  lines\n"
                   "f: \"\"\n"
                   "g: null\n"
                   "h: ' lead'\n"
                   "i: \"1:20\"\n");
}

TEST(GoYaml, FoldsLongLinesAt80Columns) {
    std::string words;
    for (int i = 0; i < 20; ++i)
        words += "word" + std::to_string(i) + " ";
    words += "end";
    std::string out;
    go::append_yaml(out, json_doc("{\"k\":\"" + words + "\"}"));
    EXPECT_EQ(out, "k: word0 word1 word2 word3 word4 word5 word6 word7 word8 word9 word10 word11 "
                   "word12\n  word13 word14 word15 word16 word17 word18 word19 end\n");
}

// ------------------------------------------------------------------------------------------------
// json.Marshal, Compact, Indent

TEST(GoJson, MarshalsAsOpmHoldsTheValue) {
    std::string out;
    ASSERT_TRUE(go::append_marshal(
        out,
        yaml_doc("b: yes\na: 0x1F\nc: 1.0\nd: 2001-12-14\ne: <&>\nf: 18446744073709551615\n")));
    EXPECT_EQ(out, R"({"a":31,"b":true,"c":1,"d":"2001-12-14","e":"\u003c\u0026\u003e",)"
                   R"("f":18446744073709552000})");
    out.clear();
    EXPECT_FALSE(go::append_marshal(out, yaml_doc("a: .inf\n")));
}

TEST(GoJson, CompactAndIndent) {
    const std::string compact =
        go::compact("{ \"a\" : [ 1 , \"x y\" , {} , [] ] ,\n \"b\\\"\": {\"c\":null} }");
    EXPECT_EQ(compact, R"({"a":[1,"x y",{},[]],"b\"":{"c":null}})");
    std::string out;
    go::append_indented(out, compact);
    EXPECT_EQ(out, "{\n"
                   "    \"a\": [\n"
                   "        1,\n"
                   "        \"x y\",\n"
                   "        {},\n"
                   "        []\n"
                   "    ],\n"
                   "    \"b\\\"\": {\n"
                   "        \"c\": null\n"
                   "    }\n"
                   "}");
    out.clear();
    go::append_indented(out, R"({"a":1})", 2);
    EXPECT_EQ(out, "{\n            \"a\": 1\n        }");
    EXPECT_EQ(go::skip_value(R"( {"a":[1,{"b":"]"}]} x)", 0), 20u);
    EXPECT_EQ(go::skip_value(R"({"a":)", 0), std::string_view::npos);
}
