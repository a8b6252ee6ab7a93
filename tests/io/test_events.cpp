// read_yaml_events and read_json_events: the event streams the Node readers and the catalog
// loader are built on.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kpkg/io/events.hpp"
#include "support/support.hpp"

namespace kpkg::io {
namespace {

// Writes every event as a line: "D0 1:1", "{ 1:1", "k name 1:1", "s string name 1:7", "}", "/D".
class Trace final : public EventHandler {
public:
    std::vector<std::string> lines;
    int resets = 0;
    void reset() override {
        ++resets;
        lines.clear();
    }
    void document_start(int index, Mark m) override {
        lines.push_back(std::string("D").append(std::to_string(index)).append(" ").append(at(m)));
    }
    void document_end() override { lines.push_back("/D"); }
    void mapping_start(Mark m) override { lines.push_back("{ " + at(m)); }
    void mapping_end() override { lines.push_back("}"); }
    void sequence_start(Mark m) override { lines.push_back("[ " + at(m)); }
    void sequence_end() override { lines.push_back("]"); }
    void key(const ScalarEvent& k) override {
        lines.push_back("k " + std::string(k.text) + " " + at(k.mark));
    }
    void scalar(const ScalarEvent& s) override {
        std::string l =
            std::string("s ") + kind_name(s.kind) + " " + std::string(s.text) + " " + at(s.mark);
        if (s.plain) l += " plain";
        if (s.empty) l += " empty";
        lines.push_back(l);
    }

private:
    static std::string at(Mark m) {
        return std::to_string(m.line) + ":" + std::to_string(m.column);
    }
};

std::vector<std::string> yaml(const std::string& text, const YamlEventOptions& o = {}) {
    Trace t;
    auto r = read_yaml_events(text, "t.yaml", t, {}, o);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
    return t.lines;
}

TEST(YamlEvents, MappingsSequencesAndTypedScalars) {
    const std::vector<std::string> expected = {"D0 1:1",
                                               "{ 1:1",
                                               "k a 1:1",
                                               "s integer 1 1:4 plain",
                                               "k b 2:1",
                                               "[ 2:4",
                                               "s string x 2:5 plain",
                                               "s string y 2:8",
                                               "]",
                                               "k c 3:1",
                                               "s null  3:1 plain empty",
                                               "}",
                                               "/D"};
    EXPECT_EQ(yaml("a: 1\nb: [x, 'y']\nc:\n"), expected);
}

TEST(YamlEvents, AliasesReplayTheirAnchor) {
    const auto lines = yaml("a: &x {k: v}\nb: *x\n");
    const std::vector<std::string> expected = {"D0 1:1",
                                               "{ 1:1",
                                               "k a 1:1",
                                               "{ 1:4",
                                               "k k 1:8",
                                               "s string v 1:11 plain",
                                               "}",
                                               "k b 2:1",
                                               "{ 2:4",
                                               "k k 1:8",
                                               "s string v 1:11 plain",
                                               "}",
                                               "}",
                                               "/D"};
    EXPECT_EQ(lines, expected);
    // An aliased scalar as a key.
    const auto keys = yaml("- &k name\n- {*k : v}\n");
    EXPECT_NE(std::find(keys.begin(), keys.end(), "k name 2:4"), keys.end());
}

TEST(YamlEvents, FirstDocumentOnlyAndOffsets) {
    YamlEventOptions o;
    o.line_offset = 10;
    o.document_offset = 3;
    o.first_document_only = true;
    // The second document is never parsed (it would not parse).
    const auto lines = yaml("a: b\n---\n[unclosed\n", o);
    const std::vector<std::string> expected = {
        "D3 11:1", "{ 11:1", "k a 11:1", "s string b 11:4 plain", "}", "/D"};
    EXPECT_EQ(lines, expected);
    Trace t;
    auto r = read_yaml_events("a: [b\n", "t.yaml", t, {}, o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().pos.line, 12u) << r.error().str();
}

TEST(YamlEvents, HandlerExceptionsStopTheRead) {
    class Stop final : public EventHandler {
    public:
        void document_start(int, Mark) override {}
        void document_end() override {}
        void mapping_start(Mark) override {}
        void mapping_end() override {}
        void sequence_start(Mark) override {}
        void sequence_end() override {}
        void key(const ScalarEvent& k) override {
            if (k.text == "stop") throw Exception(Error::invalid("stopped", {"t.yaml", 1, 1}));
        }
        void scalar(const ScalarEvent&) override {}
    } h;
    auto r = read_yaml_events("a: 1\nstop: 2\n", "t.yaml", h);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "stopped");
    auto j = read_json_events(R"({"a": 1, "stop": 2})", "t.json", h);
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.error().message, "stopped");
}

TEST(YamlEvents, WorkAroundsRestartTheHandler) {
    // libfyaml needs a second pass for an empty item of an unindented list (see yaml_load.cpp).
    Trace t;
    auto r = read_yaml_events("a:\n-\n- b\n", "t.yaml", t);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_GE(t.resets, 1);
    EXPECT_EQ(t.lines.front(), "D0 1:1");
    EXPECT_EQ(std::count(t.lines.begin(), t.lines.end(), "/D"), 1);
}

TEST(JsonEvents, ValuesAndProgress) {
    Trace t;
    JsonProgress p;
    auto r = read_json_events("{\"a\": [1, true, null]}\n\"s\"\n", "t.json", t, {}, &p);
    ASSERT_TRUE(r.ok()) << r.error().str();
    const std::vector<std::string> expected = {"D0 1:1",
                                               "{ 1:1",
                                               "k a 1:2",
                                               "[ 1:7",
                                               "s integer 1 1:8",
                                               "s boolean true 1:11",
                                               "s null null 1:17",
                                               "]",
                                               "}",
                                               "/D",
                                               "D1 2:1",
                                               "s string s 2:1",
                                               "/D"};
    EXPECT_EQ(t.lines, expected);
    EXPECT_EQ(p.values, 2);
    Trace u;
    auto bad = read_json_events("{\"a\": 1}\n  {\"b\": }", "t.json", u, {}, &p);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(p.values, 1);
    EXPECT_EQ(p.value_end, 8u);
    EXPECT_EQ(p.failed_value, 11u);
    EXPECT_EQ(bad.error().pos.line, 2u);
}

TEST(JsonEvents, EscapedAndPlainStrings) {
    Trace t;
    auto r = read_json_events(R"({"k\u00e9": "a\nb", "p": "plain"})", "t.json", t);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(t.lines[2], "k k\xC3\xA9 1:2");
    EXPECT_EQ(t.lines[3], "s string a\nb 1:13");
    EXPECT_EQ(t.lines[5], "s string plain 1:26");
}

} // namespace
} // namespace kpkg::io
