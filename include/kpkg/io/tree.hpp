// io::Tree: the one read-only view of an input's files. A loader takes a Tree and never looks at
// the file system itself, so the same code reads a directory, a single file (or a pipe given as
// a file, <(cmd)), standard input, or files held in memory (tests; later, images).
//
// A Tree gives
//   - a listing in path order (component by component, bytewise, '/' before any other byte: the
//     order opm's walk visits files in) of its directories and files, each with its name relative
//     to the root ('/' separated) and the name messages use for it;
//   - for each entry that cannot be read, a Problem instead of a failure, so that a consumer that
//     leaves the entry out (a catalog's .indexignore) never fails on it, and one that reads it says
//     why in its own words;
//   - the bytes of a file under a size limit (mapped when big, read when small, streamed for pipes
//     and character devices), with the stamp of what was read;
//   - an identity for caches: what the input is, and whether it is re-checked entry by entry
//     (stamps), cannot change (an image named by its digest), or cannot be cached at all.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"

namespace kpkg::io {

// Path order: component by component, bytewise; '/' (the end of a component) sorts first.
bool path_less(std::string_view a, std::string_view b);

// Why an entry of a listing cannot be read. Only symbolic links and special files have one.
struct Problem {
    enum class Kind : std::uint8_t {
        leaves_root, // a symbolic link whose target, every link resolved, is outside the root
        dangling,    // a symbolic link to nothing, or a loop of links
        link_to_dir, // a symbolic link to a directory (links to directories are not followed)
        not_regular, // a socket, device, FIFO (or a link to one) met in a directory
    };
    Kind kind = Kind::not_regular;
    // leaves_root: the link as written (the resolved target when it cannot be read back).
    // dangling: the link as written.
    std::string target;
    // dangling: why it cannot be followed ("no such file or directory", "too many levels of
    // symbolic links"), and the errno saying it (ENOENT when it points to nothing, ELOOP, ...).
    std::string why;
    int error = 0;
    // Whether the entry is a symbolic link (not_regular: a link to a special file).
    bool link = false;
};

struct Entry {
    enum class Kind : std::uint8_t { file, dir };
    Kind kind = Kind::file;
    std::string rel;     // relative to the root, '/' separated; "" for the root directory
    std::string display; // in messages: root/rel as the root was given, "<stdin>", the file's path
    std::optional<Problem> problem;
    // A symbolic link (followed or not): some consumers leave links out whatever they point to.
    bool link = false;

    bool is_dir() const { return kind == Kind::dir; }
    // The last component of rel.
    std::string_view name() const;
};

// What a file or directory was when it was looked at (fstat/stat, links followed).
struct Stamp {
    bool dir = false;
    std::uint64_t size = 0; // 0 for directories
    std::uint64_t mtime_ns = 0, ctime_ns = 0, ino = 0, dev = 0;
    friend bool operator==(const Stamp&, const Stamp&) = default;
};

// The bytes of a file. Owns them (a mapping, a copy) or views the tree's own (memory trees) or a
// caller's buffer; move-only.
class Contents {
public:
    Contents();
    Contents(Contents&&) noexcept;
    Contents& operator=(Contents&&) noexcept;
    Contents(const Contents&) = delete;
    Contents& operator=(const Contents&) = delete;
    ~Contents();

    std::string_view text() const { return text_; }
    // More bytes than the limit: nothing was read. `size` is the file's size when it is known
    // (a regular file), 0 for a stream (only known to be longer than the limit).
    bool too_large = false;
    std::uint64_t size = 0;
    // Read as a stream (a pipe, a character device, standard input): what was read cannot be
    // re-checked later, so it must not be cached.
    bool streamed = false;
    // The fstat of what was read (regular files of local trees); nullopt otherwise.
    std::optional<Stamp> stamp;

