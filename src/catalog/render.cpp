// kpkg catalog render: read every source on all cores, reduce each blob to the compact JSON opm
// holds for it, order the blobs as opm's declcfg.WriteJSON does, and write them as JSON or YAML,
// formatting on all cores while the output streams out in order.
//
// How opm cuts a catalog file into documents (JSON stream or YAML, the YAML fallback, "---"
// lines) is fbc_text.hpp's, shared with the catalog loader. Each YAML document is read as
// yaml.v2 reads it: its first node only (what follows a top-level flow mapping in the same
// document is ignored, with fbc_text.hpp's warning), keys typed and spelled as sigs.k8s.io/yaml
// spells them, a repeated key keeping its last value (with a warning), !!binary decoded.
#include "kpkg/catalog/render.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "fbc_text.hpp"
#include "files.hpp"
#include "go_sort.hpp"
#include "kpkg/bundle/bundle.hpp"
#include "kpkg/bundle/render.hpp"
#include "kpkg/core/log.hpp"
#include "kpkg/core/memory.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/core/threads.hpp"
#include "kpkg/io/events.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "render_blob.hpp"
#include "values.hpp"

namespace kpkg::catalog {

namespace fs = std::filesystem;
using detail::BlobError;
using detail::BlobInfo;
using detail::BlobKind;

namespace {

// One unit of loading work: a catalog file, standard input, or a bundle directory.
struct Unit {
    enum class Kind { file, stdin_, bundle, tree_file, tree_bundle } kind = Kind::file;
    fs::path path;
    // tree_file: the file `rel` of `tree`; tree_bundle: the bundle `tree` is, named `image`.
    const io::Tree* tree = nullptr;
    std::string rel;
    std::string image;
};

Unit unit_of(Unit::Kind kind, fs::path path) {
    Unit u;
    u.kind = kind;
    u.path = std::move(path);
    return u;
}

// Where a blob's compact JSON is: worker, block of that worker's arena, offset, length.
struct BlobSpan {
    std::uint32_t worker = 0, block = 0;
    std::size_t off = 0, len = 0;
    BlobInfo info;
};

// What one unit yields: where each of its blobs is.
struct UnitOut {
    std::vector<BlobSpan> blobs;
    std::optional<Error> error;
    std::vector<std::string> warnings; // written in source order once all are read
};

// Per-thread scratch space, and the thread's arena: the blobs it made, back to back in large
// blocks (no per-file allocation, no copying, each page touched once).
struct Worker {
    Worker(const io::Limits& limits, std::uint32_t id)
        : limits(limits), id(id), parser(limits.max_depth) {}
    const io::Limits& limits;
    std::uint32_t id;
    detail::JsonParser parser;
    detail::JsonTree tree;
    detail::BlobConverter conv;
    std::vector<std::string> blocks;

