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

namespace {

// A word without the dashes that start a flag: "--verbos" and "--verbose" compare as "verbos"
// and "verbose", so the dashes neither count as common letters nor as a difference.
std::string_view without_dashes(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size() && i < 2 && s[i] == '-')
        ++i;
    return s.substr(i);
}

// Edit distance where swapping two adjacent characters is one edit too ("etdc" is one edit from
// "etcd"), the commonest typo (optimal string alignment).
std::size_t typo_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                                d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

} // namespace

std::optional<std::string> closest(std::string_view word,
                                   const std::vector<std::string>& candidates) {
    const std::string_view w = without_dashes(word);
    if (w.empty()) return std::nullopt;
    std::optional<std::string> best;
    std::size_t best_d = 0;
    for (const auto& c : candidates) {
        const std::string_view cw = without_dashes(c);
        // Close: at most a third of the longer word changed (at least one edit allowed), and
        // fewer edits than the typed word has characters, so that a short word is not "close" to
        // everything of its length ("-x" is not a typo of "-h").
        const std::size_t limit = std::max<std::size_t>(1, std::max(w.size(), cw.size()) / 3);
        const std::size_t d = typo_distance(w, cw);
        if (d > limit || d >= w.size()) continue;
        if (!best || d < best_d) {
            best_d = d;
            best = c;
        }
    }
    if (best) return best;
    // An abbreviation: at least three characters that start exactly one candidate.
    if (w.size() < 3) return std::nullopt;
    std::optional<std::string> prefixed;
    for (const auto& c : candidates)
        if (starts_with(without_dashes(c), w) && without_dashes(c) != w) {
            if (prefixed && *prefixed != c) return std::nullopt;
            prefixed = c;
        }
    return prefixed;
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

namespace {

// The byte length of the UTF-8 sequence starting with `c` (1 for stray continuation bytes).
std::size_t utf8_len(unsigned char c) {
    return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
}

// The longest prefix of `s` at most `width` code points wide, in bytes (never splitting one).
std::size_t prefix_bytes(std::string_view s, std::size_t width) {
    std::size_t i = 0;
    for (std::size_t w = 0; i < s.size() && w < width; ++w)
        i = std::min(s.size(), i + utf8_len(static_cast<unsigned char>(s[i])));
    return i;
}

// `cell` as lines at most `width` wide: broken after a space or a comma where one fits, else
// after a separator of a name, else cut.
std::vector<std::string> wrap_cell(std::string_view cell, std::size_t width) {
    std::vector<std::string> lines;
    while (display_width(cell) > width) {
        std::size_t fit = prefix_bytes(cell, width);
        std::size_t cut = std::string_view::npos;
        for (std::size_t i = fit; i > 0; --i)
            if (cell[i - 1] == ' ' || cell[i - 1] == ',') {
                cut = i;
                break;
            }
        // Else after a separator inside a name ("vault-operator." / "v1.2.0"), else anywhere.
        for (std::size_t i = fit; cut == std::string_view::npos && i > 1; --i)
            if (std::string_view("-./:=@").find(cell[i - 1]) != std::string_view::npos) cut = i;
        if (cut == std::string_view::npos) cut = fit;
        std::string_view head = cell.substr(0, cut);
        while (!head.empty() && head.back() == ' ')
            head.remove_suffix(1);
        lines.emplace_back(head);
        cell.remove_prefix(cut);
        while (!cell.empty() && cell.front() == ' ')
            cell.remove_prefix(1);
    }
    if (!cell.empty() || lines.empty()) lines.emplace_back(cell);
    return lines;
}

} // namespace

std::string table(const std::vector<std::vector<std::string>>& rows, const TableOptions& opts) {
    std::size_t ncols = 0;
    for (const auto& r : rows)
        ncols = std::max(ncols, r.size());
    // Column widths from the cells that are not too wide to pad to; the header sets a minimum.
    std::vector<std::size_t> widths(ncols, 0), header(ncols, 0);
    for (std::size_t ri = 0; ri < rows.size(); ++ri)
        for (std::size_t i = 0; i < rows[ri].size(); ++i) {
            std::size_t w = display_width(rows[ri][i]);
            if (ri == 0) header[i] = w;
            if (w <= opts.max_pad || ri == 0) widths[i] = std::max(widths[i], w);
        }
    bool wrap_rows = false;
    if (opts.width > 0 && ncols > 0) {
        // The widest row, at the widths cells may reach (the last column is not padded).
        std::size_t widest = 0;
        for (const auto& r : rows) {
            std::size_t w = 0;
            for (std::size_t i = 0; i < r.size(); ++i)
                w += (i + 1 < ncols ? std::max(widths[i], display_width(r[i])) + 2
                                    : display_width(r[i]));
            widest = std::max(widest, w);
        }
        if (widest > opts.width) {
            wrap_rows = true;
            // Every column as wide as its widest cell, then the widest ones narrowed in turn
            // until the table fits: first down to the longest word of the column (nothing is
            // cut), then, if that is not enough, down to the header or 8 columns.
            std::vector<std::size_t> longest_word(ncols, 0);
            for (const auto& r : rows)
                for (std::size_t i = 0; i < r.size(); ++i) {
                    widths[i] = std::max(widths[i], display_width(r[i]));
                    std::size_t start = 0;
                    for (std::size_t k = 0; k <= r[i].size(); ++k)
                        if (k == r[i].size() || r[i][k] == ' ' || r[i][k] == ',') {
                            const std::size_t end = k < r[i].size() && r[i][k] == ',' ? k + 1 : k;
                            longest_word[i] = std::max(
                                longest_word[i],
                                display_width(std::string_view(r[i]).substr(start, end - start)));
                            start = k + 1;
                        }
                }
            auto total = [&] {
                std::size_t t = 2 * (ncols - 1);
                for (std::size_t w : widths)
                    t += w;
                return t;
            };
            for (int pass = 0; pass < 2; ++pass) {
                while (total() > opts.width) {
                    std::size_t pick = ncols;
                    for (std::size_t i = 0; i < ncols; ++i) {
                        std::size_t floor = std::max<std::size_t>(
                            header[i], pass == 0 ? longest_word[i] : std::size_t{8});
                        if (widths[i] > floor && (pick == ncols || widths[i] > widths[pick]))
                            pick = i;
                    }
                    if (pick == ncols) break; // as narrow as this pass goes
                    --widths[pick];
                }
            }
        }
    }
    std::string out;
    for (const auto& r : rows) {
        std::vector<std::vector<std::string>> cells;
        std::size_t height = 1;
        for (std::size_t i = 0; i < r.size(); ++i) {
            if (wrap_rows)
                cells.push_back(wrap_cell(r[i], widths[i]));
            else
                cells.push_back({r[i]});
            height = std::max(height, cells.back().size());
        }
        for (std::size_t k = 0; k < height; ++k) {
            std::string line;
            std::size_t column = 0; // where the current cell should start
            for (std::size_t i = 0; i < cells.size(); ++i) {
                std::size_t at = display_width(line);
                if (at < column) line.append(column - at, ' ');
                if (k < cells[i].size()) line += cells[i][k];
                column += widths[i] + 2;
                // A cell wider than its column pushes the rest of this line right.
                std::size_t end = display_width(line);
                if (i + 1 < cells.size() && end + 2 > column) column = end + 2;
            }
            while (!line.empty() && line.back() == ' ')
                line.pop_back();
            out += line;
            out += '\n';
        }
    }
    return out;
}

std::string wrap(std::string_view text, std::size_t width) {
    std::string out;
    while (!text.empty()) {
        std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        const bool had_newline = nl != std::string_view::npos;
        if (width == 0 || display_width(line) <= width) {
            out += line;
            if (had_newline) out += '\n';
            continue;
        }
        // The indent of continuation lines: the line's own, or where its text column starts.
        std::size_t lead = line.find_first_not_of(' ');
        if (lead == std::string_view::npos) lead = line.size();
        std::size_t hang = lead;
        std::size_t gap = line.find("  ", lead);
        if (gap != std::string_view::npos) {
            std::size_t text_at = line.find_first_not_of(' ', gap);
            if (text_at != std::string_view::npos) {
                std::size_t col = display_width(line.substr(0, text_at));
                if (col + 20 <= width) hang = col; // with room for text beside it
            }
        }
        const std::string indent(hang, ' ');
        // Words after the leading spaces, each kept whole.
        std::string current(line.substr(0, lead));
        bool at_start = true; // nothing but indent on `current` yet
        std::size_t i = lead;
        while (i < line.size()) {
            std::size_t sp = line.find_first_not_of(' ', i);
            if (sp == std::string_view::npos) break;
            std::size_t end = line.find(' ', sp);
            if (end == std::string_view::npos) end = line.size();
            std::string_view word = line.substr(sp, end - sp);
            std::string_view spaces = line.substr(i, sp - i);
            if (!at_start && display_width(current) + spaces.size() + display_width(word) > width) {
                out += current;
                out += '\n';
                current = indent;
                at_start = true;
            }
            if (!at_start) current += spaces;
            current += word;
            at_start = false;
            i = end;
        }
        out += current;
        if (had_newline) out += '\n';
    }
    return out;
}

} // namespace kpkg::text
