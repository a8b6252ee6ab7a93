#include "kpkg/oci/layout.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "archive.hpp"
#include "kpkg/core/atomic_file.hpp"
#include "kpkg/core/digest.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/oci/layer.hpp"
#include "kpkg/oci/media_types.hpp"
#include "kpkg/oci/reference.hpp"

namespace kpkg::oci {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view layout_file_content = R"({"imageLayoutVersion":"1.0.0"})";

std::string hex_of(const std::string& digest) {
    const auto colon = digest.find(':');
    return colon == std::string::npos ? digest : digest.substr(colon + 1);
}

bool is_sha256(const std::string& digest) {
    return digest.rfind("sha256:", 0) == 0 && check_digest(digest).ok();
}

// Where blobs come from while reading a layout: a directory or the files of an archive.
// get(path, max) gives the file's bytes; nullopt when there is no such file. `size` is known
// before reading so that a blob of the wrong size is never read whole.
struct Source {
    std::string display; // the directory or archive, for messages
    std::function<Result<std::optional<std::uint64_t>>(const std::string&)> size;
    std::function<Result<std::string>(const std::string&, std::uint64_t)> read;
};

Source dir_source(const fs::path& dir) {
    Source s;
    s.display = dir.string();
    s.size = [dir](const std::string& rel) -> Result<std::optional<std::uint64_t>> {
        std::error_code ec;
        const fs::path p = dir / rel;
        auto st = fs::symlink_status(p, ec);
        if (ec || st.type() == fs::file_type::not_found) return std::optional<std::uint64_t>();
        if (st.type() != fs::file_type::regular)
            return Error::invalid(p.string() + ": not a regular file");
        auto n = fs::file_size(p, ec);
        if (ec) return Error::io(p.string() + ": " + ec.message());
        return std::optional<std::uint64_t>(n);
    };
    s.read = [dir](const std::string& rel, std::uint64_t max) -> Result<std::string> {
        io::Limits l;
        l.max_file_bytes = static_cast<std::size_t>(max);
        return io::read_file(dir / rel, l);
    };
    return s;
}

// The regular files of a tar (names without a leading "./"; symbolic links followed within
// the archive, as `docker save` links repeated layers).
Result<std::map<std::string, std::string>>
tar_files(std::string_view data, const std::string& display, std::uint64_t max_entries = 100000) {
    auto api_r = detail::archive_api();
    if (!api_r) return std::move(api_r).error();
    const detail::ArchiveApi& api = **api_r;
    detail::Reader r(api);
    api.archive_read_support_filter_none(r.get());
    api.archive_read_support_filter_gzip(r.get());
    api.archive_read_support_format_tar(r.get());
    if (api.archive_read_open_memory(r.get(), data.data(), data.size()) != ARCHIVE_OK)
        return Error::invalid(display + ": not a tar archive: " + r.error());
    std::map<std::string, std::string> files, links;
    struct archive_entry* e = nullptr;
    std::uint64_t n = 0;
    auto clean = [](std::string s) {
        while (s.rfind("./", 0) == 0)
            s.erase(0, 2);
        while (!s.empty() && s.front() == '/')
            s.erase(0, 1);
        return s;
    };
    for (;;) {
        const int h = api.archive_read_next_header(r.get(), &e);
        if (h == ARCHIVE_EOF) break;
        if (h != ARCHIVE_OK && h != ARCHIVE_WARN)
            return Error::invalid(display + ": corrupt tar: " + r.error());
        if (++n > max_entries)
            return Error::invalid(display + ": more than " + std::to_string(max_entries) +
                                  " entries");
        const char* pn = api.archive_entry_pathname(e);
        const std::string name = clean(pn != nullptr ? pn : "");
        if (const char* hl = api.archive_entry_hardlink(e)) {
            links[name] = "/" + clean(hl);
            continue;
        }
        const auto type = api.archive_entry_filetype(e);
        if (type == AE_IFLNK) {
            const char* t = api.archive_entry_symlink(e);
            links[name] = t != nullptr ? t : "";
            continue;
        }
        if (type != AE_IFREG) continue;
        std::string bytes;
        const la_int64_t size = api.archive_entry_size(e);
        if (size < 0 || static_cast<std::uint64_t>(size) > data.size())
            return Error::invalid(display + ": " + name + ": truncated (its header says " +
                                  std::to_string(size) + " bytes)");
        bytes.resize(static_cast<std::size_t>(size));
        std::size_t got = 0;
        while (got < bytes.size()) {
            const la_ssize_t k =
                api.archive_read_data(r.get(), bytes.data() + got, bytes.size() - got);
            if (k < 0) return Error::invalid(display + ": " + name + ": " + r.error());
            if (k == 0) break;
            got += static_cast<std::size_t>(k);
        }
        if (got != bytes.size()) return Error::invalid(display + ": " + name + ": truncated");
        files[name] = std::move(bytes);
    }
    // Links to files of the archive (relative to the link's directory, or "/"-anchored for hard
    // links); others are left out.
    for (const auto& [name, target] : links) {
        std::string to;
        if (!target.empty() && target.front() == '/') {
            to = target.substr(1);
        } else {
            const auto slash = name.rfind('/');
            std::vector<std::string> parts;
            std::string base = slash == std::string::npos ? "" : name.substr(0, slash);
            std::string all = base.empty() ? target : base + "/" + target;
            std::size_t start = 0;
            bool bad = false;
            for (;;) {
                const auto s = all.find('/', start);
                const std::string part = all.substr(start, s == all.npos ? all.npos : s - start);
                if (part == "..") {
                    if (parts.empty()) {
                        bad = true;
                        break;
                    }
                    parts.pop_back();
                } else if (!part.empty() && part != ".") {
                    parts.push_back(part);
                }
                if (s == all.npos) break;
                start = s + 1;
            }
            if (bad) continue;
            for (const auto& p : parts)
                to += (to.empty() ? "" : "/") + p;
        }
        auto it = files.find(to);
        if (it != files.end()) files[name] = it->second;
    }
    return files;
}

Source map_source(std::string display, std::shared_ptr<std::map<std::string, std::string>> m) {
    Source s;
    s.display = std::move(display);
    s.size = [m](const std::string& rel) -> Result<std::optional<std::uint64_t>> {
        auto it = m->find(rel);
        if (it == m->end()) return std::optional<std::uint64_t>();
        return std::optional<std::uint64_t>(it->second.size());
    };
    s.read = [m](const std::string& rel, std::uint64_t) -> Result<std::string> {
        return m->at(rel);
    };
    return s;
}

Error blob_error(const Source& src, const std::string& digest, const std::string& named_by,
                 const std::string& why) {
    return Error::invalid("blob " + digest + " (named by " + named_by + ") in " + src.display +
                          ": " + why);
}

// Reads the blob of `d` into content, verified; then, for an index or a manifest, the blobs
// they name.
Result<void> load_blob(const Source& src, const Descriptor& d, const std::string& named_by,
                       const ReadLimits& limits, Content& out, int depth = 0) {
    if (!is_sha256(d.digest))
        return blob_error(src, d.digest, named_by, "only sha256 digests are supported");
    const bool document = media::is_index(d.media_type) || media::is_manifest(d.media_type) ||
                          d.media_type == media::oci_config || d.media_type == media::docker_config;
    const std::uint64_t max = document ? limits.max_manifest_bytes : limits.max_blob_bytes;
    if (!out.blobs.count(d.digest)) {
        const std::string rel = "blobs/sha256/" + hex_of(d.digest);
        auto size = src.size(rel);
        if (!size) return std::move(size).error();
        if (!*size) return blob_error(src, d.digest, named_by, "missing (" + rel + ")");
        if (**size != static_cast<std::uint64_t>(d.size))
            return blob_error(src, d.digest, named_by,
                              std::to_string(**size) + " bytes, but its descriptor says " +
                                  std::to_string(d.size));
        if (**size > max)
            return blob_error(src, d.digest, named_by,
                              std::to_string(**size) + " bytes, more than the limit of " +
                                  std::to_string(max));
        auto bytes = src.read(rel, max);
        if (!bytes) return std::move(bytes).error();
        if (sha256_digest(*bytes) != d.digest)
            return blob_error(src, d.digest, named_by,
                              "its content has digest " + sha256_digest(*bytes));
        out.blobs.emplace(d.digest, std::move(*bytes));
    }
    const std::string& bytes = out.blobs.at(d.digest);
    const std::string name = "blob " + d.digest;
    if (media::is_index(d.media_type)) {
        if (depth > 4) return blob_error(src, d.digest, named_by, "indexes nested too deeply");
        auto ix = parse_index(bytes, name, d.media_type);
        if (!ix) return std::move(ix).error();
        for (const auto& m : ix->manifests) {
            if (!media::is_index(m.media_type) && !media::is_manifest(m.media_type)) continue;
            auto r = load_blob(src, m, "index " + d.digest, limits, out, depth + 1);
            if (!r) return r;
        }
    } else if (media::is_manifest(d.media_type)) {
        auto m = parse_manifest(bytes, name, d.media_type);
        if (!m) return std::move(m).error();
        auto r = load_blob(src, m->config, "manifest " + d.digest, limits, out, depth + 1);
        if (!r) return r;
        for (const auto& l : m->layers) {
            r = load_blob(src, l, "manifest " + d.digest, limits, out, depth + 1);
            if (!r) return r;
        }
    }
    return {};
}

Result<Content> read_layout_from(const Source& src, const std::string& tag,
                                 const ReadLimits& limits) {
    auto layout_size = src.size("oci-layout");
    if (!layout_size) return std::move(layout_size).error();
    if (!*layout_size)
        return Error::invalid(src.display + ": not an OCI image layout (no oci-layout file)");
    auto layout = src.read("oci-layout", 4096);
    if (!layout) return std::move(layout).error();
    {
        auto docs = io::parse_json(*layout, src.display + "/oci-layout");
        if (!docs) return std::move(docs).error();
        const io::Node* v = docs->size() == 1 ? (*docs)[0].root.get("imageLayoutVersion") : nullptr;
        if (v == nullptr || !v->is_string())
            return Error::invalid(src.display + "/oci-layout: no imageLayoutVersion");
        if (v->text != "1.0.0")
            return Error::invalid(src.display + "/oci-layout: imageLayoutVersion \"" + v->text +
                                  "\" is not 1.0.0");
    }
    const std::string index_name = src.display + "/index.json";
    auto isize = src.size("index.json");
    if (!isize) return std::move(isize).error();
    if (!*isize) return Error::invalid(index_name + ": missing");
    if (**isize > limits.max_manifest_bytes)
        return Error::invalid(index_name + ": " + std::to_string(**isize) +
                              " bytes, more than the limit of " +
                              std::to_string(limits.max_manifest_bytes));
    auto ibytes = src.read("index.json", limits.max_manifest_bytes);
    if (!ibytes) return std::move(ibytes).error();
    auto ix = parse_index(*ibytes, index_name);
    if (!ix) return std::move(ix).error();
    std::vector<const Descriptor*> found;
    std::vector<std::string> tags;
    for (const auto& d : ix->manifests) {
        auto it = d.annotations.find(std::string(ref_name_annotation));
        const std::string t = it == d.annotations.end() ? std::string() : it->second;
        if (!t.empty()) tags.push_back(t);
        if (tag.empty() || t == tag) found.push_back(&d);
    }
    auto tag_list = [&] {
        std::string s;
        for (const auto& t : tags)
            s += (s.empty() ? "" : ", ") + t;
        return s.empty() ? std::string("none") : s;
    };
    if (found.empty())
        return Error::invalid(src.display + ": " +
                              (tag.empty() ? std::string("the layout holds no image")
                                           : "no image tagged \"" + tag + "\"") +
                              " (tags: " + tag_list() + ")");
    if (found.size() > 1)
        return Error::invalid(
            src.display + ": " + std::to_string(found.size()) + " images" +
            (tag.empty() ? std::string(", name one with :TAG") : " tagged \"" + tag + "\"") +
            " (tags: " + tag_list() + ")");
    const Descriptor& root = *found.front();
    if (!media::is_index(root.media_type) && !media::is_manifest(root.media_type))
        return Error::invalid(index_name + ": the image's media type \"" + root.media_type +
                              "\" is neither an index nor a manifest");
    Content c;
    auto r = load_blob(src, root, index_name, limits, c);
    if (!r) return std::move(r).error();
    c.root_digest = root.digest;
    c.root_media_type = root.media_type;
    return c;
}

// --- writing ---

// The blobs of content reachable from its root, each checked to be present.
Result<std::vector<std::string>> reachable(const Content& c) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    std::function<Result<void>(const std::string&, const std::string&, const std::string&)> walk =
        [&](const std::string& digest, const std::string& type,
            const std::string& by) -> Result<void> {
        if (!seen.insert(digest).second) return {};
        auto it = c.blobs.find(digest);
        if (it == c.blobs.end())
            return Error::invalid("blob " + digest + " (named by " + by + ") is missing");
        if (!is_sha256(digest))
            return Error::invalid("blob " + digest + ": only sha256 digests are supported");
        out.push_back(digest);
        if (media::is_index(type)) {
            auto ix = parse_index(it->second, "blob " + digest, type);
            if (!ix) return std::move(ix).error();
            for (const auto& m : ix->manifests) {
                if (!media::is_index(m.media_type) && !media::is_manifest(m.media_type)) continue;
                auto r = walk(m.digest, m.media_type, "index " + digest);
                if (!r) return r;
            }
        } else if (media::is_manifest(type)) {
            auto m = parse_manifest(it->second, "blob " + digest, type);
            if (!m) return std::move(m).error();
            auto r = walk(m->config.digest, m->config.media_type, "manifest " + digest);
            if (!r) return r;
            for (const auto& l : m->layers) {
                r = walk(l.digest, l.media_type, "manifest " + digest);
                if (!r) return r;
            }
        }
        return {};
    };
    if (!media::is_index(c.root_media_type) && !media::is_manifest(c.root_media_type))
        return Error::invalid("the image's root media type \"" + c.root_media_type +
                              "\" is neither an index nor a manifest");
    auto r = walk(c.root_digest, c.root_media_type, "the image");
    if (!r) return std::move(r).error();
    return out;
}

