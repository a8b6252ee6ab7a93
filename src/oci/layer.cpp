#include "kpkg/oci/layer.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "archive.hpp"
#include "kpkg/core/digest.hpp"
#include "kpkg/core/memory.hpp"
#include "kpkg/core/threads.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/oci/gzip.hpp"
#include "kpkg/oci/media_types.hpp"

namespace kpkg::oci {

namespace {

constexpr std::size_t block = 512;

// An octal number in a ustar field of `width` bytes: zero-padded to width-1 digits and a NUL.
void put_octal(char* field, std::size_t width, std::uint64_t v) {
    for (std::size_t i = width - 1; i-- > 0;) {
        field[i] = static_cast<char>('0' + (v & 7));
        v >>= 3;
    }
    field[width - 1] = '\0';
}

// A size field: octal when it fits in 11 digits, else base-256 (GNU and POSIX 2008 readers).
void put_size(char* field, std::uint64_t v) {
    if (v < (std::uint64_t{1} << 33)) {
        put_octal(field, 12, v);
        return;
    }
    field[0] = static_cast<char>(0x80);
    for (int i = 11; i >= 1; --i) {
        field[i] = static_cast<char>(v & 0xff);
        v >>= 8;
    }
}

char type_flag(TarEntry::Type t) {
    switch (t) {
    case TarEntry::Type::file:
        return '0';
    case TarEntry::Type::hardlink:
        return '1';
    case TarEntry::Type::symlink:
        return '2';
    case TarEntry::Type::char_device:
        return '3';
    case TarEntry::Type::block_device:
        return '4';
    case TarEntry::Type::dir:
        return '5';
    case TarEntry::Type::fifo:
        return '6';
    }
    return '0';
}

void pad(std::string& out) {
    const std::size_t rem = out.size() % block;
    if (rem != 0) out.append(block - rem, '\0');
}

// Copies up to `max` bytes of `s` into a header field (an empty view may have no data pointer).
void put_field(char* field, std::string_view s, std::size_t max) {
    if (!s.empty()) std::memcpy(field, s.data(), std::min(s.size(), max));
}

void header(std::string& out, std::string_view name, std::string_view prefix, char type,
            std::uint32_t mode, std::uint64_t size, std::string_view link) {
    char h[block];
    std::memset(h, 0, sizeof h);
    put_field(h, name, 100);
    put_octal(h + 100, 8, mode & 07777);
    put_octal(h + 108, 8, 0);
    put_octal(h + 116, 8, 0);
    put_size(h + 124, size);
    put_octal(h + 136, 12, 0);
    h[156] = type;
    put_field(h + 157, link, 100);
    std::memcpy(h + 257, "ustar", 6);
    std::memcpy(h + 263, "00", 2);
    put_octal(h + 329, 8, 0);
    put_octal(h + 337, 8, 0);
    put_field(h + 345, prefix, 155);
    std::memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : h)
        sum += c;
    put_octal(h + 148, 7, sum); // six digits and a NUL, then the space already there
    out.append(h, block);
}

// A pax record "<len> key=value\n", where len counts the whole record.
std::string pax_record(std::string_view key, std::string_view value) {
    const std::size_t body = key.size() + value.size() + 3; // ' ', '=', '\n'
    std::size_t len = body + 1;
    while (std::to_string(len).size() + body != len)
        len = std::to_string(len).size() + body;
    return std::to_string(len) + " " + std::string(key) + "=" + std::string(value) + "\n";
}

// Splits a name into ustar's prefix and name fields; false when it cannot be.
bool split_name(std::string_view full, std::string_view& prefix, std::string_view& name) {
    if (full.size() <= 100) {
        prefix = {};
        name = full;
        return true;
    }
    // The last '/' such that the name part fits in 100 and the prefix in 155.
    for (std::size_t i = std::min<std::size_t>(full.size() - 1, 155); i > 0; --i) {
        if (full[i] != '/') continue;
        if (full.size() - i - 1 > 100 || full.size() - i - 1 == 0) break;
        prefix = full.substr(0, i);
        name = full.substr(i + 1);
        return true;
    }
    return false;
}

Error path_error(const std::string& path, const std::string& why) {
    return Error::invalid("layer path \"" + path + "\": " + why);
}

} // namespace

