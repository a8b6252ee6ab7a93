#include "blobs.hpp"

#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "fbc_text.hpp"
#include "kpkg/core/text.hpp"
#include "kpkg/io/events.hpp"
#include "kpkg/io/json_reader.hpp"
#include "values.hpp"

namespace kpkg::catalog::detail {

namespace {

using io::Mark;
using model::Str;

// Where the reader is inside a blob.
enum class Ctx : std::uint8_t {
    skip,      // a value nothing is read from
    blob,      // the blob's mapping
    icon,      // olm.package icon
    entries,   // the entries list (olm.channel, olm.deprecations)
    entry,     // one entry
    skips,     // an entry's skips
    reference, // a deprecation entry's reference
    props,     // the properties list
    prop,      // one property
    images,    // relatedImages
    image,     // one related image
};

// The fields each context knows, matched without regard to case. Index 0 is "none".
constexpr std::string_view kBlobFields[] = {
    "",     "schema", "package", "name",       "defaultChannel", "description",
    "icon", "image",  "entries", "properties", "relatedImages"};
enum : std::uint8_t {
    F_none,
    F_schema,
    F_package,
    F_name,
    F_default_channel,
    F_description,
    F_icon,
    F_image,
    F_entries,
    F_properties,
    F_related_images
};
// The top-level fields opm decodes for each known schema (declcfg's types); any other is ignored
// by opm, and noted by kpkg as a likely misspelling.
constexpr std::uint32_t bit(std::uint8_t f) {
    return std::uint32_t{1} << f;
}
constexpr std::uint32_t kPackageFields = bit(F_schema) | bit(F_name) | bit(F_default_channel) |
                                         bit(F_description) | bit(F_icon) | bit(F_properties);
constexpr std::uint32_t kChannelFields =
    bit(F_schema) | bit(F_package) | bit(F_name) | bit(F_entries) | bit(F_properties);
constexpr std::uint32_t kBundleFields = bit(F_schema) | bit(F_package) | bit(F_name) |
                                        bit(F_image) | bit(F_properties) | bit(F_related_images);
constexpr std::uint32_t kDeprecationFields = bit(F_schema) | bit(F_package) | bit(F_entries);
// Fields of (almost) every schema, not looked at again (a "name" in olm.deprecations goes unseen).
constexpr std::uint32_t kCommonFields = bit(F_schema) | bit(F_name) | bit(F_properties);

constexpr std::string_view kIconFields[] = {"", "base64data", "mediatype"};
enum : std::uint8_t { I_none, I_data, I_mediatype };
constexpr std::string_view kEntryFields[] = {"",          "name",      "replaces", "skips",
                                             "skipRange", "reference", "message"};
enum : std::uint8_t { E_none, E_name, E_replaces, E_skips, E_skip_range, E_reference, E_message };
constexpr std::string_view kRefFields[] = {"", "schema", "name"};
enum : std::uint8_t { R_none, R_schema, R_name };
constexpr std::string_view kPropFields[] = {"", "type", "value"};
enum : std::uint8_t { P_none, P_type, P_value };
constexpr std::string_view kImageFields[] = {"", "name", "image"};
enum : std::uint8_t { M_none, M_name, M_image };

template <std::size_t N>
std::uint8_t field_of(std::string_view key, const std::string_view (&names)[N]) {
    bool ascii = true;
    for (char c : key)
        if (static_cast<unsigned char>(c) >= 0x80) ascii = false;
    for (std::size_t i = 1; i < N; ++i) {
        // An ASCII key folds to a name of its own length only.
        if (ascii && key.size() != names[i].size()) continue;
        if (key == names[i] || fold_equal(key, names[i])) return static_cast<std::uint8_t>(i);
    }
    return 0;
}

// A field as read: whether it was there, its kind and place, and its text when a string.
struct FieldVal {
    bool present = false;
    VKind kind = VKind::null;
    Mark mark;
    Str id = 0;
};

struct EntryS {
    VKind item = VKind::object;
    Mark mark;
    FieldVal name, replaces, skip_range, message, skips, reference, ref_schema, ref_name;
    std::uint32_t skips_begin = 0, skips_count = 0;
    std::optional<std::pair<VKind, Mark>> bad_skip; // the first skip that is not a string
};

struct PropS {
    VKind item = VKind::object;
    Mark mark;
    FieldVal type;
    bool has_value = false;
    Mark value_mark;
    bool typed = false; // the value was read knowing the type
    model::Property out;
    std::optional<Mismatch> mismatch;
    std::shared_ptr<Recorder> recorded; // the value, read before the type
};

struct ImageS {
    VKind item = VKind::object;
    Mark mark;
    FieldVal name, image;
};

struct Blob {
    int doc = 0;
    VKind root = VKind::null;
    bool has_root = false;
    Mark mark;
    FieldVal schema, package, name, default_channel, description, image;
    FieldVal icon, icon_data, icon_mediatype;
    bool icon_data_bad = false;
    FieldVal entries, properties, related_images;
    std::vector<EntryS> entry_list;
    std::vector<PropS> prop_list;
    std::vector<ImageS> image_list;
    std::vector<Str> skips;
    std::unordered_map<std::string, std::string> keys; // top-level keys: folded -> as written
    // Top-level keys other than schema, name and properties, in order: the field (F_none for one
    // no schema has) and where; the text of each F_none key in `unknown_text`.
    std::vector<std::pair<std::uint8_t, Mark>> odd_keys;
    std::vector<std::string> unknown_text;
    std::optional<std::string> duplicate; // keys equal but for case
    // A value or key opm cannot decode (a number JSON cannot hold, !!binary that is not base64,
    // a key yaml.v2 or sigs.k8s.io/yaml fail on): the message and where.
    std::optional<std::pair<std::string, Mark>> undecodable;

