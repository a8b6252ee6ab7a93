#include "cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <concepts>
#include <cstring>
#include <memory>
#include <system_error>
#include <thread>
#include <type_traits>

#include "kpkg/core/atomic_file.hpp"
#include "kpkg/core/digest.hpp"
#include "kpkg/core/threads.hpp"
#include "values.hpp"

namespace kpkg::catalog::detail {

namespace fs = std::filesystem;
using model::Str;

namespace {

constexpr char kManifestMagic[8] = {'K', 'P', 'K', 'G', 'M', 'A', 'N', '1'};
constexpr char kImageMagic[8] = {'K', 'P', 'K', 'G', 'I', 'M', 'G', '1'};
// Bumped whenever the layout of either file or the model changes, and whenever the loader's
// reading of a file changes (what it accepts or rejects), so that no older verdict is replayed.
constexpr std::uint32_t kFormat = 7;
constexpr std::size_t kHeader = 32; // magic, format, reserved, payload size, checksum
// Entries changed this close to (or after) the start of the load that stored the cache are not
// proven by their stamps: a coarse clock gives two changes within one tick the same times.
constexpr std::uint64_t kRacyNs = 2'000'000'000ULL;
// The largest manifest read (one entry per file and directory: millions of files fit).
constexpr std::uint64_t kMaxManifestBytes = 256ULL << 20;
// An image is at most this many times the bytes of the files it was made from, plus kImageSlack:
// the bound is checked before the image is mapped, so a damaged or planted file claiming a huge
// size is not read. (A catalog whose image would not fit is not cached.)
constexpr std::uint64_t kImageFactor = 16;
constexpr std::uint64_t kImageSlack = 64ULL << 20;
constexpr std::size_t kMaxImages = 64;
constexpr std::size_t kMaxManifests = 512;

class Writer {
public:
    std::string buf;
    void u8(std::uint8_t v) { buf.push_back(static_cast<char>(v)); }
    void u32(std::uint32_t v) {
        char b[4];
        for (int i = 0; i < 4; ++i)
            b[i] = static_cast<char>(v >> (8 * i));
        buf.append(b, 4);
    }
    void u64(std::uint64_t v) {
        char b[8];
        for (int i = 0; i < 8; ++i)
            b[i] = static_cast<char>(v >> (8 * i));
        buf.append(b, 8);
    }
    void str(std::string_view s) {
        u32(static_cast<std::uint32_t>(s.size()));
        buf.append(s);
    }
    void pos(const model::Pos& p) {
        u32(p.file);
        u32(p.line);
        u32(p.column);
        u32(static_cast<std::uint32_t>(p.document));
    }
};

// Reads what Writer wrote; any read past the end makes it !ok (and returns zeros).
class Reader {
public:
    explicit Reader(std::string_view d) : d_(d) {}
    bool ok() const { return ok_; }
    bool at_end() const { return p_ == d_.size(); }
    // What has been read since position `from` (a value position() gave).
    std::size_t position() const { return p_; }
    std::string_view since(std::size_t from) const { return d_.substr(from, p_ - from); }
    std::uint8_t u8() {
        if (!need(1)) return 0;
        return static_cast<std::uint8_t>(d_[p_++]);
    }
    std::uint32_t u32() {
        if (!need(4)) return 0;
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i)
            v |= static_cast<std::uint32_t>(static_cast<unsigned char>(d_[p_ + i])) << (8 * i);
        p_ += 4;
        return v;
    }
    std::uint64_t u64() {
        if (!need(8)) return 0;
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i)
            v |= static_cast<std::uint64_t>(static_cast<unsigned char>(d_[p_ + i])) << (8 * i);
        p_ += 8;
        return v;
    }
    std::string_view str() {
        const std::uint32_t n = u32();
        if (!need(n)) return {};
        std::string_view s = d_.substr(p_, n);
        p_ += n;
        return s;
    }
    model::Pos pos() {
        model::Pos p;
        p.file = u32();
        p.line = u32();
        p.column = u32();
        p.document = static_cast<std::int32_t>(u32());
        return p;
    }
    // n bytes as they are.
    std::string_view bytes(std::size_t n) {
        if (!need(n)) return {};
        const std::string_view b = d_.substr(p_, n);
        p_ += n;
        return b;
    }
    // n little-endian numbers of T's size into out.
    template <class T>
    void array(T* out, std::size_t n) {
        // Nothing to copy: `out` may be the null data() of an empty vector, which memcpy must not
        // be given even for zero bytes.
        if (n == 0 || !need(n * sizeof(T))) return;
        if constexpr (std::endian::native == std::endian::little) {
            std::memcpy(out, d_.data() + p_, n * sizeof(T));
            p_ += n * sizeof(T);
        } else {
            for (std::size_t i = 0; i < n; ++i)
                out[i] = static_cast<T>(sizeof(T) == 8 ? u64() : u32());
        }
    }
    // A count of records of at least `min_size` bytes each, checked against what is left.
    std::size_t count(std::size_t min_size) {
        const std::uint64_t n = u64();
        if (!ok_ || n > (d_.size() - p_) / std::max<std::size_t>(min_size, 1)) {
            ok_ = false;
            return 0;
        }
        return static_cast<std::size_t>(n);
    }

private:
    bool need(std::size_t n) {
        if (!ok_ || d_.size() - p_ < n) {
            ok_ = false;
            return false;
        }
        return true;
    }
    std::string_view d_;
    std::size_t p_ = 0;
    bool ok_ = true;
};

