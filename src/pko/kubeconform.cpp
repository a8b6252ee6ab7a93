// kubectl-package's kubeconform check: schema locations (kubeconform's templates), schemas read
// from files or fetched through the caller, each document validated in JSON Schema mode.
#include "kpkg/pko/kubeconform.hpp"

#include <cctype>
#include <filesystem>
#include <optional>
#include <system_error>

#include "kpkg/core/text.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/pko/render.hpp"
#include "kpkg/pko/schema.hpp"
#include "kpkg/pko/util.hpp"

namespace kpkg::pko {
namespace {

namespace fs = std::filesystem;

constexpr const char* kReason = "Kubeconform rejected schema";
constexpr const char* kDefaultLayout =
    "/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}"
    "{{ .KindSuffix }}.json";

std::string lower(std::string s) {
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool is_url(const std::string& loc) {
    return loc.compare(0, 4, "http") == 0;
}

// A schema found, absent (the next location is asked), or a problem with it (a violation).
struct Lookup {
    enum class Status { found, missing, problem } status = Status::missing;
    std::string text;
    std::string problem;
};

} // namespace

std::vector<std::string> kubeconform_locations(const Manifest& m) {
    std::vector<std::string> out;
    const io::Node* test = m.doc.get("test");
    const io::Node* kc = test && test->is_map() ? test->get("kubeconform") : nullptr;
    const io::Node* locs = kc && kc->is_map() ? kc->get("schemaLocations") : nullptr;
    if (locs && locs->is_seq())
        for (const auto& l : locs->items)
            if (l.is_scalar()) out.push_back(l.text);
    if (!out.empty()) return out;
    return {"https://raw.githubusercontent.com/yannh/kubernetes-json-schema/master"
            "/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}"
            "/{{ .ResourceKind }}{{ .KindSuffix }}.json",
            "https://raw.githubusercontent.com/datreeio/CRDs-catalog/main/"
            "{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"};
}

Result<std::string> kubeconform_schema_path(std::string location, const std::string& kind,
                                            const std::string& api_version,
                                            const std::string& k8s_version, bool strict) {
    if (location == "default")
        location = "https://raw.githubusercontent.com/yannh/kubernetes-json-schema/master" +
                   std::string(kDefaultLayout);
    else if (location.size() < 4 || location.compare(location.size() - 4, 4, "json") != 0)
        location += kDefaultLayout;
    const std::string version = k8s_version == "master" ? k8s_version : "v" + k8s_version;
    const auto slash = api_version.find('/');
    const std::string group_part = api_version.substr(0, slash);
    const std::string version_part =
        slash == std::string::npos ? api_version : api_version.substr(api_version.rfind('/') + 1);
    // Appended piece by piece, not `"-" + lower(...)`: GCC 12 at -O3 warns (-Wrestrict) falsely
    // about that form.
    std::string kind_suffix = "-";
    kind_suffix += lower(group_part.substr(0, group_part.find('.')));
    if (slash != std::string::npos) {
        kind_suffix += '-';
        kind_suffix +=
            lower(api_version.substr(slash + 1, api_version.find('/', slash + 1) - slash - 1));
    }
    const std::map<std::string, std::string> vars = {
        {"NormalizedKubernetesVersion", version},
        {"StrictSuffix", strict ? "-strict" : ""},
        {"ResourceKind", lower(kind)},
        {"ResourceAPIVersion", version_part},
        {"Group", group_part},
        {"KindSuffix", kind_suffix},
    };
    std::string out;
    std::size_t at = 0;
    while (at < location.size()) {
        const auto open = location.find("{{", at);
        if (open == std::string::npos) {
            out += location.substr(at);
            break;
        }
        out += location.substr(at, open - at);
        const auto close = location.find("}}", open + 2);
        if (close == std::string::npos)
            return fail(Error::invalid("unclosed action (\"{{\" without \"}}\")"));
        std::string action = location.substr(open + 2, close - open - 2);
        if (!action.empty() && action.front() == '-') action.erase(0, 1);
        if (!action.empty() && action.back() == '-') action.pop_back();
        const auto b = action.find_first_not_of(" \t");
        const auto e = action.find_last_not_of(" \t");
        action = b == std::string::npos ? "" : action.substr(b, e - b + 1);
        const auto it =
            action.size() > 1 && action[0] == '.' ? vars.find(action.substr(1)) : vars.end();
        if (it == vars.end())
            return fail(Error::invalid(
                "unknown template action " +
                text::quote("{{" + location.substr(open + 2, close - open - 2) + "}}") +
                " (known: .NormalizedKubernetesVersion, .StrictSuffix, .ResourceKind, "
                ".ResourceAPIVersion, .Group, .KindSuffix)"));
        out += it->second;
        at = close + 2;
    }
    return out;
}

struct Kubeconform::Impl {
    KubeconformOptions opts;
    std::vector<std::string> locations;
    std::string k8s_version;
    // Parsed schema documents by where they are from (stable addresses for $refs).
    std::map<std::string, std::unique_ptr<io::Node>> docs;
    // By kind and apiVersion: the schema's location ("" when no location has one), or the
    // problem that stops its use.
    struct Chosen {
        std::string location;
        std::string problem;
    };
    std::map<std::string, Chosen> chosen;

