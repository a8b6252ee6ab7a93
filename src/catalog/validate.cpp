// Catalog validation: opm's load, model-conversion and model checks, all findings in one run.
//
// Rule names: package.name, package.duplicate, package.default-channel, package.no-channels,
// package.duplicate-version, channel.unknown-package, channel.duplicate, channel.duplicate-entry,
// channel.missing-bundle, channel.head, channel.cycle, channel.stranded, bundle.unknown-package,
// bundle.duplicate, bundle.olm-package, bundle.version, bundle.no-channel, bundle.skip,
// bundle.skip-range, bundle.image, deprecation.*.
#include "kpkg/catalog/validate.hpp"

#include <algorithm>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "kpkg/core/semver.hpp"
#include "kpkg/core/text.hpp"

namespace kpkg::catalog {

namespace {

using text::quote;

std::string key(std::string_view a, std::string_view b) {
    std::string k;
    k.reserve(a.size() + b.size() + 1);
    k.append(a);
    k.push_back('\0');
    k.append(b);
    return k;
}

// A DNS-1123 subdomain: lower-case alphanumerics, '-' and '.', starting and ending alphanumeric.
bool valid_package_name(const std::string& s) {
    if (s.empty() || s.size() > 253) return false;
    auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!alnum(s.front()) || !alnum(s.back())) return false;
    for (char c : s)
        if (!alnum(c) && c != '-' && c != '.') return false;
    return true;
}

struct ChannelInfo {
    const declcfg::Channel* ch = nullptr;
    // entry name -> entry (first occurrence wins, as a map keyed by name would keep one)
    std::unordered_map<std::string_view, const declcfg::ChannelEntry*> entries;
};

class Validator {
public:
    explicit Validator(const declcfg::DeclarativeConfig& cfg) : cfg_(cfg) {}

    std::vector<Finding> run() {
        packages();
        channels();
        bundles();
        for (auto& [_, ci] : chans_)
            channel_graph(ci);
        package_rules();
        deprecations();
        std::stable_sort(out_.begin(), out_.end(), [](const Finding& a, const Finding& b) {
            auto rank = [](const Finding& f) {
                return f.scope == Scope::catalog ? 0 : static_cast<int>(f.scope);
            };
            auto sub = [](const Finding& f) -> const std::string& {
                return f.scope == Scope::bundle ? f.bundle : f.channel;
            };
            return std::tuple(a.package, rank(a), sub(a), a.channel, a.pos.file, a.pos.line,
                              a.pos.column) < std::tuple(b.package, rank(b), sub(b), b.channel,
                                                         b.pos.file, b.pos.line, b.pos.column);
        });
        return std::move(out_);
    }

private:
    void add(Scope s, const char* rule, std::string pkg, std::string ch, std::string b,
             std::string msg, const SourcePos& pos) {
        out_.push_back({s, rule, std::move(pkg), std::move(ch), std::move(b), std::move(msg), pos});
    }

    void packages() {
        for (const auto& p : cfg_.packages) {
            if (p.name.empty())
                add(Scope::package, "package.name", p.name, "", "",
                    "config contains package with no name", p.pos);
            else if (!valid_package_name(p.name))
                add(Scope::package, "package.name", p.name, "", "",
                    "invalid package name " + quote(p.name) +
                        ": must be a DNS-1123 subdomain (lower-case letters, digits, '-', '.')",
                    p.pos);
            if (!pkgs_.emplace(p.name, &p).second)
                add(Scope::package, "package.duplicate", p.name, "", "",
                    "duplicate package " + quote(p.name), p.pos);
        }
    }

    void channels() {
        for (const auto& c : cfg_.channels) {
            if (c.name.empty()) {
                add(Scope::channel, "channel.name", c.package, c.name, "",
                    "package " + quote(c.package) + " contains channel with no name", c.pos);
                continue;
            }
            if (!pkgs_.count(c.package)) {
                add(Scope::channel, "channel.unknown-package", c.package, c.name, "",
                    "unknown package " + quote(c.package) + " for channel " + quote(c.name), c.pos);
                continue;
            }
            auto [it, fresh] = chans_.try_emplace(key(c.package, c.name));
            if (!fresh) {
                add(Scope::channel, "channel.duplicate", c.package, c.name, "",
                    "package " + quote(c.package) + " contains duplicate channel " + quote(c.name),
                    c.pos);
                continue;
            }
            ++channel_count_[c.package];
            ChannelInfo& ci = it->second;
            ci.ch = &c;
            for (const auto& e : c.entries) {
                if (!ci.entries.emplace(e.name, &e).second)
                    add(Scope::channel, "channel.duplicate-entry", c.package, c.name, "",
                        "duplicate entry " + quote(e.name), e.pos.empty() ? c.pos : e.pos);
                in_channel_.insert(key(c.package, e.name));
            }
        }
    }

