// The compact in-memory catalog: what validate, list, graph, diff and resolve work on.
//
// Every string is interned once in a StringPool and referred to by a 32-bit id, so comparing two
// names is comparing two integers; every variable-length list (a channel's entries, a bundle's
// properties, an entry's skips) is a range into one flat vector of the Catalog. Positions are a
// file id and a line/column. The whole value is a handful of vectors of plain structs, cheap to
// build, to walk and to write to (and map back from) a binary cache file.
//
// What is kept is what the analyses need, typed: the fields of olm.package, olm.channel,
// olm.bundle and olm.deprecations blobs, typed properties (olm.package, olm.gvk,
// olm.gvk.required, olm.package.required, olm.label...), and the value of any other property as
// compact JSON text. Payloads of olm.bundle.object and olm.csv.metadata are not kept unless the
// loader is asked to (LoadOptions::keep_payloads): only their kind, size and digest.
// Rendering a catalog back to FBC does not use this type (see kpkg/catalog/render.hpp).
//
// Problems found while building it (a file that does not parse, a blob without schema, a field
// of the wrong type, a malformed property value) do not stop the load: they are collected in
// `problems`, in file order, so `kpkg catalog validate` can report all of them; commands that
// need a clean catalog call check(). Their rules: "catalog.parse" (a file that does not parse;
// the blobs before the error are kept), "catalog.too-large" (a file over Limits::max_file_bytes,
// not read), "catalog.blob" (a document that is not an object, has no schema, has keys differing
// only in case, a meta key that is not a string: the blob is left out), "package.field",
// "channel.field", "bundle.field", "deprecation.field" (a field of the wrong type: left empty),
// "bundle.property" (a property opm's property.Parse rejects: left out); at most 1,000 per file,
// then one "catalog.too-many-problems" saying how many more there were.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kpkg/core/error.hpp"
#include "kpkg/core/result.hpp"
#include "kpkg/model/finding.hpp"

namespace kpkg::model {

// A string id: an index into a StringPool. 0 is always the empty string (and "absent").
using Str = std::uint32_t;

// Interned strings: the same text always gets the same id. Views returned stay valid for the
// pool's lifetime (text lives in stable blocks, never moved).
class StringPool {
public:
    StringPool();
    ~StringPool();
    StringPool(StringPool&&) noexcept;
    StringPool& operator=(StringPool&&) noexcept;
    StringPool(const StringPool&) = delete;
    StringPool& operator=(const StringPool&) = delete;

    Str intern(std::string_view s);
    // The same, with the text's hash as hash() gives it (to move strings between pools cheaply).
    Str intern(std::string_view s, std::uint64_t hash);
    static std::uint64_t hash(std::string_view s);
    // The hash of an interned string.
    std::uint64_t hash_of(Str id) const;
    // The id of `s` if it was interned, without adding it.
    std::optional<Str> find(std::string_view s) const;
    std::string_view operator[](Str id) const { return views_[id]; }
    std::size_t size() const { return views_.size(); }

    // The pool as flat arrays, and a pool made back of them, for the binary catalog cache: the
    // texts of ids 1.. concatenated, their sizes and hashes, and the open-addressing table of
    // ids (a power of two of slots, 0 for empty).
    struct Flat {
        std::string text;
        std::vector<std::uint32_t> sizes;
        std::vector<std::uint64_t> hashes;
        std::vector<Str> slots;
    };
    // Without `with_text`, Flat::text stays empty (the caller writes the texts from the pool).
    Flat flatten(bool with_text = true) const;
    // nullopt when the arrays do not fit together (sizes beyond the text, slots out of range).
    static std::optional<StringPool> from_flat(Flat&& flat);
    // The same without copying the text: the views point into `text` where it lies (the mapped
    // cache image), which `keep` keeps alive for as long as the pool lives (moves included).
    // `hashes` is by id, hashes[0] the empty string's (0).
    static std::optional<StringPool> from_mapped(std::string_view text,
                                                 const std::vector<std::uint32_t>& sizes,
                                                 std::vector<std::uint64_t>&& hashes,
                                                 std::vector<Str>&& slots,
                                                 std::shared_ptr<const void> keep);

private:
    struct Impl;
    std::vector<std::string_view> views_;
    std::unique_ptr<Impl> impl_;
};

// Where a blob or entry is: files[file] of the Catalog (0: unknown), 1-based line and column
// (0: unknown), 0-based document index in the file (-1: unknown).
struct Pos {
    std::uint32_t file = 0;
    std::uint32_t line = 0;
    std::uint32_t column = 0;
    std::int32_t document = -1;