// Tells the kernel that the whole pages of `bytes`, which lie in a read-only mapping of a
// cache file, are not needed now: they leave the resident set and are read back from the page
// cache if touched again. Never call it on memory that is not such a mapping (it would zero it).
void release_mapped(std::string_view bytes) {
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(bytes.data());
    const std::uintptr_t first = (begin + page - 1) & ~(page - 1);
    const std::uintptr_t last = (begin + bytes.size()) & ~(page - 1);
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

// The checksum of a payload: the hashes of its 4 MiB pieces, hashed. With `mapped`, each piece
// is released from memory once hashed, so checking a large image does not hold all of it.
std::uint64_t payload_sum(std::string_view payload, bool mapped) {
    constexpr std::size_t piece = 4 << 20;
    std::string sums;
    for (std::size_t at = 0; at < payload.size(); at += piece) {
        const std::string_view part = payload.substr(at, piece);
        const std::uint64_t h = hash_bytes(part, kFormat);
        sums.append(reinterpret_cast<const char*>(&h), sizeof h);
        if (mapped) release_mapped(part);
    }
    return hash_bytes(sums, kFormat);
}

// A Writer for a cache file: kHeader bytes kept free at the front for framed() to fill, so the
// payload is never copied to get its header in front of it.
Writer file_writer() {
    Writer w;
    w.buf.assign(kHeader, '\0');
    return w;
}

// The cache file of what `w` (from file_writer) holds: its header filled in.
std::string framed(const char (&magic)[8], std::string&& file) {
    const std::string_view payload = std::string_view(file).substr(kHeader);
    Writer h;
    h.buf.append(magic, 8);
    h.u32(kFormat);
    h.u32(0);
    h.u64(payload.size());
    h.u64(payload_sum(payload, false));
    file.replace(0, kHeader, h.buf);
    return std::move(file);
}

// The header of a cache file of `file_size` bytes: true when it is one of ours, of this format,
// and its payload size is what the file holds (checked before the payload is touched).
bool header_ok(const char (&magic)[8], std::string_view header, std::uint64_t file_size) {
    if (header.size() < kHeader || std::memcmp(header.data(), magic, 8) != 0) return false;
    Reader r(header.substr(8, kHeader - 8));
    const std::uint32_t format = r.u32();
    r.u32();
    const std::uint64_t size = r.u64();
    return format == kFormat && file_size >= kHeader && size == file_size - kHeader;
}

// The payload of a cache file, or nullopt when it is not one of ours, of another format,
// truncated or damaged. `mapped`: `data` is a mapping of the file (see payload_sum).
std::optional<std::string_view> unframe(const char (&magic)[8], std::string_view data,
                                        bool mapped = false) {
    if (!header_ok(magic, data, data.size())) return std::nullopt;
    Reader r(data.substr(24, 8));
    const std::uint64_t sum = r.u64();
    const std::string_view payload = data.substr(kHeader);
    if (payload_sum(payload, mapped) != sum) return std::nullopt;
    return payload;
}

using CacheFd = CacheFile;

// The first kHeader bytes of an open cache file (fewer when it is shorter).
std::string header_of(const CacheFd& f) {
    return f.read(0, kHeader);
}

// A cache file mapped read-only (unmapped when it goes).
class MappedFile {
public:
    explicit MappedFile(const CacheFd& f) {
        if (!f.ok() || f.size() == 0) return;
        void* m =
            ::mmap(nullptr, static_cast<std::size_t>(f.size()), PROT_READ, MAP_PRIVATE, f.fd(), 0);
        if (m != MAP_FAILED) {
            data_ = m;
            size_ = static_cast<std::size_t>(f.size());
            ::madvise(m, size_, MADV_SEQUENTIAL | MADV_WILLNEED);
        }
    }
    ~MappedFile() {
        if (data_ != nullptr) ::munmap(data_, size_);
    }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    bool ok() const { return data_ != nullptr; }
    std::string_view text() const { return {static_cast<const char*>(data_), size_}; }

private:
    void* data_ = nullptr;
    std::size_t size_ = 0;
};

// The options that change what a load gives.
std::string options_tag(const LoadOptions& o) {
    Writer w;
    w.u8(o.keep_payloads ? 1 : 0);
    w.u64(o.limits.max_file_bytes);
    w.u64(o.limits.max_depth);
    w.u64(o.limits.max_alias_nodes);
    w.u64(o.limits.max_alias_amplification);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(hash_bytes(w.buf, 0x6b706b67)));
    return hex;
}

