// kpkg catalog validate: one small catalog per rule (testdata/catalogs/validate-*), catalogs
// built in code for the edge cases (load problems, huge cycles, input order), the tree format,
// image references, the CLI (text, json, exit codes, bad input), and the corpus verdicts.
#include <algorithm>
#include <functional>
#include <set>
#include <sstream>
#include <tuple>

#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/validate.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/load.hpp"
#include "support/support.hpp"

namespace kpkg::test {
namespace {

using catalog::Finding;
using catalog::Severity;
using model::Str;

std::vector<Finding> validate_dir(const fs::path& dir, const catalog::ValidateOptions& o = {}) {
    auto cat = catalog::load_catalog(dir);
    EXPECT_TRUE(cat.ok()) << (cat.ok() ? "" : cat.error().str());
    if (!cat) return {};
    return catalog::validate(*cat, o);
}

std::vector<Finding> fixture(const std::string& rule, const catalog::ValidateOptions& o = {}) {
    return validate_dir(testdata("catalogs/validate-" + rule), o);
}

std::string dump(const std::vector<Finding>& is) {
    return catalog::format_tree(is, Severity::error) + catalog::format_tree(is, Severity::warning);
}

std::vector<Finding> with_rule(const std::vector<Finding>& is, const std::string& rule) {
    std::vector<Finding> hit;
    for (const auto& i : is)
        if (i.rule == rule) hit.push_back(i);
    return hit;
}

// The one issue with this rule; fails the test unless there is exactly one.
Finding only(const std::vector<Finding>& is, const std::string& rule) {
    auto hit = with_rule(is, rule);
    EXPECT_EQ(hit.size(), 1u) << "rule " << rule << ":\n" << dump(is);
    return hit.empty() ? Finding{} : hit.front();
}

void expect_at(const Finding& f, std::uint32_t line, const char* file = "index.yaml") {
    EXPECT_NE(f.pos.file.find(file), std::string::npos) << f.pos.str();
    EXPECT_EQ(f.pos.line, line) << f.message;
}

bool has_message(const std::vector<Finding>& is, const std::string& m) {
    return std::any_of(is.begin(), is.end(), [&](const Finding& i) { return i.message == m; });
}

// --- catalogs built in code ---------------------------------------------------------------

struct EntrySpec {
    EntrySpec(std::string n, std::string r = {}, std::vector<std::string> s = {},
              std::string range = {})
        : name(std::move(n)), replaces(std::move(r)), skips(std::move(s)),
          skip_range(std::move(range)) {}
    std::string name;
    std::string replaces;
    std::vector<std::string> skips;
    std::string skip_range;
};

// A catalog assembled blob by blob; every blob gets the next line of one file.
class Builder {
public:
    Builder() { c.files.push_back("built.yaml"); }

    Str s(std::string_view v) { return c.strings.intern(v); }
    model::Pos pos() { return {1, ++line_, 1, -1}; }

    void package(const std::string& name, const std::string& default_channel) {
        c.packages.push_back({s(name), s(default_channel), 0, 0, 0, pos()});
    }
    void channel(const std::string& pkg, const std::string& name,
                 const std::vector<EntrySpec>& entries) {
        model::Channel ch;
        ch.package = s(pkg);
        ch.name = s(name);
        ch.pos = pos();
        ch.entries_begin = static_cast<std::uint32_t>(c.entries.size());
        for (const auto& e : entries) {
            model::Entry me;
            me.name = s(e.name);
            me.replaces = s(e.replaces);
            me.skip_range = s(e.skip_range);
            me.skips_begin = static_cast<std::uint32_t>(c.skips.size());
            for (const auto& k : e.skips)
                c.skips.push_back(s(k));
            me.skips_count = static_cast<std::uint32_t>(e.skips.size());
            me.pos = pos();
            c.entries.push_back(me);
        }
        ch.entries_count = static_cast<std::uint32_t>(entries.size());
        c.channels.push_back(ch);
    }
    void bundle(const std::string& pkg, const std::string& name, const std::string& version,
                const std::string& image = "quay.io/example/b:v1") {
        model::Bundle b;
        b.package = s(pkg);
        b.name = s(name);
        b.image = s(image);
        b.version = s(version);
        b.props_begin = static_cast<std::uint32_t>(c.properties.size());
        model::Property p;
        p.kind = model::PropKind::package;
        p.type = s("olm.package");
        p.a = s(pkg);
        p.b = s(version);
        c.properties.push_back(p);
        b.props_count = 1;
        b.pos = pos();
        c.bundles.push_back(b);
    }
    // A package "p" with channel "stable" over these entries and a bundle for each.
    void chain(const std::string& pkg, const std::vector<EntrySpec>& entries) {
        package(pkg, "stable");
        channel(pkg, "stable", entries);
        int v = 0;
        for (const auto& e : entries)
            bundle(pkg, e.name, "1.0." + std::to_string(v++));
    }
    std::vector<Finding> run(const catalog::ValidateOptions& o = {}) {
        c.index();
        return catalog::validate(c, o);
    }