Descriptor root_descriptor(const Content& c, const std::string& tag) {
    Descriptor d;
    d.media_type = c.root_media_type;
    d.digest = c.root_digest;
    d.size = static_cast<std::int64_t>(c.blobs.at(c.root_digest).size());
    if (!tag.empty()) d.annotations[std::string(ref_name_annotation)] = tag;
    return d;
}

// index.json with `d` added: an entry with the same tag is replaced; an untagged entry of the
// same digest is not added twice.
Index add_to_index(Index ix, const Descriptor& d, const std::string& tag) {
    const std::string key(ref_name_annotation);
    for (auto& m : ix.manifests) {
        auto it = m.annotations.find(key);
        const bool tagged = it != m.annotations.end();
        if ((!tag.empty() && tagged && it->second == tag) ||
            (tag.empty() && !tagged && m.digest == d.digest)) {
            m = d;
            return ix;
        }
    }
    ix.manifests.push_back(d);
    return ix;
}

// An existing index.json with `d` added as add_to_index adds it, every other entry and field
// kept as it was (fields kpkg does not model: urls, artifactType, os.version, ...).
Result<std::string> add_to_index_json(std::string_view bytes, const std::string& name,
                                      const Descriptor& d, const std::string& tag) {
    auto docs = io::parse_json(bytes, name);
    if (!docs) return std::move(docs).error();
    io::Node root = std::move((*docs)[0].root); // parse_index checked the shape
    auto dn = io::parse_json(to_json(d), "descriptor");
    if (!dn) return std::move(dn).error();
    io::Node* ms = root.get("manifests");
    bool done = false;
    for (auto& m : ms->items) {
        const io::Node* ann = m.get("annotations");
        const io::Node* ref = ann != nullptr ? ann->get(ref_name_annotation) : nullptr;
        const bool tagged = ref != nullptr && ref->is_string() && !ref->text.empty();
        const io::Node* digest = m.get("digest");
        if ((!tag.empty() && tagged && ref->text == tag) ||
            (tag.empty() && !tagged && digest != nullptr && digest->text == d.digest)) {
            m = (*dn)[0].root;
            done = true;
            break;
        }
    }
    if (!done) ms->push(std::move((*dn)[0].root));
    std::string out;
    io::go::Marshaller w(out, true);
    w.keep_order = true;
    if (!w.value(root)) return Error::invalid(name + ": a value without a JSON form");
    return out;
}

