// load_catalog: the files of a catalog parsed on all cores (blobs.cpp turns each into a part
// with strings of its own), merged in path order into one model::Catalog, with the content
// digest, the index, and the binary cache in front of it all (cache.cpp).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "blobs.hpp"
#include "cache.hpp"
#include "files.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/core/digest.hpp"
#include "kpkg/core/log.hpp"

namespace kpkg::catalog {

namespace fs = std::filesystem;
using model::Str;

fs::path default_cache_dir() {
    auto env = [](const char* name) -> const char* {
        const char* v = std::getenv(name);
        return v != nullptr && *v != '\0' ? v : nullptr;
    };
    if (const char* d = env("KPKG_CACHE_DIR")) return fs::path(d);
    if (const char* x = env("XDG_CACHE_HOME")) return fs::path(x) / "kpkg";
    if (const char* h = env("HOME")) return fs::path(h) / ".cache" / "kpkg";
    return {};
}

namespace {

std::string errno_text(int e) {
    std::string s = std::generic_category().message(e);
    if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
    return s;
}

// One file to read.
struct Job {
    fs::path path;       // to open ("-": standard input)
    std::string rel;     // for the content digest and the cache
    std::string display; // in positions and messages
};

// What reading it gave.
struct Part {
    model::Catalog catalog;
    std::array<std::uint8_t, 32> sha{};
    std::optional<Error> error; // I/O: the whole load fails
    std::optional<detail::Stamp> stamp;
    bool hashed = false; // sha is that of the bytes parsed (not of a file left unread)
    std::uint64_t size = 0;
    bool cacheable = true; // a regular file (not a pipe)
};

// The bytes of a regular file, mapped (or read when mapping fails); unmapped when it goes.
class Mapped {
public:
    Mapped() = default;
    Mapped(const Mapped&) = delete;
    Mapped& operator=(const Mapped&) = delete;
    ~Mapped() {
        if (map_ != nullptr) ::munmap(map_, size_);
    }
    std::string_view text() const {
        if (map_ != nullptr) return {static_cast<const char*>(map_), size_};
        return view_.data() != nullptr ? view_ : std::string_view(copy_);
    }
    // Reads fd (of `size` bytes): big files mapped, small ones read into `buffer` (reused from
    // file to file: mapping costs more than copying a few pages). False with errno set.
    bool load(int fd, std::size_t size, std::string& buffer) {
        if (size == 0) return true;
        if (size > kMapFrom) {
            void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p != MAP_FAILED) {
                map_ = p;
                size_ = size;
                ::madvise(p, size, MADV_SEQUENTIAL | MADV_WILLNEED);
                return true;
            }
        }
        buffer.resize(size);
        std::size_t used = 0;
        while (used < size) {
            const ssize_t n = ::read(fd, buffer.data() + used, size - used);
            if (n < 0) {
                if (errno == EINTR) continue;
                return false;
            }
            if (n == 0) break;
            used += static_cast<std::size_t>(n);
        }
        view_ = std::string_view(buffer.data(), used);
        return true;
    }
    // Reads a stream up to `limit` bytes; false when it is longer (or on errors, errno set).
    bool load_stream(int fd, std::size_t limit, bool& too_large) {
        std::size_t used = 0;
        copy_.resize(64 * 1024);
        for (;;) {
            if (used == copy_.size()) copy_.resize(copy_.size() * 2);
            const ssize_t n = ::read(fd, copy_.data() + used, copy_.size() - used);
            if (n < 0) {
                if (errno == EINTR) continue;
                return false;
            }
            if (n == 0) break;
            used += static_cast<std::size_t>(n);
            if (used > limit) {
                too_large = true;
                return true;
            }
        }
        copy_.resize(used);
        return true;
    }

private:
    static constexpr std::size_t kMapFrom = 4 << 20;
    void* map_ = nullptr;
    std::size_t size_ = 0;
    std::string_view view_;
    std::string copy_;
};

void add_problem(model::Catalog& c, std::string rule, std::string message,
                 const std::string& file) {
    model::Finding f;
    f.rule = std::move(rule);
    f.message = std::move(message);
    f.pos.file = file;
    c.problems.push_back(std::move(f));
}

std::string size_text(std::uint64_t n) {
    return std::to_string(n) + " bytes";
}

Part read_part(const Job& job, const LoadOptions& opts) {
    Part part;
    model::Catalog& c = part.catalog;
    c.files.push_back(job.display);
    detail::ReadOptions ro;
    ro.limits = opts.limits;
    ro.keep_payloads = opts.keep_payloads;
    const std::size_t limit = opts.limits.max_file_bytes;
    Mapped data;
    if (job.path == "-") {
        bool too_large = false;
        if (!data.load_stream(STDIN_FILENO, limit, too_large)) {
            part.error = Error::io("cannot read standard input: " + errno_text(errno));
            return part;
        }
        if (too_large) {
            add_problem(c, "catalog.too-large",
                        "standard input is larger than the limit of " + size_text(limit) +
                            "; it was not read",
                        job.display);
            return part;
        }
    } else {
        const int fd = ::open(job.path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            part.error = Error::io("cannot open " + job.path.string() + ": " + errno_text(errno));
            return part;
        }
        struct stat sb {};
        if (::fstat(fd, &sb) != 0) {
            const int e = errno;
            ::close(fd);
            part.error = Error::io("cannot read " + job.path.string() + ": " + errno_text(e));
            return part;
        }
        if (!(S_ISREG(sb.st_mode) || S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode))) {
            ::close(fd);
            part.error =
                Error::io("cannot read " + job.path.string() + ": " +
                          (S_ISDIR(sb.st_mode) ? "it is a directory" : "not a regular file"));
            return part;
        }
        bool ok = true;
        bool too_large = false;
        if (S_ISREG(sb.st_mode)) {
            part.stamp = detail::stamp_from(sb, job.rel, detail::StampKind::file);
            part.size = part.stamp->size;
            if (part.size > limit) {
                ::close(fd);
                add_problem(c, "catalog.too-large",
                            "file is " + size_text(part.size) + ", larger than the limit of " +
                                size_text(limit) + "; it was not read",
                            job.display);
                // The digest covers its size: a catalog holding it is not mistaken for another.
                Sha256 h;
                h.update("too-large:" + std::to_string(part.size));
                part.sha = h.finish();
                return part;
            }
            thread_local std::string buffer;
            ok = data.load(fd, static_cast<std::size_t>(part.size), buffer);
        } else {
            // A pipe (kpkg ... <(cmd)) or a device: read as a stream, never cached.
            part.cacheable = false;
            ok = data.load_stream(fd, limit, too_large);
        }
        const int e = errno;
        ::close(fd);
        if (!ok) {
            part.error = Error::io("cannot read " + job.path.string() + ": " + errno_text(e));
            return part;
        }
        if (too_large) {
            add_problem(c, "catalog.too-large",
                        "input is larger than the limit of " + size_text(limit) +
                            "; it was not read",
                        job.display);
            return part;
        }
    }
    const std::string_view text = data.text();
    part.size = text.size();
    Sha256 h;
    h.update(text);
    part.sha = h.finish();
    part.hashed = true;
    detail::read_blobs(text, job.display, c, ro);
    return part;
}

