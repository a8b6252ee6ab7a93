// Go's encoding/json spellings shared by `kpkg bundle render` and `kpkg catalog render`: the bytes
// opm writes for strings, float64 numbers and []byte values, so both renders match it exactly.
#pragma once

#include <string>
#include <string_view>

namespace kpkg::io::go {

// A JSON string literal (quotes included) as encoding/json (Go 1.22 and later) writes it: '"' and
// '\' escaped, \b \f \n \r \t by name, other control characters as \u00XX, U+2028 and U+2029
// escaped, each byte of invalid UTF-8 as \ufffd, and with `escape_html` also '<', '>' and '&'
// (as \u003c, \u003e, \u0026). Plain ASCII runs are scanned eight bytes at a time.
void append_string(std::string& out, std::string_view s, bool escape_html);

// A finite float64 as encoding/json writes it: the shortest digits that read back as v, laid
// out without an exponent from 1e-6 up to below 1e21 (1.2345678901234567e19 is
// "12345678901234567000"), else in e-form with a two-digit negative exponent shortened
// ("1e-07" -> "1e-7"; "1e+21" stays); zero keeps its sign ("-0").
void append_float(std::string& out, double v);

// strconv.FormatFloat(v, 'f', -1, 64) of a finite v: the shortest digits that read back as v,
// laid out without an exponent.
void append_fixed(std::string& out, double v);

// strconv.FormatFloat(v, 'g', -1, 32): v rounded to a float32, its shortest digits, in e-form
// ("1e+06", "1.5e-05") when the exponent is below -4 or from 6 on; "+Inf", "-Inf", "NaN" for
// the non-finite values. (How sigs.k8s.io/yaml spells a YAML float used as a mapping key.)
void append_float32_g(std::string& out, double v);

// Standard base64 with padding (base64.StdEncoding, as encoding/json writes a []byte).
void append_base64(std::string& out, std::string_view data);

} // namespace kpkg::io::go
