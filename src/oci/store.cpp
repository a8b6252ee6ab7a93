#include "kpkg/oci/store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "kpkg/core/atomic_file.hpp"
#include "kpkg/core/digest.hpp"
#include "kpkg/io/load.hpp"

namespace kpkg::oci {

namespace fs = std::filesystem;
using Clock = std::chrono::system_clock;

namespace {

constexpr std::string_view kSha = "sha256:";

bool is_sha256(std::string_view d) {
    if (d.size() != kSha.size() + 64 || d.substr(0, kSha.size()) != kSha) return false;
    for (char c : d.substr(kSha.size()))
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

Error bad_digest(std::string_view d) {
    return Error::invalid("not a sha256 digest: \"" + std::string(d) + "\"").about("blob cache");
}

// The whole file, or nothing when it does not exist.
// A cache file's bytes, or nothing when it is absent or is not what kpkg writes there: a
// symbolic link, a FIFO or device (which would block or never end), a directory, or a file
// larger than `max` bytes (a sparse file claiming gigabytes) — those are removed (a directory
// is left), so the next write replaces them. Nothing is read of them (core's CacheFile).
Result<std::optional<std::string>> slurp(const fs::path& p, std::uint64_t max) {
    const CacheFile f(p);
    if (!f.ok() && f.error() != 0 && f.error() != ENOENT && f.error() != ENOTDIR &&
        f.error() != ELOOP)
        return fail(
            Error::io(std::string("cannot open: ") + std::strerror(f.error()), {p.string()}));
    auto bytes = f.read_whole(max);
    if (!bytes && f.error() != ENOENT && f.error() != ENOTDIR &&
        std::string_view(f.why()) != "is a directory")
        ::unlink(p.c_str());
    return bytes;
}

Result<void> make_dirs(const fs::path& d) {
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec) return fail(Error::io("cannot create directory: " + ec.message(), {d.string()}));
    return {};
}

void json_string(std::string& out, std::string_view s) {
    out += '"';
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            out += b;
        } else {
            out += static_cast<char>(c);
        }
    }
    out += '"';
}

Clock::time_point mtime_of(const struct stat& st) {
    return Clock::time_point(std::chrono::duration_cast<Clock::duration>(
        std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
}

// The digests a manifest or index lists (config, layers, manifests, subject).
std::vector<std::string> listed_digests(std::string_view json) {
    std::vector<std::string> out;
    auto docs = io::parse_json(json, "blob");
    if (!docs || docs->size() != 1 || !(*docs)[0].root.is_map()) return out;
    const io::Node& r = (*docs)[0].root;
    auto add = [&](const io::Node* d) {
        if (d == nullptr || !d->is_map()) return;
        if (const io::Node* g = d->get("digest"); g != nullptr && g->is_string())
            out.push_back(g->text);
    };
    add(r.get("config"));
    add(r.get("subject"));
    for (const char* key : {"layers", "manifests"})
        if (const io::Node* l = r.get(key); l != nullptr && l->is_seq())
            for (const auto& d : l->items)
                add(&d);
    return out;
}

} // namespace

Result<std::optional<std::string>> read_cache_file(const std::filesystem::path& p,
                                                   std::uint64_t max_size) {
    return slurp(p, max_size);
}

Store::Store(fs::path root) : root_(std::move(root)) {}

fs::path Store::default_root() {
    auto env = [](const char* name) -> const char* {
        const char* v = std::getenv(name);
        return v != nullptr && *v != '\0' ? v : nullptr;
    };
    if (const char* d = env("KPKG_CACHE_DIR")) return fs::path(d);
    if (const char* x = env("XDG_CACHE_HOME")) return fs::path(x) / "kpkg";
    if (const char* h = env("HOME")) return fs::path(h) / ".cache" / "kpkg";
    return {};
}

fs::path Store::blob_path(std::string_view digest) const {
    return root_ / "blobs" / "sha256" / std::string(digest.substr(kSha.size()));
}

Result<std::optional<std::string>> Store::get(std::string_view digest,
                                              std::uint64_t max_size) const {
    if (!is_sha256(digest)) return fail(bad_digest(digest));
    const fs::path p = blob_path(digest);
    auto bytes = slurp(p, max_size);
    if (!bytes || !*bytes) return bytes;
    if (sha256_digest(**bytes) != digest) {
        // Damaged (a disk error, a hand edit): drop it, the caller fetches it again.
        ::unlink(p.c_str());
        return std::optional<std::string>();
    }
    ::utimensat(AT_FDCWD, p.c_str(), nullptr, 0); // last used, for prune
    return bytes;
}

bool Store::has(std::string_view digest) const {
    auto r = get(digest);
    return r && r->has_value();
}

Result<void> Store::put(std::string_view digest, std::string_view bytes) const {
    if (!is_sha256(digest)) return fail(bad_digest(digest));
    if (sha256_digest(bytes) != digest)
        return fail(Error::invalid("content does not match its digest " + std::string(digest))
                        .about("blob cache"));
    const fs::path p = blob_path(digest);
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<std::uint64_t>(st.st_size) == bytes.size()) {
        // Already there: kept when intact (only its time refreshed), replaced when damaged.
        auto existing = slurp(p, bytes.size());
        if (existing && *existing && **existing == bytes) {
            ::utimensat(AT_FDCWD, p.c_str(), nullptr, 0);
            return {};
        }
    }
    if (auto r = make_dirs(p.parent_path()); !r) return r;
    return write_cache_file(p, bytes, 0644);
}