    static constexpr std::size_t kBlock = std::size_t{8} << 20;
    // The block the next blob goes to.
    std::string& arena() {
        if (blocks.empty() || blocks.back().size() >= kBlock) {
            blocks.emplace_back();
            blocks.back().reserve(kBlock + kBlock / 4);
        }
        return blocks.back();
    }
};

SourcePos pos_at(const std::string& file, std::uint32_t line, std::uint32_t col, int doc) {
    SourcePos p{file, line, col, doc};
    return p;
}

// The position of `path` inside a YAML document tree (the deepest node the path reaches).
io::Mark resolve_mark(const io::Node& root, const detail::Path& path) {
    const io::Node* n = &root;
    io::Mark m = root.mark;
    for (const auto& step : path) {
        const io::Node* next = nullptr;
        if (step.index >= 0) {
            if (n->is_seq() && static_cast<std::size_t>(step.index) < n->items.size())
                next = &n->items[static_cast<std::size_t>(step.index)];
        } else if (n->is_map()) {
            if (const io::MapEntry* e = n->entry(step.key)) {
                next = &e->value;
                if (e->value.mark.line == 0) m = e->key_mark;
            }
        }
        if (next == nullptr) break;
        n = next;
        if (n->mark.line != 0) m = n->mark;
    }
    return m;
}

void add_blob(UnitOut& u, const Worker& w, std::size_t before, BlobInfo&& info) {
    const std::string& a = w.blocks.back();
    u.blobs.push_back({w.id, static_cast<std::uint32_t>(w.blocks.size() - 1), before,
                       a.size() - before, std::move(info)});
}

// gopkg.in/yaml.v2's merge keys: a "<<" member whose value is a mapping (or a list of them, the
// earlier ones winning) sets that mapping's members, in document order with the mapping's own
// members, later settings overriding earlier ones. Applied bottom-up, as yaml.v2 decodes.
// A merge key with another value throws kpkg::Exception.
void resolve_merges(io::Node& n, const std::string& file, int index, std::uint32_t line0) {
    for (auto& item : n.items)
        resolve_merges(item, file, index, line0);
    if (!n.is_map()) return;
    bool has_merge = false;
    for (auto& e : n.fields) {
        resolve_merges(e.value, file, index, line0);
        has_merge = has_merge || e.key == "<<";
    }
    if (!has_merge) return;
    std::vector<io::MapEntry> out;
    auto set = [&](const io::MapEntry& e) {
        for (auto& o : out)
            if (o.key == e.key) {
                o.value = e.value;
                return;
            }
        out.push_back(e);
    };
    for (const auto& e : n.fields) {
        if (e.key != "<<") {
            set(e);
            continue;
        }
        auto bad = [&](const io::Node& at) {
            SourcePos p = io::pos_of(file, at.mark, index);
            if (p.line != 0) p.line += line0 - 1;
            return Exception(Error::invalid("a merge key (<<) needs a mapping or a list of "
                                            "mappings, not " +
                                                std::string(io::kind_name(at.kind)),
                                            p));
        };
        if (e.value.is_map()) {
            for (const auto& m : e.value.fields)
                set(m);
        } else if (e.value.is_seq()) {
            for (auto it = e.value.items.rbegin(); it != e.value.items.rend(); ++it) {
                if (!it->is_map()) throw bad(*it);
                for (const auto& m : it->fields)
                    set(m);
            }
        } else {
            throw bad(e.value);
        }
    }
    n.fields = std::move(out);
}

// The io::Node of a YAML document's first node, as yaml.v2 decodes it for opm: keys spelled as
// sigs.k8s.io/yaml spells them (values keep their YAML typing for tree_from_yaml), a repeated
// key keeping its last value, !!binary scalars decoded to their bytes.
class DocBuilder final : public io::EventHandler {
public:
    DocBuilder(const std::string& file, int index) : file_(file), index_(index) {}

    io::Node root;
    bool have_root = false, root_empty = false;
    // The first repeated key of the document, and how many more there were.
    std::optional<std::pair<std::string, io::Mark>> repeated;
    std::size_t more_repeated = 0;

    void reset() override {
        frames_.clear();
        root = io::Node{};
        have_root = root_empty = false;
        repeated.reset();
        more_repeated = 0;
    }
    void document_start(int, io::Mark) override { reset(); }
    void document_end() override {}
    void mapping_start(io::Mark m) override { open(io::Kind::mapping, m); }
    void sequence_start(io::Mark m) override { open(io::Kind::sequence, m); }
    void mapping_end() override { close(); }
    void sequence_end() override { close(); }

    void key(const io::ScalarEvent& k) override {
        std::string_view text;
        std::string why;
        if (!detail::yaml_key(k, scratch_, text, why))
            throw Exception(Error::invalid(why, io::pos_of(file_, k.mark, index_)));
        Frame& f = frames_.back();
        f.key.assign(text);
        f.key_mark = k.mark;
    }

