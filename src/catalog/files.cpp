#include "files.hpp"

#include <algorithm>
#include <utility>

#include "indexignore.hpp"

namespace kpkg::catalog::detail {

Error problem_error(const io::Tree& tree, const io::Entry& e) {
    const io::Problem& p = *e.problem;
    switch (p.kind) {
    case io::Problem::Kind::leaves_root:
        return Error::invalid(
            "refused " + e.display + ": it is a symbolic link to " + p.target +
            ", outside the catalog directory " + tree.display_root() +
            " (links that leave the catalog are not followed; copy the file into the "
            "catalog or exclude the link in .indexignore)");
    case io::Problem::Kind::dangling:
        return Error::io("cannot read " + e.display + ": " +
                         (p.why.empty() ? std::string("it points to nothing") : p.why) +
                         " (a symbolic link)");
    case io::Problem::Kind::link_to_dir:
        return Error::io("cannot read " + e.display +
                         ": it is a symbolic link to a directory (links to "
                         "directories are not followed; exclude it in "
                         ".indexignore or replace it with the directory)");
    case io::Problem::Kind::not_regular:
        break;
    }
    return Error::io("cannot read " + e.display + ": not a regular file");
}

Result<Listing> select_files(const io::Tree& tree) {
    Listing out;
    auto listed = tree.list();
    if (!listed) return fail(std::move(listed).error());
    std::vector<io::Entry>& entries = *listed;
    if (!tree.is_directory()) {
        out.files = std::move(entries);
        return out;
    }
    std::vector<io::Entry> refused; // entries not readable, in path order
    for (io::Entry& e : entries) {
        if (e.is_dir()) {
            out.dirs.push_back(std::move(e));
        } else if (e.name() == ".indexignore") {
            // Read before anything is ignored: one leaving the root is refused.
            if (e.problem && e.problem->kind == io::Problem::Kind::leaves_root)
                return fail(problem_error(tree, e));
            out.ignores.push_back(std::move(e));
        } else if (e.problem) {
            refused.push_back(std::move(e));
        } else {
            out.files.push_back(std::move(e));
        }
    }
    // .indexignore files, shallower before deeper (their patterns are consulted in that order).
    auto depth = [](const std::string& r) { return std::count(r.begin(), r.end(), '/'); };
    std::vector<const io::Entry*> by_depth;
    for (const auto& f : out.ignores)
        by_depth.push_back(&f);
    std::stable_sort(by_depth.begin(), by_depth.end(), [&](const io::Entry* a, const io::Entry* b) {
        return depth(a->rel) < depth(b->rel);
    });
    IndexIgnore ignore;
    for (const io::Entry* f : by_depth) {
        const std::size_t slash = f->rel.rfind('/');
        const std::string dir =
            slash == std::string::npos ? std::string() : f->rel.substr(0, slash);
        // One that cannot be read (a dangling link, a link to a directory) has no patterns.
        if (f->problem) continue;
        auto text = tree.read(f->rel);
        if (!text.ok() || text->too_large) continue;
        ignore.add_text(text->text(), dir);
    }
    // The first entry, in path order, that cannot be read and is not ignored.
    for (const io::Entry& e : refused)
        if (ignore.empty() || !ignore.ignored(e.rel)) return fail(problem_error(tree, e));
    if (!ignore.empty())
        std::erase_if(out.files, [&](const io::Entry& f) { return ignore.ignored(f.rel); });
    return out;
}

} // namespace kpkg::catalog::detail
