// pko/repo: repository index files (load, add, remove, byte-stable write) and the CLI's
// `kpkg package repo` on them.
#include <gtest/gtest.h>

#include "kpkg/io/tree.hpp"
#include "kpkg/oci/layout.hpp"
#include "kpkg/pko/repo.hpp"
#include "kpkg/plan/image.hpp"
#include "support/registry_fixture.hpp"
#include "support/support.hpp"

namespace {

using namespace kpkg::pko;
using kpkg::test::contains;
using kpkg::test::run_kpkg;
using kpkg::test::TempDir;

const char* const sample = R"(---
apiVersion: manifests.package-operator.run/v1alpha1
kind: Repository
metadata:
  creationTimestamp: "2023-11-22T09:24:01Z"
  name: deprepo
---
apiVersion: manifests.package-operator.run/v1alpha1
data:
  digest: "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
  image: image
  name: deppkg
  versions:
  - v1.0.0
  - 3.0.0
  - v2.0.0
kind: RepositoryEntry
metadata:
  creationTimestamp: null
  name: deppkg.dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd
---
apiVersion: manifests.package-operator.run/v1alpha1
data:
  digest: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
  image: quay.io/x/a
  name: apkg
  versions: [v0.1.0]
  constraints:
  - platformVersion: {name: Kubernetes, range: ">=1.20.x"}
kind: RepositoryEntry
metadata:
  name: apkg.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
)";

const char* const expected = R"(---
apiVersion: manifests.package-operator.run/v1alpha1
kind: Repository
metadata:
  creationTimestamp: null
  name: deprepo
---
apiVersion: manifests.package-operator.run/v1alpha1
data:
  constraints:
  - platformVersion:
      name: Kubernetes
      range: '>=1.20.x'
  digest: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
  image: quay.io/x/a
  name: apkg
  versions:
  - v0.1.0
kind: RepositoryEntry
metadata:
  creationTimestamp: null
  name: apkg.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
---
apiVersion: manifests.package-operator.run/v1alpha1
data:
  digest: dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd
  image: image
  name: deppkg
  versions:
  - v3.0.0
  - v2.0.0
  - v1.0.0
kind: RepositoryEntry
metadata:
  creationTimestamp: null
  name: deppkg.dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd
)";

TEST(PkoRepo, LoadsSortsAndWritesByteStable) {
    auto idx = load_repository(sample, "repo.yaml");
    ASSERT_TRUE(idx.ok()) << idx.error().str();
    EXPECT_EQ(idx->name, "deprepo");
    ASSERT_EQ(idx->entries.size(), 2u);
    const std::string out = write_repository(*idx);
    EXPECT_EQ(out, expected);
    auto again = load_repository(out, "out.yaml");
    ASSERT_TRUE(again.ok()) << again.error().str();
    EXPECT_EQ(write_repository(*again), out);
}

TEST(PkoRepo, CorpusIndexLoads) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto text = kpkg::test::read_file(corpus / "pko/dependencies-synthetic/repo.yaml");
    // Transcribed from upstream's Go tests, whose entry has the placeholder digest "digest":
    // kpkg refuses it with its line (the lock would record it, the image would be named by it).
    auto refused = load_repository(text, "repo.yaml");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, kpkg::ExitCode::invalid);
    EXPECT_TRUE(contains(refused.error().str(), "repo.yaml:14:11: data.digest: Invalid value: "
                                                "\"digest\": must be the package image's sha256 "
                                                "manifest digest"))
        << refused.error().str();
    // With a digest in its place the rest loads.
    const std::string d(64, 'd');
    for (auto at = text.find("digest\""); at != std::string::npos; at = text.find("digest\""))
        text.replace(at, 6, d);
    text.replace(text.find("deppkg.digest"), 13, "deppkg." + d);
    auto idx = load_repository(text, "repo.yaml");
    ASSERT_TRUE(idx.ok()) << idx.error().str();
    ASSERT_EQ(idx->entries.size(), 1u);
    EXPECT_EQ(idx->entries[0].entry_name(), "deppkg." + d);
    EXPECT_EQ(idx->entries[0].versions, (std::vector<std::string>{"v3.0.0", "v2.0.0", "v1.0.0"}));
}

std::string load_error(const std::string& text) {
    auto idx = load_repository(text, "repo.yaml");
    return idx.ok() ? std::string("loaded") : idx.error().str();
}

const char* const head =
    "apiVersion: manifests.package-operator.run/v1alpha1\nkind: Repository\nmetadata: {name: r}\n";

