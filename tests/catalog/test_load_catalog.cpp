// load_catalog: the streaming loader of the compact model, opm's loading rules, bad input, the
// thread count, and the binary cache.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <thread>

#include "kpkg/catalog/graph.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/query.hpp"
#include "support/support.hpp"
#include "support/unprivileged.hpp"

using namespace kpkg;
namespace fs = std::filesystem;

namespace {

model::Catalog load_ok(const fs::path& p, catalog::LoadOptions o = {}) {
    auto c = catalog::load_catalog(p, o);
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().str());
    return c.ok() ? std::move(c).take() : model::Catalog{};
}

// The catalog of one file with this content.
model::Catalog load_text(const std::string& name, const std::string& content,
                         catalog::LoadOptions o = {}) {
    test::TempDir d;
    d.write("c/" + name, content);
    return load_ok(d / "c", o);
}

std::string problems_text(const model::Catalog& c) {
    std::string out;
    for (const auto& f : c.problems)
        out += f.pos.str() + ": " + f.message + " [" + f.rule + "]\n";
    return out;
}

// Every string, vector and problem equal, ids included.
void expect_same(const model::Catalog& a, const model::Catalog& b) {
    ASSERT_EQ(a.strings.size(), b.strings.size());
    for (model::Str i = 0; i < a.strings.size(); ++i)
        ASSERT_EQ(a.strings[i], b.strings[i]) << "string " << i;
    EXPECT_EQ(a.files, b.files);
    EXPECT_EQ(a.content_digest, b.content_digest);
    EXPECT_EQ(a.packages, b.packages);
    EXPECT_EQ(a.channels, b.channels);
    EXPECT_EQ(a.bundles, b.bundles);
    EXPECT_EQ(a.deprecations, b.deprecations);
    EXPECT_EQ(a.others, b.others);
    EXPECT_EQ(a.entries, b.entries);
    EXPECT_EQ(a.skips, b.skips);
    EXPECT_EQ(a.properties, b.properties);
    EXPECT_EQ(a.related_images, b.related_images);
    EXPECT_EQ(a.deprecation_entries, b.deprecation_entries);
    ASSERT_EQ(a.problems.size(), b.problems.size());
    for (std::size_t i = 0; i < a.problems.size(); ++i) {
        const auto& x = a.problems[i];
        const auto& y = b.problems[i];
        EXPECT_EQ(x.scope, y.scope);
        EXPECT_EQ(x.rule, y.rule);
        EXPECT_EQ(x.package, y.package);
        EXPECT_EQ(x.channel, y.channel);
        EXPECT_EQ(x.bundle, y.bundle);
        EXPECT_EQ(x.message, y.message);
        EXPECT_EQ(x.pos.str(), y.pos.str());
        EXPECT_EQ(x.pos.document, y.pos.document);
    }
    EXPECT_EQ(a.by_package().size(), b.by_package().size());
}

// Sets the modification time of everything below `root` (and itself) an hour back, so that the
// cache's guard against files modified just before it was written does not apply.
void age(const fs::path& root, int minutes = 60) {
    const auto t = fs::file_time_type::clock::now() - std::chrono::minutes(minutes);
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it)
        fs::last_write_time(it->path(), t);
    fs::last_write_time(root, t);
}

const char* kBundleYaml = R"(---
schema: olm.package
name: a
defaultChannel: stable
---
schema: olm.channel
package: a
name: stable
entries:
  - name: a.v1
---
schema: olm.bundle
package: a
name: a.v1
image: example.com/a:v1
properties:
  - type: olm.package
    value:
      packageName: a
      version: 1.0.0
)";

} // namespace

// --- what is read, as opm reads it ------------------------------------------------------------

TEST(LoadCatalog, SampleCatalogAndPositions) {
    auto c = load_ok(test::testdata("catalog"));
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    EXPECT_EQ(c.packages.size(), 2u);
    EXPECT_EQ(c.channels.size(), 4u);
    EXPECT_EQ(c.bundles.size(), 8u);
    ASSERT_EQ(c.files.size(), 3u);
    EXPECT_NE(c.files[1].find("etcd/catalog.json"), std::string::npos);
    EXPECT_NE(c.files[2].find("vault/catalog.yaml"), std::string::npos);
    EXPECT_EQ(c.content_digest.rfind("sha256:", 0), 0u);
    EXPECT_EQ(c.content_digest.size(), 7u + 64u);
    const model::Channel* fast = nullptr;
    for (const auto& ch : c.channels)
        if (c.str(ch.name) == "fast") fast = &ch;
    ASSERT_NE(fast, nullptr);
    const auto pos = c.source_pos(fast->pos);
    EXPECT_EQ(pos.line, 19u);
    EXPECT_EQ(pos.column, 1u);
    EXPECT_EQ(pos.document, 2);
    EXPECT_EQ(c.source_pos(c.entries_of(*fast)[3].pos).line, 28u);
    EXPECT_EQ(c.source_pos(c.entries_of(*fast)[3].pos).column, 5u);
}

TEST(LoadCatalog, ContentDigestDependsOnContentNotLocation) {
    test::TempDir d;
    fs::copy(test::testdata("catalog"), d / "x", fs::copy_options::recursive);
    fs::copy(test::testdata("catalog"), d / "y", fs::copy_options::recursive);
    const auto a = load_ok(d / "x");
    const auto b = load_ok(d / "y");
    EXPECT_EQ(a.content_digest, b.content_digest);
    d.write("y/vault/catalog.yaml", test::read_file(d / "y/vault/catalog.yaml") + "\n");
    EXPECT_NE(load_ok(d / "y").content_digest, a.content_digest);
    fs::rename(d / "x/vault/catalog.yaml", d / "x/vault/other.yaml");
    EXPECT_NE(load_ok(d / "x").content_digest, a.content_digest);
}

TEST(LoadCatalog, HiddenFilesAreReadAndIndexIgnoreExcludes) {
    // opm reads every file but .indexignore files and what their patterns match.
    test::TempDir d;
    d.write("c/.hidden.yaml", "schema: olm.package\nname: hidden\n");
    d.write("c/.indexignore", "*.md\nskip/\n");
    d.write("c/README.md", "not: [valid");
    d.write("c/skip/x.yaml", "not: [valid");
    d.write("c/a.json", R"({"schema": "olm.package", "name": "a"})");
    auto c = load_ok(d / "c");
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    ASSERT_EQ(c.packages.size(), 2u);
    EXPECT_EQ(c.str(c.packages[0].name), "hidden"); // ".hidden.yaml" sorts first
    EXPECT_EQ(c.str(c.packages[1].name), "a");
}

