// Loading a registry+v1 bundle directory into bundle::Bundle.
//
// The walk follows opm's bundle parser where it matters for what ends up in the bundle:
// manifests/ and metadata/ are read file by file in byte order of the names, subdirectories are
// left out (and hidden files, in manifests/ only), and the annotations, dependencies and
// properties files are found by their top-level key rather than by name. Where opm silently drops
// things (every document but the first of a file, files that do not decode, CSVs after the first)
// kpkg keeps reading and says so in a Finding, so one run reports everything.
//
// Field access is strict about types: a value of the wrong kind is never coerced; it is reported
// at its own position and treated as absent, and loading goes on.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <system_error>
#include <tuple>

#include "kpkg/bundle/bundle.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"

namespace kpkg::bundle {

namespace fs = std::filesystem;
using io::Node;

namespace {

// Rule ids of the findings made while loading. Three of them share their id with the validator's
// rule for the same problem (manifests.multi-document, csv.multiple, csv.olm-properties).
constexpr const char* rule_read = "load.read";         // a file cannot be read or is too large
constexpr const char* rule_link = "load.link";         // a symbolic link leaving the bundle
constexpr const char* rule_parse = "load.parse";       // a file is not YAML/JSON
constexpr const char* rule_type = "load.type";         // a field of the wrong type
constexpr const char* rule_skipped = "load.skipped";   // a file or object left out
constexpr const char* rule_metadata = "load.metadata"; // a second annotations/dependencies file
constexpr const char* rule_multi_doc = "manifests.multi-document";
constexpr const char* rule_csv_multiple = "csv.multiple";
constexpr const char* rule_olm_properties = "csv.olm-properties";

constexpr const char* olm_properties_key = "olm.properties";
constexpr const char* skip_range_key = "olm.skipRange";

std::string q(std::string_view s) {
    return text::quote(s);
}

// The kind of a node with its article, for "must be X, not Y": "a list", "an integer", "null".
std::string a_kind(const Node& n) {
    const std::string k = io::kind_name(n.kind);
    if (n.is_null()) return k;
    return (k[0] == 'a' || k[0] == 'i' || k[0] == 'o' ? "an " : "a ") + k;
}

bool hidden(std::string_view name) {
    return !name.empty() && name[0] == '.';
}

bool has_problem(const io::Entry& e, io::Problem::Kind kind) {
    return e.problem && e.problem->kind == kind;
}

// A directory, or a link to one inside the tree (listing it follows the link).
bool is_directory(const io::Entry& e) {
    return e.is_dir() || has_problem(e, io::Problem::Kind::link_to_dir);
}

// "52428800 bytes (50.0 MiB)" for messages about file sizes.
std::string size_text(std::uintmax_t n) {
    std::string s = std::to_string(n) + " bytes";
    if (n >= 1024 * 1024) {
        const auto tenths = (n * 10 + 512 * 1024) / (1024 * 1024);
        s += " (" + std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " MiB)";
    }
    return s;
}

class Loader;

// Typed access to the fields of one document, reporting wrong types at the offending node.
// `what` names the object in messages ("ClusterServiceVersion", "dependencies file").
class Reader {
public:
    Reader(Loader& l, std::string file, int doc, std::string what)
        : l_(l), file_(std::move(file)), doc_(doc), what_(std::move(what)) {}

    SourcePos pos(const Node& n) const { return io::pos_of(file_, n.mark, doc_); }
    const std::string& file() const { return file_; }
    int doc() const { return doc_; }

    // Reports that `n`, found at `path`, is not `want`.
    void wrong(const Node& n, const std::string& path, const std::string& want);

    // The map at in[key]; nullptr when absent or null, and (with a finding) when not a map.
    const Node* map(const Node& in, std::string_view key, const std::string& path) {
        const Node* n = in.get(key);
        if (n == nullptr || n->is_null()) return nullptr;
        if (!n->is_map()) {
            wrong(*n, path, "an object");
            return nullptr;
        }
        return n;
    }

