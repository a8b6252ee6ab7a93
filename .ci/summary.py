#!/usr/bin/env python3
"""CI's summary of a test run, from meson's JUnit log (build/meson-logs/testlog.junit.xml).

Usage: summary.py JUNIT_XML

Counts test cases (each gtest test case is one; meson records them from gtest's own XML for the
tests declared with protocol 'gtest'), then prints two lines:

  skipped by reason: kubectl 1.32 missing: 0; docker-registry missing: 0; corpus absent: 12
  N passed, N failed, N skipped

The first says why tests skipped, by the reason each skip message starts with (the helpers in
tests/support/support.hpp write them): "missing tool: NAME" counts as "NAME missing", "corpus
absent" and "running as root" as themselves, anything else as "other". kubectl 1.32 is always
listed, since no package the bootstrap installs provides it: a run without it still passes, and
this line shows how much went untested. The last line is the closing line CI reads, alone.
"""

import re
import sys
import xml.etree.ElementTree as ET

ALWAYS = ("kubectl 1.32 missing",)
GTEST_LOCATION = re.compile(r"^[^\n]*:\d+\n")  # gtest puts "file:line" before the message


def skip_reason(case):
    """The skip message of a <testcase> that has <skipped>: gtest's, or the test's output."""
    skipped = case.find("skipped")
    text = skipped.get("message") or skipped.text or ""
    if not text.strip():
        out = case.find("system-out")
        text = out.text if out is not None and out.text else ""
    return GTEST_LOCATION.sub("", text.strip(), count=1).strip()


def category(reason):
    m = re.match(r"missing tool: ([^(\n]+)", reason)
    if m:
        return m.group(1).strip() + " missing"
    for known in ("corpus absent", "running as root"):
        if reason.startswith(known):
            return known
    return "other"


def summarize(path):
    passed = failed = skipped = 0
    reasons = {k: 0 for k in ALWAYS}
    try:
        root = ET.parse(path).getroot()
    except Exception as e:
        print(f"ci: cannot read {path}: {e}", file=sys.stderr)
        root = None
    if root is not None:
        for case in root.iter("testcase"):
            tags = {child.tag for child in case}
            if tags & {"failure", "error"}:
                failed += 1
            elif "skipped" in tags:
                skipped += 1
                c = category(skip_reason(case))
                reasons[c] = reasons.get(c, 0) + 1
            else:
                passed += 1
    order = sorted(reasons, key=lambda k: (k == "other", k not in ALWAYS, -reasons[k], k))
    lines = ["skipped by reason: " + "; ".join(f"{k}: {reasons[k]}" for k in order),
             f"{passed} passed, {failed} failed, {skipped} skipped"]
    return lines


def main(argv):
    if len(argv) != 2:
        print("usage: summary.py JUNIT_XML", file=sys.stderr)
        return 2
    for line in summarize(argv[1]):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