    void clear() {
        const int d = doc;
        auto el = std::move(entry_list);
        auto pl = std::move(prop_list);
        auto il = std::move(image_list);
        auto sk = std::move(skips);
        auto ks = std::move(keys);
        auto ok = std::move(odd_keys);
        auto ut = std::move(unknown_text);
        *this = Blob{};
        doc = d;
        el.clear();
        pl.clear();
        il.clear();
        sk.clear();
        ks.clear();
        ok.clear();
        ut.clear();
        odd_keys = std::move(ok);
        unknown_text = std::move(ut);
        entry_list = std::move(el);
        prop_list = std::move(pl);
        image_list = std::move(il);
        skips = std::move(sk);
        keys = std::move(ks);
    }
};

model::PropKind prop_kind(std::string_view t) {
    using K = model::PropKind;
    if (t.size() < 4 || t.substr(0, 4) != "olm.") return K::other;
    if (t == "olm.package") return K::package;
    if (t == "olm.gvk") return K::gvk;
    if (t == "olm.gvk.required") return K::gvk_required;
    if (t == "olm.package.required") return K::package_required;
    if (t == "olm.label") return K::label;
    if (t == "olm.label.required") return K::label_required;
    if (t == "olm.deprecated") return K::deprecated;
    if (t == "olm.constraint") return K::constraint;
    if (t == "olm.bundle.object") return K::bundle_object;
    if (t == "olm.csv.metadata") return K::csv_metadata;
    return K::other;
}

class FileReader final : public io::EventHandler {
public:
    FileReader(model::Catalog& part, const std::string& display, const ReadOptions& options)
        : part_(part), display_(display), options_(options) {}

    void set_yaml(bool yaml) { yaml_ = yaml; }
    // While set: a blob whose decoding opm fails (not an object, keys differing only in case, a
    // meta key that is not a string, a number JSON cannot hold) is reported as this error (the
    // JSON error Kubernetes' decoder reports when its YAML fallback fails too).
    void set_fallback_error(const Error* e) { fallback_error_ = e; }

    // --- driver interface ---

    // Drops the document being read (a YAML work-around re-reads it, or it failed).
    void abandon() {
        frames_.clear();
        in_value_ = false;
        value_depth_ = 0;
        pending_ = false;
        seen_document_ = false;
        blob_.clear();
    }
    // Whether a document started since the last begin_document().
    bool document_seen() const { return seen_document_; }
    // Whether the document read last has a collection (object or list) at its root.
    bool root_is_collection() const {
        return blob_.has_root && (blob_.root == VKind::object || blob_.root == VKind::array);
    }
    // A warning about the document read last, at its root.
    void note_at_root(std::string rule, std::string message) {
        model::CatalogFinding f;
        f.severity = model::Severity::warning;
        f.scope = model::Scope::catalog;
        f.rule = std::move(rule);
        f.message = std::move(message);
        f.pos = io::pos_of(display_, blob_.mark, blob_.doc);
        part_.notes.push_back(std::move(f));
    }
    void begin_document(int index) {
        abandon();
        blob_.doc = index;
    }
    // Adds the document read last (YAML: once its piece of text read without error).
    void commit_pending() {
        if (pending_) commit();
        pending_ = false;
    }

    void problem(model::Scope scope, std::string rule, std::string message, Mark m,
                 std::string package = {}, std::string channel = {}, std::string bundle = {}) {
        model::CatalogFinding f;
        f.scope = scope;
        f.rule = std::move(rule);
        f.package = std::move(package);
        f.channel = std::move(channel);
        f.bundle = std::move(bundle);
        f.message = std::move(message);
        f.pos = io::pos_of(display_, m, blob_.doc);
        add(std::move(f));
    }

    void problem_error(const Error& e, const char* rule) {
        model::CatalogFinding f;
        f.rule = rule;
        f.message = e.subject.empty() ? e.message : e.subject + ": " + e.message;
        f.pos = e.pos;
        add(std::move(f));
    }

    // At most kMaxProblems problems of a file are kept (a file of a million bad documents must
    // not take a million findings' memory); finish() says how many more there were.
    static constexpr std::size_t kMaxProblems = 1000;

    void finish() {
        if (suppressed_ == 0) return;
        model::CatalogFinding f;
        f.rule = "catalog.too-many-problems";
        f.message = std::to_string(suppressed_) + " more problem(s) in this file not shown";
        f.pos.file = display_;
        part_.problems.push_back(std::move(f));
    }