    // The items of the list at in[key]; empty when absent or null, and (with a finding) when
    // not a list.
    const std::vector<Node>& list(const Node& in, std::string_view key, const std::string& path,
                                  const char* want = "a list") {
        static const std::vector<Node> none;
        const Node* n = in.get(key);
        if (n == nullptr || n->is_null()) return none;
        if (!n->is_seq()) {
            wrong(*n, path, want);
            return none;
        }
        return n->items;
    }

    // The string at in[key]; "" when absent or null, and (with a finding) when not a string.
    std::string str(const Node& in, std::string_view key, const std::string& path) {
        const Node* n = in.get(key);
        if (n == nullptr || n->is_null()) return {};
        if (!n->is_string()) {
            wrong(*n, path, "a string");
            return {};
        }
        return n->text;
    }

    std::vector<std::string> strs(const Node& in, std::string_view key, const std::string& path) {
        std::vector<std::string> out;
        const auto& items = list(in, key, path, "a list of strings");
        for (std::size_t i = 0; i < items.size(); ++i) {
            const Node& item = items[i];
            if (item.is_string())
                out.push_back(item.text);
            else
                wrong(item, path + "[" + std::to_string(i) + "]", "a string");
        }
        return out;
    }

private:
    Loader& l_;
    std::string file_;
    int doc_;
    std::string what_;
};

class Loader {
public:
    Loader(const io::Tree& tree, const LoadOptions& opts, Loaded& out)
        : tree_(tree), opts_(opts), out_(out), b_(out.bundle) {
        b_.dir = tree.display_root();
    }

    void add(Severity s, const char* rule, std::string msg, SourcePos pos) {
        Finding f;
        f.severity = s;
        f.rule = rule;
        f.message = std::move(msg);
        f.pos = std::move(pos);
        out_.findings.push_back(std::move(f));
    }
    void error(const char* rule, std::string msg, SourcePos pos) {
        add(Severity::error, rule, std::move(msg), std::move(pos));
    }
    void warn(const char* rule, std::string msg, SourcePos pos) {
        add(Severity::warning, rule, std::move(msg), std::move(pos));
    }
    // An error finding that also keeps the bundle from being rendered (Loaded::blocking):
    // `code` is ExitCode::error for what cannot be read, ExitCode::invalid for what is refused.
    void block(ExitCode code, const char* rule, std::string msg, SourcePos pos) {
        Error e{code, msg, pos, {}, {}};
        out_.blocking.push_back(std::move(e));
        error(rule, std::move(msg), std::move(pos));
    }

    // `manifests`: the listing of manifests/, which load() has made sure is a directory.
    void run(const std::vector<io::Entry>& manifests) {
        for (const auto& rel : pick(manifests, true))
            read_manifest_file(rel);
        index_objects();
        read_metadata();
    }

private:
    const io::Tree& tree_;
    const LoadOptions& opts_;
    Loaded& out_;
    Bundle& b_;

    static SourcePos file_pos(const std::string& file) {
        SourcePos p;
        p.file = file;
        return p;
    }

public:
    // Why a link leaving the bundle is refused: "symbolic link to "T", which is outside ...".
    static std::string leaving(const io::Tree& tree, const io::Problem& p) {
        return "symbolic link to " + q(p.target) + ", which is outside the bundle directory " +
               q(tree.display_root()) +
               " (links that leave the bundle are not followed; copy the file into the bundle "
               "instead)";
    }

private:
    std::string leaving(const io::Problem& p) const { return leaving(tree_, p); }

