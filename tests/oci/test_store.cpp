// The blob cache (kpkg/oci/store.hpp): verified reads and writes, damaged blobs dropped, tag
// records, listing with referrers, prune.
#include <sys/stat.h>
#include <sys/time.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "kpkg/core/digest.hpp"
#include "kpkg/oci/store.hpp"
#include "kpkg/oci/url_cache.hpp"
#include "registry_fixture.hpp"

using namespace kpkg;
using namespace kpkg::test;

namespace {

void set_mtime(const fs::path& p, std::chrono::system_clock::time_point t) {
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
    timeval tv[2] = {{static_cast<time_t>(s), 0}, {static_cast<time_t>(s), 0}};
    ASSERT_EQ(::utimes(p.c_str(), tv), 0);
}

} // namespace

TEST(OciStore, PutThenGetGivesTheBytesAtTheContentAddress) {
    TempDir d;
    oci::Store s(d.path());
    const std::string bytes = "hello blob";
    const std::string dg = sha256_digest(bytes);
    ASSERT_TRUE(s.put(dg, bytes));
    EXPECT_TRUE(fs::exists(d / ("blobs/sha256/" + dg.substr(7))));
    auto got = s.get(dg);
    ASSERT_TRUE(got);
    ASSERT_TRUE(got->has_value());
    EXPECT_EQ(**got, bytes);
    EXPECT_TRUE(s.has(dg));
    // Absent: nothing, not an error.
    auto none = s.get(sha256_digest("other"));
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->has_value());
}

TEST(OciStore, RefusesBytesThatDoNotMatchTheDigestAndWritesNothing) {
    TempDir d;
    oci::Store s(d.path());
    const std::string dg = sha256_digest("right");
    auto r = s.put(dg, "wrong");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(r.error().str(), dg)) << r.error().str();
    EXPECT_FALSE(fs::exists(s.blob_path(dg)));
    auto bad = s.put("sha256:abc", "x");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, ExitCode::invalid);
}

TEST(OciStore, ADamagedBlobIsDeletedAndCountsAsAbsent) {
    TempDir d;
    oci::Store s(d.path());
    const std::string dg = sha256_digest("precious");
    ASSERT_TRUE(s.put(dg, "precious"));
    {
        std::ofstream f(s.blob_path(dg), std::ios::trunc);
        f << "precioUs";
    }
    auto got = s.get(dg);
    ASSERT_TRUE(got);
    EXPECT_FALSE(got->has_value());
    EXPECT_FALSE(fs::exists(s.blob_path(dg)));
    // And it can be stored again.
    ASSERT_TRUE(s.put(dg, "precious"));
    EXPECT_EQ(**s.get(dg), "precious");
}

TEST(OciStore, ADamagedBlobOfTheSameSizeIsReplacedByPut) {
    TempDir d;
    oci::Store s(d.path());
    const std::string dg = sha256_digest("abcd");
    ASSERT_TRUE(s.put(dg, "abcd"));
    {
        std::ofstream f(s.blob_path(dg), std::ios::trunc);
        f << "abcX";
    }
    ASSERT_TRUE(s.put(dg, "abcd"));
    auto got = s.get(dg);
    ASSERT_TRUE(got);
    ASSERT_TRUE(got->has_value());
    EXPECT_EQ(**got, "abcd");
}