std::string write_tar(const std::vector<TarEntry>& entries) {
    std::string out;
    std::size_t total = 2 * block;
    for (const auto& e : entries)
        total += 3 * block + e.name.size() + e.link.size() + e.contents().size();
    reserve_prefaulted(out, total);
    for (const auto& e : entries) {
        std::string_view prefix, name;
        const bool fits = split_name(e.name, prefix, name);
        const bool long_link = e.link.size() > 100;
        if (!fits || long_link) {
            std::string pax;
            if (!fits) pax += pax_record("path", e.name);
            if (long_link) pax += pax_record("linkpath", e.link);
            header(out, "PaxHeaders/entry", {}, 'x', 0644, pax.size(), {});
            out += pax;
            pad(out);
            if (!fits) {
                prefix = {};
                name = std::string_view(e.name).substr(0, 100);
            }
        }
        const bool has_data = e.type == TarEntry::Type::file;
        header(out, name, prefix, type_flag(e.type), e.mode, has_data ? e.contents().size() : 0,
               std::string_view(e.link).substr(0, std::min<std::size_t>(e.link.size(), 100)));
        if (has_data) {
            out += e.contents();
            pad(out);
        }
    }
    out.append(2 * block, '\0');
    return out;
}

namespace {

bool go_ascii(std::string_view s) {
    for (unsigned char c : s)
        if (c >= 0x80 || c == 0) return false;
    return true;
}

// Go's toASCII: the bytes of `s` below 0x80 (and not NUL).
std::string go_to_ascii(std::string_view s) {
    std::string out;
    for (unsigned char c : s)
        if (c < 0x80 && c != 0) out += static_cast<char>(c);
    return out;
}

// Go's splitUSTARPath: only for an ASCII name over 100 bytes; the last '/' among the first 156
// bytes, with a non-empty name part of at most 100 bytes and a non-empty prefix.
bool go_split(std::string_view full, std::string_view& prefix, std::string_view& name) {
    if (full.size() <= 100 || !go_ascii(full)) return false;
    std::size_t length = full.size();
    if (length > 156)
        length = 156;
    else if (full[length - 1] == '/')
        --length;
    const std::size_t i = full.substr(0, length).rfind('/');
    if (i == std::string_view::npos || i == 0) return false;
    const std::size_t nlen = full.size() - i - 1;
    if (nlen > 100 || nlen == 0 || i > 155) return false;
    prefix = full.substr(0, i);
    name = full.substr(i + 1);
    return true;
}

// A string field as Go's formatter fills it: the bytes that fit, a NUL when there is room, and a
// '/' left at the end of a cut name replaced (with the slashes before it) by a NUL.
void go_string(char* field, std::size_t width, std::string_view s) {
    put_field(field, s, width);
    if (s.size() < width) field[s.size()] = '\0';
    if (s.size() > width && field[width - 1] == '/') {
        std::size_t n = width;
        while (n > 0 && field[n - 1] == '/')
            --n;
        field[n] = '\0';
    }
}

void go_checksum(char* h) {
    std::memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (std::size_t i = 0; i < block; ++i)
        sum += static_cast<unsigned char>(h[i]);
    put_octal(h + 148, 7, sum);
}

} // namespace