    // Of the listing of a directory, the files a bundle reader looks at, in byte order:
    // subdirectories (and hidden entries when `skip_hidden`) are left out silently, other
    // non-regular files (sockets, devices) with a warning. Symbolic links are followed when they
    // stay inside the bundle directory; one leaving it, dangling or looping is an error.
    std::vector<std::string> pick(const std::vector<io::Entry>& entries, bool skip_hidden) {
        std::vector<std::string> names;
        for (const auto& e : entries) {
            if (skip_hidden && hidden(e.name())) continue;
            if (e.is_dir()) continue;
            if (e.problem) {
                const io::Problem& p = *e.problem;
                switch (p.kind) {
                case io::Problem::Kind::leaves_root:
                    block(ExitCode::invalid, rule_link, "refused: a " + leaving(p),
                          file_pos(e.display));
                    break;
                case io::Problem::Kind::dangling:
                    block(ExitCode::error, rule_read,
                          "not read: a symbolic link to " + q(p.target) + ", " +
                              (p.error == ENOENT || p.why.empty()
                                   ? std::string("which does not exist")
                                   : p.why),
                          file_pos(e.display));
                    break;
                case io::Problem::Kind::link_to_dir: // a directory, as any other
                    break;
                case io::Problem::Kind::not_regular:
                    warn(rule_skipped, "not a regular file; not read", file_pos(e.display));
                    break;
                }
                continue;
            }
            names.push_back(e.rel);
        }
        return names;
    }

    // Every document of one file, or nothing (with a finding) when it cannot be read or parsed.
    std::optional<std::vector<io::Document>> read_docs(const std::string& rel,
                                                       const std::string& file) {
        io::ReadOptions ro;
        ro.limit = opts_.limits.max_file_bytes;
        auto text = tree_.read(rel, ro);
        if (!text) {
            block(ExitCode::error, rule_read, text.error().message, file_pos(file));
            return std::nullopt;
        }
        if (text->too_large) {
            block(ExitCode::invalid, rule_read,
                  (text->size > 0 ? "file is " + size_text(text->size)
                                  : std::string("file is larger")) +
                      ", more than the limit of " + size_text(opts_.limits.max_file_bytes) +
                      "; not read",
                  file_pos(file));
            return std::nullopt;
        }
        auto docs = io::parse_auto(text->text(), file, opts_.limits);
        if (!docs) {
            Error e = std::move(docs).error();
            if (e.pos.file.empty()) e.pos.file = file;
            if (e.code == ExitCode::error) {
                // Not the file's fault (an internal error of the parser): an error of the run,
                // not a finding. (Out of memory is not returned: std::bad_alloc ends the run.)
                block(ExitCode::error, rule_read, e.message, std::move(e.pos));
                return std::nullopt;
            }
            error(rule_parse, "does not parse: " + e.message, std::move(e.pos));
            return std::nullopt;
        }
        return std::move(docs).value();
    }

    // A warning when a file holds more than one document; `used` says what opm does with them.
    void check_one_document(const std::vector<io::Document>& docs, const std::string& file,
                            const std::string& rel) {
        if (docs.size() < 2) return;
        warn(rule_multi_doc,
             "more than one document in " + rel + " (" + std::to_string(docs.size()) +
                 "); opm uses only the first",
             io::pos_of(file, docs[1].start, docs[1].index));
    }

    void read_manifest_file(const std::string& rel) {
        const std::string file = tree_.display(rel);
        auto docs = read_docs(rel, file);
        if (!docs) return;
        if (docs->empty()) {
            warn(rule_skipped, "file holds no document", file_pos(file));
            return;
        }
        check_one_document(*docs, file, rel);
        for (auto& d : *docs) {
            if (d.root.is_null()) continue;
            Reader r(*this, file, d.index, "object");
            if (!d.root.is_map()) {
                std::string msg = std::string("a manifest must be a Kubernetes object (a map with "
                                              "apiVersion and kind), not ") +
                                  a_kind(d.root);
                if (d.root.is_seq())
                    msg += "; write each object of the list as its own document after \"---\"";
                error(rule_type, std::move(msg), r.pos(d.root));
                continue;
            }
            Manifest m;
            m.file = file;
            m.document = d.index;
            m.pos = r.pos(d.root);
            m.object = std::move(d.root);
            m.api_version = r.str(m.object, "apiVersion", "apiVersion");
            m.kind = r.str(m.object, "kind", "kind");
            Reader named(*this, file, d.index, m.kind.empty() ? "object" : m.kind);
            if (const Node* meta = named.map(m.object, "metadata", "metadata"))
                m.name = named.str(*meta, "name", "metadata.name");
            b_.manifests.push_back(std::move(m));
        }
    }