    void add(model::CatalogFinding&& f) {
        if (part_.problems.size() >= kMaxProblems) {
            ++suppressed_;
            return;
        }
        part_.problems.push_back(std::move(f));
    }

    // --- events ---

    void reset() override { abandon(); }

    void document_start(int index, Mark m) override {
        const int keep = index;
        frames_.clear();
        in_value_ = false;
        value_depth_ = 0;
        blob_.clear();
        blob_.doc = keep;
        blob_.mark = m;
        seen_document_ = true;
    }

    void document_end() override {
        if (yaml_)
            pending_ = true;
        else
            commit();
    }

    void mapping_start(Mark m) override {
        if (in_value_) {
            value_begin(VKind::object, m);
            return;
        }
        on_value(VKind::object, m, nullptr);
    }
    void sequence_start(Mark m) override {
        if (in_value_) {
            value_begin(VKind::array, m);
            return;
        }
        on_value(VKind::array, m, nullptr);
    }
    void mapping_end() override {
        if (in_value_) {
            value_end();
            return;
        }
        close();
    }
    void sequence_end() override {
        if (in_value_) {
            value_end();
            return;
        }
        close();
    }

    void key(const io::ScalarEvent& k) override {
        std::string_view text = k.text;
        if (yaml_) {
            std::string why;
            if (!yaml_key(k, key_scratch_, text, why) && !blob_.undecodable)
                blob_.undecodable.emplace(std::move(why), k.mark);
        }
        if (in_value_) {
            fan_.key(text, k.mark);
            return;
        }
        Frame& f = frames_.back();
        switch (f.ctx) {
        case Ctx::blob:
            blob_key(text);
            f.field = field_of(text, kBlobFields);
            if ((bit(f.field) & kCommonFields) == 0 && blob_.odd_keys.size() < kMaxOddKeys) {
                blob_.odd_keys.emplace_back(f.field, k.mark);
                if (f.field == F_none) blob_.unknown_text.emplace_back(text);
            }
            if (f.field == F_entries) {
                blob_.entry_list.clear();
                blob_.skips.clear();
            } else if (f.field == F_properties) {
                blob_.prop_list.clear();
            } else if (f.field == F_related_images) {
                blob_.image_list.clear();
            } else if (f.field == F_icon) {
                blob_.icon_data = FieldVal{};
                blob_.icon_mediatype = FieldVal{};
                blob_.icon_data_bad = false;
            }
            break;
        case Ctx::icon:
            f.field = field_of(text, kIconFields);
            break;
        case Ctx::entry:
            f.field = field_of(text, kEntryFields);
            break;
        case Ctx::reference:
            f.field = field_of(text, kRefFields);
            break;
        case Ctx::prop:
            f.field = field_of(text, kPropFields);
            break;
        case Ctx::image:
            f.field = field_of(text, kImageFields);
            break;
        default:
            break;
        }
    }

    void scalar(const io::ScalarEvent& ev) override {
        bool bad = false;
        const Scalar s = canonical(ev, yaml_, num_scratch_, bad);
        if (bad && !blob_.undecodable)
            blob_.undecodable.emplace(
                ev.binary ? "!!binary value is not valid base64"
                          : text::quote(ev.text) +
                                " is a number JSON cannot hold (quote it to make it a string)",
                ev.mark);
        if (in_value_) {
            value_scalar(s);
            return;
        }
        on_value(s.kind, s.mark, &s);
    }

private:
    struct Frame {
        Ctx ctx;
        std::uint8_t field = 0;
    };

    Str intern(std::string_view s) { return part_.strings.intern(s); }

    void set(FieldVal& f, VKind k, Mark m, const Scalar* s) {
        f.present = true;
        f.kind = k;
        f.mark = m;
        f.id = s != nullptr && k == VKind::string ? intern(s->text) : 0;
    }

    void push(Ctx c) { frames_.push_back(Frame{c, 0}); }

    // A container that is not read: skipped (its events still pass through the frames).
    void push_if_container(VKind k) {
        if (k == VKind::object || k == VKind::array) push(Ctx::skip);
    }

    void close() {
        if (frames_.empty()) return;
        const Ctx c = frames_.back().ctx;
        frames_.pop_back();
        if (c == Ctx::prop) finish_prop(blob_.prop_list.back());
    }

    // Top-level keys: two that differ only in case are an error (opm's Meta), the same key twice
    // is not (the last one wins).
    void blob_key(std::string_view key) {
        if (blob_.duplicate) return;
        auto [it, added] = blob_.keys.try_emplace(fold_key(key));
        if (added) {
            it->second.assign(key);
        } else if (it->second != key) {
            blob_.duplicate = "duplicate keys " + text::quote(it->second) + " and " +
                              text::quote(key) + " (keys are matched without regard to case)";
        }
    }

