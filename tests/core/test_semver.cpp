// Semantic versions: strict, tolerant and lenient parsing, printing, precedence.
#include <gtest/gtest.h>

#include "kpkg/core/semver.hpp"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using kpkg::ExitCode;
using kpkg::semver::Version;

namespace {

Version v(const std::string& s) {
    return Version::parse(s).take();
}

// The quoted form the error messages use for plain ASCII input.
std::string quoted(const std::string& s) {
    return "\"" + s + "\"";
}

} // namespace

TEST(SemverParse, Fields) {
    Version a = v("1.22.333-rc.1.x-y+build.007");
    EXPECT_EQ(a.major, 1u);
    EXPECT_EQ(a.minor, 22u);
    EXPECT_EQ(a.patch, 333u);
    EXPECT_EQ(a.pre, (std::vector<std::string>{"rc", "1", "x-y"}));
    EXPECT_EQ(a.build, (std::vector<std::string>{"build", "007"}));
    EXPECT_TRUE(a.prerelease());
    EXPECT_FALSE(v("1.0.0+build").prerelease());
    Version max = v("18446744073709551615.18446744073709551615.18446744073709551615");
    EXPECT_EQ(max.major, 18446744073709551615u);
    EXPECT_EQ(max.patch, 18446744073709551615u);
}

// The valid examples that go with the regular expression on semver.org; all round-trip.
TEST(SemverParse, ValidFromSpecExamples) {
    const char* valid[] = {
        "0.0.4",
        "1.2.3",
        "10.20.30",
        "1.1.2-prerelease+meta",
        "1.1.2+meta",
        "1.1.2+meta-valid",
        "1.0.0-alpha",
        "1.0.0-beta",
        "1.0.0-alpha.beta",
        "1.0.0-alpha.beta.1",
        "1.0.0-alpha.1",
        "1.0.0-alpha0.valid",
        "1.0.0-alpha.0valid",
        "1.0.0-alpha-a.b-c-somethinglong+build.1-aef.1-its-okay",
        "1.0.0-rc.1+build.1",
        "2.0.0-rc.1+build.123",
        "1.2.3-beta",
        "10.2.3-DEV-SNAPSHOT",
        "1.2.3-SNAPSHOT-123",
        "1.0.0",
        "2.0.0",
        "1.1.7",
        "2.0.0+build.1848",
        "2.0.1-alpha.1227",
        "1.0.0-alpha+beta",
        "1.2.3----RC-SNAPSHOT.12.9.1--.12+788",
        "1.2.3----R-S.12.9.1--.12+meta",
        "1.2.3----RC-SNAPSHOT.12.9.1--.12",
        "1.0.0+0.build.1-rc.10000aaa-kk-0.1",
        "1.0.0-0A.is.legal",
        "0.0.0",
        "1.0.0--",
        "1.0.0+001",
    };
    for (const char* s : valid) {
        SCOPED_TRACE(s);
        auto r = Version::parse(s);
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->str(), s);
    }
}

// The invalid examples from semver.org, plus the forms the strict parser must refuse.
TEST(SemverParse, InvalidFromSpecExamples) {
    const char* invalid[] = {
        "1",
        "1.2",
        "1.2.3-0123",
        "1.2.3-0123.0123",
        "1.1.2+.123",
        "+invalid",
        "-invalid",
        "-invalid+invalid",
        "-invalid.01",
        "alpha",
        "alpha.beta",
        "alpha.beta.1",
        "alpha.1",
        "alpha+beta",
        "alpha_beta",
        "alpha.",
        "alpha..",
        "beta",
        "1.0.0-alpha_beta",
        "-alpha.",
        "1.0.0-alpha..",
        "1.0.0-alpha..1",
        "1.0.0-alpha...1",
        "01.1.1",
        "1.01.1",
        "1.1.01",
        "1.2.3.DEV",
        "1.2-SNAPSHOT",
        "1.2.31.2.3----RC-SNAPSHOT.12.09.1--..12+788",
        "1.2-RC-SNAPSHOT",
        "-1.0.3-gamma+b7718",
        "+justmeta",
        "9.8.7+meta+meta",
        "9.8.7-whatever+meta+meta",
        "99999999999999999999999.999999999.99999999----RC-SNAPSHOT.12.09.1---..12",
        // Beyond the list: what the strict form excludes.
        "",
        " ",
        "v1.2.3",
        "V1.2.3",
        " 1.2.3",
        "1.2.3 ",
        "1.2.3\n",
        "1.2.3-",
        "1.2.3+",
        "1.2.3-+build",
        "1.2.3-rc.",
        "1.2.3+build.",
        "1.2.3-rc..1",
        "1.2.3.4",
        "1.2.",
        "1..3",
        ".1.2.3",
        "1.2.3-ü",
        "1.2.3+b_1",
        "1.2.x",
        "1.2.*",
        "x.y.z",
        "-1.2.3",
        "1.-2.3",
        "1.2.3-01",
        "00.1.2",
        "18446744073709551616.0.0",
        "0.18446744073709551616.0",
        "0.0.18446744073709551616",
        "1.2.3-18446744073709551616",
        "99999999999999999999999.999999999.99999999",
    };
    for (const char* s : invalid) {
        SCOPED_TRACE(s);
        auto r = Version::parse(s);
        ASSERT_FALSE(r.ok()) << r->str();
        EXPECT_EQ(r.error().code, ExitCode::invalid);
        EXPECT_EQ(r.error().message.rfind("invalid semantic version \"", 0), 0u);
    }
}

