// io::Tree: directories, single files, standard input and memory trees list the same way, defer
// what cannot be read to the entry, read with a limit, and give caches an identity.
#include <gtest/gtest.h>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>

#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"
#include "support/support.hpp"

using namespace kpkg;
using io::Entry;
using io::Problem;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> rels(const std::vector<Entry>& v) {
    std::vector<std::string> out;
    for (const auto& e : v)
        out.push_back(e.rel + (e.is_dir() ? "/" : ""));
    return out;
}

const Entry* find(const std::vector<Entry>& v, const std::string& rel) {
    for (const auto& e : v)
        if (e.rel == rel) return &e;
    return nullptr;
}

std::string text_of(const io::Tree& t, const std::string& rel) {
    auto c = t.read(rel);
    if (!c.ok()) return "ERROR " + c.error().message;
    return std::string(c->text());
}

} // namespace

TEST(TreePathOrder, ComponentsCompareBytewiseWithSlashFirst) {
    EXPECT_TRUE(io::path_less("a/b", "a-b")); // '/' before '-'
    EXPECT_TRUE(io::path_less("a/z", "a.b")); // the component "a" before "a.b"
    EXPECT_TRUE(io::path_less("B", "a"));     // bytewise, not by locale
    EXPECT_TRUE(io::path_less("", "a"));
    EXPECT_FALSE(io::path_less("a", "a"));
    EXPECT_TRUE(io::path_less("a", "a/b"));
    EXPECT_TRUE(io::path_less("\x7f", "\xc3\xa9")); // unsigned bytes
}

TEST(DirectoryTree, ListsDirectoriesAndFilesInPathOrderWithDisplayNames) {
    test::TempDir d;
    d.write("c/a-b.yaml", "1");
    d.write("c/a/b.yaml", "2");
    d.write("c/.hidden", "3");
    d.write("c/B/x.json", "4");
    fs::create_directories(d / "c/empty");
    // The root as the user gave it, trailing slash included.
    io::DirectoryTree t(d.path().string() + "/c/");
    auto l = t.list();
    ASSERT_TRUE(l.ok()) << l.error().str();
    EXPECT_EQ(rels(*l), (std::vector<std::string>{"/", ".hidden", "B/", "B/x.json", "a/",
                                                  "a/b.yaml", "a-b.yaml", "empty/"}));
    EXPECT_EQ((*l)[0].display, d.path().string() + "/c/");
    EXPECT_EQ(find(*l, "a/b.yaml")->display, d.path().string() + "/c/a/b.yaml");
    EXPECT_EQ(t.display("a/b.yaml"), d.path().string() + "/c/a/b.yaml");
    EXPECT_TRUE(t.is_directory());
    EXPECT_EQ(text_of(t, "B/x.json"), "4");
    for (const auto& e : *l)
        EXPECT_FALSE(e.problem) << e.rel;
}