    // A value (scalar or the start of a collection) at the current place.
    void on_value(VKind k, Mark m, const Scalar* s) {
        if (frames_.empty()) { // the document's root
            blob_.has_root = true;
            blob_.root = k;
            blob_.mark = m;
            if (k == VKind::object)
                push(Ctx::blob);
            else
                push_if_container(k);
            return;
        }
        Frame& f = frames_.back();
        const std::uint8_t field = f.field;
        switch (f.ctx) {
        case Ctx::skip:
            push_if_container(k);
            return;
        case Ctx::blob:
            blob_value(field, k, m, s);
            return;
        case Ctx::icon:
            if (field == I_data) {
                set(blob_.icon_data, k, m, nullptr);
                if (k == VKind::string && !valid_base64(s->text)) blob_.icon_data_bad = true;
            } else if (field == I_mediatype) {
                set(blob_.icon_mediatype, k, m, s);
            }
            push_if_container(k);
            return;
        case Ctx::entries: {
            EntryS& e = blob_.entry_list.emplace_back();
            e.item = k;
            e.mark = m;
            if (k == VKind::object)
                push(Ctx::entry);
            else
                push_if_container(k);
            return;
        }
        case Ctx::entry: {
            EntryS& e = blob_.entry_list.back();
            switch (field) {
            case E_name:
                set(e.name, k, m, s);
                break;
            case E_replaces:
                set(e.replaces, k, m, s);
                break;
            case E_skip_range:
                set(e.skip_range, k, m, s);
                break;
            case E_message:
                set(e.message, k, m, s);
                break;
            case E_skips:
                set(e.skips, k, m, nullptr);
                e.skips_begin = static_cast<std::uint32_t>(blob_.skips.size());
                e.skips_count = 0;
                e.bad_skip.reset();
                if (k == VKind::array) {
                    push(Ctx::skips);
                    return;
                }
                break;
            case E_reference:
                set(e.reference, k, m, nullptr);
                e.ref_schema = FieldVal{};
                e.ref_name = FieldVal{};
                if (k == VKind::object) {
                    push(Ctx::reference);
                    return;
                }
                break;
            default:
                break;
            }
            push_if_container(k);
            return;
        }
        case Ctx::skips: {
            EntryS& e = blob_.entry_list.back();
            if (k == VKind::string || k == VKind::null) {
                blob_.skips.push_back(k == VKind::string ? intern(s->text) : 0);
                ++e.skips_count;
            } else if (!e.bad_skip) {
                e.bad_skip.emplace(k, m);
            }
            push_if_container(k);
            return;
        }
        case Ctx::reference: {
            EntryS& e = blob_.entry_list.back();
            if (field == R_schema)
                set(e.ref_schema, k, m, s);
            else if (field == R_name)
                set(e.ref_name, k, m, s);
            push_if_container(k);
            return;
        }
        case Ctx::props: {
            PropS& p = blob_.prop_list.emplace_back();
            p.item = k;
            p.mark = m;
            if (k == VKind::object)
                push(Ctx::prop);
            else
                push_if_container(k);
            return;
        }
        case Ctx::prop: {
            PropS& p = blob_.prop_list.back();
            if (field == P_type) {
                set(p.type, k, m, s);
                push_if_container(k);
            } else if (field == P_value) {
                start_value(p, m);
                if (s != nullptr)
                    value_scalar(*s);
                else
                    value_begin(k, m);
            } else {
                push_if_container(k);
            }
            return;
        }
        case Ctx::images: {
            ImageS& im = blob_.image_list.emplace_back();
            im.item = k;
            im.mark = m;
            if (k == VKind::object)
                push(Ctx::image);
            else
                push_if_container(k);
            return;
        }
        case Ctx::image: {
            ImageS& im = blob_.image_list.back();
            if (field == M_name)
                set(im.name, k, m, s);
            else if (field == M_image)
                set(im.image, k, m, s);
            push_if_container(k);
            return;
        }
        }
    }

    void blob_value(std::uint8_t field, VKind k, Mark m, const Scalar* s) {
        switch (field) {
        case F_schema:
            set(blob_.schema, k, m, s);
            break;
        case F_package:
            set(blob_.package, k, m, s);
            break;
        case F_name:
            set(blob_.name, k, m, s);
            break;
        case F_default_channel:
            set(blob_.default_channel, k, m, s);
            break;
        case F_description:
            set(blob_.description, k, m, s);
            break;
        case F_image:
            set(blob_.image, k, m, s);
            break;
        case F_icon:
            set(blob_.icon, k, m, nullptr);
            if (k == VKind::object) {
                push(Ctx::icon);
                return;
            }
            break;
        case F_entries:
            set(blob_.entries, k, m, nullptr);
            if (k == VKind::array) {
                push(Ctx::entries);
                return;
            }
            break;
        case F_properties:
            set(blob_.properties, k, m, nullptr);
            if (k == VKind::array) {
                push(Ctx::props);
                return;
            }
            break;
        case F_related_images:
            set(blob_.related_images, k, m, nullptr);
            if (k == VKind::array) {
                push(Ctx::images);
                return;
            }
            break;
        default:
            break;
        }
        push_if_container(k);
    }

    // --- property values ---

    // Whether the compact JSON of a property value of this kind is kept.
    bool keep_json(model::PropKind k) const {
        using K = model::PropKind;
        switch (k) {
        case K::package:
        case K::gvk:
        case K::gvk_required:
        case K::package_required:
        case K::bundle_object:
        case K::csv_metadata:
            return options_.keep_payloads;
        default:
            return true;
        }
    }

