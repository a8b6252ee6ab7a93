// Lockfiles: writing, reading back, reproducing, and saying what drifted.
#include <gtest/gtest.h>

#include "kpkg/io/load.hpp"
#include "kpkg/resolve/lockfile.hpp"
#include "world.hpp"

using namespace kpkg;
using kpkg::test::Cat;
using kpkg::test::read_file;
using kpkg::test::run_kpkg;
using kpkg::test::TempDir;
using kpkg::test::testdata;
using kpkg::test::World;

namespace {

using Strings = std::vector<std::string>;

Cat base() {
    return Cat{}
        .package("a", "stable")
        .channel("a", "stable", {"a.v1", "a.v2<a.v1"})
        .bundle("a", "a.v1", "1.0.0", {"req:g/v/X"})
        .bundle("a", "a.v2", "2.0.0", {"req:g/v/X"})
        .package("p", "stable")
        .channel("p", "stable", {"p.v1"})
        .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/X"});
}

resolve::Request request(const Strings& specs) {
    resolve::Request r;
    for (const auto& s : specs)
        r.subscriptions.push_back(resolve::parse_subscription(s).take());
    return r;
}

// A lock made against `before`, checked against `after`.
resolve::LockCheck check(const Cat& before, const Cat& after, const Strings& specs = {"a"}) {
    World w1, w2;
    w1.add("ops", before);
    w1.store.back().content_digest = "sha256:before";
    w2.add("ops", after);
    w2.store.back().content_digest = before.yaml == after.yaml ? "sha256:before" : "sha256:after";
    auto req = request(specs);
    auto res = resolve::resolve(w1.catalogs, req).take();
    EXPECT_TRUE(res.satisfiable);
    auto lock = resolve::make_lock(w1.catalogs, req, res);
    // Through the file format and back.
    auto docs = io::parse_yaml(resolve::lock_yaml(lock), "lock.yaml").take();
    auto back = resolve::parse_lock(docs.at(0).root, "lock.yaml").take();
    return resolve::resolve_locked(w2.catalogs, req, back).take();
}

} // namespace

TEST(Lockfile, RoundTrip) {
    World w;
    w.add("ops", base(), 7);
    w.store.back().content_digest = "sha256:abc";
    auto req = request({"a"});
    req.options.exclude_deprecated = true;
    req.installed.push_back(kpkg::test::installed("q", "q.v1", "1.0.0", "", "beta"));
    auto res = resolve::resolve(w.catalogs, req).take();
    auto lock = resolve::make_lock(w.catalogs, req, res);
    std::string yaml = resolve::lock_yaml(lock);
    EXPECT_NE(yaml.find("kind: kpkg-resolve-lock\nversion: 1\n"), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("digest: sha256:abc"), std::string::npos) << yaml;
    auto docs = io::parse_yaml(yaml, "lock.yaml").take();
    auto back = resolve::parse_lock(docs.at(0).root, "lock.yaml").take();
    EXPECT_EQ(back.requests, Strings{"a"});
    EXPECT_TRUE(back.options.exclude_deprecated);
    ASSERT_EQ(back.installed.size(), 1u);
    EXPECT_EQ(back.installed[0].channel, "beta");
    ASSERT_EQ(back.catalogs.size(), 1u);
    EXPECT_EQ(back.catalogs[0].priority, 7);
    EXPECT_EQ(back.catalogs[0].digest, "sha256:abc");
    ASSERT_EQ(back.selected.size(), 2u);
    EXPECT_EQ(back.selected[0].bundle, "a.v2");
    EXPECT_EQ(back.selected[1].reason, "required by a.v2 for API g/v X");
    EXPECT_EQ(resolve::lock_yaml(back), yaml);
}

