// kube::connect: the Api over HTTP (libcurl through kpkg/net/http). Requests carry the user's
// credentials (an exec plugin re-run once on a 401), are retried with exponential backoff on
// 5xx, 429 (Retry-After honoured), dropped and refused connections (not after a timeout: a
// request that had its whole time gets no second one), and answer a Reply: the value, or the
// server's Status as an ApiError. Only a request that got no answer at all (or an answer that is
// not JSON) is a failed Result. Every attempt has a time limit: its own (the request timeout, a
// watch's), cut to the time left before set_deadline's deadline, which also ends the retries and
// the credential plugin. Discovery is cached; a watch streams its events.
#include "kpkg/kube/connect.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "discovery.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/core/threads.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/kube/apply.hpp"
#include "kpkg/kube/kubeconfig.hpp"
#include "kpkg/net/http.hpp"

namespace kpkg::kube {

namespace {

constexpr auto kFirstBackoff = std::chrono::milliseconds(250);
constexpr auto kMaxBackoff = std::chrono::milliseconds(8000);
constexpr auto kMaxRetryAfter = std::chrono::seconds(60);
// How often a pause before a retry looks at the run's interrupt flag.
constexpr auto kInterruptPoll = std::chrono::milliseconds(100);

template <class... A>
std::string cat(const A&... parts) {
    std::string out;
    (out.append(parts), ...);
    return out;
}

const char* reason_for(long status) {
    switch (status) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 406:
        return "NotAcceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Expired";
    case 413:
        return "RequestEntityTooLarge";
    case 415:
        return "UnsupportedMediaType";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 500:
        return "InternalError";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return status >= 500 ? "InternalError" : "Unknown";
    }
}

std::string scalar(const io::Node* n, std::string_view key) {
    if (n == nullptr) return {};
    const io::Node* v = n->get(key);
    return v != nullptr && v->is_scalar() && !v->is_null() ? v->text : std::string();
}

// The server's Status (or, for a reply that is none, the HTTP code and the start of the body).
ApiError api_error(const net::Response& r) {
    ApiError e;
    e.status = r.status;
    e.transient = r.status >= 500 || r.status == 429;
    auto docs = io::parse_json(r.body, "reply");
    const io::Node* st = nullptr;
    if (docs && docs->size() == 1 && (*docs)[0].root.is_map() &&
        scalar(&(*docs)[0].root, "kind") == "Status")
        st = &(*docs)[0].root;
    if (st != nullptr) {
        e.reason = scalar(st, "reason");
        e.message = scalar(st, "message");
        if (const io::Node* details = st->get("details")) {
            if (const io::Node* causes = details->get("causes"); causes && causes->is_seq()) {
                for (const auto& c : causes->items) {
                    std::string field = scalar(&c, "field");
                    std::string msg = scalar(&c, "message");
                    if (msg.empty()) msg = scalar(&c, "reason");
                    e.causes.push_back(field.empty() ? msg : cat(field, ": ", msg));
                }
            }
        }
    }
    if (e.reason.empty()) e.reason = reason_for(r.status);
    if (e.message.empty()) {
        e.message = cat("HTTP ", std::to_string(r.status));
        std::string_view body = text::trim(r.body);
        if (!body.empty()) e.message.append(": ").append(text::shown(body, 200));
    }
    return e;
}

bool success(long status) {
    return status >= 200 && status < 300;
}

// Path escaping of one segment (names are DNS labels in practice; escape anyway).
std::string seg(std::string_view s) {
    return net::escape(s);
}

struct ServerUrl {
    std::string scheme, host, port, path; // host without brackets
    bool ipv6 = false;
};

std::optional<ServerUrl> parse_server(const std::string& url) {
    ServerUrl u;
    const auto sep = url.find("://");
    if (sep == std::string::npos) return std::nullopt;
    u.scheme = url.substr(0, sep);
    std::string rest = url.substr(sep + 3);
    const auto slash = rest.find('/');
    std::string hostport = rest.substr(0, slash);
    if (slash != std::string::npos) u.path = rest.substr(slash);
    while (!u.path.empty() && u.path.back() == '/')
        u.path.pop_back();
    if (!hostport.empty() && hostport[0] == '[') {
        const auto close = hostport.find(']');
        if (close == std::string::npos) return std::nullopt;
        u.host = hostport.substr(1, close - 1);
        u.ipv6 = true;
        if (close + 1 < hostport.size() && hostport[close + 1] == ':')
            u.port = hostport.substr(close + 2);
    } else {
        const auto colon = hostport.rfind(':');
        u.host = hostport.substr(0, colon);
        if (colon != std::string::npos) u.port = hostport.substr(colon + 1);
    }
    if (u.host.empty()) return std::nullopt;
    if (u.port.empty()) u.port = u.scheme == "https" ? "443" : "80";
    return u;
}

// Frames concatenated JSON values (a watch stream) as they arrive: whitespace between them,
// newlines or not.
class JsonFramer {
public:
    void feed(std::string_view chunk) { buf_.append(chunk); }
    std::size_t pending() const { return buf_.size(); }
    // The next complete value, if there is one.
    std::optional<std::string> next() {
        for (; pos_ < buf_.size(); ++pos_) {
            const char c = buf_[pos_];
            if (depth_ == 0) {
                if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
                    if (pos_ == start_) ++start_;
                    continue;
                }
            }
            if (in_string_) {
                if (escape_)
                    escape_ = false;
                else if (c == '\\')
                    escape_ = true;
                else if (c == '"')
                    in_string_ = false;
                continue;
            }
            if (c == '"') {
                in_string_ = true;
            } else if (c == '{' || c == '[') {
                ++depth_;
            } else if (c == '}' || c == ']') {
                if (--depth_ == 0) {
                    std::string value = buf_.substr(start_, pos_ + 1 - start_);
                    buf_.erase(0, pos_ + 1);
                    pos_ = 0;
                    start_ = 0;
                    return value;
                }
            }
        }
        return std::nullopt;
    }

private:
    std::string buf_;
    std::size_t pos_ = 0, start_ = 0;
    int depth_ = 0;
    bool in_string_ = false, escape_ = false;
};

