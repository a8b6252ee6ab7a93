// What this kpkg is made of: its version and the libraries it uses, for `kpkg version`.
#pragma once

#include <string>
#include <vector>

namespace kpkg {

struct Component {
    std::string name;
    std::string version; // empty when not available
    // "static" (linked into kpkg), "header-only", "on demand" (loaded when a command needs it),
    // or "missing" (could not be loaded; `detail` says why).
    std::string linkage;
    std::string detail;
};

struct About {
    std::string version;
    std::string compiler;
    std::string build_type;
    std::vector<Component> components;
};

// With probe_on_demand, the libraries normally loaded only by the commands that need them
// (libcurl, libarchive, libsolv) are loaded now to report their versions.
About about(bool probe_on_demand);

} // namespace kpkg
