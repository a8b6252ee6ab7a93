// kpkg bundle inspect: the facts of a loaded bundle as one document, and that document as text.
// The text form is made from the document (not from the Bundle) so both always show the same.
#include "kpkg/bundle/inspect.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "kpkg/core/text.hpp"
#include "kpkg/io/emit.hpp"

namespace kpkg::bundle {

using io::Node;

namespace {

Node str(const std::string& s) {
    return Node::string(s);
}

Node strs(const std::vector<std::string>& v) {
    Node n = Node::seq();
    for (const auto& s : v)
        n.push(Node::string(s));
    return n;
}

// The text of a scalar ("" for null and collections).
std::string scalar(const Node* n) {
    return n != nullptr && n->is_scalar() && !n->is_null() ? n->text : std::string();
}

// The group of a "<plural>.<group>" CRD name ("" when it has no dot).
std::string group_of_crd_name(const std::string& name) {
    auto dot = name.find('.');
    return dot == std::string::npos ? std::string() : name.substr(dot + 1);
}

std::string compact_json(const Node& n) {
    io::JsonStyle style;
    style.indent = 0;
    std::string s = io::to_json(n, style);
    while (!s.empty() && s.back() == '\n')
        s.pop_back();
    return s;
}

Node api(const char* type, const std::string& group, const std::string& version,
         const std::string& kind, const std::string& name) {
    Node n = Node::map();
    n.set("type", str(type));
    n.set("group", str(group));
    n.set("version", str(version));
    n.set("kind", str(kind));
    n.set("name", str(name));
    return n;
}

Node apis(const std::vector<CrdRef>& crds, const std::vector<ApiServiceRef>& services) {
    Node out = Node::seq();
    for (const auto& c : crds)
        out.push(api("crd", group_of_crd_name(c.name), c.version, c.kind, c.name));
    for (const auto& a : services)
        out.push(api("apiservice", a.group, a.version, a.kind, a.name));
    return out;
}

Node finding_node(const Finding& f) {
    Node n = Node::map();
    n.set("severity", str(f.severity == Severity::error ? "error" : "warning"));
    n.set("rule", str(f.rule));
    n.set("message", str(f.message));
    n.set("file", str(f.pos.file));
    n.set("line", Node::integer(f.pos.line));
    n.set("column", Node::integer(f.pos.column));
    return n;
}

Node typed(const TypedValue& tv) {
    Node n = Node::map();
    n.set("type", str(tv.type));
    n.set("value", tv.value);
    return n;
}

Node dependencies(const std::vector<TypedValue>& deps) {
    Node packages = Node::seq(), gvks = Node::seq(), labels = Node::seq(),
         constraints = Node::seq(), other = Node::seq();
    for (const auto& d : deps) {
        const Node& v = d.value;
        if (d.type == "olm.package" && v.is_map()) {
            Node p = Node::map();
            p.set("packageName", str(scalar(v.get("packageName"))));
            p.set("versionRange", str(scalar(v.get("version"))));
            packages.push(std::move(p));
        } else if (d.type == "olm.gvk" && v.is_map()) {
            Node g = Node::map();
            g.set("group", str(scalar(v.get("group"))));
            g.set("version", str(scalar(v.get("version"))));
            g.set("kind", str(scalar(v.get("kind"))));
            gvks.push(std::move(g));
        } else if (d.type == "olm.label" && v.is_map()) {
            labels.push(str(scalar(v.get("label"))));
        } else if (d.type == "olm.constraint" && v.is_map()) {
            Node c = Node::map();
            c.set("failureMessage", str(scalar(v.get("failureMessage"))));
            c.set("summary", str(constraint_summary(v)));
            c.set("value", v);
            constraints.push(std::move(c));
        } else {
            other.push(typed(d));
        }
    }
    Node n = Node::map();
    n.set("packages", std::move(packages));
    n.set("gvks", std::move(gvks));
    n.set("labels", std::move(labels));
    n.set("constraints", std::move(constraints));
    n.set("other", std::move(other));
    return n;
}

// ---- text -----------------------------------------------------------------------------------

// Display width of UTF-8 text in code points.
std::size_t width(const std::string& s) {
    std::size_t w = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++w;
    return w;
}

// Rows as aligned columns (two spaces apart), each line starting with `indent`.
std::string table(const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
    std::vector<std::size_t> widths;
    for (const auto& r : rows) {
        if (widths.size() < r.size()) widths.resize(r.size(), 0);
        for (std::size_t i = 0; i < r.size(); ++i)
            widths[i] = std::max(widths[i], width(r[i]));
    }
    std::string out;
    for (const auto& r : rows) {
        std::string line = indent;
        for (std::size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size()) line.append(widths[i] - width(r[i]) + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + '\n';
    }
    return out;
}

std::string or_dash(const std::string& s) {
    return s.empty() ? "-" : s;
}

const std::vector<Node>& items(const Node& doc, std::string_view key) {
    static const std::vector<Node> none;
    const Node* n = doc.get(key);
    return n != nullptr && n->is_seq() ? n->items : none;
}

std::string field(const Node& n, std::string_view key) {
    return scalar(n.get(key));
}

std::vector<std::string> texts(const Node& doc, std::string_view key) {
    std::vector<std::string> out;
    for (const auto& n : items(doc, key))
        out.push_back(n.text);
    return out;
}

// "Title (n)" followed by the table, or "Title: none".
void section(std::string& out, const std::string& title, std::size_t n,
             const std::vector<std::vector<std::string>>& rows) {
    out += '\n';
    if (n == 0) {
        out += title + ": none\n";
        return;
    }
    out += title + " (" + std::to_string(n) + ")\n";
    out += table(rows, "  ");
}

std::string install_modes_text(const Node& doc) {
    std::vector<std::string> yes, no;
    for (const auto& m : items(doc, "installModes")) {
        const Node* s = m.get("supported");
        bool supported = s != nullptr && s->as_bool().value_or(false);
        (supported ? yes : no).push_back(or_dash(field(m, "type")));
    }
    if (yes.empty() && no.empty()) return "none declared";
    std::string s = yes.empty() ? "none supported" : text::join(yes, ", ");
    if (!no.empty()) s += " (not supported: " + text::join(no, ", ") + ")";
    return s;
}

std::string apis_section(const Node& doc, const char* key, const char* title) {
    std::vector<std::vector<std::string>> rows = {{"KIND", "VERSION", "GROUP", "TYPE", "NAME"}};
    for (const auto& a : items(doc, key))
        rows.push_back(
            {or_dash(field(a, "kind")), or_dash(field(a, "version")), or_dash(field(a, "group")),
             field(a, "type") == "crd" ? "CRD" : "APIService", or_dash(field(a, "name"))});
    std::string out;
    section(out, title, rows.size() - 1, rows);
    return out;
}

} // namespace

std::string constraint_summary(const Node& value) {
    if (!value.is_map()) return compact_json(value);
    std::vector<std::string> parts;
    for (const auto& e : value.fields) {
        const Node& v = e.value;
        if (e.key == "failureMessage") continue;
        if (e.key == "gvk" && v.is_map()) {
            parts.push_back("gvk " + field(v, "group") + "/" + field(v, "version") + " " +
                            field(v, "kind"));
        } else if (e.key == "package" && v.is_map()) {
            std::string p = "package " + field(v, "packageName");
            if (std::string r = field(v, "versionRange"); !r.empty()) p += " " + r;
            parts.push_back(std::move(p));
        } else if (e.key == "cel" && v.is_map()) {
            parts.push_back("cel: " + field(v, "rule"));
        } else if ((e.key == "all" || e.key == "any" || e.key == "not" || e.key == "none") &&
                   v.is_map()) {
            std::vector<std::string> inner;
            if (const Node* list = v.get("constraints"); list != nullptr && list->is_seq())
                for (const auto& c : list->items)
                    inner.push_back(constraint_summary(c));
            parts.push_back(e.key + "(" + text::join(inner, "; ") + ")");
        } else {
            parts.push_back("?" + e.key);
        }
    }
    if (parts.empty()) return "?";
    return text::join(parts, " & ");
}

std::vector<Finding> inspect_findings(const Loaded& loaded) {
    std::vector<Finding> out = loaded.findings;
    // A manifests/ file that was not read or did not parse may hold the CSV: its error is the
    // one to report, not the missing CSV that follows from it.
    const std::string mdir = (loaded.bundle.dir / "manifests").string() + "/";
    const bool unread = std::any_of(out.begin(), out.end(), [&](const Finding& f) {
        return f.severity == Severity::error &&
               (f.rule == "load.parse" || f.rule == "load.read" || f.rule == "load.link") &&
               f.pos.file.compare(0, mdir.size(), mdir) == 0;
    });
    if (!loaded.bundle.csv && !unread) {
        Finding f;
        f.severity = Severity::error;
        f.rule = "csv.missing";
        f.message = "no ClusterServiceVersion in manifests/: a registry+v1 bundle has exactly one";
        f.pos.file = (loaded.bundle.dir / "manifests").string();
        out.push_back(std::move(f));
    }
    return out;
}

io::Node inspect(const Loaded& loaded) {
    const Bundle& b = loaded.bundle;
    static const CsvInfo no_csv;
    const CsvInfo& c = b.csv ? *b.csv : no_csv;
    Node doc = Node::map();
    doc.set("dir", str(b.dir.string()));
    doc.set("package", str(b.annotations.package));
    doc.set("channels", strs(b.annotations.channels));
    doc.set("defaultChannel", str(b.annotations.default_channel));
    doc.set("csv", str(c.name));
    doc.set("version", str(c.version));
    doc.set("replaces", str(c.replaces));
    doc.set("skips", strs(c.skips));
    doc.set("skipRange", str(c.skip_range));
    doc.set("minKubeVersion", str(c.min_kube_version));

    Node modes = Node::seq();
    for (const auto& [type, supported] : c.install_modes) {
        Node m = Node::map();
        m.set("type", str(type));
        m.set("supported", Node::boolean(supported));
        modes.push(std::move(m));
    }
    doc.set("installModes", std::move(modes));
    doc.set("owned", apis(c.owned_crds, c.owned_apiservices));
    doc.set("required", apis(c.required_crds, c.required_apiservices));

    Node crds = Node::seq();
    for (const auto& crd : b.crds) {
        Node n = Node::map();
        n.set("name", str(crd.name));
        n.set("group", str(crd.group));
        n.set("kind", str(crd.kind));
        n.set("plural", str(crd.plural));
        n.set("versions", strs(crd.versions));
        crds.push(std::move(n));
    }
    doc.set("crds", std::move(crds));
    doc.set("dependencies", dependencies(b.dependencies));

    Node props = Node::seq();
    auto add_props = [&props](const std::vector<TypedValue>& list, const char* source) {
        for (const auto& p : list) {
            Node n = typed(p);
            n.set("source", str(source));
            props.push(std::move(n));
        }
    };
    add_props(b.properties, "properties.yaml");
    add_props(b.csv_properties, "olm.properties");
    doc.set("properties", std::move(props));

    Node deployments = Node::seq();
    for (const auto& d : c.deployments) {
        Node n = Node::map();
        n.set("name", str(d.name));
        Node containers = Node::seq();
        for (const auto& ci : d.containers) {
            Node cn = Node::map();
            cn.set("name", str(ci.name));
            cn.set("image", str(ci.image));
            cn.set("init", Node::boolean(ci.init));
            containers.push(std::move(cn));
        }
        n.set("containers", std::move(containers));
        deployments.push(std::move(n));
    }
    doc.set("deployments", std::move(deployments));

    Node related = Node::seq();
    for (const auto& r : c.related_images) {
        Node n = Node::map();
        n.set("name", str(r.name));
        n.set("image", str(r.image));
        related.push(std::move(n));
    }
    doc.set("relatedImages", std::move(related));

    Node findings = Node::seq();
    for (const auto& f : inspect_findings(loaded))
        findings.push(finding_node(f));
    doc.set("findings", std::move(findings));
    return doc;
}

std::string inspect_text(const io::Node& doc) {
    std::string out;
    std::string channels = text::join(texts(doc, "channels"), ", ");
    out += table(
        {
            {"Bundle:", or_dash(field(doc, "dir"))},
            {"Package:", or_dash(field(doc, "package"))},
            {"Channels:", or_dash(channels)},
            {"Default channel:", or_dash(field(doc, "defaultChannel"))},
            {"CSV:", or_dash(field(doc, "csv"))},
            {"Version:", or_dash(field(doc, "version"))},
            {"Replaces:", or_dash(field(doc, "replaces"))},
            {"Skips:", or_dash(text::join(texts(doc, "skips"), ", "))},
            {"Skip range:", or_dash(field(doc, "skipRange"))},
            {"Min Kubernetes:", or_dash(field(doc, "minKubeVersion"))},
            {"Install modes:", install_modes_text(doc)},
        },
        "");

    out += apis_section(doc, "owned", "Owned APIs");
    out += apis_section(doc, "required", "Required APIs");

    {
        std::vector<std::vector<std::string>> rows = {{"NAME", "KIND", "VERSIONS"}};
        for (const auto& c : items(doc, "crds"))
            rows.push_back({or_dash(field(c, "name")), or_dash(field(c, "kind")),
                            or_dash(text::join(texts(c, "versions"), ", "))});
        section(out, "CRDs in the bundle", rows.size() - 1, rows);
    }

    {
        std::vector<std::vector<std::string>> rows = {{"TYPE", "REQUIREMENT"}};
        static const Node empty_map = Node::map();
        const Node* deps = doc.get("dependencies");
        const Node& d = deps != nullptr && deps->is_map() ? *deps : empty_map;
        for (const auto& p : items(d, "packages")) {
            std::string range = field(p, "versionRange");
            rows.push_back({"package", field(p, "packageName") + " " + or_dash(range)});
        }
        for (const auto& g : items(d, "gvks"))
            rows.push_back(
                {"gvk", field(g, "group") + "/" + field(g, "version") + " " + field(g, "kind")});
        for (const auto& l : items(d, "labels"))
            rows.push_back({"label", l.text});
        for (const auto& c : items(d, "constraints")) {
            rows.push_back({"constraint", field(c, "summary")});
            if (std::string m = field(c, "failureMessage"); !m.empty())
                rows.push_back({"", "failure message: " + m});
        }
        for (const auto& o : items(d, "other")) {
            const Node* v = o.get("value");
            rows.push_back({or_dash(field(o, "type")), v != nullptr ? compact_json(*v) : "-"});
        }
        const std::size_t n = items(d, "packages").size() + items(d, "gvks").size() +
                              items(d, "labels").size() + items(d, "constraints").size() +
                              items(d, "other").size();
        section(out, "Dependencies", n, rows);
    }

    {
        std::vector<std::vector<std::string>> rows = {{"TYPE", "VALUE", "SOURCE"}};
        for (const auto& p : items(doc, "properties")) {
            const Node* v = p.get("value");
            rows.push_back({or_dash(field(p, "type")), v != nullptr ? compact_json(*v) : "-",
                            field(p, "source")});
        }
        section(out, "Properties", rows.size() - 1, rows);
    }

    {
        const auto& deps = items(doc, "deployments");
        out += '\n';
        if (deps.empty()) {
            out += "Deployments: none\n";
        } else {
            out += "Deployments (" + std::to_string(deps.size()) + ")\n";
            for (const auto& d : deps) {
                out += "  " + or_dash(field(d, "name")) + "\n";
                std::vector<std::vector<std::string>> rows = {{"CONTAINER", "IMAGE"}};
                for (const auto& c : items(d, "containers")) {
                    std::string name = field(c, "name");
                    const Node* init = c.get("init");
                    if (init != nullptr && init->as_bool().value_or(false))
                        name += name.empty() ? "(init)" : " (init)";
                    name = or_dash(name);
                    rows.push_back({name, or_dash(field(c, "image"))});
                }
                if (rows.size() > 1)
                    out += table(rows, "    ");
                else
                    out += "    no containers\n";
            }
        }
    }

    {
        std::vector<std::vector<std::string>> rows = {{"NAME", "IMAGE"}};
        for (const auto& r : items(doc, "relatedImages"))
            rows.push_back({or_dash(field(r, "name")), or_dash(field(r, "image"))});
        section(out, "Related images", rows.size() - 1, rows);
    }
    return out;
}

bool Inspection::has_errors() const {
    return std::any_of(findings.begin(), findings.end(),
                       [](const Finding& f) { return f.severity == Severity::error; });
}

namespace {

Result<Inspection> inspection_of(Result<Loaded> loaded) {
    if (!loaded) return fail(std::move(loaded).error());
    Inspection out;
    out.doc = inspect(*loaded);
    out.findings = inspect_findings(*loaded);
    return out;
}

} // namespace

Result<Inspection> inspect_dir(const std::filesystem::path& dir, const LoadOptions& opts) {
    return inspection_of(load(dir, opts));
}

Result<Inspection> inspect_dir(const io::Tree& tree, const LoadOptions& opts) {
    return inspection_of(load(tree, opts));
}

} // namespace kpkg::bundle
