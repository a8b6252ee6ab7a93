// kubeconfig loading (which files, merging, contexts, relative paths, inline and file
// certificates, every configuration error) and the credentials of a user at request time
// (tokenFile re-read, exec credential plugins: run, cached until expiry, re-run, failures).
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "kpkg/core/text.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/kube/kubeconfig.hpp"
#include "support/support.hpp"

namespace kpkg::kube {
namespace {

using test::contains;
using test::TempDir;

std::string b64(const std::string& s) {
    std::string out;
    io::go::append_base64(out, s);
    return out;
}

// A kubeconfig with one context "dev" -> cluster "c" and user "u" (user body given).
std::string config(const std::string& user_body, const std::string& cluster_extra = "") {
    std::string s = "apiVersion: v1\nkind: Config\ncurrent-context: dev\n"
                    "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n";
    s += cluster_extra;
    s += "contexts:\n- name: dev\n  context:\n    cluster: c\n    user: u\n    namespace: team\n";
    s += "users:\n- name: u\n  user:\n";
    s += user_body;
    return s;
}

Result<KubeConfig> load_path(const std::filesystem::path& p, const std::string& context = "") {
    KubeconfigSource src;
    src.path = p.string();
    return load_kubeconfig(src, context);
}

Result<KubeConfig> load_env(const std::string& list, const std::string& context = "") {
    KubeconfigSource src;
    src.kubeconfig_env = list;
    src.home = "/nonexistent";
    return load_kubeconfig(src, context);
}

std::string rfc3339(std::chrono::system_clock::time_point t) {
    const std::time_t tt = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::filesystem::path script(const TempDir& dir, const std::string& name, const std::string& body) {
    auto p = dir.write(name, "#!/bin/sh\n" + body);
    ::chmod(p.c_str(), 0755);
    return p;
}

int runs(const std::filesystem::path& count_file) {
    std::string s = test::read_file(count_file);
    return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

TEST(Kubeconfig, ReadsTheCurrentContextClusterUserAndNamespace) {
    TempDir dir;
    auto p = dir.write("config", config("    token: abc\n", "    insecure-skip-tls-verify: true\n"
                                                            "    tls-server-name: kubernetes\n"
                                                            "    proxy-url: http://proxy:3128\n"));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    EXPECT_EQ(kc->context, "dev");
    EXPECT_EQ(kc->namespace_, "team");
    EXPECT_EQ(kc->cluster.name, "c");
    EXPECT_EQ(kc->cluster.server, "https://127.0.0.1:6443");
    EXPECT_TRUE(kc->cluster.insecure);
    EXPECT_EQ(kc->cluster.tls_server_name, "kubernetes");
    EXPECT_EQ(kc->cluster.proxy_url, "http://proxy:3128");
    EXPECT_EQ(kc->user.name, "u");
    EXPECT_EQ(kc->user.token, "abc");
    ASSERT_EQ(kc->files.size(), 1u);
    Authenticator auth(*kc);
    auto c = auth.credentials();
    ASSERT_TRUE(c.ok()) << c.error().str();
    EXPECT_EQ(c->bearer_token, "abc");
}

TEST(Kubeconfig, ContextFlagChoosesAnotherContext) {
    TempDir dir;
    std::string s = config("    username: admin\n    password: secret\n");
    s += "- name: other\n  user:\n    token: t\n";
    s += "";
    // A second context, added to the contexts list.
    auto pos = s.find("users:");
    s.insert(pos, "- name: prod\n  context:\n    cluster: c\n    user: other\n");
    auto p = dir.write("config", s);
    auto kc = load_path(p, "prod");
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    EXPECT_EQ(kc->context, "prod");
    EXPECT_EQ(kc->user.name, "other");
    EXPECT_EQ(kc->namespace_, "");
    auto dev = load_path(p);
    ASSERT_TRUE(dev.ok());
    EXPECT_EQ(dev->user.username, "admin");
    EXPECT_EQ(dev->user.password, "secret");
}

TEST(Kubeconfig, KubeconfigListIsMergedFirstDefinitionWins) {
    TempDir dir;
    // a: current-context, and cluster "c" pointing at server A.
    auto a = dir.write("a.yaml", "current-context: dev\n"
                                 "clusters:\n- name: c\n  cluster:\n    server: https://a:1\n");
    // b: its own current-context (ignored: a set it first), cluster "c" again (ignored), the
    // context and the user.
    auto b = dir.write("b.yaml", "current-context: other\n"
                                 "clusters:\n- name: c\n  cluster:\n    server: https://b:2\n"
                                 "- name: c2\n  cluster:\n    server: https://b:3\n"
                                 "contexts:\n- name: dev\n  context: {cluster: c, user: u}\n"
                                 "- name: other\n  context: {cluster: c2, user: u}\n"
                                 "users:\n- name: u\n  user: {token: from-b}\n");
    const std::string list = a.string() + ":" + (dir / "missing.yaml").string() + ":" + b.string();
    auto kc = load_env(list);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    EXPECT_EQ(kc->context, "dev");
    EXPECT_EQ(kc->cluster.server, "https://a:1");
    EXPECT_EQ(kc->user.token, "from-b");
    EXPECT_EQ(kc->files, (std::vector<std::string>{a.string(), b.string()}));
    auto other = load_env(list, "other");
    ASSERT_TRUE(other.ok()) << other.error().str();
    EXPECT_EQ(other->cluster.server, "https://b:3");
    // The other order: b's current-context wins.
    auto rev = load_env(b.string() + ":" + a.string());
    ASSERT_TRUE(rev.ok()) << rev.error().str();
    EXPECT_EQ(rev->context, "other");
}

TEST(Kubeconfig, KubeconfigFlagReadsThatFileAlone) {
    TempDir dir;
    auto a = dir.write("a.yaml", config("    token: a\n"));
    auto b = dir.write("b.yaml", "current-context: x\n");
    KubeconfigSource src;
    src.path = a.string();
    src.kubeconfig_env = b.string();
    auto kc = load_kubeconfig(src, "");
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    EXPECT_EQ(kc->context, "dev");
}

TEST(Kubeconfig, HomeKubeConfigWhenNothingElseIsSet) {
    TempDir dir;
    dir.write("home/.kube/config", config("    token: h\n"));
    KubeconfigSource src;
    src.kubeconfig_env = "";
    src.home = (dir / "home").string();
    auto kc = load_kubeconfig(src, "");
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    EXPECT_EQ(kc->user.token, "h");
    src.home = (dir / "nohome").string();
    auto none = load_kubeconfig(src, "");
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().code, ExitCode::invalid);
    EXPECT_TRUE(contains(none.error().message, "nohome/.kube/config does not exist"))
        << none.error().message;
}

TEST(Kubeconfig, RelativePathsAreResolvedAgainstTheFilesDirectory) {
    TempDir dir;
    dir.write("kc/pki/ca.pem", "CA-PEM");
    dir.write("kc/pki/client.pem", "CERT-PEM");
    dir.write("kc/pki/client.key", "KEY-PEM");
    dir.write("kc/token", "  tok-1\n");
    auto p = dir.write("kc/config", config("    client-certificate: pki/client.pem\n"
                                           "    client-key: pki/client.key\n"
                                           "    tokenFile: token\n",
                                           "    certificate-authority: pki/ca.pem\n"));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    EXPECT_EQ(kc->cluster.ca_pem, "CA-PEM");
    EXPECT_EQ(kc->cluster.certificate_authority, (dir / "kc/pki/ca.pem").string());
    EXPECT_EQ(kc->user.client_cert_pem, "CERT-PEM");
    EXPECT_EQ(kc->user.client_key_pem, "KEY-PEM");
    EXPECT_EQ(kc->user.token_file, (dir / "kc/token").string());
    Authenticator auth(*kc);
    auto c = auth.credentials();
    ASSERT_TRUE(c.ok()) << c.error().str();
    EXPECT_EQ(c->bearer_token, "tok-1");
    EXPECT_EQ(c->client_cert_pem, "CERT-PEM");
}

TEST(Kubeconfig, InlineDataIsDecodedAndWinsOverFiles) {
    TempDir dir;
    auto p = dir.write("config", config("    client-certificate-data: " + b64("CERT") + "\n" +
                                            "    client-key-data: " + b64("KEY") + "\n",
                                        "    certificate-authority-data: " + b64("CA") + "\n" +
                                            "    certificate-authority: /does/not/exist.pem\n"));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    EXPECT_EQ(kc->cluster.ca_pem, "CA");
    EXPECT_EQ(kc->user.client_cert_pem, "CERT");
    EXPECT_EQ(kc->user.client_key_pem, "KEY");
}

TEST(Kubeconfig, TokenFileIsReadAgainAtEachUse) {
    TempDir dir;
    auto tf = dir.write("token", "first\n");
    auto p = dir.write("config", config("    tokenFile: " + tf.string() + "\n"));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    Authenticator auth(*kc);
    auto c1 = auth.credentials();
    ASSERT_TRUE(c1.ok()) << c1.error().str();
    EXPECT_EQ(c1->bearer_token, "first");
    dir.write("token", "rotated\n");
    auto c2 = auth.credentials();
    ASSERT_TRUE(c2.ok());
    EXPECT_EQ(c2->bearer_token, "rotated");
    std::filesystem::remove(tf);
    auto c3 = auth.credentials();
    ASSERT_FALSE(c3.ok());
    EXPECT_EQ(c3.error().code, ExitCode::error);
    EXPECT_TRUE(contains(c3.error().message, "tokenFile of user \"u\"")) << c3.error().message;
}

// An exec plugin that counts its runs in `count`, records its environment, and answers a
// token that expires at `expiry`.
std::string exec_user(const std::filesystem::path& plugin, const std::string& api_version,
                      const std::string& extra = "") {
    std::string s = "    exec:\n      apiVersion: " + api_version +
                    "\n      command: " + plugin.string() +
                    "\n      args: [one, two]\n"
                    "      env:\n      - name: PLUGIN_ENV\n        value: from-config\n";
    s += extra;
    return s;
}

std::string plugin_body(const TempDir& dir, const std::string& api_version,
                        const std::string& expiry, const std::string& status_extra = "") {
    return "echo run >> " + (dir / "count").string() + "\n" +
           "printf '%s' \"$KUBERNETES_EXEC_INFO\" > " + (dir / "info").string() + "\n" +
           "echo \"$PLUGIN_ENV $1 $2\" > " + (dir / "env").string() + "\n" +
           "cat <<EOF\n{\"kind\":\"ExecCredential\",\"apiVersion\":\"" + api_version +
           "\",\"status\":{\"token\":\"tok-$(wc -l < " + (dir / "count").string() +
           " | tr -d ' ')\"" +
           (expiry.empty() ? "" : ",\"expirationTimestamp\":\"" + expiry + "\"") + status_extra +
           "}}\nEOF\n";
}

TEST(Kubeconfig, ExecPluginV1TokenIsCachedUntilItExpires) {
    TempDir dir;
    const std::string v1 = "client.authentication.k8s.io/v1";
    const auto later = rfc3339(std::chrono::system_clock::now() + std::chrono::hours(1));
    auto plugin = script(dir, "plugin.sh", plugin_body(dir, v1, later));
    auto p = dir.write("config", config(exec_user(plugin, v1, "      interactiveMode: Never\n")));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    Authenticator auth(*kc);
    for (int i = 0; i < 3; ++i) {
        auto c = auth.credentials();
        ASSERT_TRUE(c.ok()) << c.error().str();
        EXPECT_EQ(c->bearer_token, "tok-1");
    }
    EXPECT_EQ(runs(dir / "count"), 1);
    EXPECT_EQ(auth.exec_runs(), 1);
    EXPECT_EQ(test::read_file(dir / "env"), "from-config one two\n");
    const std::string info = test::read_file(dir / "info");
    EXPECT_TRUE(contains(info, "\"apiVersion\":\"client.authentication.k8s.io/v1\"")) << info;
    EXPECT_TRUE(contains(info, "\"interactive\":false")) << info;
    // A 401: the client forgets the token and the plugin runs again.
    EXPECT_TRUE(auth.invalidate());
    auto c = auth.credentials();
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->bearer_token, "tok-2");
    EXPECT_EQ(runs(dir / "count"), 2);
}

TEST(Kubeconfig, ExecPluginRunsAgainOnceTheTokenExpired) {
    TempDir dir;
    const std::string v1beta1 = "client.authentication.k8s.io/v1beta1";
    const auto past = rfc3339(std::chrono::system_clock::now() - std::chrono::minutes(1));
    auto plugin = script(dir, "plugin.sh", plugin_body(dir, v1beta1, past));
    // v1beta1 needs no interactiveMode; provideClusterInfo hands the cluster to the plugin.
    auto p =
        dir.write("config", config(exec_user(plugin, v1beta1, "      provideClusterInfo: true\n")));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    Authenticator auth(*kc);
    auto c1 = auth.credentials();
    ASSERT_TRUE(c1.ok()) << c1.error().str();
    auto c2 = auth.credentials();
    ASSERT_TRUE(c2.ok()) << c2.error().str();
    EXPECT_EQ(c1->bearer_token, "tok-1");
    EXPECT_EQ(c2->bearer_token, "tok-2");
    EXPECT_EQ(runs(dir / "count"), 2);
    const std::string info = test::read_file(dir / "info");
    EXPECT_TRUE(contains(info, "\"server\":\"https://127.0.0.1:6443\"")) << info;
}

TEST(Kubeconfig, ExecPluginWithoutExpiryIsCachedForTheProcess) {
    TempDir dir;
    const std::string v1 = "client.authentication.k8s.io/v1";
    auto plugin = script(dir, "plugin.sh", plugin_body(dir, v1, ""));
    auto p =
        dir.write("config", config(exec_user(plugin, v1, "      interactiveMode: IfAvailable\n")));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    Authenticator auth(*kc);
    ASSERT_TRUE(auth.credentials().ok());
    ASSERT_TRUE(auth.credentials().ok());
    EXPECT_EQ(runs(dir / "count"), 1);
}

TEST(Kubeconfig, ExecPluginClientCertificate) {
    TempDir dir;
    const std::string v1 = "client.authentication.k8s.io/v1";
    auto plugin = script(
        dir, "plugin.sh",
        "cat <<EOF\n{\"kind\":\"ExecCredential\",\"apiVersion\":\"" + v1 +
            "\",\"status\":{\"clientCertificateData\":\"CERT\",\"clientKeyData\":\"KEY\"}}\nEOF\n");
    auto p = dir.write("config", config(exec_user(plugin, v1, "      interactiveMode: Never\n")));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    Authenticator auth(*kc);
    auto c = auth.credentials();
    ASSERT_TRUE(c.ok()) << c.error().str();
    EXPECT_EQ(c->client_cert_pem, "CERT");
    EXPECT_EQ(c->client_key_pem, "KEY");
    EXPECT_EQ(c->bearer_token, "");
}

TEST(Kubeconfig, ExecPluginRelativeCommandAndPath) {
    TempDir dir;
    const std::string v1 = "client.authentication.k8s.io/v1";
    script(dir, "kc/bin/plugin.sh", plugin_body(dir, v1, ""));
    auto p = dir.write("kc/config",
                       config("    exec:\n      apiVersion: " + v1 +
                              "\n      command: ./bin/plugin.sh\n      interactiveMode: Never\n"));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    EXPECT_EQ(kc->user.exec->command, (dir / "kc/bin/plugin.sh").string());
    Authenticator auth(*kc);
    auto c = auth.credentials();
    ASSERT_TRUE(c.ok()) << c.error().str();
    EXPECT_EQ(c->bearer_token, "tok-1");
}

TEST(Kubeconfig, FailingExecPluginIsAnErrorNamingIt) {
    TempDir dir;
    const std::string v1 = "client.authentication.k8s.io/v1";
    auto plugin =
        script(dir, "broken-plugin.sh", "echo 'login expired, run sso login' >&2\nexit 3\n");
    auto p = dir.write("config", config(exec_user(plugin, v1, "      interactiveMode: Never\n")));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    Authenticator auth(*kc);
    auto c = auth.credentials();
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().code, ExitCode::error);
    EXPECT_TRUE(contains(c.error().message, "broken-plugin.sh")) << c.error().message;
    EXPECT_TRUE(contains(c.error().message, "exit status 3")) << c.error().message;
    ASSERT_FALSE(c.error().notes.empty());
    EXPECT_TRUE(contains(c.error().notes[0], "login expired")) << c.error().notes[0];
}

TEST(Kubeconfig, MissingExecPluginShowsTheInstallHint) {
    TempDir dir;
    const std::string v1 = "client.authentication.k8s.io/v1";
    auto p = dir.write("config", config("    exec:\n      apiVersion: " + v1 +
                                        "\n      command: kpkg-no-such-plugin\n"
                                        "      interactiveMode: Never\n"
                                        "      installHint: install it from example.com\n"));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    Authenticator auth(*kc);
    auto c = auth.credentials();
    ASSERT_FALSE(c.ok());
    EXPECT_TRUE(contains(c.error().message, "kpkg-no-such-plugin")) << c.error().message;
    ASSERT_FALSE(c.error().notes.empty());
    EXPECT_EQ(c.error().notes[0], "install it from example.com");
}

TEST(Kubeconfig, ExecPluginAnsweringTheWrongVersionOrNothingUsable) {
    TempDir dir;
    const std::string v1 = "client.authentication.k8s.io/v1";
    const std::string v1beta1 = "client.authentication.k8s.io/v1beta1";
    struct Case {
        std::string output;
        std::string expect;
    } cases[] = {
        {"{\"kind\":\"ExecCredential\",\"apiVersion\":\"" + v1beta1 +
             "\",\"status\":{\"token\":\"x\"}}",
         "is not the configured"},
        {"{\"kind\":\"ExecCredential\",\"apiVersion\":\"" + v1 + "\",\"status\":{}}",
         "neither a token nor clientCertificateData"},
        {"not json", "ExecCredential"},
        {"{\"kind\":\"ExecCredential\",\"apiVersion\":\"" + v1 +
             "\",\"status\":{\"token\":\"x\",\"expirationTimestamp\":\"tomorrow\"}}",
         "expirationTimestamp"},
    };
    for (const auto& c : cases) {
        dir.write("out.json", c.output);
        auto plugin = script(dir, "plugin.sh", "cat " + (dir / "out.json").string() + "\n");
        auto p =
            dir.write("config", config(exec_user(plugin, v1, "      interactiveMode: Never\n")));
        auto kc = load_path(p);
        ASSERT_TRUE(kc.ok()) << kc.error().str();
        Authenticator auth(*kc);
        auto r = auth.credentials();
        ASSERT_FALSE(r.ok()) << c.output;
        EXPECT_EQ(r.error().code, ExitCode::invalid);
        EXPECT_TRUE(contains(r.error().message, c.expect)) << r.error().message;
    }
}

// Whether process `pid` is gone (or a zombie left for init to reap).
bool process_gone(const std::string& pid) {
    std::ifstream f("/proc/" + pid + "/stat");
    std::string stat;
    if (!f || !std::getline(f, stat)) return true;
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

TEST(Kubeconfig, ExecPluginThatNeverAnswersIsKilledAtTheDeadlineWithWhatItStarted) {
    TempDir dir;
    const std::string v1 = "client.authentication.k8s.io/v1";
    // The plugin starts a child that holds its output open, and waits for it.
    auto plugin =
        script(dir, "plugin.sh", "sleep 600 &\necho $! > " + (dir / "child").string() + "\nwait\n");
    auto p = dir.write("config", config(exec_user(plugin, v1, "      interactiveMode: Never\n")));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    Authenticator auth(*kc);
    const auto start = std::chrono::steady_clock::now();
    auto c = auth.credentials(Deadline{start + std::chrono::seconds(1), std::chrono::seconds(1)});
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().code, ExitCode::error);
    EXPECT_TRUE(contains(c.error().message, "exec credential plugin")) << c.error().message;
    EXPECT_TRUE(contains(c.error().message, "the time limit of 1s passed")) << c.error().message;
    // It used to run for its own 120 s whatever the time left.
    EXPECT_LT(took, std::chrono::seconds(10));
    const std::string child_file = test::read_file(dir / "child");
    const std::string child(text::trim(child_file));
    ASSERT_FALSE(child.empty());
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!process_gone(child) && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(process_gone(child)) << "the plugin's child " << child << " outlived it";
    // With no time left the plugin is not started at all.
    auto late =
        auth.credentials(Deadline{std::chrono::steady_clock::now(), std::chrono::seconds(1)});
    ASSERT_FALSE(late.ok());
    EXPECT_TRUE(contains(late.error().message, "time limit")) << late.error().message;
    EXPECT_EQ(auth.exec_runs(), 1);
}

// A plugin that starts a child holding its output open, writes "PLUGIN CHILD" (the pids) to
// dir/pids, and waits; the pids once the file is there (0 0 if it never comes).
std::filesystem::path waiting_plugin(const TempDir& dir) {
    const std::string pids = (dir / "pids").string();
    return script(dir, "plugin.sh",
                  "sleep 600 &\necho \"$$ $!\" > " + pids + ".tmp\nmv " + pids + ".tmp " + pids +
                      "\nwait\n");
}

std::pair<std::string, std::string> plugin_pids(const TempDir& dir) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!std::filesystem::exists(dir / "pids") && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::istringstream in(test::read_file(dir / "pids"));
    std::string plugin = "0", child = "0";
    in >> plugin >> child;
    return {plugin, child};
}

