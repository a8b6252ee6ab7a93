// What Package Operator makes of rendered objects: phases, the tree kubectl-package prints and
// the (Cluster)ObjectDeployment the manager creates.
#include "kpkg/io/go.hpp"
#include "kpkg/pko/render.hpp"
#include "kpkg/pko/util.hpp"

namespace kpkg::pko {
namespace {

std::string trim(std::string_view s) {
    std::size_t b = 0, e = s.size();
    while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r'))
        ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' || s[e - 1] == '\r'))
        --e;
    return std::string(s.substr(b, e - b));
}

// The condition-map annotation: one "source => destination" per line.
Result<io::Node> condition_mappings(std::string_view text) {
    io::Node out = io::Node::seq();
    const std::string all = trim(text);
    std::size_t start = 0;
    int line = 0;
    while (start <= all.size()) {
        const std::size_t nl = all.find('\n', start);
        const std::string_view l =
            std::string_view(all).substr(start, nl == std::string::npos ? all.npos : nl - start);
        ++line;
        const std::size_t arrow = l.find("=>");
        if (arrow == std::string_view::npos)
            return fail(
                Error::invalid("expected 2 part mapping got 1 in line " + std::to_string(line)));
        const std::string_view left = l.substr(0, arrow);
        const std::string_view right = l.substr(arrow + 2);
        if (left.empty())
            return fail(
                Error::invalid("sourceType can't be empty in line " + std::to_string(line)));
        if (right.empty())
            return fail(
                Error::invalid("destinationType can't be empty in line " + std::to_string(line)));
        io::Node m = io::Node::map();
        m.set("destinationType", io::Node::string(trim(right)));
        m.set("sourceType", io::Node::string(trim(left)));
        out.push(std::move(m));
        if (nl == std::string::npos) break;
        start = nl + 1;
    }
    return out;
}

std::string str_of(const io::Node* n) {
    return n && n->is_string() ? n->text : std::string();
}

io::Node labels_of(const Package& pkg, const std::string& name) {
    io::Node l = io::Node::map();
    l.set(std::string(kInstanceLabel), io::Node::string(name));
    l.set(std::string(kPackageLabel), io::Node::string(pkg.manifest.name));
    return l;
}

} // namespace

Result<std::vector<PhaseObjects>> by_phase(const Package& pkg, const Rendered& r) {
    std::vector<PhaseObjects> phases;
    for (const Phase& p : pkg.manifest.phases)
        phases.push_back({p, {}, {}});
    for (const Object& o : r.objects) {
        const std::string phase = o.phase();
        PhaseObjects* into = nullptr;
        for (auto& p : phases)
            if (p.phase.name == phase) into = &p;
        if (!into) continue; // reported by validation
        PhasedObject po;
        po.object = o.node;
        io::Node* md = po.object.get("metadata");
        io::Node* ann = md && md->is_map() ? md->get("annotations") : nullptr;
        if (ann && ann->is_map()) {
            if (const io::Node* cm = ann->get(kConditionMapAnnotation)) {
                auto mappings = condition_mappings(str_of(cm));
                if (!mappings) {
                    Error e = std::move(mappings).error();
                    e.message = "the " + std::string(kConditionMapAnnotation) + " annotation of " +
                                o.path + " document " + std::to_string(o.index) + ": " + e.message;
                    e.pos = o.pos;
                    return fail(std::move(e));
                }
                po.condition_mappings = std::move(*mappings);
            }
            po.collision_protection = str_of(ann->get(kCollisionAnnotation));
            po.external = str_of(ann->get("package-operator.run/external")) == "True";
            std::vector<io::MapEntry> kept;
            for (auto& f : ann->fields)
                if (f.key != kPhaseAnnotation && f.key != kConditionMapAnnotation &&
                    f.key != kCollisionAnnotation && f.key != kConditionAnnotation &&
                    f.key != "package-operator.run/external")
                    kept.push_back(std::move(f));
            ann->fields = std::move(kept);
            if (ann->fields.empty()) {
                std::vector<io::MapEntry> rest;
                for (auto& f : md->fields)
                    if (f.key != "annotations") rest.push_back(std::move(f));
                md->fields = std::move(rest);
            }
        }
        (po.external ? into->external : into->objects).push_back(std::move(po));
    }
    std::vector<PhaseObjects> out;
    for (auto& p : phases)
        if (!p.objects.empty() || !p.external.empty()) out.push_back(std::move(p));
    return out;
}

std::string tree_text(const Package& pkg, const std::vector<PhaseObjects>& phases,
                      const std::string& name, const std::string& ns, bool cluster) {
    std::string out = pkg.manifest.name + "\n" + (cluster ? "ClusterPackage" : "Package") + " " +
                      ns + "/" + name + "\n";
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const bool last = i + 1 == phases.size();
        // gotree v1: every top-level item with the last-item mark; a child's mark and prefix
        // follow its parent's position, not its own.
        out += "└── Phase " + phases[i].phase.name + "\n";
        const std::string lead = last ? "    └── " : "│   ├── ";
        auto line = [&](const io::Node& obj, const char* suffix) {
            const std::string api = str_of(obj.get("apiVersion"));
            const auto slash = api.find('/');
            const std::string group =
                slash == std::string::npos ? std::string() : api.substr(0, slash);
            const std::string version = slash == std::string::npos ? api : api.substr(slash + 1);
            const io::Node* md = obj.get("metadata");
            out += lead + group + "/" + version + ", Kind=" + str_of(obj.get("kind")) + " " +
                   str_of(md ? md->get("namespace") : nullptr) + "/" +
                   str_of(md ? md->get("name") : nullptr) + suffix + "\n";
        };
        for (const auto& o : phases[i].objects)
            line(o.object, "");
        for (const auto& o : phases[i].external)
            line(o.object, " (EXTERNAL)");
    }
    return out;
}

