// Writing a GitOps tree: all or nothing (a new directory built beside the old one and swapped in),
// replacing only the files kpkg owns (listed in the tree's .kpkg-plan).
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "kpkg/core/text.hpp"
#include "kpkg/plan/tree.hpp"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

namespace kpkg::plan {

namespace fs = std::filesystem;

namespace {

Error io_error(const std::string& what, const fs::path& p, const std::error_code& ec) {
    return Error::io(what + " " + p.string() + ": " + ec.message());
}

Result<std::string> read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return Error::io("cannot read " + p.string() + ": " + std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Result<void> write_all(const fs::path& p, const std::string& content) {
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    if (ec) return io_error("cannot create", p.parent_path(), ec);
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) return Error::io("cannot write " + p.string());
    return {};
}

std::string owned_list_text(const GitOpsTree& tree) {
    std::vector<std::string> paths;
    for (const auto& f : tree.files)
        paths.push_back(f.path);
    std::sort(paths.begin(), paths.end());
    std::string out = "# Files of this tree written by kpkg plan (it replaces and removes only "
                      "these).\n";
    for (const auto& p : paths)
        out += p + "\n";
    return out;
}

std::set<std::string> parse_owned(const std::string& text) {
    std::set<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        // Only relative paths inside the tree count.
        if (line[0] == '/' || line.find("..") != std::string::npos) continue;
        out.insert(line);
    }
    return out;
}

struct Scan {
    std::set<std::string> owned_before;
    std::map<std::string, fs::path> owned_files; // on disk, listed in .kpkg-plan
    std::vector<std::string> foreign;            // on disk, not listed
    std::map<std::string, fs::path> links;       // symbolic links (foreign too): their targets
    std::string old_list;
};

Result<Scan> scan(const fs::path& dir) {
    Scan s;
    std::error_code ec;
    const fs::path list = dir / owned_list;
    if (fs::is_regular_file(fs::symlink_status(list, ec))) {
        auto text = read_all(list);
        if (!text) return std::move(text).error();
        s.old_list = *text;
        s.owned_before = parse_owned(*text);
    }
    fs::recursive_directory_iterator it(dir, ec), end;
    if (ec) return io_error("cannot read", dir, ec);
    for (; it != end; it.increment(ec)) {
        if (ec) return io_error("cannot read", dir, ec);
        const fs::file_status st = it->symlink_status(ec);
        if (fs::is_directory(st)) continue;
        // Named as itself: a symbolic link is not resolved (it is a file of its own, kept as
        // it is).
        const std::string rel = it->path().lexically_relative(dir).generic_string();
        if (fs::is_symlink(st)) s.links[rel] = fs::read_symlink(it->path(), ec);
        if (rel == owned_list && !fs::is_symlink(st)) continue;
        if (s.owned_before.count(rel) && fs::is_regular_file(st))
            s.owned_files[rel] = it->path();
        else
            s.foreign.push_back(rel);
    }
    if (ec) return io_error("cannot read", dir, ec);
    std::sort(s.foreign.begin(), s.foreign.end());
    return s;
}

mode_t current_umask() {
    const mode_t m = ::umask(0);
    ::umask(m);
    return m;
}

} // namespace

