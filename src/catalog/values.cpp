#include "values.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

#include "kpkg/io/go.hpp"
#include "kpkg/io/scalars.hpp"
#include "render_blob.hpp"

namespace kpkg::catalog::detail {

const char* vkind_name(VKind k) {
    switch (k) {
    case VKind::null:
        return "null";
    case VKind::boolean:
        return "boolean";
    case VKind::number:
        return "number";
    case VKind::string:
        return "string";
    case VKind::object:
        return "object";
    case VKind::array:
        return "list";
    }
    return "?";
}

namespace {

// --- numbers -----------------------------------------------------------------------------------

// strtod on a string_view; false when it is not finite.
bool to_double(std::string_view s, double& out) {
    std::string tmp(s);
    char* end = nullptr;
    out = std::strtod(tmp.c_str(), &end);
    return std::isfinite(out);
}

enum class Plain { null, yes, no, number, nonfinite, string };

// A plain YAML scalar as yaml.v2 types it (YAML 1.1); for numbers, `value`.
Plain resolve_yaml11(std::string_view s, double& value) {
    const io::go::Scalar go = io::go::resolve(s);
    switch (go.type) {
    case io::go::Type::null:
        return Plain::null;
    case io::go::Type::boolean:
        return go.b ? Plain::yes : Plain::no;
    case io::go::Type::int64:
        value = static_cast<double>(go.i);
        return Plain::number;
    case io::go::Type::uint64:
        value = static_cast<double>(go.u);
        return Plain::number;
    case io::go::Type::float64:
        if (!std::isfinite(go.f)) return Plain::nonfinite;
        value = go.f;
        return Plain::number;
    case io::go::Type::string:
    case io::go::Type::timestamp:
        break;
    }
    return Plain::string;
}

// An explicitly tagged YAML number (!!int, !!float): YAML 1.2 forms.
bool tagged_number(std::string_view s, double& value) {
    if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "-.inf" || s == ".nan" ||
        s == ".NaN" || s == ".NAN")
        return false;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
        if (auto i = io::go::parse_int(s)) {
            value = static_cast<double>(*i);
            return true;
        }
        // Past 64 bits: the value as a float64.
        const int base = s[1] == 'x' ? 16 : 8;
        double v = 0;
        for (const char c : s.substr(2)) {
            const char l = static_cast<char>(c | 0x20);
            const int d = c >= '0' && c <= '9' ? c - '0' : l >= 'a' && l <= 'f' ? l - 'a' + 10 : 99;
            if (d >= base) return false;
            v = v * base + d;
        }
        value = v;
        return true;
    }
    // YAML 1.2 has no 0-prefixed octal: "017" is decimal here.
    const bool octal = s.size() > 1 && s[0] == '0';
    if (!octal && s.find_first_of(".eE") == std::string_view::npos) {
        if (auto i = io::go::parse_int(s)) {
            value = static_cast<double>(*i);
            return true;
        }
    }
    return to_double(s, value);
}

// --- hashing -----------------------------------------------------------------------------------

constexpr std::uint64_t P1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t P2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t P3 = 0x165667B19E3779F9ULL;

std::uint64_t rotl(std::uint64_t x, int r) {
    return (x << r) | (x >> (64 - r));
}

std::uint64_t fmix(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

constexpr std::uint64_t kSeedNull = 0x6e756c6cULL, kSeedBool = 0x626f6f6cULL,
                        kSeedNumber = 0x6e756d62ULL, kSeedString = 0x73747269ULL,
                        kSeedKey = 0x6b657973ULL, kTagObject = 0x6f626a65637473ULL,
                        kTagArray = 0x6172726179ULL;

std::uint64_t seed_of(VKind k) {
    switch (k) {
    case VKind::null:
        return kSeedNull;
    case VKind::boolean:
        return kSeedBool;
    case VKind::number:
        return kSeedNumber;
    default:
        return kSeedString;
    }
}

} // namespace