class HttpApi final : public Api {
public:
    HttpApi(KubeConfig kc, ConnectOptions opts)
        : kc_(kc), opts_(std::move(opts)), auth_(std::move(kc)) {
        const auto u = parse_server(kc_.cluster.server);
        base_ = kc_.cluster.server;
        if (u && !kc_.cluster.tls_server_name.empty()) {
            // The URL names the host the certificate is for; curl connects to the real one.
            base_ = cat(u->scheme, "://", kc_.cluster.tls_server_name, ":", u->port, u->path);
            const std::string host = u->ipv6 ? cat("[", u->host, "]") : u->host;
            connect_to_ = cat(kc_.cluster.tls_server_name, ":", u->port, ":", host, ":", u->port);
        }
        if (opts_.concurrency < 1) opts_.concurrency = 1;
    }

    Result<const Discovery*> discover(bool refresh) override;
    Result<Reply<Applied>> apply(const Resource& r, const std::string& ns, const io::Node& object,
                                 const ApplyOptions& opts) override;
    Result<Reply<io::Node>> get(const Resource& r, const std::string& ns,
                                const std::string& name) override;
    Result<Reply<ListResult>> list(const Resource& r, const std::string& ns,
                                   const ListOptions& opts) override;
    Result<Reply<bool>> watch(const Resource& r, const std::string& ns, const WatchOptions& opts,
                              const std::function<bool(const WatchEvent&)>& on_event) override;
    Result<Reply<bool>> remove(const Resource& r, const std::string& ns, const std::string& name,
                               Propagation p, bool dry_run) override;

    std::string default_namespace() const override {
        return opts_.namespace_.empty() ? kc_.namespace_ : opts_.namespace_;
    }
    std::string describe() const override {
        return cat(kc_.cluster.server, " (context ", kc_.context, ")");
    }
    void set_deadline(std::optional<Deadline> d) override {
        std::lock_guard<std::mutex> lock(deadline_mu_);
        deadline_ = d;
    }

private:
    struct Call {
        std::string method = "GET";
        std::string path; // with the query
        std::string body;
        std::string content_type;
        std::string accept = "application/json";
        std::function<bool(std::string_view)> on_body; // a watch
        long timeout_ms = -1;                          // -1: the request timeout
    };

    Result<net::Response> send(const Call& call);
    // Sleeps `wait`; false, at once, when the run is interrupted (ConnectOptions::interrupted).
    bool pause_unless_interrupted(std::chrono::milliseconds wait) const;
    Result<io::Node> parse(const Call& call, const net::Response& r);
    Result<std::string> path_of(const Resource& r, const std::string& ns,
                                const std::string& name) const;
    Result<Discovery> fetch_discovery();