std::string write_tar_as_go(const std::vector<TarEntry>& entries) {
    std::string out;
    std::size_t total = 2 * block;
    for (const auto& e : entries)
        total += 4 * block + 2 * (e.name.size() + e.link.size()) + 64 + e.contents().size();
    reserve_prefaulted(out, total);
    for (const auto& e : entries) {
        const bool has_data = e.type == TarEntry::Type::file;
        std::string_view prefix, name = e.name;
        bool pax = false;
        std::string records;
        if (e.name.size() > 100 || !go_ascii(e.name)) {
            if (!go_split(e.name, prefix, name)) {
                pax = true;
                prefix = {};
            }
        }
        const bool pax_link = e.link.size() > 100 || !go_ascii(e.link);
        if (pax_link) pax = true;
        if (pax) {
            // Records by key: linkpath before path.
            if (pax_link) records += pax_record("linkpath", e.link);
            if (e.name.size() > 100 || !go_ascii(e.name)) records += pax_record("path", e.name);
        }
        if (pax) {
            // The extended header's own header: "<dir>/PaxHeaders.0/<file>", written as Go's
            // writeRawFile writes it (only the v7 fields and the magic).
            const std::size_t slash = e.name.rfind('/');
            std::string dir = slash == std::string::npos ? "" : e.name.substr(0, slash + 1);
            std::string file = slash == std::string::npos ? e.name : e.name.substr(slash + 1);
            std::string xname = dir + "PaxHeaders.0" + (file.empty() ? "" : "/" + file);
            xname = go_to_ascii(xname);
            if (xname.size() > 100) xname.resize(100);
            while (!xname.empty() && xname.back() == '/')
                xname.pop_back();
            char h[block];
            std::memset(h, 0, sizeof h);
            go_string(h, 100, xname);
            put_octal(h + 100, 8, 0);
            put_octal(h + 108, 8, 0);
            put_octal(h + 116, 8, 0);
            put_octal(h + 124, 12, records.size());
            put_octal(h + 136, 12, 0);
            h[156] = 'x';
            std::memcpy(h + 257, "ustar", 6);
            std::memcpy(h + 263, "00", 2);
            go_checksum(h);
            out.append(h, block);
            out += records;
            pad(out);
        }
        char h[block];
        std::memset(h, 0, sizeof h);
        if (pax) {
            go_string(h, 100, go_to_ascii(e.name));
            go_string(h + 157, 100, go_to_ascii(e.link));
        } else {
            go_string(h, 100, name);
            go_string(h + 157, 100, e.link);
            go_string(h + 345, 155, prefix);
        }
        put_octal(h + 100, 8, e.mode & 07777);
        put_octal(h + 108, 8, 0);
        put_octal(h + 116, 8, 0);
        put_size(h + 124, has_data ? e.contents().size() : 0);
        put_octal(h + 136, 12, 0);
        h[156] = type_flag(e.type);
        std::memcpy(h + 257, "ustar", 6);
        std::memcpy(h + 263, "00", 2);
        put_octal(h + 329, 8, 0);
        put_octal(h + 337, 8, 0);
        go_checksum(h);
        out.append(h, block);
        if (has_data) {
            out += e.contents();
            pad(out);
        }
    }
    out.append(2 * block, '\0');
    return out;
}

Result<std::string> layer_tar(std::vector<LayerFile> files) {
    std::map<std::string, LayerFile*> by_path;
    std::map<std::string, bool> dirs; // implied parents
    for (auto& f : files) {
        const std::string& p = f.path;
        if (p.empty()) return path_error(p, "empty");
        if (p.front() == '/') return path_error(p, "absolute (layer paths are relative)");
        std::size_t start = 0;
        for (;;) {
            const auto slash = p.find('/', start);
            const std::string_view part(p.data() + start,
                                        (slash == p.npos ? p.size() : slash) - start);
            if (part.empty() || part == "." || part == "..")
                return path_error(p, "has an empty, \".\" or \"..\" component");
            if (slash == p.npos) break;
            dirs.emplace(p.substr(0, slash), true);
            start = slash + 1;
        }
        if (!by_path.emplace(p, &f).second) return path_error(p, "given twice");
    }
    for (const auto& [d, _] : dirs) {
        auto it = by_path.find(d);
        if (it != by_path.end() && !it->second->is_dir)
            return path_error(d, "is a file, but other paths are below it");
    }
    std::vector<TarEntry> entries;
    for (const auto& [d, _] : dirs)
        if (!by_path.count(d)) entries.push_back({TarEntry::Type::dir, d + "/", {}, {}, 0755});
    for (const auto& [p, f] : by_path) {
        if (f->is_dir)
            entries.push_back({TarEntry::Type::dir, p + "/", {}, {}, f->mode & 07777});
        else
            entries.push_back({TarEntry::Type::file,
                               p,
                               std::move(f->bytes),
                               {},
                               f->mode & 07777,
                               f->borrowed,
                               std::move(f->keep)});
    }
    auto name_of = [](const TarEntry& e) {
        std::string_view n = e.name;
        if (!n.empty() && n.back() == '/') n.remove_suffix(1);
        return n;
    };
    std::sort(entries.begin(), entries.end(), [&](const TarEntry& a, const TarEntry& b) {
        return io::path_less(name_of(a), name_of(b));
    });
    return write_tar(entries);
}