// A digest's 64 hex digits ending in `tail` (hex digits too).
std::string hex(const std::string& tail) {
    return std::string(64 - tail.size(), '0') + tail;
}

std::string entry(const std::string& name, const std::string& digest, const std::string& versions) {
    return "---\napiVersion: manifests.package-operator.run/v1alpha1\nkind: RepositoryEntry\n"
           "data: {name: " +
           name + ", digest: " + hex(digest) + ", image: img, versions: " + versions + "}\n";
}

TEST(PkoRepo, RefusesBadInputWithPositions) {
    EXPECT_EQ(
        load_error(std::string(head) + entry("a", "d1", "[v1.0.0]") + entry("a", "d2", "[1.0.0]")),
        "repo.yaml:9:1: package repository inconsistent: package \"a\" version \"v1.0.0\" "
        "already exists (in entry \"a." +
            hex("d1") + "\")");
    EXPECT_EQ(
        load_error(std::string(head) + entry("a", "d1", "[v1.0.0]") + entry("a", "d1", "[v2.0.0]")),
        "repo.yaml:9:1: package repository inconsistent: duplicate entry \"a." + hex("d1") + "\"");
    EXPECT_TRUE(contains(load_error(std::string(head) + entry("a", "d1", "[v1.0]")),
                         "repo.yaml:5:1: invalid version \"v1.0\""));
    EXPECT_EQ(load_error(std::string(head) +
                         "---\napiVersion: manifests.package-operator.run/v1alpha1\n"
                         "kind: Repository\nmetadata: {name: again}\n"),
              "repo.yaml:6:7: kind \"Repository\": a repository index holds one Repository and "
              "then RepositoryEntry documents");
    EXPECT_EQ(load_error(entry("a", "d1", "[v1.0.0]")),
              "repo.yaml:3:7: kind \"RepositoryEntry\": the first document of a repository index "
              "must be a Repository");
    EXPECT_EQ(load_error(std::string(head) + entry("a", "d1", "[]")),
              "repo.yaml:7:113: data.versions: Required value");
    EXPECT_EQ(load_error("apiVersion: v1\nkind: Repository\nmetadata: {name: r}\n"),
              "repo.yaml:1:13: apiVersion: Unsupported value: \"v1\": supported values: "
              "\"manifests.package-operator.run/v1alpha1\"");
    EXPECT_TRUE(contains(load_error(""), "no Repository document"));
}

TEST(PkoRepo, RefusesADigestThatIsNotOne) {
    // data.digest names the package image (image@sha256:DIGEST) and is written into the lock as it
    // is: only a sha256 digest's 64 lower-case hex digits are taken, refused with the line.
    auto with_digest = [](const std::string& d) {
        return std::string(head) +
               "---\napiVersion: manifests.package-operator.run/v1alpha1\nkind: RepositoryEntry\n"
               "data:\n  name: a\n  image: img\n  versions: [v1.0.0]\n  digest: " +
               d + "\n";
    };
    for (const std::string& bad : std::vector<std::string>{
             "../../../../etc/passwd", "digest", "sha256:" + hex("1"), std::string(64, 'A'),
             hex("1").substr(1), hex("1") + "0", hex("1") + "/x"}) {
        auto idx = load_repository(with_digest(bad), "repo.yaml");
        ASSERT_FALSE(idx.ok()) << bad;
        EXPECT_EQ(idx.error().code, kpkg::ExitCode::invalid) << bad;
        EXPECT_EQ(idx.error().str(), "repo.yaml:11:11: data.digest: Invalid value: \"" + bad +
                                         "\": must be the package image's sha256 manifest "
                                         "digest, 64 lower-case hexadecimal digits without "
                                         "\"sha256:\"")
            << bad;
    }
    EXPECT_TRUE(load_repository(with_digest(hex("1")), "repo.yaml").ok());
    // The same rule for what `repo add` and `update` take from an image.
    EXPECT_EQ(digest_hex("sha256:" + hex("1")).take(), hex("1"));
    EXPECT_EQ(digest_hex(hex("1")).take(), hex("1"));
    EXPECT_FALSE(digest_hex("sha256:../x").ok());
    EXPECT_FALSE(is_digest_hex("sha256:" + hex("1")));
}

