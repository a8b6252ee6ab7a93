// `kpkg resolve` end to end: output formats, exit codes, bad input, testcases replayed with
// testsolv.
#include <gtest/gtest.h>

#include <cstdlib>

#include "support/support.hpp"

using kpkg::test::read_file;
using kpkg::test::run_kpkg;
using kpkg::test::TempDir;
using kpkg::test::testdata;

namespace {

std::string sample() {
    return testdata("catalog").string();
}

bool have_program(const std::string& name) {
    return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

} // namespace

TEST(ResolveCli, SampleCatalogText) {
    auto r = run_kpkg({"resolve", "vault", "--catalog", sample()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out,
              "ACTION   PACKAGE  BUNDLE                 VERSION  CHANNEL  CATALOG  REASON\n"
              "install  etcd     etcdoperator.v0.9.4    0.9.4    stable   catalog  required by "
              "vault-operator.v1.2.0 for API etcd.database.coreos.com/v1beta2 EtcdBackup\n"
              "install  vault    vault-operator.v1.2.0  1.2.0    stable   catalog  requested\n");
    EXPECT_EQ(r.err, "");
}

TEST(ResolveCli, SampleCatalogJson) {
    auto r = run_kpkg({"resolve", "vault", "--catalog", "ops=" + sample(), "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\"satisfiable\": true"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"selected\": ["), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"bundle\": \"vault-operator.v1.2.0\""), std::string::npos);
    EXPECT_NE(r.out.find("\"catalog\": \"ops\""), std::string::npos);
    EXPECT_NE(r.out.find("\"reason\": \"requested\""), std::string::npos);
    EXPECT_NE(r.out.find("\"action\": \"install\""), std::string::npos);
    EXPECT_NE(r.out.find("\"problems\": []"), std::string::npos);
    // Same input, same bytes; the catalog and request order does not matter.
    auto again = run_kpkg({"resolve", "vault", "--catalog", "ops=" + sample(), "-o", "json"});
    EXPECT_EQ(again.out, r.out);
    auto two =
        run_kpkg({"resolve", "etcd@<0.9.4", "vault@<1.2.0", "--catalog", sample(), "-o", "yaml"});
    auto swapped =
        run_kpkg({"resolve", "vault@<1.2.0", "etcd@<0.9.4", "--catalog", sample(), "-o", "yaml"});
    ASSERT_EQ(two.exit_code, 0) << two.err;
    EXPECT_EQ(two.out, swapped.out);
}

TEST(ResolveCli, CatalogFromStandardInput) {
    std::string yaml = "schema: olm.package\nname: a\ndefaultChannel: s\n---\n"
                       "schema: olm.channel\npackage: a\nname: s\nentries: [{name: a.v1}]\n---\n"
                       "schema: olm.bundle\npackage: a\nname: a.v1\nimage: x/a:1\nproperties:\n"
                       "- {type: olm.package, value: {packageName: a, version: 1.0.0}}\n";
    auto r = run_kpkg({"resolve", "a", "--catalog", "-", "-o", "yaml"}, yaml);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("catalog: stdin"), std::string::npos) << r.out;
    auto named = run_kpkg({"resolve", "a", "--catalog", "ops=-", "-o", "yaml"}, yaml);
    EXPECT_NE(named.out.find("catalog: ops"), std::string::npos) << named.out;
}

