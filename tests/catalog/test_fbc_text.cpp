// How a catalog file's text is read (src/catalog/fbc_text.hpp and the YAML rules of opm's
// decoder): the catalog loader (list, validate) and `catalog render` must give the same verdict
// on the same file, the verdict opm gives.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/render.hpp"
#include "kpkg/io/go.hpp"
#include "support/support.hpp"

using namespace kpkg;
namespace fs = std::filesystem;

namespace {

const std::string kNbsp = "\xC2\xA0";     // U+00A0
const std::string kEmSp = "\xE2\x80\x83"; // U+2003

std::string pkg(const std::string& name) {
    return "schema: olm.package\nname: " + name + "\n";
}

// A blob of a schema kpkg does not model (valid on its own, unlike a package without channels).
std::string blob(const std::string& name) {
    return "schema: x.y\nname: " + name + "\n";
}

model::Catalog load_text(const std::string& name, const std::string& content) {
    test::TempDir d;
    d.write("c/" + name, content);
    return catalog::load_catalog(d / "c").take();
}

std::string problems_text(const model::Catalog& c) {
    std::string out;
    for (const auto& f : c.problems)
        out += f.pos.str() + ": " + f.message + " [" + f.rule + "]\n";
    return out;
}

Result<std::string> render_text(const std::string& name, const std::string& content) {
    test::TempDir d;
    d.write("c/" + name, content);
    catalog::RenderOptions o;
    return catalog::render_to_string({(d / "c").string()}, o);
}

// The names of the packages of a render's JSON output, in order.
std::vector<std::string> rendered_names(const std::string& json) {
    std::vector<std::string> out;
    for (std::size_t p = 0; (p = json.find("\"name\": \"", p)) != std::string::npos;) {
        p += 9;
        out.push_back(json.substr(p, json.find('"', p) - p));
    }
    return out;
}

struct Case {
    const char* what;
    std::string text;
    bool valid; // opm's verdict
};

// Separators (and what looks like them) as opm reads them: Go's white space after "---", a
// separator line kept as a document start marker when no text is gathered yet.
std::vector<Case> separator_cases() {
    return {
        {"no-break space after ---", blob("a") + "---" + kNbsp + "\n" + blob("b"), true},
        {"em space and comment after ---", blob("a") + "---" + kEmSp + "# c\n" + blob("b"), true},
        {"CRLF separator", blob("a") + "---\r\n" + blob("b"), true},
        {"--- first, then a document", "---\n" + blob("a") + "---\n" + blob("b"), true},
        {"two --- in the middle", blob("a") + "---\n---\n" + blob("b"), true},
        {"one --- at the end", blob("a") + "---\n", true},
        {"no-break space then text after ---", blob("a") + "---" + kNbsp + "x\n" + blob("b"),
         false},
        {"text after ---", blob("a") + "--- x\n" + blob("b"), false},
        {"a file of only ---", "---\n", false},
        {"--- twice at the start", "---\n---\n" + blob("a"), false},
        {"--- twice at the end", blob("a") + "---\n---\n", false},
        {"three --- in a row", blob("a") + "---\n---\n---\n" + blob("b"), false},
        {"--- with a no-break space at the start", "---" + kNbsp + "\n" + blob("a"), false},
        {"--- directly followed by a comment at the start", "---#c\n" + blob("a"), false},
        {"comment before the first ---", "# c\n---\n" + blob("a"), false},
    };
}

} // namespace

// The same hostile files through validate, render and list: one verdict, opm's.
TEST(CatalogFileText, HostileSeparatorsGetOneVerdictFromValidateRenderAndList) {
    for (const Case& c : separator_cases()) {
        test::TempDir t;
        t.write("c/x.yaml", c.text);
        const std::string dir = (t / "c").string();
        const std::vector<std::string> env = {"KPKG_NO_CACHE=1"};
        // The blobs are of a schema kpkg does not model: no package, which validate accepts
        // only when told to (the verdict on the separators is what is compared).
        const auto v = test::run_kpkg({"catalog", "validate", "--allow-empty", dir}, {}, env);
        const auto r = test::run_kpkg({"catalog", "render", dir}, {}, env);
        const auto l = test::run_kpkg({"catalog", "list", "packages", dir}, {}, env);
        const int want = c.valid ? 0 : 3;
        EXPECT_EQ(v.exit_code, want) << c.what << "\n" << v.out << v.err;
        EXPECT_EQ(r.exit_code, want) << c.what << "\n" << r.err;
        EXPECT_EQ(l.exit_code, want) << c.what << "\n" << l.out << l.err;
        if (c.valid) {
            EXPECT_EQ(rendered_names(r.out).size(),
                      c.text.find("name: b") == std::string::npos ? 1u : 2u)
                << c.what << "\n"
                << r.out;
        } else {
            EXPECT_EQ(r.out, "") << c.what;
        }
    }
}