    // Pulls the CSV and the CRDs out of the manifests read.
    void index_objects() {
        for (std::size_t i = 0; i < b_.manifests.size(); ++i) {
            const Manifest& m = b_.manifests[i];
            if (m.kind == "ClusterServiceVersion") {
                if (!b_.csv) {
                    read_csv(i);
                } else {
                    const Manifest& first = b_.manifests[b_.csv->manifest];
                    error(rule_csv_multiple,
                          "more than one ClusterServiceVersion: " + q(m.name) + " comes after " +
                              q(first.name) + " (" + first.pos.str() +
                              "); a bundle has exactly one and OLM uses only the first",
                          m.pos);
                }
            } else if (m.kind == "CustomResourceDefinition") {
                read_crd(i);
            }
        }
    }

    void read_crd(std::size_t index) {
        const Manifest& m = b_.manifests[index];
        const bool v1 = m.api_version == "apiextensions.k8s.io/v1";
        const bool v1beta1 = m.api_version == "apiextensions.k8s.io/v1beta1";
        if (!v1 && !v1beta1) {
            warn(rule_skipped,
                 "CustomResourceDefinition " + q(m.name) + " has apiVersion " + q(m.api_version) +
                     ", not apiextensions.k8s.io/v1 or v1beta1; it is not read as a CRD",
                 m.pos);
            return;
        }
        Reader r(*this, m.file, m.document, "CustomResourceDefinition");
        CrdInfo c;
        c.manifest = index;
        c.name = m.name;
        if (const Node* spec = r.map(m.object, "spec", "spec")) {
            c.group = r.str(*spec, "group", "spec.group");
            if (const Node* names = r.map(*spec, "names", "spec.names")) {
                c.kind = r.str(*names, "kind", "spec.names.kind");
                c.plural = r.str(*names, "plural", "spec.names.plural");
            }
            auto add_version = [&c](const std::string& v) {
                if (!v.empty() &&
                    std::find(c.versions.begin(), c.versions.end(), v) == c.versions.end())
                    c.versions.push_back(v);
            };
            // v1beta1 names a single version in spec.version (alone or as the first of
            // spec.versions); v1 has no such field.
            if (v1beta1) add_version(r.str(*spec, "version", "spec.version"));
            const auto& versions = r.list(*spec, "versions", "spec.versions");
            for (std::size_t i = 0; i < versions.size(); ++i) {
                const std::string path = "spec.versions[" + std::to_string(i) + "]";
                if (!versions[i].is_map()) {
                    r.wrong(versions[i], path, "an object");
                    continue;
                }
                add_version(r.str(versions[i], "name", path + ".name"));
            }
        }
        b_.crds.push_back(std::move(c));
    }

    void read_csv(std::size_t index) {
        const Manifest& m = b_.manifests[index];
        Reader r(*this, m.file, m.document, "ClusterServiceVersion");
        const Node& o = m.object;
        CsvInfo c;
        c.manifest = index;
        c.name = m.name;

        const Node* annotations = nullptr;
        if (const Node* meta = o.get("metadata"); meta != nullptr && meta->is_map())
            annotations = r.map(*meta, "annotations", "metadata.annotations");
        if (annotations != nullptr) {
            for (const auto& e : annotations->fields) {
                if (e.value.is_string())
                    c.annotations[e.key] = e.value.text;
                else if (!e.value.is_null())
                    r.wrong(e.value, "metadata.annotations[" + q(e.key) + "]", "a string");
            }
            if (auto it = c.annotations.find(skip_range_key); it != c.annotations.end())
                c.skip_range = it->second;
        }

        if (const Node* spec = r.map(o, "spec", "spec")) read_csv_spec(r, *spec, c);

        if (annotations != nullptr)
            if (const Node* props = annotations->get(olm_properties_key);
                props != nullptr && props->is_string())
                read_olm_properties(r, *props);
        b_.csv = std::move(c);
    }

