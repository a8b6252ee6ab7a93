// Package Operator dependency resolution (direct, newest acceptable version per package) and the
// interval ranges of pkg.package-operator.run/semver it needs.
#include "kpkg/pko/deps.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "kpkg/core/semver.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/resolve/versions.hpp"

namespace kpkg::pko {

namespace {

using Triple = VersionRange::Triple;
using Interval = VersionRange::Interval;
constexpr std::uint64_t maxu = std::numeric_limits<std::uint64_t>::max();
constexpr Triple max_triple{maxu, maxu, maxu};

std::optional<Triple> succ(Triple t) {
    if (t.patch != maxu) return Triple{t.major, t.minor, t.patch + 1};
    if (t.minor != maxu) return Triple{t.major, t.minor + 1, 0};
    if (t.major != maxu) return Triple{t.major + 1, 0, 0};
    return std::nullopt;
}

std::optional<Triple> pred(Triple t) {
    if (t.patch != 0) return Triple{t.major, t.minor, t.patch - 1};
    if (t.minor != 0) return Triple{t.major, t.minor - 1, maxu};
    if (t.major != 0) return Triple{t.major - 1, maxu, maxu};
    return std::nullopt;
}

using Set = std::vector<Interval>;

Set normalize(Set s) {
    std::sort(s.begin(), s.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
    Set out;
    for (const auto& i : s) {
        if (i.hi < i.lo) continue;
        if (!out.empty()) {
            auto next = succ(out.back().hi);
            if (!next || i.lo <= *next) {
                out.back().hi = std::max(out.back().hi, i.hi);
                continue;
            }
        }
        out.push_back(i);
    }
    return out;
}

Set intersect(const Set& a, const Set& b) {
    Set out;
    for (const auto& x : a)
        for (const auto& y : b) {
            Interval i{std::max(x.lo, y.lo), std::min(x.hi, y.hi)};
            if (!(i.hi < i.lo)) out.push_back(i);
        }
    return normalize(std::move(out));
}

Set complement(const Set& s) {
    Set out;
    std::optional<Triple> from = Triple{};
    for (const auto& i : s) {
        if (from && *from < i.lo) out.push_back({*from, *pred(i.lo)});
        from = succ(i.hi);
    }
    if (from) out.push_back({*from, max_triple});
    return out;
}

// --- parsing ----------------------------------------------------------------------------------

enum class Op { none, eq, ne, gt, ge, lt, le, tilde, caret };

struct Part {
    bool wildcard = false;
    std::uint64_t value = 0;
};

class RangeParser {
public:
    explicit RangeParser(std::string_view s) : s_(s) {}

    Set parse() {
        Set result;
        bool any_alternative = false;
        while (true) {
            Set alt = alternative();
            any_alternative = true;
            result.insert(result.end(), alt.begin(), alt.end());
            skip_space();
            if (at_end()) break;
            if (s_.substr(i_, 2) == "||") {
                i_ += 2;
                continue;
            }
            fail("unexpected " + text::quote(s_.substr(i_, 1)));
        }
        if (!any_alternative) fail("empty");
        return normalize(std::move(result));
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw Exception(Error::invalid("invalid version range " + text::quote(s_) + ": col " +
                                       std::to_string(i_ + 1) + ": " + why));
    }
    bool at_end() const { return i_ >= s_.size(); }
    void skip_space() {
        while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t'))
            ++i_;
    }

    Set alternative() {
        Set acc = {{Triple{}, max_triple}};
        bool any_term = false;
        while (true) {
            skip_space();
            if (at_end() || s_.substr(i_, 2) == "||") break;
            if (s_[i_] == ',') {
                if (!any_term) fail("AND without a range before it");
                ++i_;
                continue;
            }
            if (s_.substr(i_, 2) == "&&") {
                if (!any_term) fail("AND without a range before it");
                i_ += 2;
                continue;
            }
            const std::size_t start = i_;
            Set t = term();
            any_term = true;
            acc = intersect(acc, t);
            if (acc.empty())
                throw Exception(
                    Error::invalid("invalid version range " + text::quote(s_) +
                                   ": over-constrained, no version can satisfy it (at col " +
                                   std::to_string(start + 1) + ")"));
        }
        if (!any_term) fail("empty range");
        return acc;
    }

    Op op() {
        auto take = [&](std::string_view t, Op o) {
            if (s_.substr(i_, t.size()) != t) return false;
            i_ += t.size();
            current_ = o;
            return true;
        };
        current_ = Op::none;
        take(">=", Op::ge) || take("=>", Op::ge) || take("<=", Op::le) || take("=<", Op::le) ||
            take("!=", Op::ne) || take("==", Op::eq) || take(">", Op::gt) || take("<", Op::lt) ||
            take("=", Op::eq) || take("~>", Op::tilde) || take("~", Op::tilde) ||
            take("^", Op::caret);
        skip_space();
        return current_;
    }

    // MAJOR[.MINOR[.PATCH]] with x, X or * for any part.
    std::vector<Part> version() {
        std::vector<Part> parts;
        while (true) {
            if (at_end()) fail("a version is incomplete");
            const char c = s_[i_];
            Part p;
            if (c == 'x' || c == 'X' || c == '*') {
                p.wildcard = true;
                ++i_;
            } else if (c >= '0' && c <= '9') {
                std::uint64_t v = 0;
                while (!at_end() && s_[i_] >= '0' && s_[i_] <= '9') {
                    const auto d = static_cast<std::uint64_t>(s_[i_] - '0');
                    if (v > (maxu - d) / 10) fail("number too large");
                    v = v * 10 + d;
                    ++i_;
                }
                p.value = v;
            } else {
                fail("expected a number or a wildcard, found " + text::quote(s_.substr(i_, 1)));
            }
            parts.push_back(p);
            if (!at_end() && s_[i_] == '.') {
                if (parts.size() == 3) fail("found 3rd dot when parsing semver");
                ++i_;
                continue;
            }
            break;
        }
        return parts;
    }

    // Leading numeric parts before the first wildcard.
    static std::size_t specified(const std::vector<Part>& v) {
        std::size_t k = 0;
        while (k < v.size() && !v[k].wildcard)
            ++k;
        return k;
    }
    static Triple low(const std::vector<Part>& v) {
        Triple t;
        const std::size_t k = specified(v);
        if (k > 0) t.major = v[0].value;
        if (k > 1) t.minor = v[1].value;
        if (k > 2) t.patch = v[2].value;
        return t;
    }
    // The upper end of a hyphen range: wildcards are the maximum, missing parts 0, and a maximum
    // part makes the parts after it maximal.
    static Triple high(const std::vector<Part>& v) {
        Triple t;
        std::uint64_t* f[3] = {&t.major, &t.minor, &t.patch};
        for (std::size_t i = 0; i < v.size(); ++i)
            *f[i] = v[i].wildcard ? maxu : v[i].value;
        if (t.major == maxu) t.minor = maxu;
        if (t.minor == maxu) t.patch = maxu;
        return t;
    }

    Set term() {
        const Op o = op();
        const auto v = version();
        skip_space();
        if (!at_end() && s_[i_] == '-') {
            if (o != Op::none) fail("a hyphen range takes no operator");
            ++i_;
            skip_space();
            const auto w = version();
            return {{low(v), high(w)}};
        }
        const std::size_t k = specified(v);
        const Triple lo = low(v);
        switch (o) {
        case Op::none:
        case Op::eq:
        case Op::ne: {
            Interval i{lo, lo};
            if (k == 0) i = {Triple{}, max_triple};
            if (k == 1) i.hi = {lo.major, maxu, maxu};
            if (k == 2) i.hi = {lo.major, lo.minor, maxu};
            if (o == Op::ne) return complement({i});
            return {i};
        }
        case Op::gt: {
            Triple from = lo;
            if (k == 0) return {};
            if (k == 1) {
                if (lo.major == maxu) return {};
                from = {lo.major + 1, 0, 0};
            } else if (k == 2) {
                if (lo.minor == maxu) return {};
                from = {lo.major, lo.minor + 1, 0};
            } else {
                auto s = succ(lo);
                if (!s) return {};
                from = *s;
            }
            return {{from, max_triple}};
        }
        case Op::ge:
            return {{lo, max_triple}};
        case Op::lt: {
            auto p = pred(lo);
            if (!p) return {};
            return {{Triple{}, *p}};
        }
        case Op::le:
            return {{Triple{}, lo}};
        case Op::tilde: {
            Triple hi = lo;
            hi.patch = maxu;
            if (hi.minor == 0) hi.minor = maxu;
            return {{lo, hi}};
        }
        case Op::caret: {
            Triple hi = lo;
            if (lo.major != 0) hi.minor = maxu;
            hi.patch = maxu;
            return {{lo, hi}};
        }
        }
        return {};
    }

    std::string_view s_;
    std::size_t i_ = 0;
    Op current_ = Op::none;
};

// --- platforms ----------------------------------------------------------------------------------

using Platforms = std::map<std::string, VersionRange>;

// platformsFromConstraints: platforms named in every `platform` allow list are allowed in any
// version; a platformVersion constraint sets its platform's range.
Result<Platforms> platforms_of(const io::Node& constraints, const std::string& what) {
    Platforms out;
    if (!constraints.is_seq()) return out;
    std::vector<std::vector<std::string>> allow_sets;
    for (std::size_t i = 0; i < constraints.items.size(); ++i) {
        const io::Node& c = constraints.items[i];
        const io::Node* p = c.is_map() ? c.get("platform") : nullptr;
        if (!p || !p->is_seq()) continue;
        std::vector<std::string> names;
        for (const auto& n : p->items) {
            if (!n.is_scalar() || n.text.empty())
                return Error::invalid("package repository inconsistent: " + what + " constraint #" +
                                      std::to_string(i) + " has empty platform type in allow list");
            names.push_back(n.text);
        }
        if (!names.empty()) allow_sets.push_back(std::move(names));
    }
    std::vector<std::string> known;
    for (const auto& s : allow_sets)
        known.insert(known.end(), s.begin(), s.end());
    std::sort(known.begin(), known.end());
    known.erase(std::unique(known.begin(), known.end()), known.end());
    for (const auto& k : known) {
        const bool everywhere =
            std::all_of(allow_sets.begin(), allow_sets.end(),
                        [&](const auto& s) { return std::find(s.begin(), s.end(), k) != s.end(); });
        if (everywhere) out.insert_or_assign(k, VersionRange::any());
    }
    for (std::size_t i = 0; i < constraints.items.size(); ++i) {
        const io::Node& c = constraints.items[i];
        const io::Node* pv = c.is_map() ? c.get("platformVersion") : nullptr;
        if (!pv || !pv->is_map()) continue;
        const io::Node* name = pv->get("name");
        const io::Node* range = pv->get("range");
        if (!name || !name->is_scalar() || name->text.empty())
            return Error::invalid("package repository inconsistent: " + what + " constraint #" +
                                  std::to_string(i) + " has empty platform type for version range");
        auto r = VersionRange::parse(range && range->is_scalar() ? range->text : "");
        if (!r)
            return Error::invalid("package repository inconsistent: " + what + " constraint #" +
                                  std::to_string(i) + " has invalid range: " + r.error().message);
        out.insert_or_assign(name->text, std::move(*r));
    }
    return out;
}

struct Candidate {
    std::string fqdn;
    semver::Version version;
    const RepositoryEntry* entry = nullptr;
    Platforms platforms;
};

std::string go_list(const std::vector<std::string>& items) {
    std::string s = "[";
    for (std::size_t i = 0; i < items.size(); ++i)
        s += (i ? " " : "") + items[i];
    return s + "]";
}

} // namespace

// --- VersionRange -------------------------------------------------------------------------------

Result<VersionRange> VersionRange::parse(std::string_view text) {
    return catch_error([&] {
        VersionRange r;
        r.text_ = std::string(text);
        RangeParser p(text);
        r.intervals_ = p.parse();
        return r;
    });
}

VersionRange VersionRange::any() {
    VersionRange r;
    r.intervals_ = {{Triple{}, max_triple}};
    r.text_ = "x-x";
    return r;
}

bool VersionRange::contains(std::uint64_t major, std::uint64_t minor, std::uint64_t patch,
                            bool prerelease) const {
    const Triple t{major, minor, patch};
    for (const auto& i : intervals_) {
        // A pre-release sorts just below its MAJOR.MINOR.PATCH.
        const bool above_lo = prerelease ? i.lo < t : i.lo <= t;
        if (above_lo && t <= i.hi) return true;
    }
    return false;
}

bool VersionRange::contains(const VersionRange& other) const {
    for (const auto& o : other.intervals_) {
        const bool inside =
            std::any_of(intervals_.begin(), intervals_.end(),
                        [&](const Interval& i) { return i.lo <= o.lo && o.hi <= i.hi; });
        if (!inside) return false;
    }
    return true;
}

// --- resolution ---------------------------------------------------------------------------------

std::vector<DependencyRequest> dependency_requests(const io::Node* dependencies) {
    std::vector<DependencyRequest> out;
    if (!dependencies || !dependencies->is_seq()) return out;
    for (const auto& item : dependencies->items) {
        const io::Node* img = item.is_map() ? item.get("image") : nullptr;
        auto str = [&](const char* k) {
            const io::Node* n = img && img->is_map() ? img->get(k) : nullptr;
            return n && n->is_string() ? n->text : std::string();
        };
        out.push_back({str("name"), str("package"), str("range")});
    }
    return out;
}

namespace {

std::string label(const Candidate& c) {
    return c.fqdn + "@" + c.version.str();
}

// The lock's entries for the chosen candidates, in upstream's order: the candidates as sorted
// (newest first, then package), each with the manifest's dependencies on it in order.
std::vector<LockDependency> lock_entries(const ResolveInput& in,
                                         const std::vector<Candidate>& candidates,
                                         const std::map<std::string, const Candidate*>& chosen) {
    std::vector<LockDependency> out;
    for (const auto& c : candidates) {
        auto it = chosen.find(c.fqdn);
        if (it == chosen.end() || it->second != &c) continue;
        for (const auto& d : in.dependencies)
            if (d.package == c.fqdn)
                out.push_back({d.name, c.entry->image, c.entry->digest, c.version.str()});
    }
    return out;
}

resolve::versions::Requirement requirement(const std::string& package, const VersionRange& r,
                                           bool any) {
    resolve::versions::Requirement out;
    out.package = package;
    for (const auto& i : r.intervals()) {
        resolve::versions::Interval v;
        v.lo = semver::Version{i.lo.major, i.lo.minor, i.lo.patch, {}, {}};
        if (!(i.hi == max_triple))
            v.hi = semver::Version{i.hi.major, i.hi.minor, i.hi.patch, {}, {}};
        out.any_of.push_back(std::move(v));
    }
    out.words = package + (any ? " (any version)" : " " + text::quote(r.text()));
    return out;
}

// The candidates' own dependencies, read from their package images as far as the root's
// ranges reach, and the choice of one version per package across the whole graph (libsolv,
// through resolve/versions). `direct` is the per-package choice for the root alone, the answer
// when no candidate reached has dependencies.
Result<std::vector<LockDependency>>
resolve_transitively(const ResolveInput& in, const std::vector<Candidate>& candidates,
                     const std::map<std::string, const Candidate*>& direct,
                     const std::vector<VersionRange>& root_ranges,
                     const std::function<std::string(const Candidate&)>& platform_problem) {
    struct Req {
        std::string package;
        VersionRange range;
        bool any = false;
    };
    std::vector<std::vector<Req>> reqs(candidates.size());
    std::vector<long> parent(candidates.size(), -2);     // -2: not reached; -1: by the root
    std::vector<std::string> refused(candidates.size()); // why a reached candidate is left out
    std::map<std::string, std::vector<DependencyRequest>> read; // by digest
    std::map<std::string, std::vector<std::size_t>> of_package; // in candidate order
    for (std::size_t c = 0; c < candidates.size(); ++c)
        of_package[candidates[c].fqdn].push_back(c);
    std::string repo_names;
    for (const auto& r : in.repositories)
        repo_names += (repo_names.empty() ? "" : ", ") + r.name;

    auto chain = [&](long c) {
        std::vector<std::string> labels;
        for (; c >= 0; c = parent[static_cast<std::size_t>(c)])
            labels.push_back(label(candidates[static_cast<std::size_t>(c)]));
        std::string s = in.manifest_name;
        for (auto it = labels.rbegin(); it != labels.rend(); ++it)
            s += " -> " + *it;
        return s;
    };

    std::deque<std::size_t> queue;
    auto reach = [&](long from, const std::string& package, const VersionRange& range) {
        auto it = of_package.find(package);
        if (it == of_package.end()) return;
        for (std::size_t c : it->second) {
            const Candidate& x = candidates[c];
            if (parent[c] != -2 || !range.contains(x.version.major, x.version.minor,
                                                   x.version.patch, x.version.prerelease()))
                continue;
            parent[c] = from;
            refused[c] = platform_problem(x);
            if (refused[c].empty()) queue.push_back(c);
        }
    };
    for (std::size_t i = 0; i < in.dependencies.size(); ++i)
        reach(-1, in.dependencies[i].package, root_ranges[i]);
    bool any_dependencies = false;
    while (!queue.empty()) {
        const std::size_t c = queue.front();
        queue.pop_front();
        const Candidate& x = candidates[c];
        const std::string image = x.entry->image + "@sha256:" + x.entry->digest;
        auto it = read.find(x.entry->digest);
        if (it == read.end()) {
            auto got = in.dependencies_of(*x.entry);
            if (!got) {
                Error e = std::move(got).error();
                e.note("reading the dependencies of " + chain(static_cast<long>(c)) + " (" + image +
                       ")");
                return e;
            }
            it = read.emplace(x.entry->digest, std::move(*got)).first;
        }
        for (const auto& d : it->second) {
            const std::string at = chain(static_cast<long>(c));
            if (!of_package.count(d.package)) {
                // Built step by step: GCC 12 sees an uninitialised string in the aggregate.
                Error e;
                e.code = ExitCode::unsatisfiable;
                e.message = "solving package deps: " + at + " -> ";
                e.message += d.package.empty() ? std::string("\"\"") : d.package;
                e.message += ": package " + text::quote(d.package) + " (dependency " +
                             text::quote(d.name) + " of " + label(x) +
                             ") is in none of the repositories of " + in.manifest_name + " (" +
                             repo_names + ")";
                e.note("the dependencies of a dependency are looked up in the repositories of "
                       "the package being updated (its spec.repositories)");
                return e;
            }
            Req r;
            r.package = d.package;
            r.any = d.range.empty();
            if (r.any) {
                r.range = VersionRange::any();
            } else {
                auto parsed = VersionRange::parse(d.range);
                if (!parsed) {
                    Error e = parsed.error();
                    e.message = label(x) + " (" + image + "): dependency " + text::quote(d.name) +
                                ": " + e.message;
                    e.note("needed by " + at);
                    return e;
                }
                r.range = std::move(*parsed);
            }
            reach(static_cast<long>(c), r.package, r.range);
            reqs[c].push_back(std::move(r));
            any_dependencies = true;
        }
    }
    if (!any_dependencies) return lock_entries(in, candidates, direct);

    // The problem for libsolv: the reached candidates the platforms allow, newest first.
    resolve::versions::Problem p;
    p.root = in.manifest_name;
    for (std::size_t i = 0; i < in.dependencies.size(); ++i)
        p.requires_.push_back(requirement(in.dependencies[i].package, root_ranges[i],
                                          in.dependencies[i].range.empty()));
    std::vector<std::size_t> index; // problem candidate -> candidates
    for (std::size_t c = 0; c < candidates.size(); ++c) {
        if (parent[c] == -2 || !refused[c].empty()) continue;
        resolve::versions::Candidate v;
        v.package = candidates[c].fqdn;
        v.version = candidates[c].version;
        v.label = label(candidates[c]);
        for (const auto& r : reqs[c])
            v.requires_.push_back(requirement(r.package, r.range, r.any));
        p.candidates.push_back(std::move(v));
        index.push_back(c);
    }
    auto solved = resolve::versions::solve(p);
    if (!solved) return solved.error();
    if (!solved->satisfiable) {
        Error e{ExitCode::unsatisfiable,
                "solving package deps: constraints not satisfiable: no choice of one version "
                "per package meets every requirement of package " +
                    in.manifest_name + " and of its dependencies",
                {},
                {},
                {}};
        for (const auto& s : solved->explanation)
            e.note(s);
        for (std::size_t c = 0; c < candidates.size(); ++c)
            if (parent[c] != -2 && !refused[c].empty())
                e.note(label(candidates[c]) + " is left out: " + refused[c]);
        return e;
    }
    std::map<std::string, const Candidate*> chosen;
    for (std::size_t k : solved->chosen)
        chosen[candidates[index[k]].fqdn] = &candidates[index[k]];
    return lock_entries(in, candidates, chosen);
}

} // namespace

Result<std::vector<LockDependency>> resolve_dependencies(const ResolveInput& in) {
    auto scope = platforms_of(in.constraints, "manifest");
    if (!scope) return scope.error();

    std::vector<VersionRange> ranges;
    for (const auto& d : in.dependencies) {
        if (d.range.empty()) {
            ranges.push_back(VersionRange::any());
            continue;
        }
        auto r = VersionRange::parse(d.range);
        if (!r) {
            Error e = r.error();
            e.message = "dependency " + text::quote(d.name) + ": " + e.message;
            return e;
        }
        ranges.push_back(std::move(*r));
    }

    std::vector<Candidate> candidates;
    for (const auto& repo : in.repositories) {
        for (const auto& entry : repo.entries) {
            const std::string fqdn = entry.name + "." + repo.name;
            auto platforms = platforms_of(entry.constraints, "entry " + entry.entry_name());
            if (!platforms) return platforms.error();
            for (const auto& vs : entry.versions) {
                std::string_view v = vs;
                if (!v.empty() && v[0] == 'v') v.remove_prefix(1);
                auto parsed = semver::Version::parse(v);
                if (!parsed)
                    return Error::invalid("package repository inconsistent: entry " +
                                          entry.entry_name() + ": " + parsed.error().message);
                for (const auto& c : candidates)
                    if (c.fqdn == fqdn && semver::compare(c.version, *parsed) == 0)
                        return Error::invalid("package repository inconsistent version " +
                                              parsed->str() + " of package " + fqdn +
                                              " exists multiple times in repository entry");
                candidates.push_back({fqdn, std::move(*parsed), &entry, *platforms});
            }
        }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) {
                         const int c = semver::compare(a.version, b.version);
                         return c != 0 ? c > 0 : a.fqdn < b.fqdn;
                     });