TEST(ResolveCli, NoSolutionExits4WithProblems) {
    auto r = run_kpkg({"resolve", "vault@>=9.0.0", "--catalog", sample(), "-o", "yaml"});
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(r.out.find("satisfiable: false"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("problems:\n- message: request vault@>=9.0.0 has no candidate"),
              std::string::npos)
        << r.out;
    auto t = run_kpkg({"resolve", "vault@>=9.0.0", "--catalog", sample()});
    EXPECT_EQ(t.exit_code, 4);
    EXPECT_EQ(t.out.rfind("no solution:\n  request vault@>=9.0.0 has no candidate\n", 0), 0u)
        << t.out;
    EXPECT_NE(t.out.find("└─ vault-operator.v1.3.0-rc.1 (1.3.0-rc.1) is outside the range "
                         ">=9.0.0"),
              std::string::npos)
        << t.out;
}

TEST(ResolveCli, BadInput) {
    TempDir dir;
    // Unknown package and channel: exit 3, the nearest name and those there are.
    auto p = run_kpkg({"resolve", "vaul", "--catalog", sample()});
    EXPECT_EQ(p.exit_code, 3);
    EXPECT_EQ(p.out, "");
    EXPECT_NE(p.err.find("unknown package \"vaul\"; the nearest is \"vault\""), std::string::npos)
        << p.err;
    EXPECT_NE(p.err.find("known packages: etcd, vault"), std::string::npos) << p.err;
    auto c = run_kpkg({"resolve", "vault:beta", "--catalog", sample()});
    EXPECT_EQ(c.exit_code, 3);
    EXPECT_NE(c.err.find("known channels: fast, stable"), std::string::npos) << c.err;
    // A range that does not parse.
    auto range = run_kpkg({"resolve", "vault@>=1.x.y", "--catalog", sample()});
    EXPECT_EQ(range.exit_code, 3);
    EXPECT_NE(range.err.find("the range \">=1.x.y\" does not parse"), std::string::npos)
        << range.err;
    // An empty catalog, a catalog that does not parse.
    dir.write("empty/readme.txt", "");
    auto empty = run_kpkg({"resolve", "x", "--catalog", (dir / "empty").string()});
    EXPECT_EQ(empty.exit_code, 3);
    EXPECT_NE(empty.err.find("catalog \"empty\" is empty"), std::string::npos) << empty.err;
    auto broken_file = dir.write("broken/index.yaml", "schema: olm.package\nname: [x\n");
    auto broken = run_kpkg({"resolve", "x", "--catalog", (dir / "broken").string()});
    EXPECT_EQ(broken.exit_code, 3);
    EXPECT_NE(broken.err.find(broken_file.string() + ":"), std::string::npos) << broken.err;
    // A channel with two heads, named with its file and position.
    auto heads_file = dir.write("heads/index.yaml", "schema: olm.package\nname: a\n"
                                                    "defaultChannel: s\n---\n"
                                                    "schema: olm.channel\npackage: a\nname: s\n"
                                                    "entries: [{name: a.v1}, {name: a.v2}]\n---\n"
                                                    "schema: olm.bundle\npackage: a\nname: a.v1\n"
                                                    "image: x/a:1\nproperties:\n- type: "
                                                    "olm.package\n  value: {packageName: a, "
                                                    "version: 1.0.0}\n---\n"
                                                    "schema: olm.bundle\npackage: a\nname: a.v2\n"
                                                    "image: x/a:2\nproperties:\n- type: "
                                                    "olm.package\n  value: {packageName: a, "
                                                    "version: 2.0.0}\n");
    auto heads = run_kpkg({"resolve", "a", "--catalog", (dir / "heads").string()});
    EXPECT_EQ(heads.exit_code, 3);
    EXPECT_NE(heads.err.find(heads_file.string() + ":5:1: channel \"s\" of package \"a\" (catalog "
                                                   "\"heads\") has 2 heads"),
              std::string::npos)
        << heads.err;
    // A CEL rule that does not compile: the bundle, the column, the rule with a caret.
    auto cel_file = dir.write(
        "cel/index.yaml",
        "schema: olm.package\nname: bar\ndefaultChannel: stable\n---\n"
        "schema: olm.channel\npackage: bar\nname: stable\nentries: [{name: bar.v1.0.0}]\n---\n"
        "schema: olm.bundle\npackage: bar\nname: bar.v1.0.0\nimage: x/bar:1\nproperties:\n"
        "- {type: olm.package, value: {packageName: bar, version: 1.0.0}}\n"
        "- type: olm.constraint\n  value: {cel: {rule: \"properties.exists(p, p.type == "
        "'olm.test' && (doesnt_exist(p.value, '1.0.0') == 0))\"}}\n");
    auto cel = run_kpkg({"resolve", "bar", "--catalog", (dir / "cel").string()});
    EXPECT_EQ(cel.exit_code, 3);
    EXPECT_NE(cel.err.find(cel_file.string() + ":10:1: bundle \"bar.v1.0.0\" (catalog \"cel\"): "
                                               "olm.constraint cel.rule: column 47: undeclared "
                                               "reference to 'doesnt_exist'\n"),
              std::string::npos)
        << cel.err;
    EXPECT_NE(cel.err.find("\n" + std::string(50, ' ') + "^"), std::string::npos) << cel.err;
    // The installed CSVs file.
    auto inst = dir.write("installed.yaml", "installed:\n  - package: etcd\n    name: x\n");
    auto bad_inst =
        run_kpkg({"resolve", "vault", "--catalog", sample(), "--installed", inst.string()});
    EXPECT_EQ(bad_inst.exit_code, 3);
    EXPECT_NE(bad_inst.err.find(inst.string() + ":2:5: installed[0]: the field \"version\" is "
                                                "missing"),
              std::string::npos)
        << bad_inst.err;
    auto missing = run_kpkg(
        {"resolve", "vault", "--catalog", sample(), "--installed", (dir / "nope.yaml").string()});
    EXPECT_EQ(missing.exit_code, 1);
}

TEST(ResolveCli, Usage) {
    EXPECT_EQ(run_kpkg({"resolve", "vault"}).exit_code, 2);               // no --catalog
    EXPECT_EQ(run_kpkg({"resolve", "--catalog", sample()}).exit_code, 2); // no request
    auto twice = run_kpkg({"resolve", "vault", "vault:fast", "--catalog", sample()});
    EXPECT_EQ(twice.exit_code, 2);
    EXPECT_NE(twice.err.find("conflicting requests \"vault\" and \"vault:fast\""),
              std::string::npos)
        << twice.err;
    auto prio = run_kpkg({"resolve", "vault", "--catalog", sample(), "--priority", "catalgo=3"});
    EXPECT_EQ(prio.exit_code, 2);
    EXPECT_NE(prio.err.find("the nearest is \"catalog\""), std::string::npos) << prio.err;
    EXPECT_EQ(
        run_kpkg({"resolve", "vault", "--catalog", sample(), "--priority", "catalog=x"}).exit_code,
        2);
    EXPECT_EQ(run_kpkg({"resolve", "vault", "--all-packages", "--catalog", sample()}).exit_code, 2);
    auto same = run_kpkg({"resolve", "vault", "--catalog", sample(), "--catalog", sample()});
    EXPECT_EQ(same.exit_code, 2);
    EXPECT_NE(same.err.find("two catalogs are named \"catalog\""), std::string::npos);
}

TEST(ResolveCli, RequestPinnedToACatalog) {
    // The sample catalog twice, under two names: "b" is preferred (priority), unless the
    // request names "a" with /a or --source a.
    auto two = [](std::vector<std::string> args) {
        std::vector<std::string> all{"resolve"};
        all.insert(all.end(), args.begin(), args.end());
        for (std::string c : {std::string("--catalog"), "a=" + sample(), std::string("--catalog"),
                              "b=" + sample(), std::string("--priority"), std::string("b=5"),
                              std::string("-o"), std::string("yaml")})
            all.push_back(c);
        return run_kpkg(all);
    };
    auto any = two({"vault"});
    ASSERT_EQ(any.exit_code, 0) << any.err;
    EXPECT_NE(any.out.find("bundle: vault-operator.v1.2.0\n  version: 1.2.0\n  channel: stable\n"
                           "  catalog: b\n"),
              std::string::npos)
        << any.out;
    for (auto args :
         {std::vector<std::string>{"vault/a"}, std::vector<std::string>{"vault", "--source", "a"},
          std::vector<std::string>{"vault/a", "--source", "b"}}) {
        auto pinned = two(args);
        ASSERT_EQ(pinned.exit_code, 0) << pinned.err;
        EXPECT_NE(pinned.out.find("bundle: vault-operator.v1.2.0\n  version: 1.2.0\n  channel: "
                                  "stable\n  catalog: a\n"),
                  std::string::npos)
            << args.front() << "\n"
            << pinned.out;
        // Its dependency comes from its own catalog first (OLM's preference).
        EXPECT_NE(pinned.out.find("bundle: etcdoperator.v0.9.4\n  version: 0.9.4\n  channel: "
                                  "stable\n  catalog: a\n"),
                  std::string::npos)
            << pinned.out;
    }
    // Unknown names: the request's is invalid input (3), --source's a usage error (2); both
    // name the catalogs there are.
    auto bad = two({"vault/c"});
    EXPECT_EQ(bad.exit_code, 3);
    EXPECT_EQ(bad.out, "");
    EXPECT_NE(bad.err.find("unknown catalog \"c\" in request \"vault/c\""), std::string::npos)
        << bad.err;
    EXPECT_NE(bad.err.find("known catalogs: a, b"), std::string::npos) << bad.err;
    auto src = two({"vault", "--source", "c"});
    EXPECT_EQ(src.exit_code, 2);
    EXPECT_EQ(src.out, "");
    EXPECT_NE(src.err.find("unknown catalog \"c\" in --source"), std::string::npos) << src.err;
    EXPECT_NE(src.err.find("known catalogs: a, b"), std::string::npos) << src.err;
    EXPECT_EQ(run_kpkg({"resolve", "--source", "catalog", "--catalog", sample()}).exit_code, 2);
    EXPECT_EQ(run_kpkg({"resolve", "--all-packages", "--source", "catalog", "--catalog", sample()})
                  .exit_code,
              2);
    // The lock records the catalog of the request: another one is drift.
    TempDir dir;
    auto lock = (dir / "kpkg.lock").string();
    auto w = two({"vault", "--source", "a", "--lockfile", lock});
    ASSERT_EQ(w.exit_code, 0) << w.err;
    EXPECT_NE(read_file(lock).find("requests:\n- vault/a\n"), std::string::npos) << read_file(lock);
    EXPECT_EQ(two({"vault/a", "--locked", lock}).exit_code, 0);
    auto other = two({"vault/b", "--locked", lock});
    EXPECT_EQ(other.exit_code, 5) << other.out;
    // upgrade-path takes --source too.
    auto path =
        run_kpkg({"upgrade-path", "vault", "--from", "vault-operator.v1.0.0", "--channel", "stable",
                  "--catalog", "a=" + sample(), "--catalog", "b=" + sample(), "--source", "b"});
    ASSERT_EQ(path.exit_code, 0) << path.err;
    EXPECT_NE(path.out.find("  1     vault-operator.v1.2.0  1.2.0    stable   b        skipRange"),
              std::string::npos)
        << path.out;
    auto path_bad = run_kpkg({"upgrade-path", "vault", "--from", "vault-operator.v1.0.0",
                              "--catalog", "a=" + sample(), "--source", "x"});
    EXPECT_EQ(path_bad.exit_code, 2);
    EXPECT_NE(path_bad.err.find("known catalogs: a"), std::string::npos) << path_bad.err;
}

TEST(ResolveCli, InstalledAndUpgrade) {
    TempDir dir;
    auto inst = dir.write("cluster.yaml", "installed:\n"
                                          "  - package: vault\n"
                                          "    name: vault-operator.v1.1.0\n"
                                          "    version: 1.1.0\n"
                                          "    channel: fast\n"
                                          "  - package: etcd\n"
                                          "    name: etcdoperator.v0.9.2\n"
                                          "    version: 0.9.2\n");
    auto keep = run_kpkg({"resolve", "--installed", inst.string(), "--upgrade", "--one-hop",
                          "--catalog", sample(), "-o", "json"});
    ASSERT_EQ(keep.exit_code, 0) << keep.err;
    // vault moves one hop in fast: v1.3.0-rc.1 covers 1.1.0 with its skipRange but needs
    // etcd >=0.9.4, and etcd moves from 0.9.2 to 0.9.4 in the same step.
    EXPECT_NE(keep.out.find("\"bundle\": \"vault-operator.v1.3.0-rc.1\""), std::string::npos)
        << keep.out;
    EXPECT_NE(keep.out.find("\"replaces\": \"vault-operator.v1.1.0\""), std::string::npos)
        << keep.out;
    EXPECT_NE(keep.out.find("\"bundle\": \"etcdoperator.v0.9.4\""), std::string::npos) << keep.out;
}

TEST(ResolveCli, AllPackages) {
    auto ok = run_kpkg({"resolve", "--all-packages", "--catalog", sample()});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_NE(ok.out.find("2 packages: 2 installable, 0 unsatisfiable, 0 invalid"),
              std::string::npos)
        << ok.out;
    auto json = run_kpkg({"resolve", "--all-packages", "--catalog", sample(), "-o", "json"});
    EXPECT_NE(json.out.find("\"status\": \"installable\""), std::string::npos) << json.out;
    EXPECT_NE(json.out.find("\"installable\": 2"), std::string::npos) << json.out;
}

TEST(ResolveCli, AllPackagesCorpus) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto r = run_kpkg({"resolve", "--all-packages", "--catalog",
                       (corpus / "olm/fbc/registry-action-index-latest").string()});
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(r.out.find("foo      unsatisfiable"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("3 packages: 2 installable, 1 unsatisfiable, 0 invalid"),
              std::string::npos)
        << r.out;
}

TEST(ResolveCli, DebugTestcaseReplaysWithTestsolv) {
    if (!have_program("testsolv"))
        GTEST_SKIP() << ::kpkg::test::missing_tool(
            "testsolv", "Debian libsolv-tools; scripts/bootstrap installs it");
    TempDir dir;
    auto ok = run_kpkg(
        {"resolve", "vault", "--catalog", sample(), "--debug-testcase", (dir / "ok").string()});
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    std::string testcase = read_file(dir / "ok" / "testcase.t");
    EXPECT_NE(testcase.find("job install oneof vault-1.2.0.noarch@catalog__stable"),
              std::string::npos)
        << testcase;
    EXPECT_NE(testcase.find("result transaction,problems"), std::string::npos);
    std::string replay = "testsolv " + (dir / "ok" / "testcase.t").string() + " > " +
                         (dir / "replay.txt").string() + " 2>&1";
    EXPECT_EQ(std::system(replay.c_str()), 0) << read_file(dir / "replay.txt");
    EXPECT_EQ(read_file(dir / "replay.txt"), "");
    // The result file lists the two bundles installed.
    std::string result = read_file(dir / "ok" / "solver.result");
    EXPECT_NE(result.find("install vault-1.2.0.noarch@catalog__stable"), std::string::npos)
        << result;
    EXPECT_NE(result.find("install etcd-0.9.4.noarch@catalog__stable"), std::string::npos)
        << result;

    // No solution: the problem replays too.
    auto none = run_kpkg({"resolve", "vault@>=9.0.0", "--catalog", sample(), "--debug-testcase",
                          (dir / "none").string()});
    EXPECT_EQ(none.exit_code, 4);
    replay = "testsolv " + (dir / "none" / "testcase.t").string() + " > " +
             (dir / "replay2.txt").string() + " 2>&1";
    EXPECT_EQ(std::system(replay.c_str()), 0) << read_file(dir / "replay2.txt");
    EXPECT_NE(read_file(dir / "none" / "solver.result").find("problem"), std::string::npos);

    // A directory that cannot be created: exit 1, nothing half-written.
    dir.write("file", "x");
    auto bad = run_kpkg({"resolve", "vault", "--catalog", sample(), "--debug-testcase",
                         (dir / "file" / "sub").string()});
    EXPECT_EQ(bad.exit_code, 1) << bad.err;
}

TEST(ResolveCli, LoadsLibsolvextOnlyForTestcases) {
    auto r = run_kpkg({"resolve", "vault", "--catalog", sample()}, {}, {"LD_DEBUG=files"});
    ASSERT_EQ(r.exit_code, 0);
    EXPECT_NE(r.err.find("libsolv.so"), std::string::npos);
    EXPECT_EQ(r.err.find("libsolvext.so"), std::string::npos);
}
