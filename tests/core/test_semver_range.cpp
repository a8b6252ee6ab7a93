// blang/semver v4 ranges (OLM) and Masterminds/semver v3 constraints (Package Operator).
#include <gtest/gtest.h>

#include "kpkg/core/semver.hpp"

#include <random>
#include <string>
#include <vector>

using kpkg::ExitCode;
using kpkg::semver::Constraint;
using kpkg::semver::Range;
using kpkg::semver::Version;

namespace {

struct Row {
    const char* expr;
    const char* version;
    bool want;
};

bool contains(const char* range, const char* version) {
    auto r = Range::parse(range);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() && r->contains(Version::parse(version).take());
}

std::string quoted(const std::string& s) {
    return "\"" + s + "\"";
}

} // namespace

// ---------------------------------------------------------------------------------------------
// blang/semver v4

TEST(BlangRange, Table) {
    const Row rows[] = {
        // One comparator of each kind.
        {">1.2.3", "1.2.2", false},
        {">1.2.3", "1.2.3", false},
        {">1.2.3", "1.2.4", true},
        {">=1.2.3", "1.2.2", false},
        {">=1.2.3", "1.2.3", true},
        {">=1.2.3", "1.2.4", true},
        {"<1.2.3", "1.2.2", true},
        {"<1.2.3", "1.2.3", false},
        {"<1.2.3", "1.2.4", false},
        {"<=1.2.3", "1.2.2", true},
        {"<=1.2.3", "1.2.3", true},
        {"<=1.2.3", "1.2.4", false},
        {"1.2.3", "1.2.2", false},
        {"1.2.3", "1.2.3", true},
        {"1.2.3", "1.2.4", false},
        {"=1.2.3", "1.2.3", true},
        {"=1.2.3", "1.2.4", false},
        {"==1.2.3", "1.2.3", true},
        {"==1.2.3", "1.2.2", false},
        {"!=1.2.3", "1.2.2", true},
        {"!=1.2.3", "1.2.3", false},
        {"!=1.2.3", "1.2.4", true},
        {"!1.2.3", "1.2.3", false},
        {"!1.2.3", "1.2.4", true},
        // Spaces between an operator and its version.
        {"> 1.2.3", "1.2.3", false},
        {"> 1.2.3", "1.2.4", true},
        {">=   1.2.3", "1.2.3", true},
        {"<= 1.2.3", "1.2.4", false},
        {"> =1.2.3", "1.2.3", true}, // the space after '>' is dropped, leaving >=
        {"\t>=1.2.3", "1.2.3", true},
        {">=\t1.2.3", "1.2.3", true},
        {">=\xc2\xa0"
         "1.2.3",
         "1.2.3", true}, // Unicode space around the operator is trimmed
        // AND.
        {">1.2.2 <1.2.4", "1.2.2", false},
        {">1.2.2 <1.2.4", "1.2.3", true},
        {">1.2.2 <1.2.4", "1.2.4", false},
        {"<1.2.2 <1.2.4", "1.2.1", true},
        {"<1.2.2 <1.2.4", "1.2.3", false},
        {">1.2.2 <1.2.5 !=1.2.4", "1.2.3", true},
        {">1.2.2 <1.2.5 !=1.2.4", "1.2.4", false},
        {">1.2.2 <1.2.5 !1.2.4", "1.2.4", false},
        {">1.2.2 <1.2.5 !1.2.4", "1.2.5", false},
        {"  >1.0.0    <2.0.0  ", "1.5.0", true},
        // OR; AND binds tighter.
        {"<1.2.2 || >1.2.4", "1.2.1", true},
        {"<1.2.2 || >1.2.4", "1.2.3", false},
        {"<1.2.2 || >1.2.4", "1.2.5", true},
        {">1.2.2 <1.2.4 || >=2.0.0", "1.2.3", true},
        {">1.2.2 <1.2.4 || >=2.0.0", "1.2.4", false},
        {">1.2.2 <1.2.4 || >=2.0.0", "2.0.1", true},
        {">1.2.2 <1.2.4 || >=2.0.0 <3.0.0", "2.9.9", true},
        {">1.2.2 <1.2.4 || >=2.0.0 <3.0.0", "3.0.0", false},
        {"1.2.3 || 1.2.5", "1.2.4", false},
        {"1.2.3 || 1.2.5", "1.2.5", true},
        {">1.0.0 <2.0.0 || >3.0.0 !4.2.1", "4.2.1", false},
        {">1.0.0 <2.0.0 || >3.0.0 !4.2.1", "3.1.1", true},
        // Wildcards (lower-case x only).
        {"1.x", "0.9.9", false},
        {"1.x", "1.0.0", true},
        {"1.x", "1.9.9", true},
        {"1.x", "2.0.0", false},
        {"=1.x", "1.5.0", true},
        {"1.2.x", "1.1.9", false},
        {"1.2.x", "1.2.0", true},
        {"1.2.x", "1.2.99", true},
        {"1.2.x", "1.3.0", false},
        {">=1.2.x", "1.1.9", false},
        {">=1.2.x", "1.2.0", true},
        {">1.2.x", "1.2.9", false},
        {">1.2.x", "1.3.0", true},
        {"<1.2.x", "1.1.9", true},
        {"<1.2.x", "1.2.0", false},
        {"<=1.2.x", "1.2.9", true},
        {"<=1.2.x", "1.3.0", false},
        {">=1.x", "0.9.0", false},
        {">=1.x", "1.0.0", true},
        {">1.x", "1.9.0", false},
        {">1.x", "2.0.0", true},
        {"<1.x", "0.9.9", true},
        {"<1.x", "1.0.0", false},
        {"<=1.x", "1.9.9", true},
        {"<=1.x", "2.0.0", false},
        {"1.x || >=2.0.x <2.2.x", "0.9.2", false},
        {"1.x || >=2.0.x <2.2.x", "1.2.2", true},
        {"1.x || >=2.0.x <2.2.x", "2.1.8", true},
        {"1.x || >=2.0.x <2.2.x", "2.2.0", false},
        // blang's own readings of some wildcards.
        {"1.x.x", "1.0.5", true},
        {"1.x.x", "1.1.0", false},   // read as 1.0.x
        {"!=1.2.x", "1.1.0", false}, // "<1.2.0 >=1.3.0": nothing
        {"!=1.2.x", "1.3.0", false},
        {"!=1.x", "3.0.0", false},
        {"~1.2.x", "1.2.0", true}, // the unknown '~' is dropped: =1.2.0
        {"~1.2.x", "1.2.1", false},
        {"1.0.0 - 2.0.0", "1.5.0", false}, // "-" is ignored: =1.0.0 and =2.0.0
        {">=1.2.3 <", "9.0.0", true},      // a lone "<" is ignored
        // Pre-releases compare by plain precedence.
        {">=1.0.0 <2.0.0", "1.5.0-rc.1", true},
        {">=1.0.0 <2.0.0", "2.0.0-rc.1", true},
        {">=1.0.0 <2.0.0", "1.0.0-rc.1", false},
        {"<2.0.0", "2.0.0-alpha", true},
        {"<1.2.3-0", "1.2.2", true},
        {"<1.2.3-0", "1.2.3-0", false},
        {"<1.2.3-0", "1.2.3-alpha", false}, // 1.2.3-0 < 1.2.3-alpha
        {">=1.2.3-0", "1.2.3-0", true},
        {">=1.2.3-0", "1.2.3-alpha", true},
        {">=1.2.3-0", "1.2.2", false},
        {">1.2.3-alpha <1.2.3", "1.2.3-alpha.1", true},
        {">1.2.3-alpha <1.2.3", "1.2.3-beta", true},
        {">1.2.3-alpha <1.2.3", "1.2.3-0", false},
        {">1.2.3-alpha <1.2.3", "1.2.3", false},
        {">=1.0.0-xyz", "1.0.0-xyz", true}, // an 'x' that changes nothing
        {"<1.0.0-rc.x", "1.0.0-rc", true},  // read as <1.0.0-rc.0
        {"<1.0.0-rc.x", "1.0.0-rc.1", false},
        // Build metadata is ignored on both sides.
        {"1.0.0-rc.1", "1.0.0-rc.1+build.9", true},
        {"1.0.0-rc.1", "1.0.0", false},
        {"1.0.0+build.1", "1.0.0+other", true},
        {"!=1.0.0+a", "1.0.0+b", false},
        // OLM skip ranges.
        {">=4.1.0 <4.2.9", "4.0.9", false},
        {">=4.1.0 <4.2.9", "4.1.0", true},
        {">=4.1.0 <4.2.9", "4.2.8", true},
        {">=4.1.0 <4.2.9", "4.2.9", false},
        {">=4.1.0 <4.2.9", "4.2.9-rc.1", true},
        {">=4.1.0 <4.2.9", "4.1.0-rc.1", false},
        {"<0.2.0", "0.0.1", true},
        {"<0.2.0", "0.1.9", true},
        {"<0.2.0", "0.2.0", false},
        {"<0.2.0", "0.2.0-alpha", true},
        {">=0.9.0 <0.9.2", "0.8.9", false},
        {">=0.9.0 <0.9.2", "0.9.0", true},
        {">=0.9.0 <0.9.2", "0.9.1", true},
        {">=0.9.0 <0.9.2", "0.9.2", false},
        {">=1.0.0 <1.3.0 || >=2.0.0 <2.1.0", "1.2.9", true},
        {">=1.0.0 <1.3.0 || >=2.0.0 <2.1.0", "1.3.0", false},
        {">=1.0.0 <1.3.0 || >=2.0.0 <2.1.0", "2.0.5", true},
        {">=1.0.0 <1.3.0 || >=2.0.0 <2.1.0", "2.1.0", false},
    };
    for (const Row& r : rows) {
        SCOPED_TRACE(std::string(r.expr) + " contains " + r.version);
        EXPECT_EQ(contains(r.expr, r.version), r.want);
    }
}

