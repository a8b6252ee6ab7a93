#include "kpkg/model/catalog.hpp"

#include <algorithm>
#include <cstring>

namespace kpkg::model {

const char* scope_name(Scope s) {
    switch (s) {
    case Scope::catalog:
        return "catalog";
    case Scope::package:
        return "package";
    case Scope::channel:
        return "channel";
    case Scope::bundle:
        return "bundle";
    case Scope::deprecation:
        return "deprecation";
    }
    return "catalog";
}

// Text is appended to blocks that are never reallocated, so the views stay valid; an
// open-addressing table of ids (linear probing, at most half full) finds a text's id.
struct StringPool::Impl {
    static constexpr std::size_t block_size = 64 * 1024;
    std::vector<std::unique_ptr<char[]>> blocks;
    std::vector<std::unique_ptr<char[]>> big;
    std::shared_ptr<const void> keep;  // what holds the text of a pool made by from_mapped
    std::size_t used = 0;              // in the last block
    std::vector<Str> slots;            // 0: empty (the empty string is never in the table)
    std::vector<std::uint64_t> hashes; // by id
    std::size_t mask = 0;

    static std::uint64_t hash(std::string_view s) { return std::hash<std::string_view>{}(s); }

    std::size_t current = 0; // size of the last block: 4 KiB first, doubling up to block_size
    std::string_view store(std::string_view s) {
        if (s.size() > block_size / 4) { // a big string gets a block of its own
            big.emplace_back(new char[s.size()]);
            std::memcpy(big.back().get(), s.data(), s.size());
            return {big.back().get(), s.size()};
        }
        if (blocks.empty() || used + s.size() > current) {
            // Small pools (one catalog file) stay small; big ones get big blocks.
            current = current == 0 ? 4096 : std::min(current * 2, block_size);
            while (current < s.size())
                current *= 2;
            blocks.emplace_back(new char[current]);
            used = 0;
        }
        char* p = blocks.back().get() + used;
        std::memcpy(p, s.data(), s.size());
        used += s.size();
        return {p, s.size()};
    }

