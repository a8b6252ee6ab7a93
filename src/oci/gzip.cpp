#include "kpkg/oci/gzip.hpp"

#include <zlib.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "kpkg/core/memory.hpp"
#include "kpkg/core/threads.hpp"

namespace kpkg::oci {
namespace {

constexpr std::size_t chunk_size = std::size_t{128} << 10;
constexpr std::size_t window = std::size_t{32} << 10;

struct Piece {
    // Room for deflate's worst case, not cleared: only the pages deflate writes (a fifth or so
    // of them for YAML and JSON) are ever touched.
    std::unique_ptr<unsigned char[]> out;
    std::size_t size = 0;
    uLong crc = 0;
    bool failed = false;
};

// One thread's deflate state, reset for each chunk (an init per chunk would allocate and clear
// a few hundred KB each time).
struct Deflater {
    z_stream z{};
    bool ok = false;
    explicit Deflater(int level) {
        ok = deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    }
    ~Deflater() {
        if (ok) deflateEnd(&z);
    }
    Deflater(const Deflater&) = delete;
    Deflater& operator=(const Deflater&) = delete;
};

// Deflates chunk `i` of `data` into `p`.
void deflate_chunk(Deflater& d, std::string_view data, std::size_t i, std::size_t n, Piece& p) {
    const std::size_t begin = i * chunk_size;
    const std::size_t len = std::min(chunk_size, data.size() - begin);
    const bool last = i + 1 == n;
    z_stream& z = d.z;
    if (!d.ok || deflateReset(&z) != Z_OK) {
        p.failed = true;
        return;
    }
    if (begin > 0) {
        const std::size_t d = std::min(window, begin);
        deflateSetDictionary(&z, reinterpret_cast<const Bytef*>(data.data() + begin - d),
                             static_cast<uInt>(d));
    }
    const std::size_t room = deflateBound(&z, static_cast<uLong>(len)) + 16;
    p.out.reset(new unsigned char[room]);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + begin));
    z.avail_in = static_cast<uInt>(len);
    z.next_out = p.out.get();
    z.avail_out = static_cast<uInt>(room);
    const int rc = deflate(&z, last ? Z_FINISH : Z_SYNC_FLUSH);
    if ((last && rc != Z_STREAM_END) || (!last && rc != Z_OK) || z.avail_in != 0) p.failed = true;
    p.size = room - z.avail_out;
    p.crc = crc32(0L, reinterpret_cast<const Bytef*>(data.data() + begin), static_cast<uInt>(len));
}

void put_le32(std::string& out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

} // namespace

Result<std::string> parallel_gzip(std::string_view data, int level, unsigned threads) {
    level = std::clamp(level, 1, 9);
    const std::size_t n = std::max<std::size_t>(1, (data.size() + chunk_size - 1) / chunk_size);
    std::vector<Piece> pieces(n);
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, n));
    // One deflate state per thread, made on that thread when it takes its first piece.
    std::vector<std::optional<Deflater>> deflaters(threads);
    parallel_for(n, threads, [&](std::size_t i, unsigned t) {
        if (!deflaters[t]) deflaters[t].emplace(level);
        deflate_chunk(*deflaters[t], data, i, n, pieces[i]);
    });

    std::size_t total = 10 + 8;
    for (const auto& p : pieces) {
        if (p.failed) return fail(Error::io("gzip: zlib could not compress the layer"));
        total += p.size;
    }
    std::string out;
    reserve_prefaulted(out, total);
    // Magic, deflate, no flags, mtime 0, no extra flags, OS 3 (Unix).
    out.append("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
    uLong crc = 0;
    for (std::size_t i = 0; i < n; ++i) {
        out.append(reinterpret_cast<const char*>(pieces[i].out.get()), pieces[i].size);
        pieces[i].out.reset();
        const std::size_t len =
            std::min(chunk_size, data.size() - std::min(data.size(), i * chunk_size));
        crc = i == 0 ? pieces[i].crc : crc32_combine(crc, pieces[i].crc, static_cast<z_off_t>(len));
    }
    put_le32(out, static_cast<std::uint32_t>(crc));
    put_le32(out, static_cast<std::uint32_t>(data.size() & 0xffffffffu));
    return out;
}

} // namespace kpkg::oci