TEST(Lockfile, HoldsAndReportsWhatChangedAround) {
    auto same = check(base(), base());
    EXPECT_TRUE(same.holds);
    EXPECT_TRUE(same.drift.empty());
    EXPECT_TRUE(same.resolution.warnings.empty());
    ASSERT_EQ(same.resolution.selected.size(), 2u);
    EXPECT_EQ(same.resolution.selected[0].bundle, "a.v2");

    // A newer a: the lock still holds, and says what a fresh resolution would pick.
    Cat newer = base();
    newer.yaml = Cat{}
                     .package("a", "stable")
                     .channel("a", "stable", {"a.v1", "a.v2<a.v1", "a.v3<a.v2"})
                     .bundle("a", "a.v1", "1.0.0", {"req:g/v/X"})
                     .bundle("a", "a.v2", "2.0.0", {"req:g/v/X"})
                     .bundle("a", "a.v3", "3.0.0", {"req:g/v/X"})
                     .package("p", "stable")
                     .channel("p", "stable", {"p.v1"})
                     .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/X"})
                     .yaml;
    auto moved = check(base(), newer);
    EXPECT_TRUE(moved.holds) << moved.drift.front();
    EXPECT_EQ(moved.resolution.selected[0].bundle, "a.v2");
    EXPECT_EQ(moved.resolution.warnings,
              (Strings{"catalog ops changed since the lock (sha256:before then, sha256:after now)",
                       "without the lock, kpkg would now select a.v3 instead of a.v2"}));
}

