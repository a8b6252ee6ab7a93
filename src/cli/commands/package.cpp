// kpkg package validate | tree | render: Package Operator packages, offline.
//
// A package is a directory with manifest.yaml, or a Package Operator image (its files under
// package/): an OCI layout, an archive or a registry reference.
#include <filesystem>
#include <set>

#include "command.hpp"
#include "images.hpp"
#include "kpkg/core/atomic_file.hpp"
#include "kpkg/core/log.hpp"
#include "kpkg/core/semver.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/oci/location.hpp"
#include "kpkg/oci/url_cache.hpp"
#include "kpkg/pko/fixtures.hpp"
#include "kpkg/pko/package.hpp"
#include "kpkg/pko/render.hpp"
#include "kpkg/pko/util.hpp"
#include "kpkg/pko/validate.hpp"
#include "paths.hpp"

namespace kpkg::cli {
namespace {

namespace fs = std::filesystem;

struct Source {
    std::unique_ptr<io::Tree> tree;
    bool image = false;
};

// The package an argument names: a directory, or an image's package/ directory.
Source open_package(const std::string& arg) {
    Source s;
    if (auto where = oci::locate(arg); where && where->is_image()) {
        const oci::Content content = read_image(*where, input_platform());
        ImageView v = view_image(content, input_platform(), arg);
        s.tree = image_subtree(v, "package", arg);
        s.image = true;
        auto listing = s.tree->list();
        bool any = false;
        if (listing)
            for (const auto& e : *listing)
                if (!e.is_dir()) any = true;
        if (!any)
            throw Exception(
                Error::invalid("Package image contains no files. Might be corrupted.").about(arg));
        return s;
    }
    std::error_code ec;
    const auto st = fs::status(arg, ec);
    if (st.type() == fs::file_type::not_found)
        throw Exception(Error::io(text::quote(arg) + ": no such file or directory"));
    if (!fs::is_directory(st))
        throw Exception(Error::usage(text::quote(arg) +
                                     " is not a package directory (with manifest.yaml) or image"));
    s.tree = io::open_path(arg);
    return s;
}

// Loads a package; structure problems are an error listing them (exit 3).
pko::Loaded load_package(const io::Tree& tree, bool fixtures) {
    pko::LoadOptions lo;
    lo.fixtures = fixtures;
    auto loaded = pko::load(tree, lo);
    if (!loaded) throw Exception(std::move(loaded).error());
    for (const std::string& w : loaded->warnings)
        log::warning(w);
    return std::move(*loaded);
}

[[noreturn]] void throw_findings(const std::vector<pko::Finding>& fs, const std::string& what) {
    Error e = Error::invalid(what);
    for (const auto& f : fs)
        e.note(pko::format(f));
    throw Exception(std::move(e));
}

// A YAML or JSON file holding one object (a configuration, an environment).
io::Node read_object_file(const std::string& path, const char* flag) {
    auto docs = io::load_file(fs::path(path));
    if (!docs) {
        Error e = std::move(docs).error();
        if (e.code == ExitCode::invalid) e.message = std::string(flag) + ": " + e.message;
        throw Exception(std::move(e));
    }
    for (auto& d : *docs)
        if (!d.root.is_null()) {
            if (!d.root.is_map())
                throw Exception(Error::invalid(std::string(flag) + " " + text::quote(path) +
                                               " must hold an object, not a " +
                                               io::kind_name(d.root.kind)));
            auto j = pko::to_json_node(d.root);
            if (!j) throw Exception(std::move(j).error());
            return std::move(*j);
        }
    return io::Node::map();
}

const pko::TestCase* find_case(const pko::Manifest& m, const std::string& name) {
    for (const auto& t : m.tests)
        if (t.name == name) return &t;
    return nullptr;
}

const pko::Package& pick_component(const pko::Package& root, const std::string& component) {
    if (component.empty()) return root;
    if (!root.manifest.components)
        throw Exception(Error::invalid("Components not enabled").about(root.manifest.name));
    for (const auto& c : root.components)
        if (c.component == component) return c;
    std::vector<std::string> names;
    for (const auto& c : root.components)
        names.push_back(c.component);
    Error e = Error::invalid("Component not found [" + component + "]");
    if (!names.empty()) {
        std::string list;
        for (const auto& n : names)
            list += (list.empty() ? "" : ", ") + n;
        e.note("components: " + list);
    }
    throw Exception(std::move(e));
}

// Admits a configuration (exit 3 with the schema's findings).
io::Node admitted(const pko::Manifest& m, const io::Node& config, const std::string& path) {
    pko::Admitted a = pko::admit_package_config(m, config, path);
    if (!a.errors.empty()) {
        Error e = Error::invalid("validate Package configuration: the configuration does not "
                                 "match the package's schema");
        for (const auto& f : a.errors)
            e.note(f.message);
        throw Exception(std::move(e).about(m.file));
    }
    return std::move(a.config);
}

// --- validate ------------------------------------------------------------------------------------

struct ValidateOpts {
    std::string src;
    bool update_fixtures = false;
};

int run_validate(const Globals& g, const ValidateOpts& o) {
    Source s = open_package(o.src);
    if (o.update_fixtures && s.image)
        throw Exception(Error::usage("--update-fixtures writes into a package directory; " +
                                     text::quote(o.src) + " is an image"));
    const pko::Loaded loaded = load_package(*s.tree, true);
    pko::ValidateOptions vo;
    vo.update_fixtures = o.update_fixtures;
    vo.compare_fixtures = !s.image;
    // test.kubeconform's http(s) schema locations: fetched once into the cache (--offline: the
    // cache only).
    vo.kubeconform.fetch =
        [max = vo.kubeconform.max_schema_bytes](const std::string& url) -> Result<pko::UrlAnswer> {
        auto f =
            oci::fetch_cached(image_store(), url, image_flags().offline, max, request_timeout());
        if (!f) return fail(std::move(f).error());
        pko::UrlAnswer a;
        a.status = f->status;
        a.body = std::move(f->body);
        a.too_large = f->too_large;
        return a;
    };
    pko::Report report = pko::validate(loaded, vo);

    if (o.update_fixtures && report.findings.empty()) {
        // Every change is checked first (no symbolic link on the way: nothing is written when
        // one is refused), then each fixture is written (or removed) atomically.
        if (auto w = pko::write_fixture_changes(fs::path(o.src), report.fixture_changes); !w)
            throw Exception(std::move(w).error());
    }

    const std::size_t errors = report.findings.size();
    if (g.format == Format::junit || g.format == Format::github) {
        // The package as one unit; a component's findings name it in their message.
        std::vector<CiUnit> units{{o.src, {}}};
        for (const auto& f : report.findings) {
            model::Finding ci = f;
            ci.message = f.text();
            units[0].findings.push_back(std::move(ci));
        }
        print(g.format == Format::junit ? format_junit("kpkg package validate", units)
                                        : format_github(units));
    } else if (g.format == Format::text) {
        std::string out;
        for (const auto& f : report.findings)
            out += pko::format(f) + "\n";
        for (const auto& c : report.fixture_changes)
            if (o.update_fixtures && errors == 0)
                out +=
                    (c.remove ? "removed " : "wrote ") + (fs::path(o.src) / c.rel).string() + "\n";
        out += o.src + ": " + (errors ? "invalid: " + plural(errors, "error") : "valid") + " (" +
               plural(report.renders, "render") + ")\n";
        print(out);
    } else {
        io::Node doc = io::Node::map();
        doc.set("package", io::Node::string(o.src));
        doc.set("valid", io::Node::boolean(errors == 0));
        doc.set("errors", io::Node::integer(static_cast<std::int64_t>(errors)));
        io::Node& list = doc.set("findings", io::Node::seq());
        for (const auto& f : report.findings) {
            io::Node n = io::Node::map();
            n.set("message", io::Node::string(f.message));
            n.set("component", io::Node::string(f.component));
            n.set("file", io::Node::string(f.pos.file));
            n.set("line", io::Node::integer(f.pos.line));
            list.push(std::move(n));
        }
        io::Node& fx = doc.set("fixtures", io::Node::seq());
        if (o.update_fixtures && errors == 0)
            for (const auto& c : report.fixture_changes) {
                io::Node f = io::Node::map();
                f.set("file", io::Node::string((fs::path(o.src) / c.rel).string()));
                f.set("action", io::Node::string(c.remove ? "removed" : "written"));
                fx.push(std::move(f));
            }
        print_structured(g, doc);
    }
    return errors ? static_cast<int>(ExitCode::invalid) : 0;
}

// --- tree and render
// -------------------------------------------------------------------------------

struct RenderOpts {
    std::string src;
    std::string config_path, config_testcase, component;
    std::string name, ns, environment, image, as = "objects", output_dir;
    bool cluster = false;
    bool tree = false;
};

struct Prepared {
    pko::Loaded loaded;
    const pko::Package* pkg = nullptr;
    pko::RenderContext ctx;
    io::Node config; // as given (the Package's spec.config), null when none
    bool cluster = false;
};

// The package, its component and the context, as kubectl-package's tree builds them (tree), or
// from the flags (render).
Prepared prepare(const RenderOpts& o) {
    Source s = open_package(o.src);
    Prepared p;
    p.loaded = load_package(*s.tree, false);
    if (!p.loaded.findings.empty()) throw_findings(p.loaded.findings, "the package is not valid");
    p.pkg = &pick_component(p.loaded.package, o.component);
    const pko::Manifest& m = p.pkg->manifest;

    const pko::TestCase* tc = nullptr;
    if (!o.config_testcase.empty()) {
        tc = find_case(m, o.config_testcase);
        if (!tc) {
            Error e = Error::usage("arguments invalid: test template with name " +
                                   o.config_testcase + " not found");
            for (const auto& t : m.tests)
                e.note("test cases: " + t.name);
            throw Exception(std::move(e));
        }
    } else if (o.tree && o.config_path.empty() && !m.tests.empty()) {
        tc = &m.tests.front();
    }
    if (tc) {
        p.ctx = pko::test_context(m, *tc);
        if (o.tree) p.ctx.environment = io::Node{}; // tree takes only the package metadata
        p.config = p.ctx.config.is_map() ? p.ctx.config : io::Node::map();
    } else {
        p.ctx = pko::test_context(m, pko::TestCase{"", io::Node::map(), {}});
        p.ctx.name = o.tree ? "name" : m.name;
        p.ctx.ns = o.tree ? "namespace" : "";
        p.config = io::Node{};
    }
    if (!o.name.empty()) p.ctx.name = o.name;
    if (!o.ns.empty()) p.ctx.ns = o.ns;
    if (!o.config_path.empty()) p.config = read_object_file(o.config_path, "--config");
    if (!o.environment.empty())
        p.ctx.environment = read_object_file(o.environment, "--environment");
    p.ctx.config = admitted(m, p.config.is_map() ? p.config : io::Node::map(), "spec.config");
    p.cluster = o.cluster || p.ctx.ns.empty();
    if (p.cluster) p.ctx.ns.clear();
    // The scope the package is installed in must be one it supports.
    const std::string scope = p.cluster ? "Cluster" : "Namespaced";
    bool supported = false;
    for (const auto& sc : m.scopes)
        if (sc == scope) supported = true;
    if (!supported) {
        throw_findings({pko::finding("package.scope",
                                     pko::Problem("Package unsupported scope",
                                                  scope + " (the manifest's spec.scopes)", m.rel),
                                     m.pos("spec.scopes"))},
                       "the package cannot be installed with this scope");
    }
    return p;
}

// The constraints of the manifest against --environment.
void check_constraints(const pko::Manifest& m, const io::Node& env) {
    const io::Node* cs = m.constraints();
    if (!cs || !cs->is_seq()) return;
    std::vector<std::string> failed;
    const io::Node* os = env.get("openShift");
    auto version_of = [&](const std::string& name) -> std::string {
        const io::Node* part = name == "OpenShift" ? os : env.get("kubernetes");
        const io::Node* v = part ? part->get("version") : nullptr;
        return v && v->is_string() ? v->text : std::string();
    };
    for (const auto& c : cs->items) {
        if (const io::Node* pl = c.get("platform"); pl && pl->is_seq())
            for (const auto& p : pl->items)
                if (p.is_string() && p.text == "OpenShift" && !os) {
                    failed.push_back("OpenShift platform");
                    break;
                }
        if (const io::Node* pv = c.get("platformVersion")) {
            const io::Node* name = pv->get("name");
            const io::Node* range = pv->get("range");
            if (!name || !range || !name->is_string() || !range->is_string()) continue;
            if (name->text == "OpenShift" && !os) continue;
            if (name->text != "OpenShift" && name->text != "Kubernetes") continue;
            const std::string ver = version_of(name->text);
            auto con = semver::Constraint::parse(range->text);
            if (!con) throw Exception(std::move(con).error());
            semver::Version v;
            std::string why;
            if (!semver::detail::parse_lenient(ver, v, why))
                throw Exception(Error::invalid("--environment: " + name->text + " version " +
                                               text::quote(ver) + ": " + why));
            if (!con->check(v))
                failed.push_back(name->text + " " + v.str() + " does not meet constraint " +
                                 range->text);
        }
    }
    if (!failed.empty()) {
        std::string msg = "Constraints not met: ";
        for (std::size_t i = 0; i < failed.size(); ++i)
            msg += (i ? ", " : "") + failed[i];
        throw Exception(Error::invalid(msg).about(m.file));
    }
}

std::vector<pko::PhaseObjects> render_phases(const Prepared& p) {
    pko::RenderResult r = pko::render(*p.pkg, p.ctx);
    if (!r.findings.empty()) throw_findings(r.findings, "rendering package failed");
    auto phases = pko::by_phase(*p.pkg, r.rendered);
    if (!phases) throw Exception(std::move(phases).error());
    return std::move(*phases);
}

int run_tree(const Globals& g, const RenderOpts& o) {
    (void)g;
    Prepared p = prepare(o);
    std::string out = pko::tree_text(*p.pkg, render_phases(p), p.ctx.name, p.ctx.ns, p.cluster);
    // Without --component, every component after the root (kubectl-package shows only the root).
    if (o.component.empty()) {
        for (const auto& c : p.loaded.package.components) {
            Prepared pc = p;
            pc.pkg = &c;
            // A component is rendered with its own schema's defaults.
            pc.ctx.config =
                admitted(c.manifest, p.config.is_map() ? p.config : io::Node::map(), "spec.config");
            pc.ctx.images.clear();
            for (const auto& im : c.manifest.images)
                pc.ctx.images[im.name] = std::string(pko::kStaticImage);
            out += "\n" + pko::tree_text(c, render_phases(pc), pc.ctx.name, pc.ctx.ns, pc.cluster);
        }
    }
    print(out);
    return 0;
}

// The objects are JSON documents already (rendered through JSON as Package Operator does), so
// they go straight to the YAML writer.
std::string yaml_doc(const io::Node& n) {
    std::string out;
    io::go::append_yaml(out, n);
    return out;
}

std::string lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

// A file name part from a Kubernetes name: what is not [a-z0-9.-_] becomes '_'.
std::string safe(const std::string& s) {
    std::string out;
    for (char c : s)
        out += ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '-' || c == '_')
                   ? c
                   : '_';
    return out.empty() ? std::string("_") : out;
}

int run_render(const Globals& g, const RenderOpts& o) {
    if (!o.output_dir.empty())
        check_output_outside(
            {"--output-dir", o.output_dir},
            {{"SRC", o.src, true}, {"--config", o.config_path}, {"--environment", o.environment}});
    Prepared p = prepare(o);
    const pko::Manifest& m = p.pkg->manifest;
    if (!o.environment.empty()) check_constraints(m, p.ctx.environment);
    // .images: the lock's image@digest, as the manager passes them.
    p.ctx.images.clear();
    if (!m.images.empty()) {
        if (!p.pkg->lock) throw_findings(pko::check_lock(*p.pkg), "the package has no lock file");
        for (const auto& li : p.pkg->lock->images) {
            std::string ref = li.image;
            const auto at = ref.find('@');
            if (at != std::string::npos) ref.resize(at);
            // A tag is replaced by the digest.
            const auto slash = ref.rfind('/');
            const auto colon = ref.rfind(':');
            if (colon != std::string::npos && (slash == std::string::npos || colon > slash))
                ref.resize(colon);
            p.ctx.images[li.name] = ref + "@" + li.digest;
        }
    }
    p.ctx.dependencies.clear();
    if (p.pkg->lock)
        for (const auto& d : p.pkg->lock->dependencies)
            p.ctx.dependencies[d.name] = d.image + "@" + d.digest;
    auto phases = render_phases(p);

    std::vector<io::Node> docs;
    std::vector<std::string> names; // --output-dir
    if (o.as == "objectdeployment") {
        std::string image = o.image;
        if (image.empty()) {
            if (auto where = oci::locate(o.src); where && where->is_image()) image = o.src;
        }
        docs.push_back(
            pko::object_deployment(*p.pkg, phases, p.ctx.name, p.ctx.ns, image, p.config));
        names.push_back(lower(docs.back().get("kind")->text) + ".yaml");
    } else {
        for (std::size_t i = 0; i < phases.size(); ++i)
            for (auto* list : {&phases[i].objects, &phases[i].external})
                for (auto& po : *list) {
                    docs.push_back(std::move(po.object));
                    const io::Node* md = docs.back().get("metadata");
                    const io::Node* kind = docs.back().get("kind");
                    const io::Node* name = md ? md->get("name") : nullptr;
                    const io::Node* ns = md ? md->get("namespace") : nullptr;
                    char num[24];
                    std::snprintf(num, sizeof num, "%02zu", i + 1);
                    std::string file = std::string(num) + "-" + safe(phases[i].phase.name) + "/" +
                                       safe(lower(kind && kind->is_string() ? kind->text : "")) +
                                       "_";
                    if (ns && ns->is_string() && !ns->text.empty()) file += safe(ns->text) + "_";
                    file += safe(name && name->is_string() ? name->text : "") + ".yaml";
                    names.push_back(std::move(file));
                }
    }

    if (!o.output_dir.empty()) {
        // Written next to the destination, then moved into place: all or nothing.
        const fs::path dir = o.output_dir;
        std::error_code ec;
        if (fs::exists(dir, ec) && !fs::is_empty(dir, ec))
            throw Exception(Error::usage("--output-dir " + text::quote(o.output_dir) +
                                         " exists and is not empty"));
        const fs::path tmp = dir.parent_path() / (dir.filename().string() + ".kpkg-tmp");
        fs::remove_all(tmp, ec);
        std::set<std::string> used;
        try {
            for (std::size_t i = 0; i < docs.size(); ++i) {
                std::string n = names[i];
                for (int k = 2; !used.insert(n).second; ++k)
                    n = names[i].substr(0, names[i].size() - 5) + "-" + std::to_string(k) + ".yaml";
                const fs::path f = tmp / n;
                fs::create_directories(f.parent_path());
                if (auto w = write_output_file(f, yaml_doc(docs[i])); !w)
                    throw Exception(std::move(w).error());
            }
            if (docs.empty()) fs::create_directories(tmp);
            if (fs::exists(dir)) fs::remove(dir);
            fs::rename(tmp, dir);
        } catch (const fs::filesystem_error& e) {
            fs::remove_all(tmp, ec);
            throw Exception(Error::io("cannot write " + o.output_dir + ": " + e.code().message()));
        } catch (...) {
            fs::remove_all(tmp, ec);
            throw;
        }
        return 0;
    }
    if (g.format == Format::json) {
        if (docs.size() == 1 && o.as == "objectdeployment") {
            print(io::to_json(docs[0], {4, false, true}));
        } else {
            io::Node list = io::Node::map();
            list.set("apiVersion", io::Node::string("v1"));
            io::Node& items = list.set("items", io::Node::seq());
            for (auto& d : docs)
                items.push(std::move(d));
            list.set("kind", io::Node::string("List"));
            print(io::to_json(list, {4, false, true}));
        }
        return 0;
    }
    std::string out;
    for (std::size_t i = 0; i < docs.size(); ++i) {
        if (i) out += "---\n";
        out += yaml_doc(docs[i]);
    }
    print(out);
    return 0;
}

void setup(CLI::App& root, Context& ctx) {
    CLI::App* pkg = group(
        root, "package", "Package Operator packages: validate, tree, render, update, repositories");

    auto vo = std::make_shared<ValidateOpts>();
    CLI::App* v = pkg->add_subcommand(
        "validate", "Check a package and render every test case against its fixtures");
    v->add_option("SRC", vo->src, "Package directory or image")->required()->default_str("");
    v->add_flag("--update-fixtures", vo->update_fixtures,
                "Write the fixtures of every test case from what the templates render");
    v->footer("Every problem is printed as [FILE[:LINE]: ]error: MESSAGE.\n"
              "With -o junit: JUnit XML; with -o github: GitHub workflow annotations.\n"
              "Exit status: 0 valid, 3 problems found, 1 the package could not be read.");
    accept_ci_formats(v);
    v->callback([&ctx, vo] { ctx.action = [&ctx, vo] { return run_validate(ctx.globals, *vo); }; });

    auto add_common = [](CLI::App* c, RenderOpts& o) {
        c->add_option("SRC", o.src, "Package directory or image")->required()->default_str("");
        c->add_option("--config-testcase", o.config_testcase,
                      "Take the package metadata and configuration from this test case")
            ->option_text("NAME");
        c->add_option("--component", o.component, "The component of a multi-component package")
            ->option_text("NAME");
    };

    auto to = std::make_shared<RenderOpts>();
    to->tree = true;
    CLI::App* t = pkg->add_subcommand(
        "tree", "Show the phases and objects of a package as kubectl-package tree does");
    add_common(t, *to);
    t->add_flag("--cluster", to->cluster, "Render the package in cluster scope");
    t->add_option("--config-path", to->config_path, "Configuration file (YAML or JSON)")
        ->option_text("FILE")
        ->excludes("--config-testcase");
    t->callback([&ctx, to] { ctx.action = [&ctx, to] { return run_tree(ctx.globals, *to); }; });

    auto ro = std::make_shared<RenderOpts>();
    CLI::App* r = pkg->add_subcommand(
        "render", "Print the objects (or ObjectDeployment) Package Operator would create");
    add_common(r, *ro);
    r->add_option("--config", ro->config_path, "Configuration file (YAML or JSON)")
        ->option_text("FILE")
        ->excludes("--config-testcase");
    r->add_option("--name", ro->name, "Name of the Package (default: the manifest's name)")
        ->option_text("NAME");
    r->add_option("--namespace", ro->ns, "Namespace of the Package (none: a ClusterPackage)")
        ->option_text("NS");
    r->add_option("--environment", ro->environment,
                  "Environment file ({kubernetes: {version}, openShift: {version}, proxy: ...}): "
                  "seen by templates and checked against the manifest's constraints")
        ->option_text("FILE");
    r->add_option("--as", ro->as, "What to print: objects or objectdeployment")
        ->check(CLI::IsMember({"objects", "objectdeployment"}))
        ->option_text("WHAT");
    r->add_option("--image", ro->image,
                  "The package's image, for the ObjectDeployment's source-image annotation")
        ->option_text("REF");
    r->add_option("--output-dir", ro->output_dir,
                  "Write one file per object (PHASE-DIR/KIND_NS_NAME.yaml) into this new "
                  "directory")
        ->option_text("DIR");
    r->callback([&ctx, ro] { ctx.action = [&ctx, ro] { return run_render(ctx.globals, *ro); }; });
}

} // namespace

KPKG_COMMAND(package, 30, setup);

} // namespace kpkg::cli
