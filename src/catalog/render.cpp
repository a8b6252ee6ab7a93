#include "kpkg/catalog/render.hpp"

#include <algorithm>
#include <system_error>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/bundle/render.hpp"
#include "kpkg/catalog/load.hpp"
#include "kpkg/io/emit.hpp"
#include "kpkg/io/load.hpp"

namespace kpkg::catalog {
namespace fs = std::filesystem;

namespace {

// Values read from JSON keep their key order and escapes as json.RawMessage does; values read
// from YAML are converted as sigs.k8s.io/yaml converts them: keys sorted, <, > and & escaped.
bool json_source(const SourcePos& pos) {
    const std::string& f = pos.file;
    return f.size() >= 5 && f.compare(f.size() - 5, 5, ".json") == 0;
}

io::JsonStyle style_for(const SourcePos& pos, int indent) {
    io::JsonStyle s;
    s.indent = indent;
    const bool yaml = !json_source(pos);
    s.escape_html = yaml;
    s.sort_keys = yaml;
    return s;
}

const char* const kind_order[] = {"package", "channel", "bundle", "other", "deprecation"};

struct Item {
    std::string package;
    int kind = 0; // index into kind_order
    std::string schema;
    std::string name;
    const declcfg::Package* pkg = nullptr;
    const declcfg::Channel* channel = nullptr;
    const declcfg::Bundle* bundle = nullptr;
    const declcfg::Other* other = nullptr;
    const bundle::Rendered* rendered = nullptr;
};

// Re-builds a catalog bundle as a Rendered blob so bundle::write_json writes it in opm's layout.
bundle::Rendered as_rendered(const declcfg::Bundle& b) {
    bundle::Rendered r;
    r.name = b.name;
    r.package = b.package;
    r.image = b.image;
    const io::JsonStyle st = style_for(b.pos, 0);
    std::vector<bundle::RawProperty> last;
    for (const auto& p : b.properties) {
        std::string v = io::to_json(p.value, st);
        while (!v.empty() && v.back() == '\n')
            v.pop_back();
        if (p.type == "olm.bundle.object" || p.type == "olm.csv.metadata")
            last.push_back({p.type, std::move(v)});
        else
            r.properties.push_back({p.type, std::move(v)});
    }
    for (auto& p : last)
        r.properties.push_back(std::move(p));
    for (const auto& ri : b.related_images)
        r.related_images.push_back({ri.name, ri.image});
    return r;
}

// A raw value nested `depth` levels deep in an indented blob, as MarshalIndent writes it.
std::string nested(const io::Node& v, const SourcePos& pos, int depth) {
    std::string j = io::to_json(v, style_for(pos, 4));
    while (!j.empty() && j.back() == '\n')
        j.pop_back();
    std::string pad(static_cast<std::size_t>(depth) * 4, ' ');
    std::string out;
    out.reserve(j.size() + 64);
    for (char c : j) {
        out.push_back(c);
        if (c == '\n') out += pad;
    }
    return out;
}

void put_field(std::string& out, bool& first, std::string_view key, std::string_view json) {
    out += first ? "{\n    " : ",\n    ";
    first = false;
    io::append_json_string(out, key);
    out += ": ";
    out += json;
}

std::string str(const std::string& s) {
    std::string o;
    io::append_json_string(o, s);
    return o;
}

// Typed fields as the struct writes them (no HTML escaping); raw values nested as read.
std::string package_json(const declcfg::Package& p) {
    std::string out;
    bool first = true;
    put_field(out, first, "schema", str(declcfg::schema_package));
    put_field(out, first, "name", str(p.name));
    if (!p.default_channel.empty()) put_field(out, first, "defaultChannel", str(p.default_channel));
    if (const io::Node* icon = p.raw.get("icon"); icon && !icon->is_null())
        put_field(out, first, "icon", nested(*icon, p.pos, 1));
    if (!p.description.empty()) put_field(out, first, "description", str(p.description));
    if (const io::Node* props = p.raw.get("properties");
        props && props->is_seq() && !props->items.empty())
        put_field(out, first, "properties", nested(*props, p.pos, 1));
    out += "\n}\n";
    return out;
}

std::string channel_json(const declcfg::Channel& c) {
    std::string out;
    bool first = true;
    put_field(out, first, "schema", str(declcfg::schema_channel));
    put_field(out, first, "name", str(c.name));
    put_field(out, first, "package", str(c.package));
    std::string e = "[";
    for (std::size_t i = 0; i < c.entries.size(); ++i) {
        const auto& en = c.entries[i];
        e += i ? ",\n        {\n            \"name\": " : "\n        {\n            \"name\": ";
        io::append_json_string(e, en.name);
        if (!en.replaces.empty()) {
            e += ",\n            \"replaces\": ";
            io::append_json_string(e, en.replaces);
        }
        if (!en.skips.empty()) {
            e += ",\n            \"skips\": [";
            for (std::size_t k = 0; k < en.skips.size(); ++k) {
                e += k ? ",\n                " : "\n                ";
                io::append_json_string(e, en.skips[k]);
            }
            e += "\n            ]";
        }
        if (!en.skip_range.empty()) {
            e += ",\n            \"skipRange\": ";
            io::append_json_string(e, en.skip_range);
        }
        e += "\n        }";
    }
    e += c.entries.empty() ? "]" : "\n    ]";
    put_field(out, first, "entries", e);
    if (const io::Node* props = c.raw.get("properties");
        props && props->is_seq() && !props->items.empty())
        put_field(out, first, "properties", nested(*props, c.pos, 1));
    out += "\n}\n";
    return out;
}

void emit_node(const io::Node& n, const SourcePos& pos, RenderFormat f,
               const std::function<void(std::string_view)>& sink) {
    if (f == RenderFormat::json) {
        sink(io::to_json(n, style_for(pos, 4)));
    } else {
        io::YamlStyle ys;
        ys.sort_keys = true;
        sink("---\n");
        sink(io::to_yaml(n, ys));
    }
}

// A blob already in opm's JSON layout; for YAML re-read and written with sorted keys.
void emit_json(const std::string& json, RenderFormat f,
               const std::function<void(std::string_view)>& sink) {
    if (f == RenderFormat::json) {
        sink(json);
        return;
    }
    auto docs = io::parse_json(json, "<render>");
    io::YamlStyle ys;
    ys.sort_keys = true;
    sink("---\n");
    if (docs.ok() && !docs->empty()) sink(io::to_yaml(docs->front().root, ys));
}

} // namespace

bool is_bundle_dir(const fs::path& dir) {
    std::error_code ec;
    return fs::is_directory(dir / "manifests", ec) && fs::is_directory(dir / "metadata", ec);
}

Result<void> render(const std::vector<std::string>& sources, const RenderOptions& opts,
                    const std::function<void(std::string_view)>& sink) {
    std::vector<declcfg::DeclarativeConfig> cfgs;
    std::vector<bundle::Rendered> rendered;
    std::vector<bundle::Rendered> converted;
    cfgs.reserve(sources.size());
    rendered.reserve(sources.size());
    for (const auto& src : sources) {
        std::error_code ec;
        if (src != "-" && !fs::exists(src, ec))
            return fail(Error::invalid("no such file or directory: " + src, SourcePos{src}));
        if (src != "-" && is_bundle_dir(src)) {
            auto loaded = KPKG_TRY(bundle::load(src));
            rendered.push_back(KPKG_TRY(bundle::render(loaded)));
        } else {
            cfgs.push_back(KPKG_TRY(load(src)));
        }
    }
    std::vector<Item> items;
    std::size_t nbundles = 0;
    for (const auto& c : cfgs)
        nbundles += c.bundles.size();
    converted.reserve(nbundles);
    for (const auto& c : cfgs) {
        for (const auto& p : c.packages)
            items.push_back({p.name, 0, declcfg::schema_package, p.name, &p});
        for (const auto& ch : c.channels)
            items.push_back({ch.package, 1, declcfg::schema_channel, ch.name, nullptr, &ch});
        for (const auto& b : c.bundles) {
            converted.push_back(as_rendered(b));
            items.push_back({b.package, 2, declcfg::schema_bundle, b.name, nullptr, nullptr, &b,
                             nullptr, &converted.back()});
        }
        for (const auto& o : c.others) {
            const int kind = o.schema == declcfg::schema_deprecations ? 4 : 3;
            items.push_back(
                {o.package, kind, o.schema, o.name, nullptr, nullptr, nullptr, &o, nullptr});
        }
    }
    for (const auto& r : rendered)
        items.push_back(
            {r.package, 2, declcfg::schema_bundle, r.name, nullptr, nullptr, nullptr, nullptr, &r});
    // Packages by name; within a package by kind; channels and bundles by name; others keep
    // their input order (stable sort).
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
        if (a.package != b.package) return a.package < b.package;
        if (a.kind != b.kind) return a.kind < b.kind;
        if (a.kind == 1 || a.kind == 2) return a.name < b.name;
        return false;
    });
    for (const auto& it : items) {
        if (it.rendered) {
            if (opts.format == RenderFormat::json)
                bundle::write_json(*it.rendered, sink);
            else
                sink(bundle::to_yaml(*it.rendered));
        } else if (it.pkg) {
            emit_json(package_json(*it.pkg), opts.format, sink);
        } else if (it.channel) {
            emit_json(channel_json(*it.channel), opts.format, sink);
        } else if (it.other) {
            emit_node(it.other->raw, it.other->pos, opts.format, sink);
        }
    }
    return {};
}

Result<std::string> render_to_string(const std::vector<std::string>& sources,
                                     const RenderOptions& opts) {
    std::string out;
    KPKG_TRY(render(sources, opts, [&out](std::string_view s) { out.append(s); }));
    return out;
}

} // namespace kpkg::catalog
