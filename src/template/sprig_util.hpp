// Helpers shared by the Sprig and Package Operator function files (src/template/sprig*.cpp,
// pko.cpp): Go's conversions of arguments and results as Sprig makes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/template/funcs.hpp"
#include "kpkg/template/value.hpp"

namespace kpkg::tmpl {

using Args = std::span<const Value>;

namespace sprig {

// Sprig's strval: strings as they are, anything else as fmt's %v.
std::string strval(const Value& v);
// A Go `int` / `bool` / map[string]interface{} parameter: text/template converts only those.
std::int64_t arg_int(Args a, std::size_t i);
bool arg_bool(Args a, std::size_t i);
const Value& arg_dict(Args a, std::size_t i);
// spf13/cast's ToInt64 and ToFloat64 as Sprig's arithmetic uses them.
std::int64_t to_int64(const Value& v);
double to_float64(const Value& v);

// Go's int64 arithmetic, which wraps around in two's complement where C++'s would be undefined:
// MinInt64 / -1 is MinInt64 and MinInt64 % -1 is 0 (the divisor is not 0: the caller's panic).
inline std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_sub(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_div(std::int64_t a, std::int64_t b) {
    return b == -1 ? wrap_sub(0, a) : a / b;
}
inline std::int64_t wrap_mod(std::int64_t a, std::int64_t b) {
    return b == -1 ? 0 : a % b;
}
// Go's int64(f) of a float64 as amd64 computes it: truncated toward zero; NaN, the infinities and
// anything outside int64's range give MinInt64 (the CPU's "integer indefinite").
std::int64_t float_to_int64(double f);

// strconv.ParseInt(s, base, 64) for base 0 (prefixes 0x/0o/0b/0, and underscores between digits)
// or 2..36: the value and whether it failed; out of range, the value is the clamped bound.
struct ParsedInt {
    std::int64_t value = 0;
    enum class Err : std::uint8_t { none, syntax, range } err = Err::none;
};
ParsedInt parse_int(std::string_view s, int base);
// Sprig's strslice: a list's non-nil items as strings; a scalar as a one-item list.
std::vector<std::string> strslice(const Value& v);
bool is_space(unsigned char c);
std::string trim_space(std::string_view s);
std::string replace_all(std::string s, std::string_view from, std::string_view to);
// Lists built from a count (until, untilStep, seq) stop here (and at the step limit): a million
// items, some 100 MB of values.
inline constexpr std::size_t kMaxListItems = std::size_t{1} << 20;
std::size_t max_list_items(const Context& c);

// base64.StdEncoding.DecodeString; false with Go's error offset in `at`.
bool b64_decode(const std::string& in, std::string& out, std::size_t& at);
// The list argument of a list function; FuncError "Cannot find FN on type T" otherwise.
const List& list_arg(const Value& v, const char* fn);
Value str(std::string s);
// encoding/json's Marshal of a Value (map keys sorted, HTML characters escaped when `html`);
// FuncError for a value without a JSON form (NaN, infinities) or nested too deeply.
void marshal(std::string& out, const Value& v, std::size_t depth, std::size_t max, bool html);
// reflect.Kind's name, as Sprig's kindOf spells it.
const char* kind_of(const Value& v);

} // namespace sprig

// The Sprig functions beyond the first batch (src/template/sprig_more.cpp).
void add_sprig_more(Funcs& f);

} // namespace kpkg::tmpl
