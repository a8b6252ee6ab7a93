// Findings as CI systems read them: JUnit XML (-o junit) and GitHub Actions workflow commands
// (-o github), shared by `kpkg bundle validate`, `kpkg catalog validate` and
// `kpkg package validate`.
#include <cstdint>
#include <string>

#include "command.hpp"

namespace kpkg::cli {

std::string plural(std::size_t n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string counts(std::size_t errors, std::size_t warnings) {
    std::string out;
    if (errors > 0) out += plural(errors, "error");
    if (errors > 0 && warnings > 0) out += ", ";
    if (warnings > 0) out += plural(warnings, "warning");
    return out;
}

namespace {

// The code point starting at s[i] and its length; {U+FFFD, 1} for a byte that does not start a
// well-formed UTF-8 sequence (overlong forms, surrogates and values past U+10FFFF included).
std::pair<std::uint32_t, std::size_t> decode(const std::string& s, std::size_t i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) return {c, 1};
    std::size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    if (len == 0 || i + len > s.size()) return {0xFFFD, 1};
    std::uint32_t cp = c & (0x7F >> len);
    for (std::size_t k = 1; k < len; ++k) {
        if ((b(i + k) & 0xC0) != 0x80) return {0xFFFD, 1};
        cp = (cp << 6) | (b(i + k) & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return {0xFFFD, 1};
    return {cp, len};
}

// Text for an XML 1.0 attribute value or element: markup characters as references, line breaks
// and tabs as character references (attribute values would otherwise lose them), characters XML
// does not allow (other controls, U+FFFE/U+FFFF, broken UTF-8) as U+FFFD.
std::string xml_escape(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        auto [cp, len] = decode(s, i);
        switch (cp) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&apos;";
            break;
        case '\n':
            out += "&#10;";
            break;
        case '\r':
            out += "&#13;";
            break;
        case '\t':
            out += "&#9;";
            break;
        default:
            if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF || (cp == 0xFFFD && len == 1))
                out += "\xEF\xBF\xBD";
            else
                out.append(s, i, len);
        }
        i += len;
    }
    return out;
}

// A workflow command's message: '%', CR and LF percent-encoded.
std::string github_data(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '%')
            out += "%25";
        else if (c == '\r')
            out += "%0D";
        else if (c == '\n')
            out += "%0A";
        else
            out += c;
    }
    return out;
}

// A workflow command's property value: as a message, and ':' and ',' too.
std::string github_property(const std::string& s) {
    std::string out;
    for (char c : github_data(s)) {
        if (c == ':')
            out += "%3A";
        else if (c == ',')
            out += "%2C";
        else
            out += c;
    }
    return out;
}

// FILE:LINE:COL, as much of it as is known.
std::string where(const model::Finding& f) {
    std::string w = f.pos.file;
    if (!w.empty() && f.pos.line > 0) {
        w += ":" + std::to_string(f.pos.line);
        if (f.pos.column > 0) w += ":" + std::to_string(f.pos.column);
    }
    return w;
}

bool is_error(const model::Finding& f) {
    return f.severity == model::Severity::error;
}

std::string text_of(const model::Finding& f) {
    std::string w = where(f);
    return (w.empty() ? "" : w + ": ") + (is_error(f) ? "error: " : "warning: ") + f.message +
           (f.rule.empty() ? "" : " [" + f.rule + "]");
}

std::size_t errors_of(const CiUnit& u) {
    std::size_t n = 0;
    for (const auto& f : u.findings)
        n += is_error(f) ? 1 : 0;
    return n;
}

} // namespace

std::string format_junit(const std::string& command, const std::vector<CiUnit>& units) {
    std::size_t tests = 0, failures = 0;
    std::string body;
    for (const auto& u : units) {
        const std::size_t n = u.findings.empty() ? 1 : u.findings.size();
        const std::size_t e = errors_of(u);
        tests += n;
        failures += e;
        body += "  <testsuite name=\"" + xml_escape(u.name) + "\" tests=\"" + std::to_string(n) +
                "\" failures=\"" + std::to_string(e) + "\" errors=\"0\" skipped=\"0\">\n";
        if (u.findings.empty())
            body += "    <testcase name=\"valid\" classname=\"" + xml_escape(u.name) + "\"/>\n";
        for (const auto& f : u.findings) {
            std::string name = f.rule.empty() ? "finding" : f.rule;
            if (std::string w = where(f); !w.empty()) name += " at " + w;
            body += "    <testcase name=\"" + xml_escape(name) + "\" classname=\"" +
                    xml_escape(u.name) + "\">\n";
            if (is_error(f))
                body += "      <failure type=\"" + xml_escape(f.rule) + "\" message=\"" +
                        xml_escape(f.message) + "\">" + xml_escape(text_of(f)) + "</failure>\n";
            else
                body += "      <system-out>" + xml_escape(text_of(f)) + "</system-out>\n";
            body += "    </testcase>\n";
        }
        body += "  </testsuite>\n";
    }
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" + xml_escape(command) +
           "\" tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
           "\" errors=\"0\">\n" + body + "</testsuites>\n";
}

std::string format_github(const std::vector<CiUnit>& units) {
    std::string out;
    for (const auto& u : units) {
        for (const auto& f : u.findings) {
            std::string props;
            auto add = [&props](const char* key, const std::string& value) {
                props += (props.empty() ? " " : ",") + std::string(key) + "=" + value;
            };
            if (!f.pos.file.empty()) {
                add("file", github_property(f.pos.file));
                if (f.pos.line > 0) add("line", std::to_string(f.pos.line));
                if (f.pos.line > 0 && f.pos.column > 0) add("col", std::to_string(f.pos.column));
            }
            if (!f.rule.empty()) add("title", github_property(f.rule));
            out += std::string(is_error(f) ? "::error" : "::warning") + props +
                   "::" + github_data(f.message) + "\n";
        }
    }
    for (const auto& u : units) {
        const std::size_t e = errors_of(u);
        const std::size_t w = u.findings.size() - e;
        // A plain line: no "::" at its start, so GitHub shows it as it is.
        out += github_data(u.name) + ": " + (e > 0 ? "invalid" : "valid");
        if (e > 0 || w > 0) out += ": " + counts(e, w);
        out += "\n";
    }
    return out;
}

} // namespace kpkg::cli
