// The libsolv adapter. libsolv is loaded with dlopen (kpkg::libsolv()), so every libsolv function
// is called through a pointer resolved once. The header's inline helpers are not used when they
// call into the library (queue_push calls queue_alloc_one, pool_solvid2str calls
// pool_solvable2str, pool_whatprovides calls pool_addrelproviders): their few lines are done here
// through the pointers. Inline helpers that only read the Pool struct (pool_id2solvable) are fine.
#include "solv.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <system_error>
#include <type_traits>

#include <solv/knownid.h>
#include <solv/pool.h>
#include <solv/poolid.h>
#include <solv/problems.h>
#include <solv/queue.h>
#include <solv/repo.h>
#include <solv/rules.h>
#include <solv/solver.h>
#include <solv/testcase.h>
#include <solv/transaction.h>

#include "kpkg/core/dynlib.hpp"

namespace kpkg::resolve::solv {

namespace {

// Every libsolv function kpkg calls.
#define KPKG_SOLV_FUNCTIONS(X)                                                                     \
    X(pool_create)                                                                                 \
    X(pool_free)                                                                                   \
    X(pool_setdisttype)                                                                            \
    X(pool_str2id)                                                                                 \
    X(pool_rel2id)                                                                                 \
    X(pool_id2str)                                                                                 \
    X(pool_dep2str)                                                                                \
    X(pool_createwhatprovides)                                                                     \
    X(pool_queuetowhatprovides)                                                                    \
    X(repo_create)                                                                                 \
    X(repo_add_solvable)                                                                           \
    X(repo_addid_dep)                                                                              \
    X(repo_internalize)                                                                            \
    X(solver_create)                                                                               \
    X(solver_free)                                                                                 \
    X(solver_solve)                                                                                \
    X(solver_get_decisionqueue)                                                                    \
    X(solver_problem_count)                                                                        \
    X(solver_findallproblemrules)                                                                  \
    X(solver_ruleinfo)                                                                             \
    X(solver_rule2jobidx)                                                                          \
    X(solver_create_transaction)                                                                   \
    X(transaction_free)                                                                            \
    X(queue_init)                                                                                  \
    X(queue_free)                                                                                  \
    X(queue_alloc_one)

struct Api {
#define KPKG_DECLARE(f) decltype(&::f) f = nullptr;
    KPKG_SOLV_FUNCTIONS(KPKG_DECLARE)
#undef KPKG_DECLARE
};

const Result<Api>& api() {
    static const Result<Api> loaded = []() -> Result<Api> {
        Api a;
#define KPKG_RESOLVE(f)                                                                            \
    {                                                                                              \
        auto p = kpkg::libsolv().function<std::remove_pointer_t<decltype(&::f)>>(#f);              \
        if (!p) return fail(std::move(p).error());                                                 \
        a.f = *p;                                                                                  \
    }
        KPKG_SOLV_FUNCTIONS(KPKG_RESOLVE)
#undef KPKG_RESOLVE
        return a;
    }();
    return loaded;
}

// testcase_write lives in libsolvext; loaded only for --debug-testcase.
Result<decltype(&::testcase_write)> testcase_writer() {
    auto p = kpkg::libsolvext().function<std::remove_pointer_t<decltype(&::testcase_write)>>(
        "testcase_write");
    if (!p) return fail(std::move(p).error());
    return *p;
}

// --- RAII -------------------------------------------------------------------------------------

class SolvQueue {
public:
    explicit SolvQueue(const Api& a) : a_(a) { a_.queue_init(&q_); }
    ~SolvQueue() { a_.queue_free(&q_); }
    SolvQueue(const SolvQueue&) = delete;
    SolvQueue& operator=(const SolvQueue&) = delete;

    // What the inline queue_push does, through the loaded queue_alloc_one.
    void push(Id id) {
        if (q_.left == 0) a_.queue_alloc_one(&q_);
        q_.elements[q_.count++] = id;
        q_.left--;
    }
    Queue* get() { return &q_; }
    int size() const { return q_.count; }
    Id operator[](int i) const { return q_.elements[i]; }

private:
    const Api& a_;
    Queue q_;
};

// Frees a libsolv object through the loaded function `Free` (a member of Api).
template <auto Free>
struct Freer {
    const Api* a;
    template <class T>
    void operator()(T* p) const {
        if (p != nullptr) (a->*Free)(p);
    }
};
using PoolPtr = std::unique_ptr<Pool, Freer<&Api::pool_free>>;
using SolverPtr = std::unique_ptr<Solver, Freer<&Api::solver_free>>;
using TransactionPtr = std::unique_ptr<Transaction, Freer<&Api::transaction_free>>;

} // namespace

struct Engine::Impl {
    const Api* a = nullptr;
    PoolPtr pool;
    std::map<std::string, Repo*> repos;
    std::vector<Id> ids;                    // index -> solvable id
    std::vector<int> index_of;              // solvable id -> index (-1: not ours)
    std::vector<std::vector<Id>> requires_; // index -> its requirements, as given
    std::map<std::vector<int>, Id> one_of;  // candidate lists already turned into libsolv ids
    Id nothing = 0; // a capability no solvable provides: what an empty one-of asks for