    // Sets the pipeline up for a value of the given type.
    void setup(std::string_view type) {
        const model::PropKind kind = prop_kind(type);
        fan_.clear();
        hasher_.reset();
        fan_.add(&hasher_);
        const Schema* schema = property_schema(type);
        const bool label =
            kind == model::PropKind::label || kind == model::PropKind::label_required;
        if (label) schema = label_schema();
        checker_.reset(schema, label);
        fan_.add(&checker_);
        json_.reset();
        if (keep_json(kind)) {
            json_.emplace();
            fan_.add(&*json_);
        }
    }

    void start_value(PropS& p, Mark m) {
        p.has_value = true;
        p.value_mark = m;
        p.mismatch.reset();
        p.recorded.reset();
        in_value_ = true;
        value_depth_ = 0;
        if (p.type.present && p.type.kind == VKind::string) {
            p.typed = true;
            setup(part_.strings[p.type.id]);
        } else {
            p.typed = false;
            fan_.clear();
            p.recorded = std::make_shared<Recorder>();
            fan_.add(p.recorded.get());
        }
    }

    void value_begin(VKind k, Mark m) {
        fan_.begin(k, m);
        ++value_depth_;
    }
    void value_end() {
        fan_.end();
        if (--value_depth_ == 0) finish_value();
    }
    void value_scalar(const Scalar& s) {
        fan_.scalar(s);
        if (value_depth_ == 0) finish_value();
    }

    // Collects what the pipeline made of the value just read.
    void finish_value() {
        in_value_ = false;
        PropS& p = blob_.prop_list.back();
        if (!p.typed) return; // recorded; read at the end of the property
        collect(p);
    }

    void collect(PropS& p) {
        p.out.value_bytes =
            static_cast<std::uint32_t>(std::min<std::uint64_t>(hasher_.bytes(), 0xffffffffu));
        p.out.digest = hasher_.digest();
        p.mismatch = checker_.mismatch();
        p.out.a = checker_.capture(0) ? intern(*checker_.capture(0)) : 0;
        p.out.b = checker_.capture(1) ? intern(*checker_.capture(1)) : 0;
        p.out.c = checker_.capture(2) ? intern(*checker_.capture(2)) : 0;
        p.out.json = json_ ? intern(json_->take()) : 0;
    }

    // The end of a property: a value read before its type is read again now.
    void finish_prop(PropS& p) {
        if (p.type.present && p.type.kind == VKind::string) {
            p.out.type = p.type.id;
            p.out.kind = prop_kind(part_.strings[p.type.id]);
        }
        if (p.recorded) {
            const std::shared_ptr<Recorder> rec = p.recorded;
            if (p.type.present && p.type.kind == VKind::string)
                setup(part_.strings[p.type.id]);
            else
                setup("");
            rec->replay(fan_);
            collect(p);
            p.recorded.reset();
        }
    }

    // --- committing a blob ---

    struct Scope {
        model::Scope scope;
        const char* schema;
        std::string package, channel, bundle;
    };

    void field_problem(const Scope& sc, const std::string& field, const char* want, VKind found,
                       Mark m) {
        problem(sc.scope, std::string(model::scope_name(sc.scope)) + ".field",
                std::string(sc.schema) + " field \"" + field + "\" must be " + want + ", not " +
                    vkind_name(found),
                m, sc.package, sc.channel, sc.bundle);
    }

    // A string field: its id, or 0 (with a problem) when it is something else.
    Str string_field(const Scope& sc, const FieldVal& f, const char* name) {
        if (!f.present || f.kind == VKind::null) return 0;
        if (f.kind != VKind::string) {
            field_problem(sc, name, "a string", f.kind, f.mark);
            return 0;
        }
        return f.id;
    }

    // A list field: whether its items are to be read.
    bool list_field(const Scope& sc, const FieldVal& f, const char* name) {
        if (!f.present || f.kind == VKind::null) return false;
        if (f.kind != VKind::array) {
            field_problem(sc, name, "a list", f.kind, f.mark);
            return false;
        }
        return true;
    }

    // An object item of a list: whether it is one (null is an empty one).
    bool object_item(const Scope& sc, VKind item, Mark m, const char* name) {
        if (item == VKind::object || item == VKind::null) return true;
        field_problem(sc, name, "an object", item, m);
        return false;
    }

    model::Pos pos(Mark m) const { return model::Pos{1, m.line, m.column, blob_.doc}; }

    std::string text(const FieldVal& f) const {
        return f.kind == VKind::string ? std::string(part_.strings[f.id]) : std::string();
    }

