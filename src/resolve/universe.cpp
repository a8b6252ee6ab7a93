// Candidates with OLM's semantics: channel order (operator-lifecycle-manager
// pkg/controller/registry/resolver, sortChannel), the order of a subscription's candidates and of
// a dependency's (sortBundles, the catalog order of the operator cache), and the words that say
// why a bundle is not offered.
#include "universe.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "kpkg/core/text.hpp"
#include "kpkg/io/load.hpp"

namespace kpkg::resolve::detail {

namespace {

std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
    return (std::uint64_t{a} << 32) | b;
}

std::string q(std::string_view s) {
    return text::quote(s);
}

// At most `max` items, then "and N more".
void cap(std::vector<std::string>& lines, std::size_t max) {
    if (lines.size() <= max) return;
    std::size_t more = lines.size() - max;
    lines.resize(max);
    lines.push_back("and " + std::to_string(more) + " more");
}

} // namespace

std::string nearest(const std::string& name, const std::vector<std::string>& known) {
    std::string best;
    std::size_t best_d = static_cast<std::size_t>(-1);
    for (const auto& k : known) {
        std::size_t d = text::edit_distance(k, name);
        if (d < best_d || (d == best_d && k < best)) {
            best_d = d;
            best = k;
        }
    }
    return best;
}

Error unknown_name(const std::string& what, const std::string& name, std::vector<std::string> known,
                   const std::string& where) {
    std::sort(known.begin(), known.end());
    known.erase(std::unique(known.begin(), known.end()), known.end());
    std::string msg = "unknown " + what + " " + q(name) + where;
    std::string best = nearest(name, known);
    if (!best.empty()) msg += "; the nearest is " + q(best);
    Error e = Error::invalid(msg);
    if (known.empty()) {
        e.note("there are none");
    } else {
        std::string list;
        std::size_t shown = std::min<std::size_t>(known.size(), 20);
        for (std::size_t i = 0; i < shown; ++i)
            list += (i ? ", " : "") + known[i];
        if (shown < known.size()) list += ", ... (" + std::to_string(known.size()) + " in all)";
        e.note("known " + what + "s: " + list);
    }
    return e;
}

std::string Dep::words() const {
    switch (kind) {
    case DepKind::gvk:
        return gvk.words();
    case DepKind::package:
        return "package " + text::shown(package) + " in range " + text::shown(range_text);
    case DepKind::label:
        return "label " + text::shown(label);
    case DepKind::constraint:
        return constraint ? describe(*constraint) : key;
    }
    return key;
}

// --- Index
// ----------------------------------------------------------------------------------------

Index::Index(const std::vector<CatalogSource>& catalogs, bool exclude_deprecated)
    : catalogs_(catalogs), exclude_deprecated_(exclude_deprecated) {
    for (std::uint32_t i = 0; i < catalogs_.size(); ++i)
        order_.push_back(i);
    std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
        if (catalogs_[a].priority != catalogs_[b].priority)
            return catalogs_[a].priority > catalogs_[b].priority;
        return catalogs_[a].name < catalogs_[b].name;
    });
    channels_of_.resize(catalogs_.size());
    channels_of_packages_.resize(catalogs_.size());
    gvk_index_.resize(catalogs_.size());
    label_index_.resize(catalogs_.size());
    gvk_index_built_.assign(catalogs_.size(), false);
}

