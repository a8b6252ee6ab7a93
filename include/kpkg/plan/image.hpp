// What `kpkg build` puts in a package image: which kind of package a tree is, its files as they
// are laid out in the image, and the image's labels — as opm lays out bundle and catalog images
// (bundle: /manifests, /metadata and, from operator-sdk, /tests/scorecard, labelled with the
// bundle's annotations; catalog: /configs, labelled with the configs label), and Package
// Operator packages as kubectl-package lays them out (every file under /package, no labels). The
// input is validated with the same rules as `kpkg bundle validate`, `kpkg catalog validate` and
// `kpkg package validate`: an invalid input builds nothing.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/oci/content.hpp"
#include "kpkg/oci/image.hpp"

namespace kpkg::plan {

enum class ImageKind : std::uint8_t { bundle, catalog, package };

// "registry+v1 bundle", "File-Based Catalog", "Package Operator package".
const char* kind_description(ImageKind k);
// "bundle", "catalog", "package".
const char* kind_name(ImageKind k);

// What the tree holds: a Package Operator package when its root has manifest.yaml or
// manifest.yml; a registry+v1 bundle when it has a manifests/ directory and a metadata/
// directory; else a File-Based Catalog (a single file is always a catalog). Errors: the root
// cannot be listed (exit 1).
Result<ImageKind> detect(const io::Tree& tree);

// One entry of the image's filesystem: a path relative to its root without a leading '/'
// ("manifests/csv.yaml"), a directory or a regular file. A file's bytes are `bytes`, or the
// contents `source` holds as it was read (a mapped file is not copied).
struct ImageFile {
    std::string path;
    std::string bytes;
    bool dir = false;
    std::shared_ptr<const io::Contents> source{};
    std::string_view data() const { return source ? source->text() : std::string_view(bytes); }
};

// The label keys kpkg writes.
inline constexpr const char* configs_label = "operators.operatorframework.io.index.configs.v1";
inline constexpr const char* package_label = "operators.operatorframework.io.bundle.package.v1";
inline constexpr const char* sqlite_label = "operators.operatorframework.io.index.database.v1";

struct ImageContent {
    ImageKind kind = ImageKind::bundle;
    // The package a bundle belongs to, a Package Operator package's name; "" for a catalog.
    std::string package;
    // Every directory and file, in path order, parents before their entries.
    std::vector<ImageFile> files;
    std::map<std::string, std::string> labels;
    // Only for a catalog layered on a base image (an opm image): how it is run.
    std::vector<std::string> entrypoint, cmd;
    // What was left out and why (a Package Operator package's symbolic links), to show the user.
    std::vector<std::string> warnings;
};

struct ContentOptions {
    // The catalog is layered on a base image (opm's): it is given opm's entrypoint and a command
    // serving /configs without a pre-built cache (opm builds its cache when it starts).
    bool base_image = false;
    // Catalogs: validated as `kpkg catalog validate --lenient` does (the two findings older opm
    // releases accept are warnings).
    bool lenient = false;
    // Labels added last (--label), replacing those of the same key.
    std::map<std::string, std::string> labels;
    // Limits for every file read.
    std::uint64_t max_file_size = std::uint64_t{64} << 20;
};

// The image content of the bundle, catalog or Package Operator package `tree` is. A package's
// files: every regular file under package/ in byte order of the path, no directories, names with
// a component starting with '.' (.test-fixtures/) and symbolic links left out (warnings), as
// kubectl-package packs them. Errors: the input does not validate (exit 3; the message lists every
// error as file:line:col: message, one per line); a file cannot be read (exit 1).
Result<ImageContent> image_content(const io::Tree& tree, const ContentOptions& opts = {});

struct BuildOptions {
    // One image per platform; several make an image index whose images share the layer. Empty:
    // the host's platform.
    std::vector<oci::Platform> platforms;
    // The image to layer the content on (for each platform, its image for that platform);
    // nullptr: scratch, the content's layer alone.
    const oci::Content* base = nullptr;
    // How errors name the base image.
    std::string base_name;
};

// The image (or image index) of `content`: one gzip layer of its files (reproducible: see
// oci::build_layer), an OCI image config with the content's labels (and, on a base, the base's
// config with the labels merged, the entrypoint and command replaced when the content has them,
// and the layer's diff_id appended), OCI manifests, and an index when there are several
// platforms. The result holds every blob (the base's too) and names the manifest or index as its
// root. Same content and options, same digests. Errors: the base has no image for a platform
// (exit 3), it is not a well-formed image (exit 3), libarchive is missing (exit 1).
// A Package Operator package's image is instead built as kubectl-package builds it
// (go-containerregistry's crane.Layer, mutate.Canonical): the layer's tar as Go's archive/tar
// writes it (oci::write_tar_as_go, files with mode 0), so its diff_id is kubectl-package's;
// Docker schema 2 media types; a config {architecture, created "0001-01-01T00:00:00Z", history
// [{created}], os, rootfs, config {Labels}} with go-containerregistry's bytes; one image per
// platform, linux/amd64 (package_platform) when none is given, a Docker manifest list when
// several (sharing the layer). The gzip bytes are zlib's, not Go's: the layer digest differs from
// kubectl-package's, the diff_id and config do not.
Result<oci::Content> build_image(const ImageContent& content, const BuildOptions& opts = {});

// The platform of a Package Operator package image when none is asked for: linux/amd64, the only
// one kubectl-package builds.
oci::Platform package_platform();

// image_content + build_image in one, faster: the input is checked on one thread while its files
// are read and the layer compressed on the others. `content` has no files.
struct Built {
    ImageContent content;
    oci::Content image;
};
Result<Built> build(const io::Tree& tree, const ContentOptions& copts = {},
                    const BuildOptions& bopts = {});

// What an image is, as opm tells from its config labels: the configs label first (a catalog at
// that path), else the bundle package label (a bundle), else the sqlite index label (refused:
// "sqlite-based index images are no longer supported"). Without any of them, an image whose
// files have package/manifest.yaml (or .yml) is a Package Operator package (kubectl-package
// writes no labels). Errors (exit 3) name `image` and list its labels, as opm does.
struct ImageClass {
    ImageKind kind = ImageKind::bundle;
    // catalog: where the catalog is in the image ("configs", no leading '/'); package: "package".
    std::string root;
};
Result<ImageClass> classify(const std::map<std::string, std::string>& labels, const io::Tree& files,
                            const std::string& image);

} // namespace kpkg::plan