    std::unique_ptr<net::Http> acquire() {
        std::lock_guard<std::mutex> lock(pool_mu_);
        if (pool_.empty()) return std::make_unique<net::Http>();
        auto h = std::move(pool_.back());
        pool_.pop_back();
        return h;
    }
    void release(std::unique_ptr<net::Http> h) {
        std::lock_guard<std::mutex> lock(pool_mu_);
        pool_.push_back(std::move(h));
    }

    KubeConfig kc_;
    ConnectOptions opts_;
    Authenticator auth_;
    std::string base_;
    std::string connect_to_;

    std::mutex pool_mu_;
    std::vector<std::unique_ptr<net::Http>> pool_;

    // Requests in flight (watches are not counted: they last).
    std::mutex gate_mu_;
    std::condition_variable gate_cv_;
    int in_flight_ = 0;

    std::mutex disc_mu_;
    std::vector<std::unique_ptr<Discovery>> discoveries_; // every one handed out stays valid

    std::mutex deadline_mu_;
    std::optional<Deadline> deadline_;
};

Result<net::Response> HttpApi::send(const Call& call) {
    const bool stream = static_cast<bool>(call.on_body);
    if (!stream) {
        std::unique_lock<std::mutex> lock(gate_mu_);
        gate_cv_.wait(lock, [&] { return in_flight_ < opts_.concurrency; });
        ++in_flight_;
    }
    struct Leave {
        HttpApi* self;
        bool counted;
        ~Leave() {
            if (!counted) return;
            {
                std::lock_guard<std::mutex> lock(self->gate_mu_);
                --self->in_flight_;
            }
            self->gate_cv_.notify_one();
        }
    } leave{this, !stream};

    auto handle = acquire();
    const std::string url = base_ + call.path;
    std::optional<Deadline> deadline;
    {
        std::lock_guard<std::mutex> lock(deadline_mu_);
        deadline = deadline_;
    }
    // The time left before the deadline (none: no deadline).
    const auto time_left = [&]() -> std::optional<std::chrono::milliseconds> {
        if (!deadline) return std::nullopt;
        return std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline->at - std::chrono::steady_clock::now());
    };
    const auto limit_text = [&] {
        return cat("the time limit of ", format_duration(deadline->limit), " passed");
    };
    int attempt = 0;
    bool reauthenticated = false;
    std::string last_error; // of the attempt before, for the message when time runs out
    for (;;) {
        const auto out_of_time = [&] {
            release(std::move(handle));
            std::string msg = cat(call.method, " ", url, " (context ", kc_.context, "): ");
            msg.append(limit_text());
            if (attempt > 0) {
                msg.append(cat(" after ", std::to_string(attempt), " attempts"));
                if (!last_error.empty()) msg.append(cat(" (the last: ", last_error, ")"));
            }
            return fail(Error::io(std::move(msg)));
        };
        if (auto left = time_left(); left && left->count() <= 0) return out_of_time();
        auto creds = auth_.credentials(deadline, opts_.interrupted);
        if (!creds) {
            release(std::move(handle));
            return fail(std::move(creds).error());
        }
        net::Request req;
        req.method = call.method;
        req.url = url;
        req.user_agent = opts_.user_agent;
        req.max_body = opts_.max_reply_bytes;
        req.body = call.body;
        req.headers.push_back(cat("Accept: ", call.accept));
        if (!call.content_type.empty())
            req.headers.push_back(cat("Content-Type: ", call.content_type));
        if (!creds->bearer_token.empty()) {
            req.headers.push_back(cat("Authorization: Bearer ", creds->bearer_token));
        } else if (!creds->username.empty() || !creds->password.empty()) {
            std::string b64;
            io::go::append_base64(b64, cat(creds->username, ":", creds->password));
            req.headers.push_back(cat("Authorization: Basic ", b64));
        }
        req.ca_pem = kc_.cluster.ca_pem;
        req.client_cert_pem = creds->client_cert_pem;
        req.client_key_pem = creds->client_key_pem;
        req.insecure = kc_.cluster.insecure;
        req.connect_to = connect_to_;
        req.proxy = kc_.cluster.proxy_url;
        bool delivered = false;
        if (stream) {
            req.stall_timeout_s = 0;
            req.timeout_ms = call.timeout_ms > 0 ? call.timeout_ms : 0;
            req.on_body = [&](std::string_view chunk) {
                delivered = true;
                return call.on_body(chunk);
            };
        } else {
            req.timeout_ms = call.timeout_ms >= 0
                                 ? call.timeout_ms
                                 : static_cast<long>(opts_.request_timeout.count());
        }
        // The request's own limit, or the time left when that is less (a credential plugin may
        // have used some).
        bool cut = false;
        if (auto left = time_left()) {
            if (left->count() <= 0) return out_of_time();
            const long ms = static_cast<long>(left->count());
            if (req.timeout_ms == 0 || ms < req.timeout_ms) {
                req.timeout_ms = ms;
                cut = true;
            }
            req.connect_timeout_ms = std::min(req.connect_timeout_ms, ms);
        }
        net::Response resp = handle->perform(req);

        std::chrono::milliseconds wait =
            std::min(kFirstBackoff * (1 << std::min(attempt, 10)), kMaxBackoff);
        // Whether another attempt after `wait` would still start before the deadline.
        const auto time_for_another = [&] {
            auto left = time_left();
            return !left || wait < *left;
        };
        bool retry = false;
        if (resp.outcome == net::Response::Outcome::ok) {
            if (resp.status == 401 && !reauthenticated && auth_.invalidate()) {
                reauthenticated = true;
                continue; // the plugin's credential was refused: run it again, once
            }
            if ((resp.status >= 500 || resp.status == 429) && !delivered &&
                attempt < opts_.retries) {
                retry = true;
                const std::string ra_raw = resp.header("retry-after");
                const std::string ra(text::trim(ra_raw));
                if (auto secs = io::go::parse_uint(ra); secs && !ra.empty()) {
                    wait =
                        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::seconds(
                            std::min<std::uint64_t>(*secs, kMaxRetryAfter.count())));
                }
                // No time left for the wait and another attempt: the server's answer stands.
                retry = time_for_another();
            }
            if (!retry) {
                release(std::move(handle));
                return resp;
            }
            last_error = cat("HTTP ", std::to_string(resp.status));
        } else {
            if (stream && (delivered || resp.timed_out)) {
                // The stream ended (the timeout, a drop): the caller re-lists or re-watches.
                release(std::move(handle));
                return resp;
            }
            if (resp.outcome == net::Response::Outcome::too_large) {
                release(std::move(handle));
                return fail(Error::io(cat(call.method, " ", url, ": the reply is larger than ",
                                          std::to_string(opts_.max_reply_bytes), " bytes")));
            }
            const bool refused = resp.curl_code == CURLE_COULDNT_CONNECT;
            // A request that timed out had its whole time: it is not tried again.
            const bool may_retry = (resp.outcome == net::Response::Outcome::dropped || refused) &&
                                   !resp.timed_out && attempt < opts_.retries;
            retry = may_retry && time_for_another();
            if (!retry) {
                release(std::move(handle));
                std::string msg;
                if (resp.outcome == net::Response::Outcome::connect_failed) {
                    msg = cat("cannot connect to ", describe());
                    if (!kc_.cluster.proxy_url.empty())
                        msg.append(cat(" through the proxy ", kc_.cluster.proxy_url));
                    msg.append(cat(": ", resp.error));
                } else
                    msg = cat(call.method, " ", url, " (context ", kc_.context,
                              ") failed: ", resp.error);
                if (attempt > 0)
                    msg.append(cat(" (after ", std::to_string(attempt + 1), " attempts)"));
                if (resp.timed_out)
                    msg.append(
                        cut ? cat(": ", limit_text())
                            : cat(": no answer within ",
                                  format_duration(std::chrono::milliseconds(req.timeout_ms))));
                else if (may_retry)
                    msg.append(cat(": the time limit of ", format_duration(deadline->limit),
                                   " leaves no time for another attempt"));
                return fail(Error::io(std::move(msg)));
            }
            last_error = resp.error;
        }
        ++attempt;
        // The pause before the next attempt, cut short when the run is interrupted: then the
        // server's last answer stands, or the failure, and nothing is sent again.
        if (!pause_unless_interrupted(wait)) {
            release(std::move(handle));
            if (resp.outcome == net::Response::Outcome::ok) return resp;
            return fail(Error::io(cat("interrupted: ", call.method, " ", url, " (context ",
                                      kc_.context, ") failed: ", resp.error, "; not tried again")));
        }
    }
}

