#include "yaml_fast.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kpkg/io/scalars.hpp"

namespace kpkg::io::detail {

namespace {

constexpr std::size_t npos = std::string_view::npos;

// Thrown to give up: the text is left to libfyaml.
struct GiveUp {};

[[noreturn]] void give_up() {
    throw GiveUp{};
}

bool is_space_or_end(std::string_view l, std::size_t c) {
    return c >= l.size() || l[c] == ' ';
}

// Characters that cannot start a plain scalar (or whose meaning there this reader does not
// handle): YAML's indicators.
bool indicator(char c) {
    return std::strchr("-?:,[]{}#&*!|>'\"%@`", c) != nullptr && c != '\0';
}

class Fast {
public:
    Fast(std::string_view s, EventHandler& h, const Limits& limits, std::uint32_t line_offset,
         int doc)
        : s_(s), h_(h), limits_(limits), line_offset_(line_offset), doc_(doc) {}

    void run() {
        if (std::memchr(s_.data(), '\t', s_.size()) != nullptr ||
            std::memchr(s_.data(), '\r', s_.size()) != nullptr)
            give_up();
        // Line starts; markers and directives at the start of a line are not handled.
        starts_.push_back(0);
        for (std::size_t p = 0;;) {
            const void* nl = std::memchr(s_.data() + p, '\n', s_.size() - p);
            if (nl == nullptr) break;
            p = static_cast<std::size_t>(static_cast<const char*>(nl) - s_.data()) + 1;
            starts_.push_back(p);
        }
        for (std::size_t i = 0; i < starts_.size(); ++i) {
            const std::string_view l = line(i);
            if (!l.empty() && l[0] == '%') give_up();
            if (l.size() >= 3 && (l.substr(0, 3) == "---" || l.substr(0, 3) == "...") &&
                is_space_or_end(l, 3))
                give_up();
        }
        const std::size_t first = next_content(0);
        if (first == lines()) return; // no document at all
        delivered_ = true;
        h_.document_start(doc_, mark(first, indent(first)));
        const std::size_t after = block_node(first, indent(first), -1);
        if (next_content(after) != lines()) give_up();
        h_.document_end();
    }

private:
    std::size_t lines() const { return starts_.size(); }

    std::string_view line(std::size_t i) const {
        const std::size_t b = starts_[i];
        std::size_t e = i + 1 < starts_.size() ? starts_[i + 1] - 1 : s_.size();
        return s_.substr(b, e - b);
    }

    // Whether line i ends with a line break (the last line of the text may not).
    bool has_break(std::size_t i) const { return i + 1 < starts_.size(); }

    std::size_t indent(std::size_t i) const {
        const std::string_view l = line(i);
        std::size_t n = 0;
        while (n < l.size() && l[n] == ' ')
            ++n;
        return n;
    }

    // Blank (spaces only) or a comment line.
    bool blank_or_comment(std::size_t i) const {
        const std::string_view l = line(i);
        const std::size_t n = indent(i);
        return n == l.size() || l[n] == '#';
    }

    std::size_t next_content(std::size_t i) const {
        while (i < lines() && blank_or_comment(i))
            ++i;
        return i;
    }

    Mark mark(std::size_t i, std::size_t col) const {
        return Mark{static_cast<std::uint32_t>(i + 1) + line_offset_,
                    static_cast<std::uint32_t>(col + 1)};
    }

    void open(bool map, Mark m) {
        if (depth_ >= limits_.max_depth) give_up();
        ++depth_;
        delivered_ = true;
        if (map)
            h_.mapping_start(m);
        else
            h_.sequence_start(m);
    }

    void close(bool map) {
        --depth_;
        if (map)
            h_.mapping_end();
        else
            h_.sequence_end();
    }

    void emit(bool key, const ScalarEvent& ev) {
        delivered_ = true;
        if (key)
            h_.key(ev);
        else
            h_.scalar(ev);
    }

