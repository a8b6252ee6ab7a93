// Starting threads when the process may not be able to: a limit on threads or on address space
// (ulimit -u, ulimit -v, a container's pids limit) makes a thread's constructor throw. The work
// kpkg spreads over threads can always be done by the calling thread instead, so a thread that
// cannot be started is not an error: the caller does that share itself. The threads are
// std::jthread, joined when they go out of scope, so that an exception on the calling thread
// (out of memory) unwinds past them instead of ending the program.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "kpkg/core/memory.hpp"

namespace kpkg {

// f on a new thread, or a thread that is not joinable when none could be started (f not run).
template <class F>
std::jthread try_thread(F&& f) {
    try {
        return std::jthread(std::forward<F>(f));
    } catch (const std::system_error&) {
        return std::jthread();
    }
}

// Adds a thread running f to pool; false when none could be started (f not run, pool as it was).
template <class F>
bool try_start(std::vector<std::jthread>& pool, F&& f) {
    if (pool.capacity() == pool.size()) { // room first, so that no started thread is lost
        try {
            pool.reserve(pool.size() * 2 + 1);
        } catch (const std::bad_alloc&) {
            return false;
        }
    }
    std::jthread t = try_thread(std::forward<F>(f));
    if (!t.joinable()) return false;
    pool.push_back(std::move(t)); // room reserved: cannot throw
    return true;
}

// The first exception thrown by any of a group of threads, for the thread that joins them to
// rethrow (an exception escaping a thread's function would end the program: out of memory on a
// worker must reach the user as "out of memory", like on the main thread).
class FirstError {
public:
    // Runs f; an exception it throws is kept (the first one only) and false returned.
    template <class F>
    bool run(F&& f) noexcept {
        try {
            f();
            return true;
        } catch (...) {
            set(std::current_exception());
            return false;
        }
    }
    void set(std::exception_ptr e) noexcept {
        std::lock_guard<std::mutex> lock(mu_);
        if (!error_) error_ = std::move(e);
        failed_.store(true);
    }
    bool failed() const noexcept { return failed_.load(); }
    // Throws the kept exception, if any (call after joining the threads).
    void rethrow() {
        if (failed_.load()) std::rethrow_exception(error_);
    }

private:
    std::mutex mu_;
    std::exception_ptr error_;
    std::atomic<bool> failed_{false};
};

// Runs job(i, t) for every i in [0, n) on up to `threads` threads, the calling one included (t is
// the thread's index, 0 for the calling one): each takes the next i until none is left, and a
// thread that cannot be started leaves its share to the others. The threads' heaps are in huge
// pages (huge_thread_heap). The first exception a job throws stops the others taking more, and
// is rethrown here once they have stopped.
template <class Job>
void parallel_for(std::size_t n, unsigned threads, Job job) {
    std::atomic<std::size_t> next{0};
    FirstError errors;
    auto run = [&](unsigned t) {
        huge_thread_heap();
        if (!errors.run([&] {
                for (std::size_t i; (i = next.fetch_add(1)) < n;)
                    job(i, t);
            }))
            next.store(n);
    };
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < threads; ++t)
        if (!try_start(pool, [&run, t] { run(t); })) break;
    run(0);
    for (auto& th : pool)
        th.join();
    errors.rethrow();
}

} // namespace kpkg