TEST(DirectoryTree, HostileEntriesGetAProblemNotAFailure) {
    test::TempDir d;
    d.write("outside/secret.yaml", "secret");
    d.write("c/ok.yaml", "ok");
    d.write("c/sub/in.yaml", "in");
    const fs::path c = d / "c";
    fs::create_symlink("../outside/secret.yaml", c / "dotdot.yaml");
    fs::create_symlink(d / "outside/secret.yaml", c / "absolute.yaml");
    fs::create_symlink("sub/in.yaml", c / "inside.yaml");
    fs::create_symlink("gone.yaml", c / "dangling.yaml");
    fs::create_symlink("loop2", c / "loop1");
    fs::create_symlink("loop1", c / "loop2");
    fs::create_directory_symlink("sub", c / "dirlink");
    fs::create_directory_symlink(d / "outside", c / "outdir");
    ASSERT_EQ(::mkfifo((c / "fifo").c_str(), 0600), 0);

    io::DirectoryTree t(c);
    auto l = t.list();
    ASSERT_TRUE(l.ok()) << l.error().str();
    auto kind = [&](const std::string& rel) {
        const Entry* e = find(*l, rel);
        EXPECT_NE(e, nullptr) << rel;
        return e != nullptr && e->problem ? static_cast<int>(e->problem->kind) : -1;
    };
    EXPECT_EQ(kind("ok.yaml"), -1);
    EXPECT_EQ(kind("inside.yaml"), -1);
    EXPECT_EQ(kind("dotdot.yaml"), static_cast<int>(Problem::Kind::leaves_root));
    EXPECT_EQ(find(*l, "dotdot.yaml")->problem->target, "../outside/secret.yaml");
    EXPECT_EQ(kind("absolute.yaml"), static_cast<int>(Problem::Kind::leaves_root));
    EXPECT_EQ(kind("outdir"), static_cast<int>(Problem::Kind::leaves_root));
    EXPECT_EQ(kind("dangling.yaml"), static_cast<int>(Problem::Kind::dangling));
    EXPECT_EQ(find(*l, "dangling.yaml")->problem->why, "no such file or directory");
    EXPECT_EQ(kind("loop1"), static_cast<int>(Problem::Kind::dangling));
    EXPECT_EQ(find(*l, "loop1")->problem->why, "too many levels of symbolic links");
    EXPECT_EQ(kind("dirlink"), static_cast<int>(Problem::Kind::link_to_dir));
    EXPECT_EQ(kind("fifo"), static_cast<int>(Problem::Kind::not_regular));
    // Links are never walked into: nothing below dirlink/ or outdir/ is listed.
    EXPECT_EQ(find(*l, "dirlink/in.yaml"), nullptr);
    EXPECT_EQ(find(*l, "outdir/secret.yaml"), nullptr);

    EXPECT_EQ(text_of(t, "inside.yaml"), "in");
    // Reading an entry with a problem refuses it (a link leaving the root: exit 3).
    auto r = t.read(*find(*l, "dotdot.yaml"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_NE(r.error().message.find("dotdot.yaml"), std::string::npos) << r.error().message;
    r = t.read(*find(*l, "fifo")); // would block if it were opened
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::error);
    // Names that are not part of the tree are never read.
    EXPECT_FALSE(t.read("../outside/secret.yaml").ok());
    EXPECT_FALSE(t.read("/etc/passwd").ok());
    EXPECT_FALSE(t.read("sub/../ok.yaml").ok());
}

TEST(DirectoryTree, UnreadableSubdirectoryFailsTheListingNamingIt) {
    test::TempDir d;
    d.write("c/a/x.yaml", "1");
    d.write("c/b/y.yaml", "2");
    d.write("c/c/z.yaml", "3");
    // Open to everybody but c/b (root reads everything: the listing runs as nobody then).
    fs::permissions(d.path(), fs::perms::owner_all | fs::perms::others_exec);
    fs::permissions(d / "c/b", fs::perms::none);
    const std::string want =
        "cannot read directory " + (d / "c/b").string() + ": permission denied";
    auto check = [&]() -> std::string {
        io::DirectoryTree t(d / "c");
        auto l = t.list();
        if (l.ok()) return "listed";
        if (l.error().code != ExitCode::error) return "wrong code";
        return l.error().message;
    };
    if (::geteuid() != 0) {
        EXPECT_EQ(check(), want);
    } else {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::close(fds[0]);
            std::string got = "cannot switch to nobody";
            if (::setgroups(0, nullptr) == 0 && ::setgid(65534) == 0 && ::setuid(65534) == 0)
                got = check();
            (void)!::write(fds[1], got.data(), got.size());
            ::_exit(0);
        }
        ::close(fds[1]);
        std::string got;
        char buf[512];
        for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
            got.append(buf, static_cast<std::size_t>(n));
        ::close(fds[0]);
        int status = 0;
        ::waitpid(pid, &status, 0);
        EXPECT_EQ(got, want);
    }
    fs::permissions(d / "c/b", fs::perms::owner_all);
}

TEST(DirectoryTree, MissingRootFails) {
    test::TempDir d;
    io::DirectoryTree t(d / "nope");
    auto l = t.list();
    ASSERT_FALSE(l.ok());
    EXPECT_EQ(l.error().code, ExitCode::error);
    EXPECT_NE(l.error().message.find("nope"), std::string::npos);
}

