// Building the compact model::Catalog from loaded blobs (model::DeclarativeConfig).
#include <string_view>
#include <unordered_map>

#include "kpkg/catalog/load.hpp"
#include "kpkg/io/emit.hpp"

namespace kpkg::catalog {

namespace {

using io::Node;
using model::Str;

std::uint64_t fnv1a64(std::string_view s) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h;
}

class Builder {
public:
    Builder(model::Catalog& c, bool keep_payloads) : c_(c), keep_payloads_(keep_payloads) {}

    model::Pos pos(const SourcePos& p) {
        model::Pos out;
        if (!p.file.empty()) {
            auto [it, fresh] =
                file_ids_.try_emplace(p.file, static_cast<std::uint32_t>(c_.files.size()));
            if (fresh) c_.files.push_back(p.file);
            out.file = it->second;
        }
        out.line = p.line;
        out.column = p.column;
        out.document = p.document;
        return out;
    }

    Str s(std::string_view v) { return c_.strings.intern(v); }

    // Appends the typed properties; returns [begin, count).
    std::pair<std::uint32_t, std::uint32_t> properties(const std::vector<declcfg::Property>& props,
                                                       const SourcePos& where, model::Scope scope,
                                                       const std::string& pkg,
                                                       const std::string& name) {
        auto begin = static_cast<std::uint32_t>(c_.properties.size());
        for (std::size_t i = 0; i < props.size(); ++i) {
            const auto& p = props[i];
            model::Property out;
            out.type = s(p.type);
            std::string json = io::to_json(p.value, {.indent = 0});
            if (!json.empty() && json.back() == '\n') json.pop_back();
            out.value_bytes = static_cast<std::uint32_t>(json.size());
            out.digest = fnv1a64(json);
            auto field = [&](const char* key, bool required) -> std::optional<Str> {
                const Node* n = p.value.get(key);
                if (n == nullptr || n->is_null()) {
                    if (!required) return Str{0};
                } else if (n->is_string()) {
                    return s(n->text);
                }
                bad(scope, pkg, name, where,
                    "property[" + std::to_string(i) + "] " + p.type + ": field \"" + key +
                        "\" must be a string");
                return std::nullopt;
            };
            auto abc = [&](const char* a, const char* b, const char* c, int required) -> bool {
                if (!p.value.is_map()) {
                    bad(scope, pkg, name, where,
                        "property[" + std::to_string(i) + "] " + p.type +
                            ": value must be an object, not " + io::kind_name(p.value.kind));
                    return false;
                }
                auto fa = field(a, required >= 1);
                auto fb = b ? field(b, required >= 2) : std::optional<Str>(0);
                auto fc = c ? field(c, required >= 3) : std::optional<Str>(0);
                if (!fa || !fb || !fc) return false;
                out.a = *fa;
                out.b = *fb;
                out.c = *fc;
                return true;
            };
            const std::string& t = p.type;
            bool keep_json = true;
            if (t == "olm.package") {
                out.kind = model::PropKind::package;
                if (!abc("packageName", "version", "release", 2)) continue;
                keep_json = false;
            } else if (t == "olm.gvk" || t == "olm.gvk.required") {
                out.kind = t == "olm.gvk" ? model::PropKind::gvk : model::PropKind::gvk_required;
                if (!abc("group", "version", "kind", 3)) continue;
                keep_json = false;
            } else if (t == "olm.package.required") {
                out.kind = model::PropKind::package_required;
                if (!abc("packageName", "versionRange", nullptr, 2)) continue;
                keep_json = false;
            } else if (t == "olm.label" || t == "olm.label.required") {
                out.kind =
                    t == "olm.label" ? model::PropKind::label : model::PropKind::label_required;
                if (!abc("label", nullptr, nullptr, 1)) continue;
            } else if (t == "olm.deprecated") {
                out.kind = model::PropKind::deprecated;
            } else if (t == "olm.constraint") {
                out.kind = model::PropKind::constraint;
            } else if (t == "olm.bundle.object") {
                out.kind = model::PropKind::bundle_object;
                keep_json = keep_payloads_;
            } else if (t == "olm.csv.metadata") {
                out.kind = model::PropKind::csv_metadata;
                keep_json = keep_payloads_;
            }
            if (keep_json || keep_payloads_) out.json = s(json);
            c_.properties.push_back(out);
        }
        return {begin, static_cast<std::uint32_t>(c_.properties.size()) - begin};
    }

    void bad(model::Scope scope, const std::string& pkg, const std::string& name,
             const SourcePos& where, std::string msg) {
        model::Finding f;
        f.scope = scope;
        f.rule = scope == model::Scope::bundle ? "bundle.property" : "package.property";
        f.package = pkg;
        if (scope == model::Scope::bundle) f.bundle = name;
        if (scope == model::Scope::channel) f.channel = name;
        f.message = std::move(msg);
        f.pos = where;
        c_.problems.push_back(std::move(f));
    }

    void package(const declcfg::Package& p) {
        model::Pos where = pos(p.pos);
        std::vector<declcfg::Property> props;
        if (const Node* list = p.raw.get("properties"); list != nullptr && list->is_seq())
            for (const Node& item : list->items)
                if (item.is_map())
                    if (const Node* t = item.get("type"); t != nullptr && t->is_string())
                        props.push_back({t->text, item.get("value") ? *item.get("value") : Node()});
        auto [pb, pc] = properties(props, p.pos, model::Scope::package, p.name, p.name);
        c_.packages.push_back({s(p.name), s(p.default_channel), s(p.description), pb, pc, where});
    }

