// What the bench programs share: timing, medians, the machine's CPU for their headers, and
// running a command or a function in a child process and measuring it (wall time from fork to
// exit, peak RSS, exit status).
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The middle value (the upper of the two middle ones for an even count); 0 when v is empty.
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// The "model name" of /proc/cpuinfo.
inline std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

struct Measured {
    double seconds = 0;
    long max_rss_kb = 0;
    int status = -1; // as waitpid reports it; -1 when the command could not be measured
};

// Runs fn in a forked child, its result the child's exit code: wall time from fork to exit and
// peak RSS (which counts what the child inherited from this process).
template <class F>
Measured in_child(F fn) {
    const auto t0 = Clock::now();
    const pid_t pid = fork();
    if (pid == 0) _exit(fn());
    int status = 0;
    rusage ru{};
    wait4(pid, &status, 0, &ru);
    Measured r;
    r.seconds = seconds_since(t0);
    r.max_rss_kb = ru.ru_maxrss;
    r.status = status;
    return r;
}

// Of several runs (at least one): the median wall time, the largest peak RSS, and the status of a
// run that failed (killed, or exited with a code other than 0 and ok_exit) if there is one, else
// that of the median run.
inline Measured median_run(std::vector<Measured> v, int ok_exit = 0) {
    std::sort(v.begin(), v.end(),
              [](const Measured& a, const Measured& b) { return a.seconds < b.seconds; });
    Measured m = v[v.size() / 2];
    for (const auto& r : v) {
        m.max_rss_kb = std::max(m.max_rss_kb, r.max_rss_kb);
        if (r.status != 0 && !(WIFEXITED(r.status) && WEXITSTATUS(r.status) == ok_exit))
            m.status = r.status;
    }
    return m;
}

#ifdef KPKG_BENCH_SPAWN // the path of kpkg-bench-spawn, for the benches that run commands
// Forks; the child runs setup() (redirections, environment) and then PROGRAM ARGS through
// kpkg-bench-spawn, which reports back through a pipe: the command's wall time and a peak RSS
// that is its own (see spawn.cpp for why).
template <class Setup>
Measured run_measured(const char* program, const std::vector<std::string>& args, Setup setup) {
    int p[2];
    if (pipe(p) != 0) return {};
    const auto t0 = Clock::now();
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
    m.seconds = seconds_since(t0);
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
#endif

} // namespace bench
