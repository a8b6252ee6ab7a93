#include "kpkg/core/duration.hpp"

#include <cctype>
#include <cstdint>
#include <string_view>

namespace kpkg {

Result<std::chrono::milliseconds> parse_duration(const std::string& text, const std::string& flag) {
    auto bad = [&] {
        return Error::usage(flag + " " + text + ": not a duration (e.g. 90s, 5m, 1h30m, 500ms)");
    };
    if (text.empty()) return bad();
    if (text == "0") return std::chrono::milliseconds{0};
    double total_ms = 0;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t start = i;
        while (i < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
            ++i;
        if (i == start) return bad();
        double value = 0;
        try {
            value = std::stod(text.substr(start, i - start));
        } catch (...) {
            return bad();
        }
        std::size_t ustart = i;
        while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i])))
            ++i;
        const std::string_view unit = std::string_view(text).substr(ustart, i - ustart);
        double scale = 0;
        if (unit == "ms")
            scale = 1;
        else if (unit == "s")
            scale = 1000;
        else if (unit == "m")
            scale = 60'000;
        else if (unit == "h")
            scale = 3'600'000;
        else
            return bad();
        total_ms += value * scale;
    }
    if (total_ms > 1e12) return bad();
    return std::chrono::milliseconds{static_cast<std::int64_t>(total_ms + 0.5)};
}

std::string format_duration(std::chrono::milliseconds d) {
    std::int64_t ms = d.count();
    if (ms <= 0) return "0s";
    if (ms < 1000) return std::to_string(ms) + "ms";
    std::string out;
    if (ms >= 3'600'000) {
        out += std::to_string(ms / 3'600'000) + "h";
        ms %= 3'600'000;
    }
    if (!out.empty() || ms >= 60'000) {
        out += std::to_string(ms / 60'000) + "m";
        ms %= 60'000;
    }
    out += std::to_string(ms / 1000);
    if (const std::int64_t frac = ms % 1000; frac != 0) {
        std::string f = std::to_string(1000 + frac).substr(1); // three digits
        while (f.back() == '0')
            f.pop_back();
        out += "." + f;
    }
    return out + "s";
}

} // namespace kpkg