    static ScalarEvent plain_event(std::string_view text, Mark m) {
        ScalarEvent ev;
        ev.text = text;
        ev.mark = m;
        ev.kind = resolve_plain(text);
        ev.plain = true;
        return ev;
    }

    // The rest of the line after column c holds nothing but blanks and maybe a comment.
    static bool rest_empty(std::string_view l, std::size_t c) {
        std::size_t k = c;
        while (k < l.size() && l[k] == ' ')
            ++k;
        if (k == l.size()) return true;
        return l[k] == '#' && k > c; // a comment needs a blank before it
    }

    enum class Seg { closed, eol, eol_escaped };

    // Decodes the part of a quoted scalar on line l from k (after the opening quote, or the
    // start of a continuation line) into out, up to the closing quote (k left after it) or the
    // end of the line. `protect`: the size of out after the last character an escape gave.
    static Seg segment(std::string_view l, std::size_t& k, char q, std::string& out,
                       std::size_t& protect) {
        for (;;) {
            std::size_t e = k;
            if (q == '\'') {
                while (e < l.size() && l[e] != '\'')
                    ++e;
            } else {
                while (e < l.size() && l[e] != '"' && l[e] != '\\')
                    ++e;
            }
            out.append(l.substr(k, e - k));
            k = e;
            if (k >= l.size()) return Seg::eol;
            if (q == '\'') {
                if (k + 1 < l.size() && l[k + 1] == '\'') {
                    out += '\'';
                    k += 2;
                    protect = out.size();
                    continue;
                }
                ++k;
                return Seg::closed;
            }
            if (l[k] == '"') {
                ++k;
                return Seg::closed;
            }
            // A backslash.
            if (k + 1 >= l.size()) {
                k = l.size();
                return Seg::eol_escaped;
            }
            const char esc = l[k + 1];
            k += 2;
            switch (esc) {
            case '"':
            case '\\':
            case '/':
            case ' ':
                out += esc;
                break;
            case 'n':
                out += '\n';
                break;
            case 't':
                out += '\t';
                break;
            case 'r':
                out += '\r';
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'x':
            case 'u': {
                const std::size_t digits = esc == 'x' ? 2 : 4;
                if (k + digits > l.size()) give_up();
                char32_t cp = 0;
                for (std::size_t d = 0; d < digits; ++d) {
                    const char h = l[k + d];
                    int v = -1;
                    if (h >= '0' && h <= '9') v = h - '0';
                    if (h >= 'a' && h <= 'f') v = h - 'a' + 10;
                    if (h >= 'A' && h <= 'F') v = h - 'A' + 10;
                    if (v < 0) give_up();
                    cp = cp * 16 + static_cast<char32_t>(v);
                }
                if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) give_up();
                append_utf8(out, cp);
                k += digits;
                break;
            }
            default:
                give_up();
            }
            protect = out.size();
        }
    }

    // A quoted scalar whose opening quote is at (i, c); its text (a view of the line when it is
    // plain text on one line, else of scratch). i and c are left after the closing quote. Lines
    // after the first (folded as YAML folds them) must be indented more than n; with `one_line`
    // the scalar must close on its line.
    std::string_view quoted(std::size_t& i, std::size_t& c, long n, bool one_line) {
        std::string_view l = line(i);
        const char q = l[c];
        // Fast path: no escape, closed on this line.
        {
            std::size_t e = c + 1;
            while (e < l.size() && l[e] != q && l[e] != '\\')
                ++e;
            if (e < l.size() && l[e] == q && !(q == '\'' && e + 1 < l.size() && l[e + 1] == '\'')) {
                const std::string_view text = l.substr(c + 1, e - c - 1);
                c = e + 1;
                return text;
            }
        }
        scratch_.clear();
        std::size_t protect = 0;
        std::size_t k = c + 1;
        Seg r = segment(l, k, q, scratch_, protect);
        while (r != Seg::closed) {
            if (one_line) give_up();
            if (r == Seg::eol) { // trailing blanks before a line break are not part of it
                while (scratch_.size() > protect && scratch_.back() == ' ')
                    scratch_.pop_back();
            }
            std::size_t blanks = 0;
            ++i;
            while (i < lines() && indent(i) == line(i).size()) {
                ++blanks;
                ++i;
            }
            if (i >= lines()) give_up(); // not closed
            if (static_cast<long>(indent(i)) <= n) give_up();
            if (r == Seg::eol_escaped) {
                if (blanks > 0) give_up();
            } else if (blanks == 0) {
                scratch_ += ' ';
            } else {
                scratch_.append(blanks, '\n');
            }
            l = line(i);
            k = indent(i);
            r = segment(l, k, q, scratch_, protect);
        }
        c = k;
        return scratch_;
    }

