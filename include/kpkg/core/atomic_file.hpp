// Writing files so that readers see the old content or the whole new content, never a part.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "kpkg/core/result.hpp"

namespace kpkg {

// A file being written: data goes to a temporary file in the target's directory (so the rename
// is atomic); commit() flushes, fsyncs and renames it over the target. Where the file system
// allows it the temporary file has no name until commit() (O_TMPFILE), so a process killed while
// writing leaves nothing behind; elsewhere a hidden ".NAME.kpkg-XXXXXX" is used, which
// destroying an uncommitted AtomicFile removes.
class AtomicFile {
public:
    // A file of kpkg's own (the cache): whatever is at `target` (a regular file, a symbolic link,
    // a FIFO) is replaced by a regular file of `mode` (less the umask).
    static Result<AtomicFile> create(const std::filesystem::path& target, int mode = 0644);
    // A file named by the user: a symbolic link is written through (the file it points to is
    // replaced, the link stays), an existing file keeps its mode (a new one gets 0644 less the
    // umask), and a target that is not a regular file (a character device such as /dev/null or
    // /dev/stdout's terminal, a FIFO) is opened and written directly, without a temporary file.
    static Result<AtomicFile> create_output(const std::filesystem::path& target);
    AtomicFile(AtomicFile&& o) noexcept;
    AtomicFile& operator=(AtomicFile&& o) noexcept;
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();

    // Without it, commit() does not fsync: the file is still replaced whole or not at all while
    // the system runs, but a crash may leave it empty or short. Only for caches whose readers
    // check what they read (a blob against its digest) and fall back when it does not check out.
    void set_durable(bool durable) { durable_ = durable; }

    Result<void> write(std::string_view data);
    Result<void> commit();
    // Drops the temporary file; the target is untouched (unless written directly).
    void abort() noexcept;

    // The file commit() replaces (symbolic links resolved for create_output).
    const std::filesystem::path& target() const { return target_; }
    // The named temporary file; empty when it has no name (O_TMPFILE) or when writing directly.
    const std::filesystem::path& temp_path() const { return temp_; }
    // True when the target is written directly (not a regular file).
    bool direct() const { return direct_; }

private:
    AtomicFile() = default;
    // A temporary file for `target` with these permission bits (and owner, when not -1).
    static Result<AtomicFile> open_temp(const std::filesystem::path& target, unsigned mode,
                                        long uid, long gid);
    std::filesystem::path target_, temp_;
    int fd_ = -1;
    bool direct_ = false;
    bool durable_ = true;
};

// Writes the whole content atomically (AtomicFile::create: a file of kpkg's own).
Result<void> write_file_atomic(const std::filesystem::path& target, std::string_view data,
                               int mode = 0644);

// The same without fsync (set_durable(false)): for cache files that are checked when read.
Result<void> write_cache_file(const std::filesystem::path& target, std::string_view data,
                              int mode = 0644);

// A cache file opened for reading as caches must read theirs: never through a symbolic link,
// never blocking (a FIFO planted in a cache must not stop a run), and only a regular file;
// anything else is not opened, and why() says what it was.
class CacheFile {
public:
    explicit CacheFile(const std::filesystem::path& p);
    ~CacheFile();
    CacheFile(const CacheFile&) = delete;
    CacheFile& operator=(const CacheFile&) = delete;
    bool ok() const { return fd_ >= 0; }
    int fd() const { return fd_; }
    std::uint64_t size() const { return static_cast<std::uint64_t>(sb_.st_size); }
    // The open's errno when it failed (0 when the file was opened and is not regular).
    int error() const { return errno_; }
    const char* why() const { return why_; }
    // Up to `n` bytes from `offset` (fewer at the end of the file).
    std::string read(std::uint64_t offset, std::size_t n) const;
    // The whole file, when it is open and at most `limit` bytes.
    std::optional<std::string> read_whole(std::uint64_t limit) const;

private:
    int fd_ = -1;
    int errno_ = 0;
    struct stat sb_ {};
    const char* why_ = "";
};

// Writes the whole content to a file the user named (AtomicFile::create_output).
Result<void> write_output_file(const std::filesystem::path& target, std::string_view data);

} // namespace kpkg
