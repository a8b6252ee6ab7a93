// HTTP over libcurl (loaded on first use), for the registry client and the Kubernetes client:
// one request at a time per Http object (one per thread), no retries or authentication here
// (oci's registry client and kube's API client add them). TLS material can come from memory, and a
// reply body can be streamed to a callback (Kubernetes watches).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"

namespace kpkg::net {

struct Request {
    std::string method = "GET"; // GET, HEAD, POST, PUT, PATCH, DELETE
    std::string url;
    std::vector<std::string> headers; // "Name: value"
    std::string_view body;            // sent for POST, PUT and PATCH
    bool follow_redirects = false;
    // More response body than this aborts the transfer (Response::too_large).
    std::uint64_t max_body = std::uint64_t{4} << 20;
    long connect_timeout_ms = 15000;
    // A transfer that moves fewer than `min_rate` bytes per second (sent and received together,
    // as libcurl averages them over its last few seconds) for `stall_timeout_s` seconds is
    // aborted (Response::too_slow). stall_timeout_s 0 = no such limit; the default is a stall
    // guard (1 byte in 60 s).
    long stall_timeout_s = 60;
    long min_rate = 1;
    std::string user_agent;
    // Bytes received or sent so far (and the expected total, 0 when unknown).
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;

    // The whole transfer, in milliseconds; 0 = no limit. stall_timeout_s 0 = no stall limit.
    long timeout_ms = 0;
    // TLS from memory (PEM; empty = the system's CA bundle, no client certificate; a CA bundle
    // given replaces the system's). The views must stay valid during perform().
    std::string_view ca_pem;
    std::string_view client_cert_pem;
    std::string_view client_key_pem;
    bool insecure = false; // no verification of the server's certificate or name
    // "HOST:PORT:CONNECT-HOST:CONNECT-PORT": connect there for the URL's host and port (the URL
    // then carries the name the server's certificate must have).
    std::string connect_to;
    // e.g. "http://proxy:3128", for every host (no_proxy ignored); empty = curl's default (the
    // *_proxy variables).
    std::string proxy;
    // A 2xx reply body is handed to this, chunk by chunk, instead of being kept in
    // Response::body; returning false stops the transfer (Response::stopped, outcome ok). Other
    // replies are buffered as usual.
    std::function<bool(std::string_view chunk)> on_body;
};

struct Response {
    // The transfer itself: ok, or what went wrong before a whole answer arrived.
    enum class Outcome {
        ok,
        connect_failed, // refused, unreachable, name not resolved, TLS handshake
        dropped,        // the connection broke or stalled (worth a retry)
        too_large,      // more than max_body
        failed,         // anything else curl reports
    };
    Outcome outcome = Outcome::ok;
    std::string error;      // curl's description when outcome != ok
    int curl_code = 0;      // CURLcode of the transfer (0 = CURLE_OK)
    bool stopped = false;   // on_body asked to stop
    bool timed_out = false; // timeout_ms, the connect timeout or the rate limit passed
    bool too_slow = false;  // (with timed_out) below min_rate for stall_timeout_s
    long status = 0;
    // Response headers, names in lower case; a repeated header keeps every value, joined
    // with ", " (WWW-Authenticate challenges stay parseable).
    std::map<std::string, std::string> headers;
    std::string body;
    std::string effective_url;

    std::string header(const std::string& lower_name) const {
        auto it = headers.find(lower_name);
        return it == headers.end() ? std::string() : it->second;
    }
};

// Loads libcurl (once per process); the error names the Debian package when it is missing.
Result<void> init();

// A reusable connection (an easy handle: keeps connections alive between requests).
class Http {
public:
    Http();
    ~Http();
    Http(const Http&) = delete;
    Http& operator=(const Http&) = delete;
    // Performs the request (init() must have succeeded). Never throws.
    Response perform(const Request& req);

private:
    void* curl_ = nullptr;
};

// Percent-encodes a query parameter value.
std::string escape(std::string_view s);

} // namespace kpkg::net