TEST(Lockfile, Drift) {
    // The locked bundle is gone.
    auto gone = check(base(), Cat{}
                                  .package("a", "stable")
                                  .channel("a", "stable", {"a.v1"})
                                  .bundle("a", "a.v1", "1.0.0", {"req:g/v/X"})
                                  .package("p", "stable")
                                  .channel("p", "stable", {"p.v1"})
                                  .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/X"}));
    EXPECT_FALSE(gone.holds);
    EXPECT_EQ(gone.drift,
              Strings{"locked a.v2 (channel stable, catalog ops) is no longer in the catalog"});
    // Now skipped in its channel.
    auto skipped =
        check(base(), Cat{}
                          .package("a", "stable")
                          .channel("a", "stable", {"a.v1", "a.v2<a.v1", "a.v3<a.v1!a.v2"})
                          .bundle("a", "a.v1", "1.0.0", {"req:g/v/X"})
                          .bundle("a", "a.v2", "2.0.0", {"req:g/v/X"})
                          .bundle("a", "a.v3", "3.0.0", {"req:g/v/X"})
                          .package("p", "stable")
                          .channel("p", "stable", {"p.v1"})
                          .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/X"}));
    EXPECT_FALSE(skipped.holds);
    ASSERT_FALSE(skipped.drift.empty());
    EXPECT_NE(skipped.drift[0].find("is skipped in channel stable (a.v3 skips it) now"),
              std::string::npos)
        << skipped.drift[0];
    // A new requirement no locked bundle meets.
    auto needs = check(base(), Cat{}
                                   .package("a", "stable")
                                   .channel("a", "stable", {"a.v1", "a.v2<a.v1"})
                                   .bundle("a", "a.v1", "1.0.0", {"req:g/v/X"})
                                   .bundle("a", "a.v2", "2.0.0", {"req:g/v/X", "pkg:r:>=1.0.0"})
                                   .package("p", "stable")
                                   .channel("p", "stable", {"p.v1"})
                                   .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/X"})
                                   .package("r", "stable")
                                   .channel("r", "stable", {"r.v1"})
                                   .bundle("r", "r.v1", "1.0.0"));
    EXPECT_FALSE(needs.holds);
    EXPECT_EQ(needs.drift, Strings{"locked a.v2 requires package r in range >=1.0.0 now, and no "
                                   "locked bundle provides it"});
    // The locked bundles conflict now.
    auto conflict = check(base(), Cat{}
                                      .package("a", "stable")
                                      .channel("a", "stable", {"a.v1", "a.v2<a.v1"})
                                      .bundle("a", "a.v1", "1.0.0", {"req:g/v/X"})
                                      .bundle("a", "a.v2", "2.0.0", {"req:g/v/X", "gvk:g/v/X"})
                                      .package("p", "stable")
                                      .channel("p", "stable", {"p.v1"})
                                      .bundle("p", "p.v1", "1.0.0", {"gvk:g/v/X"}));
    EXPECT_FALSE(conflict.holds);
    ASSERT_EQ(conflict.drift.size(), 1u);
    EXPECT_NE(conflict.drift[0].find("the locked bundles are no longer a solution: a.v2 (a 2.0.0, "
                                     "channel stable, catalog ops) and p.v1 (p 1.0.0, channel "
                                     "stable, catalog ops) both provide API g/v X"),
              std::string::npos)
        << conflict.drift[0];
}

TEST(Lockfile, ParseErrors) {
    auto parse = [](const std::string& yaml) {
        auto docs = io::parse_yaml(yaml, "l.yaml").take();
        return resolve::parse_lock(docs.at(0).root, "l.yaml");
    };
    auto not_lock = parse("kind: Foo\nversion: 1\n");
    ASSERT_FALSE(not_lock.ok());
    EXPECT_EQ(not_lock.error().code, ExitCode::invalid);
    EXPECT_EQ(not_lock.error().str(),
              "l.yaml:1:7: not a kpkg lockfile: kind is \"Foo\", not \"kpkg-resolve-lock\"");
    EXPECT_EQ(parse("kind: kpkg-resolve-lock\nversion: 2\n").error().str(),
              "l.yaml:2:10: unsupported lockfile version (this kpkg reads version 1)");
    EXPECT_EQ(parse("kind: kpkg-resolve-lock\nversion: 1\nrequests: a\n").error().str(),
              "l.yaml:3:11: lock.requests must be list, not string");
    EXPECT_EQ(
        parse("kind: kpkg-resolve-lock\nversion: 1\nselected:\n- {package: a}\n").error().str(),
        "l.yaml:4:3: lock.selected: the field \"bundle\" is missing");
    EXPECT_EQ(parse("kind: kpkg-resolve-lock\nversion: 1\nextra: 1\n").error().str(),
              "l.yaml:3:1: lock: unknown field \"extra\"");
    EXPECT_EQ(parse("- 1\n").error().code, ExitCode::invalid);
    // Deep nesting, through the file reader: a clear error with the file, no crash.
    TempDir dir;
    auto deep = dir.write("deep.lock", "kind: " + std::string(5000, '[') + "\n");
    auto d = resolve::load_lock(deep);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code, ExitCode::invalid);
    EXPECT_EQ(d.error().pos.file, deep.string());
    EXPECT_EQ(resolve::load_lock(dir / "missing.lock").error().code, ExitCode::error);
}

TEST(LockfileCli, WriteAndReproduce) {
    TempDir dir;
    auto cat = testdata("catalog").string();
    auto lock = (dir / "kpkg.lock").string();
    auto w = run_kpkg({"resolve", "vault", "--catalog", cat, "--lockfile", lock});
    ASSERT_EQ(w.exit_code, 0) << w.err;
    std::string text = read_file(lock);
    EXPECT_NE(text.find("bundle: vault-operator.v1.2.0"), std::string::npos) << text;
    auto r = run_kpkg({"resolve", "vault", "--catalog", cat, "--locked", lock});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, w.out);
    auto drift = run_kpkg({"resolve", "vault:fast", "--catalog", cat, "--locked", lock});
    EXPECT_EQ(drift.exit_code, 5);
    EXPECT_EQ(drift.out, "the lock " + lock +
                             " does not hold:\n  the requests differ: the lock has [vault], this "
                             "run [vault:fast]\n");
    auto json =
        run_kpkg({"resolve", "vault:fast", "--catalog", cat, "--locked", lock, "-o", "json"});
    EXPECT_EQ(json.exit_code, 5);
    EXPECT_NE(json.out.find("\"holds\": false"), std::string::npos) << json.out;
    // No solution: no lock is written; both flags at once: usage.
    auto none = (dir / "none.lock").string();
    EXPECT_EQ(
        run_kpkg({"resolve", "vault@>=9.0.0", "--catalog", cat, "--lockfile", none}).exit_code, 4);
    EXPECT_FALSE(std::filesystem::exists(none));
    EXPECT_EQ(run_kpkg({"resolve", "vault", "--catalog", cat, "--lockfile", lock, "--locked", lock})
                  .exit_code,
              2);
    // A lock that is not one.
    auto bad = dir.write("bad.lock", "kind: x\n");
    auto b = run_kpkg({"resolve", "vault", "--catalog", cat, "--locked", bad.string()});
    EXPECT_EQ(b.exit_code, 3);
    EXPECT_NE(b.err.find(bad.string() + ":1:7: not a kpkg lockfile"), std::string::npos) << b.err;
    // The catalog changes: a newer bundle keeps the lock (with a warning), a removed one breaks it.
    std::filesystem::copy(cat, dir / "cat", std::filesystem::copy_options::recursive);
    auto lock2 = (dir / "kpkg2.lock").string();
    auto cat2 = (dir / "cat").string();
    ASSERT_EQ(run_kpkg({"resolve", "vault", "--catalog", "catalog=" + cat2, "--lockfile", lock2})
                  .exit_code,
              0);
    EXPECT_NE(read_file(lock2).find("digest: sha256:"), std::string::npos) << read_file(lock2);
    dir.write("cat/extra.yaml", "schema: olm.package\nname: extra\ndefaultChannel: s\n");
    auto changed =
        run_kpkg({"resolve", "vault", "--catalog", "catalog=" + cat2, "--locked", lock2});
    EXPECT_EQ(changed.exit_code, 0) << changed.out << changed.err;
    EXPECT_NE(changed.err.find("warning: catalog catalog changed since the lock (sha256:"),
              std::string::npos)
        << changed.err;
    std::string vault = read_file(dir / "cat" / "vault" / "catalog.yaml");
    auto cut = vault.find("---\nschema: olm.bundle\npackage: vault\nname: vault-operator.v1.2.0");
    ASSERT_NE(cut, std::string::npos);
    auto next = vault.find("---", cut + 3);
    dir.write("cat/vault/catalog.yaml", vault.substr(0, cut) + vault.substr(next));
    auto broken = run_kpkg({"resolve", "vault", "--catalog", "catalog=" + cat2, "--locked", lock2});
    EXPECT_EQ(broken.exit_code, 5) << broken.out << broken.err;
    EXPECT_NE(broken.out.find("locked vault-operator.v1.2.0 (channel stable, catalog catalog) is "
                              "no longer in the catalog"),
              std::string::npos)
        << broken.out;
    // Unwritable destination: exit 1, nothing left behind.
    dir.write("file", "x");
    auto u = run_kpkg({"resolve", "vault", "--catalog", cat, "--lockfile",
                       (dir / "file" / "kpkg.lock").string()});
    EXPECT_EQ(u.exit_code, 1);
}

