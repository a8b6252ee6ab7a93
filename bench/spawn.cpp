// kpkg-bench-spawn FD PROGRAM [ARG...]: runs PROGRAM as its own child and writes "SECONDS
// MAX_RSS_KB STATUS" to file descriptor FD once it has exited.
//
// A process's peak RSS starts at what it inherited: a child forked from a bench that has loaded
// a catalog reports at least the bench's size, and exec does not reset it. This program is
// small when it forks, so the peak RSS of its child is the program's own.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: kpkg-bench-spawn FD PROGRAM [ARG...]\n");
        return 2;
    }
    const int fd = std::atoi(argv[1]);
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        close(fd);
        execv(argv[2], argv + 2);
        _exit(127);
    }
    int status = 0;
    rusage ru{};
    if (wait4(pid, &status, 0, &ru) < 0) return 1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    dprintf(fd, "%.9f %ld %d\n", s, static_cast<long>(ru.ru_maxrss), status);
    return 0;
}