TEST(BlangRange, Invalid) {
    const std::string invalid[] = {
        "",
        "   ",
        ">=",
        "1.2.3 ||",
        "||",
        "|| 1.2.3",
        "1.2.3 || || 2.0.0", // blang parses this, then panics on a version
        ">=>=1.0.0",
        ">>1.2.3",
        "<==1.2.3",
        "=>1.2.3",
        "~1.2.3",
        "^1.2.3",
        "1.0",
        "12",
        "v1.0.0",
        "string",
        "fo.ob.ar.x",
        "x",
        "*",
        "1.2.*",
        "1.2.X",
        "1.X",
        ">1.0.0-xyz", // any 'x' starts wildcard expansion, which fails here
        "<=1.0.0+linux",
        "1.0.0-xyz",
        "!=1.0.0-x",
        "1.2.3||2.0.0",
        ">=1.2.3,<2.0.0",
        ">=01.2.3",
        ">=1.2.3-01",
        ">=1.2.3\t",
        "1.0.0\t2.0.0",
        "\xe2\x89\xa5"
        "1.2.3",
        ">=\xd9\xa1.2.3", // an Arabic-Indic digit
        ">=1.2.3 <18446744073709551616.0.0",
        "<=18446744073709551615.x",
        std::string("1.2.3\0", 6),
    };
    for (const std::string& in : invalid) {
        SCOPED_TRACE(in);
        auto r = Range::parse(in);
        ASSERT_FALSE(r.ok()) << r->str();
        EXPECT_EQ(r.error().code, ExitCode::invalid);
        EXPECT_EQ(
            r.error().message.rfind("invalid version range " + kpkg::semver::detail::quote(in), 0),
            0u)
            << r.error().message;
    }
}

