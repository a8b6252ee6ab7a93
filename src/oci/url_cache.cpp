// URLs fetched once into the cache (see url_cache.hpp).
#include "kpkg/oci/url_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "kpkg/core/atomic_file.hpp"
#include "kpkg/core/digest.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/net/http.hpp"
#include "kpkg/oci/store.hpp"

namespace kpkg::oci {
namespace {

namespace fs = std::filesystem;

fs::path record_path(const Store& s, const std::string& url) {
    return s.root() / "urls" / "sha256" / sha256_digest(url).substr(7);
}

// The remembered answer; nothing when there is none or it is damaged.
std::optional<UrlFetch> cached(const Store& s, const std::string& url) {
    const fs::path path = record_path(s, url);
    const auto rec = read_url_record(path);
    if (!rec || rec->url != url || (rec->status != 200 && rec->status != 404)) return std::nullopt;
    UrlFetch f;
    f.status = rec->status;
    f.from_cache = true;
    if (f.status == 200) {
        if (rec->digest.empty()) return std::nullopt;
        auto body = s.get(rec->digest);
        if (!body || !*body) return std::nullopt; // the blob is gone or damaged
        f.body = std::move(**body);
    }
    // Used now: `kpkg cache prune --older-than` goes by this time, as it does by a blob's.
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
    return f;
}

Result<void> remember(const Store& s, const std::string& url, const UrlFetch& f) {
    std::string digest;
    if (f.status == 200) {
        digest = sha256_digest(f.body);
        if (auto r = s.put(digest, f.body); !r) return r;
    }
    io::Node rec = io::Node::map();
    rec.set("url", io::Node::string(url));
    rec.set("status", io::Node::integer(f.status));
    if (!digest.empty()) rec.set("digest", io::Node::string(digest));
    const fs::path p = record_path(s, url);
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    if (ec)
        return fail(Error::io("cannot create " + p.parent_path().string() + ": " + ec.message()));
    return write_cache_file(p, io::to_json(rec), 0644);
}

} // namespace

Result<UrlFetch> fetch_cached(const Store* store, const std::string& url, bool offline,
                              std::uint64_t max_bytes, std::chrono::milliseconds timeout) {
    if (store)
        if (auto c = cached(*store, url)) return *c;
    if (offline)
        return fail(Error::io("schema " + url + " is not in the cache (offline): run once " +
                              "without --offline to fetch it"));
    if (auto r = net::init(); !r) return fail(std::move(r).error());
    net::Http h;
    net::Request req;
    req.url = url;
    req.follow_redirects = true;
    req.max_body = max_bytes + 1;
    req.user_agent = "kpkg";
    req.timeout_ms = static_cast<long>(timeout.count());
    net::Response resp = h.perform(req);
    UrlFetch f;
    if (resp.outcome == net::Response::Outcome::too_large) {
        f.status = 200;
        f.too_large = true;
        return f;
    }
    if (resp.outcome != net::Response::Outcome::ok)
        return fail(Error::io("failed downloading schema at " + url + ": " + resp.error));
    f.status = resp.status;
    f.body = std::move(resp.body);
    if (f.body.size() > max_bytes) {
        f.body.clear();
        f.too_large = true;
        return f;
    }
    if (store && (f.status == 200 || f.status == 404))
        if (auto r = remember(*store, url, f); !r) return fail(std::move(r).error());
    return f;
}

} // namespace kpkg::oci
