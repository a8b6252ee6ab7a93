// Rendering a package: spec.filter, templates, objects, conditions; fixtures and their diffs.
#include <algorithm>
#include <memory>

#include "kpkg/cel/cel.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/pko/render.hpp"
#include "kpkg/pko/util.hpp"
#include "kpkg/template/template.hpp"

namespace kpkg::pko {
namespace {

// The CEL environment of a package's expressions: every part of the context a map, `cond` the
// named conditions' results.
const cel::Env& cel_env(bool with_cond) {
    static const cel::Env without = [] {
        cel::Env e;
        for (const char* n : {"package", "config", "images", "dependencies", "environment"})
            e.variable(n, cel::map_of(cel::prim(cel::Type::K::str), cel::prim(cel::Type::K::dyn)));
        e.dyn_result();
        e.noun("a Package Operator condition");
        return e;
    }();
    static const cel::Env with = [] {
        cel::Env e = without;
        e.variable("cond",
                   cel::map_of(cel::prim(cel::Type::K::str), cel::prim(cel::Type::K::boolean)));
        return e;
    }();
    return with_cond ? with : without;
}

// Evaluates one expression; the error text on failure.
struct CelEval {
    const io::Node& ctx;
    io::Node cond = io::Node::map();
    bool with_cond = false;

    // Programs by expression: the same condition on many objects is compiled once (the
    // environment only changes from without to with `cond`, before any object is seen).
    mutable std::map<std::string, Result<std::shared_ptr<const cel::Program>>, std::less<>>
        compiled{};