TEST(BlangRange, MessagesNameTheToken) {
    struct Case {
        const char* in;
        const char* says;
    } cases[] = {
        {"", "empty range"},
        {"1.2.3 ||", "\"||\" with nothing after it"},
        {"|| 1.2.3", "\"||\" with nothing before it"},
        {">=1.0.0 || || 2.0.0", "right after another"},
        {">=1.0.0 ~1.2.3", "unknown operator \"~\" in \"~1.2.3\""},
        {">=1.0.0 <2.0", "version \"2.0\" in \"<2.0\": missing the patch version"},
        {">=1.0.0 foo", "comparator \"foo\" has no version number"},
        {"1.02.x", "version \"1.02.0\" in \">=1.02.0\" (expanded from \"1.02.x\")"},
        {">1.0.0-xyz", "cannot expand \">1.0.0-xyz\""},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.in);
        auto r = Range::parse(c.in);
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.error().message.find(quoted(c.in)), std::string::npos) << r.error().message;
        EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
    }
}

TEST(BlangRange, StrShowsTheExpandedRangeAndParsesBack) {
    struct Case {
        const char* in;
        const char* want;
    } cases[] = {
        {"1.2.3", "=1.2.3"},
        {"> 1.2.3  <=  2.0.0", ">1.2.3 <=2.0.0"},
        {"1.2.x || !1.0.0", ">=1.2.0 <1.3.0 || !=1.0.0"},
        {"<=1.x", "<2.0.0"},
        {">1.x", ">=2.0.0"},
        {"==1.0.0+build", "=1.0.0+build"},
        {">=4.1.0 <4.2.9", ">=4.1.0 <4.2.9"},
    };
    const char* probes[] = {"0.9.0", "1.0.0", "1.2.0", "1.2.3", "1.3.0", "2.0.0", "4.2.0"};
    for (const auto& c : cases) {
        SCOPED_TRACE(c.in);
        Range r = Range::parse(c.in).take();
        EXPECT_EQ(r.str(), c.want);
        Range again = Range::parse(r.str()).take();
        EXPECT_EQ(again.str(), r.str());
        for (const char* p : probes) {
            Version pv = Version::parse(p).take();
            EXPECT_EQ(again.contains(pv), r.contains(pv)) << p;
        }
    }
    Range r = Range::parse(">=1.0.0 <2.0.0 || 3.x").take();
    ASSERT_EQ(r.alternatives().size(), 2u);
    EXPECT_EQ(r.alternatives()[0].size(), 2u);
    EXPECT_EQ(r.alternatives()[1][0].op, Range::Op::ge);
    EXPECT_EQ(r.alternatives()[1][1].op, Range::Op::lt);
    EXPECT_EQ(r.alternatives()[1][1].version.str(), "4.0.0");
}

