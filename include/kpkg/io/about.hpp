// The -o json|yaml document of `kpkg version`, built from core's About (its schema is the one
// kpkg-version(1) documents).
#pragma once

#include "kpkg/core/about.hpp"
#include "kpkg/io/node.hpp"

namespace kpkg::io {

// {version, compiler, buildType, libraries: [{name, version, linkage, detail?}]}, in that order;
// a library's detail only when it has one.
Node about_document(const About& a);

} // namespace kpkg::io
