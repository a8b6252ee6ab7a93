// Catalog validation on the compact model: opm's load, declarative-config and model checks, all
// findings in one run.
//
// One pass per kind of blob, in load order. Names are interned ids (model::Str), so lookups are
// array or integer-hash lookups: packages by name in an array indexed by string id, channels by
// (package, name) in one hash table, bundles through Catalog::find_bundle, and the names of one
// channel's graph in a sparse set indexed by string id that needs no clearing between channels.
// Strings are built only for findings. The replaces walk is a loop over a visited mark, so a
// cycle of any length costs one step per entry.
#include "kpkg/catalog/validate.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "kpkg/core/semver.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/load.hpp"
#include "kpkg/model/constraint.hpp"
#include "kpkg/model/names.hpp"
#include "kpkg/oci/reference.hpp"

namespace kpkg::catalog {

namespace {

using model::npos32;
using model::Str;

// Lists in messages (heads, stranded bundles, cycles, duplicate versions) show at most this many
// names, so one finding stays readable and bounded whatever the input.
constexpr std::size_t max_listed = 100;

// Input values in messages: quoted (text::quote) or, in opm's unquoted lists, as they are
// (text::shown); both escape control bytes and cut a value over text::max_shown bytes.
std::string q(std::string_view s) {
    return text::quote(s);
}
std::string esc(std::string_view s) {
    return text::shown(s);
}

// Names joined with `sep`, at most max_listed of them (the rest counted).
std::string join_listed(const std::vector<std::string>& names, std::string_view sep) {
    std::string out;
    std::size_t n = std::min(names.size(), max_listed);
    for (std::size_t i = 0; i < n; ++i) {
        if (i) out += sep;
        out += names[i];
    }
    if (names.size() > n)
        out += std::string(sep) + "... (" + std::to_string(names.size() - n) + " more)";
    return out;
}

// Why `name` is not a DNS-1123 label (what opm requires of package names), in the words
// Kubernetes lists the reasons in ("must not contain dots"); empty when it is one.
std::vector<std::string> dns1123_label_problems(std::string_view name) {
    std::vector<std::string> why;
    const model::Dns1123Check label = model::check_dns1123_label(name);
    if (label.too_long) why.emplace_back("must be no more than 63 characters");
    if (!label.pattern_ok()) {
        if (model::check_dns1123_subdomain(name).pattern_ok())
            why.emplace_back("must not contain dots");
        else
            why.emplace_back("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                             "characters or '-', and must start and end with an alphanumeric "
                             "character (e.g. 'my-name', or '123-abc', regex used for validation "
                             "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    }
    return why;
}

// --- rules ------------------------------------------------------------------------------------

namespace rule {
constexpr const char* catalog_empty = "catalog.empty";
constexpr const char* catalog_unknown_field = "catalog.unknown-field";
constexpr const char* catalog_ignored_text = "catalog.ignored-text";
constexpr const char* catalog_constraint = "catalog.constraint";
constexpr const char* catalog_constraint_cel = "catalog.constraint-cel";
constexpr const char* package_name = "package.name";
constexpr const char* package_duplicate = "package.duplicate";
constexpr const char* package_no_channels = "package.no-channels";
constexpr const char* package_default_channel = "package.default-channel";
constexpr const char* package_duplicate_version = "package.duplicate-version";
constexpr const char* channel_unknown_package = "channel.unknown-package";
constexpr const char* channel_name = "channel.name";
constexpr const char* channel_duplicate = "channel.duplicate";
constexpr const char* channel_duplicate_entry = "channel.duplicate-entry";
constexpr const char* channel_missing_bundle = "channel.missing-bundle";
constexpr const char* channel_empty = "channel.empty";
constexpr const char* channel_head = "channel.head";
constexpr const char* channel_cycle = "channel.cycle";
constexpr const char* channel_stranded = "channel.stranded";
constexpr const char* bundle_name = "bundle.name";
constexpr const char* bundle_package = "bundle.package";
constexpr const char* bundle_unknown_package = "bundle.unknown-package";
constexpr const char* bundle_duplicate = "bundle.duplicate";
constexpr const char* bundle_olm_package = "bundle.olm-package";
constexpr const char* bundle_version = "bundle.version";
constexpr const char* bundle_release = "bundle.release";
constexpr const char* bundle_image = "bundle.image";
constexpr const char* bundle_related_image = "bundle.related-image";
constexpr const char* bundle_no_channel = "bundle.no-channel";
constexpr const char* bundle_skip = "bundle.skip";
constexpr const char* bundle_skip_range = "bundle.skip-range";
constexpr const char* deprecation_package = "deprecation.package";
constexpr const char* deprecation_duplicate = "deprecation.duplicate";
constexpr const char* deprecation_schema = "deprecation.schema";
constexpr const char* deprecation_message = "deprecation.message";
constexpr const char* deprecation_duplicate_reference = "deprecation.duplicate-reference";
constexpr const char* deprecation_reference = "deprecation.reference";
} // namespace rule

// Per-name records of one channel's upgrade graph: a sparse set over string ids, so starting the
// next channel is clearing a small vector, not the whole table.
struct GraphNode {
    Str name = 0;
    std::uint32_t entry = npos32; // the first entry of that name, as an index into Catalog::entries
    std::uint32_t chain = npos32; // position on the replaces chain from the head
    bool referenced = false;      // some entry replaces or skips it
    bool skipped = false;         // some entry skips it
};

class Graph {
public:
    explicit Graph(std::size_t strings) : slot_(strings, 0) {}
    void clear() { nodes_.clear(); }
    std::uint32_t at(Str s) {
        std::uint32_t i = slot_[s];
        if (i < nodes_.size() && nodes_[i].name == s) return i;
        i = static_cast<std::uint32_t>(nodes_.size());
        slot_[s] = i;
        nodes_.push_back({s});
        return i;
    }
    GraphNode& operator[](std::uint32_t i) { return nodes_[i]; }

private:
    std::vector<std::uint32_t> slot_;
    std::vector<GraphNode> nodes_;
};

constexpr std::uint64_t pair_key(Str a, Str b) {
    return (std::uint64_t{a} << 32) | b;
}

class Validator {
public:
    Validator(const model::Catalog& c, const ValidateOptions& o)
        : c_(c), opts_(o), package_of_(c.strings.size(), npos32), graph_(c.strings.size()),
          image_state_(c.strings.size(), 0) {}

    std::vector<Finding> run() {
        load_problems();
        packages();
        channels();
        bundles();
        package_rules();
        versions();
        deprecations();
        constraints();
        if (opts_.strict)
            for (auto& i : out_)
                i.severity = Severity::error;
        sort();
        return std::move(out_);
    }

private:
    // --- findings ---
    Finding& add(Severity sev, Scope scope, const char* rule, Str pkg, std::string msg,
                 const model::Pos& pos) {
        Finding i;
        i.severity = sev;
        i.scope = scope;
        i.rule = rule;
        i.package = c_.string(pkg);
        i.message = std::move(msg);
        i.pos = c_.source_pos(pos);
        out_.push_back(std::move(i));
        return out_.back();
    }
    void package_error(const char* rule, Str pkg, std::string msg, const model::Pos& pos) {
        add(Severity::error, Scope::package, rule, pkg, std::move(msg), pos);
    }
    void channel_error(const char* rule, const model::Channel& ch, std::string msg,
                       const model::Pos& pos) {
        add(Severity::error, Scope::channel, rule, ch.package, std::move(msg), pos).channel =
            c_.string(ch.name);
    }
    void bundle_finding(Severity sev, const char* rule, Str pkg, Str bundle, Str channel,
                        std::string msg, const model::Pos& pos) {
        Finding& i = add(sev, Scope::bundle, rule, pkg, std::move(msg), pos);
        i.bundle = c_.string(bundle);
        i.channel = c_.string(channel);
    }
    void deprecation_error(const char* rule, Str pkg, std::string msg, const model::Pos& pos) {
        add(Severity::error, Scope::deprecation, rule, pkg, std::move(msg), pos);
    }

    // The severity of the findings current opm rejects and older releases accept: errors, as
    // current opm; warnings with --lenient (--strict wins).
    Severity older_opm_accepts() const {
        return opts_.lenient && !opts_.strict ? Severity::warning : Severity::error;
    }

    // Load problems are errors as they are; a bundle with one is not checked for its olm.package
    // property again (opm stops at a property it cannot parse, too).
    void load_problems() {
        for (const Finding& f : c_.problems) {
            out_.push_back(f);
            out_.back().severity = Severity::error;
            if (f.scope != Scope::bundle) continue;
            auto p = c_.strings.find(f.package);
            auto b = c_.strings.find(f.bundle);
            if (p && b) bundles_with_problems_.insert(pair_key(*p, *b));
        }
        // What opm ignores but is most likely a mistake: warnings (errors under --strict).
        for (const Finding& f : c_.notes) {
            out_.push_back(f);
            out_.back().severity = Severity::warning;
        }
    }

    void packages() {
        if (c_.packages.empty() && !opts_.allow_empty)
            add(Severity::error, Scope::catalog, rule::catalog_empty, 0, "no packages found",
                model::Pos{npos32, 0, 0, -1}); // about no file
        chan_count_.assign(c_.packages.size(), 0);
        for (std::uint32_t i = 0; i < c_.packages.size(); ++i) {
            const model::Package& p = c_.packages[i];
            if (p.name == 0) {
                add(Severity::error, Scope::catalog, rule::package_name, 0,
                    "config contains package with no name", p.pos);
                continue;
            }
            if (package_of_[p.name] != npos32) {
                package_error(rule::package_duplicate, p.name,
                              "duplicate package " + q(c_.str(p.name)), p.pos);
                continue;
            }
            package_of_[p.name] = i;
            auto why = dns1123_label_problems(c_.str(p.name));
            if (!why.empty())
                package_error(rule::package_name, p.name,
                              "invalid package name " + q(c_.str(p.name)) + ": [" +
                                  text::join(why, " ") + "]",
                              p.pos);
        }
    }

    void channels() {
        in_channel_.assign(c_.bundles.size(), 0);
        channel_of_.reserve(c_.channels.size());
        for (std::uint32_t ci = 0; ci < c_.channels.size(); ++ci) {
            const model::Channel& ch = c_.channels[ci];
            if (package_of_[ch.package] == npos32) {
                add(Severity::error, Scope::channel, rule::channel_unknown_package, ch.package,
                    "unknown package " + q(c_.str(ch.package)) + " for channel " +
                        q(c_.str(ch.name)),
                    ch.pos)
                    .channel = c_.string(ch.name);
                continue;
            }
            if (ch.name == 0) {
                package_error(rule::channel_name, ch.package,
                              "package contains channel with no name", ch.pos);
                continue;
            }
            if (!channel_of_.emplace(pair_key(ch.package, ch.name), ci).second) {
                channel_error(rule::channel_duplicate, ch,
                              "duplicate channel " + q(c_.str(ch.name)), ch.pos);
                continue;
            }
            ++chan_count_[package_of_[ch.package]];
            graph(ch);
        }
    }

    // Entries, the channel's own bundle checks, and the upgrade graph rules of one channel.
    void graph(const model::Channel& ch) {
        if (ch.entries_count == 0) {
            channel_error(rule::channel_empty, ch, "channel must contain at least one bundle",
                          ch.pos);
            return;
        }
        graph_.clear();
        firsts_.clear();
        const std::uint32_t end = ch.entries_begin + ch.entries_count;
        for (std::uint32_t ei = ch.entries_begin; ei < end; ++ei) {
            const model::Entry& e = c_.entries[ei];
            std::uint32_t n = graph_.at(e.name);
            if (graph_[n].entry != npos32) {
                channel_error(rule::channel_duplicate_entry, ch,
                              "duplicate entry " + q(c_.str(e.name)), e.pos);
                continue;
            }
            graph_[n].entry = ei;
            firsts_.push_back(n);
            std::uint32_t b = c_.find_bundle(ch.package, e.name);
            if (b == npos32)
                channel_error(rule::channel_missing_bundle, ch,
                              "no olm.bundle blobs found in package " + q(c_.str(ch.package)) +
                                  " for olm.channel entries [" + esc(c_.str(e.name)) + "]",
                              e.pos);
            else
                in_channel_[b] = 1;
            entry_checks(ch, e);
        }
        for (std::uint32_t ei = ch.entries_begin; ei < end; ++ei) {
            const model::Entry& e = c_.entries[ei];
            if (e.replaces != 0) graph_[graph_.at(e.replaces)].referenced = true;
            for (Str s : c_.skips_of(e)) {
                GraphNode& n = graph_[graph_.at(s)];
                n.referenced = true;
                n.skipped = true;
            }
        }

        // The head: the one entry nothing replaces or skips.
        std::vector<std::uint32_t> heads;
        for (std::uint32_t n : firsts_)
            if (!graph_[n].referenced) heads.push_back(n);
        if (heads.empty()) {
            channel_error(rule::channel_head, ch, "no channel head found in graph", ch.pos);
            return;
        }
        if (heads.size() > 1) {
            channel_error(rule::channel_head, ch,
                          "multiple channel heads found in graph: " +
                              join_listed(sorted_names(heads), ", "),
                          ch.pos);
            return;
        }

        // Follow replaces from the head; an edge to an entry something skips is not followed
        // (opm v1.58's rule: a skipped bundle's replaces edges are not honoured), and the tail may
        // replace a name that is not in the channel.
        std::vector<std::uint32_t> chain{heads.front()};
        graph_[heads.front()].chain = 0;
        std::uint32_t cur = graph_[heads.front()].entry;
        while (cur != npos32) {
            Str r = c_.entries[cur].replaces;
            if (r == 0) break;
            std::uint32_t n = graph_.at(r);
            if (graph_[n].skipped) break;
            if (graph_[n].chain != npos32) {
                std::vector<std::string> loop;
                for (std::size_t k = graph_[n].chain; k < chain.size(); ++k)
                    loop.push_back(esc(c_.str(graph_[chain[k]].name)));
                loop.push_back(esc(c_.str(r)));
                std::string text;
                if (loop.size() > max_listed) {
                    std::size_t more = loop.size() - max_listed;
                    loop.erase(loop.begin() + static_cast<long>(max_listed / 2),
                               loop.end() - static_cast<long>(max_listed / 2));
                    loop.insert(loop.begin() + static_cast<long>(max_listed / 2),
                                "... (" + std::to_string(more) + " more)");
                }
                channel_error(rule::channel_cycle, ch,
                              "detected cycle in replaces chain of upgrade graph: " +
                                  text::join(loop, " -> "),
                              ch.pos);
                return;
            }
            graph_[n].chain = static_cast<std::uint32_t>(chain.size());
            chain.push_back(n);
            cur = graph_[n].entry;
        }

        // Stranded: entries neither on that chain nor skipped.
        std::vector<std::uint32_t> stranded;
        for (std::uint32_t n : firsts_)
            if (graph_[n].chain == npos32 && !graph_[n].skipped) stranded.push_back(n);
        if (!stranded.empty())
            channel_error(rule::channel_stranded, ch,
                          "channel contains one or more stranded bundles: " +
                              join_listed(sorted_names(stranded), ", "),
                          ch.pos);
    }

    std::vector<std::string> sorted_names(const std::vector<std::uint32_t>& nodes) {
        std::vector<std::string> names;
        names.reserve(nodes.size());
        for (std::uint32_t n : nodes)
            names.push_back(esc(c_.str(graph_[n].name)));
        std::sort(names.begin(), names.end());
        return names;
    }

    // What opm checks of a bundle's channel entry: empty skips, and the skipRange as a range.
    void entry_checks(const model::Channel& ch, const model::Entry& e) {
        auto skips = c_.skips_of(e);
        for (std::size_t i = 0; i < skips.size(); ++i)
            if (skips[i] == 0)
                bundle_finding(Severity::error, rule::bundle_skip, ch.package, e.name, ch.name,
                               "skip[" + std::to_string(i) + "] is empty in channel " +
                                   q(c_.str(ch.name)),
                               e.pos);
        if (e.skip_range == 0) return;
        auto [it, fresh] = range_problem_.try_emplace(e.skip_range);
        if (fresh) {
            std::string_view text = c_.str(e.skip_range);
            auto r = semver::Range::parse(text);
            if (!r) {
                std::string why = r.error().message;
                std::string prefix = "invalid version range " + semver::detail::quote(text) + ": ";
                if (why.compare(0, prefix.size(), prefix) == 0) why.erase(0, prefix.size());
                it->second = why.empty() ? "invalid range" : why;
            }
        }
        if (!it->second.empty())
            bundle_finding(older_opm_accepts(), rule::bundle_skip_range, ch.package, e.name,
                           ch.name,
                           "invalid skipRange " + q(c_.str(e.skip_range)) + " in channel " +
                               q(c_.str(ch.name)) + ": " + it->second,
                           e.pos);
    }

    void bundles() {
        for (std::uint32_t bi = 0; bi < c_.bundles.size(); ++bi) {
            const model::Bundle& b = c_.bundles[bi];
            auto err = [&](const char* rule, std::string msg) {
                bundle_finding(Severity::error, rule, b.package, b.name, 0, std::move(msg), b.pos);
            };
            if (b.name == 0) err(rule::bundle_name, "name must be set");
            bool known = false;
            if (b.package == 0)
                err(rule::bundle_package, "package name must be set");
            else if (package_of_[b.package] == npos32)
                err(rule::bundle_unknown_package, "unknown package " + q(c_.str(b.package)));
            else
                known = true;
            const bool first = c_.find_bundle(b.package, b.name) == bi;
            if (!first) err(rule::bundle_duplicate, "duplicate bundle");

            std::uint32_t npkg = 0;
            const model::Property* pkg_prop = nullptr;
            bool has_object = false;
            for (const model::Property& p : c_.properties_of(b)) {
                if (p.kind == model::PropKind::package) {
                    ++npkg;
                    pkg_prop = &p;
                } else if (p.kind == model::PropKind::bundle_object) {
                    has_object = true;
                }
            }
            if (!bundles_with_problems_.count(pair_key(b.package, b.name))) {
                if (npkg != 1)
                    err(rule::bundle_olm_package,
                        "must have exactly 1 \"olm.package\" property, found " +
                            std::to_string(npkg));
                else
                    olm_package(b, *pkg_prop, known && first, err);
            }

            if (b.image != 0) {
                std::string why = image_problem(b.image);
                if (!why.empty())
                    err(rule::bundle_image,
                        "image: invalid image pull spec " + q(c_.str(b.image)) + ": " + why);
            } else if (!has_object) {
                err(rule::bundle_image, "bundle image must be set");
            }
            auto images = c_.related_images_of(b);
            for (std::size_t i = 0; i < images.size(); ++i) {
                if (images[i].image == 0) continue;
                std::string why = image_problem(images[i].image);
                if (!why.empty())
                    bundle_finding(
                        older_opm_accepts(), rule::bundle_related_image, b.package, b.name, 0,
                        "relatedImages[" + std::to_string(i) + "].image: invalid image pull spec " +
                            q(c_.str(images[i].image)) + ": " + why,
                        b.pos);
            }

            if (known && first && !in_channel_[bi])
                err(rule::bundle_no_channel, "not found in any channel entries");
        }
    }

    template <class Err>
    void olm_package(const model::Bundle& b, const model::Property& p, bool track, Err& err) {
        if (p.a != b.package)
            err(rule::bundle_olm_package, "package " + q(c_.str(b.package)) +
                                              " does not match \"olm.package\" property " +
                                              q(c_.str(p.a)));
        semver::Version v;
        std::string why;
        if (!semver::detail::parse_strict(c_.str(p.b), v, why)) {
            err(rule::bundle_version, "error parsing version " + q(c_.str(p.b)) + ": " + why);
            return;
        }
        std::string key;
        if (p.c != 0) {
            std::string_view rel = c_.str(p.c);
            std::string rwhy;
            semver::Version rv;
            if (rel.size() > 20)
                rwhy = "exceeds maximum length of 20 characters";
            else if (!semver::detail::parse_strict("0.0.0-" + std::string(rel), rv, rwhy) ||
                     !rv.build.empty())
                rwhy = rwhy.empty() ? "not a dot-separated list of identifiers" : rwhy;
            if (!rwhy.empty()) {
                err(rule::bundle_release, "invalid release " + q(rel) + ": " + rwhy);
                return;
            }
            std::string normalized = std::string(c_.str(b.package)) + "-v" +
                                     std::string(c_.str(p.b)) + "-" + std::string(rel);
            if (c_.str(b.name) != normalized)
                err(rule::bundle_release, "name " + q(c_.str(b.name)) +
                                              " does not match normalized name " + q(normalized));
            if (!v.build.empty())
                err(rule::bundle_release,
                    "cannot use build metadata in version with a release version");
            key = std::string(c_.str(p.b)) + "-" + std::string(rel);
        }
        if (!track) return;
        // Versions are grouped by their text (strict parsing keeps it canonical); with a release,
        // by "version-release", which may coincide with a plain pre-release version.
        Str id = p.b;
        if (!key.empty()) {
            auto found = c_.strings.find(key);
            if (!found) {
                odd_versions_[{b.package, key}].push_back(b.name);
                return;
            }
            id = *found;
        }
        versions_.push_back({b.package, id, b.name});
    }

    std::string image_problem(Str image) {
        std::uint8_t& state = image_state_[image];
        if (state == 1) return {};
        std::string why = oci::reference_problem(c_.str(image));
        state = why.empty() ? 1 : 2;
        return why;
    }

    void package_rules() {
        for (std::uint32_t i = 0; i < c_.packages.size(); ++i) {
            const model::Package& p = c_.packages[i];
            if (p.name == 0 || package_of_[p.name] != i) continue;
            // As opm's model: each of the three reported on its own, so a package with neither
            // channels nor a default channel gets two findings.
            if (chan_count_[i] == 0)
                package_error(rule::package_no_channels, p.name,
                              "package must contain at least one channel", p.pos);
            if (p.default_channel == 0)
                package_error(rule::package_default_channel, p.name, "default channel must be set",
                              p.pos);
            else if (!channel_of_.count(pair_key(p.name, p.default_channel)))
                package_error(rule::package_default_channel, p.name,
                              "default channel " + q(c_.str(p.default_channel)) +
                                  " not found in channels list",
                              p.pos);
        }
    }

    struct VersionOf {
        Str package, version, bundle;
    };

    void versions() {
        // Count per (package, version), then list the names of the groups with more than one.
        std::unordered_map<std::uint64_t, std::uint32_t> count;
        count.reserve(versions_.size());
        bool any = false;
        for (const auto& v : versions_)
            any = ++count[pair_key(v.package, v.version)] > 1 || any;
        std::map<std::pair<std::string, std::string>, std::vector<std::string>> dups;
        if (any)
            for (const auto& v : versions_)
                if (count[pair_key(v.package, v.version)] > 1)
                    dups[{c_.string(v.package), esc(c_.str(v.version))}].push_back(
                        esc(c_.str(v.bundle)));
        for (auto& [k, names] : odd_versions_)
            if (names.size() > 1)
                for (Str n : names)
                    dups[{c_.string(k.first), esc(k.second)}].push_back(esc(c_.str(n)));
        // One finding per package: "{version: [names]}" groups, versions and names sorted.
        std::string pkg, text;
        std::size_t groups = 0;
        auto flush = [&] {
            if (groups == 0) return;
            Str id = *c_.strings.find(pkg);
            package_error(rule::package_duplicate_version, id,
                          "duplicate versions found in bundles: [" + text + "]",
                          c_.packages[package_of_[id]].pos);
            text.clear();
            groups = 0;
        };
        for (auto& [k, names] : dups) {
            if (k.first != pkg) {
                flush();
                pkg = k.first;
            }
            std::sort(names.begin(), names.end());
            if (groups < max_listed)
                text += (groups ? " {" : "{") + k.second + ": [" + join_listed(names, ", ") + "]}";
            else if (groups == max_listed)
                text += " ...";
            ++groups;
        }
        flush();
    }

    void deprecations() {
        std::vector<std::uint8_t> seen(c_.packages.size(), 0);
        for (std::uint32_t di = 0; di < c_.deprecations.size(); ++di) {
            const model::Deprecation& d = c_.deprecations[di];
            if (d.package == 0) {
                add(Severity::error, Scope::catalog, rule::deprecation_package, 0,
                    "package name must be set for deprecation item " + std::to_string(di), d.pos);
                continue;
            }
            std::uint32_t pi = package_of_[d.package];
            if (pi == npos32) {
                deprecation_error(rule::deprecation_package, d.package,
                                  "cannot apply deprecations to an unknown package " +
                                      q(c_.str(d.package)),
                                  d.pos);
                continue;
            }
            if (seen[pi]) {
                deprecation_error(rule::deprecation_duplicate, d.package,
                                  "expected a maximum of one deprecation per package: " +
                                      q(c_.str(d.package)),
                                  d.pos);
                continue;
            }
            seen[pi] = 1;
            std::unordered_set<std::uint64_t> refs;
            auto entries = c_.entries_of(d);
            for (std::size_t j = 0; j < entries.size(); ++j) {
                const model::DeprecationEntry& e = entries[j];
                const std::string idx = "[" + std::to_string(j) + "]";
                if (e.schema == 0) {
                    deprecation_error(rule::deprecation_schema, d.package,
                                      "schema must be set for deprecation entry " + idx, e.pos);
                    continue;
                }
                if (e.message == 0) missing_message(d.package, e);
                // The reference as opm prints it (Go's %#v of its PackageScopedReference).
                std::string ref = "declcfg.PackageScopedReference{Schema:" + q(c_.str(e.schema)) +
                                  ", Name:" + q(c_.str(e.name)) + "}";
                if (!refs.insert(pair_key(e.schema, e.name)).second) {
                    deprecation_error(rule::deprecation_duplicate_reference, d.package,
                                      "duplicate deprecation entry " + ref, e.pos);
                    continue;
                }
                std::string_view schema = c_.str(e.schema);
                if (schema == "olm.bundle") {
                    if (c_.find_bundle(d.package, e.name) == npos32)
                        deprecation_error(rule::deprecation_reference, d.package,
                                          "cannot deprecate bundle " + q(c_.str(e.name)) +
                                              ": bundle not found",
                                          e.pos);
                } else if (schema == "olm.channel") {
                    if (!channel_of_.count(pair_key(d.package, e.name)))
                        deprecation_error(rule::deprecation_reference, d.package,
                                          "cannot deprecate channel " + q(c_.str(e.name)) +
                                              ": channel not found",
                                          e.pos);
                } else if (schema == "olm.package") {
                    if (e.name != 0)
                        deprecation_error(rule::deprecation_reference, d.package,
                                          "package name must be empty for deprecated package "
                                          "(specified " +
                                              q(c_.str(e.name)) + ")",
                                          e.pos);
                } else {
                    deprecation_error(rule::deprecation_reference, d.package,
                                      "cannot deprecate object " + ref + " referenced by entry " +
                                          std::to_string(j) + ": object schema unknown",
                                      e.pos);
                }
            }
        }
    }

    // A deprecation entry without a message, in opm's words, under the channel or bundle it
    // deprecates when that exists (where opm's model reports it), else under the package.
    void missing_message(Str pkg, const model::DeprecationEntry& e) {
        std::string msg = "invalid deprecation: message must be set";
        const std::string_view schema = c_.str(e.schema);
        if (schema == "olm.bundle" && c_.find_bundle(pkg, e.name) != npos32)
            bundle_finding(Severity::error, rule::deprecation_message, pkg, e.name, 0,
                           std::move(msg), e.pos);
        else if (schema == "olm.channel" && channel_of_.count(pair_key(pkg, e.name)))
            add(Severity::error, Scope::channel, rule::deprecation_message, pkg, std::move(msg),
                e.pos)
                .channel = c_.string(e.name);
        else
            deprecation_error(rule::deprecation_message, pkg, std::move(msg), e.pos);
    }

    // olm.constraint properties, read with the grammar kpkg resolve uses: what it refuses (a
    // malformed constraint, a CEL rule that does not compile) is a warning, as opm checks
    // neither; an error under --strict. Each distinct value is checked, and each distinct rule
    // compiled, once.
    void constraints() {
        std::unordered_map<Str, std::vector<std::pair<const char*, std::string>>> memo;
        model::RuleCache rules;
        for (const model::Bundle& b : c_.bundles) {
            for (const model::Property& p : c_.properties_of(b)) {
                if (p.kind != model::PropKind::constraint || p.json == 0) continue;
                auto [it, fresh] = memo.try_emplace(p.json);
                if (fresh) it->second = constraint_problems(c_.str(p.json), rules);
                for (const auto& [rule, msg] : it->second)
                    bundle_finding(Severity::warning, rule, b.package, b.name, 0, msg, b.pos);
            }
        }
    }

    static std::vector<std::pair<const char*, std::string>>
    constraint_problems(std::string_view json, model::RuleCache& rules) {
        std::vector<std::pair<const char*, std::string>> out;
        const std::string tail = " (kpkg resolve refuses it; opm does not check it)";
        auto docs = io::parse_json(json, "olm.constraint value");
        if (!docs || docs->size() != 1) return out; // the loader wrote it: not reached
        model::ConstraintOptions opts;
        opts.rules = &rules;
        opts.json_bytes = json.size();
        const io::Node& value = (*docs)[0].root;
        const model::ConstraintCheck check = model::check_constraint(value, opts);
        for (const auto& pr : check.problems) {
            if (!pr.fatal) continue;
            if (pr.code == model::ConstraintProblem::Code::rule_compile) {
                out.emplace_back(rule::catalog_constraint_cel,
                                 "olm.constraint " + pr.path + ".rule " + q(pr.value) +
                                     " does not compile: " + pr.detail + tail);
            } else {
                out.emplace_back(rule::catalog_constraint, pr.message() + tail);
            }
        }
        return out;
    }

    void sort() {
        auto rank = [](const Finding& i) {
            switch (i.scope) {
            case Scope::catalog:
                return 0;
            case Scope::package:
            case Scope::deprecation:
                return 1;
            case Scope::channel:
                return 2;
            case Scope::bundle:
                return 3;
            }
            return 0;
        };
        auto sub = [](const Finding& i) -> const std::string& {
            static const std::string none;
            if (i.scope == Scope::bundle) return i.bundle;
            if (i.scope == Scope::channel) return i.channel;
            return none;
        };
        auto key = [&](const Finding& i) {
            return std::tuple<const std::string&, int, const std::string&, const std::string&,
                              std::uint32_t, std::uint32_t, const std::string&>(
                i.package, rank(i), sub(i), i.pos.file, i.pos.line, i.pos.column, i.message);
        };
        std::stable_sort(out_.begin(), out_.end(),
                         [&](const Finding& a, const Finding& b) { return key(a) < key(b); });
    }

    const model::Catalog& c_;
    ValidateOptions opts_;
    std::vector<Finding> out_;
    std::vector<std::uint32_t> package_of_; // by string id: index into packages
    std::vector<std::uint32_t> chan_count_; // by package index
    std::unordered_map<std::uint64_t, std::uint32_t> channel_of_; // (package, name) -> channel
    std::vector<std::uint8_t> in_channel_;                        // by bundle index
    std::unordered_set<std::uint64_t> bundles_with_problems_;
    Graph graph_;
    std::vector<std::uint32_t> firsts_;                  // graph nodes of a channel's entries
    std::unordered_map<Str, std::string> range_problem_; // skipRange -> why it does not parse
    std::vector<std::uint8_t> image_state_;              // by string id: 0 unseen, 1 ok, 2 invalid
    std::vector<VersionOf> versions_;
    std::map<std::pair<Str, std::string>, std::vector<Str>> odd_versions_;
};

} // namespace

const std::vector<RuleInfo>& rules() {
    using S = Severity;
    using Sc = Scope;
    static const std::vector<RuleInfo> all = {
        {rule::catalog_empty, S::error, Sc::catalog,
         "the catalog has at least one olm.package blob (an empty directory or a path with no "
         "catalog files is an error unless --allow-empty)"},
        {rule::catalog_unknown_field, S::warning, Sc::package,
         "a blob of a known schema (olm.package, olm.channel, olm.bundle, olm.deprecations) has "
         "no top-level field opm does not decode (opm ignores it: a misspelt defaultChannel "
         "goes unnoticed), with the nearest field name"},
        {rule::catalog_ignored_text, S::warning, Sc::catalog,
         "a YAML document whose value is a flow collection ({...} or [...]) does not go on after "
         "it (opm reads the first value only and ignores the rest)"},
        {rule::catalog_constraint, S::warning, Sc::bundle,
         "an olm.constraint property is one kpkg resolve accepts (one of gvk, package, cel, all, "
         "any, not; no unknown fields; at most 128 KiB): opm does not check it, the resolver "
         "refuses it"},
        {rule::catalog_constraint_cel, S::warning, Sc::bundle,
         "every CEL rule of an olm.constraint property compiles (syntax, declared names and "
         "functions, types): opm does not compile CEL, the resolver refuses a rule that does not "
         "compile"},
        {rule::package_name, S::error, Sc::package,
         "a package name is set and is a DNS-1123 label (lower-case letters, digits and '-', at "
         "most 63 characters)"},
        {rule::package_duplicate, S::error, Sc::package, "no two olm.package blobs have one name"},
        {rule::channel_unknown_package, S::error, Sc::channel,
         "an olm.channel names a package that has an olm.package blob"},
        {rule::channel_name, S::error, Sc::package, "an olm.channel has a name"},
        {rule::channel_duplicate, S::error, Sc::channel,
         "no two olm.channel blobs of a package have one name"},
        {rule::channel_empty, S::error, Sc::channel, "a channel has at least one entry"},
        {rule::channel_duplicate_entry, S::error, Sc::channel,
         "no two entries of a channel have one name"},
        {rule::channel_missing_bundle, S::error, Sc::channel,
         "every channel entry has an olm.bundle blob of that name in the package"},
        {rule::bundle_skip, S::error, Sc::bundle, "no entry of skips is empty"},
        {rule::bundle_skip_range, S::error, Sc::bundle,
         "a skipRange parses as a blang/semver range (as current opm; older releases accept "
         "it: a warning with --lenient)",
         true},
        {rule::channel_head, S::error, Sc::channel,
         "exactly one entry (the head) is neither replaced nor skipped by another; the heads "
         "found are listed, sorted"},
        {rule::channel_cycle, S::error, Sc::channel,
         "following replaces from the head never comes back to an entry already passed"},
        {rule::channel_stranded, S::error, Sc::channel,
         "every entry is on the replaces chain from the head or skipped by some entry; the chain "
         "stops at an entry that is skipped (opm v1.58 and later)"},
        {rule::bundle_name, S::error, Sc::bundle, "an olm.bundle has a name"},
        {rule::bundle_package, S::error, Sc::bundle, "an olm.bundle names its package"},
        {rule::bundle_unknown_package, S::error, Sc::bundle,
         "an olm.bundle names a package that has an olm.package blob"},
        {rule::bundle_duplicate, S::error, Sc::bundle,
         "no two olm.bundle blobs of a package have one name"},
        {rule::bundle_olm_package, S::error, Sc::bundle,
         "a bundle has exactly one olm.package property and its packageName is the bundle's "
         "package"},
        {rule::bundle_version, S::error, Sc::bundle,
         "the olm.package version is a semantic version"},
        {rule::bundle_release, S::error, Sc::bundle,
         "an olm.package release is at most 20 characters of dot-separated pre-release "
         "identifiers, the version then has no build metadata, and the bundle is named "
         "PACKAGE-vVERSION-RELEASE"},
        {rule::bundle_image, S::error, Sc::bundle,
         "the image parses as an image reference; a bundle without image has an "
         "olm.bundle.object property"},
        {rule::bundle_related_image, S::error, Sc::bundle,
         "every non-empty relatedImages image parses as an image reference (as current opm; "
         "older releases accept it: a warning with --lenient)",
         true},
        {rule::bundle_no_channel, S::error, Sc::bundle,
         "every olm.bundle is an entry of some channel of its package"},
        {rule::package_no_channels, S::error, Sc::package, "a package has at least one channel"},
        {rule::package_default_channel, S::error, Sc::package,
         "a package names its default channel, and that channel exists"},
        {rule::package_duplicate_version, S::error, Sc::package,
         "no two bundles of a package have one version (with its release)"},
        {rule::deprecation_package, S::error, Sc::deprecation,
         "an olm.deprecations blob names a package that has an olm.package blob"},
        {rule::deprecation_duplicate, S::error, Sc::deprecation,
         "a package has at most one olm.deprecations blob"},
        {rule::deprecation_schema, S::error, Sc::deprecation,
         "every deprecation entry's reference has a schema"},
        {rule::deprecation_message, S::error, Sc::deprecation,
         "every deprecation entry has a message (reported under the channel or bundle it "
         "deprecates)"},
        {rule::deprecation_duplicate_reference, S::error, Sc::deprecation,
         "no two deprecation entries have one reference"},
        {rule::deprecation_reference, S::error, Sc::deprecation,
         "a reference names an existing bundle (olm.bundle) or channel (olm.channel) of the "
         "package, no name for olm.package, and no other schema"},
    };
    return all;
}

std::vector<Finding> validate(const model::Catalog& cat, const ValidateOptions& opts) {
    return Validator(cat, opts).run();
}

// --- the tree ---------------------------------------------------------------------------------

namespace {

struct TreeNode {
    std::string label;
    std::vector<TreeNode> kids;
};

void draw(const TreeNode& n, const std::string& indent, bool last, std::string& out) {
    out += indent;
    out += last ? "└── " : "├── ";
    out += n.label;
    if (!n.kids.empty()) out += ':';
    out += '\n';
    std::string next = indent + (last ? "    " : "│   ");
    for (std::size_t i = 0; i < n.kids.size(); ++i)
        draw(n.kids[i], next, i + 1 == n.kids.size(), out);
}

// One line of the tree: position and message, with line breaks of the message escaped.
std::string line(const Finding& f) {
    std::string p = f.pos.str();
    std::string s = p.empty() ? f.message : p + ": " + f.message;
    for (std::size_t i = 0; (i = s.find('\n', i)) != std::string::npos;)
        s.replace(i, 1, "\\n");
    return s;
}

} // namespace

std::string format_tree(const std::vector<Finding>& findings, Severity which) {
    const bool errors = which == Severity::error;
    const std::string invalid = errors ? "invalid " : "";
    TreeNode root{errors ? "invalid index" : "warnings", {}};
    // Findings arrive sorted by package, then scope, then channel or bundle, so every group is
    // contiguous: only the last package node and its last channel/bundle node can grow. Nodes
    // are addressed by index, as adding a node may move its siblings.
    constexpr std::size_t none = static_cast<std::size_t>(-1);
    std::size_t pkg = none; // index in root.kids of the current package node
    std::string pkg_name;
    std::size_t sub = none; // index of the current channel/bundle node in its parent
    std::size_t sub_parent = none - 1;
    std::string sub_label;
    for (const auto& f : findings) {
        if (f.severity != which) continue;
        std::size_t parent = none; // none: the root
        if (!f.package.empty()) {
            if (pkg == none || f.package != pkg_name) {
                root.kids.push_back({invalid + "package " + q(f.package), {}});
                pkg = root.kids.size() - 1;
                pkg_name = f.package;
            }
            parent = pkg;
        }
        TreeNode& into = parent == none ? root : root.kids[parent];
        std::string label;
        if (f.scope == Scope::channel)
            label = invalid + "channel " + q(f.channel);
        else if (f.scope == Scope::bundle)
            label = invalid + "bundle " + q(f.bundle);
        if (label.empty()) {
            into.kids.push_back({line(f), {}});
            sub = none;
            continue;
        }
        if (sub == none || sub_parent != parent || label != sub_label) {
            into.kids.push_back({label, {}});
            sub = into.kids.size() - 1;
            sub_parent = parent;
            sub_label = label;
        }
        into.kids[sub].kids.push_back({line(f), {}});
    }
    if (root.kids.empty()) return {};
    std::string out = root.label + ":\n";
    for (std::size_t i = 0; i < root.kids.size(); ++i)
        draw(root.kids[i], "", i + 1 == root.kids.size(), out);
    return out;
}

} // namespace kpkg::catalog
