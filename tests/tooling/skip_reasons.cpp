// Not a test of its own: tests/tooling/check_ci_summary.py runs it (with --gtest_output=xml) and
// checks that CI's summary (.ci/summary.py) counts each skip by the reason the helpers of
// tests/support write. One case passes and one fails, so the counts are checked too.
#include <gtest/gtest.h>

#include "support/support.hpp"

using namespace kpkg::test;

TEST(SkipReasons, Kubectl) {
    GTEST_SKIP() << missing_tool(kubectl_1_32, kubectl_1_32_path);
}

TEST(SkipReasons, ToolWithoutDetail) {
    GTEST_SKIP() << missing_tool("example-tool");
}

TEST(SkipReasons, ToolWithDetail) {
    GTEST_SKIP() << missing_tool("example-tool", "Debian package example (and more: text)");
}

TEST(SkipReasons, AsRoot) {
    GTEST_SKIP() << running_as_root("every file is readable");
}

TEST(SkipReasons, Corpus) {
    GTEST_SKIP() << corpus_absent();
}

TEST(SkipReasons, Unattributed) {
    GTEST_SKIP() << "some reason no helper writes";
}

TEST(SkipReasons, Passes) {
    EXPECT_EQ(missing_tool("x"), "missing tool: x");
    EXPECT_EQ(missing_tool("x", "y"), "missing tool: x (y)");
}

TEST(SkipReasons, Fails) {
    ADD_FAILURE() << "this case fails on purpose";
}
