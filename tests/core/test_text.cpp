#include <sstream>

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

// Nothing is suggested when nothing is close: a short word is not "close" to every word of its
// length, and a few shared letters do not make a typo.
TEST(Text, ClosestOnlyWhenClose) {
    std::vector<std::string> flags{"-o",         "-h",         "-v",         "-q",
                                   "--output",   "--help",     "--verbose",  "--quiet",
                                   "--no-color", "--no-cache", "--libraries"};
    EXPECT_EQ(closest("-x", flags), std::nullopt);
    EXPECT_EQ(closest("--x", flags), std::nullopt);
    EXPECT_EQ(closest("--xyz", flags), std::nullopt);
    EXPECT_EQ(closest("--quick", flags), std::nullopt);
    EXPECT_EQ(closest("--nope", flags), std::nullopt);
    EXPECT_EQ(closest("--verbos", flags), "--verbose");
    EXPECT_EQ(closest("--librarys", flags), "--libraries");
    EXPECT_EQ(closest("-verbose", flags), "--verbose");
    EXPECT_EQ(closest("--no-colour", flags), "--no-color");
    // An abbreviation names one candidate, or nothing.
    EXPECT_EQ(closest("--lib", flags), "--libraries");
    EXPECT_EQ(closest("--no-c", flags), std::nullopt);

    std::vector<std::string> words{"ab", "packages", "channels", "bundles", "vault", "etcd"};
    EXPECT_EQ(closest("xy", words), std::nullopt);
    EXPECT_EQ(closest("foo", words), std::nullopt);
    EXPECT_EQ(closest("zzzzzzz", words), std::nullopt);
    EXPECT_EQ(closest("bundels", words), "bundles");
    EXPECT_EQ(closest("valt", words), "vault");
    // Two letters swapped is one typo.
    EXPECT_EQ(closest("valut", words), "vault");
    EXPECT_EQ(closest("etdc", words), "etcd");
    EXPECT_EQ(closest("defaultChanel", {"schema", "name", "defaultChannel", "description"}),
              "defaultChannel");
}

TEST(Text, TableAligns) {
    EXPECT_EQ(table({{"A", "BB", "C"}, {"aaa", "b", "c"}}), "A    BB  C\n"
                                                            "aaa  b   c\n");
}

// A cell longer than max_pad does not pad its column for every row: it pushes its own row.
TEST(Text, TableDoesNotPadToALongCell) {
    std::string long_cell(300, 'x');
    std::string out =
        table({{"NAME", "SKIPS", "RANGE"}, {"a", "b", "<1.0"}, {"c", long_cell, "<2"}});
    EXPECT_EQ(out, "NAME  SKIPS  RANGE\n"
                   "a     b      <1.0\n"
                   "c     " +
                       long_cell + "  <2\n");
}

// With a width (a terminal), rows wider than it wrap within their columns; every line fits.
TEST(Text, TableWrapsToTheWidth) {
    std::vector<std::vector<std::string>> rows{
        {"PACKAGE", "BUNDLE", "SKIPS"},
        {"vault", "vault-operator.v1.2.0", "vault-operator.v1.1.0,vault-operator.v1.1.1"},
        {"etcd", "etcdoperator.v0.9.4", "-"}};
    std::string unwrapped = table(rows);
    EXPECT_EQ(unwrapped, table(rows, {.width = 200}));
    std::string out = table(rows, {.width = 60});
    std::istringstream in(out);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) {
        EXPECT_LE(display_width(l), 60u) << l;
        lines.push_back(l);
    }
    ASSERT_EQ(lines.size(), 4u) << out;
    EXPECT_EQ(lines[0].find("SKIPS"), lines[1].find("vault-operator.v1.1.0,")) << out;
    // The continuation line holds the rest of the cell, in the same column.
    EXPECT_EQ(lines[2].find_first_not_of(' '), lines[1].find("vault-operator.v1.1.0,")) << out;
    EXPECT_EQ(lines[2].substr(lines[2].find_first_not_of(' ')), "vault-operator.v1.1.1") << out;
    EXPECT_EQ(lines[3].rfind("etcd ", 0), 0u) << out;
}

TEST(Text, WrapKeepsWordsWhole) {
    EXPECT_EQ(wrap("short\n", 20), "short\n");
    EXPECT_EQ(wrap("one two three four five\n", 10), "one two\nthree four\nfive\n");
    // An option line: continuation lines start where its text does.
    EXPECT_EQ(wrap("  -o,--output FORMAT  Output format: text, json or yaml\n", 45),
              "  -o,--output FORMAT  Output format: text,\n"
              "                      json or yaml\n");
    // Too little room beside the name: continuation lines start at the line's own indent.
    EXPECT_EQ(wrap("  -o,--output FORMAT  Output format: text, json or yaml\n", 40),
              "  -o,--output FORMAT  Output format:\n"
              "  text, json or yaml\n");
    // A word longer than the width stays whole on its own line.
    EXPECT_EQ(wrap("a verylongword b\n", 6), "a\nverylongword\nb\n");
    EXPECT_EQ(wrap("  indented text here\n", 12), "  indented\n  text here\n");
    EXPECT_EQ(wrap("no newline at end", 0), "no newline at end");
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

// trim and split return views: calling them on a temporary std::string must not compile (the
// views would dangle), while lvalue strings, views and literals still do.
template <class Arg>
concept splittable = requires(Arg&& a) {
    split(std::forward<Arg>(a), ',');
};
template <class Arg>
concept trimmable = requires(Arg&& a) {
    trim(std::forward<Arg>(a));
};

static_assert(!splittable<std::string>);
static_assert(!splittable<std::string&&>);
static_assert(!splittable<const std::string&&>);
static_assert(splittable<std::string&>);
static_assert(splittable<const std::string&>);
static_assert(splittable<std::string_view>);
static_assert(splittable<const char*>);
static_assert(splittable<const char (&)[4]>);
static_assert(!trimmable<std::string>);
static_assert(!trimmable<std::string&&>);
static_assert(trimmable<std::string&>);
static_assert(trimmable<std::string_view>);
static_assert(trimmable<const char*>);

TEST(Text, SplitAndTrimTakeNamedStrings) {
    const std::string s = " a,b ";
    const auto parts = split(trim(s), ',');
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0], "a");
    EXPECT_EQ(parts[1], "b");
    EXPECT_EQ(split("x,y", ',').size(), 2u);
}
