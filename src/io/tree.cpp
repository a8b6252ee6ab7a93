// io::Tree and its implementations: directories, single files, standard input, memory.
#include "kpkg/io/tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <system_error>
#include <utility>

namespace kpkg::io {

namespace fs = std::filesystem;

bool path_less(std::string_view a, std::string_view b) {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (a[i] == b[i]) continue;
        // '/' ends a component: it sorts before every other byte.
        if (a[i] == '/') return true;
        if (b[i] == '/') return false;
        return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
    }
    return a.size() < b.size();
}

std::string_view Entry::name() const {
    const std::size_t slash = rel.rfind('/');
    return slash == std::string::npos ? std::string_view(rel)
                                      : std::string_view(rel).substr(slash + 1);
}

namespace {

std::string lower_first(std::string s) {
    if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
    return s;
}

std::string errno_text(int e) {
    return lower_first(std::generic_category().message(e));
}

Stamp stamp_from(const struct stat& sb) {
    Stamp s;
    s.dir = S_ISDIR(sb.st_mode);
    s.size = s.dir ? 0 : static_cast<std::uint64_t>(sb.st_size);
    s.mtime_ns = static_cast<std::uint64_t>(sb.st_mtim.tv_sec) * 1000000000ULL +
                 static_cast<std::uint64_t>(sb.st_mtim.tv_nsec);
    s.ctime_ns = static_cast<std::uint64_t>(sb.st_ctim.tv_sec) * 1000000000ULL +
                 static_cast<std::uint64_t>(sb.st_ctim.tv_nsec);
    s.ino = sb.st_ino;
    s.dev = sb.st_dev;
    return s;
}

// Whether `target` (canonical) is `root` (canonical) or below it.
bool is_within(const fs::path& target, const fs::path& root) {
    auto t = target.begin();
    for (auto r = root.begin(); r != root.end(); ++r, ++t)
        if (t == target.end() || *t != *r) return false;
    return true;
}

// The type of a file as lstat's mode gives it, as std::filesystem names it (its permissions are
// not used here).
fs::file_status status_of(mode_t mode) {
    if (S_ISDIR(mode)) return fs::file_status(fs::file_type::directory);
    if (S_ISLNK(mode)) return fs::file_status(fs::file_type::symlink);
    if (S_ISREG(mode)) return fs::file_status(fs::file_type::regular);
    if (S_ISFIFO(mode)) return fs::file_status(fs::file_type::fifo);
    if (S_ISCHR(mode)) return fs::file_status(fs::file_type::character);
    if (S_ISBLK(mode)) return fs::file_status(fs::file_type::block);
    if (S_ISSOCK(mode)) return fs::file_status(fs::file_type::socket);
    return fs::file_status(fs::file_type::unknown);
}

// Classifies `p`, met below `root` with the symlink_status `ls`, into `e`: a directory, or a file
// with the Problem that keeps it from being read, if any. `real_root` (the root with every link
// resolved, the boundary links must stay within) is found when the first link needs it.
void classify(const fs::path& p, const fs::file_status& ls, const fs::path& root,
              std::optional<fs::path>& real_root, Entry& e) {
    if (fs::is_directory(ls)) {
        e.kind = Entry::Kind::dir;
        return;
    }
    if (fs::is_symlink(ls)) e.link = true;
    if (!fs::is_symlink(ls)) {
        if (!fs::is_regular_file(ls))
            e.problem = Problem{Problem::Kind::not_regular, {}, {}, 0, false};
        return;
    }
    // A link that resolves outside the root is refused whatever it points to: its target would
    // be read as part of the input.
    std::error_code cec;
    const fs::path target = fs::canonical(p, cec);
    if (!cec) {
        if (!real_root) {
            std::error_code rec;
            real_root = fs::canonical(root, rec);
            if (rec) real_root = fs::absolute(root, rec).lexically_normal();
        }
        if (!is_within(target, *real_root)) {
            std::error_code lec;
            const fs::path written = fs::read_symlink(p, lec);
            e.problem =
                Problem{Problem::Kind::leaves_root, (lec ? target : written).string(), {}, 0, true};
            return;
        }
    }
    std::error_code sec;
    const fs::file_status st = fs::status(p, sec);
    if (sec || !fs::exists(st)) {
        std::error_code lec;
        const fs::path written = fs::read_symlink(p, lec);
        const int err = sec ? sec.value() : ENOENT;
        e.problem = Problem{Problem::Kind::dangling, written.string(), errno_text(err), err, true};
    } else if (fs::is_directory(st)) {
        e.problem = Problem{Problem::Kind::link_to_dir, {}, {}, 0, true};
    } else if (!fs::is_regular_file(st)) {
        e.problem = Problem{Problem::Kind::not_regular, {}, {}, 0, true};
    }
}

// A name from a listing: relative, '/' separated, no empty, "." or ".." components.
bool valid_rel(std::string_view rel) {
    if (rel.empty() || rel.front() == '/' || rel.back() == '/') return false;
    std::size_t start = 0;
    for (;;) {
        const std::size_t slash = rel.find('/', start);
        const std::string_view part =
            rel.substr(start, slash == std::string_view::npos ? rel.npos : slash - start);
        if (part.empty() || part == "." || part == "..") return false;
        if (slash == std::string_view::npos) return true;
        start = slash + 1;
    }
}

Error bad_rel(std::string_view rel) {
    return Error::internal("a name that is not part of the input was read: \"" + std::string(rel) +
                           "\"");
}

// Files from this size are mapped, with their pages populated by the one mmap call, unless the
// caller's reused buffer has room for them: on virtual machines a page fault on fresh heap memory
// costs several microseconds, so copying a file into new memory costs far more than mapping its
// cached pages (6x for 180 KB on a 2-core cloud VM). Smaller files are read. (A mapped file that
// another process truncates while kpkg reads it faults with SIGBUS, as in every program that
// maps its input.)
constexpr std::size_t kMapFrom = 16 << 10;
constexpr std::size_t kPopulateUpTo = 64 << 20;

// Reads fd (a regular file of `size` bytes): big files mapped, small ones read into `buffer`
// (or the Contents). False with errno set.
bool load_regular(int fd, std::size_t size, Contents& out, std::string* buffer) {
    if (size == 0) return true;
    // A reused buffer with room needs no new pages: reading into it is cheapest.
    const bool room = buffer != nullptr && buffer->capacity() >= size;
    if (size > kMapFrom && !room) {
        // Huge files are not populated up front: their pages come in as they are read.
        const int populate = size <= kPopulateUpTo ? MAP_POPULATE : 0;
        void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | populate, fd, 0);
        if (p != MAP_FAILED) {
            if (populate == 0) {
                ::madvise(p, size, MADV_SEQUENTIAL); // two advices: values, not flags
                ::madvise(p, size, MADV_WILLNEED);
            }
            out.set_mapping(p, size);
            return true;
        }
    }
    std::string own;
    std::string& b = buffer != nullptr ? *buffer : own;
    b.resize(size);
    std::size_t used = 0;
    while (used < size) {
        const ssize_t n = ::read(fd, b.data() + used, size - used);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) break; // the file shrank meanwhile: what is there
        used += static_cast<std::size_t>(n);
    }
    if (buffer != nullptr) {
        out.set_view(std::string_view(b.data(), used));
    } else {
        own.resize(used);
        out.set_owned(std::move(own));
    }
    return true;
}