// read_part, with what it throws (out of memory) turned into the part's error: a worker thread
// must not end the process.
Part read_part_safe(const Job& job, const LoadOptions& opts) {
    try {
        return read_part(job, opts);
    } catch (const std::bad_alloc&) {
        Part p;
        p.error = Error::io("out of memory while reading " + job.display);
        return p;
    } catch (const std::exception& e) {
        Part p;
        p.error = Error::internal("reading " + job.display + ": " + e.what());
        return p;
    }
}

// Appends a part (one file, strings of its own) to the catalog.
void merge(model::Catalog& into, model::Catalog& part) {
    const auto file_id = static_cast<std::uint32_t>(into.files.size());
    into.files.push_back(std::move(part.files[1]));
    std::vector<Str> map(part.strings.size());
    for (Str i = 1; i < map.size(); ++i)
        map[i] = into.strings.intern(part.strings[i], part.strings.hash_of(i));
    auto S = [&](Str s) { return map[s]; };
    auto P = [&](model::Pos p) {
        p.file = p.file == 0 ? 0 : file_id;
        return p;
    };
    const auto entries_off = static_cast<std::uint32_t>(into.entries.size());
    const auto skips_off = static_cast<std::uint32_t>(into.skips.size());
    const auto props_off = static_cast<std::uint32_t>(into.properties.size());
    const auto images_off = static_cast<std::uint32_t>(into.related_images.size());
    const auto dep_off = static_cast<std::uint32_t>(into.deprecation_entries.size());
    for (const model::Package& p : part.packages)
        into.packages.push_back({S(p.name), S(p.default_channel), S(p.description),
                                 p.props_begin + props_off, p.props_count, P(p.pos)});
    for (const model::Channel& c : part.channels)
        into.channels.push_back({S(c.package), S(c.name), c.entries_begin + entries_off,
                                 c.entries_count, c.props_begin + props_off, c.props_count,
                                 P(c.pos)});
    for (const model::Bundle& b : part.bundles)
        into.bundles.push_back({S(b.package), S(b.name), S(b.image), S(b.version),
                                b.props_begin + props_off, b.props_count,
                                b.images_begin + images_off, b.images_count, P(b.pos)});
    for (const model::Deprecation& d : part.deprecations)
        into.deprecations.push_back(
            {S(d.package), d.entries_begin + dep_off, d.entries_count, P(d.pos)});
    for (const model::Other& o : part.others)
        into.others.push_back({S(o.schema), S(o.package), S(o.name), P(o.pos)});
    for (const model::Entry& e : part.entries)
        into.entries.push_back({S(e.name), S(e.replaces), S(e.skip_range),
                                e.skips_begin + skips_off, e.skips_count, P(e.pos)});
    for (Str s : part.skips)
        into.skips.push_back(S(s));
    for (const model::Property& p : part.properties) {
        model::Property q = p;
        q.type = S(p.type);
        q.a = S(p.a);
        q.b = S(p.b);
        q.c = S(p.c);
        q.json = S(p.json);
        into.properties.push_back(q);
    }
    for (const model::RelatedImage& r : part.related_images)
        into.related_images.push_back({S(r.name), S(r.image)});
    for (const model::DeprecationEntry& d : part.deprecation_entries)
        into.deprecation_entries.push_back({S(d.schema), S(d.name), S(d.message), P(d.pos)});
    for (model::Finding& f : part.problems)
        into.problems.push_back(std::move(f));
    for (model::Finding& f : part.notes)
        into.notes.push_back(std::move(f));
}