    void read_csv_spec(Reader& r, const Node& spec, CsvInfo& c) {
        c.version = r.str(spec, "version", "spec.version");
        c.replaces = r.str(spec, "replaces", "spec.replaces");
        c.skips = r.strs(spec, "skips", "spec.skips");
        c.min_kube_version = r.str(spec, "minKubeVersion", "spec.minKubeVersion");

        if (const Node* modes = spec.get("installModes"); modes != nullptr && !modes->is_null()) {
            c.has_install_modes = true;
            const auto& items = r.list(spec, "installModes", "spec.installModes");
            for (std::size_t i = 0; i < items.size(); ++i) {
                const std::string path = "spec.installModes[" + std::to_string(i) + "]";
                const Node& item = items[i];
                if (!item.is_map()) {
                    r.wrong(item, path, "an object with type and supported");
                    continue;
                }
                std::string type = r.str(item, "type", path + ".type");
                bool supported = false;
                if (const Node* s = item.get("supported"); s != nullptr && !s->is_null()) {
                    if (auto v = s->as_bool(); v && s->kind == io::Kind::boolean)
                        supported = *v;
                    else
                        r.wrong(*s, path + ".supported", "true or false");
                }
                c.install_modes.emplace_back(std::move(type), supported);
            }
        }

        if (const Node* install = r.map(spec, "install", "spec.install")) {
            c.install_strategy = r.str(*install, "strategy", "spec.install.strategy");
            if (const Node* ispec = r.map(*install, "spec", "spec.install.spec"))
                read_deployments(r, *ispec, c);
        }

        if (const Node* crds =
                r.map(spec, "customresourcedefinitions", "spec.customresourcedefinitions")) {
            read_crd_refs(r, *crds, "owned", c.owned_crds);
            read_crd_refs(r, *crds, "required", c.required_crds);
        }
        if (const Node* apis = r.map(spec, "apiservicedefinitions", "spec.apiservicedefinitions")) {
            read_api_refs(r, *apis, "owned", c.owned_apiservices);
            read_api_refs(r, *apis, "required", c.required_apiservices);
        }

        const auto& related = r.list(spec, "relatedImages", "spec.relatedImages");
        for (std::size_t i = 0; i < related.size(); ++i) {
            const std::string path = "spec.relatedImages[" + std::to_string(i) + "]";
            if (!related[i].is_map()) {
                r.wrong(related[i], path, "an object with name and image");
                continue;
            }
            RelatedImage ri;
            ri.name = r.str(related[i], "name", path + ".name");
            ri.image = r.str(related[i], "image", path + ".image");
            c.related_images.push_back(std::move(ri));
        }
    }

    void read_deployments(Reader& r, const Node& ispec, CsvInfo& c) {
        const std::string base = "spec.install.spec.deployments";
        const auto& deps = r.list(ispec, "deployments", base);
        for (std::size_t i = 0; i < deps.size(); ++i) {
            const std::string path = base + "[" + std::to_string(i) + "]";
            const Node& d = deps[i];
            if (!d.is_map()) {
                r.wrong(d, path, "an object with name and spec");
                continue;
            }
            DeploymentInfo di;
            di.name = r.str(d, "name", path + ".name");
            const Node* pod = nullptr;
            if (const Node* dspec = r.map(d, "spec", path + ".spec"))
                if (const Node* tmpl = r.map(*dspec, "template", path + ".spec.template"))
                    pod = r.map(*tmpl, "spec", path + ".spec.template.spec");
            if (pod != nullptr) {
                // Containers first, then init containers, whatever order the keys are written in.
                for (bool init : {false, true}) {
                    const char* key = init ? "initContainers" : "containers";
                    const std::string cpath = path + ".spec.template.spec." + key;
                    const auto& items = r.list(*pod, key, cpath);
                    for (std::size_t j = 0; j < items.size(); ++j) {
                        const std::string ipath = cpath + "[" + std::to_string(j) + "]";
                        if (!items[j].is_map()) {
                            r.wrong(items[j], ipath, "an object");
                            continue;
                        }
                        ContainerInfo ci;
                        ci.name = r.str(items[j], "name", ipath + ".name");
                        ci.image = r.str(items[j], "image", ipath + ".image");
                        ci.init = init;
                        di.containers.push_back(std::move(ci));
                    }
                }
            }
            c.deployments.push_back(std::move(di));
        }
    }