// Locks edited by hand: what the resolution itself would never write is refused (exit 3) or,
// when it is about the catalogs, reported as drift (exit 5); never printed as if it held.
namespace {

Cat hops() {
    return Cat{}
        .package("a", "stable")
        .channel("a", "stable", {"a.v1", "a.v2<a.v1", "a.v3<a.v2"})
        .bundle("a", "a.v1", "1.0.0")
        .bundle("a", "a.v2", "2.0.0")
        .bundle("a", "a.v3", "3.0.0")
        .package("b", "stable")
        .channel("b", "stable", {"b.v1"})
        .bundle("b", "b.v1", "1.0.0");
}

struct Tamper {
    World w;
    resolve::Request req;
    std::string yaml; // the lock as kpkg writes it

    Tamper(const Strings& specs, const std::vector<resolve::Installed>& installed = {},
           resolve::Options opts = {}) {
        w.add("ops", hops());
        req = request(specs);
        req.installed = installed;
        req.options = opts;
        auto res = resolve::resolve(w.catalogs, req).take();
        EXPECT_TRUE(res.satisfiable);
        yaml = resolve::lock_yaml(resolve::make_lock(w.catalogs, req, res));
    }
    // The lock with `from` replaced by `to` (which must occur once).
    std::string edit(const std::string& from, const std::string& to) const {
        auto at = yaml.find(from);
        EXPECT_NE(at, std::string::npos) << from << " not in\n" << yaml;
        EXPECT_EQ(yaml.find(from, at + 1), std::string::npos) << from << " twice in\n" << yaml;
        if (at == std::string::npos) return yaml;
        return yaml.substr(0, at) + to + yaml.substr(at + from.size());
    }
    static Result<resolve::Lock> parse(const std::string& text) {
        auto docs = io::parse_yaml(text, "l.yaml").take();
        return resolve::parse_lock(docs.at(0).root, "l.yaml");
    }
    resolve::LockCheck check(const std::string& text) {
        return resolve::resolve_locked(w.catalogs, req, parse(text).take()).take();
    }
};

const char* new_a = "- package: a\n  bundle: a.v3\n  version: 3.0.0\n  channel: stable\n"
                    "  catalog: ops\n  image: example.com/a.v3:latest\n  action: install\n"
                    "  reason: requested\n";

} // namespace

TEST(LockfileTampered, TheUntouchedLockHolds) {
    Tamper t({"a", "b"});
    EXPECT_NE(t.yaml.find(new_a), std::string::npos) << t.yaml;
    EXPECT_TRUE(t.check(t.yaml).holds);
    Tamper up({"a"}, {kpkg::test::installed("a", "a.v1", "1.0.0")});
    EXPECT_NE(up.yaml.find("  action: upgrade\n  reason: upgrade of installed a.v1 (requested)\n"
                           "  replaces: a.v1\n  path:\n  - a.v2\n  - a.v3\n"),
              std::string::npos)
        << up.yaml;
    EXPECT_TRUE(up.check(up.yaml).holds);
}

