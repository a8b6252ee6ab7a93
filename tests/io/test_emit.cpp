// to_json and to_yaml, the Node API, and round trips through both readers.
#include "kpkg/io/about.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/load.hpp"

#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "support/support.hpp"

namespace kpkg::io {
namespace {

Node yaml(const std::string& text) {
    auto r = parse_yaml(text, "in.yaml");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str()) << "\ninput:\n" << text;
    if (!r.ok() || r->empty()) return Node{};
    return std::move(r->front().root);
}

Node json(const std::string& text) {
    auto r = parse_json(text, "in.json");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str()) << "\ninput:\n" << text;
    if (!r.ok() || r->empty()) return Node{};
    return std::move(r->front().root);
}

Node scalar(Kind k, std::string text) {
    Node n;
    n.kind = k;
    n.text = std::move(text);
    return n;
}

const char* const kSample = "schema: olm.bundle\n"
                            "name: \"etcd.v0.9.4\"\n"
                            "props:\n"
                            "  - type: olm.package\n"
                            "    value: {packageName: etcd, version: 0.9.4}\n"
                            "  - []\n"
                            "  - {}\n"
                            "  - [a, b]\n"
                            "count: 1\n"
                            "f: 2.50\n"
                            "b: true\n"
                            "z: ~\n"
                            "esc: \"<a & b>\\t\\\"q\\\"\\u2028\"\n";

// ---------------------------------------------------------------------------------------------
// to_json

TEST(ToJson, GoIndentLayout) {
    const std::string want = "{\n"
                             "    \"schema\": \"olm.bundle\",\n"
                             "    \"name\": \"etcd.v0.9.4\",\n"
                             "    \"props\": [\n"
                             "        {\n"
                             "            \"type\": \"olm.package\",\n"
                             "            \"value\": {\n"
                             "                \"packageName\": \"etcd\",\n"
                             "                \"version\": \"0.9.4\"\n"
                             "            }\n"
                             "        },\n"
                             "        [],\n"
                             "        {},\n"
                             "        [\n"
                             "            \"a\",\n"
                             "            \"b\"\n"
                             "        ]\n"
                             "    ],\n"
                             "    \"count\": 1,\n"
                             "    \"f\": 2.50,\n"
                             "    \"b\": true,\n"
                             "    \"z\": null,\n"
                             "    \"esc\": \"<a & b>\\t\\\"q\\\"\\u2028\"\n"
                             "}\n";
    EXPECT_EQ(to_json(yaml(kSample)), want);
}

TEST(ToJson, Compact) {
    JsonStyle st;
    st.indent = 0;
    EXPECT_EQ(to_json(yaml(kSample), st),
              "{\"schema\":\"olm.bundle\",\"name\":\"etcd.v0.9.4\",\"props\":[{\"type\":\"olm."
              "package\",\"value\":{\"packageName\":\"etcd\",\"version\":\"0.9.4\"}},[],{},[\"a\","
              "\"b\"]],\"count\":1,\"f\":2.50,\"b\":true,\"z\":null,\"esc\":\"<a & "
              "b>\\t\\\"q\\\"\\u2028\"}\n");
}

TEST(ToJson, OtherIndentAndScalarsAtTheTop) {
    JsonStyle st;
    st.indent = 2;
    EXPECT_EQ(to_json(json("{\"a\":[1]}"), st), "{\n  \"a\": [\n    1\n  ]\n}\n");
    EXPECT_EQ(to_json(Node::string("x")), "\"x\"\n");
    EXPECT_EQ(to_json(Node{}), "null\n");
    EXPECT_EQ(to_json(Node::map()), "{}\n");
    EXPECT_EQ(to_json(Node::seq()), "[]\n");
    EXPECT_EQ(to_json(Node::integer(-42)), "-42\n");
    EXPECT_EQ(to_json(Node::boolean(false)), "false\n");
}

TEST(ToJson, SortKeys) {
    JsonStyle st;
    st.indent = 0;
    st.sort_keys = true;
    EXPECT_EQ(to_json(json(R"({"b":1,"a":{"z":1,"Z":2,"é":3,"y":4},"A":2,"":0})"), st),
              "{\"\":0,\"A\":2,\"a\":{\"Z\":2,\"y\":4,\"z\":1,\"é\":3},\"b\":1}\n");
}

