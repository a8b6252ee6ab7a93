// oci::locate: what an argument names (transport prefixes, bare paths, registry references).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kpkg/oci/location.hpp"
#include "support/support.hpp"

namespace kpkg::oci {
namespace {

using K = Location::Kind;

TEST(Location, TransportPrefixes) {
    auto l = parse_transport("oci:some/dir:v1.2");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->kind, K::oci_layout);
    EXPECT_EQ(l->path, "some/dir");
    EXPECT_EQ(l->tag, "v1.2");
    EXPECT_EQ(to_string(*l), "oci:some/dir:v1.2");

    l = parse_transport("oci:dir");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->path, "dir");
    EXPECT_EQ(l->tag, "");

    l = parse_transport("oci-archive:/tmp/x.tar:latest");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->kind, K::oci_archive);
    EXPECT_EQ(l->path, "/tmp/x.tar");
    EXPECT_EQ(l->tag, "latest");

    l = parse_transport("docker-archive:x.tar");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->kind, K::docker_archive);
    EXPECT_EQ(l->path, "x.tar");
    l = parse_transport("docker-archive:x.tar:quay.io/org/op:v1");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->path, "x.tar");
    EXPECT_EQ(l->tag, "quay.io/org/op:v1");
    EXPECT_EQ(to_string(*l), "docker-archive:x.tar:quay.io/org/op:v1");
    EXPECT_FALSE(parse_transport("docker-archive:x.tar:Not A Ref"));

    l = parse_transport("docker://quay.io/org/op:v1");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->kind, K::registry);
    EXPECT_EQ(l->reference.domain, "quay.io");
    EXPECT_EQ(l->reference.path, "org/op");
    EXPECT_EQ(l->reference.tag, "v1");
    EXPECT_EQ(to_string(*l), "docker://quay.io/org/op:v1");

    l = parse_transport("docker://busybox");
    ASSERT_TRUE(l);
    EXPECT_EQ(normalize(l->reference).str(), "docker.io/library/busybox:latest");
}

TEST(Location, BadTransportArgumentsAreUsageErrors) {
    for (const char* bad : {"oci:", "oci::tag", "oci-archive:", "docker-archive:", "docker://",
                            "docker://UPPER/case", "oci:dir:-bad", "oci:dir:a b"}) {
        auto l = parse_transport(bad);
        ASSERT_FALSE(l) << bad;
        EXPECT_EQ(l.error().code, ExitCode::usage) << bad;
        EXPECT_TRUE(test::contains(l.error().message, bad)) << l.error().message;
    }
}

TEST(Location, BareArguments) {
    test::TempDir d;
    const auto root = d.path();
    std::filesystem::create_directories(root / "plain");
    std::filesystem::create_directories(root / "layout");
    std::ofstream(root / "layout" / "oci-layout") << R"({"imageLayoutVersion":"1.0.0"})";
    std::ofstream(root / "cat.yaml") << "schema: olm.package\nname: x\n";
    {
        std::ofstream tar(root / "img.tar", std::ios::binary);
        std::string block(512, '\0');
        block.replace(257, 6, std::string("ustar\0", 6));
        tar << block;
    }
    std::ofstream(root / "img.tgz", std::ios::binary) << std::string("\x1f\x8b\x08\x00", 4);

    auto at = [&](const std::string& rel) { return (root / rel).string(); };
    EXPECT_EQ(locate(at("plain"))->kind, K::path);
    EXPECT_EQ(locate(at("layout"))->kind, K::oci_layout);
    EXPECT_EQ(locate(at("layout"))->path, at("layout"));
    EXPECT_EQ(locate(at("cat.yaml"))->kind, K::path);
    EXPECT_EQ(locate(at("img.tar"))->kind, K::archive); // neither kind of entry
    EXPECT_EQ(locate(at("img.tgz"))->kind, K::oci_archive);
    auto tar_with = [&](const std::string& file, const std::string& entry) {
        std::ofstream tar(root / file, std::ios::binary);
        std::string block(512, '\0');
        block.replace(0, entry.size(), entry);
        block.replace(124, 11, "00000000005");
        block.replace(257, 6, std::string("ustar\0", 6));
        tar << block << std::string("hello") + std::string(507, '\0') << std::string(1024, '\0');
    };
    tar_with("oci.tar", "./oci-layout");
    tar_with("docker.tar", "manifest.json");
    EXPECT_EQ(locate(at("oci.tar"))->kind, K::oci_archive);
    EXPECT_EQ(locate(at("docker.tar"))->kind, K::docker_archive);
    EXPECT_EQ(locate("-")->kind, K::path);

    // Not a path: a reference naming its registry is a registry image; anything else stays a
    // path (a misspelt file is a missing file, never an image on Docker Hub).
    auto r = locate("quay.io/org/op:v1");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->kind, K::registry);
    EXPECT_EQ(r->reference.str(), "quay.io/org/op:v1");
    EXPECT_EQ(locate("localhost:5000/cat@sha256:" + std::string(64, 'a'))->kind, K::registry);
    EXPECT_EQ(locate("catalog.yaml")->kind, K::path);
    EXPECT_EQ(locate("busybox")->kind, K::path);
    EXPECT_EQ(locate("library/busybox:1")->kind, K::path);
    EXPECT_EQ(locate(at("missing/dir"))->kind, K::path);
}

} // namespace
} // namespace kpkg::oci
