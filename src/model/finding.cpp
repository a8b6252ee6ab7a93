#include "kpkg/model/finding.hpp"

namespace kpkg::model {

const char* severity_name(Severity s) {
    return s == Severity::error ? "error" : "warning";
}

} // namespace kpkg::model