Result<void> check_blobs(const Content& c, const std::vector<std::string>& digests) {
    for (const auto& d : digests)
        if (sha256_digest(c.blobs.at(d)) != d)
            return Error::invalid("blob " + d + ": its content has digest " +
                                  sha256_digest(c.blobs.at(d)));
    return {};
}

Result<void> write_new_layout(const fs::path& dir, const Content& c,
                              const std::vector<std::string>& digests, const std::string& tag) {
    const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
    std::string tmpl = (parent / ("." + dir.filename().string() + ".kpkg-XXXXXX")).string();
    if (mkdtemp(tmpl.data()) == nullptr)
        return Error::io("cannot create a directory beside " + dir.string() + ": " +
                         std::strerror(errno));
    const fs::path tmp = tmpl;
    auto cleanup = [&] {
        std::error_code ec;
        fs::remove_all(tmp, ec);
    };
    std::error_code ec;
    fs::create_directories(tmp / "blobs" / "sha256", ec);
    if (ec) {
        cleanup();
        return Error::io(tmp.string() + ": " + ec.message());
    }
    for (const auto& d : digests) {
        auto r = write_file_atomic(tmp / "blobs" / "sha256" / hex_of(d), c.blobs.at(d));
        if (!r) {
            cleanup();
            return r;
        }
    }
    Index ix;
    ix.media_type = std::string(media::oci_index);
    ix = add_to_index(std::move(ix), root_descriptor(c, tag), tag);
    for (auto [name, bytes] :
         {std::pair<const char*, std::string>{"oci-layout", std::string(layout_file_content)},
          {"index.json", to_json(ix)}}) {
        auto r = write_file_atomic(tmp / name, bytes);
        if (!r) {
            cleanup();
            return r;
        }
    }
    fs::permissions(tmp,
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                        fs::perms::others_read | fs::perms::others_exec,
                    ec);
    if (::rename(tmp.c_str(), dir.c_str()) != 0) {
        const int err = errno;
        cleanup();
        return Error::io("cannot write " + dir.string() + ": " + std::strerror(err));
    }
    return {};
}

std::string docker_manifest_json(const std::string& config, const std::string& repo_tag,
                                 const std::vector<std::string>& layers) {
    std::string out = "[{\"Config\":";
    io::go::append_string(out, config, true);
    out += ",\"RepoTags\":[";
    if (!repo_tag.empty()) io::go::append_string(out, repo_tag, true);
    out += "],\"Layers\":[";
    for (std::size_t i = 0; i < layers.size(); ++i) {
        if (i) out += ',';
        io::go::append_string(out, layers[i], true);
    }
    out += "]}]";
    return out;
}

// A docker-archive's RepoTags entry for `ref`: a name with a tag (":latest" added when it has
// none), never a digest. Error::usage otherwise.
Result<std::string> repo_tag_of(const std::string& ref) {
    if (ref.empty()) return std::string();
    auto r = parse(ref);
    if (!r) return Error::usage("docker-archive reference \"" + ref + "\": " + r.error().message);
    if (!r->digest.empty())
        return Error::usage("docker-archive reference \"" + ref +
                            "\": a digest cannot be a tag of an archive; use name:tag");
    if (r->tag.empty()) r->tag = "latest";
    return r->str();
}

// Whether two docker-archive references name the same image ("busybox" and
// "docker.io/library/busybox:latest").
bool same_ref(const std::string& a, const std::string& b) {
    if (a == b) return true;
    auto ra = parse(a);
    auto rb = parse(b);
    return ra && rb && normalize(*ra) == normalize(*rb);
}

Result<std::string> read_archive_file(const fs::path& file, const ReadLimits& limits) {
    io::Limits l;
    l.max_file_bytes = static_cast<std::size_t>(limits.max_archive_bytes);
    return io::read_file(file, l);
}

} // namespace

std::optional<LayoutRef> layout_ref(const Location& l) {
    LayoutRef r;
    switch (l.kind) {
    case Location::Kind::oci_layout:
        r.kind = LayoutRef::Kind::oci_dir;
        break;
    case Location::Kind::oci_archive:
        r.kind = LayoutRef::Kind::oci_archive;
        break;
    case Location::Kind::docker_archive:
        r.kind = LayoutRef::Kind::docker_archive;
        break;
    default:
        return std::nullopt;
    }
    r.path = l.path;
    r.tag = l.tag;
    return r;
}

Result<Content> read_oci_dir(const fs::path& dir, const std::string& tag,
                             const ReadLimits& limits) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return Error::io(dir.string() + ": " +
                         (fs::exists(dir, ec) ? "not a directory" : "no such directory"));
    return read_layout_from(dir_source(dir), tag, limits);
}

Result<Content> read_oci_archive(const fs::path& file, const std::string& tag,
                                 const ReadLimits& limits) {
    auto data = read_archive_file(file, limits);
    if (!data) return std::move(data).error();
    auto files = tar_files(*data, file.string());
    if (!files) return std::move(files).error();
    data->clear();
    return read_layout_from(
        map_source(file.string(),
                   std::make_shared<std::map<std::string, std::string>>(std::move(*files))),
        tag, limits);
}