struct Paths {
    fs::path root;          // canonical source (stamped trees), for the check of the cache's place
    bool dir = false;       // a directory source
    bool immutable = false; // its content never changes: no stamps to check
    fs::path manifest;      // its manifest
    std::string tag;        // options
};

std::optional<Paths> paths_of(const io::Identity& id, const LoadOptions& opts) {
    if (id.kind == io::Identity::Kind::none || id.key.empty()) return std::nullopt;
    Paths p;
    if (id.kind == io::Identity::Kind::stamped) p.root = id.key;
    p.dir = id.dir;
    p.immutable = id.kind == io::Identity::Kind::immutable;
    p.tag = options_tag(opts);
    // (A canonical path starts with '/', a digest never does: the two cannot meet.)
    const std::string key = sha256_digest("kpkg-catalog-source\n" + id.key + "\n" + p.tag);
    p.manifest = opts.cache_dir / "catalog-v1" / "manifests" / key.substr(7);
    return p;
}

fs::path image_path(const LoadOptions& opts, const std::string& digest, const std::string& tag) {
    const std::string hex = digest.size() > 7 ? digest.substr(7) : digest;
    return opts.cache_dir / "catalog-v1" / "images" / (hex + "-" + tag + ".img");
}

// --- the image ---------------------------------------------------------------------------------

// The fields of each kind of record, in file order, for writing, reading and sizing alike:
// v.ids() string ids, v.nums() 32-bit numbers, v.u64() a 64-bit one, v.pos() a position, v.kind()
// an enum (one byte, at most `last`).
template <class T, class U>
concept Is = std::same_as<std::remove_const_t<T>, U>;

template <class V, Is<model::Package> T>
void fields(V& v, T& p) {
    v.ids(p.name, p.default_channel, p.description);
    v.nums(p.props_begin, p.props_count);
    v.pos(p.pos);
}
template <class V, Is<model::Channel> T>
void fields(V& v, T& ch) {
    v.ids(ch.package, ch.name);
    v.nums(ch.entries_begin, ch.entries_count, ch.props_begin, ch.props_count);
    v.pos(ch.pos);
}
template <class V, Is<model::Bundle> T>
void fields(V& v, T& b) {
    v.ids(b.package, b.name, b.image, b.version);
    v.nums(b.props_begin, b.props_count, b.images_begin, b.images_count);
    v.pos(b.pos);
}
template <class V, Is<model::Deprecation> T>
void fields(V& v, T& d) {
    v.ids(d.package);
    v.nums(d.entries_begin, d.entries_count);
    v.pos(d.pos);
}
template <class V, Is<model::Other> T>
void fields(V& v, T& o) {
    v.ids(o.schema, o.package, o.name);
    v.pos(o.pos);
}
template <class V, Is<model::Entry> T>
void fields(V& v, T& e) {
    v.ids(e.name, e.replaces, e.skip_range);
    v.nums(e.skips_begin, e.skips_count);
    v.pos(e.pos);
}
template <class V, Is<Str> T> // a skip
void fields(V& v, T& s) {
    v.ids(s);
}
template <class V, Is<model::Property> T>
void fields(V& v, T& p) {
    v.kind(p.kind, model::PropKind::other);
    v.ids(p.type, p.a, p.b, p.c, p.json);
    v.nums(p.value_bytes);
    v.u64(p.digest);
}
template <class V, Is<model::RelatedImage> T>
void fields(V& v, T& r) {
    v.ids(r.name, r.image);
}
template <class V, Is<model::DeprecationEntry> T>
void fields(V& v, T& d) {
    v.ids(d.schema, d.name, d.message);
    v.pos(d.pos);
}

