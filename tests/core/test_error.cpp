#include <gtest/gtest.h>

#include "kpkg/core/result.hpp"

using namespace kpkg;

TEST(Error, FormatsPositionSubjectAndMessage) {
    Error e = Error::invalid("bad thing", {"cat/a.yaml", 3, 7, 1});
    EXPECT_EQ(e.str(), "cat/a.yaml:3:7: bad thing");
    e.about("package \"etcd\"");
    EXPECT_EQ(e.str(), "cat/a.yaml:3:7: package \"etcd\": bad thing");
    EXPECT_EQ(Error::io("no such file", {"x"}).str(), "x: no such file");
    EXPECT_EQ(Error::invalid("m", {"", 2, 0, -1}).str(), "<input>:2: m");
    EXPECT_EQ(Error::usage("u").str(), "u");
}

TEST(Error, KindsMapToExitCodes) {
    EXPECT_EQ(Error::io("x").code, ExitCode::error);
    EXPECT_EQ(Error::invalid("x").code, ExitCode::invalid);
    EXPECT_EQ(Error::usage("x").code, ExitCode::usage);
    EXPECT_EQ(Error::internal("x").code, ExitCode::error);
    EXPECT_EQ(static_cast<int>(ExitCode::unsatisfiable), 4);
    EXPECT_EQ(static_cast<int>(ExitCode::differs), 5);
}

static Result<int> parse_positive(int v) {
    if (v <= 0) return fail(Error::invalid("not positive: " + std::to_string(v)));
    return v;
}

static Result<int> doubled(int v) {
    int x = KPKG_TRY(parse_positive(v));
    return 2 * x;
}

static Result<void> check(int v) {
    KPKG_TRY(parse_positive(v));
    return {};
}

TEST(Result, ValueAndErrorPropagate) {
    auto ok = doubled(4);
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(*ok, 8);
    auto bad = doubled(-1);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message, "not positive: -1");
    EXPECT_TRUE(check(1).ok());
    EXPECT_FALSE(check(0).ok());
}

TEST(Result, TakeThrowsTheError) {
    try {
        (void)doubled(-3).take();
        FAIL() << "take() of an error must throw";
    } catch (const Exception& e) {
        EXPECT_EQ(e.error().code, ExitCode::invalid);
        EXPECT_STREQ(e.what(), "not positive: -3");
    }
    EXPECT_THROW(check(0).take(), Exception);
}