    // Why a candidate cannot serve the manifest's platforms ("" when it can).
    auto platform_problem = [&](const Candidate& c) -> std::string {
        for (const auto& [name, need] : *scope) {
            auto it = c.platforms.find(name);
            // The solver's name for a candidate.
            const std::string who = "dependency " + c.entry->name + "@" + c.version.str() +
                                    " for package " + in.manifest_name;
            if (it == c.platforms.end())
                return "support for platform " + text::quote(name) + " is required but " + who +
                       " does not support it";
            if (!it->second.contains(need))
                return "support for platform " + text::quote(name) + " within range " +
                       text::quote(need.text()) + " is required but " + who + " supports only " +
                       text::quote(it->second.text());
        }
        return {};
    };

    // One version per package, the newest that every dependency on it accepts.
    std::vector<std::string> packages;
    for (const auto& d : in.dependencies)
        if (std::find(packages.begin(), packages.end(), d.package) == packages.end())
            packages.push_back(d.package);
    std::map<std::string, const Candidate*> chosen;
    std::vector<std::pair<std::string, std::vector<std::string>>> failures; // message, notes
    for (const auto& pkg : packages) {
        std::vector<const Candidate*> mine;
        for (const auto& c : candidates)
            if (c.fqdn == pkg) mine.push_back(&c);
        const Candidate* pick = nullptr;
        std::vector<std::string> notes;
        for (const Candidate* c : mine) {
            std::string why;
            for (std::size_t i = 0; i < in.dependencies.size() && why.empty(); ++i)
                if (in.dependencies[i].package == pkg &&
                    !ranges[i].contains(c->version.major, c->version.minor, c->version.patch,
                                        c->version.prerelease()))
                    why = c->version.str() + " is outside the range " +
                          text::quote(ranges[i].text()) + " of dependency " +
                          text::quote(in.dependencies[i].name);
            if (why.empty()) why = platform_problem(*c);
            if (why.empty()) {
                pick = c;
                break;
            }
            notes.push_back(why);
        }
        if (pick) {
            chosen[pkg] = pick;
            continue;
        }
        if (mine.empty()) {
            failures.push_back({"package " + in.manifest_name + " requires package " + pkg +
                                    " which has no candidates",
                                {}});
            continue;
        }
        // A single dependency whose range alone excludes every candidate: upstream's wording.
        bool worded = false;
        for (std::size_t i = 0; i < in.dependencies.size() && !worded; ++i) {
            if (in.dependencies[i].package != pkg) continue;
            std::vector<std::string> versions;
            bool any_in = false;
            for (const Candidate* c : mine) {
                versions.push_back(c->version.str());
                any_in = any_in || ranges[i].contains(c->version.major, c->version.minor,
                                                      c->version.patch, c->version.prerelease());
            }
            if (!any_in) {
                failures.push_back({"package " + in.manifest_name + " requires package " + pkg +
                                        " with version constraint " + ranges[i].text() +
                                        " but no available version out of " + go_list(versions) +
                                        " satisfies this",
                                    {}});
                worded = true;
            }
        }
        if (!worded)
            failures.push_back({"package " + in.manifest_name + " requires package " + pkg +
                                    " but no version satisfies every constraint",
                                notes});
    }
    if (!failures.empty()) {
        Error e{ExitCode::unsatisfiable,
                "solving package deps: constraints not satisfiable: " + failures[0].first,
                {},
                {},
                {}};
        for (const auto& n : failures[0].second)
            e.note(n);
        for (std::size_t i = 1; i < failures.size(); ++i) {
            e.note(failures[i].first);
            for (const auto& n : failures[i].second)
                e.note("  " + n);
        }
        return e;
    }

    if (!in.dependencies_of) return lock_entries(in, candidates, chosen);
    return resolve_transitively(in, candidates, chosen, ranges, platform_problem);
}

} // namespace kpkg::pko