namespace {

// A docker archive whose files are read: the image of manifest.json for `ref`.
Result<Content> docker_archive_from(const fs::path& file, std::map<std::string, std::string>* files,
                                    const std::string& ref, const ReadLimits& limits) {
    const std::string mname = file.string() + ": manifest.json";
    auto mit = files->find("manifest.json");
    if (mit == files->end())
        return Error::invalid(file.string() + ": not a docker archive (no manifest.json)");
    auto docs = io::parse_json(mit->second, mname);
    if (!docs) return std::move(docs).error();
    if (docs->size() != 1 || !(*docs)[0].root.is_seq())
        return Error::invalid(mname + " must be a list of images");
    const io::Node& list = (*docs)[0].root;
    std::vector<const io::Node*> picked;
    std::vector<std::string> all_tags;
    for (const auto& img : list.items) {
        if (!img.is_map())
            return Error::invalid("entries must be objects", io::pos_of(mname, img.mark));
        bool match = ref.empty();
        if (const io::Node* tags = img.get("RepoTags"); tags != nullptr && tags->is_seq())
            for (const auto& t : tags->items) {
                if (!t.is_string()) continue;
                all_tags.push_back(t.text);
                if (!ref.empty() && same_ref(t.text, ref)) match = true;
            }
        if (match) picked.push_back(&img);
    }
    std::string tag_list;
    for (const auto& t : all_tags)
        tag_list += (tag_list.empty() ? "" : ", ") + t;
    if (tag_list.empty()) tag_list = "none";
    if (picked.size() != 1)
        return Error::invalid(
            file.string() + ": " +
            (picked.empty()
                 ? (ref.empty() ? std::string("no image") : "no image tagged \"" + ref + "\"")
                 : std::to_string(picked.size()) + " images, name one with :REF") +
            " (tags: " + tag_list + ")");
    const io::Node& img = *picked.front();
    const io::Node* cfg = img.get("Config");
    const io::Node* layers = img.get("Layers");
    if (cfg == nullptr || !cfg->is_string())
        return Error::invalid("an image without a \"Config\" file name",
                              io::pos_of(mname, img.mark));
    if (layers == nullptr || !layers->is_seq())
        return Error::invalid("an image without a \"Layers\" list", io::pos_of(mname, img.mark));
    auto get = [&](const io::Node& n, std::uint64_t max) -> Result<std::string> {
        if (!n.is_string()) return Error::invalid("not a file name", io::pos_of(mname, n.mark));
        auto it = files->find(n.text);
        if (it == files->end())
            return Error::invalid("\"" + n.text + "\" is not in the archive",
                                  io::pos_of(mname, n.mark));
        if (it->second.size() > max)
            return Error::invalid("\"" + n.text + "\": " + std::to_string(it->second.size()) +
                                      " bytes, more than the limit of " + std::to_string(max),
                                  io::pos_of(mname, n.mark));
        return it->second;
    };
    auto config_bytes = get(*cfg, limits.max_manifest_bytes);
    if (!config_bytes) return std::move(config_bytes).error();
    auto config = parse_config(*config_bytes, file.string() + ": " + cfg->text);
    if (!config) return std::move(config).error();
    if (config->diff_ids.size() != layers->items.size())
        return Error::invalid(file.string() + ": " + cfg->text + " has " +
                              std::to_string(config->diff_ids.size()) + " diff_ids for " +
                              std::to_string(layers->items.size()) + " layers");
    Content c;
    Manifest m;
    m.media_type = std::string(media::oci_manifest);
    m.config.media_type = std::string(media::oci_config);
    m.config.digest = sha256_digest(*config_bytes);
    m.config.size = static_cast<std::int64_t>(config_bytes->size());
    c.blobs.emplace(m.config.digest, std::move(*config_bytes));
    for (std::size_t i = 0; i < layers->items.size(); ++i) {
        const io::Node& ln = layers->items[i];
        auto blob = get(ln, limits.max_blob_bytes);
        if (!blob) return std::move(blob).error();
        auto tar = decompress(*blob, limits.max_blob_bytes, file.string() + ": " + ln.text);
        if (!tar) return std::move(tar).error();
        const std::string diff_id = sha256_digest(*tar);
        if (diff_id != config->diff_ids[i])
            return Error::invalid(file.string() + ": layer " + ln.text + " has digest " + diff_id +
                                  " uncompressed, but the config's diff_ids[" + std::to_string(i) +
                                  "] is " + config->diff_ids[i]);
        Descriptor d;
        switch (detect_compression(*blob)) {
        case Compression::none:
            d.media_type = std::string(media::oci_layer_tar);
            break;
        case Compression::gzip:
            d.media_type = std::string(media::oci_layer_gzip);
            break;
        case Compression::zstd:
            d.media_type = std::string(media::oci_layer_zstd);
            break;
        }
        d.digest = sha256_digest(*blob);
        d.size = static_cast<std::int64_t>(blob->size());
        m.layers.push_back(d);
        c.blobs.emplace(d.digest, std::move(*blob));
    }
    const std::string mj = to_json(m);
    c.root_digest = sha256_digest(mj);
    c.root_media_type = m.media_type;
    c.blobs.emplace(c.root_digest, mj);
    return c;
}

} // namespace

Result<Content> read_docker_archive(const fs::path& file, const std::string& ref,
                                    const ReadLimits& limits) {
    auto data = read_archive_file(file, limits);
    if (!data) return std::move(data).error();
    auto files = tar_files(*data, file.string());
    if (!files) return std::move(files).error();
    data->clear();
    return docker_archive_from(file, &*files, ref, limits);
}

Result<Content> read_archive(const fs::path& file, const std::string& tag,
                             const ReadLimits& limits) {
    auto data = read_archive_file(file, limits);
    if (!data) return std::move(data).error();
    auto files = tar_files(*data, file.string());
    if (!files) return std::move(files).error();
    data->clear();
    if (files->count("oci-layout"))
        return read_layout_from(
            map_source(file.string(),
                       std::make_shared<std::map<std::string, std::string>>(std::move(*files))),
            tag, limits);
    if (files->count("manifest.json")) return docker_archive_from(file, &*files, tag, limits);
    return Error::invalid(file.string() +
                          ": neither an OCI archive (no oci-layout) nor a docker archive (no "
                          "manifest.json)");
}

Result<Content> read_layout(const LayoutRef& ref, const ReadLimits& limits) {
    switch (ref.kind) {
    case LayoutRef::Kind::oci_dir:
        return read_oci_dir(ref.path, ref.tag, limits);
    case LayoutRef::Kind::oci_archive:
        return read_oci_archive(ref.path, ref.tag, limits);
    case LayoutRef::Kind::docker_archive:
        return read_docker_archive(ref.path, ref.tag, limits);
    }
    return Error::internal("unknown layout kind");
}

Result<void> verify(const Content& content) {
    for (const auto& [digest, bytes] : content.blobs) {
        if (!is_sha256(digest))
            return Error::invalid("blob " + digest + ": only sha256 digests are supported");
        if (sha256_digest(bytes) != digest)
            return Error::invalid("blob " + digest + ": its content has digest " +
                                  sha256_digest(bytes));
    }
    if (!content.blobs.count(content.root_digest))
        return Error::invalid("the image's root " + content.root_digest +
                              " is not among its blobs");
    return {};
}

