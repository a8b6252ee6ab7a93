// Package Operator packages: loading, rendering, validation, tree, ObjectDeployment, the CLI,
// the corpus' kubectl-package verdicts and hostile packages.
#include <chrono>

#include <gtest/gtest.h>

#include "kpkg/io/tree.hpp"
#include "kpkg/pko/fixtures.hpp"
#include "kpkg/pko/package.hpp"
#include "kpkg/pko/render.hpp"
#include "kpkg/pko/validate.hpp"
#include "support/support.hpp"

namespace kpkg::pko {
namespace {

using test::contains;
namespace fs = std::filesystem;

const char* kManifest = R"(apiVersion: manifests.package-operator.run/v1alpha1
kind: PackageManifest
metadata:
  name: demo
spec:
  scopes: [Cluster, Namespaced]
  phases:
  - name: namespace
  - name: deploy
  config:
    openAPIV3Schema:
      type: object
      properties:
        replicas:
          type: integer
          default: 2
test:
  template:
  - name: ns
    context:
      package:
        metadata: {name: demo, namespace: prod}
)";

io::MemoryTree tree_with(std::initializer_list<std::pair<const char*, const char*>> files) {
    io::MemoryTree t("pkg");
    for (const auto& [rel, text] : files)
        t.add_file(rel, text);
    return t;
}

Loaded must_load(const io::Tree& t, bool fixtures = false) {
    LoadOptions lo;
    lo.fixtures = fixtures;
    auto l = load(t, lo);
    EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().str());
    return l.ok() ? std::move(*l) : Loaded{};
}

std::string all_text(const std::vector<Finding>& vs) {
    std::string s;
    for (const auto& v : vs)
        s += v.pos.str() + " " + v.text() + "\n";
    return s;
}

TEST(PkoLoad, ManifestLockFilesAndDotNames) {
    auto t = tree_with({{"manifest.yaml", kManifest},
                        {"deploy.yaml", "kind: ConfigMap\n"},
                        {".hidden/x.yaml", "a: 1\n"},
                        {".test-fixtures/ns/deploy.yaml", "x\n"},
                        {"README.md", "hi\n"}});
    auto l = must_load(t);
    EXPECT_TRUE(l.findings.empty()) << all_text(l.findings);
    EXPECT_EQ(l.package.manifest.name, "demo");
    ASSERT_EQ(l.package.manifest.phases.size(), 2u);
    EXPECT_EQ(l.package.files.count("deploy.yaml"), 1u);
    EXPECT_EQ(l.package.files.count("README.md"), 1u);
    EXPECT_EQ(l.package.files.count("manifest.yaml"), 0u);
    EXPECT_EQ(l.package.files.count(".hidden/x.yaml"), 0u);
    EXPECT_TRUE(l.package.fixtures.empty());
    auto lf = must_load(t, true);
    EXPECT_EQ(lf.package.fixtures.count(".test-fixtures/ns/deploy.yaml"), 1u);
}

TEST(PkoLoad, StructureProblems) {
    auto both = tree_with({{"manifest.yaml", kManifest}, {"manifest.yml", kManifest}});
    EXPECT_TRUE(
        contains(all_text(must_load(both).findings), "PackageManifest present multiple times"));
    auto none = tree_with({{"a.yaml", "kind: X\n"}});
    EXPECT_TRUE(contains(all_text(must_load(none).findings),
                         "PackageManifest not found: searched at manifest.yaml and manifest.yml"));
    auto gvk = tree_with({{"manifest.yaml", "apiVersion: v1\nkind: ConfigMap\n"}});
    EXPECT_TRUE(contains(all_text(must_load(gvk).findings), "unknown GVK in manifest.yaml"));
    auto bad = tree_with({{"manifest.yaml", "a: [\n"}});
    const auto v = must_load(bad).findings;
    ASSERT_FALSE(v.empty());
    EXPECT_EQ(v[0].pos.file, "pkg/manifest.yaml");
    EXPECT_GT(v[0].pos.line, 0u);
    auto types = tree_with(
        {{"manifest.yaml", "apiVersion: manifests.package-operator.run/v1alpha1\nkind: "
                           "PackageManifest\nmetadata: {name: x}\nspec:\n  phases: deploy\n"}});
    EXPECT_TRUE(contains(all_text(must_load(types).findings),
                         "spec.phases: Invalid value: expected a list, got string"));
}

