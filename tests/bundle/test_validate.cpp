// Bundle validation: each rule on a bundle built in code and on its own testdata bundle
// (testdata/bundles/invalid-<rule>/, a copy of valid-minimal with one thing broken), the four
// corpus bundles, and `kpkg bundle validate` end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/bundle/report.hpp"
#include "kpkg/bundle/validate.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/load.hpp"
#include "support/support.hpp"

using namespace kpkg;
using bundle::Finding;
using bundle::Severity;
using test::contains;
using test::testdata;
namespace fs = std::filesystem;

namespace {

// ---- a bundle built in code ---------------------------------------------------------------------
// Fills a Bundle from file texts the way the loader does (only what the rules read), so the rules
// are tested on their own. Keys are paths relative to the bundle directory.

std::string str_at(const io::Node* n) {
    return n != nullptr && n->is_string() ? n->text : std::string();
}

const io::Node* dig(const io::Node* n, std::initializer_list<std::string_view> keys) {
    for (auto k : keys) {
        if (n == nullptr) return nullptr;
        n = n->get(k);
    }
    return n;
}

std::vector<bundle::CrdRef> crd_refs(const io::Node* list, const std::string& file) {
    std::vector<bundle::CrdRef> out;
    if (list == nullptr || !list->is_seq()) return out;
    for (const auto& item : list->items)
        out.push_back({str_at(item.get("name")), str_at(item.get("version")),
                       str_at(item.get("kind")), io::pos_of(file, item.mark, 0)});
    return out;
}

std::vector<bundle::ApiServiceRef> api_refs(const io::Node* list) {
    std::vector<bundle::ApiServiceRef> out;
    if (list == nullptr || !list->is_seq()) return out;
    for (const auto& item : list->items)
        out.push_back({str_at(item.get("group")),
                       str_at(item.get("version")),
                       str_at(item.get("kind")),
                       str_at(item.get("name")),
                       {}});
    return out;
}

void fill_csv(bundle::Bundle& b, std::size_t index) {
    const bundle::Manifest& m = b.manifests[index];
    const io::Node* o = &m.object;
    bundle::CsvInfo c;
    c.manifest = index;
    c.name = m.name;
    c.version = str_at(dig(o, {"spec", "version"}));
    c.replaces = str_at(dig(o, {"spec", "replaces"}));
    if (const auto* s = dig(o, {"spec", "skips"}); s != nullptr && s->is_seq())
        for (const auto& i : s->items)
            c.skips.push_back(str_at(&i));
    if (const auto* a = dig(o, {"metadata", "annotations"}); a != nullptr && a->is_map())
        for (const auto& e : a->fields)
            c.annotations[e.key] = str_at(&e.value);
    if (auto it = c.annotations.find("olm.skipRange"); it != c.annotations.end())
        c.skip_range = it->second;
    c.min_kube_version = str_at(dig(o, {"spec", "minKubeVersion"}));
    c.install_strategy = str_at(dig(o, {"spec", "install", "strategy"}));
    if (const auto* im = dig(o, {"spec", "installModes"}); im != nullptr && im->is_seq()) {
        c.has_install_modes = true;
        for (const auto& i : im->items) {
            const io::Node* sup = i.get("supported");
            c.install_modes.emplace_back(str_at(i.get("type")),
                                         sup != nullptr && sup->as_bool().value_or(false));
        }
    }
    c.owned_crds = crd_refs(dig(o, {"spec", "customresourcedefinitions", "owned"}), m.file);
    c.required_crds = crd_refs(dig(o, {"spec", "customresourcedefinitions", "required"}), m.file);
    c.owned_apiservices = api_refs(dig(o, {"spec", "apiservicedefinitions", "owned"}));
    c.required_apiservices = api_refs(dig(o, {"spec", "apiservicedefinitions", "required"}));
    if (const auto* d = dig(o, {"spec", "install", "spec", "deployments"}); d && d->is_seq())
        for (const auto& i : d->items)
            c.deployments.push_back({str_at(i.get("name")), {}});
    b.csv = std::move(c);
}

void fill_crd(bundle::Bundle& b, std::size_t index) {
    const io::Node* o = &b.manifests[index].object;
    bundle::CrdInfo c;
    c.manifest = index;
    c.name = b.manifests[index].name;
    c.group = str_at(dig(o, {"spec", "group"}));
    c.kind = str_at(dig(o, {"spec", "names", "kind"}));
    c.plural = str_at(dig(o, {"spec", "names", "plural"}));
    if (const auto* v = dig(o, {"spec", "versions"}); v != nullptr && v->is_seq())
        for (const auto& i : v->items)
            c.versions.push_back(str_at(i.get("name")));
    if (auto v = str_at(dig(o, {"spec", "version"}));
        !v.empty() && std::find(c.versions.begin(), c.versions.end(), v) == c.versions.end())
        c.versions.push_back(v);
    b.crds.push_back(std::move(c));
}

std::vector<bundle::TypedValue> typed(const io::Node* list, const std::string& file) {
    std::vector<bundle::TypedValue> out;
    if (list == nullptr || !list->is_seq()) return out;
    for (const auto& i : list->items) {
        const io::Node* v = i.get("value");
        out.push_back(
            {str_at(i.get("type")), v != nullptr ? *v : io::Node{}, io::pos_of(file, i.mark, 0)});
    }
    return out;
}

bundle::Bundle build(const std::map<std::string, std::string>& files,
                     const std::string& dir = "b") {
    bundle::Bundle b;
    b.dir = dir;
    for (const auto& [rel, content] : files) {
        std::string file = dir + "/" + rel;
        auto docs = io::parse_yaml(content, file);
        if (!docs) throw Exception(docs.error());
        if (text::starts_with(rel, "manifests/")) {
            for (auto& d : *docs) {
                bundle::Manifest m;
                m.file = file;
                m.document = d.index;
                m.object = std::move(d.root);
                m.api_version = str_at(m.object.get("apiVersion"));
                m.kind = str_at(m.object.get("kind"));
                m.name = str_at(dig(&m.object, {"metadata", "name"}));
                m.pos = io::pos_of(file, m.object.mark, d.index);
                b.manifests.push_back(std::move(m));
                std::size_t i = b.manifests.size() - 1;
                if (b.manifests[i].kind == "ClusterServiceVersion" && !b.csv) fill_csv(b, i);
                if (b.manifests[i].kind == "CustomResourceDefinition") fill_crd(b, i);
            }
            continue;
        }
        if (docs->empty()) continue;
        const io::Node& root = docs->front().root;
        if (const auto* a = root.get("annotations"); a != nullptr && a->is_map()) {
            b.annotations.file = file;
            for (const auto& e : a->fields) {
                b.annotations.labels[e.key] = str_at(&e.value);
                b.annotations.positions[e.key] = io::pos_of(file, e.value.mark, 0);
            }
            auto label = [&](const char* k) {
                auto it = b.annotations.labels.find(k);
                return it == b.annotations.labels.end() ? std::string() : it->second;
            };
            b.annotations.package = label(bundle::label_package);
            const std::string channels = label(bundle::label_channels);
            for (auto c : text::split(channels, ','))
                b.annotations.channels.emplace_back(c);
            b.annotations.default_channel = label(bundle::label_default_channel);
        }
        if (const auto* d = root.get("dependencies")) {
            b.dependencies = typed(d, file);
            b.dependencies_file = file;
        }
        if (const auto* p = root.get("properties")) {
            b.properties = typed(p, file);
            b.properties_file = file;
        }
    }
    return b;
}

std::map<std::string, std::string> read_dir(const fs::path& dir) {
    std::map<std::string, std::string> files;
    for (const char* sub : {"manifests", "metadata"}) {
        if (!fs::is_directory(dir / sub)) continue;
        for (const auto& e : fs::directory_iterator(dir / sub))
            if (e.is_regular_file())
                files[std::string(sub) + "/" + e.path().filename().string()] =
                    test::read_file(e.path());
    }
    return files;
}

std::map<std::string, std::string> minimal_files() {
    return read_dir(testdata("bundles/valid-minimal"));
}

// Replaces the one occurrence of `from` in files[rel].
void edit(std::map<std::string, std::string>& files, const std::string& rel,
          const std::string& from, const std::string& to) {
    std::string& s = files.at(rel);
    auto at = s.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    s.replace(at, from.size(), to);
}

const char* const csv_file = "manifests/demo.v1.0.0.clusterserviceversion.yaml";
const char* const dep_file = "metadata/dependencies.yaml";

std::set<std::string> rules_of(const std::vector<Finding>& fs) {
    std::set<std::string> r;
    for (const auto& f : fs)
        r.insert(f.rule);
    return r;
}

std::string dump(const std::vector<Finding>& fs) {
    std::string s;
    for (const auto& f : fs)
        s += "  " + bundle::format(f) + "\n";
    return s;
}

const Finding* find_rule(const std::vector<Finding>& fs, const std::string& rule) {
    for (const auto& f : fs)
        if (f.rule == rule) return &f;
    return nullptr;
}

std::vector<Finding> check(const std::map<std::string, std::string>& files,
                           const bundle::ValidateOptions& o = {}) {
    return bundle::validate(build(files), o);
}

} // namespace

