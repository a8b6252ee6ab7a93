// Applying speed: `kpkg apply` of a generated tree of N objects (default 1,000: a Namespace and
// ConfigMaps, Secrets, ServiceAccounts and Services in it) against the project's test API server
// (tests/kube/apiserver.py on 127.0.0.1), side by side with `kubectl apply --server-side` of the
// same files in the same run. Each run starts from an empty server (POST /__test/reset); the
// server's request log gives the requests each tool made. Prints medians over --runs.
//
//   kpkg-bench-apply [--objects N] [--runs R] [--concurrency C] [--kubectl PATH]
//
// kubectl is /usr/lib/google-cloud-sdk/bin/kubectl.1.32 unless --kubectl says otherwise (the
// `kubectl` on PATH may be a dispatcher that asks the server first); without it only kpkg runs.
// The server is one Python process: it, not the clients, bounds how fast any client can go.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "measure.hpp"

namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

// The tree: 000-namespace.yaml first (kubectl applies in file order), then one file per object.
std::size_t generate(const fs::path& dir, int objects) {
    write(dir / "000-namespace.yaml",
          "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bench\n");
    std::size_t n = 1;
    for (int i = 1; i < objects; ++i, ++n) {
        char name[32];
        std::snprintf(name, sizeof name, "obj-%05d", i);
        std::string text;
        const int k = i % 10;
        if (k < 7) {
            text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ";
            text.append(name).append("\n  namespace: bench\n  labels:\n    app: bench\ndata:\n");
            text.append("  key: value-").append(std::to_string(i)).append("\n");
            text.append("  config.yaml: |\n    replicas: 3\n    level: info\n");
        } else if (k == 7) {
            text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ";
            text.append(name).append("\n  namespace: bench\ntype: Opaque\nstringData:\n");
            text.append("  password: p-").append(std::to_string(i)).append("\n");
        } else if (k == 8) {
            text = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ";
            text.append(name).append("\n  namespace: bench\n");
        } else {
            text = "apiVersion: v1\nkind: Service\nmetadata:\n  name: ";
            text.append(name).append("\n  namespace: bench\nspec:\n  selector:\n    app: ");
            text.append(name).append("\n  ports:\n  - name: http\n    port: 80\n");
            text.append("    targetPort: 8080\n");
        }
        write(dir / (std::string(name) + ".yaml"), text);
    }
    return n;
}

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Runs argv with stdout and stderr to `log`; the exit status (-1 when it could not start).
int run(const std::vector<std::string>& argv, const fs::path& log,
        const std::map<std::string, std::string>& env = {}) {
    const pid_t pid = fork();
    if (pid == 0) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        for (const auto& [k, v] : env)
            setenv(k.c_str(), v.c_str(), 1);
        std::vector<char*> args;
        for (const auto& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct Server {
    pid_t pid = -1;
    int port = 0;
    ~Server() {
        if (pid > 0) {
            kill(pid, SIGTERM);
            waitpid(pid, nullptr, 0);
        }
    }
};

bool start_server(Server& s, const fs::path& script, const fs::path& work) {
    const fs::path port_file = work / "port";
    s.pid = fork();
    if (s.pid == 0) {
        const int fd = ::open((work / "server.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execlp("python3", "python3", script.c_str(), "--port-file", port_file.c_str(),
               static_cast<char*>(nullptr));
        _exit(127);
    }
    for (int i = 0; i < 200; ++i) {
        std::error_code ec;
        if (fs::exists(port_file, ec)) {
            s.port = std::atoi(read_all(port_file).c_str());
            if (s.port > 0) return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

// A control call (with python3, which the server needs anyway); the body of the answer.
std::string control(const Server& s, const std::string& method, const std::string& path,
                    const fs::path& work) {
    const fs::path out = work / "control.out";
    std::string url = "http://127.0.0.1:";
    url.append(std::to_string(s.port)).append(path);
    const std::string code = "import sys, urllib.request as u\n"
                             "r = u.Request(sys.argv[1], method=sys.argv[2], data=b'' if "
                             "sys.argv[2] == 'POST' else None)\n"
                             "open(sys.argv[3], 'wb').write(u.urlopen(r).read())\n";
    run({"python3", "-c", code, url, method, out.string()}, work / "control.log");
    return read_all(out);
}

// How many requests of the log have this method ("" = all).
std::size_t count(const std::string& log, const std::string& method) {
    std::size_t n = 0;
    const std::string needle = method.empty() ? "\"method\"" : "\"method\": \"" + method + "\"";
    for (std::size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1))
        ++n;
    if (n == 0 && !method.empty()) {
        const std::string tight = "\"method\":\"" + method + "\"";
        for (std::size_t at = log.find(tight); at != std::string::npos;
             at = log.find(tight, at + 1))
            ++n;
    }
    return n;
}

} // namespace

int main(int argc, char** argv) {
    int objects = 1000, runs = 3, concurrency = 8;
    std::string kubectl = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--objects")
            objects = std::atoi(next().c_str());
        else if (a == "--runs")
            runs = std::atoi(next().c_str());
        else if (a == "--concurrency")
            concurrency = std::atoi(next().c_str());
        else if (a == "--kubectl")
            kubectl = next();
        else {
            std::fprintf(stderr,
                         "usage: kpkg-bench-apply [--objects N] [--runs R] [--concurrency C] "
                         "[--kubectl PATH]\n");
            return 2;
        }
    }
    if (objects < 2 || runs < 1) return 2;
    const fs::path script = fs::path(KPKG_BENCH_SOURCE_ROOT) / "tests/kube/apiserver.py";
    char tmpl[] = "/tmp/kpkg-bench-apply.XXXXXX";
    if (!mkdtemp(tmpl)) return 1;
    const fs::path work = tmpl;
    const fs::path tree = work / "tree";
    const std::size_t n = generate(tree, objects);

    Server server;
    if (!start_server(server, script, work)) {
        std::fprintf(stderr, "kpkg-bench-apply: the test API server did not start (%s)\n",
                     (work / "server.log").c_str());
        return 1;
    }
    const fs::path kubeconfig = work / "kubeconfig";
    write(kubeconfig, "apiVersion: v1\nkind: Config\nclusters:\n- name: bench\n  cluster:\n"
                      "    server: http://127.0.0.1:" +
                          std::to_string(server.port) +
                          "\ncontexts:\n- name: bench\n  context:\n    cluster: bench\n"
                          "    user: bench\nusers:\n- name: bench\n  user: {}\n"
                          "current-context: bench\n");
    const bool have_kubectl = access(kubectl.c_str(), X_OK) == 0;

    std::vector<double> kpkg_s, kubectl_s;
    std::size_t kpkg_patch = 0, kpkg_all = 0, kubectl_patch = 0, kubectl_all = 0;
    for (int r = 0; r < runs; ++r) {
        control(server, "POST", "/__test/reset", work);
        auto t0 = bench::Clock::now();
        int st = run({KPKG_BENCH_KPKG, "apply", tree.string(), "--kubeconfig", kubeconfig.string(),
                      "--concurrency", std::to_string(concurrency), "-q"},
                     work / "kpkg.log");
        kpkg_s.push_back(bench::seconds_since(t0));
        if (st != 0) {
            std::fprintf(stderr, "kpkg apply failed (exit %d): %s\n", st,
                         (work / "kpkg.log").c_str());
            return 1;
        }
        const std::string log = control(server, "GET", "/__test/requests", work);
        kpkg_patch = count(log, "PATCH");
        kpkg_all = count(log, "");

        if (!have_kubectl) continue;
        control(server, "POST", "/__test/reset", work);
        fs::remove_all(work / "home");
        fs::create_directories(work / "home");
        t0 = bench::Clock::now();
        st = run({kubectl, "apply", "--server-side", "-f", tree.string(), "--kubeconfig",
                  kubeconfig.string(), "--cache-dir", (work / "home/cache").string()},
                 work / "kubectl.log", {{"HOME", (work / "home").string()}});
        kubectl_s.push_back(bench::seconds_since(t0));
        if (st != 0) {
            std::fprintf(stderr, "kubectl apply failed (exit %d): %s\n", st,
                         (work / "kubectl.log").c_str());
            return 1;
        }
        const std::string klog = control(server, "GET", "/__test/requests", work);
        kubectl_patch = count(klog, "PATCH");
        kubectl_all = count(klog, "");
    }

    std::printf("apply bench: %s, %zu objects (a Namespace, ConfigMaps, Secrets, ServiceAccounts, "
                "Services), test API server on 127.0.0.1, medians of %d runs\n",
                bench::cpu_model().c_str(), n, runs);
    std::printf("  kpkg apply (concurrency %d)      %8.2f s   %zu requests, %zu PATCH\n",
                concurrency, bench::median(kpkg_s), kpkg_all, kpkg_patch);
    if (have_kubectl) {
        std::printf("  kubectl apply --server-side      %8.2f s   %zu requests, %zu PATCH\n",
                    bench::median(kubectl_s), kubectl_all, kubectl_patch);
        std::printf("  kubectl / kpkg                   %8.2f\n",
                    bench::median(kubectl_s) / bench::median(kpkg_s));
    } else {
        std::printf("  (no %s: kubectl not measured)\n", kubectl.c_str());
    }
    fs::remove_all(work);
    return 0;
}