TEST(PkoLoad, Components) {
    std::string root = kManifest;
    root.replace(root.find("spec:\n"), 6, "spec:\n  components: {}\n");
    auto t = tree_with({{"manifest.yaml", root.c_str()},
                        {"components/backend/manifest.yaml", kManifest},
                        {"components/backend/d.yaml", "kind: X\n"},
                        {"components/.keep", ""}});
    auto l = must_load(t);
    EXPECT_TRUE(l.findings.empty()) << all_text(l.findings);
    ASSERT_EQ(l.package.components.size(), 1u);
    EXPECT_EQ(l.package.components[0].manifest.name, "backend"); // the folder's name
    EXPECT_EQ(l.package.components[0].files.count("d.yaml"), 1u);
    EXPECT_EQ(l.package.files.count("components/backend/d.yaml"), 0u);

    auto stray = tree_with({{"manifest.yaml", root.c_str()}, {"components/foobar", "x"}});
    EXPECT_TRUE(contains(all_text(must_load(stray).findings),
                         "The components directory may only contain folders and dot files in "
                         "components/foobar"));
    auto nested =
        tree_with({{"manifest.yaml", root.c_str()}, {"components/a/manifest.yaml", root.c_str()}});
    EXPECT_TRUE(contains(all_text(must_load(nested).findings),
                         "Nesting multi-component packages not allowed"));
    // Components not enabled: the files are the root's.
    auto off = tree_with({{"manifest.yaml", kManifest}, {"components/a/x.yaml", "kind: X\n"}});
    EXPECT_EQ(must_load(off).package.files.count("components/a/x.yaml"), 1u);
}

TEST(PkoLoad, SymlinksAreSkippedWithAWarning) {
    io::MemoryTree t("pkg");
    t.add_file("manifest.yaml", kManifest);
    t.add_file("real.yaml", "kind: X\n");
    t.add_link("link.yaml", "real.yaml");
    auto l = must_load(t);
    EXPECT_EQ(l.package.files.count("link.yaml"), 0u);
    ASSERT_EQ(l.warnings.size(), 1u);
    EXPECT_TRUE(contains(l.warnings[0], "symbolic link"));
}

TEST(PkoRender, TemplatesObjectsLabelsAndOrder) {
    auto t = tree_with(
        {{"manifest.yaml", kManifest},
         {"b/z.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bz\n  annotations: "
                      "{package-operator.run/phase: deploy}\n"},
         {"b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations: "
                    "{package-operator.run/phase: deploy}\n"},
         {"a.yaml.gotmpl",
          "{{- range $i := until 2 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "
          "a{{ $i }}-{{ $.package.metadata.name }}\n  annotations:\n    "
          "package-operator.run/phase: deploy\ndata:\n  r: \"{{ $.config.replicas }}\"\n{{ end }}"},
         {"_helpers.yaml", "not: an object: here\n"}});
    auto l = must_load(t);
    RenderContext ctx = test_context(l.package.manifest, l.package.manifest.tests[0]);
    ctx.config = admit_package_config(l.package.manifest, io::Node::map(), "").config;
    auto r = render(l.package, ctx);
    ASSERT_FALSE(r.failed) << all_text(r.findings) << r.rendered.files["a.yaml"];
    EXPECT_TRUE(r.findings.empty()) << all_text(r.findings);
    ASSERT_EQ(r.rendered.objects.size(), 4u);
    // Paths with '/' sorted below every other byte: a.yaml, b/z.yaml, b.yaml.
    auto name = [&](std::size_t i) {
        return r.rendered.objects[i].node.get("metadata")->get("name")->text;
    };
    EXPECT_EQ(name(0), "a0-demo");
    EXPECT_EQ(name(1), "a1-demo");
    EXPECT_EQ(name(2), "bz");
    EXPECT_EQ(name(3), "b");
    const io::Node* labels = r.rendered.objects[0].node.get("metadata")->get("labels");
    ASSERT_NE(labels, nullptr);
    EXPECT_EQ(labels->get("package-operator.run/package")->text, "demo");
    EXPECT_EQ(labels->get("package-operator.run/instance")->text, "demo");
    // The schema's default, through JSON: a float64 printed as Go prints it.
    EXPECT_EQ(r.rendered.objects[0].node.get("data")->get("r")->text, "2");
}