    // The properties of the blob; problems only for bundles (opm parses no others).
    std::pair<std::uint32_t, std::uint32_t> commit_props(const Scope& sc, bool bundle) {
        const auto begin = static_cast<std::uint32_t>(part_.properties.size());
        if (!list_field(sc, blob_.properties, "properties")) return {begin, 0};
        for (std::size_t i = 0; i < blob_.prop_list.size(); ++i) {
            PropS& p = blob_.prop_list[i];
            if (!object_item(sc, p.item, p.mark, "properties[]")) continue;
            if (p.type.present && p.type.kind != VKind::string && p.type.kind != VKind::null) {
                field_problem(sc, "properties[].type", "a string", p.type.kind, p.type.mark);
                continue;
            }
            const std::string type = text(p.type);
            const std::string label =
                "property[" + std::to_string(i) + "]" + (type.empty() ? std::string() : " " + type);
            if (!p.has_value) {
                if (bundle) {
                    problem(sc.scope, "bundle.property", label + " has no value", p.mark,
                            sc.package, sc.channel, sc.bundle);
                    continue;
                }
            } else if (p.mismatch) {
                if (bundle) {
                    const Mismatch& mm = *p.mismatch;
                    std::string msg =
                        label + ": " +
                        (mm.path.empty() ? std::string("value") : text::quote(mm.path));
                    msg += mm.found.empty() ? " is not valid base64"
                                            : " must be " + mm.want + ", not " + mm.found;
                    problem(sc.scope, "bundle.property", msg, mm.mark, sc.package, sc.channel,
                            sc.bundle);
                    continue;
                }
                // Not decoded by opm: kept as an untyped property.
                p.out.kind = model::PropKind::other;
                p.out.a = p.out.b = p.out.c = 0;
            }
            part_.properties.push_back(p.out);
        }
        return {begin, static_cast<std::uint32_t>(part_.properties.size()) - begin};
    }

    // A blob-level decoding problem, or the fallback error in its place.
    void blob_problem(std::string message, Mark m) {
        if (fallback_error_ != nullptr)
            problem_error(*fallback_error_, "catalog.parse");
        else
            problem(model::Scope::catalog, "catalog.blob", std::move(message), m);
    }

    void commit() {
        Blob& b = blob_;
        if (!b.has_root || b.root == VKind::null) {
            problem(model::Scope::catalog, "catalog.blob", "blob has no \"schema\" field", b.mark);
            return;
        }
        if (b.root != VKind::object) {
            blob_problem(std::string("a catalog blob must be an object, not ") + vkind_name(b.root),
                         b.mark);
            return;
        }
        if (b.duplicate) {
            blob_problem(*b.duplicate, b.mark);
            return;
        }
        if (b.undecodable) {
            blob_problem(b.undecodable->first, b.undecodable->second);
            return;
        }
        for (auto [f, name] : {std::pair<const FieldVal*, const char*>{&b.schema, "schema"},
                               {&b.package, "package"},
                               {&b.name, "name"}}) {
            if (f->present && f->kind != VKind::string) {
                blob_problem(std::string("\"") + name + "\" must be a string, not " +
                                 vkind_name(f->kind),
                             f->mark);
                return;
            }
        }
        if (!b.schema.present || b.schema.id == 0) {
            problem(model::Scope::catalog, "catalog.blob", "blob has no \"schema\" field", b.mark);
            return;
        }
        const std::string_view schema = part_.strings[b.schema.id];
        unknown_fields(schema);
        if (schema == "olm.package")
            commit_package();
        else if (schema == "olm.channel")
            commit_channel();
        else if (schema == "olm.bundle")
            commit_bundle();
        else if (schema == "olm.deprecations")
            commit_deprecations();
        else
            part_.others.push_back(model::Other{b.schema.id, b.package.id, b.name.id, pos(b.mark)});
    }

    // A top-level key that is no field of the blob's (known) schema: opm ignores it, and so does
    // kpkg, but a misspelt "defaultChannel" changes what the catalog says; validate warns.
    static constexpr std::size_t kMaxOddKeys = 16;
    void unknown_fields(std::string_view schema) {
        const Blob& b = blob_;
        if (b.odd_keys.empty()) return;
        std::uint32_t allowed = 0;
        model::Scope scope = model::Scope::package;
        if (schema == "olm.package")
            allowed = kPackageFields;
        else if (schema == "olm.channel")
            allowed = kChannelFields, scope = model::Scope::channel;
        else if (schema == "olm.bundle")
            allowed = kBundleFields, scope = model::Scope::bundle;
        else if (schema == "olm.deprecations")
            allowed = kDeprecationFields, scope = model::Scope::deprecation;
        else
            return;
        std::vector<std::string> fields;
        for (std::uint8_t f = 1; f < std::size(kBlobFields); ++f)
            if (allowed & bit(f)) fields.emplace_back(kBlobFields[f]);
        const std::string name =
            scope == model::Scope::deprecation ? text(b.package) : text(b.name);
        std::size_t unknown = 0;
        for (auto [field, mark] : b.odd_keys) {
            if (allowed & bit(field)) continue;
            const std::string key =
                field == F_none ? b.unknown_text[unknown++] : std::string(kBlobFields[field]);
            std::string msg = std::string(schema) + (name.empty() ? "" : " " + text::quote(name)) +
                              " has unknown field " + text::quote(key) +
                              " (opm ignores it; the fields of " + std::string(schema) + " are " +
                              text::join(fields, ", ") + ")";
            if (auto c = text::closest(key, fields))
                msg += "; did you mean " + text::quote(*c) + "?";
            model::CatalogFinding f;
            f.severity = model::Severity::warning;
            f.scope = scope;
            f.rule = "catalog.unknown-field";
            f.package = scope == model::Scope::package || scope == model::Scope::deprecation
                            ? name
                            : text(b.package);
            if (scope == model::Scope::channel) f.channel = name;
            if (scope == model::Scope::bundle) f.bundle = name;
            f.message = std::move(msg);
            f.pos = io::pos_of(display_, mark, b.doc);
            part_.notes.push_back(std::move(f));
        }
    }

