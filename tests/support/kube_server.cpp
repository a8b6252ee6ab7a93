#include "kube_server.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kpkg/io/load.hpp"

namespace kpkg::test {

namespace {

using Clock = std::chrono::steady_clock;

fs::path script_path() {
    const char* root = std::getenv("KPKG_SOURCE_ROOT");
    if (root == nullptr || *root == '\0') return {};
    return fs::path(root) / "tests" / "kube" / "apiserver.py";
}

// A YAML double-quoted scalar (kubeconfig values: paths, tokens).
std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string percent_decode(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            out += static_cast<char>(std::strtol(s.substr(i + 1, 2).c_str(), nullptr, 16));
            i += 2;
        } else if (s[i] == '+') {
            out += ' ';
        } else {
            out += s[i];
        }
    }
    return out;
}

std::string str_field(const io::Node& n, const char* key) {
    const io::Node* v = n.get(key);
    return v != nullptr && v->is_scalar() ? v->text : std::string();
}

std::optional<int> read_port(const fs::path& p) {
    std::ifstream f(p);
    int port = 0;
    if (f >> port && port > 0) return port;
    return std::nullopt;
}

} // namespace

std::string find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= dirs.size()) {
        std::size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        fs::path cand = fs::path(dirs.substr(start, end - start)) / name;
        if (access(cand.c_str(), X_OK) == 0) return cand.string();
        start = end + 1;
    }
    return {};
}

std::optional<TlsFiles> make_tls_files(const fs::path& dir, std::string* error) {
    std::string openssl =
        access("/usr/bin/openssl", X_OK) == 0 ? "/usr/bin/openssl" : find_on_path("openssl");
    if (openssl.empty()) {
        if (error) *error = "openssl is not installed";
        return std::nullopt;
    }
    TlsFiles t{dir / "ca.crt",     dir / "ca.key",     dir / "server.crt",
               dir / "server.key", dir / "client.crt", dir / "client.key"};
    auto run = [&](std::vector<std::string> args) {
        args.insert(args.begin(), openssl);
        ProgramResult r = run_program(args, {}, {}, 60);
        if (r.exit_code != 0 && error) *error = "openssl " + args[1] + " failed: " + r.err;
        return r.exit_code == 0;
    };
    const std::vector<std::string> ec = {"-newkey", "ec", "-pkeyopt",
                                         "ec_paramgen_curve:prime256v1", "-nodes"};
    auto req = [&](const fs::path& key, const fs::path& out, const std::string& subj,
                   std::vector<std::string> extra) {
        std::vector<std::string> a = {"req"};
        a.insert(a.end(), ec.begin(), ec.end());
        a.insert(a.end(), {"-keyout", key.string(), "-out", out.string(), "-subj", subj});
        a.insert(a.end(), extra.begin(), extra.end());
        return run(a);
    };
    auto sign = [&](const fs::path& csr, const fs::path& out, const std::string& ext) {
        fs::path extfile = dir / (out.stem().string() + ".ext");
        std::ofstream(extfile) << ext;
        return run({"x509", "-req", "-in", csr.string(), "-CA", t.ca_cert.string(), "-CAkey",
                    t.ca_key.string(), "-CAcreateserial", "-out", out.string(), "-days", "2",
                    "-extfile", extfile.string()});
    };
    if (!req(t.ca_key, t.ca_cert, "/CN=kpkg-test-ca",
             {"-x509", "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
              "keyUsage=critical,keyCertSign,cRLSign"}))
        return std::nullopt;
    if (!req(t.server_key, dir / "server.csr", "/CN=127.0.0.1", {}) ||
        !sign(dir / "server.csr", t.server_cert,
              "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
              "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"))
        return std::nullopt;
    if (!req(t.client_key, dir / "client.csr", "/O=system:masters/CN=kpkg-test", {}) ||
        !sign(dir / "client.csr", t.client_cert,
              "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
              "extendedKeyUsage=clientAuth\n"))
        return std::nullopt;
    return t;
}

std::string KubeRequest::param(const std::string& name) const {
    std::size_t start = 0;
    while (start <= query.size()) {
        std::size_t end = query.find('&', start);
        if (end == std::string::npos) end = query.size();
        std::string kv = query.substr(start, end - start);
        std::size_t eq = kv.find('=');
        if (percent_decode(kv.substr(0, eq)) == name)
            return eq == std::string::npos ? std::string() : percent_decode(kv.substr(eq + 1));
        start = end + 1;
    }
    return {};
}

