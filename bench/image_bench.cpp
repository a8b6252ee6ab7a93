// What images cost: `kpkg build` of a bundle and of a catalog image, push and pull through a
// loopback docker-registry, and a warm `kpkg bundle render REF@sha256:…`, each end to end (the
// kpkg executable spawned directly, as a user's shell or a CI step runs it, output to /dev/null),
// with a baseline measured in the same run:
//   - build of the prometheus corpus bundle image (to the cache, and to an OCI layout);
//   - build of the derived-community/catalog-valid catalog image against `tar c | gzip -6` of
//     the same files (a pipeline, so run by /bin/sh, whose start is the first row);
//   - push of that catalog image (from an OCI layout) and pull of it (to an OCI layout, empty
//     cache) against `skopeo copy` of the same image between the same places;
//   - `kpkg bundle render REG/…@sha256:…` with the image in the cache (the registry stopped).
// The bundle build and the renders are also run with KPKG_HUGE_PAGES=0 (the heap in small pages),
// interleaved with the default runs.
// Medians of N runs (--runs, default 7). Needs the corpus, docker-registry and skopeo (a part
// whose tool is missing is skipped, saying so).
// Usage: kpkg-bench-image [--runs N] [--corpus DIR]
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "measure.hpp"

namespace fs = std::filesystem;

extern char** environ;

namespace {

using bench::Clock;
using bench::median;
using bench::ms_since;

int runs = 7;

// Runs `cmd` with /bin/sh, stdout and stderr to /dev/null (or to `out`): its wall time in ms,
// or exits the bench when it fails. For pipelines and for commands whose output is needed.
double sh(const std::string& cmd, std::string* out = nullptr) {
    std::string full = cmd + (out != nullptr ? " 2>&1" : " >/dev/null 2>&1");
    const auto t0 = Clock::now();
    FILE* p = popen(full.c_str(), "r");
    std::string text;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;)
        text.append(buf, n);
    const int status = pclose(p);
    const double ms = ms_since(t0);
    if (status != 0) {
        std::fprintf(stderr, "failed (%d): %s\n%s", status, cmd.c_str(), text.c_str());
        std::exit(1);
    }
    if (out != nullptr) *out = text;
    return ms;
}

// Runs PROGRAM ARGS directly (no shell), stdin, stdout and stderr on /dev/null, with
// KPKG_CACHE_DIR=cache when cache is not empty (and KPKG_HUGE_PAGES=0 with small_pages): its
// wall time from fork to exit in ms, or exits the bench when it fails.
double run(const std::string& program, const std::vector<std::string>& args,
           const std::string& cache = {}, bool small_pages = false) {
    const auto m = bench::run_measured(program.c_str(), args, [&] {
        const int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (!cache.empty()) setenv("KPKG_CACHE_DIR", cache.c_str(), 1);
        if (small_pages) setenv("KPKG_HUGE_PAGES", "0", 1);
    });
    if (m.status != 0) {
        std::string cmd = program;
        for (const auto& a : args)
            cmd += " " + a;
        std::fprintf(stderr, "failed (%d): %s\n", m.status, cmd.c_str());
        std::exit(1);
    }
    return m.seconds * 1000;
}

// skopeo found on PATH (run() takes a path).
std::string which(const char* program) {
    std::string out;
    sh(std::string("command -v ") + program, &out);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    return out;
}

bool have(const char* program) {
    return std::system((std::string("command -v ") + program + " >/dev/null 2>&1").c_str()) == 0;
}

int free_port() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t n = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
    const int port = ntohs(a.sin_port);
    close(fd);
    return port;
}

// `label  median ms  (baseline median ms, ratio)`.
void row(const char* label, const std::vector<double>& v, const std::vector<double>* base = nullptr,
         const char* base_label = nullptr) {
    const double m = median(v);
    if (base == nullptr) {
        std::printf("  %-58s %9.1f ms\n", label, m);
        return;
    }
    const double b = median(*base);
    std::printf("  %-58s %9.1f ms   %s %.1f ms, ratio %.2f\n", label, m, base_label, b, m / b);
}

} // namespace

