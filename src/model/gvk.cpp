#include "kpkg/model/gvk.hpp"

#include "kpkg/core/text.hpp"

namespace kpkg::model {

std::string GVK::str() const {
    std::string s;
    s.reserve(group.size() + version.size() + kind.size() + 2);
    s += group;
    s += '/';
    s += version;
    s += '/';
    s += kind;
    return s;
}

std::string GVK::words() const {
    std::string s = "API ";
    s += text::shown(group);
    s += '/';
    s += text::shown(version);
    s += ' ';
    s += text::shown(kind);
    return s;
}

} // namespace kpkg::model
