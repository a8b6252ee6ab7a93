#!/usr/bin/env python3
"""An independent reference for the Package Operator package layer kpkg builds.

It writes, byte by byte, the tar that go-containerregistry's crane.Layer (what kubectl-package
uses) produces with Go's archive/tar for a package directory, and prints its sha256 (the
layer's diff_id) and the image config go-containerregistry writes for it (with its sha256).
Written from Go's archive/tar writer rules (writeUSTARHeader, writePAXHeader, writeRawFile,
splitUSTARPath, formatOctal, formatString, setFormat), not from kpkg's code; used to derive the
golden values pinned in tests/plan/test_image.cpp and tests/cli/test_images.cpp.

    python3 go_layer_reference.py DIR [LABEL=VALUE ...]
"""
import hashlib
import json
import os
import sys
import tarfile
import io

BLOCK = 512


def octal(width, value):
    # formatOctal: zero-padded, width-1 digits, then NUL.
    s = format(value, "o")
    return (("0" * (width - 1 - len(s))) + s).encode() + b"\0"


def string(width, s):
    # formatString: copy what fits, NUL when room is left; a cut name ending in '/' is trimmed.
    b = bytearray(width)
    raw = s[:width]
    b[: len(raw)] = raw
    if len(s) > width and b[width - 1] == ord("/"):
        n = len(raw.rstrip(b"/"))
        b[n] = 0
    return bytes(b)


def is_ascii(s):
    return all(0 < c < 0x80 for c in s)


def to_ascii(s):
    return bytes(c for c in s if 0 < c < 0x80)


def split_ustar(name):
    length = len(name)
    if length <= 100 or not is_ascii(name):
        return None
    if length > 156:
        length = 156
    elif name[length - 1:length] == b"/":
        length -= 1
    i = name[:length].rfind(b"/")
    nlen = len(name) - i - 1
    if i <= 0 or nlen > 100 or nlen == 0 or i > 155:
        return None
    return name[:i], name[i + 1:]


def checksum(h):
    h[148:156] = b" " * 8
    s = sum(h)
    h[148:156] = octal(7, s) + b" "


def raw_header(name, typeflag, size, mode, prefix=b"", ustar_fields=True):
    h = bytearray(BLOCK)
    h[0:100] = string(100, name)
    h[100:108] = octal(8, mode)
    h[108:116] = octal(8, 0)
    h[116:124] = octal(8, 0)
    h[124:136] = octal(12, size)
    h[136:148] = octal(12, 0)  # mtime: Go writes time.Unix(0, 0) for the zero time
    h[156:157] = typeflag
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    if ustar_fields:  # uname, gname empty; devmajor/devminor written as octal zero
        h[329:337] = octal(8, 0)
        h[337:345] = octal(8, 0)
        h[345:500] = string(155, prefix)
    checksum(h)
    return bytes(h)


def pad(data):
    return data + b"\0" * ((-len(data)) % BLOCK)


def pax_record(key, value):
    body = len(key) + len(value) + 3
    size = body + len(str(body))
    rec = b"%d %s=%s\n" % (size, key, value)
    if len(rec) != size:
        size = len(rec)
        rec = b"%d %s=%s\n" % (size, key, value)
    return rec


def go_tar(files):
    out = b""
    for name in sorted(files):  # sort.Strings: byte order
        data = files[name]
        split = split_ustar(name)
        if is_ascii(name) and len(name) <= 100:
            out += raw_header(name, b"0", len(data), 0)
        elif split:
            out += raw_header(split[1], b"0", len(data), 0, prefix=split[0])
        else:
            records = pax_record(b"path", name)
            d, _, f = name.rpartition(b"/")
            xname = (d + b"/" if d else b"") + b"PaxHeaders.0/" + f
            xname = to_ascii(xname)[:100].rstrip(b"/")
            out += raw_header(xname, b"x", len(records), 0, ustar_fields=False)
            out += pad(records)
            out += raw_header(to_ascii(name), b"0", len(data), 0)
        out += pad(data)
    return out + b"\0" * (2 * BLOCK)


def package_files(root):
    files = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")
                       and not os.path.islink(os.path.join(dirpath, d))]
        for fn in filenames:
            p = os.path.join(dirpath, fn)
            if fn.startswith(".") or os.path.islink(p):
                continue
            rel = os.path.relpath(p, root).replace(os.sep, "/")
            with open(p, "rb") as f:
                files[("package/" + rel).encode()] = f.read()
    return files


def go_json(obj):
    # encoding/json: compact, HTML characters escaped.
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def main():
    root = sys.argv[1]
    labels = dict(kv.split("=", 1) for kv in sys.argv[2:])
    tar = go_tar(package_files(root))
    # Cross-check with Python's own tar reader.
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        for m in t.getmembers():
            assert m.isreg() and m.mode == 0 and m.mtime == 0 and m.uid == 0, m.name
            print("  entry", m.name, m.size, file=sys.stderr)
    diff_id = "sha256:" + hashlib.sha256(tar).hexdigest()
    cfg = {"architecture": "amd64", "created": "0001-01-01T00:00:00Z",
           "history": [{"created": "0001-01-01T00:00:00Z"}], "os": "linux",
           "rootfs": {"type": "layers", "diff_ids": [diff_id]},
           "config": {"Labels": dict(sorted(labels.items()))} if labels else {}}
    cj = go_json(cfg).encode()
    print("tar bytes", len(tar))
    print("diff_id", diff_id)
    print("config", cj.decode())
    print("config digest sha256:" + hashlib.sha256(cj).hexdigest(), "size", len(cj))


if __name__ == "__main__":
    main()