// Reads a stream up to `limit` bytes into `data`; too_large when it is longer. False with errno
// set on errors.
bool load_stream(int fd, std::uint64_t limit, std::string& data, bool& too_large) {
    std::size_t used = 0;
    data.resize(64 * 1024);
    for (;;) {
        if (used == data.size()) data.resize(data.size() * 2);
        const ssize_t n = ::read(fd, data.data() + used, data.size() - used);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) break;
        used += static_cast<std::size_t>(n);
        if (used > limit) {
            too_large = true;
            data.clear();
            return true;
        }
    }
    data.resize(used);
    return true;
}

struct FdCloser {
    int fd;
    ~FdCloser() {
        if (fd >= 0) ::close(fd);
    }
};

// One file on disk, named `shown` in messages.
Result<Contents> read_local(const fs::path& path, const std::string& shown,
                            const ReadOptions& opts) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(Error::io("cannot open " + shown + ": " + errno_text(errno)));
    FdCloser closer{fd};
    struct stat sb {};
    if (::fstat(fd, &sb) != 0)
        return fail(Error::io("cannot read " + shown + ": " + errno_text(errno)));
    if (!(S_ISREG(sb.st_mode) || S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode)))
        return fail(Error::io("cannot read " + shown + ": " +
                              (S_ISDIR(sb.st_mode) ? "it is a directory" : "not a regular file")));
    Contents out;
    if (S_ISREG(sb.st_mode)) {
        out.stamp = stamp_from(sb);
        out.size = out.stamp->size;
        if (out.size > opts.limit) {
            out.too_large = true;
            return out;
        }
        if (!load_regular(fd, static_cast<std::size_t>(out.size), out, opts.buffer))
            return fail(Error::io("cannot read " + shown + ": " + errno_text(errno)));
        out.size = out.text().size();
        return out;
    }
    // A pipe (kpkg ... <(cmd)) or a device: read as a stream.
    out.streamed = true;
    std::string data;
    bool too_large = false;
    if (!load_stream(fd, opts.limit, data, too_large))
        return fail(Error::io("cannot read " + shown + ": " + errno_text(errno)));
    out.too_large = too_large;
    out.size = data.size();
    out.set_owned(std::move(data));
    return out;
}

} // namespace

