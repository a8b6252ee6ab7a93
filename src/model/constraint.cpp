// olm.constraint: the grammar (check_constraint), the predicate (satisfies), the words
// (describe).
//
// The checker walks the whole value and records every problem, in the order OLM's decoder and
// kpkg's own checks would meet them at each level: the nesting bound, the type of the
// constraint, its keys (unknown, duplicate, case variants), failureMessage, which kinds are
// given, then the body of each kind given. A caller that stops at the first problem (resolve)
// therefore reports the one OLM would.
#include "kpkg/model/constraint.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "kpkg/core/text.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::model {

namespace {

using Code = ConstraintProblem::Code;

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

bool blank(std::string_view s) {
    return s.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos;
}

std::string join(const std::string& path, std::string_view name) {
    return path.empty() ? std::string(name) : path + "." + std::string(name);
}

// "null", "a string", "an object", ... for messages about what was found.
std::string a_kind(io::Kind k) {
    if (k == io::Kind::null) return "null";
    const std::string name = io::kind_name(k);
    return (name[0] == 'i' || name[0] == 'o' ? "an " : "a ") + name;
}

// The fields of a constraint, in the order the struct declares them; "none" is last.
constexpr std::array<std::string_view, 8> k_constraint_fields = {
    "failureMessage", "gvk", "package", "cel", "all", "any", "not", "none"};
// OLM's order of preference between the kinds (indices into k_constraint_fields).
constexpr std::array<std::size_t, 6> k_preference = {1, 2, 4, 5, 6, 3};

class Checker {
public:
    Checker(ConstraintCheck& out, RuleCache* rules) : out_(out), rules_(rules) {}

    // Checks one constraint at `path`; fills `c` (meaningful only when no fatal problem).
    void constraint(const io::Node& value, const std::string& path, int depth, Constraint& c) {
        if (depth > max_constraint_depth) {
            add(Code::too_deep, path, value.mark);
            return;
        }
        if (!value.is_map()) {
            add(Code::not_object, path, value.mark).found = value.kind;
            return;
        }
        auto f = fields(value, k_constraint_fields, path);
        if (const io::Node* m = f[0]) {
            if (!m->is_string())
                wrong_type(path, "failureMessage", *m, "a string");
            else
                c.failure_message = m->text;
        }
        std::vector<std::size_t> given;
        for (std::size_t k : k_preference)
            if (f[k]) given.push_back(k);
        if (f[7]) {
            // OLM decodes "none" but no longer evaluates it: alone, the constraint is empty;
            // next to another kind, it is ignored. Its body is checked all the same.
            add(Code::none_deprecated, path, f[7]->mark).fatal = given.empty();
            Constraint ignored;
            compound(*f[7], "none", path, depth, given.empty() ? c : ignored);
            if (given.empty()) return;
        }
        if (given.empty()) {
            add(Code::empty_constraint, path, value.mark);
            return;
        }
        if (given.size() > 1) {
            ConstraintProblem& p = add(Code::several_kinds, path, value.mark);
            for (std::size_t k : given)
                p.kinds.emplace_back(k_constraint_fields[k]);
            for (const auto& e : value.fields)
                for (std::size_t k : given)
                    if (equal_fold(e.key, k_constraint_fields[k]) && !e.value.is_null() &&
                        std::find(p.written.begin(), p.written.end(),
                                  std::string(k_constraint_fields[k])) == p.written.end())
                        p.written.emplace_back(k_constraint_fields[k]);
            p.notes.push_back("OLM would silently use only " + p.kinds[0]);
        }
        // The body of the kind OLM uses fills `c`; the others are checked for their problems.
        for (std::size_t i = 0; i < given.size(); ++i) {
            Constraint other;
            body(given[i], *f[given[i]], path, depth, i == 0 ? c : other);
        }
    }

private:
    ConstraintCheck& out_;
    RuleCache* rules_;

    ConstraintProblem& add(Code code, const std::string& path, const io::Mark& mark) {
        ConstraintProblem p;
        p.code = code;
        p.path = path;
        p.mark = mark;
        out_.problems.push_back(std::move(p));
        return out_.problems.back();
    }
    void wrong_type(const std::string& path, std::string_view field, const io::Node& got,
                    const char* want) {
        ConstraintProblem& p = add(Code::wrong_type, path, got.mark);
        p.field = field;
        p.want = want;
        p.found = got.kind;
    }

