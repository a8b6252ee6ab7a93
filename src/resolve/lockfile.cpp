// Lockfiles: writing what a resolution selected, and reproducing it later.
#include "kpkg/resolve/lockfile.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "kpkg/core/text.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"
#include "nodes.hpp"
#include "round.hpp"

namespace kpkg::resolve {

using namespace detail;

namespace {

constexpr const char* lock_kind = "kpkg-resolve-lock";

std::string q(std::string_view s) {
    return text::quote(s);
}

std::vector<std::string> sorted_specs(const Request& r) {
    std::vector<std::string> v;
    for (const auto& s : r.subscriptions)
        v.push_back(s.spec);
    std::sort(v.begin(), v.end());
    return v;
}

std::vector<Installed> sorted_installed(std::vector<Installed> v) {
    for (auto& i : v)
        i.pos = {};
    std::sort(v.begin(), v.end(),
              [](const Installed& a, const Installed& b) { return a.package < b.package; });
    return v;
}

// Reading the lock: every field checked, every error with its position.
class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    SourcePos at(const io::Node& n) const { return io::pos_of(file_, n.mark); }

    Result<const io::Node*> field(const io::Node& map, const char* key, io::Kind kind,
                                  const std::string& where, bool required = true) {
        const io::Node* n = map.get(key);
        if (n == nullptr) {
            if (!required) return static_cast<const io::Node*>(nullptr);
            return fail(Error::invalid(where + ": the field " + q(key) + " is missing", at(map)));
        }
        bool ok = n->kind == kind || (kind == io::Kind::string && n->is_scalar() && !n->is_null());
        if (!ok)
            return fail(Error::invalid(where + "." + key + " must be " + io::kind_name(kind) +
                                           ", not " + io::kind_name(n->kind),
                                       at(*n)));
        return n;
    }

    Result<std::string> str(const io::Node& map, const char* key, const std::string& where,
                            bool required = true) {
        auto n = field(map, key, io::Kind::string, where, required);
        if (!n) return fail(std::move(n).error());
        return *n == nullptr ? std::string() : (*n)->text;
    }

    Result<bool> boolean(const io::Node& map, const char* key, const std::string& where) {
        auto n = field(map, key, io::Kind::boolean, where, false);
        if (!n) return fail(std::move(n).error());
        return *n != nullptr && (*n)->as_bool().value_or(false);
    }

    Result<std::vector<std::string>> list(const io::Node& map, const char* key,
                                          const std::string& where) {
        auto n = field(map, key, io::Kind::sequence, where, false);
        if (!n) return fail(std::move(n).error());
        std::vector<std::string> out;
        if (*n == nullptr) return out;
        for (const auto& item : (*n)->items) {
            if (!item.is_scalar() || item.is_null())
                return fail(
                    Error::invalid(where + "." + key + " must be a list of strings", at(item)));
            out.push_back(item.text);
        }
        return out;
    }