// ---- rules on bundles built in code -------------------------------------------------------------

TEST(ValidateRules, MinimalBundleIsClean) {
    auto fs = check(minimal_files());
    EXPECT_TRUE(fs.empty()) << dump(fs);
}

TEST(ValidateRules, EveryRuleIdIsListed) {
    std::set<std::string> ids;
    for (const auto& r : bundle::rules()) {
        EXPECT_TRUE(ids.insert(r.id).second) << r.id;
        EXPECT_FALSE(std::string(r.summary).empty());
    }
    EXPECT_GE(ids.size(), 40u);
}

// man/kpkg-bundle.1 lists every rule, with its severity, under RULES.
TEST(ValidateRules, EveryRuleIsInTheManPage) {
    const std::string page = test::read_file(test::source_root() / "man" / "kpkg-bundle.1");
    const auto rules_at = page.find("\n.SH RULES\n");
    ASSERT_NE(rules_at, std::string::npos);
    const std::string section = page.substr(rules_at, page.find("\n.SH ", rules_at + 1) - rules_at);
    for (const auto& r : bundle::rules()) {
        std::string roff;
        for (char c : std::string(r.id)) {
            if (c == '-') roff += '\\';
            roff += c;
        }
        const std::string item =
            "\n.TP\n.BR " + roff + " \" (" + bundle::severity_name(r.severity) + ")\"\n";
        EXPECT_NE(section.find(item), std::string::npos)
            << "man/kpkg-bundle.1 RULES lacks " << r.id;
    }
}

TEST(ValidateRules, SupportedKindsAreOperatorRegistrysSixteen) {
    const auto& k = bundle::supported_kinds();
    EXPECT_EQ(k.size(), 16u);
    for (const char* kind :
         {"ClusterServiceVersion", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
          "Service", "ServiceAccount", "Role", "RoleBinding", "PrometheusRule", "ServiceMonitor",
          "Secret", "ConfigMap", "PodDisruptionBudget", "PriorityClass", "VerticalPodAutoscaler",
          "ConsoleYAMLSample"})
        EXPECT_NE(std::find(k.begin(), k.end(), kind), k.end()) << kind;
}

TEST(ValidateRules, MissingAnnotationsFileStopsAnnotationChecks) {
    auto files = minimal_files();
    files.erase("metadata/annotations.yaml");
    auto fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"annotations.file"}) << dump(fs);
    EXPECT_EQ(fs[0].pos.file, "b/metadata");
}

TEST(ValidateRules, MissingOptionalLabelsAreWarnings) {
    auto files = minimal_files();
    std::string& a = files.at("metadata/annotations.yaml");
    for (const char* l : {"mediatype", "manifests", "metadata"}) {
        auto at = a.find(std::string("  operators.operatorframework.io.bundle.") + l + ".v1");
        auto end = a.find('\n', at);
        a.erase(at, end - at + 1);
    }
    auto fs = check(files);
    EXPECT_EQ(rules_of(fs),
              (std::set<std::string>{"annotations.mediatype", "annotations.manifests-dir",
                                     "annotations.metadata-dir"}))
        << dump(fs);
    EXPECT_EQ(bundle::count(fs, Severity::warning), 3u);
    EXPECT_FALSE(bundle::has_errors(fs));
}

TEST(ValidateRules, LeadingSlashDirectoryLabelsAreAccepted) {
    auto files = minimal_files();
    edit(files, "metadata/annotations.yaml", "manifests.v1: manifests/",
         "manifests.v1: /manifests/");
    edit(files, "metadata/annotations.yaml", "metadata.v1: metadata/", "metadata.v1: /metadata/");
    auto fs = check(files);
    EXPECT_TRUE(fs.empty()) << dump(fs);
}

TEST(ValidateRules, MissingPackageAndChannels) {
    auto files = minimal_files();
    edit(files, "metadata/annotations.yaml",
         "  operators.operatorframework.io.bundle.package.v1: demo\n", "");
    edit(files, "metadata/annotations.yaml",
         "  operators.operatorframework.io.bundle.channels.v1: stable,fast\n", "");
    auto fs = check(files);
    EXPECT_EQ(rules_of(fs), (std::set<std::string>{"annotations.package", "annotations.channels"}))
        << dump(fs);
    for (const auto& f : fs)
        EXPECT_EQ(f.severity, Severity::error);
}

TEST(ValidateRules, EmptyChannelsLabel) {
    auto files = minimal_files();
    edit(files, "metadata/annotations.yaml", "channels.v1: stable,fast", "channels.v1: \"\"");
    auto fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"annotations.channels"}) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "is empty"));
}

TEST(ValidateRules, DefaultChannelNotAmongChannels) {
    auto files = minimal_files();
    edit(files, "metadata/annotations.yaml", "default.v1: stable", "default.v1: beta");
    auto fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].rule, "annotations.default-channel");
    EXPECT_EQ(fs[0].severity, Severity::error);
    EXPECT_EQ(fs[0].message,
              "default channel \"beta\" is not one of the bundle's channels (\"stable,fast\")");
    EXPECT_EQ(fs[0].pos.file, "b/metadata/annotations.yaml");
    EXPECT_EQ(fs[0].pos.line, 7u);
}

TEST(ValidateRules, MissingDefaultWithSeveralChannelsWarns) {
    auto files = minimal_files();
    edit(files, "metadata/annotations.yaml",
         "  operators.operatorframework.io.bundle.channel.default.v1: stable\n", "");
    auto fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].rule, "annotations.default-channel");
    EXPECT_EQ(fs[0].severity, Severity::warning);
    // With a single channel, opm takes it as the default: nothing to say.
    edit(files, "metadata/annotations.yaml", "channels.v1: stable,fast", "channels.v1: stable");
    fs = check(files);
    EXPECT_TRUE(fs.empty()) << dump(fs);
}

TEST(ValidateRules, PackageNameNotALabelIsAWarningNamingOpm) {
    auto files = minimal_files();
    edit(files, "metadata/annotations.yaml", "package.v1: demo", "package.v1: demo.v1.0.0");
    auto fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].rule, "annotations.package-name");
    EXPECT_EQ(fs[0].severity, Severity::warning);
    EXPECT_TRUE(contains(fs[0].message, "\"demo.v1.0.0\" is not a DNS-1123 label"))
        << fs[0].message;
    EXPECT_TRUE(contains(fs[0].message, "current opm refuses")) << fs[0].message;
}

TEST(ValidateRules, UnknownBundleLabelSuggestsTheKnownOne) {
    auto files = minimal_files();
    files["metadata/annotations.yaml"] +=
        "  operators.operatorframework.io.bundle.channel.v1: stable\n";
    auto fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].rule, "annotations.unknown-label");
    EXPECT_TRUE(contains(fs[0].message, "did you mean")) << fs[0].message;
}

TEST(ValidateRules, NoCsvAndTwoCsvs) {
    auto files = minimal_files();
    std::string csv = files.at(csv_file);
    files.erase(csv_file);
    auto fs = check(files);
    EXPECT_EQ(rules_of(fs), std::set<std::string>{"csv.missing"}) << dump(fs);

    files[csv_file] = csv;
    files["manifests/zz.csv.yaml"] = csv;
    edit(files, "manifests/zz.csv.yaml", "name: demo.v1.0.0", "name: demo.v1.0.1");
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.multiple"}) << dump(fs);
    EXPECT_EQ(fs[0].pos.file, "b/manifests/zz.csv.yaml");
    EXPECT_TRUE(contains(fs[0].message, "\"demo.v1.0.1\"")) << fs[0].message;
}

TEST(ValidateRules, CsvVersionNotSemverQuotesIt) {
    auto files = minimal_files();
    edit(files, csv_file, "  version: 1.0.0", "  version: v1.0.0");
    auto fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].rule, "csv.version");
    EXPECT_TRUE(contains(fs[0].message, "\"v1.0.0\"")) << fs[0].message;
    EXPECT_EQ(fs[0].pos.line, 10u);
    EXPECT_EQ(fs[0].pos.column, 12u);
}

TEST(ValidateRules, CsvVersionMissing) {
    auto files = minimal_files();
    edit(files, csv_file, "  version: 1.0.0\n", "");
    auto fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].message, "spec.version is missing");
}

TEST(ValidateRules, CsvNames) {
    auto files = minimal_files();
    edit(files, csv_file, "  name: demo.v1.0.0", "  name: Demo.v1");
    auto fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.name"}) << dump(fs);
    files = minimal_files();
    edit(files, csv_file, "  name: demo.v1.0.0", "  name: " + std::string(64, 'a'));
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.name"}) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "63")) << fs[0].message;
}

