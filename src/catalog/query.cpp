#include "kpkg/catalog/query.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "kpkg/core/text.hpp"

namespace kpkg::catalog {

using model::Str;

namespace {

// Sorts ids by their text and drops repeats.
void sort_unique(const model::Catalog& c, std::vector<Str>& ids) {
    std::sort(ids.begin(), ids.end(), [&](Str a, Str b) { return c.str(a) < c.str(b); });
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

} // namespace

std::vector<Str> channel_heads(const model::Catalog& c, const model::Channel& ch) {
    const auto entries = c.entries_of(ch);
    std::unordered_set<Str> referenced;
    referenced.reserve(entries.size() * 2);
    for (const auto& e : entries) {
        if (e.replaces != 0) referenced.insert(e.replaces);
        for (Str s : c.skips_of(e))
            referenced.insert(s);
    }
    std::vector<Str> heads;
    for (const auto& e : entries)
        if (!referenced.count(e.name)) heads.push_back(e.name);
    sort_unique(c, heads);
    return heads;
}

std::vector<Str> replaces_chain(const model::Catalog& c, const model::Channel& ch) {
    const auto heads = channel_heads(c, ch);
    if (heads.size() != 1) return {};
    const auto entries = c.entries_of(ch);
    std::unordered_map<Str, const model::Entry*> by_name;
    std::unordered_set<Str> skipped;
    by_name.reserve(entries.size());
    for (const auto& e : entries) {
        by_name.emplace(e.name, &e);
        for (Str s : c.skips_of(e))
            skipped.insert(s);
    }
    std::vector<Str> chain;
    std::unordered_set<Str> on_chain;
    const model::Entry* cur = by_name.at(heads.front());
    while (cur != nullptr && on_chain.insert(cur->name).second) {
        chain.push_back(cur->name);
        if (cur->replaces == 0 || skipped.count(cur->replaces)) break;
        auto it = by_name.find(cur->replaces);
        cur = it == by_name.end() ? nullptr : it->second;
    }
    return chain;
}

std::vector<Str> stranded_entries(const model::Catalog& c, const model::Channel& ch) {
    const auto chain = replaces_chain(c, ch);
    if (chain.empty()) return {};
    const std::unordered_set<Str> on_chain(chain.begin(), chain.end());
    std::unordered_set<Str> skipped;
    for (const auto& e : c.entries_of(ch))
        for (Str s : c.skips_of(e))
            skipped.insert(s);
    std::vector<Str> out;
    for (const auto& e : c.entries_of(ch))
        if (!on_chain.count(e.name) && !skipped.count(e.name)) out.push_back(e.name);
    sort_unique(c, out);
    return out;
}

std::vector<std::string> names_of(const model::Catalog& c, const std::vector<Str>& ids) {
    std::vector<std::string> out;
    out.reserve(ids.size());
    for (Str s : ids)
        out.push_back(c.string(s));
    return out;
}

namespace {

Result<void> check_package(const model::Catalog& c, const std::optional<std::string>& package) {
    if (!package) return {};
    const auto* info = c.package_info(*package);
    if (info != nullptr && (info->package != model::npos32 || !info->channels.empty())) return {};
    std::vector<std::string> names;
    for (const auto& p : c.packages)
        names.push_back(c.string(p.name));
    Error e = Error::invalid("package " + text::quote(*package) + " is not in the catalog");
    if (auto m = text::closest(*package, names)) e.note("did you mean " + text::quote(*m) + "?");
    return fail(std::move(e));
}

} // namespace

std::vector<PackageRow> list_packages(const model::Catalog& c) {
    std::map<std::string, PackageRow> rows;
    for (const auto& p : c.packages) {
        auto& r = rows[c.string(p.name)];
        r.name = c.string(p.name);
        r.default_channel = c.string(p.default_channel);
    }
    for (const auto& ch : c.channels) {
        auto it = rows.find(c.string(ch.package));
        if (it == rows.end()) continue;
        ++it->second.channels;
        if (c.str(ch.name) == it->second.default_channel) {
            const auto heads = channel_heads(c, ch);
            if (heads.size() == 1) it->second.head = c.string(heads.front());
        }
    }
    for (const auto& b : c.bundles)
        if (auto it = rows.find(c.string(b.package)); it != rows.end()) ++it->second.bundles;
    std::vector<PackageRow> out;
    out.reserve(rows.size());
    for (auto& [_, r] : rows)
        out.push_back(std::move(r));
    return out;
}

Result<std::vector<ChannelRow>> list_channels(const model::Catalog& c,
                                              const std::optional<std::string>& package) {
    if (auto r = check_package(c, package); !r) return fail(std::move(r).error());
    std::vector<ChannelRow> out;
    for (const auto& ch : c.channels) {
        if (package && c.str(ch.package) != *package) continue;
        out.push_back({c.string(ch.package), c.string(ch.name), names_of(c, channel_heads(c, ch)),
                       ch.entries_count});
    }
    std::stable_sort(out.begin(), out.end(), [](const ChannelRow& a, const ChannelRow& b) {
        return std::tie(a.package, a.name) < std::tie(b.package, b.name);
    });
    return out;
}

Result<std::vector<BundleRow>> list_bundles(const model::Catalog& c,
                                            const std::optional<std::string>& package) {
    if (auto r = check_package(c, package); !r) return fail(std::move(r).error());
    // The last bundle of a name counts (duplicates are a validation error).
    std::unordered_map<std::uint64_t, const model::Bundle*> bundles;
    bundles.reserve(c.bundles.size());
    for (const auto& b : c.bundles)
        bundles[(std::uint64_t{b.package} << 32) | b.name] = &b;
    std::vector<BundleRow> out;
    for (const auto& ch : c.channels) {
        if (package && c.str(ch.package) != *package) continue;
        for (const auto& e : c.entries_of(ch)) {
            std::vector<std::string> skips;
            for (Str s : c.skips_of(e))
                skips.push_back(c.string(s));
            BundleRow r{c.string(ch.package), c.string(ch.name), c.string(e.name),       "",
                        c.string(e.replaces), std::move(skips),  c.string(e.skip_range), ""};
            if (auto it = bundles.find((std::uint64_t{ch.package} << 32) | e.name);
                it != bundles.end()) {
                r.version = c.string(it->second->version);
                r.image = c.string(it->second->image);
            }
            out.push_back(std::move(r));
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const BundleRow& a, const BundleRow& b) {
        return std::tie(a.package, a.channel, a.name) < std::tie(b.package, b.channel, b.name);
    });
    return out;
}

} // namespace kpkg::catalog
