// kubeconfig loading and merging as client-go's clientcmd does it, and the credentials of a
// user at request time (tokenFile re-read, exec credential plugins run and cached).
#include "kpkg/kube/kubeconfig.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <thread>

#include "kpkg/core/text.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/kube/apply.hpp"

extern char** environ;

namespace kpkg::kube {

namespace fs = std::filesystem;
using text::join;
using text::quote;
using text::shown;
using text::split;
using text::starts_with;
using text::trim;

namespace {

// How long an exec credential plugin may take when no deadline is nearer.
constexpr auto kPluginTimeout = std::chrono::seconds(120);

// Concatenation by appending ("literal" + std::string draws -Wrestrict false positives from
// GCC 12 in release builds).
template <class... A>
std::string cat(const A&... parts) {
    std::string out;
    (out.append(parts), ...);
    return out;
}

// One kubeconfig file, parsed; entries point into `root`.
struct File {
    std::string path;
    fs::path dir;
    std::vector<io::Document> docs;
    const io::Node* root = nullptr;
};

// A named entry (cluster, user, context) and the file that defined it first.
struct Entry {
    const io::Node* body = nullptr; // the "cluster"/"user"/"context" mapping (may be null)
    const File* file = nullptr;
    io::Mark mark;
};

[[noreturn]] void bad(const File& f, const io::Mark& m, std::string msg) {
    throw Exception(Error::invalid(std::move(msg), io::pos_of(f.path, m)));
}

// A scalar field as text ("" when absent or null); another kind is an error.
std::string text_of(const File& f, const io::Node* map, std::string_view key) {
    if (map == nullptr) return {};
    const io::Node* v = map->get(key);
    if (v == nullptr || v->is_null()) return {};
    if (!v->is_scalar()) {
        std::string msg(key);
        msg.append(" must be a string, not a ").append(io::kind_name(v->kind));
        bad(f, v->mark, std::move(msg));
    }
    return v->text;
}

bool bool_of(const File& f, const io::Node* map, std::string_view key) {
    if (map == nullptr) return false;
    const io::Node* v = map->get(key);
    if (v == nullptr || v->is_null()) return false;
    auto b = v->as_bool();
    if (!b) {
        std::string msg(key);
        msg.append(" must be true or false");
        bad(f, v->mark, std::move(msg));
    }
    return *b;
}

const io::Node* map_of(const File& f, const io::Node* map, std::string_view key) {
    if (map == nullptr) return nullptr;
    const io::Node* v = map->get(key);
    if (v == nullptr || v->is_null()) return nullptr;
    if (!v->is_map()) {
        std::string msg(key);
        msg.append(" must be a mapping, not a ").append(io::kind_name(v->kind));
        bad(f, v->mark, std::move(msg));
    }
    return v;
}

const io::Node* seq_of(const File& f, const io::Node* map, std::string_view key) {
    if (map == nullptr) return nullptr;
    const io::Node* v = map->get(key);
    if (v == nullptr || v->is_null()) return nullptr;
    if (!v->is_seq()) {
        std::string msg(key);
        msg.append(" must be a list, not a ").append(io::kind_name(v->kind));
        bad(f, v->mark, std::move(msg));
    }
    return v;
}

// base64 *-data fields.
std::string decoded(const File& f, const io::Node* map, std::string_view key) {
    std::string text = text_of(f, map, key);
    if (text.empty()) return {};
    std::string out;
    std::size_t at = 0;
    if (!io::go::decode_base64(text, &out, at)) {
        std::string msg(key);
        msg.append(" is not valid base64 (at byte ").append(std::to_string(at)).append(")");
        bad(f, map->get(key)->mark, std::move(msg));
    }
    return out;
}

// Paths in a kubeconfig are relative to the directory of the file that holds them.
std::string resolve(const File& f, const std::string& p) {
    if (p.empty() || fs::path(p).is_absolute()) return p;
    return (f.dir / p).lexically_normal().string();
}

// Adds the entries of list `key` ("clusters") of a file under their names; the first file to
// define a name wins.
void collect(const File& f, const char* key, const char* body_key,
             std::map<std::string, Entry>& into, std::vector<std::string>& order) {
    const io::Node* list = seq_of(f, f.root, key);
    if (list == nullptr) return;
    for (const auto& item : list->items) {
        if (!item.is_map()) {
            std::string msg("each entry of ");
            msg.append(key).append(" must be a mapping with a name");
            bad(f, item.mark, std::move(msg));
        }
        std::string name = text_of(f, &item, "name");
        if (name.empty()) {
            std::string msg("an entry of ");
            msg.append(key).append(" has no name");
            bad(f, item.mark, std::move(msg));
        }
        const io::Node* body = map_of(f, &item, body_key);
        if (into.count(name) != 0) continue;
        into.emplace(name, Entry{body, &f, item.mark});
        order.push_back(std::move(name));
    }
}

// "contexts defined: a, b" or "no contexts are defined".
std::string names_of(const char* what, const std::vector<std::string>& names) {
    if (names.empty()) return cat("no ", what, " are defined");
    return cat(what, " defined: ", join(names, ", "));
}

std::string files_of(const std::vector<std::unique_ptr<File>>& files) {
    std::vector<std::string> paths;
    for (const auto& f : files)
        paths.push_back(f->path);
    return join(paths, ", ");
}

Result<std::string> read_material(const std::string& path, const std::string& what,
                                  const std::string& owner) {
    auto text = io::read_file(path);
    if (!text) {
        Error e = std::move(text).error();
        e.code = ExitCode::error;
        std::string msg = what;
        msg.append(" of ").append(owner).append(": ").append(e.message);
        e.message = std::move(msg);
        return fail(std::move(e));
    }
    return std::move(*text);
}

// Which files to read, in merge order; a file named explicitly must exist.
Result<std::vector<std::string>> pick_files(const KubeconfigSource& src) {
    std::vector<std::string> out;
    if (!src.path.empty()) {
        out.push_back(src.path);
        return out;
    }
    std::optional<std::string> env = src.kubeconfig_env;
    if (!env) {
        if (const char* e = std::getenv("KUBECONFIG")) env = std::string(e);
    }
    if (env && !env->empty()) {
        for (auto part : split(*env, ':')) {
            if (part.empty()) continue;
            std::string p(part);
            if (std::find(out.begin(), out.end(), p) != out.end()) continue;
            std::error_code ec;
            if (!fs::exists(p, ec)) continue; // missing files in the list are skipped
            out.push_back(std::move(p));
        }
        if (out.empty()) {
            std::string msg = "none of the files in KUBECONFIG exists (";
            msg.append(*env).append(")");
            return fail(Error::invalid(std::move(msg)));
        }
        return out;
    }
    std::optional<std::string> home = src.home;
    if (!home) {
        if (const char* h = std::getenv("HOME")) home = std::string(h);
    }
    if (!home || home->empty())
        return fail(Error::invalid("no kubeconfig: --kubeconfig and KUBECONFIG are not set and "
                                   "HOME is unknown"));
    std::string p = (fs::path(*home) / ".kube" / "config").string();
    std::error_code ec;
    if (!fs::exists(p, ec)) {
        std::string msg = "no kubeconfig: --kubeconfig and KUBECONFIG are not set and ";
        msg.append(p).append(" does not exist");
        return fail(Error::invalid(std::move(msg)));
    }
    out.push_back(std::move(p));
    return out;
}

ExecConfig read_exec(const File& f, const io::Node* ex, const std::string& user) {
    ExecConfig e;
    e.api_version = text_of(f, ex, "apiVersion");
    e.command = text_of(f, ex, "command");
    e.interactive_mode = text_of(f, ex, "interactiveMode");
    e.install_hint = text_of(f, ex, "installHint");
    e.provide_cluster_info = bool_of(f, ex, "provideClusterInfo");
    const std::string who = cat("exec plugin of user ", quote(user));
    if (e.command.empty()) bad(f, ex->mark, who + ": command is not set");
    if (e.api_version != "client.authentication.k8s.io/v1" &&
        e.api_version != "client.authentication.k8s.io/v1beta1") {
        std::string msg = who;
        if (e.api_version.empty())
            msg.append(": apiVersion is not set");
        else
            msg.append(": apiVersion ").append(quote(e.api_version)).append(" is not supported");
        msg.append(" (client.authentication.k8s.io/v1 or v1beta1)");
        bad(f, ex->mark, std::move(msg));
    }
    if (e.interactive_mode.empty()) {
        if (e.api_version == "client.authentication.k8s.io/v1")
            bad(f, ex->mark, who + ": interactiveMode must be set for " + e.api_version);
        e.interactive_mode = "IfAvailable";
    } else if (e.interactive_mode == "Always") {
        bad(f, ex->mark,
            who + ": interactiveMode Always needs a terminal, and kpkg runs credential plugins "
                  "without one (use Never or IfAvailable)");
    } else if (e.interactive_mode != "Never" && e.interactive_mode != "IfAvailable") {
        bad(f, ex->mark,
            who + ": interactiveMode " + quote(e.interactive_mode) +
                " is not one of Never, IfAvailable, Always");
    }
    // Only a command with a path separator is relative to the kubeconfig; a bare name is
    // looked up in PATH.
    if (e.command.find('/') != std::string::npos) e.command = resolve(f, e.command);
    if (const io::Node* args = seq_of(f, ex, "args")) {
        for (const auto& a : args->items) {
            if (!a.is_scalar()) bad(f, a.mark, who + ": args must be strings");
            e.args.push_back(a.text);
        }
    }
    if (const io::Node* env = seq_of(f, ex, "env")) {
        for (const auto& v : env->items) {
            if (!v.is_map()) bad(f, v.mark, who + ": env entries must be {name, value}");
            std::string name = text_of(f, &v, "name");
            if (name.empty()) bad(f, v.mark, who + ": an env entry has no name");
            e.env.emplace_back(std::move(name), text_of(f, &v, "value"));
        }
    }
    return e;
}

// A server given as host:port gets https:// when TLS is configured (a CA, a client
// certificate, insecure-skip-tls-verify), else http://, as client-go does.
void default_scheme(KubeConfig& kc) {
    if (kc.cluster.server.find("://") != std::string::npos) return;
    const bool tls =
        !kc.cluster.ca_pem.empty() || !kc.user.client_cert_pem.empty() || kc.cluster.insecure;
    kc.cluster.server.insert(0, tls ? "https://" : "http://");
}

KubeConfig resolve_all(std::vector<std::unique_ptr<File>>& files, const std::string& want) {
    std::map<std::string, Entry> clusters, users, contexts;
    std::vector<std::string> cluster_names, user_names, context_names;
    std::string current;
    for (const auto& fp : files) {
        const File& f = *fp;
        if (f.root == nullptr) continue;
        if (!f.root->is_map())
            bad(f, f.root->mark, "a kubeconfig must be a mapping (kind: Config)");
        collect(f, "clusters", "cluster", clusters, cluster_names);
        collect(f, "users", "user", users, user_names);
        collect(f, "contexts", "context", contexts, context_names);
        if (current.empty()) current = text_of(f, f.root, "current-context");
    }
    KubeConfig kc;
    for (const auto& f : files)
        kc.files.push_back(f->path);
    const std::string where = files_of(files);
    std::string name = want.empty() ? current : want;
    if (name.empty()) {
        std::string msg = "no context: current-context is not set in ";
        msg.append(where).append(" and --context is not given (");
        msg.append(names_of("contexts", context_names)).append(")");
        throw Exception(Error::invalid(std::move(msg)));
    }
    auto ctx = contexts.find(name);
    if (ctx == contexts.end()) {
        std::string msg = "context ";
        msg.append(quote(name)).append(" is not defined in ").append(where);
        msg.append(" (").append(names_of("contexts", context_names)).append(")");
        throw Exception(Error::invalid(std::move(msg)));
    }
    kc.context = name;
    const File& cf = *ctx->second.file;
    const io::Node* c = ctx->second.body;
    const std::string cluster_name = text_of(cf, c, "cluster");
    const std::string user_name = text_of(cf, c, "user");
    kc.namespace_ = text_of(cf, c, "namespace");
    if (cluster_name.empty())
        bad(cf, ctx->second.mark, cat("context ", quote(name), " names no cluster"));
    auto cl = clusters.find(cluster_name);
    if (cl == clusters.end()) {
        std::string msg = "cluster ";
        msg.append(quote(cluster_name)).append(" of context ").append(quote(name));
        msg.append(" is not defined in ").append(where);
        msg.append(" (").append(names_of("clusters", cluster_names)).append(")");
        throw Exception(Error::invalid(std::move(msg)));
    }
    {
        const File& f = *cl->second.file;
        const io::Node* b = cl->second.body;
        ClusterConfig& k = kc.cluster;
        k.name = cluster_name;
        k.server = text_of(f, b, "server");
        if (k.server.empty())
            bad(f, cl->second.mark, cat("cluster ", quote(cluster_name), " has no server"));
        if (k.server.find("://") != std::string::npos && !starts_with(k.server, "https://") &&
            !starts_with(k.server, "http://")) {
            bad(f, b->get("server")->mark,
                cat("server ", quote(k.server), " of cluster ", quote(cluster_name),
                    " is not an http:// or https:// URL"));
        }
        while (k.server.size() > 8 && k.server.back() == '/')
            k.server.pop_back();
        k.insecure = bool_of(f, b, "insecure-skip-tls-verify");
        k.tls_server_name = text_of(f, b, "tls-server-name");
        k.proxy_url = text_of(f, b, "proxy-url");
        k.ca_pem = decoded(f, b, "certificate-authority-data");
        if (k.ca_pem.empty()) {
            k.certificate_authority = resolve(f, text_of(f, b, "certificate-authority"));
            if (!k.certificate_authority.empty()) {
                k.ca_pem = read_material(k.certificate_authority, "certificate-authority",
                                         cat("cluster ", quote(cluster_name)))
                               .take();
            }
        }
    }
    if (kc.cluster.insecure && !kc.cluster.ca_pem.empty()) {
        bad(*cl->second.file, cl->second.mark,
            cat("cluster ", quote(cluster_name),
                " has both insecure-skip-tls-verify and a certificate authority; give one"));
    }
    if (user_name.empty()) {
        // client-go allows a context without a user: no credentials.
        kc.user.name = "";
        default_scheme(kc);
        return kc;
    }
    auto us = users.find(user_name);
    if (us == users.end()) {
        std::string msg = "user ";
        msg.append(quote(user_name)).append(" of context ").append(quote(name));
        msg.append(" is not defined in ").append(where);
        msg.append(" (").append(names_of("users", user_names)).append(")");
        throw Exception(Error::invalid(std::move(msg)));
    }
    const File& f = *us->second.file;
    const io::Node* b = us->second.body;
    UserConfig& u = kc.user;
    u.name = user_name;
    const std::string who = cat("user ", quote(user_name));
    if (map_of(f, b, "auth-provider") != nullptr) {
        bad(f, b->get("auth-provider")->mark,
            who + ": auth-provider is not supported (it was removed from kubectl in 1.26; use an "
                  "exec credential plugin such as kubelogin or gke-gcloud-auth-plugin)");
    }
    u.token = text_of(f, b, "token");
    u.token_file = resolve(f, text_of(f, b, "tokenFile"));
    u.username = text_of(f, b, "username");
    u.password = text_of(f, b, "password");
    if ((!u.token.empty() || !u.token_file.empty()) && (!u.username.empty() || !u.password.empty()))
        bad(f, us->second.mark,
            who + " has both a token and a username/password; only one authentication method "
                  "is allowed");
    if (const io::Node* ex = map_of(f, b, "exec")) u.exec = read_exec(f, ex, user_name);
    u.client_cert_pem = decoded(f, b, "client-certificate-data");
    u.client_key_pem = decoded(f, b, "client-key-data");
    if (u.client_cert_pem.empty()) {
        u.client_certificate = resolve(f, text_of(f, b, "client-certificate"));
        if (!u.client_certificate.empty())
            u.client_cert_pem =
                read_material(u.client_certificate, "client-certificate", who).take();
    }
    if (u.client_key_pem.empty()) {
        u.client_key = resolve(f, text_of(f, b, "client-key"));
        if (!u.client_key.empty())
            u.client_key_pem = read_material(u.client_key, "client-key", who).take();
    }
    if (!u.client_cert_pem.empty() && u.client_key_pem.empty())
        bad(f, us->second.mark, who + " has a client certificate but no client-key(-data)");
    if (u.client_cert_pem.empty() && !u.client_key_pem.empty())
        bad(f, us->second.mark, who + " has a client key but no client-certificate(-data)");
    default_scheme(kc);
    return kc;
}

// --- exec credential plugins -------------------------------------------------------------------

// The process groups of the plugins running now (0: a free slot), for kill_running_plugins,
// which a signal handler calls: lock-free atomics only. A plugin started while all are taken
// (more than this many at once) is not registered.
constexpr std::size_t kMaxGroups = 16;
std::atomic<pid_t> g_groups[kMaxGroups];
static_assert(std::atomic<pid_t>::is_always_lock_free);

void register_group(pid_t pgid) {
    for (auto& slot : g_groups) {
        pid_t empty = 0;
        if (slot.compare_exchange_strong(empty, pgid)) return;
    }
}

void unregister_group(pid_t pgid) {
    for (auto& slot : g_groups) {
        pid_t mine = pgid;
        if (slot.compare_exchange_strong(mine, 0)) return;
    }
}

struct ProcessOutput {
    int status = 0;
    bool timed_out = false;
    bool interrupted = false;
    std::string out;
    std::string err;
};

// Runs argv in a process group of its own, stdin from /dev/null; past `deadline` the group is
// killed (what the program started too) and timed_out is set; when `interrupted` is set
// (checked every 100 ms at most), likewise and interrupted is set.
Result<ProcessOutput> run_process(const std::vector<std::string>& argv,
                                  const std::vector<std::string>& envp,
                                  std::chrono::steady_clock::time_point deadline,
                                  const std::atomic<bool>* interrupted) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return fail(Error::io(cat("pipe: ", strerror(errno))));
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(out[0]);
        ::close(out[1]);
        return fail(Error::io(cat("pipe: ", strerror(errno))));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    std::vector<char*> av, ev;
    for (const auto& a : argv)
        av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    for (const auto& e : envp)
        ev.push_back(const_cast<char*>(e.c_str()));
    ev.push_back(nullptr);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, argv[0].c_str(), &fa, &attr, av.data(), ev.data());
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    ::close(err[1]);
    if (rc != 0) {
        ::close(out[0]);
        ::close(err[0]);
        return fail(Error::io(strerror(rc)));
    }
    register_group(pid);
    ProcessOutput po;
    // True (the group killed) when the time is up or the run is interrupted; else how long to
    // wait before asking again.
    const auto stop = [&](std::chrono::milliseconds& slice) {
        if (interrupted && interrupted->load()) {
            po.interrupted = true;
        } else {
            slice = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (slice.count() > 0) {
                if (interrupted) slice = std::min(slice, std::chrono::milliseconds(100));
                return false;
            }
            po.timed_out = true;
        }
        ::kill(-pid, SIGKILL);
        return true;
    };
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* sinks[2] = {&po.out, &po.err};
    int open_fds = 2;
    char buf[8192];
    bool killed = false;
    while (open_fds > 0) {
        std::chrono::milliseconds slice{0};
        if ((killed = stop(slice))) break;
        const int pr = ::poll(fds, 2, static_cast<int>(slice.count()));
        if (pr <= 0) continue; // EINTR, or the time to look again
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
                continue;
            }
            if (sinks[i]->size() < (std::size_t{16} << 20))
                sinks[i]->append(buf, static_cast<std::size_t>(n));
        }
    }
    for (auto& p : fds)
        if (p.fd >= 0) ::close(p.fd);
    // Its end (a plugin may close its output and go on), within the same bounds; it is reaped
    // only once unregistered, before its pid can be used again.
    for (;;) {
        siginfo_t info{};
        const int options = WEXITED | WNOWAIT | (killed ? 0 : WNOHANG);
        const int w = ::waitid(P_PID, static_cast<id_t>(pid), &info, options);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 || info.si_pid == pid) break;
        std::chrono::milliseconds slice{0};
        if ((killed = stop(slice))) continue;
        std::this_thread::sleep_for(std::min(slice, std::chrono::milliseconds(10)));
    }
    unregister_group(pid);
    while (::waitpid(pid, &po.status, 0) < 0 && errno == EINTR) {
    }
    return po;
}

