// bundle::load from an io::Tree: the same bundle from disk and from memory loads, validates and
// renders the same; and what a tree can hold that a bundle must not (links leaving it, dangling
// links, special files, directories that cannot be read) is reported as on disk, in memory.
#include <gtest/gtest.h>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/bundle/inspect.hpp"
#include "kpkg/bundle/render.hpp"
#include "kpkg/bundle/validate.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/tree.hpp"
#include "support/support.hpp"

using namespace kpkg;
using bundle::Finding;
using bundle::Severity;
using test::contains;
using test::testdata;
namespace fs = std::filesystem;

namespace {

std::string dump(const std::vector<Finding>& fs) {
    std::string s;
    for (const auto& f : fs)
        s += f.pos.str() + ": " + bundle::severity_name(f.severity) + ": " + f.rule + ": " +
             f.message + "\n";
    return s;
}

// Every regular file below `dir`, in memory, shown as `dir` is.
io::MemoryTree copy_to_memory(const fs::path& dir) {
    io::MemoryTree t(dir.string());
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        const std::string rel = fs::relative(e.path(), dir).generic_string();
        if (e.is_directory())
            t.add_dir(rel);
        else if (e.is_regular_file())
            t.add_file(rel, test::read_file(e.path()));
    }
    return t;
}

const std::string annotations_yaml =
    "annotations:\n"
    "  operators.operatorframework.io.bundle.package.v1: demo\n"
    "  operators.operatorframework.io.bundle.channels.v1: stable\n";

const std::string csv_yaml = "apiVersion: operators.coreos.com/v1alpha1\n"
                             "kind: ClusterServiceVersion\n"
                             "metadata:\n"
                             "  name: demo.v1.0.0\n"
                             "spec:\n"
                             "  version: 1.0.0\n";

// A small bundle in memory, shown as "b".
io::MemoryTree small_bundle() {
    io::MemoryTree t("b");
    t.add_file("manifests/a.csv.yaml", csv_yaml)
        .add_file("metadata/annotations.yaml", annotations_yaml);
    return t;
}

const Finding* find_rule(const std::vector<Finding>& fs, const std::string& rule) {
    for (const auto& f : fs)
        if (f.rule == rule) return &f;
    return nullptr;
}

} // namespace

TEST(BundleLoadTree, TheSameBundleFromDiskAndFromMemory) {
    for (const char* name :
         {"valid-minimal", "sample-operator", "render-edge", "invalid-csv-skip-range",
          "invalid-dependencies-constraint", "load-wrong-types", "load-hidden", "load-two-csvs"}) {
        SCOPED_TRACE(name);
        const fs::path dir = testdata(std::string("bundles/") + name);
        auto disk = bundle::load(dir);
        auto mem = bundle::load(copy_to_memory(dir));
        ASSERT_TRUE(disk.ok()) << disk.error().str();
        ASSERT_TRUE(mem.ok()) << mem.error().str();
        EXPECT_EQ(dump(mem->findings), dump(disk->findings));
        EXPECT_EQ(dump(bundle::validate(*mem)), dump(bundle::validate(*disk)));
        EXPECT_EQ(mem->bundle.manifests.size(), disk->bundle.manifests.size());
        auto id = bundle::inspect_dir(dir);
        auto im = bundle::inspect_dir(copy_to_memory(dir));
        ASSERT_TRUE(id.ok() && im.ok());
        EXPECT_EQ(io::to_json(im->doc), io::to_json(id->doc));
        auto rd = bundle::render(*disk);
        auto rm = bundle::render(*mem);
        ASSERT_EQ(rd.ok(), rm.ok());
        if (rd.ok())
            EXPECT_EQ(bundle::to_json(*rm), bundle::to_json(*rd));
        else
            EXPECT_EQ(rm.error().str(), rd.error().str());
    }
}

TEST(BundleLoadTree, AnInMemoryBundleValidatesAndRenders) {
    auto t = small_bundle();
    t.add_file("manifests/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n");
    auto l = bundle::load(t);
    ASSERT_TRUE(l.ok()) << l.error().str();
    EXPECT_TRUE(l->findings.empty()) << dump(l->findings);
    EXPECT_EQ(l->bundle.dir, fs::path("b"));
    ASSERT_EQ(l->bundle.manifests.size(), 2u);
    EXPECT_EQ(l->bundle.manifests[0].file, "b/manifests/a.csv.yaml");
    EXPECT_EQ(l->bundle.annotations.file, "b/metadata/annotations.yaml");
    auto r = bundle::render(*l);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ(r->name, "demo.v1.0.0");
    EXPECT_EQ(r->package, "demo");
    // A CEL rule that does not compile is an error of validate, at its position.
    t.add_file("metadata/dependencies.yaml", "dependencies:\n"
                                             "  - type: olm.constraint\n"
                                             "    value:\n"
                                             "      failureMessage: needs it\n"
                                             "      cel:\n"
                                             "        rule: 'nosuchfunction(properties)'\n");
    auto l2 = bundle::load(t);
    ASSERT_TRUE(l2.ok()) << l2.error().str();
    const auto v = bundle::validate(*l2);
    bool cel = false;
    for (const auto& f : v)
        cel = cel || (f.severity == Severity::error &&
                      f.pos.file == "b/metadata/dependencies.yaml" && f.pos.line == 6);
    EXPECT_TRUE(cel) << dump(v);
}