    // Whether line i at column c starts a mapping entry ("key:" followed by a blank or the end
    // of the line); the key's end (the ':') in colon.
    bool key_at(std::size_t i, std::size_t c, std::size_t& colon) {
        const std::string_view l = line(i);
        if (c >= l.size()) return false;
        if (l[c] == '"' || l[c] == '\'') {
            // Only the end of the key is wanted: scratch_ holds nothing live between nodes.
            std::size_t k = c, li = i;
            quoted(li, k, -1, true);
            while (k < l.size() && l[k] == ' ')
                ++k;
            if (k < l.size() && l[k] == ':' && is_space_or_end(l, k + 1)) {
                colon = k;
                return true;
            }
            return false;
        }
        if (indicator(l[c])) return false;
        for (std::size_t k = c; k < l.size(); ++k) {
            if (l[k] == ':' && is_space_or_end(l, k + 1)) {
                colon = k;
                return true;
            }
            if (l[k] == '#' && l[k - 1] == ' ') return false;
        }
        return false;
    }

    // Emits the key at (i, c) whose ':' is at colon.
    void key(std::size_t i, std::size_t c, std::size_t colon) {
        const std::string_view l = line(i);
        if (l[c] == '"' || l[c] == '\'') {
            std::size_t k = c, li = i;
            ScalarEvent ev;
            ev.text = quoted(li, k, -1, true);
            ev.mark = mark(i, c);
            ev.kind = Kind::string;
            emit(true, ev);
            return;
        }
        std::size_t e = colon;
        while (e > c && l[e - 1] == ' ')
            --e;
        const std::string_view text = l.substr(c, e - c);
        if (text.find(": ") != npos || text.find(" #") != npos) give_up();
        emit(true, plain_event(text, mark(i, c)));
    }

    // A node that starts at (i, c), the first thing on its line, inside a block collection whose
    // indentation is n (< c). Returns the line after it.
    std::size_t block_node(std::size_t i, std::size_t c, long n) {
        const std::string_view l = line(i);
        if (l[c] == '-' && is_space_or_end(l, c + 1)) return sequence(i, c);
        std::size_t colon = 0;
        if (key_at(i, c, colon)) return mapping(i, c);
        return inline_node(i, c, n, false);
    }

    std::size_t mapping(std::size_t i, std::size_t m) {
        open(true, mark(i, m));
        std::size_t next = i;
        for (;;) {
            std::size_t colon = 0;
            if (!key_at(i, m, colon)) give_up();
            key(i, m, colon);
            next = value(i, colon + 1, static_cast<long>(m), mark(i, m));
            const std::size_t j = next_content(next);
            if (j == lines()) {
                next = j;
                break;
            }
            const std::size_t ind = indent(j);
            if (ind < m) {
                next = j;
                break;
            }
            if (ind > m) give_up();
            const std::string_view l = line(j);
            if (l[ind] == '-' && is_space_or_end(l, ind + 1)) give_up();
            i = j;
        }
        close(true);
        return next;
    }

