// Package Operator's config schema: the structural-schema checks of apiextensions-apiserver, and
// admission (prune, default, validate as kube-openapi's validator does), with the messages of
// k8s.io/apimachinery's field.Error.
#include "kpkg/pko/schema.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "kpkg/core/text.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/pko/regex.hpp"

namespace kpkg::pko {

namespace {

using io::Node;
namespace go = io::go;
using go::quote; // strconv.Quote, as Kubernetes' field errors print values

// ------------------------------------------------------------------------------------------------
// field.Path and field.Error

struct Path {
    std::string s;
    Path child(std::string_view name) const {
        if (s.empty()) return {std::string(name)};
        return {s + "." + std::string(name)};
    }
    Path key(std::string_view k) const { return {s + "[" + std::string(k) + "]"}; }
    Path index(std::size_t i) const { return {s + "[" + std::to_string(i) + "]"}; }
};

// A value from the configuration in a message: quote()d whole when short; a longer one as its
// first text::max_shown bytes (whole characters), "..." and its size, as text::quote shows one.
std::string quote_value(std::string_view s) {
    if (s.size() <= text::max_shown) return quote(s);
    std::size_t cut = 0;
    while (cut < text::max_shown) {
        const std::size_t n = std::max<std::size_t>(1, text::utf8_length(s, cut));
        if (cut + n > text::max_shown) break;
        cut += n;
    }
    std::string q = quote(s.substr(0, cut));
    q.insert(q.size() - 1, "...");
    return q + " (" + std::to_string(s.size()) + " bytes)";
}

std::string go_float(double v) {
    std::string s;
    go::append_float_g(s, v, 64);
    return s;
}

// The JSON type name kube-openapi gives a decoded value; numbers are float64 ("number") after
// Package Operator's json.Unmarshal of the configuration.
enum class JType { null, boolean, number, string, array, object };

struct Scalar {
    JType type = JType::null;
    bool b = false;
    double num = 0;
};

Scalar scalar(const Node& n) {
    Scalar r;
    if (n.is_map()) {
        r.type = JType::object;
        return r;
    }
    if (n.is_seq()) {
        r.type = JType::array;
        return r;
    }
    const go::Scalar s = go::scalar_of(n);
    switch (s.type) {
    case go::Type::null:
        r.type = JType::null;
        break;
    case go::Type::boolean:
        r.type = JType::boolean;
        r.b = s.b;
        break;
    case go::Type::int64:
        r.type = JType::number;
        r.num = static_cast<double>(s.i);
        break;
    case go::Type::uint64:
        r.type = JType::number;
        r.num = static_cast<double>(s.u);
        break;
    case go::Type::float64:
        r.type = JType::number;
        r.num = s.f;
        break;
    case go::Type::string:
    case go::Type::timestamp:
        r.type = JType::string;
        break;
    }
    return r;
}

const char* jtype_name(JType t) {
    switch (t) {
    case JType::null:
        return "null";
    case JType::boolean:
        return "boolean";
    case JType::number:
        return "number";
    case JType::string:
        return "string";
    case JType::array:
        return "array";
    case JType::object:
        return "object";
    }
    return "null";
}

// How field.Error prints a bad value: strings quoted, numbers and booleans with %v, anything
// else (lists, maps) as compact JSON.
std::string value_text(const Node& n) {
    const Scalar s = scalar(n);
    switch (s.type) {
    case JType::null:
        return "\"null\"";
    case JType::boolean:
        return s.b ? "true" : "false";
    case JType::number:
        return go_float(s.num);
    case JType::string:
        return quote_value(n.text);
    default: {
        io::JsonStyle st;
        st.indent = 0;
        st.sort_keys = true;
        std::string j = io::to_json(n, st);
        while (!j.empty() && j.back() == '\n')
            j.pop_back();
        return j.size() <= text::max_shown ? j : text::shown(j);
    }
    }
}

class Errors {
public:
    explicit Errors(std::vector<FieldError>& out) : out_(out) {}

    void add(const Path& p, std::string body, io::Mark m = {}) {
        out_.push_back({p.s, p.s + ": " + body, m});
    }
    void required(const Path& p, std::string_view detail, io::Mark m = {}) {
        add(p, detail.empty() ? "Required value" : "Required value: " + std::string(detail), m);
    }
    void forbidden(const Path& p, std::string_view detail, io::Mark m = {}) {
        add(p, "Forbidden: " + std::string(detail), m);
    }
    void invalid(const Path& p, const std::string& value, std::string_view detail,
                 io::Mark m = {}) {
        add(p, "Invalid value: " + value + ": " + std::string(detail), m);
    }
    void not_supported(const Path& p, const std::string& value,
                       const std::vector<std::string>& values, io::Mark m = {}) {
        std::string body = "Unsupported value: " + value;
        if (!values.empty()) {
            body += ": supported values: ";
            for (std::size_t i = 0; i < values.size(); ++i) {
                if (i) body += ", ";
                body += quote(values[i]);
            }
        }
        add(p, body, m);
    }
    std::vector<FieldError>& list() { return out_; }

private:
    std::vector<FieldError>& out_;
};

// ------------------------------------------------------------------------------------------------
// Reading schema keywords (a keyword of the wrong kind reads as absent; check_schema reports it)

const Node* kw(const Node& s, std::string_view k) {
    return s.is_map() ? s.get(k) : nullptr;
}
std::string kw_string(const Node& s, std::string_view k) {
    const Node* n = kw(s, k);
    return n && n->is_string() ? n->text : std::string();
}
bool kw_true(const Node& s, std::string_view k) {
    const Node* n = kw(s, k);
    if (!n || !n->is_scalar()) return false;
    const Scalar v = scalar(*n);
    return v.type == JType::boolean && v.b;
}
bool kw_false(const Node& s, std::string_view k) {
    const Node* n = kw(s, k);
    if (!n || !n->is_scalar()) return false;
    const Scalar v = scalar(*n);
    return v.type == JType::boolean && !v.b;
}
std::optional<double> kw_number(const Node& s, std::string_view k) {
    const Node* n = kw(s, k);
    if (!n || !n->is_scalar()) return std::nullopt;
    const Scalar v = scalar(*n);
    if (v.type != JType::number) return std::nullopt;
    return v.num;
}
std::optional<std::int64_t> kw_int(const Node& s, std::string_view k) {
    auto d = kw_number(s, k);
    if (!d || *d != std::floor(*d) || std::fabs(*d) > 9e15) return std::nullopt;
    return static_cast<std::int64_t>(*d);
}
const Node* kw_map(const Node& s, std::string_view k) {
    const Node* n = kw(s, k);
    return n && n->is_map() ? n : nullptr;
}
const Node* kw_seq(const Node& s, std::string_view k) {
    const Node* n = kw(s, k);
    return n && n->is_seq() ? n : nullptr;
}
// additionalProperties as a schema (nullptr for a boolean or absent).
const Node* ap_schema(const Node& s) {
    return kw_map(s, "additionalProperties");
}
bool has_ap(const Node& s) {
    const Node* n = kw(s, "additionalProperties");
    return n && (n->is_map() || (n->is_scalar() && scalar(*n).type == JType::boolean));
}
const Node* items_schema(const Node& s) {
    return kw_map(s, "items");
}

bool is_int_or_string_anyof(const Node* anyof) {
    if (!anyof || !anyof->is_seq() || anyof->items.size() != 2) return false;
    auto only_type = [](const Node& n, std::string_view t) {
        return n.is_map() && n.fields.size() == 1 && n.fields[0].key == "type" &&
               n.fields[0].value.is_string() && n.fields[0].value.text == t;
    };
    return only_type(anyof->items[0], "integer") && only_type(anyof->items[1], "string");
}

// ------------------------------------------------------------------------------------------------
// check_schema

enum class Level { root, item, field };

// The fields of a Kubernetes object's root, which pruning keeps and defaults may not touch.
bool meta_field(std::string_view k) {
    return k == "apiVersion" || k == "kind" || k == "metadata";
}

struct KeywordKind {
    std::string_view key;
    enum K { string, boolean, number, integer, map, seq, strings, map_or_bool, map_or_seq } kind;
};
constexpr KeywordKind keyword_kinds[] = {
    {"type", KeywordKind::string},
    {"format", KeywordKind::string},
    {"pattern", KeywordKind::string},
    {"description", KeywordKind::string},
    {"title", KeywordKind::string},
    {"id", KeywordKind::string},
    {"$ref", KeywordKind::string},
    {"$schema", KeywordKind::string},
    {"x-kubernetes-list-type", KeywordKind::string},
    {"x-kubernetes-map-type", KeywordKind::string},
    {"nullable", KeywordKind::boolean},
    {"uniqueItems", KeywordKind::boolean},
    {"exclusiveMinimum", KeywordKind::boolean},
    {"exclusiveMaximum", KeywordKind::boolean},
    {"x-kubernetes-preserve-unknown-fields", KeywordKind::boolean},
    {"x-kubernetes-int-or-string", KeywordKind::boolean},
    {"x-kubernetes-embedded-resource", KeywordKind::boolean},
    {"minimum", KeywordKind::number},
    {"maximum", KeywordKind::number},
    {"multipleOf", KeywordKind::number},
    {"minLength", KeywordKind::integer},
    {"maxLength", KeywordKind::integer},
    {"minItems", KeywordKind::integer},
    {"maxItems", KeywordKind::integer},
    {"minProperties", KeywordKind::integer},
    {"maxProperties", KeywordKind::integer},
    {"properties", KeywordKind::map},
    {"patternProperties", KeywordKind::map},
    {"definitions", KeywordKind::map},
    {"dependencies", KeywordKind::map},
    {"not", KeywordKind::map},
    {"enum", KeywordKind::seq},
    {"allOf", KeywordKind::seq},
    {"anyOf", KeywordKind::seq},
    {"oneOf", KeywordKind::seq},
    {"x-kubernetes-validations", KeywordKind::seq},
    {"required", KeywordKind::strings},
    {"x-kubernetes-list-map-keys", KeywordKind::strings},
    {"additionalProperties", KeywordKind::map_or_bool},
    {"additionalItems", KeywordKind::map_or_bool},
    {"items", KeywordKind::map_or_seq},
};

class SchemaChecker {
public:
    SchemaChecker(std::vector<FieldError>& structural, std::vector<FieldError>& openapi)
        : st_(structural), oa_(openapi) {}

