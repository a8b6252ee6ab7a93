// Plain files fetched over http(s) once and kept in the cache directory (JSON schemas for
// `kpkg package validate`'s kubeconform check):
//
//   <root>/urls/sha256/<hex of the URL's sha256>   {"url", "status", "digest"} as JSON
//   <root>/blobs/sha256/<hex>                      the body of a 200 answer (the blob cache)
//
// 200 and 404 answers are remembered (a missing schema is an answer too); other statuses are
// not. Records are written after their blob, each atomically, and a blob is verified when read,
// so a damaged entry counts as absent and is fetched again.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "kpkg/core/result.hpp"

namespace kpkg::oci {

class Store;

struct UrlFetch {
    long status = 0;
    std::string body;
    bool too_large = false; // the body was more than max_bytes (and is not kept)
    bool from_cache = false;
};

// The answer for `url`: from the cache when it holds one, else (unless offline) fetched and
// kept; the fetch must be over within `timeout` (0: no limit). `store` may be nullptr (no
// cache). Errors (exit 1): the network (a timeout too), or offline a URL the cache
// does not hold.
Result<UrlFetch> fetch_cached(const Store* store, const std::string& url, bool offline,
                              std::uint64_t max_bytes,
                              std::chrono::milliseconds timeout = std::chrono::seconds(30));

} // namespace kpkg::oci
