#include "kpkg/oci/registry.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "kpkg/core/digest.hpp"
#include "kpkg/core/threads.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/net/http.hpp"
#include "kpkg/oci/auth.hpp"
#include "kpkg/oci/image.hpp"
#include "kpkg/oci/media_types.hpp"
#include "kpkg/oci/store.hpp"
#include "kpkg/version.hpp"

namespace kpkg::oci {

namespace {

// ------------------------------------------------------------------------------------------------
// The few fields of manifests and indexes that pull and push need.

struct Desc {
    std::string media_type;
    std::string digest;
    std::optional<std::uint64_t> size;
    std::optional<Platform> platform;
};

struct Parsed {
    std::string media_type; // the document's own mediaType ("" when absent)
    bool index = false;
    std::vector<Desc> manifests; // index
    std::optional<Desc> config;  // manifest
    std::vector<Desc> layers;    // manifest
};

Result<Desc> parse_desc(const io::Node& n, const std::string& what, const std::string& file) {
    if (!n.is_map())
        return fail(Error::invalid(what + " is not an object", io::pos_of(file, n.mark)));
    Desc d;
    const io::Node* dg = n.get("digest");
    if (dg == nullptr || !dg->is_string() || !check_digest(dg->text))
        return fail(Error::invalid(what + " has no valid digest", io::pos_of(file, n.mark)));
    d.digest = dg->text;
    if (const io::Node* m = n.get("mediaType"); m != nullptr && m->is_string())
        d.media_type = m->text;
    if (const io::Node* s = n.get("size"))
        if (auto v = s->as_int(); v && *v >= 0) d.size = static_cast<std::uint64_t>(*v);
    if (const io::Node* p = n.get("platform"); p != nullptr && p->is_map()) {
        Platform tp;
        auto field = [&](const char* k) {
            const io::Node* v = p->get(k);
            return v != nullptr && v->is_string() ? v->text : std::string();
        };
        tp.os = field("os");
        tp.architecture = field("architecture");
        tp.variant = field("variant");
        d.platform = tp;
    }
    return d;
}

// `media_type` is what the registry or the index said the document is; an index is told by it
// or, when it is empty, by the document's mediaType or its "manifests" list.
Result<Parsed> parse_descriptors(std::string_view bytes, std::string_view media_type,
                                 const std::string& file) {
    auto docs = io::parse_json(bytes, file);
    if (!docs) return fail(std::move(docs).error());
    if (docs->size() != 1 || !(*docs)[0].root.is_map())
        return fail(Error::invalid("a manifest is one JSON object", {file}));
    const io::Node& r = (*docs)[0].root;
    Parsed p;
    if (const io::Node* m = r.get("mediaType"); m != nullptr && m->is_string())
        p.media_type = m->text;
    const std::string type = !media_type.empty() ? std::string(media_type) : p.media_type;
    p.index = media::is_index(type) || (type.empty() && r.get("manifests") != nullptr);
    if (p.index) {
        const io::Node* ms = r.get("manifests");
        if (ms == nullptr || !ms->is_seq())
            return fail(Error::invalid("an index without a \"manifests\" list", {file}));
        for (std::size_t i = 0; i < ms->items.size(); ++i) {
            auto d = parse_desc(ms->items[i], "manifests[" + std::to_string(i) + "]", file);
            if (!d) return fail(std::move(d).error());
            p.manifests.push_back(std::move(*d));
        }
        return p;
    }
    const io::Node* c = r.get("config");
    if (c == nullptr)
        return fail(Error::invalid("a manifest without a \"config\" descriptor", {file}));
    auto cd = parse_desc(*c, "config", file);
    if (!cd) return fail(std::move(cd).error());
    p.config = std::move(*cd);
    if (const io::Node* ls = r.get("layers")) {
        if (!ls->is_seq())
            return fail(Error::invalid("\"layers\" is not a list", io::pos_of(file, ls->mark)));
        for (std::size_t i = 0; i < ls->items.size(); ++i) {
            auto d = parse_desc(ls->items[i], "layers[" + std::to_string(i) + "]", file);
            if (!d) return fail(std::move(d).error());
            p.layers.push_back(std::move(*d));
        }
    }
    return p;
}

// The media type of a manifest read from the cache (no Content-Type to go by).
std::string sniff_media_type(std::string_view bytes) {
    auto docs = io::parse_json(bytes, "manifest");
    if (!docs || docs->size() != 1 || !(*docs)[0].root.is_map()) return {};
    const io::Node& r = (*docs)[0].root;
    if (const io::Node* m = r.get("mediaType"); m != nullptr && m->is_string()) return m->text;
    if (r.get("manifests") != nullptr) return std::string(media::oci_index);
    if (r.get("config") != nullptr) return std::string(media::oci_manifest);
    return {};
}

bool is_loopback(std::string_view registry) {
    std::string_view host = registry;
    if (!host.empty() && host.front() == '[') {
        const auto close = host.find(']');
        host = host.substr(1, close == std::string_view::npos ? host.npos : close - 1);
    } else if (auto colon = host.rfind(':');
               colon != std::string_view::npos && host.find(':') == colon) {
        host = host.substr(0, colon);
    }
    return host == "localhost" || host == "127.0.0.1" || host == "::1" ||
           host.substr(0, 4) == "127.";
}

std::string trim_type(std::string_view ct) {
    const auto semi = ct.find(';');
    std::string_view t = ct.substr(0, semi);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t'))
        t.remove_suffix(1);
    return std::string(t);
}

// What a registry says in an error body ({"errors":[{"code","message"}]}), "" when nothing.
std::string registry_says(const std::string& body) {
    if (body.empty() || body.size() > 65536 || body[0] != '{') return {};
    auto docs = io::parse_json(body, "response");
    if (!docs || docs->size() != 1) return {};
    const io::Node* errs = (*docs)[0].root.get("errors");
    if (errs == nullptr || !errs->is_seq() || errs->items.empty()) return {};
    const io::Node& e = errs->items[0];
    std::string out;
    if (const io::Node* c = e.get("code"); c != nullptr && c->is_string()) out = c->text;
    if (const io::Node* m = e.get("message"); m != nullptr && m->is_string() && !m->text.empty())
        out += (out.empty() ? "" : ": ") + m->text;
    return out;
}

std::string status_text(long s) {
    switch (s) {
    case 400:
        return "bad request";
    case 401:
        return "unauthorized";
    case 403:
        return "denied";
    case 404:
        return "not found";
    case 405:
        return "method not allowed";
    case 413:
        return "too large";
    case 416:
        return "range not satisfiable";
    case 429:
        return "too many requests";
    case 500:
        return "internal server error";
    case 502:
        return "bad gateway";
    case 503:
        return "service unavailable";
    case 504:
        return "gateway timeout";
    default:
        return "unexpected answer";
    }
}

std::string short_digest(std::string_view d) {
    return std::string(d.substr(0, std::min<std::size_t>(d.size(), 7 + 12)));
}

} // namespace

// ------------------------------------------------------------------------------------------------
// The client

namespace {

// What a request is about, for the scope of a token and for messages.
struct Target {
    std::string registry; // "host[:port]"
    std::string repo;     // "" for /v2/
    std::string object;   // "manifest v1", "blob sha256:..."
    bool push = false;
    std::string mount_from; // another repository read (pull scope)
};

std::string subject_of(const Target& t) {
    return "registry " + t.registry + (t.repo.empty() ? "" : ", repository " + t.repo);
}

using Clock = std::chrono::steady_clock;
// When a small document's request (its retries included) must be over; none for blobs.
using Deadline = std::optional<Clock::time_point>;

// What a request is for: a small document (one deadline for all its attempts) or a blob (a
// minimum rate and a limit per attempt, set by Impl::as_transfer).
enum class Kind { document, blob };

long ms_left(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<long>(left) : 0;
}

// "30 s", "1.5 s", "500 ms": the registry's messages space their units (core's
// format_duration writes Go's "30s" for flags and the cluster's messages).
std::string duration_text(std::chrono::milliseconds d) {
    const auto ms = d.count();
    if (ms < 1000) return std::to_string(ms) + " ms";
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
    return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
}

// "10 KiB/s", "1500 bytes/s".
std::string rate_text(std::uint64_t bytes_per_s) {
    if (bytes_per_s >= 1024 && bytes_per_s % 1024 == 0)
        return std::to_string(bytes_per_s / 1024) + " KiB/s";
    return std::to_string(bytes_per_s) + " bytes/s";
}

// Authentication state of one registry.
struct AuthState {
    bool basic = false;                        // the registry asked for Basic
    bool bearer = false;                       // the registry asked for Bearer
    Challenge challenge;                       // its last Bearer challenge (realm, service)
    std::map<std::string, std::string> tokens; // by scope
    bool looked_up = false;
    std::optional<Credential> credential;
};

} // namespace

struct Registry::Impl {
    RegistryOptions opts;
    const Store* store = nullptr;

