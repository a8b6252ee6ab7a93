// io/go: the Go encodings whose bytes opm (and sigs.k8s.io/yaml under it) writes, in one place,
// so that `kpkg bundle render`, `kpkg catalog render`, the catalog loader and CEL spell values
// exactly as Go does:
// - gopkg.in/yaml.v2's typing of plain scalars (which text reads as a bool, an int, a float,
//   null or a timestamp), its key order and its emitter (Marshal of a JSON document);
// - encoding/json: string escaping, json.Marshal of a decoded value (keys sorted), json.Indent,
//   json.Compact, and how a JSON number reads back as a float64;
// - strconv's float64 text (encoding/json's and FormatFloat 'g'/'f' with the shortest digits);
// - encoding/base64 (StdEncoding);
// - strconv.Quote of a string (fmt's %q), as Go templates and Kubernetes' field errors print it.
// Implemented in src/io/go_json.cpp, src/io/go_yaml.cpp and src/io/go_quote.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/io/node.hpp"

namespace kpkg::io::go {

// ------------------------------------------------------------------------------------------------
// Numbers (strconv)

// A finite float64 as encoding/json writes it: the shortest digits that read back as v, laid
// out without an exponent from 1e-6 up to below 1e21 (1.2345678901234567e19 is
// "12345678901234567000"), else in e-form with a two-digit negative exponent shortened
// ("1e-07" -> "1e-7"; "1e+21" stays); zero keeps its sign ("-0").
void append_float(std::string& out, double v);

// strconv.FormatFloat(v, 'f', -1, 64) of a finite v: the shortest digits that read back as v,
// laid out without an exponent.
void append_fixed(std::string& out, double v);

// strconv.FormatFloat(v, 'g', -1, bits) for bits 64 or 32 (v first rounded to a float32): the
// shortest digits, in e-form ("1e+06", "1.5e-05", "1.23456789e+08") when the exponent is below
// -4 or from 6 on, else positional ("-0", "100000", "0.0001"); "+Inf", "-Inf", "NaN" for the
// non-finite values. (yaml.v2 writes floats so; sigs.k8s.io/yaml spells a float mapping key so
// with 32 bits; CEL's string(double) is the 64-bit form.)
void append_float_g(std::string& out, double v, int bits = 64);

// strconv.ParseInt(s, 0, 64) (base0: sign, then 0x/0o/0b or a leading 0 for octal) or
// strconv.ParseInt(s, 10, 64); no underscores. Nothing on a syntax error or overflow.
std::optional<std::int64_t> parse_int(std::string_view s, bool base0 = true);
// strconv.ParseUint(s, 0, 64): no sign; prefixes as parse_int.
std::optional<std::uint64_t> parse_uint(std::string_view s);
// strconv.ParseFloat(s, 64) of decimal text: an overflow is an error (Go returns ±Inf with
// ErrRange), an underflow reads as zero.
std::optional<double> parse_float(std::string_view s);

// ------------------------------------------------------------------------------------------------
// Strings (strconv)

// strconv.Quote(s) (fmt's %q of a string) for the text kpkg meets: in double quotes, '"' and '\\'
// escaped, \a \b \f \n \r \t \v by name, other ASCII control bytes and DEL as \xNN (lower-case
// hex); every byte from 0x80 up is kept as it is (Go would also escape invalid UTF-8 as \xNN and
// non-printable characters as \uNNNN; kpkg does not). Not cut: messages that quote input for
// people use text::quote, which cuts long values and escapes bytes that are not UTF-8.
std::string quote(std::string_view s);

// ------------------------------------------------------------------------------------------------
// encoding/json

// A JSON string literal (quotes included) as encoding/json (Go 1.22 and later) writes it: '"' and
// '\' escaped, \b \f \n \r \t by name, other control characters as \u00XX, U+2028 and U+2029
// escaped, each byte of invalid UTF-8 as \ufffd, and with `escape_html` also '<', '>' and '&'
// (as \u003c, \u003e, \u0026). Plain ASCII runs are scanned eight bytes at a time.
void append_string(std::string& out, std::string_view s, bool escape_html);

// The size of append_string(out, s, false)'s output, without writing it.
std::size_t string_size(std::string_view s);

// The float64 spelling (append_float) of a JSON number literal as encoding/json reads it into an
// interface{}; false when it overflows a float64. Integers of up to 15 digits are kept as written.
bool append_json_number(std::string& out, std::string_view literal);

// json.Marshal of the value opm holds after reading a YAML or JSON node through sigs.k8s.io/yaml
// and Kubernetes' unstructured decoding: compact, keys sorted bytewise (or kept in document
// order), plain YAML scalars typed as yaml.v2 types them, integers as integers and other
// numbers as a float64.
class Marshaller {
public:
    Marshaller(std::string& out, bool escape_html) : out_(out), html_(escape_html) {}

    // Appends the value of n; false (with the output partly written) when a value has no JSON
    // form (.inf, .nan).
    bool value(const Node& n);

    // Keys in document order, and number literals of JSON (not plain YAML) as written: the
    // json.RawMessage bytes of a JSON file.
    bool keep_order = false;

