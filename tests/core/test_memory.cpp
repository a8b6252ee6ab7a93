// Huge pages for the heap (kpkg::huge_heap, huge_thread_heap) and prefaulting. The heap calls
// change the allocator of the whole process, so each case runs them in a forked child and reads
// the child's exit status.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kpkg/core/memory.hpp"

using namespace kpkg;

namespace {

// The VmFlags of the mapping holding `p`, from /proc/self/smaps; "" when none holds it.
std::string vm_flags_of(const void* p) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    std::ifstream f("/proc/self/smaps");
    std::string line;
    bool inside = false;
    while (std::getline(f, line)) {
        unsigned long lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > 8 &&
            line.find('-') < line.find(' ')) {
            inside = lo <= a && a < hi;
            continue;
        }
        if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
    }
    return "";
}

bool has_hg(const void* p) {
    return vm_flags_of(p).find(" hg ") != std::string::npos;
}

// Runs `body` in a forked child; its return value is the child's exit status.
int in_child(const std::function<int()>& body) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(body());
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

// Why the huge-page cases cannot run here, or "".
std::string cannot_run() {
    if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").fail())
        return "the kernel has no transparent huge pages";
    const int status = in_child([] {
        ::unsetenv("KPKG_HUGE_PAGES");
        huge_heap();
        return huge_heap_enabled() ? 0 : 1;
    });
    if (status != 0) return "huge_heap does nothing in this build (sanitizers or not glibc)";
    return "";
}

// Blocks allocated and written, freed when it goes out of scope.
struct Blocks {
    std::vector<void*> all;
    Blocks() = default;
    Blocks(const Blocks&) = delete;
    Blocks& operator=(const Blocks&) = delete;
    ~Blocks() {
        for (void* p : all)
            std::free(p);
    }
    // `n` more blocks of `size` bytes; the last one, or nullptr when one cannot be had.
    void* add(std::size_t n, std::size_t size) {
        for (std::size_t i = 0; i < n; ++i) {
            auto* p = static_cast<char*>(std::malloc(size));
            if (p == nullptr) return nullptr;
            std::memset(p, 0x5a, size);
            all.push_back(p);
        }
        return all.back();
    }
};

// Runs `body` on a new thread; its return value.
int on_a_thread(const std::function<int()>& body) {
    int rc = 0;
    std::thread t([&] { rc = body(); });
    t.join();
    return rc;
}

} // namespace

TEST(HugeHeap, AllocationsAfterItComeFromAMarkedRange) {
    if (auto why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
    EXPECT_EQ(in_child([] {
                  ::unsetenv("KPKG_HUGE_PAGES");
                  Blocks before;
                  void* old = before.add(1, 100);
                  huge_heap();
                  {
                      Blocks keep;
                      void* small = keep.add(1000, 200);
                      void* big = keep.add(3, 1 << 20); // kept in the heap, not mapped alone
                      if (small == nullptr || big == nullptr) return 2;
                      if (has_hg(old)) return 3; // what was there before is left as it was
                      if (!has_hg(small)) return 4;
                      if (!has_hg(big)) return 5;
                  }
                  // The allocator still works after freeing all of it, for any size.
                  Blocks again;
                  if (again.add(10, 40 << 20) == nullptr) return 6; // over 32 MiB: mapped
                  if (again.add(2000, 64) == nullptr) return 7;
                  return 0;
              }),
              0);
}

TEST(HugeHeap, AThreadHeapIsMarkedOnce) {
    if (auto why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
    EXPECT_EQ(in_child([] {
                  ::unsetenv("KPKG_HUGE_PAGES");
                  huge_heap();
                  return on_a_thread([] {
                      huge_thread_heap();
                      huge_thread_heap(); // the second call finds the heap done
                      Blocks keep;
                      void* p = keep.add(500, 300);
                      if (p == nullptr) return 2;
                      return has_hg(p) ? 0 : 3;
                  });
              }),
              0);
}

TEST(HugeHeap, ThreadCallBeforeHugeHeapChangesNothing) {
    if (auto why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
    EXPECT_EQ(in_child([] {
                  return on_a_thread([] {
                      huge_thread_heap();
                      Blocks keep;
                      void* p = keep.add(100, 300);
                      return p == nullptr || has_hg(p) ? 2 : 0;
                  });
              }),
              0);
}

TEST(HugeHeap, OffWhenTheEnvironmentSaysSo) {
    if (auto why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
    EXPECT_EQ(in_child([] {
                  ::setenv("KPKG_HUGE_PAGES", "0", 1);
                  huge_heap();
                  if (huge_heap_enabled()) return 2;
                  Blocks keep;
                  void* p = keep.add(1000, 200);
                  if (p == nullptr || has_hg(p)) return 3;
                  return 0;
              }),
              0);
}

TEST(Prefault, ReserveKeepsTheContents) {
    std::string s = "abc";
    reserve_prefaulted(s, 1 << 20);
    EXPECT_EQ(s, "abc");
    EXPECT_GE(s.capacity(), std::size_t{1} << 20);
    s.append(1 << 20, 'x');
    EXPECT_EQ(s.size(), (std::size_t{1} << 20) + 3);
    std::vector<char> v(1 << 20, 'y');
    prefault(v.data(), v.size());
    prefault(nullptr, 1 << 20);
    prefault(v.data(), 10);
    EXPECT_EQ(v.front(), 'y');
    EXPECT_EQ(v.back(), 'y');
}
