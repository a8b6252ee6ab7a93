// The libsolv adapter (internal to src/resolve): a pool of solvables described with plain
// strings, jobs over them, and the outcome of a solve. No libsolv type crosses this header; the
// implementation (solv.cpp) is the only file that includes <solv/...>.
//
// libsolv is not linked: solv.cpp resolves the functions it calls with dlsym on first use
// (kpkg::libsolv(), kpkg::libsolvext() for testcase_write), so commands that do not resolve never
// map it. RAII types own the Pool, Solver, Queue and Transaction.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kpkg/core/result.hpp"

namespace kpkg::resolve::solv {

// One solvable: a package name (libsolv forbids two installed solvables of the same name, which
// is OLM's "one bundle per package"), a version string shown in testcases, and capabilities.
// Conflicting with a capability the solvable itself provides is ignored by libsolv, so
// "provides X + conflicts X" on every provider of X makes X unique.
// A requirement with version relations: `name op evr`, or parts joined. `with` (libsolv's
// REL_WITH) is met by a solvable that meets every part, so (b >= 1 with b <= 2) asks for one b
// in [1, 2]; libsolv takes it without complex-dependency support, unlike REL_AND (which, without
// it, libsolv treats as the union of its parts' providers). `any` is REL_OR. Versions compare as
// the pool's version scheme (rpm: "1.2.3~rc" sorts just below "1.2.3").
struct Dep {
    enum class Op : std::uint8_t { name, eq, lt, le, gt, ge, with, any };
    Op op = Op::name;
    std::string name;       // name, eq .. ge
    std::string evr;        // eq .. ge
    std::vector<Dep> parts; // with, any: two or more
};

struct SolvableSpec {
    std::string repo; // the catalog it comes from, for testcases ("installed" for installed CSVs)
    std::string name;
    std::string evr;
    std::vector<std::string> provides; // besides name = evr, which is always provided
    std::vector<std::string> conflicts;
    std::vector<std::string> requires_;
    std::vector<Dep> relations; // more requirements, after requires_
};

struct Job {
    enum class Kind : std::uint8_t {
        install,        // install solvables[0]
        install_one_of, // install at least one of solvables (an empty list cannot be satisfied)
        lock,           // keep solvables[0] uninstalled
    };
    Kind kind = Kind::install;
    std::vector<int> solvables; // indexes returned by Engine::add
};

// One rule of an unsolvable problem, in libsolv's terms; the caller words it.
struct Rule {
    enum class Type : std::uint8_t {
        requires_,        // source requires dep (providers exist but cannot be installed)
        nothing_provides, // source requires dep and nothing provides it
        conflicts,        // source conflicts with dep, provided by target
        same_name,        // source and target have the same name
        job,              // job number `job` of the solve
        other,
    };
    Type type = Type::other;
    int source = -1; // solvable index, -1 when none
    int target = -1;
    std::string dep;
    int job = -1;
    // requires_, nothing_provides: which requirement of the source it is (an index into its
    // requires_ followed by its relations), -1 when unknown.
    int requirement = -1;
};

struct Outcome {
    bool satisfiable = false;
    std::vector<int> installed; // sorted solvable indexes (when satisfiable)
    std::vector<Rule> rules;    // the rules of the problems (when not, and asked for)
};

class Engine {
public:
    // Loads libsolv (exit 1 with the Debian package to install when it cannot be loaded).
    static Result<Engine> create();
    ~Engine();
    Engine(Engine&&) noexcept;
    Engine& operator=(Engine&&) noexcept;
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Adds a solvable; returns its index (0, 1, 2, ... in call order). Only before finalize().
    int add(const SolvableSpec& s);
    // Builds libsolv's provider index; solve() needs it.
    void finalize();

    // Solves the jobs. With `explain`, an unsolvable outcome carries the rules of its problems.
    Outcome solve(const std::vector<Job>& jobs, bool explain = false);

    // Solves the jobs and writes the libsolv testcase (testcase.t and one file per repo) into
    // `dir`, replayable with `testsolv dir/testcase.t`. Each file is written atomically.
    Result<void> write_testcase(const std::vector<Job>& jobs, const std::filesystem::path& dir);

private:
    struct Impl;
    explicit Engine(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace kpkg::resolve::solv
