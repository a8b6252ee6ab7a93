// pko's Kubernetes name rules in apimachinery's words (the check itself is model's DNS-1123).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kpkg/pko/util.hpp"

using namespace kpkg::pko;

namespace {

const std::string kSubdomain =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

TEST(PkoNames, Dns1123Subdomain) {
    EXPECT_TRUE(dns1123_subdomain_errors("example.com").empty());
    EXPECT_TRUE(dns1123_subdomain_errors("a-b.c0").empty());
    for (const char* bad : {"", "Example.com", "a..b", "-a", "a.", "a_b", ".a"})
        EXPECT_EQ(dns1123_subdomain_errors(bad), std::vector<std::string>{kSubdomain}) << bad;
    const std::string long_ok(254, 'a');
    EXPECT_EQ(dns1123_subdomain_errors(long_ok),
              std::vector<std::string>{"must be no more than 253 characters"});
    EXPECT_EQ(dns1123_subdomain_errors(long_ok + "_"),
              (std::vector<std::string>{"must be no more than 253 characters", kSubdomain}));
}

TEST(PkoNames, QualifiedNamePrefixIsASubdomain) {
    EXPECT_TRUE(qualified_name_errors("example.com/Name").empty());
    EXPECT_EQ(qualified_name_errors("Example.com/name"),
              std::vector<std::string>{"prefix part " + kSubdomain});
    EXPECT_EQ(qualified_name_errors("/name"),
              std::vector<std::string>{"prefix part must be non-empty"});
}

} // namespace
