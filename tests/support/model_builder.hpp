// Small compact-model catalogs built in code, for unit tests of the channel and graph helpers.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kpkg/catalog/graph.hpp"
#include "kpkg/model/catalog.hpp"

namespace kpkg::test {

struct EntrySpec {
    std::string name;
    std::string replaces = {};
    std::vector<std::string> skips = {};
    std::string skip_range = {};
};

// A catalog holding package `package` and one channel `channel` with these entries (indexed).
inline model::Catalog channel_catalog(const std::vector<EntrySpec>& entries,
                                      const std::string& package = "p",
                                      const std::string& channel = "c") {
    model::Catalog c;
    model::Package p;
    p.name = c.strings.intern(package);
    c.packages.push_back(p);
    model::Channel ch;
    ch.package = p.name;
    ch.name = c.strings.intern(channel);
    ch.entries_begin = 0;
    for (const auto& e : entries) {
        model::Entry me;
        me.name = c.strings.intern(e.name);
        me.replaces = c.strings.intern(e.replaces);
        me.skip_range = c.strings.intern(e.skip_range);
        me.skips_begin = static_cast<std::uint32_t>(c.skips.size());
        for (const auto& s : e.skips)
            c.skips.push_back(c.strings.intern(s));
        me.skips_count = static_cast<std::uint32_t>(e.skips.size());
        c.entries.push_back(me);
    }
    ch.entries_count = static_cast<std::uint32_t>(c.entries.size());
    c.channels.push_back(ch);
    c.index();
    return c;
}

// Name -> version, interned in `c`.
inline catalog::VersionMap versions(model::Catalog& c,
                                    std::initializer_list<std::pair<std::string, std::string>> v) {
    catalog::VersionMap out;
    for (const auto& [name, version] : v)
        out.emplace(c.strings.intern(name), c.strings.intern(version));
    return out;
}

} // namespace kpkg::test