    void read_crd_refs(Reader& r, const Node& parent, const char* key, std::vector<CrdRef>& out) {
        const std::string base = std::string("spec.customresourcedefinitions.") + key;
        const auto& items = r.list(parent, key, base);
        for (std::size_t i = 0; i < items.size(); ++i) {
            const std::string path = base + "[" + std::to_string(i) + "]";
            if (!items[i].is_map()) {
                r.wrong(items[i], path, "an object with name, version and kind");
                continue;
            }
            CrdRef ref;
            ref.name = r.str(items[i], "name", path + ".name");
            ref.version = r.str(items[i], "version", path + ".version");
            ref.kind = r.str(items[i], "kind", path + ".kind");
            ref.pos = r.pos(items[i]);
            out.push_back(std::move(ref));
        }
    }

    void read_api_refs(Reader& r, const Node& parent, const char* key,
                       std::vector<ApiServiceRef>& out) {
        const std::string base = std::string("spec.apiservicedefinitions.") + key;
        const auto& items = r.list(parent, key, base);
        for (std::size_t i = 0; i < items.size(); ++i) {
            const std::string path = base + "[" + std::to_string(i) + "]";
            if (!items[i].is_map()) {
                r.wrong(items[i], path, "an object with group, version and kind");
                continue;
            }
            ApiServiceRef ref;
            ref.group = r.str(items[i], "group", path + ".group");
            ref.version = r.str(items[i], "version", path + ".version");
            ref.kind = r.str(items[i], "kind", path + ".kind");
            ref.name = r.str(items[i], "name", path + ".name");
            ref.pos = r.pos(items[i]);
            out.push_back(std::move(ref));
        }
    }

    // The olm.properties annotation: a JSON list of {type, value} inside a string. Positions the
    // JSON parser reports are relative to the string, so findings point at the annotation and
    // say where inside it the problem is.
    void read_olm_properties(Reader& r, const Node& value) {
        const SourcePos at = r.pos(value);
        const std::string what = std::string("annotation ") + olm_properties_key;
        auto docs = io::parse_json(value.text, olm_properties_key, opts_.limits);
        if (!docs) {
            const Error& e = docs.error();
            std::string where;
            if (e.pos.line != 0)
                where = " (line " + std::to_string(e.pos.line) + ", column " +
                        std::to_string(e.pos.column) + " of the annotation's value)";
            error(rule_olm_properties,
                  what + " is not valid JSON: " + e.message + where +
                      "; it must be a JSON list of {type, value} objects",
                  at);
            return;
        }
        if (docs->size() != 1) {
            error(rule_olm_properties,
                  what + (docs->empty() ? " is empty" : " holds more than one JSON value") +
                      "; it must be a JSON list of {type, value} objects",
                  at);
            return;
        }
        const Node& root = (*docs)[0].root;
        if (!root.is_seq()) {
            error(rule_olm_properties,
                  what + " must be a JSON list of {type, value} objects, not " + a_kind(root), at);
            return;
        }
        for (std::size_t i = 0; i < root.items.size(); ++i) {
            const Node& item = root.items[i];
            const std::string entry = what + " entry " + std::to_string(i);
            if (!item.is_map()) {
                error(rule_olm_properties,
                      entry + " must be an object with type and value, not " + a_kind(item), at);
                continue;
            }
            TypedValue tv;
            tv.pos = at;
            if (const Node* t = item.get("type"); t != nullptr && !t->is_null()) {
                if (!t->is_string()) {
                    error(rule_olm_properties, entry + ": type must be a string, not " + a_kind(*t),
                          at);
                    continue;
                }
                tv.type = t->text;
            }
            if (const Node* v = item.get("value")) tv.value = *v;
            b_.csv_properties.push_back(std::move(tv));
        }
    }