TEST(LoadCatalog, SingleFileAndStandardInputAndEmptyDirectory) {
    auto one = load_ok(test::testdata("catalog/etcd/catalog.json"));
    EXPECT_EQ(one.bundles.size(), 3u);
    EXPECT_TRUE(one.problems.empty());
    test::TempDir d;
    fs::create_directories(d / "empty");
    auto none = load_ok(d / "empty");
    EXPECT_TRUE(none.packages.empty());
    EXPECT_TRUE(none.problems.empty());
    auto r = catalog::load_catalog(d / "nope");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::error);
}

TEST(LoadCatalog, APipeIsReadAsAStreamAndNotCached) {
    // kpkg catalog list packages <(cmd): a FIFO, not a regular file.
    test::TempDir d;
    const fs::path fifo = d / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] {
        std::ofstream out(fifo);
        out << kBundleYaml;
    });
    catalog::LoadOptions o;
    o.cache_dir = d / "cache";
    auto c = catalog::load_catalog(fifo, o);
    writer.join();
    ASSERT_TRUE(c.ok()) << c.error().str();
    EXPECT_EQ(c->bundles.size(), 1u);
    EXPECT_TRUE(c->problems.empty());
    EXPECT_FALSE(fs::exists(d / "cache/catalog-v1/images"));
}

TEST(LoadCatalog, KeysAreMatchedWithoutRegardToCase) {
    auto c =
        load_text("a.yaml", "Schema: olm.package\nNAME: a\nDefaultChannel: s\n---\n"
                            "schema: olm.bundle\npackage: a\nname: a.v1\nproperties:\n"
                            "  - Type: olm.package\n    Value: {PackageName: a, Version: 1.0.0}\n");
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    ASSERT_EQ(c.packages.size(), 1u);
    EXPECT_EQ(c.str(c.packages[0].name), "a");
    EXPECT_EQ(c.str(c.packages[0].default_channel), "s");
    ASSERT_EQ(c.bundles.size(), 1u);
    EXPECT_EQ(c.str(c.bundles[0].version), "1.0.0");
}

TEST(LoadCatalog, KeysDifferingOnlyInCaseAreAnError) {
    auto c = load_text("a.yaml", "schema: olm.package\nname: a\nName: b\n");
    EXPECT_TRUE(c.packages.empty());
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_EQ(c.problems[0].rule, "catalog.blob");
    EXPECT_NE(c.problems[0].message.find("duplicate keys \"name\" and \"Name\""),
              std::string::npos);
    // The same key twice is not (the last one wins), as with Go's maps.
    auto j = load_text("a.json", R"({"schema": "olm.package", "name": "a", "name": "b"})");
    EXPECT_TRUE(j.problems.empty()) << problems_text(j);
    ASSERT_EQ(j.packages.size(), 1u);
    EXPECT_EQ(j.str(j.packages[0].name), "b");
}

TEST(LoadCatalog, MetaKeysMustBeStrings) {
    auto c = load_text("a.yaml", "schema: olm.package\nname: 7\n---\nschema: olm.package\n"
                                 "name: x\npackage: ~\n");
    EXPECT_TRUE(c.packages.empty());
    ASSERT_EQ(c.problems.size(), 2u) << problems_text(c);
    EXPECT_EQ(c.problems[0].message, "\"name\" must be a string, not number");
    EXPECT_EQ(c.problems[0].pos.line, 2u);
    EXPECT_EQ(c.problems[0].pos.column, 7u);
    EXPECT_EQ(c.problems[1].message, "\"package\" must be a string, not null");
}

TEST(LoadCatalog, UnknownSchemasAreKeptAsOthers) {
    auto c = load_text("a.yaml", "schema: example.com/custom\npackage: a\nname: x\nk: [1, 2]\n"
                                 "properties: 7\n");
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    ASSERT_EQ(c.others.size(), 1u);
    EXPECT_EQ(c.str(c.others[0].schema), "example.com/custom");
    EXPECT_EQ(c.str(c.others[0].package), "a");
    EXPECT_EQ(c.str(c.others[0].name), "x");
}

TEST(LoadCatalog, YamlIsTypedAsYaml11) {
    // yaml.v2: yes/no/on/off are booleans, so opm fails to read them into a string field.
    auto c = load_text("a.yaml", "schema: olm.package\nname: a\ndefaultChannel: yes\n");
    ASSERT_EQ(c.problems.size(), 1u) << problems_text(c);
    EXPECT_EQ(c.problems[0].message,
              "olm.package field \"defaultChannel\" must be a string, not boolean");
    EXPECT_EQ(c.problems[0].rule, "package.field");
    EXPECT_EQ(c.problems[0].package, "a");
    ASSERT_EQ(c.packages.size(), 1u); // kept, with the field empty
    EXPECT_EQ(c.packages[0].default_channel, 0u);
    // Quoted, it is a string.
    auto q = load_text("a.yaml", "schema: olm.package\nname: a\ndefaultChannel: \"yes\"\n");
    EXPECT_TRUE(q.problems.empty()) << problems_text(q);
}

TEST(LoadCatalog, NumbersJsonCannotHoldAreAnError) {
    auto c = load_text("a.yaml", "schema: olm.package\nname: a\nx: .inf\n");
    EXPECT_TRUE(c.packages.empty());
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_NE(c.problems[0].message.find("\".inf\" is a number JSON cannot hold"),
              std::string::npos);
}

TEST(LoadCatalog, ACommentOnlyDocumentIsABlobWithoutSchema) {
    // Kubernetes' YAML reader cuts at "---" lines and hands opm every non-empty piece.
    auto c = load_text("a.yaml", "# a preamble\n---\nschema: olm.package\nname: a\n");
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_EQ(c.problems[0].pos.line, 1u);
    EXPECT_NE(c.problems[0].message.find("only comments or blank lines"), std::string::npos);
    EXPECT_EQ(c.packages.size(), 1u);
    // After the "---", comments are fine, and a single "---" may end the file.
    auto ok = load_text("a.yaml", "---\n# fine\nschema: olm.package\nname: a\n---\n");
    EXPECT_TRUE(ok.problems.empty()) << problems_text(ok);
    EXPECT_EQ(ok.packages.size(), 1u);
    // Two "---" lines with nothing between them at the start: the first is a document of its
    // own (opm's YAML reader hands it on when nothing is gathered yet), without schema.
    auto twice = load_text("a.yaml", "---\n---\n# fine\nschema: olm.package\nname: a\n");
    ASSERT_EQ(twice.problems.size(), 1u) << problems_text(twice);
    EXPECT_EQ(twice.problems[0].pos.line, 1u);
    EXPECT_EQ(twice.packages.size(), 1u);
}

