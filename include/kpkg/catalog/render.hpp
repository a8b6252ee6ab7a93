// `kpkg catalog render`: catalogs and bundle directories to one File-Based Catalog, written the
// way `opm render` writes it (operator-registry alpha/declcfg/write.go).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"

namespace kpkg::catalog {

enum class RenderFormat { json, yaml };

struct RenderOptions {
    RenderFormat format = RenderFormat::json;
};

// True when `dir` looks like a registry+v1 bundle directory (has manifests/ and metadata/).
bool is_bundle_dir(const std::filesystem::path& dir);

// Loads every source (catalog directory, file, "-", or bundle directory), merges the blobs and
// hands the rendered catalog to `sink` blob by blob: packages by name; per package the
// olm.package blob, channels by name, bundles by name, other schemas, then olm.deprecations.
// Nothing is handed to `sink` unless every source loads and renders.
Result<void> render(const std::vector<std::string>& sources, const RenderOptions& opts,
                    const std::function<void(std::string_view)>& sink);

// The same into one string (for tests and small catalogs).
Result<std::string> render_to_string(const std::vector<std::string>& sources,
                                     const RenderOptions& opts = {});

} // namespace kpkg::catalog