std::uint64_t hash_bytes(std::string_view s, std::uint64_t seed) {
    const char* p = s.data();
    std::size_t n = s.size();
    std::uint64_t h = seed ^ (static_cast<std::uint64_t>(n) * P1);
    while (n >= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        h ^= rotl(w * P2, 31) * P1;
        h = rotl(h, 27) * P1 + P3;
        p += 8;
        n -= 8;
    }
    std::uint64_t w = 0;
    if (n > 0) std::memcpy(&w, p, n); // (an empty view may have no data pointer at all)
    h ^= rotl((w + n) * P2, 31) * P1;
    return fmix(h);
}

// --- strings -----------------------------------------------------------------------------------

bool fold_equal(std::string_view key, std::string_view name) {
    std::size_t i = 0, j = 0;
    while (i < key.size() && j < name.size()) {
        const auto c = static_cast<unsigned char>(key[i]);
        char folded;
        if (c < 0x80) {
            folded = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
            ++i;
        } else if (key.substr(i, 2) == "\xC5\xBF") { // U+017F LATIN SMALL LETTER LONG S
            folded = 's';
            i += 2;
        } else if (key.substr(i, 3) == "\xE2\x84\xAA") { // U+212A KELVIN SIGN
            folded = 'k';
            i += 3;
        } else {
            return false;
        }
        const char n = name[j] >= 'A' && name[j] <= 'Z' ? static_cast<char>(name[j] + 32) : name[j];
        if (folded != n) return false;
        ++j;
    }
    return i == key.size() && j == name.size();
}

std::string fold_key(std::string_view key) {
    std::string out;
    out.reserve(key.size());
    for (std::size_t i = 0; i < key.size();) {
        const auto c = static_cast<unsigned char>(key[i]);
        if (c >= 'A' && c <= 'Z') {
            out += static_cast<char>(c + 32);
            ++i;
        } else if (key.substr(i, 2) == "\xC5\xBF") {
            out += 's';
            i += 2;
        } else if (key.substr(i, 3) == "\xE2\x84\xAA") {
            out += 'k';
            i += 3;
        } else {
            out += static_cast<char>(c);
            ++i;
        }
    }
    return out;
}

bool valid_base64(std::string_view s) {
    std::size_t at = 0;
    return io::go::decode_base64(s, nullptr, at);
}

// --- scalars -----------------------------------------------------------------------------------

Scalar canonical(const io::ScalarEvent& ev, bool yaml, std::string& scratch, bool& bad) {
    Scalar s;
    s.mark = ev.mark;
    s.text = ev.text;
    auto number = [&](double v) {
        scratch.clear();
        io::go::append_float(scratch, v);
        s.kind = VKind::number;
        s.text = scratch;
    };
    auto nonfinite = [&] {
        bad = true;
        s.kind = VKind::string;
    };
    if (yaml && ev.binary) {
        // yaml.v2 decodes the base64 into the string's bytes.
        scratch.clear();
        std::size_t at = 0;
        s.kind = VKind::string;
        if (io::go::decode_base64(ev.text, &scratch, at))
            s.text = scratch;
        else
            bad = true;
        return s;
    }
    if (yaml && ev.plain) {
        double v = 0;
        switch (resolve_yaml11(ev.text, v)) {
        case Plain::null:
            s.kind = VKind::null;
            s.text = "null";
            break;
        case Plain::yes:
            s.kind = VKind::boolean;
            s.text = "true";
            break;
        case Plain::no:
            s.kind = VKind::boolean;
            s.text = "false";
            break;
        case Plain::number:
            number(v);
            break;
        case Plain::nonfinite:
            nonfinite();
            break;
        case Plain::string:
            s.kind = VKind::string;
            break;
        }
        return s;
    }
    switch (ev.kind) {
    case io::Kind::string:
        s.kind = VKind::string;
        break;
    case io::Kind::null:
        s.kind = VKind::null;
        s.text = "null";
        break;
    case io::Kind::boolean: {
        const bool t = !ev.text.empty() && (ev.text[0] == 't' || ev.text[0] == 'T');
        s.kind = VKind::boolean;
        s.text = t ? "true" : "false";
        break;
    }
    case io::Kind::integer:
    case io::Kind::floating: {
        double v = 0;
        if (yaml ? tagged_number(ev.text, v) : to_double(ev.text, v))
            number(v);
        else
            nonfinite();
        break;
    }
    default:
        s.kind = VKind::string;
    }
    return s;
}