// RFC 3339 ("2026-11-26T10:00:00Z", fractions and offsets allowed).
std::optional<std::chrono::system_clock::time_point> parse_time(const std::string& s) {
    std::tm tm{};
    const char* p = ::strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    if (p == nullptr) return std::nullopt;
    if (*p == '.')
        for (++p; *p >= '0' && *p <= '9'; ++p) {
        }
    long offset = 0;
    if (*p == 'Z' || *p == 'z') {
        ++p;
    } else if (*p == '+' || *p == '-') {
        const int sign = *p == '-' ? -1 : 1;
        int hh = 0, mm = 0;
        if (std::sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2) return std::nullopt;
        offset = sign * (hh * 3600L + mm * 60L);
        p += 6;
    } else {
        return std::nullopt;
    }
    if (*p != '\0') return std::nullopt;
    const time_t t = ::timegm(&tm) - offset;
    return std::chrono::system_clock::from_time_t(t);
}

std::string exec_info(const KubeConfig& kc) {
    const ExecConfig& e = *kc.user.exec;
    io::Node info = io::Node::map();
    info.set("kind", io::Node::string("ExecCredential"));
    info.set("apiVersion", io::Node::string(e.api_version));
    io::Node spec = io::Node::map();
    if (e.provide_cluster_info) {
        io::Node cluster = io::Node::map();
        cluster.set("server", io::Node::string(kc.cluster.server));
        if (!kc.cluster.tls_server_name.empty())
            cluster.set("tls-server-name", io::Node::string(kc.cluster.tls_server_name));
        if (kc.cluster.insecure) cluster.set("insecure-skip-tls-verify", io::Node::boolean(true));
        if (!kc.cluster.ca_pem.empty()) {
            std::string b64;
            io::go::append_base64(b64, kc.cluster.ca_pem);
            cluster.set("certificate-authority-data", io::Node::string(std::move(b64)));
        }
        if (!kc.cluster.proxy_url.empty())
            cluster.set("proxy-url", io::Node::string(kc.cluster.proxy_url));
        spec.set("cluster", std::move(cluster));
    }
    spec.set("interactive", io::Node::boolean(false));
    info.set("spec", std::move(spec));
    io::JsonStyle style;
    style.indent = 0;
    std::string json = io::to_json(info, style);
    while (!json.empty() && json.back() == '\n')
        json.pop_back();
    return json;
}

} // namespace

