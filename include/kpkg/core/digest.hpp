// SHA-256 digests, as OCI and catalog locks use them ("sha256:<64 hex>").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "kpkg/core/result.hpp"

namespace kpkg {

// Incremental SHA-256 (libcrypto's implementation, linked statically).
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    Sha256& update(const void* data, std::size_t len);
    Sha256& update(std::string_view s) { return update(s.data(), s.size()); }
    // The raw 32-byte digest; the object must not be updated afterwards.
    std::array<std::uint8_t, 32> finish();
    // "sha256:" followed by 64 lower-case hex digits.
    std::string finish_digest();

private:
    alignas(8) unsigned char ctx_[112]; // SHA256_CTX, kept opaque here
};

std::string to_hex(const std::uint8_t* data, std::size_t len);

// "sha256:<hex>" of a byte string.
std::string sha256_digest(std::string_view data);
// The SHA-224 of a byte string (OLM hashes RBAC names with it).
std::array<std::uint8_t, 28> sha224(std::string_view data);
// "sha256:<hex>" of a file's content, streamed.
Result<std::string> sha256_file(const std::filesystem::path& path);

// Checks "algorithm:hex" syntax as OCI defines it; for sha256, exactly 64 lower-case hex digits.
Result<void> check_digest(std::string_view digest);

} // namespace kpkg