    // The items of a list of mappings.
    Result<std::vector<const io::Node*>> maps(const io::Node& map, const char* key,
                                              const std::string& where) {
        auto n = field(map, key, io::Kind::sequence, where, false);
        if (!n) return fail(std::move(n).error());
        std::vector<const io::Node*> out;
        if (*n == nullptr) return out;
        for (std::size_t i = 0; i < (*n)->items.size(); ++i) {
            const io::Node& item = (*n)->items[i];
            if (!item.is_map())
                return fail(Error::invalid(
                    where + "." + key + "[" + std::to_string(i) + "] must be a mapping", at(item)));
            out.push_back(&item);
        }
        return out;
    }

private:
    std::string file_;
};

// What kpkg writes for a selected bundle, given the lock's installed CSVs: "upgrade" with the
// installed CSV it replaces and the bundles stepped through (this one last) for an installed
// package; "install", nothing replaced, and no path or one of several hops otherwise. A lock
// saying anything else was edited: it is refused.
Result<void> consistent(const Lock& lock, const Selected& s, const std::string& action,
                        const std::string& where) {
    if (!action.empty() && action != "install" && action != "upgrade")
        return fail(
            Error::invalid(where + ".action is " + q(action) + ", not \"install\" or \"upgrade\""));
    auto inst = std::find_if(lock.installed.begin(), lock.installed.end(),
                             [&](const Installed& i) { return i.package == s.package; });
    if (inst == lock.installed.end()) {
        if (action == "upgrade" || !s.replaces.empty())
            return fail(Error::invalid(where + ": " + s.bundle + " is an upgrade" +
                                       (s.replaces.empty() ? "" : " of " + s.replaces) +
                                       ", but the lock has no installed CSV of package " +
                                       s.package));
        if (s.path.size() == 1)
            return fail(Error::invalid(where + ": " + s.bundle +
                                       " is a new install, but it has a path of one step"));
    } else {
        if (action == "install" || s.replaces != inst->name)
            return fail(Error::invalid(
                where + ": package " + s.package + " is installed (" + inst->name + "), so " +
                s.bundle + " is an upgrade that replaces " + inst->name +
                (s.replaces.empty()         ? ", but the lock says it replaces nothing"
                 : s.replaces != inst->name ? ", not " + s.replaces
                                            : ", but the lock says it is an install")));
        if (s.path.empty())
            return fail(Error::invalid(where + ": the upgrade to " + s.bundle +
                                       " has no path (the bundles stepped through)"));
    }
    if (!s.path.empty() && s.path.back() != s.bundle)
        return fail(
            Error::invalid(where + ": the path ends at " + s.path.back() + ", not at " + s.bundle));
    std::set<std::string> steps;
    for (const auto& p : s.path)
        if (!steps.insert(p).second || p == s.replaces)
            return fail(Error::invalid(where + ": the path passes " + p + " twice"));
    return {};
}

// Whether an entry of `to` in some channel of the package replaces `from`, skips it, or covers
// its version with its skipRange: one upgrade hop OLM takes.
bool upgrade_edge(const model::Catalog& cat, const std::string& package, const std::string& from,
                  const std::string& from_version, const std::string& to) {
    const auto* pi = cat.package_info(package);
    if (pi == nullptr) return false;
    auto v = semver::Version::parse(from_version);
    for (std::uint32_t ch : pi->channels)
        for (const auto& e : cat.entries_of(cat.channels[ch])) {
            if (cat.str(e.name) != to) continue;
            if (cat.str(e.replaces) == from) return true;
            for (model::Str sk : cat.skips_of(e))
                if (cat.str(sk) == from) return true;
            if (e.skip_range != 0 && v) {
                auto r = semver::Range::parse(cat.str(e.skip_range));
                if (r && r->contains(*v)) return true;
            }
        }
    return false;
}

} // namespace

Lock make_lock(const std::vector<CatalogSource>& catalogs, const Request& request,
               const Resolution& resolution) {
    Lock lock;
    lock.requests = sorted_specs(request);
    lock.options = request.options;
    lock.options.debug_testcase.clear();
    std::sort(lock.options.starting_csvs.begin(), lock.options.starting_csvs.end());
    lock.installed = sorted_installed(request.installed);
    for (const auto& c : catalogs)
        lock.catalogs.push_back({c.name, c.priority, c.catalog->content_digest});
    std::sort(lock.catalogs.begin(), lock.catalogs.end(),
              [](const Lock::Catalog& a, const Lock::Catalog& b) { return a.name < b.name; });
    lock.selected = resolution.selected;
    return lock;
}

io::Node lock_node(const Lock& lock) {
    io::Node n = io::Node::map();
    n.set("kind", io::Node::string(lock_kind));
    n.set("version", io::Node::integer(1));
    n.set("requests", strings(lock.requests));
    io::Node opts = io::Node::map();
    opts.set("upgrade", io::Node::boolean(lock.options.upgrade));
    opts.set("oneHop", io::Node::boolean(lock.options.one_hop));
    opts.set("excludeDeprecated", io::Node::boolean(lock.options.exclude_deprecated));
    opts.set("startingCSVs", strings(lock.options.starting_csvs));
    n.set("options", std::move(opts));
    io::Node inst = io::Node::seq();
    for (const auto& i : lock.installed) {
        io::Node e = io::Node::map();
        e.set("package", io::Node::string(i.package));
        e.set("name", io::Node::string(i.name));
        e.set("version", io::Node::string(i.version));
        if (!i.catalog.empty()) e.set("catalog", io::Node::string(i.catalog));
        if (!i.channel.empty()) e.set("channel", io::Node::string(i.channel));
        inst.push(std::move(e));
    }
    n.set("installed", std::move(inst));
    io::Node cats = io::Node::seq();
    for (const auto& c : lock.catalogs) {
        io::Node e = io::Node::map();
        e.set("name", io::Node::string(c.name));
        e.set("priority", io::Node::integer(c.priority));
        e.set("digest", io::Node::string(c.digest));
        cats.push(std::move(e));
    }
    n.set("catalogs", std::move(cats));
    io::Node sel = io::Node::seq();
    for (const auto& s : lock.selected)
        sel.push(detail::selected_node(s));
    n.set("selected", std::move(sel));
    return n;
}

