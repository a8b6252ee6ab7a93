// Where an image is: the transport names skopeo uses, and kpkg's rule for bare arguments.
//
// - oci:DIR[:TAG] is an OCI image layout directory (the image tagged TAG, else its only one).
// - oci-archive:FILE[:TAG] is a tar archive of an OCI image layout.
// - docker-archive:FILE[:REF] is a `docker save` archive (the image REF among its RepoTags).
// - docker://REF is an image in a registry.
//
// A bare argument names an image when it is an existing OCI layout directory (one with an
// oci-layout file), an existing file that is a tar archive (an OCI archive when it has an
// oci-layout entry or is gzip-compressed, a docker archive when it has manifest.json), or, when no
// such path exists, an image reference that names its registry ("quay.io/org/op:v1",
// "localhost:5000/c@sha256:..."). Everything else is a path: a misspelt file name is reported as a
// missing file, never looked up on Docker Hub (name such images with docker://).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kpkg/core/result.hpp"
#include "kpkg/oci/reference.hpp"

namespace kpkg::oci {

struct Location {
    enum class Kind : std::uint8_t {
        path,           // not an image: a directory or file (or "-") for the loaders
        oci_layout,     // path (+ tag)
        oci_archive,    // path (+ tag)
        docker_archive, // path
        archive,        // a bare path to a tar archive that is neither (no oci-layout, no
                        // manifest.json entry)
        registry,       // reference
    };
    Kind kind = Kind::path;
    std::string path;
    std::string tag;     // oci layouts and archives: the ref.name to select; "" for the only one
    Reference reference; // registry: as written (normalize() for Docker's defaults)
    // The argument as given, for messages.
    std::string given;

    bool is_image() const { return kind != Kind::path; }
};

// What `arg` names. Transport prefixes are parsed as written (errors: an empty path, a tag or
// reference that does not parse — exit 2); bare arguments by the rule above, looking at the file
// system.
Result<Location> locate(std::string_view arg);

// Only the transport prefixes, without looking at the file system: nullopt-like Kind::path for
// an argument without one.
Result<Location> parse_transport(std::string_view arg);

// "oci:DIR:TAG", "docker://REF", the path: how the location is written back.
std::string to_string(const Location& l);

} // namespace kpkg::oci
