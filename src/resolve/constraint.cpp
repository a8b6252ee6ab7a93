// olm.constraint properties: parsed and checked once, then asked of candidate bundles.
//
// Facts this follows (operator-framework/api pkg/constraints/constraint.go and OLM's resolver,
// pkg/controller/registry/resolver/resolver.go and cache/predicates.go):
//  - the value is decoded with Go's encoding/json into the Constraint struct with unknown fields
//    disallowed; Go matches keys to fields case-insensitively and takes null as "not given";
//  - a value larger than 2<<16 bytes (128 KiB) is refused before decoding;
//  - OLM turns the first of gvk, package, all, any, not, cel that is set into a predicate over ONE
//    bundle (a constraint with none of them is "constraint is empty"); the deprecated `none` is
//    still decoded but no longer evaluated;
//  - gvk holds when some olm.gvk property has that group, version and kind; package holds when
//    some olm.package property names the package and some olm.package property has a version
//    (strict semver) in the blang range; all/any/not are and/or/nor of their children over the
//    same bundle (all of nothing holds, any of nothing does not, not of nothing holds); a CEL
//    rule that fails to evaluate does not hold.
// kpkg is stricter in one place: a constraint that sets several of gvk/package/cel/all/any/not is
// an error rather than silently using the first.
#include "kpkg/resolve/constraint.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "kpkg/cel/cel.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::resolve {