TEST(PkoRender, ConditionsAndPathFilters) {
    std::string m = kManifest;
    m.replace(m.find("  config:"), 0,
              "  filter:\n    conditions:\n    - {name: off, expression: 'false'}\n    paths:\n"
              "    - {glob: 'extra/**', expression: cond.off}\n");
    auto t = tree_with(
        {{"manifest.yaml", m.c_str()},
         {"x.yaml",
          "apiVersion: v1\nkind: A\nmetadata:\n  name: keep\n  annotations: "
          "{package-operator.run/phase: deploy}\n---\napiVersion: v1\nkind: A\nmetadata:\n"
          "  name: drop\n  annotations:\n    package-operator.run/phase: deploy\n"
          "    package-operator.run/condition: \"cond.off || config.replicas > 5\"\n"},
         {"extra/deep/y.yaml", "apiVersion: v1\nkind: A\nmetadata:\n  name: gone\n  "
                               "annotations: {package-operator.run/phase: deploy}\n"}});
    auto l = must_load(t);
    RenderContext ctx = test_context(l.package.manifest, l.package.manifest.tests[0]);
    ctx.config = admit_package_config(l.package.manifest, io::Node::map(), "").config;
    auto r = render(l.package, ctx);
    ASSERT_FALSE(r.failed) << all_text(r.findings);
    ASSERT_EQ(r.rendered.objects.size(), 1u);
    EXPECT_EQ(r.rendered.objects[0].node.get("metadata")->get("name")->text, "keep");
    EXPECT_EQ(r.rendered.excluded.count("extra/deep/y.yaml"), 1u);
    EXPECT_EQ(r.rendered.dropped["x.yaml"].count(1), 1u);
    EXPECT_EQ(fixture_text(r.rendered, "extra/deep/y.yaml"), "");
    EXPECT_EQ(fixture_text(r.rendered, "x.yaml"),
              "apiVersion: v1\nkind: A\nmetadata:\n  name: keep\n  annotations: "
              "{package-operator.run/phase: deploy}\n");
}

TEST(PkoRender, ObjectChecks) {
    auto t = tree_with(
        {{"manifest.yaml", kManifest},
         {"a.yaml",
          "apiVersion: v1\nkind: A\nmetadata:\n  name: x\n  labels: {'-bad': ok}\n---\n"
          "kind: A\nmetadata:\n  name: y\n  annotations: {package-operator.run/phase: deploy}\n"
          "---\napiVersion: v1\nkind: A\nmetadata:\n  name: z\n  annotations: "
          "{package-operator.run/phase: nowhere}\n---\napiVersion: v9\nkind: A\nmetadata:\n  "
          "name: z\n  annotations: {package-operator.run/phase: deploy}\n"}});
    auto l = must_load(t);
    auto r = render(l.package, test_context(l.package.manifest, l.package.manifest.tests[0]));
    const std::string all = all_text(r.findings);
    EXPECT_TRUE(contains(all, "Labels invalid in a.yaml idx 0: metadata.labels: Invalid value: "
                              "\"-bad\": name part must consist of"))
        << all;
    EXPECT_TRUE(contains(all, "Missing package-operator.run/phase Annotation in a.yaml idx 0"));
    EXPECT_TRUE(contains(all, "GroupVersionKind not set in a.yaml idx 1"));
    EXPECT_TRUE(contains(all, "Phase not found in manifest in a.yaml idx 2: \"nowhere\""));
    EXPECT_TRUE(contains(all, "Duplicate Object in a.yaml idx 3"));
    EXPECT_TRUE(contains(all, "pkg/a.yaml:11 ")) << all; // the third document's line
}

TEST(PkoRender, FailuresAreClearAndBounded) {
    auto run = [](const char* file, const char* text) {
        auto t = tree_with({{"manifest.yaml", kManifest}, {file, text}});
        auto l = must_load(t);
        auto r = render(l.package, test_context(l.package.manifest, l.package.manifest.tests[0]));
        EXPECT_TRUE(r.failed);
        return all_text(r.findings);
    };
    const auto t0 = std::chrono::steady_clock::now();
    // A template calling itself, a loop that never ends, an unknown function.
    EXPECT_TRUE(contains(
        run("a.yaml.gotmpl", "{{define \"x\"}}{{template \"x\"}}{{end}}{{template \"x\"}}"),
        "executing template from a.yaml.gotmpl"));
    EXPECT_TRUE(contains(
        run("a.yaml.gotmpl", "{{range until 100000000}}{{range until 100000000}}x{{end}}{{end}}"),
        "a.yaml.gotmpl"));
    EXPECT_TRUE(contains(run("a.yaml.gotmpl", "{{ nosuchfunc 1 }}"),
                         "function \"nosuchfunc\" not defined"));
    EXPECT_TRUE(contains(run("a.yaml.gotmpl", "{{ env \"HOME\" }}"), "not defined"));
    // Output that is not YAML, a document that is not an object, no kind.
    EXPECT_TRUE(contains(run("a.yaml.gotmpl", "a: [\n"), "Invalid YAML in a.yaml idx 0"));
    EXPECT_TRUE(contains(run("a.yaml", "[1]\n"), "the document is a list, not an object"));
    EXPECT_TRUE(contains(run("a.yaml", "apiVersion: v1\n"), "Object 'Kind' is missing"));
    // A condition that does not compile.
    EXPECT_TRUE(contains(run("a.yaml", "apiVersion: v1\nkind: A\nmetadata:\n  name: n\n  "
                                       "annotations:\n    package-operator.run/phase: deploy\n    "
                                       "package-operator.run/condition: 'config.('\n"),
                         "The CEL expression in package-operator.run/condition annotation is "
                         "invalid."));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
}

