#include "values.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

#include "kpkg/io/go_json.hpp"
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

int digit_of(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    const char l = static_cast<char>(c | 0x20);
    if (l >= 'a' && l <= 'z') return l - 'a' + 10;
    return 99;
}

// Go's strconv.ParseInt/ParseUint with base 0 (sign, then 0x/0o/0b or a leading 0 for octal),
// ignoring range: whether the syntax is valid, and the value as a double.
bool go_integer(std::string_view s, bool allow_sign, double& value) {
    if (s.empty()) return false;
    bool neg = false;
    if (s[0] == '+' || s[0] == '-') {
        if (!allow_sign) return false;
        neg = s[0] == '-';
        s.remove_prefix(1);
        if (s.empty()) return false;
    }
    int base = 10;
    if (s[0] == '0') {
        const char l = s.size() >= 3 ? static_cast<char>(s[1] | 0x20) : 0;
        if (l == 'b') {
            base = 2;
            s.remove_prefix(2);
        } else if (l == 'o') {
            base = 8;
            s.remove_prefix(2);
        } else if (l == 'x') {
            base = 16;
            s.remove_prefix(2);
        } else {
            base = 8;
            s.remove_prefix(1);
        }
    }
    double v = 0;
    for (char c : s) {
        const int d = digit_of(c);
        if (d >= base) return false;
        v = v * base + d;
    }
    value = neg ? -v : v;
    return true;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ (yaml.v2's float pattern)
bool yaml_style_float(std::string_view s) {
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i < s.size() && s[i] == '.') {
        ++i;
        const std::size_t d = i;
        while (i < s.size() && is_digit(s[i]))
            ++i;
        if (i == d) return false;
    } else {
        const std::size_t d = i;
        while (i < s.size() && is_digit(s[i]))
            ++i;
        if (i == d) return false;
        if (i < s.size() && s[i] == '.') {
            ++i;
            while (i < s.size() && is_digit(s[i]))
                ++i;
        }
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        const std::size_t d = i;
        while (i < s.size() && is_digit(s[i]))
            ++i;
        if (i == d) return false;
    }
    return i == s.size();
}

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
    if (s.empty()) return Plain::null;
    const char c = s[0];
    const bool sign = c == '+' || c == '-';
    const bool in_map = std::strchr("yYnNtTfFoO~", c) != nullptr && c != '\0';
    if (!sign && !is_digit(c) && !in_map && c != '.') return Plain::string;
    static constexpr std::string_view yes[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                               "True", "TRUE", "on",  "On",  "ON"};
    static constexpr std::string_view no[] = {"n",     "N",     "no",  "No",  "NO", "false",
                                              "False", "FALSE", "off", "Off", "OFF"};
    static constexpr std::string_view nulls[] = {"~", "null", "Null", "NULL"};
    static constexpr std::string_view nonfinite[] = {".nan",  ".NaN",  ".NAN",  ".inf",
                                                     ".Inf",  ".INF",  "+.inf", "+.Inf",
                                                     "+.INF", "-.inf", "-.Inf", "-.INF"};
    for (auto w : yes)
        if (s == w) return Plain::yes;
    for (auto w : no)
        if (s == w) return Plain::no;
    for (auto w : nulls)
        if (s == w) return Plain::null;
    for (auto w : nonfinite)
        if (s == w) return Plain::nonfinite;
    if (in_map) return Plain::string;
    if (c == '.') {
        // Go's ParseFloat on ".5", ".5e3".
        if (yaml_style_float(s) && to_double(s, value)) return Plain::number;
        return Plain::string;
    }
    // Digits or a sign: an integer (Go syntax, any size), or a float of yaml.v2's pattern.
    std::string plain;
    plain.reserve(s.size());
    for (char ch : s)
        if (ch != '_') plain += ch;
    if (go_integer(plain, true, value)) return Plain::number;
    if (yaml_style_float(plain) && to_double(plain, value)) return Plain::number;
    return Plain::string;
}

// An explicitly tagged YAML number (!!int, !!float): YAML 1.2 forms.
bool tagged_number(std::string_view s, double& value) {
    if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "-.inf" || s == ".nan" ||
        s == ".NaN" || s == ".NAN")
        return false;
    std::string plain(s);
    if (plain.size() > 2 && plain[0] == '0' && (plain[1] == 'o' || plain[1] == 'x'))
        return go_integer(plain, true, value);
    if (go_integer(plain, true, value) && plain.find_first_of(".eE") == std::string::npos &&
        !(plain.size() > 1 && plain[0] == '0')) // YAML 1.2 has no 0-prefixed octal
        return true;
    return to_double(plain, value);
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
    std::memcpy(&w, p, n);
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
    static const auto table = [] {
        std::array<std::uint8_t, 256> t{};
        for (char c = 'A'; c <= 'Z'; ++c)
            t[static_cast<unsigned char>(c)] = 1;
        for (char c = 'a'; c <= 'z'; ++c)
            t[static_cast<unsigned char>(c)] = 1;
        for (char c = '0'; c <= '9'; ++c)
            t[static_cast<unsigned char>(c)] = 1;
        t['+'] = t['/'] = 1;
        t['='] = 2;
        t['\r'] = t['\n'] = 3;
        return t;
    }();
    std::size_t n = 0;   // characters other than line breaks
    std::size_t pad = 0; // '=' seen (they must all come at the end)
    for (char ch : s) {
        const std::uint8_t k = table[static_cast<unsigned char>(ch)];
        if (k == 3) continue;
        if (k == 0) return false;
        if (k == 2) {
            ++pad;
        } else if (pad > 0) {
            return false; // data after padding
        }
        ++n;
    }
    if (n % 4 != 0 || pad > 2) return false;
    return true;
}

