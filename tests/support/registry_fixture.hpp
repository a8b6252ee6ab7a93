// Registries for the oci tests: a real docker-registry process (Debian's docker-registry, plain
// or with htpasswd basic auth), a scripted fake HTTP server on loopback for faults and token
// auth, and small images built by hand.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kpkg/oci/content.hpp"
#include "kpkg/oci/reference.hpp"
#include "kpkg/oci/registry.hpp"
#include "support.hpp"

namespace kpkg::test {

// ---- A fake HTTP/1.1 server on 127.0.0.1 (one connection at a time, Connection: close) ----

struct HttpReq {
    std::string method;
    std::string target;                         // path and query as sent
    std::string path;                           // without the query
    std::map<std::string, std::string> headers; // names in lower case
    std::string body;

    std::string header(const std::string& n) const {
        auto it = headers.find(n);
        return it == headers.end() ? std::string() : it->second;
    }
    // A query parameter's raw value ("" when absent).
    std::string query(const std::string& name) const;
};

struct HttpReply {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    // Send the headers (with the whole body's Content-Length) and this many body bytes, then
    // close the connection: a transfer cut off midway.
    long cut_after = -1;
    // Send the headers and this many body bytes, then wait `stall_ms` before the rest: a
    // registry that stalls midway (the connection stays open).
    long stall_after = -1;
    int stall_ms = 0;
    // Send the headers, then the body `trickle_bytes` bytes at a time with `trickle_ms` between
    // them: a registry that sends, but slowly. Stalls and trickles end early when the client
    // hangs up or the server stops.
    long trickle_bytes = 0;
    int trickle_ms = 0;

    static HttpReply text(int status, std::string body = {});
    static HttpReply json(int status, std::string body);
    // Sets a header (replacing one of the same name).
    HttpReply& with(std::string name, std::string value);
};

class FakeServer {
public:
    using Handler = std::function<HttpReply(const HttpReq&)>;
    explicit FakeServer(Handler h);
    ~FakeServer();
    FakeServer(const FakeServer&) = delete;
    FakeServer& operator=(const FakeServer&) = delete;

    int port() const { return port_; }
    // "127.0.0.1:PORT", a registry name for references.
    std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
    // Every request so far, in order.
    std::vector<HttpReq> requests() const;
    std::size_t count(const std::string& method, const std::string& path_prefix) const;
    // Requests for which this says true are answered as soon as their headers are in, without
    // reading the body, and the connection is reset (a server that gives up mid-upload).
    std::function<bool(const HttpReq&)> answer_before_body;

private:
    void loop();
    void serve(int fd);
    // Waits `ms`; false as soon as the client has hung up or the server is stopping.
    bool wait_unless_gone(int fd, int ms);
    Handler handler_;
    int listen_fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
    mutable std::mutex mu_;
    std::vector<HttpReq> requests_;
};

// ---- docker-registry ----

class RegistryProcess {
public:
    // Whether /usr/bin/docker-registry (or docker-registry on PATH) exists.
    static std::string binary();
    // Starts a registry on a free loopback port with storage in a temp dir; with a user, basic
    // auth through an htpasswd file (bcrypt, made with htpasswd -Bbn). Waits until /v2/ answers.
    // `error()` says why when it did not start.
    explicit RegistryProcess(const std::string& user = {}, const std::string& password = {});
    ~RegistryProcess();
    RegistryProcess(const RegistryProcess&) = delete;
    RegistryProcess& operator=(const RegistryProcess&) = delete;

    bool running() const { return pid_ > 0; }
    const std::string& error() const { return error_; }
    int port() const { return port_; }
    std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
    // Stops the process (SIGTERM, then waits).
    void stop();

private:
    TempDir dir_;
    pid_t pid_ = -1;
    int port_ = 0;
    std::string error_;
};

// A free TCP port on 127.0.0.1 (bound and released: a tiny race, fine for tests).
int free_port();
// Whether something answers HTTP at 127.0.0.1:port/v2/ (any status).
bool http_answers(int port);
// Runs a shell command; its exit status, and its standard output in `out` when given.
int run_command(const std::string& cmd, std::string* out = nullptr);

// ---- clients ----

// The reference `s` (which must parse).
oci::Reference ref_of(const std::string& s);

// Registry options for tests: fast retries (`retries` of them, 10 ms apart), a short connect
// timeout, and no credentials from the user's files (an auth file in `d` that does not exist).
oci::RegistryOptions quick_options(const TempDir& d, int retries);

// ---- images built by hand ----

// An uncompressed tar with one regular file (ustar, fixed metadata).
std::string tar_with_file(const std::string& name, const std::string& content);

// A one-layer image: a config JSON naming `platform` ("linux/amd64"), an uncompressed tar layer
// holding a file with `payload` (plus `extra_layers` layers of the given sizes, filled with
// bytes from `seed`), and an OCI manifest as the root.
oci::Content make_image(const std::string& payload, const std::string& platform = "linux/amd64",
                        const std::vector<std::size_t>& extra_layers = {});

// An OCI index over images (each a manifest root), with each image's platform; the blobs of
// all, the index as the root.
oci::Content make_index(const std::vector<std::pair<oci::Content, std::string>>& images);

} // namespace kpkg::test
