// pko/repo: Package Operator repository index files (kubectl package repository init|add|remove):
// a YAML stream whose first document is a Repository {metadata.name} and whose other documents
// are RepositoryEntry {metadata.name "<name>.<digest hex>", data{image (no tag), digest (hex,
// no "sha256:"), versions[], constraints[], name}}.
//
// kpkg writes them byte-stable: entries sorted by package name then digest, versions newest first
// (as upstream orders them, "v" + the semver), no creation timestamps (creationTimestamp: null).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::io {
class Tree;
}

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
// Repository first, a document of another kind or apiVersion, missing data fields, a data.digest
// that is not a sha256 digest's 64 hex digits, a bad version, a duplicate entry or version.
Result<RepositoryIndex> load_repository(std::string_view text, const std::string& file);

// The index a package's spec.repositories[].file names, read from the package's tree: `file` is
// relative to the package directory and may not leave it (an absolute name or one with ".." is
// refused, exit 3, as `field` ("spec.repositories[0].file") at `at`, its place in the manifest);
// symbolic links on the way are followed only while they stay inside the package, as the tree
// reads links (one leaving it is refused, exit 3, naming the link). Then as load_repository.
Result<RepositoryIndex> load_repository_file(const io::Tree& package, std::string_view file,
                                             const std::string& field, const SourcePos& at,
                                             std::uint64_t max_bytes = std::uint64_t{64} << 20);

// The file's bytes: "---\n" before each document, keys sorted as sigs.k8s.io/yaml writes them.
std::string write_repository(const RepositoryIndex& index);

// "sha256:<hex>" or "<hex>" -> "<hex>" (64 lower-case hex digits); an error otherwise. The rule is
// core/digest's check_digest.
Result<std::string> digest_hex(std::string_view digest);
// Whether `digest` is what a repository entry's data.digest holds: 64 lower-case hex digits,
// without "sha256:".
bool is_digest_hex(std::string_view digest);

} // namespace kpkg::pko