TEST(LoadCatalog, DocumentSeparatorFollowedByContentIsAnError) {
    auto c = load_text("a.yaml", "schema: olm.package\nname: a\n--- {schema: olm.package}\n");
    EXPECT_EQ(c.packages.size(), 1u); // the document before it is read
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_EQ(c.problems[0].rule, "catalog.parse");
    EXPECT_EQ(c.problems[0].pos.line, 3u);
    EXPECT_NE(c.problems[0].message.find("invalid YAML document separator"), std::string::npos);
}

TEST(LoadCatalog, JsonThatDoesNotParseIsReadAsYaml) {
    // A YAML flow mapping starts with '{' too: Kubernetes' decoder tries JSON, then YAML.
    auto c = load_text("a.json", "{schema: olm.package, name: a}\n");
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    ASSERT_EQ(c.packages.size(), 1u);
    // One JSON value, then YAML documents.
    auto mixed = load_text("b.json", "{\"schema\": \"olm.package\", \"name\": \"a\"}\n"
                                     "---\nschema: olm.package\nname: b\n");
    EXPECT_TRUE(mixed.problems.empty()) << problems_text(mixed);
    ASSERT_EQ(mixed.packages.size(), 2u);
    EXPECT_EQ(mixed.str(mixed.packages[1].name), "b");
    // From the third value on, a JSON stream stays JSON: the JSON error is reported.
    auto bad = load_text("c.json", "{\"schema\": \"olm.package\", \"name\": \"a\"}\n"
                                   "{\"schema\": \"olm.package\", \"name\": \"b\"}\n"
                                   "{\"schema\": \"olm.package\", \"name\": }\n");
    EXPECT_EQ(bad.packages.size(), 2u);
    ASSERT_EQ(bad.problems.size(), 1u);
    EXPECT_EQ(bad.problems[0].pos.line, 3u);
    EXPECT_EQ(bad.problems[0].pos.column, 35u);
}