// Every record table of a catalog, in the order the image holds them.
template <class Catalog, class F>
void each_table(Catalog& c, F f) {
    f(c.packages);
    f(c.channels);
    f(c.bundles);
    f(c.deprecations);
    f(c.others);
    f(c.entries);
    f(c.skips);
    f(c.properties);
    f(c.related_images);
    f(c.deprecation_entries);
}

struct Encoder {
    Writer& w;
    template <class... N>
    void ids(N... x) {
        (w.u32(x), ...);
    }
    template <class... N>
    void nums(N... x) {
        (w.u32(x), ...);
    }
    void u64(std::uint64_t x) { w.u64(x); }
    void pos(const model::Pos& p) { w.pos(p); }
    template <class E>
    void kind(E k, E) {
        w.u8(static_cast<std::uint8_t>(k));
    }
    // A count, then the records.
    template <class T>
    void table(const std::vector<T>& v) {
        w.u64(v.size());
        for (const T& x : v)
            fields(*this, x);
    }
};

// Reads what Encoder wrote; `good` goes false on an id, file or kind out of range.
struct Decoder {
    Reader& r;
    std::size_t nstrings;
    std::size_t nfiles;
    bool mapped = false; // r reads a mapping: release what was copied out, piece by piece
    bool good = true;
    template <class... N>
    void ids(N&... x) {
        ((x = r.u32(), good = good && x < nstrings), ...);
    }
    template <class... N>
    void nums(N&... x) {
        ((x = r.u32()), ...);
    }
    void u64(std::uint64_t& x) { x = r.u64(); }
    void pos(model::Pos& p) {
        p = r.pos();
        if (p.file >= nfiles) good = false;
    }
    template <class E>
    void kind(E& k, E last) {
        const std::uint8_t b = r.u8();
        if (b > static_cast<std::uint8_t>(last)) good = false;
        k = static_cast<E>(b);
    }
    // A count (checked against what is left), then the records.
    template <class T>
    void table(std::vector<T>& v);
};

// The bytes one record takes.
struct Sizer {
    std::size_t bytes = 0;
    template <class... N>
    void ids(N...) {
        bytes += 4 * sizeof...(N);
    }
    template <class... N>
    void nums(N...) {
        bytes += 4 * sizeof...(N);
    }
    void u64(std::uint64_t) { bytes += 8; }
    void pos(const model::Pos&) { bytes += 16; }
    template <class E>
    void kind(E, E) {
        bytes += 1;
    }
};

template <class T>
void Decoder::table(std::vector<T>& v) {
    Sizer s;
    const T record{};
    fields(s, record);
    v.resize(r.count(s.bytes));
    std::size_t from = r.position();
    for (std::size_t i = 0; i < v.size(); ++i) {
        fields(*this, v[i]);
        if (mapped && (i + 1) % 65536 == 0) {
            release_mapped(r.since(from));
            from = r.position();
        }
    }
    if (mapped) release_mapped(r.since(from));
}

std::string encode_image(const model::Catalog& c, const std::vector<std::string>& rels, bool dir) {
    Writer w = file_writer();
    w.str(c.content_digest);
    w.u8(dir ? 1 : 2);
    w.u64(rels.size());
    for (const auto& r : rels)
        w.str(r);
    // The string pool as flat arrays (sizes, hashes and the table of ids loaded back in bulk).
    // The text is written straight from the pool (not through a flat copy of it).
    const model::StringPool::Flat flat = c.strings.flatten(/*with_text=*/false);
    w.u64(flat.sizes.size());
    for (std::uint32_t size : flat.sizes)
        w.u32(size);
    for (std::uint64_t h : flat.hashes)
        w.u64(h);
    w.u64(flat.slots.size());
    for (Str id : flat.slots)
        w.u32(id);
    std::uint64_t text_bytes = 0;
    for (std::uint32_t size : flat.sizes)
        text_bytes += size;
    w.u64(text_bytes);
    w.buf.reserve(w.buf.size() + text_bytes);
    for (Str i = 1; i < c.strings.size(); ++i)
        w.buf += c.strings[i];
    Encoder e{w};
    each_table(c, [&](auto& t) { e.table(t); });
    for (const auto* list : {&c.problems, &c.notes}) {
        w.u64(list->size());
        for (const auto& f : *list) {
            w.u8(static_cast<std::uint8_t>(f.scope));
            w.str(f.rule);
            w.str(f.package);
            w.str(f.channel);
            w.str(f.bundle);
            w.str(f.message);
            // The file as an index into files (its name depends on how the source is spelt).
            std::uint32_t file = 0;
            for (std::size_t i = 1; i < c.files.size(); ++i)
                if (c.files[i] == f.pos.file) {
                    file = static_cast<std::uint32_t>(i);
                    break;
                }
            w.u32(file);
            if (file == 0) w.str(f.pos.file);
            w.u32(f.pos.line);
            w.u32(f.pos.column);
            w.u32(static_cast<std::uint32_t>(f.pos.document));
        }
    }
    return std::move(w.buf);
}

