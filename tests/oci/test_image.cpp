// Image documents (kpkg/oci/image.hpp): platforms, parsing with positions, deterministic JSON,
// platform selection from an index.
#include <string>

#include <gtest/gtest.h>

#include "kpkg/core/digest.hpp"
#include "kpkg/oci/image.hpp"
#include "kpkg/oci/media_types.hpp"
#include "support/support.hpp"

using namespace kpkg;
using kpkg::test::contains;

namespace {

const std::string d1 = "sha256:" + std::string(64, 'a');
const std::string d2 = "sha256:" + std::string(64, 'b');
const std::string d3 = "sha256:" + std::string(64, 'c');

std::string manifest_json(const std::string& layer_extra = {}) {
    return R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
           R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":")" +
           d1 +
           R"(","size":10},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip",)"
           R"("digest":")" +
           d2 + R"(","size":20)" + layer_extra + R"(}],"annotations":{"b":"2","a":"1"}})";
}

} // namespace

TEST(OciImage, PlatformParseAndStr) {
    auto p = oci::Platform::parse("linux/arm64/v8");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->os, "linux");
    EXPECT_EQ(p->architecture, "arm64");
    EXPECT_EQ(p->variant, "v8");
    EXPECT_EQ(p->str(), "linux/arm64/v8");
    EXPECT_EQ(oci::Platform::parse("linux/amd64")->str(), "linux/amd64");
    for (const char* bad : {"linux", "linux/", "/amd64", "linux/amd64/v1/x", "Linux/amd64", ""}) {
        auto r = oci::Platform::parse(bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().code, ExitCode::usage);
        EXPECT_TRUE(contains(r.error().message, "os/architecture")) << r.error().message;
    }
}

TEST(OciImage, HostPlatformUsesGoNames) {
    const auto h = oci::host_platform();
    EXPECT_EQ(h.os, "linux");
#if defined(__x86_64__)
    EXPECT_EQ(h.architecture, "amd64");
#elif defined(__aarch64__)
    EXPECT_EQ(h.architecture, "arm64");
#endif
}

TEST(OciImage, PlatformMatchingNormalisesArm64Variant) {
    oci::Platform want{"linux", "arm64", "v8"};
    EXPECT_TRUE(oci::platform_matches(want, {"linux", "arm64", ""}));
    EXPECT_TRUE(oci::platform_matches({"linux", "arm64", ""}, {"linux", "arm64", "v8"}));
    EXPECT_FALSE(oci::platform_matches({"linux", "arm", "v7"}, {"linux", "arm", "v6"}));
    EXPECT_FALSE(oci::platform_matches({"linux", "amd64", ""}, {"linux", "arm64", ""}));
}

TEST(OciImage, ManifestRoundTripsToCanonicalJson) {
    auto m = oci::parse_manifest(manifest_json(), "blob m");
    ASSERT_TRUE(m) << m.error().str();
    EXPECT_EQ(m->media_type, oci::media::oci_manifest);
    EXPECT_EQ(m->config.digest, d1);
    ASSERT_EQ(m->layers.size(), 1u);
    EXPECT_EQ(m->layers[0].size, 20);
    // Annotations sorted, keys in the spec's order, compact.
    const std::string want =
        R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
        R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":")" +
        d1 +
        R"(","size":10},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip",)"
        R"("digest":")" +
        d2 + R"(","size":20}],"annotations":{"a":"1","b":"2"}})";
    EXPECT_EQ(oci::to_json(*m), want);
    auto again = oci::parse_manifest(oci::to_json(*m), "x");
    ASSERT_TRUE(again);
    EXPECT_EQ(oci::to_json(*again), want);
}

