#include <gtest/gtest.h>

#include "kpkg/catalog/load.hpp"
#include "kpkg/io/tree.hpp"
#include "support/support.hpp"

using namespace kpkg;
using test::testdata;

TEST(CatalogLoad, SampleCatalog) {
    auto cfg = catalog::load(testdata("catalog"));
    ASSERT_TRUE(cfg.ok()) << cfg.error().str();
    EXPECT_EQ(cfg->packages.size(), 2u);
    EXPECT_EQ(cfg->channels.size(), 4u);
    EXPECT_EQ(cfg->bundles.size(), 8u);
    EXPECT_TRUE(cfg->others.empty());
    // Files are read in path order: etcd/catalog.json before vault/catalog.yaml.
    EXPECT_EQ(cfg->packages[0].name, "etcd");
    EXPECT_EQ(cfg->packages[1].name, "vault");
    EXPECT_EQ(cfg->packages[1].default_channel, "stable");
}

TEST(CatalogLoad, BlobsKeepTheirPositions) {
    auto cfg = catalog::load(testdata("catalog"));
    ASSERT_TRUE(cfg.ok()) << cfg.error().str();
    const declcfg::Channel* fast = nullptr;
    for (const auto& c : cfg->channels)
        if (c.package == "vault" && c.name == "fast") fast = &c;
    ASSERT_NE(fast, nullptr);
    EXPECT_NE(fast->pos.file.find("vault/catalog.yaml"), std::string::npos);
    EXPECT_EQ(fast->pos.line, 19u);
    EXPECT_EQ(fast->pos.document, 2);
    ASSERT_EQ(fast->entries.size(), 4u);
    const auto& rc = fast->entries[3];
    EXPECT_EQ(rc.name, "vault-operator.v1.3.0-rc.1");
    EXPECT_EQ(rc.replaces, "vault-operator.v1.2.0");
    ASSERT_EQ(rc.skips.size(), 1u);
    EXPECT_EQ(rc.skip_range, ">=1.1.0 <1.3.0-rc.1");
    EXPECT_EQ(rc.pos.line, 28u);
    EXPECT_EQ(rc.pos.column, 5u);

    const declcfg::Bundle* b = nullptr;
    for (const auto& x : cfg->bundles)
        if (x.name == "etcdoperator.v0.9.2") b = &x;
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->version(), "0.9.2");
    EXPECT_EQ(b->related_images.size(), 2u);
    EXPECT_NE(b->pos.file.find("etcd/catalog.json"), std::string::npos);
    EXPECT_EQ(b->pos.document, 4);
}

TEST(CatalogLoad, UnknownSchemasAreKept) {
    io::MemoryTree d("c");
    d.add_file("a.yaml", "schema: olm.package\nname: a\n---\nschema: example.com/custom\npackage: "
                         "a\nname: x\nk: v\n");
    auto cfg = catalog::load(d);
    ASSERT_TRUE(cfg.ok()) << cfg.error().str();
    ASSERT_EQ(cfg->others.size(), 1u);
    EXPECT_EQ(cfg->others[0].schema, "example.com/custom");
    EXPECT_EQ(cfg->others[0].package, "a");
    EXPECT_EQ(cfg->others[0].raw.get("k")->text, "v");
}

// opm walks every file, hidden ones included; only .indexignore patterns exclude files.
TEST(CatalogLoad, HiddenFilesAreReadAsOpmReadsThem) {
    io::MemoryTree d("c");
    d.add_file("a.json", R"({"schema": "olm.package", "name": "a"})");
    d.add_file(".hidden.yaml", "schema: olm.package\nname: h\n");
    d.add_file(".git/config", "[core]\n");
    auto cfg = catalog::load(d);
    ASSERT_FALSE(cfg.ok());
    EXPECT_NE(cfg.error().pos.file.find(".git/config"), std::string::npos) << cfg.error().str();
    d.add_file(".indexignore", ".git\n");
    cfg = catalog::load(d);
    ASSERT_TRUE(cfg.ok()) << cfg.error().str();
    EXPECT_EQ(cfg->packages.size(), 2u);
}

TEST(CatalogLoad, SingleFileAndEmptyDirectory) {
    auto one = catalog::load(testdata("catalog/etcd/catalog.json"));
    ASSERT_TRUE(one.ok()) << one.error().str();
    EXPECT_EQ(one->bundles.size(), 3u);
    test::TempDir d;
    std::filesystem::create_directories(d / "empty");
    auto none = catalog::load(d / "empty");
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->packages.empty());
}

struct BadCase {
    const char* name;
    const char* content;
    const char* message;
    unsigned line, column;
};

class CatalogLoadBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(CatalogLoadBad, NamesFileAndPosition) {
    const BadCase& c = GetParam();
    io::MemoryTree d("c");
    d.add_file("f.yaml", c.content);
    auto cfg = catalog::load(d);
    ASSERT_FALSE(cfg.ok()) << c.name;
    const Error& e = cfg.error();
    EXPECT_EQ(e.code, ExitCode::invalid) << e.str();
    EXPECT_NE(e.pos.file.find("f.yaml"), std::string::npos) << e.str();
    EXPECT_EQ(e.pos.line, c.line) << e.str();
    EXPECT_EQ(e.pos.column, c.column) << e.str();
    EXPECT_NE(e.message.find(c.message), std::string::npos) << e.str();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CatalogLoadBad,
    ::testing::Values(
        BadCase{"no_schema", "name: x\n", "no \"schema\"", 1, 1},
        BadCase{"schema_not_string", "schema: [a]\n", "\"schema\" must be a string", 1, 9},
        BadCase{"blob_is_list", "- a\n- b\n", "must be an object, not list", 1, 1},
        BadCase{"name_is_map", "schema: olm.package\nname: {a: 1}\n",
                "olm.package field \"name\" must be a string, not object", 2, 7},
        BadCase{"entries_not_list", "schema: olm.channel\nname: c\nentries: x\n",
                "field \"entries\" must be a list", 3, 10},
        BadCase{"entry_not_object", "schema: olm.channel\nentries:\n  - x\n",
                "\"entries[]\" must be an object", 3, 5},
        BadCase{"skips_not_list", "schema: olm.channel\nentries:\n  - name: a\n    skips: b\n",
                "\"skips\" must be a list of strings", 4, 12},
        BadCase{"skip_item_not_string",
                "schema: olm.channel\nentries:\n  - name: a\n    skips: [[b]]\n",
                "\"skips[]\" must be a string", 4, 13},
        BadCase{"properties_not_list", "schema: olm.bundle\nname: b\nproperties: {}\n",
                "\"properties\" must be a list", 3, 13},
        BadCase{"property_type_not_string",
                "schema: olm.bundle\nproperties:\n  - type: 1\n    value: {}\n",
                "\"type\" must be a string, not integer", 3, 11},
        BadCase{"related_image_not_object", "schema: olm.bundle\nrelatedImages: [x]\n",
                "\"relatedImages[]\" must be an object", 2, 17},
        BadCase{"second_document", "schema: olm.package\nname: a\n---\nschema: 7\n",
                "\"schema\" must be a string", 4, 9}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(CatalogLoad, CorpusCatalogsLoad) {
    KPKG_REQUIRE_CORPUS(corpus);
    struct Expect {
        const char* dir;
        std::size_t packages, channels, bundles;
    } cases[] = {
        {"registry-action-index-latest", 3, 4, 10},
        {"registry-action-list-index", 2, 4, 4},
        {"registry-fbc-dir-example", 1, 1, 1},
    };
    for (const auto& c : cases) {
        auto cfg = catalog::load(corpus / "olm/fbc" / c.dir);
        ASSERT_TRUE(cfg.ok()) << c.dir << ": " << cfg.error().str();
        EXPECT_EQ(cfg->packages.size(), c.packages) << c.dir;
        EXPECT_EQ(cfg->channels.size(), c.channels) << c.dir;
        EXPECT_EQ(cfg->bundles.size(), c.bundles) << c.dir;
    }
    auto dep = catalog::load(corpus / "olm/fbc/olm-e2e-deprecations");
    ASSERT_TRUE(dep.ok()) << dep.error().str();
    ASSERT_EQ(dep->others.size(), 1u);
    EXPECT_EQ(dep->others[0].schema, "olm.deprecations");
}

// .indexignore: gitignore patterns, applying to the directory holding the file and below.
TEST(CatalogLoad, IndexIgnoreExcludesMatchingFiles) {
    io::MemoryTree d("c");
    d.add_file(".indexignore", "# comment\n*.md\n/skip/\nsub/only.yaml\n");
    d.add_file("a.yaml", "schema: olm.package\nname: a\n");
    d.add_file("README.md", "not: [valid");
    d.add_file("skip/x.yaml", "not: [valid");
    d.add_file("sub/only.yaml", "not: [valid");
    d.add_file("sub/b.yaml", "schema: olm.package\nname: b\n");
    auto cfg = catalog::load(d);
    ASSERT_TRUE(cfg.ok()) << cfg.error().str();
    ASSERT_EQ(cfg->packages.size(), 2u);
    EXPECT_EQ(cfg->packages[0].name, "a");
    EXPECT_EQ(cfg->packages[1].name, "b");
}

TEST(CatalogLoad, NestedIndexIgnoreAppliesBelowItsDirectory) {
    io::MemoryTree d("c");
    d.add_file("p/.indexignore", "*.txt\n!keep.txt\n");
    d.add_file("p/notes.txt", "not: [valid");
    d.add_file("p/keep.txt", "schema: olm.package\nname: p\n");
    // The nested file does not reach its siblings' directories.
    d.add_file("q/other.txt", "schema: olm.package\nname: q\n");
    auto cfg = catalog::load(d);
    ASSERT_TRUE(cfg.ok()) << cfg.error().str();
    ASSERT_EQ(cfg->packages.size(), 2u);
    EXPECT_EQ(cfg->packages[0].name, "p");
    EXPECT_EQ(cfg->packages[1].name, "q");
}

TEST(CatalogLoad, IndexIgnoreDirectoryPatternAndDoubleStar) {
    io::MemoryTree d("c");
    d.add_file(".indexignore", "docs/\n**/tmp/*.json\n");
    d.add_file("x/docs/a.yaml", "not: [valid");
    d.add_file("x/y/tmp/a.json", "{");
    d.add_file("x/ok.json", "{\"schema\":\"olm.package\",\"name\":\"x\"}");
    auto cfg = catalog::load(d);
    ASSERT_TRUE(cfg.ok()) << cfg.error().str();
    ASSERT_EQ(cfg->packages.size(), 1u);
    EXPECT_EQ(cfg->packages[0].name, "x");
}

TEST(CatalogLoad, SchemaMustBeAString) {
    io::MemoryTree d("c");
    d.add_file("a.yaml", "schema: 3\nname: a\n");
    auto cfg = catalog::load(d);
    ASSERT_FALSE(cfg.ok());
    EXPECT_NE(cfg.error().str().find("a.yaml:1:9"), std::string::npos) << cfg.error().str();
}

// The compact model (kpkg/model/catalog.hpp) as load_catalog builds it.
TEST(CompactCatalog, SampleCatalog) {
    auto c = catalog::load_catalog(testdata("catalog"));
    ASSERT_TRUE(c.ok()) << c.error().str();
    EXPECT_TRUE(c->problems.empty());
    ASSERT_TRUE(c->check().ok());
    EXPECT_EQ(c->packages.size(), 2u);
    EXPECT_EQ(c->channels.size(), 4u);
    EXPECT_EQ(c->bundles.size(), 8u);

    const auto* vault = c->package_info("vault");
    ASSERT_NE(vault, nullptr);
    ASSERT_NE(vault->package, model::npos32);
    EXPECT_EQ(c->str(c->packages[vault->package].default_channel), "stable");
    EXPECT_EQ(vault->channels.size(), 2u);
    EXPECT_EQ(vault->bundles.size(), 5u);
    EXPECT_EQ(c->package_info("nope"), nullptr);

    // Interned: the same text is the same id.
    auto pkg = *c->strings.find("vault");
    auto b = c->find_bundle(pkg, *c->strings.find("vault-operator.v1.1.0"));
    ASSERT_NE(b, model::npos32);
    const model::Bundle& bundle = c->bundles[b];
    EXPECT_EQ(c->str(bundle.version), "1.1.0");
    EXPECT_NE(c->source_pos(bundle.pos).file.find("vault/catalog.yaml"), std::string::npos);
    std::vector<model::PropKind> kinds;
    for (const auto& p : c->properties_of(bundle))
        kinds.push_back(p.kind);
    EXPECT_EQ(kinds, (std::vector<model::PropKind>{model::PropKind::package, model::PropKind::gvk,
                                                   model::PropKind::gvk_required,
                                                   model::PropKind::package_required}));
    const auto& req = c->properties_of(bundle)[3];
    EXPECT_EQ(c->str(req.a), "etcd");
    EXPECT_EQ(c->str(req.b), ">=0.9.0 <1.0.0");

    // fast: the rc entry replaces v1.2.0 and skips v1.1.1.
    const model::Channel* fast = nullptr;
    for (auto i : vault->channels)
        if (c->str(c->channels[i].name) == "fast") fast = &c->channels[i];
    ASSERT_NE(fast, nullptr);
    auto entries = c->entries_of(*fast);
    ASSERT_EQ(entries.size(), 4u);
    EXPECT_EQ(c->str(entries[3].replaces), "vault-operator.v1.2.0");
    ASSERT_EQ(c->skips_of(entries[3]).size(), 1u);
    EXPECT_EQ(c->str(c->skips_of(entries[3])[0]), "vault-operator.v1.1.1");
    EXPECT_EQ(c->source_pos(entries[3].pos).line, 28u);
}

TEST(CompactCatalog, ProblemsAreCollectedNotThrown) {
    io::MemoryTree d("c");
    d.add_file("a.yaml", "schema: olm.package\nname: a\ndefaultChannel: s\n---\n"
                         "schema: olm.bundle\npackage: a\nname: a.v1\nimage: x\nproperties:\n"
                         "  - type: olm.package\n    value: {packageName: a, version: [1]}\n");
    auto c = catalog::load_catalog(d);
    ASSERT_TRUE(c.ok()) << c.error().str();
    ASSERT_FALSE(c->problems.empty());
    EXPECT_NE(c->problems[0].message.find("version"), std::string::npos) << c->problems[0].message;
    EXPECT_FALSE(c->check().ok());
    EXPECT_EQ(c->check().error().code, ExitCode::invalid);
}

// A catalog in memory and the same files on disk: the same content, digest and positions (but
// for the root's name).
TEST(CompactCatalog, MemoryAndDirectoryTreesLoadTheSame) {
    namespace fs = std::filesystem;
    const fs::path root = testdata("catalog");
    io::MemoryTree mem("mem");
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        const std::string rel = fs::relative(it->path(), root).generic_string();
        if (it->is_directory())
            mem.add_dir(rel);
        else
            mem.add_file(rel, test::read_file(it->path()));
    }
    auto from_mem = catalog::load_catalog(mem);
    auto from_dir = catalog::load_catalog(io::DirectoryTree(root));
    ASSERT_TRUE(from_mem.ok()) << from_mem.error().str();
    ASSERT_TRUE(from_dir.ok()) << from_dir.error().str();
    EXPECT_EQ(from_mem->content_digest, from_dir->content_digest);
    EXPECT_EQ(from_mem->bundles.size(), from_dir->bundles.size());
    ASSERT_EQ(from_mem->files.size(), from_dir->files.size());
    for (std::size_t i = 1; i < from_mem->files.size(); ++i) {
        const std::string& m = from_mem->files[i];
        ASSERT_EQ(m.rfind("mem/", 0), 0u) << m;
        EXPECT_EQ((root / m.substr(4)).string(), from_dir->files[i]);
    }
    // The older loader reads the same blobs.
    auto cfg_mem = catalog::load(mem);
    auto cfg_dir = catalog::load(io::DirectoryTree(root));
    ASSERT_TRUE(cfg_mem.ok() && cfg_dir.ok());
    EXPECT_EQ(cfg_mem->bundles.size(), cfg_dir->bundles.size());
    EXPECT_EQ(cfg_mem->bundles[0].pos.line, cfg_dir->bundles[0].pos.line);
    // Another byte: another digest.
    mem.add_file("etcd/extra.yaml", "schema: olm.package\nname: extra\n");
    EXPECT_NE(catalog::load_catalog(mem)->content_digest, from_dir->content_digest);
}

// A link leaving the root is refused in memory as on disk, unless .indexignore leaves it out.
TEST(CompactCatalog, MemoryTreeLinksFollowTheDirectoryRules) {
    io::MemoryTree mem("mem");
    mem.add_file("a.yaml", "schema: olm.package\nname: a\n").add_link("b.yaml", "../secret.yaml");
    auto r = catalog::load_catalog(mem);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(
        r.error().message.rfind("refused mem/b.yaml: it is a symbolic link to ../secret.yaml, "
                                "outside the catalog directory mem",
                                0),
        0u)
        << r.error().message;
    mem.add_file(".indexignore", "b.yaml\n");
    auto ok = catalog::load_catalog(mem);
    ASSERT_TRUE(ok.ok()) << ok.error().str();
    EXPECT_EQ(ok->packages.size(), 1u);
    mem.add_link("c.yaml", "sub").add_dir("sub");
    r = catalog::load_catalog(mem);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::error);
    EXPECT_NE(r.error().message.find("mem/c.yaml: it is a symbolic link to a directory"),
              std::string::npos)
        << r.error().message;
}

