// oci::parallel_gzip: the same bytes whatever the number of threads, and a gzip stream every
// reader takes.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kpkg/core/threads.hpp"
#include "kpkg/oci/gzip.hpp"
#include "kpkg/oci/layer.hpp"
#include "support/support.hpp"

namespace kpkg::oci {
namespace {

// Text-like input of `n` bytes (compressible, not trivially).
std::string sample(std::size_t n) {
    std::mt19937 rng(42);
    static const char* words[] = {"apiVersion: ", "kind: ",  "metadata:\n", "  name: ", "spec:\n",
                                  "olm.package",  "channel", "replaces",    "- ",       "\n"};
    std::string s;
    while (s.size() < n) {
        s += words[rng() % 10];
        s += std::to_string(rng() % 1000);
    }
    s.resize(n);
    return s;
}

TEST(ParallelGzip, SameBytesForAnyNumberOfThreads) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{131072}, std::size_t{131073},
                          std::size_t{1} << 21}) {
        const std::string data = sample(n);
        auto one = parallel_gzip(data, 6, 1);
        ASSERT_TRUE(one) << one.error().message;
        for (unsigned t : {2u, 3u, 8u, 0u}) {
            auto many = parallel_gzip(data, 6, t);
            ASSERT_TRUE(many);
            EXPECT_EQ(*many, *one) << n << " bytes, " << t << " threads";
        }
        // (libarchive, behind decompress(), takes an empty stream for no archive at all.)
        if (n > 0) {
            auto back = decompress(*one, n + 1, "test");
            ASSERT_TRUE(back) << n << ": " << back.error().message;
            EXPECT_EQ(*back, data) << n;
        }
        // A fixed header: no name, mtime 0, OS 3.
        EXPECT_EQ(one->substr(0, 10), std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10));
    }
}

TEST(ParallelGzip, GunzipReadsIt) {
    test::TempDir d;
    const std::string data = sample(std::size_t{3} << 20);
    auto gz = parallel_gzip(data);
    ASSERT_TRUE(gz);
    EXPECT_LT(gz->size(), data.size() / 2);
    d.write("x.gz", *gz);
    d.write("x", data);
    const std::string cmd = "gzip -t " + (d / "x.gz").string() + " && gzip -dc " +
                            (d / "x.gz").string() + " | cmp -s - " + (d / "x").string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// The process's address space in KiB (VmSize).
long vm_size_kib() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmSize:", 0) == 0) return std::atol(line.c_str() + 7);
    return -1;
}

// Under an address-space limit (ulimit -v) that leaves no room for a thread's stack, no thread
// starts: the calling thread does all the work, and the bytes are the same. Runs in a fresh
// process (this test binary again): one that ran threads before keeps their stacks for reuse.
TEST(ParallelGzip, NoThreadCanStartTheCallerCompressesAll) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
#else
    if (std::getenv("KPKG_TEST_LIMITED_CHILD") == nullptr) {
        char self[4096];
        const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
        ASSERT_GT(n, 0);
        self[n] = '\0';
        auto r = test::run_program(
            {self, "--gtest_filter=ParallelGzip.NoThreadCanStartTheCallerCompressesAll"},
            {"KPKG_TEST_LIMITED_CHILD=1"});
        EXPECT_EQ(r.exit_code, 0) << test::describe(r);
        EXPECT_TRUE(test::contains(r.out, "[  PASSED  ] 1 test")) << test::describe(r);
        return;
    }
    const std::string data = sample(std::size_t{600} << 10);
    auto expected = parallel_gzip(data, 6, 1);
    ASSERT_TRUE(expected);
    const long kib = vm_size_kib();
    ASSERT_GT(kib, 0);
    // Room for the pieces and zlib's state, not for an 8 MiB thread stack.
    const rlim_t limit = static_cast<rlim_t>(kib + 4096) * 1024;
    const struct rlimit rl { limit, limit };
    ASSERT_EQ(::setrlimit(RLIMIT_AS, &rl), 0);
    std::jthread t = try_thread([] {});
    EXPECT_FALSE(t.joinable()) << "a thread started under the limit: the test proves nothing";
    std::vector<std::jthread> pool;
    EXPECT_FALSE(try_start(pool, [] {}));
    EXPECT_TRUE(pool.empty());
    auto got = parallel_gzip(data, 6, 4);
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(*got, *expected);
#endif
}

} // namespace
} // namespace kpkg::oci