    void channel(const declcfg::Channel& ch) {
        model::Channel out;
        out.package = s(ch.package);
        out.name = s(ch.name);
        out.pos = pos(ch.pos);
        out.entries_begin = static_cast<std::uint32_t>(c_.entries.size());
        for (const auto& e : ch.entries) {
            model::Entry me;
            me.name = s(e.name);
            me.replaces = s(e.replaces);
            me.skip_range = s(e.skip_range);
            me.skips_begin = static_cast<std::uint32_t>(c_.skips.size());
            for (const auto& sk : e.skips)
                c_.skips.push_back(s(sk));
            me.skips_count = static_cast<std::uint32_t>(e.skips.size());
            me.pos = pos(e.pos.empty() ? ch.pos : e.pos);
            c_.entries.push_back(me);
        }
        out.entries_count = static_cast<std::uint32_t>(ch.entries.size());
        std::vector<declcfg::Property> props;
        if (const Node* list = ch.raw.get("properties"); list != nullptr && list->is_seq())
            for (const Node& item : list->items)
                if (item.is_map())
                    if (const Node* t = item.get("type"); t != nullptr && t->is_string())
                        props.push_back({t->text, item.get("value") ? *item.get("value") : Node()});
        auto [pb, pc] = properties(props, ch.pos, model::Scope::channel, ch.package, ch.name);
        out.props_begin = pb;
        out.props_count = pc;
        c_.channels.push_back(out);
    }

    void bundle(const declcfg::Bundle& b) {
        model::Bundle out;
        out.package = s(b.package);
        out.name = s(b.name);
        out.image = s(b.image);
        out.pos = pos(b.pos);
        auto [pb, pc] = properties(b.properties, b.pos, model::Scope::bundle, b.package, b.name);
        out.props_begin = pb;
        out.props_count = pc;
        int n = 0;
        for (const auto& p : c_.properties_of(out))
            if (p.kind == model::PropKind::package) {
                ++n;
                out.version = p.b;
            }
        if (n != 1) out.version = 0;
        out.images_begin = static_cast<std::uint32_t>(c_.related_images.size());
        for (const auto& ri : b.related_images)
            c_.related_images.push_back({s(ri.name), s(ri.image)});
        out.images_count = static_cast<std::uint32_t>(b.related_images.size());
        c_.bundles.push_back(out);
    }

    void other(const declcfg::Other& o) {
        if (o.schema == declcfg::schema_deprecations) {
            model::Deprecation d;
            d.package = s(o.package);
            d.pos = pos(o.pos);
            d.entries_begin = static_cast<std::uint32_t>(c_.deprecation_entries.size());
            if (const Node* list = o.raw.get("entries"); list != nullptr && list->is_seq())
                for (const Node& e : list->items) {
                    model::DeprecationEntry de;
                    if (const Node* ref = e.get("reference"); ref != nullptr && ref->is_map()) {
                        if (const Node* sc = ref->get("schema"); sc && sc->is_string())
                            de.schema = s(sc->text);
                        if (const Node* nm = ref->get("name"); nm && nm->is_string())
                            de.name = s(nm->text);
                    }
                    if (const Node* m = e.get("message"); m && m->is_string())
                        de.message = s(m->text);
                    de.pos = pos(io::pos_of(o.pos.file, e.mark, o.pos.document));
                    c_.deprecation_entries.push_back(de);
                }
            d.entries_count =
                static_cast<std::uint32_t>(c_.deprecation_entries.size()) - d.entries_begin;
            c_.deprecations.push_back(d);
            return;
        }
        c_.others.push_back({s(o.schema), s(o.package), s(o.name), pos(o.pos)});
    }

private:
    model::Catalog& c_;
    bool keep_payloads_;
    std::unordered_map<std::string, std::uint32_t> file_ids_;
};

} // namespace

model::Catalog to_catalog(const declcfg::DeclarativeConfig& cfg, bool keep_payloads) {
    model::Catalog c;
    Builder b(c, keep_payloads);
    for (const auto& p : cfg.packages)
        b.package(p);
    for (const auto& ch : cfg.channels)
        b.channel(ch);
    for (const auto& bu : cfg.bundles)
        b.bundle(bu);
    for (const auto& o : cfg.others)
        b.other(o);
    c.index();
    return c;
}

Result<model::Catalog> load_catalog(const std::filesystem::path& src, const LoadOptions& opts) {
    auto cfg = load(src, opts);
    if (!cfg) {
        if (cfg.error().code != ExitCode::invalid) return fail(cfg.error());
        model::Catalog c;
        model::Finding f;
        f.rule = "catalog.load";
        const Error& e = cfg.error();
        f.message = e.subject.empty() ? e.message : e.subject + ": " + e.message;
        f.pos = e.pos;
        c.problems.push_back(std::move(f));
        c.index();
        return c;
    }
    return to_catalog(*cfg, opts.keep_payloads);
}

} // namespace kpkg::catalog