TEST(SemverParse, MessagesNameInputAndProblem) {
    struct Case {
        const char* in;
        const char* says;
    } cases[] = {
        {"1.02.3", "numeric part \"02\" has a leading zero"},
        {"01.2.3", "numeric part \"01\" has a leading zero"},
        {"1.2", "missing the patch version"},
        {"1", "missing the minor version"},
        {"", "empty string"},
        {"v1.2.3", "leading 'v'"},
        {" 1.2.3", "white space"},
        {"1.2.3.4", "unexpected '.' at position 6"},
        {"1.a.3", "unexpected 'a' at position 3"},
        {"1.2.3-", "empty pre-release identifier at position 7"},
        {"1.2.3-a..b", "empty pre-release identifier at position 9"},
        {"1.2.3-a_b", "'_' at position 8"},
        {"1.2.3+a+b", "'+' at position 8"},
        {"1.2.3-01", "numeric pre-release identifier \"01\" has a leading zero"},
        {"18446744073709551616.0.0", "does not fit in 64 bits"},
        {"1.2.3-99999999999999999999", "does not fit in 64 bits"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.in);
        auto r = Version::parse(c.in);
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.error().message.find(quoted(c.in)), std::string::npos) << r.error().message;
        EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
    }
    EXPECT_EQ(Version::parse("1.02.3").error().message,
              "invalid semantic version \"1.02.3\": numeric part \"02\" has a leading zero");
}

TEST(SemverParse, HostileInputNeitherCrashesNorFloodsTheMessage) {
    std::mt19937 rng(42);
    std::string garbage(10 << 20, '\0');
    for (char& c : garbage)
        c = static_cast<char>(rng());
    std::string digits(10 << 20, '7');
    std::string dotted;
    for (int k = 0; k < 100000; ++k)
        dotted += "1.";
    const std::string inputs[] = {garbage,
                                  digits,
                                  dotted,
                                  std::string("\0", 1),
                                  std::string("1.2.3\0", 6),
                                  "\xff\xfe\xfd",
                                  "１.２.３",
                                  "1.2.3-\xe2\x80\x8b",
                                  "1.2.3\xc3",
                                  "\xe2\x89\xa5"
                                  "1.2.3"};
    for (const std::string& in : inputs) {
        for (auto parse : {&Version::parse, &Version::parse_tolerant, &Version::parse_lenient}) {
            auto r = parse(in);
            ASSERT_FALSE(r.ok());
            EXPECT_LT(r.error().message.size(), 2000u);
        }
    }
    auto r = Version::parse(garbage);
    EXPECT_NE(r.error().message.find("(10485760 bytes)"), std::string::npos);
    // Control bytes and broken UTF-8 are escaped; valid UTF-8 is shown as is.
    EXPECT_NE(Version::parse(std::string("1.2.3\0", 6)).error().message.find("\\x00"),
              std::string::npos);
    EXPECT_NE(Version::parse("1.2.3\xff").error().message.find("\\xff"), std::string::npos);
    EXPECT_NE(Version::parse("≥1.2.3").error().message.find("'≥'"), std::string::npos);
}

