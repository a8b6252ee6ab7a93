// Resolutions as text for people and as the documented json/yaml documents (man kpkg-resolve).
#include <algorithm>

#include "kpkg/core/text.hpp"
#include "kpkg/resolve/resolve.hpp"
#include "nodes.hpp"

namespace kpkg::resolve {

using detail::problems_node;
using detail::strings;

namespace {

io::Node problem_node(const Problem& p) {
    io::Node n = io::Node::map();
    n.set("message", io::Node::string(p.message));
    io::Node ch = io::Node::seq();
    for (const auto& c : p.children)
        ch.push(problem_node(c));
    n.set("children", std::move(ch));
    return n;
}

io::Node selected_list(const std::vector<Selected>& v) {
    io::Node n = io::Node::seq();
    for (const auto& s : v)
        n.push(detail::selected_node(s));
    return n;
}

void tree(const Problem& p, const std::string& prefix, bool last, bool root, std::string& out) {
    if (root) {
        out += prefix + p.message + "\n";
    } else {
        out += prefix + (last ? "└─ " : "├─ ") + p.message + "\n";
    }
    std::string child_prefix = root ? prefix : prefix + (last ? "   " : "│  ");
    for (std::size_t i = 0; i < p.children.size(); ++i)
        tree(p.children[i], child_prefix, i + 1 == p.children.size(), false, out);
}

std::string reason_text(const Selected& s) {
    std::string r = s.reason;
    if (s.path.size() > 1) {
        std::string via;
        for (std::size_t i = 0; i + 1 < s.path.size(); ++i)
            via += (i ? ", " : "") + s.path[i];
        r += " (via " + via + ")";
    }
    return r;
}

} // namespace

io::Node detail::strings(const std::vector<std::string>& v) {
    io::Node n = io::Node::seq();
    for (const auto& s : v)
        n.push(io::Node::string(s));
    return n;
}

io::Node detail::problems_node(const std::vector<Problem>& ps) {
    io::Node n = io::Node::seq();
    for (const auto& p : ps)
        n.push(problem_node(p));
    return n;
}

// One item of `selected`, as the output document and the lockfile write it.
io::Node detail::selected_node(const Selected& s) {
    io::Node e = io::Node::map();
    e.set("package", io::Node::string(s.package));
    e.set("bundle", io::Node::string(s.bundle));
    e.set("version", io::Node::string(s.version));
    e.set("channel", io::Node::string(s.channel));
    e.set("catalog", io::Node::string(s.catalog));
    e.set("image", io::Node::string(s.image));
    e.set("action", io::Node::string(s.replaces.empty() ? "install" : "upgrade"));
    e.set("reason", io::Node::string(s.reason));
    if (!s.replaces.empty()) e.set("replaces", io::Node::string(s.replaces));
    if (!s.path.empty()) e.set("path", strings(s.path));
    return e;
}

io::Node resolution_node(const Resolution& r) {
    io::Node n = io::Node::map();
    n.set("satisfiable", io::Node::boolean(r.satisfiable));
    n.set("selected", selected_list(r.selected));
    n.set("unchanged", strings(r.unchanged));
    n.set("warnings", strings(r.warnings));
    n.set("problems", problems_node(r.problems));
    return n;
}

std::string problems_text(const std::vector<Problem>& problems, const std::string& indent) {
    std::string out;
    for (const auto& p : problems)
        tree(p, indent, true, true, out);
    return out;
}

std::string resolution_text(const Resolution& r) {
    if (!r.satisfiable) return "no solution:\n" + problems_text(r.problems, "  ");
    std::string out;
    if (r.selected.empty()) {
        out += "nothing to install or upgrade\n";
    } else {
        std::vector<std::vector<std::string>> rows{
            {"ACTION", "PACKAGE", "BUNDLE", "VERSION", "CHANNEL", "CATALOG", "REASON"}};
        for (const auto& s : r.selected)
            rows.push_back({s.replaces.empty() ? "install" : "upgrade", s.package, s.bundle,
                            s.version, s.channel, s.catalog, reason_text(s)});
        out += text::table(rows);
    }
    if (!r.unchanged.empty()) {
        out += "unchanged:";
        for (const auto& u : r.unchanged)
            out += " " + u;
        out += "\n";
    }
    return out;
}

io::Node packages_node(const std::vector<PackageReport>& reports) {
    io::Node list = io::Node::seq();
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& rep : reports) {
        io::Node e = io::Node::map();
        e.set("package", io::Node::string(rep.package));
        e.set("status", io::Node::string(status_name(rep.status)));
        e.set("selected", selected_list(rep.selected));
        e.set("warnings", strings(rep.warnings));
        e.set("problems", problems_node(rep.problems));
        list.push(std::move(e));
        ++counts[static_cast<int>(rep.status)];
    }
    io::Node n = io::Node::map();
    n.set("packages", std::move(list));
    n.set("installable", io::Node::integer(static_cast<std::int64_t>(counts[0])));
    n.set("unsatisfiable", io::Node::integer(static_cast<std::int64_t>(counts[1])));
    n.set("invalid", io::Node::integer(static_cast<std::int64_t>(counts[2])));
    return n;
}

std::string packages_text(const std::vector<PackageReport>& reports) {
    std::vector<std::vector<std::string>> rows{{"PACKAGE", "STATUS", "BUNDLES"}};
    std::string details;
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& rep : reports) {
        ++counts[static_cast<int>(rep.status)];
        std::string what;
        if (rep.status == PackageReport::Status::installable) {
            for (const auto& s : rep.selected)
                if (s.package == rep.package) what = s.bundle;
            if (rep.selected.size() > 1)
                what += " + " + std::to_string(rep.selected.size() - 1) +
                        (rep.selected.size() == 2 ? " dependency" : " dependencies");
        } else {
            details += rep.package + ": " + status_name(rep.status) + "\n" +
                       problems_text(rep.problems, "  ");
        }
        rows.push_back({rep.package, status_name(rep.status), what});
    }
    std::string out = text::table(rows);
    if (!details.empty()) {
        out += '\n';
        out += details;
    }
    out += '\n';
    out += std::to_string(reports.size()) + " packages: " + std::to_string(counts[0]) +
           " installable, " + std::to_string(counts[1]) + " unsatisfiable, " +
           std::to_string(counts[2]) + " invalid\n";
    return out;
}

} // namespace kpkg::resolve
