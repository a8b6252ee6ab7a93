#include "kpkg/catalog/query.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "kpkg/core/text.hpp"

namespace kpkg::catalog {

std::vector<std::string> channel_heads(const declcfg::Channel& ch) {
    std::set<std::string> referenced;
    for (const auto& e : ch.entries) {
        if (!e.replaces.empty()) referenced.insert(e.replaces);
        referenced.insert(e.skips.begin(), e.skips.end());
    }
    std::set<std::string> heads;
    for (const auto& e : ch.entries)
        if (!referenced.count(e.name)) heads.insert(e.name);
    return {heads.begin(), heads.end()};
}

namespace {

Result<void> check_package(const declcfg::DeclarativeConfig& cfg,
                           const std::optional<std::string>& package) {
    if (!package) return {};
    std::vector<std::string> names;
    for (const auto& p : cfg.packages) {
        if (p.name == *package) return {};
        names.push_back(p.name);
    }
    for (const auto& c : cfg.channels)
        if (c.package == *package) return {};
    Error e = Error::invalid("package " + text::quote(*package) + " is not in the catalog");
    if (auto c = text::closest(*package, names)) e.note("did you mean " + text::quote(*c) + "?");
    return fail(std::move(e));
}

} // namespace

std::vector<PackageRow> list_packages(const declcfg::DeclarativeConfig& cfg) {
    std::map<std::string, PackageRow> rows;
    for (const auto& p : cfg.packages) {
        auto& r = rows[p.name];
        r.name = p.name;
        r.default_channel = p.default_channel;
    }
    for (const auto& c : cfg.channels) {
        auto it = rows.find(c.package);
        if (it == rows.end()) continue;
        ++it->second.channels;
        if (c.name == it->second.default_channel) {
            auto heads = channel_heads(c);
            if (heads.size() == 1) it->second.head = heads.front();
        }
    }
    for (const auto& b : cfg.bundles)
        if (auto it = rows.find(b.package); it != rows.end()) ++it->second.bundles;
    std::vector<PackageRow> out;
    for (auto& [_, r] : rows)
        out.push_back(std::move(r));
    return out;
}

Result<std::vector<ChannelRow>> list_channels(const declcfg::DeclarativeConfig& cfg,
                                              const std::optional<std::string>& package) {
    KPKG_TRY(check_package(cfg, package));
    std::vector<ChannelRow> out;
    for (const auto& c : cfg.channels) {
        if (package && c.package != *package) continue;
        out.push_back({c.package, c.name, channel_heads(c), c.entries.size()});
    }
    std::sort(out.begin(), out.end(), [](const ChannelRow& a, const ChannelRow& b) {
        return std::tie(a.package, a.name) < std::tie(b.package, b.name);
    });
    return out;
}

Result<std::vector<BundleRow>> list_bundles(const declcfg::DeclarativeConfig& cfg,
                                            const std::optional<std::string>& package) {
    KPKG_TRY(check_package(cfg, package));
    std::map<std::pair<std::string, std::string>, const declcfg::Bundle*> bundles;
    for (const auto& b : cfg.bundles)
        bundles[{b.package, b.name}] = &b;
    std::vector<BundleRow> out;
    for (const auto& c : cfg.channels) {
        if (package && c.package != *package) continue;
        for (const auto& e : c.entries) {
            BundleRow r{c.package, c.name, e.name, "", e.replaces, e.skips, e.skip_range, ""};
            if (auto it = bundles.find({c.package, e.name}); it != bundles.end()) {
                r.version = it->second->version().value_or("");
                r.image = it->second->image;
            }
            out.push_back(std::move(r));
        }
    }
    std::sort(out.begin(), out.end(), [](const BundleRow& a, const BundleRow& b) {
        return std::tie(a.package, a.channel, a.name) < std::tie(b.package, b.channel, b.name);
    });
    return out;
}

} // namespace kpkg::catalog
