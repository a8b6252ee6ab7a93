// Running kpkg, or a part of a test, as an unprivileged user, for tests of what happens when a file
// or directory cannot be read: root reads everything, so when the tests run as root they drop to
// nobody (uid and gid 65534) for the one command or check instead of skipping.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/support.hpp"

namespace kpkg::test {

// The user the unprivileged runs use.
inline constexpr unsigned unprivileged_id = 65534;

// In a child process: gives up root for user and group 65534 (no supplementary groups).
inline bool drop_to_unprivileged() {
    return ::setgroups(0, nullptr) == 0 && ::setgid(unprivileged_id) == 0 &&
           ::setuid(unprivileged_id) == 0 && ::geteuid() == unprivileged_id;
}

// Runs `check` where file permissions apply and returns what it returns: in this process when it
// is not root, else in a child process running as user and group 65534 (the string comes back
// through a pipe). Nothing when the child could not be started, could not switch users or did
// not exit normally. `check` must not use gtest assertions (a child's failures are lost): it
// returns what the test then asserts on. Whatever it reads must be reachable by user 65534.
inline std::optional<std::string> run_unprivileged(const std::function<std::string()>& check) {
    if (::geteuid() != 0) return check();
    int fds[2];
    if (::pipe(fds) != 0) return std::nullopt;
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return std::nullopt;
    }
    if (pid == 0) {
        ::close(fds[0]);
        if (!drop_to_unprivileged()) ::_exit(126);
        const std::string out = check();
        for (std::size_t done = 0; done < out.size();) {
            const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
            if (n <= 0) ::_exit(1);
            done += static_cast<std::size_t>(n);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    return out;
}

// Runs KPKG_BIN with `args` as user and group 65534, with stdin from /dev/null and `extra_env`
// ("NAME=value") over the inherited environment. Nothing when this process cannot switch users
// (it is not root); a result with exit_code 126 when switching failed.
inline std::optional<RunResult>
run_kpkg_unprivileged(const std::vector<std::string>& args,
                      const std::vector<std::string>& extra_env = {}) {
    if (::geteuid() != 0) return std::nullopt;
    const char* bin_env = std::getenv("KPKG_BIN");
    if (bin_env == nullptr) return std::nullopt;
    std::string bin = bin_env;
    std::vector<std::string> envs = child_environment(extra_env);
    std::vector<std::string> a = args;
    std::vector<char*> argv{bin.data()};
    for (auto& s : a)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& s : envs)
        envp.push_back(s.data());
    envp.push_back(nullptr);

    // Output goes to unnamed temporary files (opened here, so the child need not create them).
    std::FILE* out = std::tmpfile();
    std::FILE* err = std::tmpfile();
    if (out == nullptr || err == nullptr) return std::nullopt;
    const pid_t pid = ::fork();
    if (pid < 0) return std::nullopt;
    if (pid == 0) {
        const int null_fd = ::open("/dev/null", O_RDONLY);
        ::dup2(null_fd, 0);
        ::dup2(::fileno(out), 1);
        ::dup2(::fileno(err), 2);
        if (!drop_to_unprivileged()) ::_exit(126);
        ::execve(bin.c_str(), argv.data(), envp.data());
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    auto slurp = [](std::FILE* f) {
        std::string s;
        std::rewind(f);
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
            s.append(buf, n);
        std::fclose(f);
        return s;
    };
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

} // namespace kpkg::test