// The precedence example from the SemVer specification, item 11.
TEST(SemverCompare, SpecPrecedenceChain) {
    const std::vector<std::string> chain = {"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
                                            "1.0.0-beta",  "1.0.0-beta.2",  "1.0.0-beta.11",
                                            "1.0.0-rc.1",  "1.0.0",         "2.0.0",
                                            "2.1.0",       "2.1.1"};
    for (std::size_t i = 0; i < chain.size(); ++i) {
        for (std::size_t j = 0; j < chain.size(); ++j) {
            SCOPED_TRACE(chain[i] + " vs " + chain[j]);
            Version a = v(chain[i]), b = v(chain[j]);
            int c = compare(a, b);
            EXPECT_EQ(c < 0, i < j);
            EXPECT_EQ(c == 0, i == j);
            EXPECT_EQ(a < b, i < j);
            EXPECT_EQ(a == b, i == j);
            EXPECT_EQ(a >= b, i >= j);
        }
    }
}

TEST(SemverCompare, Pairs) {
    struct Case {
        const char* a;
        const char* b;
        int want; // sign of compare(a, b)
    } cases[] = {
        {"1.2.3", "1.2.3", 0},
        {"1.2.3", "1.2.4", -1},
        {"1.2.3", "1.3.0", -1},
        {"1.9.0", "1.10.0", -1}, // numerically, not as text
        {"2.0.0", "10.0.0", -1},
        {"1.2.3-0", "1.2.3-alpha", -1}, // numeric identifiers sort first
        {"1.2.3-alpha", "1.2.3-0", 1},
        {"1.2.3-2", "1.2.3-10", -1},  // numeric identifiers compare as numbers
        {"1.2.3-a2", "1.2.3-a10", 1}, // alphanumeric ones as ASCII text
        {"1.2.3-B", "1.2.3-a", -1},   // upper case before lower case
        {"1.2.3--", "1.2.3-0", 1},    // "-" is alphanumeric
        {"1.2.3-alpha", "1.2.3-alpha.0", -1},
        {"1.2.3-alpha.1", "1.2.3-alpha.1.0", -1},
        {"1.2.3-rc.1", "1.2.3", -1}, // a release follows its pre-releases
        {"1.2.3-rc.1", "1.2.2", 1},
        {"1.2.3-999", "1.2.3-alpha", -1},
        {"0.0.0-0", "0.0.0", -1},
        {"1.0.0+build.1", "1.0.0+build.2", 0}, // build metadata does not count
        {"1.0.0-rc.1+a", "1.0.0-rc.1+b.c", 0},
        {"1.0.0+zzz", "1.0.1", -1},
        {"18446744073709551615.0.0", "18446744073709551614.99.99", 1},
        {"1.0.0-18446744073709551615", "1.0.0-18446744073709551614", 1},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(std::string(c.a) + " vs " + c.b);
        int got = compare(v(c.a), v(c.b));
        EXPECT_EQ((got > 0) - (got < 0), c.want);
        int back = compare(v(c.b), v(c.a));
        EXPECT_EQ((back > 0) - (back < 0), -c.want);
    }
}

TEST(SemverCompare, BuildMetadataIgnoredButIdenticalSeesIt) {
    Version a = v("1.0.0+a"), b = v("1.0.0+b"), c = v("1.0.0");
    EXPECT_TRUE(a == b);
    EXPECT_TRUE(a == c);
    EXPECT_FALSE(a != b);
    EXPECT_TRUE((a <=> b) == std::weak_ordering::equivalent);
    EXPECT_FALSE(a.identical(b));
    EXPECT_FALSE(a.identical(c));
    EXPECT_TRUE(a.identical(v("1.0.0+a")));
    EXPECT_FALSE(v("1.0.0-rc.1").identical(v("1.0.0")));
}

TEST(SemverCompare, SortsIntoPrecedenceOrder) {
    std::vector<std::string> want = {"0.0.1",       "0.1.0-0",     "0.1.0-alpha",    "0.1.0",
                                     "1.0.0-0.3.7", "1.0.0-alpha", "1.0.0-x.7.z.92", "1.0.0",
                                     "1.0.1",       "1.10.0",      "2.0.0-rc.1",     "2.0.0",
                                     "10.0.0"};
    std::vector<Version> got;
    for (const auto& s : want)
        got.push_back(v(s));
    std::shuffle(got.begin(), got.end(), std::mt19937(7));
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < want.size(); ++k)
        EXPECT_EQ(got[k].str(), want[k]);
}