bool all_gone(const std::pair<std::string, std::string>& pids) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!(process_gone(pids.first) && process_gone(pids.second)) &&
           std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return process_gone(pids.first) && process_gone(pids.second);
}

TEST(Kubeconfig, ExecPluginIsStoppedAtOnceWithWhatItStartedWhenInterrupted) {
    TempDir dir;
    auto plugin = waiting_plugin(dir);
    auto p = dir.write("config", config(exec_user(plugin, "client.authentication.k8s.io/v1",
                                                  "      interactiveMode: Never\n")));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    Authenticator auth(*kc);
    std::atomic<bool> interrupted{false};
    std::thread interrupter([&] {
        plugin_pids(dir);
        interrupted.store(true);
    });
    const auto start = std::chrono::steady_clock::now();
    auto c = auth.credentials(std::nullopt, &interrupted);
    const auto took = std::chrono::steady_clock::now() - start;
    interrupter.join();
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().code, ExitCode::error);
    EXPECT_TRUE(contains(c.error().message, "interrupted: exec credential plugin"))
        << c.error().message;
    // Not its own 120 s.
    EXPECT_LT(took, std::chrono::seconds(20));
    EXPECT_TRUE(all_gone(plugin_pids(dir))) << "the plugin or its child outlived the interrupt";
    // Once interrupted, the plugin is not started again.
    auto again = auth.credentials(std::nullopt, &interrupted);
    ASSERT_FALSE(again.ok());
    EXPECT_TRUE(contains(again.error().message, "interrupted")) << again.error().message;
    EXPECT_EQ(auth.exec_runs(), 1);
}

