#include "kpkg/bundle/report.hpp"

#include <cstdint>

namespace kpkg::bundle {

namespace {

io::Node count_node(std::size_t n) {
    return io::Node::integer(static_cast<std::int64_t>(n));
}

} // namespace

io::Node finding_node(const Finding& f) {
    io::Node n = io::Node::map();
    n.set("severity", io::Node::string(severity_name(f.severity)));
    n.set("rule", io::Node::string(f.rule));
    n.set("message", io::Node::string(f.message));
    n.set("file", io::Node::string(f.pos.file));
    n.set("line", io::Node::integer(f.pos.line));
    n.set("column", io::Node::integer(f.pos.column));
    n.set("subject", io::Node::string(f.subject));
    return n;
}

io::Node bundle_report_node(const BundleReport& r) {
    const std::size_t errors = count(r.findings, Severity::error);
    io::Node b = io::Node::map();
    b.set("dir", io::Node::string(r.dir));
    b.set("valid", io::Node::boolean(errors == 0));
    b.set("errors", count_node(errors));
    b.set("warnings", count_node(count(r.findings, Severity::warning)));
    io::Node list = io::Node::seq();
    for (const auto& f : r.findings)
        list.push(finding_node(f));
    b.set("findings", std::move(list));
    return b;
}

io::Node validate_report_node(const std::vector<BundleReport>& reports) {
    io::Node bundles = io::Node::seq();
    std::size_t errors = 0, warnings = 0;
    for (const auto& r : reports) {
        errors += count(r.findings, Severity::error);
        warnings += count(r.findings, Severity::warning);
        bundles.push(bundle_report_node(r));
    }
    io::Node doc = io::Node::map();
    doc.set("bundles", std::move(bundles));
    doc.set("errors", count_node(errors));
    doc.set("warnings", count_node(warnings));
    return doc;
}

} // namespace kpkg::bundle