    // Streams the output as base64 into `dest` instead of keeping it: whole 3-byte groups move
    // from the output buffer to `dest` whenever it holds 48 KiB, so the JSON of a large object
    // never exists whole.
    void stream_base64_to(std::string* dest) { base64_ = dest; }
    // Encodes what is left (with padding); call once the value is written.
    void finish_base64();

private:
    bool mapping(const Node& n);
    bool scalar(const Node& n);
    void flush_base64();

    std::string& out_;
    bool html_;
    std::string* base64_ = nullptr;
    std::vector<const MapEntry*> scratch_;
};

// json.Marshal (with HTML escaping) of a node, as Marshaller writes it.
bool append_marshal(std::string& out, const Node& node, bool escape_html = true);

// One scalar node's JSON form once Go holds it (see Marshaller): `literal` when null, a boolean
// or a number was appended to out; `string` when the value is the node's text (nothing
// appended); `invalid` for a value without a JSON form (.inf, .nan).
enum class JsonScalar { literal, string, invalid };
JsonScalar append_scalar(std::string& out, const Node& scalar);

// The end of the JSON string token starting at s[i] == '"' (one past its closing quote), or
// npos when it is not closed.
std::size_t skip_string(std::string_view s, std::size_t i);
// The end of the JSON value starting at s[i] (after blanks), or npos when there is none.
std::size_t skip_value(std::string_view s, std::size_t i);
// json.Compact: the JSON text without insignificant white space.
std::string compact(std::string_view json);

// json.Indent(dst, src, prefix, "    ") of a compact JSON value, where the prefix is `depth`
// levels of four spaces, written to any `out` with put(char), put(const char*, size_t) and
// spaces(size_t). String tokens are copied whole with one put.
template <class Out>
void indent(Out& out, std::string_view compact_json, int depth) {
    auto newline = [&](int d) {
        out.put('\n');
        out.spaces(static_cast<std::size_t>(d) * 4);
    };
    const char* p = compact_json.data();
    const char* const end = p + compact_json.size();
    while (p < end) {
        const char c = *p;
        switch (c) {
        case '"': {
            const std::size_t e =
                skip_string(compact_json, static_cast<std::size_t>(p - compact_json.data()));
            const char* q = e == std::string_view::npos ? end : compact_json.data() + e;
            out.put(p, static_cast<std::size_t>(q - p));
            p = q;
            continue;
        }
        case '{':
        case '[':
            if (p + 1 < end && (p[1] == '}' || p[1] == ']')) {
                out.put(p, 2);
                p += 2;
                continue;
            }
            out.put(c);
            newline(++depth);
            break;
        case '}':
        case ']':
            newline(--depth);
            out.put(c);
            break;
        case ',':
            out.put(',');
            newline(depth);
            break;
        case ':':
            out.put(": ", 2);
            break;
        default: {
            // A number or a literal: up to the next structural character.
            const char* q = p + 1;
            while (q < end && *q != ',' && *q != '}' && *q != ']' && *q != ':')
                ++q;
            out.put(p, static_cast<std::size_t>(q - p));
            p = q;
            continue;
        }
        }
        ++p;
    }
}

// indent() into a string.
void append_indented(std::string& out, std::string_view compact_json, int depth = 0);

// ------------------------------------------------------------------------------------------------
// encoding/base64

// Standard base64 with padding (base64.StdEncoding, as encoding/json writes a []byte).
void append_base64(std::string& out, std::string_view data);

// base64.StdEncoding decoding: padding required, CR and LF ignored. Appends the bytes to
// `decoded` when it is not null; on error `at` is the offset of the offending character (the
// size of `in` when the input ends too early).
bool decode_base64(std::string_view in, std::string* decoded, std::size_t& at);

// ------------------------------------------------------------------------------------------------
// gopkg.in/yaml.v2

// The Go type yaml.v2 gives a scalar when decoding into interface{} (a timestamp is kept as its
// text by sigs.k8s.io/yaml, so it prints as a string).
enum class Type : std::uint8_t { null, boolean, int64, uint64, float64, string, timestamp };

struct Scalar {
    Type type = Type::string;
    bool b = false;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double f = 0;
};

// yaml.v2's resolve() of an untagged plain scalar: YAML 1.1 booleans (y, yes, on, ... in three
// cases), null and ~ and the empty scalar, .inf/.nan, base-0 integers with underscores (int64,
// else uint64), floats of its pattern, timestamps; anything else a string.
Scalar resolve(std::string_view plain);

// The value a scalar node holds once Go has it: plain YAML scalars typed by resolve(), JSON and
// tagged scalars by their kind.
Scalar scalar_of(const Node& n);

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ : the float syntax yaml.v2 accepts.
bool is_float_syntax(std::string_view s);

// Whether yaml.v2 reads a plain scalar as a timestamp ("2006-1-2", with a time and zone...).
bool is_timestamp(std::string_view s);

// yaml.v2's keyList.Less for two string keys: letters compare as runes, runs of digits as
// numbers, and a letter sorts after anything else.
bool key_less(std::string_view a, std::string_view b);

// yaml.v2's Marshal of a JSON document (sigs.k8s.io/yaml's JSONToYAML): keys in key_less order,
// strings plain unless they would read back as another type (then double-quoted), literal
// blocks for text with line breaks, long lines folded at 80 columns, empty collections in flow
// style. `json_doc` is the document as io::parse_json reads it; appended without a leading "---".
void append_yaml(std::string& out, const Node& json_doc);

} // namespace kpkg::io::go
