// Loading a Package Operator package from an io::Tree: the files, the manifest and lock of the
// package and of each component, and every structure problem on the way.
#include <algorithm>
#include <set>

#include "kpkg/core/digest.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/pko/package.hpp"
#include "kpkg/pko/repo.hpp"

namespace kpkg::pko {
namespace {

constexpr std::string_view kManifestApiVersion = "manifests.package-operator.run/v1alpha1";
// The rule of every problem of a package's structure, found while loading it.
constexpr const char* kRule = "package.load";

bool starts_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}
bool ends_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// Whether any component of `rel` starts with '.'.
bool hidden(std::string_view rel) {
    std::size_t start = 0;
    for (;;) {
        if (start < rel.size() && rel[start] == '.') return true;
        const std::size_t slash = rel.find('/', start);
        if (slash == std::string_view::npos) return false;
        start = slash + 1;
    }
}

std::string_view base_name(std::string_view rel) {
    const auto slash = rel.rfind('/');
    return slash == std::string_view::npos ? rel : rel.substr(slash + 1);
}

// The field errors of one document, collected as "path: message" and reported together.
struct Fields {
    std::string file;
    std::vector<std::pair<std::string, io::Mark>> errors;

    void add(const std::string& path, const std::string& what, const io::Mark& m) {
        errors.push_back({path + ": " + what, m});
    }
};

const char* kind_word(const io::Node& n) {
    return io::kind_name(n.kind);
}

std::string as_string(const io::Node* n, const std::string& path, Fields& f) {
    if (!n || n->is_null()) return {};
    if (!n->is_string()) {
        // Go's decoder takes only strings for a string field.
        f.add(path, std::string("Invalid value: expected a string, got ") + kind_word(*n), n->mark);
        return {};
    }
    return n->text;
}

const io::Node* as_map(const io::Node* n, const std::string& path, Fields& f) {
    if (!n || n->is_null()) return nullptr;
    if (!n->is_map()) {
        f.add(path, std::string("Invalid value: expected an object, got ") + kind_word(*n),
              n->mark);
        return nullptr;
    }
    return n;
}

const io::Node* as_seq(const io::Node* n, const std::string& path, Fields& f) {
    if (!n || n->is_null()) return nullptr;
    if (!n->is_seq()) {
        f.add(path, std::string("Invalid value: expected a list, got ") + kind_word(*n), n->mark);
        return nullptr;
    }
    return n;
}

std::string idx(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

// The first non-empty document of a YAML file, or a finding.
std::optional<io::Node> parse_one(std::string_view text, const std::string& display,
                                  const std::string& rel, const char* reason,
                                  std::vector<Finding>& out) {
    io::Limits lim;
    lim.duplicate_keys_last_wins = true; // as sigs.k8s.io/yaml reads them
    auto docs = io::parse_yaml(text, display, lim);
    if (!docs) {
        out.push_back(finding(kRule, Problem(reason, docs.error().message, rel), docs.error().pos));
        return std::nullopt;
    }
    for (auto& d : *docs)
        if (!d.root.is_null()) return std::move(d.root);
    return io::Node::map();
}

// Checks apiVersion and kind of a manifest or lock document.
bool check_gvk(const io::Node& doc, std::string_view kind, const std::string& display,
               const std::string& rel, std::vector<Finding>& out) {
    if (!doc.is_map()) {
        out.push_back(
            finding(kRule,
                    Problem(std::string(kind) + " invalid",
                            std::string("expected an object, got ") + kind_word(doc), rel),
                    io::pos_of(display, doc.mark)));
        return false;
    }
    const io::Node* av = doc.get("apiVersion");
    const io::Node* k = doc.get("kind");
    const std::string a = av && av->is_string() ? av->text : std::string();
    const std::string kk = k && k->is_string() ? k->text : std::string();
    if (a == kManifestApiVersion && kk == kind) return true;
    Problem v;
    v.reason = "unknown GVK";
    v.path = rel;
    // As apimachinery prints a GroupVersionKind.
    const auto slash = a.find('/');
    const std::string group = slash == std::string::npos ? std::string() : a.substr(0, slash);
    const std::string version = slash == std::string::npos ? a : a.substr(slash + 1);
    v.details = group + "/" + version + ", Kind=" + kk + " (expected " +
                std::string(kManifestApiVersion) + " " + std::string(kind) + ")";
    out.push_back(finding(kRule, v, io::pos_of(display, (k ? k->mark : doc.mark))));
    return false;
}

void field_findings(Fields& f, const char* reason, const std::string& rel,
                    std::vector<Finding>& out) {
    for (auto& [msg, mark] : f.errors)
        out.push_back(finding(kRule, Problem(reason, msg, rel), io::pos_of(f.file, mark)));
}

std::optional<Manifest> parse_manifest(std::string_view text, const std::string& display,
                                       const std::string& rel, std::vector<Finding>& out) {
    auto doc = parse_one(text, display, rel, "PackageManifest invalid", out);
    if (!doc) return std::nullopt;
    if (!check_gvk(*doc, "PackageManifest", display, rel, out)) return std::nullopt;
    Manifest m;
    m.file = display;
    m.rel = rel;
    Fields f{display, {}};
    if (const io::Node* md = as_map(doc->get("metadata"), "metadata", f))
        m.name = as_string(md->get("name"), "metadata.name", f);
    const io::Node* spec = as_map(doc->get("spec"), "spec", f);
    if (spec) {
        if (const io::Node* s = as_seq(spec->get("scopes"), "spec.scopes", f))
            for (std::size_t i = 0; i < s->items.size(); ++i)
                m.scopes.push_back(as_string(&s->items[i], idx("spec.scopes", i), f));
        if (const io::Node* s = as_seq(spec->get("phases"), "spec.phases", f))
            for (std::size_t i = 0; i < s->items.size(); ++i) {
                const std::string p = idx("spec.phases", i);
                if (const io::Node* ph = as_map(&s->items[i], p, f))
                    m.phases.push_back({as_string(ph->get("name"), p + ".name", f),
                                        as_string(ph->get("class"), p + ".class", f)});
                else
                    m.phases.push_back({});
            }
        if (const io::Node* s = as_seq(spec->get("images"), "spec.images", f))
            for (std::size_t i = 0; i < s->items.size(); ++i) {
                const std::string p = idx("spec.images", i);
                if (const io::Node* im = as_map(&s->items[i], p, f))
                    m.images.push_back({as_string(im->get("name"), p + ".name", f),
                                        as_string(im->get("image"), p + ".image", f)});
            }
        if (const io::Node* c = spec->get("components"); c && !c->is_null()) {
            as_map(c, "spec.components", f);
            m.components = true;
        }
        if (const io::Node* flt = as_map(spec->get("filter"), "spec.filter", f)) {
            if (const io::Node* s = as_seq(flt->get("conditions"), "spec.filter.conditions", f))
                for (std::size_t i = 0; i < s->items.size(); ++i) {
                    const std::string p = idx("spec.filter.conditions", i);
                    if (const io::Node* c = as_map(&s->items[i], p, f))
                        m.conditions.push_back(
                            {as_string(c->get("name"), p + ".name", f),
                             as_string(c->get("expression"), p + ".expression", f), c->mark});
                }
            if (const io::Node* s = as_seq(flt->get("paths"), "spec.filter.paths", f))
                for (std::size_t i = 0; i < s->items.size(); ++i) {
                    const std::string p = idx("spec.filter.paths", i);
                    if (const io::Node* c = as_map(&s->items[i], p, f))
                        m.paths.push_back({as_string(c->get("glob"), p + ".glob", f),
                                           as_string(c->get("expression"), p + ".expression", f),
                                           c->mark});
                }
        }
        as_seq(spec->get("availabilityProbes"), "spec.availabilityProbes", f);
        if (const io::Node* cfg = as_map(spec->get("config"), "spec.config", f))
            as_map(cfg->get("openAPIV3Schema"), "spec.config.openAPIV3Schema", f);
        as_seq(spec->get("constraints"), "spec.constraints", f);
        as_seq(spec->get("repositories"), "spec.repositories", f);
        as_seq(spec->get("dependencies"), "spec.dependencies", f);
    }
    if (const io::Node* test = as_map(doc->get("test"), "test", f))
        if (const io::Node* s = as_seq(test->get("template"), "test.template", f))
            for (std::size_t i = 0; i < s->items.size(); ++i) {
                const std::string p = idx("test.template", i);
                if (const io::Node* t = as_map(&s->items[i], p, f)) {
                    TestCase tc;
                    tc.name = as_string(t->get("name"), p + ".name", f);
                    tc.mark = t->mark;
                    if (const io::Node* ctx = as_map(t->get("context"), p + ".context", f))
                        tc.context = *ctx;
                    else
                        tc.context = io::Node::map();
                    m.tests.push_back(std::move(tc));
                }
            }
    if (!f.errors.empty()) {
        field_findings(f, "PackageManifest invalid", rel, out);
        return std::nullopt;
    }
    m.doc = std::move(*doc);
    return m;
}

// A lock entry's digest: what it names is pulled and deployed. An image's is "sha256:<hex>" (the
// digest its tag pointed to), a dependency's the hex digits of its repository entry (with or
// without "sha256:"); core/digest's rule decides. A missing digest is refused too.
void check_lock_digest(const io::Node& entry, const std::string& digest, const std::string& path,
                       bool dependency, Fields& f) {
    const io::Node* n = entry.get("digest");
    if (!n || n->is_null() || (n->is_string() && n->text.empty())) {
        f.add(path + ".digest", "Required value", n ? n->mark : entry.mark);
        return;
    }
    if (!n->is_string()) return; // reported by as_string
    const bool ok = dependency ? digest_hex(digest).ok() : check_digest(digest).ok();
    if (!ok)
        f.add(path + ".digest",
              "Invalid value: " + text::quote(digest) +
                  (dependency ? ": must be a sha256 digest (64 lower-case hexadecimal digits)"
                              : ": must be a digest (sha256:<64 lower-case hexadecimal digits>)"),
              n->mark);
}

std::optional<Lock> parse_lock(std::string_view text, const std::string& display,
                               const std::string& rel, std::vector<Finding>& out) {
    auto doc = parse_one(text, display, rel, "PackageManifestLock invalid", out);
    if (!doc) return std::nullopt;
    if (!check_gvk(*doc, "PackageManifestLock", display, rel, out)) return std::nullopt;
    Lock l;
    l.file = display;
    l.rel = rel;
    Fields f{display, {}};
    if (const io::Node* spec = as_map(doc->get("spec"), "spec", f)) {
        if (const io::Node* s = as_seq(spec->get("images"), "spec.images", f))
            for (std::size_t i = 0; i < s->items.size(); ++i) {
                const std::string p = idx("spec.images", i);
                if (const io::Node* im = as_map(&s->items[i], p, f)) {
                    l.images.push_back({as_string(im->get("name"), p + ".name", f),
                                        as_string(im->get("image"), p + ".image", f),
                                        as_string(im->get("digest"), p + ".digest", f)});
                    check_lock_digest(*im, l.images.back().digest, p, false, f);
                }
            }
        if (const io::Node* s = as_seq(spec->get("dependencies"), "spec.dependencies", f))
            for (std::size_t i = 0; i < s->items.size(); ++i) {
                const std::string p = idx("spec.dependencies", i);
                if (const io::Node* d = as_map(&s->items[i], p, f)) {
                    l.dependencies.push_back({as_string(d->get("name"), p + ".name", f),
                                              as_string(d->get("image"), p + ".image", f),
                                              as_string(d->get("digest"), p + ".digest", f),
                                              as_string(d->get("version"), p + ".version", f)});
                    check_lock_digest(*d, l.dependencies.back().digest, p, true, f);
                }
            }
    }
    if (!f.errors.empty()) {
        field_findings(f, "PackageManifestLock invalid", rel, out);
        return std::nullopt;
    }
    l.doc = std::move(*doc);
    return l;
}

// The files of one package (its root `prefix` within the tree), before they are sorted into
// manifest, lock and the rest.
struct Raw {
    std::map<std::string, File> files;    // relative to the package root
    std::map<std::string, File> fixtures; // .test-fixtures/..., relative to the package root
};

// Builds the package rooted at `prefix` from `raw`; `component` is its name ("" for the root).
std::optional<Package> assemble(Raw raw, const std::string& prefix, const std::string& component,
                                std::vector<Finding>& out) {
    Package pkg;
    pkg.component = component;
    pkg.prefix = prefix;
    pkg.fixtures = std::move(raw.fixtures);
    const std::size_t before = out.size();
    auto tag = [&](std::size_t from) {
        for (std::size_t i = from; i < out.size(); ++i)
            if (out[i].component.empty()) out[i].component = component;
    };

    const bool yaml = raw.files.count("manifest.yaml") != 0;
    const bool yml = raw.files.count("manifest.yml") != 0;
    if (yaml && yml) {
        out.push_back(finding(kRule,
                              Problem("PackageManifest present multiple times",
                                      "manifest.yaml and manifest.yml", "manifest.yaml"),
                              {raw.files["manifest.yml"].display}));
    } else if (!yaml && !yml) {
        out.push_back(finding(kRule, Problem("PackageManifest not found",
                                             "searched at manifest.yaml and manifest.yml")));
    } else {
        const std::string rel = yaml ? "manifest.yaml" : "manifest.yml";
        const File& f = raw.files[rel];
        if (auto m = parse_manifest(f.bytes, f.display, rel, out)) pkg.manifest = std::move(*m);
    }
    const bool lyaml = raw.files.count("manifest.lock.yaml") != 0;
    const bool lyml = raw.files.count("manifest.lock.yml") != 0;
    if (lyaml && lyml) {
        out.push_back(
            finding(kRule,
                    Problem("PackageManifestLock present multiple times",
                            "manifest.lock.yaml and manifest.lock.yml", "manifest.lock.yaml"),
                    {raw.files["manifest.lock.yml"].display}));
    } else if (lyaml || lyml) {
        const std::string rel = lyaml ? "manifest.lock.yaml" : "manifest.lock.yml";
        const File& f = raw.files[rel];
        pkg.lock = parse_lock(f.bytes, f.display, rel, out);
    }
    for (const char* n :
         {"manifest.yaml", "manifest.yml", "manifest.lock.yaml", "manifest.lock.yml"})
        raw.files.erase(n);
    pkg.files = std::move(raw.files);
    if (!component.empty()) pkg.manifest.name = component;
    tag(before);
    if (out.size() != before) return std::nullopt;
    return pkg;
}

} // namespace

std::string Finding::text() const {
    if (component.empty()) return message;
    return "component \"" + component + "\": " + message;
}

std::string format(const Finding& f) {
    return (f.pos.empty() ? std::string() : f.pos.str() + ": ") + model::severity_name(f.severity) +
           ": " + f.text();
}

Finding finding(std::string rule, const Problem& problem, SourcePos pos, std::string component) {
    Finding f;
    f.severity = model::Severity::error;
    f.rule = std::move(rule);
    f.message = problem.message();
    f.pos = std::move(pos);
    f.component = std::move(component);
    return f;
}

std::string Problem::message() const {
    std::string msg = reason.empty() ? std::string("Unknown reason") : reason;
    if (!path.empty()) {
        msg += " in " + path;
        if (index) msg += " idx " + std::to_string(*index);
    }
    if (!details.empty()) msg += ": " + details;
    if (!subject.empty()) {
        std::string_view s = subject;
        while (!s.empty() &&
               (s.front() == ' ' || s.front() == '\n' || s.front() == '\t' || s.front() == '\r'))
            s.remove_prefix(1);
        while (!s.empty() &&
               (s.back() == ' ' || s.back() == '\n' || s.back() == '\t' || s.back() == '\r'))
            s.remove_suffix(1);
        // The document, as kubectl-package shows it, but at most 2 KiB of it and with control
        // characters escaped (line by line, so that it still reads as YAML).
        msg += "\n";
        constexpr std::size_t kMax = 2048;
        const std::size_t total = s.size();
        std::size_t used = 0;
        while (!s.empty() && used < kMax) {
            const std::size_t nl = s.find('\n');
            const std::string_view line = s.substr(0, nl);
            const std::size_t took = text::append_escaped(msg, line, kMax - used, 0);
            used += took + 1;
            if (took < line.size() || nl == std::string_view::npos) {
                s.remove_prefix(took);
                if (took >= line.size()) s = {};
                break;
            }
            msg += '\n';
            s.remove_prefix(nl + 1);
        }
        if (!s.empty()) msg += "... (" + std::to_string(total) + " bytes)";
    }
    return msg;
}

const io::Node* Manifest::probes() const {
    const io::Node* spec = doc.get("spec");
    return spec ? spec->get("availabilityProbes") : nullptr;
}
const io::Node* Manifest::schema() const {
    const io::Node* spec = doc.get("spec");
    const io::Node* cfg = spec ? spec->get("config") : nullptr;
    const io::Node* s = cfg ? cfg->get("openAPIV3Schema") : nullptr;
    return s && s->is_map() ? s : nullptr;
}
const io::Node* Manifest::constraints() const {
    const io::Node* spec = doc.get("spec");
    return spec ? spec->get("constraints") : nullptr;
}
const io::Node* Manifest::repositories() const {
    const io::Node* spec = doc.get("spec");
    return spec ? spec->get("repositories") : nullptr;
}
const io::Node* Manifest::dependencies() const {
    const io::Node* spec = doc.get("spec");
    return spec ? spec->get("dependencies") : nullptr;
}

SourcePos Manifest::pos(std::string_view dotted) const {
    const io::Node* n = &doc;
    const io::Node* last = n;
    std::size_t start = 0;
    while (!dotted.empty() && n && start <= dotted.size()) {
        const std::size_t dot = dotted.find('.', start);
        const std::string_view key =
            dotted.substr(start, dot == std::string_view::npos ? dotted.npos : dot - start);
        n = n->get(key);
        if (n) last = n;
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    return io::pos_of(file, last->mark);
}

bool is_template(std::string_view path) {
    return ends_with(path, ".gotmpl");
}

std::string_view strip_template_suffix(std::string_view path) {
    return is_template(path) ? path.substr(0, path.size() - 7) : path;
}

bool is_yaml(std::string_view path) {
    const std::string_view b = base_name(path);
    const auto dot = b.rfind('.');
    if (dot == std::string_view::npos) return false;
    const std::string_view ext = b.substr(dot);
    return ext == ".yaml" || ext == ".yml";
}

Result<Loaded> load(const io::Tree& tree, const LoadOptions& options) {
    auto listing = tree.list();
    if (!listing) return fail(std::move(listing).error());
    Loaded out;
    Raw root;
    std::map<std::string, Raw> comps; // by component folder name
    std::set<std::string> comp_dirs;
    std::vector<std::pair<std::string, std::string>> stray; // files right under components/
    io::ReadOptions ro;
    ro.limit = options.max_file_bytes;

    for (const io::Entry& e : *listing) {
        if (e.rel.empty()) continue;
        bool fixture = starts_with(e.rel, ".test-fixtures/");
        if (starts_with(e.rel, "components/")) {
            const std::size_t slash = e.rel.find('/', 11);
            if (slash != std::string::npos &&
                starts_with(std::string_view(e.rel).substr(slash + 1), ".test-fixtures/"))
                fixture = true;
        }
        if (e.is_dir()) {
            // components/<name>
            if (starts_with(e.rel, "components/") && e.rel.find('/', 11) == std::string::npos &&
                !hidden(e.rel))
                comp_dirs.insert(e.rel.substr(11));
            continue;
        }
        if (hidden(e.rel) && !(fixture && options.fixtures)) continue;
        if (e.link) {
            out.warnings.push_back(e.display + ": a symbolic link, not part of the package");
            continue;
        }
        if (e.problem) {
            out.warnings.push_back(e.display + ": not a regular file, not part of the package");
            continue;
        }
        auto c = tree.read(e, ro);
        if (!c) return fail(std::move(c).error());
        if (c->too_large) {
            out.findings.push_back(finding(
                kRule,
                Problem("Invalid file",
                        "larger than " + std::to_string(options.max_file_bytes >> 20) + " MiB",
                        e.rel),
                {e.display}));
            continue;
        }
        File f{std::string(c->text()), e.display};
        // Which package the file belongs to is decided once the root manifest is read: until
        // then, files under components/<name>/ are kept aside.
        if (starts_with(e.rel, "components/")) {
            const std::size_t slash = e.rel.find('/', 11);
            if (slash == std::string::npos) {
                stray.push_back({e.rel, e.display});
                root.files[e.rel] = std::move(f);
                continue;
            }
            const std::string name = e.rel.substr(11, slash - 11);
            const std::string inner = e.rel.substr(slash + 1);
            Raw& r = comps[name];
            if (fixture) {
                r.fixtures[inner] = std::move(f);
                continue;
            }
            r.files[inner] = f;
            // Also a plain file of the root, should components not be enabled.
            root.files[e.rel] = std::move(f);
            continue;
        }
        if (fixture)
            root.fixtures[e.rel] = std::move(f);
        else
            root.files[e.rel] = std::move(f);
    }

    // The root package first, without the component folders.
    // The root package with every file: without components enabled, what is under components/
    // is plain package content; with them, it belongs to the components.
    auto pkg = assemble(std::move(root), "", "", out.findings);
    if (!pkg) return out;
    if (!pkg->manifest.components) {
        out.package = std::move(*pkg);
        return out;
    }
    for (auto it = pkg->files.begin(); it != pkg->files.end();)
        it = starts_with(it->first, "components/") ? pkg->files.erase(it) : std::next(it);
    for (const auto& [rel, display] : stray)
        out.findings.push_back(finding(
            kRule,
            Problem("The components directory may only contain folders and dot files", {}, rel),
            {display}));
    for (const std::string& name : comp_dirs) {
        Raw r = comps[name];
        // A component's own components: refused.
        bool nested = false;
        for (const auto& [rel, f] : r.files)
            if (starts_with(rel, "components/")) nested = true;
        auto c = assemble(std::move(r), "components/" + name + "/", name, out.findings);
        if (!c) continue;
        if (nested || c->manifest.components) {
            out.findings.push_back(finding(
                kRule,
                Problem("Nesting multi-component packages not allowed", {}, "components/" + name),
                {c->manifest.file}, name));
            continue;
        }
        pkg->components.push_back(std::move(*c));
    }
    out.package = std::move(*pkg);
    return out;
}

} // namespace kpkg::pko
