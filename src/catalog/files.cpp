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
    out.dirs.push_back({root, ""});
    std::error_code ec;
    // Entries are root/<rel>: the prefix is cut off the iterator's paths (cheaper than
    // lexically_relative for tens of thousands of entries).
    const std::size_t prefix = (root / "x").native().size() - 1;
    fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
    if (ec)
        return fail(
            Error::io("cannot read directory " + root.string() + ": " + lower_first(ec.message())));
    for (; it != end; it.increment(ec)) {
        if (ec)
            return fail(Error::io("cannot read directory " + root.string() + ": " +
                                  lower_first(ec.message())));
        const fs::path& p = it->path();
        std::string rel = p.native().substr(prefix);
        const fs::file_status ls = it->symlink_status(ec);
        if (ec)
            return fail(Error::io("cannot read " + p.string() + ": " + lower_first(ec.message())));
        if (fs::is_directory(ls)) {
            out.dirs.push_back({p, std::move(rel)});
            continue;
        }
        const std::size_t slash = rel.rfind('/');
        const std::string_view name = slash == std::string::npos
                                          ? std::string_view(rel)
                                          : std::string_view(rel).substr(slash + 1);
        if (name == ".indexignore") {
            out.ignores.push_back({p, std::move(rel)});
            continue;
        }
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
        out.files.push_back({p, std::move(rel)});
    }
    auto by_rel = [](const ListedPath& a, const ListedPath& b) { return path_less(a.rel, b.rel); };
    // .indexignore files, shallower before deeper (their patterns are consulted in that order).
    auto depth = [](const std::string& r) { return std::count(r.begin(), r.end(), '/'); };
    std::sort(out.ignores.begin(), out.ignores.end(),
              [&](const ListedPath& a, const ListedPath& b) {
                  const auto da = depth(a.rel), db = depth(b.rel);
                  return da != db ? da < db : path_less(a.rel, b.rel);
              });
    if (!out.ignores.empty()) {
        IndexIgnore ignore;
        for (const auto& f : out.ignores) {
            const std::size_t slash = f.rel.rfind('/');
            ignore.add_dir(f.path.parent_path(),
                           slash == std::string::npos ? std::string() : f.rel.substr(0, slash));
        }
        if (!ignore.empty())
            std::erase_if(out.files, [&](const ListedPath& f) { return ignore.ignored(f.rel); });
    }
    std::sort(out.files.begin(), out.files.end(), by_rel);
    std::sort(out.dirs.begin() + 1, out.dirs.end(), by_rel);
    std::sort(out.ignores.begin(), out.ignores.end(), by_rel);
    return out;
}

} // namespace kpkg::catalog::detail
