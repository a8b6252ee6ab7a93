// What kpkg package validate --update-fixtures and kpkg package update write, and read, around
// symbolic links and names that leave the package: fixtures are never written through a link, a
// repository index is read from inside the package only, and a digest that is not one never
// reaches the lock. Each refusal writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/support.hpp"

namespace {

namespace fs = std::filesystem;
using kpkg::test::contains;
using kpkg::test::describe;
using kpkg::test::read_file;
using kpkg::test::run_kpkg;
using kpkg::test::TempDir;

const char* const kManifest = R"(apiVersion: manifests.package-operator.run/v1alpha1
kind: PackageManifest
metadata:
  name: demo
spec:
  scopes: [Namespaced]
  phases: [{name: deploy}]
test:
  template:
  - name: ns
    context:
      package:
        metadata: {name: demo, namespace: prod}
)";

const char* const kTemplate = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ "
                              ".package.metadata.name }}\n  annotations: "
                              "{package-operator.run/phase: deploy}\n";

// A package p/ whose test case "ns" renders ns/cm.yaml, and a directory outside/ beside it holding
// files of its own.
struct Fixtures {
    TempDir tmp;
    fs::path pkg = tmp / "p";
    fs::path out = tmp / "outside";
    Fixtures() {
        tmp.write("p/manifest.yaml", kManifest);
        tmp.write("p/cm.yaml.gotmpl", kTemplate);
        tmp.write("outside/ns/cm.yaml", "theirs\n");
        tmp.write("outside/mine.yaml", "theirs\n");
    }
    kpkg::test::RunResult update() {
        return run_kpkg({"package", "validate", "--update-fixtures", pkg.string()});
    }
    // Nothing outside the package was written or replaced.
    void outside_untouched() const {
        EXPECT_EQ(read_file(out / "ns/cm.yaml"), "theirs\n");
        EXPECT_EQ(read_file(out / "mine.yaml"), "theirs\n");
        std::size_t n = 0;
        for (const auto& e : fs::recursive_directory_iterator(out)) {
            (void)e;
            ++n;
        }
        EXPECT_EQ(n, 3u); // ns/, ns/cm.yaml, mine.yaml
    }
};

TEST(PackageFixtures, FixturesDirectoryLinkedOutOfThePackage) {
    Fixtures f;
    fs::create_symlink(f.out, f.pkg / ".test-fixtures");
    auto r = f.update();
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(contains(r.err, (f.pkg / ".test-fixtures").string() + " is a symbolic link to \"" +
                                    f.out.string() + "\", outside the package"))
        << r.err;
    EXPECT_FALSE(contains(r.out, "wrote")) << r.out;
    f.outside_untouched();
    EXPECT_TRUE(fs::is_symlink(f.pkg / ".test-fixtures"));
}

TEST(PackageFixtures, CaseDirectoryLinkedOutOfThePackage) {
    Fixtures f;
    fs::create_directories(f.pkg / ".test-fixtures");
    fs::create_symlink(f.out / "ns", f.pkg / ".test-fixtures/ns");
    auto r = f.update();
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(contains(r.err, (f.pkg / ".test-fixtures/ns").string() + " is a symbolic link"))
        << r.err;
    f.outside_untouched();
}

TEST(PackageFixtures, FixtureFileLinkedOutOfThePackage) {
    Fixtures f;
    fs::create_directories(f.pkg / ".test-fixtures/ns");
    fs::create_symlink(f.out / "mine.yaml", f.pkg / ".test-fixtures/ns/cm.yaml");
    auto r = f.update();
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(
        contains(r.err, (f.pkg / ".test-fixtures/ns/cm.yaml").string() + " is a symbolic link"))
        << r.err;
    f.outside_untouched();
    // The user's link stays as it was.
    ASSERT_TRUE(fs::is_symlink(f.pkg / ".test-fixtures/ns/cm.yaml"));
    EXPECT_EQ(fs::read_symlink(f.pkg / ".test-fixtures/ns/cm.yaml"), f.out / "mine.yaml");
}

TEST(PackageFixtures, LinkInsideThePackageIsNotWrittenThrough) {
    Fixtures f;
    fs::create_directories(f.pkg / ".test-fixtures/ns");
    fs::create_symlink("../../cm.yaml.gotmpl", f.pkg / ".test-fixtures/ns/cm.yaml");
    auto r = f.update();
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(contains(r.err, "(inside the package)")) << r.err;
    EXPECT_EQ(read_file(f.pkg / "cm.yaml.gotmpl"), kTemplate); // the template is not overwritten
    // Without the link the fixture is written.
    fs::remove(f.pkg / ".test-fixtures/ns/cm.yaml");
    auto ok = f.update();
    EXPECT_EQ(ok.exit_code, 0) << describe(ok);
    EXPECT_TRUE(contains(read_file(f.pkg / ".test-fixtures/ns/cm.yaml"), "name: demo"));
    f.outside_untouched();
}

// --- kpkg package update: repository indexes ----------------------------------------------------

std::string index_with(const std::string& digest) {
    return "apiVersion: manifests.package-operator.run/v1alpha1\n"
           "kind: Repository\n"
           "metadata: {name: deprepo}\n"
           "---\n"
           "apiVersion: manifests.package-operator.run/v1alpha1\n"
           "kind: RepositoryEntry\n"
           "data:\n"
           "  name: deppkg\n"
           // No repository name: the entry's own dependencies are not read (nothing is pulled).
           "  image: Image\n"
           "  digest: " +
           digest + "\n  versions: [v1.0.0]\n";
}