    std::size_t sequence(std::size_t i, std::size_t m) {
        open(false, mark(i, m));
        std::size_t next = i;
        for (;;) {
            const std::string_view l = line(i);
            std::size_t c = m + 1;
            while (c < l.size() && l[c] == ' ')
                ++c;
            if (c == l.size() || l[c] == '#') {
                // The item on the lines below.
                const std::size_t j = next_content(i + 1);
                if (j == lines() || indent(j) <= m) give_up(); // an empty item
                next = block_node(j, indent(j), static_cast<long>(m));
            } else if (l[c] == '-' && is_space_or_end(l, c + 1)) {
                give_up(); // "- - a"
            } else {
                std::size_t colon = 0;
                if (key_at(i, c, colon))
                    next = mapping(i, c);
                else
                    next = inline_node(i, c, static_cast<long>(m), true);
            }
            const std::size_t j = next_content(next);
            if (j == lines()) {
                next = j;
                break;
            }
            const std::size_t ind = indent(j);
            const std::string_view lj = line(j);
            if (ind == m && lj[ind] == '-' && is_space_or_end(lj, ind + 1)) {
                i = j;
                continue;
            }
            if (ind > m) give_up();
            next = j;
            break;
        }
        close(false);
        return next;
    }

    // The value after a mapping key whose ':' ends before column c, in a mapping of indentation n.
    std::size_t value(std::size_t i, std::size_t c, long n, Mark key_mark) {
        const std::string_view l = line(i);
        std::size_t k = c;
        while (k < l.size() && l[k] == ' ')
            ++k;
        if (k < l.size() && l[k] != '#') return inline_node(i, k, n, false);
        // Nothing on the line: the value is below, or absent.
        const std::size_t j = next_content(i + 1);
        if (j < lines()) {
            const std::size_t ind = indent(j);
            const std::string_view lj = line(j);
            if (static_cast<long>(ind) > n) return block_node(j, ind, n);
            if (static_cast<long>(ind) == n && lj[ind] == '-' && is_space_or_end(lj, ind + 1))
                return sequence(j, ind); // a sequence not indented under its key
        }
        ScalarEvent ev;
        ev.kind = Kind::null;
        ev.plain = true;
        ev.empty = true;
        ev.mark = key_mark;
        emit(false, ev);
        return i + 1;
    }

    // A node written on the line of its key or '-', at (i, c), in a block collection of
    // indentation n. Returns the line after it.
    std::size_t inline_node(std::size_t i, std::size_t c, long n, bool item) {
        const std::string_view l = line(i);
        const char ch = l[c];
        if (ch == '|') {
            if (item) give_up();
            return literal(i, c, n);
        }
        if (ch == '"' || ch == '\'') {
            std::size_t k = c, li = i;
            ScalarEvent ev;
            ev.text = quoted(li, k, n, false);
            ev.mark = mark(i, c);
            ev.kind = Kind::string;
            if (!rest_empty(line(li), k)) give_up();
            no_continuation(li, n);
            emit(false, ev);
            return li + 1;
        }
        if (ch == '{' || ch == '[') {
            std::size_t k = c;
            flow(i, k);
            if (!rest_empty(l, k)) give_up();
            no_continuation(i, n);
            return i + 1;
        }
        if (indicator(ch) && !(ch == '-' && c + 1 < l.size() && l[c + 1] != ' ')) give_up();
        // A plain scalar to the end of the line or to a comment, and maybe on the lines below
        // that are indented more than n (folded: one line break a space, blank lines breaks).
        std::size_t e = c;
        bool comment = false;
        // Only ':' and '#' matter: jump from one to the next (long lines are mostly neither).
        for (;;) {
            const char* from = l.data() + e;
            const std::size_t left = l.size() - e;
            const char* colon = static_cast<const char*>(std::memchr(from, ':', left));
            const char* hash = static_cast<const char*>(std::memchr(from, '#', left));
            const char* hit = colon == nullptr  ? hash
                              : hash == nullptr ? colon
                                                : std::min(colon, hash);
            if (hit == nullptr) {
                e = l.size();
                break;
            }
            e = static_cast<std::size_t>(hit - l.data());
            if (*hit == '#' && l[e - 1] == ' ') {
                comment = true;
                break;
            }
            if (*hit == ':' && is_space_or_end(l, e + 1)) give_up(); // "a: b: c"
            ++e;
        }
        while (e > c && l[e - 1] == ' ')
            --e;
        const Mark m = mark(i, c);
        std::string_view text = l.substr(c, e - c);
        std::size_t next = i + 1;
        if (comment) {
            no_continuation(i, n);
        } else {
            std::size_t j = i + 1, blanks = 0;
            bool folded = false;
            for (; j < lines(); ++j) {
                const std::string_view lj = line(j);
                const std::size_t ind = indent(j);
                if (ind == lj.size()) {
                    ++blanks;
                    continue;
                }
                if (static_cast<long>(ind) <= n) break;
                if (lj[ind] == '#') give_up();
                std::size_t f = lj.size();
                while (f > ind && lj[f - 1] == ' ')
                    --f;
                const std::string_view part = lj.substr(ind, f - ind);
                if (part.find(": ") != npos || part.back() == ':' || part.find(" #") != npos)
                    give_up();
                if (!folded) {
                    scratch_.assign(text);
                    folded = true;
                }
                if (blanks == 0)
                    scratch_ += ' ';
                else
                    scratch_.append(blanks, '\n');
                scratch_.append(part);
                blanks = 0;
                next = j + 1;
            }
            if (folded) text = scratch_;
        }
        emit(false, plain_event(text, m));
        return next;
    }

