// The image reference grammar (kpkg/oci/reference.hpp): the containers image library's
// ParseNormalizedNamed acceptance and messages, the parts as written, and Docker's normalisation.
// That catalog validate words its findings with these reasons unchanged is checked in
// tests/catalog/test_validate.cpp (ImageReferenceMessages).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kpkg/oci/reference.hpp"

using namespace kpkg;
using oci::Reference;

namespace {

const std::string hex64(64, 'a');

struct Good {
    std::string ref;
    Reference parts;
};

struct Bad {
    std::string ref, why;
};

} // namespace

TEST(OciReference, ValidReferencesAndTheirParts) {
    const std::vector<Good> good = {
        {"busybox", {"", "busybox", "", ""}},
        {"library/busybox:1.36", {"", "library/busybox", "1.36", ""}},
        {"quay.io/operator-framework/foo-bundle:v0.1.0",
         {"quay.io", "operator-framework/foo-bundle", "v0.1.0", ""}},
        {"centos/mysql-57-centos7", {"", "centos/mysql-57-centos7", "", ""}},
        // localhost is a domain by name; other first components need a '.' or a ':'.
        {"localhost/foo", {"localhost", "foo", "", ""}},
        {"localhost:5000/foo/bar:1.0", {"localhost:5000", "foo/bar", "1.0", ""}},
        // Without a '/', "localhost:5000" is the image "localhost" with tag "5000".
        {"localhost:5000", {"", "localhost", "5000", ""}},
        {"registry.example.com:443/a/b/c", {"registry.example.com:443", "a/b/c", "", ""}},
        {"127.0.0.1:5000/x", {"127.0.0.1:5000", "x", "", ""}},
        {"Quay.IO/a/b", {"Quay.IO", "a/b", "", ""}}, // the domain may have upper case
        {"index.docker.io/x/y", {"index.docker.io", "x/y", "", ""}},
        {"quay.io/a__b/c.d-e---f:TAG_1.x-y", {"quay.io", "a__b/c.d-e---f", "TAG_1.x-y", ""}},
        {"quay.io/a/b@sha256:" + hex64, {"quay.io", "a/b", "", "sha256:" + hex64}},
        {"quay.io/a/b:v1@sha256:" + hex64, {"quay.io", "a/b", "v1", "sha256:" + hex64}},
        {"quay.io/a/b@sha384:" + std::string(96, '0'),
         {"quay.io", "a/b", "", "sha384:" + std::string(96, '0')}},
        {"quay.io/a/b@sha512:" + std::string(128, 'f'),
         {"quay.io", "a/b", "", "sha512:" + std::string(128, 'f')}},
        // A tag of 128 characters, the most there is.
        {"quay.io/a/b:" + std::string(128, 't'), {"quay.io", "a/b", std::string(128, 't'), ""}},
        // Taken for a domain by its '.', but no valid host: a path component, as in the library.
        {"a_b.io/x", {"", "a_b.io/x", "", ""}},
    };
    for (const Good& g : good) {
        auto r = oci::parse(g.ref);
        ASSERT_TRUE(r.ok()) << g.ref << ": " << r.error().message;
        EXPECT_EQ(*r, g.parts) << g.ref;
        EXPECT_EQ(r->str(), g.ref);
        EXPECT_EQ(oci::reference_problem(g.ref), "") << g.ref;
    }
}

