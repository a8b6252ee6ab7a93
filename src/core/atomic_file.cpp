#include "kpkg/core/atomic_file.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kpkg {

namespace {
Error sys_error(const std::string& what, const std::filesystem::path& p) {
    return Error::io(what + ": " + std::strerror(errno), {p.string()});
}
} // namespace

Result<AtomicFile> AtomicFile::create(const std::filesystem::path& target, int mode) {
    if (target.empty()) return fail(Error::usage("empty output path"));
    std::filesystem::path dir = target.parent_path();
    if (dir.empty()) dir = ".";
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        return fail(Error::io("is a directory", {target.string()}));
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return fail(Error::io("directory does not exist: " + dir.string(), {target.string()}));

    std::string name = ".";
    name += target.filename().string();
    name += ".kpkg-XXXXXX";
    std::string tmpl = (dir / name).string();
    int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd < 0) return fail(sys_error("cannot create a temporary file", target));
    // mkostemp creates 0600; give the file the mode a plain create would have (umask applied).
    mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, static_cast<mode_t>(mode) & ~mask);

    AtomicFile f;
    f.target_ = target;
    f.temp_ = tmpl;
    f.fd_ = fd;
    return f;
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : target_(std::move(o.target_)), temp_(std::move(o.temp_)), fd_(o.fd_) {
    o.fd_ = -1;
    o.temp_.clear();
}

AtomicFile& AtomicFile::operator=(AtomicFile&& o) noexcept {
    if (this != &o) {
        abort();
        target_ = std::move(o.target_);
        temp_ = std::move(o.temp_);
        fd_ = o.fd_;
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
    while (!data.empty()) {
        ssize_t n = ::write(fd_, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(sys_error("cannot write", target_));
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

Result<void> AtomicFile::commit() {
    if (fd_ < 0) return fail(Error::internal("commit of a closed AtomicFile"));
    if (::fsync(fd_) != 0) return fail(sys_error("cannot flush", target_));
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

Result<void> write_file_atomic(const std::filesystem::path& target, std::string_view data,
                               int mode) {
    auto f = KPKG_TRY(AtomicFile::create(target, mode));
    KPKG_TRY(f.write(data));
    return f.commit();
}

} // namespace kpkg
