#include "kpkg/core/error.hpp"

namespace kpkg {

std::string SourcePos::str() const {
    std::string s = file;
    if (line == 0) return s;
    if (s.empty()) s = "<input>";
    s += ':' + std::to_string(line);
    if (column != 0) s += ':' + std::to_string(column);
    return s;
}

std::string Error::str() const {
    std::string s = pos.str();
    if (!s.empty()) s += ": ";
    if (!subject.empty()) s += subject + ": ";
    s += message;
    return s;
}

} // namespace kpkg
