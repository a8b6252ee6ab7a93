#include "kpkg/catalog/load.hpp"

#include "files.hpp"
#include "kpkg/core/log.hpp"

namespace kpkg::catalog {

namespace fs = std::filesystem;
using io::Node;

namespace {

// Reads the fields of one blob, reporting wrong types at the offending node.
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
    Result<std::string> str(const Node& in, const std::string& field) const {
        const Node* n = in.get(field);
        if (n == nullptr || n->is_null()) return std::string();
        if (!n->is_string()) return fail(type_error(*n, field, "a string"));
        return n->text;
    }

    Result<std::vector<std::string>> str_list(const Node& in, const std::string& field) const {
        std::vector<std::string> out;
        const Node* n = in.get(field);
        if (n == nullptr || n->is_null()) return out;
        if (!n->is_seq()) return fail(type_error(*n, field, "a list of strings"));
        for (const Node& item : n->items) {
            if (!item.is_string()) return fail(type_error(item, field + "[]", "a string"));
            out.push_back(item.text);
        }
        return out;
    }

    // A list of objects; absent or null gives an empty list.
    Result<const std::vector<Node>*> obj_list(const Node& in, const std::string& field) const {
        static const std::vector<Node> empty;
        const Node* n = in.get(field);
        if (n == nullptr || n->is_null()) return &empty;
        if (!n->is_seq()) return fail(type_error(*n, field, "a list"));
        for (const Node& item : n->items)
            if (!item.is_map()) return fail(type_error(item, field + "[]", "an object"));
        return &n->items;
    }

    const Node& blob() const { return blob_; }

private:
    const Node& blob_;
    const std::string& file_;
    int doc_;
    std::string schema_;
};

Result<void> add_blob(declcfg::DeclarativeConfig& cfg, const Node& blob, const std::string& file,
                      int doc) {
    SourcePos where = io::pos_of(file, blob.mark, doc);
    if (!blob.is_map())
        return fail(Error::invalid(std::string("a catalog blob must be an object, not ") +
                                       io::kind_name(blob.kind),
                                   where));
    const Node* schema = blob.get("schema");
    if (schema == nullptr || schema->is_null())
        return fail(Error::invalid("blob has no \"schema\" field", where));
    if (!schema->is_string())
        return fail(
            Error::invalid("\"schema\" must be a string", io::pos_of(file, schema->mark, doc)));
    const std::string& s = schema->text;
    Fields f(blob, file, doc, s);

    if (s == declcfg::schema_package) {
        declcfg::Package p;
        p.name = KPKG_TRY(f.str(blob, "name"));
        p.default_channel = KPKG_TRY(f.str(blob, "defaultChannel"));
        p.description = KPKG_TRY(f.str(blob, "description"));
        p.raw = blob;
        p.pos = where;
        cfg.packages.push_back(std::move(p));
    } else if (s == declcfg::schema_channel) {
        declcfg::Channel c;
        c.package = KPKG_TRY(f.str(blob, "package"));
        c.name = KPKG_TRY(f.str(blob, "name"));
        const auto* entries = KPKG_TRY(f.obj_list(blob, "entries"));
        for (const Node& e : *entries) {
            declcfg::ChannelEntry ce;
            ce.name = KPKG_TRY(f.str(e, "name"));
            ce.replaces = KPKG_TRY(f.str(e, "replaces"));
            ce.skips = KPKG_TRY(f.str_list(e, "skips"));
            ce.skip_range = KPKG_TRY(f.str(e, "skipRange"));
            ce.pos = f.pos(e);
            c.entries.push_back(std::move(ce));
        }
        c.raw = blob;
        c.pos = where;
        cfg.channels.push_back(std::move(c));
    } else if (s == declcfg::schema_bundle) {
        declcfg::Bundle b;
        b.package = KPKG_TRY(f.str(blob, "package"));
        b.name = KPKG_TRY(f.str(blob, "name"));
        b.image = KPKG_TRY(f.str(blob, "image"));
        const auto* props = KPKG_TRY(f.obj_list(blob, "properties"));
        for (const Node& p : *props) {
            declcfg::Property prop;
            prop.type = KPKG_TRY(f.str(p, "type"));
            if (const Node* v = p.get("value")) prop.value = *v;
            b.properties.push_back(std::move(prop));
        }
        const auto* imgs = KPKG_TRY(f.obj_list(blob, "relatedImages"));
        for (const Node& i : *imgs) {
            declcfg::RelatedImage ri;
            ri.name = KPKG_TRY(f.str(i, "name"));
            ri.image = KPKG_TRY(f.str(i, "image"));
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
    return {};
}

} // namespace

Result<void> add_documents(declcfg::DeclarativeConfig& cfg, const std::vector<io::Document>& docs,
                           const std::string& file) {
    for (const auto& d : docs)
        KPKG_TRY(add_blob(cfg, d.root, file, d.index));
    return {};
}

Result<declcfg::DeclarativeConfig> load(const io::Tree& src, const LoadOptions& opts) {
    declcfg::DeclarativeConfig cfg;
    // The files opm reads (files.hpp), in path order.
    for (const io::Entry& f : KPKG_TRY(detail::select_files(src)).files) {
        io::ReadOptions ro;
        ro.limit = opts.limits.max_file_bytes;
        auto data = KPKG_TRY(f.problem ? Result<io::Contents>(fail(detail::problem_error(src, f)))
                                       : src.read(f.rel, ro));
        if (data.too_large)
            return fail(Error::io(
                "\"" + f.display + "\" is too large: " +
                (data.streamed ? "more than the limit of " + std::to_string(ro.limit) + " bytes"
                               : std::to_string(data.size) + " bytes (the limit is " +
                                     std::to_string(ro.limit) + " bytes)")));
        auto docs = KPKG_TRY(io::parse_auto(data.text(), f.display, opts.limits));
        if (log::enabled(log::Level::debug))
            log::debug("read " + f.display + " (" + std::to_string(docs.size()) + " documents)");
        KPKG_TRY(add_documents(cfg, docs, f.display));
    }
    return cfg;
}

Result<declcfg::DeclarativeConfig> load(const fs::path& src, const LoadOptions& opts) {
    return load(*io::open_path(src), opts);
}

} // namespace kpkg::catalog