bool HttpApi::pause_unless_interrupted(std::chrono::milliseconds wait) const {
    const auto until = std::chrono::steady_clock::now() + wait;
    for (;;) {
        if (opts_.interrupted && opts_.interrupted->load()) return false;
        const auto now = std::chrono::steady_clock::now();
        if (now >= until) return true;
        std::this_thread::sleep_for(
            std::min<std::chrono::steady_clock::duration>(until - now, kInterruptPoll));
    }
}

Result<io::Node> HttpApi::parse(const Call& call, const net::Response& r) {
    auto docs = io::parse_json(r.body, cat(call.method, " ", base_, call.path));
    if (!docs || docs->size() != 1) {
        std::string msg = cat("the reply of ", describe(), " to ", call.method, " ", call.path,
                              " is not one JSON value");
        if (!docs) msg.append(cat(": ", docs.error().message));
        return fail(Error::io(std::move(msg)));
    }
    return std::move((*docs)[0].root);
}

Result<std::string> HttpApi::path_of(const Resource& r, const std::string& ns,
                                     const std::string& name) const {
    std::string p =
        r.group.empty() ? cat("/api/", r.version) : cat("/apis/", r.group, "/", r.version);
    if (r.namespaced && !ns.empty()) p.append(cat("/namespaces/", seg(ns)));
    p.append(cat("/", r.name));
    if (!name.empty()) p.append(cat("/", seg(name)));
    return p;
}

