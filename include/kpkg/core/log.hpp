// Diagnostics for people: the library reports through this; only the CLI decides where it goes.
// Without an installed sink (library use, tests) nothing is printed.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace kpkg::log {

enum class Level : int { error = 0, warning = 1, info = 2, debug = 3, trace = 4 };

// Messages above this level are dropped before they are formatted.
void set_level(Level l);
Level level();
inline bool enabled(Level l) {
    return static_cast<int>(l) <= static_cast<int>(level());
}

using Sink = std::function<void(Level, std::string_view)>;
void set_sink(Sink s);

// A sink writing "kpkg: warning: ..." lines to stderr, coloured when `color` is true.
Sink stderr_sink(bool color);

void write(Level l, std::string_view msg);
inline void error(std::string_view m) {
    write(Level::error, m);
}
inline void warning(std::string_view m) {
    write(Level::warning, m);
}
inline void info(std::string_view m) {
    write(Level::info, m);
}
inline void debug(std::string_view m) {
    write(Level::debug, m);
}

} // namespace kpkg::log