const ChannelOrder& Index::channel_order(std::uint32_t c, std::uint32_t channel) {
    auto key = pair_key(c, channel);
    if (auto it = orders_.find(key); it != orders_.end()) return it->second;
    const model::Catalog& cat = this->cat(c);
    const model::Channel& ch = cat.channels[channel];
    ChannelOrder o;

    // The entries OLM's cache would hold: those with a bundle.
    struct E {
        const model::Entry* e;
        std::uint32_t bundle;
    };
    std::vector<E> es;
    for (const auto& e : cat.entries_of(ch)) {
        std::uint32_t b = cat.find_bundle(ch.package, e.name);
        if (b != model::npos32) es.push_back({&e, b});
    }
    std::unordered_map<model::Str, std::size_t> lookup;
    for (std::size_t i = 0; i < es.size(); ++i)
        lookup[es[i].e->name] = i;
    std::vector<bool> replaced(es.size(), false);
    std::vector<long> replaces(es.size(), -1);
    std::unordered_set<model::Str> skipped;
    for (std::size_t i = 0; i < es.size(); ++i) {
        const model::Entry& e = *es[i].e;
        if (e.replaces != 0)
            if (auto it = lookup.find(e.replaces); it != lookup.end()) {
                replaced[it->second] = true;
                replaces[i] = static_cast<long>(it->second);
            }
        for (model::Str s : cat.skips_of(e))
            if (auto it = lookup.find(s); it != lookup.end()) {
                replaced[it->second] = true;
                skipped.insert(s);
                o.skipped_by.emplace(s, e.name);
            }
    }
    std::string where = "channel " + q(cat.str(ch.name)) + " of package " + q(cat.str(ch.package)) +
                        " (catalog " + q(catalogs_[c].name) + ")";
    auto failed = [&](std::string msg) -> const ChannelOrder& {
        o.ok = false;
        o.error = Error::invalid(std::move(msg), cat.source_pos(ch.pos));
        return orders_.emplace(key, std::move(o)).first->second;
    };
    std::vector<std::size_t> heads;
    for (std::size_t i = 0; i < es.size(); ++i)
        if (!replaced[i]) heads.push_back(i);
    if (heads.empty() && !es.empty())
        return failed(where + " has no head: every entry is replaced or skipped by another one, "
                              "so its replaces form a cycle");
    std::vector<std::vector<std::size_t>> chains;
    for (std::size_t h : heads) {
        std::vector<std::size_t> chain;
        std::vector<std::string> walk;
        std::unordered_set<std::size_t> visited;
        for (std::size_t cur = h;;) {
            visited.insert(cur);
            walk.push_back(cat.string(es[cur].e->name));
            if (!skipped.count(es[cur].e->name)) chain.push_back(cur);
            long next = replaces[cur];
            if (next < 0) break;
            if (visited.count(static_cast<std::size_t>(next))) {
                walk.push_back(cat.string(es[static_cast<std::size_t>(next)].e->name));
                return failed(where + " has a replaces cycle: " + text::join(walk, " -> "));
            }
            cur = static_cast<std::size_t>(next);
        }
        chains.push_back(std::move(chain));
    }
    if (chains.size() > 1) {
        std::vector<std::string> names;
        for (const auto& chain : chains) {
            if (chain.empty())
                names.push_back("[]");
            else if (chain.size() == 1)
                names.push_back(cat.string(es[chain.front()].e->name));
            else
                names.push_back(cat.string(es[chain.front()].e->name) + "..." +
                                cat.string(es[chain.back()].e->name));
        }
        std::sort(names.begin(), names.end());
        return failed(where + " has " + std::to_string(chains.size()) +
                      " heads, so no single replaces chain orders it (OLM requires one): " +
                      text::join(names, ", "));
    }
    if (!chains.empty()) {
        o.head = cat.string(es[heads.front()].e->name);
        for (std::size_t i : chains.front())
            o.bundles.push_back(es[i].bundle);
        for (std::size_t i : chains.front())
            o.entries.push_back(static_cast<std::uint32_t>(es[i].e - cat.entries.data()));
    }
    return orders_.emplace(key, std::move(o)).first->second;
}

const std::vector<std::uint32_t>& Index::channels_of(std::uint32_t c, std::uint32_t b) {
    const model::Catalog& cat = this->cat(c);
    model::Str pkg = cat.bundles[b].package;
    if (channels_of_packages_[c].insert(pkg).second) {
        // The channels of the bundle's package, once for all its bundles.
        auto it = cat.by_package().find(pkg);
        if (it != cat.by_package().end())
            for (std::uint32_t ch : it->second.channels)
                for (const auto& e : cat.entries_of(cat.channels[ch])) {
                    std::uint32_t bi = cat.find_bundle(pkg, e.name);
                    if (bi == model::npos32) continue;
                    auto& v = channels_of_[c][bi];
                    if (v.empty() || v.back() != ch) v.push_back(ch);
                }
    }
    static const std::vector<std::uint32_t> empty;
    auto it = channels_of_[c].find(b);
    return it == channels_of_[c].end() ? empty : it->second;
}

model::Str Index::default_channel(std::uint32_t c, model::Str package) const {
    const model::Catalog& cat = this->cat(c);
    auto it = cat.by_package().find(package);
    if (it == cat.by_package().end() || it->second.package == model::npos32) return 0;
    return cat.packages[it->second.package].default_channel;
}

std::string Index::deprecation(std::uint32_t c, model::Str package, model::Str schema,
                               model::Str name) const {
    if (schema == 0) return {}; // no blob of the catalog names that schema
    const model::Catalog& cat = this->cat(c);
    auto it = cat.by_package().find(package);
    if (it == cat.by_package().end() || it->second.deprecation == model::npos32) return {};
    for (const auto& e : cat.entries_of(cat.deprecations[it->second.deprecation]))
        if (e.schema == schema && e.name == name) return cat.string(e.message);
    return {};
}

