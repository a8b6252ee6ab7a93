// The YAML reader: libfyaml's event parser feeding a builder that makes io::Node trees directly.
//
// libfyaml tokenises and checks the syntax (YAML 1.2, nothing resolved by it: in event mode it
// leaves scalars untyped). This file adds what kpkg needs on top of it:
// - YAML 1.2 core-schema typing of plain scalars and the common explicit tags (!!str, !!int...);
// - 1-based line and column, counted in bytes, for every node and map key and for every error
//   (libfyaml's own columns count characters, and its marks for quoted scalars, aliases,
//   anchors and block scalars point past the indicator; marks are recomputed from offsets);
// - anchors and aliases (the event parser does not resolve them), duplicate keys, non-scalar
//   keys, nesting depth and alias expansion ("billion laughs") checks;
// - invalid UTF-8 and control characters rejected before parsing;
// - libfyaml's diagnostics collected instead of printed, and the first error turned into a
//   message in kpkg's words;
// - work-arounds for the few places where libfyaml 0.7.12 reads valid YAML wrongly (Padding).
#include "kpkg/io/load.hpp"

#include "kpkg/io/events.hpp"
#include "yaml_fast.hpp"

#include <libfyaml.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kpkg/core/text.hpp"
#include "kpkg/io/scalars.hpp"

namespace kpkg::io {

namespace {

constexpr std::size_t npos = std::string_view::npos;

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Line and column (1-based, bytes) of offset `at` in src, counted from the start.
Mark mark_of_offset(std::string_view src, std::size_t at) {
    Mark m{1, 1};
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < at && i < src.size(); ++i) {
        if (src[i] == '\n') {
            ++m.line;
            line_start = i + 1;
        }
    }
    m.column = static_cast<std::uint32_t>(std::min(at, src.size()) - line_start + 1);
    return m;
}

// Offsets to marks, for a parser that mostly moves forward: line starts are recorded as the
// text is scanned, so a position at or after the furthest one seen costs only the scan up to
// it, and an earlier one a binary search.
class Lines {
public:
    Lines(std::string_view src, std::uint32_t line_offset) : src_(src), line_offset_(line_offset) {
        starts_.push_back(0);
    }

    Mark at(std::size_t off) {
        off = std::min(off, src_.size());
        while (scanned_ < off) {
            const void* nl = std::memchr(src_.data() + scanned_, '\n', off - scanned_);
            if (nl == nullptr) {
                scanned_ = off;
                break;
            }
            scanned_ = static_cast<std::size_t>(static_cast<const char*>(nl) - src_.data()) + 1;
            starts_.push_back(scanned_);
        }
        std::size_t line = starts_.size() - 1;
        if (starts_.back() > off)
            line = static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), off) -
                                            starts_.begin()) -
                   1;
        return Mark{static_cast<std::uint32_t>(line + 1) + line_offset_,
                    static_cast<std::uint32_t>(off - starts_[line] + 1)};
    }

private:
    std::string_view src_;
    std::uint32_t line_offset_ = 0;
    std::vector<std::size_t> starts_; // offset of the first byte of every line found so far
    std::size_t scanned_ = 0;         // newlines before this offset are all in starts_
};

// Two mistakes of libfyaml 0.7.12 are worked around by parsing a slightly changed copy of the
// text again:
// - it rejects an empty item in a list that is not indented under its key ("a:\n-\n- b"),
//   which is valid YAML: such items are given an explicit null ("- ~");
// - it takes lines that are not indented more than the key of a block scalar as the scalar's
//   text ("a:\n  b: |\n  c: 1" gives b "c: 1"), where YAML ends the (empty) scalar before them:
//   such scalars get an explicit indentation indicator ("|1"), which libfyaml gets right;
// - it fails on blanks ending in a tab at the very end of a document with no content yet
//   ("---\n \t"): a line break is added.
// This maps offsets in the copy back to the original and recognises the nulls put in.
class Padding {
public:
    static constexpr std::string_view null_item = " ~";
    static constexpr std::string_view indentation = "1";
    static constexpr std::string_view final_newline = "\n";

    bool empty() const { return inserts_.empty(); }

    // Inserts `text` at `original` (an offset in the original text); false if something was
    // inserted there already (each new attempt must change something).
    bool add(std::size_t original, std::string_view text) {
        auto it = std::lower_bound(inserts_.begin(), inserts_.end(), original,
                                   [](const Insert& i, std::size_t o) { return i.at < o; });
        if (it != inserts_.end() && it->at == original) return false;
        inserts_.insert(it, Insert{original, text});
        return true;
    }

    std::string apply(std::string_view src) const {
        std::string out;
        out.reserve(src.size() + inserts_.size() * 2);
        std::size_t from = 0;
        for (const Insert& i : inserts_) {
            out.append(src.substr(from, i.at - from));
            out.append(i.text);
            from = i.at;
        }
        out.append(src.substr(from));
        return out;
    }

    // The original offset of offset p of the copy (inserted text maps to where it was put).
    std::size_t original(std::size_t p) const {
        if (inserts_.empty() || p == npos) return p;
        std::size_t shift = 0;
        for (const Insert& i : inserts_) {
            if (p < i.at + shift) break;
            if (p < i.at + shift + i.text.size()) return i.at;
            shift += i.text.size();
        }
        return p - shift;
    }

    // Whether offset p of the copy is the '~' of an inserted null.
    bool is_null_item(std::size_t p) const {
        std::size_t shift = 0;
        for (const Insert& i : inserts_) {
            if (p < i.at + shift) break;
            if (i.text == null_item && p == i.at + shift + i.text.size() - 1) return true;
            shift += i.text.size();
        }
        return false;
    }

private:
    struct Insert {
        std::size_t at;
        std::string_view text;
    };
    std::vector<Insert> inserts_;
};

// Text to insert before offset `at` of the text parsed.
struct Repad {
    std::size_t at;
    std::string_view text;
};

