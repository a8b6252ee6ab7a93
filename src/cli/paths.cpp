#include "paths.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "kpkg/core/error.hpp"
#include "kpkg/oci/location.hpp"

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

namespace {

// The file or directory an argument names for these checks; "" for none (standard input, a
// registry reference, a location that does not parse: the command reports that itself).
std::string file_of(const std::string& arg, bool location) {
    if (arg.empty() || names_stdin(arg)) return {};
    if (!location) return arg;
    auto l = oci::parse_transport(arg);
    if (!l || l->kind == oci::Location::Kind::registry) return {};
    if (l->kind == oci::Location::Kind::path) return arg;
    return l->path;
}

struct Id {
    dev_t dev;
    ino_t ino;
    const InputPath* in;
};

[[noreturn]] void refuse(const OutputPath& out, const char* relation, const InputPath& in,
                         const char* why) {
    throw Exception(
        Error::usage(out.what + " " + out.path + relation + in.what + " " + in.path + ": " + why));
}

} // namespace

void check_output_outside(const OutputPath& output, const std::vector<InputPath>& inputs) {
    const std::string out_file = file_of(output.path, output.location);
    if (out_file.empty()) return;
    std::vector<Id> ids;
    for (const auto& in : inputs) {
        const std::string f = file_of(in.path, in.location);
        struct stat st {};
        if (!f.empty() && ::stat(f.c_str(), &st) == 0 &&
            (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
            ids.push_back({st.st_dev, st.st_ino, &in});
    }
    if (ids.empty()) return;
    // The output and every directory above it, compared by identity (so that other spellings,
    // hard links and symbolic links are caught); the output is followed as it is written.
    // Symbolic links to a file that does not exist yet followed too: that file is written.
    std::error_code ec;
    fs::path target = fs::absolute(out_file, ec);
    for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {
        const fs::path next = fs::read_symlink(target, ec);
        if (ec) break;
        target = next.is_absolute() ? next : target.parent_path() / next;
    }
    const fs::path resolved = fs::weakly_canonical(target, ec);
    if (ec) return;
    struct stat out_st {};
    const bool out_dir = ::stat(resolved.c_str(), &out_st) == 0 && S_ISDIR(out_st.st_mode);
    fs::path p = resolved;
    for (;;) {
        struct stat st {};
        if (::stat(p.c_str(), &st) == 0)
            for (const auto& id : ids)
                if (id.dev == st.st_dev && id.ino == st.st_ino)
                    refuse(output, p == resolved ? " is " : " is inside ", *id.in,
                           "an output must not overwrite or add to an input");
        if (!p.has_relative_path()) break;
        p = p.parent_path();
    }
    // An output directory that holds an input: writing into it (or replacing it) would change
    // that input.
    if (!out_dir) return;
    for (const auto& id : ids) {
        fs::path q = fs::canonical(file_of(id.in->path, id.in->location), ec);
        if (ec) continue;
        while (q.has_relative_path()) {
            q = q.parent_path();
            struct stat st {};
            if (::stat(q.c_str(), &st) == 0 && st.st_dev == out_st.st_dev &&
                st.st_ino == out_st.st_ino)
                refuse(output, " holds ", *id.in, "an output directory must not hold an input");
        }
    }
}

} // namespace kpkg::cli