Result<KubeConfig> load_kubeconfig(const KubeconfigSource& source, const std::string& context) {
    auto paths = pick_files(source);
    if (!paths) return fail(std::move(paths).error());
    std::vector<std::unique_ptr<File>> files;
    for (const auto& p : *paths) {
        auto text = io::read_file(p);
        if (!text) {
            Error e = std::move(text).error();
            e.code = ExitCode::error;
            return fail(std::move(e));
        }
        auto docs = io::parse_yaml(*text, p);
        if (!docs) {
            Error e = std::move(docs).error();
            e.code = ExitCode::invalid;
            return fail(std::move(e));
        }
        auto f = std::make_unique<File>();
        f->path = p;
        f->dir = fs::path(p).parent_path();
        f->docs = std::move(*docs);
        for (const auto& d : f->docs)
            if (!d.root.is_null()) {
                if (f->root != nullptr)
                    return fail(Error::invalid("a kubeconfig holds one YAML document",
                                               io::pos_of(p, d.start)));
                f->root = &d.root;
            }
        files.push_back(std::move(f));
    }
    return catch_error([&] { return resolve_all(files, context); });
}

void kill_running_plugins() noexcept {
    for (auto& slot : g_groups)
        if (const pid_t pgid = slot.load(); pgid > 0) ::kill(-pgid, SIGKILL);
}

