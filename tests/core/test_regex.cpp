// Go's regular expressions (RE2 syntax, a Pike VM on a step budget) and gobwas/glob patterns:
// the engine itself; the template functions that use it are tested in tests/template.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kpkg/core/regex.hpp"

namespace re = kpkg::re;

namespace {

// Deep nesting and huge repetitions are refused when compiling, without deep recursion.
TEST(Regex, HostileExpressionsAreRefused) {
    EXPECT_THROW(re::Regex("a(?i)*"), re::SyntaxError);
    EXPECT_THROW(re::Regex(std::string(5000, '(') + std::string(5000, ')')), re::SyntaxError);
    EXPECT_THROW(re::Regex("(a{1000}){1000}"), re::SyntaxError);
    EXPECT_THROW(re::Regex("a{1001}"), re::SyntaxError);
}

// Each search draws on the budget it is given; once spent, LimitError, at once.
TEST(Regex, BudgetIsSharedBySearches) {
    re::Budget b(10'000);
    const re::Regex r("^(a|b)*c$");
    const std::string text(500, 'a');
    EXPECT_FALSE(r.matches(text, &b));
    const std::uint64_t one = 10'000 - b.left;
    EXPECT_GT(one, 500u); // at least a step per character
    int searches = 1;
    try {
        for (; searches < 100; ++searches)
            r.matches(text, &b);
    } catch (const re::LimitError& e) {
        EXPECT_NE(std::string(e.what()).find("more than 10000 in all"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(searches, static_cast<int>(10'000 / one));
    EXPECT_EQ(b.left, 0u);
    EXPECT_THROW(re::Regex("a").matches("a", &b), re::LimitError);
    // Without a budget a call has one of its own, of the default size.
    EXPECT_TRUE(re::Regex("a").matches("a"));
}

TEST(Regex, GlobUnit) {
    re::Glob g("a/**/b?.{x,y}");
    EXPECT_TRUE(g.match("a/c/d/b1.x"));
    EXPECT_TRUE(g.match("a//b1.y"));
    EXPECT_FALSE(g.match("a/c/b12.x"));
    EXPECT_FALSE(g.match("a/c/b/.x"));
    re::Glob lit("x.y+z");
    EXPECT_TRUE(lit.match("x.y+z"));
    EXPECT_FALSE(lit.match("xay+z"));
    EXPECT_THROW(re::Glob("{a,b"), re::SyntaxError);
}

TEST(Regex, CapturesAsGo) {
    auto caps = [](const char* pattern, const char* s) {
        std::vector<std::ptrdiff_t> c;
        if (!re::Regex(pattern).search(s, 0, c)) return std::string("none");
        std::string out;
        for (auto x : c)
            out += std::to_string(x) + " ";
        return out;
    };
    // x* over an x that can match empty is compiled as (x+)? (golang.org/issue/46123): the
    // group takes part with an empty match
    EXPECT_EQ(caps("(x?)*", "bb"), "0 0 0 0 ");
    EXPECT_EQ(caps("(x?)*|b", "bb"), "0 0 0 0 ");
    EXPECT_EQ(caps("(a*)+", "b"), "0 0 0 0 ");
    // a second, empty iteration of + is not taken (RE2, unlike Perl)
    EXPECT_EQ(caps("(([ab])?)+", "bb"), "0 2 1 2 1 2 ");
    EXPECT_EQ(caps("(a|ab)(c|bcd)(d*)", "abcd"), "0 4 0 1 1 4 4 4 ");
    EXPECT_EQ(caps("(a+)(b+)?", "aab"), "0 3 0 2 2 3 ");
    EXPECT_EQ(caps("(a+)(b+)?", "aa"), "0 2 0 2 -1 -1 ");
    EXPECT_EQ(caps("(a+?)(a*?)$", "aaa"), "0 3 0 1 1 3 ");
    EXPECT_EQ(caps("b", "aaa"), "none");
}

} // namespace
