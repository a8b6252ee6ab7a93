// ApplySet identity as kubectl computes it (KEP-3659), and the --applyset reference.
#include <string>

#include "kpkg/core/digest.hpp"
#include "kpkg/kube/apply.hpp"

namespace kpkg::kube {

namespace {

// RFC 4648 base64 with the URL-safe alphabet and no padding.
std::string base64url(const std::uint8_t* data, std::size_t n) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    out.reserve((n * 4 + 2) / 3);
    std::size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        const std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8) |
                                std::uint32_t{data[i + 2]};
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += kAlphabet[v & 63];
    }
    if (n - i == 1) {
        const std::uint32_t v = std::uint32_t{data[i]} << 16;
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
    } else if (n - i == 2) {
        const std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8);
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
    }
    return out;
}

} // namespace

std::string applyset_id(const std::string& name, const std::string& ns, const std::string& kind,
                        const std::string& group) {
    std::string key = name;
    key += '.';
    key += ns;
    key += '.';
    key += kind;
    key += '.';
    key += group;
    Sha256 h;
    h.update(key);
    const auto d = h.finish();
    std::string id = "applyset-";
    id += base64url(d.data(), d.size());
    id += "-v1";
    return id;
}

Result<ApplySetRef> parse_applyset_ref(const std::string& text) {
    ApplySetRef ref;
    const auto slash = text.find('/');
    if (slash == std::string::npos) {
        ref.name = text;
    } else {
        const std::string gr = text.substr(0, slash);
        ref.name = text.substr(slash + 1);
        const auto dot = gr.find('.');
        ref.resource = gr.substr(0, dot);
        ref.group = dot == std::string::npos ? std::string() : gr.substr(dot + 1);
        if (ref.resource.empty())
            return Error::usage("--applyset " + text + ": the resource before '/' is empty");
    }
    if (ref.name.empty()) return Error::usage("--applyset " + text + ": the name is empty");
    if (ref.name.find('/') != std::string::npos)
        return Error::usage("--applyset " + text + ": expected [RESOURCE[.GROUP]/]NAME");
    return ref;
}

} // namespace kpkg::kube