TEST(Kubeconfig, KillRunningPluginsKillsTheirProcessGroups) {
    TempDir dir;
    auto plugin = waiting_plugin(dir);
    auto p = dir.write("config", config(exec_user(plugin, "client.authentication.k8s.io/v1",
                                                  "      interactiveMode: Never\n")));
    auto kc = load_path(p);
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    Authenticator auth(*kc);
    std::optional<Result<Credentials>> c;
    std::thread runner([&] { c.emplace(auth.credentials()); });
    const auto pids = plugin_pids(dir);
    kill_running_plugins();
    runner.join();
    ASSERT_TRUE(c.has_value());
    ASSERT_FALSE(c->ok());
    EXPECT_TRUE(contains(c->error().message, "killed by signal 9")) << c->error().message;
    EXPECT_TRUE(all_gone(pids)) << "the plugin or its child outlived kill_running_plugins";
    // None is running now: nothing to kill.
    kill_running_plugins();
}

// --- errors ---------------------------------------------------------------------------------

void expect_error(const Result<KubeConfig>& r, ExitCode code,
                  const std::vector<std::string>& parts) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, code) << r.error().str();
    const std::string s = r.error().str();
    for (const auto& p : parts)
        EXPECT_TRUE(contains(s, p)) << "missing " << p << " in: " << s;
}