const std::string kDigest(64, 'c');

// A package p/ depending on deppkg.deprepo from the index `file`.
struct Update {
    TempDir tmp;
    fs::path pkg = tmp / "p";
    explicit Update(const std::string& file) {
        tmp.write("p/manifest.yaml", "apiVersion: manifests.package-operator.run/v1alpha1\n"
                                     "kind: PackageManifest\n"
                                     "metadata: {name: main}\n"
                                     "spec:\n"
                                     "  scopes: [Namespaced]\n"
                                     "  phases: [{name: deploy}]\n"
                                     "  repositories:\n"
                                     "  - file: " +
                                         file +
                                         "\n"
                                         "  dependencies:\n"
                                         "  - image: {name: dep, package: deppkg.deprepo}\n");
    }
    kpkg::test::RunResult run() { return run_kpkg({"package", "update", pkg.string()}); }
    bool locked() const { return fs::exists(fs::symlink_status(pkg / "manifest.lock.yaml")); }
};

TEST(PackageUpdate, ADigestThatIsNotOneIsRefused) {
    Update u("repo.yaml");
    u.tmp.write("p/repo.yaml", index_with("../../../../etc/passwd"));
    auto r = u.run();
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(contains(r.err, (u.pkg / "repo.yaml").string() +
                                    ":10:11: data.digest: Invalid value: "
                                    "\"../../../../etc/passwd\""))
        << r.err;
    EXPECT_FALSE(u.locked());
    // With a digest: the lock records it.
    fs::remove(u.pkg / "repo.yaml");
    u.tmp.write("p/repo.yaml", index_with(kDigest));
    auto ok = u.run();
    EXPECT_EQ(ok.exit_code, 0) << describe(ok);
    EXPECT_TRUE(contains(read_file(u.pkg / "manifest.lock.yaml"), "digest: " + kDigest + "\n"));
}

TEST(PackageUpdate, ALockWhoseDigestIsNotOneIsRefused) {
    Update u("repo.yaml");
    u.tmp.write("p/repo.yaml", index_with(kDigest));
    const std::string bad = "apiVersion: manifests.package-operator.run/v1alpha1\n"
                            "kind: PackageManifestLock\n"
                            "spec:\n"
                            "  dependencies:\n"
                            "  - {name: dep, image: Image, version: 1.0.0, digest: ../../x}\n";
    u.tmp.write("p/manifest.lock.yaml", bad);
    auto r = u.run();
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(contains(r.err, "manifest.lock.yaml:5:55: PackageManifestLock invalid in "
                                "manifest.lock.yaml: spec.dependencies[0].digest: Invalid value: "
                                "\"../../x\""))
        << r.err;
    EXPECT_EQ(read_file(u.pkg / "manifest.lock.yaml"), bad);
}

TEST(PackageUpdate, AnAbsoluteIndexFileIsRefused) {
    TempDir other;
    const fs::path index = other.write("repo.yaml", index_with(kDigest));
    Update u(index.string());
    auto r = u.run();
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(contains(r.err, "manifest.yaml:8:11: spec.repositories[0].file: Invalid value: \"" +
                                    index.string() +
                                    "\": must name a file inside the package directory"))
        << r.err;
    EXPECT_FALSE(u.locked());
}

TEST(PackageUpdate, AnIndexFileAboveThePackageIsRefused) {
    Update u("../repo.yaml");
    u.tmp.write("repo.yaml", index_with(kDigest));
    auto r = u.run();
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(contains(r.err, "manifest.yaml:8:11: spec.repositories[0].file: Invalid value: "
                                "\"../repo.yaml\": must name a file inside the package directory"))
        << r.err;
    EXPECT_FALSE(u.locked());
}

TEST(PackageUpdate, AnIndexLinkedOutOfThePackageIsRefused) {
    Update u("repo.yaml");
    const fs::path outside = u.tmp.write("elsewhere/repo.yaml", index_with(kDigest));
    fs::create_symlink(outside, u.pkg / "repo.yaml");
    auto r = u.run();
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(contains(r.err, "refused " + (u.pkg / "repo.yaml").string() +
                                    ": it is a symbolic link to " + outside.string() + ", outside"))
        << r.err;
    EXPECT_TRUE(contains(r.err, "named by spec.repositories[0].file \"repo.yaml\" at ")) << r.err;
    EXPECT_FALSE(u.locked());
    // A directory on the way linked out of the package: the same.
    Update d("repos/repo.yaml");
    fs::create_symlink(outside.parent_path(), d.pkg / "repos");
    auto rd = d.run();
    EXPECT_EQ(rd.exit_code, 3) << describe(rd);
    EXPECT_TRUE(contains(rd.err, "refused " + (d.pkg / "repos").string() +
                                     ": it is a symbolic link to " +
                                     outside.parent_path().string() + ", outside"))
        << rd.err;
    EXPECT_FALSE(d.locked());
    // A link that stays inside the package is read, as the package's tree reads links.
    Update in("repo.yaml");
    in.tmp.write("p/indexes/real.yaml", index_with(kDigest));
    fs::create_symlink("indexes/real.yaml", in.pkg / "repo.yaml");
    auto ri = in.run();
    EXPECT_EQ(ri.exit_code, 0) << describe(ri);
    EXPECT_TRUE(in.locked());
}

} // namespace