// --- keys --------------------------------------------------------------------------------------

namespace {

std::size_t utf8_chars(std::string_view s) {
    std::size_t n = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    return n;
}

} // namespace

bool yaml_key(const io::ScalarEvent& k, std::string& scratch, std::string_view& out,
              std::string& why) {
    out = k.text;
    // yaml.v2 gives up looking for the ':' of a key that starts more than 1024 characters
    // before it (quotes included).
    if (!k.empty && utf8_chars(k.text) + (k.plain ? 0 : 2) > 1024) {
        why = "mapping key longer than 1024 characters (\"" + std::string(k.text.substr(0, 40)) +
              "...\"): opm's YAML reader (yaml.v2) cannot read it";
        return false;
    }
    if (!k.plain) return true;
    const io::go::Scalar g = io::go::resolve(k.text);
    switch (g.type) {
    case io::go::Type::string:
    case io::go::Type::timestamp:
        return true;
    case io::go::Type::null:
        why = "a null mapping key (\"" + std::string(k.text) +
              "\"): opm cannot turn it into a JSON key (quote it to make it a string)";
        return false;
    case io::go::Type::boolean:
        out = g.b ? "true" : "false";
        return true;
    case io::go::Type::int64:
        scratch = std::to_string(g.i);
        out = scratch;
        return true;
    case io::go::Type::uint64:
        why = "mapping key " + std::string(k.text) +
              " is an integer only an unsigned 64-bit number holds: opm cannot turn it into a "
              "JSON key (quote it to make it a string)";
        return false;
    case io::go::Type::float64:
        if (std::isnan(g.f)) {
            out = ".nan";
        } else if (std::isinf(g.f)) {
            out = g.f < 0 ? "-.inf" : ".inf";
        } else {
            scratch.clear();
            io::go::append_float_g(scratch, g.f, 32);
            out = scratch;
        }
        return true;
    }
    return true;
}

// --- Hasher ------------------------------------------------------------------------------------

void Hasher::value(std::uint64_t h, std::uint64_t size) {
    if (frames_.empty()) {
        digest_ = h;
        bytes_ = size;
        done_ = true;
        return;
    }
    Frame& f = frames_.back();
    if (f.object)
        f.acc += fmix(f.key_hash * P1 + h); // order-independent
    else
        f.acc = fmix(f.acc * P2 + h + P3); // ordered
    ++f.count;
    f.size += size;
}

void Hasher::begin(VKind k, io::Mark) {
    Frame f;
    f.object = k == VKind::object;
    frames_.push_back(f);
}

void Hasher::end() {
    const Frame f = frames_.back();
    frames_.pop_back();
    const std::uint64_t size = 2 + f.size + (f.count > 1 ? f.count - 1 : 0);
    const std::uint64_t h = fmix(f.acc ^ (f.object ? kTagObject : kTagArray) ^ (f.count * P3));
    value(h, size);
}

void Hasher::key(std::string_view k, io::Mark) {
    Frame& f = frames_.back();
    f.key_hash = hash_bytes(k, kSeedKey);
    f.size += io::go::string_size(k) + 1;
}

void Hasher::scalar(const Scalar& s) {
    const std::uint64_t size =
        s.kind == VKind::string ? io::go::string_size(s.text) : s.text.size();
    value(hash_bytes(s.text, seed_of(s.kind)), size);
}

// --- JsonWriter --------------------------------------------------------------------------------

std::uint32_t JsonWriter::add(Node n) {
    nodes_.push_back(std::move(n));
    return static_cast<std::uint32_t>(nodes_.size() - 1);
}

void JsonWriter::attach(std::uint32_t id) {
    if (stack_.empty()) {
        done_ = true;
        return;
    }
    Node& parent = nodes_[stack_.back()];
    if (parent.kind == VKind::object)
        parent.members.emplace_back(std::move(keys_.back()), id);
    else
        parent.items.push_back(id);
}

void JsonWriter::begin(VKind k, io::Mark) {
    Node n;
    n.kind = k;
    const std::uint32_t id = add(std::move(n));
    stack_.push_back(id);
    keys_.emplace_back();
}