    std::mutex mu; // guards auth, pool
    std::map<std::string, AuthState> auth;
    std::vector<std::unique_ptr<net::Http>> pool;
    std::mutex progress_mu;

    // A connection from the pool (returned by the Lease's destructor).
    struct Lease {
        Impl* impl;
        std::unique_ptr<net::Http> h;
        ~Lease() {
            std::lock_guard<std::mutex> g(impl->mu);
            impl->pool.push_back(std::move(h));
        }
        net::Http* operator->() { return h.get(); }
    };
    Lease lease() {
        std::lock_guard<std::mutex> g(mu);
        if (pool.empty()) return Lease{this, std::make_unique<net::Http>()};
        auto h = std::move(pool.back());
        pool.pop_back();
        return Lease{this, std::move(h)};
    }

    void report(const Progress& p) {
        if (!opts.progress) return;
        std::lock_guard<std::mutex> g(progress_mu);
        try {
            opts.progress(p);
        } catch (...) {
        }
    }

    std::string base_url(std::string_view registry) const {
        std::string host(registry);
        if (host == "docker.io" || host == "index.docker.io") host = "registry-1.docker.io";
        const bool plain = is_loopback(registry) || opts.insecure.count(std::string(registry)) ||
                           opts.insecure.count(host);
        return (plain ? "http://" : "https://") + host;
    }

    std::string scope_of(const Target& t) const {
        if (t.repo.empty()) return {};
        std::string s = "repository:" + t.repo + (t.push ? ":pull,push" : ":pull");
        if (!t.mount_from.empty() && t.mount_from != t.repo)
            s += " repository:" + t.mount_from + ":pull";
        return s;
    }

    Result<std::optional<Credential>> credential_for(const std::string& registry) {
        {
            std::lock_guard<std::mutex> g(mu);
            auto& st = auth[registry];
            if (st.looked_up) return st.credential;
        }
        std::optional<Credential> cred;
        if (auto it = opts.credentials.find(registry); it != opts.credentials.end()) {
            cred = Credential{it->second.first, it->second.second, "options"};
        } else {
            std::vector<std::filesystem::path> files;
            for (const auto& f : opts.auth_files)
                files.emplace_back(f);
            if (files.empty()) files = default_auth_files();
            auto c = find_credential(registry, files);
            if (!c) return fail(std::move(c).error());
            cred = std::move(*c);
        }
        std::lock_guard<std::mutex> g(mu);
        auto& st = auth[registry];
        st.looked_up = true;
        st.credential = cred;
        return cred;
    }

    // The Authorization header to send now, "" when none is known.
    std::string authorization(const Target& t) {
        std::lock_guard<std::mutex> g(mu);
        auto it = auth.find(t.registry);
        if (it == auth.end()) return {};
        const AuthState& st = it->second;
        if (st.bearer) {
            auto tok = st.tokens.find(scope_of(t));
            if (tok != st.tokens.end()) return "Authorization: Bearer " + tok->second;
            return {};
        }
        if (st.basic && st.credential) return "Authorization: Basic " + basic(*st.credential);
        return {};
    }

    static std::string basic(const Credential& c) {
        std::string out;
        io::go::append_base64(out, c.username + ":" + c.password);
        return out;
    }

    // The minimum rate, as libcurl takes it: whole seconds (rounded up) and bytes per second;
    // 0 seconds when there is none.
    long rate_window_s() const {
        if (opts.min_rate == 0 || opts.rate_window.count() <= 0) return 0;
        return static_cast<long>((opts.rate_window.count() + 999) / 1000);
    }

    // A request for a small document (request() gives it its deadline) with the minimum rate.
    net::Request base_request(std::string method, std::string url) const {
        net::Request r;
        r.method = std::move(method);
        r.url = std::move(url);
        r.connect_timeout_ms = static_cast<long>(opts.connect_timeout.count());
        r.stall_timeout_s = rate_window_s();
        r.min_rate = static_cast<long>(std::min<std::uint64_t>(opts.min_rate, 1u << 30));
        r.user_agent = opts.user_agent;
        return r;
    }

