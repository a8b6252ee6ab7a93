// Candidates with OLM's semantics (internal to src/resolve): which bundles are offered to a
// subscription or a dependency, in which order, and why others are not.
//
// Index holds what depends only on the catalogs (channel orders, who provides which API, bundle
// properties, the bundles satisfying a dependency) and is shared by every resolution round.
// Universe adds the installed CSVs of one round and numbers the variables: one per bundle per
// channel per catalog (as OLM has one per channel entry), plus one per installed CSV.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kpkg/core/result.hpp"
#include "kpkg/core/semver.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/model/constraint.hpp"
#include "kpkg/model/gvk.hpp"
#include "kpkg/resolve/resolve.hpp"

namespace kpkg::resolve::detail {

using model::Constraint;
using model::constraint_properties;
using model::describe;
using model::GVK;
using model::parse_constraint;
using model::PropertyValue;

inline constexpr std::uint32_t none = 0xffffffffu;
using VarId = std::uint32_t;

enum class DepKind : std::uint8_t { gvk, package, label, constraint };

// A requirement of a bundle: olm.gvk.required, olm.package.required, olm.label.required or
// olm.constraint.
struct Dep {
    DepKind kind = DepKind::gvk;
    GVK gvk;
    std::string package;
    std::string range_text;
    semver::Range range;
    std::string label;
    std::shared_ptr<const Constraint> constraint;
    std::string key; // identity: equal keys, equal requirement
    // "API g/v Kind", "package P in range R", "label L", "constraint ..."
    std::string words() const;
};

// What resolution needs of one bundle of one catalog (shared by its channels).
struct BundleInfo {
    std::uint32_t catalog = none; // none: an installed CSV not found in any catalog
    std::uint32_t bundle = none;
    std::string package, name, version_text, image;
    std::optional<semver::Version> version; // strict parse of the olm.package version
    std::vector<GVK> provides;
    std::vector<std::string> labels;
    std::vector<std::uint32_t> deps; // indexes into Index::deps()
    bool legacy_deprecated = false;  // olm.deprecated property
    std::string deprecated;          // olm.deprecations message for the bundle itself
    bool deps_ok = true;             // false: `deps_error` says which property is malformed
    Error deps_error;
    std::vector<PropertyValue> properties; // built on first use by constraints
    bool properties_built = false;
};

// The order OLM offers the entries of a channel in: from the head along `replaces`, leaving out
// entries that some entry skips; entries off that chain are never offered.
struct ChannelOrder {
    bool ok = true;
    Error error;                        // several heads, no head, a cycle (when !ok)
    std::vector<std::uint32_t> bundles; // bundle indexes, offered order
    std::vector<std::uint32_t> entries; // their entries (indexes into Catalog::entries)
    std::unordered_map<model::Str, model::Str> skipped_by; // entry name -> an entry skipping it
    std::string head;                                      // the head's name (when ok)
};

// Catalog-derived caches shared by rounds.
class Index {
public:
    Index(const std::vector<CatalogSource>& catalogs, bool exclude_deprecated);

    const std::vector<CatalogSource>& catalogs() const { return catalogs_; }
    const model::Catalog& cat(std::uint32_t c) const { return *catalogs_[c].catalog; }
    // Catalog indexes by priority (highest first), then name.
    const std::vector<std::uint32_t>& order() const { return order_; }
    bool exclude_deprecated() const { return exclude_deprecated_; }

    const ChannelOrder& channel_order(std::uint32_t c, std::uint32_t channel);
    // The channels (indexes) of catalog c listing bundle b.
    const std::vector<std::uint32_t>& channels_of(std::uint32_t c, std::uint32_t b);
    // The default channel name of a package in catalog c (0 when none).
    model::Str default_channel(std::uint32_t c, model::Str package) const;

    BundleInfo& info(std::uint32_t c, std::uint32_t b);
    // An installed CSV found in no catalog: package and version only.
    std::uint32_t add_unknown(const std::string& package, const std::string& name,
                              const std::string& version);
    BundleInfo& info_at(std::uint32_t id) { return infos_[id]; }
    std::uint32_t info_id(std::uint32_t c, std::uint32_t b);

    const Dep& dep(std::uint32_t d) const { return deps_[d]; }
    // Interns a requirement.
    std::uint32_t intern(Dep d);
    bool satisfies(const Dep& d, BundleInfo& b);
    // Bundles of catalog c satisfying dependency d (any channel, offered or not), sorted.
    const std::vector<std::uint32_t>& satisfying(std::uint32_t c, std::uint32_t d);