// The catalog of an image, every index checked; nullopt when anything is off.
std::optional<model::Catalog> decode_image(std::string_view payload, const io::Tree& tree, bool dir,
                                           std::shared_ptr<const void> keep) {
    Reader r(payload);
    model::Catalog c;
    c.content_digest = std::string(r.str());
    const std::uint8_t kind = r.u8();
    if (!r.ok() || kind != (dir ? 1 : 2)) return std::nullopt;
    const std::size_t nfiles = r.count(4);
    c.files.reserve(nfiles + 1);
    for (std::size_t i = 0; i < nfiles; ++i) {
        const std::string_view rel = r.str();
        c.files.push_back(dir ? tree.display(rel) : tree.display_root());
    }
    // The pool's text stays in the image: its strings are views into the mapping, which the
    // pool keeps (a warm load copies no string; only the small tables are copied out).
    const bool mapped = keep != nullptr;
    const std::size_t arrays_from = r.position();
    const std::size_t nsizes = r.count(12);
    std::vector<std::uint32_t> sizes(nsizes);
    r.array(sizes.data(), nsizes);
    std::vector<std::uint64_t> hashes(nsizes + 1, 0);
    r.array(hashes.data() + 1, nsizes);
    const std::size_t nslots = r.count(4);
    std::vector<Str> slots(nslots);
    r.array(slots.data(), nslots);
    if (mapped) release_mapped(r.since(arrays_from));
    const std::string_view text = r.bytes(r.count(1));
    if (!r.ok()) return std::nullopt;
    auto pool = model::StringPool::from_mapped(text, sizes, std::move(hashes), std::move(slots),
                                               std::move(keep));
    if (!pool) return std::nullopt;
    c.strings = std::move(*pool);
    const std::size_t nstrings = c.strings.size();
    // Some stored hashes are checked against their texts (the checksum guards the rest).
    for (Str i = 1; i < nstrings; i += 997)
        if (model::StringPool::hash(c.strings[i]) != c.strings.hash_of(i)) return std::nullopt;
    if (!r.ok()) return std::nullopt;

    Decoder d{r, nstrings, c.files.size(), mapped};
    each_table(c, [&](auto& t) { d.table(t); });
    for (auto* list : {&c.problems, &c.notes}) {
        list->resize(r.count(37));
        for (auto& f : *list) {
            // Not stored: problems are errors, notes warnings.
            if (list == &c.notes) f.severity = model::Severity::warning;
            d.kind(f.scope, model::Scope::deprecation);
            f.rule = r.str();
            f.package = r.str();
            f.channel = r.str();
            f.bundle = r.str();
            f.message = r.str();
            const std::uint32_t file = r.u32();
            if (file == 0)
                f.pos.file = r.str();
            else if (file < c.files.size())
                f.pos.file = c.files[file];
            else
                d.good = false;
            f.pos.line = r.u32();
            f.pos.column = r.u32();
            f.pos.document = static_cast<int>(r.u32());
        }
    }
    if (!r.ok() || !r.at_end() || !d.good) return std::nullopt;

    // Every range inside its vector.
    auto in = [](std::uint64_t begin, std::uint64_t count, std::size_t size) {
        return begin + count <= size;
    };
    for (const auto& p : c.packages)
        if (!in(p.props_begin, p.props_count, c.properties.size())) return std::nullopt;
    for (const auto& ch : c.channels)
        if (!in(ch.entries_begin, ch.entries_count, c.entries.size()) ||
            !in(ch.props_begin, ch.props_count, c.properties.size()))
            return std::nullopt;
    for (const auto& b : c.bundles)
        if (!in(b.props_begin, b.props_count, c.properties.size()) ||
            !in(b.images_begin, b.images_count, c.related_images.size()))
            return std::nullopt;
    for (const auto& d : c.deprecations)
        if (!in(d.entries_begin, d.entries_count, c.deprecation_entries.size()))
            return std::nullopt;
    for (const auto& e : c.entries)
        if (!in(e.skips_begin, e.skips_count, c.skips.size())) return std::nullopt;
    return c;
}

