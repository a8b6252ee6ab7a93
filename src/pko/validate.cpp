// Validating a package: structure, manifest and lock fields, lock consistency, then every test
// case rendered, its objects checked and compared with the fixtures.
#include "kpkg/pko/validate.hpp"

#include <memory>
#include <set>

#include "kpkg/core/diff.hpp"
#include "kpkg/core/semver.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/pko/schema.hpp"
#include "kpkg/pko/util.hpp"

namespace kpkg::pko {
namespace {

constexpr const char* kLockRule = "package.lock";
constexpr const char* kFixtureRule = "package.fixture";

std::string idx(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

// A field error as a finding of `rule` in the manifest (or lock) file.
Finding field_finding(const char* rule, const std::string& file, std::string message,
                      const io::Mark& mark, const std::string& component) {
    return finding(rule, Problem(std::move(message)), io::pos_of(file, mark), component);
}

// apimachinery's IsConfigMapKey.
std::vector<std::string> config_map_key_errors(const std::string& value) {
    std::vector<std::string> out;
    if (value.size() > 253) out.push_back("must be no more than 253 characters");
    bool ok = !value.empty();
    for (char c : value)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_'))
            ok = false;
    if (!ok)
        out.push_back("a valid config key must consist of alphanumeric characters, '-', '_' or "
                      "'.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
                      "validation is '[-._a-zA-Z0-9]+')");
    if (value == ".")
        out.push_back("must not be '.'");
    else if (value == "..")
        out.push_back("must not be '..'");
    else if (value.size() >= 2 && value.compare(0, 2, "..") == 0)
        out.push_back("must not start with '..'");
    return out;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) s += sep;
        s += v[i];
    }
    return s;
}

const io::Node* at(const io::Node* n, std::string_view key) {
    return n && n->is_map() ? n->get(key) : nullptr;
}

} // namespace

