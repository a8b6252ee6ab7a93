// Running kpkg as an unprivileged user, for tests of what happens when a file or directory cannot
// be read: root reads everything, so when the tests run as root they drop to nobody (uid and gid
// 65534) for the one command instead of skipping.
#pragma once

#include <cstdio>
#include <cstdlib>
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
        if (::setgroups(0, nullptr) != 0 || ::setgid(unprivileged_id) != 0 ||
            ::setuid(unprivileged_id) != 0)
            ::_exit(126);
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