// --- the manifest ------------------------------------------------------------------------------

struct Manifest {
    std::uint64_t started_ns = 0; // when the load that wrote it started
    bool dir = false;
    std::string digest;
    std::string image; // file name under images/
    std::uint64_t image_bytes = 0;
    std::array<std::uint8_t, 32> listing{};
    std::vector<Stamp> stamps;
};

std::string encode_manifest(const Manifest& m) {
    Writer w = file_writer();
    w.u64(m.started_ns);
    w.u8(m.dir ? 1 : 2);
    w.str(m.digest);
    w.str(m.image);
    w.u64(m.image_bytes);
    w.buf.append(reinterpret_cast<const char*>(m.listing.data()), m.listing.size());
    w.u64(m.stamps.size());
    for (const Stamp& s : m.stamps) {
        w.u8(static_cast<std::uint8_t>(s.kind) | (s.has_sha ? 0x80 : 0));
        w.u64(s.size);
        w.u64(s.mtime_ns);
        w.u64(s.ctime_ns);
        w.u64(s.ino);
        w.u64(s.dev);
        if (s.has_sha) w.buf.append(reinterpret_cast<const char*>(s.sha.data()), s.sha.size());
        w.str(s.rel);
    }
    return std::move(w.buf);
}

std::optional<Manifest> decode_manifest(std::string_view payload) {
    Reader r(payload);
    Manifest m;
    m.started_ns = r.u64();
    const std::uint8_t kind = r.u8();
    m.dir = kind == 1;
    m.digest = std::string(r.str());
    m.image = std::string(r.str());
    m.image_bytes = r.u64();
    const std::string_view listing = r.bytes(m.listing.size());
    if (!r.ok()) return std::nullopt;
    std::memcpy(m.listing.data(), listing.data(), m.listing.size());
    m.stamps.resize(r.count(45));
    for (Stamp& s : m.stamps) {
        const std::uint8_t k = r.u8();
        s.has_sha = (k & 0x80) != 0;
        if ((k & 0x7f) != 1 && (k & 0x7f) != 2) return std::nullopt;
        s.kind = static_cast<StampKind>(k & 0x7f);
        s.size = r.u64();
        s.mtime_ns = r.u64();
        s.ctime_ns = r.u64();
        s.ino = r.u64();
        s.dev = r.u64();
        if (s.has_sha) {
            const std::string_view sha = r.bytes(s.sha.size());
            if (!r.ok()) return std::nullopt;
            std::memcpy(s.sha.data(), sha.data(), s.sha.size());
        }
        s.rel = std::string(r.str());
    }
    if (!r.ok() || !r.at_end() || (kind != 1 && kind != 2)) return std::nullopt;
    if (m.image.find('/') != std::string::npos || m.image.empty()) return std::nullopt;
    return m;
}

// The most bytes an image made from these files may have.
std::uint64_t image_bound(const std::vector<Stamp>& stamps, const LoadOptions& opts) {
    std::uint64_t source = 0;
    for (const Stamp& s : stamps)
        if (s.kind == StampKind::file)
            source += std::min<std::uint64_t>(s.size, opts.limits.max_file_bytes);
    return source * kImageFactor + kImageSlack;
}

// Keeps the newest `keep` files of a cache directory.
void prune(const fs::path& dir, std::size_t keep) {
    std::error_code ec;
    std::vector<std::pair<fs::file_time_type, fs::path>> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        const auto t = it->last_write_time(e2);
        if (!e2) files.emplace_back(t, it->path());
    }
    if (files.size() <= keep) return;
    std::sort(files.begin(), files.end());
    for (std::size_t i = 0; i + keep < files.size(); ++i)
        fs::remove(files[i].second, ec);
}

} // namespace

