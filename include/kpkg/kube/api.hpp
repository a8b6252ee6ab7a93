// The Kubernetes API as kpkg's apply engine uses it: one abstract interface, implemented over HTTP
// by kube::connect (connect.hpp) and in memory by tests. Objects are io::Node trees (a JSON
// object); every call names the resource type by what discovery reported, never by a guessed
// plural.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::kube {

// One resource type as discovery reports it.
struct Resource {
    std::string group; // "" for the core group
    std::string version;
    std::string kind;
    std::string name; // the plural resource name ("deployments"); subresources are not listed
    bool namespaced = false;
    std::vector<std::string> verbs;
    std::vector<std::string> short_names;

    // "deployments.apps" / "namespaces" (kubectl's resource.group form)
    std::string resource_group() const;
};

// What discovery says the server serves: every group/version and its resources, with the
// preferred version of each group first.
struct Discovery {
    std::vector<Resource> resources;
    bool aggregated = false; // answered by the aggregated (apidiscovery v2) endpoint
    // Group versions that could not be read (an aggregated API server that is down: their
    // resources are missing) or that the aggregated list marks Stale (listed, maybe out of
    // date), as "group/version" ("v1" for the core group).
    std::vector<std::string> unavailable;

    // The resource serving group/version + kind, or nullptr.
    const Resource* find(const std::string& group, const std::string& version,
                         const std::string& kind) const;
};

// The server refused: its Status object (or, for an answer that is no Status, the HTTP code and
// the start of the body). `status` is the HTTP code; reason is the Status reason ("NotFound",
// "Conflict", "Invalid", "Forbidden", "AlreadyExists", ...). A call returns a failed Result
// only when no answer could be had at all (connection refused or dropped after the retries, a
// reply that does not parse): exit code 1.
struct ApiError {
    long status = 0;
    std::string reason;
    std::string message;
    std::vector<std::string> causes; // details.causes[].message with their field
    bool transient = false;          // 5xx or 429: retried with backoff already, then given up
};

template <class T>
struct Reply {
    std::optional<T> value;      // set on success
    std::optional<ApiError> api; // set when the server (or the transport) refused
    bool ok() const { return value.has_value(); }
};

struct ApplyOptions {
    std::string field_manager = "kpkg";
    bool force = false;   // force=true: take ownership of conflicting fields
    bool dry_run = false; // dryRun=All: the server validates and answers, nothing is stored
};

struct Applied {
    io::Node object;      // what the server stored (or would store, in a dry run)
    bool created = false; // 201 Created rather than 200
};

struct ListResult {
    std::vector<io::Node> items;
    std::string resource_version;
};

struct ListOptions {
    std::string label_selector;
    std::string field_selector;
    std::int64_t limit = 0; // 0 = no limit; continue tokens are followed by the client
};

struct WatchEvent {
    std::string type; // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
    io::Node object;
};

struct WatchOptions {
    std::string label_selector;
    std::string field_selector;
    std::string resource_version;         // start after this version ("" = from now, after a LIST)
    std::chrono::milliseconds timeout{0}; // 0 = until on_event returns false or the server ends
};

enum class Propagation { background, foreground, orphan };

// A time limit for everything an Api does until it is lifted: every request (each attempt gets
// the smaller of its own limit and the time left), the back-off between retries, and credential
// plugins end by `at`. A request cut short fails (exit 1) saying that the time limit passed;
// `limit` is how long it was (for that message).
struct Deadline {
    std::chrono::steady_clock::time_point at;
    std::chrono::milliseconds limit{0};
};

// Implementations are safe to call from several threads at once (the apply engine applies a
// phase's objects concurrently).
class Api {
public:
    virtual ~Api() = default;

    // Discovery, cached by the implementation; refresh = read it again (after CRDs became
    // Established). The Error is a transport or parse failure.
    virtual Result<const Discovery*> discover(bool refresh) = 0;

    // Server-side apply (PATCH application/apply-patch+yaml, body = the object as JSON).
    // ns is "" for cluster-scoped resources.
    virtual Result<Reply<Applied>> apply(const Resource& r, const std::string& ns,
                                         const io::Node& object, const ApplyOptions& opts) = 0;

    // GET; a NotFound is Reply with api->status == 404.
    virtual Result<Reply<io::Node>> get(const Resource& r, const std::string& ns,
                                        const std::string& name) = 0;

    // LIST (ns "" = all namespaces for a namespaced resource).
    virtual Result<Reply<ListResult>> list(const Resource& r, const std::string& ns,
                                           const ListOptions& opts) = 0;

    // WATCH: calls on_event for each event until it returns false, the timeout passes, or the
    // server closes the stream (then returns normally; the caller re-lists or re-watches).
    virtual Result<Reply<bool>> watch(const Resource& r, const std::string& ns,
                                      const WatchOptions& opts,
                                      const std::function<bool(const WatchEvent&)>& on_event) = 0;

    // DELETE; a NotFound is Reply with api->status == 404.
    virtual Result<Reply<bool>> remove(const Resource& r, const std::string& ns,
                                       const std::string& name, Propagation p, bool dry_run) = 0;

    // The namespace to use for namespaced objects that name none: -n, else the context's
    // namespace, else "" (the caller decides: kubectl would use "default").
    // describe(): a name for messages ("https://127.0.0.1:6443 (context kind-dev)").
    virtual std::string default_namespace() const = 0;
    virtual std::string describe() const = 0;

    // Sets (or, with nullopt, lifts) the time limit of what follows; the apply engine sets its
    // RunOptions::timeout here for the length of a run. Called while no request is in flight.
    // An implementation without requests of its own to bound may ignore it.
    virtual void set_deadline(std::optional<Deadline> d) { (void)d; }
};

} // namespace kpkg::kube