// spec.repositories[].file, read from the package's tree: inside the package only, as bundles and
// catalogs read their files.
TEST(PkoRepo, RepositoryFileStaysInsideThePackage) {
    TempDir dir;
    const std::string index = std::string(head) + entry("a", "d1", "[v1.0.0]");
    dir.write("outside.yaml", index);
    dir.write("elsewhere/repo.yaml", index);
    dir.write("p/repo.yaml", index);
    dir.write("p/sub/repo.yaml", index);
    namespace fs = std::filesystem;
    fs::create_symlink("repo.yaml", dir / "p/same.yaml");            // inside: read
    fs::create_symlink("sub", dir / "p/subdir");                     // inside: read through
    fs::create_symlink(dir / "outside.yaml", dir / "p/leaves.yaml"); // outside: refused
    fs::create_symlink("../elsewhere", dir / "p/away");              // a directory outside
    const kpkg::io::DirectoryTree tree(dir / "p");
    const kpkg::SourcePos at{"p/manifest.yaml", 12, 9, -1};
    auto load = [&](const std::string& file) {
        return load_repository_file(tree, file, "spec.repositories[0].file", at);
    };
    for (const std::string ok : {"repo.yaml", "./repo.yaml", "sub/repo.yaml", "same.yaml",
                                 "subdir/repo.yaml", "sub//./repo.yaml"}) {
        auto idx = load(ok);
        EXPECT_TRUE(idx.ok()) << ok << ": " << idx.error().str();
    }
    for (const std::string& name : {(dir / "outside.yaml").string(), std::string("../outside.yaml"),
                                    std::string("sub/../../outside.yaml"), std::string("..")}) {
        auto idx = load(name);
        ASSERT_FALSE(idx.ok()) << name;
        EXPECT_EQ(idx.error().code, kpkg::ExitCode::invalid) << name;
        EXPECT_EQ(idx.error().str(), "p/manifest.yaml:12:9: spec.repositories[0].file: Invalid "
                                     "value: \"" +
                                         name +
                                         "\": must name a file inside the package directory (a "
                                         "relative path without \"..\")");
    }
    auto leaves = load("leaves.yaml");
    ASSERT_FALSE(leaves.ok());
    EXPECT_EQ(leaves.error().code, kpkg::ExitCode::invalid);
    EXPECT_TRUE(contains(leaves.error().str(), "refused " + (dir / "p/leaves.yaml").string() +
                                                   ": it is a symbolic link to " +
                                                   (dir / "outside.yaml").string() + ", outside"))
        << leaves.error().str();
    ASSERT_EQ(leaves.error().notes.size(), 1u);
    EXPECT_EQ(leaves.error().notes[0],
              "named by spec.repositories[0].file \"leaves.yaml\" at p/manifest.yaml:12:9");
    auto away = load("away/repo.yaml");
    ASSERT_FALSE(away.ok());
    EXPECT_EQ(away.error().code, kpkg::ExitCode::invalid);
    EXPECT_TRUE(
        contains(away.error().str(), "refused " + (dir / "p/away").string() +
                                         ": it is a symbolic link to ../elsewhere, outside"))
        << away.error().str();
    auto missing = load("nope.yaml");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, kpkg::ExitCode::error);
    EXPECT_TRUE(contains(missing.error().str(), "nope.yaml: no such file or directory"));
}

TEST(PkoRepo, AddAndRemove) {
    RepositoryIndex idx;
    idx.name = "r";
    RepositoryEntry e{"b", "img", "d", {"v1.0.0", "v2.0.0-rc.1"}, {}, {}};
    ASSERT_TRUE(idx.add(e).ok());
    EXPECT_EQ(idx.entries[0].versions, (std::vector<std::string>{"v2.0.0-rc.1", "v1.0.0"}));
    RepositoryEntry clash{"b", "img", "e", {"1.0.0"}, {}, {}};
    auto r = idx.add(clash);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(idx.entries.size(), 1u); // unchanged on error
    EXPECT_TRUE(idx.remove("b", "d"));
    EXPECT_FALSE(idx.remove("b", "d"));
    EXPECT_TRUE(idx.entries.empty());
}

// --- CLI ----------------------------------------------------------------------------------------

