#include "kpkg/plan/image.hpp"

#include <algorithm>
#include <set>
#include <thread>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/bundle/validate.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/catalog/validate.hpp"
#include "kpkg/core/digest.hpp"
#include "kpkg/core/memory.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/core/threads.hpp"
#include "kpkg/oci/layer.hpp"
#include "kpkg/oci/layout.hpp"
#include "kpkg/oci/media_types.hpp"
#include "kpkg/pko/package.hpp"
#include "kpkg/pko/validate.hpp"

namespace kpkg::plan {
namespace {

bool has_prefix(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}

// Adds `path`'s parent directories (not yet added) and then `path` itself.
void add_entry(std::vector<ImageFile>& out, std::set<std::string>& dirs, std::string path,
               std::shared_ptr<const io::Contents> source, bool dir) {
    for (std::size_t slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
        std::string parent = path.substr(0, slash);
        if (dirs.insert(parent).second) out.push_back({parent, {}, true, nullptr});
    }
    if (dir) {
        if (dirs.insert(path).second) out.push_back({std::move(path), {}, true, nullptr});
        return;
    }
    out.push_back({std::move(path), {}, false, std::move(source)});
}

// The contents of a listed file, or why it cannot go into the image.
Result<std::shared_ptr<const io::Contents>> read_entry(const io::Tree& tree, const io::Entry& e,
                                                       std::uint64_t limit) {
    if (e.problem) {
        const io::Problem& p = *e.problem;
        std::string why;
        switch (p.kind) {
        case io::Problem::Kind::leaves_root:
            why = "a symbolic link leaving the input (to " + text::quote(p.target) + ")";
            break;
        case io::Problem::Kind::dangling:
            why = "a symbolic link that cannot be followed (" + p.why + ")";
            break;
        case io::Problem::Kind::link_to_dir:
            why = "a symbolic link to a directory";
            break;
        case io::Problem::Kind::not_regular:
            why = "not a regular file";
            break;
        }
        return fail(Error::invalid(e.display + ": cannot go into an image: " + why));
    }
    io::ReadOptions ro;
    ro.limit = limit;
    auto c = tree.read(e, ro);
    if (!c) return fail(std::move(c).error());
    if (c->too_large)
        return fail(Error::invalid(e.display + ": larger than the limit of " +
                                   std::to_string(limit) + " bytes for a file in an image"));
    return std::make_shared<const io::Contents>(std::move(*c));
}

// What the bundle is (labels, package), once it validates; no files.
Result<ImageContent> bundle_check(const io::Tree& tree) {
    auto loaded = bundle::load(tree);
    if (!loaded) return fail(std::move(loaded).error());
    std::vector<bundle::Finding> findings = bundle::validate(*loaded);
    std::string problems;
    std::size_t errors = 0;
    for (const auto& f : findings) {
        if (f.severity != bundle::Severity::error) continue;
        ++errors;
        problems += "\n  " + bundle::format(f, tree.display_root());
    }
    for (const auto& b : loaded->blocking)
        if (b.code == ExitCode::error) return fail(b);
    if (errors > 0)
        return fail(Error::invalid(tree.display_root() + ": not a valid bundle (" +
                                   std::to_string(errors) + (errors == 1 ? " error" : " errors") +
                                   "), nothing built:" + problems));

    ImageContent c;
    c.kind = ImageKind::bundle;
    c.package = loaded->bundle.annotations.package;
    c.labels = loaded->bundle.annotations.labels;
    return c;
}

// The files of a bundle image.
Result<std::vector<ImageFile>> bundle_files(const io::Tree& tree, const ContentOptions& opts) {
    std::vector<ImageFile> files;
    auto listing = tree.list();
    if (!listing) return fail(std::move(listing).error());
    std::set<std::string> dirs;
    for (const auto& e : *listing) {
        // What opm's and operator-sdk's bundle Dockerfiles copy.
        if (!(has_prefix(e.rel, "manifests/") || has_prefix(e.rel, "metadata/") ||
              has_prefix(e.rel, "tests/scorecard/") || e.rel == "manifests" ||
              e.rel == "metadata" || e.rel == "tests/scorecard"))
            continue;
        if (e.is_dir() && !e.problem) {
            add_entry(files, dirs, e.rel, {}, true);
            continue;
        }
        auto bytes = read_entry(tree, e, opts.max_file_size);
        if (!bytes) return fail(std::move(bytes).error());
        add_entry(files, dirs, e.rel, std::move(*bytes), false);
    }
    return files;
}

// What the catalog image is (labels, how it is run), once the catalog validates; no files.
Result<ImageContent> catalog_check(const io::Tree& tree, const ContentOptions& opts) {
    catalog::LoadOptions lopts;
    auto cat = catalog::load_catalog(tree, lopts);
    if (!cat) return fail(std::move(cat).error());
    catalog::ValidateOptions vopts;
    vopts.lenient = opts.lenient;
    std::vector<catalog::Finding> findings = catalog::validate(*cat, vopts);
    if (catalog::has_errors(findings)) {
        std::size_t errors = catalog::count(findings, catalog::Severity::error);
        std::string tree_text = catalog::format_tree(findings, catalog::Severity::error);
        std::string problems;
        for (std::string_view rest = tree_text; !rest.empty();) {
            auto nl = rest.find('\n');
            problems += "\n  ";
            problems += rest.substr(0, nl);
            if (nl == std::string_view::npos) break;
            rest.remove_prefix(nl + 1);
        }
        return fail(Error::invalid(tree.display_root() + ": not a valid catalog (" +
                                   std::to_string(errors) + (errors == 1 ? " error" : " errors") +
                                   "), nothing built:" + problems));
    }

    ImageContent c;
    c.kind = ImageKind::catalog;
    c.labels[configs_label] = "/configs";
    if (opts.base_image) {
        c.entrypoint = {"/bin/opm"};
        c.cmd = {"serve", "/configs"};
    }
    return c;
}

// The files of a catalog image: the catalog under configs/.
Result<std::vector<ImageFile>> catalog_files(const io::Tree& tree, const ContentOptions& opts) {
    std::vector<ImageFile> files;
    auto listing = tree.list();
    if (!listing) return fail(std::move(listing).error());
    std::set<std::string> dirs;
    add_entry(files, dirs, "configs", {}, true);
    for (const auto& e : *listing) {
        if (e.rel.empty()) continue;
        if (e.is_dir() && !e.problem) {
            add_entry(files, dirs, "configs/" + e.rel, {}, true);
            continue;
        }
        auto bytes = read_entry(tree, e, opts.max_file_size);
        if (!bytes) return fail(std::move(bytes).error());
        // A single file: /configs/<its name>.
        std::string rel = tree.is_directory() ? e.rel : std::string(e.name());
        if (rel == "-") rel = "catalog.yaml";
        add_entry(files, dirs, "configs/" + rel, std::move(*bytes), false);
    }
    return files;
}

// Whether a path has a component starting with '.' (kubectl-package leaves those out).
bool hidden_path(std::string_view rel) {
    for (std::size_t start = 0;;) {
        if (start < rel.size() && rel[start] == '.') return true;
        const auto slash = rel.find('/', start);
        if (slash == std::string_view::npos) return false;
        start = slash + 1;
    }
}

// What the Package Operator package is, once it validates as `kpkg package validate` validates
// it (structure, manifest, lock, every test case against its fixtures); no files.
Result<ImageContent> package_check(const io::Tree& tree) {
    pko::LoadOptions lo;
    lo.fixtures = true;
    auto loaded = pko::load(tree, lo);
    if (!loaded) return fail(std::move(loaded).error());
    const pko::Report report = pko::validate(*loaded);
    if (!report.findings.empty()) {
        const std::size_t errors = report.findings.size();
        std::string problems;
        for (const auto& f : report.findings)
            problems += "\n  " + pko::format(f);
        return fail(Error::invalid(tree.display_root() +
                                   ": not a valid Package Operator package (" +
                                   std::to_string(errors) + (errors == 1 ? " error" : " errors") +
                                   "), nothing built:" + problems));
    }
    ImageContent c;
    c.kind = ImageKind::package;
    c.package = loaded->package.manifest.name;
    c.warnings = loaded->warnings;
    return c;
}

// The files of a Package Operator package image, as kubectl-package lays them out: every regular
// file of the directory under package/, in byte order, without directory entries; names with a
// component starting with '.' (.test-fixtures/ ...), symbolic links and special files left out.
Result<std::vector<ImageFile>> package_files(const io::Tree& tree, const ContentOptions& opts) {
    std::vector<ImageFile> files;
    auto listing = tree.list();
    if (!listing) return fail(std::move(listing).error());
    for (const auto& e : *listing) {
        if (e.rel.empty() || e.is_dir() || e.link || e.problem || hidden_path(e.rel)) continue;
        auto bytes = read_entry(tree, e, opts.max_file_size);
        if (!bytes) return fail(std::move(bytes).error());
        files.push_back({"package/" + e.rel, {}, false, std::move(*bytes)});
    }
    std::sort(files.begin(), files.end(),
              [](const ImageFile& a, const ImageFile& b) { return a.path < b.path; });
    return files;
}

// The check of what `kind` of input the tree is (labels, no files).
Result<ImageContent> check_content(const io::Tree& tree, ImageKind kind,
                                   const ContentOptions& opts) {
    Result<ImageContent> c = fail(Error::internal("no content"));
    switch (kind) {
    case ImageKind::package:
        c = package_check(tree);
        break;
    case ImageKind::bundle:
        c = bundle_check(tree);
        break;
    case ImageKind::catalog:
        c = catalog_check(tree, opts);
        break;
    }
    if (!c) return c;
    for (const auto& [k, v] : opts.labels)
        c->labels[k] = v;
    return c;
}

Result<std::vector<ImageFile>> content_files(const io::Tree& tree, ImageKind kind,
                                             const ContentOptions& opts) {
    switch (kind) {
    case ImageKind::bundle:
        return bundle_files(tree, opts);
    case ImageKind::catalog:
        return catalog_files(tree, opts);
    case ImageKind::package:
        return package_files(tree, opts);
    }
    return fail(Error::internal("unknown image kind"));
}

// The layer of a Package Operator package: the tar go-containerregistry's crane.Layer writes
// for kubectl-package (files only, mode 0, in the order given), so that its diff_id is
// kubectl-package's for the same files; gzip compressed (zlib's bytes, not Go's).
// Directory entries given are left out (kubectl-package writes none), files go in byte order.
Result<oci::Layer> package_layer(const std::vector<ImageFile>& in) {
    std::vector<oci::TarEntry> entries;
    entries.reserve(in.size());
    for (const auto& f : in)
        if (!f.dir)
            entries.push_back({oci::TarEntry::Type::file,
                               f.path,
                               f.source ? std::string() : f.bytes,
                               {},
                               0,
                               f.data(),
                               f.source});
    std::sort(entries.begin(), entries.end(),
              [](const oci::TarEntry& x, const oci::TarEntry& y) { return x.name < y.name; });
    const std::string tar = oci::write_tar_as_go(entries);
    oci::Layer l;
    l.diff_id = sha256_digest(tar);
    auto gz = oci::gzip(tar);
    if (!gz) return fail(std::move(gz).error());
    l.blob = std::move(*gz);
    l.digest = sha256_digest(l.blob);
    l.size = static_cast<std::int64_t>(l.blob.size());
    l.media_type = std::string(oci::media::docker_layer_gzip);
    return l;
}

// Go's zero time, as go-containerregistry's mutate.Canonical leaves every timestamp.
constexpr const char* go_zero_time = "0001-01-01T00:00:00Z";

// A Package Operator package image as kubectl-package writes it: Docker schema 2 media types, a
// config with go-containerregistry's fields in its order (architecture, created, history, os,
// rootfs, config), one image per platform (linux/amd64 when none is asked for, as
// kubectl-package) and a Docker manifest list when there are several.
Result<oci::Content> assemble_package(const ImageContent& content, const oci::Layer& layer,
                                      const BuildOptions& opts) {
    std::vector<oci::Platform> platforms = opts.platforms;
    if (platforms.empty()) platforms.push_back(package_platform());
    for (std::size_t i = 0; i < platforms.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (platforms[j] == platforms[i])
                return fail(Error::usage("--platform " + platforms[i].str() + " given twice"));
    std::vector<oci::Content> images;
    for (const auto& platform : platforms) {
        oci::ImageConfig config;
        config.architecture = platform.architecture;
        config.os = platform.os;
        config.variant = platform.variant;
        config.labels = content.labels;
        config.diff_ids = {layer.diff_id};
        io::Node raw = io::Node::map();
        raw.set("architecture", io::Node::string(platform.architecture));
        raw.set("created", io::Node::string(go_zero_time));
        io::Node history = io::Node::seq();
        io::Node h = io::Node::map();
        h.set("created", io::Node::string(go_zero_time));
        history.push(std::move(h));
        raw.set("history", std::move(history));
        raw.set("os", io::Node::string(platform.os));
        io::Node rootfs = io::Node::map();
        rootfs.set("type", io::Node::string("layers"));
        rootfs.set("diff_ids", io::Node::seq());
        raw.set("rootfs", std::move(rootfs));
        raw.set("config", io::Node::map());
        config.raw = std::move(raw);
        const std::string cj = oci::to_json(config);

        oci::Manifest m;
        m.media_type = std::string(oci::media::docker_manifest);
        m.config = {std::string(oci::media::docker_config),
                    sha256_digest(cj),
                    static_cast<std::int64_t>(cj.size()),
                    std::nullopt,
                    {}};
        m.layers.push_back({layer.media_type, layer.digest, layer.size, std::nullopt, {}});
        const std::string mj = oci::to_json(m);
        oci::Content c;
        c.blobs[layer.digest] = layer.blob;
        c.blobs[m.config.digest] = cj;
        c.root_digest = sha256_digest(mj);
        c.root_media_type = m.media_type;
        c.blobs[c.root_digest] = mj;
        images.push_back(std::move(c));
    }
    if (images.size() == 1) return std::move(images.front());
    return oci::assemble_index(images, {}, oci::media::docker_manifest_list);
}

// The layer of `files`.
Result<oci::Layer> layer_of(std::vector<ImageFile> in) {
    std::vector<oci::LayerFile> files;
    files.reserve(in.size());
    for (auto& f : in) {
        oci::LayerFile lf;
        lf.path = std::move(f.path);
        lf.bytes = std::move(f.bytes);
        lf.borrowed = f.data();
        lf.keep = std::move(f.source);
        lf.is_dir = f.dir;
        lf.mode = f.dir ? 0755 : 0644;
        files.push_back(std::move(lf));
    }
    return oci::build_layer(std::move(files));
}

// The image (or index) of `layer` with what `content` says of it (labels, entrypoint, cmd).
Result<oci::Content> assemble(const ImageContent& content, oci::Layer layer,
                              const BuildOptions& opts) {
    if (content.kind == ImageKind::package) return assemble_package(content, layer, opts);
    const std::vector<oci::Layer> layers{std::move(layer)};
    std::vector<oci::Platform> platforms = opts.platforms;
    if (platforms.empty()) platforms.push_back(oci::host_platform());
    auto edit = [&](oci::ImageConfig& config) {
        for (const auto& [k, v] : content.labels)
            config.labels[k] = v;
        if (!content.entrypoint.empty()) config.entrypoint = content.entrypoint;
        if (!content.cmd.empty()) config.cmd = content.cmd;
    };
    std::vector<oci::Content> images;
    for (const auto& platform : platforms) {
        if (opts.base != nullptr) {
            auto img = oci::assemble_on_base(*opts.base, platform, edit, layers);
            if (!img) {
                Error e = std::move(img).error();
                e.message = opts.base_name + ": " + e.message;
                return fail(std::move(e));
            }
            images.push_back(std::move(*img));
            continue;
        }
        oci::ImageConfig config;
        config.os = platform.os;
        config.architecture = platform.architecture;
        config.variant = platform.variant;
        edit(config);
        images.push_back(oci::assemble_image(std::move(config), layers));
    }
    if (images.size() == 1) return std::move(images.front());
    return oci::assemble_index(images);
}

} // namespace

const char* kind_description(ImageKind k) {
    switch (k) {
    case ImageKind::bundle:
        return "registry+v1 bundle";
    case ImageKind::catalog:
        return "File-Based Catalog";
    case ImageKind::package:
        return "Package Operator package";
    }
    return "";
}

const char* kind_name(ImageKind k) {
    switch (k) {
    case ImageKind::bundle:
        return "bundle";
    case ImageKind::catalog:
        return "catalog";
    case ImageKind::package:
        return "package";
    }
    return "";
}

Result<ImageKind> detect(const io::Tree& tree) {
    if (!tree.is_directory()) return ImageKind::catalog;
    auto top = tree.list_dir("");
    if (!top) return fail(std::move(top).error());
    bool manifests = false, metadata = false;
    for (const auto& e : *top) {
        std::string_view n = e.name();
        if (!e.is_dir() && (n == "manifest.yaml" || n == "manifest.yml")) return ImageKind::package;
        if (e.is_dir() && n == "manifests") manifests = true;
        if (e.is_dir() && n == "metadata") metadata = true;
    }
    return manifests && metadata ? ImageKind::bundle : ImageKind::catalog;
}

Result<ImageContent> image_content(const io::Tree& tree, const ContentOptions& opts) {
    auto kind = detect(tree);
    if (!kind) return fail(std::move(kind).error());
    auto c = check_content(tree, *kind, opts);
    if (!c) return c;
    auto files = content_files(tree, *kind, opts);
    if (!files) return fail(std::move(files).error());
    c->files = std::move(*files);
    return c;
}

oci::Platform package_platform() {
    return {"linux", "amd64", ""};
}

Result<oci::Content> build_image(const ImageContent& content, const BuildOptions& opts) {
    auto layer =
        content.kind == ImageKind::package ? package_layer(content.files) : layer_of(content.files);
    if (!layer) return fail(std::move(layer).error());
    return assemble(content, std::move(*layer), opts);
}

Result<Built> build(const io::Tree& tree, const ContentOptions& copts, const BuildOptions& bopts) {
    auto kind = detect(tree);
    if (!kind) return fail(std::move(kind).error());
    // The input is checked on a thread of its own while its files are read and the layer is
    // compressed; the layer is only used when the check passes.
    Result<ImageContent> checked = fail(Error::internal("not checked"));
    // What the check throws (out of memory) is rethrown on this thread once it is joined.
    FirstError thrown;
    auto check = [&] { thrown.run([&] { checked = check_content(tree, *kind, copts); }); };
    // (joined on the way out if reading the files or making the layer throws)
    std::jthread checker = try_thread([&] {
        huge_thread_heap();
        check();
    });
    Result<oci::Layer> layer = fail(Error::internal("not built"));
    if (auto files = content_files(tree, *kind, copts); !files)
        layer = fail(std::move(files).error());
    else if (*kind == ImageKind::package)
        layer = package_layer(*files);
    else
        layer = layer_of(std::move(*files));
    if (checker.joinable())
        checker.join();
    else
        check(); // no thread could be started for it
    thrown.rethrow();
    if (!checked) return fail(std::move(checked).error());
    if (!layer) return fail(std::move(layer).error());
    auto image = assemble(*checked, std::move(*layer), bopts);
    if (!image) return fail(std::move(image).error());
    return Built{std::move(*checked), std::move(*image)};
}

Result<ImageClass> classify(const std::map<std::string, std::string>& labels, const io::Tree& files,
                            const std::string& image) {
    if (auto it = labels.find(configs_label); it != labels.end()) {
        std::string dir = it->second;
        while (!dir.empty() && dir.front() == '/')
            dir.erase(0, 1);
        while (!dir.empty() && dir.back() == '/')
            dir.pop_back();
        return ImageClass{ImageKind::catalog, dir};
    }
    if (labels.count(package_label)) return ImageClass{ImageKind::bundle, {}};
    if (labels.count(sqlite_label))
        return fail(Error::invalid(text::quote(image) +
                                   ": sqlite-based index images are no longer supported"));
    for (const char* m : {"package/manifest.yaml", "package/manifest.yml"}) {
        auto e = files.find(m);
        if (!e) return fail(std::move(e).error());
        if (*e && !(*e)->is_dir()) return ImageClass{ImageKind::package, "package"};
    }
    if (labels.empty())
        return fail(Error::invalid(text::quote(image) +
                                   ": image type could not be determined: image has no labels"));
    std::string list;
    for (const auto& [k, v] : labels)
        list += "\n  " + k + "=" + v;
    return fail(Error::invalid(text::quote(image) +
                               ": image type could not be determined, found labels" + list));
}

} // namespace kpkg::plan