    void scalar(const io::ScalarEvent& s) override {
        io::Node n;
        n.mark = s.mark;
        if (s.binary) {
            std::size_t at = 0;
            if (!io::go::decode_base64(s.text, &n.text, at))
                throw Exception(Error::invalid("!!binary value is not valid base64",
                                               io::pos_of(file_, s.mark, index_)));
            n.kind = io::Kind::string;
        } else {
            n.kind = s.kind;
            n.plain = s.plain;
            n.text.assign(s.text);
        }
        if (frames_.empty()) root_empty = s.empty && !s.tagged;
        complete(std::move(n));
    }

private:
    struct Frame {
        io::Node node;
        std::string key;
        io::Mark key_mark;
        // Key -> index in node.fields, once the mapping is too big for a linear search.
        std::unordered_map<std::string, std::size_t> index;
    };

    void open(io::Kind kind, io::Mark m) {
        Frame f;
        f.node.kind = kind;
        f.node.mark = m;
        frames_.push_back(std::move(f));
    }

    void close() {
        io::Node n = std::move(frames_.back().node);
        frames_.pop_back();
        complete(std::move(n));
    }

    // The entry of f's mapping with f.key, if there is one.
    static io::MapEntry* find(Frame& f) {
        auto& fields = f.node.fields;
        if (fields.size() < 16) {
            for (auto& e : fields)
                if (e.key == f.key) return &e;
            return nullptr;
        }
        if (f.index.empty())
            for (std::size_t i = 0; i < fields.size(); ++i)
                f.index.emplace(fields[i].key, i);
        auto it = f.index.find(f.key);
        return it == f.index.end() ? nullptr : &fields[it->second];
    }

    void complete(io::Node&& n) {
        if (frames_.empty()) {
            root = std::move(n);
            have_root = true;
            return;
        }
        Frame& f = frames_.back();
        if (f.node.is_seq()) {
            f.node.items.push_back(std::move(n));
            return;
        }
        if (io::MapEntry* e = find(f)) {
            // yaml.v2 decoding into a map: the last value wins.
            e->value = std::move(n);
            if (repeated)
                ++more_repeated;
            else
                repeated.emplace(f.key, f.key_mark);
            return;
        }
        if (!f.index.empty()) f.index.emplace(f.key, f.node.fields.size());
        f.node.fields.push_back(io::MapEntry{std::move(f.key), f.key_mark, std::move(n)});
        f.key.clear();
    }