std::vector<Finding> check_manifest(const Package& pkg) {
    const Manifest& m = pkg.manifest;
    std::vector<Finding> out;
    auto add = [&](std::string msg, const io::Mark& mark) {
        out.push_back(
            field_finding("package.manifest", m.file, std::move(msg), mark, pkg.component));
    };
    const io::Node* spec = m.doc.get("spec");
    const io::Mark spec_mark = spec ? spec->mark : m.doc.mark;
    if (m.name.empty()) {
        const io::Node* md = m.doc.get("metadata");
        add("metadata.name: Required value", md ? md->mark : m.doc.mark);
    }
    if (m.scopes.empty())
        add("spec.scopes: Required value",
            at(spec, "scopes") ? at(spec, "scopes")->mark : spec_mark);
    if (m.phases.empty())
        add("spec.phases: Required value",
            at(spec, "phases") ? at(spec, "phases")->mark : spec_mark);
    {
        std::set<std::string> seen;
        const io::Node* phases = at(spec, "phases");
        for (std::size_t i = 0; i < m.phases.size(); ++i)
            if (!seen.insert(m.phases[i].name).second)
                add(idx("spec.phases", i) + ".name: Invalid value: " +
                        text::quote(m.phases[i].name) + ": must be unique",
                    phases && i < phases->items.size() ? phases->items[i].mark : spec_mark);
    }
    if (const io::Node* probes = at(spec, "availabilityProbes"); probes && probes->is_seq())
        for (std::size_t i = 0; i < probes->items.size(); ++i) {
            const io::Node* p = at(&probes->items[i], "probes");
            if (!p || !p->is_seq() || p->items.empty())
                add(idx("spec.availabilityProbes", i) + ".probes: Required value",
                    probes->items[i].mark);
        }
    {
        std::set<std::string> seen;
        const io::Node* images = at(spec, "images");
        for (std::size_t i = 0; i < m.images.size(); ++i) {
            const io::Mark mark =
                images && i < images->items.size() ? images->items[i].mark : spec_mark;
            const std::string p = idx("spec.images", i);
            if (m.images[i].name.empty())
                add(p + ".name: Invalid value: \"\": must be non empty", mark);
            else if (!seen.insert(m.images[i].name).second)
                add(p + ".name: Invalid value: " + text::quote(m.images[i].name) +
                        ": must be unique",
                    mark);
            if (m.images[i].image.empty())
                add(p + ".image: Invalid value: \"\": must be non empty", mark);
        }
    }
    if (const io::Node* cs = m.constraints(); cs && cs->is_seq())
        for (std::size_t i = 0; i < cs->items.size(); ++i) {
            const io::Node* pv = at(&cs->items[i], "platformVersion");
            if (!pv) continue;
            const std::string p = idx("spec.constraints", i) + ".platformVersion";
            const io::Node* name = at(pv, "name");
            const io::Node* range = at(pv, "range");
            if (!name || !name->is_string() || name->text.empty())
                add(p + ".name: Required value", pv->mark);
            if (!range || !range->is_string() || range->text.empty())
                add(p + ".range: Required value", pv->mark);
            else if (!semver::Constraint::parse(range->text))
                add(p + ".range: Invalid value: " + text::quote(range->text) +
                        ": improper constraint",
                    range->mark);
        }
    // The configuration schema, then each test case's configuration against it.
    bool schema_ok = true;
    if (const io::Node* schema = m.schema()) {
        if (const io::Node* nullable = schema->get("nullable");
            nullable && nullable->as_bool().value_or(false))
            add("spec.config.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the "
                "root",
                nullable->mark);
        const std::vector<FieldError> errs = check_schema(*schema);
        for (const FieldError& e : errs)
            add(e.message, e.mark.line ? e.mark : schema->mark);
        schema_ok = errs.empty();
    }
    for (std::size_t i = 0; i < m.tests.size(); ++i) {
        const TestCase& tc = m.tests[i];
        const std::string p = idx("test.template", i);
        if (auto errs = config_map_key_errors(tc.name); !errs.empty())
            add(p + ".name: Invalid value: " + text::quote(tc.name) + ": " + join(errs, ", "),
                tc.mark);
        if (schema_ok && m.schema()) {
            const io::Node* cfg = tc.context.get("config");
            auto j = to_json_node(cfg ? *cfg : io::Node::map());
            const io::Node given = j && j->is_map() ? std::move(*j) : io::Node::map();
            for (const FieldError& e : validate_config(*m.schema(), given, p + ".context.config"))
                add(e.message, cfg ? cfg->mark : tc.mark);
        }
    }
    if (const io::Node* kc = at(at(&m.doc, "test"), "kubeconform")) {
        const io::Node* v = at(kc, "kubernetesVersion");
        if (!v || !v->is_string() || v->text.empty())
            add("test.kubeconform.kubernetesVersion: Required value", kc->mark);
        // kubeconform refuses a location whose template does not execute before it checks
        // anything (then no object is checked).
        if (const io::Node* locs = at(kc, "schemaLocations"); locs && locs->is_seq())
            for (std::size_t i = 0; i < locs->items.size(); ++i) {
                const io::Node& l = locs->items[i];
                if (!l.is_scalar()) continue;
                if (auto p = kubeconform_schema_path(l.text, "Deployment", "v1", "master"); !p)
                    add(idx("test.kubeconform.schemaLocations", i) +
                            ": Invalid value: " + text::quote(l.text) + ": " + p.error().message,
                        l.mark);
            }
    }
    if (pkg.lock) {
        const Lock& l = *pkg.lock;
        const io::Node* images = at(at(&l.doc, "spec"), "images");
        for (std::size_t i = 0; i < l.images.size(); ++i) {
            const io::Mark mark =
                images && i < images->items.size() ? images->items[i].mark : l.doc.mark;
            const std::string p = idx("spec.images", i);
            for (const auto& [field, value] :
                 {std::pair<const char*, const std::string*>{"name", &l.images[i].name},
                  {"image", &l.images[i].image},
                  {"digest", &l.images[i].digest}})
                if (value->empty()) {
                    out.push_back(
                        field_finding("package.lock", l.file,
                                      p + "." + field + ": Invalid value: \"\": must be non empty",
                                      mark, pkg.component));
                }
        }
    }
    return out;
}

