// kpkg/core/threads.hpp: threads that may not start, and exceptions carried to the joining
// thread. (A thread that cannot start is tested in test_gzip.cpp, in a fresh process.)
#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kpkg/core/threads.hpp"

using namespace kpkg;

TEST(Threads, TryStartRunsEachThread) {
    std::atomic<int> ran{0};
    std::vector<std::jthread> pool;
    for (int i = 0; i < 4; ++i)
        ASSERT_TRUE(try_start(pool, [&] { ++ran; }));
    EXPECT_EQ(pool.size(), 4u);
    pool.clear(); // joined
    EXPECT_EQ(ran.load(), 4);
    std::jthread t = try_thread([&] { ++ran; });
    ASSERT_TRUE(t.joinable());
    t.join();
    EXPECT_EQ(ran.load(), 5);
}

TEST(Threads, FirstErrorKeepsTheFirstExceptionForTheJoiningThread) {
    FirstError errors;
    EXPECT_FALSE(errors.failed());
    EXPECT_NO_THROW(errors.rethrow());
    EXPECT_TRUE(errors.run([] {}));
    EXPECT_FALSE(errors.failed());

    std::vector<std::jthread> pool;
    std::atomic<int> started{0};
    for (int i = 0; i < 3; ++i)
        ASSERT_TRUE(try_start(pool, [&, i] {
            ++started;
            errors.run([i] {
                if (i == 1) throw std::bad_alloc();
            });
        }));
    pool.clear();
    EXPECT_EQ(started.load(), 3);
    EXPECT_TRUE(errors.failed());
    EXPECT_THROW(errors.rethrow(), std::bad_alloc);
    // Later failures do not replace the first.
    EXPECT_FALSE(errors.run([] { throw std::runtime_error("second"); }));
    EXPECT_THROW(errors.rethrow(), std::bad_alloc);
}
