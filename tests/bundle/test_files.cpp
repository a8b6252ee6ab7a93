// What a bundle directory's files may be: symbolic links that stay inside the bundle are followed,
// links that leave it are refused (their target must not end up in a rendered blob), links that
// dangle or loop and files that cannot be read stop a render instead of being left out, and a
// manifest that does not parse is reported with its position rather than through its
// consequences. End to end through bundle render/validate/inspect and catalog render.
#include <gtest/gtest.h>

#include <fstream>

#include <unistd.h>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/bundle/render.hpp"
#include "kpkg/io/go.hpp"
#include "support/support.hpp"
#include "support/unprivileged.hpp"

using namespace kpkg;
using test::contains;
using test::run_kpkg;
using test::testdata;
namespace fs = std::filesystem;

namespace {

// A secret outside the bundle, as a kubeconfig would be.
constexpr const char* secret_yaml = "apiVersion: v1\nkind: Config\nusers:\n"
                                    "  - name: ci\n    user:\n      token: TOPSECRETTOKEN\n";

// d/b: a copy of the valid-minimal bundle; d/outside/config.yaml: the secret.
struct Fixture {
    test::TempDir d;
    fs::path b;
    fs::path secret;
    Fixture() {
        b = d / "b";
        fs::copy(testdata("bundles/valid-minimal"), b, fs::copy_options::recursive);
        secret = d.write("outside/config.yaml", secret_yaml);
    }
    std::string dir() const { return b.string(); }
};

// The secret, or its base64 (as an olm.bundle.object would carry it), appears in `s`.
bool leaks(const std::string& s) {
    std::string b64;
    io::go::append_base64(b64, secret_yaml);
    return contains(s, "TOPSECRETTOKEN") || contains(s, b64.substr(0, 24));
}

// Every command that reads the bundle refuses it, naming the link, and leaks nothing.
void expect_refused(const Fixture& f, const std::string& link, int code, const std::string& why) {
    SCOPED_TRACE(link);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"bundle", "render", f.dir()},
          std::vector<std::string>{"bundle", "render", "-o", "yaml", f.dir()},
          std::vector<std::string>{"catalog", "render", f.dir()}}) {
        auto r = run_kpkg(args);
        EXPECT_EQ(r.exit_code, code) << args[0] << " " << args[1] << "\n" << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 200);
        EXPECT_TRUE(contains(r.err, link)) << r.err;
        EXPECT_TRUE(contains(r.err, why)) << r.err;
        EXPECT_FALSE(leaks(r.out + r.err));
    }
    // validate reports it with the rest; what cannot be read makes the report incomplete (1).
    auto v = run_kpkg({"bundle", "validate", f.dir()});
    EXPECT_EQ(v.exit_code, code == 1 ? 1 : 3) << v.out << v.err;
    EXPECT_TRUE(contains(v.out, link + ": error: ")) << v.out;
    EXPECT_TRUE(contains(v.out, why)) << v.out;
    EXPECT_FALSE(leaks(v.out + v.err));
    auto i = run_kpkg({"bundle", "inspect", "-o", "json", f.dir()});
    EXPECT_EQ(i.exit_code, 3) << i.err;
    EXPECT_TRUE(contains(i.err, link)) << i.err;
    EXPECT_FALSE(leaks(i.out + i.err));
}

TEST(BundleLinks, AbsoluteLinkToAFileOutsideIsRefused) {
    Fixture f;
    fs::create_symlink(f.secret, f.b / "manifests/zz.yaml");
    expect_refused(f, (f.b / "manifests/zz.yaml").string(), 3, "outside the bundle directory");
    // The library says the same: an error finding, nothing read, and render fails.
    auto l = bundle::load(f.b);
    ASSERT_TRUE(l.ok()) << l.error().str();
    ASSERT_EQ(l->blocking.size(), 1u);
    EXPECT_EQ(l->blocking[0].code, ExitCode::invalid);
    bool found = false;
    for (const auto& x : l->findings)
        found = found || (x.rule == "load.link" && x.severity == bundle::Severity::error);
    EXPECT_TRUE(found);
    for (const auto& m : l->bundle.manifests)
        EXPECT_NE(m.kind, "Config");
    EXPECT_FALSE(bundle::render(*l).ok());
}