TEST(KubeconfigErrors, FileThatDoesNotParseNamesFileAndLine) {
    TempDir dir;
    auto p =
        dir.write("config", "apiVersion: v1\nkind: Config\ncurrent-context: a: b\nusers: []\n");
    expect_error(load_path(p), ExitCode::invalid, {p.string() + ":3"});
}

TEST(KubeconfigErrors, FieldOfTheWrongType) {
    TempDir dir;
    auto p = dir.write("config", "current-context: dev\nclusters:\n  c: {server: x}\n");
    expect_error(load_path(p), ExitCode::invalid, {p.string() + ":3", "clusters must be a list"});
}

TEST(KubeconfigErrors, MissingContextListsTheDefinedOnes) {
    TempDir dir;
    auto p = dir.write("config", config("    token: t\n"));
    expect_error(load_path(p, "prod"), ExitCode::invalid,
                 {"context \"prod\" is not defined in " + p.string(), "contexts defined: dev"});
}

TEST(KubeconfigErrors, EmptyKubeconfigHasNoContext) {
    TempDir dir;
    auto p = dir.write("config", "");
    expect_error(load_path(p), ExitCode::invalid,
                 {"current-context is not set in " + p.string(), "no contexts are defined"});
}

TEST(KubeconfigErrors, NoCurrentContext) {
    TempDir dir;
    auto p = dir.write("config",
                       "clusters: []\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n");
    expect_error(load_path(p), ExitCode::invalid,
                 {"current-context is not set", "--context", "contexts defined: a"});
}