TEST(OciStore, TagRecordsRememberTheDigestAndTime) {
    TempDir d;
    oci::Store s(d.path());
    const auto ref = ref_of("127.0.0.1:5000/org/app:v1");
    EXPECT_FALSE(s.tag(ref).has_value());
    const std::string dg = sha256_digest("m");
    const auto before = std::chrono::system_clock::now() - std::chrono::seconds(2);
    ASSERT_TRUE(s.set_tag(ref, dg, "application/vnd.oci.image.manifest.v1+json"));
    auto rec = s.tag(ref);
    ASSERT_TRUE(rec.has_value());
    EXPECT_EQ(rec->digest, dg);
    EXPECT_EQ(rec->media_type, "application/vnd.oci.image.manifest.v1+json");
    EXPECT_GE(rec->time, before);
    // Another tag and another repository are other records.
    EXPECT_FALSE(s.tag(ref_of("127.0.0.1:5000/org/app:v2")).has_value());
    EXPECT_FALSE(s.tag(ref_of("127.0.0.1:5000/org/app/v1:v1")).has_value());
    // References are normalised: "busybox:1" is docker.io/library/busybox:1.
    ASSERT_TRUE(s.set_tag(oci::parse("busybox:1").take(), dg, "t"));
    auto hub = s.tag(ref_of("docker.io/library/busybox:1"));
    ASSERT_TRUE(hub.has_value());
    EXPECT_EQ(hub->digest, dg);
    EXPECT_TRUE(fs::exists(d / "tags/docker.io/library/busybox/:1"));
    // A record that is not JSON is no answer, not an error.
    {
        std::ofstream f(d / "tags/127.0.0.1:5000/org/app/:v1", std::ios::trunc);
        f << "{garbage";
    }
    EXPECT_FALSE(s.tag(ref).has_value());
}

TEST(OciStore, ListShowsSizesAndReferrers) {
    TempDir d;
    oci::Store s(d.path());
    const auto img = make_image("listed");
    ASSERT_TRUE(s.put(img));
    const auto ref = ref_of("quay.io/a/b:1");
    ASSERT_TRUE(s.set_tag(ref, img.root_digest, img.root_media_type));
    auto l = s.list();
    ASSERT_TRUE(l) << l.error().str();
    ASSERT_EQ(l->blobs.size(), img.blobs.size());
    std::uint64_t total = 0;
    for (const auto& b : l->blobs) {
        EXPECT_EQ(b.size, img.blobs.at(b.digest).size());
        total += b.size;
        if (b.digest == img.root_digest)
            EXPECT_EQ(b.referenced_by, std::vector<std::string>{"quay.io/a/b:1"});
        else
            EXPECT_EQ(b.referenced_by, std::vector<std::string>{img.root_digest}) << b.digest;
    }
    EXPECT_EQ(l->total_bytes, total);
    ASSERT_EQ(l->tags.size(), 1u);
    EXPECT_EQ(l->tags[0].reference, "quay.io/a/b:1");
    EXPECT_EQ(l->tags[0].record.digest, img.root_digest);
}

TEST(OciStore, PruneEverythingOrOnlyWhatIsOlder) {
    TempDir d;
    oci::Store s(d.path());
    const std::string old_b = "old blob", new_b = "new blob";
    ASSERT_TRUE(s.put(sha256_digest(old_b), old_b));
    ASSERT_TRUE(s.put(sha256_digest(new_b), new_b));
    const auto now = std::chrono::system_clock::now();
    set_mtime(s.blob_path(sha256_digest(old_b)), now - std::chrono::hours(24 * 10));
    ASSERT_TRUE(s.set_tag(ref_of("quay.io/a/b:1"), sha256_digest(new_b), "x"));

    auto p = s.prune(std::chrono::hours(24 * 7), now);
    ASSERT_TRUE(p) << p.error().str();
    EXPECT_EQ(p->blobs_removed, 1u);
    EXPECT_EQ(p->bytes_freed, old_b.size());
    EXPECT_EQ(p->tags_removed, 0u);
    EXPECT_FALSE(s.has(sha256_digest(old_b)));
    EXPECT_TRUE(s.has(sha256_digest(new_b)));

    auto all = s.prune(std::nullopt);
    ASSERT_TRUE(all);
    EXPECT_EQ(all->blobs_removed, 1u);
    EXPECT_EQ(all->tags_removed, 1u);
    auto l = s.list();
    ASSERT_TRUE(l);
    EXPECT_TRUE(l->blobs.empty());
    EXPECT_TRUE(l->tags.empty());
    EXPECT_FALSE(fs::exists(d / "tags/quay.io"));
}