namespace {

char fold(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// ASCII case-insensitive equality, as encoding/json matches a key to a struct field.
bool equal_fold(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (fold(a[i]) != fold(b[i])) return false;
    return true;
}

// A string field of a JSON object read as Go's encoding/json fills a string field of a struct:
// every key that matches case-insensitively is applied in document order (so the last one wins),
// null leaves the field alone, any other non-string makes the whole decoding fail.
struct GoString {
    std::string_view value;
    bool type_error = false;
};
GoString go_string_field(const io::Node& obj, std::string_view name) {
    GoString out;
    for (const auto& f : obj.fields) {
        if (!equal_fold(f.key, name)) continue;
        if (f.value.is_null()) continue;
        if (!f.value.is_string()) {
            out.type_error = true;
            continue;
        }
        out.value = f.value.text;
    }
    return out;
}

// Approximate compact-JSON size of a node, stopping early beyond `limit` (never below the real
// size by more than the punctuation it does not count).
std::size_t rough_size(const io::Node& n, std::size_t limit, std::size_t acc = 0, int depth = 0) {
    if (acc > limit || depth > 600) return acc;
    acc += n.text.size() + 1;
    for (const auto& item : n.items) {
        acc = rough_size(item, limit, acc, depth + 1);
        if (acc > limit) return acc;
    }
    for (const auto& f : n.fields) {
        acc += f.key.size() + 3;
        acc = rough_size(f.value, limit, acc, depth + 1);
        if (acc > limit) return acc;
    }
    return acc;
}

// "null", "a string", "an object", ... for messages about what was found.
std::string a_kind(const io::Node& n) {
    if (n.is_null()) return "null";
    const std::string k = io::kind_name(n.kind);
    return (k[0] == 'i' || k[0] == 'o' ? "an " : "a ") + k;
}

class ConstraintParser {
public:
    explicit ConstraintParser(const SourcePos& where) : where_(where) {}

    Result<Constraint> parse(const io::Node& value, const std::string& path, int depth) {
        if (depth > max_constraint_depth)
            return bad(path, "compound constraints nest deeper than " +
                                 std::to_string(max_constraint_depth) + " levels");
        if (!value.is_map())
            return bad(path, "a constraint must be an object, not " + a_kind(value));
        static constexpr std::array<std::string_view, 8> known = {
            "failureMessage", "gvk", "package", "cel", "all", "any", "not", "none"};
        auto fields = KPKG_TRY(match_fields(value, known, path));
        Constraint c;
        if (const io::Node* m = fields[0]) {
            if (!m->is_string()) return type_error(path, "failureMessage", *m, "a string");
            c.failure_message = m->text;
        }
        // In OLM's order of preference, which decides when several are given.
        static constexpr std::array<std::size_t, 6> order = {1, 2, 4, 5, 6, 3};
        std::vector<std::size_t> given;
        for (std::size_t k : order)
            if (fields[k]) given.push_back(k);
        if (fields[7] && !fields[6])
            return bad(path, "\"none\" is deprecated and OLM no longer evaluates it (it reports "
                             "\"constraint is empty\"); write \"not\"");
        if (given.empty())
            return bad(path, "constraint is empty: give one of gvk, package, cel, all, any or not");
        if (given.size() > 1) {
            std::string names;
            for (std::size_t k = 0; k < given.size(); ++k)
                names += (k == 0                  ? ""
                          : k + 1 == given.size() ? " and "
                                                  : ", ") +
                         std::string(known[given[k]]);
            Error e = Error::invalid(at(path) + ": " + names +
                                         " are all given; a constraint holds exactly one of gvk, "
                                         "package, cel, all, any or not",
                                     where_);
            e.note("OLM would silently use only " + std::string(known[given[0]]));
            return fail(std::move(e));
        }
        const std::size_t which = given[0];
        const io::Node& body = *fields[which];
        const std::string sub = join(path, std::string(known[which]));
        switch (which) {
        case 1: {
            c.kind = Constraint::Kind::gvk;
            static constexpr std::array<std::string_view, 3> names = {"group", "version", "kind"};
            if (!body.is_map()) return type_error(path, "gvk", body, "an object");
            auto f = KPKG_TRY(match_fields(body, names, sub));
            auto text = [&](std::size_t k, bool required) -> Result<std::string> {
                const std::string field = sub + "." + std::string(names[k]);
                if (!f[k]) {
                    if (required) return bad(field, "missing");
                    return std::string();
                }
                if (!f[k]->is_string()) return type_error(sub, names[k], *f[k], "a string");
                if (required && f[k]->text.empty()) return bad(field, "empty");
                return f[k]->text;
            };
            c.group = KPKG_TRY(text(0, false));
            c.version = KPKG_TRY(text(1, true));
            c.kind_name = KPKG_TRY(text(2, true));
            return c;
        }
        case 2: {
            c.kind = Constraint::Kind::package;
            static constexpr std::array<std::string_view, 2> names = {"packageName",
                                                                      "versionRange"};
            if (!body.is_map()) return type_error(path, "package", body, "an object");
            auto f = KPKG_TRY(match_fields(body, names, sub));
            for (std::size_t k = 0; k < 2; ++k) {
                const std::string field = sub + "." + std::string(names[k]);
                if (!f[k]) return bad(field, "missing");
                if (!f[k]->is_string()) return type_error(sub, names[k], *f[k], "a string");
                if (f[k]->text.empty()) return bad(field, "empty");
            }
            c.package_name = f[0]->text;
            c.version_range = f[1]->text;
            auto r = semver::Range::parse(c.version_range);
            if (!r) return bad(sub + ".versionRange", r.error().message);
            c.range = std::move(r).take();
            return c;
        }
        case 3: {
            c.kind = Constraint::Kind::cel;
            static constexpr std::array<std::string_view, 1> names = {"rule"};
            if (!body.is_map()) return type_error(path, "cel", body, "an object");
            auto f = KPKG_TRY(match_fields(body, names, sub));
            if (!f[0]) return bad(sub + ".rule", "missing");
            if (!f[0]->is_string()) return type_error(sub, "rule", *f[0], "a string");
            c.rule = f[0]->text;
            if (c.rule.find_first_not_of(" \t\r\n\f") == std::string::npos)
                return bad(sub + ".rule", "empty");
            auto prog = cel::Program::compile(c.rule);
            if (!prog) {
                Error e = Error::invalid(at(sub + ".rule") + ": " + prog.error().message, where_);
                for (const auto& n : prog.error().notes)
                    e.note(n);
                return fail(std::move(e));
            }
            c.program = std::move(prog).take();
            return c;
        }
        default: {
            c.kind = which == 4   ? Constraint::Kind::all
                     : which == 5 ? Constraint::Kind::any
                                  : Constraint::Kind::none;
            static constexpr std::array<std::string_view, 1> names = {"constraints"};
            if (!body.is_map()) return type_error(path, known[which], body, "an object");
            auto f = KPKG_TRY(match_fields(body, names, sub));
            if (!f[0]) return c; // no constraints: OLM evaluates the empty and/or/nor
            if (!f[0]->is_seq()) return type_error(sub, "constraints", *f[0], "a list");
            const auto& items = f[0]->items;
            c.children.reserve(items.size());
            for (std::size_t k = 0; k < items.size(); ++k) {
                auto child =
                    parse(items[k], sub + ".constraints[" + std::to_string(k) + "]", depth + 1);
                if (!child) return fail(std::move(child).error());
                c.children.push_back(std::move(child).take());
            }
            return c;
        }
        }
    }

    static constexpr int max_constraint_depth = 100;

private:
    static std::string join(const std::string& path, const std::string& name) {
        return path.empty() ? name : path + "." + name;
    }
    static std::string at(const std::string& path) {
        return path.empty() ? "olm.constraint" : "olm.constraint " + path;
    }
    Failure bad(const std::string& path, std::string what) const {
        return fail(Error::invalid(at(path) + ": " + what, where_));
    }
    Failure type_error(const std::string& path, std::string_view field, const io::Node& got,
                       const char* want) const {
        return bad(join(path, std::string(field)),
                   std::string("must be ") + want + ", not " + a_kind(got));
    }

    // The object's fields by position in `known` (nullptr when absent or null). Keys match
    // case-insensitively as in Go; an unknown key or two keys for one field are errors.
    template <std::size_t N>
    Result<std::array<const io::Node*, N>>
    match_fields(const io::Node& obj, const std::array<std::string_view, N>& known,
                 const std::string& path) const {
        std::array<const io::Node*, N> out{};
        std::array<const io::MapEntry*, N> seen{};
        for (const auto& f : obj.fields) {
            std::size_t hit = N;
            for (std::size_t k = 0; k < N && hit == N; ++k)
                if (f.key == known[k]) hit = k;
            for (std::size_t k = 0; k < N && hit == N; ++k)
                if (equal_fold(f.key, known[k])) hit = k;
            if (hit == N) {
                std::string list;
                for (std::size_t k = 0; k < N; ++k) {
                    if (known[k] == "none") continue;
                    list += (list.empty() ? "" : ", ") + std::string(known[k]);
                }
                Error e = Error::invalid(at(path) + ": unknown field \"" + f.key + "\"", where_);
                e.note("known fields here: " + list);
                return fail(std::move(e));
            }
            if (seen[hit])
                return bad(path,
                           "\"" + seen[hit]->key + "\" and \"" + f.key + "\" name the same field");
            seen[hit] = &f;
            if (!f.value.is_null()) out[hit] = &f.value;
        }
        return out;
    }

    SourcePos where_;
};

bool gvk_matches(const Constraint& c, const PropertyValue& p) {
    if (p.type != "olm.gvk" || !p.value.is_map()) return false;
    GoString g = go_string_field(p.value, "group"), v = go_string_field(p.value, "version"),
             k = go_string_field(p.value, "kind");
    if (g.type_error || v.type_error || k.type_error) return false;
    return g.value == c.group && v.value == c.version && k.value == c.kind_name;
}

bool package_satisfies(const Constraint& c, const std::vector<PropertyValue>& props) {
    bool name_ok = false, version_ok = false;
    for (const auto& p : props) {
        if (p.type != "olm.package" || !p.value.is_map()) continue;
        GoString name = go_string_field(p.value, "packageName"),
                 version = go_string_field(p.value, "version");
        if (name.type_error || version.type_error) continue;
        if (name.value == c.package_name) name_ok = true;
        if (!version_ok) {
            auto v = semver::Version::parse(version.value);
            if (v && c.range.contains(*v)) version_ok = true;
        }
    }
    return name_ok && version_ok;
}

std::string one_line(std::string_view s) {
    std::string out;
    bool space = false;
    for (char ch : s) {
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f') {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += ch;
    }
    return out;
}

} // namespace

Result<Constraint> parse_constraint(const io::Node& value, const SourcePos& where) {
    if (rough_size(value, max_constraint_bytes) > max_constraint_bytes ||
        io::to_json(value, io::JsonStyle{0, true, false}).size() - 1 > max_constraint_bytes)
        return fail(Error::invalid("olm.constraint: the value is larger than " +
                                       std::to_string(max_constraint_bytes) +
                                       " bytes (128 KiB, OLM's limit)",
                                   where));
    return ConstraintParser(where).parse(value, "", 0);
}

Result<Constraint> parse_constraint(std::string_view json, const SourcePos& where) {
    if (json.size() > max_constraint_bytes)
        return fail(Error::invalid(
            "olm.constraint: the value is " + std::to_string(json.size()) + " bytes, larger than " +
                std::to_string(max_constraint_bytes) + " (128 KiB, OLM's limit)",
            where));
    auto docs = io::parse_json(json, "olm.constraint value");
    if (!docs)
        return fail(Error::invalid(
            "olm.constraint: the value is not valid JSON: " + docs.error().message, where));
    if (docs->size() != 1)
        return fail(Error::invalid("olm.constraint: the value must be one JSON value, not " +
                                       std::to_string(docs->size()),
                                   where));
    return ConstraintParser(where).parse((*docs)[0].root, "", 0);
}

bool satisfies(const Constraint& c, const std::vector<PropertyValue>& properties) {
    switch (c.kind) {
    case Constraint::Kind::gvk:
        return std::any_of(properties.begin(), properties.end(),
                           [&](const PropertyValue& p) { return gvk_matches(c, p); });
    case Constraint::Kind::package:
        return package_satisfies(c, properties);
    case Constraint::Kind::cel:
        return c.program && c.program->evaluate(properties).holds();
    case Constraint::Kind::all:
        return std::all_of(c.children.begin(), c.children.end(),
                           [&](const Constraint& k) { return satisfies(k, properties); });
    case Constraint::Kind::any:
        return std::any_of(c.children.begin(), c.children.end(),
                           [&](const Constraint& k) { return satisfies(k, properties); });
    case Constraint::Kind::none:
        return std::none_of(c.children.begin(), c.children.end(),
                            [&](const Constraint& k) { return satisfies(k, properties); });
    }
    return false;
}

std::vector<PropertyValue> constraint_properties(const model::Catalog& cat,
                                                 const model::Bundle& bundle) {
    std::vector<PropertyValue> out;
    const auto props = cat.properties_of(bundle);
    out.reserve(props.size());
    for (const model::Property& p : props) {
        PropertyValue pv;
        pv.type = cat.string(p.type);
        auto field = [&](const char* key, model::Str s) {
            pv.value.set(key, io::Node::string(cat.string(s)));
        };
        if (p.json != 0) {
            auto docs = io::parse_json(cat.str(p.json), "property");
            if (docs && docs->size() == 1) pv.value = std::move((*docs)[0].root);
        } else {
            switch (p.kind) {
            case model::PropKind::package:
                pv.value = io::Node::map();
                field("packageName", p.a);
                field("version", p.b);
                if (p.c != 0) field("release", p.c);
                break;
            case model::PropKind::gvk:
            case model::PropKind::gvk_required:
                pv.value = io::Node::map();
                field("group", p.a);
                field("kind", p.c);
                field("version", p.b);
                break;
            case model::PropKind::package_required:
                pv.value = io::Node::map();
                field("packageName", p.a);
                field("versionRange", p.b);
                break;
            case model::PropKind::label:
            case model::PropKind::label_required:
                pv.value = io::Node::map();
                field("label", p.a);
                break;
            default:
                break; // a payload that was not kept: null
            }
        }
        out.push_back(std::move(pv));
    }
    return out;
}

std::string describe(const Constraint& c) {
    switch (c.kind) {
    case Constraint::Kind::gvk:
        return "an API " + (c.group.empty() ? std::string() : text::shown(c.group) + "/") +
               text::shown(c.version) + " " + text::shown(c.kind_name);
    case Constraint::Kind::package:
        return "package " + text::shown(c.package_name) + " in range " +
               text::shown(c.version_range);
    case Constraint::Kind::cel: {
        std::string rule = one_line(c.rule);
        if (rule.size() > 200) { // cut at a character boundary
            std::size_t cut = 200;
            while (cut > 0 && (static_cast<unsigned char>(rule[cut]) & 0xC0) == 0x80)
                --cut;
            rule = rule.substr(0, cut) + "...";
        }
        return "CEL rule " + rule;
    }
    case Constraint::Kind::all:
    case Constraint::Kind::any:
    case Constraint::Kind::none: {
        std::string out = c.kind == Constraint::Kind::all   ? "all of ("
                          : c.kind == Constraint::Kind::any ? "any of ("
                                                            : "none of (";
        for (std::size_t k = 0; k < c.children.size(); ++k)
            out += (k ? ", " : "") + describe(c.children[k]);
        return out + ")";
    }
    }
    return "?";
}

} // namespace kpkg::resolve
