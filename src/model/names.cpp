#include "kpkg/model/names.hpp"

namespace kpkg::model {

namespace {

bool lower_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// The label rules on one part (the whole name, or a part of a subdomain between dots) that
// starts at index `at` of the name.
void check_part(std::string_view s, std::size_t at, Dns1123Check& c) {
    if (s.empty() || !lower_alnum(s.front()) || !lower_alnum(s.back())) c.bad_edge = true;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (lower_alnum(s[i]) || s[i] == '-') continue;
        if (!c.bad_character) c.first_bad = at + i;
        c.bad_character = true;
    }
}

} // namespace

Dns1123Check check_dns1123_label(std::string_view name) {
    Dns1123Check c;
    c.empty = name.empty();
    c.too_long = name.size() > dns1123_label_max;
    check_part(name, 0, c);
    return c;
}

Dns1123Check check_dns1123_subdomain(std::string_view name) {
    Dns1123Check c;
    c.empty = name.empty();
    c.too_long = name.size() > dns1123_subdomain_max;
    for (std::size_t b = 0;;) {
        const std::size_t e = name.find('.', b);
        check_part(name.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b), b,
                   c);
        if (e == std::string_view::npos) break;
        b = e + 1;
    }
    return c;
}

std::string dns1123_problem(const Dns1123Check& c, bool subdomain) {
    if (c.empty) return "must not be empty";
    if (c.too_long)
        return subdomain ? "must be at most 253 characters" : "must be at most 63 characters";
    if (c.bad_character)
        return subdomain ? "must consist of lower-case letters, digits, '-' and '.'"
                         : "must consist of lower-case letters, digits and '-'";
    if (c.bad_edge)
        return subdomain
                   ? "must start and end with a lower-case letter or digit, also around each '.'"
                   : "must start and end with a lower-case letter or digit";
    return {};
}

} // namespace kpkg::model