    // Why a bundle of a channel is not offered through it ("" when it is offered): "skipped by
    // X in channel C", "not on the replaces chain of channel C (head H)".
    std::string not_offered(std::uint32_t c, std::uint32_t channel, std::uint32_t b);
    // olm.deprecations of catalog c: for a package, a channel of it, a bundle of it ("" none).
    std::string deprecation(std::uint32_t c, model::Str package, model::Str schema,
                            model::Str name) const;

private:
    void build_gvk_index(std::uint32_t c);
    std::vector<CatalogSource> catalogs_;
    std::vector<std::uint32_t> order_;
    bool exclude_deprecated_ = false;
    std::unordered_map<std::uint64_t, ChannelOrder> orders_;
    // Per catalog: bundle -> the channels listing it, filled a package at a time.
    std::vector<std::unordered_map<std::uint32_t, std::vector<std::uint32_t>>> channels_of_;
    std::vector<std::unordered_set<model::Str>> channels_of_packages_;
    // Per catalog, keyed by string ids: (group, version, kind) -> providers, label -> bundles.
    struct IdsHash {
        std::size_t operator()(const std::array<model::Str, 3>& k) const {
            return (std::size_t{k[0]} * 0x9e3779b1u) ^ (std::size_t{k[1]} << 21) ^ k[2];
        }
    };
    std::vector<std::unordered_map<std::array<model::Str, 3>, std::vector<std::uint32_t>, IdsHash>>
        gvk_index_;
    std::vector<std::unordered_map<model::Str, std::vector<std::uint32_t>>> label_index_;
    std::vector<bool> gvk_index_built_;
    // Deques: references handed out stay valid while more are added.
    std::deque<BundleInfo> infos_;
    std::unordered_map<std::uint64_t, std::uint32_t> info_ids_;
    std::deque<Dep> deps_;
    std::unordered_map<std::string, std::uint32_t> dep_ids_;
    model::RuleCache rules_; // CEL rules by text: one shared by several constraints compiles once
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> satisfying_;
};

// One variable: a bundle offered through one channel of one catalog, or an installed CSV.
struct Var {
    std::uint32_t info = none;        // into Index infos
    std::uint32_t catalog = none;     // none: installed
    std::uint32_t channel = none;     // channel index in its catalog
    std::uint32_t installed = none;   // index into Round installed
    bool prohibited = false;          // olm.deprecated: never chosen
    std::string excluded;             // why --exclude-deprecated leaves it out ("" if it does not)
    std::vector<std::uint32_t> lists; // per dependency of the bundle: its candidate list
    bool expanded = false;
    bool broken = false; // its dependencies could not be computed: `error` says why
    Error error;
    bool usable() const { return !prohibited && excluded.empty(); }
};

struct CandidateList {
    std::uint32_t dep = none;
    std::uint32_t preferred = none; // the dependent's catalog (none: an installed CSV)
    std::vector<VarId> vars;        // preference order, unusable ones included
};

// An installed CSV as a round sees it.
struct InstalledState {
    Installed csv;
    bool subscribed = false; // has a subscription: may be replaced (upgrade)
    std::uint32_t info = none;
};

// The candidates of a subscription and, when asked, why other entries were not offered.
struct Offer {
    std::vector<VarId> vars; // preference order; the installed CSV (if any) last
    std::vector<std::string> left_out;
};

class Universe {
public:
    Universe(Index& index, std::vector<InstalledState> installed);

    Index& index() { return index_; }
    const std::vector<InstalledState>& installed() const { return installed_; }
    // The variable of installed CSV i.
    VarId installed_var(std::uint32_t i) const { return installed_vars_[i]; }

    // Validates a subscription against the catalogs (unknown catalog / package / channel /
    // starting CSV: exit 3 with the nearest names).
    Result<void> check(const Subscription& s) const;
    // The index of the catalog of that name (none when no catalog has it).
    std::uint32_t catalog_named(const std::string& name) const;
    // OLM's candidates for a subscription; `current` is the installed CSV it upgrades (or none).
    Result<Offer> offer(const Subscription& s, std::uint32_t current, bool with_notes);

    // Computes the candidate lists of v's dependencies (creating variables).
    Result<void> expand(VarId v);
    // Every variable reachable from `roots` through candidate lists (expanding as it goes),
    // taking at most the first `limit` usable candidates of each list.
    Result<void> close(const std::vector<VarId>& roots, std::vector<VarId>& out,
                       std::unordered_set<VarId>& seen,
                       std::size_t limit = static_cast<std::size_t>(-1));

    // The variable of bundle b offered through channel `channel` of catalog c.
    VarId var_at(std::uint32_t c, std::uint32_t channel, std::uint32_t b) {
        return var_of(c, channel, b);
    }

    std::size_t size() const { return vars_.size(); }
    const Var& var(VarId v) const { return vars_[v]; }
    const BundleInfo& info(VarId v) { return index_.info_at(vars_[v].info); }
    const CandidateList& list(std::uint32_t l) const { return lists_[l]; }
    std::size_t lists() const { return lists_.size(); }

    // Words for messages.
    std::string catalog_name(VarId v) const;
    std::string channel_name(VarId v) const;
    // "bar.v0.2.0 (bar 0.2.0, channel alpha, catalog index)"; installed: "(installed)".
    std::string label(VarId v);
    // Why a dependency has no usable candidate: which bundles would satisfy it and why each is
    // not offered, or that none exists (with the versions there are).
    std::vector<std::string> near_misses(std::uint32_t list);

private:
    VarId var_of(std::uint32_t c, std::uint32_t channel, std::uint32_t bundle);
    Result<std::uint32_t> candidates(std::uint32_t preferred, std::uint32_t dep);
    std::vector<std::uint32_t> catalog_order(std::uint32_t preferred) const;

    Index& index_;
    std::vector<InstalledState> installed_;
    std::vector<VarId> installed_vars_;
    std::deque<Var> vars_; // references stay valid while variables are added
    // Per catalog: (channel, bundle) -> variable.
    std::vector<std::unordered_map<std::uint64_t, VarId>> var_ids_;
    std::vector<CandidateList> lists_;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> list_ids_;
};

// Messages shared by the resolver files.
// The name of `known` closest to `name` by edit distance ("" when there is none).
std::string nearest(const std::string& name, const std::vector<std::string>& known);
Error unknown_name(const std::string& what, const std::string& name, std::vector<std::string> known,
                   const std::string& where);

} // namespace kpkg::resolve::detail
