// Writing files so that readers see the old content or the whole new content, never a part.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "kpkg/core/result.hpp"

namespace kpkg {

// A file being written: data goes to a temporary file beside the target (same directory, so the
// rename is atomic); commit() flushes, fsyncs and renames it over the target. Destroying an
// uncommitted AtomicFile removes the temporary file, so a failed run leaves nothing behind.
class AtomicFile {
public:
    static Result<AtomicFile> create(const std::filesystem::path& target, int mode = 0644);
    AtomicFile(AtomicFile&& o) noexcept;
    AtomicFile& operator=(AtomicFile&& o) noexcept;
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();

    Result<void> write(std::string_view data);
    Result<void> commit();
    // Drops the temporary file; the target is untouched.
    void abort() noexcept;

    const std::filesystem::path& target() const { return target_; }
    const std::filesystem::path& temp_path() const { return temp_; }

private:
    AtomicFile() = default;
    std::filesystem::path target_, temp_;
    int fd_ = -1;
};

// Writes the whole content atomically.
Result<void> write_file_atomic(const std::filesystem::path& target, std::string_view data,
                               int mode = 0644);

} // namespace kpkg
