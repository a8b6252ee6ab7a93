// .indexignore handling for catalog loading (gitignore syntax), private to src/catalog.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kpkg::catalog::detail {

// The patterns of every .indexignore file found below a catalog root. Each file applies to the
// directory holding it and everything below; deeper files are consulted after shallower ones,
// and within all of them the last matching pattern decides (a "!" pattern re-includes).
class IndexIgnore {
public:
    // The patterns of one .indexignore file (its text); `rel_dir` is the directory holding it,
    // relative to the root ("" for the root).
    void add_text(std::string_view text, const std::string& rel_dir);
    // `rel` is a regular file's path relative to the root, '/' separated.
    bool ignored(const std::string& rel) const;
    bool empty() const { return rules_.empty(); }

private:
    struct Rule {
        std::string base; // directory of the .indexignore, relative to the root, "" or "a/b"
        std::string pattern;
        bool negate = false;
        bool dir_only = false;
        bool anchored = false; // contains a '/' other than a trailing one
    };
    std::vector<Rule> rules_;
};

} // namespace kpkg::catalog::detail