namespace {

// The writers of a layout and an oci-archive, for content that has OCI media types already.
Result<void> write_oci_dir_as_is(const fs::path& dir_given, const Content& content,
                                 const std::string& tag) {
    // "out/" is the directory "out" (its temporary sibling is ".out.kpkg-…", not inside it).
    fs::path dir = dir_given.lexically_normal();
    if (!dir.has_filename() && dir.has_parent_path()) dir = dir.parent_path();
    auto digests = reachable(content);
    if (!digests) return std::move(digests).error();
    if (auto r = check_blobs(content, *digests); !r) return r;
    std::error_code ec;
    const auto st = fs::symlink_status(dir, ec);
    if (st.type() == fs::file_type::not_found) return write_new_layout(dir, content, *digests, tag);
    if (!fs::is_directory(dir, ec))
        return Error::io(dir.string() + ": exists and is not a directory");
    if (!fs::exists(dir / "oci-layout", ec)) {
        if (!fs::is_empty(dir, ec) || ec)
            return Error::io(dir.string() +
                             ": exists, is not empty and is not an OCI image layout; refusing "
                             "to write into it");
        return write_new_layout(dir, content, *digests, tag);
    }
    // An existing layout: check what is there before changing anything.
    auto layout = io::read_file(dir / "oci-layout");
    if (!layout) return std::move(layout).error();
    std::string index_json;
    {
        Index fresh;
        fresh.media_type = std::string(media::oci_index);
        index_json = to_json(fresh);
    }
    if (fs::exists(dir / "index.json", ec)) {
        auto bytes = io::read_file(dir / "index.json");
        if (!bytes) return std::move(bytes).error();
        auto parsed = parse_index(*bytes, (dir / "index.json").string());
        if (!parsed) return std::move(parsed).error();
        index_json = std::move(*bytes);
    }
    auto new_index = add_to_index_json(index_json, (dir / "index.json").string(),
                                       root_descriptor(content, tag), tag);
    if (!new_index) return std::move(new_index).error();
    std::vector<fs::path> added;
    auto undo = [&] {
        for (const auto& p : added) {
            std::error_code e2;
            fs::remove(p, e2);
        }
    };
    fs::create_directories(dir / "blobs" / "sha256", ec);
    if (ec) return Error::io((dir / "blobs" / "sha256").string() + ": " + ec.message());
    for (const auto& d : *digests) {
        const fs::path p = dir / "blobs" / "sha256" / hex_of(d);
        if (fs::exists(p, ec)) {
            auto have = sha256_file(p);
            if (have && *have == d) continue; // already there, verified
        } else {
            added.push_back(p);
        }
        auto r = write_file_atomic(p, content.blobs.at(d));
        if (!r) {
            undo();
            return r;
        }
    }
    auto r = write_file_atomic(dir / "index.json", *new_index);
    if (!r) {
        undo();
        return r;
    }
    return {};
}

Result<void> write_oci_archive_as_is(const fs::path& file, const Content& content,
                                     const std::string& tag) {
    auto digests = reachable(content);
    if (!digests) return std::move(digests).error();
    if (auto r = check_blobs(content, *digests); !r) return r;
    Index ix;
    ix.media_type = std::string(media::oci_index);
    ix = add_to_index(std::move(ix), root_descriptor(content, tag), tag);
    std::vector<TarEntry> entries;
    entries.push_back({TarEntry::Type::dir, "blobs/", {}, {}, 0755});
    entries.push_back({TarEntry::Type::dir, "blobs/sha256/", {}, {}, 0755});
    std::vector<std::string> sorted = *digests;
    std::sort(sorted.begin(), sorted.end());
    for (const auto& d : sorted)
        entries.push_back(
            {TarEntry::Type::file, "blobs/sha256/" + hex_of(d), content.blobs.at(d), {}, 0644});
    entries.push_back({TarEntry::Type::file, "index.json", to_json(ix), {}, 0644});
    entries.push_back(
        {TarEntry::Type::file, "oci-layout", std::string(layout_file_content), {}, 0644});
    return write_output_file(file, write_tar(entries));
}

} // namespace

// A layout holds OCI media types only, as skopeo writes it.
Result<void> write_oci_dir(const fs::path& dir, const Content& content, const std::string& tag) {
    auto converted = with_oci_media_types(content);
    if (!converted) return std::move(converted).error();
    return write_oci_dir_as_is(dir, *converted ? **converted : content, tag);
}

Result<void> write_oci_archive(const fs::path& file, const Content& content,
                               const std::string& tag) {
    auto converted = with_oci_media_types(content);
    if (!converted) return std::move(converted).error();
    return write_oci_archive_as_is(file, *converted ? **converted : content, tag);
}

Result<void> write_docker_archive(const fs::path& file, const Content& content,
                                  const std::string& repo_tag, const Platform& platform) {
    auto tag = repo_tag_of(repo_tag);
    if (!tag) return std::move(tag).error();
    auto info = image_info(content, platform);
    if (!info) return std::move(info).error();
    if (auto r = verify(content); !r) return r;
    std::vector<TarEntry> entries;
    const std::string config_name = hex_of(info->config_digest) + ".json";
    entries.push_back(
        {TarEntry::Type::file, config_name, content.blobs.at(info->config_digest), {}, 0644});
    std::vector<std::string> layer_names;
    std::set<std::string> written;
    for (std::size_t i = 0; i < info->manifest.layers.size(); ++i) {
        const Descriptor& l = info->manifest.layers[i];
        auto tar =
            decompress(content.blobs.at(l.digest), std::uint64_t{1} << 32, "layer " + l.digest);
        if (!tar) return std::move(tar).error();
        const std::string diff_id = sha256_digest(*tar);
        if (diff_id != info->config.diff_ids[i])
            return Error::invalid("layer " + l.digest + " has digest " + diff_id +
                                  " uncompressed, but the config's diff_ids[" + std::to_string(i) +
                                  "] is " + info->config.diff_ids[i]);
        const std::string name = hex_of(diff_id) + ".tar";
        layer_names.push_back(name);
        if (written.insert(name).second)
            entries.push_back({TarEntry::Type::file, name, std::move(*tar), {}, 0644});
    }
    entries.push_back({TarEntry::Type::file,
                       "manifest.json",
                       docker_manifest_json(config_name, *tag, layer_names),
                       {},
                       0644});
    std::sort(entries.begin(), entries.end(),
              [](const TarEntry& a, const TarEntry& b) { return a.name < b.name; });
    return write_output_file(file, write_tar(entries));
}

Result<std::string> write_layout(const LayoutRef& ref, const Content& content,
                                 const Platform& platform) {
    if (ref.kind == LayoutRef::Kind::docker_archive) {
        if (auto r = write_docker_archive(ref.path, content, ref.tag, platform); !r)
            return std::move(r).error();
        return content.root_digest;
    }
    auto converted = with_oci_media_types(content);
    if (!converted) return std::move(converted).error();
    const Content& written = *converted ? **converted : content;
    auto r = ref.kind == LayoutRef::Kind::oci_dir
                 ? write_oci_dir_as_is(ref.path, written, ref.tag)
                 : write_oci_archive_as_is(ref.path, written, ref.tag);
    if (!r) return std::move(r).error();
    return written.root_digest;
}

Result<ImageInfo> image_info(const Content& content, const Platform& platform) {
    auto blob = [&](const std::string& digest,
                    const std::string& by) -> Result<const std::string*> {
        auto it = content.blobs.find(digest);
        if (it == content.blobs.end())
            return Error::invalid("blob " + digest + " (named by " + by + ") is missing");
        return &it->second;
    };
    Descriptor md;
    md.digest = content.root_digest;
    md.media_type = content.root_media_type;
    std::string named_by = "the image";
    for (int depth = 0; media::is_index(md.media_type); ++depth) {
        if (depth > 4) return Error::invalid("indexes nested too deeply");
        auto b = blob(md.digest, named_by);
        if (!b) return std::move(b).error();
        auto ix = parse_index(**b, "blob " + md.digest, md.media_type);
        if (!ix) return std::move(ix).error();
        auto sel = select_manifest(*ix, platform, "index " + md.digest);
        if (!sel) return std::move(sel).error();
        named_by = "index " + md.digest;
        md = *sel;
    }
    if (!media::is_manifest(md.media_type))
        return Error::invalid("the image's media type \"" + md.media_type +
                              "\" is neither an index nor a manifest");
    auto b = blob(md.digest, named_by);
    if (!b) return std::move(b).error();
    ImageInfo info;
    info.manifest_digest = md.digest;
    auto m = parse_manifest(**b, "blob " + md.digest, md.media_type);
    if (!m) return std::move(m).error();
    info.manifest = std::move(*m);
    info.config_digest = info.manifest.config.digest;
    auto cb = blob(info.config_digest, "manifest " + md.digest);
    if (!cb) return std::move(cb).error();
    auto cfg = parse_config(**cb, "blob " + info.config_digest);
    if (!cfg) return std::move(cfg).error();
    info.config = std::move(*cfg);
    if (info.config.diff_ids.size() != info.manifest.layers.size())
        return Error::invalid("config " + info.config_digest + " has " +
                              std::to_string(info.config.diff_ids.size()) +
                              " diff_ids, but manifest " + md.digest + " has " +
                              std::to_string(info.manifest.layers.size()) + " layers");
    return info;
}