TEST(CatalogFileText, SeparatorOnlyDocumentsAreBlobsWithoutSchema) {
    auto c = load_text("x.yaml", pkg("a") + "---\n---\n");
    ASSERT_EQ(c.problems.size(), 1u) << problems_text(c);
    EXPECT_EQ(c.problems[0].pos.line, 4u);
    EXPECT_NE(c.problems[0].message.find("only a \"---\" line"), std::string::npos);
    EXPECT_EQ(c.packages.size(), 1u);
    auto r = render_text("x.yaml", "---\n");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(r.error().pos.line, 1u);
    EXPECT_NE(r.error().message.find("only a \"---\" line"), std::string::npos);
}

// yaml.v2 reads the first node of a document: what follows a top-level flow mapping in the same
// document is ignored by opm; the loader and render both read the mapping (and render says so).
TEST(CatalogFileText, ContentAfterATopLevelFlowMappingIsReadAsOpmReadsIt) {
    const std::string text = "---\n{schema: olm.package, name: a}\nschema: olm.package\nname: b\n";
    auto c = load_text("x.yaml", text);
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    ASSERT_EQ(c.packages.size(), 1u);
    EXPECT_EQ(c.str(c.packages[0].name), "a");
    auto r = render_text("x.yaml", text);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ(rendered_names(*r), std::vector<std::string>{"a"});
    test::TempDir t;
    t.write("c/x.yaml", text);
    const auto cli = test::run_kpkg({"catalog", "render", (t / "c").string()});
    EXPECT_EQ(cli.exit_code, 0) << cli.err;
    EXPECT_NE(cli.err.find("opm ignores the rest"), std::string::npos) << cli.err;
}

// A JSON stream behind a byte order mark is not JSON to opm (the mark is not white space): it is
// one YAML document, whose first flow mapping is the only blob.
TEST(CatalogFileText, JsonAfterAByteOrderMarkIsReadAsYaml) {
    const std::string text = "\xEF\xBB\xBF{\"schema\": \"olm.package\", \"name\": \"a\"}\n"
                             "{\"schema\": \"olm.package\", \"name\": \"b\"}\n";
    auto c = load_text("x.json", text);
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    ASSERT_EQ(c.packages.size(), 1u);
    auto r = render_text("x.json", text);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ(rendered_names(*r), std::vector<std::string>{"a"});
}

// yaml.v2 does not look further than 1024 characters for the ':' of a key.
TEST(CatalogFileText, KeysLongerThan1024CharactersAreAnError) {
    const std::string ok = pkg("a") + std::string(1024, 'k') + ": v\n";
    const std::string bad = pkg("a") + std::string(1025, 'k') + ": v\n";
    EXPECT_TRUE(load_text("x.yaml", ok).problems.empty());
    EXPECT_TRUE(render_text("x.yaml", ok).ok());
    auto c = load_text("x.yaml", bad);
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_EQ(c.problems[0].pos.line, 3u);
    EXPECT_NE(c.problems[0].message.find("longer than 1024"), std::string::npos);
    auto r = render_text("x.yaml", bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().pos.line, 3u);
    EXPECT_NE(r.error().message.find("longer than 1024"), std::string::npos);
    // Quotes count.
    const std::string quoted = pkg("a") + "\"" + std::string(1023, 'k') + "\": v\n";
    EXPECT_EQ(load_text("x.yaml", quoted).problems.size(), 1u);
    EXPECT_FALSE(render_text("x.yaml", quoted).ok());
    // JSON has no such limit.
    const std::string json =
        "{\"schema\":\"olm.package\",\"name\":\"a\",\"" + std::string(2000, 'k') + "\":1}";
    EXPECT_TRUE(load_text("x.json", json).problems.empty());
    EXPECT_TRUE(render_text("x.json", json).ok());
}

TEST(CatalogFileText, BinaryScalarsAreDecoded) {
    auto r = render_text("x.yaml", "schema: x.y\na: !!binary aGVsbG8=\n");
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ(*r, "{\n    \"a\": \"hello\",\n    \"schema\": \"x.y\"\n}\n");
    // The loader sees the decoded text too: a package named by a !!binary scalar.
    auto c = load_text("x.yaml", "schema: olm.package\nname: !!binary aGVsbG8=\n");
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    ASSERT_EQ(c.packages.size(), 1u);
    EXPECT_EQ(c.str(c.packages[0].name), "hello");
    // Not base64: opm fails on it, so do both.
    auto bad = load_text("x.yaml", "schema: x.y\na: !!binary \"a%b\"\n");
    ASSERT_EQ(bad.problems.size(), 1u);
    EXPECT_NE(bad.problems[0].message.find("!!binary"), std::string::npos);
    auto rb = render_text("x.yaml", "schema: x.y\na: !!binary \"a%b\"\n");
    ASSERT_FALSE(rb.ok());
    EXPECT_NE(rb.error().message.find("!!binary"), std::string::npos);
}