TEST(OciReference, InvalidReferencesAndWhy) {
    const std::vector<Bad> bad = {
        {"", "invalid reference format"},
        {"quay.io/x/foo bar:v1", "invalid reference format"},
        {"oci://quay.io/x/y:v1", "invalid reference format"},
        {"quay.io/x/y@", "invalid reference format"},
        {"quay.io/x/y:", "invalid reference format"},
        {"quay.io/", "invalid reference format"},
        {"quay.io/x/y:-tag", "invalid reference format"},
        {"quay.io/x/y:" + std::string(129, 't'), "invalid reference format"},
        {"quay.io/x//y", "invalid reference format"},
        {"quay.io/x/y.-z", "invalid reference format"},
        {"quay.io/_x/y", "invalid reference format"},
        // Ports: digits only, and not empty.
        {"quay.io:http/x", "invalid reference format"},
        {"quay.io:/x", "invalid reference format"},
        {"-quay.io/x", "invalid reference format"},
        // No bracketed IPv6 hosts in this grammar.
        {"[::1]:5000/foo", "invalid reference format"},
        {"[::1]/foo", "invalid reference format"},
        {"[2001:db8::1]:5000/team/app:v1", "invalid reference format"},
        // Upper case in the path (a tag may have it).
        {"quay.io/Example/y:v1", "invalid reference format: repository name must be lowercase"},
        {"Example/y", "invalid reference format: repository name must be lowercase"},
        {"Busybox", "invalid reference format: repository name must be lowercase"},
        {"localhost:5000/Foo", "invalid reference format: repository name must be lowercase"},
        // The case check runs up to the first ':' after the domain, a digest's algorithm included.
        {"quay.io/x/y@SHA256:" + hex64,
         "invalid reference format: repository name must be lowercase"},
        {"quay.io/x/y@Sha-256:" + hex64,
         "invalid reference format: repository name must be lowercase"},
        // An image id is not a name.
        {hex64,
         "invalid repository name (" + hex64 + "), cannot specify 64-byte hexadecimal strings"},
        // Digests: the grammar first (32 hex digits at least), then the digest library.
        {"quay.io/x/y@a:" + std::string(31, 'a'), "invalid reference format"},
        {"quay.io/x/y@sha.256:" + hex64, "invalid reference format"},
        {"quay.io/x/y@ssha256:" + hex64, "unsupported digest algorithm"},
        {"quay.io/x/y@sha.x256:" + hex64, "unsupported digest algorithm"},
        {"quay.io/x/y@sha256:" + std::string(63, 'a'), "invalid checksum digest format"},
        {"quay.io/x/y@sha256:" + std::string(65, 'a'), "invalid checksum digest format"},
        {"quay.io/x/y@sha256:" + std::string(64, 'A'), "invalid checksum digest format"},
        {"quay.io/x/y@sha384:" + std::string(64, 'a'), "invalid checksum digest format"},
        {"quay.io/x/y@sha384:" + std::string(95, 'a'), "invalid checksum digest format"},
        {"quay.io/x/y@sha512:" + std::string(96, 'a'), "invalid checksum digest format"},
        {"quay.io/x/y@sha512:" + std::string(127, 'a') + "F", "invalid checksum digest format"},
        // The name's length counts what normalisation adds: "docker.io/library/" + 238 > 255.
        {"quay.io/" + std::string(250, 'a'),
         "repository name must not be more than 255 characters"},
        {std::string(238, 'a'), "repository name must not be more than 255 characters"},
    };
    for (const Bad& b : bad) {
        EXPECT_EQ(oci::reference_problem(b.ref), b.why) << b.ref;
        auto r = oci::parse(b.ref);
        ASSERT_FALSE(r.ok()) << b.ref;
        EXPECT_EQ(r.error().message, b.why) << b.ref;
        EXPECT_EQ(r.error().code, ExitCode::invalid) << b.ref;
    }
    // The limit itself: 237 + 18 = 255 is a name.
    EXPECT_EQ(oci::reference_problem(std::string(237, 'a')), "");
}

TEST(OciReference, NormaliseAsDocker) {
    struct Case {
        std::string ref, normal;
    };
    for (const Case& c : std::vector<Case>{
             {"busybox", "docker.io/library/busybox:latest"},
             {"busybox:1.36", "docker.io/library/busybox:1.36"},
             {"foo/bar", "docker.io/foo/bar:latest"},
             {"docker.io/busybox", "docker.io/library/busybox:latest"},
             {"index.docker.io/busybox", "docker.io/library/busybox:latest"},
             {"index.docker.io/x/y:1", "docker.io/x/y:1"},
             {"quay.io/busybox", "quay.io/busybox:latest"},
             {"localhost/foo", "localhost/foo:latest"},
             {"localhost:5000/a/b:v2", "localhost:5000/a/b:v2"},
             {"quay.io/a/b@sha256:" + hex64, "quay.io/a/b@sha256:" + hex64},
             {"quay.io/a/b:v1@sha256:" + hex64, "quay.io/a/b:v1@sha256:" + hex64},
             {"a_b.io/x", "docker.io/a_b.io/x:latest"},
         }) {
        auto r = oci::parse(c.ref);
        ASSERT_TRUE(r.ok()) << c.ref;
        const Reference n = oci::normalize(*r);
        EXPECT_EQ(n.str(), c.normal) << c.ref;
        // Normalising twice changes nothing more.
        EXPECT_EQ(oci::normalize(n), n) << c.ref;
        // And the normal form is itself a valid reference with the same parts.
        auto again = oci::parse(n.str());
        ASSERT_TRUE(again.ok()) << n.str();
        EXPECT_EQ(*again, n) << n.str();
    }
    const Reference n = oci::normalize(*oci::parse("busybox"));
    EXPECT_EQ(n.domain, "docker.io");
    EXPECT_EQ(n.path, "library/busybox");
    EXPECT_EQ(n.tag, "latest");
    EXPECT_EQ(n.digest, "");
    EXPECT_EQ(n.name(), "docker.io/library/busybox");
}