TEST(LockfileTampered, UpgradeOfNothingInstalled) {
    Tamper t({"a", "b"});
    auto action = Tamper::parse(t.edit("action: install\n  reason: requested\n- package: b",
                                       "action: upgrade\n  reason: requested\n- package: b"));
    ASSERT_FALSE(action.ok());
    EXPECT_EQ(action.error().code, ExitCode::invalid);
    EXPECT_EQ(action.error().str(), "l.yaml:18:3: lock.selected[0]: a.v3 is an upgrade, but the "
                                    "lock has no installed CSV of package a");
    auto bogus = Tamper::parse(t.edit("action: install\n  reason: requested\n- package: b",
                                      "action: remove\n  reason: requested\n- package: b"));
    ASSERT_FALSE(bogus.ok());
    EXPECT_EQ(bogus.error().message,
              "lock.selected[0].action is \"remove\", not \"install\" or \"upgrade\"");
}

TEST(LockfileTampered, ReplacesWithNothingInstalled) {
    Tamper t({"a", "b"});
    auto r = Tamper::parse(t.edit("  reason: requested\n- package: b",
                                  "  reason: requested\n  replaces: a.v1\n- package: b"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(r.error().message, "lock.selected[0]: a.v3 is an upgrade of a.v1, but the lock has "
                                 "no installed CSV of package a");
    // With the action changed too.
    auto both = Tamper::parse(
        t.edit("action: install\n  reason: requested\n- package: b",
               "action: upgrade\n  reason: requested\n  replaces: a.v1\n- package: b"));
    ASSERT_FALSE(both.ok());
    EXPECT_EQ(both.error().code, ExitCode::invalid);
}

TEST(LockfileTampered, PathWithNothingInstalled) {
    Tamper t({"a", "b"});
    auto one = Tamper::parse(t.edit("  reason: requested\n- package: b",
                                    "  reason: requested\n  path: [a.v3]\n- package: b"));
    ASSERT_FALSE(one.ok());
    EXPECT_EQ(one.error().message,
              "lock.selected[0]: a.v3 is a new install, but it has a path of one step");
    auto wrong_end =
        Tamper::parse(t.edit("  reason: requested\n- package: b",
                             "  reason: requested\n  path: [a.v3, a.v2]\n- package: b"));
    ASSERT_FALSE(wrong_end.ok());
    EXPECT_EQ(wrong_end.error().message, "lock.selected[0]: the path ends at a.v2, not at a.v3");
    // Hops the channel does not have: drift.
    auto back = t.edit("  reason: requested\n- package: b",
                       "  reason: requested\n  path: [a.v1, a.v3]\n- package: b");
    auto c = t.check(back);
    EXPECT_FALSE(c.holds);
    EXPECT_EQ(c.drift,
              Strings{"locked a.v3 (channel stable, catalog ops): its path steps from a.v1 "
                      "to a.v3, which neither replaces nor skips a.v1 nor covers 1.0.0 "
                      "with its skipRange"});
    auto gone = t.check(t.edit("  reason: requested\n- package: b",
                               "  reason: requested\n  path: [a.v0, a.v3]\n- package: b"));
    EXPECT_FALSE(gone.holds);
    EXPECT_EQ(gone.drift,
              Strings{"locked a.v3 (channel stable, catalog ops): its path passes a.v0, "
                      "which is not in the catalog"});
}

TEST(LockfileTampered, SelectedTwice) {
    Tamper t({"a", "b"});
    auto r = Tamper::parse(t.edit(new_a, std::string(new_a) + new_a));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(r.error().str(), "l.yaml:26:3: lock.selected[1]: package \"a\" is selected twice "
                               "(also in lock.selected[0]): a lock selects one bundle per "
                               "package");
    // Another bundle of the same package is the same mistake.
    std::string other = new_a;
    other.replace(other.find("a.v3"), 4, "a.v2");
    EXPECT_FALSE(Tamper::parse(t.edit(new_a, std::string(new_a) + other)).ok());
}

TEST(LockfileTampered, UpgradeEdited) {
    Tamper t({"a"}, {kpkg::test::installed("a", "a.v1", "1.0.0")});
    // The upgrade made an install, its replaces dropped or changed, its path dropped.
    auto install = Tamper::parse(t.edit("action: upgrade", "action: install"));
    ASSERT_FALSE(install.ok());
    EXPECT_EQ(install.error().message,
              "lock.selected[0]: package a is installed (a.v1), so a.v3 is an upgrade that "
              "replaces a.v1, but the lock says it is an install");
    auto dropped = Tamper::parse(t.edit("  replaces: a.v1\n", ""));
    ASSERT_FALSE(dropped.ok());
    EXPECT_EQ(dropped.error().code, ExitCode::invalid);
    EXPECT_EQ(dropped.error().message,
              "lock.selected[0]: package a is installed (a.v1), so a.v3 is an upgrade that "
              "replaces a.v1, but the lock says it replaces nothing");
    auto changed = Tamper::parse(t.edit("  replaces: a.v1\n", "  replaces: a.v2\n"));
    ASSERT_FALSE(changed.ok());
    EXPECT_EQ(changed.error().message,
              "lock.selected[0]: package a is installed (a.v1), so a.v3 is an upgrade that "
              "replaces a.v1, not a.v2");
    auto nopath = Tamper::parse(t.edit("  path:\n  - a.v2\n  - a.v3\n", ""));
    ASSERT_FALSE(nopath.ok());
    EXPECT_EQ(nopath.error().message,
              "lock.selected[0]: the upgrade to a.v3 has no path (the bundles stepped through)");
    auto twice = Tamper::parse(t.edit("  - a.v2\n  - a.v3\n", "  - a.v2\n  - a.v2\n  - a.v3\n"));
    ASSERT_FALSE(twice.ok());
    EXPECT_EQ(twice.error().message, "lock.selected[0]: the path passes a.v2 twice");
    // A hop left out: a.v3 does not replace a.v1.
    auto shortcut = t.check(t.edit("  - a.v2\n  - a.v3\n", "  - a.v3\n"));
    EXPECT_FALSE(shortcut.holds);
    EXPECT_EQ(shortcut.drift, Strings{"locked a.v3 (channel stable, catalog ops): its path steps "
                                      "from a.v1 to a.v3, which neither replaces nor skips a.v1 "
                                      "nor covers 1.0.0 with its skipRange"});
    // --one-hop takes one hop.
    t.req.options.one_hop = true;
    auto hop = t.check(t.edit("oneHop: false", "oneHop: true"));
    EXPECT_FALSE(hop.holds);
    EXPECT_EQ(hop.drift,
              Strings{"locked a.v3 (channel stable, catalog ops) takes 2 hops, but --one-hop takes "
                      "one"});
}

TEST(LockfileTamperedCli, RefusedOrDrift) {
    TempDir dir;
    auto cat = testdata("catalog").string();
    auto lock = (dir / "kpkg.lock").string();
    ASSERT_EQ(run_kpkg({"resolve", "vault", "--catalog", cat, "--lockfile", lock}).exit_code, 0);
    std::string text = read_file(lock);
    const std::string install = "  action: install\n  reason: requested\n";
    auto at = text.find(install);
    ASSERT_NE(at, std::string::npos) << text;
    auto upgraded = dir.write("upgraded.lock", text.substr(0, at) +
                                                   "  action: upgrade\n  reason: requested\n"
                                                   "  replaces: vault-operator.v1.1.0\n" +
                                                   text.substr(at + install.size()));
    auto r = run_kpkg({"resolve", "vault", "--catalog", cat, "--locked", upgraded.string()});
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(upgraded.string() + ":"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("vault-operator.v1.2.0 is an upgrade of vault-operator.v1.1.0, but the "
                         "lock has no installed CSV of package vault"),
              std::string::npos)
        << r.err;
    // A selected entry repeated.
    auto sel = text.find("- package: vault\n");
    ASSERT_NE(sel, std::string::npos);
    auto twice = dir.write("twice.lock", text + text.substr(sel));
    auto t = run_kpkg({"resolve", "vault", "--catalog", cat, "--locked", twice.string()});
    EXPECT_EQ(t.exit_code, 3) << t.out;
    EXPECT_EQ(t.out, "");
    EXPECT_NE(t.err.find("package \"vault\" is selected twice"), std::string::npos) << t.err;
}