TEST(PkoViolation, TheDocumentShownIsBoundedAndEscaped) {
    Problem v;
    v.reason = "Invalid YAML";
    v.path = "a.yaml";
    v.subject = "kind: A\n" + std::string(100000, '\0');
    const std::string m = v.message();
    EXPECT_LT(m.size(), 9000u); // 2 KiB of the document, escaped
    EXPECT_TRUE(contains(m, "Invalid YAML in a.yaml\nkind: A\n\\x00\\x00")) << m.substr(0, 80);
    EXPECT_TRUE(contains(m, "... (100008 bytes)"));
    EXPECT_EQ(m.find('\0'), std::string::npos);
}

TEST(PkoRender, TenThousandObjects) {
    std::string text;
    for (int i = 0; i < 10000; ++i)
        text += "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm" + std::to_string(i) +
                "\n  annotations: {package-operator.run/phase: deploy}\n";
    auto t = tree_with({{"manifest.yaml", kManifest}, {"many.yaml", text.c_str()}});
    auto l = must_load(t);
    auto r = render(l.package, test_context(l.package.manifest, l.package.manifest.tests[0]));
    EXPECT_FALSE(r.failed);
    EXPECT_TRUE(r.findings.empty()) << all_text(r.findings);
    EXPECT_EQ(r.rendered.objects.size(), 10000u);
}

TEST(PkoGlob, DoublestarSemantics) {
    EXPECT_EQ(glob_match("*.yaml", "a.yaml"), true);
    EXPECT_EQ(glob_match("*.yaml", "d/a.yaml"), false);
    EXPECT_EQ(glob_match("should/**/exclude?", "should/be/excluded"), true);
    EXPECT_EQ(glob_match("**", "a/b/c"), true);
    EXPECT_EQ(glob_match("a/**/c", "a/c"), true);
    EXPECT_EQ(glob_match("{x,y}/*.yml", "y/f.yml"), true);
    EXPECT_EQ(glob_match("[a-c]at", "bat"), true);
    EXPECT_EQ(glob_match("[a-c]at", "dat"), false);
    EXPECT_EQ(glob_match("[a-", "a"), std::nullopt);
    EXPECT_EQ(glob_match("{a,b", "a"), std::nullopt);
}

TEST(PkoValidate, FixturesMissingDifferentAndUpdated) {
    const char* tmpl =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .package.metadata.name "
        "}}\n  annotations: {package-operator.run/phase: deploy}\n";
    auto no_fixtures = tree_with({{"manifest.yaml", kManifest}, {"cm.yaml.gotmpl", tmpl}});
    auto l = must_load(no_fixtures, true);
    auto rep = validate(l);
    EXPECT_TRUE(contains(all_text(rep.findings), "no fixtures in .test-fixtures/ns/"));
    ValidateOptions up;
    up.update_fixtures = true;
    auto rep2 = validate(l, up);
    EXPECT_TRUE(rep2.findings.empty()) << all_text(rep2.findings);
    ASSERT_EQ(rep2.fixture_changes.size(), 1u);
    EXPECT_EQ(rep2.fixture_changes[0].rel, ".test-fixtures/ns/cm.yaml");
    EXPECT_TRUE(contains(rep2.fixture_changes[0].content, "name: demo"));

    auto wrong = tree_with({{"manifest.yaml", kManifest},
                            {"cm.yaml.gotmpl", tmpl},
                            {".test-fixtures/ns/cm.yaml", "old\n"},
                            {".test-fixtures/ns/stale.yaml", "x\n"}});
    auto rep3 = validate(must_load(wrong, true));
    const std::string all = all_text(rep3.findings);
    EXPECT_TRUE(contains(all, "File mismatch against fixture in cm.yaml: Testcase \"ns\"\n--- "
                              "FIXTURE/cm.yaml\n+++ ACTUAL/cm.yaml"))
        << all;
    EXPECT_TRUE(contains(all, "file .test-fixtures/ns/stale.yaml should not exist, filtered or "
                              "empty after template render"));
}

