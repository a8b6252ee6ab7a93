#include <gtest/gtest.h>

#include <sys/stat.h>

#include "kpkg/core/atomic_file.hpp"
#include "support/support.hpp"

using namespace kpkg;
namespace fs = std::filesystem;

static std::size_t entries(const fs::path& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
        ++n;
    return n;
}

TEST(AtomicFile, WritesWholeContent) {
    test::TempDir d;
    ASSERT_TRUE(write_file_atomic(d / "out.yaml", "a: 1\n").ok());
    EXPECT_EQ(test::read_file(d / "out.yaml"), "a: 1\n");
    EXPECT_EQ(entries(d.path()), 1u);
}

TEST(AtomicFile, ReplacesExistingFileOnlyOnCommit) {
    test::TempDir d;
    d.write("out.txt", "old");
    {
        auto f = AtomicFile::create(d / "out.txt");
        ASSERT_TRUE(f.ok());
        ASSERT_TRUE(f->write("new content").ok());
        EXPECT_EQ(test::read_file(d / "out.txt"), "old"); // not visible before commit
        EXPECT_EQ(entries(d.path()), 2u);
        ASSERT_TRUE(f->commit().ok());
    }
    EXPECT_EQ(test::read_file(d / "out.txt"), "new content");
    EXPECT_EQ(entries(d.path()), 1u);
}

TEST(AtomicFile, UncommittedLeavesNothingBehind) {
    test::TempDir d;
    d.write("keep.txt", "old");
    {
        auto f = AtomicFile::create(d / "keep.txt");
        ASSERT_TRUE(f.ok());
        ASSERT_TRUE(f->write("partial").ok());
    } // destroyed without commit: a failed run
    EXPECT_EQ(test::read_file(d / "keep.txt"), "old");
    EXPECT_EQ(entries(d.path()), 1u);
    {
        auto f = AtomicFile::create(d / "new.txt");
        ASSERT_TRUE(f.ok());
        f->abort();
    }
    EXPECT_FALSE(fs::exists(d / "new.txt"));
    EXPECT_EQ(entries(d.path()), 1u);
}

TEST(AtomicFile, ModeFollowsUmask) {
    test::TempDir d;
    mode_t old = ::umask(022);
    ASSERT_TRUE(write_file_atomic(d / "m", "x").ok());
    ::umask(old);
    struct stat st {};
    ASSERT_EQ(::stat((d / "m").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(AtomicFile, ErrorsNameThePath) {
    test::TempDir d;
    auto r = write_file_atomic(d / "missing-dir" / "f", "x");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().str().find("missing-dir"), std::string::npos);
    auto r2 = write_file_atomic(d.path(), "x");
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.error().str().find("is a directory"), std::string::npos);
    EXPECT_EQ(entries(d.path()), 0u);
}