TEST(ToJson, EscapesHtmlWhenAsked) {
    JsonStyle st;
    st.indent = 0;
    EXPECT_EQ(to_json(json(R"({"<k>":"a&b\b"})"), st), "{\"<k>\":\"a&b\\b\"}\n");
    st.escape_html = true;
    EXPECT_EQ(to_json(json(R"({"<k>":"a&b"})"), st), "{\"\\u003ck\\u003e\":\"a\\u0026b\"}\n");
}

struct NumberCase {
    Kind kind;
    const char* text;
    const char* json;
};

TEST(ToJson, Numbers) {
    const std::vector<NumberCase> cases = {
        {Kind::integer, "0", "0"},
        {Kind::integer, "-0", "-0"},
        {Kind::integer, "42", "42"},
        {Kind::integer, "12345678901234567890123", "12345678901234567890123"},
        {Kind::integer, "0x1F", "31"},
        {Kind::integer, "0o17", "15"},
        {Kind::integer, "+5", "5"},
        {Kind::integer, "007", "7"},
        {Kind::integer, "-007", "-7"},
        {Kind::integer, "000", "0"},
        {Kind::integer, "0xFFFFFFFFFFFFFFFF", "18446744073709551615"},
        {Kind::integer, "not a number", "\"not a number\""},
        {Kind::floating, "1.5", "1.5"},
        {Kind::floating, "2.50", "2.50"},
        {Kind::floating, "-1.5e10", "-1.5e10"},
        {Kind::floating, "1E400", "1E400"},
        {Kind::floating, "1e3", "1e3"},
        {Kind::floating, ".5", "0.5"},
        {Kind::floating, "-.5", "-0.5"},
        {Kind::floating, "1.", "1.0"},
        {Kind::floating, "+1.5", "1.5"},
        {Kind::floating, "01.5", "1.5"},
        {Kind::floating, "1", "1.0"},
        {Kind::floating, "1.e5", "1e+05"},
        {Kind::floating, ".inf", "\".inf\""},
        {Kind::floating, "+.Inf", "\".inf\""},
        {Kind::floating, "-.INF", "\"-.inf\""},
        {Kind::floating, ".NaN", "\".nan\""},
        {Kind::floating, "abc", "\"abc\""},
        {Kind::boolean, "True", "true"},
        {Kind::boolean, "FALSE", "false"},
        {Kind::boolean, "yes", "\"yes\""},
        {Kind::null, "~", "null"},
        {Kind::null, "NULL", "null"},
    };
    for (const NumberCase& c : cases)
        EXPECT_EQ(to_json(scalar(c.kind, c.text)), std::string(c.json) + "\n") << c.text;
}

// ---------------------------------------------------------------------------------------------
// to_yaml

TEST(ToYaml, BlockLayout) {
    const std::string want = "schema: olm.bundle\n"
                             "name: etcd.v0.9.4\n"
                             "props:\n"
                             "- type: olm.package\n"
                             "  value:\n"
                             "    packageName: etcd\n"
                             "    version: 0.9.4\n"
                             "- []\n"
                             "- {}\n"
                             "- - a\n"
                             "  - b\n"
                             "count: 1\n"
                             "f: 2.50\n"
                             "b: true\n"
                             "z: null\n"
                             "esc: \"<a & b>\\t\\\"q\\\"\\u2028\"\n";
    EXPECT_EQ(to_yaml(yaml(kSample)), want);
}

TEST(ToYaml, IndentedSequences) {
    YamlStyle st;
    st.indent_sequences = true;
    const std::string want = "a:\n"
                             "  - x\n"
                             "  - k: v\n"
                             "    l:\n"
                             "      - 1\n"
                             "      - - 2\n"
                             "        - 3\n"
                             "b: []\n";
    EXPECT_EQ(to_yaml(yaml("a: [x, {k: v, l: [1, [2, 3]]}]\nb: []\n"), st), want);
}

TEST(ToYaml, WiderIndent) {
    YamlStyle st;
    st.indent = 4;
    const std::string want = "a:\n"
                             "-   k: v\n"
                             "    m:\n"
                             "        p: 1\n"
                             "-   - x\n"
                             "b:\n"
                             "    c: d\n";
    const std::string out = to_yaml(yaml("a: [{k: v, m: {p: 1}}, [x]]\nb: {c: d}\n"), st);
    EXPECT_EQ(out, want);
    EXPECT_EQ(yaml(out), yaml(want));
}