    // The bytes at a filled-in location.
    Lookup read(const std::string& loc) {
        Lookup l;
        if (is_url(loc)) {
            if (!opts.fetch)
                throw Exception(Error::io("schema " + loc + ": no network access in this run"));
            auto a = opts.fetch(loc);
            if (!a) throw Exception(std::move(a).error());
            if (a->status == 404) return l;
            if (a->too_large) {
                l.status = Lookup::Status::problem;
                l.problem = "schema " + loc + " is larger than " +
                            std::to_string(opts.max_schema_bytes) + " bytes";
                return l;
            }
            if (a->status != 200) {
                l.status = Lookup::Status::problem;
                l.problem = "error while downloading schema at " + loc +
                            " - received HTTP status " + std::to_string(a->status);
                return l;
            }
            l.text = std::move(a->body);
        } else {
            std::error_code ec;
            const auto st = fs::status(loc, ec);
            if (ec || !fs::exists(st)) return l; // kubeconform: not found, the next location
            io::Limits lim;
            lim.max_file_bytes = opts.max_schema_bytes;
            auto r = io::read_file(loc, lim);
            if (!r) {
                if (fs::is_regular_file(st) && fs::file_size(loc, ec) > opts.max_schema_bytes) {
                    l.status = Lookup::Status::problem;
                    l.problem = "schema " + loc + " is larger than " +
                                std::to_string(opts.max_schema_bytes) + " bytes";
                    return l;
                }
                throw Exception(
                    Error::io("failed to open schema at " + loc + ": " + r.error().message));
            }
            l.text = std::move(*r);
        }
        if (l.text.size() > opts.max_schema_bytes) {
            l.status = Lookup::Status::problem;
            l.problem = "schema " + loc + " is larger than " +
                        std::to_string(opts.max_schema_bytes) + " bytes";
            return l;
        }
        l.status = Lookup::Status::found;
        return l;
    }

    // The parsed document at `loc` (read and parsed once); an error message when it is
    // missing, unreadable as JSON or not an object.
    Result<const io::Node*> document(const std::string& loc, bool& missing) {
        missing = false;
        if (auto it = docs.find(loc); it != docs.end()) return it->second.get();
        Lookup l = read(loc);
        if (l.status == Lookup::Status::missing) {
            missing = true;
            return fail(Error::invalid("could not find schema at " + loc));
        }
        if (l.status == Lookup::Status::problem) return fail(Error::invalid(l.problem));
        io::Limits lim;
        auto parsed = io::parse_json(l.text, loc, lim);
        if (!parsed)
            return fail(
                Error::invalid("schema " + loc + " is not valid JSON: " + parsed.error().str()));
        if (parsed->size() != 1 || !parsed->front().root.is_map())
            return fail(Error::invalid("schema " + loc + " is not a JSON object"));
        auto node = std::make_unique<io::Node>(std::move(parsed->front().root));
        const io::Node* p = node.get();
        docs[loc] = std::move(node);
        return p;
    }

    static std::string resolve_uri(const std::string& base, const std::string& uri) {
        if (is_url(uri) || (!uri.empty() && uri[0] == '/')) return uri;
        const auto slash = base.rfind('/');
        return slash == std::string::npos ? uri : base.substr(0, slash + 1) + uri;
    }

    // The schema for a kind and apiVersion, first location first.
    const Chosen& choose(const std::string& kind, const std::string& api) {
        const std::string key = kind + "\n" + api;
        if (auto it = chosen.find(key); it != chosen.end()) return it->second;
        Chosen c;
        for (const std::string& tpl : locations) {
            auto loc = kubeconform_schema_path(tpl, kind, api, k8s_version);
            if (!loc) {
                c.problem = loc.error().message;
                break;
            }
            bool missing = false;
            auto d = document(*loc, missing);
            if (missing) continue;
            if (!d) {
                c.problem = d.error().message;
                break;
            }
            c.location = *loc;
            break;
        }
        return chosen[key] = std::move(c);
    }

