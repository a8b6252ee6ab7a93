// kpkg package update with transitive dependencies: packages built with `kpkg build`, pushed to a
// docker-registry on loopback, listed with `kpkg package repo add`; the root package's lock is
// then resolved through the dependencies' own manifests.
#include <gtest/gtest.h>

#include <memory>

#include "kpkg/oci/layout.hpp"
#include "kpkg/plan/image.hpp"
#include "support/registry_fixture.hpp"
#include "support/support.hpp"

namespace {

namespace fs = std::filesystem;
using kpkg::test::contains;
using kpkg::test::run_kpkg;
using kpkg::test::TempDir;

std::string manifest(const std::string& name, const std::string& deps,
                     const std::string& extra = {}) {
    std::string m = "apiVersion: manifests.package-operator.run/v1alpha1\n"
                    "kind: PackageManifest\n"
                    "metadata:\n  name: " +
                    name +
                    "\n"
                    "spec:\n  scopes: [Cluster]\n  phases: [{name: deploy}]\n" +
                    extra;
    if (!deps.empty()) m += "  dependencies:\n" + deps;
    return m;
}

std::string dep(const std::string& name, const std::string& package, const std::string& range) {
    return "  - image: {name: " + name + ", package: " + package +
           (range.empty() ? std::string() : ", range: \"" + range + "\"") + "}\n";
}

// One registry and one repository index "r" for the whole suite.
class PkoUpdate : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (kpkg::test::RegistryProcess::binary().empty()) return;
        reg_ = new kpkg::test::RegistryProcess();
        dir_ = new TempDir();
        if (!reg_->running()) return;
        index_ = (*dir_ / "index.yaml").string();
        ok_ = run_kpkg({"package", "repo", "init", index_, "r"}, {}, env()).exit_code == 0;
        // a 2.0.0 needs b >= 2, a 1.0.0 needs b < 2.
        publish("a", "1.0.0", dep("b", "b.r", "<2"));
        publish("a", "2.0.0", dep("b", "b.r", ">=2"));
        publish("b", "1.0.0", "");
        publish("b", "1.1.0", "");
        publish("b", "2.0.0", "");
        // c needs a package no repository of the root has.
        publish("c", "1.0.0", dep("x", "x.elsewhere", ""));
        // d and e need each other; e only d 1.x, so d 2.0.0 cannot be.
        publish("d", "1.0.0", dep("e", "e.r", ""));
        publish("d", "2.0.0", dep("e", "e.r", ""));
        publish("e", "1.0.0", dep("d", "d.r", "1.x"));
        // f's image holds a manifest of the wrong kind, g's a dependency without a package
        // (built by hand: kpkg build refuses the first).
        publish_raw("f", "apiVersion: manifests.package-operator.run/v1alpha1\n"
                         "kind: PackageManifestLock\nmetadata: {name: f}\n");
        publish_raw("g", manifest("g", "  - image: {name: nameless}\n"));
    }
    static void TearDownTestSuite() {
        delete reg_;
        delete dir_;
        reg_ = nullptr;
        dir_ = nullptr;
    }

    static std::vector<std::string> env(const std::string& cache = "publish-cache") {
        return {"KPKG_CACHE_DIR=" + (*dir_ / cache).string()};
    }

    // Builds the package with `kpkg build`, pushes it and adds it to the index.
    static void publish(const std::string& name, const std::string& version,
                        const std::string& deps) {
        const std::string src = "src-" + name + "-" + version;
        // The version in a comment makes every image distinct.
        dir_->write(src + "/manifest.yaml", "# " + version + "\n" + manifest(name, deps));
        const std::string ref = reg_->host() + "/acme/" + name + ":" + version;
        auto b = run_kpkg({"build", (*dir_ / src).string(), "-t", ref, "--push"}, {}, env());
        auto a = run_kpkg({"package", "repo", "add", index_, ref, "v" + version}, {}, env());
        if (b.exit_code != 0 || a.exit_code != 0) {
            ok_ = false;
            std::cerr << b.err << a.err;
        }
    }

    // Pushes an image of package `name` 1.0.0 whose package/manifest.yaml is `text`.
    static void publish_raw(const std::string& name, const std::string& text) {
        kpkg::plan::ImageContent c;
        c.kind = kpkg::plan::ImageKind::package;
        c.files.push_back({"package", "", true});
        c.files.push_back({"package/manifest.yaml", text, false});
        auto img = kpkg::plan::build_image(c);
        const fs::path layout = *dir_ / (name + "-layout");
        const std::string ref = reg_->host() + "/acme/" + name + ":1.0.0";
        if (!img.ok() || !kpkg::oci::write_oci_dir(layout, *img, "v1").ok() ||
            run_kpkg({"push", "oci:" + layout.string() + ":v1", ref}, {}, env()).exit_code != 0 ||
            run_kpkg({"package", "repo", "add", index_, ref, "v1.0.0"}, {}, env()).exit_code != 0)
            ok_ = false;
    }

    void SetUp() override {
        if (kpkg::test::RegistryProcess::binary().empty())
            GTEST_SKIP() << ::kpkg::test::missing_tool("docker-registry");
        ASSERT_TRUE(reg_->running()) << reg_->error();
        ASSERT_TRUE(ok_) << "the packages could not be published";
    }

    // A root package `name` in a fresh directory, with the index beside its manifest.
    fs::path root(const std::string& name, const std::string& deps) {
        const fs::path d = tmp_ / name;
        tmp_.write(name + "/manifest.yaml",
                   manifest(name, deps, "  repositories:\n  - file: index.yaml\n"));
        fs::copy_file(index_, d / "index.yaml");
        return d;
    }
    kpkg::test::RunResult update(const fs::path& d, const std::string& cache = "cache",
                                 bool offline = false) {
        std::vector<std::string> args;
        if (offline) args.push_back("--offline");
        args.insert(args.end(), {"package", "update", d.string()});
        return run_kpkg(args, {}, {"KPKG_CACHE_DIR=" + (tmp_ / cache).string()});
    }

    static kpkg::test::RegistryProcess* reg_;
    static TempDir* dir_;
    static std::string index_;
    static bool ok_;
    TempDir tmp_;
};

