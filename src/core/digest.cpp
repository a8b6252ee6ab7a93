// Uses the low-level SHA256_* functions on purpose: the EVP interface initialises OpenSSL's
// provider machinery on first use, which costs ~1.5 ms per process; these do not.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "kpkg/core/digest.hpp"

#include <openssl/sha.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <unistd.h>

namespace kpkg {

static_assert(sizeof(SHA256_CTX) <= 112, "SHA256_CTX does not fit the opaque buffer");

static SHA256_CTX* ctx(unsigned char* p) {
    return reinterpret_cast<SHA256_CTX*>(p);
}

Sha256::Sha256() {
    SHA256_Init(ctx(ctx_));
}
Sha256::~Sha256() {
    std::memset(ctx_, 0, sizeof ctx_);
}

Sha256& Sha256::update(const void* data, std::size_t len) {
    SHA256_Update(ctx(ctx_), data, len);
    return *this;
}

std::array<std::uint8_t, 28> sha224(std::string_view data) {
    // SHA224() itself goes through EVP, whose provider machinery would be linked and started.
    SHA256_CTX c;
    SHA224_Init(&c);
    SHA224_Update(&c, data.data(), data.size());
    std::array<std::uint8_t, 28> out{};
    SHA224_Final(out.data(), &c);
    return out;
}

std::array<std::uint8_t, 32> Sha256::finish() {
    std::array<std::uint8_t, 32> out{};
    SHA256_Final(out.data(), ctx(ctx_));
    return out;
}

std::string Sha256::finish_digest() {
    auto d = finish();
    return "sha256:" + to_hex(d.data(), d.size());
}

std::string to_hex(const std::uint8_t* data, std::size_t len) {
    static const char digits[] = "0123456789abcdef";
    std::string s(len * 2, '0');
    for (std::size_t i = 0; i < len; ++i) {
        s[2 * i] = digits[data[i] >> 4];
        s[2 * i + 1] = digits[data[i] & 0xf];
    }
    return s;
}

std::string sha256_digest(std::string_view data) {
    return Sha256().update(data).finish_digest();
}

Result<std::string> sha256_file(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(
            Error::io(std::string("cannot open: ") + std::strerror(errno), {path.string()}));
    Sha256 h;
    // On the heap, per call: a thread_local array would be cleared at the start of every thread
    // of the process (16 fresh pages each), whether it ever hashes a file or not.
    constexpr std::size_t kChunk = std::size_t{1} << 16;
    const std::unique_ptr<char[]> buf(new char[kChunk]);
    for (;;) {
        ssize_t n = ::read(fd, buf.get(), kChunk);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            ::close(fd);
            return fail(
                Error::io(std::string("cannot read: ") + std::strerror(e), {path.string()}));
        }
        h.update(buf.get(), static_cast<std::size_t>(n));
    }
    ::close(fd);
    return h.finish_digest();
}

Result<void> check_digest(std::string_view digest) {
    auto colon = digest.find(':');
    auto bad = [&](const std::string& why) {
        return fail(Error::invalid("invalid digest \"" + std::string(digest) + "\": " + why));
    };
    if (colon == std::string_view::npos || colon == 0) return bad("expected algorithm:hex");
    std::string_view algo = digest.substr(0, colon), hex = digest.substr(colon + 1);
    for (char c : algo) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '.' ||
                  c == '_' || c == '-';
        if (!ok) return bad("bad character in algorithm");
    }
    if (hex.empty()) return bad("empty encoded part");
    if (algo == "sha256") {
        if (hex.size() != 64)
            return bad("sha256 needs 64 hex digits, got " + std::to_string(hex.size()));
        for (char c : hex)
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
                return bad("sha256 digits must be lower-case hex");
    } else {
        for (char c : hex)
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  c == '=' || c == '_' || c == '-'))
                return bad("bad character in encoded part");
    }
    return {};
}

} // namespace kpkg