    // Makes `r` a blob transfer of `bytes` bytes: each attempt ends after the rate window plus
    // the time the bytes take at the minimum rate (no limit without a minimum rate).
    void as_transfer(net::Request& r, std::uint64_t bytes) const {
        r.timeout_ms = 0;
        if (const long w = rate_window_s(); w > 0) {
            const double ms =
                1000.0 * static_cast<double>(w) +
                1000.0 * static_cast<double>(bytes) / static_cast<double>(opts.min_rate);
            // Past a year the limit means nothing (and would not fit curl's long).
            if (ms < 365.0 * 86400 * 1000) r.timeout_ms = static_cast<long>(ms);
        }
    }

    // `limit_ms`: the attempt's own time limit when it ended by reaching it.
    Error net_error(const Target& t, const net::Response& r, const std::string& url,
                    long limit_ms = 0) {
        std::string what;
        if (r.too_slow) {
            what = "slower than " + rate_text(opts.min_rate) + " for " +
                   duration_text(std::chrono::seconds(rate_window_s())) + " (" + url + ")";
        } else if (r.timed_out && limit_ms > 0) {
            what = "not complete within " + duration_text(std::chrono::milliseconds(limit_ms)) +
                   ", the rate window plus its size at " + rate_text(opts.min_rate) + " (" + url +
                   ")";
        } else if (r.timed_out) {
            what = "timed out (" + url + ": " + r.error + ")";
        } else {
            switch (r.outcome) {
            case net::Response::Outcome::connect_failed:
                what = "cannot connect to " + url + ": " + r.error;
                break;
            case net::Response::Outcome::dropped:
                what = "connection lost (" + r.error + ")";
                break;
            default:
                what = r.error;
                break;
            }
        }
        return Error::io((t.object.empty() ? "" : t.object + ": ") + what).about(subject_of(t));
    }

    // A small document that did not arrive in time.
    Error timeout_error(const Target& t, const net::Request& req, int attempts) const {
        Error e = Error::io((t.object.empty() ? "" : t.object + ": ") +
                            "no complete answer within " + duration_text(opts.request_timeout) +
                            ", the request timeout (" + req.method + " " + req.url + ")");
        e.about(subject_of(t));
        if (attempts > 1) e.note("tried " + std::to_string(attempts) + " times");
        return e;
    }

    // Whether the attempt `r` ended because the deadline passed.
    static bool at_deadline(const net::Response& r, const Deadline& deadline) {
        return deadline && r.timed_out && !r.too_slow &&
               Clock::now() + std::chrono::milliseconds(20) >= *deadline;
    }

    Error status_error(const Target& t, const net::Response& r) {
        std::string msg = (t.object.empty() ? "" : t.object + ": ") + status_text(r.status) +
                          " (HTTP " + std::to_string(r.status);
        const std::string says = registry_says(r.body);
        if (!says.empty()) msg += ", " + says;
        msg += ")";
        Error e = Error::io(std::move(msg));
        e.about(subject_of(t));
        if (r.status == 401 || r.status == 403) {
            std::lock_guard<std::mutex> g(mu);
            auto& st = auth[t.registry];
            if (st.credential)
                e.note("credentials used: " + st.credential->username + " from " +
                       st.credential->source);
            else
                e.note("no credentials for " + t.registry +
                       " (searched $REGISTRY_AUTH_FILE, containers auth.json, "
                       "~/.docker/config.json)");
        }
        return e;
    }

    // Answers a 401: learns the scheme, fetches a token or picks the basic credentials. False
    // when nothing more can be tried (the 401 stands).
    Result<bool> authenticate(const Target& t, const net::Response& r, Deadline deadline) {
        const auto challenges = parse_challenges(r.header("www-authenticate"));
        const Challenge* bearer = nullptr;
        const Challenge* basic_ch = nullptr;
        for (const auto& c : challenges) {
            std::string s = c.scheme;
            for (auto& ch : s)
                ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            if (s == "bearer" && bearer == nullptr) bearer = &c;
            if (s == "basic" && basic_ch == nullptr) basic_ch = &c;
        }
        auto cred = credential_for(t.registry);
        if (!cred) return fail(std::move(cred).error());
        if (bearer != nullptr) {
            const std::string realm = bearer->param("realm");
            if (realm.empty())
                return fail(Error::io("the registry asks for a token but names no realm")
                                .about(subject_of(t)));
            const bool registry_plain = base_url(t.registry).rfind("http://", 0) == 0;
            if (realm.rfind("https://", 0) != 0 &&
                !(registry_plain && realm.rfind("http://", 0) == 0))
                return fail(Error::io("the registry's token realm is not https: " + realm)
                                .about(subject_of(t)));
            const std::string scope = scope_of(t);
            std::string url = realm + (realm.find('?') == std::string::npos ? "?" : "&");
            std::string sep;
            if (!bearer->param("service").empty()) {
                url += "service=" + net::escape(bearer->param("service"));
                sep = "&";
            }
            std::vector<std::string> scopes;
            for (std::size_t b = 0; b < scope.size();) {
                auto sp = scope.find(' ', b);
                scopes.push_back(scope.substr(b, sp == std::string::npos ? sp : sp - b));
                b = sp == std::string::npos ? scope.size() : sp + 1;
            }
            if (const std::string cs = bearer->param("scope");
                !cs.empty() && std::find(scopes.begin(), scopes.end(), cs) == scopes.end())
                scopes.push_back(cs);
            for (const auto& s : scopes) {
                url += sep + "scope=" + net::escape(s);
                sep = "&";
            }
            net::Request req = base_request("GET", url);
            req.follow_redirects = true;
            req.max_body = 1 << 20;
            if (*cred) req.headers.push_back("Authorization: Basic " + basic(**cred));
            Target tt = t;
            tt.object = "token from " + realm;
            // The token is part of the request that needs it (a blob's has a deadline of its
            // own).
            if (!deadline && opts.request_timeout.count() > 0)
                deadline = Clock::now() + opts.request_timeout;
            net::Response tr;
            for (int attempt = 0;; ++attempt) {
                if (deadline) {
                    const long left = ms_left(*deadline);
                    if (left <= 0) return fail(timeout_error(tt, req, attempt));
                    req.timeout_ms = left;
                }
                tr = lease()->perform(req);
                if (at_deadline(tr, deadline)) return fail(timeout_error(tt, req, attempt + 1));
                const bool retry = tr.outcome == net::Response::Outcome::dropped ||
                                   (tr.outcome == net::Response::Outcome::ok &&
                                    (tr.status >= 500 || tr.status == 429));
                if (!retry || attempt >= opts.retries) break;
                const auto delay = opts.backoff * (1 << attempt);
                if (deadline && Clock::now() + delay >= *deadline) break;
                std::this_thread::sleep_for(delay);
            }
            if (tr.outcome != net::Response::Outcome::ok) return fail(net_error(tt, tr, realm));
            if (tr.status != 200) return fail(status_error(tt, tr));
            auto docs = io::parse_json(tr.body, realm);
            std::string token;
            if (docs && docs->size() == 1) {
                const io::Node& root = (*docs)[0].root;
                for (const char* k : {"token", "access_token"})
                    if (const io::Node* v = root.get(k);
                        v != nullptr && v->is_string() && !v->text.empty()) {
                        token = v->text;
                        break;
                    }
            }
            if (token.empty())
                return fail(Error::io("the token endpoint " + realm + " answered no token")
                                .about(subject_of(t)));
            std::lock_guard<std::mutex> g(mu);
            auto& st = auth[t.registry];
            st.bearer = true;
            st.challenge = *bearer;
            st.tokens[scope] = token;
            return true;
        }
        if (basic_ch != nullptr && *cred) {
            std::lock_guard<std::mutex> g(mu);
            auth[t.registry].basic = true;
            return true;
        }
        return false;
    }