TEST(PkoRepoCli, InitListAndErrors) {
    TempDir dir;
    const auto file = (dir / "index.yaml").string();
    auto init = run_kpkg({"package", "repo", "init", file, "myrepo"});
    ASSERT_EQ(init.exit_code, 0) << init.err;
    EXPECT_EQ(kpkg::test::read_file(file),
              "---\napiVersion: manifests.package-operator.run/v1alpha1\nkind: Repository\n"
              "metadata:\n  creationTimestamp: null\n  name: myrepo\n");
    auto list = run_kpkg({"package", "repo", "list", file});
    EXPECT_EQ(list.exit_code, 0) << list.err;
    EXPECT_EQ(list.out, "Repository myrepo\nno packages\n");

    const auto sample_file = dir.write("sample.yaml", sample);
    auto json = run_kpkg({"package", "repo", "list", sample_file.string(), "-o", "json"});
    EXPECT_EQ(json.exit_code, 0) << json.err;
    EXPECT_TRUE(contains(json.out, "\"versions\": [\n                \"v3.0.0\",")) << json.out;
    auto text = run_kpkg({"package", "repo", "list", sample_file.string()});
    EXPECT_TRUE(contains(text.out, "deppkg   v3.0.0,v2.0.0,v1.0.0")) << text.out;

    // A broken index: exit 3 with the position, and the file unchanged by add.
    const std::string broken =
        std::string(head) + entry("a", "d1", "[v1.0.0]") + entry("a", "d2", "[v1.0.0]");
    const auto broken_file = dir.write("broken.yaml", broken);
    auto bad =
        run_kpkg({"package", "repo", "add", broken_file.string(), "quay.io/x/y:v1", "v9.0.0"});
    EXPECT_EQ(bad.exit_code, 3) << bad.err;
    EXPECT_TRUE(contains(bad.err, "broken.yaml:9:1: package repository inconsistent")) << bad.err;
    EXPECT_EQ(kpkg::test::read_file(broken_file), broken);

    auto missing = run_kpkg({"package", "repo", "list", (dir / "nope.yaml").string()});
    EXPECT_EQ(missing.exit_code, 1) << missing.err;
    auto usage = run_kpkg({"package", "repo", "init", file});
    EXPECT_EQ(usage.exit_code, 2);
}