std::string KubeServer::unavailable_reason() {
    if (find_on_path("python3").empty()) return missing_tool("python3", "no test API server");
    fs::path s = script_path();
    if (s.empty()) return "KPKG_SOURCE_ROOT is not set: run the tests with meson test";
    std::error_code ec;
    if (!fs::is_regular_file(s, ec)) return s.string() + " is missing";
    return {};
}

KubeServer::KubeServer(KubeServerOptions opts) : opts_(std::move(opts)) {
    if (std::string why = unavailable_reason(); !why.empty()) {
        error_ = why;
        return;
    }
    if (opts_.client_ca) opts_.tls = true;
    if (opts_.tls) {
        tls_ = make_tls_files(dir_.path(), &error_);
        if (!tls_) return;
    }
    fs::path port_file = dir_ / "port";
    fs::path control_file = dir_ / "control-port";
    fs::path log = dir_ / "server.log";
    std::vector<std::string> args = {find_on_path("python3"),
                                     script_path().string(),
                                     "--port-file",
                                     port_file.string(),
                                     "--control-port-file",
                                     control_file.string(),
                                     "--delay-ms",
                                     std::to_string(opts_.delay_ms)};
    if (tls_) {
        args.insert(args.end(), {"--tls-cert", tls_->server_cert.string(), "--tls-key",
                                 tls_->server_key.string()});
        if (opts_.client_ca) args.insert(args.end(), {"--client-ca", tls_->ca_cert.string()});
    }
    for (const auto& t : opts_.tokens)
        args.insert(args.end(), {"--token", t});
    if (!opts_.basic.empty()) args.insert(args.end(), {"--basic", opts_.basic});
    if (opts_.legacy_discovery) args.push_back("--legacy-discovery");
    if (opts_.olm) args.push_back("--olm");
    args.insert(args.end(), opts_.extra_args.begin(), opts_.extra_args.end());

    std::vector<char*> argv;
    for (auto& s : args)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0) {
        error_ = "fork failed";
        return;
    }
    if (pid == 0) {
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int null = open("/dev/null", O_RDONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (null >= 0) dup2(null, 0);
        execv(argv[0], argv.data());
        _exit(127);
    }
    pid_ = pid;
    auto deadline = Clock::now() + std::chrono::seconds(20);
    for (;;) {
        auto p = read_port(port_file);
        auto c = read_port(control_file);
        if (p && c) {
            port_ = *p;
            control_port_ = *c;
            break;
        }
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_ || Clock::now() > deadline) {
            if (Clock::now() > deadline) stop();
            pid_ = -1;
            std::error_code ec;
            error_ = "apiserver.py did not start";
            if (fs::exists(log, ec)) error_ += ": " + read_file(log);
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    KubeUser user;
    if (!opts_.tokens.empty())
        user.token = opts_.tokens.front();
    else if (!opts_.basic.empty())
        user.basic = opts_.basic;
    else if (opts_.client_ca)
        user.client_cert = true;
    kubeconfig_ = write_kubeconfig("kubeconfig", user, opts_.context_namespace);
}

KubeServer::~KubeServer() {
    stop();
}

void KubeServer::stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    auto deadline = Clock::now() + std::chrono::seconds(3);
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
        if (Clock::now() > deadline) {
            kill(pid_, SIGKILL);
            waitpid(pid_, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
}

std::string KubeServer::url() const {
    return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

fs::path KubeServer::write_kubeconfig(const std::string& file, const KubeUser& user,
                                      const std::string& ns) const {
    std::string y = "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n";
    y += "    server: " + quoted(url()) + "\n";
    if (tls_) y += "    certificate-authority: " + quoted(tls_->ca_cert.string()) + "\n";
    y += "users:\n- name: test\n  user:";
    std::string u;
    if (!user.token.empty()) u += "    token: " + quoted(user.token) + "\n";
    if (!user.basic.empty()) {
        auto colon = user.basic.find(':');
        u += "    username: " + quoted(user.basic.substr(0, colon)) + "\n";
        u += "    password: " +
             quoted(colon == std::string::npos ? "" : user.basic.substr(colon + 1)) + "\n";
    }
    if (user.client_cert && tls_) {
        u += "    client-certificate: " + quoted(tls_->client_cert.string()) + "\n";
        u += "    client-key: " + quoted(tls_->client_key.string()) + "\n";
    }
    y += u.empty() ? " {}\n" : "\n" + u;
    y += "contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n";
    if (!ns.empty()) y += "    namespace: " + quoted(ns) + "\n";
    y += "current-context: test\n";
    return dir_.write(file, y);
}

int KubeServer::http(const std::string& method, const std::string& path, const std::string& body,
                     std::string* reply) {
    if (control_port_ <= 0) return 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    timeval tv{};
    tv.tv_sec = 30; // a server that stopped answering fails the call rather than the test run
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(control_port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        close(fd);
        return 0;
    }
    std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                      "Connection: close\r\nContent-Type: application/json\r\n" +
                      "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    std::size_t off = 0;
    while (off < req.size()) {
        ssize_t n = send(fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
        if (n <= 0) {
            close(fd);
            return 0;
        }
        off += static_cast<std::size_t>(n);
    }
    std::string resp;
    char buf[65536];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        resp.append(buf, static_cast<std::size_t>(n));
    }
    close(fd);
    // "HTTP/1.1 200 OK\r\n...\r\n\r\nbody" (the server sends Content-Length and then closes).
    if (resp.rfind("HTTP/1.", 0) != 0 || resp.size() < 12) return 0;
    int status = std::atoi(resp.c_str() + 9);
    auto hdr_end = resp.find("\r\n\r\n");
    if (reply) *reply = hdr_end == std::string::npos ? std::string() : resp.substr(hdr_end + 4);
    return status;
}

bool KubeServer::control(const std::string& json) {
    return http("POST", "/__test/config", json, nullptr) == 200;
}

bool KubeServer::set_status(const std::string& api_version, const std::string& kind,
                            const std::string& ns, const std::string& name,
                            const std::string& status_json) {
    auto str = [](const std::string& v) { return quoted(v); }; // JSON strings as YAML's "..."
    std::string body = "{\"apiVersion\": " + str(api_version) + ", \"kind\": " + str(kind) +
                       ", \"namespace\": " + str(ns) + ", \"name\": " + str(name) +
                       ", \"status\": " + status_json + "}";
    return http("POST", "/__test/status", body, nullptr) == 200;
}

bool KubeServer::reset() {
    return http("POST", "/__test/reset", "", nullptr) == 200;
}

bool KubeServer::clear_requests() {
    return http("POST", "/__test/requests/clear", "", nullptr) == 200;
}

std::size_t KubeServer::write_count() {
    std::size_t n = 0;
    for (const auto& r : requests())
        if ((r.method == "PATCH" || r.method == "DELETE" || r.method == "POST" ||
             r.method == "PUT") &&
            r.param("dryRun").empty())
            ++n;
    return n;
}

std::vector<KubeRequest> KubeServer::requests() {
    std::vector<KubeRequest> out;
    std::string body;
    if (http("GET", "/__test/requests", "", &body) != 200) return out;
    auto docs = io::parse_json(body, "requests");
    if (!docs || docs->empty()) return out;
    const io::Node* items = (*docs)[0].root.get("items");
    if (items == nullptr) return out;
    for (const auto& it : items->items) {
        KubeRequest r;
        r.method = str_field(it, "method");
        r.path = str_field(it, "path");
        r.query = str_field(it, "query");
        r.content_type = str_field(it, "content_type");
        r.user_agent = str_field(it, "user_agent");
        const io::Node* s = it.get("status");
        r.status = s != nullptr ? static_cast<int>(s->as_int().value_or(0)) : 0;
        out.push_back(std::move(r));
    }
    return out;
}

io::Node KubeServer::objects() {
    std::string body;
    if (http("GET", "/__test/objects", "", &body) != 200) return {};
    auto docs = io::parse_json(body, "objects");
    if (!docs || docs->empty()) return {};
    return std::move((*docs)[0].root);
}

std::optional<io::Node> KubeServer::object(const std::string& kind, const std::string& name,
                                           const std::string& ns) {
    io::Node all = objects();
    const io::Node* items = all.get("items");
    if (items == nullptr) return std::nullopt;
    for (const auto& o : items->items) {
        const io::Node* md = o.get("metadata");
        if (md == nullptr || str_field(o, "kind") != kind || str_field(*md, "name") != name)
            continue;
        if (!ns.empty() && str_field(*md, "namespace") != ns) continue;
        return o;
    }
    return std::nullopt;
}

} // namespace kpkg::test