TEST(ValidateRules, InstallStrategyAndDeployments) {
    auto files = minimal_files();
    edit(files, csv_file, "strategy: deployment", "strategy: helm");
    auto fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.install"}) << dump(fs);

    files = minimal_files();
    edit(files, csv_file, "  install:\n", "  uninstall:\n");
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.install"}) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "spec.install is missing")) << fs[0].message;

    files = minimal_files();
    edit(files, csv_file, "        - name: demo-operator\n          spec:", "        - spec:");
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.deployments"}) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "#1")) << fs[0].message;

    files = minimal_files();
    edit(files, csv_file, "      deployments:\n", "      deployments: []\n      unused:\n");
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.deployments"}) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "is empty")) << fs[0].message;
}

TEST(ValidateRules, InstallModes) {
    auto files = minimal_files();
    edit(files, csv_file, "type: OwnNamespace", "type: OwnNamespaces");
    auto fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].rule, "csv.install-modes");
    EXPECT_EQ(fs[0].severity, Severity::error);
    EXPECT_TRUE(contains(fs[0].message, "did you mean \"OwnNamespace\"")) << fs[0].message;

    files = minimal_files();
    edit(files, csv_file, "type: SingleNamespace", "type: OwnNamespace");
    fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "listed twice")) << fs[0].message;

    files = minimal_files();
    std::string& c = files.at(csv_file);
    for (std::size_t at; (at = c.find("supported: true")) != std::string::npos;)
        c.replace(at, 15, "supported: false");
    fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "no install mode is supported")) << fs[0].message;

    files = minimal_files();
    auto& s = files.at(csv_file);
    auto from = s.find("  installModes:");
    auto to = s.find("  customresourcedefinitions:");
    s.erase(from, to - from);
    fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].rule, "csv.install-modes");
    EXPECT_EQ(fs[0].severity, Severity::warning);
}

TEST(ValidateRules, MinKubeVersionIsTolerant) {
    auto files = minimal_files();
    edit(files, csv_file, "minKubeVersion: 1.25.0", "minKubeVersion: v1.25");
    EXPECT_TRUE(check(files).empty());
    edit(files, csv_file, "minKubeVersion: v1.25", "minKubeVersion: one.two");
    auto fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.min-kube-version"}) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "\"one.two\"")) << fs[0].message;
}

TEST(ValidateRules, ReplacesSkipsAndSkipRange) {
    auto files = minimal_files();
    edit(files, csv_file, "replaces: demo.v0.9.0", "replaces: demo.v1.0.0");
    auto fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.replaces"}) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "itself"));

    files = minimal_files();
    edit(files, csv_file, "replaces: demo.v0.9.0", "replaces: demo v0.9.0");
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.replaces"}) << dump(fs);

    files = minimal_files();
    edit(files, csv_file, "    - demo.v0.9.1", "    - \"\"\n    -");
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.skips"}) << dump(fs);
    EXPECT_EQ(fs.size(), 2u) << dump(fs);

    files = minimal_files();
    edit(files, csv_file, "\">=0.9.0 <1.0.0\"", "\">=0.9 <1.0.0\"");
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.skip-range"}) << dump(fs);
    EXPECT_EQ(fs[0].severity, Severity::error);
    EXPECT_EQ(fs[0].pos.line, 6u);
}

TEST(ValidateRules, SkipRangeQuirkIsAWarning) {
    auto files = minimal_files();
    edit(files, csv_file, "\">=0.9.0 <1.0.0\"", "\"1.x.x\"");
    auto fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.skip-range"}) << dump(fs);
    EXPECT_EQ(fs[0].severity, Severity::warning);
}

TEST(ValidateRules, AnnotationCase) {
    auto files = minimal_files();
    edit(files, csv_file, "olm.skipRange:", "olm.SkipRange:");
    auto fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.annotation-case"}) << dump(fs);
    EXPECT_EQ(fs[0].pos.line, 6u);
    EXPECT_EQ(fs[0].pos.column, 5u);
}

TEST(ValidateRules, AlmExamples) {
    auto files = minimal_files();
    edit(files, csv_file, "\"kind\": \"Widget\"", "\"kind\": \"Gadget\"");
    auto fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.alm-examples"}) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "demo.example.com/v1, Kind=Gadget")) << fs[0].message;

    files = minimal_files();
    edit(files, csv_file, "'[{\"apiVersion\"", "'[{apiVersion");
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.alm-examples"}) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "not valid JSON")) << fs[0].message;
    EXPECT_TRUE(contains(fs[0].message, "column 3")) << fs[0].message;

    files = minimal_files();
    edit(files, csv_file,
         "'[{\"apiVersion\": \"demo.example.com/v1\", \"kind\": \"Widget\", "
         "\"metadata\": {\"name\": \"example\"}}]'",
         "'{\"kind\": \"Widget\"}'");
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"csv.alm-examples"}) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "not an object")) << fs[0].message;

    // A required kind may have an example too.
    files = minimal_files();
    edit(files, csv_file, "\"kind\": \"Widget\"",
         "\"kind\": \"Widget\"}, {\"apiVersion\": \"storage.example.com/v1\", \"kind\": "
         "\"Volume\"");
    edit(files, csv_file, "  customresourcedefinitions:\n",
         "  customresourcedefinitions:\n    required:\n      - name: volumes.storage.example.com\n"
         "        version: v1\n        kind: Volume\n");
    fs = check(files);
    EXPECT_TRUE(fs.empty()) << dump(fs);
}

TEST(ValidateRules, OlmPropertiesAnnotation) {
    auto files = minimal_files();
    edit(files, csv_file, "  annotations:\n",
         "  annotations:\n    olm.properties: '[{\"type\": \"olm.gvk\", \"value\": {\"group\": "
         "\"a.b\", \"version\": \"v1\"}}, {\"value\": 1}]'\n");
    auto& b = files;
    auto built = build(b);
    // What the loader puts in csv_properties: the parsed entries, positioned at the annotation.
    built.csv_properties.push_back(
        {"olm.gvk", io::Node::map(), io::pos_of("b/" + std::string(csv_file), {5, 5}, 0)});
    built.csv_properties.back().value.set("group", io::Node::string("a.b"));
    built.csv_properties.back().value.set("version", io::Node::string("v1"));
    auto fs = bundle::validate(built);
    EXPECT_EQ(rules_of(fs), (std::set<std::string>{"csv.olm-properties", "properties.gvk"}))
        << dump(fs);
    const Finding* gvk = find_rule(fs, "properties.gvk");
    ASSERT_NE(gvk, nullptr);
    EXPECT_EQ(gvk->pos.line, 5u);
    EXPECT_TRUE(contains(gvk->message, "no \"kind\"")) << gvk->message;
}

TEST(ValidateRules, CrdChecks) {
    auto files = minimal_files();
    const std::string crd = "manifests/widgets.demo.example.com.crd.yaml";
    edit(files, crd, "name: widgets.demo.example.com", "name: widget.demo.example.com");
    auto fs = check(files);
    EXPECT_EQ(rules_of(fs), (std::set<std::string>{"crd.name", "crd.owned", "crd.not-owned"}))
        << dump(fs);
    const Finding* name = find_rule(fs, "crd.name");
    ASSERT_NE(name, nullptr);
    EXPECT_TRUE(contains(name->message, "\"widgets.demo.example.com\"")) << name->message;

    files = minimal_files();
    edit(files, csv_file, "        version: v1\n        kind: Widget",
         "        version: v2\n        kind: Widget");
    fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].rule, "crd.owned");
    EXPECT_EQ(fs[0].message, "owned CRD \"widgets.demo.example.com\" has version \"v2\", which "
                             "is not a version of its CustomResourceDefinition (v1)");
    EXPECT_EQ(fs[0].pos.line, 26u);
    EXPECT_EQ(fs[0].pos.column, 9u);

    // A kind that differs from the CRD's; the example of the CRD's kind is then unowned too.
    files = minimal_files();
    edit(files, csv_file, "        kind: Widget\n", "        kind: Widgets\n");
    fs = check(files);
    EXPECT_EQ(rules_of(fs), (std::set<std::string>{"crd.owned", "csv.alm-examples"})) << dump(fs);

    files = minimal_files();
    edit(files, crd, "    plural: widgets\n", "");
    fs = check(files);
    EXPECT_EQ(rules_of(fs), std::set<std::string>{"crd.fields"}) << dump(fs);
}

TEST(ValidateRules, OwnedAndRequiredIsAWarning) {
    auto files = minimal_files();
    edit(files, csv_file, "  customresourcedefinitions:\n",
         "  customresourcedefinitions:\n    required:\n      - name: widgets.demo.example.com\n"
         "        version: v1\n        kind: Widget\n");
    auto fs = check(files);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].rule, "crd.owned-and-required");
    EXPECT_EQ(fs[0].severity, Severity::warning);
}