std::vector<Finding> check_lock(const Package& pkg) {
    const Manifest& m = pkg.manifest;
    std::vector<Finding> out;
    const std::string hint = "Try running: kpkg package update";
    if (!pkg.lock) {
        if (!m.images.empty())
            out.push_back(finding(kLockRule,
                                  Problem("Missing image in manifest.lock.yaml, but using "
                                          "PackageManifest.spec.images. " +
                                              hint,
                                          {}, "manifest.lock.yaml"),
                                  m.pos("spec.images")));
        return out;
    }
    std::map<std::string, std::string> want, have;
    for (const auto& i : m.images)
        want[i.name] = i.image;
    for (const auto& i : pkg.lock->images)
        have[i.name] = i.image;
    for (const auto& [name, image] : want) {
        const auto it = have.find(name);
        const SourcePos pos = io::pos_of(pkg.lock->file, pkg.lock->doc.mark);
        if (it == have.end())
            out.push_back(finding(
                kLockRule,
                Problem("Image specified in manifest but missing from lockfile. " + hint, name),
                pos));
        else if (it->second != image)
            out.push_back(
                finding(kLockRule,
                        Problem("Image specified in manifest does not match with lockfile. " + hint,
                                text::quote(name) + ": " + text::quote(image) + " vs " +
                                    text::quote(it->second)),
                        pos));
    }
    for (const auto& [name, image] : have)
        if (!want.count(name))
            out.push_back(finding(
                kLockRule,
                Problem("Image specified in manifest does not match with lockfile. " + hint, name),
                io::pos_of(pkg.lock->file, pkg.lock->doc.mark)));
    return out;
}

namespace {

// A diff as a message shows it: each line at most 1 KiB and the whole at most 64 KiB, control
// characters escaped (a fixture may be any file).
std::string shown_diff(std::string_view diff) {
    constexpr std::size_t kLine = 1024, kTotal = 64 * 1024;
    std::string out;
    std::size_t start = 0;
    while (start < diff.size()) {
        if (out.size() >= kTotal) {
            out += "... (diff cut at 64 KiB of " + std::to_string(diff.size()) + " bytes)";
            return out;
        }
        const std::size_t nl = diff.find('\n', start);
        const std::string_view line =
            diff.substr(start, nl == std::string_view::npos ? diff.npos : nl - start);
        const std::size_t took = text::append_escaped(out, line, kLine, 0);
        if (took < line.size()) out += "... (" + std::to_string(line.size()) + " bytes)";
        if (nl == std::string_view::npos) break;
        out += '\n';
        start = nl + 1;
    }
    return out;
}

// One render of a package (a test case, or the defaults) and its fixtures.
// The kubeconform check of a package's files, as kubectl-package runs it: what a test case
// rendered (template outputs included; helper files (_*) and files spec.filter.paths excludes
// make no objects and are left out), or the package's own YAML files, every one.
void check_kubeconform(const Package& pkg, Kubeconform& kc, const Rendered* rendered,
                       Report& report) {
    auto run = [&](const std::string& path, const std::string& text) {
        if (!is_yaml(path) || is_template(path)) return;
        std::string display;
        if (auto f = pkg.files.find(path); f != pkg.files.end())
            display = f->second.display;
        else if (auto t = pkg.files.find(path + ".gotmpl"); t != pkg.files.end())
            display = t->second.display;
        for (Finding& f : kc.check_file(path, text, display, pkg.component))
            report.findings.push_back(std::move(f));
    };
    if (!rendered) {
        for (const auto& [path, f] : pkg.files)
            run(path, f.bytes);
        return;
    }
    for (const auto& [path, text] : rendered->files) {
        const auto slash = path.rfind('/');
        const std::string_view base =
            std::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1);
        if (!base.empty() && base[0] == '_') continue;
        if (!rendered->excluded.count(path)) run(path, text);
    }
}