    std::optional<bool> eval(const std::string& expr, std::string& why) const {
        auto it = compiled.find(expr);
        if (it == compiled.end())
            it = compiled.emplace(expr, cel::Program::compile(expr, cel_env(with_cond))).first;
        const auto& prog = it->second;
        if (!prog) {
            why = "CEL expression compilation error: " + prog.error().message;
            return std::nullopt;
        }
        cel::Activation a;
        for (const auto& f : ctx.fields)
            a.bind(f.key, f.value, cel::Activation::Numbers::json);
        if (with_cond) a.bind("cond", cond);
        const cel::Outcome out = (*prog)->evaluate(a);
        if (out.kind == cel::Outcome::Kind::error) {
            constexpr std::string_view kNotBool = "the rule evaluated to a ";
            if (out.error.compare(0, kNotBool.size(), kNotBool) == 0)
                why =
                    "invalid return type: " + out.error.substr(kNotBool.size()) + ", expected bool";
            else
                why = "program evaluation error: " + out.error;
            return std::nullopt;
        }
        return out.holds();
    }
};

bool valid_condition_name(std::string_view n) {
    if (n.empty()) return false;
    auto alpha = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    };
    if (!alpha(n[0])) return false;
    for (char c : n)
        if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
    return true;
}

// Splits rendered text into documents as Package Operator does: leading and trailing '-' and
// newlines trimmed, then split at lines that are exactly "---". Each piece with the line it
// starts at (1-based) in the text.
std::vector<std::pair<std::string_view, std::uint32_t>> split_documents(std::string_view text) {
    std::size_t b = 0, e = text.size();
    std::uint32_t line = 1;
    while (b < e && (text[b] == '-' || text[b] == '\n')) {
        if (text[b] == '\n') ++line;
        ++b;
    }
    while (e > b && (text[e - 1] == '-' || text[e - 1] == '\n'))
        --e;
    std::string_view s = text.substr(b, e - b);
    std::vector<std::pair<std::string_view, std::uint32_t>> out;
    std::size_t start = 0, pos = 0;
    std::uint32_t start_line = line, cur = line;
    while (pos <= s.size()) {
        const std::size_t nl = s.find('\n', pos);
        const std::size_t end = nl == std::string_view::npos ? s.size() : nl;
        if (s.substr(pos, end - pos) == "---") {
            out.push_back({s.substr(start, pos - start), start_line});
            start = end; // the newline after --- belongs to the next document, as in Go
            start_line = cur;
        }
        if (nl == std::string_view::npos) break;
        pos = nl + 1;
        ++cur;
    }
    out.push_back({s.substr(start), start_line});
    return out;
}

// kubernetes' ParseGroupVersion as GroupVersionKind() uses it: "" for what does not parse.
std::pair<std::string, std::string> group_version(const std::string& api) {
    if (api.empty()) return {};
    const auto slash = api.find('/');
    if (slash == std::string::npos) return {"", api};
    if (api.find('/', slash + 1) != std::string::npos) return {};
    return {api.substr(0, slash), api.substr(slash + 1)};
}

std::string str_field(const io::Node& obj, std::string_view key) {
    const io::Node* n = obj.get(key);
    return n && n->is_string() ? n->text : std::string();
}

const io::Node* meta_map(const io::Node& obj, std::string_view key) {
    const io::Node* md = obj.get("metadata");
    const io::Node* m = md && md->is_map() ? md->get(key) : nullptr;
    return m && m->is_map() ? m : nullptr;
}

// Adds Package Operator's two labels (they win over the object's own).
void add_labels(io::Node& obj, const std::string& package, const std::string& instance) {
    io::Node* md = obj.get("metadata");
    if (!md || !md->is_map()) md = &obj.set("metadata", io::Node::map());
    io::Node* labels = md->get("labels");
    if (!labels || !labels->is_map()) labels = &md->set("labels", io::Node::map());
    labels->set(std::string(kPackageLabel), io::Node::string(package));
    labels->set(std::string(kInstanceLabel), io::Node::string(instance));
}

// The labels checks of apimachinery's ValidateLabels, as "metadata.labels: Invalid value: ..."
// messages.
std::vector<std::string> label_errors(const io::Node& labels) {
    std::vector<std::string> errs;
    for (const auto& f : labels.fields) {
        for (const std::string& m : qualified_name_errors(f.key))
            errs.push_back("metadata.labels: Invalid value: " + text::quote(f.key) + ": " + m);
        const std::string value = f.value.is_string() ? f.value.text : std::string();
        for (const std::string& m : label_value_errors(value))
            errs.push_back("metadata.labels: Invalid value: " + text::quote(value) + ": " + m);
    }
    return errs;
}

std::string aggregate(const std::vector<std::string>& errs) {
    if (errs.size() == 1) return errs[0];
    std::string s = "[";
    for (std::size_t i = 0; i < errs.size(); ++i) {
        if (i) s += ", ";
        s += errs[i];
    }
    return s + "]";
}

// Package Operator's path order: '/' below every other byte.
bool pko_path_less(const std::string& a, const std::string& b) {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
        if (x == y) continue;
        if (x == '/') return true;
        if (y == '/') return false;
        return x < y;
    }
    return a.size() < b.size();
}

// The functions templates may call. Package Operator's own (getFile, cel...) see the package's
// files and its CEL context.
std::shared_ptr<const tmpl::Funcs> template_funcs(const Package& pkg, const CelEval& cel) {
    tmpl::PackageHooks hooks;
    hooks.file = [&pkg](std::string_view path) -> std::optional<std::string> {
        const auto it = pkg.files.find(std::string(path));
        if (it == pkg.files.end()) return std::nullopt;
        return it->second.bytes;
    };
    hooks.paths = [&pkg] {
        std::vector<std::string> out;
        out.reserve(pkg.files.size());
        for (const auto& [path, f] : pkg.files)
            out.push_back(path);
        return out;
    };
    hooks.cel = [&cel](std::string_view expr) {
        std::string why;
        auto r = cel.eval(std::string(expr), why);
        if (!r) throw tmpl::FuncError(why);
        return *r;
    };
    auto f = std::make_shared<tmpl::Funcs>();
    tmpl::add_package_operator(*f, std::move(hooks));
    return f;
}

} // namespace