// Rejects what YAML does not allow in a stream: invalid UTF-8, C0 controls other than tab and
// line breaks, DEL, C1 controls other than NEL, U+FFFE and U+FFFF.
std::optional<Error> prescan(std::string_view src, const std::string& file,
                             std::uint32_t line_offset) {
    auto at = [&](const char* q) {
        Mark m = mark_of_offset(src, static_cast<std::size_t>(q - src.data()));
        m.line += line_offset;
        return m;
    };
    constexpr std::uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    const char* const begin = src.data();
    const char* const end = begin + src.size();
    const char* p = begin;
    while (p < end) {
        // Eight printable ASCII bytes at a time.
        while (end - p >= 8) {
            std::uint64_t w;
            std::memcpy(&w, p, 8);
            const std::uint64_t low = (w - ones * 0x20) & ~w & high;
            if (((w | (w + ones)) & high) != 0 || low != 0) break;
            p += 8;
        }
        if (p >= end) break;
        const auto c = static_cast<unsigned char>(*p);
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
                return Error::invalid("control character " + detail::code_point(c) +
                                          " is not allowed in YAML",
                                      pos_of(file, at(p), -1));
            }
            ++p;
            continue;
        }
        char32_t cp = 0;
        const std::size_t len = detail::utf8_decode(p, end, cp);
        if (len == 0)
            return Error::invalid("invalid UTF-8 byte " + detail::hex_byte(c),
                                  pos_of(file, at(p), -1));
        if ((cp >= 0x80 && cp <= 0x9F && cp != 0x85) || cp == 0xFFFE || cp == 0xFFFF)
            return Error::invalid("character " + detail::code_point(cp) + " is not allowed in YAML",
                                  pos_of(file, at(p), -1));
        p += len;
    }
    return std::nullopt;
}

// What a node costs against Limits::max_alias_nodes when an alias copies it: one per node, plus
// one per 64 bytes of text, so that aliases of one huge string cannot exhaust memory either.
std::size_t text_cost(std::string_view s) {
    return s.size() / 64;
}

std::size_t start_of(fy_token* t) {
    const fy_mark* m = t != nullptr ? fy_token_start_mark(t) : nullptr;
    return m != nullptr ? m->input_pos : npos;
}

std::size_t end_of(fy_token* t) {
    const fy_mark* m = t != nullptr ? fy_token_end_mark(t) : nullptr;
    return m != nullptr ? m->input_pos : npos;
}

std::string_view text_of(fy_token* t) {
    if (t == nullptr) return {};
    std::size_t n = 0;
    const char* p = fy_token_get_text(t, &n);
    if (p == nullptr) throw std::bad_alloc(); // libfyaml fails here only when out of memory
    return {p, n};
}

// The heart of the reader: turns libfyaml's events into EventHandler calls, with marks, typed
// scalars, anchors and aliases (an alias replays the events recorded for its anchor), the nesting
// and alias-expansion limits, and what the error messages and the work-arounds need to know.
class Core {
public:
    // `src` is the text libfyaml parses; `lines` and `padding` turn its offsets into marks in
    // the original text.
    Core(std::string_view src, Lines& lines, const Padding& padding, const std::string& file,
         const Limits& limits, EventHandler& handler, int document_offset)
        : src_(src), lines_(lines), padding_(padding), file_(file), limits_(limits), h_(handler),
          index_(document_offset), next_index_(document_offset), document_offset_(document_offset) {
    }

    void on_event(fy_event* e) {
        switch (e->type) {
        case FYET_DOCUMENT_START:
            document_start(e);
            break;
        case FYET_DOCUMENT_END:
            document_end();
            break;
        case FYET_SCALAR:
            scalar(e->scalar.value, e->scalar.anchor, e->scalar.tag);
            break;
        case FYET_ALIAS:
            alias(fy_event_get_token(e));
            break;
        case FYET_SEQUENCE_START:
            start(Kind::sequence, fy_event_get_node_style(e) == FYNS_FLOW,
                  e->sequence_start.sequence_start, e->sequence_start.anchor,
                  e->sequence_start.tag);
            break;
        case FYET_MAPPING_START:
            start(Kind::mapping, fy_event_get_node_style(e) == FYNS_FLOW,
                  e->mapping_start.mapping_start, e->mapping_start.anchor, e->mapping_start.tag);
            break;
        case FYET_SEQUENCE_END:
        case FYET_MAPPING_END:
            end();
            break;
        default: // stream start and end
            break;
        }
        see(fy_event_get_token(e));
    }

    // Documents ended so far.
    int documents_done() const { return documents_done_; }

    // What the core knows about the place of a parse error, for readable messages.
    struct State {
        int doc = 0;
        // The innermost collection still open: kind, flow style and indentation.
        std::optional<Kind> open_kind;
        bool open_flow = false;
        std::uint32_t open_indent = 0; // 1-based column of its keys or '-'s (block collections)
        // The innermost collection again, when it is a flow collection.
        std::optional<Kind> flow_kind;
        Mark flow_mark;
        // The root collection, while it is the only one open.
        bool only_root_open = false;
        // After the end of a document, before the start of the next.
        bool between_documents = false;
    };

    State state() const {
        State s;
        s.doc = in_document_ ? index_ : next_index_;
        s.between_documents = !in_document_ && next_index_ > document_offset_;
        if (!frames_.empty()) {
            const Frame& f = frames_.back();
            s.open_kind = f.kind;
            s.open_flow = f.flow;
            s.open_indent = static_cast<std::uint32_t>(f.indent + 1);
            s.only_root_open = frames_.size() == 1;
        }
        if (!frames_.empty() && frames_.back().flow) { // everything inside a flow is flow
            s.flow_kind = frames_.back().kind;
            s.flow_mark = frames_.back().mark;
        }
        return s;
    }

    Mark mark_at(std::size_t off) { return lines_.at(padding_.original(off)); }

    const std::vector<Repad>& repads() const { return repads_; }

    // For when the block scalars cannot be repaired.
    std::optional<Error> misindented() const {
        if (!misindented_) return std::nullopt;
        return error(*misindented_, "the text of a block scalar must be indented more than its key "
                                    "(is the indentation right?)");
    }

    // Where the '-' of an empty item is when libfyaml fails on it (see Padding), or npos.
    std::size_t empty_item() const {
        if (frames_.empty() || frames_.back().flow || frames_.back().kind != Kind::sequence)
            return npos;
        std::size_t p = skip_blanks_and_comments(std::min(last_end_, src_.size()));
        if (p >= src_.size() || src_[p] != '-') return npos;
        const std::size_t after = p + 1;
        const std::size_t next = skip_blanks_and_comments(after);
        if (after < src_.size() && !is_blank(src_[after])) return npos;
        // Nothing else on the line of the '-'.
        if (src_.substr(after, next - after).find('\n') == npos && next < src_.size()) return npos;
        // And the next line is not indented more than the '-': the item is empty, and the null
        // put in cannot run on to the next line.
        if (next < src_.size()) {
            std::size_t line_start = next;
            while (line_start > 0 && src_[line_start - 1] != '\n')
                --line_start;
            std::size_t dash_line = p;
            while (dash_line > 0 && src_[dash_line - 1] != '\n')
                --dash_line;
            if (next - line_start > p - dash_line) return npos;
        }
        return p;
    }

private:
    struct Frame {
        Kind kind = Kind::mapping;
        Mark mark;
        std::string anchor;
        std::size_t indent = 0; // 0-based column of the first key or '-' (block collections)
        bool flow = false;
        bool have_key = false;
        Mark key_mark;
        std::size_t cost = 1;
        std::size_t record_from = 0; // anchored: where its events start in records_
    };