Stamp stamp_from(const io::Stamp& st, std::string rel, StampKind kind) {
    Stamp s;
    s.rel = std::move(rel);
    s.kind = kind;
    s.size = kind == StampKind::file ? st.size : 0;
    s.mtime_ns = st.mtime_ns;
    s.ctime_ns = st.ctime_ns;
    s.ino = st.ino;
    s.dev = st.dev;
    return s;
}

namespace {

bool same_stat(const Stamp& a, const Stamp& b) {
    return a.size == b.size && a.mtime_ns == b.mtime_ns && a.ctime_ns == b.ctime_ns &&
           a.ino == b.ino && a.dev == b.dev;
}

// True when the file `rel` of the tree holds bytes of this SHA-256 (a regular file: a stream
// cannot be read twice).
bool content_is(const io::Tree& tree, const std::string& rel,
                const std::array<std::uint8_t, 32>& sha) {
    auto data = tree.read(rel);
    if (!data.ok() || data->too_large || data->streamed) return false;
    Sha256 h;
    h.update(data->text());
    return h.finish() == sha;
}

} // namespace

std::array<std::uint8_t, 32> listing_digest(const Listing& l) {
    Sha256 h;
    h.update("kpkg-catalog-listing-v1\n");
    auto part = [&](char tag, const std::vector<io::Entry>& v) {
        h.update(std::string_view(&tag, 1));
        const std::string n = std::to_string(v.size());
        h.update(n);
        for (const auto& p : v) {
            h.update(std::string_view("\0", 1));
            h.update(p.rel);
        }
    };
    part('f', l.files);
    part('d', l.dirs);
    part('i', l.ignores);
    return h.finish();
}

std::uint64_t now_ns() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

std::optional<model::Catalog> cache_load(const io::Tree& tree, const io::Identity& id,
                                         const LoadOptions& opts, std::string& note) {
    const auto paths = paths_of(id, opts);
    if (!paths) {
        note = "cannot resolve " + tree.display_root();
        return std::nullopt;
    }
    std::optional<Manifest> m;
    {
        const CacheFd mfile(paths->manifest);
        if (!mfile.ok()) {
            note = "manifest " + paths->manifest.string() + " " + mfile.why();
            return std::nullopt;
        }
        if (mfile.size() > kMaxManifestBytes ||
            !header_ok(kManifestMagic, header_of(mfile), mfile.size())) {
            note = "manifest " + paths->manifest.string() + " is damaged or of another version";
            return std::nullopt;
        }
        const auto mdata = mfile.read_whole(kMaxManifestBytes);
        const auto mpayload = mdata ? unframe(kManifestMagic, *mdata) : std::nullopt;
        m = mpayload ? decode_manifest(*mpayload) : std::nullopt;
    }
    if (!m || m->dir != paths->dir) {
        note = "manifest " + paths->manifest.string() + " is damaged or of another version";
        return std::nullopt;
    }
    // Every entry stat'ed; on big catalogs on a thread of its own while the image is decoded
    // (which is thrown away if something changed).
    std::string stale;
    // Racy entries that were proven (by content or listing), and whether all of them are out of
    // the racy window now: then the manifest is rewritten with this start time, so that later
    // runs need not prove them again.
    const std::uint64_t check_start = now_ns();
    bool proven_racy = false, still_racy = false;
    auto check = [&] {
        bool relist = false;
        if (paths->immutable) return; // an image named by its digest: nothing to re-check
        for (const Stamp& s : m->stamps) {
            const auto st = tree.stamp(s.rel);
            const auto now =
                st ? std::optional<Stamp>(stamp_from(*st, s.rel, s.kind)) : std::nullopt;
            const std::string name = s.rel.empty() ? tree.display_root() : s.rel;
            if (!now || !same_stat(*now, s)) {
                stale = name + " changed";
                return;
            }
            // Changed within a clock tick of the load: the times do not prove the content.
            const std::uint64_t changed = std::max(s.mtime_ns, s.ctime_ns);
            if (changed + kRacyNs <= m->started_ns) continue;
            proven_racy = true;
            still_racy = still_racy || changed + kRacyNs > check_start;
            if (!s.has_sha) {
                relist = true; // a directory or an .indexignore file: its effect is the listing
                continue;
            }
            if (!content_is(tree, s.rel, s.sha)) {
                stale = name + " changed (its content differs from what was cached)";
                return;
            }
        }
        if (relist && paths->dir) {
            auto listing = select_files(tree);
            if (!listing.ok() || listing_digest(*listing) != m->listing) {
                stale = "the files of " + tree.display_root() + " changed";
                return;
            }
        }
    };
    // Anything the check throws (out of memory) makes the cache a miss, on either thread.
    auto guarded = [&] {
        try {
            check();
        } catch (const std::exception&) {
            stale = "the cache could not be checked";
        }
    };
    std::jthread checker;
    if (m->stamps.size() > 512) checker = try_thread(guarded);
    if (!checker.joinable()) guarded();
    if (!checker.joinable() && !stale.empty()) { // (the checker thread writes it until joined)
        note = stale;
        return std::nullopt;
    }
    const fs::path image = opts.cache_dir / "catalog-v1" / "images" / m->image;
    const CacheFd ifile(image);
    if (!ifile.ok()) {
        note = "image " + image.string() + " " + ifile.why();
        return std::nullopt;
    }
    // Sizes checked before anything but the header is read: the size the manifest recorded, a
    // bound from the size of the source, and the header's.
    if (ifile.size() != m->image_bytes || m->image_bytes > image_bound(m->stamps, opts) ||
        !header_ok(kImageMagic, header_of(ifile), ifile.size())) {
        note = "image " + image.string() + " is not of the size the manifest records";
        return std::nullopt;
    }
    auto idata = std::make_shared<const MappedFile>(ifile);
    if (!idata->ok()) {
        note = "image " + image.string() + " cannot be read";
        return std::nullopt;
    }
    const auto ipayload = unframe(kImageMagic, idata->text(), true);
    auto c = ipayload ? decode_image(*ipayload, tree, paths->dir, idata) : std::nullopt;
    if (checker.joinable()) checker.join();
    if (!stale.empty()) {
        note = stale;
        return std::nullopt;
    }
    if (!c || c->content_digest != m->digest) {
        note = "image " + image.string() + " is damaged or of another version";
        return std::nullopt;
    }
    c->index();
    if (proven_racy && !still_racy) {
        Manifest fresh = *m;
        fresh.started_ns = check_start;
        (void)write_file_atomic(paths->manifest, framed(kManifestMagic, encode_manifest(fresh)));
    }
    return c;
}

