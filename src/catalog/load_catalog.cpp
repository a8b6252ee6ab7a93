// load_catalog: the files of a catalog parsed on all cores (blobs.cpp turns each into a part
// with strings of its own), merged in path order into one model::Catalog, with the content
// digest, the index, and the binary cache in front of it all (cache.cpp).
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
#include "kpkg/core/memory.hpp"
#include "kpkg/core/threads.hpp"
#include "kpkg/io/tree.hpp"

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

// One file to read: an entry of the tree's listing (rel for the content digest and the cache,
// display in positions and messages).
using Job = io::Entry;

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

void add_problem(model::Catalog& c, std::string rule, std::string message,
                 const std::string& file) {
    model::CatalogFinding f;
    f.rule = std::move(rule);
    f.message = std::move(message);
    f.pos.file = file;
    c.problems.push_back(std::move(f));
}

std::string size_text(std::uint64_t n) {
    return std::to_string(n) + " bytes";
}

Part read_part(const io::Tree& tree, const Job& job, const LoadOptions& opts) {
    Part part;
    model::Catalog& c = part.catalog;
    c.files.push_back(job.display);
    detail::ReadOptions ro;
    ro.limits = opts.limits;
    ro.keep_payloads = opts.keep_payloads;
    const std::size_t limit = opts.limits.max_file_bytes;
    // Small files are read into a buffer reused from file to file (mapping costs more than
    // copying a few pages); big ones are mapped.
    thread_local std::string buffer;
    io::ReadOptions read_opts;
    read_opts.limit = limit;
    read_opts.buffer = &buffer;
    auto got = job.problem ? Result<io::Contents>(fail(detail::problem_error(tree, job)))
                           : tree.read(job.rel, read_opts);
    if (!got.ok()) {
        part.error = std::move(got).error();
        return part;
    }
    const io::Contents& data = *got;
    if (data.stamp) {
        part.stamp = detail::stamp_from(*data.stamp, job.rel, detail::StampKind::file);
    } else if (!data.streamed) {
        // A file of a tree without stamps (memory, an image): its size bounds the cache image.
        part.stamp =
            detail::Stamp{job.rel, detail::StampKind::file, data.size, 0, 0, 0, 0, false, {}};
    }
    part.cacheable = !data.streamed;
    if (data.too_large) {
        if (!data.streamed) {
            part.size = data.size;
            add_problem(c, "catalog.too-large",
                        "file is " + size_text(part.size) + ", larger than the limit of " +
                            size_text(limit) + "; it was not read",
                        job.display);
            // The digest covers its size: a catalog holding it is not mistaken for another.
            Sha256 h;
            h.update("too-large:" + std::to_string(part.size));
            part.sha = h.finish();
        } else {
            add_problem(c, "catalog.too-large",
                        (dynamic_cast<const io::StdinTree*>(&tree) != nullptr
                             ? std::string("standard input is larger")
                             : std::string("input is larger")) +
                            " than the limit of " + size_text(limit) + "; it was not read",
                        job.display);
        }
        return part;
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
Part read_part_safe(const io::Tree& tree, const Job& job, const LoadOptions& opts) {
    try {
        return read_part(tree, job, opts);
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
    for (model::CatalogFinding& f : part.problems)
        into.problems.push_back(std::move(f));
    for (model::CatalogFinding& f : part.notes)
        into.notes.push_back(std::move(f));
}

// Reads every job on up to `threads` threads; parts are merged in job order as they come.
Result<void> read_all(const io::Tree& tree, const std::vector<Job>& jobs, const LoadOptions& opts,
                      model::Catalog& c, Sha256& digest, std::vector<detail::Stamp>& stamps,
                      LoadInfo& info, bool& cacheable) {
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
    // A worker that throws even so (out of memory building the error) stops the load; this
    // thread rethrows it.
    FirstError errors;
    auto stop_all = [&] {
        {
            std::lock_guard lock(mu);
            stop.store(true);
        }
        cv.notify_all();
    };
    auto worker = [&] {
        huge_thread_heap();
        const bool ok = errors.run([&] {
            for (;;) {
                const std::size_t i = next.fetch_add(1);
                if (i >= n) return;
                {
                    std::unique_lock lock(mu);
                    cv.wait(lock, [&] { return i < merged + window || stop.load(); });
                }
                if (stop.load()) return;
                Part p = read_part_safe(tree, jobs[i], opts);
                {
                    std::lock_guard lock(mu);
                    parts[i].emplace(std::move(p));
                }
                cv.notify_all();
            }
        });
        if (!ok) stop_all();
    };
    std::vector<std::jthread> pool;
    if (threads > 1)
        for (unsigned t = 0; t < threads; ++t)
            if (!try_start(pool, worker)) break;
    // With no worker started, this thread reads the files itself.
    const bool pooled = !pool.empty();

    std::optional<Error> failure;
    errors.run([&] { // (what this thread throws is rethrown once the workers are joined)
        for (std::size_t i = 0; i < n; ++i) {
            Part p;
            if (pooled) {
                std::unique_lock lock(mu);
                cv.wait(lock, [&] { return parts[i].has_value() || errors.failed(); });
                if (!parts[i]) break; // a worker failed
                p = std::move(*parts[i]);
                parts[i].reset();
            } else {
                p = read_part_safe(tree, jobs[i], opts);
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
    });
    if (failure || errors.failed()) stop_all();
    for (auto& t : pool)
        t.join();
    errors.rethrow();
    info.files = n;
    if (failure) return fail(std::move(*failure));
    return {};
}

} // namespace

Result<model::Catalog> load_catalog(const io::Tree& tree, const LoadOptions& opts) {
    LoadInfo scratch_info;
    LoadInfo& info = opts.info != nullptr ? *opts.info : scratch_info;
    info = LoadInfo{};
    const io::Identity id = opts.cache_dir.empty() ? io::Identity{} : tree.identity();
    const bool use_cache = id.kind != io::Identity::Kind::none;
    if (use_cache) {
        std::string note;
        if (auto cached = detail::cache_load(tree, id, opts, note)) {
            info.cache_hit = true;
            log::debug("catalog " + tree.display_root() + " read from the cache");
            return std::move(*cached);
        }
        info.cache_note = note;
        if (!note.empty()) log::debug("catalog cache: " + note);
    }

    model::Catalog c;
    detail::SourceRecord record;
    // Whatever changes from here on is changed within the racy window of the stored manifest.
    record.started_ns = detail::now_ns();
    std::vector<detail::Stamp>& stamps = record.stamps;
    auto listed = detail::select_files(tree);
    if (!listed) return fail(std::move(listed).error());
    const detail::Listing& listing = *listed;
    if (use_cache && tree.is_directory()) { // what the manifest records besides the files read
        record.listing = detail::listing_digest(listing);
        if (id.kind == io::Identity::Kind::stamped) {
            for (const auto& d : listing.dirs)
                if (auto st = tree.stamp(d.rel))
                    stamps.push_back(detail::stamp_from(*st, d.rel, detail::StampKind::dir));
            for (const auto& f : listing.ignores)
                if (auto st = tree.stamp(f.rel))
                    stamps.push_back(detail::stamp_from(*st, f.rel, detail::StampKind::file));
        }
    }
    const std::vector<Job>& jobs = listing.files;

    Sha256 digest;
    digest.update("kpkg-catalog-content-v1\n");
    bool cacheable = true;
    if (auto r = read_all(tree, jobs, opts, c, digest, stamps, info, cacheable); !r)
        return fail(std::move(r).error());
    c.content_digest = digest.finish_digest();
    c.index();

    if (use_cache && cacheable) {
        std::vector<std::string> rels;
        rels.reserve(jobs.size());
        for (const Job& j : jobs)
            rels.push_back(j.rel);
        std::string note;
        detail::cache_store(id, opts, c, rels, record, note);
        info.cache_written = note.empty();
        if (!note.empty()) {
            info.cache_note = note;
            log::debug("catalog cache: " + note);
        }
    }
    return c;
}

Result<model::Catalog> load_catalog(const fs::path& src, const LoadOptions& opts) {
    return load_catalog(*io::open_path(src), opts);
}

} // namespace kpkg::catalog