    bool operator==(const Pos&) const = default;
};

// What a finding about a catalog is about: the catalog as a whole (load problems), or a
// package, channel, bundle or olm.deprecations blob.
enum class Scope : std::uint8_t { catalog, package, channel, bundle, deprecation };
const char* scope_name(Scope s); // "catalog", "package", "channel", "bundle", "deprecation"

// A finding about the catalog (kpkg/model/finding.hpp) and what it is about. Used for load
// problems (Catalog::problems, errors; Catalog::notes, warnings) and by catalog validation
// (kpkg/catalog/validate.hpp). Rules: e.g. "catalog.parse", "bundle.property", "channel.head".
struct CatalogFinding : Finding {
    Scope scope = Scope::catalog;
    std::string package; // "" when about no package
    std::string channel; // "" unless about a channel or a channel's entry
    std::string bundle;  // "" unless scope is bundle
};

enum class PropKind : std::uint8_t {
    package,          // olm.package {packageName, version, release?}: a, b, c
    gvk,              // olm.gvk {group, version, kind}: a, b, c
    gvk_required,     // olm.gvk.required {group, version, kind}: a, b, c
    package_required, // olm.package.required {packageName, versionRange}: a, b
    label,            // olm.label {label}: a
    label_required,   // olm.label.required {label}: a
    deprecated,       // olm.deprecated (legacy): never chosen by OLM's resolver
    constraint,       // olm.constraint: json holds the value (evaluated by the resolver)
    bundle_object,    // olm.bundle.object {data}: payload kept only with keep_payloads
    csv_metadata,     // olm.csv.metadata: payload kept only with keep_payloads
    other,            // any other type: json holds the value
};

struct Property {
    PropKind kind = PropKind::other;
    Str type = 0; // the type as written
    Str a = 0, b = 0, c = 0;
    // The value as compact JSON, as opm holds it: object keys sorted (the last of duplicate keys
    // wins), numbers as Go writes a float64, strings escaped as Go's encoder escapes them (HTML
    // characters as they are). Kept for constraint, other, label, label_required, deprecated, and
    // for every kind when the loader keeps payloads; 0 when not kept.
    Str json = 0;
    std::uint32_t value_bytes = 0; // size of that compact JSON, kept or not
    // A 64-bit structural hash of the value, kept or not: the same value gives the same digest
    // whatever the order of its object keys and whether it was read from YAML or JSON.
    std::uint64_t digest = 0;

    bool operator==(const Property&) const = default;
};

struct RelatedImage {
    Str name = 0;
    Str image = 0;

    bool operator==(const RelatedImage&) const = default;
};

struct Package {
    Str name = 0;
    Str default_channel = 0;
    Str description = 0;
    std::uint32_t props_begin = 0, props_count = 0; // into Catalog::properties
    Pos pos;

    bool operator==(const Package&) const = default;
};

struct Entry {
    Str name = 0;
    Str replaces = 0;
    Str skip_range = 0;
    std::uint32_t skips_begin = 0, skips_count = 0; // into Catalog::skips
    Pos pos;

    bool operator==(const Entry&) const = default;
};

struct Channel {
    Str package = 0;
    Str name = 0;
    std::uint32_t entries_begin = 0, entries_count = 0; // into Catalog::entries
    std::uint32_t props_begin = 0, props_count = 0;     // into Catalog::properties
    Pos pos;

    bool operator==(const Channel&) const = default;
};

struct Bundle {
    Str package = 0;
    Str name = 0;
    Str image = 0;
    // The version of the bundle's olm.package property when it has exactly one; else 0.
    Str version = 0;
    std::uint32_t props_begin = 0, props_count = 0;   // into Catalog::properties
    std::uint32_t images_begin = 0, images_count = 0; // into Catalog::related_images
    Pos pos;

    bool operator==(const Bundle&) const = default;
};

// One entry of an olm.deprecations blob: reference {schema, name} and message.
struct DeprecationEntry {
    Str schema = 0; // olm.package, olm.channel or olm.bundle (as written)
    Str name = 0;   // channel or bundle name; 0 for olm.package
    Str message = 0;
    Pos pos;

