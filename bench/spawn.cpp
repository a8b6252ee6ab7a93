// kpkg-bench-spawn FD PROGRAM [ARG...]: runs PROGRAM as its own child and writes "SECONDS
// MAX_RSS_KB STATUS" to file descriptor FD once it has exited.
//
// A process's peak RSS starts at what it inherited: a child forked from a bench that has loaded
// a catalog reports at least the bench's size, and exec does not reset it. This program is
// small when it starts its child, so the peak RSS of the child is the program's own.
//
// The child is started with posix_spawn (a vfork-like clone, as hyperfine, Python and Go start
// programs), not fork + exec: on a virtual machine, a fork costs about a millisecond of page-table
// copying and copy-on-write faults that belong to the measuring program, not to the one measured.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

extern char** environ;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: kpkg-bench-spawn FD PROGRAM [ARG...]\n");
        return 2;
    }
    const int fd = std::atoi(argv[1]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addclose(&actions, fd);
    const auto t0 = std::chrono::steady_clock::now();
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[2], &actions, nullptr, argv + 2, environ) != 0) return 1;
    int status = 0;
    rusage ru{};
    if (wait4(pid, &status, 0, &ru) < 0) return 1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    dprintf(fd, "%.9f %ld %d\n", s, static_cast<long>(ru.ru_maxrss), status);
    return 0;
}
