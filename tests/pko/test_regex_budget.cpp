// Regular-expression work is bounded per render and per validation: the searches of one template
// render (the regex functions, getFileGlob) and the patterns of one configuration validation draw
// on one budget, so hostile expressions and inputs end within seconds with an error naming the
// file (exit 3), and a violation quotes a bounded prefix of a huge value.
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/support.hpp"

namespace kpkg::test {
namespace {

const char* const kManifest = R"(apiVersion: manifests.package-operator.run/v1alpha1
kind: PackageManifest
metadata:
  name: rx
spec:
  scopes: [Namespaced]
  phases:
  - name: deploy
)";

// A template that makes one hostile regexMatch, rendered by kpkg package render.
void write_template_package(const TempDir& t, const std::string& match) {
    t.write("pkg/manifest.yaml", kManifest);
    t.write("pkg/cm.yaml.gotmpl",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rx\n  annotations:\n"
            "    package-operator.run/phase: deploy\ndata:\n  m: \"{{ " +
                match + " }}\"\n");
}

// kpkg args, killed after 120 s: the budget ends each case within seconds on an idle machine
// (generous for a loaded one); the unbounded matching it replaces ran for 73 s to minutes there.
ProgramResult run_bounded(const std::vector<std::string>& args, double& seconds) {
    std::vector<std::string> argv{std::getenv("KPKG_BIN") ? std::getenv("KPKG_BIN") : "kpkg"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto t0 = std::chrono::steady_clock::now();
    ProgramResult r = run_program(argv, {"KPKG_NO_CACHE=1"}, {}, 120);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

void expect_budget_error(const ProgramResult& r, double seconds) {
    EXPECT_FALSE(r.timed_out) << "still matching after " << seconds << " s";
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(contains(r.err, "cm.yaml.gotmpl")) << describe(r);
    EXPECT_TRUE(contains(r.err, "error calling regexMatch: regexp: matching takes too many steps: "
                                "more than 100000000 in all"))
        << describe(r);
    EXPECT_EQ(r.out, "");
}

// One search of a 20,000-instruction expression over 200 KB: 4e9 steps (73 s) before.
TEST(RegexBudget, TemplateLongExpressionOnLargeText) {
    TempDir t;
    write_template_package(
        t, R"(regexMatch (printf "%sb" (repeat 20 "a{1000}")) (repeat 200000 "a"))");
    double s = 0;
    auto r = run_bounded({"package", "render", (t / "pkg").string(), "--namespace", "ns"}, s);
    expect_budget_error(r, s);
}

// 150 x a{1000} over 1 MB: 1e10 steps (minutes) before.
TEST(RegexBudget, TemplateHugeExpressionOnMegabyte) {
    TempDir t;
    write_template_package(t, R"(regexMatch (repeat 150 "a{1000}") (repeat 1000000 "a"))");
    double s = 0;
    auto r = run_bounded({"package", "render", (t / "pkg").string(), "--namespace", "ns"}, s);
    expect_budget_error(r, s);
}

// A config schema pattern checked against 50 values of 100 KB: 268 s and 5 MB of messages before
// (each value quoted whole).
TEST(RegexBudget, SchemaPatternOnLargeValues) {
    TempDir t;
    std::string manifest = kManifest;
    manifest += R"(  config:
    openAPIV3Schema:
      type: object
      properties:
        values:
          type: array
          items:
            type: string
            pattern: "a{1000}a{1000}a{1000}b"
test:
  template:
  - name: big
    context:
      config:
        values:
)";
    const std::string value(100000, 'a');
    for (int i = 0; i < 50; ++i)
        manifest += "        - " + value + "\n";
    t.write("pkg/manifest.yaml", manifest);
    double s = 0;
    auto r = run_bounded({"package", "validate", (t / "pkg").string()}, s);
    EXPECT_FALSE(r.timed_out) << "still matching after " << s << " s";
    EXPECT_EQ(r.exit_code, 3) << describe(r).substr(0, 4000);
    // The report (on stdout) names the file and says why the validation stopped.
    EXPECT_TRUE(contains(r.out, "pkg/manifest.yaml:")) << describe(r).substr(0, 4000);
    EXPECT_TRUE(contains(r.out, "validation stopped: the schema's patterns need more than "
                                "100000000 steps of regular-expression matching"))
        << describe(r).substr(0, 4000);
    // Values are quoted by a prefix: the messages stay short.
    EXPECT_TRUE(contains(r.out, "...\" (100000 bytes)")) << describe(r).substr(0, 4000);
    EXPECT_LT(r.out.size() + r.err.size(), 20000u);
}

} // namespace
} // namespace kpkg::test
