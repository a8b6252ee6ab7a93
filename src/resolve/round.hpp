// One resolution round (internal to src/resolve): the variables reachable from the request,
// their encoding for libsolv, OLM's choice procedure, and the explanation when there is no
// solution.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kpkg/resolve/resolve.hpp"
#include "solv.hpp"
#include "universe.hpp"

namespace kpkg::resolve::detail {

// A subscription of a round: the request (or the implicit one of an installed CSV being
// upgraded) and the installed CSV it may replace.
struct SubState {
    Subscription sub;
    std::uint32_t current = none; // index into the round's installed CSVs
    std::string reason;           // given to the bundle chosen for it
};

// The libsolv encoding of a round.
class Encoding {
public:
    Encoding(Universe& u, solv::Engine& e) : u_(u), engine_(e) {}

    // Adds a solvable for every usable variable of `vars` (in a sorted order), then finalizes.
    void build(std::vector<VarId> vars);

    bool has(VarId v) const { return solvable_.count(v) != 0; }
    int solvable(VarId v) const { return solvable_.at(v); }
    VarId var(int s) const { return vars_[static_cast<std::size_t>(s)]; }
    // The usable candidates with a solvable, in order.
    std::vector<VarId> usable(const std::vector<VarId>& vars) const;
    // True when v can never be installed: one of its requirements has no candidate, or only
    // candidates that can never be installed.
    bool dead(VarId v) const { return dead_.count(v) != 0; }

    solv::Job install(VarId v) const { return {solv::Job::Kind::install, {solvable(v)}}; }
    solv::Job lock(VarId v) const { return {solv::Job::Kind::lock, {solvable(v)}}; }
    solv::Job one_of(const std::vector<VarId>& vars) const;

    // libsolv's rules of a problem in domain words, most telling first.
    std::vector<std::string> words(const std::vector<solv::Rule>& rules,
                                   const std::vector<std::string>& job_words);

    Universe& universe() { return u_; }
    solv::Engine& engine() { return engine_; }

private:
    Universe& u_;
    solv::Engine& engine_;
    std::unordered_map<VarId, int> solvable_;
    std::unordered_set<VarId> dead_;
    std::vector<VarId> vars_;
    std::map<std::string, GVK> gvk_names_;
    std::map<std::string, std::uint32_t> list_names_;
};

// What the explanation needs to know about the round.
struct ExplainInput {
    std::vector<SubState>* subs = nullptr;
    std::vector<std::vector<VarId>>* offers = nullptr;
    std::vector<VarId> mandatory; // installed CSVs without a subscription
};

// The installed CSVs looked up in the catalogs (sorted by package); warnings for those no
// catalog has. Errors: an installed CSV naming a catalog that is not given.
Result<std::vector<InstalledState>> installed_states(Index& index,
                                                     const std::vector<Installed>& installed,
                                                     std::vector<std::string>& warnings);

// Why the round has no solution, as a tree in domain words.
std::vector<Problem> explain(Encoding& enc, ExplainInput& in);

} // namespace kpkg::resolve::detail
