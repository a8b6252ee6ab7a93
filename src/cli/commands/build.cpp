// kpkg build: a package image from a directory, without a container engine.
//
//   kpkg build DIR [-t REF]... [--save DEST]... [--push] [--platform OS/ARCH]...
//              [--label KEY=VALUE]... [--base-image REF|scratch]
//
// DIR is told apart as opm does (a registry+v1 bundle: manifests/ and metadata/; else a
// File-Based Catalog), or is a Package Operator package (manifest.yaml or manifest.yml),
// validated with the rules of `kpkg bundle validate` / `kpkg catalog validate` / `kpkg package
// validate` (exit 3 and nothing built when it has errors), and laid out as opm lays out its
// images (a package: as kubectl-package does, linux/amd64 unless --platform says otherwise). The
// image goes into the cache under each tag (so that `kpkg push REF` and image inputs with --offline
// find it), to every --save destination, and with --push to the registry of every tag.
//
// Output: what was built, its digest, where it went. -o json|yaml:
//   {"kind": "bundle"|"catalog"|"package", "package": "...", "digest": "sha256:...",
//    "mediaType": "...", "platforms": ["linux/amd64"], "tags": [...], "saved": [...],
//    "savedImages": [{"destination": "...", "digest": "sha256:..."}],
//    "pushed": [{"reference": "...", "digest": "sha256:..."}]}
#include <chrono>
#include <cstdio>

#include "command.hpp"
#include "images.hpp"
#include "input.hpp"
#include "kpkg/core/log.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/oci/registry.hpp"
#include "kpkg/oci/store.hpp"
#include "paths.hpp"

