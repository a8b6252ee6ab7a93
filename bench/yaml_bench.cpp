// YAML parsing throughput: kpkg::io::parse_yaml (events building io::Node trees) against
// yaml-cpp's YAML::LoadAll building YAML::Node trees, the way a plain yaml-cpp user would; and
// the event readers alone (read_yaml_events, one document at a time as the catalog loader reads
// them), with kpkg's fast reader and with libfyaml only.
// Usage: kpkg-bench-yaml [--runs N] [--threads N] [PATH...]
// Each PATH is a YAML file or a directory (every *.yaml/*.yml file below it). Without paths, a
// bundle and a catalog of the corpus in ../shared/corpus are measured, if it is there.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "measure.hpp"

#include "kpkg/io/events.hpp"
#include "kpkg/io/load.hpp"

namespace fs = std::filesystem;

namespace {

struct Input {
    std::string path;
    std::string text;
};

struct Set {
    std::string label;
    std::vector<Input> files;
    std::size_t bytes = 0;
};

bool is_yaml(const fs::path& p) {
    const std::string ext = p.extension().string();
    return ext == ".yaml" || ext == ".yml";
}

void add_file(Set& s, const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    s.files.push_back({p.string(), buf.str()});
    s.bytes += s.files.back().text.size();
}

// Files in a stable order, so that runs compare.
void add_path(Set& s, const fs::path& p) {
    if (fs::is_directory(p)) {
        std::vector<fs::path> found;
        for (const auto& e : fs::recursive_directory_iterator(p))
            if (e.is_regular_file() && is_yaml(e.path())) found.push_back(e.path());
        std::sort(found.begin(), found.end());
        for (const auto& f : found)
            add_file(s, f);
    } else {
        add_file(s, p);
    }
}

// Instructions retired by this thread while it runs f, when the kernel lets us count them.
class InstructionCounter {
public:
    InstructionCounter() {
        perf_event_attr attr{};
        attr.type = PERF_TYPE_HARDWARE;
        attr.size = sizeof attr;
        attr.config = PERF_COUNT_HW_INSTRUCTIONS;
        attr.disabled = 1;
        attr.exclude_kernel = 1;
        attr.exclude_hv = 1;
        fd_ = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
    }
    ~InstructionCounter() {
        if (fd_ >= 0) close(fd_);
    }
    InstructionCounter(const InstructionCounter&) = delete;
    InstructionCounter& operator=(const InstructionCounter&) = delete;

    bool available() const { return fd_ >= 0; }

    template <class F>
    long long count(F&& f) {
        if (fd_ < 0) {
            f();
            return -1;
        }
        ioctl(fd_, PERF_EVENT_IOC_RESET, 0);
        ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0);
        f();
        ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0);
        long long n = 0;
        if (read(fd_, &n, sizeof n) != static_cast<ssize_t>(sizeof n)) return -1;
        return n;
    }

private:
    int fd_ = -1;
};

std::size_t parse_kpkg(const Input& in) {
    auto r = kpkg::io::parse_yaml(in.text, in.path);
    if (!r.ok()) {
        std::fprintf(stderr, "kpkg: %s\n", r.error().str().c_str());
        std::exit(1);
    }
    return r->size();
}

// Counts events and nothing else.
class Count final : public kpkg::io::EventHandler {
public:
    std::size_t n = 0;
    void document_start(int, kpkg::io::Mark) override { ++n; }
    void document_end() override { ++n; }
    void mapping_start(kpkg::io::Mark) override { ++n; }
    void mapping_end() override { ++n; }
    void sequence_start(kpkg::io::Mark) override { ++n; }
    void sequence_end() override { ++n; }
    void key(const kpkg::io::ScalarEvent&) override { ++n; }
    void scalar(const kpkg::io::ScalarEvent&) override { ++n; }
};

// The documents of a file, cut at "---" lines (as the catalog loader cuts them).
std::vector<std::string> documents(const std::string& text) {
    std::vector<std::string> out;
    std::string cur;
    std::size_t p = 0;
    while (p < text.size()) {
        std::size_t nl = text.find('\n', p);
        if (nl == std::string::npos) nl = text.size();
        if (text.compare(p, 3, "---") == 0) {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur.append(text, p, nl - p);
            cur += '\n';
        }
        p = nl + 1;
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

template <bool Fast>
std::size_t events(const Input& in) {
    Count c;
    kpkg::io::YamlEventOptions o;
    o.fast = Fast;
    for (const auto& d : documents(in.text))
        if (!kpkg::io::read_yaml_events(d, in.path, c, {}, o).ok()) std::exit(1);
    return c.n;
}

std::size_t parse_yaml_cpp(const Input& in) {
    try {
        return YAML::LoadAll(in.text).size();
    } catch (const YAML::Exception& e) {
        std::fprintf(stderr, "yaml-cpp: %s: %s\n", in.path.c_str(), e.what());
        std::exit(1);
    }
}

// Parses every file of the set with `threads` threads taking files in turn; wall seconds.
template <class Parse>
double run_once(const Set& s, Parse parse, int threads) {
    const auto t0 = bench::Clock::now();
    if (threads <= 1) {
        for (const auto& f : s.files)
            parse(f);
    } else {
        std::atomic<std::size_t> next{0};
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&] {
                for (std::size_t i; (i = next.fetch_add(1)) < s.files.size();)
                    parse(s.files[i]);
            });
        for (auto& t : pool)
            t.join();
    }
    return bench::seconds_since(t0);
}

