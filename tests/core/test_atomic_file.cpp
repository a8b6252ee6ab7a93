#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

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
        EXPECT_EQ(entries(d.path()), 1u); // and nothing named beside it yet (O_TMPFILE)
        EXPECT_TRUE(f->temp_path().empty());
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

// A writer killed (SIGKILL: no destructor runs) in the middle of writing leaves no file behind.
TEST(AtomicFile, AKilledWriterLeavesNoTemporaryFile) {
    test::TempDir d;
    for (const bool output : {false, true}) {
        int ready[2];
        ASSERT_EQ(::pipe(ready), 0);
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            auto f = output ? AtomicFile::create_output(d / "out.json")
                            : AtomicFile::create(d / "out.json");
            if (!f.ok()) ::_exit(1);
            const std::string chunk(1 << 20, 'x');
            for (int i = 0; i < 4; ++i)
                if (!f->write(chunk).ok()) ::_exit(1);
            if (::write(ready[1], "w", 1) != 1) ::_exit(1);
            for (;;)
                ::pause();
        }
        ::close(ready[1]);
        char c = 0;
        ASSERT_EQ(::read(ready[0], &c, 1), 1) << "the writer failed";
        ::close(ready[0]);
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        ASSERT_TRUE(WIFSIGNALED(status));
        EXPECT_EQ(entries(d.path()), 0u) << "output " << output;
    }
}

TEST(AtomicFile, OutputThroughASymbolicLinkReplacesWhatItPointsTo) {
    test::TempDir d;
    d.write("real/out.json", "old");
    fs::create_symlink("real/out.json", d / "link.json");
    ASSERT_TRUE(write_output_file(d / "link.json", "new").ok());
    EXPECT_TRUE(fs::is_symlink(d / "link.json"));
    EXPECT_EQ(test::read_file(d / "real/out.json"), "new");
    EXPECT_EQ(entries(d / "real"), 1u);
    // A link to a file that does not exist yet creates it.
    fs::create_symlink(d / "real/new.json", d / "dangling.json");
    ASSERT_TRUE(write_output_file(d / "dangling.json", "fresh").ok());
    EXPECT_TRUE(fs::is_symlink(d / "dangling.json"));
    EXPECT_EQ(test::read_file(d / "real/new.json"), "fresh");
    // A file of kpkg's own (create): the link itself is replaced, its target left alone.
    ASSERT_TRUE(write_file_atomic(d / "link.json", "own").ok());
    EXPECT_FALSE(fs::is_symlink(d / "link.json"));
    EXPECT_EQ(test::read_file(d / "real/out.json"), "new");
}

TEST(AtomicFile, OutputKeepsTheModeOfAnExistingFile) {
    test::TempDir d;
    d.write("out.json", "old");
    ASSERT_EQ(::chmod((d / "out.json").c_str(), 0640), 0);
    ASSERT_TRUE(write_output_file(d / "out.json", "new").ok());
    struct stat st {};
    ASSERT_EQ(::stat((d / "out.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    EXPECT_EQ(test::read_file(d / "out.json"), "new");
}

// What is not a regular file (a FIFO here; /dev/stdout, /dev/null alike) is written to directly:
// the reader gets the data and the FIFO stays.
TEST(AtomicFile, OutputToAFifoIsWrittenDirectly) {
    test::TempDir d;
    const fs::path fifo = d / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    fs::create_symlink(fifo, d / "link");
    for (const char* name : {"pipe", "link"}) {
        const int rfd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
        ASSERT_GE(rfd, 0);
        std::string got;
        std::thread reader([&] {
            char buf[256];
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (std::chrono::steady_clock::now() < until) {
                pollfd p{rfd, POLLIN, 0};
                if (::poll(&p, 1, 5000) <= 0) return; // nothing came
                const ssize_t n = ::read(rfd, buf, sizeof buf);
                if (n > 0) {
                    got.append(buf, static_cast<std::size_t>(n));
                    continue;
                }
                if (n == 0 && !got.empty()) return; // the writer closed
                if (n == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        });
        auto r = write_output_file(d / name, "through the pipe\n");
        reader.join();
        ::close(rfd);
        EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
        EXPECT_EQ(got, "through the pipe\n") << name;
        struct stat st {};
        ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
        EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "replaced through " << name;
    }
}