TEST(BlangRange, WarningsForSurprisingReadings) {
    struct Case {
        const char* in;
        const char* says; // nullptr: no warning
    } cases[] = {
        {">=1.0.0 <2.0.0 || 3.x", nullptr},
        {"~1.2.x", "drops the operator \"~\""},
        {"1.x.x", "\"1.0.x\""},
        {"!=1.2.x", "matches no version"},
        {"<1.0.0-rc.x", "as \".0\""},
        {"1.0.0 - 2.0.0", "one-character word \"-\""},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.in);
        Range r = Range::parse(c.in).take();
        if (!c.says) {
            EXPECT_TRUE(r.warnings().empty());
            continue;
        }
        ASSERT_EQ(r.warnings().size(), 1u);
        EXPECT_NE(r.warnings()[0].find(c.says), std::string::npos) << r.warnings()[0];
    }
}

// ---------------------------------------------------------------------------------------------
// Masterminds/semver v3

namespace {

bool check(const char* constraint, const char* version, bool include_pre = false) {
    auto c = Constraint::parse(constraint);
    EXPECT_TRUE(c.ok()) << c.error().message;
    return c.ok() && c->check(Version::parse_lenient(version).take(), include_pre);
}

} // namespace

TEST(MastermindsConstraint, Table) {
    const Row rows[] = {
        // Plain comparisons; a partial version is a wildcard for what is missing.
        {"=2.0.0", "1.2.3", false},
        {"=2.0.0", "2.0.0", true},
        {"2.0.0", "2.0.1", false},
        {"=2.0", "2.0.0", true},
        {"=2.0", "2.0.1", true},
        {"=2.0", "2.1.0", false},
        {"4.1", "4.1.5", true},
        {"4.1", "4.2.0", false},
        {"v1.2.3", "1.2.3", true},
        {"=v1.2", "1.2.7", true},
        {"!=4.1.0", "4.1.0", false},
        {"!=4.1.0", "4.1.1", true},
        {"!=4.1", "4.1.0", false},
        {"!=4.1", "4.1.1", false},
        {"!=4.1", "5.1.0", true},
        {"!=4.x", "4.1.0", false},
        {"!=4.x", "5.1.0", true},
        {">1.1", "1.1.0", false},
        {">1.1", "1.1.9", false},
        {">1.1", "1.2.0", true},
        {">11", "11.9.9", false},
        {">11", "12.0.0", true},
        {"<1.1", "1.0.9", true},
        {"<1.1", "1.1.0", false},
        {"<1.x", "0.9.9", true},
        {"<1.x", "1.1.1", false},
        {"<=1.1", "1.1.0", true},
        {"<=1.1", "1.1.9", true},
        {"<=1.1", "1.2.0", false},
        {"<=1.x", "1.9.9", true},
        {"<=1.x", "2.0.0", false},
        {"<=11", "11.2.3", true},
        {"<=11", "12.0.0", false},
        {">=1.1", "1.0.9", false},
        {">=1.1", "1.1.0", true},
        {"=>1.1", "1.1.0", true},
        {"=<1.1", "1.1.9", true},
        {">0", "0.0.0", false},
        {">0", "1.0.0", true},
        // Tilde: patch updates, or minor updates when the minor is missing.
        {"~1.2.3", "1.2.2", false},
        {"~1.2.3", "1.2.3", true},
        {"~1.2.3", "1.2.9", true},
        {"~1.2.3", "1.3.0", false},
        {"~1.2", "1.2.0", true},
        {"~1.2", "1.3.0", false},
        {"~1", "1.9.9", true},
        {"~1", "2.0.0", false},
        {"~>1.2", "1.2.5", true},
        {"~>1.2", "1.3.0", false},
        {"~1.x", "1.3.5", true},
        {"~1.x", "2.0.0", false},
        {"~0.2.3", "0.2.5", true},
        {"~0.2.3", "0.3.0", false},
        {"~0", "0.9.9", true},
        {"~0", "1.0.0", false},
        {"~*", "2.1.1", true},
        {"~0.0.0", "1.2.3", true},
        // Caret: up to the next major, or minor, or patch below 1.0.0.
        {"^1.2.3", "1.2.2", false},
        {"^1.2.3", "1.2.3", true},
        {"^1.2.3", "1.8.9", true},
        {"^1.2.3", "2.0.0", false},
        {"^1.2", "1.9.0", true},
        {"^1.2", "2.0.0", false},
        {"^1", "1.8.9", true},
        {"^1", "2.0.0", false},
        {"^1.x", "1.1.1", true},
        {"^1.x", "2.1.1", false},
        {"^0.2.3", "0.2.2", false},
        {"^0.2.3", "0.2.5", true},
        {"^0.2.3", "0.3.0", false},
        {"^0.2", "0.2.5", true},
        {"^0.2", "0.3.0", false},
        {"^0.0.3", "0.0.3", true},
        {"^0.0.3", "0.0.4", false},
        {"^0.0", "0.0.9", true},
        {"^0.0", "0.1.0", false},
        {"^0", "0.9.9", true},
        {"^0", "1.0.0", false},
        {"^0.0.0", "0.0.0", true},
        {"^0.0.0", "0.0.1", false},
        {"^*", "0.0.0", true}, // Masterminds' reading: only 0.0.0, whatever its comment says
        {"^*", "1.0.0", false},
        // Wildcards in any position; the first one makes the rest irrelevant.
        {"*", "0.0.0", true},
        {"*", "4.5.6", true},
        {"x", "1.2.3", true},
        {"X", "1.2.3", true},
        {"2.*", "1.9.9", false},
        {"2.*", "2.1.1", true},
        {"2.*", "3.0.0", false},
        {"2.1.*", "2.1.1", true},
        {"2.1.*", "2.2.1", false},
        {"2.X.X", "2.5.0", true},
        {"1.x.x", "1.5.0", true},
        {"x.5.7", "9.9.9", true},
        {"1.x.3", "1.9.0", true},
        {">=*", "0.0.0", true},
        {"<*", "0.0.0", false},
        {"<=*", "0.0.5", true}, // Masterminds' reading: 0.0.x
        {"<=*", "0.1.0", false},
        {">*", "0.0.0", false},
        {">*", "0.0.1", true},
        // Hyphen ranges, inclusive, a partial upper bound covering what is missing.
        {"1.2 - 1.4.5", "1.1.9", false},
        {"1.2 - 1.4.5", "1.2.0", true},
        {"1.2 - 1.4.5", "1.4.5", true},
        {"1.2 - 1.4.5", "1.4.6", false},
        {"1.2.3 - 2.3.4", "2.3.4", true},
        {"1.2.3 - 2.3.4", "2.3.5", false},
        {"1.2 - 1.4", "1.4.9", true},
        {"1.2 - 1.4", "1.5.0", false},
        {"1 - 2", "1.0.0", true},
        {"1 - 2", "2.9.9", true},
        {"1 - 2", "3.0.0", false},
        {"1.0.0 - 2.0.0, <=2.0.0", "1.5.0", true},
        {"1.0.0 - 2.0.0 <1.5.0", "1.4.0", true},
        {"1.0.0 - 2.0.0 <1.5.0", "1.6.0", false},
        {"1.1 - 3 || 5 - 6", "4.0.0", false},
        {"1.1 - 3 || 5 - 6", "6.1.0", true},
        {"1.1-3", "1.1.5", true}, // no spaces: the version 1.1.0-3, not a range
        {"1.1-3", "4.3.2", false},
        // AND with spaces or commas, OR with ||.
        {">=1.1, <2, !=1.2.3", "1.2.3", false},
        {">=1.1, <2, !=1.2.3", "1.2.4", true},
        {">=1.1 <2 !=1.2.3", "1.2.3", false},
        {">= 1.1, <     2, != 1.2.3", "1.2.4", true},
        {">=1.1,<2", "1.5.0", true},
        {">=1.1 , <2", "2.0.0", false},
        {">=1.1, <2, !=1.2.3 || > 3", "1.5.0", true},
        {">=1.1, <2, !=1.2.3 || > 3", "3.1.2", false},
        {">=1.1, <2, !=1.2.3 || > 3", "4.1.2", true},
        {">=1.1, <2, !=1.2.3 || >= 3", "3.0.0", true},
        {"12.3.34 ~1.2.3", "12.3.34", false},
        // Pre-releases only where an alternative asks for them (v3.4 rules).
        {">=1.0.0 <2.0.0", "1.5.0-rc.1", false},
        {">=1.0.0 <2.0.0", "1.5.0", true},
        {">=1.5.0-0", "1.5.0-rc.1", true},
        {">=1.5.0-0", "1.6.0-alpha", true},
        {">=1.5.0-0", "1.4.9", false},
        {">=1.5.0-0 <2.0.0", "1.5.0-rc.1", true},
        {">=1.5.0-0 <2.0.0", "2.0.0-rc.1", true},
        {">=1.5.0-0 <2.0.0 || >3", "4.0.0-rc.1", false},
        {">=1.5.0-0 <2.0.0 || >3", "4.0.0", true},
        {"*", "1.2.3-alpha.1", false},
        {"*-0", "1.2.3-alpha.1", true},
        {"!=1.2.3", "1.0.0-rc.1", false},
        {"~1.2.3-beta.2", "1.2.3-beta.4", true},
        {"~1.2.3-beta.2", "1.2.4-beta.2", true},
        {"~1.2.3-beta.2", "1.3.4-beta.2", false},
        {"~1.2.3-beta.2", "1.2.3-beta.1", false},
        {"^1.2.0", "1.2.1-alpha.1", false},
        {"^1.2.0-alpha.0", "1.2.1-alpha.1", true},
        {"^1.2.0-alpha.2", "1.2.0-alpha.1", false},
        {">0", "0.0.1-alpha", false},
        {">0.0.0-0", "0.0.0-alpha", true},
        {"<0-z", "0.0.0-alpha", true},
        {"1.0.0+build", "1.0.0+other", true},
    };
    for (const Row& r : rows) {
        SCOPED_TRACE(std::string(r.expr) + " accepts " + r.version);
        EXPECT_EQ(check(r.expr, r.version), r.want);
    }
}

