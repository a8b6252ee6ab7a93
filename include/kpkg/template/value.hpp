// Values of Go's text/template as kpkg evaluates them: what an interface{} holds after a JSON
// round trip (nil, bool, float64, string, []interface{}, map[string]interface{}), plus Go's int
// (number literals, len, index results). Lists and maps are shared, as Go's slices and maps are
// references: copying a Value copies a pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/io/node.hpp"

namespace kpkg::tmpl {

class Value;
using List = std::vector<Value>;
using Dict = std::map<std::string, Value, std::less<>>; // keys sorted as Go's fmt and range sort

class Value {
public:
    enum class Type : std::uint8_t { nil, boolean, integer, floating, string, list, dict };

    Value() = default;
    static Value boolean(bool b);
    static Value integer(std::int64_t i);
    static Value floating(double f);
    static Value string(std::string s);
    static Value list(List items = {});
    static Value dict(Dict entries = {});
    // A Go map[string]string (what Package Operator puts in place of missing labels and
    // annotations): `index` of a missing key gives "" (the zero value), not nil.
    static Value string_dict(Dict entries = {});
    bool is_string_dict() const { return string_dict_; }

    Type type() const { return type_; }
    bool is_nil() const { return type_ == Type::nil; }
    bool is_string() const { return type_ == Type::string; }
    bool is_list() const { return type_ == Type::list; }
    bool is_dict() const { return type_ == Type::dict; }
    bool is_number() const { return type_ == Type::integer || type_ == Type::floating; }

    bool as_bool() const { return b_; }
    std::int64_t as_int() const { return i_; }
    double as_float() const { return f_; }
    const std::string& as_string() const { return s_; }
    // Lists and maps: the shared contents (never null for those types).
    List& items() const { return *l_; }
    Dict& entries() const { return *d_; }

    // Go's type name as fmt's %T and text/template's messages spell it: "float64", "int",
    // "string", "bool", "[]interface {}", "map[string]interface {}", "<nil>".
    const char* go_type() const;

    // text/template's truth: false for nil, false, 0, "" and empty lists and maps.
    bool truth() const;

    // Deep equality (lists and maps element by element; int and float64 never equal).
    friend bool operator==(const Value& a, const Value& b);

private:
    Type type_ = Type::nil;
    bool b_ = false;
    bool string_dict_ = false;
    std::int64_t i_ = 0;
    double f_ = 0;
    std::string s_;
    std::shared_ptr<List> l_;
    std::shared_ptr<Dict> d_;
};

// A document as Package Operator hands it to templates: through encoding/json, so every number is
// a float64 (integers included), objects are maps, arrays lists, null is nil.
Value from_json(const io::Node& node);

// Maps and lists nested deeper than this cannot be printed, compared or encoded (a map can be
// made to contain itself with Sprig's set): std::length_error, as for output beyond a limit.
inline constexpr std::size_t kMaxNesting = 1000;

// fmt's %v (and Fprint) of v: maps as map[k:v ...] in key order, lists as [a b], nil inside a
// container as <nil>, floats in %g's shortest form (1e+06), strings unquoted. Throws
// std::length_error past kMaxNesting or when `out` grows beyond max_bytes.
void append_go(std::string& out, const Value& v, std::size_t max_bytes = SIZE_MAX);
// The same as a string, refused (std::length_error) beyond max_bytes.
std::string go_string(const Value& v, std::size_t max_bytes = std::size_t{64} << 20);
// For messages: at most about 200 bytes, cut with "...".
std::string go_brief(const Value& v);

} // namespace kpkg::tmpl
