#include "kpkg/oci/extract.hpp"

#include <optional>
#include <vector>

#include "archive.hpp"
#include "kpkg/core/digest.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/oci/layer.hpp"

namespace kpkg::oci {

namespace {

constexpr std::string_view whiteout_prefix = ".wh.";
constexpr std::string_view opaque_marker = ".wh..wh..opq";

struct Pending {
    enum class Kind : std::uint8_t { file, dir, link, hardlink, whiteout, opaque };
    Kind kind = Kind::file;
    std::string path; // normalised; for whiteouts, the path removed; for opaque, the directory
    std::string data; // file bytes; link target (normalised for links); hardlink target
    std::uint32_t mode = 0644;
    std::string name; // the entry's name as written, for messages
};

// The components of `name` without "" and "."; nullopt when a ".." is among them.
std::optional<std::vector<std::string_view>> components(std::string_view name) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (start <= name.size()) {
        const auto slash = name.find('/', start);
        const std::string_view part =
            name.substr(start, (slash == name.npos ? name.size() : slash) - start);
        if (part == "..") return std::nullopt;
        if (!part.empty() && part != ".") out.push_back(part);
        if (slash == name.npos) break;
        start = slash + 1;
    }
    return out;
}

std::string join(const std::vector<std::string_view>& parts, std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
        if (i) s += '/';
        s += parts[i];
    }
    return s;
}

std::string parent_of(const std::string& p) {
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

// Changes to a Rootfs's entries that can be undone: the first change of each name saves what
// was there (moved, not copied), so that a layer refused half-way is rolled back without the
// cost of copying the whole file system for every layer.
class Editor {
public:
    using Map = std::map<std::string, Rootfs::Node>;
    explicit Editor(Map& nodes) : nodes_(nodes) {}

    const Map& nodes() const { return nodes_; }
    Map::iterator find(const std::string& k) { return nodes_.find(k); }
    Map::iterator end() { return nodes_.end(); }

    void put(const std::string& k, Rootfs::Node n) {
        save(k);
        nodes_[k] = std::move(n);
    }
    void set_mode(const std::string& k, std::uint32_t mode) {
        save(k);
        nodes_.at(k).mode = mode;
    }
    // Removes `p` and everything below it.
    void remove_tree(const std::string& p) {
        if (nodes_.count(p)) {
            save(p);
            nodes_.erase(p);
        }
        remove_children(p);
    }
    // Removes everything below the directory `dir` ("" for the root).
    void remove_children(const std::string& dir) {
        const std::string pre = dir.empty() ? std::string() : dir + "/";
        auto it = nodes_.lower_bound(pre);
        while (it != nodes_.end() && it->first.compare(0, pre.size(), pre) == 0) {
            save_moving(it);
            it = nodes_.erase(it);
        }
    }
    void rollback() {
        for (auto& [k, old] : saved_) {
            if (old)
                nodes_[k] = std::move(*old);
            else
                nodes_.erase(k);
        }
        saved_.clear();
    }

private:
    void save(const std::string& k) {
        if (saved_.count(k)) return;
        auto it = nodes_.find(k);
        saved_.emplace(k,
                       it == nodes_.end() ? std::nullopt : std::optional<Rootfs::Node>(it->second));
    }
    // For an entry about to be erased: its bytes move into the journal.
    void save_moving(Map::iterator it) {
        if (saved_.count(it->first)) return;
        saved_.emplace(it->first, std::optional<Rootfs::Node>(std::move(it->second)));
    }
    Map& nodes_;
    std::map<std::string, std::optional<Rootfs::Node>> saved_;
};

// The name a symbolic link at `path` points to, as components from the root (every ".."
// applied), or nullopt when it leaves the root. An absolute target starts at the image's root.
std::optional<std::vector<std::string>> resolve_target(const std::string& path,
                                                       std::string_view target) {
    std::vector<std::string> dir;
    if (target.empty() || target.front() != '/') {
        const std::string parent = parent_of(path);
        std::size_t start = 0;
        while (!parent.empty()) {
            const auto slash = parent.find('/', start);
            dir.push_back(parent.substr(start, slash == parent.npos ? parent.npos : slash - start));
            if (slash == parent.npos) break;
            start = slash + 1;
        }
    }
    std::size_t start = 0;
    while (start <= target.size()) {
        const auto slash = target.find('/', start);
        const std::string_view part =
            target.substr(start, (slash == target.npos ? target.size() : slash) - start);
        if (part == "..") {
            if (dir.empty()) return std::nullopt;
            dir.pop_back();
        } else if (!part.empty() && part != ".") {
            dir.emplace_back(part);
        }
        if (slash == target.npos) break;
        start = slash + 1;
    }
    return dir;
}

// The target, relative to the directory of a link at `path`, of the name `to` (from the root).
std::string relative_from(const std::string& path, const std::vector<std::string>& to) {
    std::size_t depth = 0;
    for (char c : path)
        depth += c == '/';
    std::string rel;
    for (std::size_t i = 0; i < depth; ++i)
        rel += i + 1 < depth || !to.empty() ? "../" : "..";
    for (std::size_t i = 0; i < to.size(); ++i) {
        if (i) rel += '/';
        rel += to[i];
    }
    return rel.empty() ? std::string(".") : rel;
}

// What a link at `path` stores for `target`: a relative target as written, an absolute one
// relative to the link; nullopt when it leaves the root.
std::optional<std::string> link_target(const std::string& path, std::string_view target) {
    auto to = resolve_target(path, target);
    if (!to) return std::nullopt;
    if (!target.empty() && target.front() == '/') return relative_from(path, *to);
    return std::string(target);
}

} // namespace

