// Images: kpkg pull, kpkg push, kpkg image inspect, kpkg cache ls|prune.
//
//   kpkg pull REF [--save DEST]... [--platform P] [--all-platforms]
//       the image into the cache (and to each --save destination); prints its digest.
//   kpkg push [SRC] REF
//       SRC (an image location: oci:DIR, an archive, a registry reference) or, without SRC, the
//       image `kpkg build -t REF` left in the cache, to the registry REF names.
//   kpkg image inspect IMAGE
//       platforms, digests, sizes, labels and what kind of package the image is.
//   kpkg cache ls | kpkg cache prune [--older-than DAYS]
//       the blob cache: what it holds, and removing it.
#include <chrono>
#include <filesystem>

#include "command.hpp"
#include "images.hpp"
#include "input.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/oci/media_types.hpp"
#include "kpkg/oci/registry.hpp"
#include "kpkg/oci/store.hpp"
#include "paths.hpp"

namespace kpkg::cli {
namespace {

// An image argument: a location that is an image (a bare reference without a registry is taken
// as one here, on Docker Hub, since nothing else can be meant).
oci::Location image_location(const std::string& arg) {
    auto l = oci::locate(arg).take();
    if (l.is_image()) return l;
    std::error_code ec;
    if (arg == "-" || std::filesystem::exists(arg, ec))
        throw Exception(Error::usage(text::quote(arg) +
                                     ": not an image: a directory or file that is neither an "
                                     "OCI layout nor an archive (build one with 'kpkg build')"));
    auto r = oci::parse(arg);
    if (r) {
        l.kind = oci::Location::Kind::registry;
        l.reference = std::move(*r);
        return l;
    }
    throw Exception(Error::usage(text::quote(arg) +
                                 ": not an image (a reference, oci:DIR[:TAG], "
                                 "oci-archive:FILE[:TAG], docker-archive:FILE): " +
                                 r.error().message));
}

std::string image_name(const oci::Location& l) {
    return l.kind == oci::Location::Kind::registry ? l.reference.str() : oci::to_string(l);
}

std::string human_size(std::uint64_t n) {
    char buf[32];
    if (n < 1000) return std::to_string(n) + " B";
    if (n < 1000 * 1000)
        std::snprintf(buf, sizeof buf, "%.1f kB", static_cast<double>(n) / 1e3);
    else if (n < 1000ull * 1000 * 1000)
        std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(n) / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.1f GB", static_cast<double>(n) / 1e9);
    return buf;
}

// ---- pull ----

struct PullCliOptions {
    std::string ref;
    std::vector<std::string> saves;
    std::string platform;
    bool all_platforms = false;
};

int run_pull(const Globals& g, const PullCliOptions& o) {
    auto where = image_location(o.ref);
    std::vector<oci::Location> saves;
    for (const auto& s : o.saves) {
        auto l = oci::parse_transport(s).take();
        if (l.kind == oci::Location::Kind::path || l.kind == oci::Location::Kind::registry)
            throw Exception(Error::usage(
                "--save " + text::quote(s) +
                ": write oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE"));
        saves.push_back(std::move(l));
        check_output_outside({"--save", s, true}, {{"IMAGE", o.ref, true}});
    }
    std::optional<oci::Platform> platform;
    if (!o.platform.empty())
        platform = oci::Platform::parse(o.platform).take();
    else
        platform = input_platform();
    oci::Content image = read_image(where, platform, o.all_platforms);
    if (where.kind != oci::Location::Kind::registry) {
        if (const oci::Store* store = image_store()) store->put(image).take();
    }
    std::vector<std::string> saved, saved_digests;
    for (const auto& dest : saves) {
        std::vector<std::string> tags;
        if (where.kind == oci::Location::Kind::registry) tags.push_back(where.reference.str());
        saved_digests.push_back(save_image(dest, image, tags));
        saved.push_back(oci::to_string(dest));
    }
    if (g.format == Format::text) {
        std::string out = "pulled " + image_name(where) + "\ndigest: " + image.root_digest + "\n";
        for (std::size_t i = 0; i < saved.size(); ++i)
            out += saved_line(saved[i], saved_digests[i]);
        print(out);
        return 0;
    }
    io::Node doc = io::Node::map();
    doc.set("image", io::Node::string(image_name(where)));
    doc.set("digest", io::Node::string(image.root_digest));
    doc.set("mediaType", io::Node::string(image.root_media_type));
    io::Node ss = io::Node::seq();
    for (const auto& s : saved)
        ss.push(io::Node::string(s));
    doc.set("saved", std::move(ss));
    doc.set("savedImages", saved_images_node(saved, saved_digests, image.root_digest));
    print_structured(g, doc);
    return 0;
}

// ---- push ----

struct PushCliOptions {
    std::vector<std::string> args; // [SRC] REF
};

int run_push(const Globals& g, const PushCliOptions& o) {
    if (o.args.empty() || o.args.size() > 2)
        throw Exception(Error::usage("kpkg push takes [SRC] REF"));
    const std::string& dest_arg = o.args.back();
    auto dest = oci::parse_transport(dest_arg);
    oci::Reference ref;
    if (dest && dest->kind == oci::Location::Kind::registry) {
        ref = dest->reference;
    } else {
        auto r = oci::parse(dest_arg);
        if (!r)
            throw Exception(Error::usage(text::quote(dest_arg) +
                                         ": not an image reference: " + r.error().message));
        ref = *r;
    }
    oci::Content image;
    std::string from;
    if (o.args.size() == 2) {
        auto src = image_location(o.args.front());
        image = read_image(src, std::nullopt, /*all_platforms=*/true);
        from = image_name(src);
    } else {
        const oci::Store* store = image_store();
        auto rec = store != nullptr ? store->tag(oci::normalize(ref)) : std::nullopt;
        if (!rec)
            throw Exception(Error::io(text::quote(dest_arg) +
                                      ": no image of that name in the cache (build it with "
                                      "'kpkg build DIR -t " +
                                      ref.str() +
                                      "', or name the image to push: kpkg push SRC REF)"));
        // The image as it was stored: the tag record's digest, read from the cache alone.
        oci::Reference by_digest = oci::normalize(ref);
        by_digest.tag.clear();
        by_digest.digest = rec->digest;
        oci::Location cached;
        cached.kind = oci::Location::Kind::registry;
        cached.reference = by_digest;
        cached.given = dest_arg;
        oci::PullOptions po;
        po.offline = true;
        po.all_platforms = true;
        image = registry_client().pull(by_digest, po).take();
        from = "cache";
    }
    std::string digest = registry_client(&ref).push(ref, image).take();
    if (g.format == Format::text) {
        print("pushed " + ref.str() + "@" + digest + "\n");
        return 0;
    }
    io::Node doc = io::Node::map();
    doc.set("reference", io::Node::string(ref.str()));
    doc.set("digest", io::Node::string(digest));
    doc.set("from", io::Node::string(from));
    print_structured(g, doc);
    return 0;
}

// ---- image inspect ----

struct InspectCliOptions {
    std::string image;
};

int run_inspect(const Globals& g, const InspectCliOptions& o) {
    auto where = image_location(o.image);
    const std::string name = image_name(where);
    oci::Content image = read_image(where, input_platform(), /*all_platforms=*/true);

    struct PlatformImage {
        std::string platform, digest;
        std::int64_t size = 0; // manifest + config + layers
        std::size_t layers = 0;
    };
    std::vector<PlatformImage> platforms;
    auto blob = [&](const std::string& d) -> const std::string& {
        auto it = image.blobs.find(d);
        if (it == image.blobs.end())
            throw Exception(Error::invalid(name + ": blob " + d + " is missing"));
        return it->second;
    };
    auto describe = [&](const std::string& digest, const std::string& media_type) {
        auto m =
            (oci::parse_manifest(blob(digest), name + " (manifest " + digest + ")", media_type))
                .take();
        auto c =
            (oci::parse_config(blob(m.config.digest), name + " (config " + m.config.digest + ")"))
                .take();
        PlatformImage p;
        oci::Platform pl{c.os, c.architecture, c.variant};
        p.platform = pl.str();
        p.digest = digest;
        p.size = static_cast<std::int64_t>(blob(digest).size()) + m.config.size;
        for (const auto& l : m.layers)
            p.size += l.size;
        p.layers = m.layers.size();
        platforms.push_back(p);
    };
    if (oci::media::is_index(image.root_media_type)) {
        auto ix = oci::parse_index(blob(image.root_digest), name, image.root_media_type).take();
        for (const auto& d : ix.manifests)
            if (oci::media::is_manifest(d.media_type) && image.blobs.count(d.digest))
                describe(d.digest, d.media_type);
    } else {
        describe(image.root_digest, image.root_media_type);
    }

    const oci::Platform platform = input_platform();
    ImageView v = view_image(image, platform, name);
    auto files = image_subtree(v, "", name + ":/");
    auto cls = plan::classify(v.config.labels, *files, name);
    // opm refuses sqlite index images outright; an image of no known kind is still shown.
    if (!cls && v.config.labels.count(plan::sqlite_label)) throw Exception(cls.error());
    std::string kind = cls ? plan::kind_name(cls->kind) : "unknown";
    std::string kind_text =
        cls ? plan::kind_description(cls->kind)
            : "unknown (not a bundle, catalog or Package Operator package image)";
    std::string package;
    if (cls && cls->kind == plan::ImageKind::bundle)
        if (const std::string* p = oci::label(v.config, plan::package_label)) package = *p;

    if (g.format == Format::text) {
        std::vector<std::vector<std::string>> rows;
        rows.push_back({"image", name});
        rows.push_back({"digest", image.root_digest});
        rows.push_back({"media type", image.root_media_type});
        rows.push_back({"kind", kind_text + (package.empty() ? "" : " (package " + package + ")")});
        if (cls && cls->kind == plan::ImageKind::catalog)
            rows.push_back({"catalog", "/" + cls->root});
        std::string out = text::table(rows, {.width = g.width});
        out += "\n";
        std::vector<std::vector<std::string>> prow;
        prow.push_back({"PLATFORM", "DIGEST", "LAYERS", "SIZE"});
        for (const auto& p : platforms)
            prow.push_back({p.platform, p.digest, std::to_string(p.layers),
                            human_size(static_cast<std::uint64_t>(p.size))});
        out += text::table(prow, {.width = g.width});
        if (!v.config.labels.empty()) {
            out += "\nlabels of " + platform.str() + ":\n";
            for (const auto& [k, val] : v.config.labels)
                out += "  " + k + "=" + val + "\n";
        }
        print(out);
        return 0;
    }
    io::Node doc = io::Node::map();
    doc.set("image", io::Node::string(name));
    doc.set("digest", io::Node::string(image.root_digest));
    doc.set("mediaType", io::Node::string(image.root_media_type));
    doc.set("kind", io::Node::string(kind));
    doc.set("package", io::Node::string(package));
    io::Node ps = io::Node::seq();
    for (const auto& p : platforms) {
        io::Node e = io::Node::map();
        e.set("platform", io::Node::string(p.platform));
        e.set("digest", io::Node::string(p.digest));
        e.set("layers", io::Node::integer(static_cast<std::int64_t>(p.layers)));
        e.set("size", io::Node::integer(p.size));
        ps.push(std::move(e));
    }
    doc.set("platforms", std::move(ps));
    io::Node ls = io::Node::map();
    for (const auto& [k, val] : v.config.labels)
        ls.set(k, io::Node::string(val));
    doc.set("labels", std::move(ls));
    print_structured(g, doc);
    return 0;
}

// ---- cache ----

int run_cache_ls(const Globals& g) {
    const oci::Store* store = image_store();
    if (store == nullptr)
        throw Exception(
            Error::usage("no cache directory: set KPKG_CACHE_DIR, XDG_CACHE_HOME or HOME"));
    auto listing = store->list().take();
    if (g.format == Format::text) {
        std::vector<std::vector<std::string>> rows;
        rows.push_back({"DIGEST", "SIZE", "USED BY"});
        for (const auto& b : listing.blobs)
            rows.push_back({b.digest, human_size(b.size),
                            b.referenced_by.empty() ? "-" : text::join(b.referenced_by, ", ")});
        std::string out = text::table(rows, {.width = g.width});
        if (!listing.tags.empty()) {
            std::vector<std::vector<std::string>> trows;
            trows.push_back({"TAG", "DIGEST"});
            for (const auto& t : listing.tags)
                trows.push_back({t.reference, t.record.digest});
            out += "\n" + text::table(trows, {.width = g.width});
        }
        if (!listing.urls.empty()) {
            std::vector<std::vector<std::string>> urows;
            urows.push_back({"URL", "STATUS", "DIGEST"});
            for (const auto& u : listing.urls)
                urows.push_back(
                    {u.url, std::to_string(u.status), u.digest.empty() ? "-" : u.digest});
            out += "\n" + text::table(urows, {.width = g.width});
        }
        out += "\n" + std::to_string(listing.blobs.size()) + " blobs, " +
               human_size(listing.total_bytes) + " in " + store->root().string() + "\n";
        print(out);
        return 0;
    }
    io::Node doc = io::Node::map();
    doc.set("root", io::Node::string(store->root().string()));
    doc.set("totalBytes", io::Node::integer(static_cast<std::int64_t>(listing.total_bytes)));
    io::Node bs = io::Node::seq();
    for (const auto& b : listing.blobs) {
        io::Node e = io::Node::map();
        e.set("digest", io::Node::string(b.digest));
        e.set("size", io::Node::integer(static_cast<std::int64_t>(b.size)));
        io::Node r = io::Node::seq();
        for (const auto& x : b.referenced_by)
            r.push(io::Node::string(x));
        e.set("referencedBy", std::move(r));
        bs.push(std::move(e));
    }
    doc.set("blobs", std::move(bs));
    io::Node ts = io::Node::seq();
    for (const auto& t : listing.tags) {
        io::Node e = io::Node::map();
        e.set("reference", io::Node::string(t.reference));
        e.set("digest", io::Node::string(t.record.digest));
        ts.push(std::move(e));
    }
    doc.set("tags", std::move(ts));
    io::Node us = io::Node::seq();
    for (const auto& u : listing.urls) {
        io::Node e = io::Node::map();
        e.set("url", io::Node::string(u.url));
        e.set("status", io::Node::integer(u.status));
        if (!u.digest.empty()) e.set("digest", io::Node::string(u.digest));
        us.push(std::move(e));
    }
    doc.set("urls", std::move(us));
    print_structured(g, doc);
    return 0;
}

int run_cache_prune(const Globals& g, int older_than_days) {
    const oci::Store* store = image_store();
    if (store == nullptr)
        throw Exception(
            Error::usage("no cache directory: set KPKG_CACHE_DIR, XDG_CACHE_HOME or HOME"));
    std::optional<std::chrono::hours> older;
    if (older_than_days >= 0) older = std::chrono::hours(24 * older_than_days);
    auto r = store->prune(older).take();
    if (g.format == Format::text) {
        print("removed " + std::to_string(r.blobs_removed) + " blobs (" +
              human_size(r.bytes_freed) + "), " + std::to_string(r.trees_removed) +
              " unpacked trees, " + std::to_string(r.tags_removed) + " tag records and " +
              std::to_string(r.urls_removed) + " URL records\n");
        return 0;
    }
    io::Node doc = io::Node::map();
    doc.set("blobsRemoved", io::Node::integer(static_cast<std::int64_t>(r.blobs_removed)));
    doc.set("treesRemoved", io::Node::integer(static_cast<std::int64_t>(r.trees_removed)));
    doc.set("tagsRemoved", io::Node::integer(static_cast<std::int64_t>(r.tags_removed)));
    doc.set("urlsRemoved", io::Node::integer(static_cast<std::int64_t>(r.urls_removed)));
    doc.set("bytesFreed", io::Node::integer(static_cast<std::int64_t>(r.bytes_freed)));
    print_structured(g, doc);
    return 0;
}

void setup_images(CLI::App& root, Context& ctx) {
    {
        auto opts = std::make_shared<PullCliOptions>();
        CLI::App* p = root.add_subcommand("pull", "Pull an image into the cache (and save it)");
        p->add_option("IMAGE", opts->ref, "A registry reference (or oci:DIR, an archive, ...)")
            ->required();
        p->add_option("--save", opts->saves,
                      "Also write the image to oci:DIR[:TAG], oci-archive:FILE[:TAG] or "
                      "docker-archive:FILE (repeatable)")
            ->option_text("DEST");
        p->add_option("--platform", opts->platform,
                      "The platform an image index is resolved to (default: this machine's)")
            ->option_text("PLATFORM");
        p->add_flag("--all-platforms", opts->all_platforms, "Every platform of an image index");
        p->callback(
            [&ctx, opts] { ctx.action = [&ctx, opts] { return run_pull(ctx.globals, *opts); }; });
    }
    {
        auto opts = std::make_shared<PushCliOptions>();
        CLI::App* p = root.add_subcommand(
            "push", "Push an image built with 'kpkg build -t REF' (or any image SRC) to REF");
        p->add_option("ARGS", opts->args, "[SRC] REF")->required()->expected(1, 2);
        p->callback(
            [&ctx, opts] { ctx.action = [&ctx, opts] { return run_push(ctx.globals, *opts); }; });
    }
    {
        CLI::App* img = group(root, "image", "Look at images");
        auto opts = std::make_shared<InspectCliOptions>();
        CLI::App* i = img->add_subcommand(
            "inspect", "Platforms, digests, sizes, labels and the kind of package of an image");
        i->add_option("IMAGE", opts->image,
                      "A registry reference, oci:DIR[:TAG], oci-archive:FILE[:TAG], "
                      "docker-archive:FILE, or a layout directory or archive")
            ->required();
        i->callback([&ctx, opts] {
            ctx.action = [&ctx, opts] { return run_inspect(ctx.globals, *opts); };
        });
    }
    {
        CLI::App* c = group(root, "cache", "The image blob cache");
        CLI::App* ls = c->add_subcommand("ls", "What the cache holds: blobs, sizes, tags");
        ls->callback([&ctx] { ctx.action = [&ctx] { return run_cache_ls(ctx.globals); }; });
        auto days = std::make_shared<int>(-1);
        CLI::App* pr = c->add_subcommand("prune", "Empty the cache, or remove what is old");
        pr->add_option("--older-than", *days, "Only what was last used more than DAYS days ago")
            ->option_text("DAYS")
            ->check(CLI::Range(0, 36500));
        pr->callback([&ctx, days] {
            ctx.action = [&ctx, days] { return run_cache_prune(ctx.globals, *days); };
        });
    }
}

} // namespace

KPKG_COMMAND(images, 42, setup_images);

} // namespace kpkg::cli
