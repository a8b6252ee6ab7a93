#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kpkg/core/log.hpp"

using namespace kpkg;

namespace {
struct Captured {
    std::vector<std::pair<log::Level, std::string>> lines;
};
} // namespace

// What `fn` writes to file descriptors 1 and 2 (both sent to one temporary file meanwhile).
template <class F>
std::string written_to_stdout_and_stderr(F fn) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::FILE* tmp = std::tmpfile();
    if (tmp == nullptr) return "(no temporary file)";
    const int saved_out = ::dup(1), saved_err = ::dup(2);
    ::dup2(::fileno(tmp), 1);
    ::dup2(::fileno(tmp), 2);
    fn();
    std::fflush(stdout);
    std::fflush(stderr);
    ::dup2(saved_out, 1);
    ::dup2(saved_err, 2);
    ::close(saved_out);
    ::close(saved_err);
    std::string s;
    std::rewind(tmp);
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, tmp)) > 0;)
        s.append(buf, n);
    std::fclose(tmp);
    return s;
}

TEST(Log, SilentWithoutSink) {
    // A sink that was installed and then removed hears nothing more, and nothing goes to
    // standard output or standard error instead, at any level.
    int heard = 0;
    log::set_sink([&heard](log::Level, std::string_view) { ++heard; });
    log::set_level(log::Level::trace);
    log::warning("heard");
    ASSERT_EQ(heard, 1);
    log::set_sink(nullptr);
    const std::string printed = written_to_stdout_and_stderr([] {
        log::error("nobody listens");
        log::warning("nobody listens");
        log::info("nobody listens");
        log::debug("nobody listens");
        log::write(log::Level::trace, "nobody listens");
    });
    EXPECT_EQ(printed, "");
    EXPECT_EQ(heard, 1);
    log::set_level(log::Level::info);
}

TEST(Log, LevelFiltersMessages) {
    Captured c;
    log::set_sink(
        [&c](log::Level l, std::string_view m) { c.lines.emplace_back(l, std::string(m)); });
    log::set_level(log::Level::error); // -q
    log::warning("w");
    log::info("i");
    log::error("e");
    ASSERT_EQ(c.lines.size(), 1u);
    EXPECT_EQ(c.lines[0].second, "e");

    c.lines.clear();
    log::set_level(log::Level::info); // default
    log::debug("d");
    log::info("i");
    log::warning("w");
    ASSERT_EQ(c.lines.size(), 2u);
    EXPECT_EQ(c.lines[0].first, log::Level::info);

    c.lines.clear();
    log::set_level(log::Level::debug); // -v
    log::debug("d");
    EXPECT_EQ(c.lines.size(), 1u);
    EXPECT_FALSE(log::enabled(log::Level::trace));
    log::set_sink(nullptr);
}