    // JSON decoding of the schema: each keyword of the kind JSONSchemaProps declares.
    bool kinds(const Node& s, const Path& p) {
        bool ok = true;
        if (!s.is_map()) {
            oa_.invalid(p, value_text(s), "must be an object (a schema)", s.mark);
            return false;
        }
        for (const auto& e : s.fields) {
            for (const auto& kk : keyword_kinds) {
                if (kk.key != e.key) continue;
                const Node& v = e.value;
                const Scalar sc = scalar(v);
                const char* want = nullptr;
                switch (kk.kind) {
                case KeywordKind::string:
                    if (sc.type != JType::string) want = "a string";
                    break;
                case KeywordKind::boolean:
                    if (sc.type != JType::boolean) want = "a boolean";
                    break;
                case KeywordKind::number:
                    if (sc.type != JType::number) want = "a number";
                    break;
                case KeywordKind::integer:
                    if (sc.type != JType::number || sc.num != std::floor(sc.num) || sc.num < 0)
                        want = "a non-negative integer";
                    break;
                case KeywordKind::map:
                    if (!v.is_map()) want = "an object";
                    break;
                case KeywordKind::seq:
                    if (!v.is_seq()) want = "a list";
                    break;
                case KeywordKind::strings:
                    if (!v.is_seq()) {
                        want = "a list of strings";
                    } else {
                        for (const auto& it : v.items)
                            if (scalar(it).type != JType::string) want = "a list of strings";
                    }
                    break;
                case KeywordKind::map_or_bool:
                    if (!v.is_map() && sc.type != JType::boolean) want = "an object or a boolean";
                    break;
                case KeywordKind::map_or_seq:
                    if (!v.is_map() && !v.is_seq()) want = "an object or a list";
                    break;
                }
                if (want) {
                    oa_.invalid(p.child(e.key), value_text(v), std::string("must be ") + want,
                                v.mark);
                    ok = false;
                }
            }
        }
        return ok;
    }

    // kinds() over every schema node.
    void kinds_all(const Node& s, const Path& p, int depth) {
        if (depth > 256) {
            oa_.forbidden(p, "schema nests too deeply", s.mark);
            return;
        }
        if (!kinds(s, p)) return;
        for (const char* m : {"properties", "patternProperties", "definitions"})
            if (const Node* props = kw_map(s, m))
                for (const auto& e : props->fields)
                    kinds_all(e.value, p.child(m).key(e.key), depth + 1);
        for (const char* k : {"additionalProperties", "additionalItems", "not", "items"})
            if (const Node* sub = kw_map(s, k)) kinds_all(*sub, p.child(k), depth + 1);
        for (const char* junctor : {"allOf", "oneOf", "anyOf", "items"})
            if (const Node* l = kw_seq(s, junctor))
                for (std::size_t i = 0; i < l->items.size(); ++i)
                    kinds_all(l->items[i], p.child(junctor).index(i), depth + 1);
    }

    // validateCustomResourceDefinitionOpenAPISchema: every schema node, structural or not.
    // `no_default`: why a default is not allowed here ("" when it is): under the root's
    // apiVersion, kind and metadata ("in top-level metadata").
    void openapi(const Node& s, const Path& p, int depth, const std::string& no_default = {}) {
        if (depth > 256) {
            oa_.forbidden(p, "schema nests too deeply", s.mark);
            return;
        }
        if (!s.is_map()) return;
        static const std::vector<std::string> types = {"array",  "boolean", "integer",
                                                       "number", "object",  "string"};
        const std::string type = kw_string(s, "type");
        const io::Mark tm = kw(s, "type") ? kw(s, "type")->mark : s.mark;
        if (!type.empty() && std::find(types.begin(), types.end(), type) == types.end())
            oa_.not_supported(p.child("type"), quote(type), types, tm);
        if (kw(s, "default") && !no_default.empty())
            oa_.forbidden(p.child("default"), "must not be set " + no_default);
        if (kw(s, "id")) oa_.forbidden(p.child("id"), "id is not supported");
        if (kw(s, "additionalItems"))
            oa_.forbidden(p.child("additionalItems"), "additionalItems is not supported");
        if (const Node* pp = kw_map(s, "patternProperties"); pp && !pp->fields.empty())
            oa_.forbidden(p.child("patternProperties"), "patternProperties is not supported");
        if (const Node* d = kw_map(s, "definitions"); d && !d->fields.empty())
            oa_.forbidden(p.child("definitions"), "definitions is not supported");
        if (kw(s, "dependencies"))
            oa_.forbidden(p.child("dependencies"), "dependencies is not supported");
        if (kw(s, "$ref")) oa_.forbidden(p.child("$ref"), "$ref is not supported");
        if (type == "null")
            oa_.forbidden(p.child("type"),
                          "type cannot be set to null, use nullable as an alternative", tm);
        if (kw_seq(s, "items"))
            oa_.forbidden(p.child("items"), "items must be a schema object and not an array");
        if (kw_true(s, "uniqueItems"))
            oa_.forbidden(p.child("uniqueItems"),
                          "uniqueItems cannot be set to true since the runtime complexity "
                          "becomes quadratic");
        const Node* props = kw_map(s, "properties");
        if (has_ap(s) && props && !props->fields.empty() &&
            (ap_schema(s) || kw_false(s, "additionalProperties")))
            oa_.forbidden(p.child("additionalProperties"),
                          "additionalProperties and properties are mutual exclusive");
        if (const Node* ap = ap_schema(s))
            openapi(*ap, p.child("additionalProperties"), depth + 1, no_default);
        if (props)
            for (const auto& e : props->fields)
                openapi(e.value, p.child("properties").key(e.key), depth + 1,
                        depth == 0 && meta_field(e.key) ? "in top-level " + e.key : no_default);
        if (const Node* n = kw_map(s, "not")) openapi(*n, p.child("not"), depth + 1, no_default);
        for (const char* junctor : {"allOf", "oneOf", "anyOf"})
            if (const Node* l = kw_seq(s, junctor))
                for (std::size_t i = 0; i < l->items.size(); ++i)
                    openapi(l->items[i], p.child(junctor).index(i), depth + 1, no_default);
        if (const Node* it = items_schema(s)) openapi(*it, p.child("items"), depth + 1, no_default);
        if (const Node* it = kw_seq(s, "items"))
            for (std::size_t i = 0; i < it->items.size(); ++i)
                openapi(it->items[i], p.child("items").index(i), depth + 1, no_default);

        if (kw_false(s, "x-kubernetes-preserve-unknown-fields"))
            oa_.invalid(p.child("x-kubernetes-preserve-unknown-fields"), "false",
                        "must be true or undefined");
        const Node* list_type = kw(s, "x-kubernetes-list-type");
        if (list_type && list_type->is_string()) {
            if (type != "array") {
                if (type.empty())
                    oa_.required(p.child("type"),
                                 "must be array if x-kubernetes-list-type is specified");
                else
                    oa_.invalid(p.child("type"), quote(type),
                                "must be array if x-kubernetes-list-type is specified", tm);
            }
            const std::string& lt = list_type->text;
            if (lt != "atomic" && lt != "set" && lt != "map")
                oa_.not_supported(p.child("x-kubernetes-list-type"), quote(lt),
                                  {"atomic", "set", "map"}, list_type->mark);
            if (lt == "map") {
                const Node* keys = kw_seq(s, "x-kubernetes-list-map-keys");
                if (!keys || keys->items.empty())
                    oa_.required(p.child("x-kubernetes-list-map-keys"),
                                 "must not be empty if x-kubernetes-list-type is map");
                if (!kw(s, "items"))
                    oa_.required(p.child("items"),
                                 "must have a schema if x-kubernetes-list-type is map");
            }
        }
        const Node* map_type = kw(s, "x-kubernetes-map-type");
        if (map_type && map_type->is_string()) {
            if (type != "object") {
                if (type.empty())
                    oa_.required(p.child("type"),
                                 "must be object if x-kubernetes-map-type is specified");
                else
                    oa_.invalid(p.child("type"), quote(type),
                                "must be object if x-kubernetes-map-type is specified", tm);
            }
            if (map_type->text != "atomic" && map_type->text != "granular")
                oa_.not_supported(p.child("x-kubernetes-map-type"), quote(map_type->text),
                                  {"atomic", "granular"}, map_type->mark);
        }
        if (const Node* keys = kw_seq(s, "x-kubernetes-list-map-keys");
            keys && !keys->items.empty()) {
            if (!list_type)
                oa_.required(p.child("x-kubernetes-list-type"),
                             "must be map if x-kubernetes-list-map-keys is non-empty");
            else if (list_type->is_string() && list_type->text != "map")
                oa_.invalid(p.child("x-kubernetes-list-type"), quote(list_type->text),
                            "must be map if x-kubernetes-list-map-keys is non-empty");
        }
        if (const Node* rules = kw_seq(s, "x-kubernetes-validations")) {
            for (std::size_t i = 0; i < rules->items.size(); ++i) {
                const Node& r = rules->items[i];
                const std::string rule = r.is_map() ? kw_string(r, "rule") : std::string();
                if (rule.find_first_not_of(" \t\r\n") == std::string::npos)
                    oa_.required(p.child("x-kubernetes-validations").index(i).child("rule"),
                                 "rule is not specified", r.mark);
            }
        }
    }

    void pattern(const Node& s, const Path& p) {
        const Node* pat = kw(s, "pattern");
        if (!pat || !pat->is_string() || pat->text.empty()) return;
        auto re = Regex::compile(pat->text);
        if (!re)
            st_.invalid(p.child("pattern"), quote(pat->text),
                        "must be a valid regular expression, but isn't: " + re.error().message,
                        pat->mark);
    }