TEST(KubeconfigErrors, MissingClusterAndUserAreNamed) {
    TempDir dir;
    std::string s = config("    token: t\n");
    std::string cl = s;
    cl.replace(cl.find("cluster: c\n    user"), 10, "cluster: gone");
    expect_error(load_path(dir.write("a", cl)), ExitCode::invalid,
                 {"cluster \"gone\" of context \"dev\" is not defined", "clusters defined: c"});
    std::string us = s;
    us.replace(us.find("user: u\n"), 7, "user: nobody");
    expect_error(load_path(dir.write("b", us)), ExitCode::invalid,
                 {"user \"nobody\" of context \"dev\" is not defined", "users defined: u"});
}

TEST(KubeconfigErrors, TokenAndBasicAuthTogether) {
    TempDir dir;
    auto p = dir.write("config", config("    token: t\n    username: a\n    password: b\n"));
    expect_error(load_path(p), ExitCode::invalid,
                 {"user \"u\"", "both a token and a username/password"});
}

TEST(KubeconfigErrors, AuthProviderIsNotSupported) {
    TempDir dir;
    auto p = dir.write("config", config("    auth-provider:\n      name: gcp\n"));
    expect_error(load_path(p), ExitCode::invalid,
                 {"auth-provider is not supported", p.string() + ":"});
}

