#include <gtest/gtest.h>

#include "kpkg/core/digest.hpp"
#include "support/support.hpp"

using namespace kpkg;

// Test vectors from FIPS 180-2.
TEST(Sha256, KnownVectors) {
    EXPECT_EQ(sha256_digest(""),
              "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_digest("abc"),
              "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalEqualsOneShot) {
    std::string data(1'000'000, 'a');
    Sha256 h;
    for (std::size_t i = 0; i < data.size(); i += 4096)
        h.update(std::string_view(data).substr(i, 4096));
    EXPECT_EQ(h.finish_digest(),
              "sha256:cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, File) {
    test::TempDir d;
    auto p = d.write("f.txt", "abc");
    auto r = sha256_file(p);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ(*r, sha256_digest("abc"));
    auto missing = sha256_file(d / "nope");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().str().find("nope"), std::string::npos);
    EXPECT_EQ(missing.error().code, ExitCode::error);
}

TEST(Digest, Syntax) {
    EXPECT_TRUE(
        check_digest("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
            .ok());
    EXPECT_TRUE(check_digest("sha512:abcDEF09").ok());
    for (const char* bad :
         {"", "sha256", ":abc", "sha256:", "sha256:abc",
          "sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
          "SHA256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
          "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85z"}) {
        auto r = check_digest(bad);
        EXPECT_FALSE(r.ok()) << bad;
        if (!r.ok()) {
            EXPECT_EQ(r.error().code, ExitCode::invalid);
        }
    }
}

// FIPS 180-2's test vectors for SHA-224.
TEST(Sha224, KnownVectors) {
    auto hex = [](const std::array<std::uint8_t, 28>& d) { return to_hex(d.data(), d.size()); };
    EXPECT_EQ(hex(sha224("abc")), "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7");
    EXPECT_EQ(hex(sha224("")), "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f");
}
