// A test Kubernetes API server for the kube tests: tests/kube/apiserver.py started on a free
// loopback port, with a kubeconfig that points at it, and its control API (faults, controller
// behaviour, the request log). Also: TLS material made with openssl, and running a program
// (kubectl) with a time limit.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "kpkg/io/node.hpp"
#include "support.hpp"

namespace kpkg::test {

// A CA, a server certificate for 127.0.0.1 and localhost, and a client certificate (CN
// "kpkg-test", O "system:masters"), all signed by the CA; PEM files in one directory.
struct TlsFiles {
    fs::path ca_cert, ca_key;
    fs::path server_cert, server_key;
    fs::path client_cert, client_key;
};

// Makes them with /usr/bin/openssl (or openssl on PATH) in `dir`; nothing, with the reason in
// `error`, when openssl is missing or fails.
std::optional<TlsFiles> make_tls_files(const fs::path& dir, std::string* error = nullptr);

struct KubeServerOptions {
    bool tls = false;                    // HTTPS with a certificate made by make_tls_files
    bool client_ca = false;              // accept client certificates (implies tls)
    std::vector<std::string> tokens;     // accepted bearer tokens
    std::string basic;                   // accepted "user:password"
    bool legacy_discovery = false;       // never answer aggregated discovery
    bool olm = false;                    // serve OLM's types too
    int delay_ms = 100;                  // how long the simulated controllers take
    std::string context_namespace;       // the kubeconfig context's namespace ("" = none)
    std::vector<std::string> extra_args; // more apiserver.py arguments
};

// Credentials for a kubeconfig user (none = anonymous).
struct KubeUser {
    std::string token;
    std::string basic; // "user:password"
    bool client_cert = false;
};

// One entry of the server's request log.
struct KubeRequest {
    std::string method;
    std::string path;
    std::string query; // raw, as sent
    std::string content_type;
    std::string user_agent;
    int status = 0; // 0: the connection was dropped without an answer

    // The value of a query parameter (decoded), "" when absent.
    std::string param(const std::string& name) const;
};

class KubeServer {
public:
    // Why no server can be started here ("" when one can): python3 missing (a missing_tool
    // reason), apiserver.py missing or KPKG_SOURCE_ROOT unset.
    static std::string unavailable_reason();

    // Starts the server and writes the kubeconfig (user: the first token, else basic, else the
    // client certificate when client_ca, else anonymous). running() says whether it came up;
    // error() says why not.
    explicit KubeServer(KubeServerOptions opts = {});
    ~KubeServer();
    KubeServer(const KubeServer&) = delete;
    KubeServer& operator=(const KubeServer&) = delete;

    bool running() const { return pid_ > 0; }
    const std::string& error() const { return error_; }
    int port() const { return port_; }
    // "http://127.0.0.1:PORT" or "https://127.0.0.1:PORT".
    std::string url() const;
    const fs::path& kubeconfig_path() const { return kubeconfig_; }
    // A working directory for the test (removed with the server).
    const TempDir& dir() const { return dir_; }
    // The TLS material (when tls).
    const std::optional<TlsFiles>& tls() const { return tls_; }

    // Writes another kubeconfig for this server under dir() with the given user and context
    // namespace; returns its path.
    fs::path write_kubeconfig(const std::string& file, const KubeUser& user,
                              const std::string& ns = {}) const;

    // POST /__test/config with `json` (see apiserver.py: delay_ms, behaviours, faults).
    bool control(const std::string& json);
    // POST /__test/status: sets the status of a stored object (`status_json`: a JSON object).
    bool set_status(const std::string& api_version, const std::string& kind, const std::string& ns,
                    const std::string& name, const std::string& status_json);
    // POST /__test/reset: objects, configuration and request log back to the start.
    bool reset();
    // POST /__test/requests/clear.
    bool clear_requests();
    // GET /__test/requests, parsed; empty when the server does not answer.
    std::vector<KubeRequest> requests();
    // Of requests(): those that change something (PATCH, DELETE, POST, PUT), dry runs excluded.
    std::size_t write_count();
    // GET /__test/objects: {"items": [...]} parsed (null when the server does not answer).
    io::Node objects();
    // The stored object of that kind and name (namespace "" = any), or nothing.
    std::optional<io::Node> object(const std::string& kind, const std::string& name,
                                   const std::string& ns = {});

    // Stops the server: SIGTERM, then SIGKILL after 3 s.
    void stop();

private:
    // A plain HTTP request to the control port; the status (0 = no answer) and the body.
    int http(const std::string& method, const std::string& path, const std::string& body,
             std::string* reply);

    KubeServerOptions opts_;
    TempDir dir_;
    std::optional<TlsFiles> tls_;
    pid_t pid_ = -1;
    int port_ = 0;
    int control_port_ = 0;
    fs::path kubeconfig_;
    std::string error_;
};

// Skips the test when python3 is not installed (missing_tool); fails it when the server cannot
// be started otherwise (apiserver.py missing, KPKG_SOURCE_ROOT unset) or did not start: a broken
// set-up, not a missing tool.
#define KPKG_REQUIRE_KUBE_SERVER(var, ...)                                                         \
    if (auto why_ = ::kpkg::test::KubeServer::unavailable_reason();                                \
        why_.rfind("missing tool: ", 0) == 0)                                                      \
        GTEST_SKIP() << why_;                                                                      \
    ::kpkg::test::KubeServer var{__VA_ARGS__};                                                     \
    ASSERT_TRUE(var.running()) << "the test API server did not start: " << var.error()

// The executable named `name` on PATH, or "".
std::string find_on_path(const std::string& name);

} // namespace kpkg::test