TEST(BundleLinks, RelativeLinkLeavingTheBundleIsRefused) {
    Fixture f;
    fs::create_symlink("../../outside/config.yaml", f.b / "manifests/zz.yaml");
    expect_refused(f, (f.b / "manifests/zz.yaml").string(), 3, "outside the bundle directory");
    // Through a link inside the bundle that points out: the final target counts.
    fs::remove(f.b / "manifests/zz.yaml");
    fs::create_symlink("../outside/config.yaml", f.b / "hop.yaml");
    fs::create_symlink("../hop.yaml", f.b / "manifests/zz.yaml");
    expect_refused(f, (f.b / "manifests/zz.yaml").string(), 3, "outside the bundle directory");
}

TEST(BundleLinks, LinkInMetadataLeavingTheBundleIsRefused) {
    Fixture f;
    fs::create_symlink(f.secret, f.b / "metadata/zz.yaml");
    expect_refused(f, (f.b / "metadata/zz.yaml").string(), 3, "outside the bundle directory");
}

TEST(BundleLinks, LinkToADirectoryOutsideIsRefused) {
    Fixture f;
    fs::create_directory_symlink(f.d / "outside", f.b / "manifests/more");
    expect_refused(f, (f.b / "manifests/more").string(), 3, "outside the bundle directory");
}

TEST(BundleLinks, ManifestsOrMetadataDirectoryLeavingTheBundleIsRefused) {
    Fixture f;
    fs::rename(f.b / "metadata", f.d / "outside/metadata");
    fs::create_directory_symlink(f.d / "outside/metadata", f.b / "metadata");
    expect_refused(f, (f.b / "metadata").string(), 3, "outside the bundle directory");

    Fixture g;
    fs::rename(g.b / "manifests", g.d / "outside/manifests");
    fs::create_symlink(g.secret, g.d / "outside/manifests/zz.yaml");
    fs::create_directory_symlink(g.d / "outside/manifests", g.b / "manifests");
    for (const char* cmd : {"render", "validate", "inspect"}) {
        auto r = run_kpkg({"bundle", cmd, g.dir()});
        EXPECT_EQ(r.exit_code, 3) << cmd << r.out << r.err;
        EXPECT_TRUE(contains(r.out + r.err, (g.b / "manifests").string())) << r.out << r.err;
        EXPECT_FALSE(leaks(r.out + r.err)) << cmd;
    }
}

