// strconv.Quote: Go's double-quoted string literal (see io/go.hpp for what it keeps).
#include "kpkg/io/go.hpp"

namespace kpkg::io::go {

std::string quote(std::string_view s) {
    // The control characters Go escapes by a letter, and those letters.
    static constexpr std::string_view named = "\a\b\f\n\r\t\v";
    static constexpr std::string_view letters = "abfnrtv";
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (const std::size_t k = named.find(ch); k != std::string_view::npos) {
            out += '\\';
            out += letters[k];
        } else if (c < 0x20 || c == 0x7F) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xF];
        } else {
            out += ch; // printable ASCII, and every byte from 0x80 up as it is
        }
    }
    out += '"';
    return out;
}

} // namespace kpkg::io::go