// Reads every job on up to `threads` threads; parts are merged in job order as they come.
Result<void> read_all(const std::vector<Job>& jobs, const LoadOptions& opts, model::Catalog& c,
                      Sha256& digest, std::vector<detail::Stamp>& stamps, LoadInfo& info,
                      bool& cacheable) {
    const std::size_t n = jobs.size();
    unsigned threads = opts.threads != 0 ? opts.threads : std::thread::hardware_concurrency();
    if (threads == 0) threads = 1;
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, n));
    std::vector<std::optional<Part>> parts(n);
    std::mutex mu;
    std::condition_variable cv;
    std::size_t merged = 0;
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    // Parts waiting to be merged are bounded, so memory stays bounded whatever the order; the
    // bound is wide enough for the other workers to go on while one reads a big file.
    const std::size_t window = 32 * static_cast<std::size_t>(threads);
    auto worker = [&] {
        for (;;) {
            const std::size_t i = next.fetch_add(1);
            if (i >= n) return;
            {
                std::unique_lock lock(mu);
                cv.wait(lock, [&] { return i < merged + window || stop.load(); });
            }
            if (stop.load()) return;
            Part p = read_part_safe(jobs[i], opts);
            {
                std::lock_guard lock(mu);
                parts[i].emplace(std::move(p));
            }
            cv.notify_all();
        }
    };
    std::vector<std::thread> pool;
    if (threads > 1)
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back(worker);

    std::optional<Error> failure;
    for (std::size_t i = 0; i < n; ++i) {
        Part p;
        if (threads > 1) {
            std::unique_lock lock(mu);
            cv.wait(lock, [&] { return parts[i].has_value(); });
            p = std::move(*parts[i]);
            parts[i].reset();
        } else {
            p = read_part_safe(jobs[i], opts);
        }
        if (p.error) {
            failure = std::move(p.error);
            break;
        }
        digest.update(jobs[i].rel);
        digest.update(std::string_view("\0", 1));
        digest.update(p.sha.data(), p.sha.size());
        if (p.stamp) {
            // The digest of the bytes parsed proves the file unchanged where its times cannot.
            p.stamp->has_sha = p.hashed;
            p.stamp->sha = p.sha;
            stamps.push_back(std::move(*p.stamp));
        }
        cacheable = cacheable && p.cacheable;
        info.bytes += p.size;
        if (log::enabled(log::Level::debug))
            log::debug("read " + jobs[i].display + " (" +
                       std::to_string(p.catalog.packages.size() + p.catalog.channels.size() +
                                      p.catalog.bundles.size() + p.catalog.deprecations.size() +
                                      p.catalog.others.size()) +
                       " documents)");
        merge(c, p.catalog);
        {
            std::lock_guard lock(mu);
            merged = i + 1;
        }
        cv.notify_all();
    }
    if (failure) {
        stop.store(true);
        cv.notify_all();
    }
    for (auto& t : pool)
        t.join();
    info.files = n;
    if (failure) return fail(std::move(*failure));
    return {};
}

} // namespace

