#include <gtest/gtest.h>

#include "kpkg/core/text.hpp"

using namespace kpkg::text;

TEST(Text, EditDistance) {
    EXPECT_EQ(edit_distance("", ""), 0u);
    EXPECT_EQ(edit_distance("abc", ""), 3u);
    EXPECT_EQ(edit_distance("catalog", "catlog"), 1u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Text, Closest) {
    std::vector<std::string> cmds{"bundle", "catalog", "resolve", "version"};
    EXPECT_EQ(closest("catlog", cmds), "catalog");
    EXPECT_EQ(closest("versoin", cmds), "version");
    EXPECT_EQ(closest("res", cmds), "resolve");
    EXPECT_EQ(closest("zzzzzzzz", cmds), std::nullopt);
    EXPECT_EQ(closest("", cmds), std::nullopt);
}

TEST(Text, TrimSplitJoin) {
    EXPECT_EQ(trim("  a b \n"), "a b");
    EXPECT_EQ(trim("   "), "");
    auto parts = split("a,,b", ',');
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[1], "");
    EXPECT_EQ(join({"x", "y", "z"}, ", "), "x, y, z");
    EXPECT_EQ(quote("n"), "\"n\"");
}
