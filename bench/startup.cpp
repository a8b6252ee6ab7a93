// Start-up latency of kpkg commands, against /bin/true measured in the same run.
// Usage: kpkg-bench-startup [--runs N] [--kpkg PATH]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace {

double run_once(const std::vector<std::string>& argv) {
    std::vector<char*> a;
    for (const auto& s : argv)
        a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid;
    if (posix_spawn(&pid, a[0], &fa, nullptr, a.data(), environ) != 0) {
        std::fprintf(stderr, "cannot run %s\n", a[0]);
        std::exit(1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    auto t1 = std::chrono::steady_clock::now();
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "%s exited with status %d\n", a[0], status);
        std::exit(1);
    }
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

struct Stats {
    double median, p90;
};

Stats measure(const std::vector<std::string>& argv, int runs) {
    for (int i = 0; i < 10; ++i)
        run_once(argv); // warm the page cache
    std::vector<double> t;
    for (int i = 0; i < runs; ++i)
        t.push_back(run_once(argv));
    std::sort(t.begin(), t.end());
    return {t[t.size() / 2], t[t.size() * 9 / 10]};
}

} // namespace

int main(int argc, char** argv) {
    int runs = 300;
    std::string kpkg = KPKG_BENCH_KPKG;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--kpkg") && i + 1 < argc)
            kpkg = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--runs N] [--kpkg PATH]\n", argv[0]);
            return 2;
        }
    }
    std::string catalog = std::string(KPKG_BENCH_SOURCE_ROOT) + "/testdata/catalog";
    struct Case {
        const char* label;
        std::vector<std::string> argv;
    } cases[] = {
        {"/bin/true (baseline)", {"/bin/true"}},
        {"kpkg --version", {kpkg, "--version"}},
        {"kpkg version", {kpkg, "version"}},
        {"kpkg catalog list packages testdata/catalog",
         {kpkg, "catalog", "list", "packages", catalog}},
        {"kpkg version --libraries (loads curl, archive, solv)", {kpkg, "version", "--libraries"}},
    };
    std::printf("start-up, %d runs each, wall time from spawn to exit\n", runs);
    std::printf("%-54s %10s %10s %8s\n", "command", "median ms", "p90 ms", "x true");
    double base = 0;
    for (const auto& c : cases) {
        Stats s = measure(c.argv, runs);
        if (base == 0) base = s.median;
        std::printf("%-54s %10.2f %10.2f %8.2f\n", c.label, s.median, s.p90, s.median / base);
    }
    return 0;
}
