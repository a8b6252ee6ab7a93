// Writing a package's fixtures (validate's FixtureChange list), never through a symbolic link.
#include "kpkg/pko/fixtures.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>

#include "kpkg/core/atomic_file.hpp"
#include "kpkg/core/text.hpp"

namespace kpkg::pko {

namespace {

namespace fs = std::filesystem;

// Whether `p` is `root` or below it (both canonical).
bool within(const fs::path& p, const fs::path& root) {
    auto r = root.begin();
    auto q = p.begin();
    for (; r != root.end(); ++r, ++q)
        if (q == p.end() || *q != *r) return false;
    return true;
}

// The error for the symbolic link `link`, met on the way to `target`.
Error through_link(const fs::path& root, const fs::path& link, const fs::path& target) {
    std::error_code ec;
    const fs::path written = fs::read_symlink(link, ec);
    std::string msg =
        "refused to write " + target.string() + ": " + link.string() + " is a symbolic link";
    if (!ec) msg += " to " + text::quote(written.string());
    std::error_code rc, lc;
    const fs::path real_root = fs::canonical(root, rc);
    const fs::path real = fs::canonical(link, lc);
    if (!rc && !lc)
        msg += within(real, real_root) ? " (inside the package)" : ", outside the package";
    msg += "; fixtures are written only into the package's own directories and files, never "
           "through a symbolic link";
    return Error::invalid(std::move(msg))
        .note("replace " + link.string() + " with a " +
              (link == target ? std::string("file") : std::string("directory")) +
              " of the package, or remove it, and run again");
}

// What is on the way to the change's file below `root`, checked without writing anything.
Result<void> check(const fs::path& root, const FixtureChange& c) {
    const std::vector<std::string_view> parts = text::split(c.rel, '/');
    const bool named = !parts.empty() && std::none_of(parts.begin(), parts.end(), [](auto s) {
        return s.empty() || s == "." || s == "..";
    });
    if (!named)
        return fail(Error::internal("a fixture outside the package: " + text::quote(c.rel)));
    const fs::path target = root / c.rel;
    fs::path p = root;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        p /= std::string(parts[i]);
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) {
            if (errno == ENOENT) return {}; // created (or, to remove, already gone)
            return fail(Error::io("cannot write " + target.string() + ": cannot look at " +
                                  p.string() + ": " + std::strerror(errno)));
        }
        if (S_ISLNK(st.st_mode)) return fail(through_link(root, p, target));
        const bool last = i + 1 == parts.size();
        if (!last && !S_ISDIR(st.st_mode))
            return fail(Error::io("cannot write " + target.string() + ": " + p.string() +
                                  " is not a directory"));
        if (last && !S_ISREG(st.st_mode))
            return fail(Error::io(
                "cannot write " + target.string() + ": " +
                (S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file")));
    }
    return {};
}

} // namespace

Result<void> write_fixture_changes(const fs::path& root,
                                   const std::vector<FixtureChange>& changes) {
    for (const auto& c : changes)
        if (auto r = check(root, c); !r) return r;
    for (const auto& c : changes) {
        const fs::path target = root / c.rel;
        std::error_code ec;
        if (c.remove) {
            fs::remove(target, ec);
            if (ec)
                return fail(Error::io("cannot remove " + target.string() + ": " + ec.message()));
            continue;
        }
        fs::create_directories(target.parent_path(), ec);
        if (ec)
            return fail(
                Error::io("cannot create " + target.parent_path().string() + ": " + ec.message()));
        if (auto w = write_file_atomic(target, c.content); !w) return w;
    }
    return {};
}

} // namespace kpkg::pko
