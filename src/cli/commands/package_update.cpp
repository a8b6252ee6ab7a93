// kpkg package update: a package's manifest.lock.yaml from its manifest: spec.images tags
// resolved to digests (the registry, or the cache with --offline) and spec.dependencies resolved
// against the repository indexes of spec.repositories, transitively (the dependencies of a
// candidate come from its package image, see pko/deps.hpp).
#include <filesystem>

#include "command.hpp"
#include "images.hpp"
#include "kpkg/core/atomic_file.hpp"
#include "kpkg/core/log.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/oci/location.hpp"
#include "kpkg/oci/reference.hpp"
#include "kpkg/oci/registry.hpp"
#include "kpkg/oci/store.hpp"
#include "kpkg/pko/deps.hpp"
#include "kpkg/pko/package.hpp"
#include "kpkg/pko/repo.hpp"

namespace kpkg::cli {
namespace {

namespace fs = std::filesystem;

// The digest a tag points to now (or, offline, last pointed to).
std::string resolve_digest(const std::string& image, const std::string& name) {
    auto ref = oci::parse(image);
    if (!ref)
        throw Exception(Error::invalid("spec.images " + text::quote(name) + ": " +
                                       text::quote(image) + ": " + ref.error().message));
    if (!ref->digest.empty()) return ref->digest;
    const oci::Reference norm = oci::normalize(*ref);
    if (image_flags().offline) {
        const oci::Store* store = image_store();
        std::optional<oci::TagRecord> rec;
        if (store) rec = store->tag(norm);
        if (!rec)
            throw Exception(Error::io("tag " + norm.str() + " is not in the cache (offline)")
                                .about("spec.images " + text::quote(name)));
        return rec->digest;
    }
    oci::Registry& reg = registry_client(&norm);
    auto head = reg.head_manifest(norm);
    if (!head) throw Exception(std::move(head).error().about(norm.str()));
    if (!*head)
        throw Exception(Error::invalid("image " + norm.str() + " not found in its registry")
                            .about("spec.images " + text::quote(name)));
    if (!(*head)->digest.empty()) return (*head)->digest;
    auto got = reg.get_manifest(norm);
    if (!got) throw Exception(std::move(got).error().about(norm.str()));
    return got->digest;
}

// The repository indexes spec.repositories names: files inside the package directory (read
// from the package's tree, which they may not leave), or images whose files hold one index.
std::vector<pko::RepositoryIndex> load_repositories(const pko::Manifest& m,
                                                    const io::Tree& package) {
    std::vector<pko::RepositoryIndex> out;
    const io::Node* repos = m.repositories();
    if (!repos || !repos->is_seq()) return out;
    for (std::size_t i = 0; i < repos->items.size(); ++i) {
        const io::Node& r = repos->items[i];
        const io::Node* file = r.get("file");
        const io::Node* image = r.get("image");
        if (file && file->is_string() && !file->text.empty()) {
            auto idx = pko::load_repository_file(
                package, file->text, "spec.repositories[" + std::to_string(i) + "].file",
                io::pos_of(m.file, file->mark));
            if (!idx) throw Exception(std::move(idx).error());
            out.push_back(std::move(*idx));
        } else if (image && image->is_string() && !image->text.empty()) {
            auto where = oci::locate(image->text);
            if (!where || !where->is_image())
                throw Exception(Error::invalid("spec.repositories: " + text::quote(image->text) +
                                               " is not an image reference"));
            const oci::Content content = read_image(*where, input_platform());
            ImageView v = view_image(content, input_platform(), image->text);
            auto tree = image_subtree(v, "", image->text);
            auto listing = tree->list();
            if (!listing) throw Exception(std::move(listing).error());
            std::optional<pko::RepositoryIndex> found;
            std::optional<Error> refused; // the first YAML file that is not a valid index
            for (const auto& e : *listing) {
                if (e.is_dir() || e.problem) continue;
                const std::string_view n = e.name();
                if (!(n.size() > 5 &&
                      (n.substr(n.size() - 5) == ".yaml" || n.substr(n.size() - 4) == ".yml")))
                    continue;
                auto c = tree->read(e);
                if (!c) throw Exception(std::move(c).error());
                auto idx = pko::load_repository(c->text(), e.display);
                if (!idx) {
                    if (!refused) refused = std::move(idx).error();
                    continue;
                }
                if (found)
                    throw Exception(Error::invalid("image " + image->text +
                                                   " holds more than one repository index"));
                found = std::move(*idx);
            }
            if (!found) {
                Error e = Error::invalid("image " + image->text + " holds no repository index");
                if (refused) e.note(refused->str());
                throw Exception(std::move(e));
            }
            out.push_back(std::move(*found));
        } else {
            throw Exception(Error::invalid("spec.repositories: an entry names neither a file nor "
                                           "an image")
                                .about(m.file));
        }
    }
    return out;
}

// The spec.dependencies of a repository entry's package image, image@sha256:<digest>: pulled
// through the blob cache (with --offline, from the cache only), its package/ files loaded as a
// package. A manifest that does not load, or a dependency without image.package, is an error
// naming the image (exit 3).
Result<std::vector<pko::DependencyRequest>> image_dependencies(const pko::RepositoryEntry& e) {
    return catch_error([&] {
        // An entry whose image cannot be named (its data.image is no repository name; a digest
        // that is not one never gets this far: the index is refused when read) has no manifest
        // to read: said, and taken to have no dependencies.
        const std::string ref = e.image + "@sha256:" + e.digest;
        if (!pko::is_digest_hex(e.digest))
            throw Exception(Error::invalid("repository entry " + text::quote(e.entry_name()) +
                                           ": data.digest is not a sha256 digest"));
        auto parsed = oci::parse(ref);
        if (!parsed) {
            log::warning("repository entry " + e.entry_name() + ": " + text::quote(ref) +
                         " is not an image reference; its dependencies are not known");
            return std::vector<pko::DependencyRequest>{};
        }
        oci::Location where;
        where.kind = oci::Location::Kind::registry;
        where.reference = *parsed;
        where.given = ref;
        const oci::Content content = read_image(where, input_platform());
        ImageView v = view_image(content, input_platform(), ref);
        auto tree = image_subtree(v, "package", ref + ":/package");
        auto loaded = pko::load(*tree);
        if (!loaded) throw Exception(std::move(loaded).error());
        if (!loaded->findings.empty()) {
            Error err = Error::invalid("the package image " + ref + " (entry " + e.entry_name() +
                                       ") is not a valid package");
            for (const auto& x : loaded->findings)
                err.note((x.pos.empty() ? "" : x.pos.str() + ": ") + x.text());
            throw Exception(std::move(err));
        }
        const pko::Manifest& m = loaded->package.manifest;
        auto deps = pko::dependency_requests(m.dependencies());
        for (std::size_t i = 0; i < deps.size(); ++i)
            if (deps[i].package.empty())
                throw Exception(Error::invalid("the package image " + ref + " (entry " +
                                               e.entry_name() + "): spec.dependencies[" +
                                               std::to_string(i) +
                                               "].image.package: Required value")
                                    .about(m.file));
        return deps;
    });
}

io::Node lock_document(const std::vector<pko::LockImage>& images,
                       const std::vector<pko::LockDependency>& deps) {
    io::Node doc = io::Node::map();
    doc.set("apiVersion", io::Node::string("manifests.package-operator.run/v1alpha1"));
    doc.set("kind", io::Node::string("PackageManifestLock"));
    doc.set("metadata", io::Node::map());
    io::Node& spec = doc.set("spec", io::Node::map());
    if (!deps.empty()) {
        io::Node& d = spec.set("dependencies", io::Node::seq());
        for (const auto& x : deps) {
            io::Node e = io::Node::map();
            e.set("digest", io::Node::string(x.digest));
            e.set("image", io::Node::string(x.image));
            e.set("name", io::Node::string(x.name));
            e.set("version", io::Node::string(x.version));
            d.push(std::move(e));
        }
    }
    io::Node& im = spec.set("images", io::Node::seq());
    for (const auto& x : images) {
        io::Node e = io::Node::map();
        e.set("digest", io::Node::string(x.digest));
        e.set("image", io::Node::string(x.image));
        e.set("name", io::Node::string(x.name));
        im.push(std::move(e));
    }
    return doc;
}

bool same_lock(const pko::Lock& have, const std::vector<pko::LockImage>& images,
               const std::vector<pko::LockDependency>& deps) {
    if (have.images.size() != images.size() || have.dependencies.size() != deps.size())
        return false;
    for (std::size_t i = 0; i < images.size(); ++i)
        if (have.images[i].name != images[i].name || have.images[i].image != images[i].image ||
            have.images[i].digest != images[i].digest)
            return false;
    for (std::size_t i = 0; i < deps.size(); ++i)
        if (have.dependencies[i].name != deps[i].name ||
            have.dependencies[i].image != deps[i].image ||
            have.dependencies[i].digest != deps[i].digest ||
            have.dependencies[i].version != deps[i].version)
            return false;
    return true;
}

struct UpdateOpts {
    std::string src;
};

int run_update(const Globals& g, const UpdateOpts& o) {
    (void)g;
    if (auto where = oci::locate(o.src); where && where->is_image())
        throw Exception(Error::usage("kpkg package update writes the lock file of a package "
                                     "directory; " +
                                     text::quote(o.src) + " is an image"));
    std::error_code ec;
    if (!fs::is_directory(o.src, ec))
        throw Exception(Error::usage(text::quote(o.src) + " is not a package directory"));
    auto tree = io::open_path(o.src);
    auto loaded = pko::load(*tree);
    if (!loaded) throw Exception(std::move(loaded).error());
    if (!loaded->findings.empty()) {
        Error e = Error::invalid("the package is not valid");
        for (const auto& v : loaded->findings)
            e.note((v.pos.empty() ? "" : v.pos.str() + ": ") + v.text());
        throw Exception(std::move(e));
    }
    const pko::Package& pkg = loaded->package;
    const pko::Manifest& m = pkg.manifest;

    // Images: in the manifest's order, each tag resolved to the digest it points to.
    std::vector<pko::LockImage> images;
    for (const auto& im : m.images)
        images.push_back({im.name, im.image, resolve_digest(im.image, im.name)});

    // Dependencies: against the repository indexes.
    std::vector<pko::LockDependency> deps;
    if (const io::Node* d = m.dependencies(); d && d->is_seq() && !d->items.empty()) {
        pko::ResolveInput in;
        in.manifest_name = m.name;
        if (const io::Node* c = m.constraints()) in.constraints = *c;
        in.dependencies = pko::dependency_requests(d);
        in.dependencies_of = image_dependencies;
        in.repositories = load_repositories(m, *tree);
        auto resolved = pko::resolve_dependencies(in);
        if (!resolved) throw Exception(std::move(resolved).error());
        for (auto& x : *resolved)
            deps.push_back({x.name, x.image, x.digest, x.version});
    }

    const fs::path lock_path =
        fs::path(o.src) / (pkg.lock ? pkg.lock->rel : std::string("manifest.lock.yaml"));
    if (pkg.lock && same_lock(*pkg.lock, images, deps)) {
        print(lock_path.string() + " is up to date\n");
        return 0;
    }
    if (!pkg.lock && images.empty() && deps.empty()) {
        print(o.src + ": no images or dependencies to lock\n");
        return 0;
    }
    std::string json;
    io::go::append_marshal(json, lock_document(images, deps), false);
    auto docs = io::parse_json(json, "<lock>");
    std::string yaml;
    if (docs && !docs->empty()) io::go::append_yaml(yaml, (*docs)[0].root);
    if (auto w = write_file_atomic(lock_path, yaml); !w) throw Exception(std::move(w).error());
    print("wrote " + lock_path.string() + "\n");
    return 0;
}

void setup(CLI::App& root, Context& ctx) {
    CLI::App* pkg = group(
        root, "package", "Package Operator packages: validate, tree, render, update, repositories");
    auto o = std::make_shared<UpdateOpts>();
    CLI::App* u = pkg->add_subcommand(
        "update", "Write manifest.lock.yaml: image digests and resolved dependencies");
    u->add_option("SRC", o->src, "Package directory")->required()->default_str("");
    u->footer("Tags are resolved in their registries (with --offline: from the cache).\n"
              "Dependencies are resolved transitively: each candidate's own dependencies are\n"
              "read from its image's manifest; the lock lists the direct ones.\n"
              "The lock file is rewritten only when its content changes.\n"
              "Exit status: 0 written or up to date, 1 a registry or file could not be read,\n"
              "3 invalid package, repository index or dependency image, 4 dependencies not\n"
              "satisfiable.");
    u->callback([&ctx, o] { ctx.action = [&ctx, o] { return run_update(ctx.globals, *o); }; });
}

} // namespace

KPKG_COMMAND(package_update, 31, setup);

} // namespace kpkg::cli