TEST(MastermindsConstraint, IncludePrerelease) {
    EXPECT_TRUE(check(">=1.0.0 <2.0.0", "1.5.0-rc.1", true));
    EXPECT_TRUE(check("*", "1.2.3-alpha.1", true));
    EXPECT_TRUE(check("^1.2.0", "1.2.1-alpha.1", true));
    EXPECT_TRUE(check("<2.0.0", "2.0.0-rc.1", true));
    EXPECT_FALSE(check("<2.0.0", "2.0.0-rc.1", false));
    EXPECT_FALSE(check(">=1.0.0", "1.0.0-rc.1", true)); // still below 1.0.0
    EXPECT_TRUE(check(">=1.5.0-0 <2.0.0 || >3", "4.0.0-rc.1", true));
}

// The same pre-release, read by the two dialects.
TEST(SemverDialects, PreReleaseInsideARange) {
    Version rc = Version::parse("1.5.0-rc.1").take();
    EXPECT_TRUE(Range::parse(">=1.0.0 <2.0.0").take().contains(rc));
    EXPECT_FALSE(Constraint::parse(">=1.0.0 <2.0.0").take().check(rc));
    EXPECT_TRUE(Constraint::parse(">=1.5.0-0").take().check(rc));
    // And "1.x.x", a full minor wildcard only for Masterminds.
    Version v = Version::parse("1.4.0").take();
    EXPECT_FALSE(Range::parse("1.x.x").take().contains(v));
    EXPECT_TRUE(Constraint::parse("1.x.x").take().check(v));
}