// A URL record as url_cache.cpp writes it: urls/sha256/<hex of the URL's sha256>.
fs::path write_url_record(const fs::path& root, const std::string& url, long status,
                          const std::string& digest) {
    const fs::path p = root / "urls/sha256" / sha256_digest(url).substr(7);
    fs::create_directories(p.parent_path());
    std::ofstream f(p, std::ios::trunc);
    f << "{\"url\":\"" << url << "\",\"status\":" << status;
    if (!digest.empty()) f << ",\"digest\":\"" << digest << "\"";
    f << "}";
    return p;
}

TEST(OciStore, ListShowsUrlRecordsAndTheBlobsTheyUse) {
    TempDir d;
    oci::Store s(d.path());
    const std::string body = "{\"type\":\"object\"}";
    ASSERT_TRUE(s.put(sha256_digest(body), body));
    write_url_record(d.path(), "https://schemas.example/a.json", 200, sha256_digest(body));
    write_url_record(d.path(), "https://schemas.example/missing.json", 404, "");
    {
        std::ofstream junk(d / "urls/sha256/.tmp-writer", std::ios::trunc);
        junk << "{half";
    }
    auto l = s.list();
    ASSERT_TRUE(l) << l.error().str();
    ASSERT_EQ(l->urls.size(), 2u);
    EXPECT_EQ(l->urls[0].url, "https://schemas.example/a.json");
    EXPECT_EQ(l->urls[0].status, 200);
    EXPECT_EQ(l->urls[0].digest, sha256_digest(body));
    EXPECT_EQ(l->urls[1].url, "https://schemas.example/missing.json");
    EXPECT_EQ(l->urls[1].status, 404);
    EXPECT_TRUE(l->urls[1].digest.empty());
    ASSERT_EQ(l->blobs.size(), 1u);
    EXPECT_EQ(l->blobs[0].referenced_by,
              std::vector<std::string>{"https://schemas.example/a.json"});
}

TEST(OciStore, PruneRemovesUrlRecordsByTheirLastUse) {
    TempDir d;
    oci::Store s(d.path());
    const std::string body = "{\"type\":\"string\"}";
    ASSERT_TRUE(s.put(sha256_digest(body), body));
    const std::string used = "https://schemas.example/used.json";
    const std::string idle = "https://schemas.example/idle.json";
    const auto now = std::chrono::system_clock::now();
    const auto p_used = write_url_record(d.path(), used, 200, sha256_digest(body));
    const auto p_idle = write_url_record(d.path(), idle, 404, "");
    set_mtime(p_used, now - std::chrono::hours(24 * 40));
    set_mtime(p_idle, now - std::chrono::hours(24 * 40));
    // Reading a record from the cache makes it recently used (as reading a blob does).
    auto f = oci::fetch_cached(&s, used, /*offline=*/true, 1 << 20);
    ASSERT_TRUE(f) << f.error().str();
    EXPECT_TRUE(f->from_cache);
    EXPECT_EQ(f->body, body);

    auto p = s.prune(std::chrono::hours(24 * 30), now + std::chrono::minutes(1));
    ASSERT_TRUE(p) << p.error().str();
    EXPECT_EQ(p->urls_removed, 1u);
    EXPECT_TRUE(fs::exists(p_used));
    EXPECT_FALSE(fs::exists(p_idle));

    auto all = s.prune(std::nullopt);
    ASSERT_TRUE(all);
    EXPECT_EQ(all->urls_removed, 1u);
    EXPECT_FALSE(fs::exists(p_used));
    auto l = s.list();
    ASSERT_TRUE(l);
    EXPECT_TRUE(l->urls.empty());
    // Offline, a pruned URL is not there any more.
    EXPECT_FALSE(oci::fetch_cached(&s, used, /*offline=*/true, 1 << 20));
}