    // A scalar on line i must not go on below (a multi-line plain scalar, or an error).
    void no_continuation(std::size_t i, long n) const {
        const std::size_t j = next_content(i + 1);
        if (j < lines() && static_cast<long>(indent(j)) > n) give_up();
    }

    // A literal block scalar whose '|' is at (i, c), in a collection of indentation n.
    std::size_t literal(std::size_t i, std::size_t c, long n) {
        if (n < 0) give_up(); // a block scalar at the root
        const std::string_view l = line(i);
        char chomp = ' ';
        std::size_t k = c + 1;
        if (k < l.size() && (l[k] == '-' || l[k] == '+')) chomp = l[k++];
        if (k < l.size() && l[k] != ' ') give_up(); // an indentation indicator, or junk
        if (!rest_empty(l, k)) give_up();
        // The content's indentation: that of its first line that is not blank.
        std::size_t j = i + 1;
        std::size_t leading_spaces = 0;
        while (j < lines() && indent(j) == line(j).size()) {
            leading_spaces = std::max(leading_spaces, line(j).size());
            ++j;
        }
        if (j == lines() || static_cast<long>(indent(j)) <= n) give_up(); // empty
        const std::size_t m = indent(j);
        if (leading_spaces > m) give_up();
        scratch_.clear();
        std::size_t end = i + 1;  // first line after the scalar
        std::size_t last = npos;  // last line with text
        std::size_t trailing = 0; // empty lines after it
        for (std::size_t r = i + 1; r < lines(); ++r) {
            const std::string_view lr = line(r);
            const std::size_t ind = indent(r);
            if (ind == lr.size()) { // blank
                if (lr.size() > m) give_up();
                ++trailing;
                end = r + 1;
                continue;
            }
            if (ind < m) break;
            // The blank lines before this one are part of the text.
            if (last != npos || trailing > 0) {
                if (last != npos) scratch_ += '\n';
                for (std::size_t t = 0; t < trailing; ++t)
                    scratch_ += '\n';
            }
            scratch_.append(lr.substr(m));
            last = r;
            trailing = 0;
            end = r + 1;
        }
        if (!has_break(last)) give_up(); // text ends without a line break
        if (chomp == '+') {
            scratch_ += '\n';
            for (std::size_t t = 0; t < trailing; ++t)
                scratch_ += '\n';
            if (trailing > 0 && !has_break(end - 1)) give_up();
        } else if (chomp == ' ') {
            scratch_ += '\n';
        }
        // A keep-chomped scalar takes the blank lines after it; the others leave them.
        ScalarEvent ev;
        ev.text = scratch_;
        ev.mark = mark(i, c);
        ev.kind = Kind::string;
        emit(false, ev);
        return end;
    }

