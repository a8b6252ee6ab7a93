// Connecting to a cluster as client-go does: kubeconfig files (--kubeconfig, $KUBECONFIG merged,
// ~/.kube/config), a context, its cluster and user, TLS, tokens and exec credential plugins.
// libcurl is loaded by connect(), never by commands that do not call it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "kpkg/core/result.hpp"
#include "kpkg/kube/api.hpp"

namespace kpkg::kube {

struct ConnectOptions {
    std::string kubeconfig; // --kubeconfig ("" = $KUBECONFIG, then ~/.kube/config)
    std::string context;    // --context ("" = current-context)
    std::string namespace_; // -n ("" = the context's namespace, if it names one)
    std::string user_agent = "kpkg";
    // One request, from connecting to the last byte of the reply (a watch: the timeout its
    // caller gives). A request that gets no whole answer in this time is not tried again.
    std::chrono::milliseconds request_timeout{30000};
    // Further attempts for 5xx, 429 (Retry-After honoured), dropped and refused connections,
    // after an exponential back-off (250 ms doubling, at most 8 s). Api::set_deadline bounds
    // them all.
    int retries = 5;
    // Requests in flight at once; the implementation is safe to call from this many threads.
    int concurrency = 8;
    // A reply (or one watch event) larger than this is an error rather than an out-of-memory.
    std::uint64_t max_reply_bytes = std::uint64_t{128} << 20;
    // Set (by a signal handler) to interrupt: an exec credential plugin running is killed at
    // once (with what it started) and its request fails, and no plugin is started again.
    // Requests in flight are not cut short.
    const std::atomic<bool>* interrupted = nullptr;
};

// Reads the kubeconfig and returns a client for its context. Errors: a kubeconfig that does
// not parse (file and position), a missing context/cluster/user (named), unreadable
// certificate files: exit code 3 for bad configuration, 1 for I/O. No request is made here.
Result<std::unique_ptr<Api>> connect(const ConnectOptions& opts);

} // namespace kpkg::kube
