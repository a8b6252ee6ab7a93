// HTTP over libcurl, loaded on first use (kpkg/core/dynlib.hpp): one easy handle per Http
// object, TLS material from memory, bodies buffered up to a limit or streamed to a callback.
#include "kpkg/net/http.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>
#include <optional>

#include "kpkg/core/dynlib.hpp"

namespace kpkg::net {

namespace {

// The libcurl functions used, resolved once.
struct Api {
    CURLcode (*global_init)(long) = nullptr;
    CURL* (*easy_init)() = nullptr;
    void (*easy_cleanup)(CURL*) = nullptr;
    void (*easy_reset)(CURL*) = nullptr;
    CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
    CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
    CURLcode (*easy_perform)(CURL*) = nullptr;
    const char* (*easy_strerror)(CURLcode) = nullptr;
    curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
    void (*slist_free_all)(curl_slist*) = nullptr;
};

Api g_api;
std::once_flag g_once;
std::optional<Error> g_error;

template <class F>
bool resolve(F*& out, const char* name) {
    auto f = libcurl().function<F>(name);
    if (!f) {
        if (!g_error) g_error = f.error();
        return false;
    }
    out = *f;
    return true;
}

struct Transfer {
    const Request* req = nullptr;
    Response* resp = nullptr;
    CURL* curl = nullptr;
    std::string_view upload;
    std::size_t sent = 0;
    bool too_large = false;
    bool stopped = false;
    int stream = -1; // -1 = not decided yet, 0 = buffer, 1 = hand chunks to req->on_body
};

size_t on_write(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t len = size * n;
    if (t->req->on_body) {
        if (t->stream < 0) {
            long status = 0;
            g_api.easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
            t->stream = status >= 200 && status < 300 ? 1 : 0;
        }
        if (t->stream == 1) {
            if (t->req->on_body(std::string_view(data, len))) return len;
            t->stopped = true;
            return 0; // aborts the transfer
        }
    }
    if (t->resp->body.size() + len > t->req->max_body) {
        t->too_large = true;
        return 0; // aborts the transfer
    }
    t->resp->body.append(data, len);
    return len;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t len = size * n;
    std::string_view line(data, len);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
        line.remove_suffix(1);
    if (line.substr(0, 5) == "HTTP/") {
        t->resp->headers.clear(); // a new answer (after a redirect or a 100 Continue)
        t->stream = -1;
        return len;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return len;
    std::string name(line.substr(0, colon));
    for (auto& c : name)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
        value.remove_prefix(1);
    auto& slot = t->resp->headers[name];
    if (!slot.empty()) slot += ", ";
    slot += value;
    // The body's size when announced: one allocation instead of a string grown by doubling
    // (copies and page faults that made a 32 MiB blob take ten times as long as curl(1)).
    if (name == "content-length" && t->resp->body.empty()) {
        std::uint64_t n = 0;
        bool digits = !value.empty() && value.size() < 20;
        for (char c : value) {
            if (c < '0' || c > '9') {
                digits = false;
                break;
            }
            n = n * 10 + static_cast<std::uint64_t>(c - '0');
        }
        if (digits && n <= t->req->max_body) t->resp->body.reserve(static_cast<std::size_t>(n));
    }
    return len;
}

size_t on_read(char* buf, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t len = std::min(size * n, t->upload.size() - t->sent);
    std::memcpy(buf, t->upload.data() + t->sent, len);
    t->sent += len;
    return len;
}

int on_progress(void* user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                curl_off_t ulnow) {
    auto* t = static_cast<Transfer*>(user);
    if (!t->req->progress) return 0;
    if (!t->upload.empty() || ultotal > 0)
        t->req->progress(static_cast<std::uint64_t>(ulnow), static_cast<std::uint64_t>(ultotal));
    else
        t->req->progress(static_cast<std::uint64_t>(dlnow), static_cast<std::uint64_t>(dltotal));
    return 0;
}

} // namespace

Result<void> init() {
    std::call_once(g_once, [] {
        bool ok = resolve(g_api.global_init, "curl_global_init") &&
                  resolve(g_api.easy_init, "curl_easy_init") &&
                  resolve(g_api.easy_cleanup, "curl_easy_cleanup") &&
                  resolve(g_api.easy_reset, "curl_easy_reset") &&
                  resolve(g_api.easy_setopt, "curl_easy_setopt") &&
                  resolve(g_api.easy_getinfo, "curl_easy_getinfo") &&
                  resolve(g_api.easy_perform, "curl_easy_perform") &&
                  resolve(g_api.easy_strerror, "curl_easy_strerror") &&
                  resolve(g_api.slist_append, "curl_slist_append") &&
                  resolve(g_api.slist_free_all, "curl_slist_free_all");
        if (ok && g_api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            g_error = Error::io("libcurl could not be initialised");
    });
    if (g_error) return fail(*g_error);
    return {};
}

Http::Http() = default;

Http::~Http() {
    if (curl_ != nullptr) g_api.easy_cleanup(static_cast<CURL*>(curl_));
}

Response Http::perform(const Request& req) {
    Response resp;
    if (curl_ == nullptr) curl_ = g_api.easy_init();
    CURL* c = static_cast<CURL*>(curl_);
    if (c == nullptr) {
        resp.outcome = Response::Outcome::failed;
        resp.error = "libcurl could not create a handle";
        return resp;
    }
    g_api.easy_reset(c);
    Transfer t;
    t.req = &req;
    t.resp = &resp;
    t.curl = c;
    char errbuf[CURL_ERROR_SIZE] = {};
    auto& set = g_api.easy_setopt;
    set(c, CURLOPT_URL, req.url.c_str());
    set(c, CURLOPT_NOSIGNAL, 1L);
    set(c, CURLOPT_ERRORBUFFER, errbuf);
    set(c, CURLOPT_PROTOCOLS_STR, "http,https");
    set(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    set(c, CURLOPT_FOLLOWLOCATION, req.follow_redirects ? 1L : 0L);
    set(c, CURLOPT_MAXREDIRS, 10L);
    set(c, CURLOPT_CONNECTTIMEOUT_MS, req.connect_timeout_ms);
    if (req.stall_timeout_s > 0) {
        set(c, CURLOPT_LOW_SPEED_LIMIT, std::max(1L, req.min_rate));
        set(c, CURLOPT_LOW_SPEED_TIME, req.stall_timeout_s);
    }
    if (req.timeout_ms > 0) set(c, CURLOPT_TIMEOUT_MS, req.timeout_ms);
    set(c, CURLOPT_SSL_VERIFYPEER, req.insecure ? 0L : 1L);
    set(c, CURLOPT_SSL_VERIFYHOST, req.insecure ? 0L : 2L);
    // Blobs are copied by curl (CURL_BLOB_COPY), so they need not outlive the setopt.
    const auto set_blob = [&](CURLoption opt, std::string_view pem) -> CURLcode {
        curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
        return set(c, opt, &blob);
    };
    CURLcode tls_rc = CURLE_OK;
    const char* tls_what = "";
    if (!req.ca_pem.empty()) {
        // Only these CAs: not the system's bundle or directory besides them.
        set(c, CURLOPT_CAINFO, static_cast<const char*>(nullptr));
        set(c, CURLOPT_CAPATH, static_cast<const char*>(nullptr));
        if ((tls_rc = set_blob(CURLOPT_CAINFO_BLOB, req.ca_pem)) != CURLE_OK)
            tls_what = "a CA bundle from memory";
    }
    if (tls_rc == CURLE_OK && !req.client_cert_pem.empty()) {
        set(c, CURLOPT_SSLCERTTYPE, "PEM");
        if ((tls_rc = set_blob(CURLOPT_SSLCERT_BLOB, req.client_cert_pem)) != CURLE_OK)
            tls_what = "a client certificate from memory";
    }
    if (tls_rc == CURLE_OK && !req.client_key_pem.empty()) {
        set(c, CURLOPT_SSLKEYTYPE, "PEM");
        if ((tls_rc = set_blob(CURLOPT_SSLKEY_BLOB, req.client_key_pem)) != CURLE_OK)
            tls_what = "a client key from memory";
    }
    if (tls_rc != CURLE_OK) {
        resp.outcome = Response::Outcome::failed;
        resp.curl_code = static_cast<int>(tls_rc);
        resp.error = std::string("this libcurl cannot use ") + tls_what + " (" +
                     g_api.easy_strerror(tls_rc) + ")";
        return resp;
    }
    if (!req.proxy.empty()) {
        // This proxy for every host: no_proxy from the environment does not apply.
        set(c, CURLOPT_PROXY, req.proxy.c_str());
        set(c, CURLOPT_NOPROXY, "");
    }
    curl_slist* connect_to = nullptr;
    if (!req.connect_to.empty()) {
        connect_to = g_api.slist_append(nullptr, req.connect_to.c_str());
        set(c, CURLOPT_CONNECT_TO, connect_to);
    }
    if (!req.user_agent.empty()) set(c, CURLOPT_USERAGENT, req.user_agent.c_str());
    set(c, CURLOPT_WRITEFUNCTION, &on_write);
    set(c, CURLOPT_WRITEDATA, &t);
    set(c, CURLOPT_HEADERFUNCTION, &on_header);
    set(c, CURLOPT_HEADERDATA, &t);
    if (req.progress) {
        set(c, CURLOPT_NOPROGRESS, 0L);
        set(c, CURLOPT_XFERINFOFUNCTION, &on_progress);
        set(c, CURLOPT_XFERINFODATA, &t);
    }
    curl_slist* headers = nullptr;
    for (const auto& h : req.headers)
        headers = g_api.slist_append(headers, h.c_str());
    // No "100 Continue" round trip before bodies.
    headers = g_api.slist_append(headers, "Expect:");
    if (req.method == "HEAD") {
        set(c, CURLOPT_NOBODY, 1L);
    } else if (req.method == "PUT" || req.method == "PATCH" || req.method == "POST" ||
               (req.method == "DELETE" && !req.body.empty())) {
        t.upload = req.body;
        set(c, CURLOPT_UPLOAD, 1L);
        set(c, CURLOPT_READFUNCTION, &on_read);
        set(c, CURLOPT_READDATA, &t);
        set(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
        set(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    } else if (req.method != "GET") {
        set(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    }
    set(c, CURLOPT_HTTPHEADER, headers);
    const CURLcode rc = g_api.easy_perform(c);
    g_api.slist_free_all(headers);
    if (connect_to != nullptr) g_api.slist_free_all(connect_to);
    resp.curl_code = static_cast<int>(rc);
    resp.stopped = t.stopped;
    resp.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    // libcurl tells its low-speed abort from its other timeouts only by the message.
    resp.too_slow = resp.timed_out && std::strncmp(errbuf, "Operation too slow", 18) == 0;
    long status = 0;
    g_api.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    resp.status = status;
    char* eff = nullptr;
    if (g_api.easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff != nullptr)
        resp.effective_url = eff;
    if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && t.stopped)) {
        resp.error = errbuf[0] != '\0' ? errbuf : g_api.easy_strerror(rc);
        switch (rc) {
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
            resp.outcome = Response::Outcome::connect_failed;
            break;
        case CURLE_WRITE_ERROR:
            resp.outcome = t.too_large ? Response::Outcome::too_large : Response::Outcome::failed;
            break;
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
            resp.outcome = Response::Outcome::dropped;
            break;
        default:
            resp.outcome = Response::Outcome::failed;
            break;
        }
    }
    return resp;
}

std::string escape(std::string_view s) {
    static const char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char ch : s) {
        if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
            out += static_cast<char>(ch);
        } else {
            out += '%';
            out += kHex[ch >> 4];
            out += kHex[ch & 15];
        }
    }
    return out;
}

} // namespace kpkg::net