std::uint32_t Index::info_id(std::uint32_t c, std::uint32_t b) {
    auto key = pair_key(c, b);
    if (auto it = info_ids_.find(key); it != info_ids_.end()) return it->second;
    const model::Catalog& cat = this->cat(c);
    const model::Bundle& bu = cat.bundles[b];
    BundleInfo bi;
    bi.catalog = c;
    bi.bundle = b;
    bi.package = cat.string(bu.package);
    bi.name = cat.string(bu.name);
    bi.image = cat.string(bu.image);
    bi.version_text = cat.string(bu.version);
    if (auto v = semver::Version::parse(bi.version_text)) bi.version = std::move(v).take();
    SourcePos where = cat.source_pos(bu.pos);
    std::string who = "bundle " + q(bi.name) + " (catalog " + q(catalogs_[c].name) + ")";
    for (const auto& p : cat.properties_of(bu)) {
        switch (p.kind) {
        case model::PropKind::gvk:
            bi.provides.push_back({cat.string(p.a), cat.string(p.b), cat.string(p.c)});
            break;
        case model::PropKind::label:
            bi.labels.push_back(cat.string(p.a));
            break;
        case model::PropKind::deprecated:
            bi.legacy_deprecated = true;
            break;
        case model::PropKind::gvk_required: {
            Dep d;
            d.kind = DepKind::gvk;
            d.gvk = {cat.string(p.a), cat.string(p.b), cat.string(p.c)};
            d.key = "gvk|" + d.gvk.str();
            bi.deps.push_back(intern(std::move(d)));
            break;
        }
        case model::PropKind::package_required: {
            Dep d;
            d.kind = DepKind::package;
            d.package = cat.string(p.a);
            d.range_text = cat.string(p.b);
            auto r = semver::Range::parse(d.range_text);
            if (!r) {
                if (bi.deps_ok)
                    bi.deps_error = Error::invalid(who + ": olm.package.required of package " +
                                                       q(d.package) + ": " + r.error().message,
                                                   where);
                bi.deps_ok = false;
                break;
            }
            d.range = std::move(r).take();
            d.key = "package|" + d.package + "|" + d.range_text;
            bi.deps.push_back(intern(std::move(d)));
            break;
        }
        case model::PropKind::label_required: {
            Dep d;
            d.kind = DepKind::label;
            d.label = cat.string(p.a);
            d.key = "label|" + d.label;
            bi.deps.push_back(intern(std::move(d)));
            break;
        }
        case model::PropKind::constraint: {
            std::string json = cat.string(p.json);
            // The same constraint on many bundles (every version of an operator, say) is parsed
            // and its rule compiled once.
            if (auto it = dep_ids_.find("constraint|" + json); it != dep_ids_.end()) {
                bi.deps.push_back(it->second);
                break;
            }
            auto c = parse_constraint(json, where, &rules_);
            if (!c) {
                if (bi.deps_ok) {
                    // The constraint's own error (with the rule and a caret under the column),
                    // about this bundle.
                    bi.deps_error = c.error();
                    bi.deps_error.message = who + ": " + bi.deps_error.message;
                    if (bi.deps_error.pos.empty()) bi.deps_error.pos = where;
                }
                bi.deps_ok = false;
                break;
            }
            Dep d;
            d.kind = DepKind::constraint;
            d.constraint = std::make_shared<const Constraint>(std::move(c).take());
            d.key = "constraint|" + json;
            bi.deps.push_back(intern(std::move(d)));
            break;
        }
        default:
            break;
        }
    }
    bi.deprecated = deprecation(c, bu.package, cat.strings.find("olm.bundle").value_or(0), bu.name);
    auto id = static_cast<std::uint32_t>(infos_.size());
    infos_.push_back(std::move(bi));
    info_ids_.emplace(key, id);
    return id;
}

BundleInfo& Index::info(std::uint32_t c, std::uint32_t b) {
    return infos_[info_id(c, b)];
}

std::uint32_t Index::add_unknown(const std::string& package, const std::string& name,
                                 const std::string& version) {
    BundleInfo bi;
    bi.package = package;
    bi.name = name;
    bi.version_text = version;
    if (auto v = semver::Version::parse(version)) bi.version = std::move(v).take();
    auto id = static_cast<std::uint32_t>(infos_.size());
    infos_.push_back(std::move(bi));
    return id;
}

std::uint32_t Index::intern(Dep d) {
    if (auto it = dep_ids_.find(d.key); it != dep_ids_.end()) return it->second;
    auto id = static_cast<std::uint32_t>(deps_.size());
    dep_ids_.emplace(d.key, id);
    deps_.push_back(std::move(d));
    return id;
}

