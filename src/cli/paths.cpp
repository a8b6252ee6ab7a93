#include "paths.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "kpkg/core/error.hpp"

namespace kpkg::cli {

namespace fs = std::filesystem;

bool names_stdin(const std::string& path) {
    return path == "-" || path == "/dev/stdin" || path == "/dev/fd/0" || path == "/proc/self/fd/0";
}

void check_stdin_once(const std::vector<InputPath>& inputs) {
    const InputPath* first = nullptr;
    for (const auto& in : inputs) {
        if (!names_stdin(in.path)) continue;
        if (first == nullptr) {
            first = &in;
            continue;
        }
        const std::string whom = first->what == in.what ? "twice by " + in.what
                                                        : "by " + first->what + " and " + in.what;
        throw Exception(Error::usage("standard input is named " + whom +
                                     ": it can be read only once; name it for one input"));
    }
}

void check_output_outside(const std::string& option, const std::string& output,
                          const std::vector<InputPath>& inputs) {
    if (output.empty() || names_stdin(output)) return;
    struct Id {
        dev_t dev;
        ino_t ino;
        const InputPath* in;
    };
    std::vector<Id> ids;
    for (const auto& in : inputs) {
        struct stat st {};
        if (!names_stdin(in.path) && ::stat(in.path.c_str(), &st) == 0 &&
            (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
            ids.push_back({st.st_dev, st.st_ino, &in});
    }
    if (ids.empty()) return;
    // The output and every directory above it, compared by identity (so that other spellings,
    // hard links and symbolic links are caught); the output is followed as it is written.
    // Symbolic links to a file that does not exist yet followed too: that file is written.
    std::error_code ec;
    fs::path target = fs::absolute(output, ec);
    for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {
        const fs::path next = fs::read_symlink(target, ec);
        if (ec) break;
        target = next.is_absolute() ? next : target.parent_path() / next;
    }
    const fs::path resolved = fs::weakly_canonical(target, ec);
    if (ec) return;
    fs::path p = resolved;
    for (;;) {
        struct stat st {};
        if (::stat(p.c_str(), &st) == 0)
            for (const auto& id : ids)
                if (id.dev == st.st_dev && id.ino == st.st_ino) {
                    const bool same = p == resolved;
                    throw Exception(Error::usage(
                        option + " " + output + (same ? " is " : " is inside ") + id.in->what +
                        " " + id.in->path + ": an output must not overwrite or add to an input"));
                }
        if (!p.has_relative_path()) break;
        p = p.parent_path();
    }
}

} // namespace kpkg::cli
