#include "kpkg/oci/location.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "kpkg/core/text.hpp"

namespace kpkg::oci {
namespace {

bool alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// The OCI image layout's grammar for org.opencontainers.image.ref.name: alphanumeric components
// separated by one of - . _ : @ / + (or "--").
bool valid_ref_name(std::string_view s) {
    if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
    for (char c : s)
        if (!alnum(c) && !std::strchr("-._:@/+", c)) return false;
    return true;
}

// "DIR[:TAG]" after oci: or oci-archive: (skopeo splits at the first ':').
Result<Location> path_and_tag(Location l, std::string_view rest, std::string_view transport) {
    auto colon = rest.find(':');
    l.path = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) l.tag = std::string(rest.substr(colon + 1));
    if (l.path.empty())
        return fail(Error::usage(text::quote(l.given) + ": no path after \"" +
                                 std::string(transport) + "\""));
    if (colon != std::string_view::npos && !valid_ref_name(l.tag))
        return fail(Error::usage(text::quote(l.given) + ": " + text::quote(l.tag) +
                                 " is not a valid image name in an OCI layout"));
    return l;
}

bool starts_with(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}

// Whether the regular file at `path` starts like a tar archive (the ustar magic) or a gzip
// stream.
bool looks_like_archive(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    char head[263] = {};
    ssize_t n = ::read(fd, head, sizeof head);
    ::close(fd);
    if (n >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
        static_cast<unsigned char>(head[1]) == 0x8b)
        return true;
    return n >= 262 && std::memcmp(head + 257, "ustar", 5) == 0;
}

// What a tar archive at `path` is, from the names of its entries: an OCI archive has an
// oci-layout file at its top, a docker archive a manifest.json. Only the headers are read
// (pread, skipping each entry's data); a gzip-compressed archive is taken for an OCI archive.
Location::Kind archive_kind(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Location::Kind::archive;
    unsigned char h[512];
    Location::Kind kind = Location::Kind::archive;
    off_t at = 0;
    if (::pread(fd, h, 2, 0) == 2 && h[0] == 0x1f && h[1] == 0x8b) {
        ::close(fd);
        return Location::Kind::oci_archive;
    }
    for (int n = 0; n < 1'000'000; ++n) {
        if (::pread(fd, h, sizeof h, at) != static_cast<ssize_t>(sizeof h)) break;
        if (h[0] == 0) break; // the end-of-archive blocks
        std::string name(reinterpret_cast<const char*>(h),
                         strnlen(reinterpret_cast<const char*>(h), 100));
        while (name.rfind("./", 0) == 0)
            name.erase(0, 2);
        if (name == "oci-layout") {
            kind = Location::Kind::oci_archive;
            break;
        }
        if (name == "manifest.json") {
            kind = Location::Kind::docker_archive;
            break;
        }
        std::uint64_t size = 0;
        for (int i = 124; i < 136 && h[i] >= '0' && h[i] <= '7'; ++i)
            size = size * 8 + (h[i] - '0');
        at += 512 + static_cast<off_t>((size + 511) / 512 * 512);
    }
    ::close(fd);
    return kind;
}

} // namespace

Result<Location> parse_transport(std::string_view arg) {
    Location l;
    l.given = std::string(arg);
    if (starts_with(arg, "oci:")) {
        l.kind = Location::Kind::oci_layout;
        return path_and_tag(std::move(l), arg.substr(4), "oci:");
    }
    if (starts_with(arg, "oci-archive:")) {
        l.kind = Location::Kind::oci_archive;
        return path_and_tag(std::move(l), arg.substr(12), "oci-archive:");
    }
    if (starts_with(arg, "docker-archive:")) {
        // FILE[:REF], split at the first ':' as skopeo splits it; REF names the image among the
        // archive's RepoTags.
        l.kind = Location::Kind::docker_archive;
        const std::string_view rest = arg.substr(15);
        const auto colon = rest.find(':');
        l.path = std::string(rest.substr(0, colon));
        if (l.path.empty())
            return fail(Error::usage(text::quote(l.given) + ": no path after \"docker-archive:\""));
        if (colon != std::string_view::npos) {
            l.tag = std::string(rest.substr(colon + 1));
            if (auto r = parse(l.tag); !r)
                return fail(Error::usage(text::quote(l.given) + ": " + text::quote(l.tag) +
                                         " is not an image reference: " + r.error().message));
        }
        return l;
    }
    if (starts_with(arg, "docker://")) {
        l.kind = Location::Kind::registry;
        auto r = parse(arg.substr(9));
        if (!r)
            return fail(Error::usage(text::quote(l.given) +
                                     ": not an image reference: " + r.error().message));
        l.reference = std::move(*r);
        return l;
    }
    l.kind = Location::Kind::path;
    l.path = l.given;
    return l;
}

Result<Location> locate(std::string_view arg) {
    auto l = parse_transport(arg);
    if (!l || l->kind != Location::Kind::path) return l;
    if (arg == "-") return l;
    struct stat st {};
    if (::stat(l->path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            struct stat layout {};
            if (::stat((l->path + "/oci-layout").c_str(), &layout) == 0 && S_ISREG(layout.st_mode))
                l->kind = Location::Kind::oci_layout;
        } else if (S_ISREG(st.st_mode) && looks_like_archive(l->path)) {
            l->kind = archive_kind(l->path);
        }
        return l;
    }
    // No such path: a reference naming its registry is an image in that registry.
    auto r = parse(arg);
    if (r && !r->domain.empty()) {
        l->kind = Location::Kind::registry;
        l->reference = std::move(*r);
    }
    return l;
}

std::string to_string(const Location& l) {
    switch (l.kind) {
    case Location::Kind::path:
    case Location::Kind::archive:
        return l.path;
    case Location::Kind::oci_layout:
        return "oci:" + l.path + (l.tag.empty() ? "" : ":" + l.tag);
    case Location::Kind::oci_archive:
        return "oci-archive:" + l.path + (l.tag.empty() ? "" : ":" + l.tag);
    case Location::Kind::docker_archive:
        return "docker-archive:" + l.path + (l.tag.empty() ? "" : ":" + l.tag);
    case Location::Kind::registry:
        return "docker://" + l.reference.str();
    }
    return l.given;
}

} // namespace kpkg::oci
