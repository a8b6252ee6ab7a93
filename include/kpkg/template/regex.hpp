// Regular expressions in the syntax of Go's regexp (RE2), for Sprig's regex functions and
// Package Operator's getFileGlob. Matching is leftmost-first (Perl-like, as Go's), over UTF-8
// runes, by a Pike VM: time linear in the input for a given expression, no recursion over the
// input, so a hostile expression cannot hang or exhaust the stack.
//
// Supported: literals, . [...] [^...] [[:alpha:]] \d \D \s \S \w \W, groups ( ) (?: ) (?P<n> )
// (?<n> ), flags (?imsU) and (?imsU: ), alternation, * + ? {n} {n,} {n,m} (at most 1000) and
// their lazy forms, ^ $ \A \z \b \B, escapes \a \f \t \n \r \v \x41 \x{263a} \123 \Q...\E and
// escaped punctuation. Case folding (?i) is ASCII-only. Unicode classes (\pL, \p{Greek},
// [[:^alpha:]] aside) are refused with a clear error rather than matched differently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kpkg::tmpl::re {

// A syntax error, worded as Go's: "error parsing regexp: missing closing ): `(a`".
struct SyntaxError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Matching refused for its cost: more steps than a linear scan of the input would need several
// times over (repeated searches going quadratic), or a result beyond the given size.
struct LimitError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Program;

class Regex {
public:
    // Throws SyntaxError.
    explicit Regex(std::string_view pattern);
    ~Regex();
    Regex(Regex&&) noexcept;
    Regex& operator=(Regex&&) noexcept;

    // Capture groups, the whole match (group 0) included.
    std::size_t groups() const;
    // The name of each group ("" when unnamed), index 0 for the whole match.
    const std::vector<std::string>& names() const;

    // All matching throws LimitError past its step budget (see LimitError).
    // The leftmost-first match starting at or after byte `from`: caps gets 2*groups() offsets
    // (-1 for a group that did not take part). False when there is none.
    bool search(std::string_view s, std::size_t from, std::vector<std::ptrdiff_t>& caps) const;
    // `max_steps` (0: the default budget) lowers the budget of this call.
    bool matches(std::string_view s, std::uint64_t max_steps = 0) const;

    // Go's FindAllStringIndex(s, n) (n < 0: all): the [begin, end) offsets of successive
    // non-overlapping matches, an empty match right after a previous one skipped. With caps, each
    // entry is a full capture vector.
    std::vector<std::vector<std::ptrdiff_t>> find_all(std::string_view s, std::int64_t n) const;
    // ReplaceAllString (with $1 ${name} expansion) or ReplaceAllLiteralString; LimitError when
    // the result grows beyond max_bytes.
    std::string replace_all(std::string_view s, std::string_view repl, bool literal,
                            std::size_t max_bytes = SIZE_MAX) const;
    // Split(s, n).
    std::vector<std::string> split(std::string_view s, std::int64_t n) const;

private:
    std::unique_ptr<Program> prog_;
};

// The rune of UTF-8 text `s` at byte i and its width; invalid UTF-8 is U+FFFD, one byte wide (as
// Go's utf8.DecodeRuneInString).
char32_t decode_rune(std::string_view s, std::size_t i, std::size_t& width);

// regexp.QuoteMeta: every byte of `\.+*?()|[]{}^$` escaped with a backslash.
std::string quote_meta(std::string_view s);

// gobwas/glob with '/' as the separator, as Package Operator's getFileGlob compiles its pattern:
// * (any run of characters but '/'), ** (any run), ? (one character but '/'), [abc] [a-z] [!a-z],
// {a,b} (alternatives, nestable), \ escapes. Throws SyntaxError for an unclosed [ or {.
class Glob {
public:
    explicit Glob(std::string_view pattern);
    bool match(std::string_view path) const;

private:
    Regex re_;
};

} // namespace kpkg::tmpl::re