    // One request with authentication and retries. A response with any status comes back
    // (the caller decides what a 404 means); transfer failures are errors.
    // `retries` < 0: opts.retries. `transient` (when given) tells whether a failure was one
    // that a retry might cure (a 5xx, a 429, a dropped or too slow connection). A document's
    // attempts share one deadline (opts.request_timeout); a blob's limits are the request's own
    // (as_transfer).
    Result<net::Response> request(const Target& t, net::Request req, int retries = -1,
                                  bool* transient = nullptr, Kind kind = Kind::document) {
        if (retries < 0) retries = opts.retries;
        if (transient != nullptr) *transient = false;
        Deadline deadline;
        if (kind == Kind::document && opts.request_timeout.count() > 0)
            deadline = Clock::now() + opts.request_timeout;
        const std::size_t fixed_headers = req.headers.size();
        bool authenticated_once = false;
        for (int attempt = 0;;) {
            req.headers.resize(fixed_headers);
            const std::string sent = authorization(t);
            if (!sent.empty()) req.headers.push_back(sent);
            if (deadline) {
                const long left = ms_left(*deadline);
                if (left <= 0) return fail(timeout_error(t, req, attempt));
                req.timeout_ms = left;
            }
            const auto started = Clock::now();
            net::Response r = lease()->perform(req);
            if (at_deadline(r, deadline)) return fail(timeout_error(t, req, attempt + 1));
            // A blob's attempt that reached its own limit (as_transfer).
            const long limit_ms =
                !deadline && r.timed_out && !r.too_slow && req.timeout_ms > 0 &&
                        Clock::now() - started >= std::chrono::milliseconds(req.timeout_ms - 20)
                    ? req.timeout_ms
                    : 0;
            if (r.outcome == net::Response::Outcome::ok && r.status == 401 && !authenticated_once) {
                authenticated_once = true;
                // Another transfer may have authenticated meanwhile: use what it learnt.
                if (sent.empty() && !authorization(t).empty()) continue;
                auto again = authenticate(t, r, deadline);
                if (!again) return fail(std::move(again).error());
                if (*again) continue;
                return r;
            }
            bool retry = false;
            if (r.outcome == net::Response::Outcome::dropped) retry = true;
            if (r.outcome == net::Response::Outcome::ok && (r.status >= 500 || r.status == 429))
                retry = true;
            bool out_of_time = false;
            if (retry && attempt < retries) {
                auto delay = opts.backoff * (1 << attempt);
                if (r.status == 429 || r.status == 503) {
                    const std::string ra = r.header("retry-after");
                    if (!ra.empty() && std::all_of(ra.begin(), ra.end(), ::isdigit) &&
                        ra.size() < 4) {
                        auto s = std::chrono::milliseconds(std::stol(ra) * 1000);
                        delay = std::min(std::max(delay, s), std::chrono::milliseconds(10000));
                    }
                }
                // No retry when its wait alone would reach the deadline.
                out_of_time = deadline && Clock::now() + delay >= *deadline;
                if (!out_of_time) {
                    std::this_thread::sleep_for(delay);
                    ++attempt;
                    continue;
                }
            }
            if (retry && transient != nullptr) *transient = true;
            if (r.outcome != net::Response::Outcome::ok) {
                if (r.outcome == net::Response::Outcome::too_large)
                    return fail(Error::io(t.object + ": larger than " +
                                          std::to_string(req.max_body) + " bytes")
                                    .about(subject_of(t)));
                Error e = net_error(t, r, req.url, limit_ms);
                if (attempt > 0) e.note("tried " + std::to_string(attempt + 1) + " times");
                if (out_of_time)
                    e.note("not tried again: the request timeout of " +
                           duration_text(opts.request_timeout) + " would pass");
                return fail(std::move(e));
            }
            if (retry) {
                Error e = status_error(t, r);
                if (attempt > 0) e.note("tried " + std::to_string(attempt + 1) + " times");
                if (out_of_time)
                    e.note("not tried again: the request timeout of " +
                           duration_text(opts.request_timeout) + " would pass");
                return fail(std::move(e));
            }
            return r;
        }
    }

    Result<void> ready() { return net::init(); }

    std::string repo_url(const Reference& r) const { return base_url(r.domain) + "/v2/" + r.path; }

    // Resolves an upload Location against the registry.
    std::string absolute(const Reference& r, const std::string& loc) const {
        if (loc.rfind("http://", 0) == 0 || loc.rfind("https://", 0) == 0) return loc;
        if (!loc.empty() && loc[0] == '/') return base_url(r.domain) + loc;
        return base_url(r.domain) + "/" + loc;
    }

    Result<RemoteManifest> get_manifest(const Reference& ref);
    Result<std::string> get_blob(const Reference& ref, std::string_view digest,
                                 std::optional<std::uint64_t> size);
    Result<void> put_blob(const Reference& ref, std::string_view digest, std::string_view bytes,
                          std::string_view mount_from);
    Result<bool> mount_blob(const Reference& ref, std::string_view digest, std::string_view from);
    Result<std::optional<std::uint64_t>> head_blob(const Reference& ref, std::string_view digest,
                                                   bool push);
    Result<std::string> put_manifest(const Reference& ref, std::string_view media_type,
                                     std::string_view bytes);

