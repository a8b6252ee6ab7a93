// Kubernetes object names (k8s.io/apimachinery validation): the one check of DNS-1123 labels
// (package names, annotation values) and subdomains (CSV and CRD names). Validators word what it
// finds in their own voice: catalog validation as Kubernetes and opm print it, bundle
// validation in one short clause (dns1123_problem below).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kpkg::model {

// A DNS-1123 label: at most 63 characters of lower-case letters, digits and '-', starting and
// ending with a letter or digit. A subdomain: at most 253 characters of labels joined by '.'.
inline constexpr std::size_t dns1123_label_max = 63;
inline constexpr std::size_t dns1123_subdomain_max = 253;

// What is wrong with a name; all false when it is valid. Each flag is found independently, so a
// name can have several.
struct Dns1123Check {
    bool empty = false;
    bool too_long = false;      // longer than the maximum of its kind
    bool bad_character = false; // a character other than a-z, 0-9, '-' (and '.' in a subdomain)
    std::size_t first_bad = std::string_view::npos; // the index of the first such character
    bool bad_edge = false; // does not start and end with a letter or digit (in a subdomain:
                           // some part between dots is empty or does not)
    // The name matches the pattern of its kind (length aside): neither empty nor a bad character
    // nor a bad edge.
    bool pattern_ok() const { return !empty && !bad_character && !bad_edge; }
    bool ok() const { return pattern_ok() && !too_long; }
};

Dns1123Check check_dns1123_label(std::string_view name);
Dns1123Check check_dns1123_subdomain(std::string_view name);

// The first problem of `c` as one clause without a subject, "" when there is none: "must not be
// empty", "must be at most 63 characters", "must consist of lower-case letters, digits and
// '-'" (subdomain: "..., '-' and '.'"), "must start and end with a lower-case letter or digit"
// (subdomain: "..., also around each '.'"). `subdomain` says which kind `c` was checked as.
std::string dns1123_problem(const Dns1123Check& c, bool subdomain);

} // namespace kpkg::model
