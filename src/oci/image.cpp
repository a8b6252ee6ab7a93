#include "kpkg/oci/image.hpp"

#include <algorithm>

#include "kpkg/core/digest.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/oci/media_types.hpp"

namespace kpkg::oci {

namespace {

bool platform_part_ok(std::string_view s) {
    if (s.empty()) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    });
}

std::string normal_variant(const std::string& arch, const std::string& variant) {
    if (arch == "arm64" && variant.empty()) return "v8";
    return variant;
}

// "an integer", "a string": the kind with its article.
std::string article(std::string_view kind) {
    const bool vowel =
        !kind.empty() && std::string_view("aeiou").find(kind.front()) != std::string_view::npos;
    return (vowel ? "an " : "a ") + std::string(kind);
}

// Parsing: every check throws kpkg::Exception with the document's name and the node's position.
struct Doc {
    const std::string& name;

    [[noreturn]] void fail_at(const io::Node& n, std::string msg) const {
        throw Exception(Error::invalid(std::move(msg), io::pos_of(name, n.mark)));
    }
    const io::Node& object(const io::Node& n, const std::string& what) const {
        if (!n.is_map()) fail_at(n, what + " must be an object, not " + io::kind_name(n.kind));
        return n;
    }
    const io::Node* field(const io::Node& obj, std::string_view key, io::Kind kind,
                          const std::string& where, bool required) const {
        const io::Node* v = obj.get(key);
        if (v == nullptr || (v->is_null() && !required)) {
            if (required) fail_at(obj, where + " has no \"" + std::string(key) + "\"");
            return nullptr;
        }
        if (v->kind != kind)
            fail_at(*v, where + "." + std::string(key) + " must be " +
                            (kind == io::Kind::mapping    ? std::string("an object")
                             : kind == io::Kind::sequence ? std::string("a list")
                                                          : article(io::kind_name(kind))) +
                            ", not " + io::kind_name(v->kind));
        return v;
    }
    std::string string(const io::Node& obj, std::string_view key, const std::string& where,
                       bool required) const {
        const io::Node* v = field(obj, key, io::Kind::string, where, required);
        return v != nullptr ? v->text : std::string();
    }
    std::vector<std::string> strings(const io::Node& obj, std::string_view key,
                                     const std::string& where) const {
        std::vector<std::string> out;
        const io::Node* v = field(obj, key, io::Kind::sequence, where, false);
        if (v == nullptr) return out;
        for (const auto& item : v->items) {
            if (!item.is_string())
                fail_at(item, where + "." + std::string(key) + " must hold strings, not " +
                                  io::kind_name(item.kind));
            out.push_back(item.text);
        }
        return out;
    }
    std::map<std::string, std::string> string_map(const io::Node& obj, std::string_view key,
                                                  const std::string& where) const {
        std::map<std::string, std::string> out;
        const io::Node* v = field(obj, key, io::Kind::mapping, where, false);
        if (v == nullptr) return out;
        for (const auto& e : v->fields) {
            if (!e.value.is_string())
                fail_at(e.value, where + "." + std::string(key) + "[\"" + e.key +
                                     "\"] must be a string, not " + io::kind_name(e.value.kind));
            out[e.key] = e.value.text;
        }
        return out;
    }

    Descriptor descriptor(const io::Node& n, const std::string& where) const {
        object(n, where);
        Descriptor d;
        d.media_type = string(n, "mediaType", where, true);
        d.digest = string(n, "digest", where, true);
        if (auto ok = check_digest(d.digest); !ok)
            fail_at(*n.get("digest"),
                    where + ".digest \"" + d.digest + "\": " + ok.error().message);
        const io::Node* size = field(n, "size", io::Kind::integer, where, true);
        auto v = size->as_int();
        if (!v) fail_at(*size, where + ".size " + size->text + " is not a 64-bit integer");
        if (*v < 0) fail_at(*size, where + ".size " + size->text + " is negative");
        d.size = *v;
        d.annotations = string_map(n, "annotations", where);
        if (const io::Node* p = field(n, "platform", io::Kind::mapping, where, false)) {
            Platform pl;
            pl.architecture = string(*p, "architecture", where + ".platform", true);
            pl.os = string(*p, "os", where + ".platform", true);
            pl.variant = string(*p, "variant", where + ".platform", false);
            d.platform = std::move(pl);
        }
        return d;
    }

