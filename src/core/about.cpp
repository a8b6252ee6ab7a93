#include "kpkg/core/about.hpp"

#include <openssl/opensslv.h>

#include "kpkg/core/dynlib.hpp"
#include "kpkg/version.hpp"

namespace kpkg {

namespace {

Component probe(const std::string& name, DynLib& lib, const char* symbol, bool is_function) {
    Component c{name, "", "on demand", ""};
    auto sym = lib.symbol(symbol);
    if (!sym) {
        c.linkage = "missing";
        c.detail = sym.error().message;
        return c;
    }
    c.detail = lib.soname();
    if (is_function) {
        using Fn = const char* (*)();
        const char* v = reinterpret_cast<Fn>(*sym)();
        c.version = v != nullptr ? v : "";
    } else {
        c.version = static_cast<const char*>(*sym);
    }
    return c;
}

} // namespace

About about(bool probe_on_demand) {
    About a;
    a.version = KPKG_VERSION;
    a.compiler = KPKG_COMPILER;
    a.build_type = KPKG_BUILD_TYPE;
    a.components.push_back({"libfyaml", KPKG_LIBFYAML_VERSION, "static", ""});
    a.components.push_back({"openssl (libcrypto)", OPENSSL_VERSION_STR, "static", ""});
    a.components.push_back({"zlib", KPKG_ZLIB_VERSION, "static", ""});
    if (probe_on_demand) {
        a.components.push_back(probe("libcurl", libcurl(), "curl_version", true));
        a.components.push_back(probe("libarchive", libarchive(), "archive_version_details", true));
        a.components.push_back(probe("libsolv", libsolv(), "solv_version", false));
    } else {
        for (const char* n : {"libcurl", "libarchive", "libsolv"})
            a.components.push_back({n, "", "on demand", "not loaded (use --libraries)"});
    }
    return a;
}

} // namespace kpkg