    // kubeconform's error for one document ("" when valid, skipped or empty).
    std::string check_document(std::string_view doc, const std::string& display) {
        io::Limits lim; // duplicate keys are errors: kubeconform decodes strictly
        auto parsed = io::parse_yaml(doc, display.empty() ? "<rendered>" : display, lim);
        if (!parsed) return "error unmarshalling resource: " + parsed.error().message;
        const io::Node* root = nullptr;
        for (const auto& d : *parsed)
            if (!d.root.is_null()) {
                root = &d.root;
                break;
            }
        if (!root) return "";
        if (!root->is_map())
            return std::string("error unmarshalling resource: the document is a ") +
                   io::kind_name(root->kind) + ", not an object";
        auto json = to_json_node(*root);
        if (!json) return "error unmarshalling resource: " + json.error().message;
        const io::Node* kind = json->get("kind");
        const io::Node* api = json->get("apiVersion");
        if (!kind || !kind->is_string() || kind->text.empty())
            return "error while parsing: missing 'kind' key";
        if (!api || !api->is_string() || api->text.empty())
            return "error while parsing: missing 'apiVersion' key";
        const Chosen& c = choose(kind->text, api->text);
        if (!c.problem.empty()) return c.problem;
        if (c.location.empty()) return ""; // no schema: skipped, as kubectl-package does
        const io::Node* schema = docs.at(c.location).get();
        const std::string base = c.location;
        SchemaLoader load = [this, &base](const std::string& uri) -> Result<const io::Node*> {
            bool missing = false;
            return document(resolve_uri(base, uri), missing);
        };
        auto errs = validate_json_schema(*schema, *json, load);
        if (!errs) return "schema " + c.location + ": " + errs.error().message;
        if (errs->empty()) return "";
        // kubeconform shows the library's error: its first leaf, located in the schema by the
        // URL it was compiled from (a file:// URL for a path). kpkg adds the others.
        const JsonSchemaError& first = errs->front();
        std::string msg = "problem validating schema. Check JSON formatting: jsonschema: " +
                          quoted(first.instance) + " does not validate with " +
                          schema_url(c.location) + "#" + first.keyword + ": " + first.message;
        if (errs->size() > 1) {
            msg += " (also:";
            for (std::size_t i = 1; i < errs->size(); ++i)
                msg += std::string(i > 1 ? ";" : "") + " " + quoted((*errs)[i].instance) + ": " +
                       (*errs)[i].message;
            msg += ")";
        }
        return msg;
    }

    static std::string quoted(const std::string& pointer) {
        std::string out = "'";
        for (char c : pointer) {
            if (c == '\'' || c == '\\') out += '\\';
            out += c;
        }
        return out + "'";
    }

    static std::string schema_url(const std::string& location) {
        if (is_url(location)) return location;
        std::error_code ec;
        const fs::path abs = fs::absolute(location, ec);
        return "file://" + (ec ? location : abs.lexically_normal().string());
    }
};

Kubeconform::Kubeconform(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Kubeconform::~Kubeconform() = default;

std::unique_ptr<Kubeconform> Kubeconform::make(const Manifest& m, KubeconformOptions opts) {
    const io::Node* test = m.doc.get("test");
    const io::Node* kc = test && test->is_map() ? test->get("kubeconform") : nullptr;
    if (!kc || !kc->is_map()) return nullptr;
    auto impl = std::make_unique<Impl>();
    impl->opts = std::move(opts);
    impl->locations = kubeconform_locations(m);
    // A location whose template does not execute: the manifest check reports it, and nothing
    // is checked, as kubeconform refuses to start.
    for (const std::string& l : impl->locations)
        if (!kubeconform_schema_path(l, "Deployment", "v1", "master")) return nullptr;
    const io::Node* v = kc->get("kubernetesVersion");
    std::string version = v && v->is_scalar() ? v->text : "";
    if (!version.empty() && version[0] == 'v') version.erase(0, 1);
    impl->k8s_version = version.empty() ? "master" : version;
    return std::unique_ptr<Kubeconform>(new Kubeconform(std::move(impl)));
}

std::vector<Finding> Kubeconform::check_file(const std::string& path, const std::string& text,
                                             const std::string& display,
                                             const std::string& component) {
    std::vector<Finding> out;
    if (!is_yaml(path)) return out;
    int index = 0;
    for (const auto& [doc, line] : split_yaml_documents(text)) {
        const int at = index++;
        std::string err = impl_->check_document(doc, display);
        if (err.empty()) continue;
        SourcePos pos{display};
        const bool own_lines =
            !display.empty() &&
            !(display.size() >= 7 && display.compare(display.size() - 7, 7, ".gotmpl") == 0);
        if (own_lines) pos.line = line;
        out.push_back(finding("package.kubeconform", Problem(kReason, std::move(err), path, at),
                              pos, component));
    }
    return out;
}

} // namespace kpkg::pko