Result<Discovery> HttpApi::fetch_discovery() {
    Discovery d;
    d.aggregated = true;
    std::vector<detail::GroupVersions> legacy;
    for (const char* root : {"/api", "/apis"}) {
        Call call;
        call.path = root;
        call.accept = detail::kDiscoveryAccept;
        auto resp = send(call);
        if (!resp) return fail(std::move(resp).error());
        if (!success(resp->status)) {
            ApiError e = api_error(*resp);
            return fail(Error::io(
                cat("discovery of ", describe(), ": GET ", root, ": ", e.reason, ": ", e.message)));
        }
        auto doc = parse(call, *resp);
        if (!doc) return fail(std::move(doc).error());
        if (detail::is_aggregated(resp->header("content-type"))) {
            detail::read_aggregated(*doc, d.resources, d.unavailable);
        } else {
            d.aggregated = false;
            auto gvs = std::string_view(root) == "/api" ? detail::read_api_versions(*doc)
                                                        : detail::read_group_list(*doc);
            legacy.insert(legacy.end(), gvs.begin(), gvs.end());
        }
    }
    if (legacy.empty()) return d;
    // Legacy discovery: one APIResourceList per group version, fetched concurrently.
    struct Job {
        std::string group, version;
        std::optional<Result<net::Response>> resp;
        std::optional<Result<io::Node>> doc;
        Call call;
    };
    std::vector<Job> jobs;
    for (const auto& gv : legacy)
        for (const auto& v : gv.versions) {
            Job j;
            j.group = gv.group;
            j.version = v;
            j.call.path = gv.group.empty() ? cat("/api/", v) : cat("/apis/", gv.group, "/", v);
            jobs.push_back(std::move(j));
        }
    std::atomic<std::size_t> next{0};
    FirstError errors; // rethrown once every thread has stopped
    auto worker = [&] {
        if (!errors.run([&] {
                for (std::size_t i; (i = next.fetch_add(1)) < jobs.size();) {
                    Job& j = jobs[i];
                    j.resp.emplace(send(j.call));
                    if (*j.resp && success((*j.resp)->status))
                        j.doc.emplace(parse(j.call, **j.resp));
                }
            }))
            next.store(jobs.size());
    };
    const std::size_t n =
        std::min<std::size_t>(jobs.size(), static_cast<std::size_t>(opts_.concurrency));
    std::vector<std::jthread> threads;
    for (std::size_t t = 1; t < n; ++t)
        if (!try_start(threads, worker)) break;
    worker();
    for (auto& t : threads)
        t.join();
    errors.rethrow();
    for (auto& j : jobs) {
        if (!*j.resp) return fail(std::move(*j.resp).error());
        if (!j.doc) {
            // A group version that cannot be listed (an aggregated API that is down): left out
            // and named, as kubectl warns and goes on.
            d.unavailable.push_back(j.group.empty() ? j.version : cat(j.group, "/", j.version));
            continue;
        }
        if (!*j.doc) return fail(std::move(*j.doc).error());
        detail::read_resource_list(**j.doc, j.group, j.version, d.resources);
    }
    return d;
}