    const std::string& file_;
    int index_;
    std::vector<Frame> frames_;
    std::string scratch_;
};

// One YAML document to a blob. Errors here and in the functions below throw kpkg::Exception (the
// caller of load_unit catches it).
void yaml_document(std::string_view text, const detail::YamlDoc& d, int index,
                   const std::string& file, Worker& w, UnitOut& u) {
    const std::string_view span = text.substr(d.begin, d.end - d.begin);
    DocBuilder b(file, index);
    io::YamlEventOptions yo;
    yo.line_offset = d.line - 1;
    yo.document_offset = index;
    yo.first_document_only = true;
    io::read_yaml_events(span, file, b, w.limits, yo).take();
    if (!b.have_root || b.root_empty)
        throw Exception(Error::invalid(detail::empty_document_message(d.marker),
                                       pos_at(file, d.marker ? d.line - 1 : d.line, 1, index)));
    io::Node& root = b.root;
    if (b.repeated) {
        std::string msg = io::pos_of(file, b.repeated->second, index).str() + ": repeated key \"" +
                          b.repeated->first + "\"";
        if (b.more_repeated > 0)
            msg += " (and " + std::to_string(b.more_repeated) + " more repeated keys)";
        msg += ": the last value is used, as opm uses it";
        u.warnings.push_back(std::move(msg));
    }
    if ((root.is_map() || root.is_seq()) && detail::goes_on_after_root(span, w.limits))
        u.warnings.push_back(io::pos_of(file, root.mark, index).str() + ": " +
                             detail::goes_on_after_root_message());
    resolve_merges(root, file, index, 1);
    BlobError err;
    if (!detail::tree_from_yaml(root, w.tree, err)) {
        const io::Mark m = resolve_mark(root, err.path);
        throw Exception(Error::invalid(err.message, io::pos_of(file, m, index)));
    }
    BlobInfo info;
    std::string& a = w.arena();
    const std::size_t before = a.size();
    if (!w.conv.convert(w.tree, a, info, err)) {
        const io::Mark m = resolve_mark(root, err.path);
        throw Exception(Error::invalid(err.message, io::pos_of(file, m, index)));
    }
    add_blob(u, w, before, std::move(info));
}

// The YAML documents of text from `from` on. `json_error`: the error of the JSON read that gave
// up there, reported instead when the first document fails too.
void yaml_stream(std::string_view text, detail::TextPlace from, int first_index,
                 const std::string& file, Worker& w, UnitOut& u, const Error* json_error) {
    const detail::YamlSplit split = detail::split_yaml(text, from.offset, from.line);
    int index = first_index;
    bool first = true;
    for (const detail::YamlDoc& d : split.docs) {
        try {
            yaml_document(text, d, index++, file, w, u);
        } catch (const Exception&) {
            if (first && json_error != nullptr) throw Exception(*json_error);
            throw;
        }
        first = false;
    }
    if (split.error) {
        if (first && json_error != nullptr) throw Exception(*json_error);
        throw Exception(
            Error::invalid(split.error->message, pos_at(file, split.error->line, 1, index)));
    }
}

void json_stream(std::string_view text, const std::string& file, Worker& w, UnitOut& u) {
    std::size_t pos = 0, line_start = 0;
    std::uint32_t line = 1;
    int count = 0;
    std::size_t last_end = 0;
    for (;;) {
        if (!w.parser.skip_space(text, pos, line, line_start)) return;
        BlobError err;
        if (!w.parser.parse(text, pos, line, line_start, w.tree, err)) {
            Error json_error =
                Error::invalid(err.message, pos_at(file, err.line, err.column, count));
            if (!detail::json_falls_back(count)) throw Exception(std::move(json_error));
            return yaml_stream(text, detail::yaml_fallback_start(text, count, last_end), count,
                               file, w, u, &json_error);
        }
        BlobInfo info;
        std::string& a = w.arena();
        const std::size_t before = a.size();
        if (!w.conv.convert(w.tree, a, info, err))
            throw Exception(Error::invalid(err.message, pos_at(file, err.line, err.column, count)));
        add_blob(u, w, before, std::move(info));
        ++count;
        last_end = pos;
    }
}

// The blob `opm render DIR` makes of a bundle directory, in compact form.
void rendered_bundle_json(const bundle::Rendered& r, std::string& out) {
    out += "{\"schema\":\"olm.bundle\"";
    if (!r.name.empty()) {
        out += ",\"name\":";
        io::go::append_string(out, r.name, false);
    }
    if (!r.package.empty()) {
        out += ",\"package\":";
        io::go::append_string(out, r.package, false);
    }
    out += ",\"image\":";
    io::go::append_string(out, r.image, false);
    if (!r.properties.empty()) {
        out += ",\"properties\":[";
        for (std::size_t i = 0; i < r.properties.size(); ++i) {
            if (i > 0) out += ',';
            out += "{\"type\":";
            io::go::append_string(out, r.properties[i].type, false);
            out += ",\"value\":";
            out += r.properties[i].value;
            out += '}';
        }
        out += ']';
    }
    if (!r.related_images.empty()) {
        out += ",\"relatedImages\":[";
        for (std::size_t i = 0; i < r.related_images.size(); ++i) {
            if (i > 0) out += ',';
            out += "{\"name\":";
            io::go::append_string(out, r.related_images[i].name, false);
            out += ",\"image\":";
            io::go::append_string(out, r.related_images[i].image, false);
            out += '}';
        }
        out += ']';
    }
    out += '}';
}

// A regular file read whole with one open, fstat and read, into `out` (io::read_file also looks
// the path up first). False for anything else (errors, special files, over the size limit):
// io::read_file then reads it or says why it cannot.
bool read_regular(const io::FileTree& file, const io::Limits& limits, std::string& out) {
    io::ReadOptions ro;
    ro.limit = limits.max_file_bytes;
    ro.buffer = &out;
    auto r = file.read(file.path().filename().string(), ro);
    if (!r.ok() || r->too_large || r->streamed) return false;
    const std::string_view text = r->text();
    if (text.data() == out.data())
        out.resize(text.size());
    else
        out.assign(text); // a big file, mapped
    return true;
}

void load_unit(const Unit& unit, Worker& w, UnitOut& u) {
    if (unit.kind == Unit::Kind::bundle || unit.kind == Unit::Kind::tree_bundle) {
        const bundle::Loaded loaded = unit.kind == Unit::Kind::bundle
                                          ? bundle::load(unit.path).take()
                                          : bundle::load(*unit.tree).take();
        bundle::RenderOptions ro;
        ro.image = unit.image;
        const bundle::Rendered r = bundle::render(loaded, ro).take();
        BlobInfo info;
        info.kind = BlobKind::bundle;
        info.schema = "olm.bundle";
        info.package = r.package;
        info.name = r.name;
        std::string& a = w.arena();
        const std::size_t before = a.size();
        rendered_bundle_json(r, a);
        add_blob(u, w, before, std::move(info));
        return;
    }
    const bool in = unit.kind == Unit::Kind::stdin_;
    if (unit.kind == Unit::Kind::tree_file) {
        const std::string file = unit.tree->display(unit.rel);
        io::ReadOptions ro;
        ro.limit = w.limits.max_file_bytes;
        io::Contents c = unit.tree->read(unit.rel, ro).take();
        if (c.too_large)
            throw Exception(Error::invalid(file + ": larger than the limit of " +
                                               std::to_string(w.limits.max_file_bytes) + " bytes",
                                           SourcePos{file}));
        const std::string_view text = c.text();
        if (detail::looks_like_json(text)) return json_stream(text, file, w, u);
        return yaml_stream(text, detail::TextPlace{}, 0, file, w, u, nullptr);
    }
    const std::string file = in ? std::string("<stdin>") : unit.path.string();
    std::string text;
    if (in) {
        text = io::read_file(io::StdinTree(), w.limits).take();
    } else {
        const io::FileTree tree(unit.path);
        if (!read_regular(tree, w.limits, text)) text = io::read_file(tree, w.limits).take();
    }
    if (detail::looks_like_json(text)) return json_stream(text, file, w, u);
    return yaml_stream(text, detail::TextPlace{}, 0, file, w, u, nullptr);
}

unsigned thread_count(unsigned wanted, std::size_t work) {
    unsigned n = wanted != 0 ? wanted : std::thread::hardware_concurrency();
    if (n == 0) n = 1;
    return static_cast<unsigned>(std::min<std::size_t>(n, std::max<std::size_t>(work, 1)));
}

} // namespace

// ------------------------------------------------------------------------------------------------

struct RenderedCatalog::Impl {
    std::vector<UnitOut> units;
    // Each worker's arena blocks, holding the blobs' compact JSON.
    std::vector<std::vector<std::string>> blocks;
    // The blobs in output order: unit index and blob index within it.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> order;

