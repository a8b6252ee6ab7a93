// The kubeconform check of a package's objects (manifest test.kubeconform), as kubectl-package
// runs it: strict, missing schemas skipped, each rendered YAML file's documents validated
// against the JSON schema its kind and apiVersion select from the schema locations, in order.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"
#include "kpkg/pko/package.hpp"

namespace kpkg::pko {

// What an http(s) schema location answered.
struct UrlAnswer {
    long status = 0; // 200: `body` is the schema; 404: no schema there; else an error
    std::string body;
    bool too_large = false; // more than KubeconformOptions::max_schema_bytes
};
// Fetches an http(s) URL (the CLI: libcurl and the cache). An error (exit 1): the network, or
// offline a URL the cache does not hold.
using UrlFetcher = std::function<Result<UrlAnswer>(const std::string& url)>;

struct KubeconformOptions {
    UrlFetcher fetch;                                     // none: http locations are an error
    std::size_t max_schema_bytes = std::size_t{64} << 20; // a larger schema file is refused
};

// kubeconform's default locations (Package Operator's: kubernetes-json-schema, then the CRDs
// catalog) when the manifest names none.
std::vector<std::string> kubeconform_locations(const Manifest& m);

// The location template filled in for one resource, as kubeconform's schemaPath does (a
// location not ending in "json" gets kubernetes-json-schema's layout appended). An error for a
// template that does not parse.
Result<std::string> kubeconform_schema_path(std::string location, const std::string& kind,
                                            const std::string& api_version,
                                            const std::string& k8s_version, bool strict = true);

class Kubeconform {
public:
    // nullptr from make() when the manifest has no test.kubeconform, or when a location's
    // template does not execute (check_manifest reports it).
    static std::unique_ptr<Kubeconform> make(const Manifest& m, KubeconformOptions opts);
    ~Kubeconform();

    // The findings of one YAML file, of rule "package.kubeconform" (path relative to the
    // package, its text, where its lines are for messages: "" when it has no file of its own, as
    // a template's output). Throws Exception for an I/O or network error.
    std::vector<Finding> check_file(const std::string& path, const std::string& text,
                                    const std::string& display, const std::string& component);

private:
    struct Impl;
    explicit Kubeconform(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace kpkg::pko