Result<const Discovery*> HttpApi::discover(bool refresh) {
    std::lock_guard<std::mutex> lock(disc_mu_);
    if (!refresh && !discoveries_.empty()) return discoveries_.back().get();
    auto d = fetch_discovery();
    if (!d) return fail(std::move(d).error());
    discoveries_.push_back(std::make_unique<Discovery>(std::move(*d)));
    return discoveries_.back().get();
}

Result<Reply<Applied>> HttpApi::apply(const Resource& r, const std::string& ns,
                                      const io::Node& object, const ApplyOptions& opts) {
    const std::string name = scalar(object.get("metadata"), "name");
    const std::string kind = scalar(&object, "kind");
    if (name.empty())
        return fail(Error::invalid(cat("a ", kind.empty() ? std::string("object") : kind,
                                       " to apply has no metadata.name")));
    if (r.namespaced && ns.empty())
        return fail(Error::invalid(
            cat(kind, " ", text::quote(name), " is namespaced and no namespace was given")));
    auto path = path_of(r, ns, name);
    if (!path) return fail(std::move(path).error());
    Call call;
    call.method = "PATCH";
    call.path = cat(*path, "?fieldManager=", net::escape(opts.field_manager),
                    "&fieldValidation=Strict&force=", opts.force ? "true" : "false");
    if (opts.dry_run) call.path.append("&dryRun=All");
    call.content_type = "application/apply-patch+yaml";
    io::JsonStyle style;
    style.indent = 0;
    call.body = io::to_json(object, style);
    auto resp = send(call);
    if (!resp) return fail(std::move(resp).error());
    Reply<Applied> out;
    if (!success(resp->status)) {
        out.api = api_error(*resp);
        return out;
    }
    auto doc = parse(call, *resp);
    if (!doc) return fail(std::move(doc).error());
    Applied a;
    a.object = std::move(*doc);
    a.created = resp->status == 201;
    out.value = std::move(a);
    return out;
}

Result<Reply<io::Node>> HttpApi::get(const Resource& r, const std::string& ns,
                                     const std::string& name) {
    auto path = path_of(r, ns, name);
    if (!path) return fail(std::move(path).error());
    Call call;
    call.path = *path;
    auto resp = send(call);
    if (!resp) return fail(std::move(resp).error());
    Reply<io::Node> out;
    if (!success(resp->status)) {
        out.api = api_error(*resp);
        return out;
    }
    auto doc = parse(call, *resp);
    if (!doc) return fail(std::move(doc).error());
    out.value = std::move(*doc);
    return out;
}

Result<Reply<ListResult>> HttpApi::list(const Resource& r, const std::string& ns,
                                        const ListOptions& opts) {
    auto path = path_of(r, ns, "");
    if (!path) return fail(std::move(path).error());
    Reply<ListResult> out;
    ListResult lr;
    std::string cont;
    const std::string api_version = r.group.empty() ? r.version : cat(r.group, "/", r.version);
    for (;;) {
        Call call;
        call.path = *path;
        char sep = '?';
        const auto param = [&](const char* k, const std::string& v) {
            if (v.empty()) return;
            call.path.push_back(sep);
            sep = '&';
            call.path.append(cat(k, "=", net::escape(v)));
        };
        param("labelSelector", opts.label_selector);
        param("fieldSelector", opts.field_selector);
        if (opts.limit > 0) param("limit", std::to_string(opts.limit));
        param("continue", cont);
        auto resp = send(call);
        if (!resp) return fail(std::move(resp).error());
        if (!success(resp->status)) {
            out.api = api_error(*resp);
            return out;
        }
        auto doc = parse(call, *resp);
        if (!doc) return fail(std::move(doc).error());
        if (io::Node* items = doc->get("items"); items != nullptr && items->is_seq()) {
            for (auto& item : items->items) {
                // Items of a typed list carry no apiVersion and kind: the resource gives them.
                if (item.is_map()) {
                    if (item.get("apiVersion") == nullptr)
                        item.set("apiVersion", io::Node::string(api_version));
                    if (item.get("kind") == nullptr) item.set("kind", io::Node::string(r.kind));
                }
                lr.items.push_back(std::move(item));
            }
        }
        const io::Node* meta = doc->get("metadata");
        const std::string rv = scalar(meta, "resourceVersion");
        if (!rv.empty()) lr.resource_version = rv;
        cont = scalar(meta, "continue");
        if (cont.empty()) break;
    }
    out.value = std::move(lr);
    return out;
}