Result<TreeChanges> write_tree(const fs::path& dir_arg, const GitOpsTree& tree,
                               const WriteOptions& opts) {
    std::error_code ec;
    // An absolute path without a trailing '/' ("out/", "." and ".." name their directory).
    fs::path dir = fs::absolute(dir_arg, ec).lexically_normal();
    if (ec) return io_error("cannot resolve", dir_arg, ec);
    while (!dir.has_filename() && dir.has_relative_path())
        dir = dir.parent_path();
    if (!dir.has_relative_path())
        return Error::usage("--output-dir " + dir_arg.string() +
                            ": the root directory cannot be a tree");
    const fs::file_status lst = fs::symlink_status(dir, ec);
    if (fs::is_symlink(lst)) {
        // A link to the tree: the directory it names is the one replaced.
        dir = fs::canonical(dir, ec);
        if (ec) return io_error("cannot resolve", dir_arg, ec);
    }
    const fs::file_status st = fs::status(dir, ec);
    const bool exists = fs::exists(st);
    if (exists && !fs::is_directory(st))
        return Error::usage("--output-dir " + dir_arg.string() + " is not a directory");

    Scan s;
    if (exists) {
        auto sc = scan(dir);
        if (!sc) return std::move(sc).error();
        s = std::move(*sc);
    }
    // A user's symbolic link is never replaced, removed or written through: one where the tree
    // writes a file (or below which it writes one) is refused, with or without --force.
    std::vector<std::string> in_the_way;
    for (const auto& [rel, target] : s.links) {
        bool hit = rel == owned_list;
        for (const auto& f : tree.files)
            if (f.path == rel || (f.path.size() > rel.size() && f.path[rel.size()] == '/' &&
                                  f.path.compare(0, rel.size(), rel) == 0))
                hit = true;
        if (hit) in_the_way.push_back(rel + " -> " + target.string());
    }
    if (!in_the_way.empty()) {
        std::string msg =
            "--output-dir " + dir_arg.string() + " holds " +
            (in_the_way.size() == 1 ? std::string("a symbolic link")
                                    : std::to_string(in_the_way.size()) + " symbolic links") +
            " where kpkg plan writes its files; kpkg plan never replaces a link or "
            "writes through one, --force or not; nothing written. Move " +
            (in_the_way.size() == 1 ? "it" : "them") + ", or give another directory:";
        for (std::size_t i = 0; i < in_the_way.size() && i < 10; ++i)
            msg += "\n  " + in_the_way[i];
        if (in_the_way.size() > 10)
            msg += "\n  ... and " + std::to_string(in_the_way.size() - 10) + " more";
        return Error::usage(msg);
    }
    if (!s.foreign.empty() && !opts.force && !opts.check) {
        std::string msg = "--output-dir " + dir_arg.string() + " holds " +
                          std::to_string(s.foreign.size()) +
                          (s.foreign.size() == 1 ? " file" : " files") +
                          " kpkg plan did not write (not listed in its " + owned_list +
                          "); nothing written. Give another directory, or --force to write the "
                          "tree beside them:";
        for (std::size_t i = 0; i < s.foreign.size() && i < 10; ++i)
            msg += "\n  " + s.foreign[i];
        if (s.foreign.size() > 10)
            msg += "\n  ... and " + std::to_string(s.foreign.size() - 10) + " more";
        return Error::usage(msg);
    }

    TreeChanges ch;
    std::set<std::string> wanted;
    const std::set<std::string> foreign(s.foreign.begin(), s.foreign.end());
    for (const auto& f : tree.files) {
        wanted.insert(f.path);
        auto it = s.owned_files.find(f.path);
        if (it == s.owned_files.end()) {
            if (foreign.count(f.path))
                ch.changed.push_back(f.path); // a file kpkg takes over (--force)
            else
                ch.added.push_back(f.path);
            continue;
        }
        auto old = read_all(it->second);
        if (!old) return std::move(old).error();
        if (*old == f.content)
            ++ch.unchanged;
        else
            ch.changed.push_back(f.path);
    }
    for (const auto& [rel, p] : s.owned_files)
        if (!wanted.count(rel)) ch.removed.push_back(rel);
    std::sort(ch.added.begin(), ch.added.end());
    std::sort(ch.changed.begin(), ch.changed.end());
    const std::string list = owned_list_text(tree);
    if (opts.check || (exists && ch.empty() && list == s.old_list)) return ch;

    // The new directory, beside the old one (same file system: the swap is a rename).
    fs::path parent = dir.parent_path();
    if (parent.empty()) parent = ".";
    fs::create_directories(parent, ec);
    if (ec) return io_error("cannot create", parent, ec);
    std::string tmpl = (parent / ("." + dir.filename().string() + ".kpkg-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr)
        return Error::io("cannot create a directory beside " + dir.string() + ": " +
                         std::strerror(errno));
    const fs::path tmp = tmpl;
    auto fail = [&](Error e) -> Result<TreeChanges> {
        std::error_code ignored;
        fs::remove_all(tmp, ignored);
        return e;
    };
    const mode_t mode = exists ? static_cast<mode_t>(st.permissions() & fs::perms::mask)
                               : static_cast<mode_t>(0777 & ~current_umask());
    if (::chmod(tmp.c_str(), mode) != 0)
        return fail(
            Error::io("cannot set the mode of " + tmp.string() + ": " + std::strerror(errno)));
    for (const auto& f : tree.files)
        if (auto r = write_all(tmp / f.path, f.content); !r) return fail(std::move(r).error());
    if (auto r = write_all(tmp / owned_list, list); !r) return fail(std::move(r).error());
    // Files kpkg does not own stay (--force): linked (or copied) into the new directory.
    for (const auto& rel : s.foreign) {
        if (wanted.count(rel)) continue;
        const fs::path from = dir / rel, to = tmp / rel;
        fs::create_directories(to.parent_path(), ec);
        if (ec) return fail(io_error("cannot create", to.parent_path(), ec));
        if (fs::is_symlink(fs::symlink_status(from, ec)))
            fs::copy_symlink(from, to, ec);
        else {
            fs::create_hard_link(from, to, ec);
            if (ec) fs::copy_file(from, to, ec);
        }
        if (ec) return fail(io_error("cannot carry over", from, ec));
    }
    if (!exists) {
        if (::rename(tmp.c_str(), dir.c_str()) != 0)
            return fail(Error::io("cannot rename " + tmp.string() + " to " + dir.string() + ": " +
                                  std::strerror(errno)));
        return ch;
    }
    // Swap the directories in one step where the kernel can (renameat2 RENAME_EXCHANGE), in two
    // renames elsewhere.
    if (::syscall(SYS_renameat2, AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) !=
        0) {
        const fs::path old = tmp.string() + ".old";
        if (::rename(dir.c_str(), old.c_str()) != 0)
            return fail(Error::io("cannot replace " + dir.string() + ": " + std::strerror(errno)));
        if (::rename(tmp.c_str(), dir.c_str()) != 0) {
            const int err = errno;
            (void)::rename(old.c_str(), dir.c_str());
            return fail(Error::io("cannot replace " + dir.string() + ": " + std::strerror(err)));
        }
        fs::remove_all(old, ec);
        return ch;
    }
    fs::remove_all(tmp, ec); // now the old tree
    return ch;
}

} // namespace kpkg::plan