    // ---- metadata/ ----------------------------------------------------------------------------

    // metadata/: each file is looked at for a top-level `annotations` map and non-empty
    // `dependencies` and `properties` lists, and the first file with each one supplies it. As in
    // opm, hidden files count here (only manifests/ skips them). Files with none are ignored.
    void read_metadata() {
        auto m = tree_.find("metadata");
        if (!m) {
            block(ExitCode::error, rule_read, m.error().message,
                  file_pos(tree_.display("metadata")));
            return;
        }
        if (!*m) return; // the validator reports the missing annotations
        const io::Entry& md = **m;
        if (has_problem(md, io::Problem::Kind::leaves_root)) {
            block(ExitCode::invalid, rule_link, "refused: metadata/ is a " + leaving(*md.problem),
                  file_pos(md.display));
            return;
        }
        if (!is_directory(md)) return; // not a directory: as if missing, the validator says so
        auto entries = tree_.list_dir("metadata");
        if (!entries) {
            block(ExitCode::error, rule_read, entries.error().message, file_pos(md.display));
            return;
        }
        for (const auto& rel : pick(*entries, false)) {
            const std::string file = tree_.display(rel);
            auto docs = read_docs(rel, file);
            if (!docs || docs->empty()) continue;
            check_one_document(*docs, file, rel);
            const io::Document& d = docs->front();
            if (!d.root.is_map()) continue;
            Reader r(*this, file, d.index, "field");
            if (const Node* a = d.root.get("annotations")) read_annotations(r, *a);
            if (const Node* deps = d.root.get("dependencies"))
                read_typed_file(r, *deps, "dependencies", b_.dependencies, b_.dependencies_file);
            if (const Node* props = d.root.get("properties"))
                read_typed_file(r, *props, "properties", b_.properties, b_.properties_file);
        }
    }

    // Whether `key` of this file is used; a warning when an earlier file already supplied it.
    bool first_file(Reader& r, const Node& n, const char* key, const std::string& taken) {
        if (taken.empty()) return true;
        warn(rule_metadata,
             std::string("`") + key + "` is also defined in " + taken +
                 "; only the first file (in name order) is used",
             r.pos(n));
        return false;
    }

    void read_annotations(Reader& r, const Node& a) {
        Annotations& an = b_.annotations;
        if (a.is_null()) return;
        if (!a.is_map()) {
            r.wrong(a, "annotations", "a map of label names to strings");
            return;
        }
        if (!first_file(r, a, "annotations", an.file)) return;
        an.file = r.file();
        for (const auto& e : a.fields) {
            const SourcePos p =
                e.value.mark.line != 0 ? r.pos(e.value) : io::pos_of(r.file(), e.key_mark, r.doc());
            if (!e.value.is_string() && !e.value.is_null()) {
                r.wrong(e.value, "annotations[" + q(e.key) + "]", "a string");
                continue;
            }
            an.labels[e.key] = e.value.text;
            an.positions[e.key] = p;
        }
        auto label = [&an](const char* key) {
            auto it = an.labels.find(key);
            return it == an.labels.end() ? std::string() : it->second;
        };
        an.package = label(label_package);
        an.default_channel = label(label_default_channel);
        const std::string channels = label(label_channels); // the views below point into it
        for (auto part : text::split(channels, ',')) {
            auto name = text::trim(part);
            if (!name.empty()) an.channels.emplace_back(name);
        }
    }