template <class Parse>
double median_seconds(const Set& s, Parse parse, int runs, int threads) {
    run_once(s, parse, threads); // warm up caches and allocators
    std::vector<double> t;
    for (int i = 0; i < runs; ++i)
        t.push_back(run_once(s, parse, threads));
    return bench::median(t);
}

void report(const char* what, double seconds, std::size_t bytes, long long instructions) {
    std::printf("  %-34s %10.2f ms %9.1f MB/s", what, seconds * 1e3, bytes / seconds / 1e6);
    if (instructions > 0)
        std::printf(" %8.0f instr/byte", static_cast<double>(instructions) / bytes);
    std::printf("\n");
}

void measure(const Set& s, int runs, int threads) {
    std::size_t docs = 0;
    for (const auto& f : s.files)
        docs += parse_kpkg(f);
    std::printf("%s: %zu files, %zu documents, %.2f MB; median of %d runs\n", s.label.c_str(),
                s.files.size(), docs, s.bytes / 1e6, runs);
    InstructionCounter counter;
    const long long kpkg_instr = counter.count([&] { run_once(s, parse_kpkg, 1); });
    const long long cpp_instr = counter.count([&] { run_once(s, parse_yaml_cpp, 1); });
    const double kpkg = median_seconds(s, parse_kpkg, runs, 1);
    const double cpp = median_seconds(s, parse_yaml_cpp, runs, 1);
    report("kpkg::io::parse_yaml", kpkg, s.bytes, kpkg_instr);
    report("yaml-cpp YAML::LoadAll", cpp, s.bytes, cpp_instr);
    const double fast = median_seconds(s, events<true>, runs, 1);
    const double slow = median_seconds(s, events<false>, runs, 1);
    report("read_yaml_events, fast reader", fast, s.bytes, -1);
    report("read_yaml_events, libfyaml only", slow, s.bytes, -1);
    if (threads > 1) {
        const std::string label = "kpkg::io::parse_yaml, " + std::to_string(threads) + " threads";
        report(label.c_str(), median_seconds(s, parse_kpkg, runs, threads), s.bytes, -1);
    }
    std::printf("  speed-up over yaml-cpp: %.1fx; fast reader over libfyaml (events): %.1fx\n\n",
                cpp / kpkg, slow / fast);
}

} // namespace

int main(int argc, char** argv) {
    int runs = 11;
    int threads = 2;
    std::vector<fs::path> paths;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
            runs = std::max(1, std::atoi(argv[++i]));
        } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = std::max(1, std::atoi(argv[++i]));
        } else if (argv[i][0] == '-') {
            std::fprintf(stderr, "usage: %s [--runs N] [--threads N] [PATH...]\n", argv[0]);
            return 2;
        } else {
            paths.emplace_back(argv[i]);
        }
    }
    std::vector<Set> sets;
    if (paths.empty()) {
        const fs::path corpus =
            fs::path(KPKG_BENCH_SOURCE_ROOT) / ".." / "shared" / "corpus" / "olm";
        const fs::path bundle = corpus / "bundles" / "prometheus.0.22.2" / "manifests";
        const fs::path catalog = corpus / "large" / "community-v4.21";
        if (!fs::is_directory(bundle) || !fs::is_directory(catalog)) {
            std::printf("corpus not found (%s); nothing to measure\n", corpus.string().c_str());
            return 0;
        }
        sets.push_back({"bundle prometheus.0.22.2/manifests", {}, 0});
        add_path(sets.back(), bundle);
        sets.push_back({"catalog community-v4.21", {}, 0});
        add_path(sets.back(), catalog);
    } else {
        sets.push_back({"given files", {}, 0});
        for (const auto& p : paths)
            add_path(sets.back(), p);
    }
    for (const auto& s : sets) {
        if (s.files.empty()) {
            std::printf("%s: no YAML files\n", s.label.c_str());
            continue;
        }
        measure(s, runs, threads);
    }
    return 0;
}
