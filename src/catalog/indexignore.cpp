#include "indexignore.hpp"

#include <fnmatch.h>

#include <string_view>

namespace kpkg::catalog::detail {

namespace {

std::string trim_trailing_blanks(std::string s) {
    // gitignore: trailing spaces are dropped unless escaped with a backslash.
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        if (s.size() >= 2 && s[s.size() - 2] == '\\') break;
        s.pop_back();
    }
    return s;
}

// One path (relative to a rule's base) against one pattern.
bool match_one(const std::string& pattern, bool anchored, const std::string& path) {
    if (anchored) {
        // "**" may span directories: fall back to a match where '*' crosses '/'.
        int flags = pattern.find("**") != std::string::npos ? 0 : FNM_PATHNAME;
        return fnmatch(pattern.c_str(), path.c_str(), flags) == 0;
    }
    auto slash = path.rfind('/');
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    return fnmatch(pattern.c_str(), base.c_str(), 0) == 0;
}

} // namespace

void IndexIgnore::add_text(std::string_view text, const std::string& rel_dir) {
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t nl = text.find('\n', start);
        std::string line(text.substr(start, nl == std::string_view::npos ? text.npos : nl - start));
        start = nl == std::string_view::npos ? text.size() : nl + 1;
        line = trim_trailing_blanks(line);
        if (line.empty() || line[0] == '#') continue;
        Rule r;
        r.base = rel_dir;
        if (line[0] == '!') {
            r.negate = true;
            line.erase(0, 1);
        } else if (line[0] == '\\' && line.size() > 1 && (line[1] == '#' || line[1] == '!')) {
            line.erase(0, 1);
        }
        if (!line.empty() && line.back() == '/') {
            r.dir_only = true;
            line.pop_back();
        }
        if (line.empty()) continue;
        if (line.find('/') != std::string::npos) {
            r.anchored = true;
            if (line[0] == '/') line.erase(0, 1);
            // A leading "**/" matches in every directory, the base included.
            if (line.rfind("**/", 0) == 0) {
                r.anchored = line.find('/', 3) != std::string::npos;
                if (!r.anchored) line.erase(0, 3);
            }
        }
        r.pattern = line;
        rules_.push_back(std::move(r));
    }
}

bool IndexIgnore::ignored(const std::string& rel) const {
    bool result = false;
    for (const Rule& r : rules_) {
        std::string sub;
        if (r.base.empty()) {
            sub = rel;
        } else {
            if (rel.size() <= r.base.size() || rel.compare(0, r.base.size(), r.base) != 0 ||
                rel[r.base.size()] != '/')
                continue;
            sub = rel.substr(r.base.size() + 1);
        }
        // The file itself, then each directory on the way to it (ignoring a directory
        // ignores everything below it).
        bool hit = !r.dir_only && match_one(r.pattern, r.anchored, sub);
        for (std::size_t p = sub.find('/'); !hit && p != std::string::npos;
             p = sub.find('/', p + 1))
            hit = match_one(r.pattern, r.anchored, sub.substr(0, p));
        if (hit) result = !r.negate;
    }
    return result;
}

} // namespace kpkg::catalog::detail