bool Index::satisfies(const Dep& d, BundleInfo& b) {
    switch (d.kind) {
    case DepKind::gvk:
        return std::find(b.provides.begin(), b.provides.end(), d.gvk) != b.provides.end();
    case DepKind::package:
        return b.package == d.package && b.version && d.range.contains(*b.version);
    case DepKind::label:
        return std::find(b.labels.begin(), b.labels.end(), d.label) != b.labels.end();
    case DepKind::constraint:
        if (!b.properties_built) {
            b.properties_built = true;
            if (b.catalog != none) {
                const model::Catalog& cat = this->cat(b.catalog);
                b.properties = constraint_properties(cat, cat.bundles[b.bundle]);
            } else {
                // An installed CSV no catalog has: only its package and version are known.
                io::Node v = io::Node::map();
                v.set("packageName", io::Node::string(b.package));
                v.set("version", io::Node::string(b.version_text));
                b.properties.push_back({"olm.package", std::move(v)});
            }
        }
        return model::satisfies(*d.constraint, b.properties);
    }
    return false;
}

void Index::build_gvk_index(std::uint32_t c) {
    if (gvk_index_built_[c]) return;
    gvk_index_built_[c] = true;
    const model::Catalog& cat = this->cat(c);
    for (std::uint32_t b = 0; b < cat.bundles.size(); ++b)
        for (const auto& p : cat.properties_of(cat.bundles[b])) {
            if (p.kind == model::PropKind::gvk) {
                auto& v = gvk_index_[c][{p.a, p.b, p.c}];
                if (v.empty() || v.back() != b) v.push_back(b);
            } else if (p.kind == model::PropKind::label) {
                auto& v = label_index_[c][p.a];
                if (v.empty() || v.back() != b) v.push_back(b);
            }
        }
}

