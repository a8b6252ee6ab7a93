// pko/regex: the regular expressions of OpenAPI `pattern` (Go's regexp, RE2 syntax), matched in
// time linear in the input by core's engine (core/regex.hpp, a Pike VM: no
// backtracking), so a hostile pattern cannot hang.
// Differences from Go: (?i) folds ASCII letters only, and Unicode classes (\pL, \p{Greek}) are
// refused rather than approximated.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kpkg/core/result.hpp"

namespace kpkg::pko {

class Regex {
public:
    // Compiles an RE2/Go pattern. Errors read as Go's: "error parsing regexp: missing closing ):
    // `(a`". Lookarounds and backreferences are refused (RE2 has none); repeat counts above 1000
    // and programs above a size limit are refused.
    static Result<Regex> compile(std::string_view pattern);

    // Whether the pattern matches anywhere in `text` (Go's MatchString). Runs in
    // O(text size x program size) steps (re::Budget), taken from `steps_left`, which the
    // caller shares between the searches of one validation; too_costly when they run out.
    enum class Outcome { match, no_match, too_costly };
    Outcome search(std::string_view text, std::uint64_t& steps_left) const;

    Regex(Regex&&) noexcept;
    Regex& operator=(Regex&&) noexcept;
    ~Regex();

    struct Prog;

private:
    Regex() = default;
    std::unique_ptr<Prog> prog_;
};

} // namespace kpkg::pko
