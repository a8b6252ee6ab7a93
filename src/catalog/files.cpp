#include "files.hpp"

#include <algorithm>
#include <optional>
#include <system_error>
#include <utility>

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

// Whether `target` (canonical) is `root` (canonical) or below it.
bool is_within(const fs::path& target, const fs::path& root) {
    auto t = target.begin();
    for (auto r = root.begin(); r != root.end(); ++r, ++t)
        if (t == target.end() || *t != *r) return false;
    return true;
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
    // The root with every link resolved, the boundary symbolic links must stay within; found
    // when the first link is met.
    std::optional<fs::path> real_root;
    // The entry met last and whether it was a directory: when the iterator fails, it failed
    // opening that directory, or reading on in the directory holding that entry.
    fs::path last = root;
    bool last_is_dir = true;
    std::vector<std::pair<std::string, Error>> refused; // (rel, why) of entries not readable
    for (; it != end; it.increment(ec)) {
        if (ec) break;
        const fs::path& p = it->path();
        last = p;
        last_is_dir = false;
        std::string rel = p.native().substr(prefix);
        const fs::file_status ls = it->symlink_status(ec);
        if (ec)
            return fail(Error::io("cannot read " + p.string() + ": " + lower_first(ec.message())));
        if (fs::is_directory(ls)) {
            last_is_dir = true;
            out.dirs.push_back({p, std::move(rel)});
            continue;
        }
        // What keeps this entry from being read; reported after the walk unless .indexignore
        // leaves the entry out (as opm never looks at an ignored entry).
        std::optional<Error> problem;
        if (fs::is_symlink(ls)) {
            // A link that resolves outside the root is refused whatever it points to: its
            // target would be read (or walked) as part of the catalog.
            std::error_code cec;
            const fs::path target = fs::canonical(p, cec);
            if (!cec) {
                if (!real_root) {
                    std::error_code rec;
                    real_root = fs::canonical(root, rec);
                    if (rec) real_root = fs::absolute(root, rec).lexically_normal();
                }
                if (!is_within(target, *real_root)) {
                    std::error_code lec;
                    const fs::path written = fs::read_symlink(p, lec);
                    problem = Error::invalid(
                        "refused " + p.string() + ": it is a symbolic link to " +
                        (lec ? target : written).string() + ", outside the catalog directory " +
                        root.string() +
                        " (links that leave the catalog are not followed; copy the file into the "
                        "catalog or exclude the link in .indexignore)");
                }
            }
        }
        const std::size_t slash = rel.rfind('/');
        const std::string_view name = slash == std::string::npos
                                          ? std::string_view(rel)
                                          : std::string_view(rel).substr(slash + 1);
        if (name == ".indexignore") {
            if (problem) return fail(std::move(*problem)); // read before anything is ignored
            out.ignores.push_back({p, std::move(rel)});
            continue;
        }
        if (problem) {
            // refused below
        } else if (fs::is_symlink(ls)) {
            const fs::file_status st = fs::status(p, ec);
            if (ec || !fs::exists(st)) {
                std::string why = ec ? lower_first(ec.message()) : "it points to nothing";
                ec.clear();
                problem =
                    Error::io("cannot read " + p.string() + ": " + why + " (a symbolic link)");
            } else if (fs::is_directory(st)) {
                problem = Error::io("cannot read " + p.string() +
                                    ": it is a symbolic link to a directory (links to "
                                    "directories are not followed; exclude it in "
                                    ".indexignore or replace it with the directory)");
            } else if (!fs::is_regular_file(st)) {
                problem = Error::io("cannot read " + p.string() + ": not a regular file");
            }
        } else if (!fs::is_regular_file(ls)) {
            problem = Error::io("cannot read " + p.string() + ": not a regular file");
        }
        if (problem) {
            refused.push_back({std::move(rel), std::move(*problem)});
            continue;
        }
        out.files.push_back({p, std::move(rel)});
    }
    // A directory the iterator cannot open ends the walk (the iterator becomes the end one):
    // what it would have met after it must not be dropped silently.
    if (ec) {
        const fs::path dir = last_is_dir ? last : last.parent_path();
        return fail(
            Error::io("cannot read directory " + dir.string() + ": " + lower_first(ec.message())));
    }
    auto by_rel = [](const ListedPath& a, const ListedPath& b) { return path_less(a.rel, b.rel); };
    // .indexignore files, shallower before deeper (their patterns are consulted in that order).
    auto depth = [](const std::string& r) { return std::count(r.begin(), r.end(), '/'); };
    std::sort(out.ignores.begin(), out.ignores.end(),
              [&](const ListedPath& a, const ListedPath& b) {
                  const auto da = depth(a.rel), db = depth(b.rel);
                  return da != db ? da < db : path_less(a.rel, b.rel);
              });
    IndexIgnore ignore;
    for (const auto& f : out.ignores) {
        const std::size_t slash = f.rel.rfind('/');
        ignore.add_dir(f.path.parent_path(),
                       slash == std::string::npos ? std::string() : f.rel.substr(0, slash));
    }
    // The first entry, in path order, that cannot be read and is not ignored.
    std::sort(refused.begin(), refused.end(),
              [](const auto& a, const auto& b) { return path_less(a.first, b.first); });
    for (auto& [rel, why] : refused)
        if (ignore.empty() || !ignore.ignored(rel)) return fail(std::move(why));
    if (!ignore.empty())
        std::erase_if(out.files, [&](const ListedPath& f) { return ignore.ignored(f.rel); });
    std::sort(out.files.begin(), out.files.end(), by_rel);
    std::sort(out.dirs.begin() + 1, out.dirs.end(), by_rel);
    std::sort(out.ignores.begin(), out.ignores.end(), by_rel);
    return out;
}

} // namespace kpkg::catalog::detail
