// libarchive for the oci area, loaded on first use (kpkg::libarchive()): the functions kpkg calls,
// resolved once, and the few operations built on them. Private to src/oci.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <string>
#include <string_view>

#include "kpkg/core/result.hpp"

namespace kpkg::oci::detail {

struct ArchiveApi {
#define KPKG_ARCHIVE_FN(name) decltype(&::name) name = nullptr;
#include "archive_functions.inc"
#undef KPKG_ARCHIVE_FN
};

// The resolved functions, or why libarchive cannot be used (exit 1, naming the package).
Result<const ArchiveApi*> archive_api();

// An archive read from memory, freed on destruction.
class Reader {
public:
    explicit Reader(const ArchiveApi& api) : api_(api), a_(api.archive_read_new()) {}
    ~Reader() {
        if (a_ != nullptr) api_.archive_read_free(a_);
    }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    struct archive* get() const {
        return a_;
    }
    std::string error() const {
        const char* e = api_.archive_error_string(a_);
        return e != nullptr ? e : "unknown libarchive error";
    }

private:
    const ArchiveApi& api_;
    struct archive* a_;
};

} // namespace kpkg::oci::detail