void JsonWriter::end() {
    const std::uint32_t id = stack_.back();
    stack_.pop_back();
    keys_.pop_back();
    attach(id);
}

void JsonWriter::key(std::string_view k, io::Mark) {
    keys_.back().assign(k);
}

void JsonWriter::scalar(const Scalar& s) {
    Node n;
    n.kind = s.kind;
    n.text.assign(s.text);
    attach(add(std::move(n)));
}

void JsonWriter::write(std::string& out, std::uint32_t id) const {
    const Node& n = nodes_[id];
    switch (n.kind) {
    case VKind::string:
        io::go::append_string(out, n.text, false);
        return;
    case VKind::object: {
        std::vector<std::size_t> order(n.members.size());
        for (std::size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return n.members[a].first < n.members[b].first;
        });
        out += '{';
        bool first = true;
        for (std::size_t i = 0; i < order.size(); ++i) {
            // Duplicate keys: the last one read wins.
            if (i + 1 < order.size() && n.members[order[i]].first == n.members[order[i + 1]].first)
                continue;
            if (!first) out += ',';
            first = false;
            io::go::append_string(out, n.members[order[i]].first, false);
            out += ':';
            write(out, n.members[order[i]].second);
        }
        out += '}';
        return;
    }
    case VKind::array:
        out += '[';
        for (std::size_t i = 0; i < n.items.size(); ++i) {
            if (i > 0) out += ',';
            write(out, n.items[i]);
        }
        out += ']';
        return;
    default:
        out += n.text;
    }
}

std::string JsonWriter::take() {
    std::string out;
    if (!nodes_.empty()) write(out, 0);
    return out;
}

// --- Recorder ----------------------------------------------------------------------------------

void Recorder::begin(VKind k, io::Mark m) {
    events_.push_back(Ev{0, k, m, {}});
    ++depth_;
}

void Recorder::end() {
    events_.push_back(Ev{1, VKind::null, {}, {}});
    if (--depth_ == 0) done_ = true;
}

void Recorder::key(std::string_view k, io::Mark m) {
    events_.push_back(Ev{2, VKind::string, m, std::string(k)});
}

void Recorder::scalar(const Scalar& s) {
    events_.push_back(Ev{3, s.kind, s.mark, std::string(s.text)});
    if (depth_ == 0) done_ = true;
}

void Recorder::replay(ValueSink& to) const {
    for (const Ev& e : events_) {
        switch (e.type) {
        case 0:
            to.begin(e.kind, e.mark);
            break;
        case 1:
            to.end();
            break;
        case 2:
            to.key(e.text, e.mark);
            break;
        default: {
            Scalar s;
            s.kind = e.kind;
            s.text = e.text;
            s.mark = e.mark;
            to.scalar(s);
        }
        }
    }
}

// --- schemas -----------------------------------------------------------------------------------