Result<Rootfs> unpack(const Content& content, const ImageInfo& info, const ExtractLimits& limits) {
    Rootfs rootfs;
    for (std::size_t i = 0; i < info.manifest.layers.size(); ++i) {
        const Descriptor& l = info.manifest.layers[i];
        auto it = content.blobs.find(l.digest);
        if (it == content.blobs.end())
            return Error::invalid("blob " + l.digest + " (named by manifest " +
                                  info.manifest_digest + ") is missing");
        auto diff_id = apply_layer(rootfs, it->second, l.digest, limits);
        if (!diff_id) return std::move(diff_id).error();
        // image_info checked that there is one diff_id per layer.
        if (*diff_id != info.config.diff_ids[i])
            return Error::invalid("layer " + l.digest + " has digest " + *diff_id +
                                  " uncompressed, but the config's diff_ids[" + std::to_string(i) +
                                  "] is " + info.config.diff_ids[i]);
    }
    return rootfs;
}

Result<ImageTree> image_tree(const Content& content, const Platform& platform,
                             const ExtractLimits& limits, std::string display_root) {
    auto info = image_info(content, platform);
    if (!info) return std::move(info).error();
    auto unpacked = unpack(content, *info, limits);
    if (!unpacked) return std::move(unpacked).error();
    const Rootfs& rootfs = *unpacked;
    ImageTree out;
    out.tree =
        rootfs.to_tree(display_root.empty() ? info->manifest_digest : std::move(display_root));
    io::Identity id;
    id.kind = io::Identity::Kind::immutable;
    id.key = info->manifest_digest;
    id.dir = true;
    out.tree->set_identity(id);
    out.info = std::move(*info);
    return out;
}

namespace {

std::string oci_layer_type(const std::string& t) {
    if (t == media::docker_layer_gzip) return std::string(media::oci_layer_gzip);
    if (t == "application/vnd.docker.image.rootfs.diff.tar")
        return std::string(media::oci_layer_tar);
    return t;
}

Content assemble(ImageConfig config, std::vector<Descriptor> layer_descs,
                 std::map<std::string, std::string> blobs, const Annotations& annotations) {
    const std::string cj = to_json(config);
    Manifest m;
    m.media_type = std::string(media::oci_manifest);
    m.config = {std::string(media::oci_config),
                sha256_digest(cj),
                static_cast<std::int64_t>(cj.size()),
                std::nullopt,
                {}};
    m.layers = std::move(layer_descs);
    m.annotations = annotations;
    const std::string mj = to_json(m);
    Content c;
    c.blobs = std::move(blobs);
    c.blobs[m.config.digest] = cj;
    c.root_digest = sha256_digest(mj);
    c.root_media_type = m.media_type;
    c.blobs[c.root_digest] = mj;
    return c;
}

} // namespace

Content assemble_image(ImageConfig config, const std::vector<Layer>& layers,
                       const Annotations& annotations) {
    config.diff_ids.clear();
    std::vector<Descriptor> descs;
    std::map<std::string, std::string> blobs;
    for (const auto& l : layers) {
        config.diff_ids.push_back(l.diff_id);
        descs.push_back({l.media_type, l.digest, l.size, std::nullopt, {}});
        blobs[l.digest] = l.blob;
    }
    return assemble(std::move(config), std::move(descs), std::move(blobs), annotations);
}

Result<Content> assemble_on_base(const Content& base, const Platform& platform,
                                 const std::function<void(ImageConfig&)>& edit,
                                 const std::vector<Layer>& layers, const Annotations& annotations) {
    auto info = image_info(base, platform);
    if (!info) return std::move(info).error();
    const std::vector<std::string> base_ids = info->config.diff_ids;
    ImageConfig config = std::move(info->config);
    if (edit) edit(config);
    std::vector<Descriptor> descs;
    std::map<std::string, std::string> blobs;
    for (const auto& d : info->manifest.layers) {
        auto it = base.blobs.find(d.digest);
        if (it == base.blobs.end())
            return Error::invalid("blob " + d.digest + " (named by manifest " +
                                  info->manifest_digest + ") is missing");
        Descriptor nd = d;
        nd.media_type = oci_layer_type(d.media_type);
        descs.push_back(std::move(nd));
        blobs[d.digest] = it->second;
    }
    // The base's diff_ids as they were (image_info checked they pair with its layers).
    config.diff_ids = base_ids;
    io::Node* history = config.raw.is_map() ? config.raw.get("history") : nullptr;
    for (const auto& l : layers) {
        config.diff_ids.push_back(l.diff_id);
        descs.push_back({l.media_type, l.digest, l.size, std::nullopt, {}});
        blobs[l.digest] = l.blob;
        if (history != nullptr && history->is_seq()) {
            io::Node h = io::Node::map();
            h.set("created", io::Node::string("1970-01-01T00:00:00Z"));
            h.set("created_by", io::Node::string("kpkg build"));
            history->push(std::move(h));
        }
    }
    return assemble(std::move(config), std::move(descs), std::move(blobs), annotations);
}

Result<Content> assemble_index(const std::vector<Content>& images, const Annotations& annotations,
                               std::string_view media_type) {
    Index ix;
    ix.media_type = std::string(media_type);
    ix.annotations = annotations;
    Content out;
    std::vector<Platform> seen;
    for (std::size_t i = 0; i < images.size(); ++i) {
        const Content& img = images[i];
        const std::string which = "image " + std::to_string(i + 1) + " of the index";
        if (!media::is_manifest(img.root_media_type))
            return Error::invalid(which + ": its root is a " + img.root_media_type +
                                  ", not a manifest");
        auto info = image_info(img);
        if (!info) return std::move(info).error();
        Platform p{info->config.os, info->config.architecture, info->config.variant};
        if (p.os.empty() || p.architecture.empty())
            return Error::invalid(which + ": its config names no os or architecture");
        for (const auto& q : seen)
            if (platform_matches(q, p) && platform_matches(p, q))
                return Error::invalid(which + ": a second image for " + p.str());
        seen.push_back(p);
        ix.manifests.push_back({img.root_media_type,
                                img.root_digest,
                                static_cast<std::int64_t>(img.blobs.at(img.root_digest).size()),
                                p,
                                {}});
        for (const auto& [d, b] : img.blobs)
            out.blobs.emplace(d, b);
    }
    const std::string ij = to_json(ix);
    out.root_digest = sha256_digest(ij);
    out.root_media_type = ix.media_type;
    out.blobs[out.root_digest] = ij;
    return out;
}

// --- OCI media types, as skopeo writes an image into a layout ---

