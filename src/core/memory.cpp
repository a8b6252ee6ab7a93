#include "kpkg/core/memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KPKG_OWN_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define KPKG_OWN_MALLOC 0
#endif
#endif
#ifndef KPKG_OWN_MALLOC
#define KPKG_OWN_MALLOC 1
#endif

namespace kpkg {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kWorthIt = std::size_t{256} << 10;

#if defined(__GLIBC__) && KPKG_OWN_MALLOC && defined(MADV_HUGEPAGE)

constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
// Heap growth in one step: two huge pages.
constexpr std::uintptr_t kStep = 2 * kHuge;
// glibc's thread heaps are reserved as 64 MiB regions aligned to their size.
constexpr std::uintptr_t kThreadHeap = std::uintptr_t{64} << 20;
// glibc's chunk header: the previous chunk's size and this chunk's size.
constexpr std::uintptr_t kHeader = 2 * sizeof(std::size_t);

std::atomic<bool> g_enabled{false};

std::uintptr_t align_up(std::uintptr_t a, std::uintptr_t to) {
    return (a + to - 1) & ~(to - 1);
}

// The request that makes the allocator cut a block of `chunk` bytes (a multiple of 16): its
// header word is counted in the block.
std::size_t request_for_chunk(std::uintptr_t chunk) {
    return chunk - sizeof(std::size_t);
}

// The thread heaps huge_thread_heap prepares, at most (past that, a heap is left as it is).
constexpr std::size_t kThreadHeaps = 64;
// The blocks taken by move_top_to, one per thread heap and the main heap's last: kept here for
// the life of the process, so they stay reachable.
void* g_fillers[kThreadHeaps + 1] = {};
constexpr std::size_t kMainSlot = kThreadHeaps;

// Makes the next allocations out of the heap whose free top starts at `top` come from `boundary`
// on: a block is taken that ends where `boundary` starts (it is never written past its header,
// so it costs address space, not memory), then the heap grown by kStep past it. Nothing the
// allocator wrote lies at or after `boundary` then, so the range can still be marked: a range
// touched before the advice keeps its small pages.
bool move_top_to(std::uintptr_t top, std::uintptr_t boundary, std::size_t slot) {
    if (boundary <= top + kHeader + 32) return false;
    g_fillers[slot] = std::malloc(request_for_chunk(boundary - kHeader - top));
    if (g_fillers[slot] == nullptr) return false;
    // Grow the heap, then give the growth back to its free top: blocks under 32 MiB stay in the
    // heap, and its top is not trimmed below 64 MiB.
    std::free(std::malloc(kStep));
    return true;
}

#endif

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

#if defined(__GLIBC__) && KPKG_OWN_MALLOC && defined(MADV_HUGEPAGE)

void huge_heap() {
    if (g_enabled.load()) return;
    if (const char* v = std::getenv("KPKG_HUGE_PAGES"); v != nullptr && std::strcmp(v, "0") == 0)
        return;
    // What glibc's own thresholds settle at after a program frees its first large blocks: blocks
    // up to 32 MiB come from the heap, and the heap's top is not trimmed below twice that.
    if (mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1 || mallopt(M_TRIM_THRESHOLD, 64 << 20) != 1 ||
        mallopt(M_TOP_PAD, static_cast<int>(kStep)) != 1)
        return;
    g_enabled.store(true);
    // The main heap is one contiguous region ending at the program break, and its free top (the
    // size mallinfo2 reports as keepcost) ends there too.
    const auto brk = reinterpret_cast<std::uintptr_t>(::sbrk(0));
    const std::size_t keep = mallinfo2().keepcost;
    if (brk == static_cast<std::uintptr_t>(-1) || keep == 0 || keep > brk) return;
    const std::uintptr_t top = brk - keep;
    const std::uintptr_t boundary = align_up(brk + kPage, kHuge);
    if (!move_top_to(top, boundary, kMainSlot)) return;
    const auto end = reinterpret_cast<std::uintptr_t>(::sbrk(0)) & ~(kHuge - 1);
    if (end > boundary)
        (void)::madvise(reinterpret_cast<void*>(boundary), end - boundary, MADV_HUGEPAGE);
}

void huge_thread_heap() {
    if (!g_enabled.load()) return;
    void* probe = std::malloc(64);
    if (probe == nullptr) return;
    const auto p = reinterpret_cast<std::uintptr_t>(probe);
    // On the main heap, below the program break (the main thread, or a thread glibc gave the
    // main heap): done already.
    if (p < reinterpret_cast<std::uintptr_t>(::sbrk(0))) {
        std::free(probe);
        return;
    }
    // Each heap once. Nothing may be allocated between the probe and the filler (it would move
    // the top), hence a fixed table.
    const std::uintptr_t base = p & ~(kThreadHeap - 1);
    static std::mutex m;
    static std::uintptr_t done[kThreadHeaps] = {};
    std::size_t slot = 0;
    {
        std::lock_guard<std::mutex> lock(m);
        while (slot < std::size(done) && done[slot] != 0 && done[slot] != base)
            ++slot;
        if (slot == std::size(done) || done[slot] == base) {
            std::free(probe);
            return;
        }
        done[slot] = base;
    }
    // In a heap made for this thread the probe came from the top, which now starts right after
    // it (its header, 64 bytes and the size word rounded to 16). If not (a heap left by a thread
    // that ended), the marked range may hold pages in use already; they keep their small pages.
    const std::uintptr_t top = p - kHeader + 80;
    const std::uintptr_t boundary = align_up(top + kPage, kHuge);
    if (boundary + kStep + kHuge <= base + kThreadHeap && move_top_to(top, boundary, slot))
        (void)::madvise(reinterpret_cast<void*>(boundary), kStep, MADV_HUGEPAGE);
    std::free(probe);
}

bool huge_heap_enabled() {
    return g_enabled.load();
}

#else

void huge_heap() {}
void huge_thread_heap() {}
bool huge_heap_enabled() {
    return false;
}

#endif

} // namespace kpkg
