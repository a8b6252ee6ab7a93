#include "kpkg/core/dynlib.hpp"

#include <dlfcn.h>
#include <link.h>
#include <mutex>

namespace kpkg {

namespace {
std::mutex g_mutex;
}

DynLib::DynLib(std::vector<std::string> sonames, std::string package)
    : sonames_(std::move(sonames)), package_(std::move(package)) {}

DynLib::~DynLib() {
    // Libraries stay loaded until exit: pointers into them may still be held.
}

Result<void> DynLib::load() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (handle_ != nullptr) return {};
    if (tried_) return fail(load_error_);
    tried_ = true;
    std::string reasons;
    for (const auto& name : sonames_) {
        void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (h != nullptr) {
            handle_ = h;
            loaded_name_ = name;
            return {};
        }
        if (!reasons.empty()) reasons += "; ";
        const char* e = ::dlerror();
        reasons += e != nullptr ? e : name;
    }
    load_error_ = Error::io("cannot load " + sonames_.front() + " (" + reasons + ")");
    load_error_.note("install the Debian package " + package_ + " (scripts/bootstrap does)");
    return fail(load_error_);
}

Result<void*> DynLib::symbol(const char* name) {
    if (auto r = load(); !r) return fail(std::move(r).error());
    std::lock_guard<std::mutex> lock(g_mutex);
    ::dlerror();
    void* p = ::dlsym(handle_, name);
    if (p == nullptr) {
        const char* e = ::dlerror();
        return fail(Error::io("symbol " + std::string(name) + " not found in " + loaded_name_ +
                              (e != nullptr ? std::string(" (") + e + ")" : std::string())));
    }
    return p;
}

DynLib& libcurl() {
    static DynLib lib({"libcurl.so.4", "libcurl-gnutls.so.4"}, "libcurl4");
    return lib;
}

DynLib& libarchive() {
    static DynLib lib({"libarchive.so.13"}, "libarchive13");
    return lib;
}

DynLib& libsolv() {
    static DynLib lib({"libsolv.so.1"}, "libsolv1");
    return lib;
}

DynLib& libsolvext() {
    static DynLib lib({"libsolvext.so.1"}, "libsolvext1");
    return lib;
}

bool is_loaded_in_process(const std::string& soname_prefix) {
    struct Ctx {
        const std::string* prefix;
        bool found;
    } ctx{&soname_prefix, false};
    ::dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* c = static_cast<Ctx*>(data);
            std::string_view path = info->dlpi_name != nullptr ? info->dlpi_name : "";
            auto slash = path.rfind('/');
            std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
            if (base.substr(0, c->prefix->size()) == *c->prefix) {
                c->found = true;
                return 1;
            }
            return 0;
        },
        &ctx);
    return ctx.found;
}

} // namespace kpkg
