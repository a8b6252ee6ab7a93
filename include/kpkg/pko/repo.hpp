// pko/repo: Package Operator repository index files (kubectl package repository init|add|remove):
// a YAML stream whose first document is a Repository {metadata.name} and whose other documents
// are RepositoryEntry {metadata.name "<name>.<digest hex>", data{image (no tag), digest (hex,
// no "sha256:"), versions[], constraints[], name}}.
//
// kpkg writes them byte-stable: entries sorted by package name then digest, versions newest first
// (as upstream orders them, "v" + the semver), no creation timestamps (creationTimestamp: null).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::pko {

inline constexpr std::string_view manifests_api_version = "manifests.package-operator.run/v1alpha1";

struct RepositoryEntry {
    std::string name;                  // data.name: the package's manifest name
    std::string image;                 // data.image: repository without tag or digest
    std::string digest;                // data.digest: hex, without "sha256:"
    std::vector<std::string> versions; // "v1.2.3", newest first
    io::Node constraints;              // data.constraints as written (a list, or null)
    io::Mark mark;                     // where the entry's document starts (0 when built)

    // metadata.name: "<name>.<digest>".
    std::string entry_name() const { return name + "." + digest; }
};

struct RepositoryIndex {
    std::string name;                     // the Repository's metadata.name
    std::vector<RepositoryEntry> entries; // sorted by name, then digest

    // Adds an entry: versions are checked (Masterminds strict semver, optional "v") and
    // normalised; a version the package already has, or a second entry with the same package
    // name and digest, is refused ("package repository inconsistent: ..."). The index is unchanged
    // on error.
    Result<void> add(RepositoryEntry entry);
    // Removes the entry of package `name` with `digest`; false when there is none.
    bool remove(std::string_view name, std::string_view digest);
    const RepositoryEntry* find(std::string_view name, std::string_view digest) const;
};

// Reads an index file's text. Errors (exit 3) name `file` and the line: a stream without a
// Repository first, a document of another kind or apiVersion, missing data fields, a bad version,
// a duplicate entry or version.
Result<RepositoryIndex> load_repository(std::string_view text, const std::string& file);

// The file's bytes: "---\n" before each document, keys sorted as sigs.k8s.io/yaml writes them.
std::string write_repository(const RepositoryIndex& index);

// "sha256:<hex>" or "<hex>" -> "<hex>" (64 lower-case hex digits); an error otherwise.
Result<std::string> digest_hex(std::string_view digest);

} // namespace kpkg::pko