std::string Object::phase() const {
    const io::Node* a = meta_map(node, "annotations");
    const io::Node* p = a ? a->get(kPhaseAnnotation) : nullptr;
    return p && p->is_string() ? p->text : std::string();
}

io::Node context_json(const RenderContext& c) {
    io::Node root = io::Node::map();
    io::Node& pkg = root.set("package", io::Node::map());
    io::Node& md = pkg.set("metadata", io::Node::map());
    md.set("name", io::Node::string(c.name));
    md.set("namespace", io::Node::string(c.ns));
    md.set("labels", c.labels.is_map() ? c.labels : io::Node::map());
    md.set("annotations", c.annotations.is_map() ? c.annotations : io::Node::map());
    pkg.set("image", io::Node::string(c.image));
    root.set("config", c.config.is_map() ? c.config : io::Node::map());
    io::Node& images = root.set("images", io::Node::map());
    for (const auto& [k, v] : c.images)
        images.set(k, io::Node::string(v));
    io::Node& deps = root.set("dependencies", io::Node::map());
    for (const auto& [k, v] : c.dependencies)
        deps.set(k, io::Node::string(v));
    root.set("environment", c.environment.is_map() ? c.environment : io::Node::map());
    // Through JSON, as Package Operator hands it over: numbers become float64 text.
    if (auto j = to_json_node(root)) return std::move(*j);
    return root;
}

RenderContext test_context(const Manifest& m, const TestCase& tc) {
    RenderContext c;
    if (const io::Node* p = tc.context.get("package"))
        if (const io::Node* md = p->get("metadata")) {
            if (const io::Node* n = md->get("name"); n && n->is_string()) c.name = n->text;
            if (const io::Node* n = md->get("namespace"); n && n->is_string()) c.ns = n->text;
            if (const io::Node* n = md->get("labels")) c.labels = *n;
            if (const io::Node* n = md->get("annotations")) c.annotations = *n;
        }
    if (const io::Node* p = tc.context.get("package"))
        if (const io::Node* n = p->get("image"); n && n->is_string()) c.image = n->text;
    if (const io::Node* cfg = tc.context.get("config")) c.config = *cfg;
    if (const io::Node* env = tc.context.get("environment")) c.environment = *env;
    for (const auto& im : m.images)
        c.images[im.name] = std::string(kStaticImage);
    if (const io::Node* deps = m.dependencies(); deps && deps->is_seq())
        for (const auto& d : deps->items)
            if (const io::Node* img = d.get("image"))
                if (const io::Node* n = img->get("name"); n && n->is_string())
                    c.dependencies[n->text] = std::string(kStaticImage);
    return c;
}

