#!/usr/bin/env python3
"""Checks the layering of libkpkg: every file of an area (src/<area>/, include/kpkg/<area>/)
includes headers of its own area and of the areas below it only, as the per-area static
libraries in meson.build link them. Prints each area's includes, and every back edge."""
import os
import re
import sys

# Each area and the areas it may use; mirrors the dependencies of the static libraries
# declared in src/<area>/meson.build.
ALLOWED = {
    "core": [],
    "io": ["core"],
    "cel": ["core", "io"],
    "template": ["core", "io", "cel"],
    "model": ["core", "io", "cel"],
    # The HTTP client (libcurl, loaded on first use), for oci's registries and kube's API server.
    "net": ["core"],
    "oci": ["core", "io", "cel", "model", "net"],
    "bundle": ["core", "io", "cel", "model"],
    "catalog": ["core", "io", "cel", "model", "net", "oci", "bundle"],
    "resolve": ["core", "io", "cel", "model"],
    # pko's dependency resolution solves with resolve/versions; its findings and name rules are
    # model's.
    "pko": ["core", "io", "cel", "template", "model", "resolve"],
    "plan": ["core", "io", "cel", "template", "model", "net", "oci", "bundle", "catalog",
             "resolve", "pko"],
    # kube applies what plan and pko render, and talks to the API server through net.
    "kube": ["core", "io", "cel", "template", "model", "net", "oci", "bundle", "catalog",
             "resolve", "pko", "plan"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"(?:kpkg/)?([a-z_]+)/', re.M)


def main(root):
    problems = []
    for area, allowed in ALLOWED.items():
        used = {}
        for top in (os.path.join(root, "src", area), os.path.join(root, "include", "kpkg", area)):
            for dirpath, _, names in os.walk(top):
                for name in sorted(names):
                    if not name.endswith((".cpp", ".hpp", ".h")):
                        continue
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8") as f:
                        text = f.read()
                    for m in INCLUDE.finditer(text):
                        dep = m.group(1)
                        if dep not in ALLOWED or dep == area:
                            continue
                        used.setdefault(dep, 0)
                        used[dep] += 1
                        if dep not in allowed:
                            line = text.count("\n", 0, m.start()) + 1
                            rel = os.path.relpath(path, root)
                            problems.append(f"{rel}:{line}: area {area} includes {dep}, "
                                            f"which is not below it")
        listed = ", ".join(f"{d} ({n})" for d, n in sorted(used.items())) or "nothing"
        print(f"{area}: uses {listed}")
    unknown = sorted(set(os.listdir(os.path.join(root, "src"))) - set(ALLOWED) - {"cli"})
    for area in unknown:
        problems.append(f"src/{area}: an area this check does not know: add it to ALLOWED "
                        f"with the areas it may use")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.getcwd()))