TEST(TreeRead, SizeLimitMappingAndStamps) {
    test::TempDir d;
    const std::string big(5 << 20, 'x'); // over the size from which files are mapped
    d.write("c/big.yaml", big);
    d.write("c/small.yaml", "small");
    io::DirectoryTree t(d / "c");
    io::ReadOptions limited;
    limited.limit = 1 << 20;
    auto r = t.read("big.yaml", limited);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->too_large);
    EXPECT_EQ(r->size, big.size());
    EXPECT_TRUE(r->text().empty());
    r = t.read("big.yaml");
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->too_large);
    EXPECT_EQ(r->text().size(), big.size());
    EXPECT_EQ(r->text().substr(0, 3), "xxx");
    ASSERT_TRUE(r->stamp);
    EXPECT_EQ(r->stamp->size, big.size());
    EXPECT_FALSE(r->streamed);
    // Moving the contents keeps the bytes (a mapping, a copy).
    io::Contents moved = std::move(*r);
    EXPECT_EQ(moved.text().size(), big.size());
    auto s = t.read("small.yaml");
    ASSERT_TRUE(s.ok());
    io::Contents small = std::move(*s);
    EXPECT_EQ(small.text(), "small");
    std::string buffer;
    io::ReadOptions with_buffer;
    with_buffer.buffer = &buffer;
    auto b = t.read("small.yaml", with_buffer);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->text(), "small");
    EXPECT_EQ(b->text().data(), buffer.data());
    // A file at exactly the limit is read.
    io::ReadOptions exact;
    exact.limit = 5;
    EXPECT_FALSE(t.read("small.yaml", exact)->too_large);
    exact.limit = 4;
    EXPECT_TRUE(t.read("small.yaml", exact)->too_large);
}

// Files of a few dozen KB are mapped (no fresh heap pages) unless the caller's reused buffer
// already has room; either way the bytes are the file's.
TEST(TreeRead, MidSizedFilesMappedUnlessTheBufferHasRoom) {
    test::TempDir d;
    std::string mid;
    for (int i = 0; mid.size() < (100 << 10); ++i)
        mid += "line " + std::to_string(i) + "\n";
    d.write("c/mid.yaml", mid);
    io::DirectoryTree t(d / "c");
    auto plain = t.read("mid.yaml");
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(plain->text(), mid);
    std::string buffer;
    io::ReadOptions with_buffer;
    with_buffer.buffer = &buffer;
    auto mapped = t.read("mid.yaml", with_buffer); // no room yet: mapped, buffer untouched
    ASSERT_TRUE(mapped.ok());
    EXPECT_EQ(mapped->text(), mid);
    EXPECT_NE(mapped->text().data(), buffer.data());
    buffer.reserve(mid.size());
    auto read = t.read("mid.yaml", with_buffer); // room: read into the buffer
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read->text(), mid);
    EXPECT_EQ(read->text().data(), buffer.data());
    io::Contents moved = std::move(*mapped);
    EXPECT_EQ(moved.text(), mid);
}

TEST(FileTree, OneEntryNamedByTheFileAndShownAsGiven) {
    test::TempDir d;
    const fs::path p = d.write("dir/cat.yaml", "schema: olm.package\n");
    io::FileTree t(p);
    auto l = t.list();
    ASSERT_TRUE(l.ok());
    ASSERT_EQ(l->size(), 1u);
    EXPECT_EQ((*l)[0].rel, "cat.yaml");
    EXPECT_EQ((*l)[0].display, p.string());
    EXPECT_FALSE(t.is_directory());
    EXPECT_EQ(text_of(t, "cat.yaml"), "schema: olm.package\n");
    EXPECT_FALSE(t.read("other.yaml").ok());
    io::FileTree missing(d / "nope.yaml");
    auto m = missing.list();
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().message,
              "cannot read " + (d / "nope.yaml").string() + ": no such file or directory");
    io::FileTree dir(d / "dir");
    auto r = dir.read("dir");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "cannot read " + (d / "dir").string() + ": it is a directory");
}

TEST(FileTree, AFifoIsReadAsAStreamWithTheLimit) {
    test::TempDir d;
    const fs::path fifo = d / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] {
        FILE* f = std::fopen(fifo.c_str(), "w");
        if (f == nullptr) return;
        std::fputs("schema: olm.package\nname: p\n", f);
        std::fclose(f);
    });
    io::FileTree t(fifo);
    auto r = t.read("pipe");
    writer.join();
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_TRUE(r->streamed);
    EXPECT_FALSE(r->stamp);
    EXPECT_EQ(r->text(), "schema: olm.package\nname: p\n");

    std::thread writer2([&] {
        FILE* f = std::fopen(fifo.c_str(), "w");
        if (f == nullptr) return;
        std::fputs(std::string(1000, 'y').c_str(), f);
        std::fclose(f);
    });
    io::ReadOptions o;
    o.limit = 100;
    auto big = t.read("pipe", o);
    writer2.join();
    ASSERT_TRUE(big.ok());
    EXPECT_TRUE(big->too_large);
    EXPECT_TRUE(big->text().empty());
}