TEST(ValidateRules, ManifestKindsDuplicatesAndDocuments) {
    auto files = minimal_files();
    files["manifests/x.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n";
    auto fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"manifests.kind"}) << dump(fs);
    EXPECT_EQ(fs[0].pos.line, 2u);

    files = minimal_files();
    files["manifests/x.yaml"] = files.at("manifests/demo-settings.configmap.yaml");
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"manifests.duplicate"}) << dump(fs);
    EXPECT_TRUE(contains(fs[0].message, "demo-settings.configmap.yaml:1:1")) << fs[0].message;

    // Same name in another namespace or another group is not a duplicate.
    files["manifests/x.yaml"] =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-settings\n  namespace: b\n";
    EXPECT_TRUE(check(files).empty());

    files["manifests/x.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n"
                                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"manifests.multi-document"}) << dump(fs);
    EXPECT_EQ(fs[0].severity, Severity::warning);

    files["manifests/x.yaml"] = "apiVersion: v1\nkind: ConfigMap\ndata: {}\n";
    fs = check(files);
    ASSERT_EQ(rules_of(fs), std::set<std::string>{"manifests.object"}) << dump(fs);
}

TEST(ValidateRules, Dependencies) {
    struct Case {
        std::string from, to, rule, part;
    };
    const std::vector<Case> cases = {
        {"      kind: Volume\n", "", "dependencies.gvk", "has no \"kind\""},
        {"      kind: Volume\n", "      kind: [Volume]\n", "dependencies.gvk",
         "must be a string, not list"},
        {"version: \">=1.0.0 <2.0.0\"", "version: \">=1.0 <2\"", "dependencies.package",
         "invalid version range"},
        {"version: \">=1.0.0 <2.0.0\"", "versionRange: \">=1.0.0\"", "dependencies.package",
         "spells its range \"version\""},
        {"label: demo-ready", "label: \"\"", "dependencies.label", "is empty"},
        {"type: olm.label", "type: olm.labels", "dependencies.type", "did you mean \"olm.label\""},
        {"      label: demo-ready\n", "", "dependencies.entry", "has no value"},
        {"      label: demo-ready\n", "      - demo-ready\n", "dependencies.entry",
         "must be an object, not list"},
    };
    for (const auto& c : cases) {
        auto files = minimal_files();
        edit(files, dep_file, c.from, c.to);
        auto fs = check(files);
        ASSERT_EQ(rules_of(fs), std::set<std::string>{c.rule}) << c.to << "\n" << dump(fs);
        EXPECT_TRUE(contains(fs[0].message, c.part)) << fs[0].message;
        EXPECT_EQ(fs[0].pos.file, "b/" + std::string(dep_file));
        EXPECT_GT(fs[0].pos.line, 0u);
    }
}

TEST(ValidateRules, Constraints) {
    struct Case {
        std::string value, part;
        Severity sev = Severity::error;
    };
    const std::vector<Case> cases = {
        {"{}", "has none of gvk"},
        {"{gvk: {group: a, version: v1, kind: K}, cel: {rule: 'true'}}", "has both \"gvk\" and "
                                                                         "\"cel\""},
        {"{gvk: {group: a, version: v1}}", "olm.constraint.gvk has no \"kind\""},
        {"{package: {packageName: p, versionRange: '>=1'}}", "invalid version range"},
        {"{package: {packageName: p, name: p, versionRange: '>=1.0.0'}}", "unknown field \"name\""},
        {"{cel: {rule: ''}}", "rule is empty"},
        {"{cel: {rule: 'true'}, message: hi}", "unknown field \"message\""},
        {"{failureMessage: [a], cel: {rule: 'true'}}", "failureMessage must be a string"},
        {"{cel: {rule: 'foo(1)'}}",
         "rule does not compile: column 1: undeclared reference to 'foo'"},
        {"{cel: {rule: 'properties.exists(p, p.type == 1 &&)'}}", "rule does not compile: column"},
        {"{all: {constraints: []}}", "constraints is empty"},
        {"{any: {constraints: {}}}", "must be a list"},
        {"{not: {}}", "has no \"constraints\" list"},
        {"{all: {constraints: [{any: {constraints: [{gvk: {group: g, kind: K}}]}}]}}",
         "olm.constraint.all.constraints[0].any.constraints[0].gvk has no \"version\""},
        {"{none: {constraints: [{cel: {rule: 'true'}}]}}", "deprecated", Severity::warning},
        {"[1]", "must be an object, not list"},
    };
    for (const auto& c : cases) {
        auto docs = io::parse_yaml(c.value, "d.yaml");
        ASSERT_TRUE(docs.ok()) << c.value;
        std::vector<Finding> out;
        SourcePos p;
        p.file = "d.yaml";
        p.line = 1;
        bundle::check_constraint(docs->front().root, "dependencies.constraint", p, true, out);
        ASSERT_EQ(out.size(), 1u) << c.value << "\n" << dump(out);
        EXPECT_TRUE(contains(out[0].message, c.part)) << c.value << ": " << out[0].message;
        EXPECT_EQ(out[0].severity, c.sev) << c.value;
        EXPECT_EQ(out[0].rule, "dependencies.constraint");
        EXPECT_EQ(out[0].pos.file, "d.yaml");
    }
}

// What OLM accepts the way it accepts it (the grammar resolve uses): a gvk of the core group, a
// key matching only when case is ignored (a warning), "none" ignored next to "not" (a warning).
TEST(ValidateRules, ConstraintsAsOlmReadsThem) {
    struct Case {
        std::string value;
        std::vector<Severity> want;
        std::string part;
    };
    const std::vector<Case> cases = {
        {"{gvk: {version: v1, kind: Pod}}", {}, ""},
        {"{GVK: {group: g, version: v1, kind: K}}", {Severity::warning}, "read as \"gvk\""},
        {"{not: {constraints: [{cel: {rule: 'true'}}]}, none: {constraints: []}}",
         {Severity::warning, Severity::error},
         "deprecated"},
        {"{gvk: {group: g, version: v1, kind: K, plural: ks}}", {Severity::error}, "\"plural\""},
    };
    for (const auto& c : cases) {
        auto docs = io::parse_yaml(c.value, "d.yaml");
        ASSERT_TRUE(docs.ok()) << c.value;
        std::vector<Finding> out;
        bundle::check_constraint(docs->front().root, "r", {"d.yaml", 1, 1, 0}, true, out);
        std::vector<Severity> got;
        for (const auto& f : out)
            got.push_back(f.severity);
        EXPECT_EQ(got, c.want) << c.value << "\n" << dump(out);
        if (!out.empty()) {
            EXPECT_TRUE(contains(out[0].message, c.part)) << out[0].message;
        }
    }
}

TEST(ValidateRules, ConstraintSizeLimit) {
    // A rule that compiles, padded by its failureMessage: the limit is on the whole value.
    auto make = [](std::size_t message_len) {
        io::Node v = io::Node::map();
        io::Node cel = io::Node::map();
        cel.set("rule", io::Node::string("true"));
        v.set("cel", std::move(cel));
        v.set("failureMessage", io::Node::string(std::string(message_len, 'x')));
        return v;
    };
    // {"cel":{"rule":"true"},"failureMessage":""} is 43 bytes around the message.
    std::vector<Finding> out;
    bundle::check_constraint(make(kpkg::model::max_constraint_bytes - 43), "r", {}, false, out);
    EXPECT_TRUE(out.empty()) << dump(out);
    bundle::check_constraint(make(kpkg::model::max_constraint_bytes - 42), "r", {}, false, out);
    ASSERT_EQ(out.size(), 1u) << dump(out);
    EXPECT_EQ(out[0].message,
              "olm.constraint is 131073 bytes as JSON, more than OLM's limit of 131072 bytes");
}

TEST(ValidateRules, PropertiesChecks) {
    struct Case {
        std::string add, rule, part;
    };
    const std::vector<Case> cases = {
        {"  - type: example.com/empty\n", "properties.entry", "has no value"},
        {"  - type: olm.gvk\n    value: {group: g, version: 1, kind: K}\n", "properties.gvk",
         "must be a string, not integer"},
        {"  - type: olm.package\n    value: {packageName: demo, version: v1.0.0}\n",
         "properties.package", "invalid semantic version \"v1.0.0\""},
        {"  - type: olm.package.required\n    value: {packageName: x, versionRange: '>1'}\n",
         "properties.package", "invalid version range"},
        {"  - type: olm.label\n    value: {name: x}\n", "properties.label", "no \"label\""},
        {"  - type: olm.constraint\n    value: {any: {constraints: []}}\n", "properties.constraint",
         "constraints is empty"},
        {"  - value: {a: b}\n", "properties.entry", "has no type"},
    };
    for (const auto& c : cases) {
        auto files = minimal_files();
        files.at("metadata/properties.yaml") += c.add;
        auto fs = check(files);
        ASSERT_EQ(rules_of(fs), std::set<std::string>{c.rule}) << c.add << "\n" << dump(fs);
        EXPECT_TRUE(contains(fs[0].message, c.part)) << fs[0].message;
    }
    // Custom properties may hold any value.
    auto files = minimal_files();
    files.at("metadata/properties.yaml") += "  - type: example.com/list\n    value: [1, 2]\n";
    EXPECT_TRUE(check(files).empty());
}

