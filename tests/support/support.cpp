#include "support/support.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kpkg::test {

static std::string env_or_throw(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0')
        throw std::runtime_error(std::string(name) + " is not set: run the tests with meson test");
    return v;
}

fs::path source_root() {
    return env_or_throw("KPKG_SOURCE_ROOT");
}

fs::path testdata(const std::string& rel) {
    return source_root() / "testdata" / rel;
}

std::optional<fs::path> corpus_dir() {
    fs::path p = source_root().parent_path() / "shared" / "corpus";
    std::error_code ec;
    if (fs::is_directory(p, ec)) return fs::canonical(p, ec);
    return std::nullopt;
}

std::string missing_tool(const std::string& name, const std::string& detail) {
    return "missing tool: " + name + (detail.empty() ? std::string() : " (" + detail + ")");
}

std::string corpus_absent() {
    return "corpus absent: ../shared/corpus is not beside this checkout";
}

std::string running_as_root(const std::string& detail) {
    return "running as root" + (detail.empty() ? std::string() : ": " + detail);
}

TempDir::TempDir() {
    std::random_device rd;
    for (int i = 0; i < 100; ++i) {
        fs::path p = fs::temp_directory_path() / ("kpkg-test-" + std::to_string(rd()));
        std::error_code ec;
        if (fs::create_directory(p, ec)) {
            path_ = p;
            return;
        }
    }
    throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

fs::path TempDir::write(const std::string& rel, const std::string& content) const {
    fs::path p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream f(p, std::ios::binary);
    f << content;
    return p;
}

std::string read_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    if (!f) throw std::runtime_error("cannot read " + p.string());
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::vector<std::string> child_environment(const std::vector<std::string>& extra_env,
                                           const std::vector<std::string>& unset) {
    auto name_of = [](const std::string& v) { return v.substr(0, v.find('=')); };
    std::vector<std::string> envs;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string s = *e;
        const std::string name = name_of(s);
        bool drop = false;
        for (const auto& u : unset)
            drop = drop || u == name;
        // A variable of extra_env replaces the inherited one.
        for (const auto& x : extra_env)
            drop = drop || name_of(x) == name;
        if (!drop) envs.push_back(s);
    }
    envs.insert(envs.end(), extra_env.begin(), extra_env.end());
    return envs;
}

ProgramResult run_program(const std::vector<std::string>& args,
                          const std::vector<std::string>& extra_env, const std::string& input,
                          int timeout_s, const std::vector<std::string>& unset) {
    ProgramResult r;
    if (args.empty()) return r;
    int in[2], out[2], err[2];
    if (pipe(in) != 0 || pipe(out) != 0 || pipe(err) != 0) throw std::runtime_error("pipe");
    std::vector<std::string> envs = child_environment(extra_env, unset);
    std::vector<std::string> a = args;
    std::vector<char*> argv;
    for (auto& s : a)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& s : envs)
        envp.push_back(s.data());
    envp.push_back(nullptr);

    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork");
    if (pid == 0) {
        if (timeout_s > 0) setpgid(0, 0); // its own group: a timeout kills what it started too
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]})
            close(fd);
        execve(argv[0], argv.data(), envp.data());
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    std::size_t written = 0;
    if (input.empty()) {
        close(in[1]);
        in[1] = -1;
    } else {
        fcntl(in[1], F_SETFL, O_NONBLOCK);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    bool out_open = true, err_open = true;
    char buf[65536];
    while (out_open || err_open) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (timeout_s <= 0) left = std::chrono::milliseconds(1000);
        if (left.count() <= 0) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            r.timed_out = true;
            break;
        }
        std::vector<pollfd> fds;
        if (out_open) fds.push_back({out[0], POLLIN, 0});
        if (err_open) fds.push_back({err[0], POLLIN, 0});
        if (in[1] >= 0) fds.push_back({in[1], POLLOUT, 0});
        int pr = poll(fds.data(), fds.size(), static_cast<int>(std::min<long>(left.count(), 1000)));
        if (pr < 0) break;
        for (auto& p : fds) {
            if (p.revents == 0) continue;
            if (p.fd == in[1]) {
                ssize_t n = write(in[1], input.data() + written, input.size() - written);
                if (n > 0) written += static_cast<std::size_t>(n);
                if (n < 0 || written == input.size()) {
                    close(in[1]);
                    in[1] = -1;
                }
                continue;
            }
            ssize_t n = read(p.fd, buf, sizeof buf);
            if (n <= 0) {
                (p.fd == out[0] ? out_open : err_open) = false;
                continue;
            }
            (p.fd == out[0] ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
        }
    }
    if (in[1] >= 0) close(in[1]);
    close(out[0]);
    close(err[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

RunResult run_kpkg(const std::vector<std::string>& args, const std::string& input,
                   const std::vector<std::string>& extra_env) {
    std::vector<std::string> argv{env_or_throw("KPKG_BIN")};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, extra_env, input, 0, {"NO_COLOR"});
}

std::string describe(const RunResult& r) {
    return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

} // namespace kpkg::test