    // Runs jobs on up to opts.parallel threads; the first error wins (the rest are skipped).
    Result<void> run_parallel(std::vector<std::function<Result<void>()>> jobs) {
        if (jobs.empty()) return {};
        const auto n = static_cast<unsigned>(std::min<std::size_t>(
            jobs.size(), static_cast<std::size_t>(std::max(1, opts.parallel))));
        return catch_error([&] {
            parallel_for(jobs.size(), n, [&](std::size_t i, unsigned) {
                Result<void> r = Result<void>();
                try {
                    r = jobs[i]();
                } catch (const std::bad_alloc&) {
                    throw; // the run ends: "out of memory"
                } catch (const std::exception& e) {
                    r = Error::internal(e.what());
                }
                if (!r) throw Exception(std::move(r).error());
            });
        });
    }
};

Result<RemoteManifest> Registry::Impl::get_manifest(const Reference& in) {
    const Reference ref = normalize(in);
    if (auto r = ready(); !r) return fail(std::move(r).error());
    const std::string id = !ref.digest.empty() ? ref.digest : ref.tag;
    Target t{ref.domain, ref.path, "manifest " + id, false, {}};
    net::Request req = base_request("GET", repo_url(ref) + "/manifests/" + id);
    req.headers.push_back("Accept: " + std::string(media::manifest_accept));
    req.max_body = opts.max_manifest_bytes;
    auto resp = request(t, std::move(req));
    if (!resp) {
        Error e = std::move(resp).error();
        if (e.message.find("larger than") != std::string::npos)
            e.message = t.object + ": larger than the " +
                        std::to_string(opts.max_manifest_bytes >> 10) + " KiB a manifest may be";
        return fail(std::move(e));
    }
    if (resp->status != 200) return fail(status_error(t, *resp));
    RemoteManifest m;
    m.bytes = std::move(resp->body);
    m.digest = sha256_digest(m.bytes);
    m.media_type = trim_type(resp->header("content-type"));
    if (m.media_type.empty() || m.media_type == "application/json" ||
        m.media_type == "text/plain" || m.media_type == "application/octet-stream")
        m.media_type = sniff_media_type(m.bytes);
    if (!media::is_index(m.media_type) && !media::is_manifest(m.media_type))
        return fail(
            Error::io(t.object + ": unsupported manifest media type \"" + m.media_type + "\"")
                .about(subject_of(t)));
    if (!ref.digest.empty() && ref.digest != m.digest)
        return fail(
            Error::io(t.object + ": digest mismatch: the registry sent content with " + m.digest)
                .about(subject_of(t)));
    const std::string dcd = resp->header("docker-content-digest");
    if (dcd.rfind("sha256:", 0) == 0 && dcd != m.digest)
        return fail(Error::io(t.object + ": digest mismatch: Docker-Content-Digest says " + dcd +
                              " but the content is " + m.digest)
                        .about(subject_of(t)));
    return m;
}

Result<std::string> Registry::Impl::get_blob(const Reference& in, std::string_view digest,
                                             std::optional<std::uint64_t> size) {
    const Reference ref = normalize(in);
    Target t{ref.domain, ref.path, "blob " + std::string(digest), false, {}};
    if (!check_digest(digest) || digest.substr(0, 7) != "sha256:")
        return fail(Error::invalid(t.object + ": not a sha256 digest").about(subject_of(t)));
    if (size && *size > opts.max_blob_bytes)
        return fail(Error::io(t.object + ": " + std::to_string(*size) +
                              " bytes, more than the limit of " +
                              std::to_string(opts.max_blob_bytes))
                        .about(subject_of(t)));
    if (auto r = ready(); !r) return fail(std::move(r).error());
    net::Request req = base_request("GET", repo_url(ref) + "/blobs/" + std::string(digest));
    req.follow_redirects = true;
    req.max_body = size ? *size : opts.max_blob_bytes;
    as_transfer(req, req.max_body);
    const std::string d(digest);
    if (opts.progress)
        req.progress = [this, d, size](std::uint64_t done, std::uint64_t total) {
            report({Progress::Direction::download, d, done, size ? *size : total, false});
        };
    auto resp = request(t, std::move(req), -1, nullptr, Kind::blob);
    if (!resp) {
        Error e = std::move(resp).error();
        if (size && e.message.find("larger than") != std::string::npos)
            e.message = t.object + ": the registry sent more than the " + std::to_string(*size) +
                        " bytes its descriptor gives";
        return fail(std::move(e));
    }
    if (resp->status != 200) return fail(status_error(t, *resp));
    if (sha256_digest(resp->body) != digest)
        return fail(Error::io(t.object + ": digest mismatch: the content received hashes to " +
                              sha256_digest(resp->body))
                        .about(subject_of(t)));
    if (size && resp->body.size() != *size)
        return fail(Error::io(t.object + ": " + std::to_string(resp->body.size()) +
                              " bytes received, the descriptor says " + std::to_string(*size))
                        .about(subject_of(t)));
    report({Progress::Direction::download, d, resp->body.size(), resp->body.size(), true});
    return std::move(resp->body);
}

Result<std::optional<std::uint64_t>> Registry::Impl::head_blob(const Reference& in,
                                                               std::string_view digest, bool push) {
    const Reference ref = normalize(in);
    if (auto r = ready(); !r) return fail(std::move(r).error());
    Target t{ref.domain, ref.path, "blob " + std::string(digest), push, {}};
    net::Request req = base_request("HEAD", repo_url(ref) + "/blobs/" + std::string(digest));
    req.follow_redirects = true;
    auto resp = request(t, std::move(req));
    if (!resp) return fail(std::move(resp).error());
    if (resp->status == 404) return std::optional<std::uint64_t>();
    if (resp->status != 200) return fail(status_error(t, *resp));
    const std::string cl = resp->header("content-length");
    std::uint64_t n = 0;
    if (!cl.empty() && std::all_of(cl.begin(), cl.end(), ::isdigit) && cl.size() < 20)
        n = std::stoull(cl);
    return std::optional<std::uint64_t>(n);
}

Result<bool> Registry::Impl::mount_blob(const Reference& in, std::string_view digest,
                                        std::string_view from) {
    const Reference ref = normalize(in);
    if (auto r = ready(); !r) return fail(std::move(r).error());
    Target t{ref.domain, ref.path, "blob " + std::string(digest), true, std::string(from)};
    net::Request req =
        base_request("POST", repo_url(ref) + "/blobs/uploads/?mount=" + net::escape(digest) +
                                 "&from=" + net::escape(from));
    auto resp = request(t, std::move(req));
    if (!resp) return fail(std::move(resp).error());
    if (resp->status == 201) return true;
    if (resp->status == 202) {
        // An upload session was opened instead; abandon it (a registry expires it anyway).
        const std::string loc = resp->header("location");
        if (!loc.empty()) {
            net::Request del = base_request("DELETE", absolute(ref, loc));
            (void)request(t, std::move(del));
        }
        return false;
    }
    return fail(status_error(t, *resp));
}

Result<void> Registry::Impl::put_blob(const Reference& in, std::string_view digest,
                                      std::string_view bytes, std::string_view mount_from) {
    const Reference ref = normalize(in);
    Target t{ref.domain, ref.path, "blob " + std::string(digest), true, {}};
    if (sha256_digest(bytes) != digest)
        return fail(Error::invalid(t.object + ": the bytes to upload do not match the digest")
                        .about(subject_of(t)));
    const std::string d(digest);
    auto exists = head_blob(ref, digest, true);
    if (!exists) return fail(std::move(exists).error());
    if (*exists) {
        report({Progress::Direction::upload, d, bytes.size(), bytes.size(), true});
        return {};
    }
    if (!mount_from.empty() && mount_from != ref.path) {
        auto m = mount_blob(ref, digest, mount_from);
        if (!m) return fail(std::move(m).error());
        if (*m) {
            report({Progress::Direction::upload, d, bytes.size(), bytes.size(), true});
            return {};
        }
    }
    const std::uint64_t total = bytes.size();
    auto progress_from = [this, d, total](std::size_t base) {
        std::function<void(std::uint64_t, std::uint64_t)> f;
        if (opts.progress)
            f = [this, d, total, base](std::uint64_t done, std::uint64_t) {
                report({Progress::Direction::upload, d, base + done, total, false});
            };
        return f;
    };
    // One upload session. Its PATCH and PUT requests are not repeated on their own (the
    // registry may have taken part of the data): a transient failure starts a new session.
    auto session = [&](bool* transient) -> Result<void> {
        auto start =
            request(t, base_request("POST", repo_url(ref) + "/blobs/uploads/"), -1, transient);
        if (!start) return fail(std::move(start).error());
        if (start->status != 202) return fail(status_error(t, *start));
        std::string loc = start->header("location");
        if (loc.empty())
            return fail(Error::io(t.object + ": the registry opened an upload without a Location")
                            .about(subject_of(t)));
        loc = absolute(ref, loc);
        std::size_t offset = 0;
        if (bytes.size() >= opts.chunk_threshold && opts.chunk_size > 0) {
            while (offset < bytes.size()) {
                const std::size_t n = std::min(opts.chunk_size, bytes.size() - offset);
                net::Request req = base_request("PATCH", loc);
                req.body = bytes.substr(offset, n);
                req.headers.push_back("Content-Type: application/octet-stream");
                req.headers.push_back("Content-Range: " + std::to_string(offset) + "-" +
                                      std::to_string(offset + n - 1));
                req.progress = progress_from(offset);
                as_transfer(req, n);
                auto r = request(t, std::move(req), 0, transient, Kind::blob);
                if (!r) return fail(std::move(r).error());
                if (r->status != 202 && r->status != 204) return fail(status_error(t, *r));
                offset += n;
                if (std::string l = r->header("location"); !l.empty()) loc = absolute(ref, l);
            }
        }
        net::Request fin =
            base_request("PUT", loc + (loc.find('?') == std::string::npos ? "?" : "&") +
                                    "digest=" + net::escape(digest));
        fin.body = bytes.substr(offset);
        fin.headers.push_back("Content-Type: application/octet-stream");
        fin.progress = progress_from(offset);
        as_transfer(fin, fin.body.size());
        auto r = request(t, std::move(fin), 0, transient, Kind::blob);
        if (!r) return fail(std::move(r).error());
        if (r->status != 201 && r->status != 204) return fail(status_error(t, *r));
        return {};
    };
    for (int attempt = 0;; ++attempt) {
        bool transient = false;
        auto r = session(&transient);
        if (r) break;
        if (!transient || attempt >= opts.retries) {
            Error e = std::move(r).error();
            if (attempt > 0) e.note("uploaded " + std::to_string(attempt + 1) + " times");
            return fail(std::move(e));
        }
        std::this_thread::sleep_for(opts.backoff * (1 << attempt));
    }
    report({Progress::Direction::upload, d, total, total, true});
    return {};
}

Result<std::string> Registry::Impl::put_manifest(const Reference& in, std::string_view media_type,
                                                 std::string_view bytes) {
    const Reference ref = normalize(in);
    if (auto r = ready(); !r) return fail(std::move(r).error());
    const std::string digest = sha256_digest(bytes);
    const std::string id = !ref.tag.empty() ? ref.tag : digest;
    Target t{ref.domain, ref.path, "manifest " + id, true, {}};
    if (!ref.digest.empty() && ref.digest != digest)
        return fail(Error::invalid(t.object +
                                   ": the manifest does not match the reference's "
                                   "digest " +
                                   ref.digest)
                        .about(subject_of(t)));
    if (bytes.size() > opts.max_manifest_bytes)
        return fail(Error::invalid(t.object + ": larger than the " +
                                   std::to_string(opts.max_manifest_bytes >> 10) +
                                   " KiB a manifest may be")
                        .about(subject_of(t)));
    net::Request req = base_request("PUT", repo_url(ref) + "/manifests/" + id);
    req.body = bytes;
    req.headers.push_back("Content-Type: " + std::string(media_type));
    auto r = request(t, std::move(req));
    if (!r) return fail(std::move(r).error());
    if (r->status != 201 && r->status != 200 && r->status != 202) return fail(status_error(t, *r));
    const std::string dcd = r->header("docker-content-digest");
    if (dcd.rfind("sha256:", 0) == 0 && dcd != digest)
        return fail(Error::io(t.object + ": the registry stored it as " + dcd + ", not " + digest)
                        .about(subject_of(t)));
    return digest;
}

// ------------------------------------------------------------------------------------------------

Registry::Registry(RegistryOptions opts, const Store* store) : impl_(std::make_unique<Impl>()) {
    impl_->opts = std::move(opts);
    if (impl_->opts.user_agent.empty()) impl_->opts.user_agent = "kpkg/" KPKG_VERSION;
    impl_->store = store;
}

Registry::~Registry() = default;

const RegistryOptions& Registry::options() const {
    return impl_->opts;
}

std::string Registry::base_url(std::string_view registry) const {
    return impl_->base_url(registry);
}

Result<void> Registry::ping(std::string_view registry) {
    if (auto r = impl_->ready(); !r) return r;
    Target t{std::string(registry), "", "", false, {}};
    auto resp = impl_->request(t, impl_->base_request("GET", impl_->base_url(registry) + "/v2/"));
    if (!resp) return fail(std::move(resp).error());
    if (resp->status != 200) return fail(impl_->status_error(t, *resp));
    return {};
}

Result<RemoteManifest> Registry::get_manifest(const Reference& ref) {
    return impl_->get_manifest(ref);
}

Result<std::optional<RemoteManifest>> Registry::head_manifest(const Reference& in) {
    const Reference ref = normalize(in);
    if (auto r = impl_->ready(); !r) return fail(std::move(r).error());
    const std::string id = !ref.digest.empty() ? ref.digest : ref.tag;
    Target t{ref.domain, ref.path, "manifest " + id, false, {}};
    net::Request req = impl_->base_request("HEAD", impl_->repo_url(ref) + "/manifests/" + id);
    req.headers.push_back("Accept: " + std::string(media::manifest_accept));
    auto resp = impl_->request(t, std::move(req));
    if (!resp) return fail(std::move(resp).error());
    if (resp->status == 404) return std::optional<RemoteManifest>();
    if (resp->status != 200) return fail(impl_->status_error(t, *resp));
    RemoteManifest m;
    m.media_type = trim_type(resp->header("content-type"));
    m.digest = resp->header("docker-content-digest");
    if (m.digest.empty()) m.digest = ref.digest;
    return std::optional<RemoteManifest>(std::move(m));
}

Result<std::string> Registry::put_manifest(const Reference& ref, std::string_view media_type,
                                           std::string_view bytes) {
    return impl_->put_manifest(ref, media_type, bytes);
}

Result<std::optional<std::uint64_t>> Registry::head_blob(const Reference& repo,
                                                         std::string_view digest) {
    return impl_->head_blob(repo, digest, false);
}

Result<std::string> Registry::get_blob(const Reference& repo, std::string_view digest,
                                       std::optional<std::uint64_t> size) {
    return impl_->get_blob(repo, digest, size);
}

Result<void> Registry::put_blob(const Reference& repo, std::string_view digest,
                                std::string_view bytes, std::string_view mount_from) {
    if (auto r = impl_->ready(); !r) return r;
    return impl_->put_blob(repo, digest, bytes, mount_from);
}

Result<bool> Registry::mount_blob(const Reference& repo, std::string_view digest,
                                  std::string_view from) {
    return impl_->mount_blob(repo, digest, from);
}

// ------------------------------------------------------------------------------------------------
// push

Result<std::string> Registry::push(const Reference& in, const Content& c,
                                   const PushOptions& popts) {
    const Reference ref = normalize(in);
    const std::string what = "image " + ref.str();
    auto invalid = [&](const std::string& m) { return fail(Error::invalid(m).about(what)); };
    for (const auto& [d, b] : c.blobs)
        if (sha256_digest(b) != d) return invalid("blob " + d + " does not match its digest");
    auto root = c.blobs.find(c.root_digest);
    if (root == c.blobs.end())
        return invalid("the root " + c.root_digest + " is not among the blobs");
    if (!media::is_index(c.root_media_type) && !media::is_manifest(c.root_media_type))
        return invalid("unsupported root media type \"" + c.root_media_type + "\"");
    if (!ref.digest.empty() && ref.digest != c.root_digest)
        return invalid("the reference's digest is not the image's (" + c.root_digest + ")");

    // The manifests (the root's children first) and the blobs they list.
    std::vector<std::pair<std::string, std::string>> children; // digest, media type
    std::vector<std::string> blobs;
    auto add_manifest_blobs = [&](const std::string& digest,
                                  const std::string& type) -> Result<void> {
        auto p = parse_descriptors(c.blobs.at(digest), type, "manifest " + digest);
        if (!p) return fail(std::move(p).error());
        if (p->index) return invalid("manifest " + digest + " is an index inside an index");
        std::vector<Desc> ds = p->layers;
        ds.insert(ds.begin(), *p->config);
        for (const auto& dsc : ds) {
            if (!c.blobs.count(dsc.digest))
                return invalid("blob " + dsc.digest + " (listed by " + digest + ") is missing");
            if (std::find(blobs.begin(), blobs.end(), dsc.digest) == blobs.end())
                blobs.push_back(dsc.digest);
        }
        return {};
    };
    if (media::is_index(c.root_media_type)) {
        auto p = parse_descriptors(root->second, c.root_media_type, "index " + c.root_digest);
        if (!p) return fail(std::move(p).error());
        for (const auto& m : p->manifests) {
            if (!c.blobs.count(m.digest))
                return invalid("manifest " + m.digest + " (listed by the index) is missing");
            std::string type =
                m.media_type.empty() ? sniff_media_type(c.blobs.at(m.digest)) : m.media_type;
            if (!media::is_manifest(type))
                return invalid("manifest " + m.digest + " has the unsupported media type \"" +
                               type + "\"");
            if (std::find_if(children.begin(), children.end(),
                             [&](auto& x) { return x.first == m.digest; }) == children.end())
                children.emplace_back(m.digest, type);
            if (auto r = add_manifest_blobs(m.digest, type); !r) return fail(std::move(r).error());
        }
    } else {
        if (auto r = add_manifest_blobs(c.root_digest, c.root_media_type); !r)
            return fail(std::move(r).error());
    }

    if (auto r = impl_->ready(); !r) return fail(std::move(r).error());
    std::vector<std::function<Result<void>()>> jobs;
    for (const auto& d : blobs)
        jobs.emplace_back([this, &ref, &c, d, &popts]() {
            return impl_->put_blob(ref, d, c.blobs.at(d), popts.mount_from);
        });
    if (auto r = impl_->run_parallel(std::move(jobs)); !r) return fail(std::move(r).error());
    for (const auto& [d, type] : children) {
        Reference cr = ref;
        cr.tag.clear();
        cr.digest = d;
        auto r = impl_->put_manifest(cr, type, c.blobs.at(d));
        if (!r) return fail(std::move(r).error());
    }
    Reference rr = ref;
    if (rr.tag.empty())
        rr.digest = c.root_digest;
    else
        rr.digest.clear();
    auto pushed = impl_->put_manifest(rr, c.root_media_type, root->second);
    if (!pushed) return pushed;
    if (impl_->store != nullptr) {
        // The manifests only: what a later pull of the same tag or digest needs to begin with.
        (void)impl_->store->put(c.root_digest, root->second);
        for (const auto& [d, type] : children)
            (void)impl_->store->put(d, c.blobs.at(d));
        if (!ref.tag.empty()) (void)impl_->store->set_tag(ref, c.root_digest, c.root_media_type);
    }
    return pushed;
}

// ------------------------------------------------------------------------------------------------
// pull

Result<Content> Registry::pull(const Reference& in, const PullOptions& popts) {
    const Reference ref = normalize(in);
    const Store* store = impl_->store;
    const std::string what = "image " + ref.str();
    auto offline_miss = [&](const std::string& object) {
        return fail(Error::io(object + " is not in the cache (offline)").about(what));
    };

    // A manifest by digest: the cache, else the registry (the cache learns it).
    auto manifest_by_digest = [&](const std::string& digest,
                                  const std::string& type_hint) -> Result<RemoteManifest> {
        if (store != nullptr) {
            auto cached = store->get(digest, impl_->opts.max_manifest_bytes);
            if (cached && *cached) {
                RemoteManifest m{type_hint.empty() ? sniff_media_type(**cached) : type_hint,
                                 std::move(**cached), digest};
                return m;
            }
        }
        if (popts.offline) return offline_miss("manifest " + digest);
        Reference r = ref;
        r.tag.clear();
        r.digest = digest;
        auto m = impl_->get_manifest(r);
        if (!m) return m;
        if (store != nullptr) (void)store->put(m->digest, m->bytes);
        return m;
    };

    RemoteManifest root;
    if (!ref.digest.empty()) {
        auto m = manifest_by_digest(ref.digest, "");
        if (!m) return fail(std::move(m).error());
        root = std::move(*m);
    } else if (popts.offline) {
        std::optional<TagRecord> rec = store != nullptr ? store->tag(ref) : std::nullopt;
        if (!rec) return offline_miss("tag " + ref.tag);
        auto m = manifest_by_digest(rec->digest, rec->media_type);
        if (!m) return fail(std::move(m).error());
        root = std::move(*m);
    } else {
        auto m = impl_->get_manifest(ref);
        if (!m) return fail(std::move(m).error());
        root = std::move(*m);
        if (store != nullptr) {
            (void)store->put(root.digest, root.bytes);
            (void)store->set_tag(ref, root.digest, root.media_type);
        }
    }
    if (!media::is_index(root.media_type) && !media::is_manifest(root.media_type))
        return fail(
            Error::io("unsupported manifest media type \"" + root.media_type + "\"").about(what));

    Content out;
    std::vector<RemoteManifest> manifests; // the image manifests whose blobs are needed
    auto parsed = parse_descriptors(root.bytes, root.media_type, "manifest " + root.digest);
    if (!parsed) return fail(std::move(parsed).error());
    if (parsed->index) {
        std::vector<const Desc*> chosen;
        const Platform want = popts.platform ? *popts.platform : host_platform();
        for (const auto& d : parsed->manifests) {
            if (popts.all_platforms) {
                chosen.push_back(&d);
            } else if (d.platform && platform_matches(want, *d.platform)) {
                chosen.push_back(&d);
                break;
            }
        }
        if (chosen.empty()) {
            std::string have;
            for (const auto& d : parsed->manifests)
                if (d.platform) have += (have.empty() ? "" : ", ") + d.platform->str();
            // The image is there, but not for this platform: what it is, not the network (exit 3,
            // as for an index read from a layout).
            Error e = Error::invalid("no manifest for the platform " + want.str() +
                                     " in the index " + short_digest(root.digest));
            e.about(what);
            e.note("the index has: " + (have.empty() ? std::string("no platforms") : have));
            return fail(std::move(e));
        }
        for (const Desc* d : chosen) {
            auto m = manifest_by_digest(d->digest, d->media_type);
            if (!m) return fail(std::move(m).error());
            if (!media::is_manifest(m->media_type))
                return fail(Error::io("manifest " + d->digest + ": unsupported media type \"" +
                                      m->media_type + "\"")
                                .about(what));
            manifests.push_back(std::move(*m));
        }
        if (popts.all_platforms) {
            out.root_digest = root.digest;
            out.root_media_type = root.media_type;
            out.blobs[root.digest] = root.bytes;
        } else {
            out.root_digest = manifests[0].digest;
            out.root_media_type = manifests[0].media_type;
        }
    } else {
        out.root_digest = root.digest;
        out.root_media_type = root.media_type;
        manifests.push_back(std::move(root));
    }

    // The configs and layers, from the cache or the registry.
    std::vector<Desc> wanted;
    for (const auto& m : manifests) {
        auto p = parse_descriptors(m.bytes, m.media_type, "manifest " + m.digest);
        if (!p) return fail(std::move(p).error());
        if (p->index)
            return fail(
                Error::io("manifest " + m.digest + " is an index inside an index").about(what));
        out.blobs[m.digest] = m.bytes;
        std::vector<Desc> ds = p->layers;
        ds.insert(ds.begin(), *p->config);
        for (auto& d : ds) {
            if (d.digest.rfind("sha256:", 0) != 0)
                return fail(Error::io("blob " + d.digest + ": only sha256 digests are supported")
                                .about(what));
            if (std::none_of(wanted.begin(), wanted.end(),
                             [&](const Desc& w) { return w.digest == d.digest; }))
                wanted.push_back(d);
        }
    }
    std::mutex out_mu;
    std::vector<std::function<Result<void>()>> jobs;
    for (const auto& d : wanted) {
        if (store != nullptr) {
            auto cached = store->get(d.digest, d.size ? static_cast<std::uint64_t>(*d.size)
                                                      : impl_->opts.max_blob_bytes);
            if (cached && *cached && (!d.size || (*cached)->size() == *d.size)) {
                impl_->report({Progress::Direction::download, d.digest, (*cached)->size(),
                               (*cached)->size(), true});
                out.blobs[d.digest] = std::move(**cached);
                continue;
            }
        }
        if (popts.offline) return offline_miss("blob " + d.digest);
        jobs.emplace_back([this, &ref, d, store, &out, &out_mu]() -> Result<void> {
            auto b = impl_->get_blob(ref, d.digest, d.size);
            if (!b) return fail(std::move(b).error());
            if (store != nullptr) {
                if (auto r = store->put(d.digest, *b); !r) return r;
            }
            std::lock_guard<std::mutex> g(out_mu);
            out.blobs[d.digest] = std::move(*b);
            return {};
        });
    }
    if (auto r = impl_->run_parallel(std::move(jobs)); !r) return fail(std::move(r).error());
    return out;
}

} // namespace kpkg::oci