std::string lock_yaml(const Lock& lock) {
    return "# Written by kpkg resolve --lockfile; kpkg resolve --locked reproduces it.\n" +
           io::to_yaml(lock_node(lock));
}

Result<Lock> parse_lock(const io::Node& doc, const std::string& file) {
    Reader rd(file);
    if (!doc.is_map())
        return fail(Error::invalid("not a kpkg lockfile: expected a mapping, not " +
                                       std::string(io::kind_name(doc.kind)),
                                   rd.at(doc)));
    auto kind = rd.str(doc, "kind", "lock");
    if (!kind) return fail(std::move(kind).error());
    if (*kind != lock_kind)
        return fail(
            Error::invalid("not a kpkg lockfile: kind is " + q(*kind) + ", not " + q(lock_kind),
                           rd.at(*doc.get("kind"))));
    const io::Node* version = doc.get("version");
    if (version == nullptr || version->as_int() != 1)
        return fail(Error::invalid("unsupported lockfile version (this kpkg reads version 1)",
                                   rd.at(version ? *version : doc)));
    for (const auto& f : doc.fields)
        if (f.key != "kind" && f.key != "version" && f.key != "requests" && f.key != "options" &&
            f.key != "installed" && f.key != "catalogs" && f.key != "selected")
            return fail(
                Error::invalid("lock: unknown field " + q(f.key), io::pos_of(file, f.key_mark)));
    Lock lock;
    auto requests = rd.list(doc, "requests", "lock");
    if (!requests) return fail(std::move(requests).error());
    lock.requests = std::move(*requests);
    if (auto o = rd.field(doc, "options", io::Kind::mapping, "lock", false); !o) {
        return fail(std::move(o).error());
    } else if (*o != nullptr) {
        const io::Node& opts = **o;
        auto up = rd.boolean(opts, "upgrade", "lock.options");
        auto hop = rd.boolean(opts, "oneHop", "lock.options");
        auto ex = rd.boolean(opts, "excludeDeprecated", "lock.options");
        auto starts = rd.list(opts, "startingCSVs", "lock.options");
        for (auto* r : {&up, &hop, &ex})
            if (!*r) return fail(r->error());
        if (!starts) return fail(std::move(starts).error());
        lock.options.upgrade = *up;
        lock.options.one_hop = *hop;
        lock.options.exclude_deprecated = *ex;
        lock.options.starting_csvs = std::move(*starts);
    }
    auto installed = rd.maps(doc, "installed", "lock");
    if (!installed) return fail(std::move(installed).error());
    for (const io::Node* m : *installed) {
        Installed i;
        for (auto [key, dst, required] :
             {std::tuple<const char*, std::string*, bool>{"package", &i.package, true},
              {"name", &i.name, true},
              {"version", &i.version, true},
              {"catalog", &i.catalog, false},
              {"channel", &i.channel, false}}) {
            auto v = rd.str(*m, key, "lock.installed", required);
            if (!v) return fail(std::move(v).error());
            *dst = std::move(*v);
        }
        lock.installed.push_back(std::move(i));
    }
    auto cats = rd.maps(doc, "catalogs", "lock");
    if (!cats) return fail(std::move(cats).error());
    for (const io::Node* m : *cats) {
        Lock::Catalog c;
        auto name = rd.str(*m, "name", "lock.catalogs");
        auto digest = rd.str(*m, "digest", "lock.catalogs", false);
        if (!name) return fail(std::move(name).error());
        if (!digest) return fail(std::move(digest).error());
        c.name = std::move(*name);
        c.digest = std::move(*digest);
        if (const io::Node* p = m->get("priority"); p != nullptr) {
            auto v = p->as_int();
            if (!v)
                return fail(Error::invalid("lock.catalogs.priority must be an integer", rd.at(*p)));
            c.priority = static_cast<int>(*v);
        }
        lock.catalogs.push_back(std::move(c));
    }
    auto sel = rd.maps(doc, "selected", "lock");
    if (!sel) return fail(std::move(sel).error());
    std::map<std::string, std::size_t> selected_at; // package -> its item
    for (const io::Node* m : *sel) {
        std::string where = "lock.selected[" + std::to_string(lock.selected.size()) + "]";
        Selected s;
        for (auto [key, dst, required] :
             {std::tuple<const char*, std::string*, bool>{"package", &s.package, true},
              {"bundle", &s.bundle, true},
              {"version", &s.version, false},
              {"channel", &s.channel, true},
              {"catalog", &s.catalog, true},
              {"image", &s.image, false},
              {"reason", &s.reason, false},
              {"replaces", &s.replaces, false}}) {
            auto v = rd.str(*m, key, "lock.selected", required);
            if (!v) return fail(std::move(v).error());
            *dst = std::move(*v);
        }
        auto path = rd.list(*m, "path", "lock.selected");
        if (!path) return fail(std::move(path).error());
        s.path = std::move(*path);
        auto action = rd.str(*m, "action", "lock.selected", false);
        if (!action) return fail(std::move(action).error());
        if (auto r = consistent(lock, s, *action, where); !r) {
            Error e = r.error();
            e.pos = rd.at(*m);
            return fail(std::move(e));
        }
        auto [it, fresh] = selected_at.emplace(s.package, lock.selected.size());
        if (!fresh)
            return fail(Error::invalid(
                where + ": package " + q(s.package) + " is selected twice (also in lock.selected[" +
                    std::to_string(it->second) + "]): a lock selects one bundle per package",
                rd.at(*m)));
        lock.selected.push_back(std::move(s));
    }
    return lock;
}

