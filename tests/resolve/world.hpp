// Small catalogs written in code for the resolver tests: a builder of File-Based Catalog YAML and
// a World of named catalogs to resolve against.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "kpkg/catalog/load.hpp"
#include "kpkg/resolve/resolve.hpp"
#include "support/support.hpp"

namespace kpkg::test {

// FBC YAML for one catalog.
struct Cat {
    std::string yaml;

    Cat& package(const std::string& name, const std::string& default_channel) {
        yaml += "---\nschema: olm.package\nname: " + name + "\ndefaultChannel: " + default_channel +
                "\n";
        return *this;
    }
    // Entries: "name[<replaces][!skip1,skip2][~skipRange]", e.g. "a.v3<a.v2!a.v1~>=1.0.0 <3.0.0".
    Cat& channel(const std::string& pkg, const std::string& name,
                 const std::vector<std::string>& entries) {
        yaml += "---\nschema: olm.channel\npackage: " + pkg + "\nname: " + name + "\nentries:\n";
        for (std::string e : entries) {
            std::string range, skips, replaces;
            if (auto t = e.find('~'); t != std::string::npos) {
                range = e.substr(t + 1);
                e.resize(t);
            }
            if (auto b = e.find('!'); b != std::string::npos) {
                skips = e.substr(b + 1);
                e.resize(b);
            }
            if (auto l = e.find('<'); l != std::string::npos) {
                replaces = e.substr(l + 1);
                e.resize(l);
            }
            yaml += "  - name: " + e + "\n";
            if (!replaces.empty()) yaml += "    replaces: " + replaces + "\n";
            if (!skips.empty()) yaml += "    skips: [" + skips + "]\n";
            if (!range.empty()) yaml += "    skipRange: \"" + range + "\"\n";
        }
        return *this;
    }
    // Properties: "gvk:g/v/K" (provides), "req:g/v/K" (olm.gvk.required), "pkg:name:range"
    // (olm.package.required), "label:x", "labelreq:x", "deprecated", "constraint:{json}".
    Cat& bundle(const std::string& pkg, const std::string& name, const std::string& version,
                const std::vector<std::string>& props = {}) {
        yaml += "---\nschema: olm.bundle\npackage: " + pkg + "\nname: " + name +
                "\nimage: example.com/" + name +
                ":latest\nproperties:\n  - type: olm.package\n    value: {packageName: " + pkg +
                ", version: \"" + version + "\"}\n";
        auto gvk = [](const std::string& s) {
            auto a = s.find('/'), b = s.rfind('/');
            return "{group: \"" + s.substr(0, a) + "\", version: \"" + s.substr(a + 1, b - a - 1) +
                   "\", kind: \"" + s.substr(b + 1) + "\"}";
        };
        for (const auto& p : props) {
            if (p.rfind("gvk:", 0) == 0) {
                yaml += "  - type: olm.gvk\n    value: " + gvk(p.substr(4)) + "\n";
            } else if (p.rfind("req:", 0) == 0) {
                yaml += "  - type: olm.gvk.required\n    value: " + gvk(p.substr(4)) + "\n";
            } else if (p.rfind("pkg:", 0) == 0) {
                auto rest = p.substr(4);
                auto c = rest.find(':');
                yaml += "  - type: olm.package.required\n    value: {packageName: " +
                        rest.substr(0, c) + ", versionRange: \"" + rest.substr(c + 1) + "\"}\n";
            } else if (p.rfind("labelreq:", 0) == 0) {
                yaml += "  - type: olm.label.required\n    value: {label: " + p.substr(9) + "}\n";
            } else if (p.rfind("label:", 0) == 0) {
                yaml += "  - type: olm.label\n    value: {label: " + p.substr(6) + "}\n";
            } else if (p == "deprecated") {
                yaml += "  - type: olm.deprecated\n    value: {}\n";
            } else if (p.rfind("constraint:", 0) == 0) {
                yaml += "  - type: olm.constraint\n    value: " + p.substr(11) + "\n";
            }
        }
        return *this;
    }
    // An olm.deprecations blob; entries: {schema, name ("" for the package), message}.
    Cat& deprecations(const std::string& pkg,
                      const std::vector<std::vector<std::string>>& entries) {
        yaml += "---\nschema: olm.deprecations\npackage: " + pkg + "\nentries:\n";
        for (const auto& e : entries) {
            yaml += "  - reference: {schema: " + e[0] +
                    (e[1].empty() ? std::string() : ", name: " + e[1]) + "}\n    message: \"" +
                    e[2] + "\"\n";
        }
        return *this;
    }
};

// Named catalogs loaded from a temporary directory.
struct World {
    TempDir dir;
    std::deque<model::Catalog> store;
    std::vector<resolve::CatalogSource> catalogs;

    World& add(const std::string& name, const Cat& c, int priority = 0) {
        auto path = dir.write(name + "/catalog.yaml", c.yaml);
        store.push_back(catalog::load_catalog(path.parent_path()).take());
        catalogs.push_back({name, &store.back(), priority});
        return *this;
    }

    Result<resolve::Resolution> run(const std::vector<std::string>& specs,
                                    const std::vector<resolve::Installed>& installed = {},
                                    resolve::Options opts = {}) {
        if (auto r = resolve::check_catalogs(catalogs); !r) return fail(r.error());
        resolve::Request req;
        for (const auto& s : specs) {
            auto sub = resolve::parse_subscription(s);
            if (!sub) return fail(sub.error());
            req.subscriptions.push_back(std::move(sub).take());
        }
        req.installed = installed;
        req.options = std::move(opts);
        return resolve::resolve(catalogs, req);
    }
};

// resolve::Options built by name: Opts().upgrade().one_hop().
struct Opts {
    resolve::Options o;
    Opts& upgrade() {
        o.upgrade = true;
        return *this;
    }
    Opts& one_hop() {
        o.one_hop = true;
        return *this;
    }
    Opts& exclude_deprecated() {
        o.exclude_deprecated = true;
        return *this;
    }
    Opts& starting_csv(const std::string& csv) {
        o.starting_csvs.push_back(csv);
        return *this;
    }
    operator resolve::Options() const { return o; }
};

inline resolve::Installed installed(const std::string& package, const std::string& name,
                                    const std::string& version, const std::string& catalog = {},
                                    const std::string& channel = {}) {
    resolve::Installed i;
    i.package = package;
    i.name = name;
    i.version = version;
    i.catalog = catalog;
    i.channel = channel;
    return i;
}

// The bundle selected for a package ("" when none).
inline std::string pick(const resolve::Resolution& r, const std::string& pkg) {
    for (const auto& s : r.selected)
        if (s.package == pkg) return s.bundle;
    return "";
}

// Bundle names selected, sorted by package.
inline std::vector<std::string> picks(const resolve::Resolution& r) {
    std::vector<std::string> out;
    for (const auto& s : r.selected)
        out.push_back(s.bundle);
    return out;
}

inline std::string explain(const resolve::Resolution& r) {
    return resolve::resolution_text(r);
}

} // namespace kpkg::test
