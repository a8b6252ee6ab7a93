// The image reference grammar, matched by hand (no regular expressions): each function below is
// one production of the grammar in kpkg/oci/reference.hpp.
#include "kpkg/oci/reference.hpp"

#include <algorithm>

namespace kpkg::oci {

namespace {

bool is_lower_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool is_alnum(char c) {
    return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}
bool is_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_word(char c) {
    return is_alnum(c) || c == '_';
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_lower_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f');
}

// A path component: runs of a-z 0-9 separated by one '.', one or two '_', or any number of '-'.
bool path_component(std::string_view s) {
    std::size_t i = 0;
    const std::size_t n = s.size();
    auto run = [&] {
        const std::size_t b = i;
        while (i < n && is_lower_alnum(s[i]))
            ++i;
        return i > b;
    };
    if (!run()) return false;
    while (i < n) {
        if (s[i] == '.') {
            ++i;
        } else if (s[i] == '_') {
            ++i;
            if (i < n && s[i] == '_') ++i;
        } else if (s[i] == '-') {
            while (i < n && s[i] == '-')
                ++i;
        } else {
            return false;
        }
        if (!run()) return false;
    }
    return true;
}

// A domain: dot-separated labels of letters and digits with inner '-', then an optional ":port".
bool domain(std::string_view s) {
    if (auto c = s.find(':'); c != std::string_view::npos) {
        const std::string_view port = s.substr(c + 1);
        if (port.empty() || !std::all_of(port.begin(), port.end(), is_digit)) return false;
        s = s.substr(0, c);
    }
    if (s.empty()) return false;
    for (std::size_t b = 0;;) {
        const std::size_t e = s.find('.', b);
        const std::string_view label =
            s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
        if (label.empty() || !is_alnum(label.front()) || !is_alnum(label.back())) return false;
        for (char c : label)
            if (!is_alnum(c) && c != '-') return false;
        if (e == std::string_view::npos) return true;
        b = e + 1;
    }
}

// A name: [domain "/"] component ("/" component)*.
bool name(std::string_view s) {
    const std::size_t slash = s.find('/');
    const std::string_view first = s.substr(0, slash);
    if (slash == std::string_view::npos) return path_component(first);
    for (std::size_t b = slash + 1;;) {
        const std::size_t e = s.find('/', b);
        if (!path_component(
                s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b)))
            return false;
        if (e == std::string_view::npos) break;
        b = e + 1;
    }
    return path_component(first) || domain(first);
}

// The grammar's digest: algorithm ":" at least 32 hex digits (either case), the algorithm being
// letter-led words of letters and digits joined by '-', '_', '+' or '.'.
bool digest_syntax(std::string_view s) {
    const std::size_t c = s.find(':');
    if (c == std::string_view::npos) return false;
    const std::string_view alg = s.substr(0, c), hex = s.substr(c + 1);
    if (hex.size() < 32 || !std::all_of(hex.begin(), hex.end(), is_hex)) return false;
    for (std::size_t i = 0;;) {
        if (i >= alg.size() || !is_letter(alg[i])) return false;
        while (i < alg.size() && is_alnum(alg[i]))
            ++i;
        if (i == alg.size()) return true;
        if (alg[i] != '-' && alg[i] != '_' && alg[i] != '+' && alg[i] != '.') return false;
        ++i;
    }
}

// The whole grammar: name [":" tag] ["@" digest]. On a match, the three parts of `s` (tag and
// digest empty when absent).
bool reference_syntax(std::string_view s, std::string_view& nm, std::string_view& tag,
                      std::string_view& digest) {
    tag = digest = {};
    if (auto at = s.find('@'); at != std::string_view::npos) {
        digest = s.substr(at + 1);
        if (!digest_syntax(digest)) return false;
        s = s.substr(0, at);
    }
    // A tag follows the last ':' when no '/' comes after it (a ':' before a '/' is a port).
    const std::size_t colon = s.rfind(':');
    const std::size_t slash = s.rfind('/');
    if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
        tag = s.substr(colon + 1);
        if (tag.empty() || tag.size() > 128 || !is_word(tag.front())) return false;
        for (char c : tag)
            if (!is_word(c) && c != '.' && c != '-') return false;
        s = s.substr(0, colon);
    }
    nm = s;
    return name(s);
}