TEST(PkoValidate, AHugeFixtureDiffIsCut) {
    const char* tmpl = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations: "
                       "{package-operator.run/phase: deploy}\n";
    const std::string huge(8 << 20, '\0');
    io::MemoryTree t("pkg");
    t.add_file("manifest.yaml", kManifest);
    t.add_file("cm.yaml.gotmpl", tmpl);
    t.add_file(".test-fixtures/ns/cm.yaml", huge);
    auto rep = validate(must_load(t, true));
    ASSERT_EQ(rep.findings.size(), 1u) << all_text(rep.findings).substr(0, 300);
    const std::string m = rep.findings[0].text();
    EXPECT_TRUE(contains(m, "File mismatch against fixture in cm.yaml")) << m.substr(0, 200);
    EXPECT_LT(m.size(), 70u * 1024);
    EXPECT_EQ(m.find('\0'), std::string::npos);
    EXPECT_TRUE(contains(m, "\\x00\\x00"));
}

TEST(PkoValidate, ManifestFieldsLockAndConfig) {
    const char* m = R"(apiVersion: manifests.package-operator.run/v1alpha1
kind: PackageManifest
metadata:
  name: demo
spec:
  scopes: [Namespaced]
  phases: [{name: a}, {name: a}]
  availabilityProbes: [{probes: []}]
  images: [{name: img, image: quay.io/x/y:v1}, {name: img, image: ""}]
  constraints: [{platformVersion: {name: Kubernetes, range: "not a range"}}]
  config:
    openAPIV3Schema:
      type: object
      properties: {replicas: {type: integer}}
test:
  template:
  - name: "bad name!"
    context: {config: {replicas: "three"}}
)";
    auto t = tree_with({{"manifest.yaml", m}});
    const std::string all = all_text(validate(must_load(t)).findings);
    EXPECT_TRUE(contains(all, "spec.phases[1].name: Invalid value: \"a\": must be unique")) << all;
    EXPECT_TRUE(contains(all, "spec.availabilityProbes[0].probes: Required value"));
    EXPECT_TRUE(contains(all, "spec.images[1].name: Invalid value: \"img\": must be unique"));
    EXPECT_TRUE(contains(all, "spec.images[1].image: Invalid value: \"\": must be non empty"));
    EXPECT_TRUE(contains(all, "spec.constraints[0].platformVersion.range: Invalid value: \"not a "
                              "range\": improper constraint"));
    EXPECT_TRUE(contains(all, "test.template[0].name: Invalid value: \"bad name!\""));
    EXPECT_TRUE(contains(all, "test.template[0].context.config.replicas: Invalid value"));
    EXPECT_TRUE(contains(all, "Missing image in manifest.lock.yaml"));
}

// A lock's digests name what is pulled and deployed: only digests are taken, with their line.
TEST(PkoLoad, LockDigestsAreDigests) {
    const std::string hex(64, 'e');
    auto lock = [&](const std::string& image_digest, const std::string& dep_digest) {
        return "apiVersion: manifests.package-operator.run/v1alpha1\nkind: PackageManifestLock\n"
               "spec:\n  images:\n  - name: img\n    image: quay.io/x/y:v1\n    digest: " +
               image_digest +
               "\n  dependencies:\n  - name: dep\n    image: quay.io/x/d\n    version: 1.0.0\n"
               "    digest: " +
               dep_digest + "\n";
    };
    auto errors = [&](const std::string& text) {
        io::MemoryTree t("pkg");
        t.add_file("manifest.yaml", kManifest);
        t.add_file("manifest.lock.yaml", text);
        return all_text(must_load(t).findings);
    };
    EXPECT_EQ(errors(lock("sha256:" + hex, hex)), "");
    EXPECT_EQ(errors(lock("sha256:" + hex, "sha256:" + hex)), "");
    EXPECT_EQ(errors(lock("../../../../etc/passwd", hex)),
              "pkg/manifest.lock.yaml:7:13 PackageManifestLock invalid in manifest.lock.yaml: "
              "spec.images[0].digest: Invalid value: \"../../../../etc/passwd\": must be a digest "
              "(sha256:<64 lower-case hexadecimal digits>)\n");
    EXPECT_EQ(errors(lock("sha256:" + hex, "../../../../etc/passwd")),
              "pkg/manifest.lock.yaml:12:13 PackageManifestLock invalid in manifest.lock.yaml: "
              "spec.dependencies[0].digest: Invalid value: \"../../../../etc/passwd\": must be a "
              "sha256 digest (64 lower-case hexadecimal digits)\n");
    EXPECT_TRUE(contains(errors(lock(hex, "\"\"")),
                         "spec.images[0].digest: Invalid value: \"" + hex + "\""));
    EXPECT_TRUE(contains(errors(lock("sha256:" + hex, "\"\"")),
                         "spec.dependencies[0].digest: Required value"));
}