    std::string_view blob(std::size_t k) const {
        const auto [u, b] = order[k];
        const BlobSpan& s = units[u].blobs[b];
        return std::string_view(blocks[s.worker][s.block]).substr(s.off, s.len);
    }
};

RenderedCatalog::RenderedCatalog() : impl_(std::make_unique<Impl>()) {}
RenderedCatalog::RenderedCatalog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RenderedCatalog::~RenderedCatalog() = default;
RenderedCatalog::RenderedCatalog(RenderedCatalog&&) noexcept = default;
RenderedCatalog& RenderedCatalog::operator=(RenderedCatalog&&) noexcept = default;

std::size_t RenderedCatalog::size() const {
    return impl_->order.size();
}

namespace {

void format_blob(std::string_view compact, RenderFormat f, std::string& out) {
    if (f == RenderFormat::json) {
        io::go::append_indented(out, compact);
        out += '\n';
        return;
    }
    out += "---\n";
    auto docs = io::parse_json(compact, "<render>");
    if (docs.ok() && !docs->empty()) io::go::append_yaml(out, docs->front().root);
}

} // namespace

void RenderedCatalog::write(RenderFormat format, const std::function<void(std::string_view)>& sink,
                            unsigned threads) const {
    const Impl& im = *impl_;
    const std::size_t n = im.order.size();
    if (n == 0) return;
    // Chunks of consecutive blobs of about 512 KiB of compact JSON each.
    std::vector<std::size_t> starts{0};
    std::size_t acc = 0;
    for (std::size_t k = 0; k < n; ++k) {
        acc += im.blob(k).size();
        if (acc >= (std::size_t{512} << 10) && k + 1 < n) {
            starts.push_back(k + 1);
            acc = 0;
        }
    }
    starts.push_back(n);
    const std::size_t chunks = starts.size() - 1;
    auto format_chunk = [&](std::size_t c, std::string& out) {
        out.clear();
        std::size_t in = 0;
        for (std::size_t k = starts[c]; k < starts[c + 1]; ++k)
            in += im.blob(k).size();
        out.reserve(in + in / 2 + 1024);
        for (std::size_t k = starts[c]; k < starts[c + 1]; ++k)
            format_blob(im.blob(k), format, out);
    };
    const unsigned nt = thread_count(threads, chunks);
    if (nt <= 1) {
        std::string buf;
        for (std::size_t c = 0; c < chunks; ++c) {
            format_chunk(c, buf);
            sink(buf);
        }
        return;
    }
    // Workers format chunks ahead into a ring of slots; this thread writes them in order. The
    // buffers circulate (swapped in and out of the slots), so their memory is reused.
    const std::size_t window = static_cast<std::size_t>(nt) * 2;
    std::vector<std::string> slot(window);
    std::vector<char> ready(window, 0);
    std::mutex mu;
    std::condition_variable cv_ready, cv_free;
    std::size_t next = 0;    // next chunk to hand to a worker
    std::size_t written = 0; // chunks written so far
    // A failure (out of memory on a worker, or the sink failing here) stops every thread: no
    // chunk is handed out any more; this thread rethrows it once the workers are joined.
    FirstError errors;
    auto stop_all = [&] {
        {
            std::lock_guard lk(mu);
            next = chunks;
        }
        cv_ready.notify_all();
        cv_free.notify_all();
    };
    auto worker = [&] {
        huge_thread_heap();
        const bool ok = errors.run([&] {
            std::string buf;
            for (;;) {
                std::size_t c;
                {
                    std::unique_lock lk(mu);
                    cv_free.wait(lk, [&] { return next >= chunks || next < written + window; });
                    if (next >= chunks) return;
                    c = next++;
                }
                format_chunk(c, buf);
                {
                    std::lock_guard lk(mu);
                    std::swap(slot[c % window], buf);
                    ready[c % window] = 1;
                }
                cv_ready.notify_all();
            }
        });
        if (!ok) stop_all();
    };
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < nt; ++t)
        if (!try_start(pool, worker)) break; // this thread formats what no worker takes
    std::string mine, spare;
    errors.run([&] {
        for (std::size_t c = 0; c < chunks; ++c) {
            {
                std::unique_lock lk(mu);
                // Format a chunk here too while waiting, if one is free to take.
                while (!ready[c % window]) {
                    if (errors.failed()) return;
                    if (next < chunks && next < written + window) {
                        const std::size_t own = next++;
                        lk.unlock();
                        format_chunk(own, spare);
                        lk.lock();
                        std::swap(slot[own % window], spare);
                        ready[own % window] = 1;
                        cv_ready.notify_all();
                    } else {
                        cv_ready.wait(lk);
                    }
                }
                std::swap(mine, slot[c % window]);
                ready[c % window] = 0;
                ++written;
            }
            cv_free.notify_all();
            sink(mine);
        }
    });
    if (errors.failed()) stop_all();
    for (auto& t : pool)
        t.join();
    errors.rethrow();
}

