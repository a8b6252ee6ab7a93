// The Node builder over the JSON reader (kpkg/io/json_reader.hpp), and the file-level entry
// points: parse_auto, read_file and load_file.
//
// Duplicate object keys: the last value wins and keeps the position of the first key.
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpkg/io/json_reader.hpp"

namespace kpkg::io {

namespace {

// Makes the keys of a closed object unique: the first occurrence of a key keeps its place and
// position and receives the value of the last one; the later occurrences are dropped.
void dedupe_keys(std::vector<MapEntry>& f) {
    const std::size_t n = f.size();
    if (n < 2) return;
    std::vector<std::size_t> first_of; // for each entry, the index of the first entry with its key
    bool dup = false;
    if (n <= 16) {
        for (std::size_t i = 1; i < n && !dup; ++i)
            for (std::size_t j = 0; j < i; ++j)
                if (f[i].key == f[j].key) {
                    dup = true;
                    break;
                }
        if (!dup) return;
        first_of.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            first_of[i] = i;
            for (std::size_t j = 0; j < i; ++j)
                if (first_of[j] == j && f[i].key == f[j].key) {
                    first_of[i] = j;
                    break;
                }
        }
    } else {
        std::unordered_map<std::string_view, std::size_t> seen;
        seen.reserve(n);
        first_of.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            auto [it, inserted] = seen.emplace(f[i].key, i);
            first_of[i] = it->second;
            dup = dup || !inserted;
        }
        if (!dup) return;
    }
    for (std::size_t i = 0; i < n; ++i)
        if (first_of[i] != i) f[first_of[i]].value = std::move(f[i].value);
    std::size_t out = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (first_of[i] != i) continue;
        if (out != i) f[out] = std::move(f[i]);
        ++out;
    }
    f.erase(f.begin() + static_cast<std::ptrdiff_t>(out), f.end());
}

// Builds Documents from the reader's events. Children of open containers are collected in two
// shared scratch vectors and moved into an exactly-sized vector when the container closes, so no
// container over-allocates.
class NodeBuilder {
public:
    std::vector<Document> docs;

    void document_start(int index, Mark) {
        doc_index_ = index;
        root_ = Node{};
    }
    void document_end() {
        Document d;
        d.index = doc_index_;
        d.start = root_.mark;
        d.root = std::move(root_);
        docs.push_back(std::move(d));
    }
    void mapping_start(Mark m) { open(Kind::mapping, m); }
    void sequence_start(Mark m) { open(Kind::sequence, m); }
    void mapping_end() { close(); }
    void sequence_end() { close(); }
    void key(const ScalarEvent& k) {
        Frame& f = frames_.back();
        f.key.assign(k.text);
        f.key_mark = k.mark;
    }
    void scalar(const ScalarEvent& s) {
        Node& n = new_slot();
        n.kind = s.kind;
        n.mark = s.mark;
        n.text.assign(s.text);
    }

private:
    struct Frame {
        Node node;            // the container, children not yet attached
        std::string key;      // objects: the key whose value is being parsed
        Mark key_mark;        //
        std::size_t base = 0; // where this container's children start in the scratch vector
    };

    // The slot for the next complete value: the root, the next array element, or the value of
    // the pending object member.
    Node& new_slot() {
        if (frames_.empty()) return root_;
        Frame& f = frames_.back();
        if (f.node.kind == Kind::mapping) {
            fields_.push_back(MapEntry{std::move(f.key), f.key_mark, Node{}});
            return fields_.back().value;
        }
        items_.emplace_back();
        return items_.back();
    }

    void open(Kind kind, Mark m) {
        Frame f;
        f.node.kind = kind;
        f.node.mark = m;
        f.base = kind == Kind::mapping ? fields_.size() : items_.size();
        frames_.push_back(std::move(f));
    }

    void close() {
        Frame& f = frames_.back();
        if (f.node.kind == Kind::mapping) {
            auto first = fields_.begin() + static_cast<std::ptrdiff_t>(f.base);
            f.node.fields.assign(std::make_move_iterator(first),
                                 std::make_move_iterator(fields_.end()));
            fields_.erase(first, fields_.end());
            dedupe_keys(f.node.fields);
        } else {
            auto first = items_.begin() + static_cast<std::ptrdiff_t>(f.base);
            f.node.items.assign(std::make_move_iterator(first),
                                std::make_move_iterator(items_.end()));
            items_.erase(first, items_.end());
        }
        Node done = std::move(f.node);
        frames_.pop_back();
        new_slot() = std::move(done);
    }

    int doc_index_ = 0;
    Node root_;
    std::vector<Frame> frames_;
    std::vector<Node> items_;
    std::vector<MapEntry> fields_;
};

std::string errno_text(int e) {
    std::string s = std::generic_category().message(e);
    if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
    return s;
}

std::string quoted(const std::string& s) {
    return "\"" + s + "\"";
}

} // namespace