namespace {

// The nodes below `prefix` as a MemoryTree; with `borrow`, files view the nodes' bytes.
std::unique_ptr<io::MemoryTree> tree_of(const std::map<std::string, Rootfs::Node>& nodes,
                                        std::string display_root, std::string_view prefix,
                                        bool borrow) {
    using Node = Rootfs::Node;
    auto t = std::make_unique<io::MemoryTree>(std::move(display_root));
    const std::string pre = prefix.empty() ? std::string() : std::string(prefix) + "/";
    // The map is sorted: what is below `prefix` is one run from its lower bound.
    for (auto it = nodes.lower_bound(pre);
         it != nodes.end() && it->first.compare(0, pre.size(), pre) == 0; ++it) {
        const std::string rel = it->first.substr(pre.size());
        if (rel.empty()) continue;
        const Node& node = it->second;
        switch (node.kind) {
        case Node::Kind::dir:
            t->add_dir(rel);
            break;
        case Node::Kind::file:
            if (borrow)
                t->add_file_view(rel, node.data);
            else
                t->add_file(rel, node.data);
            break;
        case Node::Kind::link:
            t->add_link(rel, node.data);
            break;
        }
    }
    return t;
}

} // namespace

std::unique_ptr<io::MemoryTree> Rootfs::to_tree(std::string display_root,
                                                std::string_view prefix) const {
    return tree_of(nodes_, std::move(display_root), prefix, false);
}

std::unique_ptr<io::MemoryTree> Rootfs::shared_tree(std::shared_ptr<const Rootfs> fs,
                                                    std::string display_root,
                                                    std::string_view prefix) {
    auto t = tree_of(fs->nodes_, std::move(display_root), prefix, true);
    t->keep(std::move(fs));
    return t;
}