    // For implementations.
    void set_view(std::string_view v) { text_ = v; }
    void set_owned(std::string s);
    void set_mapping(void* p, std::size_t n);

private:
    std::string_view text_;
    std::string owned_;
    void* map_ = nullptr;
    std::size_t map_size_ = 0;
};

struct ReadOptions {
    std::uint64_t limit = std::uint64_t{1} << 30;
    // Small regular files are read into this buffer when given (reused from file to file: the
    // Contents then views it and is valid until the buffer is reused); else into the Contents.
    std::string* buffer = nullptr;
};

// What a Tree is, for caches.
struct Identity {
    enum class Kind : std::uint8_t {
        none,      // not cacheable: standard input, memory trees
        stamped,   // local files: valid while every entry's stamp(rel) is what it was
        immutable, // content addressed (an image named by its manifest digest): no stamps needed
    };
    Kind kind = Kind::none;
    // stamped: the canonical absolute path of the root; immutable: the digest.
    std::string key;
    // The root is a directory (a catalog directory, not a single file).
    bool dir = false;
};

class Tree {
public:
    virtual ~Tree() = default;

    // Every directory (the root first, rel "") and file below the root, in path order. A
    // directory that cannot be read, wherever it is met, fails the listing (exit 1, naming it).
    // A single-file tree lists its one file.
    virtual Result<std::vector<Entry>> list() const = 0;

    // The entries directly in the directory `rel` ("" for the root), in path order, each as
    // list() gives it, without walking further down. When `rel` is a symbolic link to a directory
    // within the root, the directory it points to is listed (entries named under `rel`). Errors:
    // `rel` does not exist, is not a directory, or cannot be read (exit 1); it is a link leaving
    // the root (exit 3).
    virtual Result<std::vector<Entry>> list_dir(std::string_view rel) const;

    // The entry `rel` as list() would give it (kind, problem); nullopt when there is none.
    // Errors (exit 1): what is on the way to it cannot be looked at.
    virtual Result<std::optional<Entry>> find(std::string_view rel) const;

    // The bytes of `rel` (a name from list()). Errors (exit 1): the file cannot be opened or
    // read, is a directory or not a regular file. Over the limit is not an error (too_large).
    virtual Result<Contents> read(std::string_view rel, const ReadOptions& opts = {}) const = 0;
    // The same for an entry of list(); an entry with a Problem is never read (an error, exit 3
    // for a link leaving the root, else 1; consumers with their own wording check first).
    Result<Contents> read(const Entry& e, const ReadOptions& opts = {}) const;

    // The root is a directory (else the tree is a single file or a stream).
    virtual bool is_directory() const = 0;
    // How the root is named in messages ("cat/", "<stdin>", "a.yaml").
    virtual const std::string& display_root() const = 0;
    // The display name of `rel` (as in list()).
    virtual std::string display(std::string_view rel) const = 0;