Result<Reply<bool>> HttpApi::watch(const Resource& r, const std::string& ns,
                                   const WatchOptions& opts,
                                   const std::function<bool(const WatchEvent&)>& on_event) {
    auto path = path_of(r, ns, "");
    if (!path) return fail(std::move(path).error());
    Call call;
    call.path = cat(*path, "?watch=true&allowWatchBookmarks=true");
    const auto param = [&](const char* k, const std::string& v) {
        if (!v.empty()) call.path.append(cat("&", k, "=", net::escape(v)));
    };
    param("labelSelector", opts.label_selector);
    param("fieldSelector", opts.field_selector);
    param("resourceVersion", opts.resource_version);
    if (opts.timeout.count() > 0) {
        param("timeoutSeconds", std::to_string((opts.timeout.count() + 999) / 1000));
        call.timeout_ms = static_cast<long>(opts.timeout.count());
    }
    JsonFramer framer;
    std::optional<Error> bad;
    call.on_body = [&](std::string_view chunk) {
        framer.feed(chunk);
        while (auto value = framer.next()) {
            auto docs = io::parse_json(*value, cat("watch ", call.path));
            if (!docs || docs->size() != 1 || !(*docs)[0].root.is_map()) {
                std::string msg = cat("a watch event from ", describe(), " is not a JSON object");
                if (!docs) msg.append(cat(": ", docs.error().message));
                bad = Error::io(std::move(msg));
                return false;
            }
            io::Node& root = (*docs)[0].root;
            WatchEvent ev;
            ev.type = scalar(&root, "type");
            if (io::Node* obj = root.get("object")) ev.object = std::move(*obj);
            if (!on_event(ev)) return false;
        }
        if (framer.pending() > opts_.max_reply_bytes) {
            bad = Error::io(cat("a watch event from ", describe(), " is larger than ",
                                std::to_string(opts_.max_reply_bytes), " bytes"));
            return false;
        }
        return true;
    };
    auto resp = send(call);
    if (!resp) return fail(std::move(resp).error());
    if (bad) return fail(std::move(*bad));
    Reply<bool> out;
    // The timeout passed before the server even answered: the watch simply ended.
    if (!success(resp->status) && !(resp->status == 0 && resp->timed_out)) {
        out.api = api_error(*resp);
        return out;
    }
    out.value = true;
    return out;
}

Result<Reply<bool>> HttpApi::remove(const Resource& r, const std::string& ns,
                                    const std::string& name, Propagation p, bool dry_run) {
    auto path = path_of(r, ns, name);
    if (!path) return fail(std::move(path).error());
    Call call;
    call.method = "DELETE";
    call.path = *path;
    // dryRun in the query as well as in the body: the API server reads either.
    if (dry_run) call.path.append("?dryRun=All");
    call.content_type = "application/json";
    io::Node body = io::Node::map();
    body.set("kind", io::Node::string("DeleteOptions"));
    body.set("apiVersion", io::Node::string("v1"));
    body.set("propagationPolicy", io::Node::string(p == Propagation::foreground ? "Foreground"
                                                   : p == Propagation::orphan   ? "Orphan"
                                                                                : "Background"));
    if (dry_run) body.set("dryRun", io::Node::seq()).push(io::Node::string("All"));
    io::JsonStyle style;
    style.indent = 0;
    call.body = io::to_json(body, style);
    auto resp = send(call);
    if (!resp) return fail(std::move(resp).error());
    Reply<bool> out;
    if (!success(resp->status)) {
        out.api = api_error(*resp);
        return out;
    }
    out.value = true;
    return out;
}

} // namespace

Result<std::unique_ptr<Api>> connect(const ConnectOptions& opts) {
    KubeconfigSource src;
    src.path = opts.kubeconfig;
    auto kc = load_kubeconfig(src, opts.context);
    if (!kc) return fail(std::move(kc).error());
    auto init = net::init();
    if (!init) return fail(std::move(init).error());
    return std::unique_ptr<Api>(std::make_unique<HttpApi>(std::move(*kc), opts));
}

} // namespace kpkg::kube
