// Memory that is about to be written whole.
//
// Every first touch of a fresh 4 KiB page costs a page fault; on virtual machines one costs
// several microseconds, so a 24 MB buffer filled page by page spends most of its time in the
// kernel. Populating the pages in one call (MADV_POPULATE_WRITE, Linux 5.14) costs a third of
// that. The bytes are not changed.
#pragma once

#include <cstddef>
#include <string>

namespace kpkg {

// Maps the whole pages inside [p, p + n) now. Does nothing below a few hundred KB (the faults
// are cheaper than the call) or when the kernel cannot do it.
void prefault(void* p, std::size_t n);

// out.reserve(n), with the reserved pages populated when n is large.
void reserve_prefaulted(std::string& out, std::size_t n);

// Huge pages for the heap. Most of what a short kpkg run allocates is fresh heap, a page fault per
// 4 KiB; in 2 MiB transparent huge pages it is one fault per 2 MiB (about what 10 small faults cost
// on a VM). Both calls only give advice: with THP off ("never") or on another C library, nothing
// changes but a little unused address space. Off when KPKG_HUGE_PAGES is "0".
//
// huge_heap(), once, first thing in main: the allocator keeps blocks up to 32 MiB in its heap
// (instead of a fresh mmap each) and grows it in 4 MiB steps; the part of the heap the next
// allocations come from starts at a 2 MiB boundary and is marked for huge pages. Costs resident
// memory: a huge page is resident whole once touched, and freed blocks stay in the heap.
void huge_heap();

// The same for the calling thread's own heap (a thread's allocations come from a heap of their
// own), at the start of a thread that allocates a lot. Once per heap; does nothing on the main
// thread or before huge_heap().
void huge_thread_heap();

// Whether huge_heap() took effect (not with KPKG_HUGE_PAGES=0 or under the sanitizers).
bool huge_heap_enabled();

} // namespace kpkg