    void rehash(std::size_t capacity) {
        slots.assign(capacity, 0);
        mask = capacity - 1;
        for (Str id = 1; id < hashes.size(); ++id) {
            std::size_t i = hashes[id] & mask;
            while (slots[i] != 0)
                i = (i + 1) & mask;
            slots[i] = id;
        }
    }
};

StringPool::StringPool() : impl_(std::make_unique<Impl>()) {
    views_.emplace_back();
    impl_->hashes.push_back(0);
    impl_->rehash(64);
}
StringPool::~StringPool() = default;
StringPool::StringPool(StringPool&&) noexcept = default;
StringPool& StringPool::operator=(StringPool&&) noexcept = default;

std::uint64_t StringPool::hash(std::string_view s) {
    return Impl::hash(s);
}

std::uint64_t StringPool::hash_of(Str id) const {
    return impl_->hashes[id];
}

Str StringPool::intern(std::string_view s) {
    return intern(s, Impl::hash(s));
}

Str StringPool::intern(std::string_view s, std::uint64_t h) {
    if (s.empty()) return 0;
    Impl& im = *impl_;
    std::size_t i = h & im.mask;
    for (Str id; (id = im.slots[i]) != 0; i = (i + 1) & im.mask)
        if (im.hashes[id] == h && views_[id] == s) return id;
    const auto id = static_cast<Str>(views_.size());
    views_.push_back(im.store(s));
    im.hashes.push_back(h);
    im.slots[i] = id;
    if (views_.size() * 2 > im.slots.size()) im.rehash(im.slots.size() * 2);
    return id;
}

std::optional<Str> StringPool::find(std::string_view s) const {
    if (s.empty()) return Str{0};
    const Impl& im = *impl_;
    const std::uint64_t h = Impl::hash(s);
    for (std::size_t i = h & im.mask;; i = (i + 1) & im.mask) {
        const Str id = im.slots[i];
        if (id == 0) return std::nullopt;
        if (im.hashes[id] == h && views_[id] == s) return id;
    }
}

StringPool::Flat StringPool::flatten(bool with_text) const {
    Flat f;
    const Impl& im = *impl_;
    f.sizes.reserve(views_.size());
    f.hashes.assign(im.hashes.begin() + 1, im.hashes.end());
    f.slots = im.slots;
    std::size_t total = 0;
    for (std::size_t i = 1; i < views_.size(); ++i)
        total += views_[i].size();
    if (with_text) f.text.reserve(total);
    for (std::size_t i = 1; i < views_.size(); ++i) {
        if (with_text) f.text.append(views_[i]);
        f.sizes.push_back(static_cast<std::uint32_t>(views_[i].size()));
    }
    return f;
}

std::optional<StringPool> StringPool::from_flat(Flat&& f) {
    // The text in one block of its own, then the same as a mapped one.
    auto block = std::shared_ptr<char[]>(new char[f.text.empty() ? 1 : f.text.size()]);
    std::memcpy(block.get(), f.text.data(), f.text.size());
    const std::string_view text(block.get(), f.text.size());
    std::vector<std::uint64_t> hashes;
    hashes.reserve(f.hashes.size() + 1);
    hashes.push_back(0);
    hashes.insert(hashes.end(), f.hashes.begin(), f.hashes.end());
    return from_mapped(text, f.sizes, std::move(hashes), std::move(f.slots), std::move(block));
}

std::optional<StringPool> StringPool::from_mapped(std::string_view text,
                                                  const std::vector<std::uint32_t>& sizes,
                                                  std::vector<std::uint64_t>&& hashes,
                                                  std::vector<Str>&& slots,
                                                  std::shared_ptr<const void> keep) {
    const std::size_t n = sizes.size() + 1;
    const std::size_t cap = slots.size();
    if (hashes.size() != n || hashes[0] != 0 || cap < 2 * n || (cap & (cap - 1)) != 0)
        return std::nullopt;
    StringPool pool;
    Impl& im = *pool.impl_;
    pool.views_.reserve(n);
    std::size_t at = 0;
    for (std::uint32_t size : sizes) {
        if (size == 0 || size > text.size() - at) return std::nullopt;
        pool.views_.emplace_back(text.data() + at, size);
        at += size;
    }
    if (at != text.size()) return std::nullopt;
    std::size_t used = 0; // a table without empty slots would never end a lookup
    for (Str id : slots) {
        if (id >= n) return std::nullopt;
        used += id != 0 ? 1 : 0;
    }
    if (used != n - 1) return std::nullopt;
    im.hashes = std::move(hashes);
    im.slots = std::move(slots);
    im.mask = cap - 1;
    im.keep = std::move(keep);
    return pool;
}

SourcePos Catalog::source_pos(const Pos& p) const {
    SourcePos s;
    if (p.file < files.size()) s.file = files[p.file];
    s.line = p.line;
    s.column = p.column;
    s.document = p.document;
    return s;
}

void Catalog::index() {
    by_package_.clear();
    bundle_index_.clear();
    for (std::uint32_t i = 0; i < packages.size(); ++i) {
        auto& info = by_package_[packages[i].name];
        if (info.package == npos32) info.package = i;
    }
    for (std::uint32_t i = 0; i < channels.size(); ++i)
        by_package_[channels[i].package].channels.push_back(i);
    bundle_index_.reserve(bundles.size());
    for (std::uint32_t i = 0; i < bundles.size(); ++i) {
        const Bundle& b = bundles[i];
        by_package_[b.package].bundles.push_back(i);
        bundle_index_.emplace((std::uint64_t{b.package} << 32) | b.name, i);
    }
    for (std::uint32_t i = 0; i < deprecations.size(); ++i) {
        auto& info = by_package_[deprecations[i].package];
        if (info.deprecation == npos32) info.deprecation = i;
    }
}

const Catalog::PackageInfo* Catalog::package_info(std::string_view name) const {
    auto id = strings.find(name);
    if (!id) return nullptr;
    auto it = by_package_.find(*id);
    return it == by_package_.end() ? nullptr : &it->second;
}

std::uint32_t Catalog::find_bundle(Str package, Str name) const {
    auto it = bundle_index_.find((std::uint64_t{package} << 32) | name);
    return it == bundle_index_.end() ? npos32 : it->second;
}

Result<void> Catalog::check() const {
    if (problems.empty()) return {};
    const Finding& f = problems.front();
    Error e = Error::invalid(f.message, f.pos);
    if (problems.size() > 1)
        e.note("and " + std::to_string(problems.size() - 1) +
               " more problem(s); see kpkg catalog validate");
    return fail(std::move(e));
}

} // namespace kpkg::model
