// kpkg package repo init|add|remove|list: Package Operator repository index files.
#include <filesystem>
#include <memory>

#include "command.hpp"
#include "images.hpp"
#include "kpkg/core/atomic_file.hpp"
#include "kpkg/core/semver.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/oci/location.hpp"
#include "kpkg/oci/reference.hpp"
#include "kpkg/pko/repo.hpp"
#include "paths.hpp"

namespace kpkg::cli {
namespace {

struct RepoOptions {
    std::string file;
    std::string name;                  // init
    std::string image;                 // add, remove
    std::vector<std::string> versions; // add
    std::string image_name;            // --image: data.image for a local layout or archive
};

pko::RepositoryIndex load_index(const std::string& file) {
    auto text = io::read_file(file).take();
    return pko::load_repository(text, file).take();
}

void save_index(const std::string& file, const pko::RepositoryIndex& idx) {
    auto out = AtomicFile::create_output(file).take();
    out.write(pko::write_repository(idx)).take();
    out.commit().take();
}

// What an image argument names, as add and remove need it: the package's manifest name and
// constraints, the manifest digest, and the repository written into data.image.
struct PackageImage {
    pko::RepositoryEntry entry;
};

PackageImage read_package_image(const std::string& arg, const std::string& image_name,
                                bool need_image = true) {
    auto where = oci::locate(arg).take();
    if (!where.is_image()) {
        std::error_code ec;
        if (arg == "-" || std::filesystem::exists(arg, ec))
            throw Exception(Error::usage(text::quote(arg) +
                                         ": not an image: a directory or file that is neither an "
                                         "OCI layout nor an archive"));
        auto r = oci::parse(arg);
        if (!r)
            throw Exception(
                Error::usage(text::quote(arg) + ": not an image reference, OCI layout or archive"));
        where.kind = oci::Location::Kind::registry;
        where.reference = std::move(*r);
    }
    PackageImage out;
    if (!image_name.empty()) {
        out.entry.image = image_name;
    } else if (where.kind == oci::Location::Kind::registry) {
        // go-containerregistry's Repository.Name(), which kubectl-package writes: Docker Hub's
        // registry is spelled index.docker.io.
        oci::Reference r = oci::normalize(where.reference);
        if (r.domain == "docker.io") r.domain = "index.docker.io";
        out.entry.image = r.name();
    } else if (need_image) {
        throw Exception(Error::usage(text::quote(arg) +
                                     ": a local image has no repository name: give it with "
                                     "--image REPOSITORY"));
    }
    oci::Content content = read_image(where, input_platform());
    ImageView v = view_image(content, input_platform(), arg);
    out.entry.digest = pko::digest_hex(v.manifest_digest).take();
    auto files = image_subtree(v, "package", arg + ":/package");
    std::string manifest_name = "manifest.yaml";
    auto found = files->find(manifest_name).take();
    if (!found) {
        manifest_name = "manifest.yml";
        found = files->find(manifest_name).take();
    }
    if (!found)
        throw Exception(Error::invalid(arg + ": not a Package Operator package image (no "
                                             "package/manifest.yaml)"));
    auto contents = files->read(manifest_name).take();
    const std::string display = files->display(manifest_name);
    auto docs = io::parse_yaml(contents.text(), display).take();
    const io::Node* root = docs.empty() ? nullptr : &docs[0].root;
    const io::Node* meta = root ? root->get("metadata") : nullptr;
    const io::Node* name = meta ? meta->get("name") : nullptr;
    if (!name || !name->is_string() || name->text.empty())
        throw Exception(
            Error::invalid("metadata.name: Required value", SourcePos{display, 0, 0, 0}));
    out.entry.name = name->text;
    if (const io::Node* spec = root->get("spec"))
        if (const io::Node* c = spec->get("constraints"); c && c->is_seq())
            out.entry.constraints = *c;
    return out;
}

int run_init(const RepoOptions& o) {
    if (o.name.empty()) throw Exception(Error::usage("NAME must not be empty"));
    pko::RepositoryIndex idx;
    idx.name = o.name;
    save_index(o.file, idx);
    return 0;
}

int run_add(const RepoOptions& o) {
    // The arguments first, then the file, then the pull: what is wrong fails before any download.
    for (const auto& v : o.versions) {
        std::string_view sv = v;
        if (!sv.empty() && sv[0] == 'v') sv.remove_prefix(1);
        if (auto parsed = semver::Version::parse(sv); !parsed)
            throw Exception(Error::usage("VERSION: " + parsed.error().message));
    }
    check_output_outside({"FILE", o.file}, {{"IMAGE", o.image, true}});
    auto idx = load_index(o.file);
    auto pkg = read_package_image(o.image, o.image_name);
    pkg.entry.versions = o.versions;
    if (auto r = idx.add(std::move(pkg.entry)); !r) {
        Error e = r.error();
        e.subject = o.file;
        throw Exception(e);
    }
    save_index(o.file, idx);
    return 0;
}

int run_remove(const RepoOptions& o) {
    check_output_outside({"FILE", o.file}, {{"IMAGE", o.image, true}});
    auto idx = load_index(o.file);
    auto pkg = read_package_image(o.image, {}, /*need_image=*/false);
    if (!idx.remove(pkg.entry.name, pkg.entry.digest))
        throw Exception(Error::invalid("package " + text::quote(pkg.entry.name) + " digest " +
                                       text::quote(pkg.entry.digest) + " not found")
                            .about(o.file));
    save_index(o.file, idx);
    return 0;
}

int run_list(const Globals& g, const RepoOptions& o) {
    auto idx = load_index(o.file);
    if (g.format != Format::text) {
        io::Node doc = io::Node::map();
        doc.set("name", io::Node::string(idx.name));
        io::Node& list = doc.set("entries", io::Node::seq());
        for (const auto& e : idx.entries) {
            io::Node n = io::Node::map();
            n.set("name", io::Node::string(e.name));
            n.set("image", io::Node::string(e.image));
            n.set("digest", io::Node::string(e.digest));
            io::Node& vs = n.set("versions", io::Node::seq());
            for (const auto& v : e.versions)
                vs.push(io::Node::string(v));
            list.push(std::move(n));
        }
        print_structured(g, doc);
        return 0;
    }
    std::string out = "Repository " + idx.name + "\n";
    std::vector<std::vector<std::string>> rows{{"PACKAGE", "VERSIONS", "IMAGE", "DIGEST"}};
    for (const auto& e : idx.entries) {
        std::string vs;
        for (const auto& v : e.versions)
            vs += (vs.empty() ? "" : ",") + v;
        rows.push_back({e.name, vs, e.image, e.digest});
    }
    if (idx.entries.empty())
        out += "no packages\n";
    else
        out += text::table(rows, {.width = g.width});
    print(out);
    return 0;
}

void setup_package_repo(CLI::App& root, Context& ctx) {
    CLI::App* pkg = group(
        root, "package", "Package Operator packages: validate, tree, render, update, repositories");
    CLI::App* repo = pkg->add_subcommand(
        "repo", "Package Operator repository index files (kubectl package repository)");
    repo->require_subcommand(1);

    auto init = std::make_shared<RepoOptions>();
    CLI::App* c =
        repo->add_subcommand("init", "Write a new, empty repository index FILE named NAME");
    c->add_option("FILE", init->file, "The index file to write")->required();
    c->add_option("NAME", init->name, "The repository's name")->required();
    c->callback([&ctx, init] { ctx.action = [init] { return run_init(*init); }; });

    auto add = std::make_shared<RepoOptions>();
    c = repo->add_subcommand("add", "Add a package image with its versions to the index FILE");
    c->add_option("FILE", add->file, "The index file")->required();
    c->add_option("IMAGE", add->image, "The package image: a reference, OCI layout or archive")
        ->required();
    c->add_option("VERSION", add->versions, "The versions the image provides (v1.2.3)")->required();
    c->add_option("--image", add->image_name,
                  "The repository written as the entry's image (required for a local image)");
    c->callback([&ctx, add] { ctx.action = [add] { return run_add(*add); }; });

    auto rm = std::make_shared<RepoOptions>();
    c = repo->add_subcommand("remove", "Remove a package image's entry from the index FILE");
    c->add_option("FILE", rm->file, "The index file")->required();
    c->add_option("IMAGE", rm->image, "The package image: a reference, OCI layout or archive")
        ->required();
    c->callback([&ctx, rm] { ctx.action = [rm] { return run_remove(*rm); }; });

    auto ls = std::make_shared<RepoOptions>();
    c = repo->add_subcommand("list", "List the packages and versions of the index FILE");
    c->add_option("FILE", ls->file, "The index file")->required();
    c->callback([&ctx, ls] { ctx.action = [&ctx, ls] { return run_list(ctx.globals, *ls); }; });
}

} // namespace

KPKG_COMMAND(package_repo, 60, setup_package_repo);

} // namespace kpkg::cli