TEST(StdinTree, ReadOnceAndKept) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const std::string data = "schema: olm.package\nname: from-stdin\n";
    ASSERT_EQ(::write(fds[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
    ::close(fds[1]);
    io::StdinTree t(fds[0]);
    auto l = t.list();
    ASSERT_TRUE(l.ok());
    ASSERT_EQ(l->size(), 1u);
    EXPECT_EQ((*l)[0].rel, "-");
    EXPECT_EQ((*l)[0].display, "<stdin>");
    EXPECT_EQ(text_of(t, "-"), data);
    EXPECT_EQ(text_of(t, "-"), data); // the second read sees the same bytes
    io::ReadOptions small;
    small.limit = 5;
    EXPECT_TRUE(t.read("-", small)->too_large);
    EXPECT_EQ(t.identity().kind, io::Identity::Kind::none);
    ::close(fds[0]);
}

TEST(MemoryTree, ListsLikeADirectoryWithTheSameLinkRules) {
    io::MemoryTree t("mem");
    t.add_file("a/b.yaml", "b")
        .add_file("a-b.yaml", "ab")
        .add_file("store/real.yaml", "real")
        .add_dir("empty")
        .add_link("a/link.yaml", "../store/real.yaml")
        .add_link("dotdot.yaml", "../outside.yaml")
        .add_link("absolute.yaml", "/etc/passwd")
        .add_link("dangling.yaml", "gone.yaml")
        .add_link("loop1", "loop2")
        .add_link("loop2", "loop1")
        .add_link("dirlink", "store")
        .add_special("sock");
    auto l = t.list();
    ASSERT_TRUE(l.ok()) << l.error().str();
    EXPECT_EQ(rels(*l), (std::vector<std::string>{"/", "a/", "a/b.yaml", "a/link.yaml", "a-b.yaml",
                                                  "absolute.yaml", "dangling.yaml", "dirlink",
                                                  "dotdot.yaml", "empty/", "loop1", "loop2", "sock",
                                                  "store/", "store/real.yaml"}));
    EXPECT_EQ(find(*l, "a/b.yaml")->display, "mem/a/b.yaml");
    EXPECT_EQ((*l)[0].display, "mem");
    auto kind = [&](const std::string& rel) {
        const Entry* e = find(*l, rel);
        return e != nullptr && e->problem ? static_cast<int>(e->problem->kind) : -1;
    };
    EXPECT_EQ(kind("a/link.yaml"), -1);
    EXPECT_EQ(kind("dotdot.yaml"), static_cast<int>(Problem::Kind::leaves_root));
    EXPECT_EQ(kind("absolute.yaml"), static_cast<int>(Problem::Kind::leaves_root));
    EXPECT_EQ(kind("dangling.yaml"), static_cast<int>(Problem::Kind::dangling));
    EXPECT_EQ(find(*l, "dangling.yaml")->problem->why, "no such file or directory");
    EXPECT_EQ(find(*l, "dangling.yaml")->problem->target, "gone.yaml");
    EXPECT_EQ(find(*l, "loop1")->problem->why, "too many levels of symbolic links");
    EXPECT_EQ(kind("dirlink"), static_cast<int>(Problem::Kind::link_to_dir));
    EXPECT_EQ(kind("sock"), static_cast<int>(Problem::Kind::not_regular));
    EXPECT_EQ(text_of(t, "a/link.yaml"), "real");
    EXPECT_EQ(t.read(*find(*l, "dotdot.yaml")).error().code, ExitCode::invalid);
    EXPECT_FALSE(t.read("../x").ok());
    io::ReadOptions o;
    o.limit = 3;
    auto r = t.read("store/real.yaml", o);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->too_large);
    EXPECT_EQ(r->size, 4u);
}

// A file added as a view is read without a copy; the owner kept by the tree keeps the bytes
// alive after everyone else has let go of them.
TEST(MemoryTree, FilesAddedAsViewsAreReadFromTheKeptOwner) {
    io::MemoryTree t("img");
    {
        auto owner = std::make_shared<const std::string>("kind: ConfigMap\n");
        t.add_file_view("manifests/cm.yaml", *owner);
        t.keep(owner);
        t.add_file("manifests/copy.yaml", *owner);
    }
    auto r = t.read("manifests/cm.yaml");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->text(), "kind: ConfigMap\n");
    auto again = t.read("manifests/cm.yaml");
    EXPECT_EQ(again->text().data(), r->text().data()); // the one kept copy, not copied per read
    io::ReadOptions tiny;
    tiny.limit = 4;
    EXPECT_TRUE(t.read("manifests/cm.yaml", tiny)->too_large);
    auto listing = t.list();
    ASSERT_TRUE(listing.ok());
    EXPECT_EQ(listing->size(), 4u); // root, manifests, two files
}