TEST(MastermindsConstraint, Invalid) {
    std::string too_long = ">=1.0.0 " + std::string(505, ' ');
    std::string many = "1";
    for (int k = 0; k < 32; ++k)
        many += " || 1";
    const std::string invalid[] = {
        "",
        " ",
        ">=",
        "1.2.3 ||",
        "||",
        "|| 1.2.3",
        "1.0 || || 2.0",
        ">=>=1",
        "==1.2.3",
        "!1.2.3",
        ">= bar",
        "BAR >= 1.2.3",
        "12.3.4.1234",
        "12.3.34~ 1.2.3",
        ">=1.0,",
        ",>=1.0",
        ">=1.0,,<2",
        ">1<2",
        "1.2.3_4",
        "1.2.3 _",
        ">=1x",
        "1.2.3-01",
        "1.0.0-",
        "1|2",
        "1.2.3 | 1.2.4",
        "v",
        "vv1",
        "V1.2",
        ">=1.0.0 1.2 - 2", // the rewritten hyphen range swallows the space before it
        "\xe2\x89\xa5"
        "1.0",
        ">=18446744073709551616",
        too_long,
        many,
    };
    for (const std::string& in : invalid) {
        SCOPED_TRACE(in);
        auto r = Constraint::parse(in);
        ASSERT_FALSE(r.ok()) << r->str();
        EXPECT_EQ(r.error().code, ExitCode::invalid);
        EXPECT_EQ(r.error().message.rfind(
                      "invalid version constraint " + kpkg::semver::detail::quote(in), 0),
                  0u)
            << r.error().message;
    }
    // Right at the limits it still parses.
    EXPECT_TRUE(Constraint::parse(">=1.0.0" + std::string(505, ' ')).ok());
    EXPECT_TRUE(Constraint::parse(many.substr(5)).ok());
}