TEST(ToYaml, SortKeys) {
    YamlStyle st;
    st.sort_keys = true;
    EXPECT_EQ(to_yaml(yaml("b: 1\na:\n  w: 2\n  x: 3\n  \"y\": 4\n"), st),
              "a:\n  w: 2\n  x: 3\n  \"y\": 4\nb: 1\n");
}

TEST(ToYaml, TopLevelScalarsAndEmptyCollections) {
    EXPECT_EQ(to_yaml(Node{}), "null\n");
    EXPECT_EQ(to_yaml(Node::string("a")), "a\n");
    EXPECT_EQ(to_yaml(Node::string("")), "\"\"\n");
    EXPECT_EQ(to_yaml(Node::string("...")), "\"...\"\n");
    EXPECT_EQ(to_yaml(Node::string("---")), "\"---\"\n");
    EXPECT_EQ(to_yaml(Node::map()), "{}\n");
    EXPECT_EQ(to_yaml(Node::seq()), "[]\n");
    EXPECT_EQ(to_yaml(Node::integer(7)), "7\n");
}

TEST(ToYaml, ScalarForms) {
    const std::vector<NumberCase> cases = {
        {Kind::integer, "0x1F", "0x1F"},
        {Kind::integer, "+5", "+5"},
        {Kind::integer, "bogus", "\"bogus\""},
        {Kind::floating, "1", "1.0"},
        {Kind::floating, ".5", ".5"},
        {Kind::floating, "-.Inf", "-.Inf"},
        {Kind::floating, "1e400", "1e400"},
        {Kind::floating, "x", "\"x\""},
        {Kind::boolean, "True", "true"},
        {Kind::boolean, "maybe", "\"maybe\""},
        {Kind::null, "~", "null"},
    };
    for (const NumberCase& c : cases)
        EXPECT_EQ(to_yaml(scalar(c.kind, c.text)), std::string(c.json) + "\n") << c.text;
}

struct QuoteCase {
    std::string in;
    std::string out; // the scalar as written
};

