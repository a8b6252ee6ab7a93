#include "kpkg/catalog/load.hpp"

#include "files.hpp"
#include "kpkg/core/log.hpp"

namespace kpkg::catalog {

namespace fs = std::filesystem;
using io::Node;

namespace {

// Reads the fields of one blob; a wrong type throws kpkg::Exception at the offending node.
class Fields {
public:
    Fields(const Node& blob, const std::string& file, int doc, std::string schema)
        : blob_(blob), file_(file), doc_(doc), schema_(std::move(schema)) {}

    SourcePos pos(const Node& n) const { return io::pos_of(file_, n.mark, doc_); }

    Error type_error(const Node& n, const std::string& field, const char* want) const {
        return Error::invalid(schema_ + " field \"" + field + "\" must be " + want + ", not " +
                                  io::kind_name(n.kind),
                              pos(n));
    }

    // A string field; absent or null gives "".
    std::string str(const Node& in, const std::string& field) const {
        const Node* n = in.get(field);
        if (n == nullptr || n->is_null()) return std::string();
        if (!n->is_string()) throw Exception(type_error(*n, field, "a string"));
        return n->text;
    }

    std::vector<std::string> str_list(const Node& in, const std::string& field) const {
        std::vector<std::string> out;
        const Node* n = in.get(field);
        if (n == nullptr || n->is_null()) return out;
        if (!n->is_seq()) throw Exception(type_error(*n, field, "a list of strings"));
        for (const Node& item : n->items) {
            if (!item.is_string()) throw Exception(type_error(item, field + "[]", "a string"));
            out.push_back(item.text);
        }
        return out;
    }

    // A list of objects; absent or null gives an empty list.
    const std::vector<Node>& obj_list(const Node& in, const std::string& field) const {
        static const std::vector<Node> empty;
        const Node* n = in.get(field);
        if (n == nullptr || n->is_null()) return empty;
        if (!n->is_seq()) throw Exception(type_error(*n, field, "a list"));
        for (const Node& item : n->items)
            if (!item.is_map()) throw Exception(type_error(item, field + "[]", "an object"));
        return n->items;
    }

    const Node& blob() const { return blob_; }

private:
    const Node& blob_;
    const std::string& file_;
    int doc_;
    std::string schema_;
};

// Adds one blob to cfg; what is wrong with it throws kpkg::Exception.
void add_blob(declcfg::DeclarativeConfig& cfg, const Node& blob, const std::string& file, int doc) {
    SourcePos where = io::pos_of(file, blob.mark, doc);
    if (!blob.is_map())
        throw Exception(Error::invalid(std::string("a catalog blob must be an object, not ") +
                                           io::kind_name(blob.kind),
                                       where));
    const Node* schema = blob.get("schema");
    if (schema == nullptr || schema->is_null())
        throw Exception(Error::invalid("blob has no \"schema\" field", where));
    if (!schema->is_string())
        throw Exception(
            Error::invalid("\"schema\" must be a string", io::pos_of(file, schema->mark, doc)));
    const std::string& s = schema->text;
    Fields f(blob, file, doc, s);

    if (s == declcfg::schema_package) {
        declcfg::Package p;
        p.name = f.str(blob, "name");
        p.default_channel = f.str(blob, "defaultChannel");
        p.description = f.str(blob, "description");
        p.raw = blob;
        p.pos = where;
        cfg.packages.push_back(std::move(p));
    } else if (s == declcfg::schema_channel) {
        declcfg::Channel c;
        c.package = f.str(blob, "package");
        c.name = f.str(blob, "name");
        for (const Node& e : f.obj_list(blob, "entries")) {
            declcfg::ChannelEntry ce;
            ce.name = f.str(e, "name");
            ce.replaces = f.str(e, "replaces");
            ce.skips = f.str_list(e, "skips");
            ce.skip_range = f.str(e, "skipRange");
            ce.pos = f.pos(e);
            c.entries.push_back(std::move(ce));
        }
        c.raw = blob;
        c.pos = where;
        cfg.channels.push_back(std::move(c));
    } else if (s == declcfg::schema_bundle) {
        declcfg::Bundle b;
        b.package = f.str(blob, "package");
        b.name = f.str(blob, "name");
        b.image = f.str(blob, "image");
        for (const Node& p : f.obj_list(blob, "properties")) {
            declcfg::Property prop;
            prop.type = f.str(p, "type");
            if (const Node* v = p.get("value")) prop.value = *v;
            b.properties.push_back(std::move(prop));
        }
        for (const Node& i : f.obj_list(blob, "relatedImages")) {
            declcfg::RelatedImage ri;
            ri.name = f.str(i, "name");
            ri.image = f.str(i, "image");
            b.related_images.push_back(std::move(ri));
        }
        b.raw = blob;
        b.pos = where;
        cfg.bundles.push_back(std::move(b));
    } else {
        declcfg::Other o;
        o.schema = s;
        if (const Node* p = blob.get("package"); p != nullptr && p->is_string())
            o.package = p->text;
        if (const Node* n = blob.get("name"); n != nullptr && n->is_string()) o.name = n->text;
        o.raw = blob;
        o.pos = where;
        cfg.others.push_back(std::move(o));
    }
}

void add_blobs(declcfg::DeclarativeConfig& cfg, const std::vector<io::Document>& docs,
               const std::string& file) {
    for (const auto& d : docs)
        add_blob(cfg, d.root, file, d.index);
}

declcfg::DeclarativeConfig load_tree(const io::Tree& src, const LoadOptions& opts) {
    declcfg::DeclarativeConfig cfg;
    // The files opm reads (files.hpp), in path order.
    const detail::Listing listing = detail::select_files(src).take();
    for (const io::Entry& f : listing.files) {
        io::ReadOptions ro;
        ro.limit = opts.limits.max_file_bytes;
        if (f.problem) throw Exception(detail::problem_error(src, f));
        const io::Contents data = src.read(f.rel, ro).take();
        if (data.too_large)
            throw Exception(Error::io(
                "\"" + f.display + "\" is too large: " +
                (data.streamed ? "more than the limit of " + std::to_string(ro.limit) + " bytes"
                               : std::to_string(data.size) + " bytes (the limit is " +
                                     std::to_string(ro.limit) + " bytes)")));
        const auto docs = io::parse_auto(data.text(), f.display, opts.limits).take();
        if (log::enabled(log::Level::debug))
            log::debug("read " + f.display + " (" + std::to_string(docs.size()) + " documents)");
        add_blobs(cfg, docs, f.display);
    }
    return cfg;
}

} // namespace

Result<void> add_documents(declcfg::DeclarativeConfig& cfg, const std::vector<io::Document>& docs,
                           const std::string& file) {
    return catch_error([&] { add_blobs(cfg, docs, file); });
}

Result<declcfg::DeclarativeConfig> load(const io::Tree& src, const LoadOptions& opts) {
    return catch_error([&] { return load_tree(src, opts); });
}

Result<declcfg::DeclarativeConfig> load(const fs::path& src, const LoadOptions& opts) {
    return load(*io::open_path(src), opts);
}

} // namespace kpkg::catalog
