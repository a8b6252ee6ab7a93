// Checks of the paths a command is given, before anything is read or written.
#pragma once

#include <string>
#include <vector>

namespace kpkg::cli {

// One path a command reads, and how the user named it (for messages): "OLD", "--catalog".
struct InputPath {
    std::string what;
    std::string path;
};

// True for "-" and the names of standard input (/dev/stdin, /dev/fd/0, /proc/self/fd/0).
bool names_stdin(const std::string& path);

// Throws Exception (exit 2) when standard input is named by more than one input: it can be read
// only once.
void check_stdin_once(const std::vector<InputPath>& inputs);

// Throws Exception (exit 2) when the file or directory `output` (given with `option`) is one of
// the inputs or lies inside an input directory: writing it would change what is read, now or by
// the next run. Symbolic links are followed on both sides.
void check_output_outside(const std::string& option, const std::string& output,
                          const std::vector<InputPath>& inputs);

} // namespace kpkg::cli
