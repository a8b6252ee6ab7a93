// kpkg package validate's kubeconform check (manifest test.kubeconform): schema locations and
// their templates, local and http schemas (a loopback server, then --offline from the cache),
// the JSON Schema validator in gojsonschema's wording, and hostile schemas.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <gtest/gtest.h>

#include "kpkg/io/load.hpp"
#include "kpkg/pko/kubeconform.hpp"
#include "kpkg/pko/schema.hpp"
#include "support/support.hpp"

namespace kpkg::pko {
namespace {

using test::contains;
using test::run_kpkg;
using test::TempDir;
namespace fs = std::filesystem;

fs::path schemas(const std::string& rel) {
    return test::testdata("pko/kubeconform/" + rel);
}

std::string manifest(const std::string& locations, bool with_case = false) {
    std::string m = R"(apiVersion: manifests.package-operator.run/v1alpha1
kind: PackageManifest
metadata:
  name: demo
spec:
  scopes: [Namespaced]
  phases:
  - name: deploy
  config:
    openAPIV3Schema:
      type: object
      properties:
        replicas: {type: integer, default: 1}
test:
)";
    if (with_case)
        m += R"(  template:
  - name: small
    context:
      config: {replicas: 2}
)";
    m += "  kubeconform:\n    kubernetesVersion: v1.30.0\n    schemaLocations: [" + locations +
         "]\n";
    return m;
}

const char* kGoodConfigMap = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    package-operator.run/phase: deploy
data:
  mode: fast
)";

const char* kDeploymentTemplate = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    package-operator.run/phase: deploy
spec:
  replicas: {{ .config.replicas }}
  selector: {}
  strategy: {maxSurge: 1}
)";

struct Package {
    TempDir dir;
    fs::path root() const { return dir / "pkg"; }
    std::vector<std::string> env() const { return {"KPKG_CACHE_DIR=" + (dir / "cache").string()}; }
    test::RunResult validate(std::vector<std::string> extra = {}) const {
        std::vector<std::string> args = {"package", "validate", root().string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_kpkg(args, {}, env());
    }
};

std::string quoted(const fs::path& p) {
    std::string out = "\""; // appended (GCC 12 -O3 warns about "lit" + string, -Wrestrict)
    out += p.string();
    out += '"';
    return out;
}

TEST(PkoKubeconform, LocalSchemasPassAndTemplatesAreChecked) {
    Package p;
    p.dir.write("pkg/manifest.yaml", manifest(quoted(schemas("schemas")), true));
    p.dir.write("pkg/configmap.yaml", kGoodConfigMap);
    p.dir.write("pkg/deployment.yaml.gotmpl", kDeploymentTemplate);
    auto w = p.validate({"--update-fixtures"});
    ASSERT_EQ(w.exit_code, 0) << w.out << w.err;
    auto r = p.validate();
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "valid")) << r.out;
}

TEST(PkoKubeconform, ViolationNamesFileLineIndexAndField) {
    Package p;
    p.dir.write("pkg/manifest.yaml", manifest(quoted(schemas("schemas"))));
    p.dir.write("pkg/configmap.yaml", std::string(kGoodConfigMap) + R"(---
apiVersion: v1
kind: ConfigMap
metadata:
  name: bad
  annotations:
    package-operator.run/phase: deploy
data:
  count: 3
extra: true
)");
    auto r = p.validate();
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    const std::string all = r.out + r.err;
    const std::string url = "file://" + schemas("schemas").lexically_normal().string() +
                            "/v1.30.0-standalone-strict/configmap-v1.json";
    // kubeconform's text (the library's first error, located in the schema), then the others.
    EXPECT_TRUE(contains(all, "configmap.yaml:9: error: Kubeconform rejected schema in "
                              "configmap.yaml idx 1: problem validating schema. Check JSON "
                              "formatting: jsonschema: '/data/count' does not validate with " +
                                  url +
                                  "#/properties/data/additionalProperties/type: expected string "
                                  "or null, but got number (also: '': additionalProperties "
                                  "'extra' not allowed)"))
        << all;
    // The first document is valid: nothing about idx 0.
    EXPECT_FALSE(contains(all, "idx 0")) << all;
}