TEST(ValidateRules, StrictTurnsWarningsIntoErrors) {
    auto files = minimal_files();
    edit(files, "metadata/annotations.yaml", "package.v1: demo", "package.v1: Demo");
    auto fs = check(files);
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_FALSE(bundle::has_errors(fs));
    bundle::ValidateOptions o;
    o.strict = true;
    fs = check(files, o);
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_TRUE(bundle::has_errors(fs));
}

TEST(ValidateRules, LoadFindingsComeFirstInPositionOrderAndRepeatsAreDropped) {
    bundle::Loaded l;
    l.bundle = build(minimal_files());
    Finding f;
    f.rule = "load.yaml";
    f.message = "bad";
    f.pos.file = "b/manifests/a.yaml";
    f.pos.line = 3;
    l.findings.push_back(f);
    l.findings.push_back(f);
    Finding g = f;
    g.pos = {};
    g.subject = "thing";
    l.findings.push_back(g);
    f.pos.line = 1;
    l.findings.push_back(f);
    auto fs = bundle::validate(l);
    ASSERT_EQ(fs.size(), 3u) << dump(fs);
    EXPECT_EQ(fs[0].pos.line, 1u);
    EXPECT_EQ(fs[1].pos.line, 3u);
    EXPECT_EQ(fs[2].subject, "thing");
}

TEST(ValidateRules, Format) {
    Finding f;
    f.rule = "csv.version";
    f.message = "spec.version is missing";
    f.pos.file = "d/manifests/c.yaml";
    f.pos.line = 12;
    f.pos.column = 5;
    EXPECT_EQ(bundle::format(f, "d"),
              "d/manifests/c.yaml:12:5: error: spec.version is missing [csv.version]");
    f.pos = {};
    f.subject = "CRD \"x\"";
    f.severity = Severity::warning;
    EXPECT_EQ(bundle::format(f, "d"),
              "d: warning: CRD \"x\": spec.version is missing [csv.version]");
}

// Package and CSV names go through the one DNS-1123 check (kpkg/model/names.hpp, tested in
// tests/model); what bundle validate says of them, word for word, is fixed here.
TEST(ValidateRules, DnsNameMessages) {
    const std::string tail =
        "); current opm refuses such a package name inside a File-Based Catalog";
    for (const auto& [name, why] : std::vector<std::pair<std::string, std::string>>{
             {"Demo", "must consist of lower-case letters, digits and '-'"},
             {"demo.v1", "must consist of lower-case letters, digits and '-'"},
             {"demo-", "must start and end with a lower-case letter or digit"},
             {std::string(64, 'd'), "must be at most 63 characters"},
         }) {
        auto files = minimal_files();
        edit(files, "metadata/annotations.yaml", "package.v1: demo", "package.v1: " + name);
        auto fs = check(files);
        const Finding* f = find_rule(fs, "annotations.package-name");
        ASSERT_NE(f, nullptr) << name << "\n" << dump(fs);
        EXPECT_EQ(f->message,
                  "package name \"" + name + "\" is not a DNS-1123 label (it " + why + tail);
    }
    for (const auto& [name, why] : std::vector<std::pair<std::string, std::string>>{
             {"Demo.v1", "must consist of lower-case letters, digits, '-' and '.'"},
             {"demo..v1", "must start and end with a lower-case letter or digit, also around "
                          "each '.'"},
             {"demo.v1-", "must start and end with a lower-case letter or digit, also around "
                          "each '.'"},
             {std::string(254, 'd'), "must be at most 253 characters"},
             {std::string(64, 'd'), "must be at most 63 characters (OLM copies it into label "
                                    "values)"},
         }) {
        auto files = minimal_files();
        edit(files, csv_file, "  name: demo.v1.0.0", "  name: " + name);
        auto fs = check(files);
        const Finding* f = find_rule(fs, "csv.name");
        ASSERT_NE(f, nullptr) << name << "\n" << dump(fs);
        // (A long name is cut in the message; the reason is still whole.)
        const std::string shown = name.size() > 64 ? name.substr(0, 64) + "...\" (" +
                                                         std::to_string(name.size()) + " bytes)"
                                                   : name + "\"";
        EXPECT_EQ(f->message, "CSV name \"" + shown + " is not valid: it " + why);
    }
}

// ---- one testdata bundle per rule, built in code from its files ---------------------------------

namespace {

struct RuleCase {
    std::string dir; // under testdata/bundles
    std::string rule;
    Severity severity;
};

std::vector<RuleCase> rule_cases() {
    std::vector<RuleCase> v;
    for (const auto& r : bundle::rules()) {
        std::string id = r.id;
        std::string dir = "invalid-" + id;
        std::replace(dir.begin(), dir.end(), '.', '-');
        v.push_back({dir, id, r.severity});
    }
    return v;
}

} // namespace

class RuleBundle : public ::testing::TestWithParam<RuleCase> {};

TEST_P(RuleBundle, ReportsItsRuleOnly) {
    const RuleCase& c = GetParam();
    fs::path dir = testdata("bundles/" + c.dir);
    ASSERT_TRUE(fs::is_directory(dir)) << "no testdata bundle for rule " << c.rule;
    auto findings = bundle::validate(build(read_dir(dir), dir.string()));
    ASSERT_FALSE(findings.empty());
    EXPECT_EQ(rules_of(findings), std::set<std::string>{c.rule}) << dump(findings);
    for (const auto& f : findings)
        EXPECT_EQ(f.severity, c.severity) << bundle::format(f);
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleBundle, ::testing::ValuesIn(rule_cases()),
                         [](const auto& info) {
                             std::string n = info.param.rule;
                             for (char& ch : n)
                                 if (ch == '.' || ch == '-') ch = '_';
                             return n;
                         });

// ---- the same bundles through bundle::load() --------------------------------------------------

class RuleBundleLoaded : public ::testing::TestWithParam<RuleCase> {};

TEST_P(RuleBundleLoaded, ReportsItsRuleOnly) {
    const RuleCase& c = GetParam();
    fs::path dir = testdata("bundles/" + c.dir);
    auto loaded = bundle::load(dir);
    ASSERT_TRUE(loaded.ok()) << loaded.error().str();
    auto findings = bundle::validate(*loaded);
    ASSERT_FALSE(findings.empty());
    EXPECT_EQ(rules_of(findings), std::set<std::string>{c.rule}) << dump(findings);
    for (const auto& f : findings) {
        EXPECT_EQ(f.severity, c.severity) << bundle::format(f);
        EXPECT_TRUE(text::starts_with(f.pos.file, dir.string())) << bundle::format(f);
    }
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleBundleLoaded, ::testing::ValuesIn(rule_cases()),
                         [](const auto& info) {
                             std::string n = info.param.rule;
                             for (char& ch : n)
                                 if (ch == '.' || ch == '-') ch = '_';
                             return n;
                         });

TEST(ValidateLoaded, MinimalBundleIsClean) {
    auto loaded = bundle::load(testdata("bundles/valid-minimal"));
    ASSERT_TRUE(loaded.ok()) << loaded.error().str();
    auto fs = bundle::validate(*loaded);
    EXPECT_TRUE(fs.empty()) << dump(fs);
}

TEST(ValidateLoaded, ConstraintOverTheSizeLimit) {
    test::TempDir t;
    fs::copy(testdata("bundles/valid-minimal"), t.path(), fs::copy_options::recursive);
    t.write(
        "metadata/dependencies.yaml",
        "dependencies:\n  - type: olm.constraint\n    value:\n      cel:\n        rule: 'true'\n"
        "      failureMessage: '" +
            std::string(131072, 'x') + "'\n");
    auto loaded = bundle::load(t.path());
    ASSERT_TRUE(loaded.ok()) << loaded.error().str();
    auto fs = bundle::validate(*loaded);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].rule, "dependencies.constraint");
    EXPECT_EQ(fs[0].message,
              "olm.constraint is 131115 bytes as JSON, more than OLM's limit of 131072 bytes");
    EXPECT_EQ(fs[0].pos.line, 4u);
    EXPECT_EQ(fs[0].pos.column, 7u);
}

// The resolver compiles every CEL rule and fails on one that does not compile: validation reports
// it as an error at the rule, with the column in the rule.
TEST(ValidateLoaded, CelRuleThatDoesNotCompile) {
    test::TempDir t;
    fs::copy(testdata("bundles/valid-minimal"), t.path(), fs::copy_options::recursive);
    t.write("metadata/dependencies.yaml",
            "dependencies:\n  - type: olm.constraint\n    value:\n      failureMessage: needs x\n"
            "      cel:\n        rule: 'properties.exists(p, no_such_function(p))'\n");
    auto loaded = bundle::load(t.path());
    ASSERT_TRUE(loaded.ok()) << loaded.error().str();
    auto fs = bundle::validate(*loaded);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].severity, Severity::error);
    EXPECT_EQ(fs[0].rule, "dependencies.constraint");
    EXPECT_EQ(fs[0].message, "olm.constraint.cel rule does not compile: column 22: undeclared "
                             "reference to 'no_such_function'");
    EXPECT_EQ(fs[0].pos.line, 6u);
    EXPECT_EQ(fs[0].pos.column, 15u);
}