TEST(ToYaml, QuotesExactlyWhenNeeded) {
    const std::vector<QuoteCase> cases = {
        // plain
        {"plain", "plain"},
        {"hello world", "hello world"},
        {"v1", "v1"},
        {"0.9.4", "0.9.4"},
        {"1.2.3", "1.2.3"},
        {"a - b", "a - b"},
        {"a:b", "a:b"},
        {"a#b", "a#b"},
        {"a,b", "a,b"},
        {"a]", "a]"},
        {"a}", "a}"},
        {"a\"b", "a\"b"},
        {"it's", "it's"},
        {"a\\b", "a\\b"},
        {"\xC3\xA9t\xC3\xA9", "\xC3\xA9t\xC3\xA9"},
        {"\xE6\x97\xA5\xE6\x9C\xAC", "\xE6\x97\xA5\xE6\x9C\xAC"},
        {"quay.io/x/y@sha256:abc", "quay.io/x/y@sha256:abc"},
        {">=1.0.0 <2.0.0", "\">=1.0.0 <2.0.0\""},
        {"1_000", "1_000"},
        {"nulls", "nulls"},
        {"truely", "truely"},
        // would read back as another type
        {"", "\"\""},
        {"null", "\"null\""},
        {"Null", "\"Null\""},
        {"NULL", "\"NULL\""},
        {"~", "\"~\""},
        {"true", "\"true\""},
        {"False", "\"False\""},
        {"1", "\"1\""},
        {"-1", "\"-1\""},
        {"+5", "\"+5\""},
        {"007", "\"007\""},
        {"0x1F", "\"0x1F\""},
        {"0o17", "\"0o17\""},
        {"1.5", "\"1.5\""},
        {".5", "\".5\""},
        {"1e3", "\"1e3\""},
        {".inf", "\".inf\""},
        {"-.inf", "\"-.inf\""},
        {".nan", "\".nan\""},
        // YAML 1.1 booleans, for kubectl and other YAML 1.1 readers
        {"yes", "\"yes\""},
        {"No", "\"No\""},
        {"on", "\"on\""},
        {"OFF", "\"OFF\""},
        {"y", "\"y\""},
        {"N", "\"N\""},
        {"<<", "\"<<\""},
        // indicators and structure
        {"- a", "\"- a\""},
        {"-a", "\"-a\""},
        {"-", "\"-\""},
        {"---", "\"---\""},
        {"...", "\"...\""},
        {"...x", "\"...x\""},
        {": a", "\": a\""},
        {"a: b", "\"a: b\""},
        {"a:", "\"a:\""},
        {"#x", "\"#x\""},
        {"a #b", "\"a #b\""},
        {"[a]", "\"[a]\""},
        {"{a}", "\"{a}\""},
        {",a", "\",a\""},
        {"?a", "\"?a\""},
        {"&a", "\"&a\""},
        {"*a", "\"*a\""},
        {"!a", "\"!a\""},
        {"|a", "\"|a\""},
        {">a", "\">a\""},
        {"'a", "\"'a\""},
        {"\"a", "\"\\\"a\""},
        {"%a", "\"%a\""},
        {"@a", "\"@a\""},
        {"`a", "\"`a\""},
        {" a", "\" a\""},
        {"a ", "\"a \""},
        // escapes
        {"a\nb", "\"a\\nb\""},
        {"a\tb", "\"a\\tb\""},
        {"a\rb", "\"a\\rb\""},
        {std::string("a\0b", 3), "\"a\\0b\""},
        {"\x01", "\"\\x01\""},
        {"\x1b[0m", "\"\\x1b[0m\""},
        {"\x7f", "\"\\x7f\""},
        {"a\\b\n", "\"a\\\\b\\n\""},
        {"\xC2\x85", "\"\\x85\""},
        {"\xC2\x9F", "\"\\x9f\""},
        {"\xE2\x80\xA8", "\"\\u2028\""},
        {"\xE2\x80\xA9", "\"\\u2029\""},
        {"\xEF\xBB\xBFx", "\"\\ufeffx\""},
        {"\xFF", "\"\\ufffd\""},
        {"a\xC3", "\"a\\ufffd\""},
    };
    for (const QuoteCase& c : cases) {
        EXPECT_EQ(to_yaml(Node::string(c.in)), c.out + "\n") << c.in;
        // the same rule for keys
        Node m = Node::map();
        m.set(c.in, Node::string("v"));
        EXPECT_EQ(to_yaml(m), c.out + ": v\n") << c.in;
        // and every one reads back as the same string (invalid UTF-8 aside)
        if (c.in == "\xFF" || c.in == "a\xC3") continue;
        Node back = yaml(to_yaml(Node::string(c.in)));
        EXPECT_EQ(back.kind, Kind::string) << c.in;
        EXPECT_EQ(back.text, c.in);
        Node back_map = yaml(to_yaml(m));
        ASSERT_EQ(back_map.fields.size(), 1u) << c.in;
        EXPECT_EQ(back_map.fields[0].key, c.in);
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips

const char* const kShapes[] = {
    "a: 1\n",
    "[1, 2, 3]\n",
    "- a\n- [b, [c, [d]]]\n- {e: {f: {g: h}}}\n",
    "a: []\nb: {}\nc: [[], {}, [[]], {x: {}}]\n",
    "ints: [0, -1, +5, 007, 0x1F, 0o17, 12345678901234567890123]\n",
    "floats: [1.5, -1.5e10, .5, 1., 1e3, 0.0, -0.0]\n",
    "bools: [true, False, TRUE]\nnulls: [~, null, Null, NULL, ]\nempty:\n",
    "strings: ['1', \"true\", 'null', '', ' lead', 'trail ', 'a: b', 'a #b', '#c', '- x']\n",
    "weird: [\"\\t\\n\\r\\x01\\x7f\", \"\\u2028\\u2029\\x85\", \"\\0\", \"\\\\\", \"\\\"\", "
    "\"é日本😀\"]\n",
    "keys:\n  \"1\": a\n  \"true\": b\n  \"\": c\n  \"a: b\": d\n  '- e': f\n  \"x\\ny\": g\n",
    "block: |\n  line 1\n\n  line 3\nfolded: >\n  a\n  b\n\n  c\nkeep: |+\n  x\n\nstrip: |-\n  y\n",
    "deep:\n  - - - - - - - x\n",
    "anchors:\n  base: &b {a: 1, b: [2, 3]}\n  copy: *b\n",
    "olm:\n  - schema: olm.bundle\n    properties:\n      - type: olm.gvk\n        value: {group: "
    "g, kind: K, version: v1}\n",
    "long: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbb\n",
    "\"top level string\"\n",
    "42\n",
    "~\n",
};

TEST(RoundTrip, YamlToJsonAndBack) {
    for (const char* text : kShapes) {
        Node a = yaml(text);
        for (int indent : {0, 4}) {
            JsonStyle st;
            st.indent = indent;
            const std::string j = to_json(a, st);
            Node b = json(j);
            EXPECT_EQ(a, b) << "input:\n" << text << "json:\n" << j;
            EXPECT_EQ(to_json(b, st), j) << "not stable:\n" << text;
        }
    }
}

TEST(RoundTrip, YamlToYamlAndBack) {
    for (const char* text : kShapes) {
        Node a = yaml(text);
        for (int variant = 0; variant < 4; ++variant) {
            YamlStyle st;
            st.indent_sequences = (variant & 1) != 0;
            st.indent = (variant & 2) != 0 ? 4 : 2;
            const std::string y = to_yaml(a, st);
            Node b = yaml(y);
            EXPECT_EQ(a, b) << "input:\n" << text << "yaml:\n" << y;
            EXPECT_EQ(to_yaml(b, st), y) << "not stable:\n" << y;
        }
    }
}

TEST(RoundTrip, InfinityAndNanBecomeStringsInJson) {
    Node a = yaml("[.inf, -.inf, .nan]");
    EXPECT_EQ(to_json(a, {0, false, false}), "[\".inf\",\"-.inf\",\".nan\"]\n");
    Node y = yaml(to_yaml(a));
    EXPECT_EQ(a, y);
    EXPECT_TRUE(std::isnan(*y.items[2].as_double()));
}

TEST(RoundTrip, LongKeysUseTheExplicitForm) {
    const std::string k(2000, 'k');
    Node m = Node::map();
    m.set(k, Node::string("v"));
    m.set("a", Node::string(std::string(5000, 'x') + " y"));
    Node inner = Node::map();
    inner.set(k + "2", yaml("[1, [2], {b: c}]"));
    inner.set(std::string(999, 'q') + ": ", yaml("{d: e}"));
    m.set("nested", inner);
    for (bool indent_sequences : {false, true}) {
        YamlStyle st;
        st.indent_sequences = indent_sequences;
        const std::string out = to_yaml(m, st);
        EXPECT_EQ(out.compare(0, 4, "? kk"), 0);
        EXPECT_NE(out.find("\n: v\n"), std::string::npos);
        EXPECT_EQ(yaml(out), m) << out;
    }
}

// Random trees of awkward strings, numbers and nesting, through both writers and readers.
class RandomTrees {
public:
    explicit RandomTrees(unsigned seed) : rng_(seed) {}

    Node tree(int depth) {
        const int pick = uniform(depth <= 0 ? 5 : 8);
        switch (pick) {
        case 0:
            return string_node();
        case 1:
            return string_node();
        case 2:
            return Node::integer(static_cast<std::int64_t>(rng_()) - (1LL << 31));
        case 3: {
            static const char* const floats[] = {"1.5",   "-0.25",     "1e10", "2.5E-3",
                                                 "0.0",   "-1.0e+2",   ".5",   "1.",
                                                 "+3.25", "123456.789"};
            return scalar(Kind::floating, floats[uniform(10)]);
        }
        case 4:
            return uniform(3) == 0 ? Node{} : Node::boolean(uniform(2) == 0);
        case 5:
        case 6: {
            Node m = Node::map();
            const int n = uniform(6);
            std::set<std::string> keys;
            for (int i = 0; i < n; ++i) {
                std::string k = text();
                if (!keys.insert(k).second) continue;
                m.set(k, tree(depth - 1));
            }
            return m;
        }
        default: {
            Node s = Node::seq();
            const int n = uniform(6);
            for (int i = 0; i < n; ++i)
                s.push(tree(depth - 1));
            return s;
        }
        }
    }

private:
    int uniform(int n) { return static_cast<int>(rng_() % static_cast<unsigned>(n)); }

    std::string text() {
        static const char* const parts[] = {"a",
                                            "b c",
                                            "",
                                            " ",
                                            "-",
                                            "- ",
                                            ":",
                                            ": ",
                                            "#",
                                            " #",
                                            "?",
                                            ",",
                                            "[",
                                            "]",
                                            "{",
                                            "}",
                                            "&",
                                            "*",
                                            "!",
                                            "|",
                                            ">",
                                            "'",
                                            "\"",
                                            "%",
                                            "@",
                                            "`",
                                            "\\",
                                            "\n",
                                            "\t",
                                            "\r",
                                            "\x01",
                                            "\x7f",
                                            "null",
                                            "~",
                                            "true",
                                            "False",
                                            "yes",
                                            "on",
                                            "1",
                                            "-2",
                                            "0x1F",
                                            "0o7",
                                            "1.5",
                                            ".inf",
                                            ".nan",
                                            "1e3",
                                            "...",
                                            "---",
                                            "<<",
                                            "\xC3\xA9",
                                            "\xE2\x80\xA8",
                                            "\xC2\x85",
                                            "\xEF\xBB\xBF",
                                            "\xF0\x9F\x98\x80",
                                            "k8s.io/v1",
                                            "0.9.4",
                                            "=",
                                            "x: y",
                                            "a#b"};
        constexpr int n = sizeof parts / sizeof parts[0];
        std::string s;
        const int count = uniform(4);
        for (int i = 0; i < count; ++i) {
            const int p = uniform(n + 1);
            if (p == n)
                s += std::string(1, '\0'); // NUL cannot be in a C string literal
            else
                s += parts[p];
        }
        return s;
    }

    Node string_node() { return Node::string(text()); }

    std::mt19937 rng_;
};

TEST(RoundTrip, RandomTreesThroughJson) {
    RandomTrees gen(20240601);
    for (int i = 0; i < 400; ++i) {
        Node a = gen.tree(5);
        for (int indent : {0, 4}) {
            JsonStyle st;
            st.indent = indent;
            st.escape_html = (i % 2) == 0;
            const std::string j = to_json(a, st);
            auto r = parse_json(j, "rt.json");
            ASSERT_TRUE(r.ok()) << r.error().str() << "\n" << j;
            ASSERT_EQ(r->size(), 1u);
            EXPECT_EQ(r->front().root, a) << j;
        }
    }
}

TEST(RoundTrip, RandomTreesThroughYaml) {
    RandomTrees gen(77);
    for (int i = 0; i < 400; ++i) {
        Node a = gen.tree(5);
        YamlStyle st;
        st.indent_sequences = (i % 2) == 0;
        st.indent = (i % 3) == 0 ? 4 : 2;
        st.sort_keys = (i % 5) == 0;
        const std::string y = to_yaml(a, st);
        auto r = parse_yaml(y, "rt.yaml");
        ASSERT_TRUE(r.ok()) << r.error().str() << "\n" << y;
        ASSERT_EQ(r->size(), 1u) << y;
        EXPECT_EQ(r->front().root, a) << y;
    }
}

// ---------------------------------------------------------------------------------------------
// Node

TEST(NodeApi, KindNames) {
    EXPECT_STREQ(kind_name(Kind::null), "null");
    EXPECT_STREQ(kind_name(Kind::boolean), "boolean");
    EXPECT_STREQ(kind_name(Kind::integer), "integer");
    EXPECT_STREQ(kind_name(Kind::floating), "number");
    EXPECT_STREQ(kind_name(Kind::string), "string");
    EXPECT_STREQ(kind_name(Kind::sequence), "list");
    EXPECT_STREQ(kind_name(Kind::mapping), "object");
}

TEST(NodeApi, GetAndEntry) {
    Node n = yaml("a: 1\nb:\n  c: x\n");
    ASSERT_NE(n.get("a"), nullptr);
    EXPECT_EQ(n.get("a")->text, "1");
    EXPECT_EQ(n.get("zz"), nullptr);
    EXPECT_EQ(n.get("b")->get("c")->text, "x");
    EXPECT_EQ(n.get("a")->get("x"), nullptr); // not a map
    ASSERT_NE(n.entry("b"), nullptr);
    EXPECT_EQ(n.entry("b")->key_mark.line, 2u);
    EXPECT_EQ(n.entry("nope"), nullptr);
    Node* m = n.get("b");
    m->set("d", Node::string("y"));
    EXPECT_EQ(n.get("b")->get("d")->text, "y");
}

TEST(NodeApi, AsBool) {
    EXPECT_EQ(Node::boolean(true).as_bool(), true);
    EXPECT_EQ(scalar(Kind::boolean, "False").as_bool(), false);
    EXPECT_EQ(scalar(Kind::boolean, "TRUE").as_bool(), true);
    EXPECT_FALSE(Node::string("true").as_bool().has_value());
    EXPECT_FALSE(scalar(Kind::boolean, "yes").as_bool().has_value());
    EXPECT_FALSE(Node::integer(1).as_bool().has_value());
}

TEST(NodeApi, AsInt) {
    struct Case {
        const char* text;
        std::optional<std::int64_t> value;
    };
    const std::vector<Case> cases = {
        {"0", 0},
        {"-0", 0},
        {"42", 42},
        {"+42", 42},
        {"-42", -42},
        {"007", 7},
        {"0x1F", 31},
        {"0x1f", 31},
        {"0o17", 15},
        {"-0x10", -16},
        {"9223372036854775807", INT64_MAX},
        {"-9223372036854775808", INT64_MIN},
        {"9223372036854775808", std::nullopt},
        {"-9223372036854775809", std::nullopt},
        {"0x7FFFFFFFFFFFFFFF", INT64_MAX},
        {"0x8000000000000000", std::nullopt},
        {"0xFFFFFFFFFFFFFFFFF", std::nullopt},
        {"99999999999999999999999", std::nullopt},
        {"", std::nullopt},
        {"1.5", std::nullopt},
        {"0x", std::nullopt},
        {"0o8", std::nullopt},
        {"12a", std::nullopt},
    };
    for (const Case& c : cases)
        EXPECT_EQ(scalar(Kind::integer, c.text).as_int(), c.value) << c.text;
    EXPECT_FALSE(Node::string("1").as_int().has_value());
    EXPECT_FALSE(scalar(Kind::floating, "1").as_int().has_value());
    EXPECT_EQ(Node::integer(INT64_MIN).as_int(), INT64_MIN);
}

TEST(NodeApi, AsDouble) {
    EXPECT_EQ(scalar(Kind::floating, "1.5").as_double(), 1.5);
    EXPECT_EQ(scalar(Kind::floating, ".5").as_double(), 0.5);
    EXPECT_EQ(scalar(Kind::floating, "-1.").as_double(), -1.0);
    EXPECT_EQ(scalar(Kind::floating, "+2e3").as_double(), 2000.0);
    EXPECT_EQ(scalar(Kind::floating, ".inf").as_double(), HUGE_VAL);
    EXPECT_EQ(scalar(Kind::floating, "-.Inf").as_double(), -HUGE_VAL);
    EXPECT_TRUE(std::isnan(*scalar(Kind::floating, ".NAN").as_double()));
    EXPECT_FALSE(scalar(Kind::floating, "1e400").as_double().has_value());
    EXPECT_EQ(scalar(Kind::floating, "1e-400").as_double(), 0.0);
    EXPECT_EQ(scalar(Kind::floating, "0.0000000000000000000000000000000000000000000000000000"
                                     "00000000000000000000000000000000000000000000000000000000"
                                     "00000000000000000000000000000000000000000000000000000000"
                                     "00000000000000000000000000000000000000000000000000000000"
                                     "00000000000000000000000000000000000000000000000000000000"
                                     "00000000000000000000000000000000000000000000000000000000"
                                     "000000000000000000000000000000000000000001")
                  .as_double(),
              0.0);
    EXPECT_FALSE(scalar(Kind::floating, "inf").as_double().has_value());
    EXPECT_FALSE(scalar(Kind::floating, "0x1p3").as_double().has_value());
    EXPECT_FALSE(scalar(Kind::floating, "").as_double().has_value());
    EXPECT_EQ(scalar(Kind::integer, "0x10").as_double(), 16.0);
    EXPECT_EQ(scalar(Kind::integer, "100000000000000000000").as_double(), 1e20);
    EXPECT_FALSE(Node::string("1.5").as_double().has_value());
}

TEST(NodeApi, Builders) {
    Node s = Node::string("x");
    EXPECT_EQ(s.kind, Kind::string);
    EXPECT_EQ(s.text, "x");
    EXPECT_EQ(s.mark.line, 0u);
    EXPECT_EQ(Node::integer(-5).text, "-5");
    EXPECT_EQ(Node::boolean(true).text, "true");
    EXPECT_TRUE(Node::map().is_map());
    EXPECT_TRUE(Node::seq().is_seq());
    EXPECT_TRUE(Node{}.is_null());

    Node m = Node::map();
    Node& v = m.set("a", Node::integer(1));
    v.text = "2";
    m.set("b", Node::integer(3));
    m.set("a", Node::integer(4)); // replaces in place
    ASSERT_EQ(m.fields.size(), 2u);
    EXPECT_EQ(m.fields[0].key, "a");
    EXPECT_EQ(m.fields[0].value.text, "4");

    Node q = Node::seq();
    q.push(Node::string("x")).text += "y";
    EXPECT_EQ(q.items[0].text, "xy");

    Node n; // null turns into a map or list on first use
    n.set("k", Node{});
    EXPECT_TRUE(n.is_map());
    Node l;
    l.push(Node{});
    EXPECT_TRUE(l.is_seq());
    EXPECT_EQ(l.items.size(), 1u);
}

TEST(NodeApi, Equality) {
    EXPECT_EQ(yaml("a: 1"), json("{\"a\": 1}"));
    EXPECT_EQ(scalar(Kind::integer, "0x1F"), Node::integer(31));
    EXPECT_EQ(scalar(Kind::integer, "+5"), Node::integer(5));
    EXPECT_EQ(scalar(Kind::integer, "-0"), Node::integer(0));
    EXPECT_EQ(scalar(Kind::floating, "1.0"), scalar(Kind::floating, "1."));
    EXPECT_EQ(scalar(Kind::floating, ".nan"), scalar(Kind::floating, ".NaN"));
    EXPECT_EQ(scalar(Kind::boolean, "True"), Node::boolean(true));
    EXPECT_EQ(scalar(Kind::null, "~"), Node{});
    EXPECT_FALSE(scalar(Kind::floating, "1.0") == Node::integer(1));
    EXPECT_FALSE(Node::string("1") == Node::integer(1));
    EXPECT_FALSE(Node::boolean(true) == Node::boolean(false));
    EXPECT_EQ(yaml("{a: 1, b: 2}"), yaml("{b: 2, a: 1}")); // mappings: order does not matter
    EXPECT_FALSE(yaml("[1, 2]") == yaml("[2, 1]"));        // sequences: it does
    EXPECT_FALSE(yaml("{a: 1}") == yaml("{a: 1, b: 2}"));
    EXPECT_FALSE(yaml("{a: 1, b: 2}") == yaml("{a: 1, c: 2}"));
    EXPECT_FALSE(Node::map() == Node::seq());
    Node x = yaml("a: [1, {b: c}]");
    Node y = yaml("\n\n  a:\n    - 1\n    - b: c\n");
    EXPECT_EQ(x, y); // marks differ
}

TEST(NodeApi, PosOf) {
    SourcePos p = pos_of("f.yaml", Mark{3, 7}, 2);
    EXPECT_EQ(p.file, "f.yaml");
    EXPECT_EQ(p.line, 3u);
    EXPECT_EQ(p.column, 7u);
    EXPECT_EQ(p.document, 2);
    EXPECT_EQ(p.str(), "f.yaml:3:7");
    EXPECT_EQ(pos_of("f.yaml", Mark{}).str(), "f.yaml");
    EXPECT_EQ(pos_of("f.yaml", Mark{}).document, -1);
}

} // namespace
} // namespace kpkg::io

// kpkg version -o yaml: the fields in the documented order, a library's detail only when set.
TEST(AboutDocument, FieldsInOrderDetailOnlyWhenSet) {
    kpkg::About a;
    a.version = "1.2.3";
    a.compiler = "gcc 12";
    a.build_type = "release";
    a.components.push_back({"libsolv", "0.7.23", "on demand", ""});
    a.components.push_back({"libcurl", "", "missing", "not found"});
    EXPECT_EQ(kpkg::io::to_yaml(kpkg::io::about_document(a)), "version: 1.2.3\n"
                                                              "compiler: gcc 12\n"
                                                              "buildType: release\n"
                                                              "libraries:\n"
                                                              "- name: libsolv\n"
                                                              "  version: 0.7.23\n"
                                                              "  linkage: on demand\n"
                                                              "- name: libcurl\n"
                                                              "  version: \"\"\n"
                                                              "  linkage: missing\n"
                                                              "  detail: not found\n");
}