Result<model::Catalog> load_catalog(const fs::path& src, const LoadOptions& opts) {
    LoadInfo scratch_info;
    LoadInfo& info = opts.info != nullptr ? *opts.info : scratch_info;
    info = LoadInfo{};
    const bool use_cache = !opts.cache_dir.empty() && src != "-";
    if (use_cache) {
        std::string note;
        if (auto cached = detail::cache_load(src, opts, note)) {
            info.cache_hit = true;
            log::debug("catalog " + src.string() + " read from the cache");
            return std::move(*cached);
        }
        info.cache_note = note;
        if (!note.empty()) log::debug("catalog cache: " + note);
    }

    model::Catalog c;
    std::vector<Job> jobs;
    detail::SourceRecord record;
    // Whatever changes from here on is changed within the racy window of the stored manifest.
    record.started_ns = detail::now_ns();
    std::vector<detail::Stamp>& stamps = record.stamps;
    std::error_code ec;
    const bool is_dir = src != "-" && fs::is_directory(src, ec);
    if (src == "-") {
        jobs.push_back({src, "-", "<stdin>"});
    } else if (is_dir) {
        detail::Listing listing = KPKG_TRY(detail::list_files(src));
        if (use_cache) { // what the manifest records besides the files read
            record.listing = detail::listing_digest(listing);
            for (const auto& d : listing.dirs)
                if (auto st = detail::stamp_of(d.path, d.rel, detail::StampKind::dir))
                    stamps.push_back(std::move(*st));
            for (const auto& f : listing.ignores)
                if (auto st = detail::stamp_of(f.path, f.rel, detail::StampKind::file))
                    stamps.push_back(std::move(*st));
        }
        jobs.reserve(listing.files.size());
        for (auto& f : listing.files)
            jobs.push_back({f.path, f.rel, (src / f.rel).string()});
    } else {
        if (!fs::exists(src, ec))
            return fail(Error::io("cannot read " + src.string() + ": " +
                                  (ec ? ec.message() : errno_text(ENOENT))));
        jobs.push_back({src, src.filename().string(), src.string()});
    }

    Sha256 digest;
    digest.update("kpkg-catalog-content-v1\n");
    bool cacheable = true;
    KPKG_TRY(read_all(jobs, opts, c, digest, stamps, info, cacheable));
    c.content_digest = digest.finish_digest();
    c.index();

    if (use_cache && cacheable) {
        std::vector<std::string> rels;
        rels.reserve(jobs.size());
        for (const Job& j : jobs)
            rels.push_back(j.rel);
        std::string note;
        detail::cache_store(src, opts, c, rels, record, note);
        info.cache_written = note.empty();
        if (!note.empty()) {
            info.cache_note = note;
            log::debug("catalog cache: " + note);
        }
    }
    return c;
}

} // namespace kpkg::catalog