    // validateStructuralInvariants
    void invariants(const Node& s, Level lvl, const Path& p, int depth) {
        if (!s.is_map() || depth > 256) return;
        const std::string type = kw_string(s, "type");
        const io::Mark tm = kw(s, "type") ? kw(s, "type")->mark : s.mark;
        if (type == "array" && !kw(s, "items"))
            st_.required(p.child("items"), "must be specified", s.mark);
        if (const Node* it = items_schema(s))
            invariants(*it, Level::item, p.child("items"), depth + 1);
        if (const Node* props = kw_map(s, "properties"))
            for (const auto& e : props->fields)
                invariants(e.value, Level::field, p.child("properties").key(e.key), depth + 1);
        if (has_ap(s)) {
            if (lvl == Level::root)
                st_.forbidden(p.child("additionalProperties"), "must not be used at the root");
            if (const Node* ap = ap_schema(s))
                invariants(*ap, Level::field, p.child("additionalProperties"), depth + 1);
        }
        const bool int_or_string = kw_true(s, "x-kubernetes-int-or-string");
        const bool preserve = kw_true(s, "x-kubernetes-preserve-unknown-fields");
        const bool embedded = kw_true(s, "x-kubernetes-embedded-resource");
        if (int_or_string && preserve)
            st_.invalid(p.child("x-kubernetes-preserve-unknown-fields"), "true",
                        "must be false if x-kubernetes-int-or-string is true");
        if (int_or_string && embedded)
            st_.invalid(p.child("x-kubernetes-embedded-resource"), "true",
                        "must be false if x-kubernetes-int-or-string is true");

        const bool skip_anyof = is_int_or_string_anyof(kw(s, "anyOf"));
        bool skip_first_allof_anyof = false;
        if (const Node* all = kw_seq(s, "allOf"); all && !all->items.empty())
            skip_first_allof_anyof = is_int_or_string_anyof(kw(all->items[0], "anyOf"));
        value_validation(s, skip_anyof, skip_first_allof_anyof, p, depth);

        if (embedded && type != "object") {
            if (type.empty())
                st_.required(p.child("type"),
                             "must be object if x-kubernetes-embedded-resource is true");
            else
                st_.invalid(p.child("type"), quote(type),
                            "must be object if x-kubernetes-embedded-resource is true", tm);
        } else if (type.empty() && !int_or_string && !preserve) {
            switch (lvl) {
            case Level::root:
                st_.required(p.child("type"), "must not be empty at the root", s.mark);
                break;
            case Level::item:
                st_.required(p.child("type"), "must not be empty for specified array items",
                             s.mark);
                break;
            case Level::field:
                st_.required(p.child("type"), "must not be empty for specified object fields",
                             s.mark);
                break;
            }
        }
        if (embedded && has_ap(s))
            st_.forbidden(p.child("additionalProperties"),
                          "must not be used if x-kubernetes-embedded-resource is set");
        if (lvl == Level::root && !type.empty() && type != "object")
            st_.invalid(p.child("type"), quote(type), "must be object at the root", tm);

        const bool check_meta = lvl == Level::root || embedded;
        if (const Node* props = kw_map(s, "properties"); props && check_meta) {
            if (const Node* k = props->get("kind"); k && kw_string(*k, "type") != "string")
                st_.invalid(p.child("properties").key("kind").child("type"),
                            quote(kw_string(*k, "type")), "must be string");
            if (const Node* k = props->get("apiVersion"); k && kw_string(*k, "type") != "string")
                st_.invalid(p.child("properties").key("apiVersion").child("type"),
                            quote(kw_string(*k, "type")), "must be string");
            if (const Node* k = props->get("metadata"); k && kw_string(*k, "type") != "object")
                st_.invalid(p.child("properties").key("metadata").child("type"),
                            quote(kw_string(*k, "type")), "must be object");
        }
        if (const Node* props = kw_map(s, "properties"); props && lvl == Level::root) {
            if (const Node* m = props->get("metadata"); m && m->is_map()) {
                bool only_names = true;
                for (const auto& e : m->fields) {
                    if (e.key == "type" || e.key == "default") continue;
                    if (e.key == "properties" && e.value.is_map()) {
                        for (const auto& q : e.value.fields)
                            if (q.key != "name" && q.key != "generateName") only_names = false;
                        continue;
                    }
                    only_names = false;
                }
                if (!only_names)
                    st_.forbidden(p.child("properties").key("metadata"),
                                  "must not specify anything other than name and generateName, "
                                  "but metadata is implicitly specified");
            }
        }
        if (embedded && !preserve) {
            const Node* props = kw_map(s, "properties");
            if (!props || props->fields.empty())
                st_.required(p.child("properties"),
                             "must not be empty if x-kubernetes-embedded-resource is true without "
                             "x-kubernetes-preserve-unknown-fields");
        }
    }

    // validateValueValidation: the junctors of a node and its pattern.
    void value_validation(const Node& v, bool skip_anyof, bool skip_first_allof_anyof,
                          const Path& p, int depth) {
        if (!skip_anyof)
            if (const Node* l = kw_seq(v, "anyOf"))
                for (std::size_t i = 0; i < l->items.size(); ++i)
                    nested(l->items[i], false, p.child("anyOf").index(i), depth + 1);
        if (const Node* l = kw_seq(v, "allOf"))
            for (std::size_t i = 0; i < l->items.size(); ++i)
                nested(l->items[i], skip_first_allof_anyof && i == 0, p.child("allOf").index(i),
                       depth + 1);
        if (const Node* l = kw_seq(v, "oneOf"))
            for (std::size_t i = 0; i < l->items.size(); ++i)
                nested(l->items[i], false, p.child("oneOf").index(i), depth + 1);
        if (const Node* n = kw_map(v, "not")) nested(*n, false, p.child("not"), depth + 1);
        pattern(v, p);
    }

    // validateNestedValueValidation: what a schema under a junctor may not say.
    void nested(const Node& v, bool skip_anyof, const Path& p, int depth) {
        if (!v.is_map() || depth > 256) return;
        value_validation(v, skip_anyof, false, p, depth);
        if (const Node* it = items_schema(v)) nested(*it, false, p.child("items"), depth + 1);
        if (const Node* props = kw_map(v, "properties"))
            for (const auto& e : props->fields)
                nested(e.value, false, p.child("properties").key(e.key), depth + 1);
        if (kw(v, "type") && !kw_string(v, "type").empty())
            st_.forbidden(p.child("type"), "must be empty to be structural");
        if (has_ap(v))
            st_.forbidden(p.child("additionalProperties"), "must be undefined to be structural");
        if (kw(v, "default"))
            st_.forbidden(p.child("default"), "must be undefined to be structural");
        if (!kw_string(v, "title").empty())
            st_.forbidden(p.child("title"), "must be empty to be structural");
        if (!kw_string(v, "description").empty())
            st_.forbidden(p.child("description"), "must be empty to be structural");
        if (kw_true(v, "nullable"))
            st_.forbidden(p.child("nullable"), "must be false to be structural");
        if (kw_true(v, "x-kubernetes-preserve-unknown-fields"))
            st_.forbidden(p.child("x-kubernetes-preserve-unknown-fields"),
                          "must be false to be structural");
        if (kw_true(v, "x-kubernetes-embedded-resource"))
            st_.forbidden(p.child("x-kubernetes-embedded-resource"),
                          "must be false to be structural");
        if (kw_true(v, "x-kubernetes-int-or-string"))
            st_.forbidden(p.child("x-kubernetes-int-or-string"), "must be false to be structural");
        if (const Node* k = kw_seq(v, "x-kubernetes-list-map-keys"); k && !k->items.empty())
            st_.forbidden(p.child("x-kubernetes-list-map-keys"), "must be empty to be structural");
        if (kw(v, "x-kubernetes-list-type"))
            st_.forbidden(p.child("x-kubernetes-list-type"), "must be undefined to be structural");
        if (const Node* props = kw_map(v, "properties"); props && props->get("metadata"))
            st_.forbidden(p.child("properties").key("metadata"),
                          "must not be specified in a nested context");
    }

    // validateStructuralCompleteness: what a junctor names must exist in the structure.
    void completeness(const Node& v, const Node* s, const Path& sp, const Path& vp, int depth) {
        if (depth > 256) return;
        for (const char* junctor : {"allOf", "anyOf", "oneOf"})
            if (const Node* l = kw_seq(v, junctor))
                for (std::size_t i = 0; i < l->items.size(); ++i)
                    nested_completeness(l->items[i], s, sp, vp.child(junctor).index(i), depth + 1);
        if (const Node* n = kw_map(v, "not"))
            nested_completeness(*n, s, sp, vp.child("not"), depth + 1);
    }

    void nested_completeness(const Node& v, const Node* s, const Path& sp, const Path& vp,
                             int depth) {
        if (!v.is_map() || depth > 256) return;
        if (!s) {
            st_.required(sp, "because it is defined in " + vp.s);
            return;
        }
        completeness(v, s, sp, vp, depth);
        if (const Node* vi = items_schema(v)) {
            const Node* si = items_schema(*s);
            if (!si)
                st_.required(sp.child("items"), "because it is defined in " + vp.child("items").s);
            else
                nested_completeness(*vi, si, sp.child("items"), vp.child("items"), depth + 1);
        }
        if (const Node* vprops = kw_map(v, "properties")) {
            const Node* sprops = kw_map(*s, "properties");
            for (const auto& e : vprops->fields) {
                const Node* sf = sprops ? sprops->get(e.key) : nullptr;
                if (!sf)
                    st_.required(sp.child("properties").key(e.key),
                                 "because it is defined in " + vp.child("properties").key(e.key).s);
                else
                    nested_completeness(e.value, sf, sp.child("properties").key(e.key),
                                        vp.child("properties").key(e.key), depth + 1);
            }
        }
    }

