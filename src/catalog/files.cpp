#include "files.hpp"

#include <algorithm>
#include <system_error>

#include "indexignore.hpp"

namespace kpkg::catalog::detail {

namespace fs = std::filesystem;

namespace {

bool hidden(const fs::path& p) {
    const std::string n = p.filename().string();
    return !n.empty() && n[0] == '.';
}

} // namespace

Result<std::vector<fs::path>> catalog_files(const fs::path& dir) {
    std::vector<fs::path> files;
    // Directories holding a .indexignore, seen while listing (no probe per directory).
    std::vector<fs::path> ignore_dirs;
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
    if (ec) return fail(Error::io("cannot read directory: " + ec.message(), {dir.string()}));
    for (; it != end; it.increment(ec)) {
        if (ec) return fail(Error::io("cannot read directory: " + ec.message(), {dir.string()}));
        if (hidden(it->path())) {
            if (it->path().filename() == ".indexignore" && !it->is_directory(ec))
                ignore_dirs.push_back(it->path().parent_path());
            if (it->is_directory(ec)) it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file(ec) && !it->is_directory(ec)) files.push_back(it->path());
    }
    if (!ignore_dirs.empty()) {
        // Each .indexignore applies to its directory and below; shallower files first (path
        // order puts a directory before everything below it).
        IndexIgnore ignore;
        std::sort(ignore_dirs.begin(), ignore_dirs.end());
        for (const auto& d : ignore_dirs) {
            std::string rel = d.lexically_relative(dir).generic_string();
            if (rel == ".") rel.clear();
            ignore.add_dir(d, rel);
        }
        std::erase_if(files, [&](const fs::path& f) {
            return ignore.ignored(f.lexically_relative(dir).generic_string());
        });
    }
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace kpkg::catalog::detail