    // A recorded event, for aliases to replay.
    struct Record {
        enum class Type : std::uint8_t {
            scalar,
            key,
            mapping_start,
            mapping_end,
            sequence_start,
            sequence_end
        };
        Type type = Type::scalar;
        Kind kind = Kind::null;
        bool plain = false, tagged = false, binary = false;
        Mark mark;
        std::string text;
    };

    // An anchored node: the range of its events in records_.
    struct AnchorRec {
        bool complete = false;
        std::size_t begin = 0, end = 0;
        std::size_t cost = 0;
    };

    Error error(Mark m, std::string msg) const {
        return Error::invalid(std::move(msg), pos_of(file_, m, index_));
    }

    [[noreturn]] void abort(Mark m, std::string msg) const {
        throw Exception(error(m, std::move(msg)));
    }

    // Remembers how far the tokens seen so far reach.
    void see(fy_token* t) {
        const std::size_t e = end_of(t);
        if (e != npos) last_end_ = std::max(last_end_, e);
    }

    // The earliest of the node's properties (anchor and tag) and its value start, as an offset;
    // npos when the node has none of them (an empty scalar, an implicit collection).
    static std::size_t properties_start(fy_token* anchor, fy_token* tag) {
        std::size_t p = npos;
        // libfyaml's anchor token starts after the '&'.
        if (const std::size_t a = start_of(anchor); a != npos && a > 0) p = a - 1;
        if (const std::size_t t = start_of(tag); t != npos) p = std::min(p, t);
        return p;
    }

    // Where the indicator ('|' or '>') of a block scalar is: libfyaml starts the token on the
    // line after the header, so the header line is searched, from after whatever came before.
    std::size_t block_indicator(std::size_t content, std::size_t lower) const {
        std::size_t header_end = content;
        if (header_end > 0 && src_[header_end - 1] == '\n') {
            --header_end;
            if (header_end > 0 && src_[header_end - 1] == '\r') --header_end;
        }
        std::size_t line_start = header_end;
        while (line_start > 0 && src_[line_start - 1] != '\n')
            --line_start;
        for (std::size_t i = std::max(line_start, lower == npos ? 0 : lower); i < header_end; ++i)
            if (src_[i] == '|' || src_[i] == '>') return i;
        return content;
    }

    // The first byte after the last token that is neither blank nor comment: for nodes that have
    // no token of their own, usually the '-' of their list item.
    std::size_t next_content() const {
        return skip_blanks_and_comments(std::min(last_end_, src_.size()));
    }

    // Block scalars without an indentation indicator that libfyaml gets wrong (see Padding):
    // lines indented like the scalar's key taken as its text ("a:\n  b: |\n  c: 1"), and the
    // text missed when the scalar's anchor or tag starts a line ("a:\n  &x |\n    text").
    void check_block_indent(std::size_t indicator, bool empty) {
        if (frames_.empty() || frames_.back().flow) return;
        if (indicator >= src_.size() || (src_[indicator] != '|' && src_[indicator] != '>')) return;
        // An explicit indentation indicator ("|2") is handled right by libfyaml.
        for (std::size_t i = indicator + 1; i < src_.size() && i <= indicator + 2; ++i)
            if (src_[i] >= '1' && src_[i] <= '9') return;
        // The first line after the header that is not blank.
        std::size_t p = src_.find('\n', indicator);
        while (p != npos && p < src_.size()) {
            ++p;
            std::size_t q = p;
            while (q < src_.size() && src_[q] == ' ')
                ++q;
            if (q < src_.size() && src_[q] != '\n' && src_[q] != '\r') {
                const std::size_t indent = q - p, parent = frames_.back().indent;
                if (!empty && indent <= parent) {
                    if (!misindented_) misindented_ = mark_at(q);
                    repads_.push_back(Repad{indicator + 1, Padding::indentation});
                } else if (empty && indent > parent && indent - parent <= 9) {
                    static constexpr std::string_view digits = "123456789";
                    repads_.push_back(Repad{indicator + 1, digits.substr(indent - parent - 1, 1)});
                }
                return;
            }
            p = src_.find('\n', q);
        }
    }

    void document_start(fy_event*) {
        index_ = next_index_++;
        in_document_ = true;
        frames_.clear();
        anchors_.clear();
        records_.clear();
        recording_ = 0;
        h_.document_start(index_, mark_at(next_content()));
    }

    void document_end() {
        anchors_.clear();
        records_.clear();
        in_document_ = false;
        ++documents_done_;
        h_.document_end();
    }

    // Whether the next node is a mapping key.
    bool at_key() const {
        return !frames_.empty() && frames_.back().kind == Kind::mapping && !frames_.back().have_key;
    }

    // Hands an event to the handler, recording it while an anchored collection is open.
    void emit(Record::Type type, const ScalarEvent& ev, bool record) {
        if (record || recording_ > 0) {
            Record r;
            r.type = type;
            r.kind = ev.kind;
            r.plain = ev.plain;
            r.tagged = ev.tagged;
            r.binary = ev.binary;
            r.mark = ev.mark;
            r.text.assign(ev.text);
            records_.push_back(std::move(r));
        }
        switch (type) {
        case Record::Type::scalar:
            h_.scalar(ev);
            break;
        case Record::Type::key:
            h_.key(ev);
            break;
        case Record::Type::mapping_start:
            h_.mapping_start(ev.mark);
            break;
        case Record::Type::mapping_end:
            h_.mapping_end();
            break;
        case Record::Type::sequence_start:
            h_.sequence_start(ev.mark);
            break;
        case Record::Type::sequence_end:
            h_.sequence_end();
            break;
        }
    }

    // A node is complete at the current place: it was a key, a value or an item.
    void completed(std::size_t cost, Mark m, std::size_t key_cost) {
        if (frames_.empty()) return;
        Frame& f = frames_.back();
        if (f.kind == Kind::sequence) {
            f.cost += cost;
        } else if (!f.have_key) {
            f.cost += key_cost;
            f.key_mark = m;
            f.have_key = true;
        } else {
            f.cost += cost;
            f.have_key = false;
        }
    }

