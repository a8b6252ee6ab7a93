// Reading what kpkg apply is given: manifests, plan trees and Package Operator packages.
#include <set>
#include <string>
#include <string_view>

#include "kpkg/core/text.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/kube/apply.hpp"
#include "kpkg/pko/package.hpp"
#include "kpkg/pko/render.hpp"
#include "kpkg/pko/util.hpp"
#include "kpkg/pko/validate.hpp"

namespace kpkg::kube {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool manifest_file(std::string_view rel) {
    return ends_with(rel, ".yaml") || ends_with(rel, ".yml") || ends_with(rel, ".json");
}

// Whether a path has a component starting with '.' (.git, .kpkg-plan, editor files).
bool hidden(std::string_view rel) {
    for (std::string_view part : text::split(rel, '/'))
        if (!part.empty() && part[0] == '.') return true;
    return false;
}

// The objects of one file's text, Lists unpacked.
Result<void> objects_of(std::string_view bytes, const std::string& display,
                        std::vector<InputObject>& out) {
    auto docs = io::parse_auto(bytes, display);
    if (!docs) return std::move(docs).error();
    for (const io::Document& d : *docs) {
        if (d.root.is_null()) continue;
        const SourcePos pos = io::pos_of(display, d.root.mark, d.index);
        if (!d.root.is_map()) {
            Error e = Error::invalid(std::string("a manifest must be an object, not a ") +
                                     io::kind_name(d.root.kind));
            e.pos = pos;
            return e;
        }
        auto json = pko::to_json_node(d.root);
        if (!json) return std::move(json).error();
        const io::Node* kind = json->get("kind");
        const io::Node* items = json->get("items");
        const io::Node* yaml_items = d.root.get("items");
        if (kind && kind->is_string() && ends_with(kind->text, "List") && items &&
            items->is_seq()) {
            for (std::size_t i = 0; i < items->items.size(); ++i) {
                const io::Node& item = items->items[i];
                SourcePos ip = pos;
                if (yaml_items && yaml_items->is_seq() && i < yaml_items->items.size())
                    ip = io::pos_of(display, yaml_items->items[i].mark, d.index);
                if (!item.is_map()) {
                    Error e = Error::invalid("an item of " + kind->text + " must be an object");
                    e.pos = ip;
                    return e;
                }
                out.push_back({item, ip});
            }
            continue;
        }
        out.push_back({std::move(*json), pos});
    }
    return {};
}

Result<void> read_file_objects(const io::Tree& tree, const std::string& rel,
                               std::vector<InputObject>& out) {
    auto c = tree.read(rel);
    if (!c) return std::move(c).error();
    if (c->too_large) return Error::io(tree.display(rel) + ": file too large");
    return objects_of(c->text(), tree.display(rel), out);
}

// Every manifest file below `prefix` ("" = the whole tree) in path order.
Result<void> read_directory(const io::Tree& tree, const std::string& prefix,
                            std::vector<InputObject>& out) {
    auto listing = tree.list();
    if (!listing) return std::move(listing).error();
    for (const io::Entry& e : *listing) {
        if (e.is_dir() || !manifest_file(e.rel) || hidden(e.rel)) continue;
        if (!prefix.empty() && e.rel.compare(0, prefix.size() + 1, prefix + "/") != 0) continue;
        if (e.problem) continue; // links leaving the tree, special files
        if (auto r = read_file_objects(tree, e.rel, out); !r) return r;
    }
    return {};
}

// A plan tree: the resources of its kustomization.yaml in order.
Result<void> read_kustomization(const io::Tree& tree, const std::string& rel,
                                std::vector<InputObject>& out) {
    auto c = tree.read(rel);
    if (!c) return std::move(c).error();
    auto docs = io::parse_yaml(c->text(), tree.display(rel));
    if (!docs) return std::move(docs).error();
    const io::Node* resources = nullptr;
    for (const auto& d : *docs)
        if (d.root.is_map()) resources = d.root.get("resources");
    if (!resources) return {};
    if (!resources->is_seq()) {
        Error e = Error::invalid("resources must be a list");
        e.pos = io::pos_of(tree.display(rel), resources->mark);
        return e;
    }
    const std::string dir = rel.find('/') == std::string::npos ? "" : rel.substr(0, rel.rfind('/'));
    for (const io::Node& r : resources->items) {
        const std::string path = dir.empty() ? r.text : dir + "/" + r.text;
        auto found = tree.find(path);
        if (!found) return std::move(found).error();
        if (!*found) {
            Error e = Error::invalid("resource " + text::quote(r.text) + " does not exist");
            e.pos = io::pos_of(tree.display(rel), r.mark);
            return e;
        }
        if ((*found)->is_dir()) {
            auto k = tree.find(path + "/kustomization.yaml");
            if (k && *k) {
                if (auto x = read_kustomization(tree, path + "/kustomization.yaml", out); !x)
                    return x;
            } else if (auto x = read_directory(tree, path, out); !x) {
                return x;
            }
            continue;
        }
        if (auto x = read_file_objects(tree, path, out); !x) return x;
    }
    return {};
}

[[noreturn]] void throw_findings(const std::vector<pko::Finding>& fs, const std::string& what,
                                 const std::string& where) {
    Error e = Error::invalid(what);
    e.subject = where;
    for (const auto& f : fs)
        e.note((f.pos.empty() ? std::string() : f.pos.str() + ": ") + f.text());
    throw Exception(std::move(e));
}

Input::Package read_package(const io::Tree& tree, const SourceOptions& opts) {
    auto loaded = pko::load(tree);
    if (!loaded) throw Exception(std::move(loaded).error());
    if (!loaded->findings.empty())
        throw_findings(loaded->findings, "the package is not valid", tree.display_root());
    const pko::Package& pkg = loaded->package;
    const pko::Manifest& m = pkg.manifest;

    pko::RenderContext ctx = pko::test_context(m, pko::TestCase{"", io::Node::map(), {}});
    ctx.name = m.name;
    bool namespaced = false, cluster = false;
    for (const auto& s : m.scopes) {
        if (s == "Namespaced") namespaced = true;
        if (s == "Cluster") cluster = true;
    }
    ctx.ns = namespaced && !opts.ns.empty() ? opts.ns : std::string();
    if (ctx.ns.empty() && !cluster)
        throw Exception(Error::invalid("the package supports only the Namespaced scope and no "
                                       "namespace is given: use -n NS")
                            .about(m.file));
    io::Node config = io::Node::map();
    if (!opts.config_path.empty()) {
        auto docs = io::load_file(std::filesystem::path(opts.config_path));
        if (!docs) throw Exception(std::move(docs).error());
        for (auto& d : *docs)
            if (!d.root.is_null()) {
                if (!d.root.is_map())
                    throw Exception(Error::invalid("--config " + text::quote(opts.config_path) +
                                                   " must hold an object"));
                auto j = pko::to_json_node(d.root);
                if (!j) throw Exception(std::move(j).error());
                config = std::move(*j);
                break;
            }
    }
    pko::Admitted admitted = pko::admit_package_config(m, config, "spec.config");
    if (!admitted.errors.empty())
        throw_findings(admitted.errors, "the configuration does not match the package's schema",
                       m.file);
    ctx.config = std::move(admitted.config);
    ctx.images.clear();
    if (!m.images.empty()) {
        if (!pkg.lock) throw_findings(pko::check_lock(pkg), "the package has no lock file", m.file);
        for (const auto& li : pkg.lock->images) {
            std::string ref = li.image;
            if (auto at = ref.find('@'); at != std::string::npos) ref.resize(at);
            const auto slash = ref.rfind('/');
            const auto colon = ref.rfind(':');
            if (colon != std::string::npos && (slash == std::string::npos || colon > slash))
                ref.resize(colon);
            ctx.images[li.name] = ref + "@" + li.digest;
        }
    }
    ctx.dependencies.clear();
    if (pkg.lock)
        for (const auto& d : pkg.lock->dependencies)
            ctx.dependencies[d.name] = d.image + "@" + d.digest;

    pko::RenderResult r = pko::render(pkg, ctx);
    if (!r.findings.empty())
        throw_findings(r.findings, "rendering the package failed", tree.display_root());
    auto phases = pko::by_phase(pkg, r.rendered);
    if (!phases) throw Exception(std::move(phases).error());

    Input::Package out;
    out.name = m.name;
    for (auto& ph : *phases) {
        InputPhase ip;
        ip.name = ph.phase.name;
        for (auto& po : ph.objects) {
            SourcePos pos;
            pos.file = tree.display_root();
            ip.objects.push_back({std::move(po.object), pos});
        }
        out.phases.push_back(std::move(ip));
    }
    if (const io::Node* probes = m.probes(); probes && probes->is_seq())
        for (const io::Node& p : probes->items) {
            AvailabilityProbe ap;
            if (const io::Node* sel = p.get("selector")) {
                if (const io::Node* k = sel->get("kind")) {
                    if (const io::Node* g = k->get("group")) ap.group = g->text;
                    if (const io::Node* kk = k->get("kind")) ap.kind = kk->text;
                }
                if (const io::Node* s = sel->get("selector")) ap.selector = *s;
            }
            if (const io::Node* pr = p.get("probes")) ap.probes = *pr;
            out.probes.push_back(std::move(ap));
        }
    return out;
}

} // namespace

Result<void> read_source(const io::Tree& tree, const SourceOptions& opts, Input& into) {
    return catch_error([&] {
        if (tree.is_directory()) {
            for (const char* m : {"manifest.yaml", "manifest.yml"}) {
                auto f = tree.find(m);
                if (!f) throw Exception(std::move(f).error());
                if (*f && !(*f)->is_dir()) {
                    into.packages.push_back(read_package(tree, opts));
                    return;
                }
            }
            auto k = tree.find("kustomization.yaml");
            if (!k) throw Exception(std::move(k).error());
            if (*k && !(*k)->is_dir()) {
                if (auto r = read_kustomization(tree, "kustomization.yaml", into.plain); !r)
                    throw Exception(std::move(r).error());
                return;
            }
            if (auto r = read_directory(tree, "", into.plain); !r)
                throw Exception(std::move(r).error());
            return;
        }
        auto listing = tree.list();
        if (!listing) throw Exception(std::move(listing).error());
        for (const io::Entry& e : *listing)
            if (!e.is_dir())
                if (auto r = read_file_objects(tree, e.rel, into.plain); !r)
                    throw Exception(std::move(r).error());
    });
}

} // namespace kpkg::kube