// --update-fixtures' writer: never through a symbolic link, checked before anything is written.
TEST(PkoFixtures, NeverWrittenThroughALink) {
    test::TempDir tmp;
    const fs::path pkg = tmp / "p";
    const fs::path out = tmp / "outside";
    fs::create_directories(pkg);
    fs::create_directories(out / "ns");
    tmp.write("outside/ns/cm.yaml", "theirs\n");
    tmp.write("outside/file.yaml", "theirs\n");
    const std::vector<FixtureChange> changes = {{".test-fixtures/a/x.yaml", "new\n", false},
                                                {".test-fixtures/ns/cm.yaml", "new\n", false}};
    auto untouched = [&] {
        EXPECT_EQ(test::read_file(out / "ns/cm.yaml"), "theirs\n");
        EXPECT_EQ(test::read_file(out / "file.yaml"), "theirs\n");
        EXPECT_FALSE(fs::exists(out / "ns/x.yaml"));
        EXPECT_FALSE(fs::exists(out / "a"));
        EXPECT_FALSE(fs::exists(pkg / ".test-fixtures/a")); // nothing written before the refusal
    };
    // .test-fixtures a link to a directory outside the package.
    fs::create_symlink(out, pkg / ".test-fixtures");
    auto r = write_fixture_changes(pkg, changes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(r.error().message, (pkg / ".test-fixtures").string() +
                                                " is a symbolic link to \"" + out.string() +
                                                "\", outside the package"))
        << r.error().message;
    untouched();
    // .test-fixtures/CASE a link out of the package.
    fs::remove(pkg / ".test-fixtures");
    fs::create_directories(pkg / ".test-fixtures");
    fs::create_symlink(out / "ns", pkg / ".test-fixtures/ns");
    r = write_fixture_changes(pkg, changes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(
        contains(r.error().message, (pkg / ".test-fixtures/ns").string() + " is a symbolic link"))
        << r.error().message;
    untouched();
    // A fixture file that is a link out of the package: kept, not replaced or written through.
    fs::remove(pkg / ".test-fixtures/ns");
    fs::create_directories(pkg / ".test-fixtures/ns");
    fs::create_symlink(out / "file.yaml", pkg / ".test-fixtures/ns/cm.yaml");
    r = write_fixture_changes(pkg, changes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(fs::is_symlink(pkg / ".test-fixtures/ns/cm.yaml"));
    untouched();
    // A link that stays inside the package is refused too: behind it are the package's own files
    // (here its template), which the fixtures must not overwrite.
    fs::remove(pkg / ".test-fixtures/ns/cm.yaml");
    tmp.write("p/cm.yaml.gotmpl", "source\n");
    fs::create_symlink("../../cm.yaml.gotmpl", pkg / ".test-fixtures/ns/cm.yaml");
    r = write_fixture_changes(pkg, changes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(r.error().message, "(inside the package)")) << r.error().message;
    EXPECT_EQ(test::read_file(pkg / "cm.yaml.gotmpl"), "source\n");
    untouched();
    // Without links: written.
    fs::remove(pkg / ".test-fixtures/ns/cm.yaml");
    ASSERT_TRUE(write_fixture_changes(pkg, changes).ok());
    EXPECT_EQ(test::read_file(pkg / ".test-fixtures/ns/cm.yaml"), "new\n");
    EXPECT_EQ(test::read_file(pkg / ".test-fixtures/a/x.yaml"), "new\n");
}

// The verdicts kubectl-package gives on its own conformance packages.
TEST(PkoCorpus, ConformanceVerdicts) {
    KPKG_REQUIRE_CORPUS(corpus);
    const auto base = corpus / "pko" / "cli-conformance";
    for (const char* ok : {"without_config", "without_config_multi", "with_config",
                           "with_config_multi", "with_config_no_tests_no_required_properties",
                           "with_config_no_tests_no_required_properties_multi"}) {
        auto r = test::run_kpkg({"package", "validate", (base / "valid" / ok).string()});
        EXPECT_EQ(r.exit_code, 0) << ok << "\n" << r.out << r.err;
    }
    const std::vector<std::pair<const char*, const char*>> bad = {
        {"bad_manifest", "spec.scopes: Required value"},
        {"missing_phase_annotation", "Missing package-operator.run/phase Annotation"},
        {"missing_resource_gvk", "Object 'Kind' is missing"},
        {"invalid_resource_label", "Labels invalid"},
        {"multi_broken_component", "component \"backend\": Phase not found in manifest in "
                                   "deployment.yaml idx 0"},
        {"missing_lock_file", "Missing image in manifest.lock.yaml"},
    };
    for (const auto& [dir, why] : bad) {
        auto r = test::run_kpkg({"package", "validate", (base / "invalid" / dir).string()});
        EXPECT_EQ(r.exit_code, 3) << dir;
        EXPECT_TRUE(contains(r.out, why)) << dir << "\n" << r.out << r.err;
    }
    for (const char* ok : {"test-stub", "test-stub-cel", "test-stub-multi", "example-operator",
                           "validate-unit/valid", "examples-extra/conditionals"}) {
        auto r = test::run_kpkg({"package", "validate", (corpus / "pko" / ok).string()});
        EXPECT_EQ(r.exit_code, 0) << ok << "\n" << r.out << r.err;
    }
}

TEST(PkoCorpus, TreeAsKubectlPackagePrintsIt) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto r = test::run_kpkg(
        {"package", "tree", (corpus / "pko/cli-conformance/valid/without_config").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "test-stub\nPackage test-ns/test\n└── Phase deploy\n    └── apps/v1, "
                     "Kind=Deployment /test-stub-test\n");
    auto c = test::run_kpkg({"package", "tree", (corpus / "pko/test-stub").string(), "--cluster"});
    EXPECT_EQ(c.out, "test-stub\nClusterPackage /test\n└── Phase namespace\n│   ├── /v1, "
                     "Kind=Namespace /test\n└── Phase deploy\n    └── apps/v1, Kind=Deployment "
                     "test/test-stub-test\n");
    auto m = test::run_kpkg(
        {"package", "tree", (corpus / "pko/test-stub-multi").string(), "--component", "backend"});
    EXPECT_EQ(m.exit_code, 0) << m.err;
    EXPECT_TRUE(contains(m.out, "backend\nPackage test-ns/test\n└── Phase deploy\n"));
    auto none = test::run_kpkg(
        {"package", "tree", (corpus / "pko/test-stub-multi").string(), "--component", "nope"});
    EXPECT_EQ(none.exit_code, 3);
    EXPECT_TRUE(contains(none.err, "Component not found [nope]"));
}

TEST(PkoCli, RenderObjectsAndObjectDeployment) {
    KPKG_REQUIRE_CORPUS(corpus);
    const std::string stub = (corpus / "pko/test-stub").string();
    auto r = test::run_kpkg({"package", "render", stub, "--config-testcase", "namespace-scope"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "package-operator.run/instance: test\n"));
    EXPECT_FALSE(contains(r.out, "package-operator.run/phase"));
    EXPECT_TRUE(contains(r.out, "image: chicken\n"));
    auto d = test::run_kpkg({"package", "render", stub, "--config-testcase", "namespace-scope",
                             "--as", "objectdeployment", "--image", "quay.io/x/stub:v1"});
    EXPECT_EQ(d.exit_code, 0) << d.err;
    EXPECT_TRUE(contains(d.out, "kind: ObjectDeployment\n"));
    EXPECT_TRUE(contains(d.out, "kubernetes.io/change-cause: Installing test-stub package.\n"));
    EXPECT_TRUE(
        contains(d.out, "package-operator.run/package-config: '{\"testStubImage\":\"chicken\"}'"));
    EXPECT_TRUE(contains(d.out, "- destinationType: my-prefix/Progressing\n"));
    // A configuration the schema refuses.
    test::TempDir tmp;
    auto cfg = tmp.write("c.yaml", "testStubImage: 5\n");
    auto bad = test::run_kpkg({"package", "render", stub, "--config", cfg.string()});
    EXPECT_EQ(bad.exit_code, 3);
    EXPECT_TRUE(contains(bad.err, "testStubImage")) << bad.err;
    // Constraints against an environment.
    auto out = tmp / "out";
    auto files = test::run_kpkg({"package", "render", stub, "--config-testcase", "cluster-scope",
                                 "--output-dir", out.string()});
    EXPECT_EQ(files.exit_code, 0) << files.err;
    EXPECT_TRUE(fs::exists(out / "01-namespace" / "namespace_test.yaml"));
    EXPECT_TRUE(fs::exists(out / "02-deploy" / "deployment_test_test-stub-test.yaml"));
    auto again = test::run_kpkg({"package", "render", stub, "--config-testcase", "cluster-scope",
                                 "--output-dir", out.string()});
    EXPECT_EQ(again.exit_code, 2); // not empty: nothing overwritten
}

TEST(PkoCli, ValidateUpdateFixturesWritesThem) {
    test::TempDir tmp;
    tmp.write("p/manifest.yaml", kManifest);
    tmp.write("p/cm.yaml.gotmpl", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ "
                                  ".package.metadata.name }}\n  annotations: "
                                  "{package-operator.run/phase: deploy}\n");
    const std::string p = (tmp / "p").string();
    auto first = test::run_kpkg({"package", "validate", p});
    EXPECT_EQ(first.exit_code, 3);
    EXPECT_FALSE(fs::exists(tmp / "p/.test-fixtures")); // never written silently
    auto up = test::run_kpkg({"package", "validate", "--update-fixtures", p});
    EXPECT_EQ(up.exit_code, 0) << up.out << up.err;
    EXPECT_TRUE(fs::exists(tmp / "p/.test-fixtures/ns/cm.yaml"));
    auto second = test::run_kpkg({"package", "validate", p});
    EXPECT_EQ(second.exit_code, 0) << second.out;
    auto json = test::run_kpkg({"package", "validate", p, "-o", "json"});
    EXPECT_TRUE(contains(json.out, "\"valid\": true"));
}

TEST(PkoCli, UpdateWritesTheLockOnlyWhenItChanges) {
    KPKG_REQUIRE_CORPUS(corpus);
    test::TempDir tmp;
    fs::copy(corpus / "pko/dependencies-synthetic", tmp / "d", fs::copy_options::recursive);
    // Upstream's placeholder digest "digest" is no digest: refused with its line, no lock.
    auto refused = test::run_kpkg({"package", "update", (tmp / "d").string()});
    EXPECT_EQ(refused.exit_code, 3) << refused.err;
    EXPECT_TRUE(contains(refused.err, "repo.yaml:14:11: data.digest: Invalid value: \"digest\""))
        << refused.err;
    EXPECT_FALSE(fs::exists(tmp / "d/manifest.lock.yaml"));
    // A digest in its place; the entry's image ("Image") is no repository name, so its own
    // dependencies cannot be read (and nothing is pulled).
    std::string index = test::read_file(tmp / "d/repo.yaml");
    const std::string hex(64, 'd');
    index.replace(index.find("\"digest\""), 8, hex);
    index.replace(index.find("deppkg.digest"), 13, "deppkg." + hex);
    index.replace(index.find("image: image"), 12, "image: Image");
    fs::remove(tmp / "d/repo.yaml");
    tmp.write("d/repo.yaml", index);
    auto r = test::run_kpkg({"package", "update", (tmp / "d").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "warning: repository entry deppkg." + hex +
                                    ": \"Image@sha256:" + hex + "\" is not an image reference"))
        << r.err;
    const std::string lock = test::read_file(tmp / "d/manifest.lock.yaml");
    EXPECT_TRUE(contains(lock, "  - digest: " + hex +
                                   "\n    image: Image\n    name: depname\n    version: 3.0.0\n"))
        << lock;
    const auto before = fs::last_write_time(tmp / "d/manifest.lock.yaml");
    auto again = test::run_kpkg({"package", "update", (tmp / "d").string()});
    EXPECT_EQ(again.exit_code, 0);
    EXPECT_TRUE(contains(again.out, "is up to date"));
    EXPECT_EQ(fs::last_write_time(tmp / "d/manifest.lock.yaml"), before);
    // An image that cannot be looked up offline: an error, and no lock written.
    tmp.write("i/manifest.yaml", "apiVersion: manifests.package-operator.run/v1alpha1\nkind: "
                                 "PackageManifest\nmetadata: {name: i}\nspec:\n  scopes: "
                                 "[Cluster]\n  phases: [{name: a}]\n  images: [{name: x, image: "
                                 "registry.invalid/x/y:v1}]\n");
    auto off = test::run_kpkg({"--offline", "package", "update", (tmp / "i").string()}, {},
                              {"XDG_CACHE_HOME=" + (tmp / "cache").string()});
    EXPECT_EQ(off.exit_code, 1) << off.err;
    EXPECT_FALSE(fs::exists(tmp / "i/manifest.lock.yaml"));
}

} // namespace
} // namespace kpkg::pko