int main(int argc, char** argv) {
    fs::path corpus = fs::path(KPKG_BENCH_SOURCE_ROOT).parent_path() / "shared" / "corpus";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else if (std::strcmp(argv[i], "--corpus") == 0 && i + 1 < argc)
            corpus = argv[++i];
        else {
            std::fprintf(stderr, "usage: kpkg-bench-image [--runs N] [--corpus DIR]\n");
            return 2;
        }
    }
    const std::string kpkg = KPKG_BENCH_KPKG;
    const fs::path bundle = corpus / "olm/bundles/prometheus.0.22.2";
    const fs::path catalog = corpus / "olm/large/derived-community/catalog-valid";
    if (!fs::exists(bundle) || !fs::exists(catalog)) {
        std::fprintf(stderr, "no corpus at %s\n", corpus.c_str());
        return 1;
    }
    char tmpl[] = "/tmp/kpkg-bench-image-XXXXXX";
    const fs::path tmp = mkdtemp(tmpl);
    const std::string cache = (tmp / "cache").string();
    auto k = [&](const std::string& args, const std::string& cache_dir) {
        return "KPKG_CACHE_DIR=" + cache_dir + " " + kpkg + " " + args;
    };
    std::printf("kpkg-bench-image: %s, %u cores, %d runs, medians\n", bench::cpu_model().c_str(),
                std::thread::hardware_concurrency(), runs);

    // ---- build ----
    std::vector<double> true_sh, true_ms, b_cache, b_small, b_layout, c_kpkg, c_tar;
    const std::string plat = "linux/amd64";
    for (int i = 0; i < runs; ++i) {
        true_sh.push_back(sh("/bin/true"));
        true_ms.push_back(run("/bin/true", {}));
        const std::string c = (tmp / ("bc" + std::to_string(i))).string();
        b_cache.push_back(run(kpkg, {"build", bundle.string(), "--platform", plat}, c));
        b_small.push_back(
            run(kpkg, {"build", bundle.string(), "--platform", plat}, c + "-small", true));
        b_layout.push_back(run(kpkg,
                               {"build", bundle.string(), "--platform", plat, "--save",
                                "oci:" + (tmp / ("bl" + std::to_string(i))).string()},
                               c));
        c_kpkg.push_back(
            run(kpkg,
                {"build", catalog.string(), "--lenient", "--platform", plat, "--save",
                 "oci-archive:" + (tmp / ("cat" + std::to_string(i) + ".tar")).string()},
                (tmp / ("cc" + std::to_string(i))).string()));
        c_tar.push_back(sh("tar cf - -C " + catalog.string() + " . | gzip -6 > " +
                           (tmp / ("cat" + std::to_string(i) + ".tgz")).string()));
    }
    std::printf("build\n");
    row("/bin/true (spawn baseline)", true_ms);
    row("/bin/true through sh (the baseline pipeline's shell)", true_sh);
    row("kpkg build prometheus.0.22.2 (into the cache)", b_cache);
    row("  the same with KPKG_HUGE_PAGES=0", b_small);
    row("kpkg build prometheus.0.22.2 --save oci:DIR", b_layout);
    row("kpkg build catalog-valid --save oci-archive:FILE", c_kpkg, &c_tar, "tar c | gzip -6:");

    // ---- registry ----
    if (!have("docker-registry") || !have("skopeo")) {
        std::printf("registry: skipped (docker-registry or skopeo is not installed)\n");
        fs::remove_all(tmp);
        return 0;
    }
    const int port = free_port();
    const std::string host = "127.0.0.1:" + std::to_string(port);
    {
        std::ofstream cfg(tmp / "registry.yml");
        cfg << "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\n"
               "storage:\n  filesystem:\n    rootdirectory: "
            << (tmp / "registry").string() << "\nhttp:\n  addr: " << host << "\n";
    }
    pid_t reg = fork();
    if (reg == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execlp("docker-registry", "docker-registry", "serve", (tmp / "registry.yml").c_str(),
               nullptr);
        _exit(127);
    }
    for (int i = 0; i < 100; ++i) {
        if (std::system(("curl -sf -o /dev/null http://" + host + "/v2/").c_str()) == 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const std::string layout = "oci:" + (tmp / "catlayout").string() + ":v1";
    const std::string skopeo = which("skopeo");
    sh(k("build " + catalog.string() + " --lenient --platform linux/amd64 --save " + layout,
         cache));
    std::vector<double> push_k, push_s, pull_k, pull_s;
    for (int i = 0; i < runs; ++i) {
        const std::string n = std::to_string(i);
        push_k.push_back(run(kpkg, {"push", layout, host + "/k" + n + "/cat:v1"}, cache));
        push_s.push_back(run(skopeo, {"copy", "-q", "--insecure-policy", "--dest-tls-verify=false",
                                      layout, "docker://" + host + "/s" + n + "/cat:v1"}));
        pull_k.push_back(run(
            kpkg,
            {"pull", host + "/k" + n + "/cat:v1", "--save", "oci:" + (tmp / ("pk" + n)).string()},
            (tmp / ("pc" + n)).string()));
        pull_s.push_back(run(skopeo, {"copy", "-q", "--insecure-policy", "--src-tls-verify=false",
                                      "docker://" + host + "/s" + n + "/cat:v1",
                                      "oci:" + (tmp / ("ps" + n)).string()}));
    }
    // Warm renders: each bundle image pushed and pulled once, then rendered by digest with the
    // registry stopped (no network at all), against rendering its directory.
    struct Warm {
        std::string name, ref;
        std::vector<double> image, dir, image_small;
    };
    std::vector<Warm> warms;
    const std::string warm_cache = (tmp / "warm").string();
    for (const char* b : {"etcd.0.9.2", "prometheus.0.22.2"}) {
        std::string out;
        const fs::path dir = corpus / "olm/bundles" / b;
        sh(k("build " + dir.string() + " -t " + host + "/b/" + b + ":v1 --push", cache), &out);
        const auto at = out.find("digest: ");
        const std::string digest = out.substr(at + 8, out.find('\n', at) - at - 8);
        Warm w{b, host + "/b/" + std::string(b) + "@" + digest, {}, {}, {}};
        sh(k("pull " + w.ref, warm_cache));
        sh(k("bundle render " + w.ref, warm_cache)); // unpacked once
        warms.push_back(std::move(w));
    }
    kill(reg, SIGTERM);
    waitpid(reg, nullptr, 0);
    for (int i = 0; i < runs; ++i) {
        for (auto& w : warms) {
            w.image.push_back(run(kpkg, {"bundle", "render", w.ref}, warm_cache));
            w.image_small.push_back(run(kpkg, {"bundle", "render", w.ref}, warm_cache, true));
            w.dir.push_back(run(kpkg,
                                {"bundle", "render", (corpus / "olm/bundles" / w.name).string()},
                                warm_cache));
        }
    }
    std::printf("registry (docker-registry on loopback; catalog-valid image, %s)\n",
                "one 2 MB layer");
    row("kpkg push oci:DIR REF", push_k, &push_s, "skopeo copy:");
    row("kpkg pull REF --save oci:DIR (empty cache)", pull_k, &pull_s, "skopeo copy:");
    for (const auto& w : warms) {
        const std::string label = "kpkg bundle render REF@sha256 of " + w.name + " (warm)";
        row(label.c_str(), w.image, &w.dir, "its directory:");
        row("  the same with KPKG_HUGE_PAGES=0", w.image_small);
    }
    fs::remove_all(tmp);
    return 0;
}
