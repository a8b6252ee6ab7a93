#include "files.hpp"

#include <algorithm>
#include <system_error>

#include "indexignore.hpp"

namespace kpkg::catalog::detail {

namespace fs = std::filesystem;

bool path_less(const std::string& a, const std::string& b) {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (a[i] == b[i]) continue;
        // '/' ends a component: it sorts before every other byte.
        if (a[i] == '/') return true;
        if (b[i] == '/') return false;
        return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
    }
    return a.size() < b.size();
}

namespace {

std::string lower_first(std::string s) {
    if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
    return s;
}

} // namespace

Result<Listing> list_files(const fs::path& root) {
    Listing out;
    IndexIgnore ignore;
    ignore.add_dir(root, "");
    out.dirs.push_back({root, ""});
    std::error_code ec;
    if (fs::exists(root / ".indexignore", ec))
        out.ignores.push_back({root / ".indexignore", ".indexignore"});
    fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
    if (ec)
        return fail(
            Error::io("cannot read directory " + root.string() + ": " + lower_first(ec.message())));
    for (; it != end; it.increment(ec)) {
        if (ec)
            return fail(Error::io("cannot read directory " + root.string() + ": " +
                                  lower_first(ec.message())));
        const fs::path& p = it->path();
        const std::string rel = p.lexically_relative(root).generic_string();
        const fs::file_status ls = it->symlink_status(ec);
        if (ec)
            return fail(Error::io("cannot read " + p.string() + ": " + lower_first(ec.message())));
        if (fs::is_directory(ls)) {
            ignore.add_dir(p, rel);
            out.dirs.push_back({p, rel});
            if (fs::exists(p / ".indexignore", ec))
                out.ignores.push_back({p / ".indexignore", rel + "/.indexignore"});
            continue;
        }
        if (p.filename() == ".indexignore") continue;
        if (fs::is_symlink(ls)) {
            const fs::file_status st = fs::status(p, ec);
            if (ec || !fs::exists(st)) {
                std::string why = ec ? lower_first(ec.message()) : "it points to nothing";
                return fail(
                    Error::io("cannot read " + p.string() + ": " + why + " (a symbolic link)"));
            }
            if (fs::is_directory(st))
                return fail(Error::io("cannot read " + p.string() +
                                      ": it is a symbolic link to a directory (links to "
                                      "directories are not followed; exclude it in "
                                      ".indexignore or replace it with the directory)"));
            if (!fs::is_regular_file(st))
                return fail(Error::io("cannot read " + p.string() + ": not a regular file"));
        } else if (!fs::is_regular_file(ls)) {
            return fail(Error::io("cannot read " + p.string() + ": not a regular file"));
        }
        out.files.push_back({p, rel});
    }
    if (!ignore.empty())
        std::erase_if(out.files, [&](const ListedPath& f) { return ignore.ignored(f.rel); });
    auto by_rel = [](const ListedPath& a, const ListedPath& b) { return path_less(a.rel, b.rel); };
    std::sort(out.files.begin(), out.files.end(), by_rel);
    std::sort(out.dirs.begin() + 1, out.dirs.end(), by_rel);
    std::sort(out.ignores.begin(), out.ignores.end(), by_rel);
    return out;
}

} // namespace kpkg::catalog::detail
