// Parsing what a resolution is asked: catalogs with names and priorities, subscriptions
// ("PKG[:CHANNEL][@RANGE]"), the installed CSVs file.
#include <algorithm>
#include <charconv>
#include <set>

#include "kpkg/core/text.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/io/tree.hpp"
#include "kpkg/resolve/resolve.hpp"
#include "universe.hpp"

namespace kpkg::resolve {

namespace {

std::string q(std::string_view s) {
    return text::quote(s);
}

} // namespace

Result<std::pair<std::string, std::string>> parse_catalog_spec(std::string_view spec) {
    std::string name, path(spec);
    auto eq = spec.find('=');
    if (eq != std::string_view::npos && spec.substr(0, eq).find('/') == std::string_view::npos) {
        name = std::string(spec.substr(0, eq));
        path = std::string(spec.substr(eq + 1));
        if (name.empty())
            return fail(Error::usage("--catalog " + q(spec) + ": the name before '=' is empty"));
    }
    if (path.empty()) return fail(Error::usage("--catalog " + q(spec) + ": the path is empty"));
    if (name.empty()) {
        if (path == "-") {
            name = "stdin";
        } else {
            std::filesystem::path p(path);
            while (!p.empty() && !p.has_filename() && p.has_parent_path() && p != p.parent_path())
                p = p.parent_path();
            std::error_code ec;
            bool dir = std::filesystem::is_directory(p, ec);
            name = dir ? p.filename().string() : p.stem().string();
            if (name.empty() || name == "." || name == "..")
                name = std::filesystem::absolute(p, ec).filename().string();
            if (name.empty()) name = "catalog";
        }
    }
    return std::make_pair(name, path);
}

Result<std::pair<std::string, int>> parse_priority(std::string_view spec) {
    auto eq = spec.rfind('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == spec.size())
        return fail(Error::usage("--priority " + q(spec) + ": expected NAME=N"));
    std::string_view num = spec.substr(eq + 1);
    int n = 0;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
    if (ec != std::errc() || ptr != num.data() + num.size())
        return fail(Error::usage("--priority " + q(spec) + ": " + q(num) + " is not an integer"));
    return std::make_pair(std::string(spec.substr(0, eq)), n);
}

Result<void> check_catalogs(std::vector<CatalogSource>& catalogs,
                            const std::vector<std::pair<std::string, int>>& priorities) {
    if (catalogs.empty()) return fail(Error::usage("no catalog given: add --catalog [NAME=]PATH"));
    std::set<std::string> names;
    for (const auto& c : catalogs)
        if (!names.insert(c.name).second)
            return fail(Error::usage("two catalogs are named " + q(c.name) +
                                     "; name them apart with --catalog NAME=PATH"));
    for (const auto& [name, prio] : priorities) {
        auto it = std::find_if(catalogs.begin(), catalogs.end(),
                               [&](const CatalogSource& c) { return c.name == name; });
        if (it == catalogs.end()) {
            Error e = detail::unknown_name("catalog", name,
                                           std::vector<std::string>(names.begin(), names.end()),
                                           " in --priority");
            e.code = ExitCode::usage;
            return fail(std::move(e));
        }
        it->priority = prio;
    }
    for (const auto& c : catalogs) {
        if (c.catalog == nullptr) return fail(Error::internal("catalog " + c.name + " not loaded"));
        if (auto r = c.catalog->check(); !r) {
            Error e = r.error();
            e.message = "catalog " + q(c.name) + ": " + e.message;
            return fail(std::move(e));
        }
        if (c.catalog->packages.empty() && c.catalog->channels.empty() &&
            c.catalog->bundles.empty())
            return fail(Error::invalid("catalog " + q(c.name) +
                                       " is empty: it has no olm.package, olm.channel or "
                                       "olm.bundle blob"));
    }
    return {};
}

Result<void> check_source(const std::vector<CatalogSource>& catalogs, const std::string& name) {
    std::vector<std::string> names;
    for (const auto& c : catalogs) {
        if (c.name == name) return {};
        names.push_back(c.name);
    }
    Error e = detail::unknown_name("catalog", name, std::move(names), " in --source");
    e.code = ExitCode::usage;
    return fail(std::move(e));
}

Result<Subscription> parse_subscription(std::string_view spec) {
    Subscription s;
    s.spec = std::string(spec);
    std::string_view rest = spec;
    // The catalog comes last: package names and ranges have no '/'.
    if (auto slash = rest.rfind('/'); slash != std::string_view::npos) {
        s.source = std::string(rest.substr(slash + 1));
        rest = rest.substr(0, slash);
        if (s.source.empty())
            return fail(Error::invalid("request " + q(spec) + ": the catalog after '/' is empty"));
    }
    if (auto at = rest.find('@'); at != std::string_view::npos) {
        s.range_text = std::string(rest.substr(at + 1));
        rest = rest.substr(0, at);
        if (s.range_text.empty())
            return fail(Error::invalid("request " + q(spec) + ": the range after '@' is empty"));
        auto r = semver::Range::parse(s.range_text);
        if (!r)
            return fail(Error::invalid("request " + q(spec) + ": the range " + q(s.range_text) +
                                       " does not parse: " + r.error().message));
        s.range = std::move(r).take();
    }
    if (auto colon = rest.find(':'); colon != std::string_view::npos) {
        s.channel = std::string(rest.substr(colon + 1));
        rest = rest.substr(0, colon);
        if (s.channel.empty())
            return fail(Error::invalid("request " + q(spec) + ": the channel after ':' is empty"));
    }
    if (rest.empty())
        return fail(Error::invalid("request " + q(spec) +
                                   ": no package name (write PKG[:CHANNEL][@RANGE][/CATALOG])"));
    s.package = std::string(rest);
    for (char c : s.package)
        if (c == ' ' || c == '\t' || c == '/' || c == '=')
            return fail(Error::invalid("request " + q(spec) + ": " + q(s.package) +
                                       " is not a package name"));
    return s;
}

void default_source(Subscription& s, const std::string& source) {
    if (!s.source.empty() || source.empty()) return;
    s.source = source;
    s.spec += "/" + source;
}

Result<std::vector<Installed>> parse_installed(const io::Node& doc, const std::string& file) {
    auto at = [&](const io::Node& n) { return io::pos_of(file, n.mark); };
    if (!doc.is_map())
        return fail(Error::invalid("the installed CSVs must be a mapping with the key "
                                   "\"installed\", not " +
                                       std::string(io::kind_name(doc.kind)),
                                   at(doc)));
    for (const auto& f : doc.fields)
        if (f.key != "installed")
            return fail(Error::invalid("unknown field " + q(f.key) +
                                           " (the document has one field, \"installed\")",
                                       io::pos_of(file, f.key_mark)));
    const io::Node* list = doc.get("installed");
    if (list == nullptr) return fail(Error::invalid("the field \"installed\" is missing", at(doc)));
    std::vector<Installed> out;
    if (list->is_null()) return out;
    if (!list->is_seq())
        return fail(Error::invalid("\"installed\" must be a list, not " +
                                       std::string(io::kind_name(list->kind)),
                                   at(*list)));
    std::set<std::string> packages, names;
    for (std::size_t i = 0; i < list->items.size(); ++i) {
        const io::Node& item = list->items[i];
        std::string where = "installed[" + std::to_string(i) + "]";
        if (!item.is_map())
            return fail(Error::invalid(where + " must be a mapping, not " +
                                           std::string(io::kind_name(item.kind)),
                                       at(item)));
        Installed in;
        in.pos = at(item);
        for (const auto& f : item.fields) {
            std::string* field = f.key == "package"   ? &in.package
                                 : f.key == "name"    ? &in.name
                                 : f.key == "version" ? &in.version
                                 : f.key == "catalog" ? &in.catalog
                                 : f.key == "channel" ? &in.channel
                                                      : nullptr;
            if (field == nullptr)
                return fail(Error::invalid(where + ": unknown field " + q(f.key) +
                                               " (fields: package, name, version, catalog, "
                                               "channel)",
                                           io::pos_of(file, f.key_mark)));
            if (!f.value.is_scalar() || f.value.is_null())
                return fail(Error::invalid(where + "." + f.key + " must be a string, not " +
                                               std::string(io::kind_name(f.value.kind)),
                                           at(f.value)));
            *field = f.value.text;
        }
        for (auto [key, value] :
             {std::pair<const char*, const std::string*>{"package", &in.package},
              {"name", &in.name},
              {"version", &in.version}})
            if (value->empty())
                return fail(
                    Error::invalid(where + ": the field " + q(key) + " is missing", at(item)));
        if (auto v = semver::Version::parse(in.version); !v)
            return fail(
                Error::invalid(where + ".version: " + v.error().message, at(*item.get("version"))));
        if (!packages.insert(in.package).second)
            return fail(Error::invalid(where + ": package " + q(in.package) +
                                           " is installed twice (one CSV per package)",
                                       at(item)));
        if (!names.insert(in.name).second)
            return fail(
                Error::invalid(where + ": CSV " + q(in.name) + " is listed twice", at(item)));
        out.push_back(std::move(in));
    }
    return out;
}

Result<std::vector<Installed>> load_installed(const std::filesystem::path& path) {
    if (path == "-") return load_installed(io::StdinTree());
    return load_installed(io::FileTree(path));
}

Result<std::vector<Installed>> load_installed(const io::Tree& file) {
    auto docs = io::load_file(file);
    if (!docs) return fail(std::move(docs).error());
    const std::string& name = file.display_root();
    if (docs->empty())
        return fail(
            Error::invalid("no document: expected a mapping with \"installed\"", SourcePos{name}));
    if (docs->size() > 1)
        return fail(Error::invalid("expected one document, found " + std::to_string(docs->size()),
                                   io::pos_of(name, (*docs)[1].start, 1)));
    return parse_installed(docs->front().root, name);
}

} // namespace kpkg::resolve
