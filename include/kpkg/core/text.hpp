// Small string helpers used across areas.
#pragma once

#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kpkg::text {

// trim and split return views into `s`: given a temporary std::string the views would dangle,
// so such calls do not compile (name the string first). Lvalue strings, string views and
// literals are taken as they are.
std::string_view trim(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);

// S deduced from a forwarding reference to a std::string rvalue (an lvalue deduces a reference).
template <class S>
concept string_temporary = std::same_as<std::remove_cv_t<S>, std::string>;

template <string_temporary S>
std::string_view trim(S&& temporary) = delete;
template <string_temporary S>
std::vector<std::string_view> split(S&& temporary, char sep) = delete;

std::string join(const std::vector<std::string>& parts, std::string_view sep);
bool starts_with(std::string_view s, std::string_view prefix);

// Levenshtein distance (insert, delete, substitute each cost 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if one is close enough to be a plausible typo, else nothing:
// an edit distance of at most a third of the longer word (at least 1) and less than the length
// of `word`, leading "-"/"--" of flags ignored; failing that, the one candidate `word` (three
// characters or more) abbreviates. Ties go to the first candidate.
std::optional<std::string> closest(std::string_view word,
                                   const std::vector<std::string>& candidates);

// The longest part of a value from the input that a message shows, in bytes.
inline constexpr std::size_t max_shown = 256;

// `s` in double quotes for messages, as Go's %q shows what matters: '"' and '\\' escaped, \t \n
// \r by name, other control bytes, C1 controls and bytes that are not UTF-8 as \xNN, other
// UTF-8 as it is. A value longer than `max` bytes is cut at a character boundary and its size
// given: "abc..." (1000000 bytes). Every message that quotes input goes through this (or shown).
std::string quote(std::string_view s, std::size_t max = max_shown);

// `s` unquoted (names in the lists of a message), escaped and cut as quote() does, without
// escaping quotes or backslashes: abc... (1000000 bytes).
std::string shown(std::string_view s, std::size_t max = max_shown);

// Appends at most `limit` bytes of `s` to `out` (never splitting a character), escaped as
// quote() does; `quote` (0 for none) and '\\' are escaped only when `quote` is not 0. Returns
// the number of bytes of `s` used.
std::size_t append_escaped(std::string& out, std::string_view s, std::size_t limit, char quote);

// The length of the well-formed UTF-8 sequence at s[i] (1 for ASCII), or 0 when the bytes there
// are not one (overlong forms, surrogates and values past U+10FFFF are not).
std::size_t utf8_length(std::string_view s, std::size_t i);

// The byte length of the white-space character (Go's unicode.IsSpace: ASCII blanks, U+0085,
// U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) starting at s[i], or 0.
std::size_t go_space_at(std::string_view s, std::size_t i);

// Display width of UTF-8 text: code points, not bytes (good enough for names and versions).
std::size_t display_width(std::string_view s);

struct TableOptions {
    // The width to fit (a terminal's): a row wider than this has its widest columns narrowed
    // and their cells wrapped onto continuation lines (at spaces and after commas; a longer
    // word is cut). 0: rows are never wrapped (output to a pipe or file).
    std::size_t width = 0;
    // A cell wider than this does not widen its column: it is written whole and pushes the rest
    // of its own row right, instead of padding every row of the table.
    std::size_t max_pad = 48;
};

// Rows as aligned columns for people: each column as wide as its widest cell (up to max_pad)
// plus two spaces, the last one not padded, no trailing blanks, a newline after every row.
std::string table(const std::vector<std::vector<std::string>>& rows, const TableOptions& opts = {});

// Text for a terminal `width` columns wide: each line longer than that is broken at spaces, never
// inside a word, its continuation lines indented as the line is, or, for a "  NAME  text" line
// (two or more spaces after the first word), to where its text starts. Shorter lines are kept.
std::string wrap(std::string_view text, std::size_t width);

} // namespace kpkg::text
