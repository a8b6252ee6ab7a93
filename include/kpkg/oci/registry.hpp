// A client of the OCI distribution API (registries: quay.io, docker.io, a local docker-registry)
// over libcurl, which is loaded on first use. Reads and writes manifests and blobs, and pulls and
// pushes whole images (oci::Content), with the blob cache (oci::Store) in front.
//
// Errors name the registry, the repository and the object: Error::io (exit 1) for the network,
// the registry's refusals (401, 403, 404, 5xx), digest mismatches and oversized answers;
// Error::invalid (exit 3) for a reference that is not what the call needs (no tag to push under)
// and for content that is not a well-formed image.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/oci/content.hpp"
#include "kpkg/oci/image.hpp"
#include "kpkg/oci/reference.hpp"

namespace kpkg::oci {

class Store;
struct Credential;

// What a registry answers for a manifest.
struct RemoteManifest {
    std::string media_type; // the Content-Type (or the document's mediaType when that is absent)
    std::string bytes;
    std::string digest; // sha256 of bytes
};

// Where a transfer is: `done` of `total` bytes (total 0 when unknown) of the blob `digest`.
struct Progress {
    enum class Direction { download, upload };
    Direction direction = Direction::download;
    std::string digest;
    std::uint64_t done = 0;
    std::uint64_t total = 0;
    // The transfer finished (the blob is complete, skipped because it existed, or mounted).
    bool finished = false;
};
// Called from transfer threads, never two calls at a time; must not throw.
using ProgressFn = std::function<void(const Progress&)>;

struct RegistryOptions {
    // Registries ("host[:port]" as in references) spoken to over plain http. Loopback registries
    // (localhost, 127.0.0.1, ::1, with any port) always are; every other registry is spoken to
    // over https with its certificate verified.
    std::set<std::string> insecure;
    // Credentials lookup: these files in this order (auth.hpp: find_credential). Empty means
    // default_auth_files().
    std::vector<std::string> auth_files;
    // Credentials to use instead of the lookup, by registry ("host[:port]").
    std::map<std::string, std::pair<std::string, std::string>> credentials;

    // Retries after a 5xx, a 429, a dropped connection or a transfer aborted for its rate (never
    // after another 4xx), with the delay doubling from `backoff`; a Retry-After of a 429 or 503
    // is honoured up to 10 s.
    int retries = 3;
    std::chrono::milliseconds backoff{500};
    std::chrono::milliseconds connect_timeout{15000};
    // Deadlines; 0 turns each off.
    //
    // A small document (a manifest, a token, a HEAD, the calls that open, mount or abandon an
    // upload, a manifest PUT, /v2/) must have arrived in full within `request_timeout` of the
    // first attempt: its retries and the token fetch it needs share the deadline (no retry is
    // made when its back-off alone would reach it).
    std::chrono::milliseconds request_timeout{30000};
    // Every transfer that moves less than `min_rate` bytes per second for `rate_window` is
    // aborted (blobs are then retried: a new connection often cures a stuck one), and each
    // attempt at a blob (GET, upload PUT or PATCH) also ends after rate_window + its size /
    // min_rate. A blob of S bytes thus takes at most (retries + 1) × (rate_window + S /
    // min_rate) plus the back-off (3.5 s with the defaults), whatever the registry does.
    std::uint64_t min_rate = 10 * 1024;
    std::chrono::milliseconds rate_window{30000};

    // Blobs of at least this size are uploaded in chunks of `chunk_size` (PATCH, then PUT).
    std::size_t chunk_threshold = std::size_t{64} << 20;
    std::size_t chunk_size = std::size_t{16} << 20;
    // Limits on what a registry may send (containers-image refuses manifests over 4 MiB).
    std::size_t max_manifest_bytes = std::size_t{4} << 20;
    std::uint64_t max_blob_bytes = std::uint64_t{4} << 30;
    // Blobs transferred at the same time by pull and push.
    int parallel = 4;