Result<Lock> load_lock(const io::Tree& file) {
    auto docs = io::load_file(file);
    if (!docs) return fail(std::move(docs).error());
    const std::string& name = file.display_root();
    if (docs->size() != 1)
        return fail(Error::invalid("not a kpkg lockfile: expected one document, found " +
                                       std::to_string(docs->size()),
                                   SourcePos{name}));
    return parse_lock(docs->front().root, name);
}

Result<Lock> load_lock(const std::filesystem::path& path) {
    if (path == "-") return load_lock(io::StdinTree());
    return load_lock(io::FileTree(path));
}

Result<LockCheck> resolve_locked(const std::vector<CatalogSource>& catalogs, const Request& request,
                                 const Lock& lock) {
    LockCheck out;
    // The same question?
    auto specs = sorted_specs(request);
    if (specs != lock.requests)
        out.drift.push_back("the requests differ: the lock has [" +
                            text::join(lock.requests, ", ") + "], this run [" +
                            text::join(specs, ", ") + "]");
    auto starts = request.options.starting_csvs;
    std::sort(starts.begin(), starts.end());
    const Options& o = request.options;
    if (o.upgrade != lock.options.upgrade || o.one_hop != lock.options.one_hop ||
        o.exclude_deprecated != lock.options.exclude_deprecated ||
        starts != lock.options.starting_csvs)
        out.drift.push_back("the options differ from the lock's (--upgrade, --one-hop, "
                            "--exclude-deprecated, --starting-csv)");
    auto inst = sorted_installed(request.installed);
    auto key = [](const std::vector<Installed>& v) {
        std::vector<std::string> k;
        for (const auto& i : v)
            k.push_back(i.package + "/" + i.name + "/" + i.version);
        return k;
    };
    if (key(inst) != key(lock.installed))
        out.drift.push_back("the installed CSVs differ: the lock has [" +
                            text::join(key(lock.installed), ", ") + "], this run [" +
                            text::join(key(inst), ", ") + "]");
    if (!out.drift.empty()) return out;

    // The catalogs: the same names; changed content is fine as long as the lock holds.
    std::vector<std::string> warnings;
    for (const auto& lc : lock.catalogs) {
        auto it = std::find_if(catalogs.begin(), catalogs.end(),
                               [&](const CatalogSource& c) { return c.name == lc.name; });
        if (it == catalogs.end()) {
            out.drift.push_back("catalog " + q(lc.name) + " of the lock is not given");
            continue;
        }
        if (it->catalog->content_digest != lc.digest)
            warnings.push_back(
                "catalog " + lc.name + " changed since the lock (" +
                (lc.digest.empty() ? "no digest" : lc.digest) + " then, " +
                (it->catalog->content_digest.empty() ? "no digest" : it->catalog->content_digest) +
                " now)");
        if (it->priority != lc.priority)
            warnings.push_back("catalog " + lc.name + " has priority " +
                               std::to_string(it->priority) + ", the lock says " +
                               std::to_string(lc.priority));
    }
    for (const auto& c : catalogs)
        if (std::none_of(lock.catalogs.begin(), lock.catalogs.end(),
                         [&](const Lock::Catalog& lc) { return lc.name == c.name; }))
            warnings.push_back("catalog " + c.name + " is not in the lock");
    if (!out.drift.empty()) return out;

    // Each locked bundle where the lock found it.
    Index index(catalogs, request.options.exclude_deprecated);
    std::vector<std::string> ignored;
    auto states = installed_states(index, request.installed, ignored);
    if (!states) return fail(std::move(states).error());
    Universe u(index, std::move(*states));
    std::vector<VarId> locked;
    for (const auto& s : lock.selected) {
        std::string who = s.bundle + " (channel " + s.channel + ", catalog " + s.catalog + ")";
        std::uint32_t c = none;
        for (std::uint32_t i = 0; i < catalogs.size(); ++i)
            if (catalogs[i].name == s.catalog) c = i;
        if (c == none) {
            out.drift.push_back("locked " + who + ": the catalog is not given");
            continue;
        }
        const model::Catalog& cat = index.cat(c);
        auto pkg = cat.strings.find(s.package);
        auto name = cat.strings.find(s.bundle);
        std::uint32_t b =
            pkg && name ? cat.find_bundle(*pkg, *name) : static_cast<std::uint32_t>(none);
        if (b == none) {
            out.drift.push_back("locked " + who + " is no longer in the catalog");
            continue;
        }
        std::uint32_t channel = none;
        for (std::uint32_t ch : index.channels_of(c, b))
            if (cat.str(cat.channels[ch].name) == s.channel) channel = ch;
        if (channel == none) {
            out.drift.push_back("locked " + who + " is no longer in channel " + s.channel);
            continue;
        }
        const BundleInfo& bi = index.info(c, b);
        if (bi.version_text != s.version)
            out.drift.push_back("locked " + who + " has version " + bi.version_text +
                                " now, the lock says " + s.version);
        if (bi.image != s.image)
            out.drift.push_back("locked " + who + " has image " + bi.image +
                                " now, the lock says " + s.image);
        if (std::string why = index.not_offered(c, channel, b); !why.empty())
            out.drift.push_back("locked " + who + " is " + why + " now");
        if (u.var(u.var_at(c, channel, b)).prohibited)
            out.drift.push_back("locked " + who + " is deprecated now (olm.deprecated)");
        // The hops of its path, from the installed CSV it replaces.
        if (request.options.one_hop && s.path.size() > 1)
            out.drift.push_back("locked " + who + " takes " + std::to_string(s.path.size()) +
                                " hops, but --one-hop takes one");
        std::string from = s.replaces, from_version;
        for (const auto& i : request.installed)
            if (i.package == s.package) from_version = i.version;
        for (const auto& step : s.path) {
            auto id = cat.strings.find(step);
            std::uint32_t sb = pkg && id ? cat.find_bundle(*pkg, *id) : none;
            if (sb == none) {
                out.drift.push_back("locked " + who + ": its path passes " + step +
                                    ", which is not in the catalog");
                break;
            }
            if (!from.empty() && !upgrade_edge(cat, s.package, from, from_version, step)) {
                out.drift.push_back("locked " + who + ": its path steps from " + from + " to " +
                                    step + ", which neither replaces nor skips " + from +
                                    " nor covers " + from_version + " with its skipRange");
                break;
            }
            from = step;
            from_version = index.info(c, sb).version_text;
        }
        locked.push_back(u.var_at(c, channel, b));
    }
    if (!out.drift.empty()) return out;

    // Each request met by a locked bundle.
    for (const auto& sub : request.subscriptions) {
        auto it = std::find_if(lock.selected.begin(), lock.selected.end(),
                               [&](const Selected& s) { return s.package == sub.package; });
        bool installed_pkg =
            std::any_of(request.installed.begin(), request.installed.end(),
                        [&](const Installed& i) { return i.package == sub.package; });
        if (it == lock.selected.end()) {
            if (!installed_pkg)
                out.drift.push_back("request " + sub.spec + " has no bundle in the lock");
            continue;
        }
        if (!sub.channel.empty() && it->channel != sub.channel)
            out.drift.push_back("request " + sub.spec + ": the lock has channel " + it->channel);
        if (!sub.source.empty() && it->catalog != sub.source)
            out.drift.push_back("request " + sub.spec + ": the lock has catalog " + it->catalog);
        auto v = semver::Version::parse(it->version);
        if (sub.range && !(v && sub.range->contains(*v)))
            out.drift.push_back("request " + sub.spec + ": the locked version " + it->version +
                                " is outside the range");
    }
    if (!out.drift.empty()) return out;

    // Still a solution: the locked bundles with the installed CSVs that stay, nothing else.
    std::vector<VarId> stay;
    for (std::uint32_t i = 0; i < u.installed().size(); ++i) {
        const std::string& pkg = u.installed()[i].csv.package;
        if (std::none_of(lock.selected.begin(), lock.selected.end(),
                         [&](const Selected& s) { return s.package == pkg; }))
            stay.push_back(u.installed_var(i));
    }
    std::vector<VarId> roots = locked;
    roots.insert(roots.end(), stay.begin(), stay.end());
    std::vector<VarId> closure;
    std::unordered_set<VarId> seen;
    if (auto r = u.close(roots, closure, seen); !r) return fail(std::move(r).error());
    auto engine = solv::Engine::create();
    if (!engine) return fail(std::move(engine).error());
    Encoding enc(u, *engine);
    enc.build(closure);
    std::vector<solv::Job> jobs;
    std::vector<std::string> words;
    for (VarId v : locked) {
        jobs.push_back(enc.install(v));
        words.push_back("the lock installs " + u.label(v));
    }
    for (VarId v : stay) {
        jobs.push_back(enc.install(v));
        words.push_back("installed " + u.label(v) + " stays");
    }
    auto r = engine->solve(jobs, true);
    if (!r.satisfiable) {
        std::string msg = "the locked bundles are no longer a solution";
        auto w = enc.words(r.rules, words);
        if (!w.empty()) msg += ": " + text::join(w, "; ");
        out.drift.push_back(msg);
        return out;
    }
    std::set<VarId> allowed(locked.begin(), locked.end());
    allowed.insert(stay.begin(), stay.end());
    for (int s : r.installed) {
        VarId extra = enc.var(s);
        if (allowed.count(extra)) continue;
        for (VarId v : locked)
            for (std::uint32_t l : u.var(v).lists) {
                const auto& cands = u.list(l).vars;
                if (std::find(cands.begin(), cands.end(), extra) == cands.end()) continue;
                if (std::any_of(cands.begin(), cands.end(),
                                [&](VarId c) { return allowed.count(c) != 0; }))
                    continue;
                out.drift.push_back("locked " + u.info(v).name + " requires " +
                                    u.index().dep(u.list(l).dep).words() +
                                    " now, and no locked bundle provides it");
            }
    }
    if (!out.drift.empty()) {
        std::sort(out.drift.begin(), out.drift.end());
        out.drift.erase(std::unique(out.drift.begin(), out.drift.end()), out.drift.end());
        return out;
    }

    // The lock holds. What a resolution without it would select now, for the record.
    out.holds = true;
    out.resolution.satisfiable = true;
    out.resolution.selected = lock.selected;
    for (const auto& i : request.installed)
        if (std::none_of(lock.selected.begin(), lock.selected.end(),
                         [&](const Selected& s) { return s.package == i.package; }))
            out.resolution.unchanged.push_back(i.name);
    std::sort(out.resolution.unchanged.begin(), out.resolution.unchanged.end());
    auto fresh = resolve(catalogs, request);
    if (fresh && fresh->satisfiable) {
        std::vector<std::string> differ;
        for (const auto& s : fresh->selected) {
            auto it = std::find_if(lock.selected.begin(), lock.selected.end(),
                                   [&](const Selected& l) { return l.package == s.package; });
            if (it == lock.selected.end())
                differ.push_back(s.bundle + " (new)");
            else if (it->bundle != s.bundle || it->channel != s.channel || it->catalog != s.catalog)
                differ.push_back(s.bundle + " instead of " + it->bundle);
        }
        if (!differ.empty())
            warnings.push_back("without the lock, kpkg would now select " +
                               text::join(differ, ", "));
    }
    out.resolution.warnings = std::move(warnings);
    return out;
}

io::Node drift_node(const LockCheck& check) {
    io::Node n = io::Node::map();
    n.set("holds", io::Node::boolean(check.holds));
    io::Node drift = io::Node::seq();
    for (const auto& d : check.drift)
        drift.push(io::Node::string(d));
    n.set("drift", std::move(drift));
    return n;
}

} // namespace kpkg::resolve
