// Image references ("quay.io/org/app:v1", "busybox", "localhost:5000/a/b@sha256:..."): the one
// grammar kpkg has for them, as the containers image library parses them (docker/reference:
// ParseNormalizedNamed, which opm uses for bundle images and relatedImages).
//
//   reference  = [domain "/"] path [":" tag] ["@" digest]
//   domain     = host [":" port]; host = dot-separated labels of letters, digits and inner '-'
//                (upper case allowed: "Quay.IO"); port = digits. The first component is the
//                domain only when it has a '.' or a ':' or is "localhost" (else it is part of
//                the path: "library/busybox"). IPv6 hosts ("[::1]:5000") are not accepted: the
//                containers image library's grammar has no bracketed form (distribution's
//                reference package added one later).
//   path       = components joined by "/"; component = runs of a-z 0-9 separated by one '.',
//                one or two '_', or any number of '-'. Lower case only.
//   tag        = [A-Za-z0-9_] then up to 127 of [A-Za-z0-9_.-] (128 characters at most)
//   digest     = algorithm ":" hex; sha256 (64 hex digits), sha384 (96) or sha512 (128), in
//                lower case.
// The name (domain and path, with "docker.io/" and "library/" counted where normalisation adds
// them) is at most 255 characters, and a reference of 64 lower-case hex digits alone is refused
// (an image id, not a name).
#pragma once

#include <string>
#include <string_view>

#include "kpkg/core/result.hpp"

namespace kpkg::oci {

// The parts of an image reference, as written (normalize() fills in Docker's defaults).
struct Reference {
    std::string domain; // registry host, with ":port" when written; "" when none is written
    std::string path;   // repository path: "busybox", "org/app"
    std::string tag;    // "" when none
    std::string digest; // "sha256:<hex>"; "" when none

    friend bool operator==(const Reference&, const Reference&) = default;

    // [domain "/"] path: the repository.
    std::string name() const;
    // The whole reference: name [":" tag] ["@" digest]. parse(s)->str() == s.
    std::string str() const;
};

// The parts of `s`, or why it is not an image reference (Error::invalid with the reason as its
// message, in the containers image library's words: "invalid reference format", "invalid
// reference format: repository name must be lowercase", "repository name must not be more than
// 255 characters", "invalid checksum digest format", "unsupported digest algorithm", "invalid
// repository name (<s>), cannot specify 64-byte hexadecimal strings"). A first component that
// would be a domain by the rule above but is not a valid host ("a_b.io/x", a valid path
// component) is, as in that library, part of the path: the reference then names no domain.
Result<Reference> parse(std::string_view s);

// Why `s` is not an image reference, as parse() says it; "" when it is one. Builds no parts
// (for validating many references).
std::string reference_problem(std::string_view s);

// The reference as Docker resolves it: no domain (or the legacy "index.docker.io") is
// "docker.io"; a one-component path on docker.io is an official image, "library/<path>"; no tag
// and no digest is the tag "latest". "busybox" -> docker.io/library/busybox:latest.
Reference normalize(Reference r);

} // namespace kpkg::oci