    void bundles() {
        std::unordered_map<std::string, std::unordered_map<std::string, std::vector<std::string>>>
            versions; // package -> version -> bundles
        for (const auto& b : cfg_.bundles) {
            const SourcePos& pos = b.pos;
            if (!pkgs_.count(b.package)) {
                add(Scope::bundle, "bundle.unknown-package", b.package, "", b.name,
                    "unknown package " + quote(b.package) + " for bundle " + quote(b.name), pos);
                continue;
            }
            if (!bundles_.emplace(key(b.package, b.name), &b).second) {
                add(Scope::bundle, "bundle.duplicate", b.package, "", b.name,
                    "package " + quote(b.package) + " has duplicate bundle " + quote(b.name), pos);
                continue;
            }
            auto bad = [&](const char* rule, std::string msg) {
                add(Scope::bundle, rule, b.package, "", b.name, std::move(msg), pos);
            };
            const declcfg::Property* pkg_prop = nullptr;
            int n = 0;
            bool has_object = false;
            for (const auto& p : b.properties) {
                if (p.type == "olm.package") {
                    ++n;
                    pkg_prop = &p;
                } else if (p.type == "olm.bundle.object") {
                    has_object = true;
                }
            }
            if (n != 1) {
                bad("bundle.olm-package",
                    "package " + quote(b.package) + " bundle " + quote(b.name) +
                        " must have exactly 1 \"olm.package\" property, found " +
                        std::to_string(n));
            } else {
                const io::Node* pn = pkg_prop->value.get("packageName");
                const io::Node* vn = pkg_prop->value.get("version");
                std::string pname = pn && pn->is_string() ? pn->text : "";
                if (pname != b.package)
                    bad("bundle.olm-package", "package " + quote(b.package) +
                                                  " does not match \"olm.package\" property " +
                                                  quote(pname));
                std::string v = vn && vn->is_string() ? vn->text : "";
                auto parsed = semver::Version::parse(v);
                if (!parsed)
                    bad("bundle.version", "error parsing bundle " + quote(b.name) + " version " +
                                              quote(v) + ": " + parsed.error().message);
                else
                    versions[b.package][parsed->str()].push_back(b.name);
            }
            if (b.image.empty() && !has_object)
                bad("bundle.image", "bundle image must be set");
            else if (b.image.find_first_of(" \t\r\n") != std::string::npos)
                bad("bundle.image", "invalid image reference " + quote(b.image));
            if (!in_channel_.count(key(b.package, b.name)))
                bad("bundle.no-channel", "package " + quote(b.package) + ", bundle " +
                                             quote(b.name) + " not found in any channel entries");
        }
        for (auto& [pkg, vs] : versions) {
            std::vector<std::string> dups;
            for (auto& [v, names] : vs)
                if (names.size() > 1) {
                    std::sort(names.begin(), names.end());
                    dups.push_back(v + ": [" + text::join(names, ", ") + "]");
                }
            if (dups.empty()) continue;
            std::sort(dups.begin(), dups.end());
            add(Scope::package, "package.duplicate-version", pkg, "", "",
                "duplicate versions found in bundles: {" + text::join(dups, ", ") + "}",
                pkgs_.at(pkg)->pos);
        }
    }