// --- Contents ---------------------------------------------------------------------------------

// The text is never a null pointer, also when empty (an empty file): callers pass it to memchr
// and the like, which must not be given null even with a size of 0.
Contents::Contents() : text_("", 0) {}

Contents::~Contents() {
    if (map_ != nullptr) ::munmap(map_, map_size_);
}

Contents::Contents(Contents&& o) noexcept {
    *this = std::move(o);
}

Contents& Contents::operator=(Contents&& o) noexcept {
    if (this == &o) return *this;
    if (map_ != nullptr) ::munmap(map_, map_size_);
    const bool in_owned = !o.owned_.empty() && o.text_.data() == o.owned_.data();
    too_large = o.too_large;
    size = o.size;
    streamed = o.streamed;
    stamp = o.stamp;
    owned_ = std::move(o.owned_);
    map_ = std::exchange(o.map_, nullptr);
    map_size_ = std::exchange(o.map_size_, 0);
    text_ = in_owned ? std::string_view(owned_) : o.text_;
    if (text_.empty()) text_ = std::string_view("", 0); // not into `o`'s buffer, never null
    o.text_ = std::string_view("", 0);
    return *this;
}

void Contents::set_owned(std::string s) {
    owned_ = std::move(s);
    text_ = owned_;
}

void Contents::set_mapping(void* p, std::size_t n) {
    map_ = p;
    map_size_ = n;
    text_ = std::string_view(static_cast<const char*>(p), n);
}

// --- Tree -------------------------------------------------------------------------------------

Result<Contents> Tree::read(const Entry& e, const ReadOptions& opts) const {
    if (e.is_dir()) return fail(Error::io("cannot read " + e.display + ": it is a directory"));
    if (e.problem) {
        const Problem& p = *e.problem;
        switch (p.kind) {
        case Problem::Kind::leaves_root:
            return fail(Error::invalid("refused " + e.display + ": it is a symbolic link to " +
                                       p.target + ", outside " + display_root()));
        case Problem::Kind::dangling:
            return fail(Error::io("cannot read " + e.display + ": " +
                                  (p.why.empty() ? "it points to nothing" : p.why) +
                                  " (a symbolic link)"));
        case Problem::Kind::link_to_dir:
            return fail(
                Error::io("cannot read " + e.display + ": it is a symbolic link to a directory"));
        case Problem::Kind::not_regular:
            return fail(Error::io("cannot read " + e.display + ": not a regular file"));
        }
    }
    return read(e.rel, opts);
}