Authenticator::Authenticator(KubeConfig config) : config_(std::move(config)) {}
Authenticator::~Authenticator() = default;

int Authenticator::exec_runs() const {
    std::lock_guard<std::mutex> lock(mu_);
    return runs_;
}

bool Authenticator::invalidate() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!config_.user.exec) return false;
    cached_.reset();
    expiry_.reset();
    return true;
}

Result<Credentials> Authenticator::credentials(std::optional<Deadline> deadline,
                                               const std::atomic<bool>* interrupted) {
    const UserConfig& u = config_.user;
    Credentials c;
    c.client_cert_pem = u.client_cert_pem;
    c.client_key_pem = u.client_key_pem;
    c.username = u.username;
    c.password = u.password;
    c.bearer_token = u.token;
    if (c.bearer_token.empty() && !u.token_file.empty()) {
        // Read at each use, so that a rotated token (a projected service account token, say)
        // is picked up.
        auto text = io::read_file(u.token_file);
        if (!text) {
            Error e = std::move(text).error();
            e.code = ExitCode::error;
            std::string msg = "tokenFile of user ";
            msg.append(quote(u.name)).append(": ").append(e.message);
            e.message = std::move(msg);
            return fail(std::move(e));
        }
        c.bearer_token = std::string(trim(*text));
    }
    if (!u.exec) return c;
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ && expiry_ && std::chrono::system_clock::now() >= *expiry_) cached_.reset();
    if (!cached_) {
        auto r = run_plugin(deadline, interrupted);
        if (!r) return fail(std::move(r).error());
    }
    if (!cached_->bearer_token.empty()) c.bearer_token = cached_->bearer_token;
    if (!cached_->client_cert_pem.empty()) {
        c.client_cert_pem = cached_->client_cert_pem;
        c.client_key_pem = cached_->client_key_pem;
    }
    return c;
}