    // A flow collection opened at l[c] and closed on the same line; c is left after it.
    void flow(std::size_t i, std::size_t& c) {
        const std::string_view l = line(i);
        const bool map = l[c] == '{';
        const char closer = map ? '}' : ']';
        open(map, mark(i, c));
        ++c;
        skip_blanks(l, c);
        if (c < l.size() && l[c] == closer) {
            ++c;
            close(map);
            return;
        }
        for (;;) {
            if (map) {
                flow_scalar(i, c, true);
                skip_blanks(l, c);
                if (c >= l.size() || l[c] != ':') give_up();
                ++c;
                skip_blanks(l, c);
                flow_node(i, c);
            } else {
                flow_node(i, c);
                skip_blanks(l, c);
                if (c < l.size() && l[c] == ':') give_up(); // a single-pair mapping
            }
            skip_blanks(l, c);
            if (c >= l.size()) give_up();
            if (l[c] == ',') {
                ++c;
                skip_blanks(l, c);
                if (c >= l.size() || l[c] == closer) give_up(); // a trailing comma
                continue;
            }
            if (l[c] != closer) give_up();
            ++c;
            close(map);
            return;
        }
    }

    static void skip_blanks(std::string_view l, std::size_t& c) {
        while (c < l.size() && l[c] == ' ')
            ++c;
    }

    void flow_node(std::size_t i, std::size_t& c) {
        const std::string_view l = line(i);
        if (c >= l.size()) give_up();
        if (l[c] == '{' || l[c] == '[') {
            flow(i, c);
            return;
        }
        flow_scalar(i, c, false);
    }

    // A quoted or plain scalar inside a flow collection.
    void flow_scalar(std::size_t i, std::size_t& c, bool key) {
        const std::string_view l = line(i);
        if (c >= l.size()) give_up();
        ScalarEvent ev;
        ev.mark = mark(i, c);
        if (l[c] == '"' || l[c] == '\'') {
            std::size_t li = i;
            ev.text = quoted(li, c, -1, true);
            ev.kind = Kind::string;
            emit(key, ev);
            return;
        }
        if (indicator(l[c]) && !(l[c] == '-' && c + 1 < l.size() && l[c + 1] != ' ' &&
                                 l[c + 1] != ',' && l[c + 1] != ']' && l[c + 1] != '}'))
            give_up();
        const std::size_t start = c;
        while (c < l.size()) {
            const char ch = l[c];
            if (ch == ',' || ch == '[' || ch == ']' || ch == '{' || ch == '}') break;
            if (ch == ':' && (c + 1 >= l.size() || l[c + 1] == ' ' || l[c + 1] == ',' ||
                              l[c + 1] == ']' || l[c + 1] == '}'))
                break;
            if (ch == '#' && l[c - 1] == ' ') give_up();
            ++c;
        }
        if (c < l.size() && (l[c] == '[' || l[c] == '{')) give_up();
        std::size_t e = c;
        while (e > start && l[e - 1] == ' ')
            --e;
        if (e == start) give_up(); // an empty node
        emit(key, plain_event(l.substr(start, e - start), ev.mark));
    }

    std::string_view s_;
    EventHandler& h_;
    const Limits& limits_;
    std::uint32_t line_offset_;
    int doc_;
    std::vector<std::size_t> starts_;
    std::string scratch_;
    std::size_t depth_ = 0;

public:
    bool delivered_ = false;
};

} // namespace

bool read_yaml_fast(std::string_view text, EventHandler& handler, const Limits& limits,
                    std::uint32_t line_offset, int document_index) {
    Fast f(text, handler, limits, line_offset, document_index);
    try {
        f.run();
        return true;
    } catch (const GiveUp&) {
        if (f.delivered_) handler.reset();
        return false;
    }
}

} // namespace kpkg::io::detail