    void commit_package() {
        Blob& b = blob_;
        Scope sc{model::Scope::package, "olm.package", text(b.name), {}, {}};
        model::Package p;
        p.name = b.name.id;
        p.default_channel = string_field(sc, b.default_channel, "defaultChannel");
        p.description = string_field(sc, b.description, "description");
        if (b.icon.present && b.icon.kind != VKind::null && b.icon.kind != VKind::object)
            field_problem(sc, "icon", "an object", b.icon.kind, b.icon.mark);
        if (b.icon.present && b.icon.kind == VKind::object) {
            const FieldVal& d = b.icon_data;
            if (d.present && d.kind != VKind::string && d.kind != VKind::null)
                field_problem(sc, "icon.base64data", "base64 data (a string)", d.kind, d.mark);
            else if (b.icon_data_bad)
                problem(sc.scope, "package.field",
                        "olm.package field \"icon.base64data\" is not valid base64", d.mark,
                        sc.package);
            string_field(sc, b.icon_mediatype, "icon.mediatype");
        }
        auto [pb, pc] = commit_props(sc, false);
        p.props_begin = pb;
        p.props_count = pc;
        p.pos = pos(b.mark);
        part_.packages.push_back(p);
    }

    void commit_channel() {
        Blob& b = blob_;
        Scope sc{model::Scope::channel, "olm.channel", text(b.package), text(b.name), {}};
        model::Channel c;
        c.package = b.package.id;
        c.name = b.name.id;
        c.pos = pos(b.mark);
        c.entries_begin = static_cast<std::uint32_t>(part_.entries.size());
        if (list_field(sc, b.entries, "entries")) {
            for (EntryS& e : b.entry_list) {
                if (!object_item(sc, e.item, e.mark, "entries[]")) continue;
                model::Entry me;
                me.name = string_field(sc, e.name, "entries[].name");
                me.replaces = string_field(sc, e.replaces, "entries[].replaces");
                me.skip_range = string_field(sc, e.skip_range, "entries[].skipRange");
                me.skips_begin = static_cast<std::uint32_t>(part_.skips.size());
                if (e.skips.present && e.skips.kind != VKind::null &&
                    e.skips.kind != VKind::array) {
                    field_problem(sc, "entries[].skips", "a list of strings", e.skips.kind,
                                  e.skips.mark);
                } else if (e.bad_skip) {
                    field_problem(sc, "entries[].skips[]", "a string", e.bad_skip->first,
                                  e.bad_skip->second);
                } else if (e.skips.kind == VKind::array) {
                    part_.skips.insert(part_.skips.end(), b.skips.begin() + e.skips_begin,
                                       b.skips.begin() + e.skips_begin + e.skips_count);
                    me.skips_count = e.skips_count;
                }
                me.pos = pos(e.mark);
                part_.entries.push_back(me);
            }
        }
        c.entries_count = static_cast<std::uint32_t>(part_.entries.size()) - c.entries_begin;
        auto [pb, pc] = commit_props(sc, false);
        c.props_begin = pb;
        c.props_count = pc;
        part_.channels.push_back(c);
    }

    void commit_bundle() {
        Blob& b = blob_;
        Scope sc{model::Scope::bundle, "olm.bundle", text(b.package), {}, text(b.name)};
        model::Bundle out;
        out.package = b.package.id;
        out.name = b.name.id;
        out.image = string_field(sc, b.image, "image");
        out.pos = pos(b.mark);
        auto [pb, pc] = commit_props(sc, true);
        out.props_begin = pb;
        out.props_count = pc;
        int n = 0;
        for (std::uint32_t i = pb; i < pb + pc; ++i)
            if (part_.properties[i].kind == model::PropKind::package) {
                ++n;
                out.version = part_.properties[i].b;
            }
        if (n != 1) out.version = 0;
        out.images_begin = static_cast<std::uint32_t>(part_.related_images.size());
        if (list_field(sc, b.related_images, "relatedImages")) {
            for (ImageS& im : b.image_list) {
                if (!object_item(sc, im.item, im.mark, "relatedImages[]")) continue;
                model::RelatedImage ri;
                ri.name = string_field(sc, im.name, "relatedImages[].name");
                ri.image = string_field(sc, im.image, "relatedImages[].image");
                part_.related_images.push_back(ri);
            }
        }
        out.images_count =
            static_cast<std::uint32_t>(part_.related_images.size()) - out.images_begin;
        part_.bundles.push_back(out);
    }