namespace {

constexpr Schema kString{SchemaKind::string};
constexpr Schema kBool{SchemaKind::boolean};
constexpr Schema kBytes{SchemaKind::bytes};
constexpr Schema kStringMap{SchemaKind::string_map};
constexpr Schema kStringList{SchemaKind::array, nullptr, 0, &kString};

template <std::size_t N>
constexpr Schema object(const SchemaField (&f)[N]) {
    return Schema{SchemaKind::object, f, N, nullptr};
}
constexpr Schema list(const Schema& item) {
    return Schema{SchemaKind::array, nullptr, 0, &item};
}

// alpha/property: Package, GVK, GVKRequired, PackageRequired, BundleObject, Channel.
constexpr SchemaField kPackageFields[] = {
    {"packageName", &kString, 0}, {"version", &kString, 1}, {"release", &kString, 2}};
constexpr Schema kPackage = object(kPackageFields);
constexpr SchemaField kGvkFields[] = {
    {"group", &kString, 0}, {"version", &kString, 1}, {"kind", &kString, 2}};
constexpr Schema kGvk = object(kGvkFields);
constexpr SchemaField kPackageRequiredFields[] = {{"packageName", &kString, 0},
                                                  {"versionRange", &kString, 1}};
constexpr Schema kPackageRequired = object(kPackageRequiredFields);
constexpr SchemaField kBundleObjectFields[] = {{"data", &kBytes, -1}};
constexpr Schema kBundleObject = object(kBundleObjectFields);
constexpr SchemaField kChannelFields[] = {{"channelName", &kString, 0}};
constexpr Schema kChannel = object(kChannelFields);
constexpr SchemaField kLabelFields[] = {{"label", &kString, 0}};
constexpr Schema kLabel = object(kLabelFields);

// CSVMetadata and the operator-framework/api types it holds.
constexpr SchemaField kApiServiceFields[] = {
    {"name", &kString, -1}, {"group", &kString, -1},       {"version", &kString, -1},
    {"kind", &kString, -1}, {"displayName", &kString, -1}, {"description", &kString, -1}};
constexpr Schema kApiService = object(kApiServiceFields);
constexpr Schema kApiServiceList = list(kApiService);
constexpr SchemaField kApiServiceDefsFields[] = {{"owned", &kApiServiceList, -1},
                                                 {"required", &kApiServiceList, -1}};
constexpr Schema kApiServiceDefs = object(kApiServiceDefsFields);
constexpr SchemaField kCrdFields[] = {{"name", &kString, -1},
                                      {"version", &kString, -1},
                                      {"kind", &kString, -1},
                                      {"displayName", &kString, -1},
                                      {"description", &kString, -1}};
constexpr Schema kCrd = object(kCrdFields);
constexpr Schema kCrdList = list(kCrd);
constexpr SchemaField kCrdDefsFields[] = {{"owned", &kCrdList, -1}, {"required", &kCrdList, -1}};
constexpr Schema kCrdDefs = object(kCrdDefsFields);
constexpr SchemaField kInstallModeFields[] = {{"type", &kString, -1}, {"supported", &kBool, -1}};
constexpr Schema kInstallMode = object(kInstallModeFields);
constexpr Schema kInstallModeList = list(kInstallMode);
constexpr SchemaField kAppLinkFields[] = {{"name", &kString, -1}, {"url", &kString, -1}};
constexpr Schema kAppLink = object(kAppLinkFields);
constexpr Schema kAppLinkList = list(kAppLink);
constexpr SchemaField kMaintainerFields[] = {{"name", &kString, -1}, {"email", &kString, -1}};
constexpr Schema kMaintainer = object(kMaintainerFields);
constexpr Schema kMaintainerList = list(kMaintainer);
constexpr Schema kGvkList = list(kGvk);
constexpr SchemaField kCsvMetadataFields[] = {
    {"annotations", &kStringMap, -1},   {"apiServiceDefinitions", &kApiServiceDefs, -1},
    {"crdDescriptions", &kCrdDefs, -1}, {"description", &kString, -1},
    {"displayName", &kString, -1},      {"installModes", &kInstallModeList, -1},
    {"keywords", &kStringList, -1},     {"labels", &kStringMap, -1},
    {"links", &kAppLinkList, -1},       {"maintainers", &kMaintainerList, -1},
    {"maturity", &kString, -1},         {"minKubeVersion", &kString, -1},
    {"nativeAPIs", &kGvkList, -1},      {"provider", &kAppLink, -1}};
constexpr Schema kCsvMetadata = object(kCsvMetadataFields);

const char* want_of(const Schema* s) {
    switch (s->kind) {
    case SchemaKind::string:
        return "a string";
    case SchemaKind::boolean:
        return "a boolean";
    case SchemaKind::bytes:
        return "base64 data (a string)";
    case SchemaKind::object:
    case SchemaKind::string_map:
        return "an object";
    case SchemaKind::array:
        return "a list";
    case SchemaKind::any:
        break;
    }
    return "a value";
}

} // namespace

const Schema* property_schema(std::string_view type) {
    if (type == "olm.package") return &kPackage;
    if (type == "olm.gvk" || type == "olm.gvk.required") return &kGvk;
    if (type == "olm.package.required") return &kPackageRequired;
    if (type == "olm.bundle.object") return &kBundleObject;
    if (type == "olm.csv.metadata") return &kCsvMetadata;
    if (type == "olm.channel") return &kChannel;
    return nullptr;
}

