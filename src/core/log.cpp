#include "kpkg/core/log.hpp"

#include <cstdio>
#include <string>

namespace kpkg::log {

namespace {
Level g_level = Level::info;
Sink g_sink;
} // namespace

void set_level(Level l) {
    g_level = l;
}
Level level() {
    return g_level;
}
void set_sink(Sink s) {
    g_sink = std::move(s);
}

void write(Level l, std::string_view msg) {
    if (!enabled(l) || !g_sink) return;
    g_sink(l, msg);
}

Sink stderr_sink(bool color) {
    return [color](Level l, std::string_view msg) {
        static const char* names[] = {"error", "warning", "info", "debug", "trace"};
        static const char* colors[] = {"\033[1;31m", "\033[1;33m", "\033[1;36m", "\033[2m",
                                       "\033[2m"};
        int i = static_cast<int>(l);
        std::string line = "kpkg: ";
        if (color) line += colors[i];
        line += names[i];
        if (color) line += "\033[0m";
        line += ": ";
        line += msg;
        line += '\n';
        std::fwrite(line.data(), 1, line.size(), stderr);
    };
}

} // namespace kpkg::log