// Runs the plugin (mu_ held) and caches what it answered.
Result<void> Authenticator::run_plugin(std::optional<Deadline> deadline,
                                       const std::atomic<bool>* interrupted) {
    const ExecConfig& e = *config_.user.exec;
    const std::string who =
        cat("exec credential plugin ", quote(e.command), " of user ", quote(config_.user.name));
    const auto start = std::chrono::steady_clock::now();
    auto until = start + kPluginTimeout;
    const bool cut = deadline && deadline->at < until;
    if (cut) until = deadline->at;
    const auto limit_passed = [&] {
        return fail(Error::io(cat(who, " was not run to its end: the time limit of ",
                                  format_duration(deadline->limit), " passed")));
    };
    const auto stopped = [&] { return fail(Error::io(cat("interrupted: ", who, " was stopped"))); };
    if (cut && until <= start) return limit_passed();
    if (interrupted && interrupted->load()) return stopped();
    std::vector<std::string> argv{e.command};
    argv.insert(argv.end(), e.args.begin(), e.args.end());
    std::map<std::string, std::string> env;
    for (char** p = environ; p != nullptr && *p != nullptr; ++p) {
        std::string_view kv(*p);
        const auto eq = kv.find('=');
        if (eq == std::string_view::npos) continue;
        env[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
    }
    env["KUBERNETES_EXEC_INFO"] = exec_info(config_);
    for (const auto& [k, v] : e.env)
        env[k] = v;
    std::vector<std::string> envp;
    for (const auto& [k, v] : env)
        envp.push_back(k + "=" + v);
    ++runs_;
    auto po = run_process(argv, envp, until, interrupted);
    if (!po) {
        Error err = Error::io(who + " cannot be run: " + po.error().message);
        if (!e.install_hint.empty()) err.note(e.install_hint);
        return fail(std::move(err));
    }
    if (po->interrupted) return stopped();
    if (po->timed_out) {
        if (cut) return limit_passed();
        return fail(Error::io(cat(who, " did not answer within ",
                                  std::to_string(kPluginTimeout.count()), " seconds")));
    }
    if (!WIFEXITED(po->status) || WEXITSTATUS(po->status) != 0) {
        std::string msg = who;
        if (WIFEXITED(po->status))
            msg.append(" failed (exit status ").append(std::to_string(WEXITSTATUS(po->status)));
        else
            msg.append(" failed (killed by signal ").append(std::to_string(WTERMSIG(po->status)));
        msg.append(")");
        Error err = Error::io(std::move(msg));
        std::string_view stderr_text = trim(po->err);
        if (!stderr_text.empty()) err.note(shown(stderr_text, 1000));
        if (WIFEXITED(po->status) && WEXITSTATUS(po->status) == 127 && !e.install_hint.empty())
            err.note(e.install_hint);
        return fail(std::move(err));
    }
    auto docs = io::parse_json(po->out, e.command);
    const auto invalid = [&](const std::string& why) {
        return fail(Error::invalid(who + " answered no usable ExecCredential: " + why));
    };
    if (!docs) return invalid(docs.error().str());
    if (docs->size() != 1 || !(*docs)[0].root.is_map()) return invalid("not one JSON object");
    const io::Node& root = (*docs)[0].root;
    const io::Node* kind = root.get("kind");
    if (kind == nullptr || kind->text != "ExecCredential")
        return invalid("kind is not ExecCredential");
    const io::Node* api = root.get("apiVersion");
    if (api == nullptr || api->text != e.api_version) {
        return invalid(cat("apiVersion ", quote(api == nullptr ? "" : api->text),
                           " is not the configured ", e.api_version));
    }
    const io::Node* status = root.get("status");
    if (status == nullptr || !status->is_map()) return invalid("it has no status");
    const auto field = [&](std::string_view k) -> std::string {
        const io::Node* v = status->get(k);
        return v != nullptr && v->is_scalar() ? v->text : std::string();
    };
    Credentials c;
    c.bearer_token = field("token");
    c.client_cert_pem = field("clientCertificateData");
    c.client_key_pem = field("clientKeyData");
    if (c.client_cert_pem.empty() != c.client_key_pem.empty())
        return invalid("clientCertificateData and clientKeyData come together");
    if (c.bearer_token.empty() && c.client_cert_pem.empty())
        return invalid("status has neither a token nor clientCertificateData");
    std::optional<std::chrono::system_clock::time_point> expiry;
    const std::string exp = field("expirationTimestamp");
    if (!exp.empty()) {
        expiry = parse_time(exp);
        if (!expiry)
            return invalid(cat("expirationTimestamp ", quote(exp), " is not an RFC 3339 time"));
    }
    cached_ = std::move(c);
    expiry_ = expiry;
    return {};
}

} // namespace kpkg::kube