namespace {

// encoding/json matches an object's keys to a struct's fields without regard to case.
bool key_is(std::string_view key, std::string_view field) {
    if (key.size() != field.size()) return false;
    for (std::size_t i = 0; i < key.size(); ++i) {
        char a = key[i], b = field[i];
        if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
        if (a != b) return false;
    }
    return true;
}

// The value of `field` in object `n` as encoding/json decodes it into a struct: the last key that
// matches it (case aside); nullptr when none does or its value is null.
const io::Node* member(const io::Node& n, std::string_view field) {
    const io::Node* found = nullptr;
    for (const auto& f : n.fields)
        if (key_is(f.key, field)) found = &f.value;
    return found != nullptr && found->is_null() ? nullptr : found;
}

// Decoding and encoding the fields of an OCI image config, with the errors containers/image's
// conversion would stop at (Error::invalid, naming the config and the field).
struct ConfigWriter {
    const std::string& name;
    std::string& out;
    bool first = true;

    Error bad(const std::string& where, const char* expected) const {
        return Error::invalid(name + ": cannot be converted to an OCI image config: " + where +
                              " is not " + expected);
    }
    void key(std::string_view k) {
        if (!first) out += ',';
        first = false;
        io::go::append_string(out, k, true);
        out += ':';
    }
    Result<std::string> text(const io::Node* v, const std::string& where) const {
        if (v == nullptr) return std::string();
        if (!v->is_string()) return bad(where, "a string");
        return v->text;
    }
    // A string field; `always`: written even when empty (no omitempty).
    Result<void> string_field(const io::Node& obj, std::string_view field, const std::string& at,
                              bool always = false) {
        auto s = text(member(obj, field), at + std::string(field));
        if (!s) return std::move(s).error();
        if (s->empty() && !always) return {};
        key(field);
        io::go::append_string(out, *s, true);
        return {};
    }
    Result<void> strings_field(const io::Node& obj, std::string_view field, const std::string& at) {
        const io::Node* v = member(obj, field);
        if (v == nullptr) return {};
        if (!v->is_seq()) return bad(at + std::string(field), "a list of strings");
        if (v->items.empty()) return {};
        key(field);
        out += '[';
        for (std::size_t i = 0; i < v->items.size(); ++i) {
            const io::Node& it = v->items[i];
            if (!it.is_null() && !it.is_string())
                return bad(at + std::string(field) + "[" + std::to_string(i) + "]", "a string");
            if (i) out += ',';
            io::go::append_string(out, it.is_string() ? std::string_view(it.text) : "", true);
        }
        out += ']';
        return {};
    }
    // A map of strings (`set`: a map whose values are empty objects, such as ExposedPorts).
    Result<void> map_field(const io::Node& obj, std::string_view field, const std::string& at,
                           bool set) {
        const io::Node* v = member(obj, field);
        if (v == nullptr) return {};
        if (!v->is_map()) return bad(at + std::string(field), "an object");
        std::map<std::string, std::string> m;
        for (const auto& f : v->fields) {
            if (set ? !f.value.is_null() && !f.value.is_map()
                    : !f.value.is_null() && !f.value.is_string())
                return bad(at + std::string(field) + "." + f.key, set ? "an object" : "a string");
            m[f.key] = f.value.is_string() ? f.value.text : std::string();
        }
        if (m.empty()) return {};
        key(field);
        out += '{';
        bool f2 = true;
        for (const auto& [k, val] : m) {
            if (!f2) out += ',';
            f2 = false;
            io::go::append_string(out, k, true);
            out += ':';
            if (set)
                out += "{}";
            else
                io::go::append_string(out, val, true);
        }
        out += '}';
        return {};
    }
    Result<void> time_field(const io::Node& obj, std::string_view field, const std::string& at);
};

int days_in(int year, int month) {
    static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

// A time as Go's time.Time reads it from JSON (RFC 3339, fractional seconds allowed) and writes it
// back (RFC 3339 with nanoseconds, trailing zeros dropped, a zero offset as "Z"); nullopt when it
// is not such a time.
std::optional<std::string> go_time(std::string_view s) {
    auto digits = [&](std::size_t at, std::size_t n) -> std::optional<int> {
        if (at + n > s.size()) return std::nullopt;
        int v = 0;
        for (std::size_t i = at; i < at + n; ++i) {
            if (s[i] < '0' || s[i] > '9') return std::nullopt;
            v = v * 10 + (s[i] - '0');
        }
        return v;
    };
    auto year = digits(0, 4), month = digits(5, 2), day = digits(8, 2), hour = digits(11, 2),
         min = digits(14, 2), sec = digits(17, 2);
    if (!year || !month || !day || !hour || !min || !sec || s[4] != '-' || s[7] != '-' ||
        s[10] != 'T' || s[13] != ':' || s[16] != ':')
        return std::nullopt;
    if (*month < 1 || *month > 12 || *day < 1 || *day > days_in(*year, *month) || *hour > 23 ||
        *min > 59 || *sec > 59)
        return std::nullopt;
    std::size_t i = 19;
    std::string frac;
    if (i < s.size() && s[i] == '.') {
        ++i;
        const std::size_t from = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9')
            ++i;
        if (i == from) return std::nullopt;
        frac = std::string(s.substr(from, std::min<std::size_t>(i - from, 9)));
        while (!frac.empty() && frac.back() == '0')
            frac.pop_back();
    }
    std::string zone;
    if (i < s.size() && s[i] == 'Z') {
        zone = "Z";
        ++i;
    } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
        auto zh = digits(i + 1, 2), zm = digits(i + 4, 2);
        if (!zh || !zm || i + 3 >= s.size() || s[i + 3] != ':' || *zh > 23 || *zm > 59)
            return std::nullopt;
        zone = *zh == 0 && *zm == 0 ? std::string("Z") : std::string(s.substr(i, 6));
        i += 6;
    } else {
        return std::nullopt;
    }
    if (i != s.size()) return std::nullopt;
    return std::string(s.substr(0, 19)) + (frac.empty() ? "" : "." + frac) + zone;
}

Result<void> ConfigWriter::time_field(const io::Node& obj, std::string_view field,
                                      const std::string& at) {
    const io::Node* v = member(obj, field);
    if (v == nullptr) return {};
    if (!v->is_string()) return bad(at + std::string(field), "an RFC 3339 time");
    auto t = go_time(v->text);
    if (!t) return bad(at + std::string(field) + " \"" + v->text + "\"", "an RFC 3339 time");
    key(field);
    io::go::append_string(out, *t, true);
    return {};
}

// A Docker image config as an OCI image config: the fields of the OCI image spec's Go type as
// containers/image (skopeo 1.9) vendors it, in its order, each omitted when empty except
// architecture, os, config, rootfs and its diff_ids (null when there are none).
Result<std::string> oci_config_json(std::string_view bytes, const std::string& name) {
    auto docs = io::parse_json(bytes, name);
    if (!docs) return std::move(docs).error();
    if (docs->size() != 1 || !(*docs)[0].root.is_map())
        return Error::invalid(name + ": an image config must be a JSON object");
    const io::Node& root = (*docs)[0].root;
    std::string out = "{";
    ConfigWriter w{name, out};
    auto r = w.time_field(root, "created", "");
    if (r) r = w.string_field(root, "author", "");
    if (r) r = w.string_field(root, "architecture", "", true);
    if (r) r = w.string_field(root, "variant", "");
    if (r) r = w.string_field(root, "os", "", true);
    if (!r) return std::move(r).error();
    // config: always written, as an object ({} when empty).
    {
        const io::Node* c = member(root, "config");
        if (c != nullptr && !c->is_map()) return w.bad("config", "an object");
        w.key("config");
        std::string inner = "{";
        ConfigWriter cw{name, inner};
        if (c != nullptr) {
            const std::string at = "config.";
            auto q = cw.string_field(*c, "User", at);
            if (q) q = cw.map_field(*c, "ExposedPorts", at, true);
            if (q) q = cw.strings_field(*c, "Env", at);
            if (q) q = cw.strings_field(*c, "Entrypoint", at);
            if (q) q = cw.strings_field(*c, "Cmd", at);
            if (q) q = cw.map_field(*c, "Volumes", at, true);
            if (q) q = cw.string_field(*c, "WorkingDir", at);
            if (q) q = cw.map_field(*c, "Labels", at, false);
            if (q) q = cw.string_field(*c, "StopSignal", at);
            if (!q) return std::move(q).error();
        }
        out += inner + "}";
    }
    // rootfs: always written; diff_ids null when there are none.
    {
        const io::Node* fs = member(root, "rootfs");
        if (fs != nullptr && !fs->is_map()) return w.bad("rootfs", "an object");
        w.key("rootfs");
        std::string inner = "{";
        ConfigWriter fw{name, inner};
        const io::Node empty = io::Node::map();
        auto q = fw.string_field(fs != nullptr ? *fs : empty, "type", "rootfs.", true);
        if (!q) return std::move(q).error();
        const io::Node* ids = fs != nullptr ? member(*fs, "diff_ids") : nullptr;
        if (ids == nullptr || (ids->is_seq() && ids->items.empty())) {
            fw.key("diff_ids");
            inner += ids == nullptr ? "null" : "[]";
        } else {
            // Written by strings_field, which leaves out an empty list (handled above).
            q = fw.strings_field(*fs, "diff_ids", "rootfs.");
            if (!q) return std::move(q).error();
        }
        out += inner + "}";
    }
    if (const io::Node* h = member(root, "history")) {
        if (!h->is_seq()) return w.bad("history", "a list");
        if (!h->items.empty()) {
            w.key("history");
            out += '[';
            for (std::size_t i = 0; i < h->items.size(); ++i) {
                const io::Node& e = h->items[i];
                const std::string at = "history[" + std::to_string(i) + "].";
                if (!e.is_null() && !e.is_map())
                    return w.bad("history[" + std::to_string(i) + "]", "an object");
                if (i) out += ',';
                std::string inner = "{";
                ConfigWriter hw{name, inner};
                if (e.is_map()) {
                    auto q = hw.time_field(e, "created", at);
                    if (q) q = hw.string_field(e, "created_by", at);
                    if (q) q = hw.string_field(e, "author", at);
                    if (q) q = hw.string_field(e, "comment", at);
                    if (!q) return std::move(q).error();
                    if (const io::Node* el = member(e, "empty_layer")) {
                        auto b = el->kind == io::Kind::boolean ? el->as_bool() : std::nullopt;
                        if (!b) return hw.bad(at + "empty_layer", "a boolean");
                        if (*b) {
                            hw.key("empty_layer");
                            inner += "true";
                        }
                    }
                }
                out += inner + "}";
            }
            out += ']';
        }
    }
    out += '}';
    return out;
}

// The OCI media type of a layer of a Docker manifest.
std::optional<std::string> oci_layer_media_type(const std::string& t) {
    if (t == media::docker_layer_gzip || t == media::oci_layer_gzip)
        return std::string(media::oci_layer_gzip);
    if (t == "application/vnd.docker.image.rootfs.diff.tar" || t == media::oci_layer_tar)
        return std::string(media::oci_layer_tar);
    if (t == "application/vnd.docker.image.rootfs.diff.tar.zstd" || t == media::oci_layer_zstd)
        return std::string(media::oci_layer_zstd);
    return std::nullopt;
}

// Converts the image `d` names (a manifest or an index) from `in` into `out`'s blobs; the
// descriptor of the result (`d` itself when nothing changed).
Result<Descriptor> convert_to_oci(const Content& in, const Descriptor& d, Content& out, int depth) {
    auto it = in.blobs.find(d.digest);
    if (it == in.blobs.end()) return Error::invalid("blob " + d.digest + " is missing");
    const std::string name = "blob " + d.digest;
    auto add = [&](std::string bytes, std::string media_type) {
        Descriptor n = d;
        n.media_type = std::move(media_type);
        n.digest = sha256_digest(bytes);
        n.size = static_cast<std::int64_t>(bytes.size());
        out.blobs[n.digest] = std::move(bytes);
        return n;
    };
    if (media::is_index(d.media_type)) {
        if (depth > 4) return Error::invalid(name + ": indexes nested too deeply");
        auto ix = parse_index(it->second, name, d.media_type);
        if (!ix) return std::move(ix).error();
        bool changed = ix->media_type != media::oci_index;
        for (auto& m : ix->manifests) {
            if (!media::is_index(m.media_type) && !media::is_manifest(m.media_type)) continue;
            auto c = convert_to_oci(in, m, out, depth + 1);
            if (!c) return std::move(c).error();
            if (c->digest != m.digest || c->media_type != m.media_type) {
                changed = true;
                m.media_type = c->media_type;
                m.digest = c->digest;
                m.size = c->size;
            }
        }
        if (!changed) return d;
        ix->media_type = std::string(media::oci_index);
        return add(to_json(*ix), std::string(media::oci_index));
    }
    if (!media::is_manifest(d.media_type))
        return Error::invalid(name + ": media type \"" + d.media_type +
                              "\" is neither an index nor a manifest");
    auto m = parse_manifest(it->second, name, d.media_type);
    if (!m) return std::move(m).error();
    if (m->media_type == media::oci_manifest) return d;
    // A Docker schema 2 manifest: its config re-encoded, its layers' media types mapped.
    auto cit = in.blobs.find(m->config.digest);
    if (cit == in.blobs.end())
        return Error::invalid("blob " + m->config.digest + " (named by manifest " + d.digest +
                              ") is missing");
    auto cj = oci_config_json(cit->second, "config " + m->config.digest);
    if (!cj) return std::move(cj).error();
    Manifest om;
    om.media_type = std::string(media::oci_manifest);
    om.config.media_type = std::string(media::oci_config);
    om.config.digest = sha256_digest(*cj);
    om.config.size = static_cast<std::int64_t>(cj->size());
    out.blobs[om.config.digest] = std::move(*cj);
    for (const auto& l : m->layers) {
        auto t = oci_layer_media_type(l.media_type);
        if (!t)
            return Error::invalid(name + ": layer " + l.digest + " of media type \"" +
                                  l.media_type + "\" has no OCI equivalent");
        om.layers.push_back({*t, l.digest, l.size, std::nullopt, {}});
    }
    om.annotations = m->annotations;
    return add(to_json(om), std::string(media::oci_manifest));
}

} // namespace

Result<std::optional<Content>> with_oci_media_types(const Content& content) {
    Descriptor root;
    root.media_type = content.root_media_type;
    root.digest = content.root_digest;
    Content added;
    auto r = convert_to_oci(content, root, added, 0);
    if (!r) return std::move(r).error();
    if (r->digest == content.root_digest) return std::optional<Content>();
    Content out = content;
    for (auto& [digest, bytes] : added.blobs)
        out.blobs[digest] = std::move(bytes);
    out.root_digest = r->digest;
    out.root_media_type = r->media_type;
    return std::optional<Content>(std::move(out));
}

} // namespace kpkg::oci