Result<std::vector<Document>> parse_json(std::string_view text, const std::string& file,
                                         const Limits& limits) {
    try {
        NodeBuilder b;
        b.docs.reserve(4);
        detail::JsonReader<NodeBuilder> r(text, file, limits, b);
        if (!r.run()) return fail(std::move(r.error()));
        return std::move(b.docs);
    } catch (const std::bad_alloc&) {
        throw OutOfMemory("parsing", file);
    } catch (const std::exception& e) {
        return fail(Error::internal(std::string("JSON parser: ") + e.what()));
    }
}

Result<void> read_json_events(std::string_view text, const std::string& file, EventHandler& handler,
                              const Limits& limits, JsonProgress* progress) {
    try {
        detail::JsonReader<EventHandler> r(text, file, limits, handler);
        const bool ok = r.run();
        if (progress != nullptr) *progress = r.progress();
        if (!ok) return fail(std::move(r.error()));
        return {};
    } catch (const Exception& e) {
        return fail(e.error());
    } catch (const std::bad_alloc&) {
        throw OutOfMemory("parsing", file);
    }
}

Result<std::vector<Document>> parse_auto(std::string_view text, const std::string& file,
                                         const Limits& limits) {
    std::size_t i = 0;
    if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        ++i;
    // No fallback to YAML when JSON fails: a typo in a JSON file (tru, a trailing comma) would
    // otherwise be read silently as a YAML flow collection with different content.
    if (i < text.size() && (text[i] == '{' || text[i] == '['))
        return parse_json(text, file, limits);
    return parse_yaml(text, file, limits);
}

namespace {

// The bytes of a read, or the error read_file words for a file over the limit.
Result<std::string> whole(Result<Contents> r, const std::string& name, std::size_t limit) {
    if (!r) return fail(std::move(r).error());
    if (r->too_large) {
        if (r->streamed)
            return fail(Error::io(name + " is too large: more than the limit of " +
                                  std::to_string(limit) + " bytes"));
        return fail(Error::io(name + " is too large: " + std::to_string(r->size) +
                              " bytes (the limit is " + std::to_string(limit) + " bytes)"));
    }
    return std::string(r->text());
}

} // namespace

Result<std::string> read_file(const Tree& tree, const Limits& limits) {
    namespace fs = std::filesystem;
    const std::size_t limit = limits.max_file_bytes;
    ReadOptions ro;
    ro.limit = limit;
    if (dynamic_cast<const StdinTree*>(&tree) != nullptr)
        return whole(tree.read("-", ro), "standard input", limit);
    const std::string name = tree.display_root();
    if (tree.is_directory())
        return fail(Error::io("cannot read " + quoted(name) + ": it is a directory"));
    const auto* file = dynamic_cast<const FileTree*>(&tree);
    if (file == nullptr) { // a single file of another kind of tree: its one entry
        auto entries = tree.list();
        if (!entries) return fail(std::move(entries).error());
        if (entries->size() != 1)
            return fail(Error::io("cannot read " + quoted(name) + ": it is not a single file"));
        return whole(tree.read((*entries)[0], ro), quoted(name), limit);
    }
    const fs::path& path = file->path();
    if (name.empty()) return fail(Error::io("cannot read a file with an empty name"));
    // What the path is, looked up before it is opened (a socket or a missing file is named as
    // such, not as a failed open).
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) {
        std::string why = ec ? ec.message() : errno_text(ENOENT);
        if (!why.empty() && why[0] >= 'A' && why[0] <= 'Z')
            why[0] = static_cast<char>(why[0] - 'A' + 'a');
        return fail(Error::io("cannot read " + quoted(name) + ": " + why));
    }
    if (fs::is_directory(st))
        return fail(Error::io("cannot read " + quoted(name) + ": it is a directory"));
    if (!fs::is_regular_file(st) && !fs::is_fifo(st) && !fs::is_character_file(st))
        return fail(Error::io("cannot read " + quoted(name) + ": not a regular file"));
    // The same file, named as this function's messages name it.
    const FileTree quoted_tree(path, quoted(name));
    return whole(quoted_tree.read(path.filename().string(), ro), quoted(name), limit);
}

Result<std::string> read_file(const std::filesystem::path& path, const Limits& limits) {
    if (path == "-") return read_file(StdinTree(), limits);
    return read_file(FileTree(path), limits);
}

Result<std::vector<Document>> load_file(const Tree& tree, const Limits& limits) {
    auto text = read_file(tree, limits);
    if (!text) return fail(std::move(text).error());
    return parse_auto(*text, tree.display_root(), limits);
}

Result<std::vector<Document>> load_file(const std::filesystem::path& path, const Limits& limits) {
    auto text = read_file(path, limits);
    if (!text) return fail(std::move(text).error());
    const std::string name = path == "-" ? std::string("<stdin>") : path.string();
    return parse_auto(*text, name, limits);
}

} // namespace kpkg::io
