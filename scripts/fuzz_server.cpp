// kpkg-fuzz-server: runs kpkg command lines for scripts/fuzz without starting a program each time.
//
// A sanitizer build of kpkg spends most of a small run starting and ending: setting up the
// sanitizer run-time (shadow memory, allocator), and at exit LeakSanitizer scanning memory it has
// never touched before (each first touch a page fault, several microseconds on a virtual
// machine). This server does that once: it starts, runs one leak check (so the memory that check
// reads is mapped), and then forks a child per request, which inherits all of it and runs kpkg's
// own main_entry: the same code as the kpkg executable (the same objects), with the command line,
// working directory, environment, files and user of the request.
//
// Protocol, on standard input and output (scripts/fuzz speaks it):
//   request  "<N>\n" and N bytes: NUL-terminated fields
//            cwd, stdin path ("" = /dev/null), stdout path, stderr path, uid ("" = unchanged), gid,
//            leak check ("1": the child exits through exit(), so LeakSanitizer checks; "0": it
//            flushes stdio and leaves with _exit), argc, argv..., envc, env...
//   replies  "<pid>\n" once the child runs (its own session and process group: the caller kills
//            the group on a timeout), then "<wait status> <CPU seconds>\n" when it has ended.
// End of input ends the server. A request it cannot read ends it with status 2.
//
// AddressSanitizer's hard_rss_limit_mb is kept by a thread of its own, which a forked child does
// not have; so the server keeps it instead: it reads hard_rss_limit_mb from the request's
// ASAN_OPTIONS, looks at the child's resident size every 50 ms while it runs, and past the limit
// kills it (SIGKILL, which the caller sees) and says why on the child's standard error.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "command.hpp"

extern char** environ;

