// kubeconfig files as client-go's clientcmd reads them: which files (--kubeconfig alone, else
// $KUBECONFIG as a ':'-separated list merged with the first file to define an entry winning,
// else ~/.kube/config), the context and the cluster and user it names, paths relative to the
// file that holds them, inline (base64) or file certificates; and the credentials of a user at
// the time of a request: static token or basic auth, a tokenFile read at each use, or an exec
// credential plugin (client.authentication.k8s.io v1 and v1beta1), cached until it expires.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/kube/api.hpp"

namespace kpkg::kube {

struct ClusterConfig {
    std::string name;
    std::string server;                // "https://127.0.0.1:6443"
    std::string ca_pem;                // certificate-authority-data, else the file's content
    std::string certificate_authority; // the file (resolved path), "" when inline or none
    bool insecure = false;             // insecure-skip-tls-verify
    std::string tls_server_name;
    std::string proxy_url;
};

// An exec credential plugin (users[].user.exec).
struct ExecConfig {
    std::string api_version; // client.authentication.k8s.io/v1 or /v1beta1
    std::string command;     // resolved against the kubeconfig's directory when it has a '/'
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> env;
    std::string interactive_mode; // Never, IfAvailable (Always is refused: no terminal is given)
    std::string install_hint;
    bool provide_cluster_info = false;
};

struct UserConfig {
    std::string name;
    std::string client_cert_pem; // client-certificate-data, else the file's content
    std::string client_key_pem;
    std::string client_certificate; // the files (resolved paths), for messages
    std::string client_key;
    std::string token;
    std::string token_file; // resolved path; read again at each use
    std::string username;
    std::string password;
    std::optional<ExecConfig> exec;
};

// The selected context with its cluster and user, every file already read.
struct KubeConfig {
    std::vector<std::string> files; // the kubeconfig files read, in order
    std::string context;
    std::string namespace_; // the context's namespace, "" when it names none
    ClusterConfig cluster;
    UserConfig user;
};

// Which kubeconfig to read: `path` (--kubeconfig) alone when set; otherwise `kubeconfig_env`
// ($KUBECONFIG when not given) as a ':'-separated list, files that do not exist skipped; when
// that is unset or empty, `home`/.kube/config ($HOME when not given).
struct KubeconfigSource {
    std::string path;
    std::optional<std::string> kubeconfig_env;
    std::optional<std::string> home;
};

// Reads and merges the files and resolves `context` ("" = current-context). Errors: a file that
// does not parse or has a field of the wrong type (file:line:col, exit 3); no file at all, no
// context, a context/cluster/user that is not defined (named, with the ones that are; exit 3);
// both a token and basic auth, an auth-provider, a bad exec section (exit 3); --kubeconfig, a
// certificate or key file that cannot be read (exit 1). No token file or plugin is read or run
// here.
Result<KubeConfig> load_kubeconfig(const KubeconfigSource& source, const std::string& context);

// What a request authenticates with.
struct Credentials {
    std::string bearer_token;
    std::string client_cert_pem; // from the plugin or the kubeconfig
    std::string client_key_pem;
    std::string username; // basic auth
    std::string password;
};

// The credentials of one user, safe to use from several threads. An exec plugin runs on first
// use and again once its expirationTimestamp has passed (or after invalidate(), on a 401).
class Authenticator {
public:
    explicit Authenticator(KubeConfig config);
    ~Authenticator();
    Authenticator(const Authenticator&) = delete;
    Authenticator& operator=(const Authenticator&) = delete;

    // The credentials now: the static ones, the tokenFile read again (exit 1 when it cannot
    // be), the plugin's (exit 1 when it fails, with its stderr; exit 3 when its output is not
    // an ExecCredential of the configured apiVersion). A plugin that has not answered after
    // 120 s, or by `deadline`, or when `interrupted` is set (checked at least every 100 ms), is
    // killed with what it started (exit 1); once `interrupted` is set no plugin is started.
    Result<Credentials> credentials(std::optional<Deadline> deadline = std::nullopt,
                                    const std::atomic<bool>* interrupted = nullptr);
    // Forgets the plugin's cached credentials; true when there is a plugin to run again.
    bool invalidate();
    // How many times the plugin ran (tests).
    int exec_runs() const;

private:
    Result<void> run_plugin(std::optional<Deadline> deadline, const std::atomic<bool>* interrupted);

    KubeConfig config_;
    mutable std::mutex mu_;
    std::optional<Credentials> cached_;
    std::optional<std::chrono::system_clock::time_point> expiry_;
    int runs_ = 0;
};

// Kills (SIGKILL) the process groups of the exec credential plugins running now, with what
// they started. Each plugin runs in a process group of its own, which a terminal's Ctrl-C does
// not reach: a handler of a signal that ends the process calls this first, so that no plugin
// outlives it. Async-signal-safe.
void kill_running_plugins() noexcept;

} // namespace kpkg::kube
