#include "registry_fixture.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "kpkg/core/digest.hpp"
#include "kpkg/oci/media_types.hpp"

extern char** environ;

namespace kpkg::test {

namespace {

bool send_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

std::string lower(std::string s) {
    for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

const char* reason(int status) {
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 307:
        return "Temporary Redirect";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Status";
    }
}

} // namespace

std::string HttpReq::query(const std::string& name) const {
    const auto q = target.find('?');
    if (q == std::string::npos) return {};
    std::string_view rest = std::string_view(target).substr(q + 1);
    while (!rest.empty()) {
        const auto amp = rest.find('&');
        std::string_view kv = rest.substr(0, amp);
        const auto eq = kv.find('=');
        if (kv.substr(0, eq) == name)
            return eq == std::string_view::npos ? std::string() : std::string(kv.substr(eq + 1));
        if (amp == std::string_view::npos) break;
        rest.remove_prefix(amp + 1);
    }
    return {};
}

HttpReply& HttpReply::with(std::string name, std::string value) {
    for (auto& [n, v] : headers)
        if (lower(n) == lower(name)) {
            v = std::move(value);
            return *this;
        }
    headers.emplace_back(std::move(name), std::move(value));
    return *this;
}

HttpReply HttpReply::text(int status, std::string body) {
    HttpReply r;
    r.status = status;
    r.body = std::move(body);
    r.headers.emplace_back("Content-Type", "text/plain");
    return r;
}

HttpReply HttpReply::json(int status, std::string body) {
    HttpReply r;
    r.status = status;
    r.body = std::move(body);
    r.headers.emplace_back("Content-Type", "application/json");
    return r;
}

FakeServer::FakeServer(Handler h) : handler_(std::move(h)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 64) != 0)
        throw std::runtime_error(std::string("fake server: ") + std::strerror(errno));
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
}

FakeServer::~FakeServer() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
}

std::vector<HttpReq> FakeServer::requests() const {
    std::lock_guard<std::mutex> g(mu_);
    return requests_;
}

std::size_t FakeServer::count(const std::string& method, const std::string& prefix) const {
    std::lock_guard<std::mutex> g(mu_);
    std::size_t n = 0;
    for (const auto& r : requests_)
        if (r.method == method && r.path.rfind(prefix, 0) == 0) ++n;
    return n;
}

void FakeServer::loop() {
    while (!stop_) {
        pollfd p{listen_fd_, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        serve(fd);
        ::close(fd);
    }
}

bool FakeServer::wait_unless_gone(int fd, int ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
        if (stop_) return false;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              until - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) return true;
        pollfd p{fd, POLLIN | POLLRDHUP, 0};
        const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 50)));
        if (r > 0) {
            // The client sent nothing more after its request: readable means it hung up.
            char b;
            if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0 ||
                ::recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) <= 0)
                return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(50)); // more bytes: not a hang-up
        }
    }
}

void FakeServer::serve(int fd) {
    std::string buf;
    char tmp[65536];
    auto fill = [&]() {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 5000) <= 0) return false;
        const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
        if (n <= 0) return false;
        buf.append(tmp, static_cast<std::size_t>(n));
        return true;
    };
    std::size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos)
        if (!fill()) return;
    HttpReq req;
    std::string_view head(buf.data(), end);
    auto line_end = head.find("\r\n");
    std::string_view first = head.substr(0, line_end);
    const auto sp1 = first.find(' ');
    const auto sp2 = first.find(' ', sp1 + 1);
    req.method = std::string(first.substr(0, sp1));
    req.target = std::string(first.substr(sp1 + 1, sp2 - sp1 - 1));
    req.path = req.target.substr(0, req.target.find('?'));
    std::size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
        auto e = head.find("\r\n", pos);
        if (e == std::string_view::npos) e = head.size();
        std::string_view l = head.substr(pos, e - pos);
        const auto colon = l.find(':');
        if (colon != std::string_view::npos) {
            std::string_view v = l.substr(colon + 1);
            while (!v.empty() && v.front() == ' ')
                v.remove_prefix(1);
            req.headers[lower(std::string(l.substr(0, colon)))] = std::string(v);
        }
        pos = e + 2;
    }
    const std::size_t body_len =
        req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
    const bool early = answer_before_body && answer_before_body(req);
    while (!early && buf.size() < end + 4 + body_len)
        if (!fill()) return;
    if (!early) req.body = buf.substr(end + 4, body_len);
    {
        std::lock_guard<std::mutex> g(mu_);
        requests_.push_back(req);
    }
    HttpReply rep = handler_(req);
    std::string out = "HTTP/1.1 " + std::to_string(rep.status) + " " + reason(rep.status) + "\r\n";
    for (const auto& [n, v] : rep.headers)
        out += n + ": " + v + "\r\n";
    out += "Content-Length: " + std::to_string(rep.body.size()) + "\r\n";
    out += "Connection: close\r\n\r\n";
    if (req.method != "HEAD" && rep.trickle_bytes > 0 && rep.cut_after < 0) {
        if (!send_all(fd, out.data(), out.size())) return;
        const auto step = static_cast<std::size_t>(rep.trickle_bytes);
        for (std::size_t at = 0; at < rep.body.size(); at += step) {
            const std::string part = rep.body.substr(at, step);
            if (!send_all(fd, part.data(), part.size())) return;
            if (at + step < rep.body.size() && !wait_unless_gone(fd, rep.trickle_ms)) return;
        }
        ::shutdown(fd, SHUT_WR);
        return;
    }
    if (req.method != "HEAD" && rep.stall_after >= 0 && rep.cut_after < 0) {
        const auto at = std::min(rep.body.size(), static_cast<std::size_t>(rep.stall_after));
        out += rep.body.substr(0, at);
        send_all(fd, out.data(), out.size());
        if (!wait_unless_gone(fd, rep.stall_ms)) return;
        // The client may have given up meanwhile: the rest is sent to whoever still listens.
        const std::string rest = rep.body.substr(at);
        ::send(fd, rest.data(), rest.size(), MSG_NOSIGNAL);
        ::shutdown(fd, SHUT_WR);
        return;
    }
    if (req.method != "HEAD") {
        if (rep.cut_after >= 0)
            out += rep.body.substr(0, static_cast<std::size_t>(rep.cut_after));
        else
            out += rep.body;
    }
    send_all(fd, out.data(), out.size());
    if (rep.cut_after >= 0 || early) {
        // An abrupt end: a reset rather than an orderly close.
        linger lg{1, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    } else {
        ::shutdown(fd, SHUT_WR);
    }
}