Result<Layer> build_layer(std::vector<LayerFile> files, const LayerOptions& opts) {
    auto tar = layer_tar(std::move(files));
    if (!tar) return std::move(tar).error();
    // The uncompressed digest is taken while the compression runs (large layers).
    Layer l;
    FirstError hash_error;
    std::jthread hasher; // (joined on the way out if the compression throws)
    if (tar->size() >= (std::size_t{1} << 20))
        hasher = try_thread([&] { hash_error.run([&] { l.diff_id = sha256_digest(*tar); }); });
    if (!hasher.joinable()) l.diff_id = sha256_digest(*tar);
    auto gz = parallel_gzip(*tar, opts.gzip_level);
    if (hasher.joinable()) hasher.join();
    hash_error.rethrow();
    if (!gz) return std::move(gz).error();
    l.blob = std::move(*gz);
    l.digest = sha256_digest(l.blob);
    l.size = static_cast<std::int64_t>(l.blob.size());
    l.media_type = std::string(media::oci_layer_gzip);
    return l;
}

Result<std::vector<LayerFile>> layer_files(const io::Tree& tree, std::string_view prefix) {
    auto list = tree.list();
    if (!list) return std::move(list).error();
    std::vector<LayerFile> out;
    std::string pre(prefix);
    while (!pre.empty() && pre.back() == '/')
        pre.pop_back();
    for (const auto& e : *list) {
        if (e.rel.empty()) continue;
        const std::string path = pre.empty() ? e.rel : pre + "/" + e.rel;
        if (e.problem) {
            return Error::invalid(
                       std::string(e.problem->link ? "a symbolic link" : "not a regular file") +
                       " cannot be put in an image layer")
                .about(e.display);
        }
        if (e.is_dir()) {
            out.push_back({path, {}, 0755, true});
            continue;
        }
        auto c = tree.read(e);
        if (!c) return std::move(c).error();
        if (c->too_large) return Error::invalid("too large for an image layer").about(e.display);
        auto held = std::make_shared<const io::Contents>(std::move(*c));
        LayerFile f{path, {}, 0644, false};
        f.borrowed = held->text();
        f.keep = std::move(held);
        out.push_back(std::move(f));
    }
    return out;
}

Compression detect_compression(std::string_view d) {
    if (d.size() >= 2 && static_cast<unsigned char>(d[0]) == 0x1f &&
        static_cast<unsigned char>(d[1]) == 0x8b)
        return Compression::gzip;
    if (d.size() >= 4 && d.substr(0, 4) == std::string_view("\x28\xb5\x2f\xfd", 4))
        return Compression::zstd;
    return Compression::none;
}

Result<std::string> gzip(std::string_view data, int level) {
    return parallel_gzip(data, level);
}

