// Package Operator repository index files: load, edit, write byte-stable.
#include "kpkg/pko/repo.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "kpkg/core/digest.hpp"
#include "kpkg/core/semver.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/go.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"

namespace kpkg::pko {

namespace {

constexpr std::string_view inconsistent = "package repository inconsistent: ";

bool entry_less(const RepositoryEntry& a, const RepositoryEntry& b) {
    return std::tie(a.name, a.digest) < std::tie(b.name, b.digest);
}

// Masterminds' StrictNewVersion of the version without its "v"; the text kubectl-package keeps.
Result<semver::Version> parse_version(std::string_view v) {
    std::string_view s = v;
    if (!s.empty() && s[0] == 'v') s.remove_prefix(1);
    auto parsed = semver::Version::parse(s);
    if (!parsed)
        return Error::invalid("invalid version " + text::quote(v) + ": " + parsed.error().message);
    return parsed;
}

} // namespace

Result<std::string> digest_hex(std::string_view d) {
    const bool prefixed = d.substr(0, 7) == "sha256:";
    // The one rule of what a digest is (core/digest), for sha256.
    if (!check_digest(prefixed ? std::string(d) : "sha256:" + std::string(d)))
        return Error::invalid("not a sha256 digest: " + text::quote(d));
    return std::string(prefixed ? d.substr(7) : d);
}

bool is_digest_hex(std::string_view d) {
    return d.substr(0, 7) != "sha256:" && digest_hex(d).ok();
}

const RepositoryEntry* RepositoryIndex::find(std::string_view n, std::string_view d) const {
    for (const auto& e : entries)
        if (e.name == n && e.digest == d) return &e;
    return nullptr;
}

Result<void> RepositoryIndex::add(RepositoryEntry entry) {
    if (entry.name.empty()) return Error::invalid("data.name: Required value");
    if (entry.image.empty()) return Error::invalid("data.image: Required value");
    if (entry.digest.empty()) return Error::invalid("data.digest: Required value");
    if (entry.versions.empty()) return Error::invalid("data.versions: Required value");
    if (find(entry.name, entry.digest))
        return Error::invalid(std::string(inconsistent) + "duplicate entry \"" +
                              entry.entry_name() + "\"");
    std::vector<std::pair<semver::Version, std::string>> versions;
    for (const auto& v : entry.versions) {
        auto parsed = parse_version(v);
        if (!parsed) return parsed.error();
        std::string text = "v" + parsed->str();
        for (const auto& [pv, t] : versions)
            if (t == text)
                return Error::invalid(std::string(inconsistent) + "package \"" + entry.name +
                                      "\" version \"" + text + "\" listed twice in entry \"" +
                                      entry.entry_name() + "\"");
        for (const auto& other : entries)
            if (other.name == entry.name && std::find(other.versions.begin(), other.versions.end(),
                                                      text) != other.versions.end())
                return Error::invalid(std::string(inconsistent) + "package \"" + entry.name +
                                      "\" version \"" + text + "\" already exists (in entry \"" +
                                      other.entry_name() + "\")");
        versions.emplace_back(std::move(*parsed), std::move(text));
    }
    std::stable_sort(versions.begin(), versions.end(), [](const auto& a, const auto& b) {
        const int c = semver::compare(a.first, b.first);
        return c != 0 ? c > 0 : a.second > b.second;
    });
    entry.versions.clear();
    for (auto& [v, t] : versions)
        entry.versions.push_back(std::move(t));
    const auto at = std::upper_bound(entries.begin(), entries.end(), entry, entry_less);
    entries.insert(at, std::move(entry));
    return {};
}

bool RepositoryIndex::remove(std::string_view n, std::string_view d) {
    const auto it = std::find_if(entries.begin(), entries.end(), [&](const RepositoryEntry& e) {
        return e.name == n && e.digest == d;
    });
    if (it == entries.end()) return false;
    entries.erase(it);
    return true;
}

Result<RepositoryIndex> load_repository(std::string_view text, const std::string& file) {
    auto docs = io::parse_yaml(text, file);
    if (!docs) return docs.error();
    RepositoryIndex index;
    bool have_repo = false;
    for (const auto& doc : *docs) {
        const io::Node& root = doc.root;
        if (root.is_null()) continue;
        const SourcePos pos = io::pos_of(file, root.mark, doc.index);
        auto fail_at = [&](const io::Node* n, std::string msg) {
            return Error::invalid(std::move(msg), n ? io::pos_of(file, n->mark, doc.index) : pos);
        };
        if (!root.is_map()) return fail_at(&root, "a repository document must be an object");
        const io::Node* kind = root.get("kind");
        const io::Node* api = root.get("apiVersion");
        const std::string want = have_repo ? "RepositoryEntry" : "Repository";
        if (!kind || !kind->is_string())
            return fail_at(kind, "kind: Required value: expected " + want);
        if (kind->text != want) {
            if (!have_repo)
                return fail_at(kind, "kind " + text::quote(kind->text) +
                                         ": the first document of a repository index must be a "
                                         "Repository");
            return fail_at(kind, "kind " + text::quote(kind->text) +
                                     ": a repository index holds one Repository and then "
                                     "RepositoryEntry documents");
        }
        if (!api || !api->is_string() || api->text != manifests_api_version)
            return fail_at(api, "apiVersion: Unsupported value: " +
                                    text::quote(api && api->is_string() ? api->text : "") +
                                    ": supported values: \"" + std::string(manifests_api_version) +
                                    "\"");
        const io::Node* meta = root.get("metadata");
        if (!have_repo) {
            const io::Node* name = meta && meta->is_map() ? meta->get("name") : nullptr;
            if (!name || !name->is_string() || name->text.empty())
                return fail_at(name ? name : meta, "metadata.name: Required value");
            index.name = name->text;
            have_repo = true;
            continue;
        }
        const io::Node* data = root.get("data");
        if (!data || !data->is_map()) return fail_at(data, "data: Required value");
        RepositoryEntry e;
        e.mark = root.mark;
        auto str = [&](const char* key, std::string& out) -> Result<void> {
            const io::Node* n = data->get(key);
            if (!n || (n->is_scalar() && io::go::scalar_of(*n).type == io::go::Type::null) ||
                (n->is_string() && n->text.empty()))
                return fail_at(data, std::string("data.") + key + ": Required value");
            if (!n->is_scalar() || n->is_null())
                return fail_at(n, std::string("data.") + key + ": must be a string");
            out = n->text;
            return {};
        };
        if (auto r = str("name", e.name); !r) return r.error();
        if (auto r = str("image", e.image); !r) return r.error();
        if (auto r = str("digest", e.digest); !r) return r.error();
        // The digest names the package image (image@sha256:DIGEST) and goes into the lock as it
        // is: anything but a sha256 digest's hex digits is refused here, where its line is known.
        if (!is_digest_hex(e.digest))
            return fail_at(data->get("digest"),
                           "data.digest: Invalid value: " + text::quote(e.digest) +
                               ": must be the package image's sha256 manifest digest, 64 "
                               "lower-case hexadecimal digits without \"sha256:\"");
        const io::Node* versions = data->get("versions");
        if (!versions || !versions->is_seq() || versions->items.empty())
            return fail_at(versions ? versions : data, "data.versions: Required value");
        for (const auto& v : versions->items) {
            if (!v.is_scalar() || v.is_null())
                return fail_at(&v, "data.versions: must be a list of strings");
            e.versions.push_back(v.text);
        }
        if (const io::Node* c = data->get("constraints")) {
            if (!c->is_seq() && !c->is_null())
                return fail_at(c, "data.constraints: must be a list");
            e.constraints = *c;
        }
        // kubectl-package names the entry <name>.<digest> itself; a different name is refused
        // rather than silently rewritten.
        if (const io::Node* n = meta && meta->is_map() ? meta->get("name") : nullptr;
            n && n->is_string() && !n->text.empty() && n->text != e.entry_name())
            return fail_at(n, "metadata.name: Invalid value: " + text::quote(n->text) +
                                  ": must be " + text::quote(e.entry_name()));
        if (auto r = index.add(std::move(e)); !r) {
            Error err = r.error();
            err.pos = pos;
            return err;
        }
    }
    if (!have_repo)
        return Error::invalid("no Repository document: a repository index starts with one",
                              SourcePos{file, 0, 0, -1});
    return index;
}

Result<RepositoryIndex> load_repository_file(const io::Tree& package, std::string_view file,
                                             const std::string& field, const SourcePos& at,
                                             std::uint64_t max_bytes) {
    // The name: relative, without "..", '/' separated ("." components and repeated slashes
    // dropped).
    std::string rel;
    bool ok = !file.empty() && file.front() != '/';
    for (std::string_view part : text::split(file, '/')) {
        if (part == "..") ok = false;
        if (part.empty() || part == ".") continue;
        rel += (rel.empty() ? "" : "/") + std::string(part);
    }
    if (!ok || rel.empty())
        return Error::invalid(field + ": Invalid value: " + text::quote(file) +
                                  ": must name a file inside the package directory (a relative "
                                  "path without \"..\")",
                              at);
    auto named = [&](Error e) {
        e.note("named by " + field + " " + text::quote(file) +
               (at.empty() ? std::string() : " at " + at.str()));
        return e;
    };
    // Every directory on the way, then the file, as the package's tree sees them: a symbolic
    // link whose target (every link resolved) leaves the package is refused wherever it is.
    for (std::size_t slash = rel.find('/');; slash = rel.find('/', slash + 1)) {
        const std::string prefix = rel.substr(0, slash);
        auto found = package.find(prefix);
        if (!found) return named(std::move(found).error());
        if (!*found)
            return named(
                Error::io("cannot read " + package.display(rel) + ": no such file or directory"));
        const io::Entry& e = **found;
        if (slash == std::string::npos) {
            auto c = package.read(e, io::ReadOptions{max_bytes, nullptr});
            if (!c) return named(std::move(c).error());
            if (c->too_large)
                return named(Error::invalid("refused " + e.display + ": larger than " +
                                            std::to_string(max_bytes >> 20) + " MiB"));
            return load_repository(c->text(), e.display);
        }
        if (e.problem && e.problem->kind == io::Problem::Kind::leaves_root)
            return named(Error::invalid("refused " + e.display + ": it is a symbolic link to " +
                                        e.problem->target + ", outside " + package.display_root()));
        if (e.problem && e.problem->kind != io::Problem::Kind::link_to_dir)
            return named(package.read(e).error());
        if (!e.is_dir() && !e.problem)
            return named(Error::io("cannot read " + package.display(rel) + ": " + e.display +
                                   " is not a directory"));
    }
}

std::string write_repository(const RepositoryIndex& index) {
    std::string out;
    auto doc = [&](const io::Node& n) {
        out += "---\n";
        io::go::append_yaml(out, n);
    };
    io::Node repo = io::Node::map();
    repo.set("apiVersion", io::Node::string(std::string(manifests_api_version)));
    repo.set("kind", io::Node::string("Repository"));
    io::Node& meta = repo.set("metadata", io::Node::map());
    meta.set("creationTimestamp", io::Node{});
    meta.set("name", io::Node::string(index.name));
    doc(repo);
    for (const auto& e : index.entries) {
        io::Node n = io::Node::map();
        n.set("apiVersion", io::Node::string(std::string(manifests_api_version)));
        io::Node& data = n.set("data", io::Node::map());
        if (e.constraints.is_seq() && !e.constraints.items.empty())
            data.set("constraints", e.constraints);
        data.set("digest", io::Node::string(e.digest));
        data.set("image", io::Node::string(e.image));
        data.set("name", io::Node::string(e.name));
        io::Node& vs = data.set("versions", io::Node::seq());
        for (const auto& v : e.versions)
            vs.push(io::Node::string(v));
        n.set("kind", io::Node::string("RepositoryEntry"));
        io::Node& m = n.set("metadata", io::Node::map());
        m.set("creationTimestamp", io::Node{});
        m.set("name", io::Node::string(e.entry_name()));
        doc(n);
    }
    return out;
}

} // namespace kpkg::pko