    void scalar(fy_token* value, fy_token* anchor, fy_token* tag) {
        if (value != nullptr && !padding_.empty() && padding_.is_null_item(start_of(value)))
            value = nullptr; // the "~" of an empty item (see Padding)
        const fy_scalar_style style = fy_token_scalar_style(value);
        ScalarEvent ev;
        ev.text = text_of(value);
        std::size_t at = start_of(value);
        if (at != npos) {
            if (style == FYSS_SINGLE_QUOTED || style == FYSS_DOUBLE_QUOTED) {
                if (at > 0) --at; // libfyaml's mark is after the opening quote
            } else if (style == FYSS_LITERAL || style == FYSS_FOLDED) {
                const std::size_t props = std::max(end_of(anchor) == npos ? 0 : end_of(anchor),
                                                   end_of(tag) == npos ? 0 : end_of(tag));
                at = block_indicator(at, std::max(props, last_end_));
                check_block_indent(at, ev.text.empty());
            }
        }
        at = std::min(at, properties_start(anchor, tag));
        ev.empty = value == nullptr;
        if (at != npos) {
            ev.mark = mark_at(at);
        } else if (!frames_.empty() && frames_.back().kind == Kind::mapping &&
                   frames_.back().have_key) {
            ev.mark = frames_.back().key_mark; // an absent value: its key is the better place
        } else {
            ev.mark = mark_at(next_content());
        }
        if (tag != nullptr) {
            ev.kind = tagged_kind(ev.mark, text_of(tag), ev.text);
            ev.tagged = true;
            ev.binary = text_of(tag) == "tag:yaml.org,2002:binary";
        } else if (style == FYSS_PLAIN) {
            ev.kind = ev.empty ? Kind::null : detail::resolve_plain(ev.text);
            ev.plain = true;
        } else {
            ev.kind = Kind::string;
        }
        see(anchor);
        see(tag);
        const std::size_t cost = 1 + text_cost(ev.text);
        ++own_nodes_;
        const bool key = at_key();
        const std::size_t from = records_.size();
        emit(key ? Record::Type::key : Record::Type::scalar, ev, anchor != nullptr);
        if (anchor != nullptr) {
            AnchorRec& a = anchors_[std::string(text_of(anchor))];
            a = AnchorRec{true, from, from + 1, cost};
        }
        completed(cost, ev.mark, text_cost(ev.text));
    }

    void alias(fy_token* t) {
        const std::string_view name = text_of(t);
        std::size_t at = start_of(t);
        if (at != npos && at > 0) --at; // libfyaml's mark is after the '*'
        const Mark m = mark_at(at != npos ? at : next_content());
        auto it = anchors_.find(std::string(name));
        if (it == anchors_.end()) abort(m, "alias *" + std::string(name) + " has no anchor");
        if (!it->second.complete)
            abort(m, "alias *" + std::string(name) +
                         " refers to a node that contains it (recursive aliases are not "
                         "supported)");
        const AnchorRec a = it->second;
        ++own_nodes_; // the alias itself is written in the file
        alias_cost_ += a.cost;
        if (alias_cost_ > limits_.max_alias_nodes)
            abort(m, "aliases expand to more than " + std::to_string(limits_.max_alias_nodes) +
                         " nodes (is this an alias bomb?)");
        if (limits_.max_alias_amplification > 0 && alias_cost_ > kAmplificationFrom &&
            alias_cost_ / limits_.max_alias_amplification > own_nodes_)
            abort(m, "aliases expand to " + std::to_string(alias_cost_) + " nodes, more than " +
                         std::to_string(limits_.max_alias_amplification) +
                         " times the file's own " + std::to_string(own_nodes_) +
                         " (is this an alias bomb?)");
        const bool key = at_key();
        const Record::Type first = records_[a.begin].type;
        const bool collection =
            first == Record::Type::mapping_start || first == Record::Type::sequence_start;
        if (key && collection)
            abort(m, std::string("a mapping key must be a scalar, not ") +
                         (first == Record::Type::mapping_start ? "an object" : "a list"));
        std::size_t key_cost = 0;
        // Replayed from a copy: recording may append to records_ meanwhile.
        const std::vector<Record> replay(records_.begin() + static_cast<std::ptrdiff_t>(a.begin),
                                         records_.begin() + static_cast<std::ptrdiff_t>(a.end));
        for (std::size_t i = 0; i < replay.size(); ++i) {
            const Record& r = replay[i];
            ScalarEvent ev;
            ev.text = r.text;
            ev.kind = r.kind;
            ev.plain = r.plain;
            ev.tagged = r.tagged;
            ev.binary = r.binary;
            ev.empty = false;
            ev.mark = i == 0 ? m : r.mark;
            Record::Type type = r.type;
            if (i == 0 && !collection) {
                type = key ? Record::Type::key : Record::Type::scalar;
                key_cost = text_cost(r.text);
            }
            emit(type, ev, false);
        }
        completed(a.cost, m, key_cost);
    }

    Kind tagged_kind(Mark m, std::string_view tag, std::string_view value) const {
        constexpr std::string_view core = "tag:yaml.org,2002:";
        if (tag.substr(0, core.size()) != core) return Kind::string; // "!" or a local tag
        const std::string_view name = tag.substr(core.size());
        auto bad = [&](const char* what) {
            abort(m, text::quote(value) + " is not " + what + " (tag !!" + std::string(name) + ")");
        };
        if (name == "int") {
            if (!detail::is_yaml_int(value)) bad("an integer");
            return Kind::integer;
        }
        if (name == "float") {
            if (!detail::is_yaml_float(value) && !detail::is_yaml_int(value)) bad("a number");
            return Kind::floating;
        }
        if (name == "bool") {
            if (!detail::is_yaml_bool(value)) bad("a boolean");
            return Kind::boolean;
        }
        if (name == "null") {
            if (!detail::is_yaml_null(value)) bad("null");
            return Kind::null;
        }
        return Kind::string; // !!str, and tags kpkg has no type for (!!binary, !!timestamp)
    }