TEST(PkoKubeconform, TemplateOutputViolationNamesTheTemplate) {
    Package p;
    p.dir.write("pkg/manifest.yaml", manifest(quoted(schemas("schemas")), true));
    std::string tpl = kDeploymentTemplate;
    tpl.replace(tpl.find("{{ .config.replicas }}"), 22, "-{{ .config.replicas }}");
    p.dir.write("pkg/deployment.yaml.gotmpl", tpl);
    auto r = p.validate({"--update-fixtures"});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    const std::string all = r.out + r.err;
    EXPECT_TRUE(contains(all, "deployment.yaml.gotmpl: error: Kubeconform rejected schema in "
                              "deployment.yaml idx 0: problem validating schema. Check JSON "
                              "formatting: jsonschema: '/spec/replicas' does not validate with "))
        << all;
    EXPECT_FALSE(fs::exists(p.root() / ".test-fixtures")) << "nothing written on failure";
}

TEST(PkoKubeconform, MissingSchemaIsSkippedAsUpstreamDoes) {
    Package p;
    p.dir.write("pkg/manifest.yaml", manifest(quoted(schemas("schemas"))));
    // No Secret schema in the location: kubectl-package skips the object.
    p.dir.write("pkg/secret.yaml", R"(apiVersion: v1
kind: Secret
metadata:
  name: s
  annotations:
    package-operator.run/phase: deploy
whatever: [1, 2]
)");
    auto r = p.validate();
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(PkoKubeconform, RefsToSiblingFilesAndTemplatedLocation) {
    Package p;
    p.dir.write("pkg/manifest.yaml",
                manifest(quoted(schemas("refs") / "{{ .ResourceKind }}{{ .KindSuffix }}.json")));
    p.dir.write("pkg/configmap.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: Not_Lower
  annotations:
    package-operator.run/phase: deploy
)");
    auto r = p.validate();
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    const std::string all = r.out + r.err;
    // Through _definitions.json's ObjectMeta: the pattern, and the annotations it lacks.
    EXPECT_TRUE(
        contains(all, "jsonschema: '/metadata/name' does not validate with file://" +
                          (schemas("refs") / "configmap-v1.json").lexically_normal().string() +
                          "#/$ref/properties/metadata/$ref/properties/name/pattern: does "
                          "not match pattern '^[a-z0-9-]+$' (also: '/metadata': "
                          "additionalProperties 'annotations' not allowed)"))
        << all;
}

TEST(PkoKubeconform, RefCycleIsAnErrorNamingTheSchema) {
    Package p;
    p.dir.write("pkg/manifest.yaml",
                manifest(quoted(schemas("cycle") / "{{ .ResourceKind }}{{ .KindSuffix }}.json")));
    p.dir.write("pkg/configmap.yaml", kGoodConfigMap);
    auto r = p.validate();
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    const std::string all = r.out + r.err;
    EXPECT_TRUE(contains(all, (schemas("cycle") / "configmap-v1.json").string())) << all;
    EXPECT_TRUE(contains(all, "a $ref cycle")) << all;
}

TEST(PkoKubeconform, SchemaThatIsNotJsonIsAnErrorNamingIt) {
    Package p;
    p.dir.write("pkg/manifest.yaml",
                manifest(quoted(schemas("notjson") / "{{ .ResourceKind }}{{ .KindSuffix }}.json")));
    p.dir.write("pkg/configmap.yaml", kGoodConfigMap);
    auto r = p.validate();
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    const std::string all = r.out + r.err;
    EXPECT_TRUE(contains(all, "schema " + (schemas("notjson") / "configmap-v1.json").string() +
                                  " is not valid JSON"))
        << all;
}

TEST(PkoKubeconform, UnknownTemplateActionIsAnError) {
    Package p;
    p.dir.write("pkg/manifest.yaml", manifest("\"/x/{{ .Nope }}.json\""));
    p.dir.write("pkg/configmap.yaml", kGoodConfigMap);
    auto r = p.validate();
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    // Reported once, on the manifest's line, as kubeconform refuses to start.
    EXPECT_TRUE(contains(r.out + r.err,
                         "manifest.yaml:17:23: error: test.kubeconform.schemaLocations[0]: Invalid "
                         "value: \"/x/{{ .Nope }}.json\": unknown template action \"{{ .Nope }}\""))
        << r.out;
    EXPECT_FALSE(contains(r.out + r.err, "configmap.yaml")) << r.out;
}

TEST(PkoKubeconform, HugeSchemaIsRefused) {
    TempDir d;
    std::string schema = "{\"type\": \"object\", \"description\": \"";
    schema.append(4096, 'x');
    schema += "\"}";
    d.write("big/configmap-v1.json", schema);
    std::string location = quoted(d / "big");
    location.insert(location.size() - 1, "/{{ .ResourceKind }}{{ .KindSuffix }}.json");
    auto docs = io::parse_yaml(manifest(location), "manifest.yaml");
    ASSERT_TRUE(docs.ok());
    Manifest m;
    m.doc = (*docs)[0].root;
    KubeconformOptions o;
    o.max_schema_bytes = 1024;
    auto kc = Kubeconform::make(m, o);
    ASSERT_TRUE(kc);
    auto vs = kc->check_file("cm.yaml", kGoodConfigMap, "pkg/cm.yaml", "");
    ASSERT_EQ(vs.size(), 1u);
    EXPECT_TRUE(contains(vs[0].message, "is larger than 1024 bytes")) << vs[0].message;
    EXPECT_TRUE(contains(vs[0].message, (d / "big/configmap-v1.json").string())) << vs[0].message;
    // Within the limit the same schema is used and the object is valid.
    o.max_schema_bytes = 1 << 20;
    EXPECT_TRUE(Kubeconform::make(m, o)->check_file("cm.yaml", kGoodConfigMap, "", "").empty());
}

TEST(PkoKubeconform, SchemaPathTemplates) {
    auto p = kubeconform_schema_path("https://h/s", "Deployment", "apps/v1", "1.30.0");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(*p, "https://h/s/v1.30.0-standalone-strict/deployment-apps-v1.json");
    auto q = kubeconform_schema_path("/c/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json",
                                     "Certificate", "cert-manager.io/v1", "master");
    ASSERT_TRUE(q.ok());
    EXPECT_EQ(*q, "/c/cert-manager.io/certificate_v1.json");
    auto r = kubeconform_schema_path("/x/{{ .KindSuffix }}.json", "Role",
                                     "rbac.authorization.k8s.io/v1", "1.2.3");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, "/x/-rbac-v1.json");
    EXPECT_FALSE(kubeconform_schema_path("/x/{{ .Kind.json", "A", "v1", "1").ok());
}