Result<std::string> decompress(std::string_view blob, std::uint64_t limit,
                               const std::string& name) {
    const Compression c = detect_compression(blob);
    if (c == Compression::none) {
        if (blob.size() > limit)
            return Error::invalid(name + ": " + std::to_string(blob.size()) +
                                  " bytes, more than the limit of " + std::to_string(limit));
        return std::string(blob);
    }
    auto api_r = detail::archive_api();
    if (!api_r) return std::move(api_r).error();
    const detail::ArchiveApi& api = **api_r;
    detail::Reader r(api);
    const char* kind = c == Compression::gzip ? "gzip" : "zstd";
    auto bad = [&](const std::string& why) {
        return Error::invalid(name + ": corrupt " + kind + " data: " + why);
    };
    if (c == Compression::gzip)
        api.archive_read_support_filter_gzip(r.get());
    else if (api.archive_read_support_filter_zstd(r.get()) != ARCHIVE_OK)
        return Error::io(name + ": this libarchive cannot read zstd: " + r.error());
    api.archive_read_support_format_raw(r.get());
    if (api.archive_read_open_memory(r.get(), blob.data(), blob.size()) != ARCHIVE_OK)
        return bad(r.error());
    struct archive_entry* e = nullptr;
    const int h = api.archive_read_next_header(r.get(), &e);
    if (h == ARCHIVE_EOF) return std::string();
    if (h != ARCHIVE_OK && h != ARCHIVE_WARN) return bad(r.error());
    std::string out;
    char buf[1 << 16];
    for (;;) {
        const la_ssize_t n = api.archive_read_data(r.get(), buf, sizeof buf);
        if (n < 0) return bad(r.error());
        if (n == 0) break;
        if (out.size() + static_cast<std::size_t>(n) > limit)
            return Error::invalid(name + ": more than " + std::to_string(limit) +
                                  " bytes uncompressed, the limit");
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

Result<std::vector<TarHeader>> read_tar_headers(std::string_view data, const std::string& name) {
    auto tar = decompress(data, std::uint64_t{1} << 34, name);
    if (!tar) return std::move(tar).error();
    auto api_r = detail::archive_api();
    if (!api_r) return std::move(api_r).error();
    const detail::ArchiveApi& api = **api_r;
    detail::Reader r(api);
    api.archive_read_support_filter_none(r.get());
    api.archive_read_support_format_tar(r.get());
    if (api.archive_read_open_memory(r.get(), tar->data(), tar->size()) != ARCHIVE_OK)
        return Error::invalid(name + ": not a tar archive: " + r.error());
    std::vector<TarHeader> out;
    struct archive_entry* e = nullptr;
    for (;;) {
        const int h = api.archive_read_next_header(r.get(), &e);
        if (h == ARCHIVE_EOF) break;
        if (h != ARCHIVE_OK && h != ARCHIVE_WARN)
            return Error::invalid(name + ": corrupt tar: " + r.error());
        TarHeader t;
        auto str = [](const char* s) { return s != nullptr ? std::string(s) : std::string(); };
        t.name = str(api.archive_entry_pathname(e));
        t.uname = str(api.archive_entry_uname(e));
        t.gname = str(api.archive_entry_gname(e));
        t.mode = static_cast<std::uint32_t>(api.archive_entry_perm(e));
        t.uid = api.archive_entry_uid(e);
        t.gid = api.archive_entry_gid(e);
        t.mtime = static_cast<std::int64_t>(api.archive_entry_mtime(e));
        t.size = api.archive_entry_size(e);
        t.has_pax_times = api.archive_entry_atime_is_set(e) != 0 ||
                          api.archive_entry_ctime_is_set(e) != 0 ||
                          api.archive_entry_mtime_nsec(e) != 0;
        if (const char* hl = api.archive_entry_hardlink(e)) {
            t.type = TarEntry::Type::hardlink;
            t.link = hl;
        } else {
            switch (api.archive_entry_filetype(e)) {
            case AE_IFDIR:
                t.type = TarEntry::Type::dir;
                break;
            case AE_IFLNK:
                t.type = TarEntry::Type::symlink;
                t.link = str(api.archive_entry_symlink(e));
                break;
            case AE_IFCHR:
                t.type = TarEntry::Type::char_device;
                break;
            case AE_IFBLK:
                t.type = TarEntry::Type::block_device;
                break;
            case AE_IFIFO:
                t.type = TarEntry::Type::fifo;
                break;
            default:
                t.type = TarEntry::Type::file;
            }
        }
        out.push_back(std::move(t));
    }
    return out;
}

} // namespace kpkg::oci