TEST(KubeconfigErrors, UnreadableCertificateFiles) {
    TempDir dir;
    auto p =
        dir.write("config", config("    token: t\n", "    certificate-authority: nope/ca.pem\n"));
    expect_error(load_path(p), ExitCode::error,
                 {"certificate-authority of cluster \"c\"", (dir / "nope/ca.pem").string()});
    auto q = dir.write("config2", config("    client-certificate: c.pem\n    client-key: k.pem\n"));
    expect_error(load_path(q), ExitCode::error, {"client-certificate of user \"u\"", "c.pem"});
}

TEST(KubeconfigErrors, InsecureWithACertificateAuthority) {
    TempDir dir;
    auto p = dir.write("config", config("    token: t\n", "    insecure-skip-tls-verify: true\n"
                                                          "    certificate-authority-data: " +
                                                              b64("CA") + "\n"));
    expect_error(load_path(p), ExitCode::invalid,
                 {"cluster \"c\"", "both insecure-skip-tls-verify and a certificate authority"});
}

TEST(KubeconfigErrors, CertificateWithoutKey) {
    TempDir dir;
    auto p = dir.write("config", config("    client-certificate-data: " + b64("C") + "\n"));
    expect_error(load_path(p), ExitCode::invalid, {"client certificate but no client-key"});
}