TEST(OciImage, ManifestWithoutMediaTypeTakesTheDescriptors) {
    std::string j = manifest_json();
    j.erase(j.find(R"("mediaType":"application/vnd.oci.image.manifest.v1+json",)"),
            std::string(R"("mediaType":"application/vnd.oci.image.manifest.v1+json",)").size());
    auto m = oci::parse_manifest(j, "m", oci::media::docker_manifest);
    ASSERT_TRUE(m) << m.error().str();
    EXPECT_EQ(m->media_type, oci::media::docker_manifest);
    EXPECT_EQ(oci::parse_manifest(j, "m")->media_type, oci::media::oci_manifest);
}

TEST(OciImage, ManifestErrorsNameTheBlobAndPosition) {
    struct Case {
        std::string json, phrase;
    };
    const std::vector<Case> cases = {
        {"{", "blob m:"},
        {"[]", "must be an object"},
        {R"({"schemaVersion":1})", "schemaVersion must be 2"},
        {R"({"schemaVersion":"2"})", "schemaVersion must be an integer, not string"},
        {R"({"schemaVersion":2,"mediaType":"text/plain"})", "unknown manifest media type"},
        {R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json"})",
         "an image index"},
        {R"({"schemaVersion":2,"layers":[]})", "has no \"config\""},
        {manifest_json().replace(manifest_json().find(d2), 10, "sha256:zz"), "layers[0].digest"},
        {manifest_json().replace(manifest_json().find("\"size\":20"), 9, "\"size\":-5"),
         "is negative"},
        {manifest_json().replace(manifest_json().find("\"size\":20"), 9, "\"size\":\"20\""),
         "layers[0].size must be"},
        {manifest_json().replace(manifest_json().find("layer.v1.tar+gzip"), 17, "foo"),
         "unknown layer media type"},
        {manifest_json().replace(manifest_json().find("image.config.v1+json"), 20, "x+json"),
         "is not an image configuration"},
    };
    for (const auto& c : cases) {
        auto m = oci::parse_manifest(c.json, "blob m");
        ASSERT_FALSE(m) << c.json;
        EXPECT_EQ(m.error().code, ExitCode::invalid);
        EXPECT_TRUE(contains(m.error().str(), c.phrase)) << m.error().str() << " / " << c.phrase;
        EXPECT_EQ(m.error().pos.file, "blob m");
    }
    // Positions point at the offending node.
    auto m = oci::parse_manifest(
        manifest_json().replace(manifest_json().find("\"size\":20"), 9, "\"size\":-5"), "m");
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().pos.line, 1u);
    EXPECT_GT(m.error().pos.column, 100u);
}

TEST(OciImage, IndexParseSerialiseAndSelect) {
    const std::string j =
        R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[)"
        R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
        d1 +
        R"(","size":1,"platform":{"architecture":"amd64","os":"linux"}},)"
        R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
        d2 +
        R"(","size":2,"platform":{"architecture":"arm64","os":"linux","variant":"v8"}},)"
        R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
        d3 +
        R"(","size":3,"annotations":{"vnd.docker.reference.type":"attestation-manifest"},)"
        R"("platform":{"architecture":"unknown","os":"unknown"}}]})";
    auto ix = oci::parse_index(j, "index.json");
    ASSERT_TRUE(ix) << ix.error().str();
    ASSERT_EQ(ix->manifests.size(), 3u);
    EXPECT_EQ(oci::to_json(*ix), j);
    auto a = oci::select_manifest(*ix, {"linux", "arm64", ""});
    ASSERT_TRUE(a);
    EXPECT_EQ(a->digest, d2);
    auto b = oci::select_manifest(*ix, {"linux", "amd64", ""});
    ASSERT_TRUE(b);
    EXPECT_EQ(b->digest, d1);
    auto none = oci::select_manifest(*ix, {"linux", "s390x", ""}, "index of quay.io/x:1");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, ExitCode::invalid);
    EXPECT_EQ(none.error().message, "index of quay.io/x:1 has no image for linux/s390x; it has "
                                    "linux/amd64, linux/arm64/v8, unknown/unknown");
    // A manifest where an index is expected.
    auto wrong = oci::parse_index(manifest_json(), "blob x");
    ASSERT_FALSE(wrong);
    EXPECT_TRUE(contains(wrong.error().message, "where an index is expected"));
}