Result<void> Store::put(const Content& c) const {
    for (const auto& [d, b] : c.blobs)
        if (auto r = put(d, b); !r) return r;
    return {};
}

namespace {

constexpr std::string_view tree_magic = "KPKGTREE1\n";

void put_u32(std::string& out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Reads what put_u32/put_u64 wrote; false past the end.
struct Cursor {
    std::string_view s;
    std::size_t at = 0;
    bool u64(std::uint64_t& v) {
        if (s.size() - at < 8) return false;
        v = 0;
        for (int i = 7; i >= 0; --i)
            v = (v << 8) | static_cast<unsigned char>(s[at + i]);
        at += 8;
        return true;
    }
    bool u32(std::uint32_t& v) {
        if (s.size() - at < 4) return false;
        v = 0;
        for (int i = 3; i >= 0; --i)
            v = (v << 8) | static_cast<unsigned char>(s[at + i]);
        at += 4;
        return true;
    }
    bool bytes(std::uint64_t n, std::string& out) {
        if (s.size() - at < n) return false;
        out.assign(s.substr(at, n));
        at += n;
        return true;
    }
};

fs::path tree_path(const fs::path& root, std::string_view digest) {
    return root / "trees" / "sha256" / std::string(digest.substr(kSha.size()));
}

} // namespace

std::optional<Rootfs> Store::get_tree(std::string_view manifest_digest) const {
    if (!is_sha256(manifest_digest)) return std::nullopt;
    const fs::path p = tree_path(root_, manifest_digest);
    // The files' bytes are within the extraction limit; names and headers add a little.
    const ExtractLimits limits;
    auto bytes = slurp(p, limits.max_total_bytes + (limits.max_entries << 12));
    if (!bytes || !*bytes) return std::nullopt;
    const std::string& b = **bytes;
    auto damaged = [&]() -> std::optional<Rootfs> {
        ::unlink(p.c_str());
        return std::nullopt;
    };
    // The last 32 bytes: the sha256 of what comes before them.
    if (b.size() < tree_magic.size() + 8 + 32) return damaged();
    const std::string_view body(b.data(), b.size() - 32);
    if (to_hex(reinterpret_cast<const std::uint8_t*>(b.data() + body.size()), 32) !=
        sha256_digest(body).substr(kSha.size()))
        return damaged();
    if (body.substr(0, tree_magic.size()) != tree_magic) return damaged();
    Cursor c{body, tree_magic.size()};
    std::uint64_t count = 0;
    if (!c.u64(count)) return damaged();
    std::map<std::string, Rootfs::Node> nodes;
    for (std::uint64_t i = 0; i < count; ++i) {
        std::uint32_t kind = 0, mode = 0;
        std::uint64_t plen = 0, dlen = 0;
        std::string path;
        Rootfs::Node n;
        if (!c.u32(kind) || kind > 2 || !c.u32(mode) || !c.u64(plen) || !c.bytes(plen, path) ||
            !c.u64(dlen) || !c.bytes(dlen, n.data))
            return damaged();
        n.kind = static_cast<Rootfs::Node::Kind>(kind);
        n.mode = mode;
        nodes.emplace(std::move(path), std::move(n));
    }
    if (c.at != body.size()) return damaged();
    ::utimensat(AT_FDCWD, p.c_str(), nullptr, 0); // last used, for prune
    return Rootfs::from_nodes(std::move(nodes));
}

Result<void> Store::put_tree(std::string_view manifest_digest, const Rootfs& rootfs) const {
    if (!is_sha256(manifest_digest)) return fail(bad_digest(manifest_digest));
    std::string out(tree_magic);
    put_u64(out, rootfs.nodes().size());
    for (const auto& [path, n] : rootfs.nodes()) {
        put_u32(out, static_cast<std::uint32_t>(n.kind));
        put_u32(out, n.mode);
        put_u64(out, path.size());
        out += path;
        put_u64(out, n.data.size());
        out += n.data;
    }
    const std::string digest = sha256_digest(out);
    for (std::size_t i = kSha.size(); i + 1 < digest.size(); i += 2)
        out.push_back(static_cast<char>(std::stoi(digest.substr(i, 2), nullptr, 16)));
    const fs::path p = tree_path(root_, manifest_digest);
    if (auto r = make_dirs(p.parent_path()); !r) return r;
    return write_cache_file(p, out, 0644);
}

fs::path Store::tag_path(const Reference& in) const {
    const Reference ref = normalize(in);
    return root_ / "tags" / ref.domain / ref.path / (":" + ref.tag);
}

Result<void> Store::set_tag(const Reference& ref, std::string_view digest,
                            std::string_view media_type) const {
    if (ref.tag.empty())
        return fail(Error::internal("set_tag needs a reference with a tag: " + ref.str()));
    const fs::path p = tag_path(ref);
    if (auto r = make_dirs(p.parent_path()); !r) return r;
    std::string json = "{\"digest\":";
    json_string(json, digest);
    json += ",\"mediaType\":";
    json_string(json, media_type);
    json += ",\"time\":";
    json += std::to_string(
        std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch()).count());
    json += "}\n";
    return write_cache_file(p, json, 0644);
}