    void start(Kind kind, bool flow, fy_token* token, fy_token* anchor, fy_token* tag) {
        ++own_nodes_;
        std::size_t at = std::min(start_of(token), properties_start(anchor, tag));
        const Mark m = mark_at(at != npos ? at : next_content());
        see(anchor);
        see(tag);
        if (at_key())
            abort(m, std::string("a mapping key must be a scalar, not ") +
                         (kind == Kind::mapping ? "an object" : "a list"));
        const std::size_t token_at = start_of(token);
        const Mark token_mark = token_at != npos ? mark_at(token_at) : m;
        // libfyaml accepts a block mapping with an empty first key on the line of its own key
        // ("a: : b"); YAML allows a block mapping there only in a list item ("- a: b").
        if (kind == Kind::mapping && !flow && token_at != npos && !frames_.empty() &&
            !frames_.back().flow && frames_.back().kind == Kind::mapping &&
            frames_.back().have_key && token_mark.line == frames_.back().key_mark.line) {
            std::size_t colon = token_at;
            while (colon < src_.size() && src_[colon] != '\n' &&
                   !(src_[colon] == ':' && (colon + 1 == src_.size() || is_blank(src_[colon + 1]))))
                ++colon;
            abort(mark_at(colon < src_.size() && src_[colon] == ':' ? colon : token_at),
                  "unexpected ':' (a mapping value is not allowed here; quote a value that "
                  "contains \": \")");
        }
        if (frames_.size() >= limits_.max_depth)
            abort(m, "nesting deeper than " + std::to_string(limits_.max_depth) + " levels");
        Frame f;
        f.kind = kind;
        f.mark = m;
        f.indent = token_mark.column > 0 ? token_mark.column - 1 : 0;
        f.flow = flow || (!frames_.empty() && frames_.back().flow);
        if (anchor != nullptr) {
            f.anchor = std::string(text_of(anchor));
            anchors_[f.anchor] = AnchorRec{}; // an alias to it before its end is recursive
            f.record_from = records_.size();
            ++recording_;
        }
        frames_.push_back(std::move(f));
        ScalarEvent ev;
        ev.mark = m;
        emit(kind == Kind::mapping ? Record::Type::mapping_start : Record::Type::sequence_start, ev,
             false);
    }

    void end() {
        if (frames_.back().have_key) { // not produced by libfyaml, but keep the key if it happens
            ScalarEvent ev;
            ev.kind = Kind::null;
            ev.empty = true;
            ev.plain = true;
            ev.mark = frames_.back().key_mark;
            emit(Record::Type::scalar, ev, false);
            frames_.back().have_key = false;
        }
        Frame f = std::move(frames_.back());
        frames_.pop_back();
        ScalarEvent ev;
        ev.mark = f.mark;
        emit(f.kind == Kind::mapping ? Record::Type::mapping_end : Record::Type::sequence_end, ev,
             false);
        if (!f.anchor.empty()) {
            --recording_;
            // records_ is kept: anchors refer to it until the end of the document.
            anchors_[f.anchor] = AnchorRec{true, f.record_from, records_.size(), f.cost};
        }
        completed(f.cost, f.mark, 0);
    }

    std::size_t skip_blanks_and_comments(std::size_t p) const {
        while (p < src_.size()) {
            if (is_blank(src_[p])) {
                ++p;
            } else if (src_[p] == '#') {
                const std::size_t nl = src_.find('\n', p);
                p = nl == npos ? src_.size() : nl;
            } else {
                break;
            }
        }
        return p;
    }

    std::vector<Repad> repads_;       // block scalars libfyaml gets wrong in this attempt
    std::optional<Mark> misindented_; // the first line libfyaml took wrongly into a scalar

    std::string_view src_;
    Lines& lines_;
    const Padding& padding_;
    const std::string& file_;
    const Limits& limits_;
    EventHandler& h_;

    int index_ = 0;
    int next_index_ = 0;
    int document_offset_ = 0;
    int documents_done_ = 0;
    bool in_document_ = false;
    std::vector<Frame> frames_;
    std::unordered_map<std::string, AnchorRec> anchors_;
    std::vector<Record> records_;
    int recording_ = 0; // anchored collections open
    std::size_t alias_cost_ = 0;
    std::size_t own_nodes_ = 0; // nodes written in the file (scalars, collections, aliases)
    std::size_t last_end_ = 0;
    // Limits::max_alias_amplification applies past this many alias-expanded nodes.
    static constexpr std::size_t kAmplificationFrom = 50'000;
};

// Builds Documents from the core's events.
class NodeBuilder final : public EventHandler {
public:
    std::vector<Document> docs;

    void reset() override {
        docs.clear();
        frames_.clear();
        root_ = Node{};
        have_root_ = false;
        root_empty_ = false;
    }

    void document_start(int index, Mark) override {
        index_ = index;
        frames_.clear();
        root_ = Node{};
        have_root_ = false;
        root_empty_ = false;
    }

    void document_end() override {
        if (have_root_ && !root_empty_) {
            Document d;
            d.start = root_.mark;
            d.index = index_;
            d.root = std::move(root_);
            docs.push_back(std::move(d));
        }
        root_ = Node{};
    }

    void mapping_start(Mark m) override { open(Kind::mapping, m); }
    void sequence_start(Mark m) override { open(Kind::sequence, m); }
    void mapping_end() override { close(); }
    void sequence_end() override { close(); }

    void key(const ScalarEvent& k) override {
        Frame& f = frames_.back();
        std::string key(k.text);
        f.replace = false;
        if (duplicate(f, key)) {
            if (last_wins_) {
                // yaml.v2 (sigs.k8s.io/yaml) without strict mode: the later value wins.
                f.replace = true;
                f.key = std::move(key);
                f.key_mark = k.mark;
                return;
            }
            std::string shown = key.size() > 80 ? key.substr(0, 80) + "..." : key;
            Error e =
                Error::invalid("duplicate key \"" + shown + "\"", pos_of(file_, k.mark, index_));
            for (const MapEntry& prev : f.node.fields)
                if (prev.key == key && prev.key_mark.line != 0)
                    e.note("first defined at line " + std::to_string(prev.key_mark.line) +
                           ", column " + std::to_string(prev.key_mark.column));
            throw Exception(std::move(e));
        }
        f.key = std::move(key);
        f.key_mark = k.mark;
    }

    void scalar(const ScalarEvent& s) override {
        Node n;
        n.kind = s.kind;
        n.plain = s.plain;
        n.mark = s.mark;
        n.text.assign(s.text);
        if (frames_.empty()) root_empty_ = s.empty && !s.tagged;
        complete(std::move(n));
    }

    NodeBuilder(const std::string& file, bool last_wins) : file_(file), last_wins_(last_wins) {}

private:
    struct Frame {
        Node node;
        std::string key;
        Mark key_mark;
        bool replace = false; // the key is a duplicate whose value replaces the first one's
        // Keys seen so far, once the mapping is big enough for linear search to hurt.
        std::unique_ptr<std::unordered_set<std::string>> keys;
    };

    // Whether key is already in the mapping of f (and remembers it when it is not).
    static bool duplicate(Frame& f, const std::string& key) {
        if (f.keys) return !f.keys->insert(key).second;
        for (const MapEntry& e : f.node.fields)
            if (e.key == key) return true;
        if (f.node.fields.size() >= 16) {
            f.keys = std::make_unique<std::unordered_set<std::string>>();
            for (const MapEntry& e : f.node.fields)
                f.keys->insert(e.key);
            f.keys->insert(key);
        }
        return false;
    }

