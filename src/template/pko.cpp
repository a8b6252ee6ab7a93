// Package Operator's template functions: its Sprig allow-list plus toYAML, fromYAML, b64decMap,
// include, getFile, getFileGlob and cel (internal/transform and packagerender in PKO).
#include "kpkg/core/regex.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/template/funcs.hpp"
#include "kpkg/template/template.hpp"
#include "sprig_util.hpp"

namespace kpkg::tmpl {
namespace {

using namespace sprig;

// sigs.k8s.io/yaml.Marshal: json.Marshal, then yaml.v2's Marshal of the JSON document.
std::string to_yaml(Context& c, const Value& v) {
    std::string json;
    try {
        marshal(json, v, 0, c.options().max_output, false);
    } catch (const FuncError& e) {
        throw FuncError(std::string("error marshaling into JSON: ") + e.what());
    }
    auto docs = io::parse_json(json, "toYAML value");
    if (!docs || docs->size() != 1)
        throw FuncError("error converting JSON to YAML: " +
                        (docs ? std::string("no value") : docs.error().message));
    std::string out;
    io::go::append_yaml(out, docs->front().root);
    if (!out.empty() && out.back() == '\n') out.pop_back(); // PKO trims one trailing newline
    return out;
}

// sigs.k8s.io/yaml.Unmarshal into interface{}: the first YAML document converted to JSON (yaml.v2
// typing) and decoded by encoding/json, so numbers are float64.
Value from_yaml(const Value& arg) {
    if (!arg.is_string())
        throw FuncError("fromYAML requires string or []byte as input: invalid type");
    io::Limits lim;
    lim.duplicate_keys_last_wins = true; // yaml.v2 without strict mode
    auto docs = io::parse_yaml(arg.as_string(), "fromYAML argument", lim);
    if (!docs) throw FuncError("error converting YAML to JSON: " + docs.error().message);
    if (docs->empty() || docs->front().index != 0) return {}; // an empty first document: null
    std::string json;
    io::go::Marshaller m(json, false);
    if (!m.value(docs->front().root))
        throw FuncError("error converting YAML to JSON: json: unsupported value: a number without "
                        "a JSON form (.inf or .nan)");
    auto back = io::parse_json(json, "fromYAML argument");
    if (!back || back->size() != 1)
        throw FuncError("error converting YAML to JSON: " +
                        (back ? std::string("no value") : back.error().message));
    return from_json(back->front().root);
}

} // namespace

namespace {

// Package Operator's functions that need no hooks: the same for every package, so built once
// per process (about 190,000 instructions) and shared by every render.
void add_fixed(Funcs& f) {
    add_builtins(f);
    add_sprig(f);
    add_include(f);

    f.add("toYAML", 1, 1, [](Context& c, Args a) { return str(to_yaml(c, a[0])); });
    f.add("fromYAML", 1, 1, [](Context&, Args a) { return from_yaml(a[0]); });
    f.add("b64decMap", 1, 1, [](Context&, Args a) {
        Dict out;
        for (const auto& [k, v] : arg_dict(a, 0).entries()) {
            if (!v.is_string()) continue; // PKO skips values that are not strings
            std::string dec;
            std::size_t at = 0;
            if (!b64_decode(v.as_string(), dec, at))
                throw FuncError("decode base64 value at key " + k +
                                ": illegal base64 data at input byte " + std::to_string(at));
            out.emplace(k, str(std::move(dec)));
        }
        return Value::dict(std::move(out));
    });
}

std::shared_ptr<const Funcs> fixed_funcs() {
    static const std::shared_ptr<const Funcs> fixed = [] {
        auto f = std::make_shared<Funcs>();
        add_fixed(*f);
        return f;
    }();
    return fixed;
}

} // namespace

void add_package_operator(Funcs& f, PackageHooks hooks) {
    f.set_base(fixed_funcs());
    auto shared = std::make_shared<PackageHooks>(std::move(hooks));
    f.add("getFile", 1, 1, [shared](Context&, Args a) {
        std::optional<std::string> content;
        if (shared->file) content = shared->file(arg_string(a, 0));
        if (!content) throw FuncError("file not found");
        return str(std::move(*content));
    });
    f.add("getFileGlob", 1, 1, [shared](Context& c, Args a) {
        std::optional<re::Glob> glob;
        try {
            glob.emplace(arg_string(a, 0));
        } catch (const re::SyntaxError& e) {
            throw FuncError(e.what());
        }
        Dict out;
        std::size_t total = 0;
        if (shared->paths && shared->file) {
            for (const auto& p : shared->paths()) {
                bool hit = false;
                try {
                    hit = glob->match(p, c.regex_budget());
                } catch (const re::LimitError& e) {
                    throw FuncError(e.what());
                }
                if (!hit) continue;
                auto content = shared->file(p);
                if (!content) continue;
                total += content->size();
                if (total > c.options().max_output)
                    throw FuncError("files matching the pattern exceed " +
                                    std::to_string(c.options().max_output) + " bytes");
                out.insert_or_assign(p, str(std::move(*content)));
            }
        }
        return Value::dict(std::move(out));
    });
    f.add("cel", 1, 1, [shared](Context&, Args a) {
        if (!shared->cel) throw FuncError("no CEL evaluator for this package");
        return Value::boolean(shared->cel(arg_string(a, 0)));
    });
}

} // namespace kpkg::tmpl
