#include "fbc_text.hpp"

#include <cstring>

#include "kpkg/core/text.hpp"
#include "kpkg/io/events.hpp"

namespace kpkg::catalog::detail {

bool looks_like_json(std::string_view text) {
    const std::string_view head = text.substr(0, 4096);
    std::size_t i = 0;
    while (i < head.size()) {
        const std::size_t n = text::go_space_at(head, i);
        if (n == 0) break;
        i += n;
    }
    return i < head.size() && head[i] == '{';
}

TextPlace yaml_fallback_start(std::string_view text, int values, std::size_t value_end) {
    TextPlace at;
    at.offset = values == 0 ? 0 : value_end;
    for (std::size_t i = 0; i < at.offset && i < text.size(); ++i)
        if (text[i] == '\n') ++at.line;
    while (at.offset < text.size()) {
        const std::size_t n = text::go_space_at(text, at.offset);
        if (n == 0) break;
        at.offset += n;
        if (text[at.offset - 1] == '\n') {
            ++at.line;
            break;
        }
    }
    return at;
}

namespace {

// The offset of the first character of s[i..] that is not Go white space.
std::size_t skip_go_space(std::string_view s, std::size_t i) {
    while (i < s.size()) {
        const std::size_t n = text::go_space_at(s, i);
        if (n == 0) break;
        i += n;
    }
    return i;
}

// Whether yaml.v2 reads a line "---<rest>" as a document start marker followed by nothing or a
// comment: the dashes must be followed by the end of the line or a YAML blank (space, tab), and
// the blanks by the end of the line or '#'. (A '\r' before the line break is the break's.)
bool clean_marker(std::string_view rest) {
    if (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
    if (rest.empty()) return true;
    if (rest[0] != ' ' && rest[0] != '\t') return false;
    std::size_t i = 0;
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t'))
        ++i;
    return i == rest.size() || rest[i] == '#';
}

std::string shown(std::string_view s) {
    constexpr std::size_t kMax = 40;
    if (s.size() > kMax) {
        std::size_t n = kMax;
        while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
            --n; // not inside a UTF-8 sequence
        return std::string(s.substr(0, n)) + "...";
    }
    return std::string(s);
}

} // namespace

YamlSplit split_yaml(std::string_view text, std::size_t from, std::uint32_t line) {
    YamlSplit out;
    std::size_t doc_begin = from;  // the document being gathered starts here
    std::uint32_t doc_line = line; // on this line
    bool marker = false;           // it started with a separator line
    std::size_t p = from;
    while (p < text.size()) {
        const void* nl = std::memchr(text.data() + p, '\n', text.size() - p);
        const std::size_t eol =
            nl == nullptr ? text.size()
                          : static_cast<std::size_t>(static_cast<const char*>(nl) - text.data());
        const std::size_t next = nl == nullptr ? text.size() : eol + 1;
        if (eol - p >= 3 && text.compare(p, 3, "---") == 0) {
            const std::string_view rest = text.substr(p + 3, eol - p - 3);
            const std::size_t r = skip_go_space(rest, 0);
            if (r < rest.size() && rest[r] != '#') {
                // (What was gathered before it is still read: opm fails either way.)
                if (p > doc_begin || marker) out.docs.push_back({doc_begin, p, doc_line, marker});
                out.error = SeparatorError{
                    line, "invalid YAML document separator: \"---\" followed by \"" +
                              shown(rest.substr(r)) +
                              "\" (only white space or a comment may follow \"---\" on its line; "
                              "a document starts on the line after it)"};
                return out;
            }
            if (p > doc_begin || marker) {
                // The separator ends the document gathered so far.
                out.docs.push_back({doc_begin, p, doc_line, marker});
                doc_begin = next;
                doc_line = line + 1;
                marker = false;
            } else if (clean_marker(rest)) {
                // Nothing gathered yet: the line starts the next document, as a marker.
                doc_begin = next;
                doc_line = line + 1;
                marker = true;
            } else {
                out.error = SeparatorError{
                    line, "\"---\" followed by \"" + shown(rest) +
                              "\" at the start of a YAML document: opm's YAML reader does not take "
                              "it for a document start (write \"---\" alone on its line, or "
                              "followed by a space and a comment)"};
                return out;
            }
        }
        p = next;
        ++line;
    }
    if (text.size() > doc_begin || marker)
        out.docs.push_back({doc_begin, text.size(), doc_line, marker});
    return out;
}

std::string empty_document_message(bool marker) {
    if (marker)
        return "document holds only a \"---\" line (and comments or blank lines); opm reads it as "
               "a blob without \"schema\" (remove the extra \"---\" line)";
    return "document holds only comments or blank lines; opm reads it as a blob without "
           "\"schema\" (put comments after the \"---\" line of a document)";
}

bool goes_on_after_root(std::string_view span, const io::Limits& limits) {
    // Only a flow collection can end before the text does: the first thing that is not a blank,
    // a line break or a comment opens one.
    std::size_t i = 0;
    while (i < span.size() && (span[i] == ' ' || span[i] == '\t' || span[i] == '\n' ||
                               span[i] == '\r' || span[i] == '#')) {
        if (span[i] == '#')
            while (i < span.size() && span[i] != '\n')
                ++i;
        else
            ++i;
    }
    if (i >= span.size() || (span[i] != '{' && span[i] != '[')) return false;
    // Read whole, the text is not one document: it fails after the collection, or holds more.
    struct Counter final : io::EventHandler {
        int docs = 0;
        void document_start(int, io::Mark) override { ++docs; }
        void document_end() override {}
        void mapping_start(io::Mark) override {}
        void sequence_start(io::Mark) override {}
        void mapping_end() override {}
        void sequence_end() override {}
        void key(const io::ScalarEvent&) override {}
        void scalar(const io::ScalarEvent&) override {}
    } counter;
    auto all = io::read_yaml_events(span, "<document>", counter, limits);
    return !all.ok() || counter.docs > 1;
}

std::string goes_on_after_root_message() {
    return "the document goes on after the flow collection that is its value; opm ignores the "
           "rest, and so does kpkg (start a new document with a \"---\" line)";
}

} // namespace kpkg::catalog::detail