    void channel_graph(const ChannelInfo& ci) {
        const declcfg::Channel& c = *ci.ch;
        auto err = [&](const char* rule, std::string msg) {
            add(Scope::channel, rule, c.package, c.name, "", std::move(msg), c.pos);
        };
        if (c.entries.empty()) {
            err("channel.empty", "channel must contain at least one bundle");
            return;
        }
        std::unordered_set<std::string_view> referenced, skipped;
        for (const auto& [name, e] : ci.entries) {
            if (!bundles_.count(key(c.package, name)))
                add(Scope::channel, "channel.missing-bundle", c.package, c.name, "",
                    "no olm.bundle blob found in package " + quote(c.package) +
                        " for olm.channel entry " + quote(name),
                    e->pos.empty() ? c.pos : e->pos);
            if (!e->replaces.empty()) referenced.insert(e->replaces);
            for (std::size_t i = 0; i < e->skips.size(); ++i) {
                const auto& s = e->skips[i];
                referenced.insert(s);
                skipped.insert(s);
                if (s.empty())
                    add(Scope::bundle, "bundle.skip", c.package, c.name, e->name,
                        "skip[" + std::to_string(i) + "] is empty",
                        e->pos.empty() ? c.pos : e->pos);
            }
            // opm does not parse skipRange when validating (real catalogs carry ranges such as
            // "<v2.8.1" that blang rejects), so neither does kpkg.
        }
        std::vector<std::string> heads;
        for (const auto& [name, _] : ci.entries)
            if (!referenced.count(name)) heads.emplace_back(name);
        if (heads.empty()) {
            err("channel.head", "no channel head found in graph");
            return;
        }
        if (heads.size() > 1) {
            std::sort(heads.begin(), heads.end());
            err("channel.head",
                "multiple channel heads found in graph: " + text::join(heads, ", "));
            return;
        }
        // Walk the replaces chain from the head, stopping at a replaced entry that is skipped.
        std::vector<std::string> chain{heads.front()};
        // Keys view entry names and replaces fields of the loaded catalog, which outlive the walk.
        const declcfg::ChannelEntry* cur = ci.entries.at(chain.front());
        std::unordered_map<std::string_view, std::size_t> at{{cur->name, 0}};
        while (cur) {
            const std::string& r = cur->replaces;
            if (skipped.count(r)) break;
            if (auto it = at.find(r); it != at.end()) {
                std::vector<std::string> loop(chain.begin() + static_cast<long>(it->second),
                                              chain.end());
                loop.push_back(r);
                err("channel.cycle", "detected cycle in replaces chain of upgrade graph: " +
                                         text::join(loop, " -> "));
                return;
            }
            at.emplace(r, chain.size());
            chain.push_back(r);
            auto nx = ci.entries.find(r);
            cur = nx == ci.entries.end() ? nullptr : nx->second;
        }
        std::vector<std::string> stranded;
        for (const auto& [name, _] : ci.entries)
            if (!at.count(name) && !skipped.count(name)) stranded.emplace_back(name);
        if (!stranded.empty()) {
            std::sort(stranded.begin(), stranded.end());
            err("channel.stranded",
                "channel contains one or more stranded bundles: " + text::join(stranded, ", "));
        }
    }

    void package_rules() {
        for (const auto& p : cfg_.packages) {
            if (pkgs_.at(p.name) != &p) continue;
            if (channel_count_[p.name] == 0) {
                add(Scope::package, "package.no-channels", p.name, "", "",
                    "package must contain at least one channel", p.pos);
                continue;
            }
            if (p.default_channel.empty())
                add(Scope::package, "package.default-channel", p.name, "", "",
                    "default channel must be set", p.pos);
            else if (!chans_.count(key(p.name, p.default_channel)))
                add(Scope::package, "package.default-channel", p.name, "", "",
                    "default channel " + quote(p.default_channel) + " not found in channels list",
                    p.pos);
        }
    }

    void deprecations() {
        std::unordered_set<std::string> seen;
        for (const auto& o : cfg_.others) {
            if (o.schema != declcfg::schema_deprecations) continue;
            const io::Node& raw = o.raw;
            auto at = [&](const io::Node* n) {
                return n && n->mark.line ? io::pos_of(o.pos.file, n->mark, o.pos.document) : o.pos;
            };
            auto bad = [&](const char* rule, std::string msg, const SourcePos& pos) {
                add(Scope::deprecation, rule, o.package, "", "", std::move(msg), pos);
            };
            if (o.package.empty()) {
                bad("deprecation.package", "olm.deprecations: package must be set", o.pos);
                continue;
            }
            if (!pkgs_.count(o.package)) {
                bad("deprecation.package",
                    "olm.deprecations refers to unknown package " + quote(o.package), o.pos);
                continue;
            }
            if (!seen.insert(o.package).second) {
                bad("deprecation.duplicate",
                    "package " + quote(o.package) + " has more than one olm.deprecations blob",
                    o.pos);
                continue;
            }
            const io::Node* entries = raw.get("entries");
            if (!entries || !entries->is_seq()) {
                if (entries && !entries->is_null())
                    bad("deprecation.schema", "olm.deprecations: entries must be a list",
                        at(entries));
                continue;
            }
            std::unordered_set<std::string> refs;
            for (const auto& e : entries->items) {
                const io::Node* ref = e.get("reference");
                const io::Node* msg = e.get("message");
                const io::Node* sch = ref ? ref->get("schema") : nullptr;
                const io::Node* nm = ref ? ref->get("name") : nullptr;
                std::string schema = sch && sch->is_string() ? sch->text : "";
                std::string name = nm && nm->is_string() ? nm->text : "";
                if (!msg || !msg->is_string() || msg->text.empty())
                    bad("deprecation.message", "olm.deprecations entry: message must be set",
                        at(&e));
                if (!refs.insert(schema + '\0' + name).second) {
                    bad("deprecation.duplicate-reference",
                        "duplicate deprecation reference {schema: " + quote(schema) +
                            ", name: " + quote(name) + "}",
                        at(&e));
                    continue;
                }
                if (schema == declcfg::schema_package) {
                    if (!name.empty())
                        bad("deprecation.reference",
                            "olm.package reference must not have a name (found " + quote(name) +
                                ")",
                            at(nm));
                } else if (schema == declcfg::schema_channel) {
                    if (name.empty())
                        bad("deprecation.reference", "olm.channel reference must have a name",
                            at(ref));
                    else if (!chans_.count(key(o.package, name)))
                        bad("deprecation.reference",
                            "deprecated channel " + quote(name) + " not found in package " +
                                quote(o.package),
                            at(nm));
                } else if (schema == declcfg::schema_bundle) {
                    if (name.empty())
                        bad("deprecation.reference", "olm.bundle reference must have a name",
                            at(ref));
                    else if (!bundles_.count(key(o.package, name)))
                        bad("deprecation.reference",
                            "deprecated bundle " + quote(name) + " not found in package " +
                                quote(o.package),
                            at(nm));
                } else {
                    bad("deprecation.reference",
                        "unknown reference schema " + quote(schema) +
                            " (want olm.package, olm.channel or olm.bundle)",
                        at(sch ? sch : &e));
                }
            }
        }
    }

