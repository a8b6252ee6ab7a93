// oci::parallel_gzip: the same bytes whatever the number of threads, and a gzip stream every
// reader takes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

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

} // namespace
} // namespace kpkg::oci