    virtual Identity identity() const { return {}; }
    // The stamp of `rel` now (links followed); nullopt when it is gone or the tree has no stamps.
    virtual std::optional<Stamp> stamp(std::string_view rel) const;
};

// The one decision of what a path is: "-" standard input, a directory, else a single file
// (a regular file, a FIFO, a character device; what cannot be read fails when it is read).
std::unique_ptr<Tree> open_path(const std::filesystem::path& p);

// A directory on disk. Symbolic links are never followed into directories; a link to a file is
// read when its target, every link resolved, stays within the root.
class DirectoryTree final : public Tree {
public:
    explicit DirectoryTree(std::filesystem::path root);
    ~DirectoryTree() override;
    Result<std::vector<Entry>> list() const override;
    Result<std::vector<Entry>> list_dir(std::string_view rel) const override;
    Result<std::optional<Entry>> find(std::string_view rel) const override;
    Result<Contents> read(std::string_view rel, const ReadOptions& opts = {}) const override;
    using Tree::read;
    bool is_directory() const override { return true; }
    const std::string& display_root() const override { return display_; }
    std::string display(std::string_view rel) const override;
    Identity identity() const override;
    std::optional<Stamp> stamp(std::string_view rel) const override;
    const std::filesystem::path& root() const { return root_; }

private:
    std::filesystem::path root_;
    std::string display_;
    mutable std::once_flag fd_once_;
    mutable int root_fd_ = -1; // O_PATH, for stamps relative to the root
};

// One file given by its path: a regular file, or a FIFO/character device read as a stream. Its
// one entry is named by the file's name (rel) and shown as the path given.
class FileTree final : public Tree {
public:
    // `display`: how messages name it (the path as given when empty).
    explicit FileTree(std::filesystem::path path, std::string display = {});
    Result<std::vector<Entry>> list() const override;
    Result<Contents> read(std::string_view rel, const ReadOptions& opts = {}) const override;
    using Tree::read;
    bool is_directory() const override { return false; }
    const std::string& display_root() const override { return display_; }
    std::string display(std::string_view) const override { return display_; }
    Identity identity() const override;
    std::optional<Stamp> stamp(std::string_view rel) const override;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
    std::string display_;
};

// Standard input: one entry, rel "-", shown as "<stdin>"; read once (the first read, with its
// limit) and kept in memory. Never cacheable.
class StdinTree final : public Tree {
public:
    StdinTree();
    // For tests: a tree reading `fd` as if it were standard input (not closed).
    explicit StdinTree(int fd);
    Result<std::vector<Entry>> list() const override;
    Result<Contents> read(std::string_view rel, const ReadOptions& opts = {}) const override;
    using Tree::read;
    bool is_directory() const override { return false; }
    const std::string& display_root() const override { return display_; }
    std::string display(std::string_view) const override { return display_; }

private:
    int fd_;
    std::string display_ = "<stdin>";
    mutable std::mutex mu_;
    mutable bool read_ = false;
    mutable bool too_large_ = false;
    mutable std::optional<Error> error_;
    mutable std::string data_;
};

// Files, directories and symbolic links held in memory (tests; images). The root is a directory
// shown as `display_root`; symbolic links follow the same rules as on disk (resolved within the
// tree; one whose target leaves the root, dangles, loops or is a directory has a Problem).
class MemoryTree final : public Tree {
public:
    explicit MemoryTree(std::string display_root = "<memory>");
    // Parent directories are added as needed. Replaces an entry of the same name.
    MemoryTree& add_file(std::string rel, std::string bytes);
    // A file whose bytes live elsewhere, not copied: they must outlive the tree (give their
    // owner to keep()).
    MemoryTree& add_file_view(std::string rel, std::string_view bytes);
    // Keeps `owner` alive as long as the tree: what add_file_view's bytes belong to.
    void keep(std::shared_ptr<const void> owner) { owners_.push_back(std::move(owner)); }
    MemoryTree& add_dir(std::string rel);
    MemoryTree& add_link(std::string rel, std::string target);
    // A special file (socket, device): listed with a not_regular Problem.
    MemoryTree& add_special(std::string rel);
    // A directory that cannot be read: list() fails naming it.
    MemoryTree& add_unreadable_dir(std::string rel);
    // What caches see (none by default; an image gives its digest, immutable).
    void set_identity(Identity id) { identity_ = std::move(id); }

    Result<std::vector<Entry>> list() const override;
    Result<std::vector<Entry>> list_dir(std::string_view rel) const override;
    Result<std::optional<Entry>> find(std::string_view rel) const override;
    Result<Contents> read(std::string_view rel, const ReadOptions& opts = {}) const override;
    using Tree::read;
    bool is_directory() const override { return true; }
    const std::string& display_root() const override { return display_; }
    std::string display(std::string_view rel) const override;
    Identity identity() const override { return identity_; }

private:
    enum class Kind : std::uint8_t { file, dir, link, special, unreadable };
    struct Node {
        Kind kind = Kind::file;
        std::string data;        // file: bytes; link: target
        std::string_view view{}; // a file's bytes when `borrowed`
        bool borrowed = false;
    };
    void add_parents(const std::string& rel);
    // The entry of the node `rel` as list() gives it (an unreadable directory as a directory).
    Entry entry_of(const std::string& rel, const Node& node) const;
    // Follows the links of `rel` (a path within the tree): the final name, or a Problem.
    std::optional<std::string> resolve(const std::string& rel, Problem& why) const;
    std::string display_;
    std::map<std::string, Node> nodes_; // by rel; the root is implicit
    Identity identity_;
    std::vector<std::shared_ptr<const void>> owners_;
};

} // namespace kpkg::io