TEST(BundleLoadTree, LinksAndSpecialFilesInMemoryAsOnDisk) {
    auto t = small_bundle();
    t.add_file("shared/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n")
        .add_link("manifests/in.yaml", "../shared/cm.yaml")
        .add_link("manifests/out.yaml", "../../secret.yaml")
        .add_link("manifests/dangling.yaml", "gone.yaml")
        .add_link("manifests/loop1.yaml", "loop2.yaml")
        .add_link("manifests/loop2.yaml", "loop1.yaml")
        .add_link("manifests/dirlink", "../shared")
        .add_special("manifests/sock")
        .add_file("manifests/sub/skipped.yaml", "not: read\n")
        .add_file("manifests/.hidden.yaml", "[not yaml\n");
    auto l = bundle::load(t);
    ASSERT_TRUE(l.ok()) << l.error().str();
    const std::string all = dump(l->findings);
    // The link inside is followed.
    bool shared = false;
    for (const auto& m : l->bundle.manifests)
        shared = shared || (m.name == "shared" && m.file == "b/manifests/in.yaml");
    EXPECT_TRUE(shared) << all;
    // The one leaving is refused (exit 3), dangling and looping ones not read (exit 1).
    EXPECT_TRUE(contains(all, "b/manifests/out.yaml: error: load.link: refused: a symbolic link "
                              "to \"../../secret.yaml\", which is outside the bundle directory "
                              "\"b\""))
        << all;
    EXPECT_TRUE(contains(all, "b/manifests/dangling.yaml: error: load.read: not read: a symbolic "
                              "link to \"gone.yaml\", which does not exist"))
        << all;
    EXPECT_TRUE(contains(all, "b/manifests/loop1.yaml: error: load.read: not read: a symbolic "
                              "link to \"loop2.yaml\", too many levels of symbolic links"))
        << all;
    EXPECT_TRUE(contains(all, "b/manifests/sock: warning: load.skipped: not a regular file"))
        << all;
    EXPECT_FALSE(contains(all, "dirlink")) << all;
    EXPECT_FALSE(contains(all, "skipped.yaml")) << all;
    EXPECT_FALSE(contains(all, "hidden")) << all;
    ASSERT_EQ(l->blocking.size(), 4u) << all;
    EXPECT_EQ(l->blocking[0].code, ExitCode::error); // dangling.yaml, in name order
    EXPECT_FALSE(bundle::render(*l).ok());
}

TEST(BundleLoadTree, WhatIsNotABundle) {
    // No manifests/.
    io::MemoryTree none("b");
    none.add_file("metadata/annotations.yaml", annotations_yaml);
    auto r = bundle::load(none);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(r.error().message, "there is no manifests/ directory"));
    // manifests/ is a file.
    io::MemoryTree file("b");
    file.add_file("manifests", "x");
    r = bundle::load(file);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.error().message, "there is no manifests/ directory"));
    // manifests/ is a link leaving the bundle.
    io::MemoryTree away("b");
    away.add_link("manifests", "../elsewhere");
    r = bundle::load(away);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(r.error().pos.file, "b/manifests");
    EXPECT_TRUE(contains(r.error().message, "manifests/ is a symbolic link to \"../elsewhere\""))
        << r.error().message;
    // A single file is not a bundle.
    test::TempDir d;
    const fs::path f = d.write("csv.yaml", csv_yaml);
    r = bundle::load(io::FileTree(f));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::error);
    EXPECT_TRUE(contains(r.error().message, "is not a directory")) << r.error().message;
}

TEST(BundleLoadTree, UnreadableDirectoriesAndLimits) {
    // manifests/ that cannot be listed fails the load (nothing to report on).
    io::MemoryTree m("b");
    m.add_unreadable_dir("manifests").add_file("metadata/annotations.yaml", annotations_yaml);
    auto r = bundle::load(m);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::error);
    EXPECT_EQ(r.error().message, "cannot read directory b/manifests: permission denied");
    // metadata/ that cannot be listed blocks the render, naming it.
    io::MemoryTree md("b");
    md.add_file("manifests/a.csv.yaml", csv_yaml).add_unreadable_dir("metadata");
    auto l = bundle::load(md);
    ASSERT_TRUE(l.ok()) << l.error().str();
    ASSERT_EQ(l->blocking.size(), 1u) << dump(l->findings);
    EXPECT_EQ(l->blocking[0].code, ExitCode::error);
    EXPECT_TRUE(contains(l->blocking[0].message, "b/metadata")) << l->blocking[0].message;
    EXPECT_EQ(find_rule(l->findings, "annotations.missing"), nullptr);
    // A file over the limit is not read; its size is said.
    auto big = small_bundle();
    big.add_file("manifests/huge.yaml", std::string(3000, 'x'));
    bundle::LoadOptions opts;
    opts.limits.max_file_bytes = 1024;
    auto b = bundle::load(big, opts);
    ASSERT_TRUE(b.ok()) << b.error().str();
    const Finding* f = find_rule(b->findings, "load.read");
    ASSERT_NE(f, nullptr) << dump(b->findings);
    EXPECT_EQ(f->pos.file, "b/manifests/huge.yaml");
    EXPECT_TRUE(contains(f->message, "file is 3000 bytes, more than the limit of 1024 bytes"))
        << f->message;
    ASSERT_EQ(b->blocking.size(), 1u);
    EXPECT_EQ(b->blocking[0].code, ExitCode::invalid);
}