// ---- the corpus: four real bundles that must pass with exactly these warnings ---------------

namespace {

struct Expected {
    std::string rule;
    std::string file; // relative to the bundle directory
    unsigned line;
};

void expect_corpus(const fs::path& dir, const std::vector<Expected>& want) {
    auto loaded = bundle::load(dir);
    ASSERT_TRUE(loaded.ok()) << loaded.error().str();
    auto fs = bundle::validate(*loaded);
    EXPECT_FALSE(bundle::has_errors(fs)) << dump(fs);
    ASSERT_EQ(fs.size(), want.size()) << dump(fs);
    for (std::size_t i = 0; i < fs.size(); ++i) {
        EXPECT_EQ(fs[i].severity, Severity::warning) << bundle::format(fs[i]);
        EXPECT_EQ(fs[i].rule, want[i].rule) << bundle::format(fs[i]);
        EXPECT_EQ(fs[i].pos.file, (dir / want[i].file).string());
        EXPECT_EQ(fs[i].pos.line, want[i].line) << bundle::format(fs[i]);
    }
}

const std::vector<Expected> missing_labels(const std::string& file = "metadata/annotations.yaml") {
    return {{"annotations.mediatype", file, 0},
            {"annotations.manifests-dir", file, 0},
            {"annotations.metadata-dir", file, 0}};
}

} // namespace

TEST(ValidateCorpus, Etcd) {
    KPKG_REQUIRE_CORPUS(corpus);
    const std::string csv = "manifests/etcdoperator.v0.9.2.clusterserviceversion.yaml";
    // Its three CRDs are apiextensions.k8s.io/v1beta1, removed in Kubernetes 1.22.
    std::vector<Expected> want = {{"manifests.removed-api", "manifests/etcdbackup.crd.yaml", 1},
                                  {"manifests.removed-api", "manifests/etcdcluster.crd.yaml", 1},
                                  {"csv.install-modes", csv, 11},
                                  {"crd.owned-and-required", csv, 168},
                                  {"manifests.removed-api", "manifests/etcdrestore.crd.yaml", 1}};
    for (auto& e : missing_labels())
        want.push_back(e);
    expect_corpus(corpus / "olm/bundles/etcd.0.9.2", want);
}

TEST(ValidateCorpus, Kiali) {
    KPKG_REQUIRE_CORPUS(corpus);
    expect_corpus(corpus / "olm/bundles/kiali.1.4.2",
                  {{"manifests.removed-api", "manifests/kiali.crd.yaml", 1},
                   {"manifests.removed-api", "manifests/kiali.monitoringdashboards.crd.yaml", 1},
                   {"annotations.package-name", "metadata/annotations.yaml", 5}});
    auto loaded = bundle::load(corpus / "olm/bundles/kiali.1.4.2");
    ASSERT_TRUE(loaded.ok());
    auto fs = bundle::validate(*loaded);
    ASSERT_EQ(fs.size(), 3u);
    EXPECT_TRUE(contains(fs[2].message, "\"kiali-operator.v1.4.2\"")) << fs[2].message;
    EXPECT_TRUE(contains(fs[2].message, "current opm refuses")) << fs[2].message;
    EXPECT_EQ(fs[0].message,
              "CustomResourceDefinition \"kialis.kiali.io\" uses apiextensions.k8s.io/v1beta1, "
              "which Kubernetes 1.22 no longer serves; use apiextensions.k8s.io/v1");
}

TEST(ValidateCorpus, Foo) {
    KPKG_REQUIRE_CORPUS(corpus);
    std::vector<Expected> want = {{"csv.install-modes", "manifests/foo.v0.2.0.csv.yaml", 9}};
    for (auto& e : missing_labels())
        want.push_back(e);
    expect_corpus(corpus / "olm/bundles/foo-bundle-v0.2.0", want);
}

TEST(ValidateCorpus, Prometheus) {
    KPKG_REQUIRE_CORPUS(corpus);
    std::vector<Expected> want = {
        {"manifests.removed-api", "manifests/alertmanager.crd.yaml", 1},
        {"manifests.removed-api", "manifests/prometheus.crd.yaml", 1},
        {"csv.install-modes", "manifests/prometheusoperator.0.22.2.clusterserviceversion.yaml", 10},
        {"manifests.removed-api", "manifests/prometheusrule.crd.yaml", 1},
        {"manifests.removed-api", "manifests/servicemonitor.crd.yaml", 1}};
    for (auto& e : missing_labels())
        want.push_back(e);
    expect_corpus(corpus / "olm/bundles/prometheus.0.22.2", want);
}

// ---- kpkg bundle validate -------------------------------------------------------------------

namespace {

std::string bundle_dir(const std::string& name) {
    return testdata("bundles/" + name).string();
}

std::vector<std::string> lines(const std::string& s) {
    std::vector<std::string> out;
    for (auto l : text::split(s, '\n'))
        if (!l.empty()) out.emplace_back(l);
    return out;
}

} // namespace

TEST(ValidateCli, ValidBundle) {
    std::string dir = bundle_dir("valid-minimal");
    auto r = test::run_kpkg({"bundle", "validate", dir});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, dir + ": valid\n1 bundle: 1 valid, 0 invalid; 0 errors, 0 warnings\n");
    EXPECT_EQ(r.err, "");
}

TEST(ValidateCli, ErrorLinesHaveFileLineColumnAndRule) {
    std::string dir = bundle_dir("invalid-csv-version");
    auto r = test::run_kpkg({"bundle", "validate", dir});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    auto ls = lines(r.out);
    ASSERT_EQ(ls.size(), 3u) << r.out;
    EXPECT_EQ(ls[0], dir + "/manifests/demo.v1.0.0.clusterserviceversion.yaml:10:12: error: "
                           "spec.version: invalid semantic version \"v1.0.0\": a leading 'v' is "
                           "not part of a semantic version (write \"1.0.0\") [csv.version]");
    EXPECT_EQ(ls[1], dir + ": invalid: 1 error");
    EXPECT_EQ(ls[2], "1 bundle: 0 valid, 1 invalid; 1 error, 0 warnings");
}

TEST(ValidateCli, SeveralBundlesInOneRun) {
    std::vector<std::string> dirs = {bundle_dir("valid-minimal"),
                                     bundle_dir("invalid-annotations-package-name"),
                                     bundle_dir("invalid-crd-owned")};
    auto r = test::run_kpkg({"bundle", "validate", dirs[0], dirs[1], dirs[2]});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    auto ls = lines(r.out);
    ASSERT_EQ(ls.size(), 6u) << r.out;
    EXPECT_EQ(ls[0], dirs[0] + ": valid");
    EXPECT_TRUE(contains(ls[1], "warning:")) << ls[1];
    EXPECT_EQ(ls[2], dirs[1] + ": valid: 1 warning");
    EXPECT_TRUE(contains(ls[3], "error:")) << ls[3];
    EXPECT_EQ(ls[4], dirs[2] + ": invalid: 1 error");
    EXPECT_EQ(ls[5], "3 bundles: 2 valid, 1 invalid; 1 error, 1 warning");
}

TEST(ValidateCli, StrictMakesWarningsErrors) {
    std::string dir = bundle_dir("invalid-annotations-package-name");
    auto r = test::run_kpkg({"bundle", "validate", dir});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    r = test::run_kpkg({"bundle", "validate", "--strict", dir});
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_TRUE(contains(r.out, ": error: package name")) << r.out;
    EXPECT_TRUE(contains(r.out, "1 error, 0 warnings")) << r.out;
}