// ------------------------------------------------------------------------------------------------

oci::Reference ref_of(const std::string& s) {
    return oci::parse(s).take();
}

oci::RegistryOptions quick_options(const TempDir& d, int retries) {
    oci::RegistryOptions o;
    o.retries = retries;
    o.backoff = std::chrono::milliseconds(10);
    o.connect_timeout = std::chrono::milliseconds(2000);
    o.auth_files = {(d / "no-auth.json").string()};
    return o;
}

int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

bool http_answers(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    bool ok = false;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        const std::string req = "GET /v2/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
        if (send_all(fd, req.data(), req.size())) {
            pollfd p{fd, POLLIN, 0};
            char b[16] = {};
            if (::poll(&p, 1, 1000) > 0 && ::recv(fd, b, sizeof b - 1, 0) > 5)
                ok = std::string(b).rfind("HTTP/", 0) == 0;
        }
    }
    ::close(fd);
    return ok;
}

int run_command(const std::string& cmd, std::string* out) {
    FILE* f = ::popen(cmd.c_str(), "r");
    if (f == nullptr) return -1;
    char b[4096];
    std::size_t n;
    while ((n = std::fread(b, 1, sizeof b, f)) > 0)
        if (out != nullptr) out->append(b, n);
    const int st = ::pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string RegistryProcess::binary() {
    if (::access("/usr/bin/docker-registry", X_OK) == 0) return "/usr/bin/docker-registry";
    std::string out;
    if (run_command("command -v docker-registry 2>/dev/null", &out) == 0 && !out.empty()) {
        while (!out.empty() && out.back() == '\n')
            out.pop_back();
        return out;
    }
    return {};
}

RegistryProcess::RegistryProcess(const std::string& user, const std::string& password) {
    const std::string bin = binary();
    if (bin.empty()) {
        error_ = "docker-registry is not installed";
        return;
    }
    std::string auth;
    if (!user.empty()) {
        std::string line;
        if (run_command("htpasswd -Bbn '" + user + "' '" + password + "' 2>/dev/null", &line) !=
                0 ||
            line.empty()) {
            error_ = "htpasswd (apache2-utils) is not installed";
            return;
        }
        dir_.write("htpasswd", line);
        auth =
            "auth:\n  htpasswd:\n    realm: kpkg-test\n    path: " + (dir_ / "htpasswd").string() +
            "\n";
    }
    for (int attempt = 0; attempt < 3 && pid_ < 0; ++attempt) {
        port_ = free_port();
        const std::string config = "version: 0.1\n"
                                   "log:\n  level: error\n  accesslog:\n    disabled: true\n"
                                   "storage:\n  filesystem:\n    rootdirectory: " +
                                   (dir_ / "data").string() +
                                   "\n  delete:\n    enabled: true\n"
                                   "http:\n  addr: 127.0.0.1:" +
                                   std::to_string(port_) + "\n" + auth;
        const auto cfg = dir_.write("config.yml", config);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        const std::string log = (dir_ / "registry.log").string();
        posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        std::string c = cfg.string();
        char* argv[] = {const_cast<char*>(bin.c_str()), const_cast<char*>("serve"), c.data(),
                        nullptr};
        pid_t pid = -1;
        if (::posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv, environ) != 0) {
            posix_spawn_file_actions_destroy(&fa);
            error_ = "cannot start docker-registry";
            return;
        }
        posix_spawn_file_actions_destroy(&fa);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        bool up = false;
        while (std::chrono::steady_clock::now() < deadline) {
            if (http_answers(port_)) {
                up = true;
                break;
            }
            int st = 0;
            if (::waitpid(pid, &st, WNOHANG) == pid) {
                pid = -1;
                break; // exited (the port was taken?): try another
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (up) {
            pid_ = pid;
        } else if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
    if (pid_ < 0) error_ = "docker-registry did not start: " + read_file(dir_ / "registry.log");
}

void RegistryProcess::stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int st = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (::waitpid(pid_, &st, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &st, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
}

RegistryProcess::~RegistryProcess() {
    stop();
}

// ------------------------------------------------------------------------------------------------

std::string tar_with_file(const std::string& name, const std::string& content) {
    char h[512] = {};
    std::snprintf(h, 100, "%s", name.c_str());
    std::snprintf(h + 100, 8, "%07o", 0644);
    std::snprintf(h + 108, 8, "%07o", 0);
    std::snprintf(h + 116, 8, "%07o", 0);
    std::snprintf(h + 124, 12, "%011lo", static_cast<unsigned long>(content.size()));
    std::snprintf(h + 136, 12, "%011o", 0);
    std::memset(h + 148, ' ', 8);
    h[156] = '0';
    std::memcpy(h + 257, "ustar", 6);
    std::memcpy(h + 263, "00", 2);
    unsigned sum = 0;
    for (unsigned char c : std::string_view(h, 512))
        sum += c;
    std::snprintf(h + 148, 8, "%06o", sum);
    h[155] = ' ';
    std::string out(h, 512);
    out += content;
    out.append((512 - content.size() % 512) % 512, '\0');
    out.append(1024, '\0');
    return out;
}

oci::Content make_image(const std::string& payload, const std::string& platform,
                        const std::vector<std::size_t>& extra_layers) {
    oci::Content c;
    const auto slash = platform.find('/');
    const std::string os = platform.substr(0, slash);
    const std::string arch = platform.substr(slash + 1);
    std::vector<std::string> layers = {tar_with_file("payload.txt", payload)};
    for (std::size_t i = 0; i < extra_layers.size(); ++i) {
        std::string data(extra_layers[i], '\0');
        std::uint32_t x = 2166136261u ^ static_cast<std::uint32_t>(i);
        for (char ch : payload)
            x = (x ^ static_cast<unsigned char>(ch)) * 16777619u;
        for (auto& b : data) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            b = static_cast<char>(x);
        }
        layers.push_back(std::move(data));
    }
    std::string diff_ids;
    std::string layer_descs;
    for (const auto& l : layers) {
        const std::string d = sha256_digest(l);
        c.blobs[d] = l;
        diff_ids += (diff_ids.empty() ? "\"" : ",\"") + d + "\"";
        layer_descs += std::string(layer_descs.empty() ? "" : ",") + "{\"mediaType\":\"" +
                       std::string(oci::media::oci_layer_tar) + "\",\"digest\":\"" + d +
                       "\",\"size\":" + std::to_string(l.size()) + "}";
    }
    const std::string config = "{\"architecture\":\"" + arch + "\",\"os\":\"" + os +
                               "\",\"config\":{\"Labels\":{\"payload\":\"" + payload +
                               "\"}},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[" + diff_ids +
                               "]}}";
    const std::string cd = sha256_digest(config);
    c.blobs[cd] = config;
    const std::string manifest =
        "{\"schemaVersion\":2,\"mediaType\":\"" + std::string(oci::media::oci_manifest) +
        "\",\"config\":{\"mediaType\":\"" + std::string(oci::media::oci_config) +
        "\",\"digest\":\"" + cd + "\",\"size\":" + std::to_string(config.size()) +
        "},\"layers\":[" + layer_descs + "]}";
    c.root_digest = sha256_digest(manifest);
    c.root_media_type = std::string(oci::media::oci_manifest);
    c.blobs[c.root_digest] = manifest;
    return c;
}

oci::Content make_index(const std::vector<std::pair<oci::Content, std::string>>& images) {
    oci::Content c;
    std::string list;
    for (const auto& [img, platform] : images) {
        c.blobs.insert(img.blobs.begin(), img.blobs.end());
        const auto slash = platform.find('/');
        list += std::string(list.empty() ? "" : ",") + "{\"mediaType\":\"" + img.root_media_type +
                "\",\"digest\":\"" + img.root_digest +
                "\",\"size\":" + std::to_string(img.blobs.at(img.root_digest).size()) +
                ",\"platform\":{\"architecture\":\"" + platform.substr(slash + 1) + "\",\"os\":\"" +
                platform.substr(0, slash) + "\"}}";
    }
    const std::string index = "{\"schemaVersion\":2,\"mediaType\":\"" +
                              std::string(oci::media::oci_index) + "\",\"manifests\":[" + list +
                              "]}";
    c.root_digest = sha256_digest(index);
    c.root_media_type = std::string(oci::media::oci_index);
    c.blobs[c.root_digest] = index;
    return c;
}

} // namespace kpkg::test