bool is_bundle_dir(const fs::path& dir) {
    std::error_code ec;
    return fs::is_directory(dir / "manifests", ec) && fs::is_directory(dir / "metadata", ec);
}

Result<RenderedCatalog> prepare_render(const std::vector<std::string>& sources,
                                       const RenderOptions& opts) {
    std::vector<RenderSource> s;
    s.reserve(sources.size());
    for (const auto& p : sources)
        s.push_back({p, std::nullopt});
    return prepare_render(s, opts);
}

Result<RenderedCatalog> prepare_render(const std::vector<RenderSource>& sources,
                                       const RenderOptions& opts) {
    std::vector<Unit> units;
    for (const auto& source : sources) {
        if (source.tree) {
            const io::Tree& tree = *source.tree->tree;
            if (source.tree->bundle) {
                Unit u;
                u.kind = Unit::Kind::tree_bundle;
                u.tree = &tree;
                u.image = source.tree->image;
                units.push_back(std::move(u));
                continue;
            }
            auto listed = detail::select_files(tree);
            if (!listed) return fail(std::move(listed).error());
            for (auto& f : listed->files) {
                if (f.problem) return fail(detail::problem_error(tree, f));
                Unit u;
                u.kind = Unit::Kind::tree_file;
                u.tree = &tree;
                u.rel = std::move(f.rel);
                units.push_back(std::move(u));
            }
            continue;
        }
        const std::string& src = source.path;
        if (src == "-") {
            units.push_back(unit_of(Unit::Kind::stdin_, {}));
            continue;
        }
        std::error_code ec;
        const fs::file_status st = fs::status(src, ec);
        if (ec || !fs::exists(st))
            return fail(Error::io("cannot read \"" + src + "\": no such file or directory",
                                  SourcePos{src}));
        if (fs::is_directory(st)) {
            if (is_bundle_dir(src)) {
                units.push_back(unit_of(Unit::Kind::bundle, src));
                continue;
            }
            const io::DirectoryTree tree{fs::path(src)};
            auto listed = detail::select_files(tree);
            if (!listed) return fail(std::move(listed).error());
            for (auto& f : listed->files) {
                if (f.problem) return fail(detail::problem_error(tree, f));
                units.push_back(unit_of(Unit::Kind::file, fs::path(std::move(f.display))));
            }
            continue;
        }
        units.push_back(unit_of(Unit::Kind::file, src));
    }

    auto impl = std::make_unique<RenderedCatalog::Impl>();
    impl->units.resize(units.size());
    const unsigned nt = thread_count(opts.threads, units.size());
    std::vector<std::unique_ptr<Worker>> workers;
    for (unsigned t = 0; t < nt; ++t)
        workers.push_back(std::make_unique<Worker>(opts.limits, t));
    // Larger files first, so that no thread is left with a big one at the end; the results
    // stay in source order. (With thousands of files each is small: no need to look.)
    std::vector<std::size_t> schedule(units.size());
    for (std::size_t i = 0; i < units.size(); ++i)
        schedule[i] = i;
    if (units.size() <= 2048) {
        std::vector<std::uintmax_t> size(units.size(), 0);
        for (std::size_t i = 0; i < units.size(); ++i) {
            std::error_code ec;
            if (units[i].kind == Unit::Kind::file) {
                const auto n = fs::file_size(units[i].path, ec);
                size[i] = ec ? 0 : n;
            } else {
                size[i] = UINTMAX_MAX; // bundle directories and stdin: unknown, start early
            }
        }
        std::stable_sort(schedule.begin(), schedule.end(),
                         [&](std::size_t a, std::size_t b) { return size[a] > size[b]; });
    }
    std::atomic<std::size_t> first_error{units.size()};
    parallel_for(units.size(), nt, [&](std::size_t k, unsigned t) {
        const std::size_t i = schedule[k];
        if (i > first_error.load()) return; // a source before this one failed already
        UnitOut& u = impl->units[i];
        auto r = catch_error([&] { load_unit(units[i], *workers[t], u); });
        if (!r.ok()) {
            u.error = std::move(r).error();
            u.blobs.clear();
            for (std::size_t cur = first_error.load(); i < cur;)
                if (first_error.compare_exchange_weak(cur, i)) break;
        }
    });
    for (auto& u : impl->units) {
        for (const std::string& w : u.warnings)
            log::warning(w);
        if (u.error) return fail(std::move(*u.error));
    }
    for (auto& w : workers)
        impl->blocks.push_back(std::move(w->blocks));

    // opm's order (declcfg.WriteJSON): group by package, in the input order of each kind.
    struct Group {
        std::vector<std::pair<std::uint32_t, std::uint32_t>> kind[5];
    };
    std::map<std::string, Group> groups;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> root_others;
    for (int k = 0; k < 5; ++k) {
        for (std::uint32_t ui = 0; ui < impl->units.size(); ++ui) {
            const auto& blobs = impl->units[ui].blobs;
            for (std::uint32_t bi = 0; bi < blobs.size(); ++bi) {
                const BlobInfo& info = blobs[bi].info;
                if (static_cast<int>(info.kind) != k) continue;
                if (info.package.empty()) {
                    if (info.kind == BlobKind::other) root_others.emplace_back(ui, bi);
                    continue;
                }
                groups[info.package].kind[k].emplace_back(ui, bi);
            }
        }
    }
    auto info_of = [&](const std::pair<std::uint32_t, std::uint32_t>& r) -> const BlobInfo& {
        return impl->units[r.first].blobs[r.second].info;
    };
    auto by_name = [&](const auto& a, const auto& b) { return info_of(a).name < info_of(b).name; };
    for (auto& [pkg, g] : groups) {
        auto& packages = g.kind[static_cast<int>(BlobKind::package)];
        auto& channels = g.kind[static_cast<int>(BlobKind::channel)];
        auto& bundles = g.kind[static_cast<int>(BlobKind::bundle)];
        auto& others = g.kind[static_cast<int>(BlobKind::other)];
        auto& deprecations = g.kind[static_cast<int>(BlobKind::deprecation)];
        detail::go_sort_slice(channels, by_name);
        detail::go_sort_slice(bundles, by_name);
        std::stable_sort(others.begin(), others.end(), [&](const auto& a, const auto& b) {
            return info_of(a).schema < info_of(b).schema;
        });
        for (auto* list : {&packages, &channels, &bundles, &others, &deprecations})
            impl->order.insert(impl->order.end(), list->begin(), list->end());
    }
    impl->order.insert(impl->order.end(), root_others.begin(), root_others.end());
    // The sort keys are no longer needed.
    for (auto& u : impl->units)
        for (auto& b : u.blobs)
            b.info = BlobInfo{};
    return RenderedCatalog(std::move(impl));
}

Result<void> render(const std::vector<std::string>& sources, const RenderOptions& opts,
                    const std::function<void(std::string_view)>& sink) {
    auto cat = prepare_render(sources, opts);
    if (!cat) return fail(std::move(cat).error());
    cat->write(opts.format, sink, opts.threads);
    return {};
}

Result<std::string> render_to_string(const std::vector<std::string>& sources,
                                     const RenderOptions& opts) {
    std::string out;
    auto r = render(sources, opts, [&out](std::string_view s) { out.append(s); });
    if (!r) return fail(std::move(r).error());
    return out;
}

} // namespace kpkg::catalog
