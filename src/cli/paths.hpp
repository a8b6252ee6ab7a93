// Checks of the paths a command is given, before anything is read or written.
#pragma once

#include <string>
#include <vector>

namespace kpkg::cli {

// One path a command reads, and how the user named it (for messages): "OLD", "--catalog".
// `location`: the argument may name an image (oci:DIR[:TAG], oci-archive:FILE[:TAG],
// docker-archive:FILE): the directory or file it names is the input (a registry reference is
// none).
struct InputPath {
    std::string what;
    std::string path;
    bool location = false;
};

// One path a command writes, and the flag that names it: "--output-dir", "--save".
// `location`: a --save destination (oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE):
// the directory or file it names is written.
struct OutputPath {
    std::string what;
    std::string path;
    bool location = false;
};

// True for "-" and the names of standard input (/dev/stdin, /dev/fd/0, /proc/self/fd/0).
bool names_stdin(const std::string& path);

// Throws Exception (exit 2) when standard input is named by more than one input: it can be read
// only once.
void check_stdin_once(const std::vector<InputPath>& inputs);

// The one check of every path a command writes, before anything is read or written. Throws
// Exception (exit 2, naming the flag and the input) when `output` is one of the inputs, lies
// inside an input directory, or is a directory that holds an input: writing it would change what
// is read, now or by the next run. Paths are compared by identity after symbolic links and ".."
// are resolved (a path that does not exist yet: its nearest existing parent), so that other
// spellings, links and hard links are caught; a link at the output is followed, as it is
// written through.
void check_output_outside(const OutputPath& output, const std::vector<InputPath>& inputs);

} // namespace kpkg::cli
