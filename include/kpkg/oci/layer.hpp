// Image layers kpkg writes: reproducible tar archives and their gzip compression.
//
// A layer built from the same files has the same bytes, whoever builds it and whenever:
//   - entries sorted by path (io::path_less), every parent directory present as its own entry
//     (mode 0755, as a Docker-built bundle image has manifests/ and metadata/), names of
//     directories ending in '/';
//   - ustar headers with uid 0, gid 0, empty uname/gname, mtime 0, device numbers 0; a name or
//     link target too long for ustar gets a pax extended header holding only `path` /
//     `linkpath` (no timestamps);
//   - the archive ends with two zero blocks (1024 bytes) and is not padded further;
//   - gzip at level 6 with zlib, on every core in fixed 128 KiB pieces (oci/gzip.hpp: the bytes do
//     not depend on the number of cores), header without name and with mtime 0, OS byte 3
//     (Unix). The compressed bytes depend on the zlib in use;
//     the uncompressed digest (diff_id) does not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kpkg/core/result.hpp"

namespace kpkg::io {
class Tree;
}

namespace kpkg::oci {

// A file or directory of a layer: `path` relative ('/' separated, no "." or ".." components,
// no leading '/'), its bytes and permission bits. The bytes are `bytes`, or, when `keep` is
// set, `borrowed`: a view of memory `keep` holds (a mapped file), so big files are not copied
// before they go into the tar.
struct LayerFile {
    std::string path;
    std::string bytes;
    std::uint32_t mode = 0644;
    bool is_dir = false;
    std::string_view borrowed{};
    std::shared_ptr<const void> keep{};
    std::string_view data() const { return keep ? borrowed : std::string_view(bytes); }
};

// A built layer: the gzip blob and its identities.
struct Layer {
    std::string diff_id;    // sha256 of the uncompressed tar (the config's rootfs.diff_ids)
    std::string blob;       // the tar, gzip compressed
    std::string digest;     // sha256 of blob (the manifest's layer descriptor)
    std::int64_t size = 0;  // blob.size()
    std::string media_type; // media::oci_layer_gzip
};

struct LayerOptions {
    int gzip_level = 6;
};

// The reproducible tar of `files` (see above). Errors (Error::invalid): a path that is empty,
// absolute, has empty, "." or ".." components, or is given twice; a file where a directory is
// needed for another path.
Result<std::string> layer_tar(std::vector<LayerFile> files);

// layer_tar + parallel_gzip, with digests. Errors: those of layer_tar; zlib failing (1).
Result<Layer> build_layer(std::vector<LayerFile> files, const LayerOptions& opts = {});

// The files of `tree` (every file of list(), and every directory but the root) placed under
// `prefix` ("" or "manifests" ...), files mode 0644 and directories 0755. An entry with a Problem
// (a symbolic link, a special file) is an error naming it (Error::invalid).
Result<std::vector<LayerFile>> layer_files(const io::Tree& tree, std::string_view prefix = {});

// --- tar and compression building blocks (also used by layouts and tests) ---

// One entry of a tar written by write_tar, in the order given.
struct TarEntry {
    enum class Type : std::uint8_t {
        file,
        dir,
        symlink,
        hardlink,
        char_device,
        block_device,
        fifo
    };
    Type type = Type::file;
    std::string name; // as written into the header (a directory's '/' is not added)
    std::string data; // file contents (or `borrowed`, as LayerFile's)
    std::string link; // symlink / hardlink target
    std::uint32_t mode = 0644;
    std::string_view borrowed{};
    std::shared_ptr<const void> keep{};
    std::string_view contents() const { return keep ? borrowed : std::string_view(data); }
};

// A ustar archive of the entries, as described above (uid/gid/mtime 0, pax path/linkpath records
// for long names), ending with 1024 zero bytes.
std::string write_tar(const std::vector<TarEntry>& entries);

// The same entries as Go's archive/tar Writer writes them when given only a name, a size, a
// mode and the regular-file type (go-containerregistry's crane.Layer, which kubectl-package
// uses): ustar headers (mtime 0, uid/gid 0, empty uname/gname, device numbers "0000000"); a name
// over 100 bytes split into ustar's prefix at the last '/' that fits, else (or when the name is
// not ASCII) a pax header "<dir>/PaxHeaders.0/<file>" holding only `path`, whose own header has
// mode 0 and no device numbers, followed by a header with the name's ASCII bytes cut at 100;
// each file padded to 512 bytes; two zero blocks at the end.
std::string write_tar_as_go(const std::vector<TarEntry>& entries);

// A tar entry's header as read back (`tar tvf`): for checks of what was written.
struct TarHeader {
    TarEntry::Type type = TarEntry::Type::file;
    std::string name, link, uname, gname;
    std::uint32_t mode = 0;
    std::int64_t uid = 0, gid = 0, mtime = 0, size = 0;
    bool has_pax_times = false; // an atime/ctime/mtime in a pax header
};

// The headers of a tar (compressed or not, by its first bytes), read with libarchive.
// Errors (Error::invalid naming `name`): not a tar, corrupt or truncated.
Result<std::vector<TarHeader>> read_tar_headers(std::string_view data, const std::string& name);

enum class Compression : std::uint8_t { none, gzip, zstd };
// By the first bytes: 1f 8b is gzip, 28 b5 2f fd is zstd, anything else none.
Compression detect_compression(std::string_view data);

// gzip (see above: parallel_gzip on every core). Errors: zlib failing (exit 1).
Result<std::string> gzip(std::string_view data, int level = 6);

// The uncompressed bytes of `blob` (gzip or zstd by its magic; anything else is returned as is).
// Errors (Error::invalid, naming `name`): corrupt or truncated compressed data; more than
// `limit` uncompressed bytes.
Result<std::string> decompress(std::string_view blob, std::uint64_t limit, const std::string& name);

} // namespace kpkg::oci
