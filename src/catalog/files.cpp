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
    IndexIgnore ignore;
    ignore.add_dir(dir, "");
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
    if (ec) return fail(Error::io("cannot read directory: " + ec.message(), {dir.string()}));
    for (; it != end; it.increment(ec)) {
        if (ec) return fail(Error::io("cannot read directory: " + ec.message(), {dir.string()}));
        if (hidden(it->path())) {
            if (it->is_directory(ec)) it.disable_recursion_pending();
            continue;
        }
        if (it->is_directory(ec)) {
            ignore.add_dir(it->path(), it->path().lexically_relative(dir).generic_string());
            continue;
        }
        if (it->is_regular_file(ec)) files.push_back(it->path());
    }
    if (!ignore.empty())
        std::erase_if(files, [&](const fs::path& f) {
            return ignore.ignored(f.lexically_relative(dir).generic_string());
        });
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace kpkg::catalog::detail