    bool operator==(const DeprecationEntry&) const = default;
};

struct Deprecation {
    Str package = 0;
    std::uint32_t entries_begin = 0, entries_count = 0; // into Catalog::deprecation_entries
    Pos pos;

    bool operator==(const Deprecation&) const = default;
};

// A blob of a schema kpkg does not model.
struct Other {
    Str schema = 0;
    Str package = 0;
    Str name = 0;
    Pos pos;

    bool operator==(const Other&) const = default;
};

inline constexpr std::uint32_t npos32 = 0xffffffffu;

class Catalog {
public:
    StringPool strings;
    // files[0] = "" (unknown); then every file read, in path order, as named in positions.
    std::vector<std::string> files{std::string()};
    // "sha256:<hex>" over the catalog's content, set by the loader: SHA-256 of the line
    // "kpkg-catalog-content-v1\n" followed, for each file read in path order, by its path
    // relative to the catalog directory (a single file: its name; standard input: "-"), a NUL
    // byte and the 32-byte SHA-256 of its bytes. The same content gives the same digest wherever
    // it lies. Lockfiles and the binary cache use it.
    std::string content_digest;

    // Blobs in load order: files in path order, documents in file order.
    std::vector<Package> packages;
    std::vector<Channel> channels;
    std::vector<Bundle> bundles;
    std::vector<Deprecation> deprecations;
    std::vector<Other> others;

    // The flat storage the ranges above point into.
    std::vector<Entry> entries;
    std::vector<Str> skips;
    std::vector<Property> properties;
    std::vector<RelatedImage> related_images;
    std::vector<DeprecationEntry> deprecation_entries;

    // Problems found while loading, in file order (severity error); the blobs concerned are
    // left out or kept with the offending field empty.
    std::vector<CatalogFinding> problems;
    // What opm accepts but is most likely a mistake (a misspelt field of a known schema, which
    // opm ignores), in file order (severity warning): warnings of `kpkg catalog validate`,
    // unseen by other commands.
    std::vector<CatalogFinding> notes;

    // --- access ---
    std::string_view str(Str id) const { return strings[id]; }
    std::string string(Str id) const { return std::string(strings[id]); }
    SourcePos source_pos(const Pos& p) const;

    std::span<const Entry> entries_of(const Channel& c) const {
        return {entries.data() + c.entries_begin, c.entries_count};
    }
    std::span<const Str> skips_of(const Entry& e) const {
        return {skips.data() + e.skips_begin, e.skips_count};
    }
    std::span<const Property> properties_of(const Bundle& b) const {
        return {properties.data() + b.props_begin, b.props_count};
    }
    std::span<const Property> properties_of(const Channel& c) const {
        return {properties.data() + c.props_begin, c.props_count};
    }
    std::span<const Property> properties_of(const Package& p) const {
        return {properties.data() + p.props_begin, p.props_count};
    }
    std::span<const RelatedImage> related_images_of(const Bundle& b) const {
        return {related_images.data() + b.images_begin, b.images_count};
    }
    std::span<const DeprecationEntry> entries_of(const Deprecation& d) const {
        return {deprecation_entries.data() + d.entries_begin, d.entries_count};
    }

    // --- lookups (built by index(); the first blob of a name wins, as duplicates are errors) ---
    // Builds the lookup tables below; the loader calls it once everything is added.
    void index();

    struct PackageInfo {
        std::uint32_t package = npos32;      // index into packages
        std::vector<std::uint32_t> channels; // indexes into channels, in load order
        std::vector<std::uint32_t> bundles;  // indexes into bundles, in load order
        std::uint32_t deprecation = npos32;  // index into deprecations
    };
    // Packages by name: every name used by an olm.package blob (package != npos32) or referred
    // to by a channel, bundle or deprecation blob (package == npos32 when no olm.package blob).
    const std::unordered_map<Str, PackageInfo>& by_package() const { return by_package_; }
    const PackageInfo* package_info(std::string_view name) const;
    // The bundle named `name` of package `package`, or npos32.
    std::uint32_t find_bundle(Str package, Str name) const;

    // The first problem as an invalid-input error (exit 3), for commands that need a catalog that
    // loads cleanly; ok when there is none.
    Result<void> check() const;

private:
    std::unordered_map<Str, PackageInfo> by_package_;
    std::unordered_map<std::uint64_t, std::uint32_t> bundle_index_;
};

} // namespace kpkg::model
