// Running a command from a bench and measuring it: wall time from fork to exit, and a peak RSS
// that is the command's own (through kpkg-bench-spawn; see spawn.cpp for why).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

struct Measured {
    double seconds = 0;
    long max_rss_kb = 0;
    int status = -1; // as waitpid reports it; -1 when the command could not be measured
};

// Forks; the child runs setup() (redirections, environment) and then PROGRAM ARGS through
// kpkg-bench-spawn, which reports back through a pipe.
template <class Setup>
Measured run_measured(const char* program, const std::vector<std::string>& args, Setup setup) {
    int p[2];
    if (pipe(p) != 0) return {};
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        setup();
        std::string fd = std::to_string(p[1]);
        std::vector<char*> argv{const_cast<char*>(KPKG_BENCH_SPAWN), fd.data(),
                                const_cast<char*>(program)};
        for (const auto& a : args)
            argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(KPKG_BENCH_SPAWN, argv.data());
        _exit(127);
    }
    close(p[1]);
    std::string out;
    char buf[128];
    for (ssize_t n; (n = read(p[0], buf, sizeof buf)) > 0;)
        out.append(buf, static_cast<std::size_t>(n));
    close(p[0]);
    int spawner = 0;
    waitpid(pid, &spawner, 0);
    Measured m;
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double s = 0;
    long rss = 0;
    int status = 0;
    if (std::sscanf(out.c_str(), "%lf %ld %d", &s, &rss, &status) == 3) {
        m.seconds = s;
        m.max_rss_kb = rss;
        m.status = status;
    }
    return m;
}

} // namespace bench
