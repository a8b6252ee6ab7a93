// kpkg plan --output-dir: GitOps trees (olm and manifests formats), their golden bytes, what
// `kubectl kustomize` makes of them, rerunning, --check, --force and the refusals.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "kpkg/io/load.hpp"
#include "kpkg/plan/tree.hpp"
#include "support/support.hpp"

namespace kpkg::plan {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::read_file;
using test::run_kpkg;
using test::testdata;

std::string sample() {
    return testdata("catalog").string();
}
std::string bundle_dir(const std::string& name, const std::string& where = "bundles") {
    return name + "=" + testdata("plan/" + where + "/" + name).string();
}

// `kpkg plan vault` on the sample catalog, both bundles from their directories, into `dir`.
std::vector<std::string> vault_tree(const fs::path& dir, const std::string& format,
                                    const std::vector<std::string>& more = {}) {
    std::vector<std::string> a = {"plan",         "vault",
                                  "--catalog",    sample(),
                                  "--namespace",  "operators",
                                  "--bundle-dir", bundle_dir("vault-operator.v1.2.0"),
                                  "--bundle-dir", bundle_dir("etcdoperator.v0.9.4"),
                                  "--offline",    "--output-dir",
                                  dir.string(),   "--format",
                                  format};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}
std::vector<std::string> with_check(std::vector<std::string> args) {
    return with(std::move(args), {"--check"});
}
// The vault bundle read from testdata/plan/<where>/ instead.
std::vector<std::string> vault_from(std::vector<std::string> args, const std::string& where) {
    for (auto& a : args)
        if (a == bundle_dir("vault-operator.v1.2.0"))
            a = bundle_dir("vault-operator.v1.2.0", where);
    return args;
}

std::vector<std::string> manifests_args(const fs::path& dir) {
    return vault_tree(dir, "manifests", {"--target-namespaces", "operators"});
}
std::vector<std::string> olm_args(const fs::path& dir) {
    return vault_tree(dir, "olm",
                      {"--target-namespaces", "team-a", "--catalog-image",
                       "quay.io/example/catalog:v1", "--approval", "Manual", "--sync-waves"});
}

// Every file under dir (relative path -> bytes).
std::map<std::string, std::string> read_tree(const fs::path& dir) {
    std::map<std::string, std::string> out;
    if (!fs::exists(dir)) return out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file())
            out[fs::relative(e.path(), dir).generic_string()] = read_file(e.path());
    return out;
}

void expect_same_tree(const fs::path& got, const fs::path& want) {
    const auto g = read_tree(got), w = read_tree(want);
    ASSERT_FALSE(w.empty()) << want;
    for (const auto& [path, bytes] : w) {
        auto it = g.find(path);
        if (it == g.end()) {
            ADD_FAILURE() << "missing " << path;
            continue;
        }
        EXPECT_EQ(it->second, bytes) << path;
    }
    for (const auto& [path, bytes] : g)
        EXPECT_TRUE(w.count(path)) << "extra " << path;
}

// The resources of kustomization.yaml, in order.
std::vector<std::string> resources(const fs::path& dir) {
    auto docs = io::parse_yaml(read_file(dir / "kustomization.yaml"), "kustomization.yaml");
    EXPECT_TRUE(docs);
    std::vector<std::string> out;
    if (!docs || docs->empty()) return out;
    for (const auto& r : docs->front().root.get("resources")->items)
        out.push_back(r.text);
    return out;
}

std::string kind_name(const io::Node& n) {
    const io::Node* meta = n.get("metadata");
    const io::Node* ns = meta != nullptr ? meta->get("namespace") : nullptr;
    return n.get("kind")->text + " " + (ns != nullptr ? ns->text + "/" : "") +
           meta->get("name")->text;
}

// --- golden trees --------------------------------------------------------------------------------