Result<std::string> apply_layer(Rootfs& fs, std::string_view blob, const std::string& digest,
                                const ExtractLimits& limits) {
    const std::string layer = "layer " + digest;
    const std::uint64_t budget =
        limits.max_total_bytes > fs.tar_bytes_ ? limits.max_total_bytes - fs.tar_bytes_ : 0;
    auto tar = decompress(blob, budget, layer);
    if (!tar) {
        Error e = std::move(tar).error();
        if (e.message.find("limit") != std::string::npos)
            e.message += " (the uncompressed layers of an image may hold at most " +
                         std::to_string(limits.max_total_bytes) + " bytes)";
        return e;
    }
    auto api_r = detail::archive_api();
    if (!api_r) return std::move(api_r).error();
    const detail::ArchiveApi& api = **api_r;

    auto refuse = [&](const std::string& entry, const std::string& why) {
        return Error::invalid(layer + ": entry \"" + entry + "\": " + why);
    };

    // Read every entry first: nothing is applied unless the whole layer reads.
    std::vector<Pending> pending;
    std::uint64_t entries = fs.entries_;
    {
        detail::Reader r(api);
        api.archive_read_support_filter_none(r.get());
        api.archive_read_support_format_tar(r.get());
        if (tar->empty()) return Error::invalid(layer + ": empty, not a tar archive");
        if (api.archive_read_open_memory(r.get(), tar->data(), tar->size()) != ARCHIVE_OK)
            return Error::invalid(layer + ": not a tar archive: " + r.error());
        struct archive_entry* e = nullptr;
        for (;;) {
            const int h = api.archive_read_next_header(r.get(), &e);
            if (h == ARCHIVE_EOF) break;
            if (h != ARCHIVE_OK && h != ARCHIVE_WARN) {
                const std::string after =
                    pending.empty() ? std::string() : " (after \"" + pending.back().name + "\")";
                return Error::invalid(layer + ": corrupt tar" + after + ": " + r.error());
            }
            if (++entries > limits.max_entries)
                return Error::invalid(layer + ": more than " + std::to_string(limits.max_entries) +
                                      " entries in the image's layers, the limit");
            const char* pn = api.archive_entry_pathname(e);
            Pending p;
            p.name = pn != nullptr ? pn : "";
            if (p.name.size() > limits.max_path)
                return refuse(p.name.substr(0, 64) + "...",
                              "name longer than " + std::to_string(limits.max_path) + " bytes");
            auto parts = components(p.name);
            if (!parts) return refuse(p.name, "has a \"..\" component");
            p.mode = static_cast<std::uint32_t>(api.archive_entry_perm(e)) & 07777;
            const char* hard = api.archive_entry_hardlink(e);
            const auto type = api.archive_entry_filetype(e);
            if (parts->empty()) {
                if (hard == nullptr && type == AE_IFDIR) continue; // the root itself
                return refuse(p.name, "names the root, which is a directory");
            }
            const std::string_view base = parts->back();
            if (base.substr(0, whiteout_prefix.size()) == whiteout_prefix) {
                const std::string dir = join(*parts, parts->size() - 1);
                if (base == opaque_marker) {
                    p.kind = Pending::Kind::opaque;
                    p.path = dir;
                } else if (base.substr(0, 2 * whiteout_prefix.size()) == ".wh..wh.") {
                    continue; // aufs metadata
                } else {
                    const std::string_view target = base.substr(whiteout_prefix.size());
                    if (target.empty() || target == "." || target == "..")
                        return refuse(p.name, "a whiteout naming \"" + std::string(target) +
                                                  "\", outside its directory");
                    p.kind = Pending::Kind::whiteout;
                    p.path = dir.empty() ? std::string(target) : dir + "/" + std::string(target);
                }
                pending.push_back(std::move(p));
                continue;
            }
            p.path = join(*parts, parts->size());
            if (hard != nullptr) {
                std::string_view h2 = hard;
                if (h2.size() > limits.max_path)
                    return refuse(p.name, "link target longer than " +
                                              std::to_string(limits.max_path) + " bytes");
                auto t = components(h2);
                if (!t || t->empty())
                    return refuse(p.name, "a hard link to \"" + std::string(h2) +
                                              "\", outside the image's root");
                p.kind = Pending::Kind::hardlink;
                p.data = join(*t, t->size());
                pending.push_back(std::move(p));
                continue;
            }
            switch (type) {
            case AE_IFDIR:
                p.kind = Pending::Kind::dir;
                break;
            case AE_IFLNK: {
                p.kind = Pending::Kind::link;
                const char* sl = api.archive_entry_symlink(e);
                const std::string_view target = sl != nullptr ? sl : "";
                if (target.empty()) return refuse(p.name, "a symbolic link with no target");
                if (target.size() > limits.max_path)
                    return refuse(p.name, "link target longer than " +
                                              std::to_string(limits.max_path) + " bytes");
                auto t = link_target(p.path, target);
                if (!t)
                    return refuse(p.name, "a symbolic link to \"" + std::string(target) +
                                              "\", outside the image's root");
                p.data = std::move(*t);
                break;
            }
            case AE_IFREG: {
                p.kind = Pending::Kind::file;
                const la_int64_t size = api.archive_entry_size(e);
                if (size < 0 || static_cast<std::uint64_t>(size) > limits.max_file_bytes)
                    return refuse(p.name, std::to_string(size) + " bytes, more than the limit of " +
                                              std::to_string(limits.max_file_bytes) +
                                              " bytes for a file");
                // The bytes are in the tar: a header claiming more is truncated, found before
                // the buffer is allocated.
                if (static_cast<std::uint64_t>(size) > tar->size())
                    return refuse(p.name, "truncated: its header says " + std::to_string(size) +
                                              " bytes, more than the whole layer holds");
                p.data.resize(static_cast<std::size_t>(size));
                std::size_t got = 0;
                while (got < p.data.size()) {
                    const la_ssize_t n =
                        api.archive_read_data(r.get(), p.data.data() + got, p.data.size() - got);
                    if (n < 0) return refuse(p.name, "cannot be read: " + r.error());
                    if (n == 0) break;
                    got += static_cast<std::size_t>(n);
                }
                if (got != p.data.size())
                    return refuse(p.name, "truncated: " + std::to_string(got) + " of " +
                                              std::to_string(p.data.size()) + " bytes");
                break;
            }
            case AE_IFCHR:
            case AE_IFBLK:
                return refuse(p.name, "a device, which images kpkg reads may not hold");
            case AE_IFIFO:
                return refuse(p.name, "a FIFO, which images kpkg reads may not hold");
            case AE_IFSOCK:
                return refuse(p.name, "a socket, which images kpkg reads may not hold");
            default:
                return refuse(p.name, "an entry of unknown type");
            }
            pending.push_back(std::move(p));
        }
    }

    // Apply in place, journalled: a refusal below rolls back to what fs was.
    Editor ed(fs.nodes_);
    for (const auto& p : pending) {
        if (p.kind == Pending::Kind::whiteout) ed.remove_tree(p.path);
        if (p.kind == Pending::Kind::opaque) ed.remove_children(p.path);
    }
    using NK = Rootfs::Node::Kind;
    auto apply_all = [&]() -> std::optional<Error> {
        for (auto& p : pending) {
            if (p.kind == Pending::Kind::opaque && p.path.empty()) continue; // the root
            // The parents (an opaque directory itself too): directories, created as needed,
            // never a link or a file.
            const std::string& path = p.path;
            std::size_t slash = 0;
            std::string bad;
            const std::size_t stop =
                p.kind == Pending::Kind::opaque ? path.size() : path.rfind('/');
            while (stop != std::string::npos &&
                   (slash = path.find('/', slash)) != std::string::npos && slash <= stop) {
                const std::string dir = path.substr(0, slash);
                auto it = ed.find(dir);
                if (it == ed.end()) {
                    ed.put(dir, Rootfs::Node{NK::dir, {}, 0755});
                } else if (it->second.kind != NK::dir) {
                    bad = dir;
                    break;
                }
                ++slash;
            }
            if (bad.empty() && p.kind == Pending::Kind::opaque) {
                auto it = ed.find(path);
                if (it != ed.end() && it->second.kind != NK::dir) bad = path;
            }
            if (!bad.empty()) {
                const bool link = ed.find(bad)->second.kind == NK::link;
                return refuse(p.name,
                              std::string("below \"") + bad + "\", which is " +
                                  (link ? "a symbolic link" : "a file") +
                                  (link ? " (writing through it could leave the root)" : ""));
            }
            switch (p.kind) {
            case Pending::Kind::whiteout:
                break;
            case Pending::Kind::opaque:
                if (ed.find(path) == ed.end()) ed.put(path, Rootfs::Node{NK::dir, {}, 0755});
                break;
            case Pending::Kind::dir: {
                auto it = ed.find(p.path);
                if (it != ed.end() && it->second.kind == NK::dir) {
                    ed.set_mode(p.path, p.mode);
                } else {
                    ed.remove_tree(p.path);
                    ed.put(p.path, Rootfs::Node{NK::dir, {}, p.mode});
                }
                break;
            }
            case Pending::Kind::file:
            case Pending::Kind::link:
                ed.remove_tree(p.path);
                ed.put(p.path, Rootfs::Node{p.kind == Pending::Kind::file ? NK::file : NK::link,
                                            std::move(p.data), p.mode});
                break;
            case Pending::Kind::hardlink: {
                auto it = ed.find(p.data);
                if (it == ed.end())
                    return refuse(p.name,
                                  "a hard link to \"" + p.data + "\", which the image has not");
                if (it->second.kind == NK::dir)
                    return refuse(p.name, "a hard link to \"" + p.data + "\", a directory");
                Rootfs::Node copy = it->second;
                if (copy.kind == NK::link) {
                    // Stored targets stay within the root, so this resolves.
                    auto to = resolve_target(p.data, copy.data);
                    if (!to)
                        return refuse(p.name, "a hard link to a link leaving the image's root");
                    copy.data = relative_from(p.path, *to);
                }
                ed.remove_tree(p.path);
                ed.put(p.path, std::move(copy));
                break;
            }
            }
        }
        return std::nullopt;
    };
    if (auto err = apply_all()) {
        ed.rollback();
        return std::move(*err);
    }
    fs.tar_bytes_ += tar->size();
    fs.entries_ = entries;
    return sha256_digest(*tar);
}

} // namespace kpkg::oci