    ProgressFn progress;
    // "" means "kpkg/<version>".
    std::string user_agent;
};

struct PullOptions {
    // The platform an index is resolved to (image.hpp's platform_matches); empty means
    // host_platform().
    std::optional<Platform> platform;
    // Every manifest of an index (the index is then the root) instead of one.
    bool all_platforms = false;
    // Answer from the cache only: a digest reference from its blobs, a tag from the tag records
    // (Error::io naming the reference when the cache cannot answer).
    bool offline = false;
};

struct PushOptions {
    // A repository of the same registry that may hold the blobs already (mounted instead of
    // uploaded when the registry allows it).
    std::string mount_from;
};

// One client per command: it keeps connections, credentials and tokens for the run. Its calls
// are made from one thread at a time (pull and push run their own transfer threads).
class Registry {
public:
    // `store` (may be null: no cache) must outlive the client.
    explicit Registry(RegistryOptions opts = {}, const Store* store = nullptr);
    ~Registry();
    Registry(const Registry&) = delete;
    Registry& operator=(const Registry&) = delete;

    const RegistryOptions& options() const;

    // The base URL of a registry ("https://quay.io", "http://127.0.0.1:5000"); docker.io is
    // reached at registry-1.docker.io.
    std::string base_url(std::string_view registry) const;

    // GET /v2/ (authenticating when the registry asks): whether the registry speaks the API.
    Result<void> ping(std::string_view registry);

    // The manifest `ref` names (normalize()d here), by its digest when it has one, else its tag.
    // The digest is checked against the reference's and against Docker-Content-Digest.
    Result<RemoteManifest> get_manifest(const Reference& ref);
    // HEAD: the manifest's digest (its Docker-Content-Digest; for a tag, "" when the registry
    // sends none) and media type, bytes empty, without downloading it; nothing when the
    // registry has no such manifest.
    Result<std::optional<RemoteManifest>> head_manifest(const Reference& ref);
    // PUT under the reference's tag (or its digest when it has no tag); returns the digest.
    Result<std::string> put_manifest(const Reference& ref, std::string_view media_type,
                                     std::string_view bytes);

    // HEAD: the size of the blob in the repository `repo` names (tag and digest ignored);
    // nothing when absent.
    Result<std::optional<std::uint64_t>> head_blob(const Reference& repo, std::string_view digest);
    // GET (redirects followed): the blob, verified against `digest` (and `size` when known).
    Result<std::string> get_blob(const Reference& repo, std::string_view digest,
                                 std::optional<std::uint64_t> size = std::nullopt);
    // Uploads a blob (skipped when the registry has it already): POST, then one PUT, or PATCH
    // chunks and a closing PUT from `chunk_threshold` bytes on. With `mount_from`, a
    // cross-repository mount is asked for first (an upload follows when it is refused).
    Result<void> put_blob(const Reference& repo, std::string_view digest, std::string_view bytes,
                          std::string_view mount_from = {});
    // POST ?mount=&from=: true when the registry mounted it, false when it did not (the upload
    // it opened instead is abandoned).
    Result<bool> mount_blob(const Reference& repo, std::string_view digest, std::string_view from);

    // Pushes an image: every blob that is not a manifest (in parallel, existing ones skipped),
    // then an index's manifests by digest, then the root under the reference's tag (by digest
    // when the reference has no tag). The content is checked first (every blob hashes to its
    // key, the root and what it lists are present). Returns the root's digest; the cache learns
    // the tag.
    Result<std::string> push(const Reference& ref, const Content& content,
                             const PushOptions& opts = {});
    // Pulls an image: the manifest (an index resolved to one platform, whose manifest becomes
    // the root, or to all), its config and layers; blobs come from the cache when it has them
    // and go into it. A digest reference whose blobs are all cached needs no network at all.
    Result<Content> pull(const Reference& ref, const PullOptions& opts = {});

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace kpkg::oci