TEST(ValidateCli, JsonOutput) {
    std::string ok = bundle_dir("valid-minimal");
    std::string bad = bundle_dir("invalid-csv-install-modes");
    auto r = test::run_kpkg({"bundle", "validate", "-o", "json", ok, bad});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    auto docs = io::parse_json(r.out, "out");
    ASSERT_TRUE(docs.ok()) << docs.error().str() << "\n" << r.out;
    ASSERT_EQ(docs->size(), 1u);
    const io::Node& root = docs->front().root;
    ASSERT_TRUE(root.is_map());
    EXPECT_EQ(root.get("errors")->as_int(), 1);
    EXPECT_EQ(root.get("warnings")->as_int(), 0);
    const io::Node* bundles = root.get("bundles");
    ASSERT_TRUE(bundles && bundles->is_seq() && bundles->items.size() == 2u);
    const io::Node& b0 = bundles->items[0];
    EXPECT_EQ(b0.get("dir")->text, ok);
    EXPECT_EQ(b0.get("valid")->as_bool(), true);
    EXPECT_TRUE(b0.get("findings")->is_seq() && b0.get("findings")->items.empty());
    const io::Node& b1 = bundles->items[1];
    EXPECT_EQ(b1.get("valid")->as_bool(), false);
    EXPECT_EQ(b1.get("errors")->as_int(), 1);
    EXPECT_EQ(b1.get("warnings")->as_int(), 0);
    ASSERT_EQ(b1.get("findings")->items.size(), 1u);
    const io::Node& f = b1.get("findings")->items[0];
    std::vector<std::string> keys;
    for (const auto& e : f.fields)
        keys.push_back(e.key);
    EXPECT_EQ(keys, (std::vector<std::string>{"severity", "rule", "message", "file", "line",
                                              "column", "subject"}));
    EXPECT_EQ(f.get("severity")->text, "error");
    EXPECT_EQ(f.get("rule")->text, "csv.install-modes");
    EXPECT_EQ(f.get("file")->text, bad + "/manifests/demo.v1.0.0.clusterserviceversion.yaml");
    EXPECT_EQ(f.get("line")->as_int(), 16);
    EXPECT_EQ(f.get("column")->as_int(), 13);
    EXPECT_EQ(f.get("subject")->text, "");
}

TEST(ValidateCli, YamlOutputParses) {
    auto r = test::run_kpkg(
        {"bundle", "validate", "-o", "yaml", bundle_dir("invalid-manifests-multi-document")});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto docs = io::parse_yaml(r.out, "out");
    ASSERT_TRUE(docs.ok()) << docs.error().str() << "\n" << r.out;
    EXPECT_EQ(docs->front().root.get("warnings")->as_int(), 1);
}

TEST(ValidateCli, CorpusBundlesPassWithWarnings) {
    KPKG_REQUIRE_CORPUS(corpus);
    std::vector<std::string> args = {"bundle", "validate"};
    for (const char* b : {"etcd.0.9.2", "kiali.1.4.2", "foo-bundle-v0.2.0", "prometheus.0.22.2"})
        args.push_back((corpus / "olm/bundles" / b).string());
    auto r = test::run_kpkg(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "4 bundles: 4 valid, 0 invalid; 0 errors, 23 warnings")) << r.out;
    args.insert(args.begin() + 2, "--strict");
    r = test::run_kpkg(args);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    // For Kubernetes 1.22 or later, the nine v1beta1 CRDs are errors; for 1.21 they are not.
    args[2] = "--k8s-version=1.22";
    r = test::run_kpkg(args);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "4 bundles: 1 valid, 3 invalid; 9 errors, 14 warnings")) << r.out;
    args[2] = "--k8s-version=v1.21.4";
    r = test::run_kpkg(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "0 errors, 23 warnings")) << r.out;
}

TEST(ValidateCli, NoDirectoryIsAUsageError) {
    auto r = test::run_kpkg({"bundle", "validate"});
    EXPECT_EQ(r.exit_code, 2) << r.out;
}

// ---- bad input: a clear finding with its position, never a crash ----------------------------

namespace {

// A copy of valid-minimal in a temporary directory, to break.
struct Scratch {
    test::TempDir t;
    Scratch() {
        fs::copy(testdata("bundles/valid-minimal"), t.path() / "b", fs::copy_options::recursive);
    }
    std::string dir() const { return (t.path() / "b").string(); }
    void write(const std::string& rel, const std::string& content) const {
        t.write("b/" + rel, content);
    }
};

} // namespace

TEST(ValidateBadInput, NotADirectory) {
    // An argument that is no directory is a usage problem of that argument (exit 2), said on
    // stderr; it is not a bundle of the report.
    test::TempDir t;
    const std::string missing = (t.path() / "missing").string();
    auto r = test::run_kpkg({"bundle", "validate", missing});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "\"" + missing + "\": no such file or directory")) << r.err;
    EXPECT_TRUE(contains(r.out, "0 bundles")) << r.out;
    auto file = t.write("file.yaml", "a: b\n");
    r = test::run_kpkg({"bundle", "validate", file.string()});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "\"" + file.string() + "\": not a directory")) << r.err;
    EXPECT_FALSE(contains(r.out, file.string())) << r.out;
}

TEST(ValidateBadInput, StrayFileAmongInvalidBundlesKeepsExitThree) {
    test::TempDir t;
    auto file = t.write("notes.txt", "a stray file\n");
    const std::string invalid = testdata("bundles/invalid-csv-version").string();
    const std::string valid = testdata("bundles/valid-minimal").string();
    auto r = test::run_kpkg({"bundle", "validate", valid, file.string(), invalid});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, file.string())) << r.err;
    EXPECT_TRUE(contains(r.out, "2 bundles: 1 valid, 1 invalid")) << r.out;
    EXPECT_TRUE(contains(r.out, "[csv.version]")) << r.out;
    // With only valid bundles beside it, the stray file makes it a usage error.
    r = test::run_kpkg({"bundle", "validate", valid, file.string()});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "1 bundle: 1 valid, 0 invalid")) << r.out;
    // A bundle that cannot be read still makes it an I/O error.
    auto j = test::run_kpkg({"bundle", "validate", "-o", "json", file.string(), invalid});
    EXPECT_EQ(j.exit_code, 3) << j.err;
    auto docs = io::parse_json(j.out, "out");
    ASSERT_TRUE(docs.ok()) << j.out;
    EXPECT_EQ(docs->front().root.get("bundles")->items.size(), 1u);
}

TEST(ValidateBadInput, CrdWithNullSpecNamesOrVersions) {
    // render refuses each of these bundles; validate must not call them valid.
    struct Case {
        const char* what;
        const char* crd;
        std::vector<std::string> missing;
    };
    const std::string head = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                             "metadata:\n  name: widgets.demo.example.com\n";
    const std::vector<Case> cases = {
        {"null spec", "spec: null\n", {"spec.group", "spec.names.kind", "version"}},
        {"empty spec", "spec:\n", {"spec.group", "spec.names.kind", "version"}},
        {"null names",
         "spec:\n  group: demo.example.com\n  names: ~\n  versions: [{name: v1}]\n",
         {"spec.names.kind", "spec.names.plural"}},
        {"null versions",
         "spec:\n  group: demo.example.com\n  names: {kind: Widget, plural: widgets}\n"
         "  versions: null\n",
         {"version (spec.versions or spec.version)"}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.what);
        Scratch s;
        s.write("manifests/widgets.demo.example.com.crd.yaml", head + c.crd);
        auto render = test::run_kpkg({"bundle", "render", s.dir()});
        EXPECT_EQ(render.exit_code, 3) << render.err;
        auto r = test::run_kpkg({"bundle", "validate", s.dir()});
        EXPECT_EQ(r.exit_code, 3) << r.out;
        for (const auto& m : c.missing)
            EXPECT_TRUE(contains(r.out, "has no " + m)) << r.out;
        EXPECT_TRUE(contains(r.out, "[crd.fields]")) << r.out;
        EXPECT_TRUE(contains(r.out, s.dir() + "/manifests/widgets.demo.example.com.crd.yaml:"))
            << r.out;
    }
}

TEST(ValidateRemovedApis, WarningNamingTheReleaseErrorFromK8sVersion) {
    Scratch s;
    const std::string crd = s.dir() + "/manifests/widgets.demo.example.com.crd.yaml";
    std::string text = test::read_file(crd);
    text.replace(text.find("apiextensions.k8s.io/v1"), 23, "apiextensions.k8s.io/v1beta1");
    s.write("manifests/widgets.demo.example.com.crd.yaml", text);
    // The CSV of valid-minimal says minKubeVersion 1.25.0: past 1.22, so an error already.
    auto r = test::run_kpkg({"bundle", "validate", s.dir()});
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_TRUE(contains(r.out, crd + ":1:13: error: CustomResourceDefinition "
                                      "\"widgets.demo.example.com\" uses "
                                      "apiextensions.k8s.io/v1beta1, which Kubernetes 1.22 no "
                                      "longer serves; use apiextensions.k8s.io/v1 (the CSV's "
                                      "spec.minKubeVersion is 1.25.0"))
        << r.out;
    // Without minKubeVersion: a warning, and an error once --k8s-version reaches 1.22.
    const std::string csv_file = s.dir() + "/manifests/demo.v1.0.0.clusterserviceversion.yaml";
    std::string csv = test::read_file(csv_file);
    csv.erase(csv.find("  minKubeVersion: 1.25.0\n"), 25);
    s.write("manifests/demo.v1.0.0.clusterserviceversion.yaml", csv);
    r = test::run_kpkg({"bundle", "validate", s.dir()});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, crd + ":1:13: warning: ")) << r.out;
    EXPECT_TRUE(contains(r.out, "[manifests.removed-api]")) << r.out;
    for (const char* v : {"1.21", "v1.21.9"}) {
        r = test::run_kpkg({"bundle", "validate", "--k8s-version", v, s.dir()});
        EXPECT_EQ(r.exit_code, 0) << v << r.out;
    }
    for (const char* v : {"1.22", "1.22.0", "v1.30", "2.0"}) {
        r = test::run_kpkg({"bundle", "validate", "--k8s-version", v, s.dir()});
        EXPECT_EQ(r.exit_code, 3) << v << r.out;
        EXPECT_TRUE(contains(r.out, crd + ":1:13: error: ")) << r.out;
        EXPECT_TRUE(contains(r.out, "(checked for Kubernetes ")) << r.out;
    }
    for (const char* v : {"one.two", "1.x", "latest"}) {
        r = test::run_kpkg({"bundle", "validate", std::string("--k8s-version=") + v, s.dir()});
        EXPECT_EQ(r.exit_code, 2) << v << r.out << r.err;
        EXPECT_TRUE(contains(r.err, "is not a Kubernetes version")) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
}