namespace kpkg::cli {
namespace {

struct BuildCliOptions {
    std::string dir;
    std::vector<std::string> tags;
    std::vector<std::string> saves;
    bool push = false;
    std::vector<std::string> platforms;
    std::vector<std::string> labels;
    std::string base = "scratch";
    bool lenient = false;
};

// "<what>: <ms> ms" on stderr with -v, for each step of a build.
struct Steps {
    std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
    void done(const char* what) {
        const auto now = std::chrono::steady_clock::now();
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f",
                      std::chrono::duration<double, std::milli>(now - t).count());
        log::debug(std::string(what) + ": " + buf + " ms");
        t = now;
    }
};

int run_build(const Globals& g, const BuildCliOptions& o) {
    Steps steps;
    // Everything the flags say is checked before anything is read or built.
    std::vector<oci::Reference> tags;
    for (const auto& t : o.tags) {
        auto r = oci::parse(t);
        if (!r)
            throw Exception(Error::usage("-t " + text::quote(t) +
                                         ": not an image reference: " + r.error().message));
        tags.push_back(*r);
    }
    if (o.push && tags.empty()) throw Exception(Error::usage("--push needs at least one -t REF"));
    std::vector<oci::Location> saves;
    for (const auto& s : o.saves) {
        auto l = oci::parse_transport(s).take();
        if (l.kind != oci::Location::Kind::oci_layout &&
            l.kind != oci::Location::Kind::oci_archive &&
            l.kind != oci::Location::Kind::docker_archive)
            throw Exception(Error::usage(
                "--save " + text::quote(s) +
                ": write oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE"));
        saves.push_back(std::move(l));
    }
    plan::BuildOptions bopts;
    for (const auto& p : o.platforms)
        bopts.platforms.push_back(oci::Platform::parse(p).take());
    // `kpkg --platform P build DIR` is `kpkg build DIR --platform P`.
    if (bopts.platforms.empty() && !image_flags().platform.empty())
        bopts.platforms.push_back(oci::Platform::parse(image_flags().platform).take());
    plan::ContentOptions copts;
    for (const auto& kv : o.labels) {
        auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
            throw Exception(Error::usage("--label " + text::quote(kv) + ": write KEY=VALUE"));
        copts.labels[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    const bool on_base = o.base != "scratch" && !o.base.empty();
    // No destination is the directory built or the base image, inside them, or holds them: the
    // next build would pack this one's output.
    std::vector<InputPath> inputs{{"DIR", o.dir, true}};
    if (on_base) inputs.push_back({"--base-image", o.base, true});
    for (const auto& s : o.saves)
        check_output_outside({"--save", s, true}, inputs);

    auto tree = open_input(o.dir);
    auto kind = plan::detect(*tree).take();
    if (on_base && kind != plan::ImageKind::catalog)
        throw Exception(Error::usage("--base-image is for catalog images; " +
                                     std::string(plan::kind_description(kind)) +
                                     " images are built from scratch"));
    // kubectl-package builds linux/amd64 package images whatever the host.
    if (kind == plan::ImageKind::package && bopts.platforms.empty())
        bopts.platforms.push_back(plan::package_platform());
    copts.base_image = on_base;
    copts.lenient = o.lenient;

    oci::Content base;
    if (on_base) {
        auto where = oci::locate(o.base).take();
        if (!where.is_image())
            throw Exception(Error::usage("--base-image " + text::quote(o.base) +
                                         ": not an image (a registry reference, oci:DIR, ...)"));
        base = read_image(where, std::nullopt, /*all_platforms=*/true);
        bopts.base = &base;
        bopts.base_name = o.base;
        steps.done("read the base image");
    }
    plan::Built built = plan::build(*tree, copts, bopts).take();
    const plan::ImageContent& content = built.content;
    const oci::Content& image = built.image;
    for (const auto& w : content.warnings)
        log::warning(w);
    steps.done("validated and built");

    // Into the cache, known by its tags.
    if (const oci::Store* store = image_store()) {
        store->put(image).take();
        for (const auto& t : tags)
            if (!t.tag.empty() || t.digest.empty())
                (store->set_tag(oci::normalize(t), image.root_digest, image.root_media_type))
                    .take();
    }
    steps.done("stored in the cache");
    std::vector<std::string> saved, saved_digests;
    for (const auto& dest : saves) {
        saved_digests.push_back(save_image(dest, image, o.tags));
        saved.push_back(oci::to_string(dest));
        steps.done("saved");
    }
    std::vector<std::pair<std::string, std::string>> pushed;
    if (o.push) {
        for (const auto& t : tags) {
            std::string digest = registry_client(&t).push(t, image).take();
            pushed.emplace_back(t.str(), digest);
        }
    }

    std::vector<std::string> platforms;
    if (bopts.platforms.empty()) bopts.platforms.push_back(oci::host_platform());
    for (const auto& p : bopts.platforms)
        platforms.push_back(p.str());
    if (g.format == Format::text) {
        std::string out = std::string("built ") + plan::kind_description(content.kind) + " image";
        if (!content.package.empty()) out += " of package " + text::quote(content.package);
        out += " for " + text::join(platforms, ", ") + "\n";
        out += "digest: " + image.root_digest + "\n";
        for (std::size_t i = 0; i < saved.size(); ++i)
            out += saved_line(saved[i], saved_digests[i]);
        for (const auto& [ref, digest] : pushed)
            out += "pushed: " + ref + "@" + digest + "\n";
        print(out);
        return 0;
    }
    io::Node doc = io::Node::map();
    doc.set("kind", io::Node::string(plan::kind_name(content.kind)));
    doc.set("package", io::Node::string(content.package));
    doc.set("digest", io::Node::string(image.root_digest));
    doc.set("mediaType", io::Node::string(image.root_media_type));
    io::Node ps = io::Node::seq();
    for (const auto& p : platforms)
        ps.push(io::Node::string(p));
    doc.set("platforms", std::move(ps));
    io::Node ts = io::Node::seq();
    for (const auto& t : o.tags)
        ts.push(io::Node::string(t));
    doc.set("tags", std::move(ts));
    io::Node ss = io::Node::seq();
    for (const auto& s : saved)
        ss.push(io::Node::string(s));
    doc.set("saved", std::move(ss));
    doc.set("savedImages", saved_images_node(saved, saved_digests, image.root_digest));
    io::Node pu = io::Node::seq();
    for (const auto& [ref, digest] : pushed) {
        io::Node e = io::Node::map();
        e.set("reference", io::Node::string(ref));
        e.set("digest", io::Node::string(digest));
        pu.push(std::move(e));
    }
    doc.set("pushed", std::move(pu));
    print_structured(g, doc);
    return 0;
}

void setup(CLI::App& root, Context& ctx) {
    auto opts = std::make_shared<BuildCliOptions>();
    CLI::App* b = root.add_subcommand(
        "build", "Build a bundle, catalog or Package Operator package image from a directory, "
                 "without a container engine");
    b->add_option("DIR", opts->dir,
                  "Bundle directory (manifests/ and metadata/), File-Based Catalog or Package "
                  "Operator package (manifest.yaml)")
        ->required();
    b->add_option("-t,--tag", opts->tags, "A reference the image is known by (repeatable)")
        ->option_text("REF");
    b->add_option("--save", opts->saves,
                  "Also write the image to oci:DIR[:TAG], oci-archive:FILE[:TAG] or "
                  "docker-archive:FILE (repeatable)")
        ->option_text("DEST");
    b->add_flag("--push", opts->push, "Push the image to the registry of every -t reference");
    b->add_option("--platform", opts->platforms,
                  "Build for OS/ARCH[/VARIANT] (repeatable: an image index; default: this "
                  "machine's, linux/amd64 for a Package Operator package)")
        ->option_text("PLATFORM");
    b->add_option("--label", opts->labels, "Add a label to the image config (repeatable)")
        ->option_text("KEY=VALUE");
    b->add_option("--base-image", opts->base,
                  "Catalogs: the image to layer the catalog on (an opm image, served with "
                  "'opm serve /configs'), or scratch")
        ->option_text("REF");
    b->add_flag("--lenient", opts->lenient,
                "Catalogs: accept what older opm releases accept, as 'kpkg catalog validate "
                "--lenient' does");
    b->footer("Exit status: 0 built, 3 the input does not validate (nothing built), 2 usage,\n"
              "1 a file, the registry or the cache failed.");
    b->callback(
        [&ctx, opts] { ctx.action = [&ctx, opts] { return run_build(ctx.globals, *opts); }; });
}

} // namespace

KPKG_COMMAND(build, 40, setup);

} // namespace kpkg::cli