    io::Node root(std::string_view bytes, const std::string& what) const {
        auto docs = io::parse_json(bytes, name);
        if (!docs) throw Exception(std::move(docs).error());
        if (docs->size() != 1)
            throw Exception(Error::invalid(what + " must be one JSON object, found " +
                                               std::to_string(docs->size()) + " values",
                                           SourcePos{name, 0, 0, -1}));
        io::Node r = std::move((*docs)[0].root);
        object(r, what);
        return r;
    }

    void schema_version(const io::Node& r, const std::string& what) const {
        const io::Node* v = field(r, "schemaVersion", io::Kind::integer, what, true);
        if (v->as_int() != std::optional<std::int64_t>(2))
            fail_at(*v, what + " schemaVersion must be 2, not " + v->text);
    }
};

bool known_layer_type(std::string_view t) {
    return t == media::oci_layer_tar || t == media::oci_layer_gzip || t == media::oci_layer_zstd ||
           t == media::docker_layer_gzip || t == "application/vnd.docker.image.rootfs.diff.tar" ||
           t == "application/vnd.oci.image.layer.nondistributable.v1.tar" ||
           t == "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip" ||
           t == "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip";
}

// Writing.
void put_string(std::string& out, std::string_view s) {
    io::go::append_string(out, s, true);
}

void put_key(std::string& out, std::string_view k, bool& first) {
    if (!first) out += ',';
    first = false;
    put_string(out, k);
    out += ':';
}

void put_map(std::string& out, const std::map<std::string, std::string>& m) {
    out += '{';
    bool first = true;
    for (const auto& [k, v] : m) {
        put_key(out, k, first);
        put_string(out, v);
    }
    out += '}';
}

void put_descriptor(std::string& out, const Descriptor& d) {
    bool first = true;
    out += '{';
    put_key(out, "mediaType", first);
    put_string(out, d.media_type);
    put_key(out, "digest", first);
    put_string(out, d.digest);
    put_key(out, "size", first);
    out += std::to_string(d.size);
    if (!d.annotations.empty()) {
        put_key(out, "annotations", first);
        put_map(out, d.annotations);
    }
    if (d.platform) {
        put_key(out, "platform", first);
        bool f2 = true;
        out += '{';
        put_key(out, "architecture", f2);
        put_string(out, d.platform->architecture);
        put_key(out, "os", f2);
        put_string(out, d.platform->os);
        if (!d.platform->variant.empty()) {
            put_key(out, "variant", f2);
            put_string(out, d.platform->variant);
        }
        out += '}';
    }
    out += '}';
}

io::Node string_list(const std::vector<std::string>& v) {
    io::Node n = io::Node::seq();
    for (const auto& s : v)
        n.push(io::Node::string(s));
    return n;
}

io::Node string_map_node(const std::map<std::string, std::string>& m) {
    io::Node n = io::Node::map();
    for (const auto& [k, v] : m)
        n.set(k, io::Node::string(v));
    return n;
}

// Sets `key` of `obj` to `value` when the value is not empty or the key is already there
// (an emptied list stays a list); leaves the key out otherwise.
void set_field(io::Node& obj, const std::string& key, io::Node value, bool empty) {
    // Left out, or left null (Go writes "Labels":null for a nil map), when there is nothing.
    if (empty && (obj.get(key) == nullptr || obj.get(key)->is_null())) return;
    obj.set(key, std::move(value));
}

} // namespace

Result<Platform> Platform::parse(std::string_view s) {
    Platform p;
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (;;) {
        const auto slash = s.find('/', start);
        parts.push_back(s.substr(start, slash == s.npos ? s.npos : slash - start));
        if (slash == s.npos) break;
        start = slash + 1;
    }
    const bool ok = (parts.size() == 2 || parts.size() == 3) &&
                    std::all_of(parts.begin(), parts.end(), platform_part_ok);
    if (!ok)
        return Error::usage("invalid platform \"" + std::string(s) +
                            "\": expected os/architecture[/variant], e.g. linux/amd64 or "
                            "linux/arm64/v8");
    p.os = parts[0];
    p.architecture = parts[1];
    if (parts.size() == 3) p.variant = parts[2];
    return p;
}

std::string Platform::str() const {
    std::string s = os + "/" + architecture;
    if (!variant.empty()) s += "/" + variant;
    return s;
}

Platform host_platform() {
#if defined(__x86_64__)
    return {"linux", "amd64", ""};
#elif defined(__aarch64__)
    return {"linux", "arm64", "v8"};
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    return {"linux", "ppc64le", ""};
#elif defined(__powerpc64__)
    return {"linux", "ppc64", ""};
#elif defined(__s390x__)
    return {"linux", "s390x", ""};
#elif defined(__i386__)
    return {"linux", "386", ""};
#elif defined(__arm__)
    return {"linux", "arm", "v7"};
#elif defined(__riscv) && __riscv_xlen == 64
    return {"linux", "riscv64", ""};
#else
    return {"linux", "unknown", ""};
#endif
}