TEST(BundleLinks, LinksInsideTheBundleAreFollowed) {
    Fixture f;
    // The CRD kept elsewhere in the bundle, linked from manifests/ (relative and absolute).
    fs::create_directories(f.b / "shared");
    fs::rename(f.b / "manifests/widgets.demo.example.com.crd.yaml", f.b / "shared/crd.yaml");
    fs::create_symlink("../shared/crd.yaml", f.b / "manifests/widgets.demo.example.com.crd.yaml");
    fs::rename(f.b / "manifests/demo-settings.configmap.yaml", f.b / "shared/cm.yaml");
    fs::create_symlink(fs::absolute(f.b / "shared/cm.yaml"),
                       f.b / "manifests/demo-settings.configmap.yaml");
    auto plain = run_kpkg({"bundle", "render", testdata("bundles/valid-minimal").string()});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    auto r = run_kpkg({"bundle", "render", f.dir()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, plain.out); // the same blob as with the files in place
    auto v = run_kpkg({"bundle", "validate", f.dir()});
    EXPECT_EQ(v.exit_code, 0) << v.out;
    auto c = run_kpkg({"catalog", "render", f.dir()});
    EXPECT_EQ(c.exit_code, 0) << c.err;
    // The bundle directory itself given through a link: its links still resolve inside it.
    fs::create_directory_symlink(f.b, f.d / "via-link");
    auto l = run_kpkg({"bundle", "render", (f.d / "via-link").string()});
    EXPECT_EQ(l.exit_code, 0) << l.err;
    EXPECT_EQ(l.out, plain.out);
}

TEST(BundleLinks, DanglingLinkIsAnError) {
    Fixture f;
    fs::create_symlink("gone.yaml", f.b / "manifests/zz.yaml");
    expect_refused(f, (f.b / "manifests/zz.yaml").string(), 1, "which does not exist");
}

TEST(BundleLinks, LinkLoopIsAnError) {
    Fixture f;
    fs::create_symlink("zz2.yaml", f.b / "manifests/zz.yaml");
    fs::create_symlink("zz.yaml", f.b / "manifests/zz2.yaml");
    expect_refused(f, (f.b / "manifests/zz.yaml").string(), 1, "too many levels of symbolic links");
}

// ---- a manifest that does not parse ------------------------------------------------------------

TEST(BundleParseError, CsvThatDoesNotParseIsReportedWithItsPosition) {
    Fixture f;
    const fs::path csv = f.b / "manifests/demo.v1.0.0.clusterserviceversion.yaml";
    std::string text = test::read_file(csv);
    // Line 9: an unterminated flow sequence.
    text.replace(text.find("  displayName: Demo"), 19, "  displayName: [Demo");
    std::ofstream(csv, std::ios::binary | std::ios::trunc) << text;
    const std::string where = csv.string() + ":";

    for (const std::vector<std::string>& args : {std::vector<std::string>{"bundle", "render"},
                                                 std::vector<std::string>{"catalog", "render"}}) {
        auto r = run_kpkg({args[0], args[1], f.dir()});
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_TRUE(contains(r.err, where)) << r.err;
        EXPECT_TRUE(contains(r.err, "does not parse")) << r.err;
        EXPECT_FALSE(contains(r.err, "no ClusterServiceVersion")) << r.err;
    }

    auto i = run_kpkg({"bundle", "inspect", f.dir()});
    EXPECT_EQ(i.exit_code, 3);
    EXPECT_TRUE(contains(i.err, where)) << i.err;
    EXPECT_FALSE(contains(i.err, "no ClusterServiceVersion")) << i.err;

    auto v = run_kpkg({"bundle", "validate", f.dir()});
    EXPECT_EQ(v.exit_code, 3);
    // The parse error comes first, with line and column, and its consequence is not reported.
    const std::string first = v.out.substr(0, v.out.find('\n'));
    EXPECT_TRUE(first.rfind(where, 0) == 0) << v.out;
    EXPECT_TRUE(contains(first, "[load.parse]")) << v.out;
    EXPECT_NE(first.find_first_of("0123456789", where.size()), std::string::npos) << first;
    EXPECT_FALSE(contains(v.out, "csv.missing")) << v.out;
    EXPECT_FALSE(contains(v.out, "no ClusterServiceVersion")) << v.out;
}

TEST(BundleParseError, OtherFileThatDoesNotParseLeavesRenderAsItWas) {
    // opm leaves out a manifest it cannot decode; so does render when the bundle is otherwise
    // complete. validate reports it.
    Fixture f;
    f.d.write("b/manifests/broken.yaml", "kind: [Service\n");
    auto r = run_kpkg({"bundle", "render", f.dir()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto v = run_kpkg({"bundle", "validate", f.dir()});
    EXPECT_EQ(v.exit_code, 3);
    EXPECT_TRUE(contains(v.out, "broken.yaml:2:1: error: does not parse")) << v.out;
}

TEST(BundleParseError, NoCsvWithoutParseErrorsIsStillReported) {
    Fixture f;
    fs::remove(f.b / "manifests/demo.v1.0.0.clusterserviceversion.yaml");
    auto r = run_kpkg({"bundle", "render", f.dir()});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "no ClusterServiceVersion")) << r.err;
    auto v = run_kpkg({"bundle", "validate", f.dir()});
    EXPECT_TRUE(contains(v.out, "[csv.missing]")) << v.out;
}

// ---- files that cannot be read -----------------------------------------------------------------

// Runs kpkg directly when permissions apply to this process, as nobody when it is root.
test::RunResult run_where_permissions_apply(const std::vector<std::string>& args) {
    if (::geteuid() != 0) return run_kpkg(args);
    auto r = test::run_kpkg_unprivileged(args);
    if (!r) return {};
    return *r;
}

TEST(BundleUnreadable, ManifestThatCannotBeReadStopsRender) {
    Fixture f;
    // Nobody must be able to reach the bundle when the tests run as root.
    fs::permissions(f.d.path(), fs::perms::owner_all | fs::perms::others_exec);
    const fs::path crd = f.b / "manifests/widgets.demo.example.com.crd.yaml";
    fs::permissions(crd, fs::perms::none);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"bundle", "render", f.dir()},
          std::vector<std::string>{"catalog", "render", f.dir()}}) {
        auto r = run_where_permissions_apply(args);
        ASSERT_NE(r.exit_code, 126) << "cannot switch to user nobody";
        EXPECT_EQ(r.exit_code, 1) << args[0] << " " << r.err;
        EXPECT_TRUE(r.out.empty());
        EXPECT_TRUE(contains(r.err, crd.string())) << r.err;
    }
    auto v = run_where_permissions_apply({"bundle", "validate", f.dir()});
    EXPECT_EQ(v.exit_code, 1);
    EXPECT_TRUE(contains(v.out, crd.string() + ": error: ")) << v.out;
    EXPECT_FALSE(contains(v.out, "is not in the bundle")) << v.out; // the CRD may be in it
    fs::permissions(crd, fs::perms::owner_all);
}

