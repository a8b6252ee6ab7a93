// OLM's naming of the RBAC it makes for a CSV: base62 of SHA-224, names cut to 63 characters.
#include <array>
#include <cstdint>

#include "kpkg/core/digest.hpp"
#include "kpkg/plan/installplan.hpp"
#include "kpkg/plan/tree.hpp"

namespace kpkg::plan {

namespace {

// The SHA-224 of `bytes` as a number in `base` (digits 0-9a-zA-Z), most significant digit first,
// without leading zeros, as Go's big.Int Text writes it.
std::string sha224_in_base(std::string_view bytes, unsigned base) {
    // Long division of the big-endian number by `base`, least significant digit first.
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    std::array<std::uint8_t, 28> n = sha224(bytes);
    std::size_t start = 0;
    while (start < n.size() && n[start] == 0)
        ++start;
    std::string out;
    while (start < n.size()) {
        unsigned rem = 0;
        for (std::size_t i = start; i < n.size(); ++i) {
            const unsigned cur = (rem << 8) | n[i];
            n[i] = static_cast<unsigned char>(cur / base);
            rem = cur % base;
        }
        out.push_back(digits[rem]);
        while (start < n.size() && n[start] == 0)
            ++start;
    }
    if (out.empty()) out.push_back('0');
    return {out.rbegin(), out.rend()};
}

} // namespace

std::string base62_sha224(std::string_view bytes) {
    return sha224_in_base(bytes, 62);
}

std::string base36_sha224(std::string_view bytes) {
    return sha224_in_base(bytes, 36);
}

std::string rbac_name(std::string_view base, std::string_view hash) {
    constexpr std::size_t max_name = 63;
    if (base.size() + hash.size() > max_name) {
        const std::size_t keep = hash.size() + 1 >= max_name ? 0 : max_name - hash.size() - 1;
        base = base.substr(0, keep);
    }
    std::string out(base);
    out += '-';
    out += hash;
    return out;
}

} // namespace kpkg::plan