    void open(Kind kind, Mark m) {
        Frame f;
        f.node.kind = kind;
        f.node.mark = m;
        frames_.push_back(std::move(f));
    }

    void close() {
        Node n = std::move(frames_.back().node);
        frames_.pop_back();
        complete(std::move(n));
    }

    void complete(Node&& n) {
        if (frames_.empty()) {
            root_ = std::move(n);
            have_root_ = true;
            return;
        }
        Frame& f = frames_.back();
        if (f.node.is_seq()) {
            f.node.items.push_back(std::move(n));
            return;
        }
        if (f.replace) {
            for (MapEntry& e : f.node.fields)
                if (e.key == f.key) {
                    e.value = std::move(n);
                    break;
                }
            f.replace = false;
            f.key.clear();
            return;
        }
        f.node.fields.push_back(MapEntry{std::move(f.key), f.key_mark, std::move(n)});
        f.key.clear();
    }

    const std::string& file_;
    bool last_wins_ = false;
    int index_ = 0;
    std::vector<Frame> frames_;
    Node root_;
    bool have_root_ = false;
    bool root_empty_ = false;
};

// libfyaml's first error, as reported by its diagnostics.
struct ParserError {
    std::string message;
    std::size_t offset = npos; // of the token it names, when it names one
    int line = 0;              // 1-based; column counts characters
    int column = 0;
};