const Schema* label_schema() {
    return &kLabel;
}

// --- Checker -----------------------------------------------------------------------------------

Checker::Checker(const Schema* root, bool lenient) : root_(root), lenient_(lenient) {}

void Checker::reset(const Schema* root, bool lenient) {
    root_ = root;
    lenient_ = lenient;
    frames_.clear();
    mismatch_.reset();
    for (auto& c : captures_)
        c.reset();
    started_ = done_ = false;
}

const Schema* Checker::expected(int& capture) const {
    capture = -1;
    if (frames_.empty()) return root_;
    const Frame& f = frames_.back();
    if (f.schema == nullptr) return nullptr;
    if (f.is_array) return f.schema->item;
    if (f.string_map) return &kString;
    if (f.field == nullptr) return nullptr;
    capture = f.field->capture;
    return f.field->schema;
}

std::string Checker::path() const {
    std::string p;
    for (const Frame& f : frames_) {
        if (f.is_array) {
            p += '[';
            p += std::to_string(f.index);
            p += ']';
        } else {
            if (!p.empty()) p += '.';
            p += f.key;
        }
    }
    return p;
}

void Checker::mismatch(const char* want, const char* found, io::Mark m, const std::string&) {
    if (lenient_ || mismatch_) return;
    mismatch_ = Mismatch{path(), want, found, m};
}

void Checker::advance() {
    if (frames_.empty()) {
        done_ = true;
        return;
    }
    Frame& f = frames_.back();
    if (f.is_array)
        ++f.index;
    else
        f.field = nullptr;
}

void Checker::scalar(const Scalar& s) {
    int cap = -1;
    const Schema* want = expected(cap);
    if (frames_.size() != 1) cap = -1; // only the value's own fields are captured
    if (want != nullptr) {
        switch (want->kind) {
        case SchemaKind::any:
            break;
        case SchemaKind::string:
            if (s.kind == VKind::string) {
                if (cap >= 0) captures_[cap] = std::string(s.text);
            } else if (s.kind == VKind::null) {
                if (cap >= 0) captures_[cap] = std::string();
            } else {
                mismatch(want_of(want), vkind_name(s.kind), s.mark);
            }
            break;
        case SchemaKind::boolean:
            if (s.kind != VKind::boolean && s.kind != VKind::null)
                mismatch(want_of(want), vkind_name(s.kind), s.mark);
            break;
        case SchemaKind::bytes:
            if (s.kind == VKind::string) {
                if (!valid_base64(s.text)) mismatch("base64 data", "", s.mark);
            } else if (s.kind != VKind::null) {
                mismatch(want_of(want), vkind_name(s.kind), s.mark);
            }
            break;
        default: // object, array, map
            if (s.kind != VKind::null) mismatch(want_of(want), vkind_name(s.kind), s.mark);
        }
    }
    advance();
}

void Checker::begin(VKind k, io::Mark m) {
    int cap = -1;
    const Schema* want = expected(cap);
    Frame nf{};
    nf.is_array = k == VKind::array;
    if (want != nullptr && want->kind != SchemaKind::any) {
        const bool object_ok = k == VKind::object && (want->kind == SchemaKind::object ||
                                                      want->kind == SchemaKind::string_map);
        const bool array_ok = k == VKind::array && want->kind == SchemaKind::array;
        if (object_ok || array_ok) {
            nf.schema = want;
            nf.string_map = want->kind == SchemaKind::string_map;
        } else {
            mismatch(want_of(want), vkind_name(k), m);
        }
    }
    frames_.push_back(nf);
}

void Checker::end() {
    frames_.pop_back();
    advance();
}

void Checker::key(std::string_view k, io::Mark) {
    Frame& f = frames_.back();
    f.field = nullptr;
    if (f.schema == nullptr) return;
    f.key.assign(k);
    if (f.string_map) return;
    for (std::size_t i = 0; i < f.schema->n_fields; ++i)
        if (fold_equal(k, f.schema->fields[i].name)) {
            f.field = &f.schema->fields[i];
            break;
        }
}

} // namespace kpkg::catalog::detail
