// gzip for image layers, compressed on every core and still byte-reproducible.
//
// The input is cut into fixed 128 KiB chunks, each deflated (zlib, the given level) on its own
// with the 32 KiB of input before it as its dictionary, ended with a sync flush (the last with
// the final block), and the pieces are concatenated into one deflate stream, as pigz does. The
// bytes depend only on the input, the level and the zlib in use — never on the number of threads
// or how they were scheduled. The gzip header is fixed: no name, mtime 0, no extra flags, OS 3
// (Unix). zlib is linked in (no library to load at run time).
#pragma once

#include <string>
#include <string_view>

#include "kpkg/core/result.hpp"

namespace kpkg::oci {

// The gzip stream of `data`. `threads` 0: one per core. Errors (exit 1): zlib failing (out of
// memory).
Result<std::string> parallel_gzip(std::string_view data, int level = 6, unsigned threads = 0);

} // namespace kpkg::oci