TEST(PkoKubeconform, JsonSchemaWording) {
    auto s = io::parse_json(R"({"type": "object", "required": ["a"], "properties": {
        "n": {"type": "integer", "maximum": 3},
        "e": {"enum": ["x", "y"]},
        "m": {"type": "number", "minimum": 0.5, "maximum": 2, "exclusiveMaximum": true},
        "k": {"maximum": 2},
        "a b/c": {"type": "string"},
        "l": {"type": "array", "items": {"type": "string"}, "maxItems": 1}}})",
                            "s.json");
    auto v = io::parse_json(R"({"n": 4.5, "e": "z", "m": 0, "k": 2, "a b/c": 1, "l": ["a", 2]})",
                            "v.json");
    ASSERT_TRUE(s.ok() && v.ok());
    auto errs = validate_json_schema((*s)[0].root, (*v)[0].root);
    ASSERT_TRUE(errs.ok());
    std::string all;
    for (const auto& e : *errs)
        all += "'" + e.instance + "' " + e.keyword + ": " + e.message + "\n";
    EXPECT_EQ(all, "'' /required: missing properties: 'a'\n"
                   "'/n' /properties/n/type: expected integer, but got number\n"
                   "'/e' /properties/e/enum: value must be one of 'x', 'y'\n"
                   "'/m' /properties/m/minimum: must be >= 1/2 but found 0\n"
                   "'/a%20b~1c' /properties/a%20b~1c/type: expected string, but got number\n"
                   "'/l' /properties/l/maxItems: maximum 1 items required, but found 2 items\n"
                   "'/l/1' /properties/l/items/type: expected string, but got number\n");
}