    Id str(const std::string& s) { return a->pool_str2id(pool.get(), s.c_str(), 1); }

    Id dep(const Dep& d) {
        Pool* p = pool.get();
        switch (d.op) {
        case Dep::Op::name:
            return str(d.name);
        case Dep::Op::eq:
            return a->pool_rel2id(p, str(d.name), str(d.evr), REL_EQ, 1);
        case Dep::Op::lt:
            return a->pool_rel2id(p, str(d.name), str(d.evr), REL_LT, 1);
        case Dep::Op::le:
            return a->pool_rel2id(p, str(d.name), str(d.evr), REL_LT | REL_EQ, 1);
        case Dep::Op::gt:
            return a->pool_rel2id(p, str(d.name), str(d.evr), REL_GT, 1);
        case Dep::Op::ge:
            return a->pool_rel2id(p, str(d.name), str(d.evr), REL_GT | REL_EQ, 1);
        case Dep::Op::with:
        case Dep::Op::any: {
            if (d.parts.empty()) return str("kpkg-no-candidate");
            Id acc = dep(d.parts[0]);
            for (std::size_t i = 1; i < d.parts.size(); ++i)
                acc = a->pool_rel2id(p, acc, dep(d.parts[i]),
                                     d.op == Dep::Op::with ? REL_WITH : REL_OR, 1);
            return acc;
        }
        }
        return 0;
    }

    Repo* repo(const std::string& name) {
        auto it = repos.find(name);
        if (it != repos.end()) return it->second;
        Repo* r = a->repo_create(pool.get(), name.c_str());
        repos.emplace(name, r);
        return r;
    }

    int index(Id p) const {
        if (p < 0 || static_cast<std::size_t>(p) >= index_of.size()) return -1;
        return index_of[static_cast<std::size_t>(p)];
    }

    Id one_of_id(const std::vector<int>& list) {
        auto it = one_of.find(list);
        if (it != one_of.end()) return it->second;
        SolvQueue q(*a);
        for (int i : list)
            q.push(ids[static_cast<std::size_t>(i)]);
        Id w = a->pool_queuetowhatprovides(pool.get(), q.get());
        one_of.emplace(list, w);
        return w;
    }

    void fill_jobs(const std::vector<Job>& jobs, SolvQueue& q) {
        for (const Job& j : jobs) {
            switch (j.kind) {
            case Job::Kind::install:
                q.push(SOLVER_INSTALL | SOLVER_SOLVABLE);
                q.push(ids[static_cast<std::size_t>(j.solvables.at(0))]);
                break;
            case Job::Kind::install_one_of:
                if (j.solvables.empty()) {
                    // libsolv takes "one of nothing" for nothing to do: ask for a capability
                    // nothing provides instead, which fails as it should (and replays so).
                    q.push(SOLVER_INSTALL | SOLVER_SOLVABLE_PROVIDES);
                    q.push(nothing);
                    break;
                }
                q.push(SOLVER_INSTALL | SOLVER_SOLVABLE_ONE_OF);
                q.push(one_of_id(j.solvables));
                break;
            case Job::Kind::lock:
                q.push(SOLVER_LOCK | SOLVER_SOLVABLE);
                q.push(ids[static_cast<std::size_t>(j.solvables.at(0))]);
                break;
            }
        }
    }