bool contains(std::string_view s, std::string_view part) {
    return s.find(part) != npos;
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

// Offset of a 1-based line and character column (libfyaml's diagnostic position).
std::size_t offset_of(std::string_view src, int line, int column) {
    std::size_t p = 0;
    for (int l = 1; l < line && p < src.size(); ++l) {
        const std::size_t nl = src.find('\n', p);
        if (nl == npos) return src.size();
        p = nl + 1;
    }
    for (int c = 1; c < column && p < src.size() && src[p] != '\n'; ++c) {
        ++p;
        while (p < src.size() && (static_cast<unsigned char>(src[p]) & 0xC0) == 0x80)
            ++p;
    }
    return p;
}

// Whether nothing but blanks and comments follow offset p.
bool only_comments_after(std::string_view src, std::size_t p) {
    while (p < src.size()) {
        if (is_blank(src[p])) {
            ++p;
        } else if (src[p] == '#') {
            const std::size_t nl = src.find('\n', p);
            p = nl == npos ? src.size() : nl + 1;
        } else {
            return false;
        }
    }
    return true;
}

// Whether the quoted scalar whose opening quote is at q is closed somewhere.
bool quote_closed(std::string_view src, std::size_t q) {
    const char quote = src[q];
    for (std::size_t i = q + 1; i < src.size(); ++i) {
        if (quote == '"' && src[i] == '\\') {
            ++i;
        } else if (src[i] == quote) {
            if (quote == '\'' && i + 1 < src.size() && src[i + 1] == '\'')
                ++i;
            else
                return true;
        }
    }
    return false;
}

// libfyaml's message, in kpkg's words, with the place it is best reported at.
Error convert(const ParserError& pe, std::string_view src, const std::string& file, Core& b) {
    const Core::State st = b.state();
    std::size_t off =
        pe.offset != npos ? std::min(pe.offset, src.size()) : offset_of(src, pe.line, pe.column);
    const std::string_view msg = pe.message;
    auto fail_at = [&](std::size_t at, std::string text) {
        return Error::invalid(std::move(text), pos_of(file, b.mark_at(at), st.doc));
    };

    // A quote that is never closed, whatever libfyaml makes of the lines after it.
    if (contains(msg, "without closing quote") || contains(msg, "marker in") ||
        (starts_with(msg, "wrongly indented") && contains(msg, "quoted scalar"))) {
        const char q = contains(msg, "single-quoted") ? '\'' : '"';
        std::size_t at = npos;
        if (off < src.size() && src[off] == q)
            at = off;
        else if (off > 0 && off <= src.size() && src[off - 1] == q)
            at = off - 1;
        if (at != npos && !quote_closed(src, at)) return fail_at(at, "unterminated quoted string");
    }

    // The end of the input, or libfyaml's own complaint, with a flow collection still open.
    if (st.flow_kind && (only_comments_after(src, off) || contains(msg, "without a closing"))) {
        const bool seq = *st.flow_kind == Kind::sequence;
        Error e = fail_at(off, seq ? "unclosed '[': expected ',' or ']'"
                                   : "unclosed '{': expected ',' or '}'");
        e.note(std::string("the '") + (seq ? "[" : "{") + "' at line " +
               std::to_string(st.flow_mark.line) + ", column " +
               std::to_string(st.flow_mark.column) + " is not closed");
        return e;
    }
    if (st.flow_kind && starts_with(msg, "missing comma")) {
        const bool seq = *st.flow_kind == Kind::sequence;
        Error e = fail_at(off, seq ? "expected ',' or ']' in a flow list"
                                   : "expected ',' or '}' in a flow mapping");
        e.note(std::string("the flow ") + (seq ? "list" : "mapping") + " starts at line " +
               std::to_string(st.flow_mark.line) + ", column " +
               std::to_string(st.flow_mark.column));
        return e;
    }

    // A plain scalar running on to a line with ": " on it: libfyaml names the scalar, the
    // mistake is usually that colon (a nested key under a value, or an unquoted ": ").
    const std::string colon_msg = "unexpected ':' (a mapping value is not allowed here; quote a "
                                  "value that contains \": \")";
    bool colon = false;
    const std::size_t reported = off;
    if (contains(msg, "multiline plain key")) {
        for (std::size_t i = off; i < src.size(); ++i) {
            if (src[i] == ':' && (i + 1 == src.size() || is_blank(src[i + 1]))) {
                off = i;
                colon = true;
                break;
            }
        }
    }

    // Errors on a line indented with tabs are almost always caused by the tabs.
    const std::string tab_msg = "tab character in indentation (YAML allows only spaces)";
    {
        std::size_t line_start = std::min(off, src.size());
        while (line_start > 0 && src[line_start - 1] != '\n')
            --line_start;
        for (std::size_t i = line_start; i < src.size() && (src[i] == ' ' || src[i] == '\t'); ++i)
            if (src[i] == '\t') return fail_at(i, tab_msg);
    }
    if (starts_with(msg, "tab ") || contains(msg, " tab")) return fail_at(off, tab_msg);

    // Block content that continues after the root collection has ended: YAML needs "---".
    const Mark m = b.mark_at(reported);
    const std::string_view rest = src.substr(reported);
    const bool dash = rest == "-" || starts_with(rest, "- ") || starts_with(rest, "-\n");
    const bool root_block = st.only_root_open && !st.open_flow;
    const bool after_root = contains(msg, "missing document start") ||
                            (st.between_documents && !starts_with(rest, "%")) ||
                            (root_block && st.open_kind == Kind::mapping &&
                             (m.column < st.open_indent || (m.column == st.open_indent && dash))) ||
                            (root_block && st.open_kind == Kind::sequence &&
                             m.column <= st.open_indent && !starts_with(rest, "-"));
    if (after_root)
        return fail_at(reported, "unexpected content after the end of the document (a new document "
                                 "must start with \"---\"; is the indentation right?)");
    if (colon) return fail_at(off, colon_msg);

    // A scalar where a key of the mapping should be, without the ':' after it.
    if ((contains(msg, "did not find expected key") ||
         contains(msg, "invalid value after mapping")) &&
        st.open_kind == Kind::mapping && !st.open_flow && m.column == st.open_indent &&
        off < src.size() && std::strchr("-?:#[]{},|>!&*", src[off]) == nullptr) {
        const std::size_t eol = std::min(src.find('\n', off), src.size());
        bool has_colon = false;
        for (std::size_t i = off; i < eol; ++i)
            if (src[i] == ':' && (i + 1 == src.size() || is_blank(src[i + 1]))) has_colon = true;
        if (!has_colon) return fail_at(off, "did not find the expected ':' after a mapping key");
    }

    struct Entry {
        std::string_view from; // a part of libfyaml's message
        const char* to;
    };
    static const Entry table[] = {
        {"invalid nested block mapping on the same line",
         "unexpected ':' (a mapping value is not allowed here; quote a value that contains "
         "\": \")"},
        {"did not find expected key", "did not find the expected key (is the indentation right?)"},
        {"invalid indentation in mapping",
         "did not find the expected key (is the indentation right?)"},
        {"invalid value after mapping",
         "did not find the expected key (is the indentation right?)"},
        {"wrong indendation in sequence",
         "did not find the expected key or '-' (is the indentation right?)"},
        {"did not find expected '-'", "did not find the expected '-' (is the indentation right?)"},
        {"invalid scalar at the end of block sequence",
         "did not find the expected '-' (is the indentation right?)"},
        {"wrongly indented sequence item",
         "did not find the expected '-' (is the indentation right?)"},
        {"could not find expected ':'", "did not find the expected ':' after a mapping key"},
        {"did not find expected node content", "did not find the expected value"},
        {"with invalid extra closing", "unexpected closing bracket"},
        {"missing comma in flow sequence", "expected ',' or ']' in a flow list"},
        {"missing comma in flow mapping", "expected ',' or '}' in a flow mapping"},
        {"has invalid hex escape", "invalid hex digit in an escape sequence"},
        {"invalid trailing content after",
         "unexpected text after the closing quote of a quoted string"},
        {"block scalar no linebreak found", "unexpected character in a block scalar header"},
        {"indentation indicator 0", "a block scalar cannot have an indentation of zero"},
        {"invalid alias detected", "missing alias name after '*'"},
        {"invalid anchor detected", "missing anchor name after '&'"},
        {"has invalid UTF8 escape", "invalid Unicode escape in a double-quoted string"},
        {"marker in", "document marker inside a quoted string (is a quote not closed?)"},
        {"undefined tag prefix", "undefined tag handle (no %TAG directive defines it)"},
        {"invalid content after document end marker",
         "unexpected content after the document end marker \"...\""},
    };
    for (const Entry& t : table)
        if (contains(msg, t.from)) return fail_at(off, t.to);

    if (starts_with(msg, "unsupport version number ")) { // reported at the "---" after it
        const std::size_t directive = src.rfind("%YAML", off);
        return fail_at(directive != npos ? directive : off,
                       "unsupported YAML version " + std::string(msg.substr(25)));
    }
    if (starts_with(msg, "invalid escape '")) {
        const std::size_t close = msg.find('\'', 16);
        const std::string seq(msg.substr(16, close == npos ? 0 : close - 16));
        return fail_at(off, "invalid escape sequence \"\\" + seq + "\" in a double-quoted string");
    }
    if (starts_with(msg, "plain scalar cannot start with '") && msg.size() > 33) {
        const char c = msg[32];
        if (c == '@' || c == '`')
            return fail_at(off, std::string("'") + c +
                                    "' is reserved and cannot start a plain scalar (quote the "
                                    "value)");
        return fail_at(off, std::string("'") + c +
                                "' cannot start a plain scalar here (quote the value)");
    }
    // Otherwise libfyaml's words, which are clear enough (but one of them is misspelt).
    std::string text(msg);
    for (std::size_t p; (p = text.find("indendation")) != npos;)
        text.replace(p, 11, "indentation");
    if (text.empty()) text = "invalid YAML";
    return fail_at(off, std::move(text));
}

// Collects what libfyaml prints: a few of its errors bypass the error collection.
void keep_output(fy_diag*, void* user, const char* buf, std::size_t len) {
    auto* out = static_cast<std::string*>(user);
    if (out->size() < 4096) out->append(buf, std::min<std::size_t>(len, 4096));
}

// The first "<line:column>: message" of libfyaml's printed diagnostics (both 0-based, the
// column in characters), as configured in parse().
std::optional<ParserError> printed_error(std::string_view out) {
    if (out.empty() || out[0] != '<') return std::nullopt;
    const std::size_t close = out.find(">: ");
    if (close == npos) return std::nullopt;
    int line = 0, column = 0;
    if (std::sscanf(std::string(out.substr(1, close - 1)).c_str(), "%d:%d", &line, &column) != 2)
        return std::nullopt;
    ParserError pe;
    const std::size_t nl = out.find('\n', close);
    pe.message = std::string(out.substr(close + 3, nl == npos ? npos : nl - close - 3));
    pe.line = line + 1;
    pe.column = column + 1;
    return pe;
}

struct DiagDeleter {
    void operator()(fy_diag* d) const { fy_diag_destroy(d); }
};
struct ParserDeleter {
    void operator()(fy_parser* p) const { fy_parser_destroy(p); }
};

// Frees an event whatever way the builder leaves.
class EventGuard {
public:
    EventGuard(fy_parser* p, fy_event* e) : p_(p), e_(e) {}
    EventGuard(const EventGuard&) = delete;
    EventGuard& operator=(const EventGuard&) = delete;
    ~EventGuard() { fy_parser_event_free(p_, e_); }

private:
    fy_parser* p_;
    fy_event* e_;
};

std::optional<ParserError> first_error(fy_diag* diag) {
    void* it = nullptr;
    while (fy_diag_error* de = fy_diag_errors_iterate(diag, &it)) {
        if (de->type < FYET_ERROR) continue;
        ParserError pe;
        pe.message = de->msg != nullptr ? de->msg : "";
        pe.offset = start_of(de->fyt);
        pe.line = de->line;
        pe.column = de->column;
        return pe;
    }
    return std::nullopt;
}

// One run of libfyaml over `text` (the original, or a padded copy of it).
class Run {
public:
    Run(std::string_view text, Lines& lines, const Padding& padding, const std::string& file,
        const Limits& limits, EventHandler& handler, const YamlEventOptions& options)
        : text_(text), options_(options),
          core_(text, lines, padding, file, limits, handler, options.document_offset) {
        // libfyaml prints its diagnostics to stderr unless told otherwise: errors are collected
        // here, and the few it prints anyway are written into a string.
        fy_diag_cfg dcfg;
        fy_diag_cfg_default(&dcfg);
        dcfg.fp = nullptr;
        dcfg.output_fn = keep_output;
        dcfg.user = &printed_;
        dcfg.colorize = false;
        dcfg.show_source = false;
        dcfg.show_position = true;
        dcfg.show_type = false;
        dcfg.show_module = false;
        dcfg.level = FYET_ERROR;
        diag_.reset(fy_diag_create(&dcfg));
        if (!diag_) throw std::bad_alloc();
        fy_diag_set_collect_errors(diag_.get(), true);

        // YAML 1.2 unless a document says otherwise, never JSON mode, no comments kept. In
        // event mode nothing is resolved by libfyaml: tags come as written, scalars untyped.
        // Sloppy flow indentation accepts what other parsers (Go's, Python's) accept and people
        // write: "a: [\n  b\n]" with the bracket closed at the key's column.
        fy_parse_cfg cfg{};
        cfg.flags =
            static_cast<fy_parse_cfg_flags>(FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2 |
                                            FYPCF_JSON_NONE | FYPCF_SLOPPY_FLOW_INDENTATION);
        cfg.diag = diag_.get();
        parser_.reset(fy_parser_create(&cfg));
        if (!parser_) throw std::bad_alloc();
        static const char empty[] = "";
        if (fy_parser_set_string(parser_.get(), text.empty() ? empty : text.data(), text.size()) !=
            0)
            throw std::bad_alloc();
    }

    // Parses everything (or the first document); false when libfyaml failed (see error() and
    // empty_item()). The core and the handler throw Exception to stop.
    bool run() {
        while (fy_event* e = fy_parser_parse(parser_.get())) {
            EventGuard guard(parser_.get(), e);
            core_.on_event(e);
            if (options_.first_document_only && core_.documents_done() > 0) return true;
        }
        return !fy_parser_get_stream_error(parser_.get()) && !fy_diag_got_error(diag_.get());
    }

    // The empty list item libfyaml failed on, if that is what it failed on (see Padding).
    std::size_t empty_item() const {
        const std::optional<ParserError> pe = first_error(diag_.get());
        if (!pe || pe->message != "did not find expected node content") return npos;
        return core_.empty_item();
    }
    const Core& core() const { return core_; }

    Error error(const std::string& file) {
        if (auto pe = first_error(diag_.get())) return convert(*pe, text_, file, core_);
        if (auto pe = printed_error(printed_)) return convert(*pe, text_, file, core_);
        return Error::invalid("invalid YAML", pos_of(file, core_.mark_at(text_.size()), -1));
    }

private:
    std::string_view text_;
    const YamlEventOptions& options_;
    std::string printed_;
    Core core_;
    // The parser goes first: the errors collected in the diagnostics refer to its tokens.
    std::unique_ptr<fy_diag, DiagDeleter> diag_;
    std::unique_ptr<fy_parser, ParserDeleter> parser_;
};

Result<void> parse(std::string_view src, const std::string& file, const Limits& limits,
                   EventHandler& handler, const YamlEventOptions& options) {
    if (auto err = prescan(src, file, options.line_offset)) return fail(std::move(*err));
    if (options.fast) {
        try {
            if (detail::read_yaml_fast(src, handler, limits, options.line_offset,
                                       options.document_offset))
                return {};
        } catch (Exception& e) {
            return fail(e.error());
        }
    }
    Lines lines(src, options.line_offset);
    Padding padding;
    std::string padded;
    std::string_view text = src;
    for (int attempt = 0;; ++attempt) {
        std::string next; // the text of the next attempt, if there is one
        {
            if (attempt > 0) handler.reset();
            Run r(text, lines, padding, file, limits, handler, options);
            std::optional<Error> aborted;
            bool ok = false;
            try {
                ok = r.run();
            } catch (Exception& a) {
                aborted = a.error();
            }
            std::vector<Repad> fixes = r.core().repads();
            if (fixes.empty() && !ok && !aborted) {
                const std::size_t item = r.empty_item();
                if (item != npos) fixes.push_back(Repad{item + 1, Padding::null_item});
                std::size_t last_line = text.size();
                while (last_line > 0 && (text[last_line - 1] == ' ' || text[last_line - 1] == '\t'))
                    --last_line;
                if (item == npos && last_line < text.size() &&
                    (last_line == 0 || text[last_line - 1] == '\n'))
                    fixes.push_back(Repad{text.size(), Padding::final_newline});
            }
            // Each insertion is before an original character (or at the end), so its original
            // offset is one past that of the character before it.
            bool again = !fixes.empty() && attempt < 64;
            for (const Repad& f : fixes)
                again =
                    again && padding.add(f.at == 0 ? 0 : padding.original(f.at - 1) + 1, f.text);
            if (!again) {
                if (auto e = r.core().misindented()) return fail(std::move(*e));
                if (aborted) return fail(std::move(*aborted));
                if (ok) return {};
                return fail(r.error(file));
            }
            next = padding.apply(src);
        }
        padded = std::move(next);
        text = padded;
    }
}

} // namespace

Result<std::vector<Document>> parse_yaml(std::string_view text, const std::string& file,
                                         const Limits& limits) {
    // A byte order mark is taken off here so that positions count from the first character.
    if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    try {
        NodeBuilder b(file, limits.duplicate_keys_last_wins);
        if (auto r = parse(text, file, limits, b, {}); !r) return fail(std::move(r).error());
        return std::move(b.docs);
    } catch (const std::bad_alloc&) {
        throw OutOfMemory("parsing", file);
    }
}

Result<void> read_yaml_events(std::string_view text, const std::string& file, EventHandler& handler,
                              const Limits& limits, const YamlEventOptions& options) {
    if (options.line_offset == 0 && text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF")
        text.remove_prefix(3);
    try {
        return parse(text, file, limits, handler, options);
    } catch (const std::bad_alloc&) {
        throw OutOfMemory("parsing", file);
    }
}

} // namespace kpkg::io
