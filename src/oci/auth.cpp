#include "kpkg/oci/auth.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"

extern char** environ;

namespace kpkg::oci {

namespace fs = std::filesystem;

namespace {

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : nullptr;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// A string field of a JSON object, "" when absent or not a string.
std::string str_field(const io::Node& n, std::string_view key) {
    const io::Node* v = n.get(key);
    return v != nullptr && v->is_string() ? v->text : std::string();
}

// The first entry of a map keyed by any of `keys`.
const io::Node* find_key(const io::Node* map, const std::vector<std::string>& keys) {
    if (map == nullptr || !map->is_map()) return nullptr;
    for (const auto& k : keys)
        if (const io::Node* v = map->get(k)) return v;
    return nullptr;
}

Result<std::optional<Credential>> from_auths_entry(const io::Node& e, const fs::path& file,
                                                   const std::string& key) {
    const SourcePos pos = io::pos_of(file.string(), e.mark);
    if (!e.is_map())
        return fail(Error::invalid("auths entry \"" + key + "\" is not an object", pos));
    Credential c;
    c.source = file.string();
    const std::string auth = str_field(e, "auth");
    if (!auth.empty()) {
        std::string decoded;
        std::size_t at = 0;
        if (!io::go::decode_base64(auth, &decoded, at))
            return fail(Error::invalid("auths entry \"" + key + "\": \"auth\" is not base64", pos));
        const auto colon = decoded.find(':');
        if (colon == std::string::npos)
            return fail(Error::invalid(
                "auths entry \"" + key + "\": \"auth\" is not base64 of \"user:password\"", pos));
        c.username = decoded.substr(0, colon);
        c.password = decoded.substr(colon + 1);
    } else {
        c.username = str_field(e, "username");
        c.password = str_field(e, "password");
    }
    if (std::string tok = str_field(e, "identitytoken"); !tok.empty()) {
        c.password = tok;
        if (c.username.empty()) c.username = "<token>";
    }
    if (c.username.empty() && c.password.empty()) return std::optional<Credential>();
    return std::optional<Credential>(std::move(c));
}

constexpr std::chrono::seconds kHelperTimeout{30};

bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

} // namespace

std::vector<fs::path> default_auth_files() {
    std::vector<fs::path> files;
    if (const char* f = env("REGISTRY_AUTH_FILE")) files.emplace_back(f);
    if (const char* r = env("XDG_RUNTIME_DIR"))
        files.push_back(fs::path(r) / "containers" / "auth.json");
    if (const char* h = env("HOME")) {
        files.push_back(fs::path(h) / ".config" / "containers" / "auth.json");
        files.push_back(fs::path(h) / ".docker" / "config.json");
    }
    return files;
}

std::vector<std::string> auth_keys(std::string_view host) {
    std::string h(host);
    std::vector<std::string> keys = {h, "https://" + h, "http://" + h};
    if (h == "docker.io" || h == "index.docker.io" || h == "registry-1.docker.io") {
        for (const char* k : {"docker.io", "index.docker.io", "registry-1.docker.io",
                              "https://index.docker.io/v1/", "https://index.docker.io/v1",
                              "https://index.docker.io", "https://registry-1.docker.io"})
            if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.emplace_back(k);
    }
    return keys;
}

Result<std::optional<Credential>> run_credential_helper(std::string_view helper,
                                                        std::string_view host) {
    const std::string prog = "docker-credential-" + std::string(helper);
    // Standard input is a socket, so that writing to a helper that exits without reading it
    // is an EPIPE error rather than a SIGPIPE that kills kpkg.
    int in[2], out[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)
        return fail(Error::io("socketpair: " + std::string(strerror(errno))));
    if (::pipe2(out, O_CLOEXEC) != 0) {
        ::close(in[0]);
        ::close(in[1]);
        return fail(Error::io("pipe: " + std::string(strerror(errno))));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    char* argv[] = {const_cast<char*>(prog.c_str()), const_cast<char*>("get"), nullptr};
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, prog.c_str(), &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    if (rc != 0) {
        ::close(in[1]);
        ::close(out[0]);
        return fail(Error::io("cannot run the credential helper " + prog + ": " + strerror(rc))
                        .about("registry " + std::string(host)));
    }
    // The host is short: it fits the socket buffer, so writing before reading cannot deadlock.
    // (A helper may exit without reading it: its answer counts, not the write.)
    (void)send_all(in[1], std::string(host) + "\n");
    ::close(in[1]);
    std::string output;
    char buf[4096];
    // A helper that hangs (waiting for a keyring prompt, say) is stopped after a while.
    const auto deadline = std::chrono::steady_clock::now() + kHelperTimeout;
    bool timed_out = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{out[0], POLLIN, 0};
        const int pr = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) {
            timed_out = true;
            ::kill(pid, SIGKILL);
            break;
        }
        const ssize_t n = ::read(out[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (output.size() < (1u << 20)) output.append(buf, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out)
        return fail(Error::io(prog + " get did not answer within " +
                              std::to_string(kHelperTimeout.count()) + " seconds")
                        .about("registry " + std::string(host)));
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok) {
        // docker-credential-helpers answer this (exit 1) for a host they do not know.
        if (output.find("credentials not found") != std::string::npos)
            return std::optional<Credential>();
        Error e =
            Error::io(prog + " get failed (" +
                      (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                         : std::string("killed by a signal")) +
                      ")");
        e.about("registry " + std::string(host));
        while (!output.empty() && (output.back() == '\n' || output.back() == '\r'))
            output.pop_back();
        if (!output.empty()) e.note(output.substr(0, 200));
        return fail(std::move(e));
    }
    auto docs = io::parse_json(output, prog);
    if (!docs || docs->size() != 1 || !(*docs)[0].root.is_map())
        return fail(Error::io(prog + " get did not answer a JSON object")
                        .about("registry " + std::string(host)));
    const io::Node& r = (*docs)[0].root;
    Credential c{str_field(r, "Username"), str_field(r, "Secret"), prog};
    if (c.username.empty() && c.password.empty()) return std::optional<Credential>();
    return std::optional<Credential>(std::move(c));
}

Result<std::optional<Credential>> find_credential(std::string_view host,
                                                  const std::vector<fs::path>& files) {
    const auto keys = auth_keys(host);
    for (const auto& file : files) {
        std::error_code ec;
        if (!fs::exists(file, ec)) continue;
        auto text = io::read_file(file);
        if (!text) return fail(std::move(text).error());
        auto docs = io::parse_json(*text, file.string());
        if (!docs) return fail(std::move(docs).error());
        if (docs->empty()) continue; // an empty file: nothing in it
        const io::Node& root = (*docs)[0].root;
        if (docs->size() != 1 || !root.is_map())
            return fail(
                Error::invalid("not a JSON object: a credentials file holds one", {file.string()}));
        if (const io::Node* h = find_key(root.get("credHelpers"), keys)) {
            if (!h->is_string() || h->text.empty())
                return fail(Error::invalid("credHelpers entry for " + std::string(host) +
                                               " is not a helper name",
                                           io::pos_of(file.string(), h->mark)));
            auto c = run_credential_helper(h->text, host);
            if (!c) return c;
            if (*c) return c;
        }
        if (const io::Node* auths = root.get("auths"); auths != nullptr && auths->is_map()) {
            for (const auto& k : keys) {
                const io::Node* e = auths->get(k);
                if (e == nullptr) continue;
                auto c = from_auths_entry(*e, file, k);
                if (!c) return c;
                if (*c) return c;
            }
        }
        if (const io::Node* s = root.get("credsStore");
            s != nullptr && s->is_string() && !s->text.empty()) {
            auto c = run_credential_helper(s->text, host);
            if (!c) return c;
            if (*c) return c;
        }
    }
    return std::optional<Credential>();
}

std::string Challenge::param(std::string_view key) const {
    const std::string k = lower(key);
    for (const auto& [n, v] : params)
        if (n == k) return v;
    return {};
}

std::vector<Challenge> parse_challenges(std::string_view h) {
    std::vector<Challenge> out;
    std::size_t i = 0;
    auto skip_ws = [&] {
        while (i < h.size() && (h[i] == ' ' || h[i] == '\t'))
            ++i;
    };
    auto token = [&] {
        const std::size_t b = i;
        while (i < h.size() && h[i] != ' ' && h[i] != '\t' && h[i] != ',' && h[i] != '=')
            ++i;
        return std::string(h.substr(b, i - b));
    };
    while (i < h.size()) {
        skip_ws();
        if (i < h.size() && h[i] == ',') {
            ++i;
            continue;
        }
        if (i >= h.size()) break;
        const std::size_t start = i;
        std::string word = token();
        skip_ws();
        if (i < h.size() && h[i] == '=' && !out.empty()) {
            // A parameter of the current challenge.
            i = start;
        } else {
            if (word.empty()) {
                ++i;
                continue;
            }
            out.push_back({word, {}});
        }
        // Parameters: key=value, comma separated, until a token not followed by '='.
        for (;;) {
            skip_ws();
            while (i < h.size() && h[i] == ',') {
                ++i;
                skip_ws();
            }
            if (i >= h.size()) break;
            const std::size_t pstart = i;
            std::string key = token();
            skip_ws();
            if (i >= h.size() || h[i] != '=' || key.empty()) {
                i = pstart; // the next challenge's scheme
                break;
            }
            ++i; // '='
            skip_ws();
            std::string value;
            if (i < h.size() && h[i] == '"') {
                ++i;
                while (i < h.size() && h[i] != '"') {
                    if (h[i] == '\\' && i + 1 < h.size()) ++i;
                    value += h[i++];
                }
                if (i < h.size()) ++i;
            } else {
                const std::size_t b = i;
                while (i < h.size() && h[i] != ',' && h[i] != ' ' && h[i] != '\t')
                    ++i;
                value = std::string(h.substr(b, i - b));
            }
            out.back().params.emplace_back(lower(key), std::move(value));
        }
    }
    return out;
}

} // namespace kpkg::oci