TEST(KubeconfigErrors, BadBase64) {
    TempDir dir;
    auto p =
        dir.write("config", config("    token: t\n", "    certificate-authority-data: '%%%'\n"));
    expect_error(load_path(p), ExitCode::invalid,
                 {p.string() + ":", "certificate-authority-data is not valid base64"});
}

TEST(KubeconfigErrors, ExplicitKubeconfigThatDoesNotExist) {
    TempDir dir;
    expect_error(load_path(dir / "absent"), ExitCode::error, {(dir / "absent").string()});
}

TEST(KubeconfigErrors, KubeconfigListWithNoExistingFile) {
    TempDir dir;
    expect_error(load_env((dir / "x").string() + ":" + (dir / "y").string()), ExitCode::invalid,
                 {"none of the files in KUBECONFIG exists"});
}

TEST(KubeconfigErrors, BadExecSections) {
    TempDir dir;
    struct Case {
        std::string exec;
        std::string expect;
    } cases[] = {
        {"      apiVersion: client.authentication.k8s.io/v1\n      command: x\n",
         "interactiveMode must be set"},
        {"      apiVersion: client.authentication.k8s.io/v1alpha1\n      command: x\n",
         "is not supported"},
        {"      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Never\n",
         "command is not set"},
        {"      apiVersion: client.authentication.k8s.io/v1\n      command: x\n      "
         "interactiveMode: Always\n",
         "needs a terminal"},
    };
    for (const auto& c : cases) {
        auto p = dir.write("config", config("    exec:\n" + c.exec));
        expect_error(load_path(p), ExitCode::invalid, {"exec plugin of user \"u\"", c.expect});
    }
}