Result<std::optional<Entry>> Tree::find(std::string_view rel) const {
    auto all = list();
    if (!all) return fail(std::move(all).error());
    for (auto& e : *all)
        if (e.rel == rel) return std::optional<Entry>(std::move(e));
    return std::optional<Entry>();
}

Result<std::vector<Entry>> Tree::list_dir(std::string_view rel) const {
    auto all = list();
    if (!all) return fail(std::move(all).error());
    const auto self =
        std::find_if(all->begin(), all->end(), [&](const Entry& e) { return e.rel == rel; });
    if (self == all->end())
        return fail(Error::io("cannot read directory " + display(rel) + ": " + errno_text(ENOENT)));
    if (!self->is_dir())
        return fail(Error::io("cannot read directory " + self->display + ": " +
                              (self->problem && self->problem->kind == Problem::Kind::link_to_dir
                                   ? std::string("it is a symbolic link to a directory")
                                   : errno_text(ENOTDIR))));
    std::vector<Entry> out;
    for (auto& e : *all) {
        std::string_view r = e.rel;
        if (rel.empty()) {
            if (r.empty()) continue;
        } else {
            if (r.size() <= rel.size() + 1 || r.substr(0, rel.size()) != rel ||
                r[rel.size()] != '/')
                continue;
            r.remove_prefix(rel.size() + 1);
        }
        if (r.find('/') == std::string_view::npos) out.push_back(std::move(e));
    }
    return out;
}

std::optional<Stamp> Tree::stamp(std::string_view) const {
    return std::nullopt;
}

std::unique_ptr<Tree> open_path(const fs::path& p) {
    if (p == "-") return std::make_unique<StdinTree>();
    std::error_code ec;
    if (fs::is_directory(p, ec)) return std::make_unique<DirectoryTree>(p);
    return std::make_unique<FileTree>(p);
}

// --- DirectoryTree ----------------------------------------------------------------------------

DirectoryTree::DirectoryTree(fs::path root) : root_(std::move(root)), display_(root_.string()) {}

DirectoryTree::~DirectoryTree() {
    if (root_fd_ >= 0) ::close(root_fd_);
}

std::string DirectoryTree::display(std::string_view rel) const {
    return rel.empty() ? display_ : (root_ / rel).string();
}

