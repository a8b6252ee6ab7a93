#include "kpkg/catalog/report.hpp"

#include <cstdint>
#include <string>

namespace kpkg::catalog {

namespace {

io::Node count_node(std::size_t n) {
    return io::Node::integer(static_cast<std::int64_t>(n));
}

io::Node strings_node(const std::vector<std::string>& v) {
    io::Node n = io::Node::seq();
    for (const auto& s : v)
        n.push(io::Node::string(s));
    return n;
}

} // namespace

io::Node finding_node(const Finding& f) {
    io::Node n = io::Node::map();
    n.set("severity", io::Node::string(severity_name(f.severity)));
    n.set("scope", io::Node::string(scope_name(f.scope)));
    n.set("rule", io::Node::string(f.rule));
    n.set("package", io::Node::string(f.package));
    n.set("channel", io::Node::string(f.channel));
    n.set("bundle", io::Node::string(f.bundle));
    n.set("message", io::Node::string(f.message));
    n.set("file", io::Node::string(f.pos.file));
    n.set("line", io::Node::integer(f.pos.line));
    n.set("column", io::Node::integer(f.pos.column));
    return n;
}

io::Node validate_report_node(const std::vector<Finding>& findings) {
    const std::size_t errors = count(findings, Severity::error);
    io::Node doc = io::Node::map();
    doc.set("valid", io::Node::boolean(errors == 0));
    doc.set("errors", count_node(errors));
    doc.set("warnings", count_node(count(findings, Severity::warning)));
    io::Node list = io::Node::seq();
    for (const auto& f : findings)
        list.push(finding_node(f));
    doc.set("findings", std::move(list));
    return doc;
}

io::Node packages_node(const std::vector<PackageRow>& rows) {
    io::Node doc = io::Node::seq();
    for (const auto& r : rows) {
        io::Node n = io::Node::map();
        n.set("name", io::Node::string(r.name));
        n.set("defaultChannel", io::Node::string(r.default_channel));
        n.set("channels", count_node(r.channels));
        n.set("bundles", count_node(r.bundles));
        n.set("head", io::Node::string(r.head));
        doc.push(std::move(n));
    }
    return doc;
}

io::Node channels_node(const std::vector<ChannelRow>& rows) {
    io::Node doc = io::Node::seq();
    for (const auto& r : rows) {
        io::Node n = io::Node::map();
        n.set("package", io::Node::string(r.package));
        n.set("name", io::Node::string(r.name));
        n.set("head", io::Node::string(r.heads.size() == 1 ? r.heads.front() : ""));
        n.set("heads", strings_node(r.heads));
        n.set("entries", count_node(r.entries));
        doc.push(std::move(n));
    }
    return doc;
}

io::Node bundles_node(const std::vector<BundleRow>& rows) {
    io::Node doc = io::Node::seq();
    for (const auto& r : rows) {
        io::Node n = io::Node::map();
        n.set("package", io::Node::string(r.package));
        n.set("channel", io::Node::string(r.channel));
        n.set("name", io::Node::string(r.name));
        n.set("version", io::Node::string(r.version));
        n.set("replaces", io::Node::string(r.replaces));
        n.set("skips", strings_node(r.skips));
        n.set("skipRange", io::Node::string(r.skip_range));
        n.set("image", io::Node::string(r.image));
        doc.push(std::move(n));
    }
    return doc;
}

} // namespace kpkg::catalog
