// Package Operator dependency resolution (direct, newest acceptable version per package) and the
// interval ranges of pkg.package-operator.run/semver it needs.
#include "kpkg/pko/deps.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "kpkg/core/semver.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/go.hpp"

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

    // Upstream's order: the chosen candidates as sorted (newest first, then package), each with
    // the manifest's dependencies on it in order.
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

} // namespace kpkg::pko