std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// What the digest library says of a digest the grammar matched: only sha256, sha384 and sha512
// in lower-case hex of their exact length are valid; another algorithm is "unsupported" when it
// is well formed (lower-case words joined by '.', '+', '_' or '-'; an encoded part of letters,
// digits, '=', '_' and '-'), else the format is invalid.
std::string digest_problem(std::string_view d) {
    const std::size_t c = d.find(':');
    const std::string_view alg = d.substr(0, c), enc = d.substr(c + 1);
    const std::size_t want = alg == "sha256"   ? 64
                             : alg == "sha384" ? 96
                             : alg == "sha512" ? 128
                                               : 0;
    if (want == 0) {
        bool well_formed = true;
        for (std::size_t i = 0; well_formed;) {
            const std::size_t b = i;
            while (i < alg.size() && is_lower_alnum(alg[i]))
                ++i;
            if (i == b) well_formed = false;
            if (i == alg.size()) break;
            if (alg[i] != '.' && alg[i] != '+' && alg[i] != '_' && alg[i] != '-')
                well_formed = false;
            ++i;
        }
        for (char ch : enc)
            well_formed = well_formed && (is_alnum(ch) || ch == '=' || ch == '_' || ch == '-');
        return well_formed ? "unsupported digest algorithm" : "invalid checksum digest format";
    }
    if (enc.size() != want || !std::all_of(enc.begin(), enc.end(), is_lower_hex))
        return "invalid checksum digest format";
    return {};
}

constexpr std::string_view docker_domain = "docker.io";

struct Views {
    std::string_view domain, path, tag, digest;
};

// The check parse() and reference_problem() share: "" when `s` is a reference (and then, when
// `out` is given, its parts as views into `s`), else the reason.
std::string check(std::string_view s, Views* out) {
    if (s.size() == 64 && std::all_of(s.begin(), s.end(), is_lower_hex))
        return "invalid repository name (" + std::string(s) +
               "), cannot specify 64-byte hexadecimal strings";
    // The domain as written: the first component, when it has a '.' or ':' or is localhost.
    std::string_view written = {}, rest = s;
    if (const std::size_t slash = s.find('/'); slash != std::string_view::npos) {
        const std::string_view first = s.substr(0, slash);
        if (first.find_first_of(".:") != std::string_view::npos || first == "localhost") {
            written = first;
            rest = s.substr(slash + 1);
        }
    }
    std::string_view dom = written.empty() ? docker_domain : written;
    if (dom == "index.docker.io") dom = docker_domain;
    // The library checks the case of everything up to the first ':' after the domain (a digest's
    // algorithm included) before it parses.
    const std::string_view remote = rest.substr(0, rest.find(':'));
    if (std::any_of(remote.begin(), remote.end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
        return "invalid reference format: repository name must be lowercase";
    // The normalised reference, as the parser sees it, in a reused buffer (no allocation per
    // reference checked).
    thread_local std::string full;
    full.assign(dom);
    full += '/';
    if (dom == docker_domain && rest.find('/') == std::string_view::npos) full += "library/";
    full += rest;
    std::string_view nm, tag, digest;
    if (!reference_syntax(full, nm, tag, digest)) {
        const std::string lower = ascii_lower(full);
        std::string_view n2, t2, d2;
        return reference_syntax(lower, n2, t2, d2) ? "repository name must be lowercase"
                                                   : "invalid reference format";
    }
    if (nm.size() > 255) return "repository name must not be more than 255 characters";
    if (!digest.empty())
        if (std::string why = digest_problem(digest); !why.empty()) return why;
    if (out) {
        // Tag and digest lie at the end of `s` as at the end of `full`.
        std::size_t end = s.size();
        if (!digest.empty()) {
            out->digest = s.substr(end - digest.size());
            end -= digest.size() + 1;
        }
        if (!tag.empty()) {
            out->tag = s.substr(end - tag.size(), tag.size());
            end -= tag.size() + 1;
        }
        const std::string_view written_name = s.substr(0, end);
        // A first component that is no valid domain matched as a path component.
        if (!written.empty() && domain(written)) {
            out->domain = written;
            out->path = written_name.substr(written.size() + 1);
        } else {
            out->path = written_name;
        }
    }
    return {};
}

} // namespace

std::string Reference::name() const {
    return domain.empty() ? path : domain + "/" + path;
}

std::string Reference::str() const {
    std::string s = name();
    if (!tag.empty()) s += ":" + tag;
    if (!digest.empty()) s += "@" + digest;
    return s;
}

Result<Reference> parse(std::string_view s) {
    Views v;
    if (std::string why = check(s, &v); !why.empty()) return fail(Error::invalid(std::move(why)));
    return Reference{std::string(v.domain), std::string(v.path), std::string(v.tag),
                     std::string(v.digest)};
}

std::string reference_problem(std::string_view s) {
    return check(s, nullptr);
}

Reference normalize(Reference r) {
    if (r.domain.empty() || r.domain == "index.docker.io") r.domain = docker_domain;
    if (r.domain == docker_domain && r.path.find('/') == std::string::npos)
        r.path = "library/" + r.path;
    if (r.tag.empty() && r.digest.empty()) r.tag = "latest";
    return r;
}

} // namespace kpkg::oci
