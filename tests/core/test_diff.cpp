// The unified diff (`diff -u` with labels) that pko's fixture checks and kube's apply --diff show.
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "kpkg/core/diff.hpp"

using kpkg::text::unified_diff;

TEST(UnifiedDiff, UnifiedLikeDiff) {
    EXPECT_EQ(unified_diff("a\nb\n", "a\nb\n", "F", "A"), "");
    EXPECT_EQ(unified_diff("a\nb\nc\n", "a\nB\nc", "F/x", "A/x"),
              "--- F/x\n+++ A/x\n@@ -1,3 +1,3 @@\n a\n-b\n-c\n+B\n+c\n\\ No newline at end of "
              "file");
    std::string a, b;
    for (int i = 1; i <= 20; ++i) {
        a += std::to_string(i) + "\n";
        b += (i == 10 ? std::string("ten") : std::to_string(i)) + "\n";
    }
    EXPECT_EQ(unified_diff(a, b, "F", "A"),
              "--- F\n+++ A\n@@ -7,7 +7,7 @@\n 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13");
    EXPECT_EQ(unified_diff("", "x\n", "F", "A"), "--- F\n+++ A\n@@ -0,0 +1 @@\n+x");
}

// Texts that differ in many lines: the shortest script while it has at most 2,000 edits (each
// changed line one deletion and one insertion), past that every line deleted and inserted.
TEST(UnifiedDiff, ManyChangedLines) {
    auto count = [](const std::string& diff, char sign) {
        std::size_t n = 0, at = 0;
        while ((at = diff.find(std::string("\n") + sign, at)) != std::string::npos) {
            const bool header = diff.compare(at + 1, 4, std::string(3, sign) + " ") == 0;
            if (!header) ++n;
            ++at;
        }
        return n;
    };
    auto texts = [](int lines, int every) {
        std::string a, b;
        for (int i = 0; i < lines; ++i) {
            a += "line " + std::to_string(i) + "\n";
            b += (i % every == 0 ? "changed " : "line ") + std::to_string(i) + "\n";
        }
        return std::pair{a, b};
    };
    const auto [a1, b1] = texts(3000, 5); // 600 changed lines: 1,200 edits
    const std::string d1 = unified_diff(a1, b1, "F", "A");
    EXPECT_EQ(count(d1, '-'), 600u);
    EXPECT_EQ(count(d1, '+'), 600u);
    const auto [a2, b2] = texts(3000, 2); // 1,500 changed lines: 3,000 edits
    const std::string d2 = unified_diff(a2, b2, "F", "A");
    EXPECT_EQ(count(d2, '-'), 3000u);
    EXPECT_EQ(count(d2, '+'), 3000u);
}
