#include "kpkg/io/about.hpp"

namespace kpkg::io {

Node about_document(const About& a) {
    Node doc = Node::map();
    doc.set("version", Node::string(a.version));
    doc.set("compiler", Node::string(a.compiler));
    doc.set("buildType", Node::string(a.build_type));
    Node libs = Node::seq();
    for (const auto& c : a.components) {
        Node n = Node::map();
        n.set("name", Node::string(c.name));
        n.set("version", Node::string(c.version));
        n.set("linkage", Node::string(c.linkage));
        if (!c.detail.empty()) n.set("detail", Node::string(c.detail));
        libs.push(std::move(n));
    }
    doc.set("libraries", std::move(libs));
    return doc;
}

} // namespace kpkg::io