TEST(OciStore, DefaultRootFollowsTheCatalogCacheRule) {
    const char* saved_k = std::getenv("KPKG_CACHE_DIR");
    const std::string keep_k = saved_k ? saved_k : "";
    const char* saved_x = std::getenv("XDG_CACHE_HOME");
    const std::string keep_x = saved_x ? saved_x : "";
    ::setenv("KPKG_CACHE_DIR", "/k", 1);
    ::setenv("XDG_CACHE_HOME", "/x", 1);
    EXPECT_EQ(oci::Store::default_root(), fs::path("/k"));
    ::setenv("KPKG_CACHE_DIR", "", 1);
    EXPECT_EQ(oci::Store::default_root(), fs::path("/x/kpkg"));
    ::unsetenv("XDG_CACHE_HOME");
    if (const char* h = std::getenv("HOME")) {
        EXPECT_EQ(oci::Store::default_root(), fs::path(h) / ".cache" / "kpkg");
    }
    if (saved_k)
        ::setenv("KPKG_CACHE_DIR", keep_k.c_str(), 1);
    else
        ::unsetenv("KPKG_CACHE_DIR");
    if (saved_x) ::setenv("XDG_CACHE_HOME", keep_x.c_str(), 1);
}

TEST(OciStore, ConcurrentWritersAndReadersNeverSeeAPartialBlob) {
    TempDir d;
    std::vector<std::string> blobs;
    for (int i = 0; i < 8; ++i)
        blobs.push_back(std::string(200000 + i, static_cast<char>('a' + i)));
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 6; ++t)
        threads.emplace_back([&, t] {
            oci::Store s(d.path()); // each thread its own Store, as separate processes would
            for (int round = 0; round < 5; ++round)
                for (std::size_t i = 0; i < blobs.size(); ++i) {
                    const auto& b = blobs[(i + static_cast<std::size_t>(t)) % blobs.size()];
                    const std::string dg = sha256_digest(b);
                    if (!s.put(dg, b)) ++wrong;
                    auto got = s.get(dg);
                    if (!got || (got->has_value() && **got != b)) ++wrong;
                }
        });
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(wrong.load(), 0);
    oci::Store s(d.path());
    auto l = s.list();
    ASSERT_TRUE(l);
    EXPECT_EQ(l->blobs.size(), blobs.size());
    for (const auto& b : blobs)
        EXPECT_TRUE(s.has(sha256_digest(b)));
}

