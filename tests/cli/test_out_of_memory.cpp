// Running out of memory while parsing a file is an error of the run (exit 1, "out of memory"),
// never a finding about the file (exit 3): under a `ulimit -v` too small for a large YAML file,
// kpkg package validate, package render and bundle validate say so and write nothing on stdout.
#include <cstdlib>
#include <string>
#include <vector>

#include "support/support.hpp"

namespace kpkg::test {
namespace {

// A flow sequence of n zeros: 2 bytes of text per node, many times that once parsed.
std::string zeros(std::size_t n) {
    std::string s = "[0";
    s.reserve(2 * n + 2);
    for (std::size_t i = 1; i < n; ++i)
        s += ",0";
    s += "]";
    return s;
}

// The limit used: room for kpkg and the small files (checked below), not for 12 million nodes.
constexpr unsigned kLimitMiB = 400;
constexpr std::size_t kNodes = 12'000'000;

// kpkg args under `ulimit -v` of kLimitMiB (huge pages off: no heap reserved ahead).
RunResult run_limited(const std::vector<std::string>& args) {
    std::string script = "ulimit -v ";
    script.append(std::to_string(kLimitMiB * 1024)).append(" && exec \"$0\" \"$@\"");
    const char* bin = std::getenv("KPKG_BIN");
    if (bin == nullptr) return {};
    std::vector<std::string> argv{"/bin/sh", "-c", script, bin};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, {"KPKG_HUGE_PAGES=0", "KPKG_NO_CACHE=1"});
}

// kpkg args, under the limit, stops at `file` for lack of memory: exit 1, nothing on stdout.
void expect_out_of_memory(const std::vector<std::string>& args, const std::string& file) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    auto r = run_limited(args);
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(contains(r.err, "kpkg: error: out of memory while parsing ") &&
                contains(r.err, file))
        << describe(r);
    EXPECT_EQ(r.out, "");
}

class OutOfMemory : public ::testing::Test {
protected:
    void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
        GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
#endif
    }
    TempDir t;
};

const char* const kManifest = R"(apiVersion: manifests.package-operator.run/v1alpha1
kind: PackageManifest
metadata:
  name: big
spec:
  scopes: [Namespaced]
  phases:
  - name: deploy
)";

TEST_F(OutOfMemory, PackageObjectFile) {
    t.write("pkg/manifest.yaml", kManifest);
    t.write("pkg/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: small\n"
                           "  annotations:\n    package-operator.run/phase: deploy\n");
    // The package as it is fits well under the limit: what fails below is the large file.
    auto ok = run_limited({"package", "validate", (t / "pkg").string()});
    ASSERT_EQ(ok.exit_code, 0) << describe(ok);

    std::string big = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n"
                      "  annotations:\n    package-operator.run/phase: deploy\n"
                      "data:\n  list: ";
    t.write("pkg/big.yaml", big.append(zeros(kNodes)).append("\n"));
    expect_out_of_memory({"package", "validate", (t / "pkg").string()}, "big.yaml");
    expect_out_of_memory({"package", "render", (t / "pkg").string(), "--namespace", "ns"},
                         "big.yaml");
}

TEST_F(OutOfMemory, PackageManifest) {
    std::string manifest = kManifest;
    t.write("pkg/manifest.yaml", manifest.append("extra: ").append(zeros(kNodes)).append("\n"));
    expect_out_of_memory({"package", "validate", (t / "pkg").string()}, "manifest.yaml");
}

TEST_F(OutOfMemory, BundleManifest) {
    const fs::path src = testdata("bundles/valid-minimal");
    fs::copy(src, t / "bundle", fs::copy_options::recursive);
    auto ok = run_limited({"bundle", "validate", (t / "bundle").string()});
    ASSERT_EQ(ok.exit_code, 0) << describe(ok);
    std::string big = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  list: ";
    t.write("bundle/manifests/big.yaml", big.append(zeros(kNodes)).append("\n"));
    expect_out_of_memory({"bundle", "validate", (t / "bundle").string()}, "big.yaml");
}

} // namespace
} // namespace kpkg::test