namespace {

// Appends the entries of directory `d` to `out` (unsorted), `rel` being its path under the root
// ("" for the root) and `shown` its name in messages; the directories among them are also
// appended to `dirs` when given. readdir rather than std::filesystem's directory iterators: their
// advance is noexcept and ends the program when it runs out of memory building a path.
Result<void> read_entries(const fs::path& d, const std::string& rel, const std::string& shown,
                          const fs::path& root, std::optional<fs::path>& real_root,
                          std::vector<Entry>& out, std::vector<std::string>* dirs) {
    DIR* dir = ::opendir(d.c_str());
    if (dir == nullptr)
        return fail(Error::io("cannot read directory " + shown + ": " + errno_text(errno)));
    const std::unique_ptr<DIR, int (*)(DIR*)> closer(dir, ::closedir);
    for (;;) {
        errno = 0;
        const dirent* de = ::readdir(dir);
        if (de == nullptr) {
            if (errno != 0)
                return fail(Error::io("cannot read directory " + shown + ": " + errno_text(errno)));
            return {};
        }
        const std::string_view name(de->d_name);
        if (name == "." || name == "..") continue;
        const fs::path p = d / std::string(name);
        Entry e;
        e.rel = rel.empty() ? std::string(name) : rel + "/" + std::string(name);
        e.display = p.string();
        struct stat st {};
        if (::fstatat(::dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            return fail(Error::io("cannot read " + e.display + ": " + errno_text(errno)));
        classify(p, status_of(st.st_mode), root, real_root, e);
        if (dirs != nullptr && e.is_dir()) dirs->push_back(e.rel);
        out.push_back(std::move(e));
    }
}

} // namespace

Result<std::vector<Entry>> DirectoryTree::list() const {
    std::vector<Entry> out;
    out.push_back({Entry::Kind::dir, "", display_, std::nullopt});
    // The root with every link resolved, the boundary symbolic links must stay within; found
    // when the first link is met.
    std::optional<fs::path> real_root;
    // Directories still to read (links to directories are entries, not walked into).
    std::vector<std::string> pending{std::string()};
    while (!pending.empty()) {
        const std::string rel = std::move(pending.back());
        pending.pop_back();
        const fs::path d = rel.empty() ? root_ : root_ / rel;
        auto r = read_entries(d, rel, display(rel), root_, real_root, out, &pending);
        if (!r) return fail(std::move(r).error());
    }
    std::sort(out.begin() + 1, out.end(),
              [](const Entry& a, const Entry& b) { return path_less(a.rel, b.rel); });
    return out;
}

Result<std::vector<Entry>> DirectoryTree::list_dir(std::string_view rel) const {
    if (!rel.empty() && !valid_rel(rel)) return fail(bad_rel(rel));
    const fs::path d = rel.empty() ? root_ : root_ / rel;
    const std::string shown = display(rel);
    if (!rel.empty()) {
        // A link is listed through only while it stays within the root.
        auto self = find(rel);
        if (!self) return fail(std::move(self).error());
        if (*self && (*self)->problem && (*self)->problem->kind == Problem::Kind::leaves_root)
            return fail(Error::invalid("refused " + shown + ": it is a symbolic link to " +
                                       (*self)->problem->target + ", outside " + display_));
    }
    std::optional<fs::path> real_root;
    std::vector<Entry> out;
    auto r = read_entries(d, std::string(rel), shown, root_, real_root, out, nullptr);
    if (!r) return fail(std::move(r).error());
    std::sort(out.begin(), out.end(),
              [](const Entry& a, const Entry& b) { return path_less(a.rel, b.rel); });
    return out;
}

Result<std::optional<Entry>> DirectoryTree::find(std::string_view rel) const {
    if (rel.empty()) return std::optional<Entry>(Entry{Entry::Kind::dir, "", display_, {}});
    if (!valid_rel(rel)) return std::optional<Entry>();
    const fs::path p = root_ / rel;
    std::error_code ec;
    const fs::file_status ls = fs::symlink_status(p, ec);
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
        return fail(Error::io("cannot read " + p.string() + ": " + lower_first(ec.message())));
    if (!fs::exists(ls)) return std::optional<Entry>();
    Entry e;
    e.rel = std::string(rel);
    e.display = p.string();
    std::optional<fs::path> real_root;
    classify(p, ls, root_, real_root, e);
    return std::optional<Entry>(std::move(e));
}

Result<Contents> DirectoryTree::read(std::string_view rel, const ReadOptions& opts) const {
    if (!valid_rel(rel)) return fail(bad_rel(rel));
    const fs::path p = root_ / rel;
    return read_local(p, p.string(), opts);
}

Identity DirectoryTree::identity() const {
    std::error_code ec;
    const fs::path real = fs::canonical(root_, ec);
    if (ec) return {};
    return {Identity::Kind::stamped, real.string(), true};
}

std::optional<Stamp> DirectoryTree::stamp(std::string_view rel) const {
    // Entries stat'ed relative to the root: one path component to resolve each.
    std::call_once(fd_once_,
                   [&] { root_fd_ = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC); });
    struct stat sb {};
    int rc;
    if (root_fd_ < 0)
        rc = ::stat((rel.empty() ? root_ : root_ / rel).c_str(), &sb);
    else if (rel.empty())
        rc = ::fstatat(root_fd_, "", &sb, AT_EMPTY_PATH);
    else
        rc = ::fstatat(root_fd_, std::string(rel).c_str(), &sb, 0);
    if (rc != 0) return std::nullopt;
    return stamp_from(sb);
}

// --- FileTree ---------------------------------------------------------------------------------

FileTree::FileTree(fs::path path, std::string display)
    : path_(std::move(path)), display_(display.empty() ? path_.string() : std::move(display)) {}

Result<std::vector<Entry>> FileTree::list() const {
    std::error_code ec;
    if (!fs::exists(path_, ec))
        return fail(
            Error::io("cannot read " + display_ + ": " + (ec ? ec.message() : errno_text(ENOENT))));
    std::vector<Entry> out;
    out.push_back({Entry::Kind::file, path_.filename().string(), display_, std::nullopt});
    return out;
}

Result<Contents> FileTree::read(std::string_view rel, const ReadOptions& opts) const {
    if (rel != path_.filename().native()) return fail(bad_rel(rel));
    return read_local(path_, display_, opts);
}

Identity FileTree::identity() const {
    std::error_code ec;
    const fs::path real = fs::canonical(path_, ec);
    if (ec) return {};
    return {Identity::Kind::stamped, real.string(), false};
}

std::optional<Stamp> FileTree::stamp(std::string_view rel) const {
    if (rel != path_.filename().native()) return std::nullopt;
    struct stat sb {};
    if (::stat(path_.c_str(), &sb) != 0) return std::nullopt;
    return stamp_from(sb);
}

// --- StdinTree --------------------------------------------------------------------------------

StdinTree::StdinTree() : fd_(STDIN_FILENO) {}
StdinTree::StdinTree(int fd) : fd_(fd) {}

Result<std::vector<Entry>> StdinTree::list() const {
    std::vector<Entry> out;
    out.push_back({Entry::Kind::file, "-", display_, std::nullopt});
    return out;
}

Result<Contents> StdinTree::read(std::string_view rel, const ReadOptions& opts) const {
    if (rel != "-") return fail(bad_rel(rel));
    std::lock_guard lock(mu_);
    if (!read_) {
        // Read once, with the first reader's limit; later readers see the same bytes.
        read_ = true;
        if (!load_stream(fd_, opts.limit, data_, too_large_))
            error_ = Error::io("cannot read standard input: " + errno_text(errno));
    }
    if (error_) return fail(*error_);
    Contents out;
    out.streamed = true;
    out.too_large = too_large_ || data_.size() > opts.limit;
    if (!out.too_large) {
        out.set_view(data_);
        out.size = data_.size();
    }
    return out;
}

// --- MemoryTree -------------------------------------------------------------------------------

MemoryTree::MemoryTree(std::string display_root) : display_(std::move(display_root)) {}

void MemoryTree::add_parents(const std::string& rel) {
    for (std::size_t slash = rel.find('/'); slash != std::string::npos;
         slash = rel.find('/', slash + 1)) {
        auto& n = nodes_[rel.substr(0, slash)];
        if (n.kind != Kind::unreadable) n = Node{Kind::dir, {}};
    }
}

MemoryTree& MemoryTree::add_file(std::string rel, std::string bytes) {
    add_parents(rel);
    nodes_[std::move(rel)] = Node{Kind::file, std::move(bytes)};
    return *this;
}

MemoryTree& MemoryTree::add_file_view(std::string rel, std::string_view bytes) {
    add_parents(rel);
    Node n{Kind::file, {}, bytes, true};
    nodes_[std::move(rel)] = std::move(n);
    return *this;
}

MemoryTree& MemoryTree::add_dir(std::string rel) {
    add_parents(rel);
    nodes_[std::move(rel)] = Node{Kind::dir, {}};
    return *this;
}

MemoryTree& MemoryTree::add_link(std::string rel, std::string target) {
    add_parents(rel);
    nodes_[std::move(rel)] = Node{Kind::link, std::move(target)};
    return *this;
}

MemoryTree& MemoryTree::add_special(std::string rel) {
    add_parents(rel);
    nodes_[std::move(rel)] = Node{Kind::special, {}};
    return *this;
}

MemoryTree& MemoryTree::add_unreadable_dir(std::string rel) {
    add_parents(rel);
    nodes_[std::move(rel)] = Node{Kind::unreadable, {}};
    return *this;
}

std::string MemoryTree::display(std::string_view rel) const {
    if (rel.empty()) return display_;
    if (display_.empty() || display_.back() == '/') return display_ + std::string(rel);
    return display_ + "/" + std::string(rel);
}

std::optional<std::string> MemoryTree::resolve(const std::string& rel, Problem& why) const {
    // The components still to walk, and those resolved so far (always within the tree).
    std::vector<std::string> todo, done;
    auto push_path = [&todo](std::string_view path) {
        std::vector<std::string> parts;
        std::size_t start = 0;
        for (;;) {
            const std::size_t slash = path.find('/', start);
            parts.emplace_back(
                path.substr(start, slash == std::string_view::npos ? path.npos : slash - start));
            if (slash == std::string_view::npos) break;
            start = slash + 1;
        }
        for (auto it = parts.rbegin(); it != parts.rend(); ++it)
            if (!it->empty() && *it != ".") todo.push_back(std::move(*it));
    };
    push_path(rel);
    int hops = 0;
    auto joined = [&done] {
        std::string s;
        for (const auto& d : done)
            s += (s.empty() ? "" : "/") + d;
        return s;
    };
    while (!todo.empty()) {
        std::string part = std::move(todo.back());
        todo.pop_back();
        if (part == "..") {
            if (done.empty()) {
                why.kind = Problem::Kind::leaves_root;
                return std::nullopt;
            }
            done.pop_back();
            continue;
        }
        done.push_back(std::move(part));
        const std::string at = joined();
        const auto it = nodes_.find(at);
        if (it == nodes_.end()) {
            why.kind = Problem::Kind::dangling;
            why.why = errno_text(ENOENT);
            why.error = ENOENT;
            return std::nullopt;
        }
        if (it->second.kind == Kind::link) {
            if (++hops > 40) {
                why.kind = Problem::Kind::dangling;
                why.why = errno_text(ELOOP);
                why.error = ELOOP;
                return std::nullopt;
            }
            const std::string& target = it->second.data;
            done.pop_back();
            if (!target.empty() && target.front() == '/') {
                why.kind = Problem::Kind::leaves_root; // the root has no place outside memory
                return std::nullopt;
            }
            push_path(target);
            continue;
        }
        if (!todo.empty() && it->second.kind != Kind::dir && it->second.kind != Kind::unreadable) {
            why.kind = Problem::Kind::dangling;
            why.why = errno_text(ENOTDIR);
            why.error = ENOTDIR;
            return std::nullopt;
        }
    }
    return joined();
}

Entry MemoryTree::entry_of(const std::string& rel, const Node& node) const {
    Entry e;
    e.rel = rel;
    e.display = display(rel);
    switch (node.kind) {
    case Kind::dir:
    case Kind::unreadable:
        e.kind = Entry::Kind::dir;
        break;
    case Kind::file:
        break;
    case Kind::special:
        e.problem = Problem{Problem::Kind::not_regular, {}, {}, 0, false};
        break;
    case Kind::link: {
        e.link = true;
        Problem why;
        why.link = true;
        why.target = node.data;
        const auto to = resolve(rel, why);
        if (!to) {
            e.problem = std::move(why);
            break;
        }
        const auto t = nodes_.find(*to);
        if (to->empty() || t->second.kind == Kind::dir || t->second.kind == Kind::unreadable)
            e.problem = Problem{Problem::Kind::link_to_dir, {}, {}, 0, true};
        else if (t->second.kind == Kind::special)
            e.problem = Problem{Problem::Kind::not_regular, {}, {}, 0, true};
        break;
    }
    }
    return e;
}

Result<std::vector<Entry>> MemoryTree::list() const {
    std::vector<Entry> out;
    out.push_back({Entry::Kind::dir, "", display_, std::nullopt});
    for (const auto& [rel, node] : nodes_) {
        if (node.kind == Kind::unreadable)
            return fail(
                Error::io("cannot read directory " + display(rel) + ": " + errno_text(EACCES)));
        out.push_back(entry_of(rel, node));
    }
    std::sort(out.begin() + 1, out.end(),
              [](const Entry& a, const Entry& b) { return path_less(a.rel, b.rel); });
    return out;
}

Result<std::vector<Entry>> MemoryTree::list_dir(std::string_view rel) const {
    if (!rel.empty() && !valid_rel(rel)) return fail(bad_rel(rel));
    const std::string shown = display(rel);
    // Where `rel` leads, links followed (within the tree).
    std::string at;
    if (!rel.empty()) {
        Problem why;
        const auto to = resolve(std::string(rel), why);
        if (!to)
            return fail(Error::io("cannot read directory " + shown + ": " +
                                  (why.kind == Problem::Kind::leaves_root
                                       ? std::string("a symbolic link leaving ") + display_
                                       : why.why)));
        at = *to;
    }
    if (!at.empty()) {
        const auto it = nodes_.find(at);
        if (it->second.kind == Kind::unreadable)
            return fail(Error::io("cannot read directory " + shown + ": " + errno_text(EACCES)));
        if (it->second.kind != Kind::dir)
            return fail(Error::io("cannot read directory " + shown + ": " + errno_text(ENOTDIR)));
    }
    const std::string prefix = at.empty() ? std::string() : at + "/";
    const std::string named = rel.empty() ? std::string() : std::string(rel) + "/";
    std::vector<Entry> out;
    for (auto it = nodes_.lower_bound(prefix); it != nodes_.end(); ++it) {
        const std::string& r = it->first;
        if (r.compare(0, prefix.size(), prefix) != 0) break;
        if (r.find('/', prefix.size()) != std::string::npos) continue;
        Entry e = entry_of(r, it->second);
        e.rel = named + r.substr(prefix.size());
        e.display = display(e.rel);
        out.push_back(std::move(e));
    }
    std::sort(out.begin(), out.end(),
              [](const Entry& a, const Entry& b) { return path_less(a.rel, b.rel); });
    return out;
}

Result<std::optional<Entry>> MemoryTree::find(std::string_view rel) const {
    if (rel.empty()) return std::optional<Entry>(Entry{Entry::Kind::dir, "", display_, {}});
    const auto it = nodes_.find(std::string(rel));
    if (it == nodes_.end()) return std::optional<Entry>();
    return std::optional<Entry>(entry_of(it->first, it->second));
}

Result<Contents> MemoryTree::read(std::string_view rel, const ReadOptions& opts) const {
    if (!valid_rel(rel)) return fail(bad_rel(rel));
    const std::string shown = display(rel);
    Problem why;
    const auto to = resolve(std::string(rel), why);
    if (!to) {
        if (why.kind == Problem::Kind::leaves_root)
            return fail(
                Error::invalid("refused " + shown + ": it is a symbolic link leaving " + display_));
        return fail(Error::io("cannot open " + shown + ": " +
                              (why.why.empty() ? errno_text(ENOENT) : why.why)));
    }
    const auto it = nodes_.find(*to);
    if (to->empty() || it->second.kind == Kind::dir || it->second.kind == Kind::unreadable)
        return fail(Error::io("cannot read " + shown + ": it is a directory"));
    if (it->second.kind != Kind::file)
        return fail(Error::io("cannot read " + shown + ": not a regular file"));
    Contents out;
    const std::string_view bytes =
        it->second.borrowed ? it->second.view : std::string_view(it->second.data);
    out.size = bytes.size();
    if (out.size > opts.limit) {
        out.too_large = true;
        return out;
    }
    out.set_view(bytes);
    return out;
}

} // namespace kpkg::io