    void collect_rules(Solver* s, Outcome& out) {
        unsigned count = a->solver_problem_count(s);
        for (unsigned pr = 1; pr <= count; ++pr) {
            SolvQueue rq(*a);
            a->solver_findallproblemrules(s, static_cast<Id>(pr), rq.get());
            for (int i = 0; i < rq.size(); ++i) {
                Id rid = rq[i];
                Id source = 0, target = 0, dep = 0;
                SolverRuleinfo type = a->solver_ruleinfo(s, rid, &source, &target, &dep);
                Rule r;
                switch (type) {
                case SOLVER_RULE_PKG_REQUIRES:
                    r.type = Rule::Type::requires_;
                    break;
                case SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP:
                    r.type = Rule::Type::nothing_provides;
                    break;
                case SOLVER_RULE_PKG_CONFLICTS:
                    r.type = Rule::Type::conflicts;
                    break;
                case SOLVER_RULE_PKG_SAME_NAME:
                    r.type = Rule::Type::same_name;
                    break;
                default:
                    r.type = (type & SOLVER_RULE_TYPEMASK) == SOLVER_RULE_JOB ? Rule::Type::job
                                                                              : Rule::Type::other;
                    break;
                }
                r.source = index(source);
                r.target = index(target);
                if (dep != 0) r.dep = a->pool_dep2str(pool.get(), dep);
                if ((r.type == Rule::Type::requires_ || r.type == Rule::Type::nothing_provides) &&
                    r.source >= 0) {
                    const auto& reqs = requires_[static_cast<std::size_t>(r.source)];
                    auto it = std::find(reqs.begin(), reqs.end(), dep);
                    if (it != reqs.end()) r.requirement = static_cast<int>(it - reqs.begin());
                }
                if (r.type == Rule::Type::job) {
                    int idx = a->solver_rule2jobidx(s, rid);
                    r.job = idx >= 0 ? idx / 2 : -1;
                }
                out.rules.push_back(std::move(r));
            }
        }
    }
};

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

Result<Engine> Engine::create() {
    const Result<Api>& a = api();
    if (!a) return fail(a.error());
    auto impl = std::make_unique<Impl>();
    impl->a = &a.value();
    impl->pool = PoolPtr(impl->a->pool_create(), {impl->a});
    if (!impl->pool) return fail(Error::io("libsolv: cannot create a pool"));
    // Versions are only shown (kpkg orders candidates itself); rpm's comparison reads them best.
    if (impl->a->pool_setdisttype(impl->pool.get(), DISTTYPE_RPM) < 0 &&
        impl->a->pool_setdisttype(impl->pool.get(), DISTTYPE_DEB) < 0)
        return fail(Error::io("libsolv: neither the rpm nor the deb version scheme is available"));
    return Engine(std::move(impl));
}

int Engine::add(const SolvableSpec& s) {
    Impl& m = *impl_;
    const Api& a = *m.a;
    Repo* repo = m.repo(s.repo.empty() ? std::string("catalog") : s.repo);
    Id p = a.repo_add_solvable(repo);
    Id name = m.str(s.name);
    Id evr = m.str(s.evr.empty() ? std::string("0") : s.evr);
    Id self = a.pool_rel2id(m.pool.get(), name, evr, REL_EQ, 1);
    std::vector<Id> provides, conflicts, requires_;
    for (const auto& x : s.provides)
        provides.push_back(m.str(x));
    for (const auto& x : s.conflicts)
        conflicts.push_back(m.str(x));
    for (const auto& x : s.requires_)
        requires_.push_back(m.str(x));
    for (const auto& x : s.relations)
        requires_.push_back(m.dep(x));
    // The solvable array may move while ids are interned: take the pointer afterwards.
    Solvable* sv = pool_id2solvable(m.pool.get(), p);
    sv->name = name;
    sv->evr = evr;
    sv->arch = ARCH_NOARCH;
    sv->dep_provides = a.repo_addid_dep(repo, sv->dep_provides, self, 0);
    for (Id x : provides)
        sv->dep_provides = a.repo_addid_dep(repo, sv->dep_provides, x, 0);
    for (Id x : conflicts)
        sv->dep_conflicts = a.repo_addid_dep(repo, sv->dep_conflicts, x, 0);
    for (Id x : requires_)
        sv->dep_requires = a.repo_addid_dep(repo, sv->dep_requires, x, 0);
    int index = static_cast<int>(m.ids.size());
    m.ids.push_back(p);
    m.requires_.push_back(requires_);
    if (m.index_of.size() <= static_cast<std::size_t>(p))
        m.index_of.resize(static_cast<std::size_t>(p) + 1, -1);
    m.index_of[static_cast<std::size_t>(p)] = index;
    return index;
}

void Engine::finalize() {
    Impl& m = *impl_;
    for (auto& [name, repo] : m.repos)
        m.a->repo_internalize(repo);
    m.nothing = m.str("kpkg-no-candidate");
    m.a->pool_createwhatprovides(m.pool.get());
}

Outcome Engine::solve(const std::vector<Job>& jobs, bool explain) {
    Impl& m = *impl_;
    const Api& a = *m.a;
    Outcome out;
    SolvQueue q(a);
    m.fill_jobs(jobs, q);
    SolverPtr s(a.solver_create(m.pool.get()), {m.a});
    int problems = a.solver_solve(s.get(), q.get());
    if (problems == 0) {
        out.satisfiable = true;
        TransactionPtr t(a.solver_create_transaction(s.get()), {m.a});
        for (int i = 0; i < t->steps.count; ++i) {
            int idx = m.index(t->steps.elements[i]);
            if (idx >= 0) out.installed.push_back(idx);
        }
        std::sort(out.installed.begin(), out.installed.end());
        return out;
    }
    if (explain) m.collect_rules(s.get(), out);
    return out;
}

Result<void> Engine::write_testcase(const std::vector<Job>& jobs,
                                    const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    Impl& m = *impl_;
    const Api& a = *m.a;
    auto writer = testcase_writer();
    if (!writer) return fail(writer.error());
    SolvQueue q(a);
    m.fill_jobs(jobs, q);
    SolverPtr s(a.solver_create(m.pool.get()), {m.a});
    a.solver_solve(s.get(), q.get());

    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return fail(Error::io("cannot create " + dir.string() + ": " + ec.message()));
    // libsolv writes the files itself: into a fresh directory beside the target, then each file
    // is renamed into place, so a reader never sees a half-written testcase file.
    fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
    std::string tmpl = (parent / ".kpkg-testcase-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
        return fail(Error::io("cannot create a temporary directory in " + parent.string()));
    fs::path tmp(buf.data());
    int ok = (*writer)(s.get(), tmp.c_str(), TESTCASE_RESULT_TRANSACTION | TESTCASE_RESULT_PROBLEMS,
                       "testcase.t", nullptr);
    Result<void> result;
    if (ok == 0) {
        result = fail(Error::io("libsolv could not write the testcase into " + tmp.string()));
    } else {
        for (const auto& e : fs::directory_iterator(tmp, ec)) {
            fs::rename(e.path(), dir / e.path().filename(), ec);
            if (ec) {
                result = fail(Error::io("cannot move " + e.path().string() + " to " + dir.string() +
                                        ": " + ec.message()));
                break;
            }
        }
    }
    fs::remove_all(tmp, ec);
    return result;
}

} // namespace kpkg::resolve::solv