RenderResult render(const Package& pkg, const RenderContext& rc, const RenderOptions& opts) {
    RenderResult res;
    const Manifest& m = pkg.manifest;
    const io::Node ctx = context_json(rc);
    // A problem that stops rendering.
    auto stop = [&](const Problem& v, SourcePos pos = {}) {
        res.findings.push_back(finding("package.render", v, std::move(pos), pkg.component));
        res.failed = true;
        return res;
    };

    // spec.filter.conditions, in order; each sees the context but not the other conditions.
    CelEval cel{ctx};
    {
        io::Node cond = io::Node::map();
        for (const auto& c : m.conditions) {
            std::string problem;
            if (!valid_condition_name(c.name))
                problem = "invalid CEL condition name: '" + c.name + "'";
            else if (cond.get(c.name))
                problem = "duplicate CEL condition name: '" + c.name + "'";
            std::optional<bool> r;
            if (problem.empty()) {
                std::string why;
                r = cel.eval(c.expression, why);
                if (!r) problem = "CEL condition evaluation failed: '" + c.name + "': " + why;
            }
            if (!problem.empty())
                return stop(Problem(std::move(problem), {}), io::pos_of(m.file, c.mark));
            cond.set(c.name, io::Node::boolean(*r));
        }
        cel.cond = std::move(cond);
        cel.with_cond = true;
        cel.compiled.clear(); // compiled without `cond`
    }

    // Templates: every *.gotmpl parsed into one set (a define in one is usable from all), then
    // each executed into the file of its name without the suffix.
    {
        // Bounds well above what real packages need (their templates take thousands of
        // steps), low enough that a template that never ends stops within seconds.
        tmpl::Options topts;
        topts.max_steps = 5'000'000;
        topts.max_output = std::size_t{32} << 20;
        tmpl::Set set(template_funcs(pkg, cel), topts);
        bool any = false;
        for (const auto& [path, f] : pkg.files) {
            if (!is_template(path)) continue;
            any = true;
            auto p = set.parse(path, f.bytes);
            if (!p) {
                return stop(Problem("parsing template from " + path, p.error().message),
                            {f.display});
            }
        }
        tmpl::Value data = any ? tmpl::from_json(ctx) : tmpl::Value();
        if (any) {
            // Missing labels and annotations are Go map[string]string values (Package
            // Operator's work-around for missingkey), so `index` of an absent key is "".
            tmpl::Dict& md = data.entries()["package"].entries()["metadata"].entries();
            if (!rc.labels.is_map()) md["labels"] = tmpl::Value::string_dict();
            if (!rc.annotations.is_map()) md["annotations"] = tmpl::Value::string_dict();
        }
        for (const auto& [path, f] : pkg.files) {
            if (!is_template(path)) {
                res.rendered.files.insert_or_assign(path, f.bytes);
                continue;
            }
            auto out = set.execute(path, data);
            if (!out) {
                return stop(Problem("executing template from " + path, out.error().message),
                            {f.display});
            }
            res.rendered.files.insert_or_assign(std::string(strip_template_suffix(path)),
                                                std::move(*out));
        }
    }
    if (opts.templates_only) return res;

    // Objects: every YAML file (helpers starting with `_` aside), document by document.
    std::vector<std::string> paths;
    for (const auto& [path, text] : res.rendered.files) {
        const auto slash = path.rfind('/');
        const std::string_view base = slash == std::string::npos
                                          ? std::string_view(path)
                                          : std::string_view(path).substr(slash + 1);
        if (!base.empty() && base[0] == '_') continue;
        if (!is_yaml(path)) continue;
        paths.push_back(path);
    }
    std::sort(paths.begin(), paths.end(), pko_path_less);
    std::vector<Object> objects;
    for (const std::string& path : paths) {
        const std::string& text = res.rendered.files[path];
        // Plain files keep their lines; templates' output has no file to point into.
        const auto src = pkg.files.find(path);
        const bool plain = src != pkg.files.end();
        const std::string display = plain ? src->second.display : path;
        int index = 0;
        for (const auto& [doc, line] : split_documents(text)) {
            const int at = index++;
            io::Limits lim;
            lim.duplicate_keys_last_wins = true;
            auto parsed = io::parse_yaml(doc, display, lim);
            auto invalid = [&](std::string details) {
                Problem v = Problem("Invalid YAML", std::move(details), path);
                v.index = at;
                v.subject = std::string(doc);
                SourcePos pos;
                if (plain) {
                    pos.file = display;
                    pos.line = line;
                }
                return stop(v, std::move(pos));
            };
            if (!parsed) {
                std::string msg = parsed.error().message;
                if (plain && parsed.error().pos.line)
                    return invalid("line " + std::to_string(parsed.error().pos.line + line - 1) +
                                   ": " + msg);
                if (parsed.error().pos.line)
                    return invalid("line " + std::to_string(parsed.error().pos.line) + ": " + msg);
                return invalid(msg);
            }
            const io::Node* root = nullptr;
            for (const auto& d : *parsed)
                if (!d.root.is_null()) {
                    root = &d.root;
                    break;
                }
            if (!root) continue;
            if (!root->is_map())
                return invalid(std::string("the document is a ") + io::kind_name(root->kind) +
                               ", not an object");
            auto json = to_json_node(*root);
            if (!json) return invalid(json.error().message);
            if (json->fields.empty()) continue;
            const io::Node* kind = json->get("kind");
            if (!kind || !kind->is_string() || kind->text.empty()) {
                std::string compact;
                io::go::append_marshal(compact, *json);
                return invalid("Object 'Kind' is missing in '" + compact + "'");
            }
            Object o;
            o.node = std::move(*json);
            o.path = path;
            o.index = at;
            if (plain)
                o.pos = {display, line, 0, at};
            else if (const auto t = pkg.files.find(path + ".gotmpl"); t != pkg.files.end())
                o.pos.file = t->second.display; // the template it was rendered from
            add_labels(o.node, m.name, rc.name);
            objects.push_back(std::move(o));
        }
    }

    // The object checks run on every object, filtered or not.
    if (opts.validate) {
        std::set<std::string> phases;
        for (const auto& p : m.phases)
            phases.insert(p.name);
        std::set<std::string> seen;
        for (const Object& o : objects) {
            auto add = [&](std::string reason, std::string details = {}) {
                Problem v = Problem(std::move(reason), std::move(details), o.path);
                v.index = o.index;
                res.findings.push_back(finding("package.object", v, o.pos, pkg.component));
            };
            const auto [group, version] = group_version(str_field(o.node, "apiVersion"));
            const std::string kind = str_field(o.node, "kind");
            const io::Node* md = o.node.get("metadata");
            const std::string name = md ? str_field(*md, "name") : std::string();
            const std::string ns = md ? str_field(*md, "namespace") : std::string();
            const std::string key =
                (group.empty() ? kind : kind + "." + group) + " " + ns + "/" + name;
            if (!seen.insert(key).second) add("Duplicate Object");
            if (version.empty() || kind.empty()) add("GroupVersionKind not set");
            if (const io::Node* labels = meta_map(o.node, "labels")) {
                auto errs = label_errors(*labels);
                if (!errs.empty()) add("Labels invalid", aggregate(errs));
            }
            const std::string phase = o.phase();
            if (phase.empty())
                add("Missing package-operator.run/phase Annotation");
            else if (!phases.empty() && !phases.count(phase))
                add("Phase not found in manifest", text::quote(phase));
        }
    }

    // spec.filter.paths: a path one of whose globs matches with a false expression is left out
    // whole.
    std::vector<std::string> excluded_globs;
    for (const auto& pf : m.paths) {
        std::string why;
        auto r = cel.eval(pf.expression, why);
        if (!r) {
            return stop(
                Problem("invalid spec.filter.paths expression: " + pf.glob + ": " + why, {}),
                io::pos_of(m.file, pf.mark));
        }
        if (!*r) excluded_globs.push_back(pf.glob);
    }
    for (const std::string& path : paths)
        for (const std::string& g : excluded_globs) {
            auto hit = glob_match(g, path);
            if (!hit) {
                return stop(Problem("invalid spec.filter.paths glob " + text::quote(g),
                                    "syntax error in pattern"),
                            m.pos("spec.filter.paths"));
            }
            if (*hit) {
                res.rendered.excluded.insert(path);
                break;
            }
        }

    // Condition annotations.
    for (Object& o : objects) {
        if (res.rendered.excluded.count(o.path)) continue;
        const io::Node* a = meta_map(o.node, "annotations");
        const io::Node* c = a ? a->get(kConditionAnnotation) : nullptr;
        if (!c) {
            res.rendered.objects.push_back(std::move(o));
            continue;
        }
        std::string why;
        auto r = cel.eval(c->is_string() ? c->text : std::string(), why);
        if (!r) {
            Problem v = Problem(
                "The CEL expression in package-operator.run/condition annotation is invalid.", why,
                o.path);
            v.index = o.index;
            const io::Node* md = o.node.get("metadata");
            v.subject = md ? str_field(*md, "name") : std::string();
            return stop(v, o.pos);
        }
        if (*r)
            res.rendered.objects.push_back(std::move(o));
        else
            res.rendered.dropped[o.path].insert(o.index);
    }
    return res;
}

