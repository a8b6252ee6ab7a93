#include "kpkg/core/memory.hpp"

#include <sys/mman.h>

#include <cstdint>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace kpkg {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kWorthIt = std::size_t{256} << 10;

} // namespace

void prefault(void* p, std::size_t n) {
    if (p == nullptr || n < kWorthIt) return;
    const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(p) + n) & ~(kPage - 1);
    if (end <= begin) return;
    // EINVAL on kernels without it, ENOMEM/EFAULT never for memory malloc gave: nothing to do
    // either way, the pages then come in one fault at a time.
    (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}

void reserve_prefaulted(std::string& out, std::size_t n) {
    out.reserve(n);
    if (n >= kWorthIt) prefault(out.data() + out.size(), out.capacity() - out.size());
}

} // namespace kpkg