TEST(MastermindsConstraint, MessagesNameTheToken) {
    struct Case {
        const char* in;
        const char* says;
    } cases[] = {
        {"==1.2.3", "unknown operator \"==\""},
        {">=", "missing version after \">=\""},
        {">=1.0,", "nothing after ','"},
        {"1.2.3.4", "malformed version \"1.2.3.4\""},
        {">=1x", "part \"1x\" is neither a number nor a wildcard"},
        {"1.2.3_4", "unexpected \"_\" after \"1.2.3\""},
        {"1.0 || || 2.0", "nothing between two \"||\""},
        {"1.2.3-01", "numeric pre-release identifier \"01\" has a leading zero"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.in);
        auto r = Constraint::parse(c.in);
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.error().message.find(quoted(c.in)), std::string::npos) << r.error().message;
        EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
    }
}

TEST(MastermindsConstraint, Str) {
    struct Case {
        const char* in;
        const char* want;
    } cases[] = {
        {">= 1.2.3, < 2.0", ">=1.2.3 <2.0"},
        {"1.2 - 1.4.5", ">=1.2 <=1.4.5"},
        {"^1.x <1.5 || ~2.3", "^1.x <1.5 || ~2.3"},
        {"=>v1.2,=<2", "=>v1.2 =<2"},
        {"  *  ", "*"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.in);
        EXPECT_EQ(Constraint::parse(c.in).take().str(), c.want);
    }
}

