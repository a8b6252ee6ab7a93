// A unified diff of two texts, in the shape `diff -u --label A --label B` prints it: what
// kubectl-package shows when a rendered template differs from its test fixture, and what
// kpkg apply --diff shows.
#include "kpkg/core/diff.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace kpkg::text {
namespace {

// Lines with their newline (the last one may lack it), so "a" and "a\n" differ as diff says.
std::vector<std::string_view> lines_of(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (start < s.size()) {
        const std::size_t nl = s.find('\n', start);
        const std::size_t end = nl == std::string_view::npos ? s.size() : nl + 1;
        out.push_back(s.substr(start, end - start));
        start = end;
    }
    return out;
}

enum class Op : std::uint8_t { same, del, ins };
struct Edit {
    Op op;
    std::size_t a, b; // line indexes in a and b
};

// Myers' O(ND) shortest edit script; past `max_d` edits the texts are treated as wholly
// different (every line deleted, then every line inserted), which keeps time and memory
// bounded. The trace keeps, for each d, only the diagonals -d..d that step can reach (a full
// copy of the frontier for every d cost 8000 entries each, 256 MB and seconds for two texts that
// differ in thousands of lines).
std::vector<Edit> edit_script(const std::vector<std::string_view>& a,
                              const std::vector<std::string_view>& b) {
    const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size());
    const long max_d = std::min<long>(n + m, 2000);
    const long off = max_d + 1;
    // trace[d] holds v[off - d .. off + d] as it was before step d.
    std::vector<std::vector<long>> trace;
    std::vector<long> v(2 * off + 2, 0);
    long found = -1;
    for (long d = 0; d <= max_d; ++d) {
        trace.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
        for (long k = -d; k <= d; k += 2) {
            long x;
            if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
                x = v[off + k + 1];
            else
                x = v[off + k - 1] + 1;
            long y = x - k;
            while (x < n && y < m && a[x] == b[y]) {
                ++x;
                ++y;
            }
            v[off + k] = x;
            if (x >= n && y >= m) {
                found = d;
                break;
            }
        }
        if (found >= 0) break;
    }
    std::vector<Edit> edits;
    if (found < 0) {
        for (long i = 0; i < n; ++i)
            edits.push_back({Op::del, static_cast<std::size_t>(i), 0});
        for (long j = 0; j < m; ++j)
            edits.push_back({Op::ins, static_cast<std::size_t>(n), static_cast<std::size_t>(j)});
        return edits;
    }
    long x = n, y = m;
    for (long d = found; d > 0; --d) {
        const std::vector<long>& pv = trace[static_cast<std::size_t>(d)];
        // pv[i] is v[off + i - d]: diagonal k is at k + d.
        auto at = [&](long k) { return pv[static_cast<std::size_t>(k + d)]; };
        const long k = x - y;
        long pk;
        if (k == -d || (k != d && at(k - 1) < at(k + 1)))
            pk = k + 1;
        else
            pk = k - 1;
        const long px = at(pk);
        const long py = px - pk;
        while (x > px && y > py) {
            --x;
            --y;
            edits.push_back({Op::same, static_cast<std::size_t>(x), static_cast<std::size_t>(y)});
        }
        if (x == px)
            edits.push_back({Op::ins, static_cast<std::size_t>(x), static_cast<std::size_t>(--y)});
        else
            edits.push_back({Op::del, static_cast<std::size_t>(--x), static_cast<std::size_t>(y)});
    }
    while (x > 0 && y > 0) {
        --x;
        --y;
        edits.push_back({Op::same, static_cast<std::size_t>(x), static_cast<std::size_t>(y)});
    }
    std::reverse(edits.begin(), edits.end());
    return edits;
}

std::string range(std::size_t start, std::size_t count) {
    // diff's "l,s": one line is just "l"; none is the line before it, with ",0".
    if (count == 1) return std::to_string(start + 1);
    if (count == 0) return std::to_string(start) + ",0";
    return std::to_string(start + 1) + "," + std::to_string(count);
}

void add_line(std::string& out, char mark, std::string_view line) {
    out += mark;
    out += line;
    if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

} // namespace

std::string unified_diff(std::string_view a_text, std::string_view b_text,
                         const std::string& label_a, const std::string& label_b) {
    if (a_text == b_text) return {};
    const auto a = lines_of(a_text);
    const auto b = lines_of(b_text);
    const auto edits = edit_script(a, b);
    constexpr std::size_t ctx = 3;
    std::string out = "--- " + label_a + "\n+++ " + label_b + "\n";
    std::size_t i = 0;
    while (i < edits.size()) {
        // The next change.
        while (i < edits.size() && edits[i].op == Op::same)
            ++i;
        if (i == edits.size()) break;
        std::size_t first = i >= ctx ? i - ctx : 0;
        // Extend while the unchanged gap to the next change is at most 2 * ctx.
        std::size_t last = i;
        for (std::size_t j = i; j < edits.size(); ++j) {
            if (edits[j].op != Op::same) {
                last = j;
                continue;
            }
            std::size_t run = j;
            while (run < edits.size() && edits[run].op == Op::same)
                ++run;
            if (run == edits.size() || run - j > 2 * ctx) break;
            j = run - 1;
        }
        const std::size_t end = std::min(edits.size(), last + 1 + ctx);
        // Line ranges of the hunk.
        std::size_t a_start = 0, b_start = 0, a_count = 0, b_count = 0;
        bool a_set = false, b_set = false;
        for (std::size_t j = first; j < end; ++j) {
            const Edit& e = edits[j];
            if (e.op != Op::ins) {
                if (!a_set) a_start = e.a, a_set = true;
                ++a_count;
            }
            if (e.op != Op::del) {
                if (!b_set) b_start = e.b, b_set = true;
                ++b_count;
            }
        }
        if (!a_set) a_start = edits[first].a;
        if (!b_set) b_start = edits[first].b;
        out += "@@ -" + range(a_start, a_count) + " +" + range(b_start, b_count) + " @@\n";
        for (std::size_t j = first; j < end; ++j) {
            const Edit& e = edits[j];
            if (e.op == Op::same)
                add_line(out, ' ', a[e.a]);
            else if (e.op == Op::del)
                add_line(out, '-', a[e.a]);
            else
                add_line(out, '+', b[e.b]);
        }
        i = end;
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    return out;
}

} // namespace kpkg::text