TEST(BundleUnreadable, MetadataDirectoryThatCannotBeReadStopsRender) {
    Fixture f;
    fs::permissions(f.d.path(), fs::perms::owner_all | fs::perms::others_exec);
    fs::permissions(f.b / "metadata", fs::perms::none);
    auto r = run_where_permissions_apply({"bundle", "render", f.dir()});
    ASSERT_NE(r.exit_code, 126) << "cannot switch to user nobody";
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, (f.b / "metadata").string())) << r.err;
    EXPECT_FALSE(contains(r.err, "no annotations file")) << r.err;
    fs::permissions(f.b / "metadata", fs::perms::owner_all);
}

TEST(BundleUnreadable, InProcessLoadBlocksRender) {
    // The in-process check; root reads every file, so as root it runs in a child as nobody.
    Fixture f;
    fs::permissions(f.d.path(), fs::perms::owner_all | fs::perms::others_exec);
    const fs::path crd = f.b / "manifests/widgets.demo.example.com.crd.yaml";
    fs::permissions(crd, fs::perms::none);
    auto got = test::run_unprivileged([&] {
        auto l = bundle::load(f.b);
        if (!l.ok()) return "load failed: " + l.error().str();
        std::string out = std::to_string(l->blocking.size()) + " blocking";
        if (!l->blocking.empty())
            out += ", code " + std::to_string(static_cast<int>(l->blocking[0].code));
        out += bundle::render(*l).ok() ? ", rendered" : ", not rendered";
        return out;
    });
    fs::permissions(crd, fs::perms::owner_all);
    ASSERT_TRUE(got.has_value()) << "cannot run the load as user nobody";
    EXPECT_EQ(*got, "1 blocking, code " + std::to_string(static_cast<int>(ExitCode::error)) +
                        ", not rendered");
}

} // namespace