void cache_store(const io::Identity& id, const LoadOptions& opts, const model::Catalog& c,
                 const std::vector<std::string>& rels, const SourceRecord& record,
                 std::string& note) {
    const auto paths = paths_of(id, opts);
    if (!paths) {
        note = "not cached: the source cannot be resolved";
        return;
    }
    std::error_code ec;
    // A cache inside the catalog directory would be read as part of the catalog next time.
    if (paths->dir && !paths->root.empty()) {
        const fs::path cache = fs::weakly_canonical(fs::absolute(opts.cache_dir, ec), ec);
        const auto [end, _] =
            std::mismatch(paths->root.begin(), paths->root.end(), cache.begin(), cache.end());
        if (!ec && end == paths->root.end()) {
            note = "not cached: the cache directory " + opts.cache_dir.string() +
                   " is inside the catalog";
            return;
        }
    }
    const fs::path images = opts.cache_dir / "catalog-v1" / "images";
    fs::create_directories(images, ec);
    fs::create_directories(paths->manifest.parent_path(), ec);
    const fs::path image = image_path(opts, c.content_digest, paths->tag);
    Manifest m;
    m.started_ns = record.started_ns;
    m.dir = paths->dir;
    m.digest = c.content_digest;
    m.image = image.filename().string();
    m.listing = record.listing;
    m.stamps = record.stamps;
    const std::string image_data = framed(kImageMagic, encode_image(c, rels, paths->dir));
    m.image_bytes = image_data.size();
    if (m.image_bytes > image_bound(m.stamps, opts)) {
        note = "not cached: the image would be larger than its bound";
        return;
    }
    const std::string manifest_data = framed(kManifestMagic, encode_manifest(m));
    if (manifest_data.size() > kMaxManifestBytes) {
        note = "not cached: the manifest would be larger than its bound";
        return;
    }
    if (auto r = write_file_atomic(image, image_data); !r.ok()) {
        note = "cannot write " + image.string() + ": " + r.error().message;
        return;
    }
    if (auto r = write_file_atomic(paths->manifest, manifest_data); !r.ok()) {
        note = "cannot write " + paths->manifest.string() + ": " + r.error().message;
        return;
    }
    prune(images, kMaxImages);
    prune(paths->manifest.parent_path(), kMaxManifests);
}

} // namespace kpkg::catalog::detail