TEST(ValidateRemovedApis, TableAndLibrary) {
    // The releases of Kubernetes' migration guide, each with at least one entry.
    std::set<std::string> releases;
    for (const auto& r : bundle::removed_apis())
        releases.insert(std::to_string(r.removed_in.major) + "." +
                        std::to_string(r.removed_in.minor));
    EXPECT_EQ(releases,
              (std::set<std::string>{"1.16", "1.22", "1.25", "1.26", "1.27", "1.29", "1.32"}));
    EXPECT_EQ(bundle::parse_kube_release("v1.29.3")->minor, 29u);
    EXPECT_FALSE(bundle::parse_kube_release("latest"));

    // A PodDisruptionBudget of policy/v1beta1 (removed in 1.25) in a bundle for 1.24 and 1.25.
    Scratch s;
    s.write("manifests/pdb.yaml", "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\n"
                                  "metadata:\n  name: demo\nspec:\n  minAvailable: 1\n");
    const std::string csv_file = s.dir() + "/manifests/demo.v1.0.0.clusterserviceversion.yaml";
    std::string csv = test::read_file(csv_file);
    csv.replace(csv.find("1.25.0"), 6, "1.20.0");
    s.write("manifests/demo.v1.0.0.clusterserviceversion.yaml", csv);
    auto loaded = bundle::load(s.dir());
    ASSERT_TRUE(loaded.ok());
    auto of_rule = [](const std::vector<Finding>& fs) {
        std::vector<Finding> out;
        for (const auto& f : fs)
            if (f.rule == "manifests.removed-api") out.push_back(f);
        return out;
    };
    bundle::ValidateOptions o;
    o.k8s_version = bundle::KubeRelease{1, 24};
    auto w = of_rule(bundle::validate(*loaded, o));
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].severity, Severity::warning);
    EXPECT_EQ(w[0].message, "PodDisruptionBudget \"demo\" uses policy/v1beta1, which Kubernetes "
                            "1.25 no longer serves; use policy/v1");
    o.k8s_version = bundle::KubeRelease{1, 25};
    auto e = of_rule(bundle::validate(*loaded, o));
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].severity, Severity::error);
}

TEST(ValidateBadInput, NoManifestsDirectory) {
    test::TempDir t;
    t.write("metadata/annotations.yaml", "annotations: {}\n");
    auto r = test::run_kpkg({"bundle", "validate", t.path().string()});
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_TRUE(contains(r.out, "manifests/")) << r.out;
    EXPECT_TRUE(contains(r.out, "[bundle.load]")) << r.out;
}

TEST(ValidateBadInput, YamlThatDoesNotParse) {
    Scratch s;
    s.write("manifests/broken.yaml", "apiVersion: v1\nkind: [ConfigMap\n");
    auto r = test::run_kpkg({"bundle", "validate", s.dir()});
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_TRUE(contains(r.out, s.dir() + "/manifests/broken.yaml:3:1: error: ")) << r.out;
    EXPECT_TRUE(contains(r.out, "[load.parse]")) << r.out;
}

TEST(ValidateBadInput, CsvThatIsAList) {
    Scratch s;
    std::string csv = test::read_file(s.dir() + "/" + csv_file);
    std::string listed = "- ";
    for (auto l : text::split(csv, '\n'))
        listed += std::string(l) + "\n  ";
    s.write(csv_file, listed);
    auto r = test::run_kpkg({"bundle", "validate", s.dir()});
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_TRUE(contains(r.out, s.dir() + "/" + csv_file + ":1:1: error: ")) << r.out;
    EXPECT_TRUE(contains(r.out, "[load.type]")) << r.out;
    EXPECT_TRUE(contains(r.out, "[csv.missing]")) << r.out;
}

TEST(ValidateBadInput, VersionThatIsNotAString) {
    Scratch s;
    std::string csv = test::read_file(s.dir() + "/" + csv_file);
    csv.replace(csv.find("  version: 1.0.0"), 16, "  version: 1.0");
    s.write(csv_file, csv);
    auto r = test::run_kpkg({"bundle", "validate", s.dir()});
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_TRUE(contains(r.out, s.dir() + "/" + csv_file + ":10:12: error:")) << r.out;
    EXPECT_TRUE(contains(r.out, "spec.version")) << r.out;
}

TEST(ValidateBadInput, BinaryGarbage) {
    Scratch s;
    std::string garbage;
    for (int i = 0; i < 4096; ++i)
        garbage += static_cast<char>((i * 131 + 7) % 256);
    s.write("manifests/garbage.yaml", garbage);
    s.write("metadata/annotations.yaml", garbage);
    s.write("metadata/dependencies.yaml", std::string("\0\0\0\xff", 4));
    auto r = test::run_kpkg({"bundle", "validate", s.dir()});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, s.dir() + "/manifests/garbage.yaml:1:")) << r.out;
    EXPECT_TRUE(contains(r.out, "[load.parse]")) << r.out;
    EXPECT_TRUE(contains(r.out, "[annotations.file]")) << r.out;
    EXPECT_EQ(r.err, "");
}

TEST(ValidateBadInput, EmptyFilesAndEmptyBundle) {
    test::TempDir t;
    t.write("manifests/empty.yaml", "");
    t.write("metadata/annotations.yaml", "");
    auto r = test::run_kpkg({"bundle", "validate", t.path().string()});
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_TRUE(contains(r.out, "[csv.missing]")) << r.out;
    EXPECT_TRUE(contains(r.out, "[annotations.file]")) << r.out;
}

TEST(ValidateBadInput, WrongTypesEverywhere) {
    Scratch s;
    s.write("metadata/annotations.yaml", "annotations: [a, b]\n");
    s.write("metadata/dependencies.yaml", "dependencies: {type: olm.gvk}\n");
    s.write("metadata/properties.yaml", "properties:\n  - 42\n  - type: [x]\n");
    s.write(csv_file, "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n"
                      "metadata: {name: [x], annotations: [y]}\nspec:\n  version: {a: 1}\n"
                      "  installModes: 7\n  install: []\n  customresourcedefinitions:\n"
                      "    owned: [1, {name: 2}]\n  skips: {a: b}\n");
    auto r = test::run_kpkg({"bundle", "validate", s.dir()});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_EQ(r.err, "");
    // Each problem once: a wrong type is the loader's finding, and no rule repeats it.
    std::set<std::string> places;
    for (const auto& l : lines(r.out)) {
        if (contains(l, ": error: ") || contains(l, ": warning: ")) {
            EXPECT_TRUE(text::starts_with(l, s.dir())) << l;
            EXPECT_TRUE(places.insert(l.substr(0, l.find(": "))).second) << l << "\n" << r.out;
        }
    }
}

// The -o json document of bundle validate is built by the library.
TEST(BundleReport, ValidateDocument) {
    bundle::Finding e;
    e.severity = bundle::Severity::error;
    e.rule = "csv.version";
    e.message = "m";
    e.pos.file = "b/manifests/csv.yaml";
    e.pos.line = 12;
    e.pos.column = 5;
    bundle::Finding w;
    w.severity = bundle::Severity::warning;
    w.rule = "r";
    w.subject = "s";
    const io::Node doc = bundle::validate_report_node({{"b", {e, w}}, {"c", {w}}});
    std::string json = io::to_json(doc, io::JsonStyle{.indent = 0});
    while (!json.empty() && json.back() == '\n')
        json.pop_back();
    EXPECT_EQ(json,
              R"({"bundles":[{"dir":"b","valid":false,"errors":1,"warnings":1,"findings":[)"
              R"({"severity":"error","rule":"csv.version","message":"m",)"
              R"("file":"b/manifests/csv.yaml","line":12,"column":5,"subject":""},)"
              R"({"severity":"warning","rule":"r","message":"","file":"","line":0,"column":0,)"
              R"("subject":"s"}]},{"dir":"c","valid":true,"errors":0,"warnings":1,"findings":[)"
              R"({"severity":"warning","rule":"r","message":"","file":"","line":0,"column":0,)"
              R"("subject":"s"}]}],"errors":1,"warnings":2})");
}