const std::vector<std::uint32_t>& Index::satisfying(std::uint32_t c, std::uint32_t d) {
    auto key = pair_key(c, d);
    if (auto it = satisfying_.find(key); it != satisfying_.end()) return it->second;
    const Dep& dep = deps_[d];
    const model::Catalog& cat = this->cat(c);
    std::vector<std::uint32_t> out;
    switch (dep.kind) {
    case DepKind::gvk: {
        build_gvk_index(c);
        auto g = cat.strings.find(dep.gvk.group);
        auto v = cat.strings.find(dep.gvk.version);
        auto k = cat.strings.find(dep.gvk.kind);
        if (!g || !v || !k) break; // a name the catalog never mentions
        auto it = gvk_index_[c].find({*g, *v, *k});
        if (it != gvk_index_[c].end()) out = it->second;
        break;
    }
    case DepKind::label: {
        build_gvk_index(c);
        auto l = cat.strings.find(dep.label);
        if (!l) break;
        auto it = label_index_[c].find(*l);
        if (it != label_index_[c].end()) out = it->second;
        break;
    }
    case DepKind::package:
        if (const auto* pi = cat.package_info(dep.package))
            for (std::uint32_t b : pi->bundles)
                if (satisfies(dep, info(c, b))) out.push_back(b);
        break;
    case DepKind::constraint:
        for (std::uint32_t b = 0; b < cat.bundles.size(); ++b)
            if (satisfies(dep, info(c, b))) out.push_back(b);
        break;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return satisfying_.emplace(key, std::move(out)).first->second;
}

std::string Index::not_offered(std::uint32_t c, std::uint32_t channel, std::uint32_t b) {
    const model::Catalog& cat = this->cat(c);
    const ChannelOrder& o = channel_order(c, channel);
    std::string ch = "channel " + cat.string(cat.channels[channel].name);
    if (!o.ok) return "in " + ch + ", which cannot be ordered";
    if (std::find(o.bundles.begin(), o.bundles.end(), b) != o.bundles.end()) return {};
    model::Str name = cat.bundles[b].name;
    if (auto it = o.skipped_by.find(name); it != o.skipped_by.end())
        return "skipped in " + ch + " (" + cat.string(it->second) + " skips it)";
    return "not on the replaces chain from the head " + o.head + " of " + ch;
}

// --- Universe
// --------------------------------------------------------------------------------------

Universe::Universe(Index& index, std::vector<InstalledState> installed)
    : index_(index), installed_(std::move(installed)) {
    var_ids_.resize(index_.catalogs().size());
    for (std::uint32_t i = 0; i < installed_.size(); ++i) {
        Var v;
        v.info = installed_[i].info;
        v.installed = i;
        installed_vars_.push_back(static_cast<VarId>(vars_.size()));
        vars_.push_back(std::move(v));
    }
}

VarId Universe::var_of(std::uint32_t c, std::uint32_t channel, std::uint32_t bundle) {
    auto [it, fresh] =
        var_ids_[c].try_emplace(pair_key(channel, bundle), static_cast<VarId>(vars_.size()));
    if (!fresh) return it->second;
    VarId id = it->second;
    Var v;
    v.info = index_.info_id(c, bundle);
    v.catalog = c;
    v.channel = channel;
    const BundleInfo& bi = index_.info_at(v.info);
    v.prohibited = bi.legacy_deprecated;
    if (index_.exclude_deprecated()) {
        const model::Catalog& cat = index_.cat(c);
        const model::Bundle& bu = cat.bundles[bundle];
        const model::Channel& ch = cat.channels[channel];
        auto id_of = [&](std::string_view s) { return cat.strings.find(s).value_or(0); };
        std::string m;
        if (!(m = index_.deprecation(c, bu.package, id_of("olm.package"), 0)).empty())
            v.excluded = "package " + cat.string(bu.package) + " is deprecated: " + m;
        else if (!(m = index_.deprecation(c, bu.package, id_of("olm.channel"), ch.name)).empty())
            v.excluded = "channel " + cat.string(ch.name) + " is deprecated: " + m;
        else if (!bi.deprecated.empty())
            v.excluded = "deprecated: " + bi.deprecated;
    }
    vars_.push_back(std::move(v));
    return id;
}

std::string Universe::catalog_name(VarId v) const {
    const Var& x = vars_[v];
    return x.catalog == none ? std::string("installed") : index_.catalogs()[x.catalog].name;
}

std::string Universe::channel_name(VarId v) const {
    const Var& x = vars_[v];
    if (x.catalog == none) return installed_[x.installed].csv.channel;
    const model::Catalog& cat = index_.cat(x.catalog);
    return cat.string(cat.channels[x.channel].name);
}

std::string Universe::label(VarId v) {
    const BundleInfo& bi = info(v);
    std::string s = bi.name + " (" + bi.package;
    if (!bi.version_text.empty()) s += " " + bi.version_text;
    if (vars_[v].catalog == none)
        s += ", installed)";
    else
        s += ", channel " + channel_name(v) + ", catalog " + catalog_name(v) + ")";
    return s;
}

std::vector<std::uint32_t> Universe::catalog_order(std::uint32_t preferred) const {
    std::vector<std::uint32_t> out;
    if (preferred != none) out.push_back(preferred);
    for (std::uint32_t c : index_.order())
        if (c != preferred) out.push_back(c);
    return out;
}

std::uint32_t Universe::catalog_named(const std::string& name) const {
    for (std::uint32_t c = 0; c < index_.catalogs().size(); ++c)
        if (index_.catalogs()[c].name == name) return c;
    return none;
}

Result<void> Universe::check(const Subscription& s) const {
    // A request naming its catalog (spec.source) looks in that catalog only.
    std::uint32_t only = none;
    if (!s.source.empty()) {
        only = catalog_named(s.source);
        if (only == none) {
            std::vector<std::string> names;
            for (const auto& c : index_.catalogs())
                names.push_back(c.name);
            return fail(unknown_name("catalog", s.source, names, " in request " + q(s.spec)));
        }
    }
    auto skip = [&](std::uint32_t c) { return only != none && c != only; };
    // The lists of names are only gathered for the error.
    auto all_packages = [&] {
        std::vector<std::string> packages;
        for (std::uint32_t c = 0; c < index_.catalogs().size(); ++c) {
            if (skip(c)) continue;
            const model::Catalog& cat = index_.cat(c);
            for (const auto& [name, pi] : cat.by_package())
                if (pi.package != model::npos32 || !pi.channels.empty())
                    packages.push_back(cat.string(name));
        }
        return packages;
    };
    std::vector<std::string> channels, bundles;
    bool found = false, channel_found = s.channel.empty(), csv_found = s.starting_csv.empty();
    for (std::uint32_t c = 0; c < index_.catalogs().size(); ++c) {
        if (skip(c)) continue;
        const model::Catalog& cat = index_.cat(c);
        const auto* pi = cat.package_info(s.package);
        if (pi == nullptr) continue;
        found = true;
        for (std::uint32_t ch : pi->channels) {
            const model::Channel& chan = cat.channels[ch];
            channels.push_back(cat.string(chan.name));
            bool in_channel = s.channel.empty() || cat.str(chan.name) == s.channel;
            if (!in_channel) continue;
            channel_found = true;
            for (const auto& e : cat.entries_of(chan)) {
                bundles.push_back(cat.string(e.name));
                if (cat.str(e.name) == s.starting_csv) csv_found = true;
            }
        }
    }
    if (!found && only != none) {
        std::vector<std::string> elsewhere;
        for (std::uint32_t c : index_.order())
            if (index_.cat(c).package_info(s.package) != nullptr)
                elsewhere.push_back(index_.catalogs()[c].name);
        if (!elsewhere.empty())
            return fail(Error::invalid("request " + q(s.spec) + ": catalog " + q(s.source) +
                                       " has no package " + q(s.package) +
                                       " (catalogs with it: " + text::join(elsewhere, ", ") + ")"));
    }
    if (!found)
        return fail(unknown_name("package", s.package, all_packages(),
                                 only == none ? "" : " in catalog " + q(s.source)));
    if (!channel_found)
        return fail(unknown_name("channel", s.channel, channels, " of package " + q(s.package)));
    if (!csv_found)
        return fail(unknown_name("starting CSV", s.starting_csv, bundles,
                                 " in package " + q(s.package) +
                                     (s.channel.empty() ? "" : ", channel " + q(s.channel))));
    return {};
}

Result<Offer> Universe::offer(const Subscription& s, std::uint32_t current, bool with_notes) {
    Offer out;
    const InstalledState* cur = current == none ? nullptr : &installed_[current];
    std::vector<std::uint32_t> cats;
    if (!s.source.empty()) {
        // The subscription's own catalog, even for an installed CSV from another one.
        if (std::uint32_t c = catalog_named(s.source); c != none) cats.push_back(c);
    } else if (cur != nullptr && !cur->csv.catalog.empty()) {
        for (std::uint32_t c = 0; c < index_.catalogs().size(); ++c)
            if (index_.catalogs()[c].name == cur->csv.catalog) cats.push_back(c);
    } else {
        cats = index_.order();
    }
    std::optional<semver::Version> cur_version;
    if (cur != nullptr)
        if (auto v = semver::Version::parse(cur->csv.version)) cur_version = std::move(v).take();
    std::vector<std::string> notes;
    for (std::uint32_t c : cats) {
        const model::Catalog& cat = index_.cat(c);
        const auto* pi = cat.package_info(s.package);
        if (pi == nullptr) continue;
        model::Str def = index_.default_channel(c, cat.strings.find(s.package).value_or(0));
        std::vector<std::uint32_t> chans;
        for (std::uint32_t ch : pi->channels)
            if (s.channel.empty() || cat.str(cat.channels[ch].name) == s.channel)
                chans.push_back(ch);
        std::stable_sort(chans.begin(), chans.end(), [&](std::uint32_t a, std::uint32_t b) {
            bool da = cat.channels[a].name == def, db = cat.channels[b].name == def;
            if (da != db) return da;
            return cat.str(cat.channels[a].name) < cat.str(cat.channels[b].name);
        });
        for (std::uint32_t ch : chans) {
            const model::Channel& chan = cat.channels[ch];
            std::string chname = cat.string(chan.name);
            std::vector<std::pair<std::uint32_t, std::uint32_t>> offered; // bundle, entry
            if (!s.starting_csv.empty() && cur == nullptr) {
                // OLM filters by the starting CSV before ordering: the entry is offered even
                // when the channel skips it.
                for (const auto& e : cat.entries_of(chan))
                    if (cat.str(e.name) == s.starting_csv) {
                        std::uint32_t b = cat.find_bundle(chan.package, e.name);
                        if (b != model::npos32)
                            offered.emplace_back(
                                b, static_cast<std::uint32_t>(&e - cat.entries.data()));
                        break;
                    }
            } else {
                const ChannelOrder& o = index_.channel_order(c, ch);
                if (!o.ok) return fail(o.error);
                for (std::size_t i = 0; i < o.bundles.size(); ++i)
                    offered.emplace_back(o.bundles[i], o.entries[i]);
                if (with_notes)
                    for (const auto& e : cat.entries_of(chan)) {
                        std::uint32_t b = cat.find_bundle(chan.package, e.name);
                        if (b == model::npos32) continue;
                        // Only what the request would otherwise take.
                        const BundleInfo& bi = index_.info(c, b);
                        if (s.range && !(bi.version && s.range->contains(*bi.version))) continue;
                        std::string why = index_.not_offered(c, ch, b);
                        if (!why.empty()) notes.push_back(cat.string(e.name) + " is " + why);
                    }
            }
            for (auto [b, ei] : offered) {
                const BundleInfo& bi = index_.info(c, b);
                if (s.range && !(bi.version && s.range->contains(*bi.version))) {
                    if (with_notes)
                        notes.push_back(bi.name + " (" +
                                        (bi.version_text.empty() ? "no version" : bi.version_text) +
                                        ") is outside the range " + s.range_text);
                    continue;
                }
                if (cur != nullptr) {
                    const model::Entry& e = cat.entries[ei];
                    // (An installed CSV known only by its version has no name to replace.)
                    const std::string& n = cur->csv.name;
                    bool edge = !n.empty() && cat.str(e.replaces) == n;
                    for (model::Str sk : cat.skips_of(e))
                        if (!n.empty() && cat.str(sk) == n) edge = true;
                    if (!edge && e.skip_range != 0 && cur_version) {
                        auto r = semver::Range::parse(cat.str(e.skip_range));
                        if (r && r->contains(*cur_version)) edge = true;
                    }
                    if (!edge) {
                        if (with_notes && bi.name != cur->csv.name)
                            notes.push_back(bi.name + " in channel " + chname +
                                            " does not replace or skip " + cur->csv.name +
                                            (e.skip_range != 0
                                                 ? " and its skipRange " +
                                                       cat.string(e.skip_range) +
                                                       " does not cover " + cur->csv.version
                                                 : ""));
                        continue;
                    }
                }
                out.vars.push_back(var_of(c, ch, b));
            }
        }
    }
    if (cur != nullptr) {
        // Staying put is the last candidate, if the request's range allows it.
        if (s.range && !(cur_version && s.range->contains(*cur_version))) {
            if (with_notes)
                notes.push_back("installed " + cur->csv.name + " (" + cur->csv.version +
                                ") is outside the range " + s.range_text);
        } else {
            out.vars.push_back(installed_vars_[current]);
        }
    }
    if (with_notes) {
        std::sort(notes.begin(), notes.end());
        notes.erase(std::unique(notes.begin(), notes.end()), notes.end());
        cap(notes, 8);
        out.left_out = std::move(notes);
    }
    return out;
}

Result<std::uint32_t> Universe::candidates(std::uint32_t preferred, std::uint32_t dep) {
    auto key = std::make_pair(preferred, dep);
    if (auto it = list_ids_.find(key); it != list_ids_.end()) return it->second;
    CandidateList list;
    list.dep = dep;
    list.preferred = preferred;
    const Dep& d = index_.dep(dep);
    // Installed operators first (OLM's "existing" catalog sorts before every other).
    for (std::uint32_t i = 0; i < installed_.size(); ++i)
        if (index_.satisfies(d, index_.info_at(installed_[i].info)))
            list.vars.push_back(installed_vars_[i]);
    for (std::uint32_t c : catalog_order(preferred)) {
        const auto& sat = index_.satisfying(c, dep);
        if (sat.empty()) continue;
        const model::Catalog& cat = index_.cat(c);
        // Every channel with at least one bundle satisfying the dependency, in OLM's order:
        // default channels first, then by package name, then by channel name.
        std::vector<std::uint32_t> groups;
        for (std::uint32_t b : sat)
            for (std::uint32_t ch : index_.channels_of(c, b))
                groups.push_back(ch);
        std::sort(groups.begin(), groups.end());
        groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
        auto is_default = [&](std::uint32_t ch) {
            return cat.channels[ch].name != 0 &&
                   cat.channels[ch].name == index_.default_channel(c, cat.channels[ch].package);
        };
        std::sort(groups.begin(), groups.end(), [&](std::uint32_t a, std::uint32_t b) {
            bool da = is_default(a), db = is_default(b);
            if (da != db) return da;
            const auto& ca = cat.channels[a];
            const auto& cb = cat.channels[b];
            if (ca.package != cb.package) return cat.str(ca.package) < cat.str(cb.package);
            if (ca.name != cb.name) return cat.str(ca.name) < cat.str(cb.name);
            return a < b;
        });
        for (std::uint32_t ch : groups) {
            const ChannelOrder& o = index_.channel_order(c, ch);
            if (!o.ok) return fail(o.error);
            for (std::uint32_t b : o.bundles)
                if (std::binary_search(sat.begin(), sat.end(), b))
                    list.vars.push_back(var_of(c, ch, b));
        }
    }
    auto id = static_cast<std::uint32_t>(lists_.size());
    lists_.push_back(std::move(list));
    list_ids_.emplace(key, id);
    return id;
}

Result<void> Universe::expand(VarId v) {
    if (vars_[v].expanded) return {};
    const BundleInfo& bi = index_.info_at(vars_[v].info);
    if (!bi.deps_ok) return fail(bi.deps_error);
    std::vector<std::uint32_t> deps = bi.deps;
    std::uint32_t preferred = vars_[v].catalog;
    std::vector<std::uint32_t> lists;
    for (std::uint32_t d : deps) {
        auto l = candidates(preferred, d);
        if (!l) return fail(std::move(l).error());
        lists.push_back(*l);
    }
    vars_[v].lists = std::move(lists);
    vars_[v].expanded = true;
    return {};
}

Result<void> Universe::close(const std::vector<VarId>& roots, std::vector<VarId>& out,
                             std::unordered_set<VarId>& seen, std::size_t limit) {
    std::vector<VarId> stack(roots.rbegin(), roots.rend());
    while (!stack.empty()) {
        VarId v = stack.back();
        stack.pop_back();
        if (!seen.insert(v).second) {
            if (vars_[v].broken) return fail(vars_[v].error);
            continue;
        }
        out.push_back(v);
        if (!vars_[v].usable()) continue;
        if (auto r = expand(v); !r) {
            vars_[v].broken = true;
            vars_[v].error = r.error();
            return r;
        }
        for (std::uint32_t l : vars_[v].lists) {
            const auto& vars = lists_[l].vars;
            std::vector<VarId> take;
            for (VarId w : vars) {
                if (take.size() == limit) break;
                if (vars_[w].usable()) take.push_back(w);
            }
            for (auto it = take.rbegin(); it != take.rend(); ++it)
                if (!seen.count(*it)) stack.push_back(*it);
        }
    }
    return {};
}

std::vector<std::string> Universe::near_misses(std::uint32_t l) {
    std::vector<std::string> out;
    const CandidateList& list = lists_[l];
    const Dep& d = index_.dep(list.dep);
    for (VarId v : list.vars) {
        const Var& x = vars_[v];
        if (x.prohibited)
            out.push_back(label(v) + " is deprecated (olm.deprecated property): OLM never "
                                     "installs it");
        else if (!x.excluded.empty())
            out.push_back(label(v) + " is left out by --exclude-deprecated: " + x.excluded);
    }
    bool any = !list.vars.empty();
    for (std::uint32_t c : catalog_order(list.preferred)) {
        for (std::uint32_t b : index_.satisfying(c, list.dep)) {
            any = true;
            const BundleInfo& bi = index_.info(c, b);
            std::string who = bi.name + " (" + bi.package +
                              (bi.version_text.empty() ? "" : " " + bi.version_text) +
                              ", catalog " + index_.catalogs()[c].name + ")";
            const auto& chans = index_.channels_of(c, b);
            if (chans.empty()) out.push_back(who + " satisfies it but is in no channel");
            for (std::uint32_t ch : chans) {
                std::string why = index_.not_offered(c, ch, b);
                if (!why.empty()) out.push_back(who + " satisfies it but is " + why);
            }
        }
    }
    if (!any) {
        switch (d.kind) {
        case DepKind::package: {
            std::vector<std::string> versions;
            std::vector<semver::Version> parsed;
            bool known = false;
            for (std::uint32_t c : index_.order()) {
                const model::Catalog& cat = index_.cat(c);
                const auto* pi = cat.package_info(d.package);
                if (pi == nullptr) continue;
                known = true;
                for (std::uint32_t b : pi->bundles) {
                    const BundleInfo& bi = index_.info(c, b);
                    if (bi.version) parsed.push_back(*bi.version);
                }
            }
            if (!known) {
                std::vector<std::string> names;
                for (std::uint32_t c : index_.order())
                    for (const auto& [name, pi] : index_.cat(c).by_package())
                        names.push_back(index_.cat(c).string(name));
                std::string best = nearest(d.package, names);
                out.push_back("no catalog has a package " + d.package +
                              (best.empty() ? std::string() : " (the nearest is " + best + ")"));
                break;
            }
            std::sort(parsed.begin(), parsed.end(),
                      [](const auto& a, const auto& b) { return semver::compare(a, b) > 0; });
            for (const auto& v : parsed) {
                std::string s = v.str();
                if (versions.empty() || versions.back() != s) versions.push_back(s);
            }
            cap(versions, 8);
            out.push_back("no bundle of package " + d.package + " has a version in range " +
                          d.range_text + " (versions: " + text::join(versions, ", ") + ")");
            break;
        }
        case DepKind::gvk:
            out.push_back("no bundle in any catalog provides " + d.gvk.words());
            break;
        case DepKind::label:
            out.push_back("no bundle in any catalog has the label " + text::shown(d.label));
            break;
        case DepKind::constraint:
            out.push_back("no bundle in any catalog satisfies it" +
                          (d.constraint && !d.constraint->failure_message.empty()
                               ? ": " + text::shown(d.constraint->failure_message)
                               : std::string()));
            break;
        }
    }
    std::vector<std::string> dedup;
    std::set<std::string> seen;
    for (auto& s : out)
        if (seen.insert(s).second) dedup.push_back(std::move(s));
    cap(dedup, 8);
    return dedup;
}

} // namespace kpkg::resolve::detail
