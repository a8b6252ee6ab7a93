#!/usr/bin/env python3
"""Comparisons the project prints or states must come from a run that measures both sides.

- bench/*.cpp: no string a bench prints names opm, operator-sdk or kubectl-package. No bench runs
  those tools, so any figure of theirs in a bench's output would be typed in, not measured.
- README.md, the user guides of docs/ and bench/RESULTS.md: a section (under a heading) that says
  kpkg is N times or an order of magnitude faster or slower than something names the bench that
  measures it (build-bench/bench/kpkg-bench-*).

Usage: check_claims.py SOURCE_ROOT
"""

import glob
import os
import re
import sys

UNMEASURED_TOOLS = re.compile(r"\b(opm|operator-sdk|kubectl-package)\b")
COMPARISON = re.compile(r"(\d+(\.\d+)?\s*(×|x|times)|an\s+order\s+of\s+magnitude)\s+(faster|slower)|"
                        r"\bfaster than\b|\bslower than\b")


def string_literals(code):
    """The string literals of C++ source (comments removed first; good enough for bench/)."""
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
    out = []
    for line in code.splitlines():
        # drop a // comment that is not inside a literal
        literals = list(re.finditer(r'"(?:[^"\\\n]|\\.)*"', line))
        cut = len(line)
        for m in re.finditer(r"//", line):
            if not any(l.start() < m.start() < l.end() for l in literals):
                cut = m.start()
                break
        out += [l.group(0) for l in literals if l.end() <= cut]
    return out


def main(root):
    problems = []
    for path in sorted(glob.glob(os.path.join(root, "bench", "*.cpp"))):
        with open(path, encoding="utf-8") as f:
            for lit in string_literals(f.read()):
                if UNMEASURED_TOOLS.search(lit):
                    problems.append("%s: prints a figure of a tool no bench runs: %s"
                                    % (os.path.relpath(path, root), lit))
    docs = [os.path.join(root, "README.md"), os.path.join(root, "bench", "RESULTS.md")]
    docs += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    for path in docs:
        if not os.path.exists(path):
            continue
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        sections = re.split(r"\n(?=#{1,4} )", text)
        for section in sections:
            title = section.splitlines()[0] if section else ""
            for m in COMPARISON.finditer(section):
                if "kpkg-bench-" not in section:
                    line = section[:m.start()].count("\n")
                    problems.append("%s, section %r, line %d of it: %r names no bench that "
                                    "measures it" % (rel, title, line + 1, m.group(0)))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