TEST(MemoryTree, UnreadableDirectoryFailsTheListing) {
    io::MemoryTree t("mem");
    t.add_file("a/x.yaml", "x").add_unreadable_dir("b");
    auto l = t.list();
    ASSERT_FALSE(l.ok());
    EXPECT_EQ(l.error().code, ExitCode::error);
    EXPECT_EQ(l.error().message, "cannot read directory mem/b: permission denied");
}

TEST(TreeIdentity, LocalTreesAreStampedMemoryAndStdinAreNot) {
    test::TempDir d;
    d.write("c/x.yaml", "1");
    io::DirectoryTree t(d / "c");
    const auto id = t.identity();
    EXPECT_EQ(id.kind, io::Identity::Kind::stamped);
    EXPECT_TRUE(id.dir);
    EXPECT_EQ(id.key, fs::canonical(d / "c").string());
    // The same directory through a link has the same identity.
    fs::create_directory_symlink(d / "c", d / "via");
    EXPECT_EQ(io::DirectoryTree(d / "via").identity().key, id.key);
    io::FileTree f(d / "c/x.yaml");
    EXPECT_EQ(f.identity().kind, io::Identity::Kind::stamped);
    EXPECT_FALSE(f.identity().dir);
    EXPECT_NE(f.identity().key, id.key);
    io::MemoryTree m;
    EXPECT_EQ(m.identity().kind, io::Identity::Kind::none);
    io::Identity image{io::Identity::Kind::immutable, "sha256:abc", true};
    m.set_identity(image);
    EXPECT_EQ(m.identity().kind, io::Identity::Kind::immutable);
    EXPECT_EQ(m.identity().key, "sha256:abc");
}

TEST(TreeIdentity, StampsChangeWhenAFileChanges) {
    test::TempDir d;
    d.write("c/x.yaml", "1");
    io::DirectoryTree t(d / "c");
    const auto before = t.stamp("x.yaml");
    const auto root_before = t.stamp("");
    ASSERT_TRUE(before && root_before);
    EXPECT_TRUE(root_before->dir);
    EXPECT_EQ(t.read("x.yaml")->stamp, before);
    EXPECT_EQ(t.stamp("x.yaml"), before); // unchanged: the same
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    d.write("c/x.yaml", "22");
    const auto after = t.stamp("x.yaml");
    ASSERT_TRUE(after);
    EXPECT_NE(*after, *before);
    EXPECT_EQ(after->size, 2u);
    d.write("c/y.yaml", "new"); // an added file changes the directory
    EXPECT_NE(t.stamp(""), root_before);
    fs::remove(d / "c/x.yaml");
    EXPECT_FALSE(t.stamp("x.yaml"));
    io::FileTree f(d / "c/y.yaml");
    EXPECT_EQ(f.stamp("y.yaml"), f.read("y.yaml")->stamp);
}

TEST(OpenPath, DecidesWhatAnArgumentIs) {
    test::TempDir d;
    d.write("c/x.yaml", "1");
    EXPECT_TRUE(io::open_path(d / "c")->is_directory());
    EXPECT_NE(dynamic_cast<io::DirectoryTree*>(io::open_path(d / "c").get()), nullptr);
    EXPECT_NE(dynamic_cast<io::FileTree*>(io::open_path(d / "c/x.yaml").get()), nullptr);
    EXPECT_NE(dynamic_cast<io::FileTree*>(io::open_path(d / "missing").get()), nullptr);
    EXPECT_NE(dynamic_cast<io::StdinTree*>(io::open_path("-").get()), nullptr);
}

