// URLs fetched once into the cache (see url_cache.hpp).
#include "kpkg/oci/url_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "http.hpp"
#include "kpkg/core/atomic_file.hpp"
#include "kpkg/core/digest.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/oci/store.hpp"

namespace kpkg::oci {
namespace {

namespace fs = std::filesystem;

fs::path record_path(const Store& s, const std::string& url) {
    return s.root() / "urls" / "sha256" / sha256_digest(url).substr(7);
}

// The remembered answer; nothing when there is none or it is damaged.
std::optional<UrlFetch> cached(const Store& s, const std::string& url) {
    auto text = read_cache_file(record_path(s, url), 1 << 20);
    if (!text || !*text) return std::nullopt;
    auto docs = io::parse_json(**text, "url record");
    if (!docs || docs->size() != 1 || !(*docs)[0].root.is_map()) return std::nullopt;
    const io::Node& r = (*docs)[0].root;
    const io::Node* u = r.get("url");
    const io::Node* st = r.get("status");
    if (!u || !u->is_string() || u->text != url || !st) return std::nullopt;
    const auto status = st->as_int();
    if (!status || (*status != 200 && *status != 404)) return std::nullopt;
    UrlFetch f;
    f.status = static_cast<long>(*status);
    f.from_cache = true;
    if (f.status == 200) {
        const io::Node* d = r.get("digest");
        if (!d || !d->is_string()) return std::nullopt;
        auto body = s.get(d->text);
        if (!body || !*body) return std::nullopt; // the blob is gone or damaged
        f.body = std::move(**body);
    }
    // Used now: `kpkg cache prune --older-than` goes by this time, as it does by a blob's.
    ::utimensat(AT_FDCWD, record_path(s, url).c_str(), nullptr, 0);
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
                              std::uint64_t max_bytes) {
    if (store)
        if (auto c = cached(*store, url)) return *c;
    if (offline)
        return fail(Error::io("schema " + url + " is not in the cache (offline): run once " +
                              "without --offline to fetch it"));
    if (auto r = http::init(); !r) return fail(std::move(r).error());
    http::Http h;
    http::Request req;
    req.url = url;
    req.follow_redirects = true;
    req.max_body = max_bytes + 1;
    req.user_agent = "kpkg";
    http::Response resp = h.perform(req);
    UrlFetch f;
    if (resp.outcome == http::Response::Outcome::too_large) {
        f.status = 200;
        f.too_large = true;
        return f;
    }
    if (resp.outcome != http::Response::Outcome::ok)
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