namespace {

std::optional<TagRecord> read_tag(const fs::path& p) {
    auto text = slurp(p, std::uint64_t{64} << 10);
    if (!text || !*text) return std::nullopt;
    auto docs = io::parse_json(**text, p.string());
    if (!docs || docs->size() != 1 || !(*docs)[0].root.is_map()) return std::nullopt;
    const io::Node& r = (*docs)[0].root;
    const io::Node* d = r.get("digest");
    const io::Node* m = r.get("mediaType");
    const io::Node* t = r.get("time");
    if (d == nullptr || !d->is_string() || !is_sha256(d->text)) return std::nullopt;
    TagRecord rec;
    rec.digest = d->text;
    if (m != nullptr && m->is_string()) rec.media_type = m->text;
    if (t != nullptr)
        if (auto v = t->as_int()) rec.time = Clock::time_point(std::chrono::seconds(*v));
    return rec;
}

} // namespace

std::optional<UrlEntry> read_url_record(const fs::path& p) {
    auto text = read_cache_file(p, std::uint64_t{1} << 20);
    if (!text || !*text) return std::nullopt;
    auto docs = io::parse_json(**text, p.string());
    if (!docs || docs->size() != 1 || !(*docs)[0].root.is_map()) return std::nullopt;
    const io::Node& r = (*docs)[0].root;
    const io::Node* u = r.get("url");
    const io::Node* st = r.get("status");
    const io::Node* d = r.get("digest");
    if (u == nullptr || !u->is_string() || st == nullptr) return std::nullopt;
    const auto status = st->as_int();
    if (!status) return std::nullopt;
    UrlEntry e;
    e.url = u->text;
    e.status = static_cast<long>(*status);
    if (d != nullptr && d->is_string() && is_sha256(d->text)) e.digest = d->text;
    return e;
}

std::optional<TagRecord> Store::tag(const Reference& ref) const {
    if (ref.tag.empty()) return std::nullopt;
    return read_tag(tag_path(ref));
}