bool platform_matches(const Platform& want, const Platform& have) {
    if (want.os != have.os || want.architecture != have.architecture) return false;
    if (want.variant.empty()) return true;
    return normal_variant(want.architecture, want.variant) ==
           normal_variant(have.architecture, have.variant);
}

const std::string* label(const ImageConfig& c, std::string_view key) {
    auto it = c.labels.find(std::string(key));
    return it == c.labels.end() ? nullptr : &it->second;
}

Result<Manifest> parse_manifest(std::string_view bytes, const std::string& name,
                                std::string_view expected_media_type) {
    return catch_error([&] {
        Doc d{name};
        io::Node r = d.root(bytes, "manifest");
        Manifest m;
        d.schema_version(r, "manifest");
        m.media_type = d.string(r, "mediaType", "manifest", false);
        if (m.media_type.empty())
            m.media_type = expected_media_type.empty() ? std::string(media::oci_manifest)
                                                       : std::string(expected_media_type);
        if (!media::is_manifest(m.media_type)) {
            const io::Node& at = r.get("mediaType") != nullptr ? *r.get("mediaType") : r;
            d.fail_at(at, media::is_index(m.media_type)
                              ? "an image index (" + m.media_type + ") where a manifest is expected"
                              : "unknown manifest media type \"" + m.media_type + "\"");
        }
        const io::Node* cfg = d.field(r, "config", io::Kind::mapping, "manifest", true);
        m.config = d.descriptor(*cfg, "config");
        if (m.config.media_type != media::oci_config && m.config.media_type != media::docker_config)
            d.fail_at(*cfg, "config media type \"" + m.config.media_type +
                                "\" is not an image configuration (" +
                                std::string(media::oci_config) + ")");
        const io::Node* layers = d.field(r, "layers", io::Kind::sequence, "manifest", true);
        for (std::size_t i = 0; i < layers->items.size(); ++i) {
            const std::string where = "layers[" + std::to_string(i) + "]";
            Descriptor l = d.descriptor(layers->items[i], where);
            if (!known_layer_type(l.media_type))
                d.fail_at(layers->items[i],
                          where + ": unknown layer media type \"" + l.media_type + "\"");
            m.layers.push_back(std::move(l));
        }
        m.annotations = d.string_map(r, "annotations", "manifest");
        return m;
    });
}

Result<Index> parse_index(std::string_view bytes, const std::string& name,
                          std::string_view expected_media_type) {
    return catch_error([&] {
        Doc d{name};
        io::Node r = d.root(bytes, "index");
        Index ix;
        d.schema_version(r, "index");
        ix.media_type = d.string(r, "mediaType", "index", false);
        if (ix.media_type.empty())
            ix.media_type = expected_media_type.empty() ? std::string(media::oci_index)
                                                        : std::string(expected_media_type);
        if (!media::is_index(ix.media_type)) {
            const io::Node& at = r.get("mediaType") != nullptr ? *r.get("mediaType") : r;
            d.fail_at(at,
                      media::is_manifest(ix.media_type)
                          ? "an image manifest (" + ix.media_type + ") where an index is expected"
                          : "unknown index media type \"" + ix.media_type + "\"");
        }
        const io::Node* ms = d.field(r, "manifests", io::Kind::sequence, "index", true);
        for (std::size_t i = 0; i < ms->items.size(); ++i)
            ix.manifests.push_back(
                d.descriptor(ms->items[i], "manifests[" + std::to_string(i) + "]"));
        ix.annotations = d.string_map(r, "annotations", "index");
        return ix;
    });
}

