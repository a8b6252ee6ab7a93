// Helpers shared by the test programs: fixture paths, the optional corpus, temp dirs, running kpkg.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kpkg::test {

namespace fs = std::filesystem;

// The project's source tree (KPKG_SOURCE_ROOT, set by meson test).
fs::path source_root();
// A file or directory under testdata/.
fs::path testdata(const std::string& rel);
// ../shared/corpus beside the project, or nothing when this checkout has none.
std::optional<fs::path> corpus_dir();

// Why a test skips. CI (.ci/run) counts the skipped tests by these reasons, so every test that
// skips says one of them, from here:
// - missing_tool(NAME): a program the test needs is not installed ("missing tool: NAME", then
//   `detail` in parentheses); counted by NAME, so each program is named the same way everywhere.
// - corpus_absent(): ../shared/corpus is not beside this checkout.
// - running_as_root(detail): the test only means something where file permissions apply.
// Anything else a test skips for is counted as "other".
std::string missing_tool(const std::string& name, const std::string& detail = {});
std::string corpus_absent();
std::string running_as_root(const std::string& detail = {});

// The real kubectl 1.32 that the kubectl tests run (Google Cloud SDK's): missing_tool(kubectl_1_32)
// names it as CI counts it.
inline constexpr const char* kubectl_1_32_path = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32";
inline constexpr const char* kubectl_1_32 = "kubectl 1.32";

// Skips the current test with a reason when the corpus is absent; otherwise yields its path.
#define KPKG_REQUIRE_CORPUS(var)                                                                   \
    auto var##_opt_ = ::kpkg::test::corpus_dir();                                                  \
    if (!var##_opt_) GTEST_SKIP() << ::kpkg::test::corpus_absent();                                \
    const ::std::filesystem::path var = *var##_opt_

// A fresh directory removed with everything in it when the object goes away.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return path_; }
    fs::path operator/(const std::string& rel) const { return path_ / rel; }
    // Writes `content` to rel (creating parent directories) and returns the full path.
    fs::path write(const std::string& rel, const std::string& content) const;

private:
    fs::path path_;
};

std::string read_file(const fs::path& p);

// Whether `part` occurs in `s` (for messages checked by a phrase rather than whole).
inline bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

struct RunResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

// "exit N", then stdout and stderr: what a failed expectation on a run shows.
std::string describe(const RunResult& r);

// Runs the built kpkg (KPKG_BIN) with args, stdin from `input` (empty: /dev/null), no TTY;
// `extra_env` ("NAME=value") is added to the environment, replacing inherited variables.
RunResult run_kpkg(const std::vector<std::string>& args, const std::string& input = {},
                   const std::vector<std::string>& extra_env = {});

// The environment for a child: this process's, without the variables named in `unset` and those
// `extra_env` ("NAME=value") sets, then `extra_env`.
std::vector<std::string> child_environment(const std::vector<std::string>& extra_env,
                                           const std::vector<std::string>& unset = {});

// Runs argv[0] (a path) with argv, child_environment(extra_env, unset), stdin from `input`
// (empty: closed); with a timeout (in its own process group), kills it and what it started
// (SIGKILL) after `timeout_s` seconds, then exit_code is 137 and timed_out is set; 0 = no limit.
struct ProgramResult : RunResult {
    bool timed_out = false;
};
ProgramResult run_program(const std::vector<std::string>& argv,
                          const std::vector<std::string>& extra_env = {},
                          const std::string& input = {}, int timeout_s = 60,
                          const std::vector<std::string>& unset = {});

} // namespace kpkg::test
