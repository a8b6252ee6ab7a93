// Regular expressions in the syntax of Go's regexp (RE2), for Sprig's regex functions and
// Package Operator's getFileGlob (template) and OpenAPI `pattern`s (pko). Matching is
// leftmost-first (Perl-like, as Go's), over UTF-8 runes, by a Pike VM: time linear in the input for
// a given expression, no recursion over the input, so a hostile expression cannot hang or exhaust
// the stack. Time linear in the input is still input x program size (an expression of 20,000
// instructions against 1 MB is 2e10 steps): every search draws its steps from a Budget, which the
// caller shares between the searches of one piece of work (a template render, a validation), so
// that no sequence of searches can take more than that budget in all.
//
// Why an engine of our own rather than the RE2 library (libre2-dev), measured by
// bench/regex_bench.cpp (kpkg-bench-regex --full, built with -Dbench=true; a 2-core Xeon
// 2.5 GHz shared with other work, load average 6 to 10, so times are above an idle machine's):
// - ordinary expressions over 1 MB: RE2's DFA takes 1-2 ms, this engine 35-85 ms (57-130
//   million steps a second). Templates and configuration values are small, so this matters
//   little, but it is RE2's real advantage, with Unicode classes and full case folding (refused
//   here with a clear error rather than matched differently);
// - the hostile cases: RE2's DFA gives up on large counted repetitions and its NFA is no faster
//   than this engine, and RE2 has no way to count or stop its work: a{1000}x3 then b on 100 KB
//   took it 5.7 s, a{1000}x20 then b on 200 KB 86.7 s, a{1000}x150 on 1 MB 346 s. One budget per
//   render or validation could only be guessed before the call (text size x program size),
//   refusing inputs its DFA would finish at once. Here every step is counted, and the budget
//   (100 million steps) ends each of those cases in 2.7-3.4 s in the same run;
// - start-up: RE2 has a C++ ABI only, so it cannot be dlopen()ed on demand as libcurl is
//   (core/dynlib) without a C shim library of our own; linked, it is loaded by every command:
//   kpkg version took 1.53 ms median as built, 4.14 ms with libre2 preloaded (same run);
// - Go's layer (expansion of $1 and ${name}, FindAll's empty-match rule, Split) would still be
//   ours.
// So the own engine stays, with the shared budget; RE2 remains the way to go should Unicode
// classes be needed.
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

namespace kpkg::re {

// A syntax error, worded as Go's: "error parsing regexp: missing closing ): `(a`".
struct SyntaxError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Matching refused for its cost: its Budget spent, or a result beyond the given size.
struct LimitError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The matching work that several searches may do together. A search takes one step for each
// instruction of the program it follows at each position of the text it scans (1 + captures/16
// while it tracks capture groups), plus the program's size to start; LimitError once the steps
// are spent. At about 50 million steps a second, the default allows some 2 seconds of matching.
struct Budget {
    static constexpr std::uint64_t kDefaultSteps = 100'000'000;
    explicit Budget(std::uint64_t steps = kDefaultSteps) : limit(steps), left(steps) {}
    std::uint64_t limit; // the steps given
    std::uint64_t left;  // the steps not used yet
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

    // All matching draws on `budget` and throws LimitError when it is spent; without one
    // (nullptr), the call has a Budget of its own of the default size.
    // The leftmost-first match starting at or after byte `from`: caps gets 2*groups() offsets
    // (-1 for a group that did not take part). False when there is none.
    bool search(std::string_view s, std::size_t from, std::vector<std::ptrdiff_t>& caps,
                Budget* budget = nullptr) const;
    bool matches(std::string_view s, Budget* budget = nullptr) const;

    // Go's FindAllStringIndex(s, n) (n < 0: all): the [begin, end) offsets of successive
    // non-overlapping matches, an empty match right after a previous one skipped. With caps, each
    // entry is a full capture vector.
    std::vector<std::vector<std::ptrdiff_t>> find_all(std::string_view s, std::int64_t n,
                                                      Budget* budget = nullptr) const;
    // ReplaceAllString (with $1 ${name} expansion) or ReplaceAllLiteralString; LimitError when
    // the result grows beyond max_bytes.
    std::string replace_all(std::string_view s, std::string_view repl, bool literal,
                            std::size_t max_bytes = SIZE_MAX, Budget* budget = nullptr) const;
    // Split(s, n).
    std::vector<std::string> split(std::string_view s, std::int64_t n,
                                   Budget* budget = nullptr) const;

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
    bool match(std::string_view path, Budget* budget = nullptr) const;

private:
    Regex re_;
};

} // namespace kpkg::re