TEST(OciImage, SingleManifestWithoutPlatformIsSelected) {
    oci::Index ix;
    ix.media_type = oci::media::oci_index;
    ix.manifests.push_back({std::string(oci::media::oci_manifest), d1, 5, std::nullopt, {}});
    auto d = oci::select_manifest(ix, {"linux", "s390x", ""});
    ASSERT_TRUE(d);
    EXPECT_EQ(d->digest, d1);
}

TEST(OciImage, ConfigKeepsUnknownFieldsAndOrder) {
    const std::string j =
        R"({"created":"2024-01-01T00:00:00Z","architecture":"amd64","os":"linux",)"
        R"("config":{"User":"1001","Env":["PATH=/bin"],"Labels":{"a":"1"}},)"
        R"("rootfs":{"type":"layers","diff_ids":[")" +
        d1 + R"("]},"history":[{"created_by":"x","empty_layer":true}]})";
    auto c = oci::parse_config(j, "config");
    ASSERT_TRUE(c) << c.error().str();
    EXPECT_EQ(c->architecture, "amd64");
    ASSERT_NE(oci::label(*c, "a"), nullptr);
    EXPECT_EQ(*oci::label(*c, "a"), "1");
    EXPECT_EQ(c->env, std::vector<std::string>{"PATH=/bin"});
    EXPECT_EQ(c->diff_ids, std::vector<std::string>{d1});
    EXPECT_EQ(oci::to_json(*c), j); // unchanged when nothing was changed
    // Go's nil slices and maps stay null.
    const std::string nulls =
        R"({"architecture":"amd64","os":"linux","config":{"Env":null,"Cmd":null,"Labels":null},)"
        R"("rootfs":{"type":"layers","diff_ids":[]}})";
    EXPECT_EQ(oci::to_json(oci::parse_config(nulls, "n").take()), nulls);
    c->labels["b"] = "<2>";
    c->diff_ids.push_back(d2);
    c->cmd = {"serve"};
    const std::string want =
        R"({"created":"2024-01-01T00:00:00Z","architecture":"amd64","os":"linux",)"
        R"("config":{"User":"1001","Env":["PATH=/bin"],"Labels":{"a":"1","b":"\u003c2\u003e"},)"
        R"("Cmd":["serve"]},"rootfs":{"type":"layers","diff_ids":[")" +
        d1 + R"(",")" + d2 + R"("]},"history":[{"created_by":"x","empty_layer":true}]})";
    EXPECT_EQ(oci::to_json(*c), want);
}

TEST(OciImage, ConfigBuiltInCode) {
    oci::ImageConfig c;
    c.architecture = "amd64";
    c.os = "linux";
    c.labels["operators.operatorframework.io.bundle.package.v1"] = "etcd";
    c.diff_ids = {d1};
    EXPECT_EQ(oci::to_json(c), R"({"architecture":"amd64","os":"linux","config":{"Labels":)"
                               R"({"operators.operatorframework.io.bundle.package.v1":"etcd"}},)"
                               R"("rootfs":{"type":"layers","diff_ids":[")" +
                                   d1 + R"("]}})");
    auto bad = oci::parse_config(R"({"rootfs":{"diff_ids":["sha256:1"]}})", "cfg");
    ASSERT_FALSE(bad);
    EXPECT_TRUE(contains(bad.error().str(), "cfg:1:")) << bad.error().str();
    EXPECT_TRUE(contains(bad.error().message, "diff_ids[0]"));
    auto bad2 = oci::parse_config(R"({"config":{"Labels":{"a":1}}})", "cfg");
    ASSERT_FALSE(bad2);
    EXPECT_TRUE(contains(bad2.error().message, "Labels[\"a\"] must be a string"));
}
