#include <gtest/gtest.h>

#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

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

// Internal code throws; the public function returns a Result through catch_error.
static int doubled_or_throw(int v) {
    return 2 * parse_positive(v).take();
}

static Result<int> doubled(int v) {
    return catch_error([&] { return doubled_or_throw(v); });
}

static Result<void> check(int v) {
    return catch_error([&] { parse_positive(v).take(); });
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

TEST(Result, CatchErrorTurnsAThrownExceptionIntoTheError) {
    Result<std::string> r = catch_error([]() -> std::string {
        Error e = Error::invalid("bad field", {"cat/a.yaml", 4, 9, 2});
        e.about("package \"etcd\"").note("a hint");
        throw Exception(std::move(e));
    });
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_EQ(r.error().message, "bad field");
    EXPECT_EQ(r.error().pos.file, "cat/a.yaml");
    EXPECT_EQ(r.error().pos.line, 4u);
    EXPECT_EQ(r.error().pos.column, 9u);
    EXPECT_EQ(r.error().pos.document, 2);
    EXPECT_EQ(r.error().subject, "package \"etcd\"");
    EXPECT_EQ(r.error().notes, std::vector<std::string>{"a hint"});
    EXPECT_EQ(r.error().str(), "cat/a.yaml:4:9: package \"etcd\": bad field");
}

TEST(Result, CatchErrorPassesTheValueThrough) {
    int calls = 0;
    Result<std::vector<std::string>> r = catch_error([&] {
        ++calls;
        return std::vector<std::string>{"a", "b"};
    });
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(calls, 1);
    Result<void> v = catch_error([&] { ++calls; });
    EXPECT_TRUE(v.ok());
    EXPECT_EQ(calls, 2);
    // A value that can only be moved.
    Result<std::unique_ptr<int>> p = catch_error([] { return std::make_unique<int>(7); });
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(**p, 7);
}

TEST(Result, CatchErrorLetsOtherExceptionsThrough) {
    EXPECT_THROW((void)catch_error([]() -> int { throw std::runtime_error("not ours"); }),
                 std::runtime_error);
    EXPECT_THROW((void)catch_error([] { throw std::bad_alloc(); }), std::bad_alloc);
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