TEST(KubeconfigErrors, ServerThatIsNoHttpUrl) {
    TempDir dir;
    std::string s = config("    token: t\n");
    s.replace(s.find("https://127.0.0.1:6443"), 22, "ftp://127.0.0.1:6443");
    expect_error(load_path(dir.write("config", s)), ExitCode::invalid,
                 {"is not an http:// or https:// URL"});
}

TEST(Kubeconfig, ServerWithoutSchemeGetsOneAsClientGoGivesIt) {
    TempDir dir;
    std::string plain = config("    token: t\n");
    plain.replace(plain.find("https://127.0.0.1:6443"), 22, "127.0.0.1:6443");
    auto kc = load_path(dir.write("a", plain));
    ASSERT_TRUE(kc.ok()) << kc.error().str();
    EXPECT_EQ(kc->cluster.server, "http://127.0.0.1:6443");
    std::string tls =
        config("    token: t\n", "    certificate-authority-data: " + b64("CA") + "\n");
    tls.replace(tls.find("https://127.0.0.1:6443"), 22, "127.0.0.1:6443");
    auto kt = load_path(dir.write("b", tls));
    ASSERT_TRUE(kt.ok()) << kt.error().str();
    EXPECT_EQ(kt->cluster.server, "https://127.0.0.1:6443");
}

} // namespace
} // namespace kpkg::kube