void run_case(const Package& pkg, const RenderContext& ctx, const std::string& case_name,
              bool compare, const ValidateOptions& opts, Report& report,
              Kubeconform* kc = nullptr) {
    ++report.renders;
    RenderResult r = render(pkg, ctx);
    for (Finding& f : r.findings) {
        if (f.component.empty()) f.component = pkg.component;
        // The reason, which starts the message, said of the test case.
        if (!case_name.empty() && r.failed)
            f.message = "Testcase \"" + case_name + "\": " + f.message;
        report.findings.push_back(std::move(f));
    }
    if (!r.failed && kc) check_kubeconform(pkg, *kc, &r.rendered, report);
    if (r.failed || !compare) return;

    const std::string dir = ".test-fixtures/" + case_name + "/";
    const std::string where = pkg.prefix + dir;
    // What the fixtures should hold: every YAML file that is not a template source, with the
    // documents its conditions dropped left out; nothing for what renders empty.
    std::map<std::string, std::string> actual;
    for (const auto& entry : r.rendered.files) {
        const std::string& path = entry.first;
        if (is_template(path) || !is_yaml(path)) continue;
        std::string t = fixture_text(r.rendered, path);
        if (!t.empty()) actual[path] = std::move(t);
    }
    std::map<std::string, const File*> fixtures;
    for (const auto& [rel, f] : pkg.fixtures)
        if (rel.compare(0, dir.size(), dir) == 0) fixtures[rel.substr(dir.size())] = &f;

    if (fixtures.empty() && !opts.update_fixtures) {
        report.findings.push_back(
            finding(kFixtureRule,
                    Problem("Testcase \"" + case_name + "\": no fixtures in " + where,
                            "kpkg package validate --update-fixtures writes them"),
                    {}, pkg.component));
        return;
    }
    for (const auto& [path, f] : fixtures)
        if (!actual.count(path)) {
            if (opts.update_fixtures) {
                report.fixture_changes.push_back({where + path, {}, true});
                continue;
            }
            report.findings.push_back(
                finding(kFixtureRule,
                        Problem("file " + where + path +
                                " should not exist, filtered or empty after template render"),
                        {f->display}, pkg.component));
        }
    for (const auto& [path, text] : actual) {
        const auto it = fixtures.find(path);
        if (it == fixtures.end()) {
            if (opts.update_fixtures) {
                report.fixture_changes.push_back({where + path, text, false});
                continue;
            }
            report.findings.push_back(
                finding(kFixtureRule,
                        Problem("file " + where + path + " not found in fixtures folder",
                                "Testcase \"" + case_name + "\""),
                        {}, pkg.component));
            continue;
        }
        if (it->second->bytes == text) continue;
        if (opts.update_fixtures) {
            report.fixture_changes.push_back({where + path, text, false});
            continue;
        }
        const auto slash = path.rfind('/');
        const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
        report.findings.push_back(
            finding(kFixtureRule,
                    Problem("File mismatch against fixture",
                            "Testcase \"" + case_name + "\"\n" +
                                shown_diff(text::unified_diff(it->second->bytes, text,
                                                              "FIXTURE/" + base, "ACTUAL/" + base)),
                            path),
                    {it->second->display}, pkg.component));
    }
}

void validate_package(const Package& pkg, const ValidateOptions& opts, Report& report) {
    // Every check runs, as kubectl-package's validators all run: the templates are rendered
    // even when the manifest has problems.
    for (Finding& f : check_manifest(pkg))
        report.findings.push_back(std::move(f));
    const Manifest& m = pkg.manifest;
    const std::unique_ptr<Kubeconform> kc = Kubeconform::make(m, opts.kubeconform);
    if (m.tests.empty()) {
        // kubectl-package never renders the templates of such a package; kpkg renders them once
        // with the schema's defaults so that their errors do not wait for a cluster.
        RenderContext ctx = test_context(m, TestCase{"", io::Node::map(), {}});
        ctx.config = admit_package_config(m, io::Node::map(), "").config;
        run_case(pkg, ctx, "", false, opts, report);
        // kubectl-package checks the package's own YAML files then.
        if (kc) check_kubeconform(pkg, *kc, nullptr, report);
        return;
    }
    for (const TestCase& tc : m.tests) {
        RenderContext ctx = test_context(m, tc);
        // Defaulted and pruned; what does not validate was reported with the manifest.
        ctx.config =
            admit_package_config(m, ctx.config.is_map() ? ctx.config : io::Node::map(), "").config;
        run_case(pkg, ctx, tc.name, opts.compare_fixtures, opts, report, kc.get());
    }
    if (kc) check_kubeconform(pkg, *kc, nullptr, report);
}

} // namespace

Report validate(const Loaded& loaded, const ValidateOptions& options) {
    Report report;
    report.findings = loaded.findings;
    if (!loaded.findings.empty()) return report;
    const Package& pkg = loaded.package;
    for (const Package& c : pkg.components)
        validate_package(c, options, report);
    validate_package(pkg, options, report);
    for (Finding& f : check_lock(pkg))
        report.findings.push_back(std::move(f));
    // The same finding from several test cases is reported once.
    std::vector<Finding> unique;
    std::set<std::string> seen;
    for (Finding& f : report.findings) {
        const std::string key = f.text() + "\n" + f.pos.str();
        if (seen.insert(key).second) unique.push_back(std::move(f));
    }
    report.findings = std::move(unique);
    return report;
}

} // namespace kpkg::pko