std::string fixture_text(const Rendered& r, const std::string& path) {
    if (r.excluded.count(path)) return {};
    const auto it = r.files.find(path);
    if (it == r.files.end()) return {};
    std::string content = it->second;
    if (const auto d = r.dropped.find(path); d != r.dropped.end()) {
        std::string joined;
        int index = 0;
        for (const auto& piece : split_documents(content)) {
            if (d->second.count(index++)) continue;
            std::string_view s = piece.first;
            while (!s.empty() && s.front() == '\n')
                s.remove_prefix(1);
            if (!joined.empty()) joined += "---\n";
            joined += s;
            if (!s.empty() && s.back() != '\n') joined += '\n';
        }
        content = std::move(joined);
    }
    for (char ch : content)
        if (ch != ' ' && ch != '\n' && ch != '\t' && ch != '\r' && ch != '\v' && ch != '\f')
            return content;
    return {};
}

namespace {

// Go's path.Match of one pattern against one name (doublestar applies it per path segment),
// iteratively with one backtracking point per star.
std::optional<bool> segment_match(std::string_view pattern, std::string_view name) {
    std::size_t p = 0, n = 0;
    std::size_t star_p = std::string_view::npos, star_n = 0;
    // Checks a class starting at pattern[p] == '['; returns the end (after ']') and whether the
    // character c matches; npos for a malformed class.
    auto match_class = [&](std::size_t at, char c, bool& hit) -> std::size_t {
        std::size_t i = at + 1;
        bool negate = false;
        if (i < pattern.size() && pattern[i] == '^') {
            negate = true;
            ++i;
        }
        bool matched = false, first = true;
        for (;;) {
            if (i >= pattern.size()) return std::string_view::npos;
            if (pattern[i] == ']' && !first) {
                ++i;
                break;
            }
            first = false;
            auto read = [&](char& out) -> bool {
                if (i >= pattern.size()) return false;
                if (pattern[i] == '\\') {
                    ++i;
                    if (i >= pattern.size()) return false;
                } else if (pattern[i] == '-' || pattern[i] == ']') {
                    return false;
                }
                out = pattern[i++];
                return true;
            };
            char lo = 0, hi = 0;
            if (!read(lo)) return std::string_view::npos;
            hi = lo;
            if (i < pattern.size() && pattern[i] == '-') {
                ++i;
                if (!read(hi)) return std::string_view::npos;
            }
            if (lo <= c && c <= hi) matched = true;
        }
        hit = matched != negate;
        return i;
    };
    while (n < name.size() || p < pattern.size()) {
        if (p < pattern.size()) {
            const char pc = pattern[p];
            if (pc == '*') {
                star_p = p++;
                star_n = n;
                continue;
            }
            if (n < name.size()) {
                const char c = name[n];
                if (pc == '?' && c != '/') {
                    ++p;
                    ++n;
                    continue;
                }
                if (pc == '[' && c != '/') {
                    bool hit = false;
                    const std::size_t end = match_class(p, c, hit);
                    if (end == std::string_view::npos) return std::nullopt;
                    if (hit) {
                        p = end;
                        ++n;
                        continue;
                    }
                } else if (pc == '\\') {
                    if (p + 1 >= pattern.size()) return std::nullopt;
                    if (pattern[p + 1] == c) {
                        p += 2;
                        ++n;
                        continue;
                    }
                } else if (pc != '?' && pc != '[' && pc == c) {
                    ++p;
                    ++n;
                    continue;
                }
            }
        }
        // Mismatch: let the last star take one more character (never a '/').
        if (star_p != std::string_view::npos && star_n < name.size() && name[star_n] != '/') {
            p = star_p + 1;
            n = ++star_n;
            continue;
        }
        // A malformed class later in the pattern is still an error, as Go reports it.
        for (std::size_t i = p; i < pattern.size(); ++i) {
            if (pattern[i] == '\\') {
                if (i + 1 >= pattern.size()) return std::nullopt;
                ++i;
            } else if (pattern[i] == '[') {
                bool hit = false;
                const std::size_t end = match_class(i, 'a', hit);
                if (end == std::string_view::npos) return std::nullopt;
                i = end - 1;
            }
        }
        return false;
    }
    return true;
}

// The alternatives of the first {a,b} group of `pattern` expanded (doublestar's braces), each
// again expanded; false when the braces do not close or there are too many alternatives.
bool expand_braces(std::string_view pattern, std::vector<std::string>& out, std::size_t limit) {
    std::size_t open = std::string_view::npos;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\') {
            ++i;
            continue;
        }
        if (pattern[i] == '{') {
            open = i;
            break;
        }
    }
    if (open == std::string_view::npos) {
        if (out.size() >= limit) return false;
        out.emplace_back(pattern);
        return true;
    }
    // The matching '}' and the top-level commas.
    std::vector<std::size_t> commas;
    int depth = 0;
    std::size_t close = std::string_view::npos;
    for (std::size_t i = open; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\') {
            ++i;
            continue;
        }
        if (c == '{') ++depth;
        if (c == '}' && --depth == 0) {
            close = i;
            break;
        }
        if (c == ',' && depth == 1) commas.push_back(i);
    }
    if (close == std::string_view::npos) return false;
    std::size_t from = open + 1;
    commas.push_back(close);
    for (std::size_t cpos : commas) {
        std::string alt(pattern.substr(0, open));
        alt += pattern.substr(from, cpos - from);
        alt += pattern.substr(close + 1);
        if (!expand_braces(alt, out, limit)) return false;
        from = cpos + 1;
    }
    return true;
}