    // The object's fields by position in `known` (nullptr when absent or null). Keys match
    // case-insensitively as in Go (an exact match first); unknown keys and two keys for one
    // field are fatal, a key that matches only when case is ignored is noted.
    template <std::size_t N>
    std::array<const io::Node*, N> fields(const io::Node& obj,
                                          const std::array<std::string_view, N>& known,
                                          const std::string& path) {
        std::array<const io::Node*, N> out{};
        std::array<const io::MapEntry*, N> seen{};
        for (const auto& f : obj.fields) {
            std::size_t hit = N;
            for (std::size_t k = 0; k < N && hit == N; ++k)
                if (f.key == known[k]) hit = k;
            bool folded = false;
            for (std::size_t k = 0; k < N && hit == N; ++k)
                if (equal_fold(f.key, known[k])) {
                    hit = k;
                    folded = true;
                }
            if (hit == N) {
                ConstraintProblem& p = add(Code::unknown_field, path, f.key_mark);
                p.key = f.key;
                for (std::size_t k = 0; k < N; ++k)
                    if (known[k] != "none") p.allowed.emplace_back(known[k]);
                p.notes.push_back("known fields here: " + text::join(p.allowed, ", "));
                continue;
            }
            if (seen[hit]) {
                ConstraintProblem& p = add(Code::duplicate_field, path, f.key_mark);
                p.field = known[hit];
                p.other = seen[hit]->key;
                p.key = f.key;
                continue;
            }
            if (folded) {
                ConstraintProblem& p = add(Code::case_variant, path, f.key_mark);
                p.fatal = false;
                p.field = known[hit];
                p.key = f.key;
            }
            seen[hit] = &f;
            if (!f.value.is_null()) out[hit] = &f.value;
        }
        return out;
    }

    // A required string field of a body: present, a string, not blank.
    const io::Node* required_string(const io::Node* f, const io::Node& body,
                                    const std::string& path, std::string_view name) {
        if (!f) {
            add(Code::missing, path, body.mark).field = name;
            return nullptr;
        }
        if (!f->is_string()) {
            wrong_type(path, name, *f, "a string");
            return nullptr;
        }
        if (blank(f->text)) {
            add(Code::empty, path, f->mark).field = name;
            return nullptr;
        }
        return f;
    }

    void body(std::size_t which, const io::Node& body, const std::string& parent, int depth,
              Constraint& c) {
        const std::string_view name = k_constraint_fields[which];
        const std::string path = join(parent, name);
        switch (which) {
        case 1: {
            c.kind = Constraint::Kind::gvk;
            if (!body.is_map()) return wrong_type(parent, name, body, "an object");
            static constexpr std::array<std::string_view, 3> names = {"group", "version", "kind"};
            auto f = fields(body, names, path);
            if (f[0]) { // the core group is ""
                if (!f[0]->is_string())
                    wrong_type(path, names[0], *f[0], "a string");
                else
                    c.gvk.group = f[0]->text;
            }
            if (auto* v = required_string(f[1], body, path, names[1])) c.gvk.version = v->text;
            if (auto* k = required_string(f[2], body, path, names[2])) c.gvk.kind = k->text;
            return;
        }
        case 2: {
            c.kind = Constraint::Kind::package;
            if (!body.is_map()) return wrong_type(parent, name, body, "an object");
            static constexpr std::array<std::string_view, 2> names = {"packageName",
                                                                      "versionRange"};
            auto f = fields(body, names, path);
            if (auto* n = required_string(f[0], body, path, names[0])) c.package_name = n->text;
            if (auto* r = required_string(f[1], body, path, names[1])) {
                c.version_range = r->text;
                auto range = semver::Range::parse(r->text);
                if (!range) {
                    ConstraintProblem& p = add(Code::bad_range, path, r->mark);
                    p.field = names[1];
                    p.value = r->text;
                    p.detail = range.error().message;
                } else {
                    for (const auto& w : range->warnings()) {
                        ConstraintProblem& p = add(Code::range_warning, path, r->mark);
                        p.fatal = false;
                        p.field = names[1];
                        p.value = r->text;
                        p.detail = w;
                    }
                    c.range = std::move(range).take();
                }
            }
            return;
        }
        case 3: {
            c.kind = Constraint::Kind::cel;
            if (!body.is_map()) return wrong_type(parent, name, body, "an object");
            static constexpr std::array<std::string_view, 1> names = {"rule"};
            auto f = fields(body, names, path);
            const io::Node* r = required_string(f[0], body, path, names[0]);
            if (!r) return;
            c.rule = r->text;
            const Result<std::shared_ptr<const cel::Program>>* prog = nullptr;
            Result<std::shared_ptr<const cel::Program>> own = std::shared_ptr<const cel::Program>();
            if (rules_) {
                prog = &rules_->compile(c.rule);
            } else {
                own = cel::Program::compile(c.rule);
                prog = &own;
            }
            if (!prog->ok()) {
                ConstraintProblem& p = add(Code::rule_compile, path, r->mark);
                p.field = names[0];
                p.value = c.rule;
                p.detail = prog->error().message;
                p.notes = prog->error().notes;
                return;
            }
            c.program = **prog;
            return;
        }
        default:
            c.kind = which == 4   ? Constraint::Kind::all
                     : which == 5 ? Constraint::Kind::any
                                  : Constraint::Kind::none;
            compound(body, name, parent, depth, c);
            return;
        }
    }

