#include "kpkg/core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kpkg {

namespace fs = std::filesystem;

namespace {

Error sys_error(const std::string& what, const fs::path& p) {
    return Error::io(what + ": " + std::strerror(errno), {p.string()});
}

mode_t current_umask() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return mask;
}

fs::path dir_of(const fs::path& target) {
    fs::path dir = target.parent_path();
    return dir.empty() ? fs::path(".") : dir;
}

// A hidden name beside the target that is not taken yet (when a name is needed at all).
std::string temp_name(const fs::path& target) {
    static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char rnd[6] = {};
    if (::getrandom(rnd, sizeof rnd, 0) != static_cast<ssize_t>(sizeof rnd))
        for (auto& b : rnd)
            b = static_cast<unsigned char>(std::rand());
    std::string name = ".";
    name += target.filename().string();
    name += ".kpkg-";
    for (unsigned char b : rnd)
        name += kChars[b % (sizeof kChars - 1)];
    return (dir_of(target) / name).string();
}

// Paths the kernel makes up (/dev/stdout, /proc/self/fd/N): what they lead to is written to
// directly, never replaced.
bool magic_path(const std::string& p) {
    return p.rfind("/proc/", 0) == 0 || p.rfind("/dev/fd/", 0) == 0 || p == "/dev/stdout" ||
           p == "/dev/stderr";
}

bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

} // namespace

Result<AtomicFile> AtomicFile::open_temp(const fs::path& target, unsigned mode, long uid,
                                         long gid) {
    const fs::path dir = dir_of(target);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return fail(Error::io("directory does not exist: " + dir.string(), {target.string()}));
    AtomicFile f;
    f.target_ = target;
    // Unnamed until commit() links it in: nothing is left behind if the process dies.
    f.fd_ = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (f.fd_ < 0) {
        // The file system has no O_TMPFILE: a hidden named file.
        std::string tmpl = temp_name(target);
        tmpl.replace(tmpl.size() - 6, 6, "XXXXXX");
        f.fd_ = ::mkostemp(tmpl.data(), O_CLOEXEC);
        if (f.fd_ < 0) return fail(sys_error("cannot create a temporary file", target));
        f.temp_ = tmpl;
    }
    ::fchmod(f.fd_, static_cast<mode_t>(mode));
    if (uid >= 0 && gid >= 0) // best effort: only root or the owner can
        if (::fchown(f.fd_, static_cast<uid_t>(uid), static_cast<gid_t>(gid)) != 0) {
        }
    return f;
}