    model::Catalog c;

private:
    std::uint32_t line_ = 0;
};

// --- one fixture per rule -----------------------------------------------------------------

TEST(CatalogValidate, PackageName) {
    auto f = only(fixture("package-name"), "package.name");
    EXPECT_EQ(f.message.rfind("invalid package name \"Foo_Bar\": [a lowercase RFC 1123 label", 0),
              0u)
        << f.message;
    expect_at(f, 2);

    Builder b;
    b.chain("foo.bar", {{"foo.bar.v1"}});
    b.chain(std::string(64, 'a'), {{"a.v1"}});
    b.package("", "stable");
    auto is = b.run();
    EXPECT_TRUE(has_message(is, "invalid package name \"foo.bar\": [must not contain dots]"))
        << dump(is);
    EXPECT_TRUE(has_message(is, "invalid package name \"" + std::string(64, 'a') +
                                    "\": [must be no more than 63 characters]"))
        << dump(is);
    EXPECT_EQ(with_rule(is, "package.name").size(), 3u);
    EXPECT_TRUE(has_message(is, "config contains package with no name")) << dump(is);
}

TEST(CatalogValidate, DuplicatePackage) {
    auto f = only(fixture("duplicate-package"), "package.duplicate");
    EXPECT_EQ(f.message, "duplicate package \"foo\"");
    expect_at(f, 22);
}

TEST(CatalogValidate, UnknownPackage) {
    auto is = fixture("unknown-package");
    auto c = only(is, "channel.unknown-package");
    EXPECT_EQ(c.message, "unknown package \"bar\" for channel \"stable\"");
    EXPECT_EQ(c.package, "bar");
    EXPECT_EQ(c.channel, "stable");
    expect_at(c, 22);
    auto b = only(is, "bundle.unknown-package");
    EXPECT_EQ(b.message, "unknown package \"bar\"");
    EXPECT_EQ(b.bundle, "bar.v1.0.0");
    expect_at(b, 28);
    EXPECT_EQ(is.size(), 2u) << dump(is);
}

TEST(CatalogValidate, DuplicateChannel) {
    auto f = only(fixture("duplicate-channel"), "channel.duplicate");
    EXPECT_EQ(f.message, "duplicate channel \"stable\"");
    EXPECT_EQ(f.channel, "stable");
    expect_at(f, 12);
}

TEST(CatalogValidate, ChannelShapes) {
    auto is = fixture("channels");
    auto dup = only(is, "channel.duplicate-entry");
    EXPECT_EQ(dup.message, "duplicate entry \"foo.v1.0.0\"");
    expect_at(dup, 13);
    auto empty = only(is, "channel.empty");
    EXPECT_EQ(empty.message, "channel must contain at least one bundle");
    EXPECT_EQ(empty.channel, "empty");
    expect_at(empty, 15);
    auto noname = only(is, "channel.name");
    EXPECT_EQ(noname.message, "package contains channel with no name");
    expect_at(noname, 20);
    auto lonely = only(is, "package.no-channels");
    EXPECT_EQ(lonely.package, "lonely");
    EXPECT_EQ(lonely.message, "package must contain at least one channel");
    expect_at(lonely, 46);
    // As opm's model: its default channel is not among its (no) channels either.
    auto def = only(is, "package.default-channel");
    EXPECT_EQ(def.package, "lonely");
    EXPECT_EQ(def.message, "default channel \"stable\" not found in channels list");
    EXPECT_EQ(is.size(), 5u) << dump(is);
}

TEST(CatalogValidate, DuplicateBundle) {
    auto f = only(fixture("duplicate-bundle"), "bundle.duplicate");
    EXPECT_EQ(f.message, "duplicate bundle");
    EXPECT_EQ(f.bundle, "foo.v1.0.0");
    expect_at(f, 22);
}

TEST(CatalogValidate, OlmPackageProperty) {
    auto f = only(fixture("olm-package"), "bundle.olm-package");
    EXPECT_EQ(f.bundle, "foo.v1.0.1");
    EXPECT_EQ(f.message, "package \"foo\" does not match \"olm.package\" property \"bar\"");
    expect_at(f, 24);

    auto is = fixture("bundles");
    auto counts = with_rule(is, "bundle.olm-package");
    ASSERT_EQ(counts.size(), 3u) << dump(is);
    EXPECT_TRUE(has_message(is, "must have exactly 1 \"olm.package\" property, found 0"));
    EXPECT_TRUE(has_message(is, "must have exactly 1 \"olm.package\" property, found 2"));
    EXPECT_TRUE(has_message(is, "package \"\" does not match \"olm.package\" property \"orphan\""));
    auto orphan = only(is, "bundle.package");
    EXPECT_EQ(orphan.message, "package name must be set");
    EXPECT_EQ(orphan.package, "");
    // A bundle without image but with an olm.bundle.object property is fine.
    for (const auto& i : is)
        EXPECT_NE(i.bundle, "foo.v1.2.0") << i.message;
}

TEST(CatalogValidate, BundleInNoChannel) {
    auto f = only(fixture("no-channel"), "bundle.no-channel");
    EXPECT_EQ(f.message, "not found in any channel entries");
    EXPECT_EQ(f.bundle, "foo.v2.0.0");
    expect_at(f, 22);
}

TEST(CatalogValidate, EntryWithoutBundle) {
    auto f = only(fixture("missing-bundle"), "channel.missing-bundle");
    EXPECT_EQ(f.message,
              "no olm.bundle blobs found in package \"foo\" for olm.channel entries [foo.v1.0.0]");
    EXPECT_EQ(f.channel, "stable");
    expect_at(f, 10);
    EXPECT_EQ(f.pos.column, 3u);
}

TEST(CatalogValidate, MultipleHeads) {
    auto f = only(fixture("heads"), "channel.head");
    EXPECT_EQ(f.message, "multiple channel heads found in graph: foo.v1.0.0, foo.v1.1.0");
    EXPECT_EQ(f.channel, "stable");
    expect_at(f, 6);
}

TEST(CatalogValidate, NoHead) {
    auto f = only(fixture("no-head"), "channel.head");
    EXPECT_EQ(f.message, "no channel head found in graph");
    expect_at(f, 6);
}

TEST(CatalogValidate, ReplacesCycle) {
    auto f = only(fixture("cycle"), "channel.cycle");
    EXPECT_EQ(f.message, "detected cycle in replaces chain of upgrade graph: "
                         "foo.v1.1.0 -> foo.v1.0.0 -> foo.v1.1.0");
    expect_at(f, 6);

    // A replaces of itself is a cycle of one.
    Builder b;
    b.chain("p", {{"p.v4", "p.v4"}, {"p.v5", "p.v4"}});
    auto self = only(b.run(), "channel.cycle");
    EXPECT_EQ(self.message, "detected cycle in replaces chain of upgrade graph: p.v4 -> p.v4");
}

TEST(CatalogValidate, StrandedBundles) {
    // opm v1.58: foo.v1.2.0 replaces foo.v1.1.0 but also skips it, so the chain stops there and
    // foo.v1.0.0 is stranded (older opm walked on through foo.v1.1.0 and called it valid).
    auto f = only(fixture("stranded"), "channel.stranded");
    EXPECT_EQ(f.message, "channel contains one or more stranded bundles: foo.v1.0.0");
    expect_at(f, 6);

    Builder b;
    // Skipped entries need no replaces edge; the tail may replace a name not in the channel.
    b.chain("ok",
            {{"ok.v1"}, {"ok.v2", "", {"ok.v1"}}, {"ok.v3", "", {"ok.v2"}}, {"ok.v4", "ok.v3"}});
    b.chain("tail", {{"tail.v2", "tail.v1"}, {"tail.v3", "tail.v2"}});
    b.chain("plain", {{"plain.v1"}, {"plain.v2", "", {"plain.v1"}}, {"plain.v3"}});
    // The example of opm's change: skipping the replaced entry strands what came before it.
    b.chain("t", {{"t.v1.0.0"},
                  {"t.v1.1.0", "t.v1.0.0"},
                  {"t.v1.1.2", "t.v1.1.0"},
                  {"t.v1.1.4", "t.v1.1.2", {"t.v1.1.2"}},
                  {"t.v1.2.0"},
                  {"t.v1.2.1", "t.v1.1.4", {"t.v1.1.4", "t.v1.2.0"}}});
    auto is = b.run();
    std::set<std::string> pkgs;
    for (const auto& i : is)
        pkgs.insert(i.package);
    EXPECT_EQ(pkgs, (std::set<std::string>{"plain", "t"})) << dump(is);
    EXPECT_TRUE(has_message(is, "multiple channel heads found in graph: plain.v2, plain.v3"));
    EXPECT_TRUE(
        has_message(is, "channel contains one or more stranded bundles: t.v1.0.0, t.v1.1.0"))
        << dump(is);
}

TEST(CatalogValidate, DefaultChannel) {
    auto is = fixture("default-channel");
    auto fs = with_rule(is, "package.default-channel");
    ASSERT_EQ(fs.size(), 2u) << dump(is);
    for (const auto& f : fs) {
        if (f.package == "foo") {
            EXPECT_EQ(f.message, "default channel \"beta\" not found in channels list");
            expect_at(f, 2);
        } else {
            EXPECT_EQ(f.message, "default channel must be set");
            expect_at(f, 22);
        }
    }
}

TEST(CatalogValidate, DuplicateVersion) {
    auto f = only(fixture("duplicate-version"), "package.duplicate-version");
    EXPECT_EQ(f.message,
              "duplicate versions found in bundles: [{1.0.0: [foo.v1.0.0, foo.v1.0.0-copy]}]");
    expect_at(f, 2);

    Builder b;
    b.chain("p", {{"p.c"}, {"p.b", "p.c"}, {"p.a", "p.b"}, {"p.d", "p.a"}});
    b.c.properties[0].b = b.s("2.0.0"); // p.c
    b.c.properties[1].b = b.s("1.0.0"); // p.b
    b.c.properties[2].b = b.s("2.0.0"); // p.a
    b.c.properties[3].b = b.s("1.0.0"); // p.d
    auto v = only(b.run(), "package.duplicate-version");
    EXPECT_EQ(v.message,
              "duplicate versions found in bundles: [{1.0.0: [p.b, p.d]} {2.0.0: [p.a, p.c]}]");
}

TEST(CatalogValidate, SkipsAndSkipRange) {
    auto is = fixture("skip-range");
    auto s = only(is, "bundle.skip");
    EXPECT_EQ(s.message, "skip[0] is empty in channel \"stable\"");
    EXPECT_EQ(s.severity, Severity::error);
    EXPECT_EQ(s.bundle, "foo.v1.1.0");
    EXPECT_EQ(s.channel, "stable");
    expect_at(s, 11);
    auto r = only(is, "bundle.skip-range");
    EXPECT_EQ(r.severity, Severity::error); // as current opm
    EXPECT_EQ(r.message.rfind("invalid skipRange \">=1.0.0 <<1.1.0\" in channel \"stable\": "
                              "unknown operator \"<<\"",
                              0),
              0u)
        << r.message;
    expect_at(r, 11);

    // --lenient makes it a warning (older opm accepts it); --strict wins over --lenient.
    auto lenient = fixture("skip-range", {.lenient = true});
    EXPECT_EQ(only(lenient, "bundle.skip-range").severity, Severity::warning);
    EXPECT_EQ(only(lenient, "bundle.skip").severity, Severity::error);
    std::set<std::string> lenient_rules;
    for (const auto& rule : catalog::rules())
        if (rule.lenient) lenient_rules.insert(rule.id);
    EXPECT_EQ(lenient_rules, (std::set<std::string>{"bundle.related-image", "bundle.skip-range"}));
    auto both = fixture("skip-range", {.strict = true, .lenient = true});
    EXPECT_EQ(only(both, "bundle.skip-range").severity, Severity::error);
    EXPECT_EQ(catalog::count(both, Severity::warning), 0u);
}

TEST(CatalogValidate, Image) {
    auto is = fixture("image");
    auto images = with_rule(is, "bundle.image");
    ASSERT_EQ(images.size(), 2u) << dump(is);
    for (const auto& f : images) {
        if (f.bundle == "foo.v1.0.0") {
            EXPECT_EQ(f.message, "bundle image must be set");
            expect_at(f, 14);
        } else {
            EXPECT_EQ(f.message,
                      "image: invalid image pull spec \"quay.io/x/foo bar:v1\": invalid reference "
                      "format");
        }
    }
}

TEST(CatalogValidate, RelatedImages) {
    Builder b;
    b.chain("p", {{"p.v1"}});
    b.c.related_images.push_back(
        {b.s("operator"), b.s("quay.io/p/operator@sha256:" + std::string(64, 'a'))});
    b.c.related_images.push_back({b.s("empty"), 0});
    b.c.related_images.push_back({b.s("wasm"), b.s("oci://quay.io/p/wasm:v1")});
    b.c.bundles[0].images_begin = 0;
    b.c.bundles[0].images_count = 3;
    auto is = b.run();
    // An error, as current opm (a catalog pod built with it refuses the catalog).
    auto f = only(is, "bundle.related-image");
    EXPECT_EQ(f.severity, Severity::error);
    EXPECT_EQ(f.message, "relatedImages[2].image: invalid image pull spec "
                         "\"oci://quay.io/p/wasm:v1\": invalid reference format");
    EXPECT_EQ(catalog::count(is, Severity::error), 1u) << dump(is);
    // A warning with --lenient, for catalogs built by older opm.
    auto lenient = b.run({.lenient = true});
    EXPECT_EQ(only(lenient, "bundle.related-image").severity, Severity::warning);
    EXPECT_FALSE(catalog::has_errors(lenient)) << dump(lenient);
}

// Bundle images go through the one reference grammar (kpkg/oci/reference.hpp, tested in
// tests/oci); what catalog validate says of them, word for word, is fixed here.
TEST(CatalogValidate, ImageReferenceMessages) {
    const std::string hex64(64, 'a');
    struct Case {
        std::string image, why; // why: "" when the image is valid
    };
    const std::vector<Case> cases = {
        {"busybox", ""},
        {"localhost:5000/foo/bar:1.0", ""},
        {"quay.io/a/b:v1@sha256:" + hex64, ""},
        {"Quay.IO/a/b", ""},
        {"quay.io/x/foo bar:v1", "invalid reference format"},
        {"quay.io/Example/y:v1", "invalid reference format: repository name must be lowercase"},
        {hex64,
         "invalid repository name (" + hex64 + "), cannot specify 64-byte hexadecimal strings"},
        {"quay.io/x/y@ssha256:" + hex64, "unsupported digest algorithm"},
        {"quay.io/x/y@sha256:" + std::string(63, 'a'), "invalid checksum digest format"},
        {"quay.io/" + std::string(250, 'a'),
         "repository name must not be more than 255 characters"},
        {"[::1]:5000/foo", "invalid reference format"},
    };
    auto image_findings = [](const std::string& image) {
        Builder b;
        b.package("p", "stable");
        b.channel("p", "stable", {{"p.v1"}});
        b.bundle("p", "p.v1", "1.0.0", image);
        return with_rule(b.run(), "bundle.image");
    };
    for (const Case& c : cases) {
        auto is = image_findings(c.image);
        if (c.why.empty()) {
            EXPECT_TRUE(is.empty()) << c.image << "\n" << dump(is);
            continue;
        }
        ASSERT_EQ(is.size(), 1u) << c.image << "\n" << dump(is);
        // The image quoted (and cut when long) as every message quotes input.
        EXPECT_EQ(is[0].message,
                  "image: invalid image pull spec " + text::quote(c.image) + ": " + c.why);
        EXPECT_EQ(is[0].severity, Severity::error);
    }
    // One in full.
    auto is = image_findings("quay.io/Example/y:v1");
    ASSERT_EQ(is.size(), 1u);
    EXPECT_EQ(is[0].message, "image: invalid image pull spec \"quay.io/Example/y:v1\": invalid "
                             "reference format: repository name must be lowercase");
}

TEST(CatalogValidate, Version) {
    auto f = only(fixture("version"), "bundle.version");
    EXPECT_EQ(f.message.rfind("error parsing version \"1.1.x\": ", 0), 0u) << f.message;
    expect_at(f, 22);
}

TEST(CatalogValidate, Release) {
    auto is = fixture("release");
    auto rel = with_rule(is, "bundle.release");
    ASSERT_EQ(rel.size(), 3u) << dump(is);
    EXPECT_TRUE(
        has_message(is, "name \"foo.v1.1.0\" does not match normalized name \"foo-v1.1.0-1\""));
    EXPECT_TRUE(has_message(is, "cannot use build metadata in version with a release version"));
    EXPECT_TRUE(has_message(is, "invalid release \"this.release.is.too.long\": exceeds maximum "
                                "length of 20 characters"));
    // A release counts as part of the version: 1.4.0 release 1 collides with 1.4.0-1.
    auto dup = only(is, "package.duplicate-version");
    EXPECT_EQ(dup.message,
              "duplicate versions found in bundles: [{1.4.0-1: [foo-v1.4.0-1, foo.v1.4.0-1]}]");
    EXPECT_EQ(is.size(), 4u) << dump(is);
}

TEST(CatalogValidate, Deprecations) {
    auto is = fixture("deprecations");
    for (const auto& f : is) {
        EXPECT_EQ(f.scope, model::Scope::deprecation) << f.message;
        EXPECT_GT(f.pos.line, 0u) << f.message;
    }
    EXPECT_TRUE(has_message(is, "cannot deprecate channel \"beta\": channel not found"));
    EXPECT_TRUE(has_message(is, "cannot deprecate bundle \"foo.v0.9.0\": bundle not found"));
    EXPECT_TRUE(has_message(is, "cannot apply deprecations to an unknown package \"nope\""));
    // opm's words for an entry without a message.
    auto nomsg = only(is, "deprecation.message");
    EXPECT_EQ(nomsg.message, "invalid deprecation: message must be set");
    expect_at(nomsg, 36);
    EXPECT_TRUE(has_message(is, "cannot deprecate object declcfg.PackageScopedReference{Schema:"
                                "\"olm.thing\", Name:\"x\"} "
                                "referenced by entry 3: object schema unknown"));
    EXPECT_EQ(is.size(), 5u) << dump(is);

    Builder b;
    b.chain("p", {{"p.v1"}});
    auto dep = [&](const std::string& pkg,
                   const std::vector<std::tuple<std::string, std::string, std::string>>& es) {
        model::Deprecation d;
        d.package = b.s(pkg);
        d.pos = b.pos();
        d.entries_begin = static_cast<std::uint32_t>(b.c.deprecation_entries.size());
        for (const auto& [schema, name, msg] : es)
            b.c.deprecation_entries.push_back({b.s(schema), b.s(name), b.s(msg), b.pos()});
        d.entries_count = static_cast<std::uint32_t>(es.size());
        b.c.deprecations.push_back(d);
    };
    dep("p", {{"olm.package", "", "gone"},
              {"olm.bundle", "p.v1", "old"},
              {"olm.bundle", "p.v1", "again"},
              {"", "x", "no schema"},
              {"olm.package", "p", "named"},
              {"olm.channel", "stable", "fine"}});
    dep("p", {});
    dep("", {});
    auto more = b.run();
    EXPECT_TRUE(has_message(more, "duplicate deprecation entry declcfg.PackageScopedReference{"
                                  "Schema:\"olm.bundle\", Name:"
                                  "\"p.v1\"}"))
        << dump(more);
    EXPECT_TRUE(has_message(more, "schema must be set for deprecation entry [3]"));
    EXPECT_TRUE(has_message(more, "package name must be empty for deprecated package (specified "
                                  "\"p\")"));
    EXPECT_TRUE(has_message(more, "expected a maximum of one deprecation per package: \"p\""));
    EXPECT_TRUE(has_message(more, "package name must be set for deprecation item 2"));
    EXPECT_EQ(more.size(), 5u) << dump(more);
}

TEST(CatalogValidate, PackageWithoutChannelsAsOpm) {
    // opm's model checks the default channel and the channel count on their own: a package with
    // neither gets both findings, and so does one naming a channel it does not have.
    Builder b;
    b.chain("p", {{"p.v1"}});
    b.package("bare", "");
    b.package("ghost", "beta");
    auto is = b.run();
    auto of = [&](const std::string& pkg) {
        std::vector<std::string> m;
        for (const auto& i : is)
            if (i.package == pkg) m.push_back(i.rule + ": " + i.message);
        return m;
    };
    EXPECT_EQ(of("bare"), (std::vector<std::string>{
                              "package.default-channel: default channel must be set",
                              "package.no-channels: package must contain at least one channel"}))
        << dump(is);
    EXPECT_EQ(of("ghost"),
              (std::vector<std::string>{
                  "package.default-channel: default channel \"beta\" not found in channels list",
                  "package.no-channels: package must contain at least one channel"}))
        << dump(is);
    EXPECT_TRUE(of("p").empty()) << dump(is);
}

TEST(CatalogValidate, DeprecationWithoutMessage) {
    // opm's text, under the object the entry deprecates (as opm's model attaches it), or under
    // the package when that object does not exist.
    Builder b;
    b.chain("p", {{"p.v1"}});
    model::Deprecation d;
    d.package = b.s("p");
    d.pos = b.pos();
    d.entries_begin = 0;
    for (auto [schema, name] : {std::pair<const char*, const char*>{"olm.package", ""},
                                {"olm.channel", "stable"},
                                {"olm.bundle", "p.v1"},
                                {"olm.bundle", "p.v9"}})
        b.c.deprecation_entries.push_back({b.s(schema), b.s(name), 0, b.pos()});
    d.entries_count = 4;
    b.c.deprecations.push_back(d);
    auto is = b.run();
    auto msgs = with_rule(is, "deprecation.message");
    ASSERT_EQ(msgs.size(), 4u) << dump(is);
    for (const auto& m : msgs)
        EXPECT_EQ(m.message, "invalid deprecation: message must be set");
    // Sorted: the package's two (by position), then the channel's, then the bundle's.
    EXPECT_EQ(msgs[0].scope, model::Scope::deprecation);
    EXPECT_EQ(msgs[1].scope, model::Scope::deprecation);
    EXPECT_EQ(msgs[2].scope, model::Scope::channel);
    EXPECT_EQ(msgs[2].channel, "stable");
    EXPECT_EQ(msgs[3].scope, model::Scope::bundle);
    EXPECT_EQ(msgs[3].bundle, "p.v1");
    EXPECT_TRUE(has_message(is, "cannot deprecate bundle \"p.v9\": bundle not found"));
    EXPECT_EQ(is.size(), 5u) << dump(is);
    EXPECT_EQ(catalog::format_tree(is),
              "invalid index:\n"
              "└── invalid package \"p\":\n"
              "    ├── built.yaml:6:1: invalid deprecation: message must be set\n"
              "    ├── built.yaml:9:1: cannot deprecate bundle \"p.v9\": bundle not found\n"
              "    ├── built.yaml:9:1: invalid deprecation: message must be set\n"
              "    ├── invalid channel \"stable\":\n"
              "    │   └── built.yaml:7:1: invalid deprecation: message must be set\n"
              "    └── invalid bundle \"p.v1\":\n"
              "        └── built.yaml:8:1: invalid deprecation: message must be set\n");
}

TEST(CatalogValidate, NoPackages) {
    Builder empty;
    auto is = empty.run();
    auto f = only(is, "catalog.empty");
    EXPECT_EQ(f.message, "no packages found");
    EXPECT_EQ(f.severity, Severity::error);
    EXPECT_EQ(f.scope, model::Scope::catalog);
    EXPECT_EQ(f.pos.file, "");
    EXPECT_EQ(catalog::format_tree(is), "invalid index:\n└── no packages found\n");
    EXPECT_TRUE(empty.run({.allow_empty = true}).empty());

    // Blobs but no olm.package: the same, beside what is wrong with the blobs.
    Builder loose;
    loose.bundle("p", "p.v1", "1.0.0");
    auto l = loose.run();
    EXPECT_EQ(only(l, "catalog.empty").message, "no packages found");
    EXPECT_EQ(only(l, "bundle.unknown-package").message, "unknown package \"p\"");
}

// A field a known schema does not have is ignored by opm (and by every command), which can change
// what the catalog says: a misspelt defaultChannel leaves the package without one. validate warns
// with the nearest field; the catalog stays valid unless --strict. The warnings come back the same
// from the cache.
TEST(CatalogValidate, UnknownFieldsOfKnownSchemas) {
    TempDir t;
    t.write("c/p.yaml",
            "schema: olm.package\nname: p\ndefaultChanel: stable\ndefaultChannel: stable\n"
            "---\nschema: olm.channel\npackage: p\nname: stable\n"
            "entries: [{name: p.v1}]\nimage: nope\n"
            "---\nschema: olm.bundle\npackage: p\nname: p.v1\nimage: quay.io/p:v1\n"
            "relatedImage: []\nfrobnicate: 1\n"
            "properties: [{type: olm.package, value: {packageName: p, version: 1.0.0}}]\n"
            "---\nschema: x.other\nname: free\nanything: goes\n");
    auto is = validate_dir(t / "c");
    auto unknown = with_rule(is, "catalog.unknown-field");
    ASSERT_EQ(unknown.size(), 4u) << dump(is);
    for (const auto& i : unknown)
        EXPECT_EQ(i.severity, Severity::warning);
    EXPECT_EQ(
        unknown[0].message,
        "olm.package \"p\" has unknown field \"defaultChanel\" (opm ignores it; the fields of "
        "olm.package are schema, name, defaultChannel, description, icon, properties); did "
        "you mean \"defaultChannel\"?");
    EXPECT_EQ(unknown[0].pos.line, 3u);
    EXPECT_EQ(unknown[0].package, "p");
    EXPECT_NE(unknown[1].message.find("olm.channel \"stable\" has unknown field \"image\""),
              std::string::npos)
        << unknown[1].message;
    EXPECT_EQ(unknown[1].channel, "stable");
    EXPECT_NE(unknown[2].message.find("\"relatedImage\""), std::string::npos);
    EXPECT_NE(unknown[2].message.find("did you mean \"relatedImages\"?"), std::string::npos)
        << unknown[2].message;
    EXPECT_EQ(unknown[2].bundle, "p.v1");
    EXPECT_EQ(unknown[3].message.find("did you mean"), std::string::npos) << unknown[3].message;
    EXPECT_EQ(catalog::count(is, Severity::error), 0u) << dump(is);
    auto strict = validate_dir(t / "c", {.strict = true});
    EXPECT_EQ(with_rule(strict, "catalog.unknown-field").size(), 4u);
    EXPECT_EQ(catalog::count(strict, Severity::error), 4u) << dump(strict);

    // Through the cache: the same warnings on the cold and the warm run.
    const std::vector<std::string> env = {"KPKG_NO_CACHE=",
                                          "KPKG_CACHE_DIR=" + (t / "cache").string()};
    auto cold = run_kpkg({"catalog", "validate", (t / "c").string()}, {}, env);
    auto warm = run_kpkg({"catalog", "validate", (t / "c").string()}, {}, env);
    EXPECT_EQ(cold.exit_code, 0) << cold.out << cold.err;
    EXPECT_NE(cold.out.find("did you mean \"defaultChannel\"?"), std::string::npos) << cold.out;
    EXPECT_EQ(warm.out, cold.out);
    EXPECT_EQ(warm.exit_code, 0);
}

// A YAML document whose value is a flow mapping and that goes on after it: opm reads the mapping
// and ignores the rest, so the catalog stays valid; validate warns as render does, at the
// mapping, with render's message (one reader, one warning), and the warning comes back the same
// from the cache. A flow mapping that is the whole document gives no warning.
TEST(CatalogValidate, TextAfterAFlowMappingIsAWarning) {
    TempDir t;
    t.write("c/p.yaml", "{schema: olm.package, name: p, defaultChannel: stable}\ntrailing: stuff\n"
                        "---\nschema: olm.channel\npackage: p\nname: stable\n"
                        "entries: [{name: p.v1}]\n"
                        "---\n# a bundle\n{\"schema\": \"olm.bundle\", \"package\": \"p\", "
                        "\"name\": \"p.v1\", \"image\": \"quay.io/p:v1\", \"properties\": "
                        "[{\"type\": \"olm.package\", \"value\": {\"packageName\": \"p\", "
                        "\"version\": \"1.0.0\"}}]}\n{\"more\": 1}\n"
                        "---\n{schema: x.other, name: whole}\n");
    auto is = validate_dir(t / "c");
    EXPECT_EQ(catalog::count(is, Severity::error), 0u) << dump(is);
    auto ignored = with_rule(is, "catalog.ignored-text");
    ASSERT_EQ(ignored.size(), 2u) << dump(is);
    const std::string message =
        "the document goes on after the flow collection that is its value; opm ignores the rest, "
        "and so does kpkg (start a new document with a \"---\" line)";
    for (const auto& f : ignored) {
        EXPECT_EQ(f.severity, Severity::warning);
        EXPECT_EQ(f.message, message);
        EXPECT_EQ(f.pos.file, (t / "c/p.yaml").string());
    }
    EXPECT_EQ(ignored[0].pos.line, 1u);
    EXPECT_EQ(ignored[0].pos.column, 1u);
    EXPECT_EQ(ignored[1].pos.line, 10u);
    EXPECT_EQ(ignored[1].pos.column, 1u);
    auto strict = validate_dir(t / "c", {.strict = true});
    EXPECT_EQ(catalog::count(strict, Severity::error), 2u) << dump(strict);

    // The command line: validate says valid and warns; render warns with the same line.
    const std::vector<std::string> env = {"KPKG_NO_CACHE=",
                                          "KPKG_CACHE_DIR=" + (t / "cache").string()};
    const std::string at1 = (t / "c/p.yaml").string() + ":1:1: " + message;
    const std::string at2 = (t / "c/p.yaml").string() + ":10:1: " + message;
    auto render = run_kpkg({"catalog", "render", (t / "c").string()}, {}, env);
    EXPECT_EQ(render.exit_code, 0) << render.err;
    EXPECT_NE(render.err.find(at1), std::string::npos) << render.err;
    EXPECT_NE(render.err.find(at2), std::string::npos) << render.err;
    auto cold = run_kpkg({"catalog", "validate", (t / "c").string()}, {}, env);
    auto warm = run_kpkg({"catalog", "validate", (t / "c").string()}, {}, env);
    EXPECT_EQ(cold.exit_code, 0) << cold.out << cold.err;
    EXPECT_NE(cold.out.find(at1), std::string::npos) << cold.out;
    EXPECT_NE(cold.out.find(at2), std::string::npos) << cold.out;
    EXPECT_EQ(warm.out, cold.out);
    EXPECT_EQ(warm.exit_code, 0);
}

// olm.constraint properties are read as kpkg resolve reads them: a CEL rule that does not
// compile, or a malformed constraint, is a warning under the bundle (opm checks neither) and an
// error under --strict; a good rule gives no finding. A rule repeated across bundles is
// reported for each of them.
namespace {
std::string constraint_catalog(const std::string& rule, const std::string& extra = {}) {
    std::string props = "properties:\n"
                        "  - {type: olm.package, value: {packageName: p, version: VERSION}}\n"
                        "  - type: olm.constraint\n"
                        "    value:\n"
                        "      failureMessage: needs a certified operator\n"
                        "      cel: {rule: \"" +
                        rule + "\"}\n" + extra;
    std::string out = "schema: olm.package\nname: p\ndefaultChannel: stable\n"
                      "---\nschema: olm.channel\npackage: p\nname: stable\n"
                      "entries: [{name: p.v1.0.0}, {name: p.v1.1.0, replaces: p.v1.0.0}]\n";
    for (const char* v : {"1.0.0", "1.1.0"}) {
        std::string b = props;
        b.replace(b.find("VERSION"), 7, v);
        out += "---\nschema: olm.bundle\npackage: p\nname: p.v" + std::string(v) +
               "\nimage: quay.io/p:v" + v + "\n" + b;
    }
    return out;
}
} // namespace

TEST(CatalogValidate, ConstraintCelRules) {
    TempDir t;
    t.write("good/index.yaml",
            constraint_catalog("properties.exists(p, p.type == 'certified' && "
                               "semver_compare(p.value.version, '1.0.0') >= 0)"));
    auto good = validate_dir(t / "good");
    EXPECT_TRUE(good.empty()) << dump(good);

    t.write("bad/index.yaml",
            constraint_catalog("properties.exists(p, p.type == 'certified' && certified(p))"));
    auto is = validate_dir(t / "bad");
    auto cel = with_rule(is, "catalog.constraint-cel");
    ASSERT_EQ(cel.size(), 2u) << dump(is);
    EXPECT_EQ(is.size(), 2u) << dump(is);
    EXPECT_EQ(cel[0].severity, Severity::warning);
    EXPECT_EQ(cel[0].scope, model::Scope::bundle);
    EXPECT_EQ(cel[0].package, "p");
    EXPECT_EQ(cel[0].bundle, "p.v1.0.0");
    EXPECT_EQ(cel[1].bundle, "p.v1.1.0");
    EXPECT_EQ(cel[0].message,
              "olm.constraint cel.rule \"properties.exists(p, p.type == 'certified' && "
              "certified(p))\" does not compile: column 47: undeclared reference to 'certified' "
              "(kpkg resolve refuses it; opm does not check it)");
    expect_at(cel[0], 10);
    expect_at(cel[1], 21);
    auto strict = validate_dir(t / "bad", {.strict = true});
    EXPECT_EQ(catalog::count(strict, Severity::error), 2u) << dump(strict);

    // A syntax error and a type error are reported the same way.
    for (const char* rule : {"properties.exists(p, p.type == )", "properties.size() == 'x'"}) {
        t.write("odd/index.yaml", constraint_catalog(rule));
        auto odd = validate_dir(t / "odd");
        EXPECT_EQ(with_rule(odd, "catalog.constraint-cel").size(), 2u) << rule << dump(odd);
    }

    // A constraint the resolver refuses for its shape: catalog.constraint.
    t.write("shape/index.yaml", constraint_catalog("true", "      gvk: {version: v1, kind: K}\n"));
    auto shape = validate_dir(t / "shape");
    auto c = with_rule(shape, "catalog.constraint");
    ASSERT_EQ(c.size(), 2u) << dump(shape);
    EXPECT_EQ(c[0].message.rfind("olm.constraint: gvk and cel are all given", 0), 0u)
        << c[0].message;
}

TEST(CatalogValidateCli, ConstraintCelRules) {
    TempDir t;
    t.write("c/index.yaml", constraint_catalog("properties.exists(p, nope(p))"));
    auto def = run_kpkg({"catalog", "validate", (t / "c").string()});
    EXPECT_EQ(def.exit_code, 0) << def.out << def.err;
    EXPECT_NE(def.out.find("warnings:\n└── package \"p\":\n    ├── bundle \"p.v1.0.0\":\n"),
              std::string::npos)
        << def.out;
    EXPECT_NE(def.out.find("undeclared reference to 'nope' (kpkg resolve refuses it"),
              std::string::npos)
        << def.out;
    EXPECT_NE(def.out.find(": valid, 2 warnings\n"), std::string::npos) << def.out;

    auto strict = run_kpkg({"catalog", "validate", "--strict", (t / "c").string()});
    EXPECT_EQ(strict.exit_code, 3) << strict.out;
    EXPECT_NE(strict.out.find("invalid bundle \"p.v1.1.0\""), std::string::npos) << strict.out;

    auto j = run_kpkg({"-o", "json", "catalog", "validate", (t / "c").string()});
    EXPECT_EQ(j.exit_code, 0) << j.out << j.err;
    auto docs = io::parse_json(j.out, "out").take();
    const io::Node& root = docs.at(0).root;
    EXPECT_EQ(root.get("warnings")->text, "2");
    const io::Node& f = root.get("findings")->items.at(0);
    EXPECT_EQ(f.get("rule")->text, "catalog.constraint-cel");
    EXPECT_EQ(f.get("severity")->text, "warning");
    EXPECT_EQ(f.get("bundle")->text, "p.v1.0.0");
    EXPECT_EQ(f.get("line")->text, "10");

    // And the resolver refuses the catalog, as the warning says.
    auto r = run_kpkg({"resolve", "p", "--catalog", (t / "c").string()});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
}

TEST(CatalogValidate, HugeValuesAreCut) {
    // Every value a message quotes is cut at 256 bytes (at a character boundary) with its size.
    const std::string huge(1000000, '7');
    const std::string name = "p" + std::string(300000, 'x');
    Builder b;
    b.package(name, "stable");
    b.chain("q", {{"q.v1", "", {}, "<" + huge}, {"q.v2", "q.v1"}});
    b.c.bundles.back().image = b.s("quay.io/q/" + huge);
    b.c.properties.back().b = b.s(huge); // q.v2's version
    // "é" (2 bytes) straddling byte 256 is kept whole, never split.
    b.package(std::string(255, 'a') + "\xc3\xa9" + std::string(1000, 'b'), "");
    auto is = b.run();
    ASSERT_GE(is.size(), 6u) << is.size();
    for (const auto& i : is) {
        EXPECT_LT(i.message.size(), 1000u) << i.rule;
        EXPECT_EQ(i.message.find(std::string(300, 'x')), std::string::npos) << i.rule;
    }
    EXPECT_TRUE(has_message(is, "invalid package name \"p" + std::string(255, 'x') +
                                    "...\" (300001 bytes): [must be no more than 63 characters]"))
        << dump(is);
    EXPECT_TRUE(has_message(is, "image: invalid image pull spec \"quay.io/q/" +
                                    std::string(246, '7') +
                                    "...\" (1000010 bytes): repository name must not be more "
                                    "than 255 characters"))
        << dump(is);
    auto v = only(is, "bundle.version");
    EXPECT_EQ(v.message.rfind("error parsing version \"" + std::string(256, '7') +
                                  "...\" (1000000 bytes): ",
                              0),
              0u)
        << v.message;
    auto r = only(is, "bundle.skip-range");
    EXPECT_EQ(r.message.rfind("invalid skipRange \"<" + std::string(255, '7') +
                                  "...\" (1000001 bytes) in channel \"stable\": ",
                              0),
              0u)
        << r.message;
    EXPECT_NE(dump(is).find("\"" + std::string(255, 'a') + "\xc3\xa9...\" (1257 bytes)"),
              std::string::npos)
        << dump(is);
    EXPECT_LT(dump(is).size(), 10000u);
}

// --- load problems, bad input, scale ----------------------------------------------------------

TEST(CatalogValidate, LoadProblemsAreReportedAndValidationGoesOn) {
    // From files: malformed property values are load problems; the channel rules still run.
    auto is = fixture("load-problems");
    auto props = with_rule(is, "bundle.property");
    ASSERT_EQ(props.size(), 2u) << dump(is);
    EXPECT_EQ(props[0].bundle, "foo.v1.0.0");
    expect_at(props[0], 20); // the offending field itself
    EXPECT_EQ(only(is, "channel.head").message,
              "multiple channel heads found in graph: foo.v1.0.0, foo.v1.1.0");
    // The bundle whose olm.package value is malformed is not also said to lack one.
    EXPECT_TRUE(with_rule(is, "bundle.olm-package").empty()) << dump(is);

    // In code: whatever problems the loader collected come first, then every rule runs.
    Builder b;
    b.chain("p", {{"p.v1"}, {"p.v2"}});
    model::CatalogFinding parse;
    parse.rule = "catalog.parse";
    parse.message = "expected ':' after a mapping key";
    parse.pos = {"broken.yaml", 3, 7, 0};
    model::CatalogFinding schema;
    schema.rule = "catalog.schema";
    schema.message = "blob has no \"schema\" field";
    schema.pos = {"other.json", 1, 1, 0};
    b.c.problems = {parse, schema};
    auto all = b.run();
    ASSERT_EQ(all.size(), 3u) << dump(all);
    EXPECT_EQ(all[0].rule, "catalog.parse");
    EXPECT_EQ(all[1].rule, "catalog.schema");
    EXPECT_EQ(all[2].rule, "channel.head");
    EXPECT_EQ(catalog::format_tree(all),
              "invalid index:\n"
              "├── broken.yaml:3:7: expected ':' after a mapping key\n"
              "├── other.json:1:1: blob has no \"schema\" field\n"
              "└── invalid package \"p\":\n"
              "    └── invalid channel \"stable\":\n"
              "        └── built.yaml:2:1: multiple channel heads found in graph: p.v1, p.v2\n");
}

// "r12": a letter and a number (appended, not operator+: GCC 12 warns on that spuriously).
std::string numbered(char letter, int i) {
    std::string s(1, letter);
    s += std::to_string(i);
    return s;
}

TEST(CatalogValidate, CycleOfTenThousandReplaces) {
    // head -> r0 -> r1 -> ... -> r9999 -> r0: a loop, no recursion, one step per entry.
    Builder b;
    std::vector<EntrySpec> es{{"head", "r0"}};
    const int n = 10000;
    for (int i = 0; i < n; ++i)
        es.push_back({numbered('r', i), numbered('r', (i + 1) % n)});
    b.chain("big", es);
    auto is = b.run();
    auto f = only(is, "channel.cycle");
    EXPECT_EQ(f.message.rfind("detected cycle in replaces chain of upgrade graph: r0 -> r1 -> ", 0),
              0u);
    EXPECT_NE(f.message.find(" -> ... (9901 more) -> "), std::string::npos) << f.message.size();
    EXPECT_NE(f.message.find("-> r9999 -> r0"), std::string::npos);
    EXPECT_LT(f.message.size(), 2000u);
    EXPECT_EQ(is.size(), 1u);

    // Without a head: every entry is replaced by another.
    Builder ring;
    es.erase(es.begin());
    ring.chain("ring", es);
    EXPECT_EQ(only(ring.run(), "channel.head").message, "no channel head found in graph");

    // Ten thousand heads: the list is cut.
    Builder flat;
    std::vector<EntrySpec> heads;
    for (int i = 0; i < n; ++i)
        heads.push_back({numbered('h', 10000 + i)});
    flat.chain("flat", heads);
    auto h = only(flat.run(), "channel.head");
    EXPECT_NE(h.message.find("h10099, ... (9900 more)"), std::string::npos) << h.message.size();
}

TEST(CatalogValidate, ResultDoesNotDependOnBlobOrder) {
    auto build = [](bool reversed) {
        Builder b;
        std::vector<std::function<void()>> steps = {
            [&] {
                b.chain("a", {{"a.v1"}, {"a.v2"}});
                b.bundle("a", "a.v9", "9.0.0");
            },
            [&] {
                b.chain("b", {{"b.v1", "b.v0"}, {"b.v2", "b.v1", {"b.v1"}}});
            },
            [&] { b.package("c", "missing"); },
            [&] { b.bundle("d", "d.v1", "1.0.0"); },
        };
        if (reversed) std::reverse(steps.begin(), steps.end());
        for (auto& s : steps)
            s();
        std::vector<std::string> out;
        for (const auto& i : b.run())
            out.push_back(i.rule + "|" + i.package + "|" + i.channel + "|" + i.bundle + "|" +
                          i.message);
        return out;
    };
    auto forward = build(false);
    EXPECT_EQ(forward.size(), 5u);
    EXPECT_EQ(forward, build(true));
}

TEST(CatalogValidate, TreeFormat) {
    auto is = fixture("many");
    std::string tree = catalog::format_tree(is);
    std::string dir = testdata("catalogs/validate-many").string() + "/";
    for (std::size_t at; (at = tree.find(dir)) != std::string::npos;)
        tree.erase(at, dir.size());
    EXPECT_EQ(tree,
              "invalid index:\n"
              "├── invalid package \"alpha\":\n"
              "│   ├── alpha.yaml:2:1: default channel \"beta\" not found in channels list\n"
              "│   ├── invalid channel \"stable\":\n"
              "│   │   └── alpha.yaml:6:1: multiple channel heads found in graph: alpha.v2.0.0, "
              "alpha.v3.0.0\n"
              "│   ├── invalid bundle \"alpha.v2.0.0\":\n"
              "│   │   └── alpha.yaml:25:1: image: invalid image pull spec "
              "\"quay.io/Example/alpha:v2.0.0\": invalid reference format: repository name must "
              "be lowercase\n"
              "│   └── invalid bundle \"alpha.v3.0.0\":\n"
              "│       └── alpha.yaml:35:1: error parsing version \"v3.0.0\": a leading 'v' is not "
              "part of a semantic version (write \"3.0.0\")\n"
              "├── invalid package \"bravo\":\n"
              "│   ├── invalid channel \"stable\":\n"
              "│   │   └── bravo.json:2:1: channel contains one or more stranded bundles: "
              "bravo.v1.0.0\n"
              "│   └── invalid bundle \"bravo.v4.0.0\":\n"
              "│       └── bravo.json:13:1: not found in any channel entries\n"
              "└── invalid package \"charlie\":\n"
              "    └── bravo.json:15:1: cannot apply deprecations to an unknown package "
              "\"charlie\"\n");
    EXPECT_EQ(catalog::format_tree(is, Severity::warning), "");
    EXPECT_EQ(catalog::format_tree({}), "");
}

TEST(CatalogValidate, WarningTreeAndQuoting) {
    Finding w;
    w.severity = Severity::warning;
    w.scope = model::Scope::bundle;
    w.rule = "bundle.skip-range";
    w.package = "p";
    w.bundle = "p.v1";
    w.message = "two\nlines";
    w.pos = {"f.yaml", 4, 2, 0};
    EXPECT_EQ(catalog::format_tree({w}, Severity::warning),
              "warnings:\n"
              "└── package \"p\":\n"
              "    └── bundle \"p.v1\":\n"
              "        └── f.yaml:4:2: two\\nlines\n");
    EXPECT_EQ(catalog::format_tree({w}, Severity::error), "");

    Builder b;
    b.chain("q", {{"q.v1"}, {std::string("q\"v2\n") + std::string(300, 'x')}});
    auto is = b.run();
    auto h = only(is, "channel.head");
    EXPECT_NE(h.message.find("q\"v2\\nxxx"), std::string::npos) << h.message;
    EXPECT_EQ(h.message.find('\n'), std::string::npos);
    std::string tree = catalog::format_tree(is);
    EXPECT_EQ(std::count(tree.begin(), tree.end(), '\n'), 4) << tree;
}

TEST(CatalogValidate, EveryRuleIsDocumented) {
    std::string man = read_file(source_root() / "man/kpkg-catalog.1");
    std::set<std::string> ids;
    for (const auto& r : catalog::rules()) {
        EXPECT_TRUE(ids.insert(r.id).second) << r.id;
        std::string roff;
        for (char c : std::string(r.id))
            roff += c == '-' ? std::string("\\-") : std::string(1, c);
        EXPECT_NE(man.find(roff), std::string::npos) << r.id << " is not in man/kpkg-catalog.1";
    }
    // Every rule the fixtures trigger is listed, or is a load problem.
    for (const char* f : {"cycle",
                          "default-channel",
                          "deprecations",
                          "duplicate-bundle",
                          "duplicate-channel",
                          "duplicate-package",
                          "duplicate-version",
                          "heads",
                          "image",
                          "missing-bundle",
                          "no-channel",
                          "no-head",
                          "olm-package",
                          "package-name",
                          "skip-range",
                          "stranded",
                          "unknown-package",
                          "version",
                          "release",
                          "channels",
                          "bundles",
                          "many"})
        for (const auto& i : fixture(f))
            EXPECT_TRUE(ids.count(i.rule)) << f << ": " << i.rule;
}

// --- the command ------------------------------------------------------------------------------

TEST(CatalogValidateCli, TextAndExitCodes) {
    auto bad = run_kpkg({"catalog", "validate", testdata("catalogs/validate-heads").string()});
    EXPECT_EQ(bad.exit_code, 3) << bad.err;
    EXPECT_EQ(bad.out.rfind("invalid index:\n└── invalid package \"foo\":\n", 0), 0u) << bad.out;
    EXPECT_NE(bad.out.find(": invalid: 1 error in 1 package\n"), std::string::npos) << bad.out;

    auto good = run_kpkg({"catalog", "validate", (source_root() / "testdata/catalog").string()});
    EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
    EXPECT_NE(good.out.find("testdata/catalog: valid\n"), std::string::npos) << good.out;
    auto quiet =
        run_kpkg({"-q", "catalog", "validate", (source_root() / "testdata/catalog").string()});
    EXPECT_EQ(quiet.exit_code, 0);
    EXPECT_EQ(quiet.out, "");

    // Warnings only (--lenient): valid, unless --strict.
    TempDir t;
    std::string cat = read_file(testdata("catalogs/validate-skip-range/index.yaml"));
    cat.replace(cat.find("skips: ['']"), 11, "skips: []");
    t.write("c/index.yaml", cat);
    auto warn = run_kpkg({"catalog", "validate", "--lenient", (t / "c").string()});
    EXPECT_EQ(warn.exit_code, 0) << warn.out;
    EXPECT_EQ(
        warn.out.rfind("warnings:\n└── package \"foo\":\n    └── bundle \"foo.v1.1.0\":\n", 0), 0u)
        << warn.out;
    EXPECT_NE(warn.out.find(": valid, 1 warning\n"), std::string::npos) << warn.out;
    auto strict = run_kpkg({"catalog", "validate", "--strict", (t / "c").string()});
    EXPECT_EQ(strict.exit_code, 3) << strict.out;
    EXPECT_NE(strict.out.find("invalid bundle \"foo.v1.1.0\""), std::string::npos) << strict.out;

    auto missing = run_kpkg({"catalog", "validate", "/nonexistent/catalog"});
    EXPECT_EQ(missing.exit_code, 1) << missing.out;
    EXPECT_EQ(missing.out, "");
}

TEST(CatalogValidateCli, Lenient) {
    // The skipRange that does not parse is an error by default, a warning with --lenient.
    TempDir t;
    std::string cat = read_file(testdata("catalogs/validate-skip-range/index.yaml"));
    cat.replace(cat.find("skips: ['']"), 11, "skips: []");
    t.write("c/index.yaml", cat);
    auto def = run_kpkg({"catalog", "validate", (t / "c").string()});
    EXPECT_EQ(def.exit_code, 3) << def.out;
    EXPECT_NE(def.out.find("invalid bundle \"foo.v1.1.0\""), std::string::npos) << def.out;
    auto lenient = run_kpkg({"catalog", "validate", "--lenient", (t / "c").string()});
    EXPECT_EQ(lenient.exit_code, 0) << lenient.out << lenient.err;
    EXPECT_NE(lenient.out.find(": valid, 1 warning\n"), std::string::npos) << lenient.out;
    auto both = run_kpkg({"catalog", "validate", "--lenient", "--strict", (t / "c").string()});
    EXPECT_EQ(both.exit_code, 2) << both.out << both.err;
}

TEST(CatalogValidateCli, NoPackages) {
    // An empty directory, a directory without catalog files, an empty file, or a wrong path
    // inside a real tree: "no packages found", exit 3, unless --allow-empty.
    TempDir t;
    fs::create_directories(t / "empty");
    fs::create_directories(t / "tree/a/b");
    fs::create_directories(t / "tree/c");
    t.write("blank/index.yaml", "");
    t.write("ignored/.indexignore", "*.yaml\n");
    t.write("ignored/index.yaml", "schema: olm.package\nname: p\n");
    for (const char* dir : {"empty", "tree", "blank", "ignored"}) {
        auto r = run_kpkg({"catalog", "validate", (t / dir).string()});
        EXPECT_EQ(r.exit_code, 3) << dir << ": " << r.out << r.err;
        EXPECT_EQ(r.out, "invalid index:\n└── no packages found\n" + (t / dir).string() +
                             ": invalid: 1 error\n")
            << dir;
        auto ok = run_kpkg({"catalog", "validate", "--allow-empty", (t / dir).string()});
        EXPECT_EQ(ok.exit_code, 0) << dir << ": " << ok.out << ok.err;
        EXPECT_EQ(ok.out, (t / dir).string() + ": valid\n") << dir;
    }
    auto j = run_kpkg({"-o", "json", "catalog", "validate", (t / "empty").string()});
    EXPECT_EQ(j.exit_code, 3);
    auto docs = io::parse_json(j.out, "out.json");
    ASSERT_TRUE(docs.ok()) << j.out;
    const io::Node& d = (*docs)[0].root;
    EXPECT_EQ(d.get("valid")->text, "false");
    ASSERT_EQ(d.get("findings")->items.size(), 1u);
    EXPECT_EQ(d.get("findings")->items[0].get("rule")->text, "catalog.empty");
    auto stdin_empty = run_kpkg({"catalog", "validate", "-"}, "\n");
    EXPECT_EQ(stdin_empty.exit_code, 3) << stdin_empty.out << stdin_empty.err;

    // catalog list answers with an empty list (exit 0) and says so on stderr.
    auto list = run_kpkg({"catalog", "list", "packages", (t / "empty").string()});
    EXPECT_EQ(list.exit_code, 0) << list.err;
    EXPECT_EQ(list.out, "NAME  DEFAULT CHANNEL  CHANNELS  BUNDLES  LATEST\n");
    EXPECT_EQ(list.err, "kpkg: warning: " + (t / "empty").string() + ": no packages found\n");
    auto quiet = run_kpkg({"-q", "catalog", "list", "packages", (t / "empty").string()});
    EXPECT_EQ(quiet.err, "");
}

TEST(CatalogValidateCli, HugeValuesAreCut) {
    // A 1,000,000-digit number, image, version and skipRange: every message stays short, in the
    // tree, in -o json and on stderr.
    const std::string huge(1000000, '7');
    TempDir t;
    t.write("c/index.yaml",
            "schema: olm.package\nname: p\ndefaultChannel: stable\nx: " + huge +
                "\n---\n"
                "schema: olm.channel\npackage: p\nname: stable\nentries:\n"
                "- name: p.v1\n  skipRange: '<" +
                huge +
                "'\n---\n"
                "schema: olm.bundle\npackage: p\nname: p.v1\nimage: quay.io/p/" +
                huge + "\nrelatedImages:\n- image: oci://" + huge +
                "\nproperties:\n- type: olm.package\n  value: {packageName: p, version: '" + huge +
                "'}\n");
    t.write("j/index.json",
            "{\"schema\": \"olm.package\", \"name\": \"q\", \"n\": " + huge + "}\n");
    for (const char* dir : {"c", "j"}) {
        for (const char* fmt : {"text", "json"}) {
            auto r = run_kpkg({"-o", fmt, "catalog", "validate", (t / dir).string()});
            EXPECT_EQ(r.exit_code, 3) << dir << " " << fmt << ": " << r.err;
            EXPECT_LT(r.out.size() + r.err.size(), 20000u) << dir << " " << fmt;
            EXPECT_NE(r.out.find("(1000000 bytes)"), std::string::npos)
                << dir << " " << fmt << ": " << r.out.substr(0, 4000);
        }
    }
}

TEST(CatalogValidateCli, Json) {
    auto j = run_kpkg(
        {"-o", "json", "catalog", "validate", testdata("catalogs/validate-skip-range").string()});
    EXPECT_EQ(j.exit_code, 3) << j.err;
    auto docs = io::parse_json(j.out, "out.json");
    ASSERT_TRUE(docs.ok()) << j.out;
    ASSERT_EQ(docs->size(), 1u);
    const io::Node& d = (*docs)[0].root;
    EXPECT_EQ(d.get("valid")->text, "false");
    EXPECT_EQ(d.get("errors")->text, "2");
    EXPECT_EQ(d.get("warnings")->text, "0");
    const io::Node* fs = d.get("findings");
    ASSERT_TRUE(fs && fs->is_seq());
    ASSERT_EQ(fs->items.size(), 2u);
    // Same position: the findings sort by message.
    const io::Node& e = fs->items[1];
    std::vector<std::string> keys;
    for (const auto& m : e.fields)
        keys.push_back(m.key);
    EXPECT_EQ(keys, (std::vector<std::string>{"severity", "scope", "rule", "package", "channel",
                                              "bundle", "message", "file", "line", "column"}));
    EXPECT_EQ(e.get("severity")->text, "error");
    EXPECT_EQ(e.get("scope")->text, "bundle");
    EXPECT_EQ(e.get("rule")->text, "bundle.skip");
    EXPECT_EQ(e.get("package")->text, "foo");
    EXPECT_EQ(e.get("channel")->text, "stable");
    EXPECT_EQ(e.get("bundle")->text, "foo.v1.1.0");
    EXPECT_EQ(e.get("line")->text, "11");
    EXPECT_EQ(e.get("column")->text, "3");
    EXPECT_EQ(e.get("message")->text, "skip[0] is empty in channel \"stable\"");
    EXPECT_NE(e.get("file")->text.find("validate-skip-range/index.yaml"), std::string::npos);
    EXPECT_EQ(fs->items[0].get("severity")->text, "error");
    EXPECT_EQ(fs->items[0].get("rule")->text, "bundle.skip-range");

    auto y = run_kpkg(
        {"-o", "yaml", "catalog", "validate", (source_root() / "testdata/catalog").string()});
    EXPECT_EQ(y.exit_code, 0);
    EXPECT_EQ(y.out, "valid: true\nerrors: 0\nwarnings: 0\nfindings: []\n");
}

TEST(CatalogValidateCli, BadInput) {
    TempDir t;
    // Not YAML or JSON at all.
    t.write("binary/index.yaml", std::string("\x00\x01\x02\xff\xfe garbage: [", 16));
    // A blob without schema.
    t.write("noschema/index.yaml", "schema: olm.package\nname: foo\n---\nname: loose\n");
    // Deep nesting.
    t.write("deep/index.json", "{\"schema\": \"olm.package\", \"name\": \"x\", \"v\": " +
                                   std::string(100000, '[') + std::string(100000, ']') + "}\n");
    // Wrong types.
    t.write("types/index.yaml",
            "schema: olm.channel\npackage: foo\nname: stable\nentries: {name: x}\n");
    // A cycle of 10,000 replaces, written as a file.
    std::string ring = "{\"schema\": \"olm.package\", \"name\": \"big\", \"defaultChannel\": "
                       "\"stable\"}\n{\"schema\": \"olm.channel\", \"package\": \"big\", "
                       "\"name\": \"stable\", \"entries\": [{\"name\": \"head\", \"replaces\": "
                       "\"r0\"}";
    std::string bundles;
    for (int i = 0; i < 10000; ++i) {
        ring += ", {\"name\": \"r" + std::to_string(i) + "\", \"replaces\": \"r" +
                std::to_string((i + 1) % 10000) + "\"}";
        bundles += "{\"schema\": \"olm.bundle\", \"package\": \"big\", \"name\": \"r" +
                   std::to_string(i) +
                   "\", \"image\": \"quay.io/b/r:v1\", \"properties\": [{\"type\": "
                   "\"olm.package\", \"value\": {\"packageName\": \"big\", \"version\": \"1.0." +
                   std::to_string(i) + "\"}}]}\n";
    }
    ring += "]}\n{\"schema\": \"olm.bundle\", \"package\": \"big\", \"name\": \"head\", "
            "\"image\": \"quay.io/b/r:v1\", \"properties\": [{\"type\": \"olm.package\", "
            "\"value\": {\"packageName\": \"big\", \"version\": \"2.0.0\"}}]}\n" +
            bundles;
    t.write("ring/index.json", ring);

    struct Case {
        const char* dir;
        const char* want;
    };
    for (const Case& c : {Case{"binary", "index.yaml:"}, Case{"noschema", "index.yaml:4:1: "},
                          Case{"deep", "nesting"}, Case{"types", "index.yaml:4:"},
                          Case{"ring", "detected cycle in replaces chain of upgrade graph: r0 -> "
                                       "r1 -> "}}) {
        auto r = run_kpkg({"catalog", "validate", (t / c.dir).string()});
        EXPECT_EQ(r.exit_code, 3) << c.dir << ": " << r.out << r.err;
        EXPECT_EQ(r.out.rfind("invalid index:\n", 0), 0u) << c.dir << ": " << r.out;
        EXPECT_NE(r.out.find(c.want), std::string::npos) << c.dir << ": " << r.out;
        EXPECT_LT(r.out.size(), 10000u) << c.dir;
    }
}

// --- the corpus -------------------------------------------------------------------------------

std::set<std::string> packages_with_errors(const std::vector<Finding>& is) {
    std::set<std::string> out;
    for (const auto& i : is)
        if (i.severity == Severity::error) out.insert(i.package);
    return out;
}

TEST(CatalogValidateCorpus, DerivedCommunityNamesExactlyTheInvalidPackages) {
    KPKG_REQUIRE_CORPUS(corpus);
    fs::path base = corpus / "olm/large/derived-community";
    std::set<std::string> want;
    std::istringstream in(read_file(base / "invalid-packages.txt"));
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) want.insert(line);
    ASSERT_EQ(want.size(), 16u);
    // With --lenient: the rules older opm releases do not have are warnings (see below for
    // current opm's verdict).
    auto is = validate_dir(base / "catalog", {.lenient = true});
    EXPECT_EQ(packages_with_errors(is), want) << catalog::format_tree(is);
    for (const auto& i : is) {
        if (i.severity == Severity::error)
            EXPECT_TRUE(i.rule == "channel.head" || i.rule == "channel.stranded") << i.message;
        else
            EXPECT_TRUE(i.rule == "bundle.skip-range" || i.rule == "bundle.related-image")
                << i.message;
    }
    // Two of them are invalid only under opm v1.58's stranded rule: a replaces edge to an entry
    // that is skipped is not followed.
    std::set<std::string> stranded_only;
    for (const auto& i : is)
        if (i.rule == "channel.stranded") stranded_only.insert(i.package);
    for (const auto& i : is)
        if (i.rule == "channel.head") stranded_only.erase(i.package);
    EXPECT_GE(stranded_only.size(), 2u);
}

TEST(CatalogValidateCorpus, ValidCatalogsPass) {
    KPKG_REQUIRE_CORPUS(corpus);
    for (const char* rel :
         {"olm/large/certified-v4.22", "olm/large/community-v4.21", "olm/large/community-v4.22",
          "olm/fbc/registry-action-index-latest", "olm/fbc/registry-action-index-old",
          "olm/fbc/registry-action-list-index", "olm/fbc/registry-fbc-dir-example",
          "olm/fbc/olm-e2e-deprecations"}) {
        auto is = validate_dir(corpus / rel);
        EXPECT_TRUE(is.empty()) << rel << "\n" << dump(is);
    }
}

TEST(CatalogValidateCorpus, CatalogValidIsValidOnlyForOlderOpm) {
    KPKG_REQUIRE_CORPUS(corpus);
    // catalog-valid carries real bundles' skipRanges blang cannot parse ("<v1.4.0") and
    // relatedImages that are not image references ("oci://quay.io/kuadrant/wasm-shim:v0.5.0"):
    // current opm rejects it, and so does kpkg by default; older opm accepts it (--lenient).
    const fs::path dir = corpus / "olm/large/derived-community/catalog-valid";
    auto is = validate_dir(dir);
    EXPECT_EQ(with_rule(is, "bundle.skip-range").size(), 31u);
    EXPECT_EQ(with_rule(is, "bundle.related-image").size(), 15u);
    EXPECT_EQ(catalog::count(is, Severity::error), 46u) << catalog::format_tree(is);
    EXPECT_EQ(catalog::count(is, Severity::warning), 0u);
    bool wasm = false;
    for (const auto& i : is)
        wasm = wasm || i.message == "relatedImages[0].image: invalid image pull spec "
                                    "\"oci://quay.io/kuadrant/wasm-shim:v0.5.0\": invalid "
                                    "reference format";
    EXPECT_TRUE(wasm) << catalog::format_tree(is);

    auto lenient = validate_dir(dir, {.lenient = true});
    EXPECT_FALSE(catalog::has_errors(lenient)) << catalog::format_tree(lenient);
    EXPECT_EQ(catalog::count(lenient, Severity::warning), 46u);
}

TEST(CatalogValidateCorpus, LegacyStreamIsInvalid) {
    KPKG_REQUIRE_CORPUS(corpus);
    auto is = validate_dir(corpus / "olm/fbc/registry-e2e-test-configs");
    // Its channels are only bundle properties (the old format): no olm.channel blob, so the
    // package has no channel and no bundle is in a channel.
    auto nc = with_rule(is, "bundle.no-channel");
    ASSERT_FALSE(nc.empty()) << dump(is);
    EXPECT_EQ(nc.front().message, "not found in any channel entries");
    EXPECT_EQ(only(is, "package.no-channels").package, "prometheus");
    // Its default channel names a channel it does not have (opm's model says so too).
    EXPECT_EQ(only(is, "package.default-channel").package, "prometheus");
    EXPECT_EQ(nc.size() + 2, catalog::count(is, Severity::error)) << dump(is);
}

} // namespace
} // namespace kpkg::test