    // all / any / not (and the deprecated none): {"constraints": [...]}.
    void compound(const io::Node& body, std::string_view name, const std::string& parent, int depth,
                  Constraint& c) {
        const std::string path = join(parent, name);
        if (!body.is_map()) return wrong_type(parent, name, body, "an object");
        static constexpr std::array<std::string_view, 1> names = {"constraints"};
        auto f = fields(body, names, path);
        if (!f[0]) { // OLM evaluates the empty and/or/nor
            add(Code::no_constraints, path, body.mark).fatal = false;
            return;
        }
        if (!f[0]->is_seq()) return wrong_type(path, names[0], *f[0], "a list");
        const auto& items = f[0]->items;
        if (items.empty()) {
            add(Code::empty_constraints, path, f[0]->mark).fatal = false;
            return;
        }
        c.children.resize(items.size());
        for (std::size_t k = 0; k < items.size(); ++k)
            constraint(items[k], path + ".constraints[" + std::to_string(k) + "]", depth + 1,
                       c.children[k]);
    }
};

ConstraintCheck run_check(const io::Node& value, const ConstraintOptions& opts) {
    ConstraintCheck out;
    std::size_t bytes = opts.json_bytes;
    if (bytes == 0) {
        std::string json = io::to_json(value, io::JsonStyle{0, true, false});
        while (!json.empty() && json.back() == '\n')
            json.pop_back();
        bytes = json.size();
    }
    if (bytes > max_constraint_bytes) {
        ConstraintProblem p;
        p.code = Code::too_large;
        p.bytes = bytes;
        p.mark = value.mark;
        out.problems.push_back(std::move(p));
    }
    Checker(out, opts.rules).constraint(value, "", 0, out.constraint);
    return out;
}

Result<Constraint> to_result(ConstraintCheck&& check, const SourcePos& where) {
    if (const ConstraintProblem* p = check.first_fatal()) {
        Error e = Error::invalid(p->message(), where);
        for (const auto& n : p->notes)
            e.note(n);
        return fail(std::move(e));
    }
    return std::move(check.constraint);
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

bool gvk_matches(const Constraint& c, const PropertyValue& p) {
    if (p.type != "olm.gvk" || !p.value.is_map()) return false;
    GoString g = go_string_field(p.value, "group"), v = go_string_field(p.value, "version"),
             k = go_string_field(p.value, "kind");
    if (g.type_error || v.type_error || k.type_error) return false;
    return g.value == c.gvk.group && v.value == c.gvk.version && k.value == c.gvk.kind;
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

std::string ConstraintProblem::message() const {
    const std::string at = path.empty() ? "olm.constraint" : "olm.constraint " + path;
    const std::string at_field = field.empty() ? at : "olm.constraint " + join(path, field);
    switch (code) {
    case Code::too_large:
        return "olm.constraint: the value is " + std::to_string(bytes) + " bytes, larger than " +
               std::to_string(max_constraint_bytes) + " bytes (128 KiB, OLM's limit)";
    case Code::too_deep:
        return at + ": compound constraints nest deeper than " +
               std::to_string(max_constraint_depth) + " levels";
    case Code::not_object:
        return at + ": a constraint must be an object, not " + a_kind(found);
    case Code::wrong_type:
        return at_field + ": must be " + want + ", not " + a_kind(found);
    case Code::unknown_field:
        return at + ": unknown field " + text::quote(key);
    case Code::duplicate_field:
        return at + ": " + text::quote(other) + " and " + text::quote(key) + " name the same field";
    case Code::case_variant:
        return at + ": " + text::quote(key) + " is read as " + text::quote(field) +
               " (keys match case-insensitively)";
    case Code::empty_constraint:
        return at + ": constraint is empty: give one of gvk, package, cel, all, any or not";
    case Code::several_kinds: {
        std::string names;
        for (std::size_t k = 0; k < kinds.size(); ++k)
            names += (k == 0 ? "" : k + 1 == kinds.size() ? " and " : ", ") + kinds[k];
        return at + ": " + names +
               " are all given; a constraint holds exactly one of gvk, package, cel, all, any "
               "or not";
    }
    case Code::none_deprecated:
        return fatal ? at + ": \"none\" is deprecated and OLM no longer evaluates it (it reports "
                            "\"constraint is empty\"); write \"not\""
                     : at + ": \"none\" is deprecated and OLM ignores it";
    case Code::missing:
        return at_field + ": missing";
    case Code::empty:
        return at_field + ": empty";
    case Code::bad_range:
    case Code::rule_compile:
        return at_field + ": " + detail;
    case Code::range_warning:
        return at_field + " " + text::quote(value) + ": " + detail;
    case Code::no_constraints:
        return at + ": no constraints list";
    case Code::empty_constraints:
        return at + ".constraints: empty";
    }
    return at;
}

const Result<std::shared_ptr<const cel::Program>>& RuleCache::compile(const std::string& rule) {
    auto it = map_.find(rule);
    if (it == map_.end()) it = map_.emplace(rule, cel::Program::compile(rule)).first;
    return it->second;
}

bool ConstraintCheck::ok() const {
    return first_fatal() == nullptr;
}

const ConstraintProblem* ConstraintCheck::first_fatal() const {
    for (const auto& p : problems)
        if (p.fatal) return &p;
    return nullptr;
}

ConstraintCheck check_constraint(const io::Node& value, const ConstraintOptions& opts) {
    return run_check(value, opts);
}

Result<Constraint> parse_constraint(const io::Node& value, const SourcePos& where,
                                    RuleCache* rules) {
    ConstraintOptions opts;
    opts.rules = rules;
    return to_result(run_check(value, opts), where);
}

Result<Constraint> parse_constraint(std::string_view json, const SourcePos& where,
                                    RuleCache* rules) {
    if (json.size() > max_constraint_bytes) {
        ConstraintProblem p;
        p.code = Code::too_large;
        p.bytes = json.size();
        return fail(Error::invalid(p.message(), where));
    }
    auto docs = io::parse_json(json, "olm.constraint value");
    if (!docs)
        return fail(Error::invalid(
            "olm.constraint: the value is not valid JSON: " + docs.error().message, where));
    if (docs->size() != 1)
        return fail(Error::invalid("olm.constraint: the value must be one JSON value, not " +
                                       std::to_string(docs->size()),
                                   where));
    ConstraintOptions opts;
    opts.rules = rules;
    opts.json_bytes = json.size();
    return to_result(run_check((*docs)[0].root, opts), where);
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

std::vector<PropertyValue> constraint_properties(const Catalog& cat, const Bundle& bundle) {
    std::vector<PropertyValue> out;
    const auto props = cat.properties_of(bundle);
    out.reserve(props.size());
    for (const Property& p : props) {
        PropertyValue pv;
        pv.type = cat.string(p.type);
        auto field = [&](const char* key, Str s) {
            pv.value.set(key, io::Node::string(cat.string(s)));
        };
        if (p.json != 0) {
            auto docs = io::parse_json(cat.str(p.json), "property");
            if (docs && docs->size() == 1) pv.value = std::move((*docs)[0].root);
        } else {
            switch (p.kind) {
            case PropKind::package:
                pv.value = io::Node::map();
                field("packageName", p.a);
                field("version", p.b);
                if (p.c != 0) field("release", p.c);
                break;
            case PropKind::gvk:
            case PropKind::gvk_required:
                pv.value = io::Node::map();
                field("group", p.a);
                field("kind", p.c);
                field("version", p.b);
                break;
            case PropKind::package_required:
                pv.value = io::Node::map();
                field("packageName", p.a);
                field("versionRange", p.b);
                break;
            case PropKind::label:
            case PropKind::label_required:
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
        return "an API " + (c.gvk.group.empty() ? std::string() : text::shown(c.gvk.group) + "/") +
               text::shown(c.gvk.version) + " " + text::shown(c.gvk.kind);
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

} // namespace kpkg::model
