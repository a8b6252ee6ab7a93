// Shared libraries loaded on first use. A shared libcurl costs ~10 ms of process start-up and
// libarchive ~4 ms, so kpkg does not link them: the commands that need them load them here, and
// every other command starts without paying for them.
#pragma once

#include <string>
#include <vector>

#include "kpkg/core/result.hpp"

namespace kpkg {

class DynLib {
public:
    // A library known by its sonames (tried in order) and the Debian package that provides it,
    // named in the error when none can be loaded.
    DynLib(std::vector<std::string> sonames, std::string package);
    ~DynLib();
    DynLib(const DynLib&) = delete;
    DynLib& operator=(const DynLib&) = delete;

    // Loads the library if it is not loaded yet. Thread-safe; the first outcome is kept.
    Result<void> load();
    bool loaded() const { return handle_ != nullptr; }
    // The soname that was loaded.
    const std::string& soname() const { return loaded_name_; }

    // The address of a symbol, loading the library first.
    Result<void*> symbol(const char* name);

    // A function pointer of type F.
    template <class F>
    Result<F*> function(const char* name) {
        auto p = symbol(name);
        if (!p) return fail(std::move(p).error());
        return reinterpret_cast<F*>(*p);
    }

private:
    std::vector<std::string> sonames_;
    std::string package_;
    std::string loaded_name_;
    void* handle_ = nullptr;
    bool tried_ = false;
    Error load_error_;
};

// The libraries kpkg loads on demand, one instance each for the whole process.
DynLib& libcurl();
DynLib& libarchive();
DynLib& libsolv();
// libsolv's extensions (testcase_write, for `kpkg resolve --debug-testcase`).
DynLib& libsolvext();

// True when the shared object `soname_prefix` (e.g. "libcurl.so") is mapped in this process.
bool is_loaded_in_process(const std::string& soname_prefix);

} // namespace kpkg