    // Completeness for every structural node (junctors at any depth of the structure).
    void completeness_all(const Node& s, const Path& p, int depth) {
        if (!s.is_map() || depth > 256) return;
        completeness(s, &s, p, p, depth);
        if (const Node* it = items_schema(s)) completeness_all(*it, p.child("items"), depth + 1);
        if (const Node* props = kw_map(s, "properties"))
            for (const auto& e : props->fields)
                completeness_all(e.value, p.child("properties").key(e.key), depth + 1);
        if (const Node* ap = ap_schema(s))
            completeness_all(*ap, p.child("additionalProperties"), depth + 1);
    }

private:
    Errors st_, oa_;
};

// ------------------------------------------------------------------------------------------------
// Pruning and defaulting (apiextensions' pruning.Prune and defaulting.Default)

void prune(Node& x, const Node* s, bool resource_root, std::size_t depth);

void prune_recursive(Node& x, const Node* s, std::size_t depth) {
    prune(x, s, s && kw_true(*s, "x-kubernetes-embedded-resource"), depth);
}

void skip_prune(Node& x, const Node& s, std::size_t depth) {
    if (depth == 0) return;
    if (x.is_map()) {
        const Node* props = kw_map(s, "properties");
        for (auto& e : x.fields) {
            const Node* prop = props ? props->get(e.key) : nullptr;
            if (prop)
                prune_recursive(e.value, prop, depth - 1);
            else if (const Node* ap = ap_schema(s))
                prune_recursive(e.value, ap, depth - 1);
        }
    } else if (x.is_seq()) {
        if (const Node* it = items_schema(s))
            for (auto& v : x.items)
                prune_recursive(v, it, depth - 1);
    }
}

void prune(Node& x, const Node* s, bool resource_root, std::size_t depth) {
    if (depth == 0) return; // reported by validation
    if (s && kw_true(*s, "x-kubernetes-preserve-unknown-fields")) {
        skip_prune(x, *s, depth);
        return;
    }
    if (x.is_map()) {
        if (!s) {
            x.fields.clear();
            return;
        }
        const Node* props = kw_map(*s, "properties");
        std::vector<io::MapEntry> kept;
        kept.reserve(x.fields.size());
        for (auto& e : x.fields) {
            const Node* prop = props ? props->get(e.key) : nullptr;
            if (prop) {
                prune_recursive(e.value, prop, depth - 1);
            } else if (has_ap(*s)) {
                prune_recursive(e.value, ap_schema(*s), depth - 1);
            } else if (!(meta_field(e.key) && resource_root)) {
                continue;
            }
            kept.push_back(std::move(e));
        }
        x.fields = std::move(kept);
    } else if (x.is_seq()) {
        const Node* it = s ? items_schema(*s) : nullptr;
        for (auto& v : x.items)
            if (s)
                prune_recursive(v, it, depth - 1);
            else
                prune(v, nullptr, false, depth - 1);
    }
}

bool non_nullable_null(const Node& v, const Node& s) {
    return v.is_scalar() && scalar(v).type == JType::null && !kw_true(s, "nullable");
}

void apply_defaults(Node& x, const Node* s, std::size_t depth) {
    if (!s || depth == 0) return;
    if (x.is_map()) {
        const Node* props = kw_map(*s, "properties");
        if (props) {
            for (const auto& e : props->fields) {
                const Node* def = kw(e.value, "default");
                if (!def) continue;
                Node* cur = x.get(e.key);
                if (!cur)
                    x.set(e.key, *def);
                else if (non_nullable_null(*cur, e.value))
                    *cur = *def;
            }
        }
        for (auto& e : x.fields) {
            const Node* prop = props ? props->get(e.key) : nullptr;
            if (prop)
                apply_defaults(e.value, prop, depth - 1);
            else if (const Node* ap = ap_schema(*s))
                apply_defaults(e.value, ap, depth - 1);
        }
    } else if (x.is_seq()) {
        const Node* it = items_schema(*s);
        if (!it) return;
        for (auto& v : x.items) {
            if (const Node* def = kw(*it, "default"); def && non_nullable_null(v, *it)) v = *def;
            apply_defaults(v, it, depth - 1);
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Validation (kube-openapi's SchemaValidator, converted by apiextensions into field errors)

bool json_equal(const Node& a, const Node& b) {
    const Scalar sa = scalar(a), sb = scalar(b);
    if (sa.type != sb.type) return false;
    switch (sa.type) {
    case JType::null:
        return true;
    case JType::boolean:
        return sa.b == sb.b;
    case JType::number:
        return sa.num == sb.num;
    case JType::string:
        return a.text == b.text;
    case JType::array:
        if (a.items.size() != b.items.size()) return false;
        for (std::size_t i = 0; i < a.items.size(); ++i)
            if (!json_equal(a.items[i], b.items[i])) return false;
        return true;
    case JType::object:
        if (a.fields.size() != b.fields.size()) return false;
        for (const auto& e : a.fields) {
            const Node* o = b.get(e.key);
            if (!o || !json_equal(e.value, *o)) return false;
        }
        return true;
    }
    return false;
}

// One text per JSON value, equal exactly when json_equal says the values are: numbers by value,
// keys sorted.
std::string canonical(const Node& n) {
    const Scalar sc = scalar(n);
    switch (sc.type) {
    case JType::null:
        return "null";
    case JType::boolean:
        return sc.b ? "true" : "false";
    case JType::number:
        return sc.num == 0 ? "0" : go_float(sc.num); // -0 equals 0
    case JType::string:
        return quote(n.text);
    case JType::array: {
        std::string out = "[";
        for (const auto& i : n.items)
            out += canonical(i) + ",";
        return out + "]";
    }
    case JType::object: {
        std::vector<std::pair<std::string, std::string>> fields;
        for (const auto& f : n.fields)
            fields.emplace_back(quote(f.key), canonical(f.value));
        std::sort(fields.begin(), fields.end());
        std::string out = "{";
        for (const auto& [k, v] : fields)
            out += k + ":" + v + ",";
        return out + "}";
    }
    }
    return {};
}

std::size_t rune_count(std::string_view s) {
    std::size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++n;
    return n;
}

bool all_digits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_ipv4(std::string_view s) {
    int parts = 0;
    std::size_t i = 0;
    while (true) {
        std::size_t j = s.find('.', i);
        std::string_view part = s.substr(i, j == std::string_view::npos ? s.npos : j - i);
        if (!all_digits(part) || part.size() > 3 || (part.size() > 1 && part[0] == '0'))
            return false;
        if (std::stoi(std::string(part)) > 255) return false;
        ++parts;
        if (j == std::string_view::npos) break;
        i = j + 1;
    }
    return parts == 4;
}

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool is_ipv6(std::string_view s) {
    if (s.empty()) return false;
    int groups = 0;
    bool compressed = false;
    std::size_t i = 0;
    if (s.substr(0, 2) == "::") {
        compressed = true;
        i = 2;
        if (i == s.size()) return true;
    }
    while (i < s.size()) {
        std::size_t j = i;
        while (j < s.size() && is_hex(s[j]))
            ++j;
        if (j < s.size() && s[j] == '.') { // trailing IPv4
            if (!is_ipv4(s.substr(i))) return false;
            groups += 2;
            i = s.size();
            break;
        }
        if (j == i || j - i > 4) return false;
        ++groups;
        i = j;
        if (i == s.size()) break;
        if (s[i] != ':') return false;
        ++i;
        if (i < s.size() && s[i] == ':') {
            if (compressed) return false;
            compressed = true;
            ++i;
            if (i == s.size()) break;
        } else if (i == s.size()) {
            return false;
        }
    }
    return compressed ? groups < 8 : groups == 8;
}

bool is_date(std::string_view s) {
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
    if (!all_digits(s.substr(0, 4)) || !all_digits(s.substr(5, 2)) || !all_digits(s.substr(8, 2)))
        return false;
    const int y = std::stoi(std::string(s.substr(0, 4)));
    const int m = std::stoi(std::string(s.substr(5, 2)));
    const int d = std::stoi(std::string(s.substr(8, 2)));
    static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1 || d > days[m - 1]) return false;
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return !(m == 2 && d == 29 && !leap);
}

bool is_datetime(std::string_view s) {
    if (s.size() < 20 || !is_date(s.substr(0, 10))) return false;
    if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') return false;
    std::string_view t = s.substr(11);
    if (t.size() < 9 || t[2] != ':' || t[5] != ':' || !all_digits(t.substr(0, 2)) ||
        !all_digits(t.substr(3, 2)) || !all_digits(t.substr(6, 2)))
        return false;
    if (std::stoi(std::string(t.substr(0, 2))) > 23 ||
        std::stoi(std::string(t.substr(3, 2))) > 59 || std::stoi(std::string(t.substr(6, 2))) > 60)
        return false;
    t.remove_prefix(8);
    if (!t.empty() && t[0] == '.') {
        std::size_t k = 1;
        while (k < t.size() && t[k] >= '0' && t[k] <= '9')
            ++k;
        if (k == 1) return false;
        t.remove_prefix(k);
    }
    if (t == "Z" || t == "z") return true;
    return t.size() == 6 && (t[0] == '+' || t[0] == '-') && t[3] == ':' &&
           all_digits(t.substr(1, 2)) && all_digits(t.substr(4, 2));
}

bool is_hostname(std::string_view s) {
    if (s.empty() || s.size() > 253) return false;
    std::size_t i = 0;
    while (i <= s.size()) {
        std::size_t j = s.find('.', i);
        if (j == std::string_view::npos) j = s.size();
        std::string_view label = s.substr(i, j - i);
        if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-')
            return false;
        for (char c : label)
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return false;
        i = j + 1;
        if (j == s.size()) break;
    }
    return true;
}

bool check_format(std::string_view format, std::string_view v) {
    if (format == "date") return is_date(v);
    if (format == "date-time" || format == "datetime") return is_datetime(v);
    if (format == "ipv4") return is_ipv4(v);
    if (format == "ipv6") return is_ipv6(v);
    if (format == "cidr") {
        const auto slash = v.find('/');
        if (slash == v.npos) return false;
        const auto bits = v.substr(slash + 1);
        if (!all_digits(bits) || bits.size() > 3) return false;
        const int b = std::stoi(std::string(bits));
        const auto ip = v.substr(0, slash);
        return (is_ipv4(ip) && b <= 32) || (is_ipv6(ip) && b <= 128);
    }
    if (format == "mac") {
        if (v.size() != 17) return false;
        const char sep = v[2];
        if (sep != ':' && sep != '-') return false;
        for (std::size_t i = 0; i < 17; ++i)
            if (i % 3 == 2 ? v[i] != sep : !is_hex(v[i])) return false;
        return true;
    }
    if (format == "uuid" || format == "uuid3" || format == "uuid4" || format == "uuid5") {
        if (v.size() != 36) return false;
        for (std::size_t i = 0; i < 36; ++i) {
            if (i == 8 || i == 13 || i == 18 || i == 23) {
                if (v[i] != '-') return false;
            } else if (!is_hex(v[i])) {
                return false;
            }
        }
        if (format == "uuid3" && v[14] != '3') return false;
        if (format == "uuid4" && v[14] != '4') return false;
        if (format == "uuid5" && v[14] != '5') return false;
        return true;
    }
    if (format == "hostname") return is_hostname(v);
    if (format == "email") {
        const auto at = v.rfind('@');
        return at != v.npos && at > 0 && at + 1 < v.size() &&
               v.find_first_of(" \t\r\n") == v.npos && is_hostname(v.substr(at + 1));
    }
    if (format == "uri") {
        // url.ParseRequestURI: an absolute URI (scheme:...) or an absolute path.
        if (!v.empty() && v[0] == '/') return true;
        const auto colon = v.find(':');
        if (colon == v.npos || colon == 0 || !std::isalpha(static_cast<unsigned char>(v[0])))
            return false;
        for (std::size_t i = 0; i < colon; ++i) {
            const char c = v[i];
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.'))
                return false;
        }
        return v.find_first_of(" \t\r\n") == v.npos;
    }
    if (format == "byte") {
        std::size_t at = 0;
        return go::decode_base64(v, nullptr, at);
    }
    if (format == "hexcolor") {
        return (v.size() == 4 || v.size() == 7) && v[0] == '#' &&
               std::all_of(v.begin() + 1, v.end(), is_hex);
    }
    return true; // formats kpkg does not check
}

// The checks one validation has made and may make, shared by the validators of its junctors,
// and the steps of pattern matching it has left.
struct Budget {
    std::uint64_t used = 0;
    std::uint64_t max = 0;
    std::optional<FieldError> stopped; // where the budget ran out
    std::uint64_t regex_max = 0;
    std::uint64_t regex_left = 0;
};

class Validator {
public:
    Validator(std::vector<FieldError>& out, std::string fld, const AdmissionLimits& limits,
              std::shared_ptr<Budget> budget = nullptr)
        : out_(out), fld_(std::move(fld)), max_depth_(limits.max_depth), limits_(limits),
          budget_(budget ? std::move(budget)
                         : std::make_shared<Budget>(Budget{0,
                                                           limits.max_checks,
                                                           {},
                                                           limits.max_regex_steps,
                                                           limits.max_regex_steps})) {}

    // The field path of an error named `name` (kube-openapi's dotted path) under fld.
    Path path_of(const std::string& name) const {
        Path p{fld_};
        if (!name.empty() && name != ".") p = p.child(name[0] == '.' ? name.substr(1) : name);
        return p;
    }
    static std::string body(const std::string& name, std::string_view rest) {
        return name + " in body " + std::string(rest);
    }

    void validate(const Node& s, const Node& data, const std::string& name, std::size_t depth) {
        Errors e(out_);
        if (budget_->stopped) return;
        if (budget_->used >= budget_->max) {
            if (!budget_->stopped) {
                const Path p = path_of(name);
                budget_->stopped =
                    FieldError{p.s,
                               p.s +
                                   ": Invalid value: \"\": validation stopped: the schema and "
                                   "configuration need more than " +
                                   std::to_string(budget_->max) + " checks",
                               data.mark};
            }
            return;
        }
        ++budget_->used;
        if (depth > max_depth_) {
            e.invalid(path_of(name), "\"\"",
                      "nesting deeper than " + std::to_string(max_depth_) + " levels", data.mark);
            return;
        }
        if (!s.is_map()) return;
        const Scalar d = scalar(data);
        // type
        std::vector<std::string> types;
        if (kw_true(s, "x-kubernetes-int-or-string"))
            types = {"integer", "string"};
        else if (const std::string t = kw_string(s, "type"); !t.empty())
            types = {t};
        auto joined = [&] {
            std::string j;
            for (std::size_t i = 0; i < types.size(); ++i)
                j += (i ? "," : "") + types[i];
            return j;
        };
        auto has_type = [&](std::string_view t) {
            return std::find(types.begin(), types.end(), t) != types.end();
        };
        if (d.type == JType::null) {
            if (!types.empty() && !has_type("null") && !kw_true(s, "nullable"))
                e.invalid(path_of(name), quote("null"),
                          body(name, "must be of type " + joined() + ": " + quote("null")),
                          data.mark);
            enum_check(s, data, name);
            return;
        }
        if (!types.empty()) {
            const char* have = jtype_name(d.type);
            const bool integral = d.type == JType::number && std::isfinite(d.num) &&
                                  d.num == std::floor(d.num) &&
                                  std::fabs(d.num) <= 9007199254740992.0;
            const bool ok = has_type(have) || (integral && has_type("integer"));
            if (!ok)
                e.invalid(path_of(name), quote(have),
                          body(name, "must be of type " + joined() + ": " + quote(have)),
                          data.mark);
        }
        junctors(s, data, name, depth);
        if (d.type == JType::string) strings(s, data, name);
        if (d.type == JType::number) numbers(s, d.num, data, name);
        if (d.type == JType::array) arrays(s, data, name, depth);
        enum_check(s, data, name);
        if (d.type == JType::object) objects(s, data, name, depth);
    }

private:
    void junctors(const Node& s, const Node& data, const std::string& name, std::size_t depth) {
        Errors e(out_);
        auto attempt = [&](const Node& sub, std::vector<FieldError>& errs) {
            Validator v(errs, fld_, limits_, budget_);
            v.validate(sub, data, name, depth);
        };
        const std::string who = name;
        if (const Node* all = kw_seq(s, "allOf")) {
            bool failed = false;
            for (const auto& sub : all->items) {
                std::vector<FieldError> errs;
                attempt(sub, errs);
                if (!errs.empty()) failed = true;
                out_.insert(out_.end(), errs.begin(), errs.end());
            }
            if (failed)
                e.invalid(Path{fld_}, "\"\"", who + " must validate all the schemas (allOf)",
                          data.mark);
        }
        if (const Node* any = kw_seq(s, "anyOf"); any && !any->items.empty()) {
            std::vector<FieldError> best;
            bool ok = false;
            for (const auto& sub : any->items) {
                std::vector<FieldError> errs;
                attempt(sub, errs);
                if (errs.empty()) {
                    ok = true;
                    break;
                }
                if (best.empty() || errs.size() < best.size()) best = std::move(errs);
            }
            if (!ok) {
                e.invalid(Path{fld_}, "\"\"", who + " must validate at least one schema (anyOf)",
                          data.mark);
                out_.insert(out_.end(), best.begin(), best.end());
            }
        }
        if (const Node* one = kw_seq(s, "oneOf"); one && !one->items.empty()) {
            std::vector<FieldError> best;
            int valid = 0;
            for (const auto& sub : one->items) {
                std::vector<FieldError> errs;
                attempt(sub, errs);
                if (errs.empty())
                    ++valid;
                else if (best.empty() || errs.size() < best.size())
                    best = std::move(errs);
            }
            if (valid != 1) {
                const std::string found =
                    valid == 0 ? "Found none valid"
                               : "Found " + std::to_string(valid) + " valid alternatives";
                e.invalid(Path{fld_}, "\"\"",
                          who + " must validate one and only one schema (oneOf). " + found,
                          data.mark);
                if (valid == 0) out_.insert(out_.end(), best.begin(), best.end());
            }
        }
        if (const Node* n = kw_map(s, "not")) {
            std::vector<FieldError> errs;
            attempt(*n, errs);
            if (errs.empty())
                e.invalid(Path{fld_}, "\"\"", who + " must not validate the schema (not)",
                          data.mark);
        }
    }

    void strings(const Node& s, const Node& data, const std::string& name) {
        Errors e(out_);
        const std::string& v = data.text;
        const std::size_t len = rune_count(v);
        if (auto mx = kw_int(s, "maxLength"); mx && static_cast<std::int64_t>(len) > *mx)
            e.add(path_of(name), "Too long: may not be longer than " + std::to_string(*mx),
                  data.mark);
        if (auto mn = kw_int(s, "minLength"); mn && static_cast<std::int64_t>(len) < *mn)
            e.invalid(path_of(name), quote_value(v),
                      body(name, "should be at least " + std::to_string(*mn) + " chars long"),
                      data.mark);
        if (const std::string pat = kw_string(s, "pattern"); !pat.empty()) {
            auto re = Regex::compile(pat);
            if (!re) {
                e.invalid(path_of(name), quote_value(v), re.error().message, data.mark);
            } else {
                switch (re->search(v, budget_->regex_left)) {
                case Regex::Outcome::match:
                    break;
                case Regex::Outcome::no_match:
                    e.invalid(path_of(name), quote_value(v),
                              body(name, "should match '" + text::shown(pat) + "'"), data.mark);
                    break;
                case Regex::Outcome::too_costly:
                    // The validation's matching budget is spent: it stops here, saying so once.
                    if (!budget_->stopped) {
                        const Path p = path_of(name);
                        budget_->stopped = FieldError{
                            p.s,
                            p.s + ": Invalid value: " + quote_value(v) +
                                ": validation stopped: the schema's patterns need more than " +
                                std::to_string(budget_->regex_max) +
                                " steps of regular-expression matching",
                            data.mark};
                    }
                    break;
                }
            }
        }
        if (const std::string f = kw_string(s, "format"); !f.empty() && !check_format(f, v))
            e.invalid(path_of(name), quote_value(v),
                      body(name, "must be of type " + f + ": " + quote_value(v)), data.mark);
    }

    void numbers(const Node& s, double v, const Node& data, const std::string& name) {
        Errors e(out_);
        const std::string val = go_float(v);
        if (auto m = kw_number(s, "multipleOf"); m && *m > 0) {
            const double q = v / *m;
            if (q != std::floor(q))
                e.invalid(path_of(name), val, body(name, "should be a multiple of " + go_float(*m)),
                          data.mark);
        }
        if (auto mx = kw_number(s, "maximum")) {
            if (kw_true(s, "exclusiveMaximum") ? v >= *mx : v > *mx)
                e.invalid(path_of(name), val,
                          body(name, std::string(kw_true(s, "exclusiveMaximum")
                                                     ? "should be less than "
                                                     : "should be less than or equal to ") +
                                         go_float(*mx)),
                          data.mark);
        }
        if (auto mn = kw_number(s, "minimum")) {
            if (kw_true(s, "exclusiveMinimum") ? v <= *mn : v < *mn)
                e.invalid(path_of(name), val,
                          body(name, std::string(kw_true(s, "exclusiveMinimum")
                                                     ? "should be greater than "
                                                     : "should be greater than or equal to ") +
                                         go_float(*mn)),
                          data.mark);
        }
    }

    void arrays(const Node& s, const Node& data, const std::string& name, std::size_t depth) {
        Errors e(out_);
        const auto n = static_cast<std::int64_t>(data.items.size());
        if (auto mn = kw_int(s, "minItems"); mn && n < *mn)
            e.invalid(path_of(name), std::to_string(n),
                      body(name, "should have at least " + std::to_string(*mn) + " items"),
                      data.mark);
        if (auto mx = kw_int(s, "maxItems"); mx && n > *mx)
            e.add(path_of(name),
                  "Too many: " + std::to_string(n) + ": must have at most " + std::to_string(*mx) +
                      " items",
                  data.mark);
        if (kw_true(s, "uniqueItems")) {
            // By canonical form, not pairwise: a long list stays O(n log n).
            std::set<std::string> seen;
            bool dup = false;
            for (std::size_t i = 0; i < data.items.size() && !dup; ++i)
                dup = !seen.insert(canonical(data.items[i])).second;
            if (dup)
                e.invalid(path_of(name), "\"\"", body(name, "shouldn't contain duplicates"),
                          data.mark);
        }
        if (const Node* it = items_schema(s))
            for (std::size_t i = 0; i < data.items.size(); ++i)
                validate(*it, data.items[i], name + "." + std::to_string(i), depth + 1);
    }

    void enum_check(const Node& s, const Node& data, const std::string& name) {
        const Node* en = kw_seq(s, "enum");
        if (!en || en->items.empty()) return;
        for (const auto& v : en->items)
            if (json_equal(v, data)) return;
        std::vector<std::string> values;
        for (const auto& v : en->items) {
            if (scalar(v).type == JType::string) {
                values.push_back(v.text);
            } else if (scalar(v).type == JType::number) {
                std::string j;
                go::append_float(j, scalar(v).num);
                values.push_back(j);
            } else {
                io::JsonStyle st;
                st.indent = 0;
                st.sort_keys = true;
                std::string j = io::to_json(v, st);
                while (!j.empty() && j.back() == '\n')
                    j.pop_back();
                values.push_back(j);
            }
        }
        Errors(out_).not_supported(path_of(name), value_text(data), values, data.mark);
    }

    static std::string child_name(const std::string& name, const std::string& key) {
        return name.empty() ? key : name + "." + key;
    }

    void objects(const Node& s, const Node& data, const std::string& name, std::size_t depth) {
        Errors e(out_);
        const auto n = static_cast<std::int64_t>(data.fields.size());
        if (auto mx = kw_int(s, "maxProperties"); mx && n > *mx)
            e.add(path_of(name),
                  "Too many: " + std::to_string(n) + ": must have at most " + std::to_string(*mx) +
                      " items",
                  data.mark);
        if (auto mn = kw_int(s, "minProperties"); mn && n < *mn)
            e.invalid(path_of(name), std::to_string(n),
                      body(name, "should have at least " + std::to_string(*mn) + " properties"),
                      data.mark);
        if (const Node* req = kw_seq(s, "required"))
            for (const auto& r : req->items)
                if (r.is_scalar() && !data.get(r.text))
                    e.required(path_of(child_name(name, r.text)), "", data.mark);
        const Node* props = kw_map(s, "properties");
        if (props)
            for (const auto& p : props->fields)
                if (const Node* v = data.get(p.key))
                    validate(p.value, *v, child_name(name, p.key), depth + 1);
        const Node* ap = ap_schema(s);
        const bool closed = kw_false(s, "additionalProperties");
        if (ap || closed) {
            for (const auto& f : data.fields) {
                if (props && props->get(f.key)) continue;
                if (ap)
                    validate(*ap, f.value, child_name(name, f.key), depth + 1);
                else
                    e.invalid(path_of(child_name(name, f.key)), "\"\"",
                              body(child_name(name, f.key), "is a forbidden property"), f.key_mark);
            }
        }
    }

    std::vector<FieldError>& out_;
    std::string fld_;
    std::size_t max_depth_;
    AdmissionLimits limits_;
    std::shared_ptr<Budget> budget_;
};

// ------------------------------------------------------------------------------------------------
// JSON Schema mode (santhosh-tekuri/jsonschema v5's checks and wording, as kubeconform uses it)

// The library's name of a value's type: every number is a "number".
std::string json_type_of(const Node& n) {
    return jtype_name(scalar(n).type);
}

// A JSON value as the library shows it: strings in single quotes, others as compact JSON.
std::string display(const Node& n) {
    if (scalar(n).type == JType::string) {
        std::string q = quote(n.text);
        std::string out = "'";
        for (std::size_t i = 1; i + 1 < q.size(); ++i) {
            if (q[i] == '\\' && q[i + 1] == '"') continue; // \" shows as "
            if (q[i] == '\'') out += '\\';
            out += q[i];
        }
        return out + "'";
    }
    io::JsonStyle st;
    st.indent = 0;
    std::string j = io::to_json(n, st);
    while (!j.empty() && j.back() == '\n')
        j.pop_back();
    return j;
}

std::string display(std::string_view text) {
    return display(Node::string(std::string(text)));
}

// One JSON pointer token as the library writes it: ~ and / escaped, then the bytes a URL path
// segment may not hold percent-encoded (Go's url.PathEscape).
std::string pointer_token(std::string_view key) {
    std::string t;
    for (char c : key) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '~') {
            t += "~0";
        } else if (c == '/') {
            t += "~1";
        } else if (std::isalnum(u) ||
                   std::string_view("-._$&+,;=:@").find(c) != std::string_view::npos) {
            t += c;
        } else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", u);
            t += buf;
        }
    }
    return t;
}

bool json_format_ok(std::string_view format, std::string_view v) {
    static constexpr std::string_view checked[] = {"date-time", "date",  "ipv4", "ipv6",
                                                   "hostname",  "email", "uuid"};
    for (std::string_view f : checked)
        if (f == format) return check_format(format, v);
    return true;
}

// A schema's bound as the library prints it (a big.Rat: "0/1", "1/2").
std::string rational(double v) {
    const std::string g = go_float(v);
    const auto dot = g.find('.');
    if (std::isfinite(v) && g.find_first_of("eE") == std::string::npos) {
        std::string digits = g;
        std::int64_t den = 1;
        if (dot != std::string::npos) {
            digits.erase(dot, 1);
            for (std::size_t i = dot; i < g.size() - 1 && den < 1'000'000'000'000'000; ++i)
                den *= 10;
        }
        if (digits.size() < 18) {
            std::int64_t num = std::stoll(digits);
            std::int64_t a = num < 0 ? -num : num, b = den;
            while (b) {
                const std::int64_t t = a % b;
                a = b;
                b = t;
            }
            if (a > 1) {
                num /= a;
                den /= a;
            }
            return std::to_string(num) + "/" + std::to_string(den);
        }
    }
    return g;
}

class JsonValidator {
public:
    JsonValidator(std::vector<JsonSchemaError>& out, const SchemaLoader& load,
                  const JsonSchemaLimits& limits, std::uint64_t& used,
                  std::set<std::string>& loaded, std::size_t& frames, std::uint64_t& regex_left)
        : out_(out), load_(load), limits_(limits), used_(used), loaded_(loaded), frames_(frames),
          regex_left_(regex_left) {}

    std::optional<Error> failure; // a schema problem: the validation is abandoned

    // `at`: the value's JSON pointer; `kw`: the keywords followed from the root schema.
    // `nest`: $refs followed and junctors entered since the value last descended (a schema
    // that refers to itself without consuming the value never ends).
    void validate(const Node& schema, const Node* doc, const Node& data, const std::string& at,
                  const std::string& kw_at, std::size_t depth, std::size_t nest = 0) {
        if (failure) return;
        struct Frame {
            std::size_t& n;
            explicit Frame(std::size_t& c) : n(++c) {}
            ~Frame() { --n; }
        } frame(frames_);
        if (frames_ > limits_.max_frames) {
            fail("schema and object nesting deeper than " + std::to_string(limits_.max_frames) +
                 " levels");
            return;
        }
        if (++used_ > limits_.max_checks) {
            fail("validation needs more than " + std::to_string(limits_.max_checks) + " checks");
            return;
        }
        if (depth > limits_.max_depth) {
            add(at, kw_at, "nesting deeper than " + std::to_string(limits_.max_depth) + " levels",
                data.mark);
            return;
        }
        // draft 4: a $ref replaces its siblings; a chain of them is followed here, not by
        // recursion.
        const Node* cur = &schema;
        std::string kwp = kw_at;
        while (cur->is_map()) {
            const Node* ref = kw(*cur, "$ref");
            if (!ref || !ref->is_string()) break;
            if (++nest > limits_.max_ref_hops) {
                fail("$ref " + quote(ref->text) + ": more than " +
                     std::to_string(limits_.max_ref_hops) +
                     " $refs and junctors without reaching the value's next level (a $ref "
                     "cycle)");
                return;
            }
            const Node* target_doc = doc;
            cur = resolve(ref->text, doc, target_doc);
            if (!cur) return;
            doc = target_doc;
            kwp += "/$ref";
        }
        const Node& s = *cur;
        if (!s.is_map()) return;
        // type
        std::vector<std::string> types;
        if (kw_true(s, "x-kubernetes-int-or-string")) {
            types = {"integer", "string"};
        } else if (const Node* t = kw(s, "type")) {
            if (t->is_string())
                types = {t->text};
            else if (t->is_seq())
                for (const auto& i : t->items)
                    if (i.is_string()) types.push_back(i.text);
        }
        const std::string have = json_type_of(data);
        const Scalar sc = scalar(data);
        const bool integral =
            sc.type == JType::number && std::isfinite(sc.num) && sc.num == std::floor(sc.num);
        if (!types.empty()) {
            bool ok = false;
            for (const auto& t : types)
                ok = ok || t == have || (t == "integer" && integral);
            if (!ok) {
                std::string expected;
                for (std::size_t i = 0; i < types.size(); ++i)
                    expected += (i ? " or " : "") + types[i];
                add(at, kwp + "/type", "expected " + expected + ", but got " + have, data.mark);
                return;
            }
        }
        if (const Node* en = kw_seq(s, "enum"); en && !en->items.empty()) {
            bool found = false;
            for (const auto& v : en->items)
                found = found || json_equal(v, data);
            if (!found) {
                std::string allowed;
                for (std::size_t i = 0; i < en->items.size(); ++i)
                    allowed += (i ? ", " : "") + display(en->items[i]);
                add(at, kwp + "/enum",
                    (en->items.size() == 1 ? "value must be " : "value must be one of ") + allowed,
                    data.mark);
            }
        }
        if (have == "string")
            if (const std::string f = kw_string(s, "format");
                !f.empty() && !json_format_ok(f, data.text))
                add(at, kwp + "/format", display(data) + " is not valid " + display(f), data.mark);
        if (data.is_map()) objects(s, doc, data, at, kwp, depth);
        if (data.is_seq()) arrays(s, doc, data, at, kwp, depth);
        if (have == "string") strings(s, data, at, kwp);
        if (have == "number") numbers(s, sc.num, data, at, kwp);
        junctors(s, doc, data, at, kwp, depth, nest + 1);
    }

private:
    static std::string child(const std::string& at, const std::string& key) {
        return at + "/" + pointer_token(key);
    }
    void add(const std::string& at, const std::string& kwp, std::string message,
             const io::Mark& m) {
        out_.push_back({at, kwp, std::move(message), m});
    }
    void fail(std::string message) {
        if (!failure) failure = Error::invalid(std::move(message));
    }

    // "#/a/b" in `doc`, or "other.json#/a/b" in the document the loader returns.
    const Node* resolve(const std::string& ref, const Node* doc, const Node*& target_doc) {
        const auto hash = ref.find('#');
        const std::string uri = ref.substr(0, hash);
        const std::string pointer = hash == std::string::npos ? "" : ref.substr(hash + 1);
        if (!uri.empty()) {
            if (!load_) {
                fail("$ref " + quote(ref) + ": no document to resolve " + quote(uri) + " against");
                return nullptr;
            }
            if (loaded_.insert(uri).second && loaded_.size() > limits_.max_documents) {
                fail("$ref " + quote(ref) + ": more than " + std::to_string(limits_.max_documents) +
                     " schema documents");
                return nullptr;
            }
            auto d = load_(uri);
            if (!d) {
                fail("$ref " + quote(ref) + ": " + d.error().message);
                return nullptr;
            }
            doc = *d;
        }
        target_doc = doc;
        const Node* node = doc;
        if (!node) {
            fail("$ref " + quote(ref) + ": no document");
            return nullptr;
        }
        if (!pointer.empty() && pointer[0] != '/') {
            fail("$ref " + quote(ref) + ": only JSON pointers (#/...) are supported");
            return nullptr;
        }
        for (std::size_t i = 1; i <= pointer.size();) {
            const auto slash = pointer.find('/', i);
            std::string token =
                pointer.substr(i, slash == std::string::npos ? std::string::npos : slash - i);
            std::string t;
            for (std::size_t k = 0; k < token.size(); ++k) {
                if (token[k] == '~' && k + 1 < token.size()) {
                    t += token[k + 1] == '1' ? '/' : '~';
                    ++k;
                } else if (token[k] == '%' && k + 2 < token.size() &&
                           std::isxdigit(static_cast<unsigned char>(token[k + 1])) &&
                           std::isxdigit(static_cast<unsigned char>(token[k + 2]))) {
                    t += static_cast<char>(std::stoi(token.substr(k + 1, 2), nullptr, 16));
                    k += 2;
                } else {
                    t += token[k];
                }
            }
            const Node* next = nullptr;
            if (node->is_map()) {
                next = node->get(t);
            } else if (node->is_seq() && !t.empty() && all_digits(t) && t.size() < 10) {
                const std::size_t n = std::stoul(t);
                if (n < node->items.size()) next = &node->items[n];
            }
            if (!next) {
                fail("$ref " + quote(ref) + ": " + quote(t) + " not found");
                return nullptr;
            }
            node = next;
            if (slash == std::string::npos) break;
            i = slash + 1;
        }
        return node;
    }

    void junctors(const Node& s, const Node* doc, const Node& data, const std::string& at,
                  const std::string& kwp, std::size_t depth, std::size_t nest) {
        auto attempt = [&](const Node& sub, const std::string& where,
                           std::vector<JsonSchemaError>& errs) {
            JsonValidator v(errs, load_, limits_, used_, loaded_, frames_, regex_left_);
            v.validate(sub, doc, data, at, where, depth, nest);
            if (v.failure && !failure) failure = v.failure;
        };
        if (const Node* n = kw_map(s, "not")) {
            std::vector<JsonSchemaError> errs;
            attempt(*n, kwp + "/not", errs);
            if (errs.empty()) add(at, kwp + "/not", "not failed", data.mark);
        }
        if (const Node* all = kw_seq(s, "allOf")) {
            // Each failing alternative's errors, in order (the first one is what is shown).
            for (std::size_t i = 0; i < all->items.size(); ++i) {
                std::vector<JsonSchemaError> errs;
                attempt(all->items[i], kwp + "/allOf/" + std::to_string(i), errs);
                out_.insert(out_.end(), errs.begin(), errs.end());
            }
        }
        if (const Node* any = kw_seq(s, "anyOf"); any && !any->items.empty()) {
            std::vector<JsonSchemaError> all_errs;
            bool ok = false;
            for (std::size_t i = 0; i < any->items.size() && !ok; ++i) {
                std::vector<JsonSchemaError> errs;
                attempt(any->items[i], kwp + "/anyOf/" + std::to_string(i), errs);
                if (errs.empty()) ok = true;
                all_errs.insert(all_errs.end(), errs.begin(), errs.end());
            }
            if (!ok) {
                if (all_errs.empty()) add(at, kwp + "/anyOf", "anyOf failed", data.mark);
                out_.insert(out_.end(), all_errs.begin(), all_errs.end());
            }
        }
        if (const Node* one = kw_seq(s, "oneOf"); one && !one->items.empty()) {
            std::vector<JsonSchemaError> all_errs;
            std::vector<std::size_t> valid;
            for (std::size_t i = 0; i < one->items.size() && valid.size() < 2; ++i) {
                std::vector<JsonSchemaError> errs;
                attempt(one->items[i], kwp + "/oneOf/" + std::to_string(i), errs);
                if (errs.empty())
                    valid.push_back(i);
                else
                    all_errs.insert(all_errs.end(), errs.begin(), errs.end());
            }
            if (valid.size() > 1)
                add(at, kwp + "/oneOf",
                    "valid against schemas at indexes " + std::to_string(valid[0]) + " and " +
                        std::to_string(valid[1]),
                    data.mark);
            else if (valid.empty())
                out_.insert(out_.end(), all_errs.begin(), all_errs.end());
        }
    }

    void strings(const Node& s, const Node& data, const std::string& at, const std::string& kwp) {
        const std::string& v = data.text;
        const auto len = static_cast<std::int64_t>(rune_count(v));
        if (auto mn = kw_int(s, "minLength"); mn && len < *mn)
            add(at, kwp + "/minLength",
                "length must be >= " + std::to_string(*mn) + ", but got " + std::to_string(len),
                data.mark);
        if (auto mx = kw_int(s, "maxLength"); mx && len > *mx)
            add(at, kwp + "/maxLength",
                "length must be <= " + std::to_string(*mx) + ", but got " + std::to_string(len),
                data.mark);
        if (const std::string pat = kw_string(s, "pattern"); !pat.empty()) {
            auto re = Regex::compile(pat);
            if (!re) {
                fail("pattern " + quote(pat) + ": " + re.error().message);
                return;
            }
            const Regex::Outcome o = re->search(v, regex_left_);
            if (o == Regex::Outcome::no_match)
                add(at, kwp + "/pattern", "does not match pattern " + display(pat), data.mark);
            else if (o == Regex::Outcome::too_costly)
                too_costly();
        }
    }

    void numbers(const Node& s, double v, const Node& data, const std::string& at,
                 const std::string& kwp) {
        const std::string val = go_float(v);
        // draft 4's boolean exclusiveMinimum/Maximum turn the bound into an exclusive one.
        if (auto mn = kw_number(s, "minimum")) {
            const bool ex = kw_true(s, "exclusiveMinimum");
            if (ex ? v <= *mn : v < *mn)
                add(at, kwp + (ex ? "/exclusiveMinimum" : "/minimum"),
                    std::string(ex ? "must be > " : "must be >= ") + rational(*mn) + " but found " +
                        val,
                    data.mark);
        }
        if (auto mx = kw_number(s, "maximum")) {
            const bool ex = kw_true(s, "exclusiveMaximum");
            if (ex ? v >= *mx : v > *mx)
                add(at, kwp + (ex ? "/exclusiveMaximum" : "/maximum"),
                    std::string(ex ? "must be < " : "must be <= ") + rational(*mx) + " but found " +
                        val,
                    data.mark);
        }
        if (auto m = kw_number(s, "multipleOf"); m && *m > 0) {
            const double q = v / *m;
            if (q != std::floor(q))
                add(at, kwp + "/multipleOf", val + " not multipleOf " + rational(*m), data.mark);
        }
    }

    void arrays(const Node& s, const Node* doc, const Node& data, const std::string& at,
                const std::string& kwp, std::size_t depth) {
        const auto n = static_cast<std::int64_t>(data.items.size());
        if (auto mn = kw_int(s, "minItems"); mn && n < *mn)
            add(at, kwp + "/minItems",
                "minimum " + std::to_string(*mn) + " items required, but found " +
                    std::to_string(n) + " items",
                data.mark);
        if (auto mx = kw_int(s, "maxItems"); mx && n > *mx)
            add(at, kwp + "/maxItems",
                "maximum " + std::to_string(*mx) + " items required, but found " +
                    std::to_string(n) + " items",
                data.mark);
        if (kw_true(s, "uniqueItems")) {
            std::map<std::string, std::size_t> seen;
            for (std::size_t i = 0; i < data.items.size(); ++i) {
                auto [it, fresh] = seen.emplace(canonical(data.items[i]), i);
                if (!fresh) {
                    add(at, kwp + "/uniqueItems",
                        "items at index " + std::to_string(it->second) + " and " +
                            std::to_string(i) + " are equal",
                        data.mark);
                    break;
                }
            }
        }
        if (const Node* it = kw(s, "items")) {
            if (it->is_map()) {
                for (std::size_t i = 0; i < data.items.size(); ++i)
                    validate(*it, doc, data.items[i], child(at, std::to_string(i)), kwp + "/items",
                             depth + 1);
            } else if (it->is_seq()) {
                for (std::size_t i = 0; i < data.items.size() && i < it->items.size(); ++i)
                    validate(it->items[i], doc, data.items[i], child(at, std::to_string(i)),
                             kwp + "/items/" + std::to_string(i), depth + 1);
                if (kw_false(s, "additionalItems") && data.items.size() > it->items.size())
                    add(at, kwp + "/additionalItems",
                        "only " + std::to_string(it->items.size()) +
                            " items are allowed, but found " + std::to_string(data.items.size()) +
                            " items",
                        data.mark);
            }
        }
    }

    void objects(const Node& s, const Node* doc, const Node& data, const std::string& at,
                 const std::string& kwp, std::size_t depth) {
        const auto n = static_cast<std::int64_t>(data.fields.size());
        if (auto mn = kw_int(s, "minProperties"); mn && n < *mn)
            add(at, kwp + "/minProperties",
                "minimum " + std::to_string(*mn) + " properties allowed, but found " +
                    std::to_string(n) + " properties",
                data.mark);
        if (auto mx = kw_int(s, "maxProperties"); mx && n > *mx)
            add(at, kwp + "/maxProperties",
                "maximum " + std::to_string(*mx) + " properties allowed, but found " +
                    std::to_string(n) + " properties",
                data.mark);
        if (const Node* req = kw_seq(s, "required")) {
            std::string missing;
            for (const auto& r : req->items)
                if (r.is_string() && !data.get(r.text))
                    missing += (missing.empty() ? "" : ", ") + display(r.text);
            if (!missing.empty())
                add(at, kwp + "/required", "missing properties: " + missing, data.mark);
        }
        const Node* props = kw_map(s, "properties");
        if (props)
            for (const auto& p : props->fields)
                if (const Node* v = data.get(p.key))
                    validate(p.value, doc, *v, child(at, p.key),
                             kwp + "/properties/" + pointer_token(p.key), depth + 1);
        const Node* patterns = kw_map(s, "patternProperties");
        const Node* ap = kw_map(s, "additionalProperties");
        const bool closed = kw_false(s, "additionalProperties") &&
                            !kw_true(s, "x-kubernetes-preserve-unknown-fields");
        std::string extra;
        io::Mark extra_mark;
        for (const auto& f : data.fields) {
            bool matched = props && props->get(f.key);
            if (patterns)
                for (const auto& p : patterns->fields) {
                    auto re = Regex::compile(p.key);
                    if (!re) {
                        fail("patternProperties " + quote(p.key) + ": " + re.error().message);
                        return;
                    }
                    const Regex::Outcome o = re->search(f.key, regex_left_);
                    if (o == Regex::Outcome::too_costly) {
                        too_costly();
                        return;
                    }
                    if (o == Regex::Outcome::match) {
                        matched = true;
                        validate(p.value, doc, f.value, child(at, f.key),
                                 kwp + "/patternProperties/" + pointer_token(p.key), depth + 1);
                    }
                }
            if (matched) continue;
            if (ap) {
                validate(*ap, doc, f.value, child(at, f.key), kwp + "/additionalProperties",
                         depth + 1);
            } else if (closed) {
                if (extra.empty()) extra_mark = f.key_mark;
                extra += (extra.empty() ? "" : ", ") + display(f.key);
            }
        }
        if (!extra.empty())
            add(at, kwp + "/additionalProperties", "additionalProperties " + extra + " not allowed",
                extra_mark);
    }

    std::vector<JsonSchemaError>& out_;
    const SchemaLoader& load_;
    const JsonSchemaLimits& limits_;
    std::uint64_t& used_;
    std::set<std::string>& loaded_;
    std::size_t& frames_;       // validate() calls active, junctors' included
    std::uint64_t& regex_left_; // steps of pattern matching left to the validation

    // The validation's matching budget is spent: it is abandoned.
    void too_costly() {
        fail("matching the schema's patterns needs more than " +
             std::to_string(limits_.max_regex_steps) + " steps of regular-expression matching");
    }
};

// ValidateDefaults: each default carries nothing pruning drops and validates against its own
// schema (a validator rooted there, so the name in kube-openapi's text is empty). Defaults under
// additionalProperties are not followed (the structural checks forbid them there).
void check_defaults(const Node& s, const Path& p, std::vector<FieldError>& out, int depth) {
    if (!s.is_map() || depth > 256) return;
    if (const Node* def = kw(s, "default")) {
        const Path dp = p.child("default");
        Node pruned = *def;
        prune(pruned, &s, kw_true(s, "x-kubernetes-embedded-resource"), 512);
        if (!json_equal(pruned, *def))
            Errors(out).invalid(dp, value_text(*def), "must not have unknown fields", def->mark);
        Validator v(out, dp.s, AdmissionLimits{});
        v.validate(s, *def, "", 0);
    }
    if (const Node* it = items_schema(s)) check_defaults(*it, p.child("items"), out, depth + 1);
    if (const Node* props = kw_map(s, "properties"))
        for (const auto& e : props->fields)
            check_defaults(e.value, p.child("properties").key(e.key), out, depth + 1);
}

std::string parent_of(std::string_view schema_path) {
    // "spec.config.openAPIV3Schema" -> "spec.config": where "openAPIV3Schema.nullable" hangs.
    const auto dot = schema_path.rfind('.');
    return dot == std::string_view::npos ? std::string() : std::string(schema_path.substr(0, dot));
}

} // namespace

std::vector<FieldError> check_schema(const io::Node& schema, std::string_view path) {
    std::vector<FieldError> structural, openapi, out;
    const Path root{std::string(path)};
    if (kw_true(schema, "nullable")) {
        Path np{parent_of(path)};
        np = np.child("openAPIV3Schema.nullable");
        Errors(out).forbidden(np, "nullable cannot be true at the root");
    }
    SchemaChecker c(structural, openapi);
    // The manifest's JSON decoding comes first: a keyword of the wrong kind stops everything.
    c.kinds_all(schema, root, 0);
    if (!openapi.empty()) {
        out.insert(out.end(), openapi.begin(), openapi.end());
        return out;
    }
    c.openapi(schema, root, 0);
    if (schema.is_map()) {
        c.invariants(schema, Level::root, root, 0);
        c.completeness_all(schema, root, 0);
    }
    std::sort(structural.begin(), structural.end(),
              [](const FieldError& a, const FieldError& b) { return a.message < b.message; });
    if (!structural.empty()) {
        out.insert(out.end(), structural.begin(), structural.end());
    } else if (openapi.empty()) {
        check_defaults(schema, root, out, 0);
    }
    out.insert(out.end(), openapi.begin(), openapi.end());
    // field.ErrorList.ToAggregate drops repeated messages.
    std::set<std::string> seen;
    std::vector<FieldError> unique;
    for (auto& e : out)
        if (seen.insert(e.message).second) unique.push_back(std::move(e));
    return unique;
}

Admission admit_config(const io::Node* schema, const io::Node& config, std::string_view path,
                       const AdmissionLimits& limits) {
    Admission a;
    a.config = config;
    if (!a.config.is_map()) {
        // Package Operator decodes the configuration into a map: anything else is refused.
        if (!a.config.is_null()) {
            const Path p{std::string(path)};
            Errors(a.violations)
                .invalid(p, quote(jtype_name(scalar(config).type)), "must be an object",
                         config.mark);
        }
        a.config = Node::map();
        if (!a.violations.empty()) return a;
    }
    if (!schema) {
        a.config.fields.clear();
        return a;
    }
    prune(a.config, schema, true, limits.max_depth);
    apply_defaults(a.config, schema, limits.max_depth);
    a.violations = validate_config(*schema, a.config, path, limits);
    return a;
}

std::vector<FieldError> validate_config(const io::Node& schema, const io::Node& config,
                                        std::string_view path, const AdmissionLimits& limits) {
    std::vector<FieldError> out;
    auto budget = std::make_shared<Budget>(
        Budget{0, limits.max_checks, {}, limits.max_regex_steps, limits.max_regex_steps});
    Validator v(out, std::string(path), limits, budget);
    v.validate(schema, config, "", 0);
    // Wherever it happened (inside a junctor's alternative too), running out is reported.
    if (budget->stopped) out.push_back(*budget->stopped);
    std::set<std::string> seen;
    std::vector<FieldError> unique;
    for (auto& e : out)
        if (seen.insert(e.message).second) unique.push_back(std::move(e));
    return unique;
}

Result<std::vector<JsonSchemaError>> validate_json_schema(const io::Node& schema,
                                                          const io::Node& value,
                                                          const SchemaLoader& load,
                                                          const JsonSchemaLimits& limits) {
    std::vector<JsonSchemaError> out;
    std::uint64_t used = 0;
    std::set<std::string> loaded;
    std::size_t frames = 0;
    std::uint64_t regex_left = limits.max_regex_steps;
    JsonValidator v(out, load, limits, used, loaded, frames, regex_left);
    v.validate(schema, &schema, value, "", "", 0);
    if (v.failure) return fail(std::move(*v.failure));
    return out;
}

} // namespace kpkg::pko