TEST(PkoKubeconform, JsonSchemaCyclesAndDepthAreBounded) {
    auto value = io::parse_json("{\"a\": 1}", "v.json");
    ASSERT_TRUE(value.ok());
    // A junctor that refers back to its own schema never reaches the value's next level.
    auto loop = io::parse_json(
        R"({"definitions": {"a": {"allOf": [{"$ref": "#/definitions/a"}]}}, "$ref": "#/definitions/a"})",
        "s.json");
    ASSERT_TRUE(loop.ok());
    auto r = validate_json_schema((*loop)[0].root, (*value)[0].root);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.error().message, "a $ref cycle")) << r.error().message;
    EXPECT_EQ(r.error().code, ExitCode::invalid);
    // A recursive schema follows a deep value and stops at the limit, without a crash.
    auto rec = io::parse_json(
        R"({"definitions": {"n": {"type": "object", "properties": {"x": {"$ref": "#/definitions/n"}}}}, "$ref": "#/definitions/n"})",
        "s.json");
    ASSERT_TRUE(rec.ok());
    std::string deep;
    for (int i = 0; i < 500; ++i)
        deep += "{\"x\": ";
    deep += "1";
    for (int i = 0; i < 500; ++i)
        deep += "}";
    auto dv = io::parse_json(deep, "deep.json");
    ASSERT_TRUE(dv.ok()) << dv.error().str();
    auto d = validate_json_schema((*rec)[0].root, (*dv)[0].root);
    ASSERT_TRUE(d.ok()) << d.error().str();
    ASSERT_EQ(d->size(), 1u);
    EXPECT_EQ((*d)[0].message, "expected object, but got number");
    EXPECT_EQ((*d)[0].instance.size(), 500u * 2); // "/x" 500 times
    JsonSchemaLimits tight;
    tight.max_frames = 100;
    auto t = validate_json_schema((*rec)[0].root, (*dv)[0].root, {}, tight);
    ASSERT_FALSE(t.ok());
    EXPECT_TRUE(contains(t.error().message, "nesting deeper than 100")) << t.error().message;
    // Unresolvable: a pointer that leads nowhere, a sibling document without a loader.
    auto bad = io::parse_json(R"({"$ref": "#/definitions/none"})", "s.json");
    auto r2 = validate_json_schema((*bad)[0].root, (*value)[0].root);
    ASSERT_FALSE(r2.ok());
    EXPECT_TRUE(contains(r2.error().message, "\"definitions\" not found")) << r2.error().message;
    auto sib = io::parse_json(R"({"$ref": "other.json#/x"})", "s.json");
    EXPECT_FALSE(validate_json_schema((*sib)[0].root, (*value)[0].root).ok());
}

// A python3 http.server on 127.0.0.1 serving `dir`, stopped when the object goes away.
class LoopbackServer {
public:
    // `status`: 0 serves the files; anything else answers every request with that status.
    explicit LoopbackServer(const fs::path& dir, int status = 0) {
        const std::string code = std::to_string(status);
        int fds[2];
        if (::pipe(fds) != 0) return;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(fds[1], 1);
            ::close(fds[0]);
            ::close(fds[1]);
            const char* script =
                "import http.server,os,sys\n"
                "os.chdir(sys.argv[1])\n"
                "class H(http.server.SimpleHTTPRequestHandler):\n"
                "    def log_message(self, *a): pass\n"
                "    def do_GET(self):\n"
                "        if sys.argv[2] != '0': return self.send_error(int(sys.argv[2]))\n"
                "        return super().do_GET()\n"
                "s=http.server.ThreadingHTTPServer(('127.0.0.1',0),H)\n"
                "print(s.server_address[1],flush=True)\n"
                "s.serve_forever()\n";
            ::execlp("python3", "python3", "-c", script, dir.c_str(), code.c_str(), nullptr);
            ::_exit(127);
        }
        ::close(fds[1]);
        char buf[32] = {};
        std::size_t n = 0;
        while (n + 1 < sizeof buf) {
            const ssize_t got = ::read(fds[0], buf + n, 1);
            if (got <= 0 || buf[n] == '\n') break;
            ++n;
        }
        ::close(fds[0]);
        port_ = std::atoi(buf);
    }
    ~LoopbackServer() { stop(); }
    void stop() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            ::waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
    }
    int port() const { return port_; }