namespace {

// The size of io::go::append_string(out, s, false)'s output, without writing it.
std::size_t json_string_size(std::string_view s) {
    constexpr std::uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    std::size_t size = 2 + s.size();
    const char* p = s.data();
    const char* end = p + s.size();
    while (p < end) {
        if (end - p >= 8) {
            std::uint64_t w;
            std::memcpy(&w, p, 8);
            auto zero = [&](std::uint64_t v) { return (v - ones) & ~v & high; };
            const std::uint64_t special = zero(w ^ (ones * '"')) | zero(w ^ (ones * '\\')) |
                                          ((w - ones * 0x20) & ~w & high) | (w & high);
            if (special == 0) {
                p += 8;
                continue;
            }
        }
        const auto c = static_cast<unsigned char>(*p);
        if (c >= 0x80) {
            char32_t cp = 0;
            const std::size_t len = io::detail::utf8_decode(p, end, cp);
            if (len == 0) {
                size += 5; // one byte becomes \ufffd
                ++p;
            } else {
                if (cp == 0x2028 || cp == 0x2029) size += 3; // 3 bytes become 6
                p += len;
            }
            continue;
        }
        if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
            size += 1;
        else if (c < 0x20)
            size += 5;
        ++p;
    }
    return size;
}

} // namespace

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
        if (decode_base64(ev.text, &scratch, at))
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

enum class IntFit { none, i64, u64, big };

// Go's strconv.ParseInt(s, 0, 64) then ParseUint(s, 0, 64): which one reads s, and the value.
IntFit go_int_fit(std::string_view s, std::int64_t& value) {
    if (s.empty()) return IntFit::none;
    bool neg = false, sign = false;
    if (s[0] == '+' || s[0] == '-') {
        sign = true;
        neg = s[0] == '-';
        s.remove_prefix(1);
        if (s.empty()) return IntFit::none;
    }
    int base = 10;
    if (s[0] == '0' && s.size() > 1) {
        const char l = static_cast<char>(s[1] | 0x20);
        if ((l == 'b' || l == 'o' || l == 'x') && s.size() > 2) {
            base = l == 'b' ? 2 : l == 'o' ? 8 : 16;
            s.remove_prefix(2);
        } else {
            base = 8;
            s.remove_prefix(1);
        }
    }
    std::uint64_t v = 0;
    bool over = false;
    for (char c : s) {
        const int d = digit_of(c);
        if (d >= base) return IntFit::none;
        if (v > (UINT64_MAX - static_cast<std::uint64_t>(d)) / static_cast<std::uint64_t>(base))
            over = true;
        v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
    }
    if (over) return IntFit::big;
    if (neg) {
        if (v > std::uint64_t{1} << 63) return IntFit::big;
        value = v == std::uint64_t{1} << 63 ? INT64_MIN : -static_cast<std::int64_t>(v);
        return IntFit::i64;
    }
    if (v <= static_cast<std::uint64_t>(INT64_MAX)) {
        value = static_cast<std::int64_t>(v);
        return IntFit::i64;
    }
    return sign ? IntFit::big : IntFit::u64; // ParseUint takes no sign
}

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
    double v = 0;
    switch (resolve_yaml11(k.text, v)) {
    case Plain::string:
        return true;
    case Plain::null:
        why = "a null mapping key (\"" + std::string(k.text) +
              "\"): opm cannot turn it into a JSON key (quote it to make it a string)";
        return false;
    case Plain::yes:
        out = "true";
        return true;
    case Plain::no:
        out = "false";
        return true;
    case Plain::nonfinite:
        out = k.text.find_first_of("aA") != std::string_view::npos ? ".nan"
              : k.text[0] == '-'                                   ? "-.inf"
                                                                   : ".inf";
        return true;
    case Plain::number:
        break;
    }
    std::string plain;
    for (char c : k.text)
        if (c != '_') plain += c;
    std::int64_t i = 0;
    switch (go_int_fit(plain, i)) {
    case IntFit::i64:
        scratch = std::to_string(i);
        out = scratch;
        return true;
    case IntFit::u64:
        why = "mapping key " + std::string(k.text) +
              " is an integer only an unsigned 64-bit number holds: opm cannot turn it into a "
              "JSON key (quote it to make it a string)";
        return false;
    case IntFit::big:
    case IntFit::none:
        break;
    }
    if (!yaml_style_float(plain) || !to_double(plain, v)) return true; // as yaml.v2: a string
    scratch.clear();
    io::go::append_float32_g(scratch, v);
    out = scratch;
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
    f.size += json_string_size(k) + 1;
}

void Hasher::scalar(const Scalar& s) {
    const std::uint64_t size = s.kind == VKind::string ? json_string_size(s.text) : s.text.size();
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