Result<ImageConfig> parse_config(std::string_view bytes, const std::string& name) {
    return catch_error([&] {
        Doc d{name};
        io::Node r = d.root(bytes, "image config");
        ImageConfig c;
        c.architecture = d.string(r, "architecture", "config", false);
        c.os = d.string(r, "os", "config", false);
        c.variant = d.string(r, "variant", "config", false);
        if (const io::Node* cc = d.field(r, "config", io::Kind::mapping, "config", false)) {
            c.labels = d.string_map(*cc, "Labels", "config.config");
            c.entrypoint = d.strings(*cc, "Entrypoint", "config.config");
            c.cmd = d.strings(*cc, "Cmd", "config.config");
            c.env = d.strings(*cc, "Env", "config.config");
            c.working_dir = d.string(*cc, "WorkingDir", "config.config", false);
        }
        if (const io::Node* fs = d.field(r, "rootfs", io::Kind::mapping, "config", false)) {
            c.diff_ids = d.strings(*fs, "diff_ids", "config.rootfs");
            const io::Node* ids = fs->get("diff_ids");
            for (std::size_t i = 0; i < c.diff_ids.size(); ++i)
                if (auto ok = check_digest(c.diff_ids[i]); !ok)
                    d.fail_at(ids->items[i], "config.rootfs.diff_ids[" + std::to_string(i) +
                                                 "] \"" + c.diff_ids[i] +
                                                 "\": " + ok.error().message);
        }
        c.raw = std::move(r);
        return c;
    });
}

std::string to_json(const Descriptor& d) {
    std::string out;
    put_descriptor(out, d);
    return out;
}

std::string to_json(const Manifest& m) {
    std::string out = "{\"schemaVersion\":2,";
    bool first = true;
    put_key(out, "mediaType", first);
    put_string(out, m.media_type);
    put_key(out, "config", first);
    put_descriptor(out, m.config);
    put_key(out, "layers", first);
    out += '[';
    for (std::size_t i = 0; i < m.layers.size(); ++i) {
        if (i) out += ',';
        put_descriptor(out, m.layers[i]);
    }
    out += ']';
    if (!m.annotations.empty()) {
        put_key(out, "annotations", first);
        put_map(out, m.annotations);
    }
    out += '}';
    return out;
}

std::string to_json(const Index& ix) {
    std::string out = "{\"schemaVersion\":2,";
    bool first = true;
    put_key(out, "mediaType", first);
    put_string(out, ix.media_type);
    put_key(out, "manifests", first);
    out += '[';
    for (std::size_t i = 0; i < ix.manifests.size(); ++i) {
        if (i) out += ',';
        put_descriptor(out, ix.manifests[i]);
    }
    out += ']';
    if (!ix.annotations.empty()) {
        put_key(out, "annotations", first);
        put_map(out, ix.annotations);
    }
    out += '}';
    return out;
}

std::string to_json(const ImageConfig& c) {
    io::Node r = c.raw.is_map() ? c.raw : io::Node::map();
    set_field(r, "architecture", io::Node::string(c.architecture), c.architecture.empty());
    set_field(r, "variant", io::Node::string(c.variant), c.variant.empty());
    set_field(r, "os", io::Node::string(c.os), c.os.empty());
    {
        io::Node cc = r.get("config") != nullptr && r.get("config")->is_map() ? *r.get("config")
                                                                              : io::Node::map();
        set_field(cc, "Env", string_list(c.env), c.env.empty());
        set_field(cc, "Entrypoint", string_list(c.entrypoint), c.entrypoint.empty());
        set_field(cc, "Cmd", string_list(c.cmd), c.cmd.empty());
        set_field(cc, "WorkingDir", io::Node::string(c.working_dir), c.working_dir.empty());
        set_field(cc, "Labels", string_map_node(c.labels), c.labels.empty());
        r.set("config", std::move(cc));
    }
    {
        io::Node fs = r.get("rootfs") != nullptr && r.get("rootfs")->is_map() ? *r.get("rootfs")
                                                                              : io::Node::map();
        fs.set("type", io::Node::string("layers"));
        fs.set("diff_ids", string_list(c.diff_ids));
        r.set("rootfs", std::move(fs));
    }
    std::string out;
    io::go::Marshaller m(out, true);
    m.keep_order = true;
    m.value(r);
    return out;
}

Result<Descriptor> select_manifest(const Index& index, const Platform& platform,
                                   const std::string& name) {
    std::vector<std::string> have;
    for (const auto& d : index.manifests) {
        if (!media::is_manifest(d.media_type)) continue;
        if (!d.platform) continue;
        if (platform_matches(platform, *d.platform)) return d;
        have.push_back(d.platform->str());
    }
    std::size_t images = 0;
    const Descriptor* only = nullptr;
    for (const auto& d : index.manifests)
        if (media::is_manifest(d.media_type)) {
            ++images;
            only = &d;
        }
    if (images == 1 && !only->platform) return *only;
    std::string list;
    for (const auto& h : have)
        list += (list.empty() ? "" : ", ") + h;
    return Error::invalid(
        name + " has no image for " + platform.str() +
        (list.empty() ? std::string("; it names no platforms") : "; it has " + list));
}

} // namespace kpkg::oci
