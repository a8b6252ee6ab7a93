// Semantic versions (SemVer 2.0.0) and the two range dialects found in operator packages:
//  - Range: blang/semver v4 ranges, as OLM reads olm.skipRange and olm.package.required
//    versionRange (">=4.1.0 <4.2.9", "1.2.x || >=2.0.0").
//  - Constraint: Masterminds/semver v3 constraints, as Package Operator reads them
//    ("^1.2", "~1.2.3", "1.2 - 1.4.5", ">=1.0, <2 || 3.x").
// Both mirror their Go originals case for case, quirks included (see each class), so that kpkg
// decides exactly as the cluster would. Parsing never throws on bad input: it returns an
// Error::invalid whose message quotes the input and names the offending part.
#pragma once

#include "kpkg/core/result.hpp"

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kpkg::semver {

struct Version {
    std::uint64_t major = 0;
    std::uint64_t minor = 0;
    std::uint64_t patch = 0;
    // Dot-separated identifiers as written: "rc.1" is {"rc", "1"}. A pre-release identifier made
    // only of digits is numeric.
    std::vector<std::string> pre;
    std::vector<std::string> build;

    // Strict SemVer 2.0.0 (the same language as blang's Parse): MAJOR.MINOR.PATCH[-PRE][+BUILD],
    // no "v", no surrounding spaces, no leading zeros in numbers, no empty identifiers, only
    // [0-9A-Za-z-] in identifiers, numbers that fit in 64 bits.
    static Result<Version> parse(std::string_view s);
    // blang/semver v4 ParseTolerant: trims whitespace, drops one leading "v", drops leading zeros
    // of the numeric parts and fills a missing minor or patch with 0 ("v1.2" is 1.2.0, "1" is
    // 1.0.0), then parses strictly. A short version cannot carry a pre-release or build.
    static Result<Version> parse_tolerant(std::string_view s);
    // Masterminds/semver v3 NewVersion: optional leading "v", minor and patch optional, leading
    // zeros allowed in MAJOR.MINOR.PATCH ("v01.2-rc.1" is 1.2.0-rc.1); pre-release and build as in
    // strict parsing; at most 256 bytes (Masterminds' limit). Unlike Masterminds, a numeric
    // pre-release identifier must fit in 64 bits.
    static Result<Version> parse_lenient(std::string_view s);

    bool prerelease() const { return !pre.empty(); }
    // "1.2.3-rc.1+build.5"; parse(v.str()) gives v back.
    std::string str() const;
    // Equal precedence and the same build metadata.
    bool identical(const Version& o) const;
};

// SemVer precedence: negative, zero or positive. Build metadata does not count.
int compare(const Version& a, const Version& b);
// Ordering and equality follow precedence, so == ignores build metadata (1.0.0+a == 1.0.0+b):
// use identical() to tell such versions apart. Hence a weak ordering.
std::weak_ordering operator<=>(const Version& a, const Version& b);
bool operator==(const Version& a, const Version& b);

// A blang/semver v4 range. Comparators (=, ==, !=, !, >, >=, <, <=, or none for =) are separated
// by spaces (AND) and "||" (OR); an operator may be followed by spaces ("> 1.2.3"); versions are
// strict; a lower-case "x" is a wildcard ("1.2.x", ">=1.x"). Pre-release versions compare by
// plain precedence, so ">=1.0.0 <2.0.0" contains 1.5.0-rc.1 and "<2.0.0" contains 2.0.0-rc.1.
// blang's quirks are kept: a one-character word is ignored; any "x" in a comparator triggers
// wildcard expansion, so "1.x.x" means >=1.0.0 <1.1.0, "!=1.2.x" matches nothing, an unknown
// operator before a wildcard is dropped ("~1.2.x" means =1.2.0) and ">1.0.0-xyz" is an error.
// warnings() lists the quirks a parsed range ran into. One difference: "a || || b", which blang
// parses but then panics on, is an error here.
class Range {
public:
    enum class Op : std::uint8_t { eq, ne, lt, le, gt, ge };
    struct Comparator {
        Op op = Op::eq;
        Version version;
    };

    static Result<Range> parse(std::string_view s);
    bool contains(const Version& v) const;
    // After wildcard expansion, e.g. "1.2.x || !1.0.0" gives ">=1.2.0 <1.3.0 || !=1.0.0". Parsing
    // it again gives the same range, unless a version has an 'x' in its pre-release or build
    // (which blang would take for a wildcard).
    std::string str() const;
    // The alternatives (OR), each a conjunction (AND) of comparators.
    const std::vector<std::vector<Comparator>>& alternatives() const { return any_; }
    // Where blang reads the text differently from what it likely means, one sentence each.
    const std::vector<std::string>& warnings() const { return warnings_; }

private:
    std::vector<std::vector<Comparator>> any_;
    std::vector<std::string> warnings_;
};

// A Masterminds/semver v3 constraint. Operators =, !=, >, <, >=, =>, <=, =<, ~, ~>, ^ or none;
// comparators separated by spaces or "," (AND) and "||" (OR); hyphen ranges "1.2 - 1.4.5";
// versions as parse_lenient, where x, X or * may stand for any part ("1.x", "*", "2.*.*") and
// missing parts are wildcards too ("~1.2", "<=1"). At most 512 bytes and 32 alternatives.
// Pre-release versions (v3.4 rules): an alternative accepts them only if one of its comparators
// names a pre-release (">=1.5.0-0 <2.0.0" accepts 1.5.0-rc.1, ">=1.0.0 <2.0.0" does not), or if
// check() is asked to include them (Masterminds' IncludePrerelease).
class Constraint {
public:
    static Result<Constraint> parse(std::string_view s);
    bool check(const Version& v, bool include_prerelease = false) const;
    // As Masterminds prints it: operators and versions as written, one space between comparators,
    // hyphen ranges rewritten (">=1.2 <=1.4.5"), " || " between alternatives.
    std::string str() const;

private:
    enum class Op : std::uint8_t { eq, ne, gt, lt, ge, le, tilde, caret };
    struct Term {
        Op op = Op::eq;
        std::string op_text; // as written ("=>", "~>", "")
        std::string text;    // the version as written ("1.x", "v2")
        Version version;     // wildcards and missing parts as 0
        bool dirty = false;  // some part is a wildcard or missing
        bool minor_dirty = false;
        bool patch_dirty = false;
    };
    struct Group {
        std::vector<Term> terms;
        bool has_pre = false;
    };
    static bool check_term(const Term& t, const Version& v, bool include_pre);
    std::vector<Group> groups_;
};

namespace detail {
// `s` in double quotes for messages: control bytes and invalid UTF-8 escaped, long input cut.
std::string quote(std::string_view s);
// The strict and lenient parsers with the reason for a failure in `why` (no prefix): the range
// parsers nest it in their own messages.
bool parse_strict(std::string_view s, Version& out, std::string& why);
bool parse_lenient(std::string_view s, Version& out, std::string& why);
// Go's strings.TrimSpace: strips ASCII and Unicode white space at both ends.
std::string_view trim_go_space(std::string_view s);
} // namespace detail

} // namespace kpkg::semver
