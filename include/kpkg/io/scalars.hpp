// Scalar and text helpers of the io layer (defined in src/io/node.cpp) that other parts of the
// library share: YAML 1.2 core-schema resolution, number literals, UTF-8 and how characters are
// named in messages.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "kpkg/io/node.hpp"

namespace kpkg::io::detail {

// The length of the valid UTF-8 sequence at p (shortest form, no surrogates, at most
// U+10FFFF) with its code point in cp, or 0 when the bytes there are not one.
std::size_t utf8_decode(const char* p, const char* end, char32_t& cp);
// cp encoded as UTF-8.
void append_utf8(std::string& out, char32_t cp);

bool is_yaml_null(std::string_view s);
bool is_yaml_bool(std::string_view s);
bool is_yaml_int(std::string_view s);
bool is_yaml_float(std::string_view s);
// The kind the core schema gives a plain scalar.
Kind resolve_plain(std::string_view s);
std::optional<std::string> decimal_integer(std::string_view s);
std::optional<double> parse_float(std::string_view s);

std::string hex_byte(unsigned char c); // "0x1F"
std::string code_point(char32_t cp);   // "U+001F"

} // namespace kpkg::io::detail