namespace {

int in_fd = -1;
int out_fd = -1;

bool read_exact(int fd, char* p, std::size_t n) {
    while (n > 0) {
        const ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}

bool write_all(int fd, const std::string& s) {
    const char* p = s.data();
    std::size_t n = s.size();
    while (n > 0) {
        const ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

// The header line "<N>\n": N, or -1 at end of input or on a malformed header.
long read_header() {
    std::string line;
    char c;
    while (true) {
        const ssize_t r = read(in_fd, &c, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        if (c == '\n') break;
        if (c < '0' || c > '9' || line.size() > 12) return -1;
        line += c;
    }
    return line.empty() ? -1 : std::atol(line.c_str());
}

// A request, as views into its payload: each field ends at a NUL there, so a view's data() is a
// C string. The server parses every request into the same Request and payload, whose vectors and
// buffer keep their capacity, so it allocates nothing per request: AddressSanitizer keeps freed
// memory in quarantine (up to 256 MB), and a server that made strings of each request grew by
// tens of KB a request, every fork copying more of it (the runs went from 90 to 30 a second
// within half an hour).
struct Request {
    std::string_view cwd, in, out, err, uid, gid;
    bool leak_check = true;
    std::vector<std::string_view> argv, env;
};

bool parse(const std::string& payload, Request& r) {
    std::size_t at = 0;
    auto next = [&](std::string_view& v) {
        if (at >= payload.size()) return false;
        const std::size_t nul = payload.find('\0', at);
        if (nul == std::string::npos) return false;
        v = std::string_view(payload).substr(at, nul - at);
        at = nul + 1;
        return true;
    };
    r.argv.clear();
    r.env.clear();
    std::string_view leak, count;
    if (!next(r.cwd) || !next(r.in) || !next(r.out) || !next(r.err) || !next(r.uid) ||
        !next(r.gid) || !next(leak) || !next(count))
        return false;
    r.leak_check = leak == "1";
    for (long n = std::atol(count.data()); n > 0; --n)
        if (!next(r.argv.emplace_back())) return false;
    if (!next(count)) return false;
    for (long n = std::atol(count.data()); n > 0; --n)
        if (!next(r.env.emplace_back())) return false;
    return at == payload.size() && !r.argv.empty();
}

// hard_rss_limit_mb of the request's ASAN_OPTIONS, in MB; 0 when none.
long rss_limit_mb(const Request& r) {
    for (const auto e : r.env) {
        if (e.substr(0, 13) != "ASAN_OPTIONS=") continue;
        const auto at = e.find("hard_rss_limit_mb=");
        if (at != std::string_view::npos) return std::atol(e.data() + at + 18);
    }
    return 0;
}

// The resident size of process pid in MB (0 when it cannot be read).
long rss_mb(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/statm", static_cast<int>(pid));
    FILE* f = std::fopen(path, "r");
    if (f == nullptr) return 0;
    long size = 0, resident = 0;
    if (std::fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    std::fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

// Waits for the child, killing its process group when its resident size passes the request's
// limit (and saying so on its standard error).
bool wait_child(pid_t pid, const Request& r, int& status, rusage& ru) {
    const long limit = rss_limit_mb(r);
    const int pidfd = limit > 0 ? static_cast<int>(syscall(SYS_pidfd_open, pid, 0)) : -1;
    bool killed = false;
    while (pidfd >= 0 && !killed) {
        pollfd p{pidfd, POLLIN, 0};
        const int n = poll(&p, 1, 50);
        if (n > 0) break; // ended
        if (n < 0 && errno != EINTR) break;
        if (const long mb = rss_mb(pid); mb > limit) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            killed = true;
            const int fd = open(r.err.data(), O_WRONLY | O_APPEND);
            if (fd >= 0) {
                const std::string msg =
                    "kpkg-fuzz-server: killed: resident size " + std::to_string(mb) +
                    " MB, over hard_rss_limit_mb=" + std::to_string(limit) + "\n";
                (void)!write(fd, msg.data(), msg.size());
                close(fd);
            }
        }
    }
    if (pidfd >= 0) close(pidfd);
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) return false;
    return true;
}

[[noreturn]] void child_fail(const char* what) {
    const std::string msg =
        std::string("kpkg-fuzz-server: ") + what + ": " + std::strerror(errno) + "\n";
    (void)!write(2, msg.data(), msg.size());
    _exit(125);
}

[[noreturn]] void run_child(const Request& r) {
    setsid();
    close(in_fd);
    close(out_fd);
    const int in = r.in.empty() ? open("/dev/null", O_RDONLY) : open(r.in.data(), O_RDONLY);
    const int out = open(r.out.data(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(r.err.data(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, 2);
    if (in < 0) child_fail("standard input");
    if (out < 0 || err < 0) child_fail("standard output or error");
    dup2(in, 0);
    dup2(out, 1);
    for (int fd : {in, out, err})
        if (fd > 2) close(fd);
    if (chdir(r.cwd.data()) != 0) child_fail("working directory");
    if (!r.uid.empty()) {
        const auto gid = static_cast<gid_t>(std::atol(r.gid.data()));
        if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 ||
            setuid(static_cast<uid_t>(std::atol(r.uid.data()))) != 0)
            child_fail("user");
    }
    // The fields are this child's own copy of the payload (after the fork): writable.
    std::vector<char*> env;
    for (const auto e : r.env)
        env.push_back(const_cast<char*>(e.data()));
    env.push_back(nullptr);
    environ = env.data();
    std::vector<char*> argv;
    for (const auto a : r.argv)
        argv.push_back(const_cast<char*>(a.data()));
    argv.push_back(nullptr);
    const int rc = kpkg::cli::main_entry(static_cast<int>(r.argv.size()), argv.data());
    if (r.leak_check) std::exit(rc); // atexit: LeakSanitizer's check, as at the end of kpkg
    std::fflush(nullptr);
    _exit(rc);
}

} // namespace

int main() {
    // The protocol moves off descriptors 0 and 1, which become /dev/null (and are replaced in
    // each child by the request's files).
    in_fd = fcntl(0, F_DUPFD_CLOEXEC, 10);
    out_fd = fcntl(1, F_DUPFD_CLOEXEC, 10);
    if (in_fd < 0 || out_fd < 0) return 2;
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    if (null > 2) close(null);
#if defined(__SANITIZE_ADDRESS__)
    // The memory a leak check reads, mapped once here rather than in every child.
    __lsan_do_recoverable_leak_check();
#endif
    std::string payload; // reused, as is r: they grow to the largest request, never shrink
    payload.reserve(1 << 16);
    Request r;
    while (true) {
        const long n = read_header();
        if (n < 0) return 0;
        payload.resize(static_cast<std::size_t>(n));
        if (!read_exact(in_fd, payload.data(), payload.size()) || !parse(payload, r)) return 2;
        const pid_t pid = fork();
        if (pid < 0) return 2;
        if (pid == 0) run_child(r);
        if (!write_all(out_fd, std::to_string(pid) + "\n")) {
            kill(-pid, SIGKILL);
            return 2;
        }
        int status = 0;
        rusage ru{};
        if (!wait_child(pid, r, status, ru)) return 2;
        const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
        char line[64];
        std::snprintf(line, sizeof line, "%d %.6f\n", status, cpu);
        if (!write_all(out_fd, line)) return 2;
    }
}