// blang/semver's ParseTolerant, which OLM uses for some fields.
TEST(SemverTolerant, Table) {
    struct Case {
        const char* in;
        const char* want; // nullptr: an error
    } cases[] = {
        {"1.2.3", "1.2.3"},
        {" 1.2.3 ", "1.2.3"},
        {"\t1.2.3\n", "1.2.3"},
        {"\xc2\xa0"
         "1.2.3",
         "1.2.3"}, // Unicode white space too, as Go's TrimSpace
        {"v1.2.3", "1.2.3"},
        {" v1.2 ", "1.2.0"},
        {"1.2", "1.2.0"},
        {"1", "1.0.0"},
        {"v1", "1.0.0"},
        {"01.02.03", "1.2.3"},
        {"1.0.00", "1.0.0"},
        {"1.2.0-rc", "1.2.0-rc"},
        {"1.2.00-rc", "1.2.0-rc"},
        {"1.2.3-rc.1+b", "1.2.3-rc.1+b"},
        {"1.2-rc", nullptr}, // a short version cannot carry a pre-release
        {"1+b", nullptr},
        {"V1.2.3", nullptr}, // only a lower-case v
        {"vv1.2.3", nullptr},
        {"", nullptr},
        {"   ", nullptr},
        {"v", nullptr},
        {"1.2.3.4", nullptr},
        {"1.2.3-01", nullptr}, // leading zeros are only dropped from the numbers
        {"a.b.c", nullptr},
        {"1 .2.3", nullptr},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.in);
        auto r = Version::parse_tolerant(c.in);
        if (!c.want) {
            ASSERT_FALSE(r.ok()) << r->str();
            EXPECT_NE(r.error().message.find("invalid semantic version"), std::string::npos);
            continue;
        }
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->str(), c.want);
    }
    // Strict parsing stays strict.
    EXPECT_FALSE(Version::parse("1.2").ok());
    EXPECT_FALSE(Version::parse("v1.2.3").ok());
}

// Masterminds/semver's NewVersion, for Package Operator.
TEST(SemverLenient, Table) {
    struct Case {
        const char* in;
        const char* want;
    } cases[] = {
        {"1.2.3", "1.2.3"},
        {"v1.2.3", "1.2.3"},
        {"1.2", "1.2.0"},
        {"v1.2", "1.2.0"},
        {"1", "1.0.0"},
        {"v01.02.03", "1.2.3"},
        {"1.2-beta", "1.2.0-beta"},
        {"1-rc.1", "1.0.0-rc.1"},
        {"1.2.3-rc.1+build.5", "1.2.3-rc.1+build.5"},
        {"2.3.5-20161202202307-sha.e8fc5e5", "2.3.5-20161202202307-sha.e8fc5e5"},
        {"1.2.3+001", "1.2.3+001"},
        {"", nullptr},
        {"v", nullptr},
        {"V1.2.3", nullptr},
        {" 1.2.3", nullptr},
        {"1.2.3 ", nullptr},
        {"1.2.3.4", nullptr},
        {"1..2", nullptr},
        {"1.2.", nullptr},
        {"1.x", nullptr},
        {"1.2.3-01", nullptr},
        {"1.2.3-", nullptr},
        {"1.2.3+", nullptr},
        {"1.2.3-a..b", nullptr},
        {"18446744073709551616", nullptr},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.in);
        auto r = Version::parse_lenient(c.in);
        if (!c.want) {
            ASSERT_FALSE(r.ok()) << r->str();
            EXPECT_NE(r.error().message.find(quoted(c.in)), std::string::npos);
            continue;
        }
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->str(), c.want);
    }
    // Masterminds refuses versions longer than 256 bytes.
    std::string long_pre = "1.0.0-" + std::string(250, 'a');
    EXPECT_TRUE(Version::parse_lenient(long_pre).ok());
    EXPECT_FALSE(Version::parse_lenient(long_pre + "bc").ok());
}