// A tree that cannot change (an image named by its digest) is cached without stamps; a memory
// tree without an identity is never cached.
TEST(CompactCatalog, ImmutableTreesAreCachedWithoutStamps) {
    test::TempDir cache;
    io::MemoryTree mem("img");
    mem.add_file("a.yaml", "schema: olm.package\nname: a\n");
    catalog::LoadInfo info;
    catalog::LoadOptions o;
    o.cache_dir = cache.path();
    o.info = &info;
    ASSERT_TRUE(catalog::load_catalog(mem, o).ok());
    EXPECT_FALSE(info.cache_written);
    EXPECT_TRUE(std::filesystem::is_empty(cache.path()));
    mem.set_identity({io::Identity::Kind::immutable, "sha256:1234", true});
    auto cold = catalog::load_catalog(mem, o);
    ASSERT_TRUE(cold.ok());
    EXPECT_TRUE(info.cache_written) << info.cache_note;
    auto warm = catalog::load_catalog(mem, o);
    ASSERT_TRUE(warm.ok());
    EXPECT_TRUE(info.cache_hit) << info.cache_note;
    EXPECT_EQ(warm->content_digest, cold->content_digest);
    ASSERT_EQ(warm->files.size(), 2u);
    EXPECT_EQ(warm->files[1], "img/a.yaml");
}