// A repeated key: opm keeps the last value; render does too, and warns.
TEST(CatalogFileText, RepeatedKeysKeepTheLastValue) {
    const std::string text = "schema: olm.package\nname: a\nname: b\n";
    auto c = load_text("x.yaml", text);
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    ASSERT_EQ(c.packages.size(), 1u);
    EXPECT_EQ(c.str(c.packages[0].name), "b");
    auto r = render_text("x.yaml", text);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ(rendered_names(*r), std::vector<std::string>{"b"});
    test::TempDir t;
    t.write("c/x.yaml", "schema: x.y\nname: a\nname: b\nx:\n  k: 1\n  k: 2\n");
    const auto cli = test::run_kpkg({"catalog", "render", (t / "c").string()});
    EXPECT_EQ(cli.exit_code, 0) << cli.err;
    EXPECT_NE(cli.out.find("\"k\": 2"), std::string::npos) << cli.out;
    EXPECT_NE(cli.err.find("x.yaml:3:1: repeated key \"name\" (and 1 more repeated keys): the "
                           "last value is used"),
              std::string::npos)
        << cli.err;
}

// Plain YAML keys are typed by YAML 1.1 and spelled as sigs.k8s.io/yaml spells map keys.
TEST(CatalogFileText, PlainKeysAreSpelledAsOpmSpellsThem) {
    auto r = render_text("x.yaml", "schema: x.y\nv:\n  yes: a\n  Off: b\n  1.0: c\n  1e6: d\n"
                                   "  0x1F: e\n  1_000: f\n  0.1: g\n  .inf: h\n  \"yes\": i\n"
                                   "  3.14159265358979: j\n");
    ASSERT_TRUE(r.ok()) << r.error().str();
    for (const char* k : {"\"true\": \"a\"", "\"false\": \"b\"", "\"1\": \"c\"", "\"1e+06\": \"d\"",
                          "\"31\": \"e\"", "\"1000\": \"f\"", "\"0.1\": \"g\"", "\".inf\": \"h\"",
                          "\"yes\": \"i\"", "\"3.1415927\": \"j\""})
        EXPECT_NE(r->find(k), std::string::npos) << k << "\n" << *r;
    // The loader matches fields by the same spelling: "True" is not "name", but "yes" is "true".
    auto c = load_text("x.yaml", "schema: olm.package\nname: a\nyes: 1\ntrue: 2\n");
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    // A null key, or an integer only a uint64 holds, has no JSON form: opm fails.
    for (const char* key : {"~", "null", "18446744073709551615"}) {
        const std::string text = pkg("a") + key + ": 1\n";
        EXPECT_EQ(load_text("x.yaml", text).problems.size(), 1u) << key;
        EXPECT_FALSE(render_text("x.yaml", text).ok()) << key;
    }
}

TEST(CatalogFileText, Float32KeySpelling) {
    auto g = [](double v) {
        std::string s;
        io::go::append_float_g(s, v, 32);
        return s;
    };
    EXPECT_EQ(g(1.0), "1");
    EXPECT_EQ(g(123456), "123456");
    EXPECT_EQ(g(1234567), "1.234567e+06");
    EXPECT_EQ(g(0.0001), "0.0001");
    EXPECT_EQ(g(0.00001), "1e-05");
    EXPECT_EQ(g(-2.5), "-2.5");
    EXPECT_EQ(g(1e100), "+Inf");
    EXPECT_EQ(g(1e21), "1e+21");
}

// Property values keep numbers as Go writes a float64.
TEST(CatalogFileText, PropertyNumbersAreWrittenAsGoWritesAFloat64) {
    auto c = load_text("x.yaml", "schema: olm.bundle\npackage: p\nname: b\nimage: i\n"
                                 "properties:\n  - type: x.y\n    value: 12345678901234567168\n"
                                 "  - type: x.z\n    value: {big: 1e21, small: 0.0000001}\n");
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    ASSERT_EQ(c.properties.size(), 2u);
    EXPECT_EQ(c.str(c.properties[0].json), "12345678901234567000");
    EXPECT_EQ(c.str(c.properties[1].json), "{\"big\":1e+21,\"small\":1e-7}");
}

// One blob of many keys is read in linear time by both readers.
TEST(CatalogFileText, ManyKeysInOneBlobAreFast) {
    std::string text = "schema: x.y\n";
    for (int i = 0; i < 40000; ++i)
        text.append("k").append(std::to_string(i)).append(": 1\n");
    std::string repeated = "schema: x.y\n";
    while (repeated.size() < (1u << 20))
        repeated += "k: 1\n";
    for (const std::string* t : {&text, &repeated}) {
        const auto start = std::chrono::steady_clock::now();
        auto c = load_text("x.yaml", *t);
        EXPECT_TRUE(c.problems.empty()) << problems_text(c);
        auto r = render_text("x.yaml", *t);
        EXPECT_TRUE(r.ok());
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
        // Quadratic work took seconds here; linear work takes tens of milliseconds (the bound
        // is loose for slow builds and busy machines).
        EXPECT_LT(ms, 2000) << t->size();
    }
}