    void read_typed_file(Reader& r, const Node& n, const char* key, std::vector<TypedValue>& out,
                         std::string& taken) {
        if (n.is_null()) return;
        if (!n.is_seq()) {
            r.wrong(n, key, "a list of {type, value} objects");
            return;
        }
        // An empty list does not make a file the dependencies (properties) file, as in opm.
        if (n.items.empty() || !first_file(r, n, key, taken)) return;
        taken = r.file();
        for (std::size_t i = 0; i < n.items.size(); ++i) {
            const Node& item = n.items[i];
            const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
            if (!item.is_map()) {
                r.wrong(item, path, "an object with type and value");
                continue;
            }
            TypedValue tv;
            tv.pos = r.pos(item);
            if (const Node* t = item.get("type"); t != nullptr && !t->is_null()) {
                if (!t->is_string()) {
                    r.wrong(*t, path + ".type", "a string");
                    continue;
                }
                tv.type = t->text;
            }
            if (const Node* v = item.get("value")) tv.value = *v;
            out.push_back(std::move(tv));
        }
    }
};

void Reader::wrong(const Node& n, const std::string& path, const std::string& want) {
    std::string msg = what_ + " " + path + " must be " + want + ", not " + a_kind(n);
    if (want == "a string" && n.is_scalar() && !n.is_null())
        msg += "; quote it (\"" + n.text + "\") to keep it as written";
    l_.error(rule_type, std::move(msg), pos(n));
}

} // namespace

Result<Loaded> load(const fs::path& dir) {
    return load(dir, LoadOptions{});
}

Result<Loaded> load(const fs::path& dir, const LoadOptions& opts) {
    if (dir.empty()) return fail(Error::io("no bundle directory given"));
    const std::string name = dir.string();
    std::error_code ec;
    const fs::file_status st = fs::status(dir, ec);
    if (!fs::exists(st)) {
        std::string why = ec && ec != std::errc::no_such_file_or_directory
                              ? ec.message()
                              : std::string("no such file or directory");
        return fail(Error::io("cannot read bundle directory " + q(name) + ": " + why));
    }
    if (!fs::is_directory(st)) return load(io::FileTree(dir), opts); // refused as not a directory
    return load(io::DirectoryTree(dir), opts);
}

Result<Loaded> load(const io::Tree& tree, const LoadOptions& opts) {
    const std::string& name = tree.display_root();
    if (!tree.is_directory()) {
        // A path that is not there says so; anything else is not a bundle.
        if (auto l = tree.list(); !l) return fail(std::move(l).error());
        return fail(Error::io(q(name) + " is not a directory; a bundle is a directory holding "
                                        "manifests/ and metadata/"));
    }
    auto manifests = tree.find("manifests");
    if (!manifests) return fail(std::move(manifests).error());
    const io::Entry* m = manifests->has_value() ? &**manifests : nullptr;
    if (m != nullptr && has_problem(*m, io::Problem::Kind::leaves_root)) {
        SourcePos p;
        p.file = m->display;
        return fail(
            Error::invalid("manifests/ is a " + Loader::leaving(tree, *m->problem), std::move(p)));
    }
    if (m == nullptr || !is_directory(*m)) {
        SourcePos p;
        p.file = name;
        return fail(Error::invalid(
            "not a registry+v1 bundle: there is no manifests/ directory (a bundle directory holds "
            "manifests/ with the ClusterServiceVersion, CRDs and other objects, and metadata/ "
            "with annotations.yaml naming the package and channels)",
            std::move(p)));
    }
    auto listing = tree.list_dir("manifests");
    if (!listing) return fail(std::move(listing).error());
    Loaded out;
    Loader l(tree, opts, out);
    l.run(*listing);
    // Findings in reading order: by file, then position (a file's findings are made in the
    // order its fields are read, which is not the order they are written in).
    std::stable_sort(out.findings.begin(), out.findings.end(),
                     [](const Finding& a, const Finding& b) {
                         return std::tie(a.pos.file, a.pos.line, a.pos.column) <
                                std::tie(b.pos.file, b.pos.line, b.pos.column);
                     });
    return out;
}

} // namespace kpkg::bundle