Result<CacheListing> Store::list() const {
    CacheListing out;
    std::map<std::string, std::set<std::string>> refs;
    std::error_code ec;
    const fs::path blobs = root_ / "blobs" / "sha256";
    if (fs::is_directory(blobs, ec)) {
        for (fs::directory_iterator it(blobs, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            const std::string digest = std::string(kSha) + name;
            if (!is_sha256(digest)) continue; // temporary files of writers
            struct stat st {};
            if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
            BlobEntry e;
            e.digest = digest;
            e.size = static_cast<std::uint64_t>(st.st_size);
            e.mtime = mtime_of(st);
            out.total_bytes += e.size;
            if (e.size > 0 && e.size <= (std::uint64_t{4} << 20)) {
                auto bytes = slurp(it->path(), std::uint64_t{4} << 20);
                if (bytes && *bytes && !(*bytes)->empty() && (**bytes)[0] == '{')
                    for (auto& d : listed_digests(**bytes))
                        refs[d].insert(digest);
            }
            out.blobs.push_back(std::move(e));
        }
        if (ec) return fail(Error::io("cannot list: " + ec.message(), {blobs.string()}));
    }
    const fs::path tags = root_ / "tags";
    if (fs::is_directory(tags, ec)) {
        for (fs::recursive_directory_iterator it(tags, ec), end; !ec && it != end;
             it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (name.empty() || name[0] != ':' || !it->is_regular_file(ec)) continue;
            auto rec = read_tag(it->path());
            if (!rec) continue;
            const std::string repo = it->path().parent_path().lexically_relative(tags).string();
            TagEntry t{repo + name, *rec};
            refs[rec->digest].insert(t.reference);
            out.tags.push_back(std::move(t));
        }
        if (ec) return fail(Error::io("cannot list: " + ec.message(), {tags.string()}));
    }
    // URLs fetched once (url_cache.cpp): their records, and the blobs of their bodies.
    const fs::path urls = root_ / "urls" / "sha256";
    if (fs::is_directory(urls, ec)) {
        for (fs::directory_iterator it(urls, ec), end; !ec && it != end; it.increment(ec)) {
            struct stat st {};
            if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
            auto rec = read_url_record(it->path());
            if (!rec) continue; // a writer's temporary file, or damaged: a miss when read
            rec->mtime = mtime_of(st);
            if (!rec->digest.empty()) refs[rec->digest].insert(rec->url);
            out.urls.push_back(std::move(*rec));
        }
        if (ec) return fail(Error::io("cannot list: " + ec.message(), {urls.string()}));
    }
    std::sort(out.urls.begin(), out.urls.end(),
              [](const UrlEntry& a, const UrlEntry& b) { return a.url < b.url; });
    std::sort(out.blobs.begin(), out.blobs.end(),
              [](const BlobEntry& a, const BlobEntry& b) { return a.digest < b.digest; });
    std::sort(out.tags.begin(), out.tags.end(),
              [](const TagEntry& a, const TagEntry& b) { return a.reference < b.reference; });
    for (auto& b : out.blobs)
        if (auto f = refs.find(b.digest); f != refs.end())
            b.referenced_by.assign(f->second.begin(), f->second.end());
    return out;
}

Result<PruneResult> Store::prune(std::optional<std::chrono::hours> older_than,
                                 Clock::time_point now) const {
    PruneResult res;
    auto listing = list();
    if (!listing) return fail(std::move(listing).error());
    const auto old = [&](Clock::time_point t) { return !older_than || t < now - *older_than; };
    for (const auto& b : listing->blobs) {
        if (!old(b.mtime)) continue;
        const fs::path p = blob_path(b.digest);
        if (::unlink(p.c_str()) == 0) {
            ++res.blobs_removed;
            res.bytes_freed += b.size;
        } else if (errno != ENOENT) {
            return fail(
                Error::io(std::string("cannot remove: ") + std::strerror(errno), {p.string()}));
        }
    }
    // Unpacked trees: by their time of last use, like blobs.
    std::error_code ec;
    for (fs::directory_iterator it(root_ / "trees" / "sha256", ec), end; !ec && it != end;
         it.increment(ec)) {
        struct stat st {};
        if (::stat(it->path().c_str(), &st) != 0 || !old(mtime_of(st))) continue;
        if (::unlink(it->path().c_str()) == 0) ++res.trees_removed;
    }
    // URL records: by their time of last use too (damaged ones with them: they only count as
    // absent when read).
    for (fs::directory_iterator it(root_ / "urls" / "sha256", ec), end; !ec && it != end;
         it.increment(ec)) {
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0 || S_ISDIR(st.st_mode) || !old(mtime_of(st)))
            continue;
        if (::unlink(it->path().c_str()) == 0) ++res.urls_removed;
    }
    ec.clear();
    const fs::path tags = root_ / "tags";
    for (const auto& t : listing->tags) {
        if (!old(t.record.time)) continue;
        const auto colon = t.reference.rfind(':');
        const fs::path p = tags / t.reference.substr(0, colon) / t.reference.substr(colon);
        if (::unlink(p.c_str()) == 0) {
            ++res.tags_removed;
            // Empty repository directories go too (another writer may refill them: rmdir
            // fails on a non-empty directory, which is fine).
            for (fs::path d = p.parent_path(); d != tags && d.has_parent_path();
                 d = d.parent_path())
                if (::rmdir(d.c_str()) != 0) break;
        } else if (errno != ENOENT) {
            return fail(
                Error::io(std::string("cannot remove: ") + std::strerror(errno), {p.string()}));
        }
    }
    return res;
}

} // namespace kpkg::oci