// io::read_file reads through single-file trees and words its errors as it always did.
TEST(ReadFileThroughTrees, MessagesOfPathsAndTrees) {
    test::TempDir d;
    const fs::path f = d.write("ten.yaml", "0123456789");
    io::Limits small;
    small.max_file_bytes = 4;
    const std::string q = std::string("\"").append(f.string()).append("\"");
    EXPECT_EQ(io::read_file(f, small).error().message,
              q + " is too large: 10 bytes (the limit is 4 bytes)");
    EXPECT_EQ(io::read_file(io::FileTree(f), small).error().message,
              q + " is too large: 10 bytes (the limit is 4 bytes)");
    EXPECT_EQ(*io::read_file(io::FileTree(f)), "0123456789");
    const std::string missing = std::string("\"").append((d / "nope").string()).append("\"");
    EXPECT_EQ(io::read_file(d / "nope").error().message,
              "cannot read " + missing + ": no such file or directory");
    EXPECT_EQ(io::read_file(io::DirectoryTree(d.path())).error().message,
              "cannot read \"" + d.path().string() + "\": it is a directory");
    EXPECT_EQ(io::read_file(d.path()).error().message,
              "cannot read \"" + d.path().string() + "\": it is a directory");
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ASSERT_EQ(::write(fds[1], "0123456789", 10), 10);
    ::close(fds[1]);
    EXPECT_EQ(io::read_file(io::StdinTree(fds[0]), small).error().message,
              "standard input is too large: more than the limit of 4 bytes");
    ::close(fds[0]);
    // A memory tree is a directory: refused as a directory is.
    io::MemoryTree m("mem");
    EXPECT_EQ(io::read_file(m).error().message, "cannot read \"mem\": it is a directory");
    auto docs = io::load_file(io::FileTree(f));
    ASSERT_TRUE(docs.ok());
}

// list_dir and find give what list() gives, one directory at a time, on disk and in memory.
TEST(TreeListDir, OneDirectoryAtATimeAsListGivesIt) {
    test::TempDir d;
    d.write("r/m/b.yaml", "b");
    d.write("r/m/a.yaml", "a");
    d.write("r/m/sub/deep.yaml", "deep");
    d.write("r/m/.hidden", "h");
    d.write("r/store/real.yaml", "real");
    d.write("outside/secret.yaml", "s");
    fs::create_symlink("../store/real.yaml", d / "r/m/in.yaml");
    fs::create_symlink("../../outside/secret.yaml", d / "r/m/out.yaml");
    fs::create_symlink("gone.yaml", d / "r/m/dangling.yaml");
    fs::create_directory_symlink("../store", d / "r/m/dirlink");
    fs::create_directory_symlink("store", d / "r/linked");
    fs::create_directory_symlink("../outside", d / "r/away");
    io::MemoryTree mem((d / "r").string());
    mem.add_file("m/b.yaml", "b")
        .add_file("m/a.yaml", "a")
        .add_file("m/sub/deep.yaml", "deep")
        .add_file("m/.hidden", "h")
        .add_file("store/real.yaml", "real")
        .add_link("m/in.yaml", "../store/real.yaml")
        .add_link("m/out.yaml", "../../outside/secret.yaml")
        .add_link("m/dangling.yaml", "gone.yaml")
        .add_link("m/dirlink", "../store")
        .add_link("linked", "store")
        .add_link("away", "../outside");
    const io::DirectoryTree disk(d / "r");
    for (const io::Tree* t :
         {static_cast<const io::Tree*>(&disk), static_cast<const io::Tree*>(&mem)}) {
        SCOPED_TRACE(t == &disk ? "disk" : "memory");
        auto all = t->list();
        ASSERT_TRUE(all.ok()) << all.error().str();
        auto m = t->list_dir("m");
        ASSERT_TRUE(m.ok()) << m.error().str();
        EXPECT_EQ(rels(*m),
                  (std::vector<std::string>{"m/.hidden", "m/a.yaml", "m/b.yaml", "m/dangling.yaml",
                                            "m/dirlink", "m/in.yaml", "m/out.yaml", "m/sub/"}));
        for (const auto& e : *m) {
            const Entry* same = find(*all, e.rel);
            ASSERT_NE(same, nullptr) << e.rel;
            EXPECT_EQ(e.display, same->display);
            EXPECT_EQ(e.kind, same->kind);
            EXPECT_EQ(e.problem.has_value(), same->problem.has_value()) << e.rel;
            if (e.problem && same->problem) {
                EXPECT_EQ(e.problem->kind, same->problem->kind);
            }
        }
        EXPECT_EQ(find(*m, "m/out.yaml")->problem->kind, Problem::Kind::leaves_root);
        EXPECT_EQ(find(*m, "m/dangling.yaml")->problem->error, ENOENT);
        EXPECT_EQ(find(*m, "m/dirlink")->problem->kind, Problem::Kind::link_to_dir);
        // The root's own entries, without going down.
        auto root = t->list_dir("");
        ASSERT_TRUE(root.ok()) << root.error().str();
        EXPECT_EQ(rels(*root), (std::vector<std::string>{"away", "linked", "m/", "store/"}));
        // A link to a directory within the root is listed through, named under the link.
        auto linked = t->list_dir("linked");
        ASSERT_TRUE(linked.ok()) << linked.error().str();
        EXPECT_EQ(rels(*linked), (std::vector<std::string>{"linked/real.yaml"}));
        EXPECT_EQ(text_of(*t, "linked/real.yaml"), "real");
        // One leaving the root is not.
        auto away = t->list_dir("away");
        ASSERT_FALSE(away.ok());
        EXPECT_NE(away.error().message.find((d / "r/away").string()), std::string::npos)
            << away.error().message;
        // Not there, not a directory.
        auto none = t->list_dir("nope");
        ASSERT_FALSE(none.ok());
        EXPECT_EQ(none.error().code, ExitCode::error);
        EXPECT_NE(none.error().message.find("no such file or directory"), std::string::npos)
            << none.error().message;
        auto file = t->list_dir("m/a.yaml");
        ASSERT_FALSE(file.ok());
        EXPECT_NE(file.error().message.find("not a directory"), std::string::npos)
            << file.error().message;

        // find: one entry as list() classifies it; nothing when there is none.
        auto f = t->find("m/out.yaml");
        ASSERT_TRUE(f.ok() && f->has_value());
        EXPECT_EQ((*f)->problem->kind, Problem::Kind::leaves_root);
        EXPECT_EQ((*f)->display, (d / "r/m/out.yaml").string());
        auto dir = t->find("m");
        ASSERT_TRUE(dir.ok() && dir->has_value());
        EXPECT_TRUE((*dir)->is_dir());
        auto gone = t->find("m/nope.yaml");
        ASSERT_TRUE(gone.ok());
        EXPECT_FALSE(gone->has_value());
        auto r = t->find("");
        ASSERT_TRUE(r.ok() && r->has_value());
        EXPECT_TRUE((*r)->is_dir());
    }
}