    const declcfg::DeclarativeConfig& cfg_;
    std::unordered_map<std::string, const declcfg::Package*> pkgs_;
    std::unordered_map<std::string, ChannelInfo> chans_;
    std::unordered_map<std::string, std::size_t> channel_count_;
    std::unordered_set<std::string> in_channel_;
    std::unordered_map<std::string, const declcfg::Bundle*> bundles_;
    std::vector<Finding> out_;
};

} // namespace

std::vector<Finding> validate(const declcfg::DeclarativeConfig& cfg) {
    return Validator(cfg).run();
}

namespace {

struct TreeNode {
    std::string label;
    std::vector<TreeNode> kids;
};

void draw(const TreeNode& n, const std::string& indent, bool last, std::string& out) {
    out += indent + (last ? "└── " : "├── ") + n.label + (n.kids.empty() ? "" : ":") + "\n";
    std::string next = indent + (last ? "    " : "│   ");
    for (std::size_t i = 0; i < n.kids.size(); ++i)
        draw(n.kids[i], next, i + 1 == n.kids.size(), out);
}

std::string line(const Finding& f) {
    std::string p = f.pos.str();
    return p.empty() ? f.message : p + ": " + f.message;
}

} // namespace

std::string format_tree(const std::vector<Finding>& findings) {
    if (findings.empty()) return {};
    TreeNode root{"invalid index", {}};
    // Findings arrive sorted by package then scope then sub-object, so groups are contiguous.
    TreeNode* pkg = nullptr;
    std::string cur_pkg;
    TreeNode* sub = nullptr;
    std::string cur_sub;
    for (const auto& f : findings) {
        if (f.scope == Scope::catalog && f.package.empty()) {
            root.kids.push_back({line(f), {}});
            pkg = nullptr;
            continue;
        }
        if (!pkg || f.package != cur_pkg) {
            root.kids.push_back({"invalid package " + quote(f.package), {}});
            pkg = &root.kids.back();
            cur_pkg = f.package;
            sub = nullptr;
        }
        std::string s;
        if (f.scope == Scope::channel)
            s = "invalid channel " + quote(f.channel);
        else if (f.scope == Scope::bundle)
            s = "invalid bundle " + quote(f.bundle) +
                (f.channel.empty() ? "" : " (channel " + quote(f.channel) + ")");
        else if (f.scope == Scope::deprecation)
            s = "invalid deprecations";
        if (s.empty()) {
            pkg->kids.push_back({line(f), {}});
            sub = nullptr;
            continue;
        }
        if (!sub || s != cur_sub) {
            pkg->kids.push_back({s, {}});
            sub = &pkg->kids.back();
            cur_sub = s;
        }
        sub->kids.push_back({line(f), {}});
    }
    std::string out = "invalid index:\n";
    for (std::size_t i = 0; i < root.kids.size(); ++i)
        draw(root.kids[i], "", i + 1 == root.kids.size(), out);
    return out;
}

} // namespace kpkg::catalog