Result<AtomicFile> AtomicFile::create(const fs::path& target, int mode) {
    if (target.empty()) return fail(Error::usage("empty output path"));
    struct stat st {};
    if (::lstat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        return fail(Error::io("is a directory", {target.string()}));
    return open_temp(target, static_cast<unsigned>(mode) & ~current_umask(), -1, -1);
}

Result<AtomicFile> AtomicFile::create_output(const fs::path& target) {
    if (target.empty()) return fail(Error::usage("empty output path"));
    struct stat st {};
    const bool exists = ::stat(target.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return fail(Error::io("is a directory", {target.string()}));
    // Symbolic links followed to the file they name, which is what gets replaced.
    fs::path real = target;
    bool direct = exists && !S_ISREG(st.st_mode);
    for (int hops = 0; !direct && hops < 40; ++hops) {
        direct = magic_path(real.string());
        struct stat lst {};
        if (direct || ::lstat(real.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) break;
        std::error_code ec;
        const fs::path next = fs::read_symlink(real, ec);
        if (ec) return fail(Error::io("cannot read the symbolic link: " + ec.message(), {real}));
        real = next.is_absolute() ? next : dir_of(real) / next;
    }
    if (direct) {
        // A device, a FIFO, or a file reached through /proc: written in place. A regular file
        // there (kpkg ... --output-file /dev/stdout >>log) is appended to as the shell opened it.
        AtomicFile f;
        f.target_ = target;
        f.direct_ = true;
        const int extra = exists && S_ISREG(st.st_mode) ? O_APPEND : 0;
        f.fd_ = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | extra);
        if (f.fd_ < 0) return fail(sys_error("cannot open", target));
        return f;
    }
    if (exists) // keeps its permission bits and, where allowed, its owner
        return open_temp(real, st.st_mode & 07777, static_cast<long>(st.st_uid),
                         static_cast<long>(st.st_gid));
    return open_temp(real, 0644 & ~current_umask(), -1, -1);
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : target_(std::move(o.target_)), temp_(std::move(o.temp_)), fd_(o.fd_), direct_(o.direct_),
      durable_(o.durable_) {
    o.fd_ = -1;
    o.temp_.clear();
}

AtomicFile& AtomicFile::operator=(AtomicFile&& o) noexcept {
    if (this != &o) {
        abort();
        target_ = std::move(o.target_);
        temp_ = std::move(o.temp_);
        fd_ = o.fd_;
        direct_ = o.direct_;
        durable_ = o.durable_;
        o.fd_ = -1;
        o.temp_.clear();
    }
    return *this;
}

AtomicFile::~AtomicFile() {
    abort();
}

void AtomicFile::abort() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!temp_.empty()) ::unlink(temp_.c_str());
    temp_.clear();
}

Result<void> AtomicFile::write(std::string_view data) {
    if (fd_ < 0) return fail(Error::internal("write to a closed AtomicFile"));
    if (!write_all(fd_, data)) return fail(sys_error("cannot write", target_));
    return {};
}

Result<void> AtomicFile::commit() {
    if (fd_ < 0) return fail(Error::internal("commit of a closed AtomicFile"));
    if (direct_) {
        const int rc = ::close(fd_);
        fd_ = -1;
        if (rc != 0) return fail(sys_error("cannot write", target_));
        return {};
    }
    if (durable_ && ::fsync(fd_) != 0) return fail(sys_error("cannot flush", target_));
    if (temp_.empty()) {
        // Unnamed: linked in under a hidden name, then renamed over the target (a name of its
        // own first, as linkat cannot replace a file).
        const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
        std::string name;
        bool linked = false;
        for (int tries = 0; tries < 100 && !linked; ++tries) {
            name = temp_name(target_);
            linked =
                ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0 ||
                ::linkat(fd_, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0;
            if (!linked && errno != EEXIST) break;
        }
        if (!linked) {
            // Neither /proc nor the capability to link by descriptor: the content copied to a
            // named temporary file.
            std::string tmpl = temp_name(target_);
            tmpl.replace(tmpl.size() - 6, 6, "XXXXXX");
            const int named = ::mkostemp(tmpl.data(), O_CLOEXEC);
            if (named < 0) return fail(sys_error("cannot create a temporary file", target_));
            temp_ = tmpl;
            struct stat st {};
            ::fstat(fd_, &st);
            ::fchmod(named, st.st_mode & 07777);
            std::string buf(1 << 16, '\0');
            off_t at = 0;
            for (;;) {
                const ssize_t n = ::pread(fd_, buf.data(), buf.size(), at);
                if (n < 0 && errno == EINTR) continue;
                if (n < 0 || !write_all(named, std::string_view(buf.data(), n > 0 ? n : 0))) {
                    ::close(named);
                    return fail(sys_error("cannot write", target_));
                }
                if (n == 0) break;
                at += n;
            }
            ::close(fd_);
            fd_ = named;
            if (durable_ && ::fsync(fd_) != 0) return fail(sys_error("cannot flush", target_));
        } else {
            temp_ = name;
        }
    }
    if (::close(fd_) != 0) {
        fd_ = -1;
        return fail(sys_error("cannot close", target_));
    }
    fd_ = -1;
    if (::rename(temp_.c_str(), target_.c_str()) != 0)
        return fail(sys_error("cannot rename", target_));
    temp_.clear();
    return {};
}

Result<void> write_file_atomic(const fs::path& target, std::string_view data, int mode) {
    auto f = AtomicFile::create(target, mode);
    if (!f) return fail(std::move(f).error());
    if (auto w = f->write(data); !w) return fail(std::move(w).error());
    return f->commit();
}

Result<void> write_cache_file(const fs::path& target, std::string_view data, int mode) {
    auto f = AtomicFile::create(target, mode);
    if (!f) return fail(std::move(f).error());
    f->set_durable(false);
    if (auto w = f->write(data); !w) return fail(std::move(w).error());
    return f->commit();
}

Result<void> write_output_file(const fs::path& target, std::string_view data) {
    auto f = AtomicFile::create_output(target);
    if (!f) return fail(std::move(f).error());
    if (auto w = f->write(data); !w) return fail(std::move(w).error());
    return f->commit();
}

CacheFile::CacheFile(const fs::path& p) {
    fd_ = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd_ < 0) {
        errno_ = errno;
        why_ = errno_ == ENOENT  ? "is missing"
               : errno_ == ELOOP ? "is a symbolic link"
                                 : "cannot be opened";
        return;
    }
    if (::fstat(fd_, &sb_) != 0 || !S_ISREG(sb_.st_mode)) {
        why_ = S_ISDIR(sb_.st_mode) ? "is a directory" : "is not a regular file";
        ::close(fd_);
        fd_ = -1;
    }
}

CacheFile::~CacheFile() {
    if (fd_ >= 0) ::close(fd_);
}

std::string CacheFile::read(std::uint64_t offset, std::size_t n) const {
    std::string out(n, '\0');
    std::size_t used = 0;
    while (fd_ >= 0 && used < n) {
        const ssize_t got =
            ::pread(fd_, out.data() + used, n - used, static_cast<off_t>(offset + used));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break; // an error or a file shorter than it was: what is there
        used += static_cast<std::size_t>(got);
    }
    out.resize(used);
    return out;
}

std::optional<std::string> CacheFile::read_whole(std::uint64_t limit) const {
    if (!ok() || size() > limit) return std::nullopt;
    return read(0, static_cast<std::size_t>(size()));
}

} // namespace kpkg