    void commit_deprecations() {
        Blob& b = blob_;
        Scope sc{model::Scope::deprecation, "olm.deprecations", text(b.package), {}, {}};
        model::Deprecation d;
        d.package = b.package.id;
        d.pos = pos(b.mark);
        d.entries_begin = static_cast<std::uint32_t>(part_.deprecation_entries.size());
        if (list_field(sc, b.entries, "entries")) {
            for (EntryS& e : b.entry_list) {
                if (!object_item(sc, e.item, e.mark, "entries[]")) continue;
                model::DeprecationEntry de;
                if (e.reference.present && e.reference.kind != VKind::null &&
                    e.reference.kind != VKind::object) {
                    field_problem(sc, "entries[].reference", "an object", e.reference.kind,
                                  e.reference.mark);
                } else {
                    de.schema = string_field(sc, e.ref_schema, "entries[].reference.schema");
                    de.name = string_field(sc, e.ref_name, "entries[].reference.name");
                }
                de.message = string_field(sc, e.message, "entries[].message");
                de.pos = pos(e.mark);
                part_.deprecation_entries.push_back(de);
            }
        }
        d.entries_count =
            static_cast<std::uint32_t>(part_.deprecation_entries.size()) - d.entries_begin;
        part_.deprecations.push_back(d);
    }

    model::Catalog& part_;
    const std::string& display_;
    const ReadOptions& options_;
    bool yaml_ = false;
    std::size_t suppressed_ = 0;
    const Error* fallback_error_ = nullptr;
    bool pending_ = false;
    bool seen_document_ = false;
    std::vector<Frame> frames_;
    Blob blob_;
    std::string num_scratch_, key_scratch_;
    // The pipeline a property value goes through.
    bool in_value_ = false;
    int value_depth_ = 0;
    Fanout fan_;
    Hasher hasher_;
    Checker checker_;
    std::optional<JsonWriter> json_;
};

// --- the file: JSON or YAML, and YAML cut into documents (fbc_text.hpp) ----------------------

// Reads the YAML documents of text[from, end). `json_error` is the error of the JSON read that
// gave up at `from`: reported instead of the YAML error when the first document fails too.
void read_yaml(std::string_view text, TextPlace from, int first_doc, const std::string& display,
               FileReader& r, const ReadOptions& options, const Error* json_error) {
    r.set_yaml(true);
    const YamlSplit split = split_yaml(text, from.offset, from.line);
    int doc = first_doc;
    bool first = true;
    for (const YamlDoc& d : split.docs) {
        io::YamlEventOptions yo;
        yo.line_offset = d.line - 1;
        yo.document_offset = doc;
        yo.first_document_only = true;
        r.begin_document(doc);
        r.set_fallback_error(first ? json_error : nullptr);
        auto res = io::read_yaml_events(text.substr(d.begin, d.end - d.begin), display, r,
                                        options.limits, yo);
        if (!res.ok()) {
            r.abandon();
            r.problem_error(first && json_error != nullptr ? *json_error : res.error(),
                            "catalog.parse");
            return;
        }
        if (!r.document_seen()) {
            // Only comments, blank lines or a "---" line: opm reads it as an empty blob.
            r.problem(model::Scope::catalog, "catalog.blob", empty_document_message(d.marker),
                      io::Mark{d.marker ? d.line - 1 : d.line, 1});
        } else {
            // What yaml.v2 leaves unread after a flow collection: the warning render gives.
            const std::string_view span = text.substr(d.begin, d.end - d.begin);
            if (r.root_is_collection() && goes_on_after_root(span, options.limits))
                r.note_at_root("catalog.ignored-text", goes_on_after_root_message());
            r.commit_pending();
        }
        r.set_fallback_error(nullptr);
        first = false;
        ++doc;
    }
    if (split.error) {
        if (first && json_error != nullptr) {
            r.problem_error(*json_error, "catalog.parse");
            return;
        }
        r.problem(model::Scope::catalog, "catalog.parse", split.error->message,
                  io::Mark{split.error->line, 1});
    }
}

} // namespace

namespace {

void read_file(std::string_view text, const std::string& display, FileReader& r,
               const ReadOptions& options) {
    if (!looks_like_json(text)) {
        read_yaml(text, TextPlace{}, 0, display, r, options, nullptr);
        return;
    }
    r.set_yaml(false);
    io::detail::JsonReader<FileReader> json(text, display, options.limits, r);
    bool ok = false;
    try {
        ok = json.run();
    } catch (const Exception& e) {
        r.abandon();
        r.problem_error(e.error(), "catalog.parse");
        return;
    }
    if (ok) return;
    const io::JsonProgress pr = json.progress();
    r.abandon();
    if (json_falls_back(pr.values)) {
        // Kubernetes' decoder gives up on JSON and reads the rest as YAML.
        const Error err = json.error();
        read_yaml(text, yaml_fallback_start(text, pr.values, pr.value_end), pr.values, display, r,
                  options, &err);
        return;
    }
    r.problem_error(json.error(), "catalog.parse");
}

} // namespace

void read_blobs(std::string_view text, const std::string& display, model::Catalog& part,
                const ReadOptions& options) {
    FileReader r(part, display, options);
    read_file(text, display, r, options);
    r.finish();
}

} // namespace kpkg::catalog::detail
