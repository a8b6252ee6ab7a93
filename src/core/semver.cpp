// Semantic versions: the strict, tolerant (blang) and lenient (Masterminds) parsers, printing and
// precedence. Ranges and constraints are in semver_range.cpp.
#include "kpkg/core/semver.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "kpkg/core/text.hpp"

namespace kpkg::semver {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_ident_char(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}

// The character at s[i] in single quotes, for "unexpected 'x' at position N".
std::string char_at(std::string_view s, std::size_t i) {
    std::size_t n = text::utf8_length(s, i);
    std::string out = "'";
    text::append_escaped(out, s.substr(i, n == 0 ? 1 : n), std::string_view::npos, '\'');
    out += '\'';
    return out;
}

std::string pos_str(std::size_t i) {
    return "position " + std::to_string(i + 1);
}

std::string unexpected(std::string_view s, std::size_t i) {
    return "unexpected " + char_at(s, i) + " at " + pos_str(i);
}

// Parses a run of digits as uint64; false on overflow.
bool to_u64(std::string_view digits, std::uint64_t& out) {
    std::uint64_t v = 0;
    constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    for (char c : digits) {
        auto d = static_cast<std::uint64_t>(c - '0');
        if (v > (max - d) / 10) return false;
        v = v * 10 + d;
    }
    out = v;
    return true;
}

const char* const part_names[] = {"major", "minor", "patch"};

// Dot-separated identifiers from s[i], up to the end or (for a pre-release) a '+'. Checks the
// SemVer rules for them; on success leaves i on the character that ended them.
bool parse_identifiers(std::string_view s, std::size_t& i, bool pre, std::vector<std::string>& ids,
                       std::string& why) {
    const char* kind = pre ? "pre-release" : "build metadata";
    for (;;) {
        std::size_t j = i;
        while (j < s.size() && is_ident_char(s[j]))
            ++j;
        if (j == i) {
            if (j == s.size() || s[j] == '.' || (pre && s[j] == '+')) {
                why = std::string("empty ") + kind + " identifier at " + pos_str(i);
            } else {
                why = "character " + char_at(s, j) + " at " + pos_str(j) + " is not allowed in " +
                      kind + " (identifiers use only [0-9A-Za-z-])";
            }
            return false;
        }
        std::string_view id = s.substr(i, j - i);
        if (pre && all_digits(id)) {
            std::uint64_t ignored = 0;
            if (id.size() > 1 && id[0] == '0') {
                why = "numeric pre-release identifier " + detail::quote(id) + " has a leading zero";
                return false;
            }
            if (!to_u64(id, ignored)) {
                why = "numeric pre-release identifier " + detail::quote(id) +
                      " does not fit in 64 bits";
                return false;
            }
        }
        ids.emplace_back(id);
        i = j;
        if (i == s.size() || (pre && s[i] == '+')) return true;
        if (s[i] != '.') {
            why = "character " + char_at(s, i) + " at " + pos_str(i) + " is not allowed in " +
                  kind + " (identifiers use only [0-9A-Za-z-])";
            return false;
        }
        ++i;
    }
}

// The optional "-pre" and "+build" after the numbers, from s[i] to the end.
bool parse_suffix(std::string_view s, std::size_t i, Version& v, std::string& why) {
    if (i < s.size() && s[i] == '-') {
        ++i;
        if (!parse_identifiers(s, i, true, v.pre, why)) return false;
    }
    if (i < s.size() && s[i] == '+') {
        ++i;
        if (!parse_identifiers(s, i, false, v.build, why)) return false;
    }
    if (i < s.size()) {
        why = unexpected(s, i) + " after the patch version (expected '-', '+' or the end)";
        return false;
    }
    return true;
}

int compare_identifier(const std::string& a, const std::string& b) {
    bool an = all_digits(a), bn = all_digits(b);
    if (an && bn) {
        // Numerically, without converting: skip leading zeros, then the longer is larger.
        std::string_view x(a), y(b);
        x.remove_prefix(std::min(x.find_first_not_of('0'), x.size()));
        y.remove_prefix(std::min(y.find_first_not_of('0'), y.size()));
        if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
        int c = x.compare(y);
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (an != bn) return an ? -1 : 1; // numeric identifiers sort before alphanumeric ones
    int c = a.compare(b);             // ASCII order
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

template <class T>
int cmp3(T a, T b) {
    return a < b ? -1 : (a > b ? 1 : 0);
}

std::string join_ids(const std::vector<std::string>& ids) {
    std::string out;
    for (std::size_t k = 0; k < ids.size(); ++k) {
        if (k) out += '.';
        out += ids[k];
    }
    return out;
}

// Go's strings.TrimLeft(p, "0").
std::string_view trim_zeros(std::string_view p) {
    p.remove_prefix(std::min(p.find_first_not_of('0'), p.size()));
    return p;
}

} // namespace

namespace detail {

std::string quote(std::string_view s) {
    return text::quote(s, 64);
}

std::string_view trim_go_space(std::string_view s) {
    for (std::size_t n; !s.empty() && (n = text::go_space_at(s, 0)) != 0;)
        s.remove_prefix(n);
    // From the end: the longest white-space sequence is 3 bytes, so test the last 1, 2, 3 bytes.
    for (bool again = true; again && !s.empty();) {
        again = false;
        for (std::size_t n = 1; n <= 3 && n <= s.size(); ++n) {
            if (text::go_space_at(s, s.size() - n) == n) {
                s.remove_suffix(n);
                again = true;
                break;
            }
        }
    }
    return s;
}

bool parse_strict(std::string_view s, Version& out, std::string& why) {
    Version v;
    if (s.empty()) {
        why = "empty string";
        return false;
    }
    if (text::go_space_at(s, 0) != 0 || trim_go_space(s).size() != s.size()) {
        why = "leading or trailing white space is not allowed";
        return false;
    }
    if ((s[0] == 'v' || s[0] == 'V') && s.size() > 1 && is_digit(s[1])) {
        why = "a leading '" + std::string(1, s[0]) + "' is not part of a semantic version (write " +
              quote(s.substr(1)) + ")";
        return false;
    }
    std::uint64_t* fields[] = {&v.major, &v.minor, &v.patch};
    std::size_t i = 0;
    for (int k = 0; k < 3; ++k) {
        if (k > 0) {
            if (i == s.size()) {
                why = std::string("missing the ") + part_names[k] +
                      " version (expected MAJOR.MINOR.PATCH)";
                return false;
            }
            if (s[i] != '.') {
                why = unexpected(s, i) + " after the " + part_names[k - 1] +
                      " version (expected '.')";
                return false;
            }
            ++i;
        }
        std::size_t j = i;
        while (j < s.size() && is_digit(s[j]))
            ++j;
        if (j == i) {
            if (i == s.size()) {
                why = std::string("missing the ") + part_names[k] + " version";
            } else {
                why = unexpected(s, i) + " where the " + part_names[k] +
                      " version should start (expected a digit)";
            }
            return false;
        }
        std::string_view digits = s.substr(i, j - i);
        if (digits.size() > 1 && digits[0] == '0') {
            why = "numeric part " + quote(digits) + " has a leading zero";
            return false;
        }
        if (!to_u64(digits, *fields[k])) {
            why = "numeric part " + quote(digits) + " does not fit in 64 bits";
            return false;
        }
        i = j;
    }
    if (i < s.size() && s[i] == '.') {
        why = unexpected(s, i) + ": a semantic version has exactly three numeric parts";
        return false;
    }
    if (!parse_suffix(s, i, v, why)) return false;
    out = std::move(v);
    return true;
}

bool parse_lenient(std::string_view s, Version& out, std::string& why) {
    // Masterminds' regular expression, by hand:
    //   v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-PRE)?(\+BUILD)?
    // with numbers allowed leading zeros, then SemVer's rules for the identifiers.
    constexpr std::size_t max_len = 256;
    Version v;
    if (s.empty()) {
        why = "empty string";
        return false;
    }
    if (s.size() > max_len) {
        why = "longer than " + std::to_string(max_len) + " bytes";
        return false;
    }
    std::size_t i = s[0] == 'v' ? 1 : 0;
    std::uint64_t* fields[] = {&v.major, &v.minor, &v.patch};
    for (int k = 0; k < 3; ++k) {
        if (k > 0) {
            if (i == s.size() || s[i] != '.') break; // minor and patch are optional
            ++i;
        }
        std::size_t j = i;
        while (j < s.size() && is_digit(s[j]))
            ++j;
        if (j == i) {
            if (i == s.size()) {
                why = std::string("missing the ") + part_names[k] + " version";
            } else {
                why = unexpected(s, i) + " where the " + part_names[k] +
                      " version should start (expected a digit)";
            }
            return false;
        }
        if (!to_u64(s.substr(i, j - i), *fields[k])) {
            why = "numeric part " + quote(s.substr(i, j - i)) + " does not fit in 64 bits";
            return false;
        }
        i = j;
    }
    if (i < s.size() && s[i] == '.') {
        why = unexpected(s, i) + ": a version has at most three numeric parts";
        return false;
    }
    if (!parse_suffix(s, i, v, why)) return false;
    out = std::move(v);
    return true;
}

} // namespace detail

Result<Version> Version::parse(std::string_view s) {
    Version v;
    std::string why;
    if (!detail::parse_strict(s, v, why))
        return fail(Error::invalid("invalid semantic version " + detail::quote(s) + ": " + why));
    return v;
}

Result<Version> Version::parse_tolerant(std::string_view s) {
    // blang's steps, in order: trim, drop one "v", split into at most three parts at '.', strip
    // leading zeros of each part longer than one character (keeping one if nothing numeric is
    // left), pad a short version with ".0", then parse strictly.
    std::string_view t = detail::trim_go_space(s);
    if (!t.empty() && t[0] == 'v') t.remove_prefix(1);
    if (t.empty())
        return fail(
            Error::invalid("invalid semantic version " + detail::quote(s) + ": empty string"));
    std::vector<std::string> parts;
    for (int k = 0; k < 2; ++k) {
        std::size_t dot = t.find('.');
        if (dot == std::string_view::npos) break;
        parts.emplace_back(t.substr(0, dot));
        t.remove_prefix(dot + 1);
    }
    parts.emplace_back(t);
    for (std::string& p : parts) {
        if (p.size() <= 1) continue;
        std::string_view rest = trim_zeros(p);
        std::string digits;
        if (rest.empty() || !is_digit(rest[0])) digits.push_back('0');
        digits.append(rest);
        p = std::move(digits);
    }
    if (parts.size() < 3) {
        if (parts.back().find_first_of("+-") != std::string::npos) {
            return fail(Error::invalid(
                "invalid semantic version " + detail::quote(s) +
                ": a version without minor or patch cannot have a pre-release or build metadata"));
        }
        while (parts.size() < 3)
            parts.emplace_back("0");
    }
    std::string norm = parts[0] + "." + parts[1] + "." + parts[2];
    Version v;
    std::string why;
    if (!detail::parse_strict(norm, v, why)) {
        std::string msg = "invalid semantic version " + detail::quote(s);
        if (norm != s) msg += " (read as " + detail::quote(norm) + ")";
        return fail(Error::invalid(msg + ": " + why));
    }
    return v;
}

Result<Version> Version::parse_lenient(std::string_view s) {
    Version v;
    std::string why;
    if (!detail::parse_lenient(s, v, why))
        return fail(Error::invalid("invalid version " + detail::quote(s) + ": " + why));
    return v;
}

std::string Version::str() const {
    std::string out =
        std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    if (!pre.empty()) {
        out.push_back('-');
        out += join_ids(pre);
    }
    if (!build.empty()) {
        out.push_back('+');
        out += join_ids(build);
    }
    return out;
}

bool Version::identical(const Version& o) const {
    return compare(*this, o) == 0 && build == o.build;
}

int compare(const Version& a, const Version& b) {
    if (int c = cmp3(a.major, b.major)) return c;
    if (int c = cmp3(a.minor, b.minor)) return c;
    if (int c = cmp3(a.patch, b.patch)) return c;
    // A release sorts after its pre-releases.
    if (a.pre.empty() || b.pre.empty()) return cmp3(a.pre.empty(), b.pre.empty());
    std::size_t n = std::min(a.pre.size(), b.pre.size());
    for (std::size_t k = 0; k < n; ++k) {
        if (int c = compare_identifier(a.pre[k], b.pre[k])) return c;
    }
    // Equal so far: the longer list of identifiers sorts later.
    return cmp3(a.pre.size(), b.pre.size());
}

std::weak_ordering operator<=>(const Version& a, const Version& b) {
    int c = compare(a, b);
    return c < 0 ? std::weak_ordering::less
                 : (c > 0 ? std::weak_ordering::greater : std::weak_ordering::equivalent);
}

bool operator==(const Version& a, const Version& b) {
    return compare(a, b) == 0;
}

} // namespace kpkg::semver
