#include "archive.hpp"

#include <mutex>

#include "kpkg/core/dynlib.hpp"

namespace kpkg::oci::detail {

Result<const ArchiveApi*> archive_api() {
    static ArchiveApi api;
    static std::once_flag once;
    static Error error;
    static bool ok = false;
    std::call_once(once, [] {
        DynLib& lib = libarchive();
        auto resolve = [&lib](auto& fn, const char* name) -> bool {
            auto f =
                lib.function<std::remove_pointer_t<std::remove_reference_t<decltype(fn)>>>(name);
            if (!f) {
                error = std::move(f).error();
                return false;
            }
            fn = *f;
            return true;
        };
#define KPKG_ARCHIVE_FN(name)                                                                      \
    if (!resolve(api.name, #name)) return;
#include "archive_functions.inc"
#undef KPKG_ARCHIVE_FN
        ok = true;
    });
    if (!ok) return error;
    return &api;
}

} // namespace kpkg::oci::detail