// ---------------------------------------------------------------------------------------------

TEST(SemverRanges, HostileInputNeitherCrashesNorHangs) {
    std::mt19937 rng(3);
    std::string garbage(10 << 20, '\0');
    for (char& c : garbage)
        c = static_cast<char>(rng());
    std::string pipes(1 << 20, '|');
    std::string words;
    for (int k = 0; k < 100000; ++k)
        words += ">=1.0.0 ";
    const std::string inputs[] = {garbage,
                                  pipes,
                                  std::string(1 << 20, ' '),
                                  std::string(1 << 20, 'x'),
                                  "\xff\xfe",
                                  "1.0.0 \xe2\x80",
                                  std::string(3, '\0')};
    for (const std::string& in : inputs) {
        auto r = Range::parse(in);
        EXPECT_FALSE(r.ok());
        if (!r.ok()) {
            EXPECT_LT(r.error().message.size(), 2000u);
        }
        auto c = Constraint::parse(in);
        EXPECT_FALSE(c.ok());
        if (!c.ok()) {
            EXPECT_LT(c.error().message.size(), 2000u);
        }
    }
    // Long but valid: fine for blang, over Masterminds' length limit.
    auto r = Range::parse(words);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->contains(Version::parse("1.0.0").take()));
    EXPECT_FALSE(Constraint::parse(words).ok());
    // Random short strings over the grammar's own characters: no crash, and a message when wrong.
    const char alphabet[] = "0123456789.xX*-+<>=!~^ |,va\t";
    for (int k = 0; k < 20000; ++k) {
        std::string s(rng() % 16, ' ');
        for (char& c : s)
            c = alphabet[rng() % (sizeof alphabet - 1)];
        auto a = Range::parse(s);
        if (!a.ok()) {
            EXPECT_FALSE(a.error().message.empty());
        }
        auto b = Constraint::parse(s);
        if (!b.ok()) {
            EXPECT_FALSE(b.error().message.empty());
        }
    }
}
