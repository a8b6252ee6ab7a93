// kpkg bundle render: the olm.bundle blob of a bundle directory, byte for byte as opm writes it.
//
// opm reads YAML through sigs.k8s.io/yaml (gopkg.in/yaml.v2 typing, then encoding/json) and
// Kubernetes' unstructured decoding, and writes with encoding/json (and, for -o yaml, back
// through yaml.v2). The Go encodings themselves (yaml.v2 typing and emitter, json.Marshal and
// json.Indent, float64 text, base64) are io/go's (kpkg/io/go.hpp); this file reads the bundle's
// objects as opm's typed decoding does and lays out the blob, re-indenting raw property values
// without touching their bytes.
// Property values are kept as compact JSON bytes (RawProperty), since opm sorts on those bytes.
#include "kpkg/bundle/render.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "kpkg/core/text.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"

namespace kpkg::bundle {
namespace {

char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equal_fold(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

// ------------------------------------------------------------------------------------------------
// Raw JSON bytes

bool is_json_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Where the JSON writer puts its bytes (also the output of io::go::indent): a string, or pieces
// handed to a sink.
struct StringOut {
    std::string& s;
    void put(char c) { s += c; }
    void put(std::string_view v) { s.append(v); }
    void put(const char* p, std::size_t n) { s.append(p, n); }
    void spaces(std::size_t n) { s.append(n, ' '); }
};

// Collects small pieces up to 64 KiB and hands long ones (base64 data) to the sink as they are,
// so a large blob is never held whole.
class SinkOut {
public:
    explicit SinkOut(const std::function<void(std::string_view)>& sink) : sink_(sink) {
        buf_.reserve(kSize + 1024);
    }
    void put(char c) {
        buf_ += c;
        if (buf_.size() >= kSize) flush();
    }
    void put(std::string_view v) {
        if (v.size() >= kSize / 4) {
            flush();
            sink_(v);
            return;
        }
        buf_.append(v);
        if (buf_.size() >= kSize) flush();
    }
    void put(const char* p, std::size_t n) { put(std::string_view(p, n)); }
    void spaces(std::size_t n) {
        buf_.append(n, ' ');
        if (buf_.size() >= kSize) flush();
    }
    void flush() {
        if (buf_.empty()) return;
        sink_(buf_);
        buf_.clear();
    }

private:
    static constexpr std::size_t kSize = 64 * 1024;
    const std::function<void(std::string_view)>& sink_;
    std::string buf_;
};

// ------------------------------------------------------------------------------------------------
// Reading the objects as Go's typed decoding would

// What is wrong with the bundle, thrown: `throw invalid(...)`. render() returns it as its error.
Exception invalid(std::string msg, SourcePos pos = {}) {
    return Exception(Error::invalid(std::move(msg), std::move(pos)));
}

// The value of the last field whose key matches `name` ignoring ASCII case, as encoding/json
// fills a struct field; nullptr when absent or when `obj` is not a mapping.
const io::Node* field(const io::Node* obj, std::string_view name) {
    if (obj == nullptr || !obj->is_map()) return nullptr;
    const io::Node* found = nullptr;
    for (const auto& e : obj->fields)
        if (equal_fold(e.key, name)) found = &e.value;
    return found;
}

// The value under an exact key (a Go map lookup).
const io::Node* exact(const io::Node* obj, std::string_view name) {
    if (obj == nullptr || !obj->is_map()) return nullptr;
    return obj->get(name);
}

bool is_null(const io::Node* n) {
    return n == nullptr || (n->is_scalar() && io::go::scalar_of(*n).type == io::go::Type::null);
}

struct Reader {
    std::string file; // for error positions
    std::string what; // "ClusterServiceVersion", "metadata/dependencies.yaml", ...

    SourcePos pos(const io::Node* n) const {
        return n != nullptr ? io::pos_of(file, n->mark) : io::pos_of(file, {});
    }

    // The readers below throw invalid(...) for a value of another type.

    // A Go string field: absent or null is "", a string (or timestamp) is its text.
    std::string str(const io::Node* n, std::string_view label) const {
        if (is_null(n)) return std::string();
        if (n->is_scalar()) {
            const io::go::Type t = io::go::scalar_of(*n).type;
            if (t == io::go::Type::string || t == io::go::Type::timestamp) return n->text;
        }
        throw invalid(label_msg(label, "must be a string, not " + type_name(*n)), pos(n));
    }

    std::string label_msg(std::string_view label, const std::string& rest) const {
        return what + " " + std::string(label) + " " + rest;
    }

    static std::string type_name(const io::Node& n) {
        if (n.is_map()) return "an object";
        if (n.is_seq()) return "a list";
        switch (io::go::scalar_of(n).type) {
        case io::go::Type::boolean:
            return "a boolean";
        case io::go::Type::null:
            return "null";
        case io::go::Type::string:
        case io::go::Type::timestamp:
            return "a string";
        default:
            return "a number";
        }
    }

    // A list field: absent or null is empty.
    const std::vector<io::Node>* list(const io::Node* n, std::string_view label) const {
        static const std::vector<io::Node> none;
        if (is_null(n)) return &none;
        if (!n->is_seq())
            throw invalid(label_msg(label, "must be a list, not " + type_name(*n)), pos(n));
        return &n->items;
    }

    // Whether an object field is there: false when absent or null, true for an object. Also
    // called for the check alone.
    bool object_or_null(const io::Node* n, std::string_view label) const {
        if (is_null(n)) return false;
        if (!n->is_map())
            throw invalid(label_msg(label, "must be an object, not " + type_name(*n)), pos(n));
        return true;
    }
};

// ------------------------------------------------------------------------------------------------
// olm.csv.metadata (operator-registry property.CSVMetadata over operator-framework/api types)

class CsvMetadataWriter {
public:
    explicit CsvMetadataWriter(Reader r) : r_(std::move(r)) {}

    std::string build(const io::Node& csv) {
        const io::Node* meta = field(&csv, "metadata");
        const io::Node* spec = field(&csv, "spec");
        r_.object_or_null(meta, "metadata");
        r_.object_or_null(spec, "spec");
        out_ = "{";
        first_ = true;
        string_map("annotations", field(meta, "annotations"));
        definitions("apiServiceDefinitions", field(spec, "apiservicedefinitions"), true);
        definitions("crdDescriptions", field(spec, "customresourcedefinitions"), false);
        opt_string("description", field(spec, "description"));
        opt_string("displayName", field(spec, "displayName"));
        install_modes(field(spec, "installModes"));
        string_list("keywords", field(spec, "keywords"));
        string_map("labels", field(meta, "labels"));
        links("links", field(spec, "links"), "name", "url");
        links("maintainers", field(spec, "maintainers"), "name", "email");
        opt_string("maturity", field(spec, "maturity"));
        opt_string("minKubeVersion", field(spec, "minKubeVersion"));
        native_apis(field(spec, "nativeAPIs"));
        key("provider");
        link_object(field(spec, "provider"), "provider", "name", "url");
        out_ += '}';
        return std::move(out_);
    }

private:
    void key(std::string_view k) {
        if (!first_) out_ += ',';
        first_ = false;
        io::go::append_string(out_, k, false);
        out_ += ':';
    }

    // Writes `"k":"v"` into `dst` (starting a member list) unless v is empty (omitempty).
    static void member(std::string& dst, bool& first, std::string_view k, const std::string& v,
                       bool always = false) {
        if (v.empty() && !always) return;
        if (!first) dst += ',';
        first = false;
        io::go::append_string(dst, k, false);
        dst += ':';
        io::go::append_string(dst, v, false);
    }

    void opt_string(std::string_view k, const io::Node* n) {
        std::string v = r_.str(n, "spec." + std::string(k));
        if (!v.empty()) {
            key(k);
            io::go::append_string(out_, v, false);
        }
    }

    void string_list(std::string_view k, const io::Node* n) {
        const auto* items = r_.list(n, "spec." + std::string(k));
        if (items->empty()) return;
        key(k);
        out_ += '[';
        for (std::size_t i = 0; i < items->size(); ++i) {
            if (i > 0) out_ += ',';
            io::go::append_string(out_, r_.str(&(*items)[i], k), false);
        }
        out_ += ']';
    }

    void string_map(std::string_view k, const io::Node* n) {
        if (!r_.object_or_null(n, "metadata." + std::string(k))) return;
        if (n->fields.empty()) return;
        std::vector<std::pair<std::string_view, std::string>> entries;
        for (const auto& e : n->fields)
            entries.emplace_back(e.key,
                                 r_.str(&e.value, "metadata." + std::string(k) + "." + e.key));
        std::sort(entries.begin(), entries.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        key(k);
        out_ += '{';
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (i > 0) out_ += ',';
            io::go::append_string(out_, entries[i].first, false);
            out_ += ':';
            io::go::append_string(out_, entries[i].second, false);
        }
        out_ += '}';
    }

    void install_modes(const io::Node* n) {
        const auto* items = r_.list(n, "spec.installModes");
        if (items->empty()) return;
        key("installModes");
        out_ += '[';
        for (std::size_t i = 0; i < items->size(); ++i) {
            const io::Node& m = (*items)[i];
            r_.object_or_null(&m, "spec.installModes[]");
            if (i > 0) out_ += ',';
            out_ += "{\"type\":";
            io::go::append_string(out_, r_.str(field(&m, "type"), "installModes[].type"), false);
            out_ += ",\"supported\":";
            const io::Node* s = field(&m, "supported");
            bool supported = false;
            if (!is_null(s)) {
                const io::go::Scalar g = s->is_scalar() ? io::go::scalar_of(*s) : io::go::Scalar{};
                if (!s->is_scalar() || g.type != io::go::Type::boolean)
                    throw invalid("ClusterServiceVersion spec.installModes[].supported must be a "
                                  "boolean",
                                  r_.pos(s));
                supported = g.b;
            }
            out_ += supported ? "true}" : "false}";
        }
        out_ += ']';
    }

    void link_object(const io::Node* n, std::string_view label, std::string_view a,
                     std::string_view b) {
        r_.object_or_null(n, label);
        std::string obj = "{";
        bool first = true;
        member(obj, first, a, r_.str(field(n, a), a));
        member(obj, first, b, r_.str(field(n, b), b));
        obj += '}';
        out_ += obj;
    }

    void links(std::string_view k, const io::Node* n, std::string_view a, std::string_view b) {
        const auto* items = r_.list(n, "spec." + std::string(k));
        if (items->empty()) return;
        key(k);
        out_ += '[';
        for (std::size_t i = 0; i < items->size(); ++i) {
            if (i > 0) out_ += ',';
            link_object(&(*items)[i], k, a, b);
        }
        out_ += ']';
    }

    void native_apis(const io::Node* n) {
        const auto* items = r_.list(n, "spec.nativeAPIs");
        if (items->empty()) return;
        key("nativeAPIs");
        out_ += '[';
        for (std::size_t i = 0; i < items->size(); ++i) {
            const io::Node& g = (*items)[i];
            r_.object_or_null(&g, "spec.nativeAPIs[]");
            if (i > 0) out_ += ',';
            std::string obj = "{";
            bool first = true;
            for (std::string_view f : {"group", "version", "kind"})
                member(obj, first, f, r_.str(field(&g, f), f), true);
            out_ += obj + "}";
        }
        out_ += ']';
    }

    // {owned?: [...], required?: [...]}, always written (a struct is never omitted).
    void definitions(std::string_view k, const io::Node* n, bool apiservices) {
        r_.object_or_null(n, std::string("spec.") + (apiservices ? "apiservicedefinitions"
                                                                 : "customresourcedefinitions"));
        key(k);
        out_ += '{';
        bool first = true;
        for (std::string_view part : {"owned", "required"}) {
            const auto* items = r_.list(field(n, part), part);
            if (items->empty()) continue;
            if (!first) out_ += ',';
            first = false;
            io::go::append_string(out_, part, false);
            out_ += ":[";
            for (std::size_t i = 0; i < items->size(); ++i) {
                if (i > 0) out_ += ',';
                description(&(*items)[i], apiservices);
            }
            out_ += ']';
        }
        out_ += '}';
    }

    // A CRDDescription or APIServiceDescription.
    void description(const io::Node* d, bool apiservice) {
        r_.object_or_null(d, "description");
        std::string obj = "{";
        bool first = true;
        member(obj, first, "name", r_.str(field(d, "name"), "name"), true);
        if (apiservice) member(obj, first, "group", r_.str(field(d, "group"), "group"), true);
        member(obj, first, "version", r_.str(field(d, "version"), "version"), true);
        member(obj, first, "kind", r_.str(field(d, "kind"), "kind"), true);
        if (apiservice) {
            member(obj, first, "deploymentName",
                   r_.str(field(d, "deploymentName"), "deploymentName"));
            const io::Node* port = field(d, "containerPort");
            if (!is_null(port)) {
                const io::go::Scalar g =
                    port->is_scalar() ? io::go::scalar_of(*port) : io::go::Scalar{};
                std::int64_t v = 0;
                if (g.type == io::go::Type::int64)
                    v = g.i;
                else if (g.type == io::go::Type::float64 && std::trunc(g.f) == g.f &&
                         std::fabs(g.f) < 1e18)
                    v = static_cast<std::int64_t>(g.f);
                else
                    throw invalid("ClusterServiceVersion containerPort must be an integer",
                                  r_.pos(port));
                if (v < INT32_MIN || v > INT32_MAX)
                    throw invalid("ClusterServiceVersion containerPort is out of range",
                                  r_.pos(port));
                if (v != 0) {
                    obj += ",\"containerPort\":" + std::to_string(v);
                }
            }
        }
        member(obj, first, "displayName", r_.str(field(d, "displayName"), "displayName"));
        member(obj, first, "description", r_.str(field(d, "description"), "description"));
        const auto* res = r_.list(field(d, "resources"), "resources");
        if (!res->empty()) {
            obj += ",\"resources\":[";
            for (std::size_t i = 0; i < res->size(); ++i) {
                const io::Node& x = (*res)[i];
                r_.object_or_null(&x, "resources[]");
                if (i > 0) obj += ',';
                std::string ref = "{";
                bool f = true;
                for (std::string_view k : {"name", "kind", "version"})
                    member(ref, f, k, r_.str(field(&x, k), k), true);
                obj += ref + "}";
            }
            obj += ']';
        }
        for (auto [json_key, label] : {std::pair{"statusDescriptors", "statusDescriptors"},
                                       std::pair{"specDescriptors", "specDescriptors"},
                                       std::pair{"actionDescriptors", "actionDescriptors"}}) {
            const auto* ds = r_.list(field(d, json_key), label);
            if (ds->empty()) continue;
            obj += ",\"";
            obj += json_key;
            obj += "\":[";
            for (std::size_t i = 0; i < ds->size(); ++i) {
                const io::Node& x = (*ds)[i];
                r_.object_or_null(&x, label);
                if (i > 0) obj += ',';
                std::string desc = "{";
                bool f = true;
                member(desc, f, "path", r_.str(field(&x, "path"), "path"), true);
                member(desc, f, "displayName", r_.str(field(&x, "displayName"), "displayName"));
                member(desc, f, "description", r_.str(field(&x, "description"), "description"));
                const auto* xd = r_.list(field(&x, "x-descriptors"), "x-descriptors");
                if (!xd->empty()) {
                    desc += ",\"x-descriptors\":[";
                    for (std::size_t j = 0; j < xd->size(); ++j) {
                        if (j > 0) desc += ',';
                        io::go::append_string(desc, r_.str(&(*xd)[j], "x-descriptors[]"), false);
                    }
                    desc += ']';
                }
                if (const io::Node* v = field(&x, "value")) {
                    desc += ",\"value\":";
                    if (!io::go::append_marshal(desc, *v))
                        throw invalid("a descriptor value has no JSON form", r_.pos(v));
                }
                obj += desc + "}";
            }
            obj += ']';
        }
        obj += '}';
        out_ += obj;
    }

    Reader r_;
    std::string out_;
    bool first_ = true;
};

// ------------------------------------------------------------------------------------------------
// Properties while they are assembled

struct Prop {
    std::string type;
    std::string raw;     // the bytes opm compares (json.RawMessage as decoded)
    std::string compact; // what it writes
};

struct GvkKey {
    std::string group, kind, version;
    friend auto operator<=>(const GvkKey&, const GvkKey&) = default;
};

std::string gvk_value(const GvkKey& k) {
    std::string v = "{\"group\":";
    io::go::append_string(v, k.group, false);
    v += ",\"kind\":";
    io::go::append_string(v, k.kind, false);
    v += ",\"version\":";
    io::go::append_string(v, k.version, false);
    v += '}';
    return v;
}

std::string package_value(const std::string& name, const std::string& version,
                          const std::string& release) {
    std::string v = "{\"packageName\":";
    io::go::append_string(v, name, false);
    v += ",\"version\":";
    io::go::append_string(v, version, false);
    if (!release.empty()) {
        v += ",\"release\":";
        io::go::append_string(v, release, false);
    }
    v += '}';
    return v;
}

Prop make_prop(std::string type, std::string value) {
    Prop p{std::move(type), std::move(value), {}};
    p.compact = p.raw;
    return p;
}

// Whether a metadata file holds JSON (opm then keeps each value's raw bytes).
bool is_json_file(const std::string& path) {
    if (path.empty()) return false;
    auto text = io::read_file(path);
    if (!text) return false;
    for (char c : *text) {
        if (is_json_space(c)) continue;
        return c == '{';
    }
    return false;
}

// The raw value of a {type, value} entry of a metadata file.
std::string raw_value(const TypedValue& tv, bool json_source) {
    std::string out;
    io::go::Marshaller m(out, !json_source);
    m.keep_order = json_source;
    if (!m.value(tv.value))
        throw invalid("the value of " + tv.type + " has no JSON form (.inf or .nan)", tv.pos);
    return out;
}

// One {type, value} entry of the CSV's olm.properties annotation, with the value's raw bytes.
struct AnnotationProp {
    std::string type;
    std::string raw;
};

// Decodes the annotation as json.Unmarshal into []Property: nothing on a syntax error; entries
// that are not objects, or types that are not strings, come out empty.
std::vector<AnnotationProp> parse_properties_annotation(std::string_view s) {
    std::vector<AnnotationProp> out;
    if (!io::parse_json(s, "olm.properties")) return out; // Go's syntax check comes first
    std::size_t end = io::go::skip_value(s, 0);
    if (end == std::string_view::npos) return out;
    for (std::size_t k = end; k < s.size(); ++k)
        if (!is_json_space(s[k])) return out;
    std::size_t i = 0;
    while (is_json_space(s[i]))
        ++i;
    if (s[i] != '[') return out;
    ++i;
    for (;;) {
        while (is_json_space(s[i]))
            ++i;
        if (s[i] == ']') break;
        if (s[i] == ',') {
            ++i;
            continue;
        }
        const std::size_t vend = io::go::skip_value(s, i);
        const std::string_view elem = s.substr(i, vend - i);
        AnnotationProp p;
        if (elem[0] == '{') {
            std::size_t j = 1;
            for (;;) {
                while (is_json_space(elem[j]) || elem[j] == ',')
                    ++j;
                if (elem[j] == '}') break;
                const std::size_t kend = io::go::skip_string(elem, j);
                std::string key;
                auto kdoc = io::parse_json(elem.substr(j, kend - j), "olm.properties");
                if (kdoc && !kdoc->empty()) key = (*kdoc)[0].root.text;
                j = kend;
                while (is_json_space(elem[j]) || elem[j] == ':')
                    ++j;
                const std::size_t e2 = io::go::skip_value(elem, j);
                const std::string_view val = elem.substr(j, e2 - j);
                if (equal_fold(key, "type")) {
                    p.type.clear();
                    if (!val.empty() && val[0] == '"') {
                        auto tdoc = io::parse_json(val, "olm.properties");
                        if (tdoc && !tdoc->empty()) p.type = (*tdoc)[0].root.text;
                    }
                } else if (equal_fold(key, "value")) {
                    p.raw = std::string(val);
                }
                j = e2;
            }
        }
        out.push_back(std::move(p));
        i = vend;
    }
    return out;
}

// The objects opm reads from manifests/: the first document of each file, when it is an object
// with a kind; only the first ClusterServiceVersion.
struct Objects {
    std::vector<const Manifest*> list;
    const Manifest* csv = nullptr;
};

Objects visible_objects(const Bundle& b) {
    Objects o;
    std::set<std::string_view> files;
    for (const auto& m : b.manifests) {
        if (!files.insert(m.file).second) continue;
        if (!m.object.is_map()) continue;
        const io::Node* kind = m.object.get("kind");
        if (kind == nullptr || !kind->is_scalar() || kind->text.empty()) continue;
        if (const io::go::Type t = io::go::scalar_of(*kind).type;
            t != io::go::Type::string && t != io::go::Type::timestamp)
            continue;
        if (kind->text == "ClusterServiceVersion") {
            if (o.csv != nullptr) continue;
            o.csv = &m;
        }
        o.list.push_back(&m);
    }
    return o;
}

// Group and version of an apiVersion ("group/version" or "version").
std::pair<std::string, std::string> split_api_version(std::string_view av) {
    const std::size_t slash = av.find('/');
    if (slash == std::string_view::npos) return {"", std::string(av)};
    if (av.find('/', slash + 1) != std::string_view::npos) return {"", ""};
    return {std::string(av.substr(0, slash)), std::string(av.substr(slash + 1))};
}

struct ApiKey {
    std::string group, version, kind, plural;
    friend auto operator<=>(const ApiKey&, const ApiKey&) = default;
};

Rendered render_bundle(const Bundle& b, const RenderOptions& opts) {
    const Objects objs = visible_objects(b);
    if (objs.list.empty())
        throw invalid("no bundle objects found in manifests/", io::pos_of(b.dir.string(), {}));
    if (objs.csv == nullptr)
        throw invalid("no ClusterServiceVersion in manifests/", io::pos_of(b.dir.string(), {}));
    const io::Node& csv = objs.csv->object;
    Reader rd{objs.csv->file, "ClusterServiceVersion"};

    if (b.annotations.file.empty())
        throw invalid("no annotations file in metadata/ (metadata/annotations.yaml with the "
                      "operators.operatorframework.io.bundle.* labels)",
                      io::pos_of(b.dir.string(), {}));
    const std::string& package = b.annotations.package;
    if (package.empty())
        throw invalid(std::string("the annotations name no package (") + label_package +
                          "); opm writes nothing for such a bundle",
                      io::pos_of(b.annotations.file, {}));

    const io::Node* meta = exact(&csv, "metadata");
    const io::Node* spec = exact(&csv, "spec");
    Rendered out;
    if (const io::Node* name = exact(meta, "name"); name != nullptr && name->is_scalar())
        out.name = name->text;
    out.package = package;
    out.image = opts.image;

    // Version and release.
    std::string version = rd.str(exact(spec, "version"), "spec.version");
    std::string release = rd.str(exact(spec, "release"), "spec.release");
    const io::Node* annotations = exact(meta, "annotations");
    auto annotation = [&](std::string_view key) -> std::string {
        const io::Node* a = exact(annotations, key);
        if (a == nullptr || !a->is_scalar()) return {};
        const io::go::Type t = io::go::scalar_of(*a).type;
        return t == io::go::Type::string || t == io::go::Type::timestamp ? a->text : std::string();
    };
    if (release.empty() && !annotation("olm.substitutesFor").empty()) {
        const std::size_t plus = version.find('+');
        if (plus == std::string::npos)
            throw invalid("the CSV has olm.substitutesFor but its version " + version +
                              " has no build metadata to take the release from",
                          rd.pos(exact(spec, "version")));
        release = version.substr(plus + 1);
        version.resize(plus);
    }

    // APIs the bundle provides: every version of every CRD, and the CSV's owned APIServices.
    std::set<ApiKey> provided_apis;
    for (const Manifest* m : objs.list) {
        if (m->object.get("kind")->text != "CustomResourceDefinition") continue;
        const io::Node* av = m->object.get("apiVersion");
        const auto [group, ver] = split_api_version(av != nullptr ? av->text : std::string());
        if (ver != "v1" && ver != "v1beta1") continue;
        if (group != "apiextensions.k8s.io")
            throw invalid("CustomResourceDefinition has apiVersion " + group + "/" + ver +
                              ", not apiextensions.k8s.io/" + ver,
                          m->pos);
        Reader cr{m->file, "CustomResourceDefinition"};
        const io::Node* cspec = field(&m->object, "spec");
        cr.object_or_null(cspec, "spec");
        const io::Node* names = field(cspec, "names");
        cr.object_or_null(names, "spec.names");
        const std::string g = cr.str(field(cspec, "group"), "spec.group");
        const std::string k = cr.str(field(names, "kind"), "spec.names.kind");
        const std::string p = cr.str(field(names, "plural"), "spec.names.plural");
        for (const io::Node& v : *cr.list(field(cspec, "versions"), "spec.versions")) {
            cr.object_or_null(&v, "spec.versions[]");
            std::string name = cr.str(field(&v, "name"), "spec.versions[].name");
            provided_apis.insert({g, std::move(name), k, p});
        }
        if (ver == "v1beta1") {
            const std::string single = cr.str(field(cspec, "version"), "spec.version");
            if (!single.empty()) provided_apis.insert({g, single, k, p});
        }
    }
    const io::Node* apisvc = exact(spec, "apiservicedefinitions");
    const io::Node* crddefs = exact(spec, "customresourcedefinitions");
    rd.object_or_null(apisvc, "spec.apiservicedefinitions");
    rd.object_or_null(crddefs, "spec.customresourcedefinitions");
    for (const io::Node& a : *rd.list(field(apisvc, "owned"), "spec.apiservicedefinitions.owned")) {
        std::string group = rd.str(field(&a, "group"), "apiservice group");
        std::string version = rd.str(field(&a, "version"), "apiservice version");
        std::string kind = rd.str(field(&a, "kind"), "apiservice kind");
        std::string plural = rd.str(field(&a, "name"), "apiservice name");
        provided_apis.insert(
            {std::move(group), std::move(version), std::move(kind), std::move(plural)});
    }
    // Every owned CRD must be among them (opm refuses the bundle otherwise).
    for (const io::Node& c :
         *rd.list(field(crddefs, "owned"), "spec.customresourcedefinitions.owned")) {
        const std::string name = rd.str(field(&c, "name"), "owned CRD name");
        const std::size_t dot = name.find('.');
        if (dot == std::string::npos)
            throw invalid("owned CRD name " + text::quote(name) + " is not <plural>.<group>",
                          rd.pos(&c));
        std::string version = rd.str(field(&c, "version"), "version");
        std::string kind = rd.str(field(&c, "kind"), "kind");
        ApiKey key{name.substr(dot + 1), std::move(version), std::move(kind), name.substr(0, dot)};
        if (!provided_apis.count(key))
            throw invalid("owned CRD " + text::shown(name) + " " + text::shown(key.version) +
                              " (kind " + text::shown(key.kind) +
                              ") is not among the CRDs in manifests/; opm refuses to render it",
                          rd.pos(&c));
    }
    // APIs it requires.
    std::set<GvkKey> required;
    for (const io::Node& c :
         *rd.list(field(crddefs, "required"), "spec.customresourcedefinitions.required")) {
        const std::string name = rd.str(field(&c, "name"), "required CRD name");
        const std::size_t dot = name.find('.');
        if (dot == std::string::npos)
            throw invalid("required CRD name " + text::quote(name) + " is not <plural>.<group>",
                          rd.pos(&c));
        std::string kind = rd.str(field(&c, "kind"), "kind");
        std::string version = rd.str(field(&c, "version"), "version");
        required.insert({name.substr(dot + 1), std::move(kind), std::move(version)});
    }
    for (const io::Node& a :
         *rd.list(field(apisvc, "required"), "spec.apiservicedefinitions.required")) {
        std::string group = rd.str(field(&a, "group"), "apiservice group");
        std::string kind = rd.str(field(&a, "kind"), "apiservice kind");
        std::string version = rd.str(field(&a, "version"), "apiservice version");
        required.insert({std::move(group), std::move(kind), std::move(version)});
    }

    // bundle.Properties as opm's parser leaves them: properties.yaml, then the derived ones
    // (annotations' package first, the CSV's olm.properties, one olm.gvk per provided API), each
    // list without repeats.
    auto dedup = [](std::vector<Prop>& v) {
        std::set<std::pair<std::string, std::string>> seen;
        std::vector<Prop> out;
        for (auto& p : v)
            if (seen.emplace(p.type, p.raw).second) out.push_back(std::move(p));
        v = std::move(out);
    };
    std::vector<Prop> bundle_props;
    const bool props_json = is_json_file(b.properties_file);
    for (const auto& tv : b.properties) {
        std::string raw = raw_value(tv, props_json);
        bundle_props.push_back(make_prop(tv.type, std::move(raw)));
    }
    std::vector<Prop> derived;
    derived.push_back(make_prop("olm.package", package_value(package, version, release)));
    if (const std::string ann = annotation("olm.properties"); !ann.empty())
        for (auto& ap : parse_properties_annotation(ann)) {
            Prop p;
            p.type = std::move(ap.type);
            p.raw = std::move(ap.raw);
            p.compact = p.raw.empty() ? std::string("null") : io::go::compact(p.raw);
            derived.push_back(std::move(p));
        }
    {
        std::set<GvkKey> gvks;
        for (const auto& a : provided_apis)
            gvks.insert({a.group, a.kind, a.version});
        for (const auto& g : gvks)
            derived.push_back(make_prop("olm.gvk", gvk_value(g)));
    }
    dedup(derived);
    for (auto& p : derived)
        bundle_props.push_back(std::move(p));
    dedup(bundle_props);

    // ObjectsAndPropertiesFromBundle.
    std::set<GvkKey> provided;
    std::optional<Prop> package_prop;
    std::vector<Prop> others, package_required;
    auto parse_value = [&](const std::string& raw, const std::string& what) -> io::Node {
        auto docs = io::parse_json(raw.empty() ? std::string_view("null") : raw, what);
        if (!docs || docs->empty()) throw invalid("cannot parse the value of " + what);
        return std::move((*docs)[0].root);
    };
    Reader pr{b.properties_file, "property"};
    for (auto& p : bundle_props) {
        if (p.type == "olm.gvk") {
            io::Node v = parse_value(p.raw, "olm.gvk property");
            pr.object_or_null(&v, "olm.gvk value");
            std::string group = pr.str(field(&v, "group"), "olm.gvk group");
            std::string kind = pr.str(field(&v, "kind"), "olm.gvk kind");
            std::string version = pr.str(field(&v, "version"), "olm.gvk version");
            provided.insert({std::move(group), std::move(kind), std::move(version)});
        } else if (p.type == "olm.package") {
            io::Node v = parse_value(p.raw, "olm.package property");
            pr.object_or_null(&v, "olm.package value");
            const std::string name = pr.str(field(&v, "packageName"), "packageName");
            const std::string version = pr.str(field(&v, "version"), "version");
            const std::string release = pr.str(field(&v, "release"), "release");
            package_prop = make_prop("olm.package", package_value(name, version, release));
        } else {
            others.push_back(std::move(p));
        }
    }
    const bool deps_json = is_json_file(b.dependencies_file);
    for (const auto& tv : b.dependencies) {
        Reader dr{tv.pos.file, "dependency " + tv.type};
        const io::Node* v = &tv.value;
        if (tv.type == "olm.gvk") {
            dr.object_or_null(v, "value");
            std::string group = dr.str(field(v, "group"), "group");
            std::string kind = dr.str(field(v, "kind"), "kind");
            std::string version = dr.str(field(v, "version"), "version");
            required.insert({std::move(group), std::move(kind), std::move(version)});
        } else if (tv.type == "olm.package") {
            dr.object_or_null(v, "value");
            std::string pv = "{\"packageName\":";
            io::go::append_string(pv, dr.str(field(v, "packageName"), "packageName"), false);
            pv += ",\"versionRange\":";
            io::go::append_string(pv, dr.str(field(v, "version"), "version"), false);
            pv += '}';
            package_required.push_back(make_prop("olm.package.required", std::move(pv)));
        } else {
            std::string raw = raw_value(tv, deps_json);
            others.push_back(make_prop(tv.type, std::move(raw)));
        }
    }
    for (const auto& a : provided_apis)
        provided.insert({a.group, a.kind, a.version});

    std::vector<Prop> props;
    props.reserve(objs.list.size() + provided.size() + required.size() + others.size() + 4);
    std::string json; // reused: a window of the JSON on its way to base64
    json.reserve(64 * 1024);
    for (const Manifest* m : objs.list) {
        json.clear();
        if (opts.csv_metadata) {
            if (!io::go::append_marshal(json, m->object))
                throw invalid("a value in this object has no JSON form (.inf or .nan)", m->pos);
            continue;
        }
        Prop p;
        p.type = "olm.bundle.object";
        // Room for the base64 of up to twice the file's size: reserved pages that are never
        // written cost nothing, and the string does not move while it grows.
        std::error_code ec;
        const auto file_size = std::filesystem::file_size(m->file, ec);
        p.raw.reserve(ec ? 64 * 1024 : static_cast<std::size_t>(file_size) * 8 / 3 + 64);
        p.raw = "{\"data\":\"";
        io::go::Marshaller gm(json, true);
        gm.stream_base64_to(&p.raw);
        if (!gm.value(m->object))
            throw invalid("a value in this object has no JSON form (.inf or .nan)", m->pos);
        gm.finish_base64();
        p.raw += "\"}";
        props.push_back(std::move(p));
    }
    props.push_back(package_prop
                        ? std::move(*package_prop)
                        : make_prop("olm.package", package_value(package, version, release)));
    for (const auto& g : provided)
        props.push_back(make_prop("olm.gvk", gvk_value(g)));
    for (const auto& g : required)
        props.push_back(make_prop("olm.gvk.required", gvk_value(g)));
    for (auto& p : package_required)
        props.push_back(std::move(p));
    for (auto& p : others) {
        if (p.compact.empty()) p.compact = io::go::compact(p.raw);
        props.push_back(std::move(p));
    }
    std::sort(props.begin(), props.end(), [](const Prop& a, const Prop& c) {
        if (a.type != c.type) return a.type < c.type;
        return a.raw < c.raw;
    });
    if (opts.csv_metadata) {
        CsvMetadataWriter w(rd);
        std::string metadata = w.build(csv);
        props.push_back(make_prop("olm.csv.metadata", std::move(metadata)));
    }
    // Bundle objects (and CSV metadata) last, keeping their order.
    std::stable_partition(props.begin(), props.end(), [](const Prop& p) {
        return p.type != "olm.bundle.object" && p.type != "olm.csv.metadata";
    });
    out.properties.reserve(props.size());
    for (auto& p : props) {
        std::string value = p.compact.empty() ? std::move(p.raw) : std::move(p.compact);
        out.properties.push_back({std::move(p.type), std::move(value)});
    }

    // relatedImages: the CSV's list, the image, then the deployments' container images.
    std::set<std::string> seen;
    const io::Node* ri = exact(spec, "relatedImages");
    for (const io::Node& r : *rd.list(ri, "spec.relatedImages")) {
        rd.object_or_null(&r, "spec.relatedImages[]");
        std::string name = rd.str(field(&r, "name"), "spec.relatedImages[].name");
        std::string image = rd.str(field(&r, "image"), "spec.relatedImages[].image");
        RelatedImage img{std::move(name), std::move(image)};
        seen.insert(img.image);
        out.related_images.push_back(std::move(img));
    }
    if (!opts.image.empty() && !seen.count(opts.image))
        out.related_images.push_back({"", opts.image});
    const io::Node* install = field(spec, "install");
    rd.object_or_null(install, "spec.install");
    if (rd.str(field(install, "strategy"), "spec.install.strategy") == "deployment") {
        const io::Node* ispec = field(install, "spec");
        rd.object_or_null(ispec, "spec.install.spec");
        std::set<std::string> images;
        for (const io::Node& d :
             *rd.list(field(ispec, "deployments"), "spec.install.spec.deployments")) {
            rd.object_or_null(&d, "deployment");
            const io::Node* ds = field(&d, "spec");
            rd.object_or_null(ds, "deployment spec");
            const io::Node* tmpl = field(ds, "template");
            rd.object_or_null(tmpl, "deployment spec.template");
            const io::Node* pod = field(tmpl, "spec");
            rd.object_or_null(pod, "deployment spec.template.spec");
            for (const char* list : {"containers", "initContainers"})
                for (const io::Node& c : *rd.list(field(pod, list), list)) {
                    rd.object_or_null(&c, "container");
                    images.insert(rd.str(field(&c, "image"), "container image"));
                }
        }
        for (const auto& img : images)
            if (seen.insert(img).second) out.related_images.push_back({"", img});
    }
    std::stable_sort(
        out.related_images.begin(), out.related_images.end(),
        [](const RelatedImage& a, const RelatedImage& c) { return a.image < c.image; });
    return out;
}

} // namespace

Result<Rendered> render(const Bundle& b, const RenderOptions& opts) {
    return catch_error([&] { return render_bundle(b, opts); });
}

Result<Rendered> render(const Loaded& loaded, const RenderOptions& opts) {
    if (!loaded.blocking.empty()) return fail(Error(loaded.blocking.front()));
    auto r = render(loaded.bundle, opts);
    if (r || r.error().code != ExitCode::invalid) return r;
    // A file of manifests/ that does not parse may hold what render found missing (the CSV, an
    // owned CRD): its parse error, with its position, is what to fix first.
    const std::string mdir = (loaded.bundle.dir / "manifests").string() + "/";
    for (const auto& f : loaded.findings)
        if (f.severity == Severity::error && f.rule == "load.parse" &&
            f.pos.file.compare(0, mdir.size(), mdir) == 0)
            return fail(Error::invalid(f.message, f.pos));
    return r;
}

// ------------------------------------------------------------------------------------------------
// -o json

namespace {

template <class Out>
void put_go_string(Out& out, std::string_view v) {
    std::string tmp;
    io::go::append_string(tmp, v, false);
    out.put(std::string_view(tmp));
}

template <class Out>
void write_blob(Out& out, const Rendered& r) {
    out.put(std::string_view("{\n    \"schema\": \"olm.bundle\",\n"));
    if (!r.name.empty()) {
        out.put(std::string_view("    \"name\": "));
        put_go_string(out, r.name);
        out.put(std::string_view(",\n"));
    }
    if (!r.package.empty()) {
        out.put(std::string_view("    \"package\": "));
        put_go_string(out, r.package);
        out.put(std::string_view(",\n"));
    }
    out.put(std::string_view("    \"image\": "));
    put_go_string(out, r.image);
    if (!r.properties.empty()) {
        out.put(std::string_view(",\n    \"properties\": ["));
        for (std::size_t i = 0; i < r.properties.size(); ++i) {
            out.put(std::string_view(i == 0 ? "\n        {\n            \"type\": "
                                            : ",\n        {\n            \"type\": "));
            put_go_string(out, r.properties[i].type);
            out.put(std::string_view(",\n            \"value\": "));
            io::go::indent(out, r.properties[i].value, 3);
            out.put(std::string_view("\n        }"));
        }
        out.put(std::string_view("\n    ]"));
    }
    if (!r.related_images.empty()) {
        out.put(std::string_view(",\n    \"relatedImages\": ["));
        for (std::size_t i = 0; i < r.related_images.size(); ++i) {
            out.put(std::string_view(i == 0 ? "\n        {\n            \"name\": "
                                            : ",\n        {\n            \"name\": "));
            put_go_string(out, r.related_images[i].name);
            out.put(std::string_view(",\n            \"image\": "));
            put_go_string(out, r.related_images[i].image);
            out.put(std::string_view("\n        }"));
        }
        out.put(std::string_view("\n    ]"));
    }
    out.put(std::string_view("\n}\n"));
}

} // namespace

std::string to_json(const Rendered& r) {
    std::size_t size = 256 + r.name.size() + r.package.size() + r.image.size();
    for (const auto& p : r.properties)
        size += p.type.size() + p.value.size() * 5 / 4 + 80;
    for (const auto& i : r.related_images)
        size += i.name.size() + i.image.size() + 80;
    std::string out;
    out.reserve(size);
    StringOut o{out};
    write_blob(o, r);
    return out;
}

void write_json(const Rendered& r, const std::function<void(std::string_view)>& sink) {
    SinkOut o(sink);
    write_blob(o, r);
    o.flush();
}

io::Node to_node(const Rendered& r) {
    io::Node n = io::Node::map();
    n.set("schema", io::Node::string("olm.bundle"));
    if (!r.name.empty()) n.set("name", io::Node::string(r.name));
    if (!r.package.empty()) n.set("package", io::Node::string(r.package));
    n.set("image", io::Node::string(r.image));
    if (!r.properties.empty()) {
        io::Node list = io::Node::seq();
        for (const auto& p : r.properties) {
            io::Node e = io::Node::map();
            e.set("type", io::Node::string(p.type));
            auto docs = io::parse_json(p.value, p.type);
            e.set("value", docs && !docs->empty() ? std::move((*docs)[0].root) : io::Node{});
            list.push(std::move(e));
        }
        n.set("properties", std::move(list));
    }
    if (!r.related_images.empty()) {
        io::Node list = io::Node::seq();
        for (const auto& i : r.related_images) {
            io::Node e = io::Node::map();
            e.set("name", io::Node::string(i.name));
            e.set("image", io::Node::string(i.image));
            list.push(std::move(e));
        }
        n.set("relatedImages", std::move(list));
    }
    return n;
}

std::string to_yaml(const Rendered& r) {
    const io::Node doc = to_node(r);
    std::string out = "---\n";
    std::size_t size = 256;
    for (const auto& p : r.properties)
        size += p.value.size() * 2 + 64;
    out.reserve(size);
    io::go::append_yaml(out, doc);
    return out;
}

} // namespace kpkg::bundle
