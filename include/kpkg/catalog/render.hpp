// `kpkg catalog render`: catalogs and bundle directories to one File-Based Catalog, written
// byte for byte as `opm render` writes it (operator-registry alpha/action/render.go and
// alpha/declcfg/write.go).
//
// Rendering is two steps, so that nothing is written unless every source loads:
// prepare_render() reads and checks every source and reduces each blob to the compact JSON opm
// holds for it (see src/catalog/render_blob.hpp for the rules), then RenderedCatalog::write()
// puts the blobs in opm's order and writes them as JSON (json.Encoder, four-space indent, no HTML
// escaping) or YAML ("---" and sigs.k8s.io/yaml's JSONToYAML of that JSON), in pieces.
//
// The order: packages by name; within a package its olm.package blob(s), its channels by name,
// its bundles by name, its blobs of other schemas by schema (keeping their input order within a
// schema), then its olm.deprecations; last, blobs of other schemas that name no package, in input
// order. Blobs of the four known schemas that name no package are dropped, as opm drops them.
// Input order is source order, then path order within a catalog directory, then position in the
// file (opm reads a directory's files concurrently, so its own order among equal keys varies from
// run to run; kpkg's is the order a sequential read gives). Equal names are ordered as Go's
// sort.Slice leaves them.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"

namespace kpkg::catalog {

enum class RenderFormat { json, yaml };

struct RenderOptions {
    RenderFormat format = RenderFormat::json;
    // Worker threads for reading and for formatting (0: one per core). The output does not
    // depend on it.
    unsigned threads = 0;
    io::Limits limits;
};

// A source given as a tree (an image's files, read by the caller): a catalog, or a bundle whose
// olm.bundle names `image` (as opm renders a bundle image: "image" is its reference).
struct TreeSource {
    std::shared_ptr<const io::Tree> tree;
    bool bundle = false;
    std::string image;
};

// One source: a path (as below), or a tree.
struct RenderSource {
    std::string path;
    std::optional<TreeSource> tree;
};

// True when `dir` looks like a registry+v1 bundle directory (has manifests/ and metadata/).
bool is_bundle_dir(const std::filesystem::path& dir);

// Every blob of the sources, checked and in opm's order, ready to be written.
class RenderedCatalog {
public:
    RenderedCatalog();
    ~RenderedCatalog();
    RenderedCatalog(RenderedCatalog&&) noexcept;
    RenderedCatalog& operator=(RenderedCatalog&&) noexcept;

    // Number of blobs that will be written.
    std::size_t size() const;

    // Writes every blob in `format`, handing the output to `sink` in order, in pieces of up to
    // about 1 MiB. Formatting runs on `threads` workers (0: one per core).
    void write(RenderFormat format, const std::function<void(std::string_view)>& sink,
               unsigned threads = 0) const;

    struct Impl;

private:
    explicit RenderedCatalog(std::unique_ptr<Impl> impl);
    friend Result<RenderedCatalog> prepare_render(const std::vector<RenderSource>&,
                                                  const RenderOptions&);
    std::unique_ptr<Impl> impl_;
};

// Loads every source (a catalog directory, a catalog file, "-" for standard input, or a bundle
// directory) and checks every blob as opm's loader does. The first failing source, in order,
// gives the error: a file that is neither JSON nor YAML, a blob that is not an object, has no
// schema or wrong field types, an olm.bundle.object that is not base64 (exit 3), an unreadable
// source (exit 1). Nothing is written by this step.
Result<RenderedCatalog> prepare_render(const std::vector<std::string>& sources,
                                       const RenderOptions& opts = {});
// The same with sources that may be trees (images): a catalog tree's files are read as a
// directory's are; a bundle tree is rendered as a bundle directory is, with its image.
Result<RenderedCatalog> prepare_render(const std::vector<RenderSource>& sources,
                                       const RenderOptions& opts = {});

// prepare_render() and write() in one call: nothing reaches `sink` unless every source loads.
Result<void> render(const std::vector<std::string>& sources, const RenderOptions& opts,
                    const std::function<void(std::string_view)>& sink);

// The same into one string (for tests and small catalogs).
Result<std::string> render_to_string(const std::vector<std::string>& sources,
                                     const RenderOptions& opts = {});

} // namespace kpkg::catalog
