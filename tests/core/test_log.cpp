#include <gtest/gtest.h>

#include "kpkg/core/log.hpp"

using namespace kpkg;

namespace {
struct Captured {
    std::vector<std::pair<log::Level, std::string>> lines;
};
} // namespace

TEST(Log, SilentWithoutSink) {
    log::set_sink(nullptr);
    log::set_level(log::Level::trace);
    log::warning("nobody listens"); // must not crash or print
    SUCCEED();
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
