// The fast YAML reader (src/io/yaml_fast.cpp) against libfyaml: for every text, reading with and
// without it must give the same events or the same error. Inputs: the fixtures, the corpus (each
// document of each YAML file), tricky snippets, and random mutations of real documents.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "../../src/io/yaml_fast.hpp"
#include "kpkg/io/events.hpp"
#include "support/support.hpp"

namespace kpkg::io {
namespace {

namespace fs = std::filesystem;

class Trace final : public EventHandler {
public:
    std::string out;
    void reset() override { out.clear(); }
    void document_start(int index, Mark m) override {
        add(std::string("D").append(std::to_string(index)), m);
    }
    void document_end() override { out += "/D\n"; }
    void mapping_start(Mark m) override { add("{", m); }
    void mapping_end() override { out += "}\n"; }
    void sequence_start(Mark m) override { add("[", m); }
    void sequence_end() override { out += "]\n"; }
    void key(const ScalarEvent& k) override { add("K " + describe(k), k.mark); }
    void scalar(const ScalarEvent& s) override { add("S " + describe(s), s.mark); }

private:
    static std::string describe(const ScalarEvent& s) {
        return std::string(kind_name(s.kind)) + (s.plain ? " plain" : "") +
               (s.tagged ? " tagged" : "") + (s.empty ? " empty" : "") + " <" +
               std::string(s.text) + ">";
    }
    void add(const std::string& what, Mark m) {
        out += what + " @" + std::to_string(m.line) + ":" + std::to_string(m.column) + "\n";
    }
};

std::string read(const std::string& text, bool fast, std::uint32_t line_offset = 0) {
    Trace t;
    YamlEventOptions o;
    o.fast = fast;
    o.line_offset = line_offset;
    o.first_document_only = true;
    auto r = read_yaml_events(text, "t.yaml", t, {}, o);
    if (!r.ok()) return "ERROR " + r.error().str();
    return t.out;
}

// Whether the fast reader takes the text (rather than leaving it to libfyaml).
bool fast_takes(const std::string& text) {
    Trace t;
    return detail::read_yaml_fast(text, t, {}, 0, 0);
}

// The documents of a YAML file, cut at "---" lines as the catalog loader cuts them, with the
// line each starts on.
std::vector<std::pair<std::string, std::uint32_t>> documents(const std::string& text) {
    std::vector<std::pair<std::string, std::uint32_t>> out;
    std::string cur;
    std::uint32_t line = 0, start = 0;
    std::size_t p = 0;
    while (p <= text.size()) {
        std::size_t nl = text.find('\n', p);
        if (nl == std::string::npos) nl = text.size();
        const std::string l = text.substr(p, nl - p);
        if (l.rfind("---", 0) == 0) {
            if (!cur.empty()) out.emplace_back(cur, start);
            cur.clear();
            start = line + 1;
        } else if (nl < text.size()) {
            cur += l + "\n";
        } else {
            cur += l;
        }
        ++line;
        p = nl + 1;
    }
    if (!cur.empty()) out.emplace_back(cur, start);
    return out;
}

std::vector<fs::path> yaml_files() {
    std::vector<fs::path> roots = {test::testdata("")};
    if (auto corpus = test::corpus_dir()) roots.push_back(*corpus);
    std::vector<fs::path> out;
    for (const auto& root : roots)
        for (auto it = fs::recursive_directory_iterator(root);
             it != fs::recursive_directory_iterator(); ++it) {
            const auto ext = it->path().extension();
            if (it->is_regular_file() && (ext == ".yaml" || ext == ".yml"))
                out.push_back(it->path());
        }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(YamlFast, SameEventsAsLibfyamlOnEveryRealDocument) {
    std::size_t docs = 0, taken = 0;
    for (const auto& f : yaml_files()) {
        const std::string text = test::read_file(f);
        for (const auto& [doc, line] : documents(text)) {
            ++docs;
            if (fast_takes(doc)) ++taken;
            const std::string slow = read(doc, false, line);
            const std::string fast = read(doc, true, line);
            ASSERT_EQ(fast, slow) << f << " at line " << line + 1;
        }
    }
    EXPECT_GT(docs, 100u);
    // Most real documents are in the style the fast reader takes.
    EXPECT_GT(taken * 10, docs * 8) << taken << " of " << docs;
}

TEST(YamlFast, SameEventsOnTrickySnippets) {
    const std::vector<std::string> cases = {
        "a: 1\n",
        "a: 1",
        "a:\n",
        "a:\nb: 2\n",
        "a:\n  b: 2\n",
        "a:\n- x\n- y\nb: 1\n",
        "a:\n  - x\n  - y\n",
        "- a\n- b\n",
        "- a: 1\n  b: 2\n- c: 3\n",
        "- - a\n",
        "-\n  a: 1\n",
        "- \n- b\n",
        "key with spaces: value with spaces  # comment\n",
        "a: 'single ''quoted'''\nb: \"double \\\"q\\\" \\n \\t \\u00e9 \\x41\"\n",
        "\"quoted key\": 1\n'other': 2\n",
        "a: |\n  line 1\n\n  line 3\n",
        "a: |-\n  text\n\n\nb: 1\n",
        "a: |+\n  text\n\n\nb: 1\n",
        "a: |\n\n  after a blank\n",
        "a: |\n  x\n    more\n  y\n",
        "a: |\n    deep\n  shallow\n",
        "a: |2\n   x\n",
        "a: >\n  folded\n  text\n",
        "a: |\n  # not a comment\nb: 1\n",
        "a: |\n  x\n# comment\nb: 1\n",
        "a: |\n  no final break",
        "a: |\nb: 1\n",
        "a: b: c\n",
        "a: b\n  c\n",
        "a: b\n  # comment\nc: d\n",
        "a: {b: 1, c: [x, \"y\", 'z'], d: {}}\n",
        "a: [a, b, ]\n",
        "a: [a: b]\n",
        "a: {b}\n",
        "a: [\n  b\n]\n",
        "a: {\"b\":1}\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "? a\n: b\n",
        "a:  \n  - x\n",
        "a: 1\n b: 2\n",
        "a: 1\n- b\n",
        "  a: 1\n  b: 2\n",
        "# only a comment\n",
        "",
        "\n\n",
        "plain root scalar\n",
        "- x\ny: 1\n",
        "a: yes\nb: 0777\nc: 1.5e3\nd: null\ne: ~\nf: -1\ng: -x\n",
        "a: http://example.com/x?y=1#frag\n",
        "a: b #c\n",
        "a: b#c\n",
        "a:\tb\n",
        "a: b\r\n",
        "a: 'unclosed\n",
        "a: \"bad \\q escape\"\n",
        "%YAML 1.2\n---\na: 1\n",
        "a: 1\n---\nb: 2\n",
        "a: 1\n...\n",
        "a: [1, 2]\n  extra: 3\n",
        "a:\n  b: 1\n c: 2\n",
        "a: |\n  \xc3\xa9t\xc3\xa9\n",
        "desc: \"line \\\n  continued\"\n",
        "a: -\n",
        "a: - b\n",
        "a: :b\n",
        "a: x:y\n",
        "- a: |\n    text\n  b: 1\n",
        "a:\n  |\n  text\n",
        "a: \"\"\nb: ''\n",
        "dup: 1\ndup: 2\n",
    };
    for (const auto& c : cases)
        EXPECT_EQ(read(c, true), read(c, false)) << "input: " << c;
}

TEST(YamlFast, SameEventsOnMutatedDocuments) {
    // Random small edits of real documents: whatever the fast reader takes, it must read as
    // libfyaml does (the edits make many of them invalid: then both must fail alike).
    std::vector<std::string> seeds;
    for (const auto& f : yaml_files()) {
        const std::string text = test::read_file(f);
        for (const auto& [doc, line] : documents(text))
            if (doc.size() < 4000 && fast_takes(doc)) seeds.push_back(doc);
        if (seeds.size() > 300) break;
    }
    ASSERT_FALSE(seeds.empty());
    std::mt19937 rng(20261123);
    const std::string alphabet = " \n-:#'\"|>[]{},&*!?abc0.\\";
    int compared = 0;
    for (int round = 0; round < 4000; ++round) {
        std::string doc = seeds[rng() % seeds.size()];
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits && !doc.empty(); ++e) {
            const std::size_t at = rng() % doc.size();
            switch (rng() % 4) {
            case 0:
                doc.erase(at, 1);
                break;
            case 1:
                doc.insert(at, 1, alphabet[rng() % alphabet.size()]);
                break;
            case 2:
                doc[at] = alphabet[rng() % alphabet.size()];
                break;
            default: { // indent or dedent a line
                const std::size_t ls =
                    doc.rfind('\n', at) == std::string::npos ? 0 : doc.rfind('\n', at) + 1;
                if (rng() % 2 == 0)
                    doc.insert(ls, "  ");
                else if (doc.compare(ls, 1, " ") == 0)
                    doc.erase(ls, 1);
            }
            }
        }
        const std::string fast = read(doc, true);
        const std::string slow = read(doc, false);
        ASSERT_EQ(fast, slow) << "input:\n" << doc;
        ++compared;
    }
    EXPECT_EQ(compared, 4000);
}

} // namespace
} // namespace kpkg::io