kpkg::test::RegistryProcess* PkoUpdate::reg_ = nullptr;
TempDir* PkoUpdate::dir_ = nullptr;
std::string PkoUpdate::index_;
bool PkoUpdate::ok_ = false;

std::string entry(const std::string& name, const std::string& version) {
    return "    name: " + name + "\n    version: " + version + "\n";
}

TEST_F(PkoUpdate, TransitiveConflictForcesAnOlderDirectVersion) {
    // main wants any a and b < 2: a 2.0.0 (newest) needs b >= 2, so a 1.0.0 with b 1.1.0.
    const auto d = root("main", dep("a", "a.r", "") + dep("b", "b.r", "<2"));
    auto r = update(d);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string lock = kpkg::test::read_file(d / "manifest.lock.yaml");
    EXPECT_TRUE(contains(lock, entry("b", "1.1.0"))) << lock;
    EXPECT_TRUE(contains(lock, entry("a", "1.0.0"))) << lock;
    // Only the direct dependencies are locked.
    EXPECT_FALSE(contains(lock, "name: e")) << lock;

    // Offline with the cache the run above filled: the same answer, the lock untouched.
    const auto before = fs::last_write_time(d / "manifest.lock.yaml");
    auto warm = update(d, "cache", true);
    EXPECT_EQ(warm.exit_code, 0) << warm.err;
    EXPECT_TRUE(contains(warm.out, "is up to date")) << warm.out;
    EXPECT_EQ(fs::last_write_time(d / "manifest.lock.yaml"), before);

    // Offline with an empty cache: the dependencies' manifests cannot be read.
    const auto cold_dir = root("cold", dep("a", "a.r", "") + dep("b", "b.r", "<2"));
    auto cold = update(cold_dir, "empty-cache", true);
    EXPECT_EQ(cold.exit_code, 1) << cold.err;
    EXPECT_TRUE(contains(cold.err, "/acme/")) << cold.err;
    EXPECT_TRUE(contains(cold.err, "cold -> ")) << cold.err;
    EXPECT_FALSE(fs::exists(cold_dir / "manifest.lock.yaml"));
}

TEST_F(PkoUpdate, UnsatisfiableChainExitsFour) {
    const auto d = root("main", dep("a", "a.r", ">=2") + dep("b", "b.r", "<2"));
    auto r = update(d);
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_TRUE(contains(r.err, "constraints not satisfiable")) << r.err;
    EXPECT_TRUE(contains(r.err, "main requires b.r \"<2\"")) << r.err;
    EXPECT_TRUE(contains(r.err, "main -> a.r@2.0.0 requires b.r \">=2\"")) << r.err;
    EXPECT_FALSE(fs::exists(d / "manifest.lock.yaml"));
}

TEST_F(PkoUpdate, MissingTransitivePackage) {
    const auto d = root("main", dep("c", "c.r", ""));
    auto r = update(d);
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_TRUE(contains(r.err, "main -> c.r@1.0.0 -> x.elsewhere")) << r.err;
    EXPECT_TRUE(contains(r.err, "in none of the repositories of main (r)")) << r.err;
    EXPECT_FALSE(fs::exists(d / "manifest.lock.yaml"));
}

TEST_F(PkoUpdate, CycleResolves) {
    const auto d = root("main", dep("d", "d.r", ""));
    auto r = update(d);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string lock = kpkg::test::read_file(d / "manifest.lock.yaml");
    EXPECT_TRUE(contains(lock, entry("d", "1.0.0"))) << lock;
    EXPECT_FALSE(contains(lock, "name: e")) << lock;
}

TEST_F(PkoUpdate, InvalidDependencyManifestIsNamed) {
    const auto d = root("main", dep("f", "f.r", ""));
    auto r = update(d);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(contains(r.err, "/acme/f@sha256:")) << r.err;
    EXPECT_TRUE(contains(r.err, "is not a valid package")) << r.err;
    EXPECT_FALSE(fs::exists(d / "manifest.lock.yaml"));

    const auto g = root("main2", dep("g", "g.r", ""));
    auto n = update(g);
    EXPECT_EQ(n.exit_code, 3) << n.err;
    EXPECT_TRUE(contains(n.err, "/acme/g@sha256:")) << n.err;
    EXPECT_TRUE(contains(n.err, "spec.dependencies[0].image.package: Required value")) << n.err;
    EXPECT_FALSE(fs::exists(g / "manifest.lock.yaml"));
}

} // namespace