std::vector<std::string_view> segments(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t slash = s.find('/', start);
        out.push_back(s.substr(start, slash == std::string_view::npos ? s.npos : slash - start));
        if (slash == std::string_view::npos) return out;
        start = slash + 1;
    }
}

} // namespace

std::optional<bool> glob_match(std::string_view pattern, std::string_view name) {
    std::vector<std::string> alts;
    if (!expand_braces(pattern, alts, 1024)) return std::nullopt;
    const auto names = segments(name);
    bool any = false;
    for (const std::string& alt : alts) {
        const auto pats = segments(alt);
        // reach[j]: the first i name segments can be matched by the first j pattern segments.
        const std::size_t P = pats.size(), N = names.size();
        std::vector<char> cur(N + 1, 0), next(N + 1, 0);
        cur[0] = 1;
        for (std::size_t j = 0; j < P; ++j) {
            std::fill(next.begin(), next.end(), 0);
            if (pats[j] == "**") {
                // Zero or more whole segments.
                char seen = 0;
                for (std::size_t i = 0; i <= N; ++i) {
                    seen = static_cast<char>(seen | cur[i]);
                    next[i] = seen;
                }
            } else {
                for (std::size_t i = 0; i < N; ++i) {
                    if (!cur[i]) continue;
                    auto hit = segment_match(pats[j], names[i]);
                    if (!hit) return std::nullopt;
                    if (*hit) next[i + 1] = 1;
                }
                // A malformed pattern is an error even when nothing reaches it.
                if (!segment_match(pats[j], "").has_value()) return std::nullopt;
            }
            std::swap(cur, next);
        }
        if (cur[N]) any = true;
    }
    return any;
}

std::vector<std::pair<std::string_view, std::uint32_t>>
split_yaml_documents(std::string_view text) {
    return split_documents(text);
}

} // namespace kpkg::pko