io::Node object_deployment(const Package& pkg, const std::vector<PhaseObjects>& phases,
                           const std::string& name, const std::string& ns, const std::string& image,
                           const io::Node& config) {
    io::Node d = io::Node::map();
    d.set("apiVersion", io::Node::string("package-operator.run/v1alpha1"));
    d.set("kind", io::Node::string(ns.empty() ? "ClusterObjectDeployment" : "ObjectDeployment"));
    io::Node& md = d.set("metadata", io::Node::map());
    io::Node ann = io::Node::map();
    ann.set("kubernetes.io/change-cause",
            io::Node::string("Installing " + pkg.manifest.name + " package."));
    std::string cfg;
    if (config.is_null())
        cfg = "null";
    else
        io::go::append_marshal(cfg, config);
    ann.set("package-operator.run/package-config", io::Node::string(cfg));
    ann.set("package-operator.run/package-source-image", io::Node::string(image));
    md.set("annotations", std::move(ann));
    md.set("labels", labels_of(pkg, name));
    md.set("name", io::Node::string(name));
    if (!ns.empty()) md.set("namespace", io::Node::string(ns));
    io::Node& spec = d.set("spec", io::Node::map());
    io::Node& sel = spec.set("selector", io::Node::map());
    sel.set("matchLabels", labels_of(pkg, name));
    io::Node& tmpl = spec.set("template", io::Node::map());
    io::Node& tmd = tmpl.set("metadata", io::Node::map());
    tmd.set("labels", labels_of(pkg, name));
    io::Node& ts = tmpl.set("spec", io::Node::map());
    if (const io::Node* probes = pkg.manifest.probes(); probes && probes->is_seq()) {
        auto j = to_json_node(*probes);
        ts.set("availabilityProbes", j ? std::move(*j) : *probes);
    }
    io::Node& ph = ts.set("phases", io::Node::seq());
    auto entry = [](const PhasedObject& o) {
        io::Node e = io::Node::map();
        if (!o.collision_protection.empty())
            e.set("collisionProtection", io::Node::string(o.collision_protection));
        if (o.condition_mappings.is_seq()) e.set("conditionMappings", o.condition_mappings);
        e.set("object", o.object);
        return e;
    };
    for (const PhaseObjects& p : phases) {
        io::Node n = io::Node::map();
        if (!p.phase.cls.empty()) n.set("class", io::Node::string(p.phase.cls));
        if (!p.external.empty()) {
            io::Node& ext = n.set("externalObjects", io::Node::seq());
            for (const auto& o : p.external)
                ext.push(entry(o));
        }
        n.set("name", io::Node::string(p.phase.name));
        io::Node& objs = n.set("objects", io::Node::seq());
        for (const auto& o : p.objects)
            objs.push(entry(o));
        ph.push(std::move(n));
    }
    return d;
}

} // namespace kpkg::pko
