// pko/regex: OpenAPI `pattern`s matched with core's Go regexp engine (one engine for the
// project: a Pike VM, linear in the input).
#include "kpkg/pko/regex.hpp"

#include "kpkg/core/regex.hpp"

namespace kpkg::pko {

struct Regex::Prog {
    re::Regex re;
};

Result<Regex> Regex::compile(std::string_view pattern) {
    try {
        Regex r;
        r.prog_ = std::make_unique<Prog>(Prog{re::Regex(pattern)});
        return r;
    } catch (const re::SyntaxError& e) {
        return fail(Error::invalid(e.what()));
    } catch (const re::LimitError& e) {
        return fail(Error::invalid(e.what()));
    }
}

Regex::Outcome Regex::search(std::string_view text, std::uint64_t& steps_left) const {
    re::Budget budget(steps_left);
    Outcome o = Outcome::too_costly;
    try {
        o = prog_->re.matches(text, &budget) ? Outcome::match : Outcome::no_match;
    } catch (const re::LimitError&) {
    }
    steps_left = budget.left;
    return o;
}

Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

} // namespace kpkg::pko
