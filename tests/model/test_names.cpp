// The one DNS-1123 check (label and subdomain) and its short wording.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kpkg/model/names.hpp"

using namespace kpkg::model;

namespace {

std::string label(const std::string& s) {
    return dns1123_problem(check_dns1123_label(s), false);
}
std::string subdomain(const std::string& s) {
    return dns1123_problem(check_dns1123_subdomain(s), true);
}

} // namespace

TEST(Dns1123, Labels) {
    for (const std::string& ok :
         std::vector<std::string>{"etcd", "a-1", "a", "0", "a--b", std::string(63, 'a')})
        EXPECT_TRUE(check_dns1123_label(ok).ok()) << ok;
    EXPECT_EQ(label(""), "must not be empty");
    EXPECT_EQ(label(std::string(64, 'a')), "must be at most 63 characters");
    EXPECT_EQ(label("A"), "must consist of lower-case letters, digits and '-'");
    EXPECT_EQ(label("kiali-operator.v1.4.2"), "must consist of lower-case letters, digits and '-'");
    EXPECT_EQ(label("a_b"), "must consist of lower-case letters, digits and '-'");
    EXPECT_EQ(label("-a"), "must start and end with a lower-case letter or digit");
    EXPECT_EQ(label("a-"), "must start and end with a lower-case letter or digit");
    EXPECT_EQ(label("etcd"), "");
}

TEST(Dns1123, Subdomains) {
    for (const std::string& ok :
         std::vector<std::string>{"kiali-operator.v1.4.2", "a", "a.b.c", std::string(253, 'a')})
        EXPECT_TRUE(check_dns1123_subdomain(ok).ok()) << ok;
    EXPECT_EQ(subdomain(""), "must not be empty");
    EXPECT_EQ(subdomain(std::string(254, 'a')), "must be at most 253 characters");
    EXPECT_EQ(subdomain("a_b"), "must consist of lower-case letters, digits, '-' and '.'");
    EXPECT_EQ(subdomain("A.b"), "must consist of lower-case letters, digits, '-' and '.'");
    for (const std::string& bad : std::vector<std::string>{"a..b", "a.-b", ".a", "a.", "a-.b"})
        EXPECT_EQ(subdomain(bad),
                  "must start and end with a lower-case letter or digit, also around each '.'")
            << bad;
}

// Every flag is found on its own: what catalog validation words as Kubernetes does needs the
// length and the pattern separately, and whether a bad label is a good subdomain.
TEST(Dns1123, FlagsAreIndependent) {
    const Dns1123Check long_dotted = check_dns1123_label(std::string(70, 'a') + ".b");
    EXPECT_TRUE(long_dotted.too_long);
    EXPECT_TRUE(long_dotted.bad_character);
    EXPECT_FALSE(long_dotted.bad_edge);
    EXPECT_FALSE(long_dotted.pattern_ok());
    EXPECT_TRUE(check_dns1123_subdomain(std::string(70, 'a') + ".b").pattern_ok());

    const Dns1123Check long_ok = check_dns1123_label(std::string(64, 'a'));
    EXPECT_TRUE(long_ok.pattern_ok());
    EXPECT_FALSE(long_ok.ok());

    const Dns1123Check empty = check_dns1123_label("");
    EXPECT_TRUE(empty.empty);
    EXPECT_FALSE(empty.pattern_ok());
    EXPECT_FALSE(check_dns1123_subdomain("").pattern_ok());

    const Dns1123Check both = check_dns1123_label("-A");
    EXPECT_TRUE(both.bad_character);
    EXPECT_TRUE(both.bad_edge);
}

// Where the first character outside the pattern is, for messages that point at it (a namespace
// given on the command line); npos when there is none. In a subdomain the index counts from the
// start of the whole name.
TEST(Dns1123, FirstBadCharacter) {
    EXPECT_EQ(check_dns1123_label("operators").first_bad, std::string::npos);
    EXPECT_EQ(check_dns1123_label("-a-").first_bad, std::string::npos); // an edge, not a character
    EXPECT_EQ(check_dns1123_label("Ab_c").first_bad, 0u);
    EXPECT_EQ(check_dns1123_label("ab_c.d").first_bad, 2u);
    EXPECT_EQ(check_dns1123_label("a.b").first_bad, 1u);
    EXPECT_EQ(check_dns1123_label("ab\xC3\xA4").first_bad, 2u);
    EXPECT_EQ(check_dns1123_subdomain("a.b").first_bad, std::string::npos);
    EXPECT_EQ(check_dns1123_subdomain("ab.cd.e_f").first_bad, 7u);
    EXPECT_EQ(check_dns1123_subdomain("ab.C").first_bad, 3u);
}