TEST(LoadCatalog, WrongFieldTypesAreReportedAndLeftEmpty) {
    auto c = load_text("a.yaml", R"(---
schema: olm.channel
package: a
name: s
entries:
  - name: a.v1
    skips: a.v0
  - name: a.v2
    replaces: [a.v1]
  - 7
---
schema: olm.bundle
package: a
name: a.v1
image: {x: 1}
relatedImages: [x]
properties: {}
---
schema: olm.package
name: a
icon: {base64data: "not base64!", mediatype: image/png}
---
schema: olm.deprecations
package: a
entries:
  - reference: olm.bundle
    message: 1
)");
    const std::string text = problems_text(c);
    EXPECT_NE(text.find("a.yaml:7:12: olm.channel field \"entries[].skips\" must be a list of "
                        "strings, not string [channel.field]"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("a.yaml:9:15: olm.channel field \"entries[].replaces\" must be a string, "
                        "not list"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("a.yaml:10:5: olm.channel field \"entries[]\" must be an object, not "
                        "number"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("a.yaml:15:8: olm.bundle field \"image\" must be a string, not object"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("olm.bundle field \"relatedImages[]\" must be an object, not string"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("olm.bundle field \"properties\" must be a list, not object"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("olm.package field \"icon.base64data\" is not valid base64"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("olm.deprecations field \"entries[].reference\" must be an object"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("olm.deprecations field \"entries[].message\" must be a string, not "
                        "number"),
              std::string::npos)
        << text;
    // The blobs are kept, the offending fields empty.
    ASSERT_EQ(c.channels.size(), 1u);
    const auto entries = c.entries_of(c.channels[0]);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].skips_count, 0u);
    EXPECT_EQ(entries[1].replaces, 0u);
    ASSERT_EQ(c.bundles.size(), 1u);
    EXPECT_EQ(c.bundles[0].image, 0u);
    for (const auto& f : c.problems)
        if (f.rule == "bundle.field") {
            EXPECT_EQ(f.package, "a");
            EXPECT_EQ(f.bundle, "a.v1");
        }
}

TEST(LoadCatalog, BundlePropertiesAreCheckedAsPropertyParseChecksThem) {
    auto c = load_text("a.yaml", R"(---
schema: olm.bundle
package: a
name: a.v1
properties:
  - type: olm.package
    value: {packageName: a, version: 1.0}
  - type: olm.gvk
    value: [group]
  - type: olm.bundle.object
    value: {data: "!!!"}
  - type: olm.csv.metadata
    value: {keywords: x, installModes: [{type: OwnNamespace, supported: "yes"}]}
  - type: olm.gvk.required
  - type: olm.constraint
    value: {failureMessage: f, cel: {rule: "true"}}
  - type: example.com/free
    value: 1
)");
    const std::string text = problems_text(c);
    EXPECT_NE(text.find("a.yaml:7:38: property[0] olm.package: \"version\" must be a string, not "
                        "number [bundle.property]"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("property[1] olm.gvk: value must be an object, not list"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("property[2] olm.bundle.object: \"data\" is not valid base64"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("property[3] olm.csv.metadata: \"keywords\" must be a list, not string"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("property[4] olm.gvk.required has no value"), std::string::npos) << text;
    EXPECT_EQ(c.problems.size(), 5u) << text;
    ASSERT_EQ(c.bundles.size(), 1u);
    // The malformed ones are left out; the others kept, with their JSON.
    const auto props = c.properties_of(c.bundles[0]);
    ASSERT_EQ(props.size(), 2u);
    EXPECT_EQ(props[0].kind, model::PropKind::constraint);
    EXPECT_EQ(c.str(props[0].json), R"({"cel":{"rule":"true"},"failureMessage":"f"})");
    EXPECT_EQ(props[1].kind, model::PropKind::other);
    EXPECT_EQ(c.str(props[1].json), "1");
    EXPECT_EQ(c.bundles[0].version, 0u); // no valid olm.package property
}

// Property values of a YAML catalog are typed as yaml.v2 types them: a hex or octal integer past
// 64 bits stays a string (ParseInt and ParseUint fail and it is no float), a decimal one is a
// float64, YAML 1.1 booleans are booleans, timestamps strings.
TEST(LoadCatalog, YamlPropertyValuesTypedAsYamlV2) {
    auto c = load_text("a.yaml", "schema: olm.bundle\npackage: a\nname: a.v1\nproperties:\n"
                                 "  - type: example.com/free\n"
                                 "    value: [0x10000000000000000, 0o2000000000000000000000, "
                                 "18446744073709551616, 0x1F, yes, 2001-12-14, 1_000, .5]\n");
    ASSERT_EQ(c.bundles.size(), 1u) << problems_text(c);
    const auto props = c.properties_of(c.bundles[0]);
    ASSERT_EQ(props.size(), 1u);
    EXPECT_EQ(c.str(props[0].json), R"(["0x10000000000000000","0o2000000000000000000000",)"
                                    R"(18446744073709552000,31,true,"2001-12-14",1000,0.5])");
}

TEST(LoadCatalog, PropertiesOfPackagesAndChannelsAreNotDecoded) {
    // opm parses bundle properties only.
    auto c = load_text("a.yaml", "schema: olm.package\nname: a\nproperties:\n"
                                 "  - {type: olm.package, value: 7}\n");
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    const auto props = c.properties_of(c.packages.at(0));
    ASSERT_EQ(props.size(), 1u);
    EXPECT_EQ(props[0].kind, model::PropKind::other);
}

TEST(LoadCatalog, ValueBeforeTypeIsStillTyped) {
    auto c = load_text("a.json", R"({"schema": "olm.bundle", "package": "a", "name": "a.v1",
 "properties": [{"value": {"version": "2.0.0", "packageName": "a"}, "type": "olm.package"},
                {"value": {"group": "g", "kind": "K", "version": "v1"}, "type": "olm.gvk"}]})");
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    const auto props = c.properties_of(c.bundles.at(0));
    ASSERT_EQ(props.size(), 2u);
    EXPECT_EQ(props[0].kind, model::PropKind::package);
    EXPECT_EQ(c.str(props[0].a), "a");
    EXPECT_EQ(c.str(props[0].b), "2.0.0");
    EXPECT_EQ(c.str(c.bundles[0].version), "2.0.0");
    EXPECT_EQ(props[1].kind, model::PropKind::gvk);
    EXPECT_EQ(c.str(props[1].a), "g");
    EXPECT_EQ(c.str(props[1].b), "v1");
    EXPECT_EQ(c.str(props[1].c), "K");
}

TEST(LoadCatalog, PayloadsAreHashedNotKeptUnlessAsked) {
    const std::string yaml = R"(schema: olm.bundle
package: a
name: a.v1
properties:
  - type: olm.bundle.object
    value:
      data: eyJraW5kIjogIkNTViJ9
  - type: olm.csv.metadata
    value:
      displayName: A
      keywords: [x, z]
)";
    const std::string json =
        R"({"schema":"olm.bundle","package":"a","name":"a.v1","properties":[)"
        R"({"type":"olm.bundle.object","value":{"data":"eyJraW5kIjogIkNTViJ9"}},)"
        R"({"type":"olm.csv.metadata","value":{"keywords":["x","z"],"displayName":"A"}}]})";
    auto y = load_text("a.yaml", yaml);
    auto j = load_text("a.json", json);
    EXPECT_TRUE(y.problems.empty()) << problems_text(y);
    const auto py = y.properties_of(y.bundles.at(0));
    const auto pj = j.properties_of(j.bundles.at(0));
    ASSERT_EQ(py.size(), 2u);
    ASSERT_EQ(pj.size(), 2u);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(py[i].json, 0u);
        EXPECT_NE(py[i].digest, 0u);
        // The same value in YAML and in JSON, keys in another order: the same digest and size.
        EXPECT_EQ(py[i].digest, pj[i].digest) << i;
        EXPECT_EQ(py[i].value_bytes, pj[i].value_bytes) << i;
    }
    EXPECT_EQ(py[0].value_bytes, std::string(R"({"data":"eyJraW5kIjogIkNTViJ9"})").size());
    catalog::LoadOptions keep;
    keep.keep_payloads = true;
    auto k = load_text("a.yaml", yaml, keep);
    const auto pk = k.properties_of(k.bundles.at(0));
    EXPECT_EQ(k.str(pk[0].json), R"({"data":"eyJraW5kIjogIkNTViJ9"})");
    EXPECT_EQ(k.str(pk[1].json), R"({"displayName":"A","keywords":["x","z"]})");
    EXPECT_EQ(pk[1].value_bytes, k.str(pk[1].json).size());
}

// --- bad input (issue 4) ----------------------------------------------------------------------

TEST(LoadCatalogBadInput, NeitherYamlNorJson) {
    auto c = load_text("a.txt", "schema: olm.package\nname: a\n  oops: [\n");
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_EQ(c.problems[0].rule, "catalog.parse");
    EXPECT_NE(c.problems[0].pos.file.find("a.txt"), std::string::npos);
    EXPECT_GT(c.problems[0].pos.line, 0u);
}

TEST(LoadCatalogBadInput, BinaryGarbage) {
    std::mt19937 rng(7);
    std::string garbage;
    for (int i = 0; i < 65536; ++i)
        garbage += static_cast<char>(rng() & 0xff);
    test::TempDir d;
    d.write("c/garbage.bin", garbage);
    d.write("c/ok.yaml", kBundleYaml);
    auto c = load_ok(d / "c");
    ASSERT_EQ(c.problems.size(), 1u) << problems_text(c);
    EXPECT_NE(c.problems[0].pos.file.find("garbage.bin"), std::string::npos);
    // The other file still loads.
    EXPECT_EQ(c.bundles.size(), 1u);
}

TEST(LoadCatalogBadInput, BlobWithoutSchemaAndNonObjects) {
    auto c = load_text("a.yaml", "name: x\n---\n- a\n- b\n---\n~\n");
    ASSERT_EQ(c.problems.size(), 3u) << problems_text(c);
    EXPECT_EQ(c.problems[0].message, "blob has no \"schema\" field");
    EXPECT_EQ(c.problems[0].pos.line, 1u);
    EXPECT_EQ(c.problems[1].message, "a catalog blob must be an object, not list");
    EXPECT_EQ(c.problems[1].pos.line, 3u);
    EXPECT_EQ(c.problems[2].message, "blob has no \"schema\" field");
}

TEST(LoadCatalogBadInput, ProblemsOfAFileAreBounded) {
    std::string y;
    for (int i = 0; i < 1500; ++i)
        y += "---\nname: x\n";
    auto c = load_text("a.yaml", y);
    ASSERT_EQ(c.problems.size(), 1001u);
    EXPECT_EQ(c.problems.back().rule, "catalog.too-many-problems");
    EXPECT_EQ(c.problems.back().message, "500 more problem(s) in this file not shown");
}

TEST(LoadCatalogBadInput, EmptyAndBlankFiles) {
    test::TempDir d;
    d.write("c/empty.yaml", "");
    d.write("c/empty.json", "");
    auto c = load_ok(d / "c");
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    // A file of blank lines is one document with nothing in it, as opm reads it.
    d.write("c/blank.yaml", "\n\n");
    auto b = load_ok(d / "c");
    ASSERT_EQ(b.problems.size(), 1u);
    EXPECT_EQ(b.problems[0].rule, "catalog.blob");
}

TEST(LoadCatalogBadInput, FileOverTheSizeLimitIsNotRead) {
    test::TempDir d;
    d.write("c/ok.yaml", kBundleYaml);
    // A sparse file just over the default limit of 1 GiB: refused from its size alone.
    { std::ofstream f(d / "c/huge.json", std::ios::binary); }
    fs::resize_file(d / "c/huge.json", (std::uintmax_t{1} << 30) + 1);
    const auto t0 = std::chrono::steady_clock::now();
    auto c = load_ok(d / "c");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    ASSERT_EQ(c.problems.size(), 1u) << problems_text(c);
    EXPECT_EQ(c.problems[0].rule, "catalog.too-large");
    EXPECT_NE(c.problems[0].message.find("1073741825 bytes, larger than the limit of 1073741824"),
              std::string::npos)
        << c.problems[0].message;
    EXPECT_EQ(c.bundles.size(), 1u);
    // A lower limit applies the same way.
    catalog::LoadOptions o;
    o.limits.max_file_bytes = 10;
    auto small = load_ok(d / "c", o);
    EXPECT_EQ(small.problems.size(), 2u);
}

TEST(LoadCatalogBadInput, DeepNesting) {
    const std::string json = std::string(100000, '[') + std::string(100000, ']');
    auto j = load_text("a.json", "{\"schema\": \"x\", \"v\": " + json + "}");
    ASSERT_EQ(j.problems.size(), 1u);
    EXPECT_NE(j.problems[0].message.find("nesting deeper than 512 levels"), std::string::npos);
    auto y = load_text("a.yaml", "schema: x\nv: " + json + "\n");
    ASSERT_EQ(y.problems.size(), 1u);
    EXPECT_NE(y.problems[0].message.find("nesting deeper than 512 levels"), std::string::npos);
}

TEST(LoadCatalogBadInput, DirectorySymlinkLoopIsAnIoError) {
    test::TempDir d;
    d.write("c/a.yaml", kBundleYaml);
    fs::create_directory_symlink(d / "c", d / "c/loop");
    auto r = catalog::load_catalog(d / "c");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::error);
    EXPECT_NE(r.error().message.find("symbolic link to a directory"), std::string::npos)
        << r.error().str();
    // A link to a file is read, as opm reads it.
    fs::remove(d / "c/loop");
    fs::create_symlink(d / "c/a.yaml", d / "c/b.yaml");
    auto c = load_ok(d / "c");
    EXPECT_EQ(c.bundles.size(), 2u);
}

TEST(LoadCatalogBadInput, UnreadableFileIsAnIoError) {
    // Root reads every file, so as root the load runs in a child as user nobody.
    test::TempDir d;
    d.write("c/a.yaml", kBundleYaml);
    d.write("c/b.yaml", kBundleYaml);
    fs::permissions(d.path(), fs::perms::owner_all | fs::perms::others_exec);
    fs::permissions(d / "c/a.yaml", fs::perms::none);
    auto got = test::run_unprivileged([&] {
        auto r = catalog::load_catalog(d / "c");
        if (r.ok()) return std::string("loaded");
        return std::to_string(static_cast<int>(r.error().code)) + " " + r.error().str();
    });
    fs::permissions(d / "c/a.yaml", fs::perms::owner_all);
    ASSERT_TRUE(got.has_value()) << "cannot run the load as user nobody";
    EXPECT_EQ(got->substr(0, got->find(' ')), std::to_string(static_cast<int>(ExitCode::error)))
        << *got;
    EXPECT_TRUE(test::contains(*got, (d / "c/a.yaml").string())) << *got;
    EXPECT_TRUE(test::contains(*got, "permission denied")) << *got;
}

TEST(LoadCatalogBadInput, ReplacesCycleOfTenThousandEntries) {
    // A channel whose 10,000 entries replace each other in a ring: no head, no recursion.
    std::string y = "schema: olm.package\nname: p\ndefaultChannel: c\n---\nschema: olm.channel\n"
                    "package: p\nname: c\nentries:\n";
    const int n = 10000;
    for (int i = 0; i < n; ++i)
        y += "  - {name: p.v" + std::to_string(i) + ", replaces: p.v" +
             std::to_string((i + 1) % n) + "}\n";
    for (int i = 0; i < n; ++i)
        y += "---\nschema: olm.bundle\npackage: p\nname: p.v" + std::to_string(i) +
             "\nproperties: [{type: olm.package, value: {packageName: p, version: 1.0." +
             std::to_string(i) + "}}]\n";
    test::TempDir d;
    d.write("c/p.yaml", y);
    auto c = load_ok(d / "c");
    EXPECT_TRUE(c.problems.empty()) << problems_text(c);
    const auto& ch = c.channels.at(0);
    EXPECT_TRUE(catalog::channel_heads(c, ch).empty());
    EXPECT_TRUE(catalog::replaces_chain(c, ch).empty());
    EXPECT_TRUE(catalog::stranded_entries(c, ch).empty());
    auto graphs = catalog::package_graph(c, "p");
    ASSERT_TRUE(graphs.ok());
    EXPECT_EQ(graphs->at(0).edges.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(catalog::graph_text(*graphs).rfind("package p, channel c: no head, 10000 entries", 0),
              0u);
    auto rows = catalog::list_channels(c, std::nullopt);
    ASSERT_TRUE(rows.ok());
    EXPECT_TRUE(rows->at(0).heads.empty());

    // The same through the commands: list, graph and diff.
    auto r = test::run_kpkg({"catalog", "list", "channels", (d / "c").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("<no head>"), std::string::npos);
    r = test::run_kpkg({"catalog", "graph", (d / "c").string(), "p", "--format", "dot"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    d.write("d/p.yaml",
            y + "---\nschema: olm.channel\npackage: p\nname: z\nentries: [{name: p.v0}]\n");
    r = test::run_kpkg({"catalog", "diff", (d / "c").string(), (d / "d").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("+ channel z"), std::string::npos) << r.out;
}

// --- threads ------------------------------------------------------------------------------------

TEST(LoadCatalog, ResultDoesNotDependOnTheThreadCount) {
    test::TempDir d;
    // Many files of both formats, some with problems, so that parts finish out of order.
    for (int i = 0; i < 40; ++i) {
        const std::string p = std::string("p").append(std::to_string(i));
        if (i % 2 == 0)
            d.write("c/" + p + "/catalog.yaml",
                    "schema: olm.package\nname: " + p + "\n---\nschema: olm.bundle\npackage: " + p +
                        "\nname: " + p +
                        ".v1\nproperties: [{type: olm.package, value: {packageName: " + p +
                        ", version: 1.0.0}}]\n" + (i % 7 == 0 ? "---\nbad: [\n" : ""));
        else
            d.write("c/" + p + "/catalog.json",
                    R"({"schema":"olm.package","name":")" + p + R"("})" + "\n" +
                        R"({"schema":"olm.bundle","package":")" + p + R"(","name":")" + p +
                        R"(.v1","properties":[{"type":"olm.gvk","value":{"group":"g)" + p +
                        R"(","kind":"K","version":"v1"}}]})");
    }
    catalog::LoadOptions one, two, many;
    one.threads = 1;
    two.threads = 2;
    many.threads = 8;
    const auto a = load_ok(d / "c", one);
    EXPECT_EQ(a.packages.size(), 40u);
    EXPECT_FALSE(a.problems.empty());
    expect_same(a, load_ok(d / "c", two));
    expect_same(a, load_ok(d / "c", many));
}

TEST(LoadCatalogCorpus, RealCatalogsLoadCleanlyWhateverTheThreads) {
    KPKG_REQUIRE_CORPUS(corpus);
    for (const char* dir : {"olm/large/certified-v4.22", "olm/large/community-v4.21",
                            "olm/large/derived-community/catalog-valid"}) {
        catalog::LoadOptions one;
        one.threads = 1;
        const auto a = load_ok(corpus / dir, one);
        EXPECT_TRUE(a.problems.empty()) << dir << "\n" << problems_text(a);
        EXPECT_GT(a.bundles.size(), 400u);
        catalog::LoadOptions two;
        two.threads = 2;
        expect_same(a, load_ok(corpus / dir, two));
    }
}

// --- the binary cache ---------------------------------------------------------------------------

class CatalogCache : public ::testing::Test {
protected:
    void SetUp() override {
        fs::copy(test::testdata("catalog"), dir_ / "cat", fs::copy_options::recursive);
        age(dir_ / "cat");
        opts_.cache_dir = dir_ / "cache";
        opts_.info = &info_;
    }
    model::Catalog cold() {
        catalog::LoadOptions o;
        return load_ok(dir_ / "cat", o);
    }
    model::Catalog cached() { return load_ok(dir_ / "cat", opts_); }
    std::vector<fs::path> cache_files(const std::string& sub) {
        std::vector<fs::path> out;
        for (const auto& e : fs::directory_iterator(dir_ / "cache/catalog-v1" / sub))
            out.push_back(e.path());
        return out;
    }

    test::TempDir dir_;
    catalog::LoadOptions opts_;
    catalog::LoadInfo info_;
};

TEST_F(CatalogCache, WarmEqualsCold) {
    const auto reference = cold();
    const auto first = cached();
    EXPECT_FALSE(info_.cache_hit);
    EXPECT_TRUE(info_.cache_written) << info_.cache_note;
    expect_same(reference, first);
    const auto second = cached();
    EXPECT_TRUE(info_.cache_hit) << info_.cache_note;
    expect_same(reference, second);
    EXPECT_EQ(second.package_info("vault")->bundles.size(), 5u); // indexed
    ASSERT_EQ(cache_files("images").size(), 1u);
    ASSERT_EQ(cache_files("manifests").size(), 1u);
}

TEST_F(CatalogCache, ProblemsAndPositionsComeBackWithTheSpellingOfTheSource) {
    dir_.write("cat/bad.yaml", "schema: olm.package\nname: [x]\n");
    age(dir_ / "cat");
    const auto first = cached();
    ASSERT_EQ(first.problems.size(), 1u);
    // The same directory through another path: names follow it.
    catalog::LoadOptions o = opts_;
    const fs::path other = dir_ / "cat" / ".." / "cat";
    auto again = catalog::load_catalog(other, o).take();
    EXPECT_TRUE(info_.cache_hit) << info_.cache_note;
    ASSERT_EQ(again.problems.size(), 1u);
    EXPECT_EQ(again.problems[0].pos.file, (other / "bad.yaml").string());
    EXPECT_EQ(again.source_pos(again.packages[0].pos).file.rfind(other.string(), 0), 0u);
}

TEST_F(CatalogCache, AModifiedFileInvalidates) {
    cached();
    cached();
    EXPECT_TRUE(info_.cache_hit);
    // Same size, another content, another (old) time.
    const fs::path f = dir_ / "cat/vault/catalog.yaml";
    std::string text = test::read_file(f);
    const auto at = text.find("name: vault\n");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 12, "name: vaulx\n");
    dir_.write("cat/vault/catalog.yaml", text);
    fs::last_write_time(f, fs::file_time_type::clock::now() - std::chrono::minutes(30));
    const auto c = cached();
    EXPECT_FALSE(info_.cache_hit);
    EXPECT_NE(info_.cache_note.find("vault/catalog.yaml changed"), std::string::npos)
        << info_.cache_note;
    EXPECT_NE(c.package_info("vaulx"), nullptr);
    expect_same(cold(), c);
    cached();
    EXPECT_TRUE(info_.cache_hit);
}

TEST_F(CatalogCache, AddedRemovedAndIgnoredFilesInvalidate) {
    cached();
    dir_.write("cat/new/x.yaml", "schema: olm.package\nname: x\n");
    age(dir_ / "cat");
    auto c = cached();
    EXPECT_FALSE(info_.cache_hit);
    EXPECT_NE(c.package_info("x"), nullptr);
    cached();
    EXPECT_TRUE(info_.cache_hit);
    dir_.write("cat/.indexignore", "new/\n");
    age(dir_ / "cat");
    c = cached();
    EXPECT_FALSE(info_.cache_hit);
    EXPECT_EQ(c.package_info("x"), nullptr);
    fs::remove_all(dir_ / "cat/new");
    age(dir_ / "cat");
    cached();
    EXPECT_FALSE(info_.cache_hit);
}

TEST_F(CatalogCache, RecentlyChangedFilesAreCheckedByTheirContent) {
    // Changed within the racy window: the times prove nothing, the bytes are hashed again.
    fs::last_write_time(dir_ / "cat/etcd/catalog.json", fs::file_time_type::clock::now());
    const auto reference = cold();
    cached();
    expect_same(reference, cached());
    EXPECT_TRUE(info_.cache_hit) << info_.cache_note;
}

// The content of a file rewritten in place (same inode, same size) with its modification time
// put back, as `tar --overwrite` of an archive with fixed times does: only the change time moves.
TEST_F(CatalogCache, AnInPlaceRewriteWithItsTimesRestoredInvalidates) {
    const fs::path f = dir_ / "cat/vault/catalog.yaml";
    cached();
    cached();
    ASSERT_TRUE(info_.cache_hit) << info_.cache_note;
    struct stat before {};
    ASSERT_EQ(::stat(f.c_str(), &before), 0);
    std::string text = test::read_file(f);
    const auto at = text.find("bundle:v1.2.0");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 13, "bundle:v1.2.9");
    std::this_thread::sleep_for(std::chrono::milliseconds(20)); // a later clock tick
    dir_.write("cat/vault/catalog.yaml", text); // truncated and rewritten, not replaced
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, f.c_str(), times, 0), 0);
    struct stat after {};
    ASSERT_EQ(::stat(f.c_str(), &after), 0);
    ASSERT_EQ(after.st_ino, before.st_ino);
    ASSERT_EQ(after.st_size, before.st_size);
    ASSERT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    ASSERT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);

    const auto c = cached();
    EXPECT_FALSE(info_.cache_hit);
    EXPECT_NE(info_.cache_note.find("vault/catalog.yaml changed"), std::string::npos)
        << info_.cache_note;
    expect_same(cold(), c);
    bool found = false;
    for (const auto& b : c.bundles)
        found = found || c.str(b.image) == "quay.io/example/vault-operator-bundle:v1.2.9";
    EXPECT_TRUE(found);
}

TEST_F(CatalogCache, AnInPlaceRewriteIsSeenByResolveAndItsLockfile) {
    const std::string src = (dir_ / "cat").string();
    const std::vector<std::string> env = {"KPKG_NO_CACHE=",
                                          "KPKG_CACHE_DIR=" + (dir_ / "cache").string()};
    auto first = test::run_kpkg({"resolve", "vault", "--catalog", src, "-o", "json"}, {}, env);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ASSERT_NE(first.out.find("vault-operator-bundle:v1.2.0"), std::string::npos) << first.out;
    const fs::path f = dir_ / "cat/vault/catalog.yaml";
    struct stat before {};
    ASSERT_EQ(::stat(f.c_str(), &before), 0);
    std::string text = test::read_file(f);
    text.replace(text.find("bundle:v1.2.0"), 13, "bundle:v1.2.9");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    dir_.write("cat/vault/catalog.yaml", text);
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, f.c_str(), times, 0), 0);

    const std::string lock = (dir_ / "lock.yaml").string();
    auto warm = test::run_kpkg(
        {"resolve", "vault", "--catalog", src, "-o", "json", "--lockfile", lock}, {}, env);
    ASSERT_EQ(warm.exit_code, 0) << warm.err;
    EXPECT_NE(warm.out.find("vault-operator-bundle:v1.2.9"), std::string::npos) << warm.out;
    auto off = test::run_kpkg({"--no-cache", "resolve", "vault", "--catalog", src, "-o", "json",
                               "--lockfile", (dir_ / "lock-off.yaml").string()},
                              {}, env);
    ASSERT_EQ(off.exit_code, 0) << off.err;
    EXPECT_EQ(warm.out, off.out);
    EXPECT_EQ(test::read_file(lock), test::read_file(dir_ / "lock-off.yaml"));
}

// A catalog of no blob at all gives an image of empty tables, read back as such.
TEST_F(CatalogCache, CatalogsWithoutBlobsComeBackFromTheCache) {
    for (const char* content : {"", "bad: [\n", "schema: olm.package\nname: [x\n"}) {
        fs::remove_all(dir_ / "cat");
        fs::remove_all(dir_ / "cache");
        dir_.write("cat/a.yaml", content);
        age(dir_ / "cat");
        const auto reference = cold();
        expect_same(reference, cached());
        EXPECT_FALSE(info_.cache_hit);
        expect_same(reference, cached());
        EXPECT_TRUE(info_.cache_hit) << info_.cache_note;
    }
}

TEST_F(CatalogCache, CorruptTruncatedOrForeignFilesAreIgnored) {
    const auto reference = cold();
    cached();
    const fs::path image = cache_files("images").at(0);
    const fs::path manifest = cache_files("manifests").at(0);
    auto check_rebuilt = [&](const char* what) {
        const auto c = cached();
        EXPECT_FALSE(info_.cache_hit) << what;
        expect_same(reference, c);
        const auto again = cached(); // rewritten by the load above
        EXPECT_TRUE(info_.cache_hit) << what << ": " << info_.cache_note;
        expect_same(reference, again);
    };
    // One byte flipped in the middle of the image.
    std::string data = test::read_file(image);
    data[data.size() / 2] ^= 0x20;
    dir_.write(fs::relative(image, dir_.path()).string(), data);
    check_rebuilt("corrupt image");
    // Truncated image.
    data = test::read_file(image);
    dir_.write(fs::relative(image, dir_.path()).string(), data.substr(0, data.size() / 3));
    check_rebuilt("truncated image");
    // Empty image, then a foreign file in place of the manifest.
    dir_.write(fs::relative(image, dir_.path()).string(), "");
    check_rebuilt("empty image");
    dir_.write(fs::relative(manifest, dir_.path()).string(), "KPKGMAN1 not really a manifest");
    check_rebuilt("foreign manifest");
    // An image of another format version.
    data = test::read_file(image);
    data[8] = 99;
    dir_.write(fs::relative(image, dir_.path()).string(), data);
    check_rebuilt("other version");
}

// A FIFO or a symbolic link planted in the cache is a miss (never opened for reading, so the load
// does not block) and is replaced by the load.
TEST_F(CatalogCache, FifosAndLinksInTheCacheAreMissesAndReplaced) {
    const auto reference = cold();
    cached();
    const fs::path image = cache_files("images").at(0);
    const fs::path manifest = cache_files("manifests").at(0);
    auto plant = [&](const fs::path& where, const char* what) {
        fs::remove(where);
        if (std::string(what) == "fifo")
            ASSERT_EQ(::mkfifo(where.c_str(), 0644), 0);
        else
            fs::create_symlink(dir_ / "cat/vault/catalog.yaml", where);
        auto load = std::async(std::launch::async, [&] { return cached(); });
        if (load.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
            // Unblock the reader stuck in open(2) so that the test can end.
            const int fd = ::open(where.c_str(), O_WRONLY | O_NONBLOCK);
            if (fd >= 0) ::close(fd);
            ADD_FAILURE() << "the load blocked on a " << what << " at " << where;
        }
        expect_same(reference, load.get());
        EXPECT_FALSE(info_.cache_hit) << what;
        struct stat st {};
        ASSERT_EQ(::lstat(where.c_str(), &st), 0);
        EXPECT_TRUE(S_ISREG(st.st_mode)) << what << " at " << where << " not replaced";
        expect_same(reference, cached());
        EXPECT_TRUE(info_.cache_hit) << what << ": " << info_.cache_note;
    };
    plant(manifest, "fifo");
    plant(image, "fifo");
    plant(manifest, "link");
    plant(image, "link");
}

// An image whose header claims a huge payload (a sparse file) is rejected by its size, before
// its content is mapped or hashed.
TEST_F(CatalogCache, AHugeSparseImageIsRejectedWithoutReadingIt) {
    const auto reference = cold();
    cached();
    const fs::path image = cache_files("images").at(0);
    std::string header = test::read_file(image).substr(0, 32);
    const std::uint64_t size = 512ULL << 20;
    for (int i = 0; i < 8; ++i) // the payload size field
        header[16 + i] = static_cast<char>((size - 32) >> (8 * i));
    fs::remove(image);
    dir_.write(fs::relative(image, dir_.path()).string(), header);
    fs::resize_file(image, size);
    const auto start = std::chrono::steady_clock::now();
    expect_same(reference, cached());
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_FALSE(info_.cache_hit);
    EXPECT_NE(info_.cache_note.find("is not of the size the manifest records"), std::string::npos)
        << info_.cache_note;
    EXPECT_LT(took, std::chrono::seconds(5));
    EXPECT_LT(fs::file_size(image), size); // replaced
    expect_same(reference, cached());
    EXPECT_TRUE(info_.cache_hit) << info_.cache_note;
    // A manifest over the size limit: not read.
    const fs::path manifest = cache_files("manifests").at(0);
    fs::resize_file(manifest, 1ULL << 30);
    expect_same(reference, cached());
    EXPECT_FALSE(info_.cache_hit);
    EXPECT_NE(info_.cache_note.find("damaged"), std::string::npos) << info_.cache_note;
}

// A cache directory inside the catalog is not written: its files would be read as the catalog's.
TEST_F(CatalogCache, ACacheInsideTheCatalogIsNotWritten) {
    const auto reference = cold();
    catalog::LoadOptions o = opts_;
    o.cache_dir = dir_ / "cat" / ".." / "cat" / ".kpkg-cache";
    expect_same(reference, load_ok(dir_ / "cat", o));
    EXPECT_FALSE(info_.cache_written);
    EXPECT_NE(info_.cache_note.find("inside the catalog"), std::string::npos) << info_.cache_note;
    EXPECT_FALSE(fs::exists(dir_ / "cat/.kpkg-cache/catalog-v1"));
    expect_same(reference, load_ok(dir_ / "cat", o));
}

TEST_F(CatalogCache, ConcurrentLoadsShareTheCache) {
    const auto reference = cold();
    std::vector<std::thread> threads;
    std::vector<model::Catalog> out(8);
    for (int i = 0; i < 8; ++i)
        threads.emplace_back([&, i] {
            catalog::LoadOptions o;
            o.cache_dir = opts_.cache_dir;
            out[i] = catalog::load_catalog(dir_ / "cat", o).take();
        });
    for (auto& t : threads)
        t.join();
    for (const auto& c : out)
        expect_same(reference, c);
    expect_same(reference, cached());
    EXPECT_TRUE(info_.cache_hit);
    // No temporary file is left behind.
    for (const auto& f : cache_files("images"))
        EXPECT_EQ(f.extension(), ".img") << f;
}

TEST_F(CatalogCache, StandardInputIsNeverCached) {
    EXPECT_FALSE(fs::exists(dir_ / "cache"));
    auto r = test::run_kpkg({"catalog", "list", "packages", "-"},
                            test::read_file(dir_ / "cat/vault/catalog.yaml"),
                            {"KPKG_NO_CACHE=", "KPKG_CACHE_DIR=" + (dir_ / "cache").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("vault"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir_ / "cache"));
}

TEST_F(CatalogCache, CommandsUseItUnlessTurnedOff) {
    const std::string src = (dir_ / "cat").string();
    const std::vector<std::string> env = {"KPKG_NO_CACHE=",
                                          "KPKG_CACHE_DIR=" + (dir_ / "cache").string()};
    auto first = test::run_kpkg({"-v", "catalog", "list", "bundles", src}, {}, env);
    EXPECT_EQ(first.exit_code, 0) << first.err;
    EXPECT_NE(first.err.find("read " + src), std::string::npos) << first.err;
    auto second = test::run_kpkg({"-v", "catalog", "list", "bundles", src}, {}, env);
    EXPECT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(second.err.find("read from the cache"), std::string::npos) << second.err;
    EXPECT_EQ(first.out, second.out);
    auto graph = test::run_kpkg({"catalog", "graph", src, "vault"}, {}, env);
    EXPECT_EQ(graph.exit_code, 0);
    // --no-cache and KPKG_NO_CACHE: neither read nor written.
    fs::remove_all(dir_ / "cache");
    auto off = test::run_kpkg({"--no-cache", "catalog", "list", "bundles", src}, {}, env);
    EXPECT_EQ(off.exit_code, 0);
    EXPECT_EQ(off.out, first.out);
    EXPECT_FALSE(fs::exists(dir_ / "cache"));
    auto env_off =
        test::run_kpkg({"catalog", "list", "bundles", src}, {},
                       {"KPKG_NO_CACHE=1", "KPKG_CACHE_DIR=" + (dir_ / "cache").string()});
    EXPECT_EQ(env_off.exit_code, 0);
    EXPECT_FALSE(fs::exists(dir_ / "cache"));
    // A cache directory that cannot be written does not fail the command.
    dir_.write("blocked", "a file where the cache directory should be");
    auto blocked =
        test::run_kpkg({"catalog", "list", "bundles", src}, {},
                       {"KPKG_NO_CACHE=", "KPKG_CACHE_DIR=" + (dir_ / "blocked").string()});
    EXPECT_EQ(blocked.exit_code, 0) << blocked.err;
    EXPECT_EQ(blocked.out, first.out);
}

// An empty key inside an unterminated flow mapping reaches the key hashing as an empty view with
// no data pointer (libfyaml's events): hashed without reading it (under UBSan this failed as
// "null pointer passed as argument 2"), and the file is refused for its syntax.
TEST(LoadCatalog, EmptyKeyInABrokenFlowMappingIsRefusedCleanly) {
    test::TempDir d;
    d.write("c/index.yaml",
            "schema: olm.bundle\npackage: beta\nname: beta.v1.1.0\nimage: r/b:v1\n"
            "properties:\n  - {type: olm.package, value: {packageName: beta, : foo\n"
            "    version: 1.0.0\n");
    auto c = load_ok(d / "c");
    ASSERT_FALSE(c.problems.empty());
    EXPECT_NE(problems_text(c).find("index.yaml:7:12:"), std::string::npos) << problems_text(c);
    EXPECT_NE(problems_text(c).find("flow mapping"), std::string::npos) << problems_text(c);
}