TEST(PlanTree, ManifestsGolden) {
    test::TempDir tmp;
    auto r = run_kpkg(manifests_args(tmp / "out"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_TRUE(contains(r.out, "25 added, 0 changed, 0 removed, 0 unchanged")) << r.out;
    expect_same_tree(tmp / "out", testdata("plan/expected/tree-manifests"));
    // Same input, same bytes.
    auto again = run_kpkg(manifests_args(tmp / "second"));
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(read_tree(tmp / "second"), read_tree(tmp / "out"));
}

TEST(PlanTree, OlmGolden) {
    test::TempDir tmp;
    auto r = run_kpkg(olm_args(tmp / "out"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_same_tree(tmp / "out", testdata("plan/expected/tree-olm"));
    // One Subscription, for the requested package (OLM resolves etcd itself), pinned and Manual.
    auto docs = io::parse_yaml(read_file(tmp / "out/vault/subscription-vault.yaml"), "sub");
    ASSERT_TRUE(docs);
    const io::Node& spec = *docs->front().root.get("spec");
    EXPECT_EQ(spec.get("startingCSV")->text, "vault-operator.v1.2.0");
    EXPECT_EQ(spec.get("installPlanApproval")->text, "Manual");
    EXPECT_FALSE(fs::exists(tmp / "out/etcd"));
}

TEST(PlanTree, ManifestsContent) {
    test::TempDir tmp;
    ASSERT_EQ(run_kpkg(manifests_args(tmp / "out")).exit_code, 0);
    // The dependency first, then what requires it.
    const auto res = resources(tmp / "out");
    ASSERT_GE(res.size(), 3u);
    EXPECT_EQ(res.front(), "common/namespace-operators.yaml");
    EXPECT_EQ(res[1].rfind("etcd/customresourcedefinition-", 0), 0u) << res[1];
    EXPECT_EQ(res.back(), "vault/deployment-vault-operator.yaml");
    // The Deployment: the CSV's annotations and the target namespaces on the pod template.
    auto dep = io::parse_yaml(read_file(tmp / "out/etcd/deployment-etcd-operator.yaml"), "d");
    ASSERT_TRUE(dep);
    const io::Node& spec = *dep->front().root.get("spec");
    EXPECT_EQ(spec.get("revisionHistoryLimit")->text, "1");
    const io::Node& ann = *spec.get("template")->get("metadata")->get("annotations");
    EXPECT_EQ(ann.get("olm.targetNamespaces")->text, "operators");
    EXPECT_EQ(ann.get("capabilities")->text, "Basic Install");
    // Namespaced bundle objects are put in the install namespace.
    auto secret =
        io::parse_yaml(read_file(tmp / "out/etcd/secret-etcd-backup-credentials.yaml"), "s");
    ASSERT_TRUE(secret);
    EXPECT_EQ(secret->front().root.get("metadata")->get("namespace")->text, "operators");
}

TEST(PlanTree, SyncWavesFollowTheApplyOrder) {
    test::TempDir tmp;
    ASSERT_EQ(run_kpkg(with(manifests_args(tmp / "out"), {"--sync-waves"})).exit_code, 0);
    auto wave = [&](const std::string& file) {
        auto docs = io::parse_yaml(read_file(tmp / "out" / file), file);
        EXPECT_TRUE(docs) << file;
        if (!docs) return std::string();
        const io::Node* ann = docs->front().root.get("metadata")->get("annotations");
        const io::Node* w = ann != nullptr ? ann->get("argocd.argoproj.io/sync-wave") : nullptr;
        return w != nullptr ? w->text : std::string("none");
    };
    EXPECT_EQ(wave("common/namespace-operators.yaml"), "0");
    EXPECT_EQ(wave("etcd/customresourcedefinition-etcdbackups.etcd.database.coreos.com.yaml"), "1");
    EXPECT_EQ(wave("etcd/serviceaccount-etcd-operator.yaml"), "2");
    EXPECT_EQ(wave("etcd/service-etcd-operator-metrics.yaml"), "3");
    EXPECT_EQ(wave("etcd/deployment-etcd-operator.yaml"), "4");
    // vault, which requires etcd, in the waves after etcd's.
    EXPECT_EQ(wave("vault/customresourcedefinition-vaultservices.vault.security.coreos.com.yaml"),
              "6");
    EXPECT_EQ(wave("vault/deployment-vault-operator.yaml"), "9");
    // Waves never go down along kustomization.yaml's order.
    int last = 0;
    for (const auto& r : resources(tmp / "out")) {
        const int w = std::stoi(wave(r));
        EXPECT_GE(w, last) << r;
        (void)(w > last ? last = w : last);
    }
}

TEST(PlanTree, AllNamespacesPromotesPermissions) {
    // etcd installed: vault alone, which supports AllNamespaces (the default without
    // --target-namespaces).
    test::TempDir tmp;
    auto r = run_kpkg({"plan", "vault", "--catalog", sample(), "-n", "operators", "--installed",
                       testdata("plan/installed-etcd.yaml").string(), "--bundle-dir",
                       bundle_dir("vault-operator.v1.2.0"), "--offline", "--output-dir",
                       (tmp / "out").string(), "--format", "manifests"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto files = read_tree(tmp / "out");
    int cluster_roles = 0, reading_namespaces = 0;
    for (const auto& [path, bytes] : files) {
        EXPECT_EQ(path.find("/role-"), std::string::npos) << path;
        if (path.find("/clusterrole-") != std::string::npos) {
            ++cluster_roles;
            if (contains(bytes, "  - namespaces\n")) ++reading_namespaces;
        }
    }
    // vault's namespaced permissions (service account "default", with the right to read
    // namespaces added) and its cluster permissions (as they are).
    EXPECT_EQ(cluster_roles, 2);
    EXPECT_EQ(reading_namespaces, 1);
    auto dep = io::parse_yaml(read_file(tmp / "out/vault/deployment-vault-operator.yaml"), "d");
    ASSERT_TRUE(dep);
    EXPECT_EQ(dep->front()
                  .root.get("spec")
                  ->get("template")
                  ->get("metadata")
                  ->get("annotations")
                  ->get("olm.targetNamespaces")
                  ->text,
              "");
}

// --- kubectl kustomize ---------------------------------------------------------------------------

const char* kubectl_path = kpkg::test::kubectl_1_32_path;

// The objects `kubectl kustomize dir` prints, as "Kind ns/name", in order.
std::vector<std::string> kustomized(const fs::path& dir, std::string* err) {
    const std::string cmd = std::string(kubectl_path) + " kustomize '" + dir.string() + "' 2>&1";
    std::vector<std::string> out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return out;
    std::string text;
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        text.append(buf, n);
    const int rc = ::pclose(p);
    if (rc != 0) {
        *err = text;
        return out;
    }
    auto docs = io::parse_yaml(text, "kustomize");
    if (!docs) {
        *err = docs.error().message;
        return out;
    }
    for (const auto& d : *docs)
        out.push_back(kind_name(d.root));
    return out;
}

// The objects of the tree's files in kustomization order.
std::vector<std::string> written(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& r : resources(dir)) {
        auto docs = io::parse_yaml(read_file(dir / r), r);
        EXPECT_TRUE(docs) << r;
        if (docs) out.push_back(kind_name(docs->front().root));
    }
    return out;
}

void expect_kustomize_keeps_order(const fs::path& dir) {
    std::string err;
    const auto got = kustomized(dir, &err);
    ASSERT_EQ(err, "");
    const auto want = written(dir);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(got, want);
}

TEST(PlanTree, KubectlKustomizeKeepsTheOrder) {
    if (!fs::exists(kubectl_path))
        GTEST_SKIP() << kpkg::test::missing_tool(kpkg::test::kubectl_1_32, kubectl_path);
    test::TempDir tmp;
    ASSERT_EQ(run_kpkg(manifests_args(tmp / "m")).exit_code, 0);
    ASSERT_EQ(run_kpkg(olm_args(tmp / "o")).exit_code, 0);
    expect_kustomize_keeps_order(tmp / "m");
    expect_kustomize_keeps_order(tmp / "o");
    // Without sortOptions kustomize would put the Namespace and CRDs first but the
    // ServiceAccounts before the Roles of both operators: the fifo order is what keeps etcd's
    // objects before vault's.
    std::string err;
    auto got = kustomized(tmp / "m", &err);
    ASSERT_GT(got.size(), 20u);
    EXPECT_EQ(got[0], "Namespace operators");
    EXPECT_EQ(got.back(), "Deployment operators/vault-operator");
}

// The corpus bundle kiali.1.4.2 (through the catalog naming it) in both formats: golden bytes,
// and kubectl kustomize keeps their order.
TEST(PlanTree, CorpusTreesGoldenAndKustomized) {
    KPKG_REQUIRE_CORPUS(corpus);
    const bool kubectl = fs::exists(kubectl_path);
    test::TempDir tmp;
    for (const std::string format : {"olm", "manifests"}) {
        const fs::path out = tmp / format;
        std::vector<std::string> args = {
            "plan",
            "kiali",
            "--catalog",
            testdata("plan/rbac-catalog").string(),
            "-n",
            "operators",
            "--bundle-dir",
            "kiali-operator.v1.4.2=" + (corpus / "olm/bundles/kiali.1.4.2").string(),
            "--offline",
            "--output-dir",
            out.string(),
            "--format",
            format,
            "--target-namespaces",
            "apps"};
        if (format == "olm")
            args = with(args, {"--catalog-image", "quay.io/example/rbac-catalog:v1"});
        auto r = run_kpkg(args);
        ASSERT_EQ(r.exit_code, 0) << format << ": " << r.err;
        expect_same_tree(out, testdata("plan/expected/tree-kiali-" + format));
        if (kubectl) expect_kustomize_keeps_order(out);
    }
    if (!kubectl)
        GTEST_SKIP() << kpkg::test::missing_tool(kpkg::test::kubectl_1_32,
                                                 "the trees were not kustomized");
}

TEST(PlanTree, RolesPerTargetNamespace) {
    test::TempDir tmp;
    auto r = run_kpkg(vault_tree(tmp / "out", "manifests", {"--target-namespaces", "team-a"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The Roles of the one target namespace are in it, bound to the accounts of the install
    // namespace; nothing else leaves the install namespace.
    int bindings = 0;
    for (const auto& [path, bytes] : read_tree(tmp / "out")) {
        if (path.find("/rolebinding-") != std::string::npos) {
            ++bindings;
            EXPECT_EQ(path.find("/rolebinding-team-a-"), path.find('/')) << path;
            EXPECT_TRUE(contains(bytes, "  namespace: team-a\n")) << bytes;
            EXPECT_TRUE(contains(bytes, "  namespace: operators\n")) << bytes;
        } else if (path.find("/role-") != std::string::npos) {
            EXPECT_EQ(path.find("/role-team-a-"), path.find('/')) << path;
        } else if (contains(bytes, "  namespace: ")) {
            EXPECT_TRUE(contains(bytes, "  namespace: operators\n")) << path;
        }
    }
    EXPECT_EQ(bindings, 3); // etcd: two accounts; vault: "default"
}

// --- the corpus catalog of opm's tests -----------------------------------------------------------

TEST(PlanTree, RegistryActionIndexIsRefusedInBothFormats) {
    KPKG_REQUIRE_CORPUS(corpus);
    const std::string catalog = (corpus / "olm/fbc/registry-action-index-latest").string();
    test::TempDir tmp;
    // Its bundles' CSVs have no install strategy: OLM fails the plan, and there is no tree.
    for (const std::string format : {"olm", "manifests"}) {
        std::vector<std::string> args = {"plan",      "baz",          "--catalog",
                                         catalog,     "-n",           "operators",
                                         "--offline", "--output-dir", (tmp / format).string(),
                                         "--format",  format};
        if (format == "olm") args = with(args, {"--catalog-image", "quay.io/example/index:latest"});
        auto r = run_kpkg(args);
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_TRUE(contains(r.err, "bundle \"baz.v1.1.0\": olm.bundle.object[1]: the CSV "
                                    "has no install strategy"))
            << r.err;
        EXPECT_FALSE(fs::exists(tmp / format)) << format;
    }
}

// --- rerunning, --check, --force -----------------------------------------------------------------

TEST(PlanTree, RerunReportsChanges) {
    test::TempDir tmp;
    const fs::path out = tmp / "out";
    ASSERT_EQ(run_kpkg(manifests_args(out)).exit_code, 0);
    // The same directory named with a trailing '/'.
    auto same = run_kpkg(manifests_args(out.string() + "/"));
    ASSERT_EQ(same.exit_code, 0) << same.err;
    EXPECT_TRUE(contains(same.out, "0 added, 0 changed, 0 removed, 25 unchanged")) << same.out;

    // An edited file is changed back.
    const fs::path dep = out / "etcd/deployment-etcd-operator.yaml";
    const std::string original = read_file(dep);
    tmp.write("out/etcd/deployment-etcd-operator.yaml", "edited\n");
    auto fix = run_kpkg(manifests_args(out));
    ASSERT_EQ(fix.exit_code, 0) << fix.err;
    EXPECT_TRUE(contains(fix.out, "0 added, 1 changed, 0 removed, 24 unchanged")) << fix.out;
    EXPECT_TRUE(contains(fix.out, "  changed  etcd/deployment-etcd-operator.yaml\n")) << fix.out;
    EXPECT_EQ(read_file(dep), original);

    // A plan without vault (etcd installed... here: only etcd requested) removes vault's files.
    auto etcd_only =
        run_kpkg({"plan", "etcd", "--catalog", sample(), "-n", "operators", "--bundle-dir",
                  bundle_dir("etcdoperator.v0.9.4"), "--offline", "--output-dir", out.string(),
                  "--format", "manifests", "--target-namespaces", "operators"});
    ASSERT_EQ(etcd_only.exit_code, 0) << etcd_only.err;
    EXPECT_TRUE(contains(etcd_only.out, "  removed  vault/deployment-vault-operator.yaml\n"))
        << etcd_only.out;
    EXPECT_FALSE(fs::exists(out / "vault"));
    EXPECT_TRUE(fs::exists(dep));
    EXPECT_TRUE(contains(read_file(out / ".kpkg-plan"), "\netcd/deployment-etcd-operator.yaml\n"));
    EXPECT_FALSE(contains(read_file(out / ".kpkg-plan"), "vault/"));
}

TEST(PlanTree, CheckExitsFiveAndWritesNothing) {
    test::TempDir tmp;
    const fs::path out = tmp / "out";
    auto absent = run_kpkg(with_check(manifests_args(out)));
    EXPECT_EQ(absent.exit_code, 5) << absent.err;
    EXPECT_FALSE(fs::exists(out));
    ASSERT_EQ(run_kpkg(manifests_args(out)).exit_code, 0);
    auto clean = run_kpkg(with_check(manifests_args(out)));
    EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
    EXPECT_TRUE(contains(clean.out, "is up to date (25 files)")) << clean.out;
    tmp.write("out/vault/prometheusrule-vault-alerts.yaml", "edited\n");
    fs::remove(out / "common/namespace-operators.yaml");
    auto dirty = run_kpkg(with_check(manifests_args(out)));
    EXPECT_EQ(dirty.exit_code, 5);
    EXPECT_TRUE(contains(dirty.out, "  differs  vault/prometheusrule-vault-alerts.yaml\n"))
        << dirty.out;
    EXPECT_TRUE(contains(dirty.out, "  missing  common/namespace-operators.yaml\n")) << dirty.out;
    EXPECT_EQ(read_file(out / "vault/prometheusrule-vault-alerts.yaml"), "edited\n");
    EXPECT_FALSE(fs::exists(out / "common/namespace-operators.yaml"));
}

TEST(PlanTree, ForeignFilesNeedForce) {
    test::TempDir tmp;
    const fs::path out = tmp / "out";
    tmp.write("out/README.md", "mine\n");
    auto r = run_kpkg(manifests_args(out));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(contains(r.err, "holds 1 file kpkg plan did not write")) << r.err;
    EXPECT_TRUE(contains(r.err, "\n  README.md")) << r.err;
    EXPECT_EQ(read_tree(out).size(), 1u);
    // --force: written beside it; the file stays as it was.
    auto forced = run_kpkg(with(manifests_args(out), {"--force"}));
    ASSERT_EQ(forced.exit_code, 0) << forced.err;
    EXPECT_EQ(read_file(out / "README.md"), "mine\n");
    EXPECT_EQ(read_tree(out).size(), 27u); // 25 objects' files, kustomization, .kpkg-plan, README
    EXPECT_FALSE(contains(read_file(out / ".kpkg-plan"), "README.md"));
}

// A user's symbolic links in the tree: named as themselves, kept as links, never written through.
TEST(PlanTree, LinksAreNamedAsThemselvesAndKept) {
    test::TempDir tmp;
    const fs::path out = tmp / "out";
    ASSERT_EQ(run_kpkg(olm_args(out)).exit_code, 0);
    const std::string sub = read_file(out / "vault/subscription-vault.yaml");
    fs::create_symlink("vault/subscription-vault.yaml", out / "my-link.yaml");
    // Without --force the link is the file kpkg did not write, under its own name.
    auto r = run_kpkg(olm_args(out));
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "holds 1 file kpkg plan did not write")) << r.err;
    EXPECT_TRUE(contains(r.err, "\n  my-link.yaml")) << r.err;
    EXPECT_FALSE(contains(r.err, "\n  vault/subscription-vault.yaml")) << r.err;
    // With --force (and a file to write again) it stays, as the link it was; the file it names
    // is kpkg's.
    tmp.write("out/common/namespace-operators.yaml", "edited\n");
    auto forced = run_kpkg(with(olm_args(out), {"--force"}));
    ASSERT_EQ(forced.exit_code, 0) << forced.err;
    EXPECT_TRUE(contains(forced.out, "0 added, 1 changed, 0 removed")) << forced.out;
    ASSERT_TRUE(fs::is_symlink(out / "my-link.yaml"));
    EXPECT_EQ(fs::read_symlink(out / "my-link.yaml"), "vault/subscription-vault.yaml");
    EXPECT_FALSE(fs::is_symlink(out / "vault/subscription-vault.yaml"));
    EXPECT_EQ(read_file(out / "my-link.yaml"), sub);
    EXPECT_FALSE(contains(read_file(out / ".kpkg-plan"), "my-link.yaml"));
    // --check does not count it either.
    auto check = run_kpkg(with_check(olm_args(out)));
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST(PlanTree, LinkToAFileOutsideTheTreeIsKept) {
    test::TempDir tmp;
    const fs::path out = tmp / "out";
    ASSERT_EQ(run_kpkg(olm_args(out)).exit_code, 0);
    tmp.write("elsewhere/values.yaml", "mine\n");
    fs::create_symlink(tmp / "elsewhere/values.yaml", out / "values.yaml");
    fs::create_directory_symlink(tmp / "elsewhere", out / "docs");
    for (int run = 0; run < 2; ++run) {
        // Something to write each time, so that the tree is replaced.
        tmp.write("out/common/namespace-operators.yaml", "edited\n");
        auto forced = run_kpkg(with(olm_args(out), {"--force"}));
        ASSERT_EQ(forced.exit_code, 0) << run << "\n" << forced.err;
        ASSERT_TRUE(fs::is_symlink(out / "values.yaml"));
        EXPECT_EQ(fs::read_symlink(out / "values.yaml"), tmp / "elsewhere/values.yaml");
        ASSERT_TRUE(fs::is_symlink(out / "docs"));
        EXPECT_EQ(read_file(tmp / "elsewhere/values.yaml"), "mine\n");
    }
    EXPECT_EQ(read_tree(tmp / "elsewhere").size(), 1u);
}

TEST(PlanTree, LinkWhereTheTreeWritesIsRefused) {
    test::TempDir tmp;
    const fs::path out = tmp / "out";
    ASSERT_EQ(run_kpkg(olm_args(out)).exit_code, 0);
    const auto before = read_tree(out);
    // A file kpkg writes replaced by a link to a file outside, and a directory it writes into
    // replaced by a link to a directory outside: neither is written through nor replaced.
    tmp.write("elsewhere/sub.yaml", "mine\n");
    fs::remove(out / "vault/subscription-vault.yaml");
    fs::create_symlink(tmp / "elsewhere/sub.yaml", out / "vault/subscription-vault.yaml");
    fs::rename(out / "common", tmp / "common-moved");
    fs::create_directory_symlink(tmp / "common-moved", out / "common");
    for (const bool force : {false, true}) {
        auto r = run_kpkg(force ? with(olm_args(out), {"--force"}) : olm_args(out));
        EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
        EXPECT_EQ(r.out, "");
        EXPECT_TRUE(contains(r.err, "holds 2 symbolic links where kpkg plan writes")) << r.err;
        EXPECT_TRUE(contains(r.err, "\n  vault/subscription-vault.yaml -> " +
                                        (tmp / "elsewhere/sub.yaml").string()))
            << r.err;
        EXPECT_TRUE(contains(r.err, "\n  common -> " + (tmp / "common-moved").string())) << r.err;
        EXPECT_TRUE(fs::is_symlink(out / "vault/subscription-vault.yaml"));
        EXPECT_TRUE(fs::is_symlink(out / "common"));
        EXPECT_EQ(read_file(tmp / "elsewhere/sub.yaml"), "mine\n");
    }
    auto check = run_kpkg(with_check(olm_args(out)));
    EXPECT_EQ(check.exit_code, 2) << check.out << check.err;
    // The links moved away, the tree is written again.
    fs::remove(out / "vault/subscription-vault.yaml");
    fs::remove(out / "common");
    auto again = run_kpkg(olm_args(out));
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(read_tree(out), before);
}

// --- refusals ------------------------------------------------------------------------------------

TEST(PlanTree, InstallModes) {
    test::TempDir tmp;
    // etcd supports neither AllNamespaces (the default) nor MultiNamespace.
    auto all = run_kpkg(vault_tree(tmp / "a", "manifests"));
    EXPECT_EQ(all.exit_code, 2);
    EXPECT_TRUE(contains(all.err, "bundle \"etcdoperator.v0.9.4\" cannot watch all namespaces"))
        << all.err;
    EXPECT_TRUE(contains(all.err, "its CSV supports OwnNamespace, SingleNamespace")) << all.err;
    auto multi = run_kpkg(vault_tree(
        tmp / "b", "olm",
        {"--target-namespaces", "team-a,team-b", "--catalog-image", "quay.io/example/catalog:v1"}));
    EXPECT_EQ(multi.exit_code, 2);
    EXPECT_TRUE(contains(multi.err, "cannot watch 2 namespaces: install mode MultiNamespace"))
        << multi.err;
    auto bad = run_kpkg(vault_tree(tmp / "c", "manifests", {"--target-namespaces", "Team_A"}));
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "--target-namespaces \"Team_A\" is not a valid namespace"))
        << bad.err;
    for (const char* d : {"a", "b", "c"})
        EXPECT_FALSE(fs::exists(tmp / d)) << d;
}

TEST(PlanTree, WebhooksAndApiServicesAreRefusedWithoutOlm) {
    test::TempDir tmp;
    for (const std::string what : {"webhook", "apiservice"}) {
        auto r = run_kpkg(vault_from(manifests_args(tmp / what), what));
        EXPECT_EQ(r.exit_code, 3) << what;
        EXPECT_TRUE(contains(r.err, "bundle \"vault-operator.v1.2.0\": its CSV ")) << r.err;
        if (what == "webhook") {
            EXPECT_TRUE(contains(r.err, "give --cert-provider cert-manager or "
                                        "openshift-service-ca"))
                << r.err;
        }
        EXPECT_TRUE(contains(r.err, what == "webhook" ? "vvaultservice.kb.io"
                                                      : "v1.metrics.vault.example.com"))
            << r.err;
        EXPECT_FALSE(fs::exists(tmp / what));
        // With OLM they are fine.
        auto olm = run_kpkg(vault_from(olm_args(tmp / (what + "-olm")), what));
        EXPECT_EQ(olm.exit_code, 0) << olm.err;
    }
}

TEST(PlanTree, CertManagerServesTheWebhooks) {
    test::TempDir tmp;
    const fs::path out = tmp / "out";
    auto r = run_kpkg(
        with(vault_from(manifests_args(out), "webhook"), {"--cert-provider", "cert-manager"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto files = read_tree(out);
    const std::string cfg =
        files.at("vault/validatingwebhookconfiguration-vvaultservice.kb.io.yaml");
    EXPECT_TRUE(contains(cfg, "    cert-manager.io/inject-ca-from: "
                              "operators/vault-operator-service-cert\n"))
        << cfg;
    EXPECT_TRUE(contains(cfg, "      name: vault-operator-service\n      port: 443\n")) << cfg;
    // Only the target namespace's objects go through the webhook.
    EXPECT_TRUE(contains(cfg, "    - key: kubernetes.io/metadata.name\n      operator: In\n"
                              "      values:\n      - operators\n"))
        << cfg;
    EXPECT_TRUE(contains(files.at("vault/certificate-vault-operator-service-cert.yaml"),
                         "  - vault-operator-service.operators.svc\n"));
    EXPECT_TRUE(
        contains(files.at("vault/issuer-vault-operator-service-cert-selfsigned-issuer.yaml"),
                 "  selfSigned: {}\n"));
    EXPECT_TRUE(contains(files.at("vault/service-vault-operator-service.yaml"),
                         "  - name: \"443\"\n    port: 443\n    targetPort: 443\n"));
    // The Deployment mounts the certificate where the webhook server reads it.
    const std::string dep = files.at("vault/deployment-vault-operator.yaml");
    EXPECT_TRUE(contains(dep, "        - name: webhook-cert\n          mountPath: "
                              "/tmp/k8s-webhook-server/serving-certs\n"))
        << dep;
    EXPECT_TRUE(contains(dep, "          secretName: vault-operator-service-cert\n")) << dep;
    // The webhook configuration comes last, after the Deployment serving it.
    const auto res = resources(out);
    EXPECT_EQ(res.back(), "vault/validatingwebhookconfiguration-vvaultservice.kb.io.yaml");
    if (fs::exists(kubectl_path)) expect_kustomize_keeps_order(out);
}

TEST(PlanTree, OpenShiftServiceCaServesTheConversionWebhook) {
    // vault alone (etcd installed), supporting only AllNamespaces, with a conversion webhook.
    test::TempDir tmp;
    auto r = run_kpkg({"plan", "vault", "--catalog", sample(), "-n", "operators", "--installed",
                       testdata("plan/installed-etcd.yaml").string(), "--bundle-dir",
                       bundle_dir("vault-operator.v1.2.0", "conversion"), "--offline",
                       "--output-dir", (tmp / "out").string(), "--format", "manifests",
                       "--cert-provider", "openshift-service-ca"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto files = read_tree(tmp / "out");
    const std::string crd =
        files.at("vault/customresourcedefinition-vaultservices.vault.security.coreos.com.yaml");
    EXPECT_TRUE(contains(crd, "    service.beta.openshift.io/inject-cabundle: \"true\"\n"));
    EXPECT_TRUE(contains(crd, "  conversion:\n    strategy: Webhook\n")) << crd;
    EXPECT_TRUE(contains(crd, "          path: /convert\n          port: 9443\n")) << crd;
    const std::string svc = files.at("vault/service-vault-operator-service.yaml");
    EXPECT_TRUE(contains(svc, "    service.beta.openshift.io/serving-cert-secret-name: "
                              "vault-operator-service-cert\n"))
        << svc;
    EXPECT_TRUE(contains(svc, "    targetPort: webhook\n")) << svc;
    for (const auto& [path, bytes] : files) {
        EXPECT_EQ(path.find("/issuer-"), std::string::npos) << path;
        EXPECT_EQ(path.find("/certificate-"), std::string::npos) << path;
    }
}

TEST(PlanTree, WebhooksOlmV1Refuses) {
    test::TempDir tmp;
    auto r = run_kpkg(with(vault_from(manifests_args(tmp / "out"), "webhook-bad"),
                           {"--cert-provider", "cert-manager"}));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "bundle \"vault-operator.v1.2.0\": OLM v1 refuses its webhooks:"))
        << r.err;
    for (const char* why :
         {"\"vall.kb.io\" has a rule on API group \"*\", which OLM forbids",
          "\"mhooks.kb.io\" has a rule on \"ValidatingWebhookConfigurations\" of "
          "admissionregistration.k8s.io",
          "\"mother.kb.io\" names deployment \"vault-webhook\", which the install strategy does "
          "not have",
          "conversion webhooks need a bundle that supports only the AllNamespaces install mode",
          "names CRD \"etcdclusters.etcd.database.coreos.com\", which the bundle does not own"})
        EXPECT_TRUE(contains(r.err, why)) << why << "\n" << r.err;
    EXPECT_FALSE(fs::exists(tmp / "out"));
    // APIServices stay refused with a certificate provider; --cert-provider is for manifests.
    auto api = run_kpkg(with(vault_from(manifests_args(tmp / "api"), "apiservice"),
                             {"--cert-provider", "cert-manager"}));
    EXPECT_EQ(api.exit_code, 3);
    EXPECT_TRUE(contains(api.err, "owns APIServices")) << api.err;
    EXPECT_EQ(run_kpkg(with(olm_args(tmp / "o"), {"--cert-provider", "cert-manager"})).exit_code,
              2);
    auto bad = run_kpkg(with(manifests_args(tmp / "b"), {"--cert-provider", "vault"}));
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "give cert-manager or openshift-service-ca")) << bad.err;
}

TEST(PlanTree, CrdOwnedTwice) {
    test::TempDir tmp;
    for (const std::string format : {"olm", "manifests"}) {
        std::vector<std::string> args = {"plan",
                                         "vault",
                                         "--catalog",
                                         sample(),
                                         "-n",
                                         "operators",
                                         "--bundle-dir",
                                         bundle_dir("vault-operator.v1.2.0"),
                                         "--bundle-dir",
                                         bundle_dir("etcdoperator.v0.9.4", "crd-twice"),
                                         "--offline",
                                         "--output-dir",
                                         (tmp / format).string(),
                                         "--format",
                                         format,
                                         "--target-namespaces",
                                         "operators"};
        if (format == "olm") args = with(args, {"--catalog-image", "quay.io/example/catalog:v1"});
        auto r = run_kpkg(args);
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_TRUE(contains(r.err, "CustomResourceDefinition "
                                    "\"vaultservices.vault.security.coreos.com\" is owned by two "
                                    "bundles, \"etcdoperator.v0.9.4\" and "
                                    "\"vault-operator.v1.2.0\""))
            << r.err;
        EXPECT_FALSE(fs::exists(tmp / format));
    }
}

TEST(PlanTree, CatalogSourceForEveryCatalogOfThePlan) {
    // vault from one catalog, the etcd it requires from another: OLM resolves etcd again from its
    // catalog, which needs a CatalogSource too.
    test::TempDir tmp;
    std::vector<std::string> args = {"plan",
                                     "vault",
                                     "--catalog",
                                     "vaults=" + testdata("catalog/vault").string(),
                                     "--catalog",
                                     "etcds=" + testdata("catalog/etcd").string(),
                                     "-n",
                                     "operators",
                                     "--bundle-dir",
                                     bundle_dir("vault-operator.v1.2.0"),
                                     "--bundle-dir",
                                     bundle_dir("etcdoperator.v0.9.4"),
                                     "--offline",
                                     "--output-dir",
                                     (tmp / "out").string(),
                                     "--format",
                                     "olm",
                                     "--target-namespaces",
                                     "operators"};
    auto one = run_kpkg(with(args, {"--catalog-image", "quay.io/example/vaults:v1"}));
    EXPECT_EQ(one.exit_code, 2);
    EXPECT_TRUE(contains(one.err, "the plan's operators come from 2 catalogs; give NAME=REF"))
        << one.err;
    auto missing = run_kpkg(with(args, {"--catalog-image", "vaults=quay.io/example/vaults:v1"}));
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_TRUE(contains(missing.err, "the image of etcds is not known")) << missing.err;
    EXPECT_FALSE(fs::exists(tmp / "out"));
    auto r = run_kpkg(with(args, {"--catalog-image", "vaults=quay.io/example/vaults:v1",
                                  "--catalog-image", "etcds=quay.io/example/etcds:v1"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto files = read_tree(tmp / "out");
    EXPECT_TRUE(contains(files.at("common/catalogsource-olm-etcds.yaml"),
                         "  image: quay.io/example/etcds:v1\n"));
    EXPECT_TRUE(contains(files.at("vault/subscription-vault.yaml"), "  source: vaults\n"));
    EXPECT_FALSE(files.count("etcd/subscription-etcd.yaml"));
}

TEST(PlanTree, FlagMistakes) {
    test::TempDir tmp;
    auto no_image = run_kpkg(vault_tree(tmp / "o", "olm", {"--target-namespaces", "operators"}));
    EXPECT_EQ(no_image.exit_code, 2);
    EXPECT_TRUE(contains(no_image.err, "the image of catalog is not known: give "
                                       "--catalog-image REF"))
        << no_image.err;
    auto no_format = run_kpkg({"plan", "vault", "--catalog", sample(), "-n", "operators",
                               "--output-dir", (tmp / "x").string()});
    EXPECT_EQ(no_format.exit_code, 2);
    EXPECT_TRUE(contains(no_format.err, "--output-dir needs --format olm")) << no_format.err;
    auto bad_format = run_kpkg(vault_tree(tmp / "y", "helm"));
    EXPECT_EQ(bad_format.exit_code, 2);
    auto no_dir = run_kpkg({"plan", "vault", "--catalog", sample(), "-n", "operators", "--check"});
    EXPECT_EQ(no_dir.exit_code, 2);
    EXPECT_TRUE(contains(no_dir.err, "give --output-dir DIR")) << no_dir.err;
    tmp.write("file", "x");
    auto not_dir = run_kpkg(manifests_args(tmp / "file"));
    EXPECT_EQ(not_dir.exit_code, 2);
    EXPECT_TRUE(contains(not_dir.err, "is not a directory")) << not_dir.err;
}

// --- library -------------------------------------------------------------------------------------

TEST(Base36, AsGoBigIntText) {
    // Computed independently: int(sha224(...).hexdigest(), 16) written in base 36.
    EXPECT_EQ(base36_sha224("[\"something\"]\n"), "1fsgf62pot9ubjl6zdr47oqhojdbps2vf38j40wbyl0l");
    EXPECT_EQ(base36_sha224(""), "2n6a5vwpk9ckyxi5x87i7768t4bpqmp64qi0556ih35b");
}

} // namespace
} // namespace kpkg::plan
