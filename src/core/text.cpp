#include "kpkg/core/text.hpp"

#include <algorithm>

namespace kpkg::text {

std::string_view trim(std::string_view s) {
    const char* ws = " \t\r\n";
    auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    auto e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (;;) {
        auto p = s.find(sep, start);
        if (p == std::string_view::npos) {
            out.push_back(s.substr(start));
            return out;
        }
        out.push_back(s.substr(start, p - start));
        start = p + 1;
    }
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i != 0) out += sep;
        out += parts[i];
    }
    return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::optional<std::string> closest(std::string_view word,
                                   const std::vector<std::string>& candidates) {
    if (word.empty()) return std::nullopt;
    std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    std::optional<std::string> best;
    std::size_t best_d = limit + 1;
    for (const auto& c : candidates) {
        std::size_t d = edit_distance(word, c);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    if (best) return best;
    for (const auto& c : candidates)
        if (starts_with(c, word)) return c;
    return std::nullopt;
}

std::size_t utf8_length(std::string_view s, std::size_t i) {
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = b(i);
    std::size_t n = 0;
    char32_t cp = 0;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (i + n > s.size()) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(i + k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b(i + k) & 0x3F);
    }
    // Reject overlong forms, surrogates and values past U+10FFFF.
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

namespace {

void append_hex_byte(std::string& out, unsigned char c) {
    static const char hex[] = "0123456789abcdef";
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 0xF];
}

} // namespace

std::size_t append_escaped(std::string& out, std::string_view s, std::size_t limit, char quote) {
    std::size_t i = 0;
    while (i < s.size() && i < limit) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (quote != 0 && (c == static_cast<unsigned char>(quote) || c == '\\')) {
            out += '\\';
            out += static_cast<char>(c);
            ++i;
        } else if (c >= 0x20 && c < 0x7F) {
            out += static_cast<char>(c);
            ++i;
        } else if (c == '\t') {
            out += "\\t", ++i;
        } else if (c == '\n') {
            out += "\\n", ++i;
        } else if (c == '\r') {
            out += "\\r", ++i;
        } else if (c < 0x80) {
            append_hex_byte(out, c), ++i;
        } else {
            std::size_t n = utf8_length(s, i);
            // C1 controls (U+0080..U+009F) are escaped like invalid bytes.
            bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
            if (n == 0 || c1) {
                append_hex_byte(out, c), ++i;
            } else {
                out.append(s.substr(i, n));
                i += n;
            }
        }
    }
    return i;
}

std::string quote(std::string_view s, std::size_t max) {
    std::string out = "\"";
    const std::size_t used = append_escaped(out, s, max, '"');
    if (used < s.size()) out += "...";
    out += '"';
    if (used < s.size()) out += " (" + std::to_string(s.size()) + " bytes)";
    return out;
}

std::string shown(std::string_view s, std::size_t max) {
    std::string out;
    const std::size_t used = append_escaped(out, s, max, 0);
    if (used < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
    return out;
}

std::size_t go_space_at(std::string_view s, std::size_t i) {
    auto b = [&](std::size_t k) {
        return k < s.size() ? static_cast<unsigned char>(s[k]) : static_cast<unsigned char>(0);
    };
    const unsigned char c = b(i);
    if (c == ' ' || (c >= '\t' && c <= '\r')) return 1;
    if (c == 0xC2 && (b(i + 1) == 0x85 || b(i + 1) == 0xA0)) return 2; // U+0085, U+00A0
    if (c == 0xE1 && b(i + 1) == 0x9A && b(i + 2) == 0x80) return 3;   // U+1680
    if (c == 0xE2 && b(i + 1) == 0x80) {
        const unsigned char d = b(i + 2);
        // U+2000..U+200A, U+2028, U+2029, U+202F
        if ((d >= 0x80 && d <= 0x8A) || d == 0xA8 || d == 0xA9 || d == 0xAF) return 3;
    }
    if (c == 0xE2 && b(i + 1) == 0x81 && b(i + 2) == 0x9F) return 3; // U+205F
    if (c == 0xE3 && b(i + 1) == 0x80 && b(i + 2) == 0x80) return 3; // U+3000
    return 0;
}

std::size_t display_width(std::string_view s) {
    std::size_t w = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++w;
    return w;
}

std::string table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> widths;
    for (const auto& r : rows) {
        if (widths.size() < r.size()) widths.resize(r.size(), 0);
        for (std::size_t i = 0; i < r.size(); ++i)
            widths[i] = std::max(widths[i], display_width(r[i]));
    }
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size()) line.append(widths[i] - display_width(r[i]) + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line;
        out += '\n';
    }
    return out;
}

} // namespace kpkg::text