// The unpacked trees: read back as stored, a damaged one removed and absent, pruned with the
// blobs.
TEST(OciStore, UnpackedTreesRoundTripAndADamagedOneIsDropped) {
    TempDir d;
    oci::Store store(d.path());
    const std::string digest = sha256_digest("manifest");
    EXPECT_FALSE(store.get_tree(digest));

    std::map<std::string, oci::Rootfs::Node> nodes;
    nodes["configs"] = {oci::Rootfs::Node::Kind::dir, {}, 0755};
    nodes["configs/a.yaml"] = {oci::Rootfs::Node::Kind::file, std::string("x: 1\n\0y", 7), 0644};
    nodes["configs/l"] = {oci::Rootfs::Node::Kind::link, "a.yaml", 0777};
    const oci::Rootfs fs = oci::Rootfs::from_nodes(nodes);
    ASSERT_TRUE(store.put_tree(digest, fs));
    auto back = store.get_tree(digest);
    ASSERT_TRUE(back);
    ASSERT_EQ(back->nodes().size(), 3u);
    for (const auto& [path, n] : nodes) {
        const auto& got = back->nodes().at(path);
        EXPECT_EQ(got.kind, n.kind) << path;
        EXPECT_EQ(got.data, n.data) << path;
        EXPECT_EQ(got.mode, n.mode) << path;
    }

    // One byte changed anywhere: the tree is not used, and removed.
    const fs::path file = d.path() / "trees" / "sha256" / digest.substr(7);
    ASSERT_TRUE(fs::exists(file));
    std::string bytes = read_file(file);
    for (std::size_t at : {std::size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
        std::string bad = bytes;
        bad[at] ^= 0x01;
        std::ofstream(file, std::ios::binary | std::ios::trunc) << bad;
        EXPECT_FALSE(store.get_tree(digest)) << at;
        EXPECT_FALSE(fs::exists(file)) << at;
    }
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes.substr(0, 20);
    EXPECT_FALSE(store.get_tree(digest));

    ASSERT_TRUE(store.put_tree(digest, fs));
    auto pruned = store.prune(std::nullopt);
    ASSERT_TRUE(pruned);
    EXPECT_EQ(pruned->trees_removed, 1u);
    EXPECT_FALSE(store.get_tree(digest));
}

// What kpkg never writes into its cache — a FIFO (reading it would block for ever), a symbolic
// link (to a file elsewhere), a sparse file claiming far more bytes than any blob or tree may
// have — counts as absent without being read, and is removed so that the next write replaces
// it. Each check runs under a watchdog: a blocked read fails the test instead of hanging it.
TEST(OciStore, FifosLinksAndHugeFilesInTheCacheAreMissesAndReplaced) {
    TempDir d;
    oci::Store store(d.path());
    const std::string bytes = "{\"schemaVersion\":2}";
    const std::string dg = sha256_digest(bytes);
    const std::string tree_digest = sha256_digest("tree manifest");
    std::map<std::string, oci::Rootfs::Node> nodes;
    nodes["a"] = {oci::Rootfs::Node::Kind::file, "a\n", 0644};
    const oci::Rootfs rootfs = oci::Rootfs::from_nodes(nodes);
    ASSERT_TRUE(store.put(dg, bytes));
    ASSERT_TRUE(store.put_tree(tree_digest, rootfs));
    const fs::path blob = store.blob_path(dg);
    const fs::path tree = d.path() / "trees" / "sha256" / tree_digest.substr(7);
    ASSERT_TRUE(fs::exists(tree));
    TempDir outside;
    outside.write("secret", bytes);

    auto within = [](const char* what, auto fn) {
        std::atomic<bool> done{false};
        std::thread t([&] {
            fn();
            done = true;
        });
        for (int i = 0; i < 100 && !done; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!done) {
            ADD_FAILURE() << what << ": still reading after 5 s";
            std::_Exit(1); // the thread is blocked in open/read: nothing else to do
        }
        t.join();
    };
    auto plant = [&](const fs::path& p, const std::string& kind) {
        fs::remove(p);
        if (kind == "fifo") {
            ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0);
        }
        if (kind == "link") fs::create_symlink(outside / "secret", p);
        if (kind == "huge") {
            std::ofstream(p).close();
            fs::resize_file(p, std::uintmax_t{50} << 30); // sparse: no disk used
        }
    };
    for (const std::string kind : {"fifo", "link", "huge"}) {
        plant(blob, kind);
        within(kind.c_str(), [&] {
            auto got = store.get(dg);
            ASSERT_TRUE(got) << kind << ": " << got.error().str();
            EXPECT_FALSE(got->has_value()) << kind;
        });
        EXPECT_FALSE(fs::exists(fs::symlink_status(blob))) << kind << ": not removed";
        EXPECT_EQ(read_file(outside / "secret"), bytes) << kind;
        ASSERT_TRUE(store.put(dg, bytes)) << kind;
        EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(blob))) << kind;
        EXPECT_EQ(**store.get(dg), bytes) << kind;

        plant(tree, kind);
        within(kind.c_str(), [&] { EXPECT_FALSE(store.get_tree(tree_digest)) << kind; });
        EXPECT_FALSE(fs::exists(fs::symlink_status(tree))) << kind << ": not removed";
        ASSERT_TRUE(store.put_tree(tree_digest, rootfs)) << kind;
        EXPECT_TRUE(store.get_tree(tree_digest)) << kind;
    }
    // Other files of the cache (URL records) are read by the same rule.
    const fs::path record = d.path() / "urls" / "record";
    fs::create_directories(record.parent_path());
    plant(record, "fifo");
    within("record", [&] {
        auto got = oci::read_cache_file(record, 1 << 20);
        ASSERT_TRUE(got);
        EXPECT_FALSE(got->has_value());
    });
    EXPECT_FALSE(fs::exists(fs::symlink_status(record)));
    // A blob larger than the caller says it can be is not read either.
    auto small = store.get(dg, bytes.size() - 1);
    ASSERT_TRUE(small);
    EXPECT_FALSE(small->has_value());
}