TEST(PkoRepoCli, AddFromLocalLayoutNeedsARepositoryName) {
    TempDir dir;
    const auto file = dir.write("index.yaml", std::string(head));
    // A directory that is not an image: a usage error, the index untouched.
    auto r = run_kpkg({"package", "repo", "add", file.string(), dir.path().string(), "v1.0.0"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(kpkg::test::read_file(file), head);
}

// An OCI layout holding a Package Operator package image: package/manifest.yaml.
std::string package_layout(const TempDir& dir, const std::string& name,
                           const std::string& manifest) {
    kpkg::plan::ImageContent c;
    c.kind = kpkg::plan::ImageKind::package;
    c.files.push_back({"package", "", true});
    c.files.push_back({"package/manifest.yaml", manifest, false});
    auto img = kpkg::plan::build_image(c);
    EXPECT_TRUE(img.ok()) << (img.ok() ? "" : img.error().str());
    EXPECT_TRUE(kpkg::oci::write_oci_dir(dir / name, *img, "v1").ok());
    return "oci:" + (dir / name).string() + ":v1";
}

TEST(PkoRepoCli, AddAndRemoveAPackageImage) {
    TempDir dir;
    const std::string image =
        package_layout(dir, "pkg", R"(apiVersion: manifests.package-operator.run/v1alpha1
kind: PackageManifest
metadata:
  name: mypkg
spec:
  scopes: [Namespaced]
  phases: [{name: deploy}]
  constraints:
  - platformVersion: {name: Kubernetes, range: ">=1.27.x"}
)");
    const auto file = (dir / "index.yaml").string();
    ASSERT_EQ(run_kpkg({"package", "repo", "init", file, "r"}).exit_code, 0);
    // A local image needs the repository its entry names.
    auto no_name = run_kpkg({"package", "repo", "add", file, image, "v1.0.0"});
    EXPECT_EQ(no_name.exit_code, 2) << no_name.err;
    EXPECT_TRUE(contains(no_name.err, "--image")) << no_name.err;

    auto add = run_kpkg({"package", "repo", "add", file, image, "1.0.0", "v1.1.0", "--image",
                         "quay.io/acme/mypkg"});
    ASSERT_EQ(add.exit_code, 0) << add.err;
    auto idx = load_repository(kpkg::test::read_file(file), file);
    ASSERT_TRUE(idx.ok()) << idx.error().str();
    ASSERT_EQ(idx->entries.size(), 1u);
    const RepositoryEntry& e = idx->entries[0];
    EXPECT_EQ(e.name, "mypkg");
    EXPECT_EQ(e.image, "quay.io/acme/mypkg");
    EXPECT_EQ(e.digest.size(), 64u);
    EXPECT_EQ(e.versions, (std::vector<std::string>{"v1.1.0", "v1.0.0"}));
    ASSERT_TRUE(e.constraints.is_seq());
    EXPECT_EQ(e.constraints.items.size(), 1u);

    // The same versions again: refused, and the file is unchanged.
    const std::string before = kpkg::test::read_file(file);
    auto again = run_kpkg({"package", "repo", "add", file, image, "v1.0.0", "--image", "q.io/x"});
    EXPECT_EQ(again.exit_code, 3) << again.err;
    EXPECT_TRUE(contains(again.err, "package repository inconsistent")) << again.err;
    EXPECT_EQ(kpkg::test::read_file(file), before);
    auto bad_version =
        run_kpkg({"package", "repo", "add", file, image, "one", "--image", "q.io/x"});
    EXPECT_EQ(bad_version.exit_code, 2) << bad_version.err;
    EXPECT_TRUE(contains(bad_version.err, "VERSION: invalid semantic version \"one\""))
        << bad_version.err;
    EXPECT_EQ(kpkg::test::read_file(file), before);

    auto rm = run_kpkg({"package", "repo", "remove", file, image});
    ASSERT_EQ(rm.exit_code, 0) << rm.err;
    EXPECT_EQ(kpkg::test::read_file(file),
              "---\napiVersion: manifests.package-operator.run/v1alpha1\nkind: Repository\n"
              "metadata:\n  creationTimestamp: null\n  name: r\n");
    auto rm2 = run_kpkg({"package", "repo", "remove", file, image});
    EXPECT_EQ(rm2.exit_code, 3) << rm2.err;
    EXPECT_TRUE(contains(rm2.err, "package \"mypkg\" digest")) << rm2.err;

    // An image that is no package.
    kpkg::plan::ImageContent c;
    c.files.push_back({"other", "x", false});
    auto img = kpkg::plan::build_image(c);
    ASSERT_TRUE(img.ok());
    ASSERT_TRUE(kpkg::oci::write_oci_dir(dir / "other", *img, "v1").ok());
    auto not_pkg =
        run_kpkg({"package", "repo", "add", file, "oci:" + (dir / "other").string() + ":v1",
                  "v1.0.0", "--image", "q.io/x"});
    EXPECT_EQ(not_pkg.exit_code, 3) << not_pkg.err;
    EXPECT_TRUE(contains(not_pkg.err, "not a Package Operator package image")) << not_pkg.err;
}

TEST(PkoRepoCli, AddAndRemoveFromARegistry) {
    if (kpkg::test::RegistryProcess::binary().empty())
        GTEST_SKIP() << ::kpkg::test::missing_tool("docker-registry");
    kpkg::test::RegistryProcess reg;
    ASSERT_TRUE(reg.running()) << reg.error();
    TempDir dir;
    const std::vector<std::string> env = {"KPKG_CACHE_DIR=" + (dir / "cache").string()};
    const std::string layout =
        package_layout(dir, "pkg", R"(apiVersion: manifests.package-operator.run/v1alpha1
kind: PackageManifest
metadata:
  name: frompush
spec:
  scopes: [Cluster]
  phases: [{name: deploy}]
)");
    const std::string ref = reg.host() + "/acme/frompush:v2";
    auto push = run_kpkg({"push", layout, ref}, {}, env);
    ASSERT_EQ(push.exit_code, 0) << push.err;
    const auto at = push.out.find("sha256:");
    ASSERT_NE(at, std::string::npos) << push.out;
    const std::string digest = push.out.substr(at + 7, 64);

    const auto file = (dir / "index.yaml").string();
    ASSERT_EQ(run_kpkg({"package", "repo", "init", file, "r"}, {}, env).exit_code, 0);
    auto add = run_kpkg({"package", "repo", "add", file, ref, "v2.0.0"}, {}, env);
    ASSERT_EQ(add.exit_code, 0) << add.err;
    auto idx = load_repository(kpkg::test::read_file(file), file);
    ASSERT_TRUE(idx.ok()) << idx.error().str();
    ASSERT_EQ(idx->entries.size(), 1u);
    // The repository without the tag, and the manifest digest as hex.
    EXPECT_EQ(idx->entries[0].image, reg.host() + "/acme/frompush");
    EXPECT_EQ(idx->entries[0].digest, digest);
    EXPECT_EQ(idx->entries[0].entry_name(), "frompush." + digest);

    auto rm = run_kpkg({"package", "repo", "remove", file, ref}, {}, env);
    ASSERT_EQ(rm.exit_code, 0) << rm.err;
    auto after = load_repository(kpkg::test::read_file(file), file);
    ASSERT_TRUE(after.ok());
    EXPECT_TRUE(after->entries.empty());
}

} // namespace