TEST(TreeListDir, AnUnreadableDirectoryFailsOnlyWhenListed) {
    io::MemoryTree t("mem");
    t.add_file("a/x.yaml", "x").add_unreadable_dir("b");
    auto a = t.list_dir("a");
    ASSERT_TRUE(a.ok()) << a.error().str();
    EXPECT_EQ(rels(*a), (std::vector<std::string>{"a/x.yaml"}));
    auto b = t.list_dir("b");
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.error().message, "cannot read directory mem/b: permission denied");
    auto fb = t.find("b");
    ASSERT_TRUE(fb.ok() && fb->has_value());
    EXPECT_TRUE((*fb)->is_dir());
}

// An empty file's text is empty but never a null pointer (it goes to memchr and the like), also
// after the Contents is moved.
TEST(TreeRead, AnEmptyFileIsANonNullEmptyText) {
    test::TempDir d;
    d.write("t/empty.yaml", "");
    io::DirectoryTree disk(d / "t");
    io::MemoryTree mem("m");
    mem.add_file("empty.yaml", "");
    std::string buffer = "reused";
    io::ReadOptions with_buffer;
    with_buffer.buffer = &buffer;
    for (const io::Tree* t :
         {static_cast<const io::Tree*>(&disk), static_cast<const io::Tree*>(&mem)}) {
        for (const io::ReadOptions& o : {io::ReadOptions{}, with_buffer}) {
            auto c = t->read("empty.yaml", o);
            ASSERT_TRUE(c.ok()) << c.error().str();
            EXPECT_TRUE(c->text().empty());
            EXPECT_NE(c->text().data(), nullptr);
            io::Contents moved = std::move(*c);
            EXPECT_TRUE(moved.text().empty());
            EXPECT_NE(moved.text().data(), nullptr);
        }
    }
    io::Contents fresh;
    EXPECT_NE(fresh.text().data(), nullptr);
}