private:
    pid_t pid_ = -1;
    int port_ = 0;
};

TEST(PkoKubeconform, HttpLocationThenOfflineFromTheCache) {
    LoopbackServer server(schemas("schemas"));
    ASSERT_GT(server.port(), 0) << "python3 http.server did not start";
    Package p;
    const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
    p.dir.write("pkg/manifest.yaml", manifest("\"" + url + "\""));
    p.dir.write("pkg/configmap.yaml", std::string(kGoodConfigMap) + "extra: 1\n");
    p.dir.write("pkg/secret.yaml", R"(apiVersion: v1
kind: Secret
metadata:
  name: s
  annotations:
    package-operator.run/phase: deploy
)");
    auto online = p.validate();
    EXPECT_EQ(online.exit_code, 3) << online.out << online.err;
    EXPECT_TRUE(contains(online.out + online.err,
                         "jsonschema: '' does not validate with " + url +
                             "/v1.30.0-standalone-strict/configmap-v1.json#/additionalProperties: "
                             "additionalProperties 'extra' not allowed"))
        << online.out << online.err;
    server.stop();
    // The server is gone: the same answer comes from the cache (the Secret's 404 included).
    auto offline = p.validate({"--offline"});
    EXPECT_EQ(offline.exit_code, 3) << offline.out << offline.err;
    EXPECT_EQ(offline.out, online.out);
    EXPECT_EQ(offline.err, online.err);
    // Without --offline too: fetched once, then the cache answers.
    auto again = p.validate();
    EXPECT_EQ(again.out, online.out) << again.err;
    // A damaged schema in the cache is never used: it counts as absent.
    std::size_t damaged = 0;
    for (const auto& e : fs::recursive_directory_iterator(p.dir / "cache/blobs")) {
        if (!e.is_regular_file()) continue;
        p.dir.write(fs::relative(e.path(), p.dir.path()).string(), "{\"type\": \"string\"}");
        ++damaged;
    }
    EXPECT_EQ(damaged, 1u);
    auto broken = p.validate({"--offline"});
    EXPECT_EQ(broken.exit_code, 1) << broken.out << broken.err;
    EXPECT_TRUE(contains(broken.err, "configmap-v1.json is not in the cache (offline)"))
        << broken.err;
}

TEST(PkoKubeconform, HttpErrorStatusIsAViolationAndNotCached) {
    LoopbackServer server(schemas("schemas"), 503);
    ASSERT_GT(server.port(), 0) << "python3 http.server did not start";
    Package p;
    const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
    p.dir.write("pkg/manifest.yaml", manifest("\"" + url + "\""));
    p.dir.write("pkg/configmap.yaml", kGoodConfigMap);
    auto r = p.validate();
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(contains(r.out + r.err, "configmap.yaml idx 0: error while downloading schema at " +
                                            url +
                                            "/v1.30.0-standalone-strict/configmap-v1.json - "
                                            "received HTTP status 503"))
        << r.out << r.err;
    server.stop();
    auto offline = p.validate({"--offline"});
    EXPECT_EQ(offline.exit_code, 1) << offline.out << offline.err;
    EXPECT_TRUE(contains(offline.err, "is not in the cache (offline)")) << offline.err;
}

TEST(PkoKubeconform, OfflineWithAColdCacheFailsClearly) {
    Package p;
    const std::string url = "http://127.0.0.1:9/schemas";
    p.dir.write("pkg/manifest.yaml", manifest("\"" + url + "\""));
    p.dir.write("pkg/configmap.yaml", kGoodConfigMap);
    auto r = p.validate({"--offline"});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "schema " + url +
                                    "/v1.30.0-standalone-strict/configmap-v1.json is not in the "
                                    "cache (offline)"))
        << r.err;
}

} // namespace
} // namespace kpkg::pko
