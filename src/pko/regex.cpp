// pko/regex: OpenAPI `pattern`s matched with the template area's Go regexp engine (one engine
// for the project: a Pike VM, linear in the input).
#include "kpkg/pko/regex.hpp"

#include "kpkg/template/regex.hpp"

namespace kpkg::pko {

struct Regex::Prog {
    tmpl::re::Regex re;
};

Result<Regex> Regex::compile(std::string_view pattern) {
    try {
        Regex r;
        r.prog_ = std::make_unique<Prog>(Prog{tmpl::re::Regex(pattern)});
        return r;
    } catch (const tmpl::re::SyntaxError& e) {
        return fail(Error::invalid(e.what()));
    } catch (const tmpl::re::LimitError& e) {
        return fail(Error::invalid(e.what()));
    }
}

Regex::Outcome Regex::search(std::string_view text, std::uint64_t& steps_left) const {
    tmpl::re::Budget budget(steps_left);
    Outcome o = Outcome::too_costly;
    try {
        o = prog_->re.matches(text, &budget) ? Outcome::match : Outcome::no_match;
    } catch (const tmpl::re::LimitError&) {
    }
    steps_left = budget.left;
    return o;
}

Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

} // namespace kpkg::pko
