#!/usr/bin/env python3
"""CI's summary (.ci/summary.py) against real skips: runs the skip_reasons gtest program with
--gtest_output=xml, puts its test suites into a JUnit log shaped as meson writes it (beside an
exit-status test that skipped, as the `corpus` entry does), and checks the two lines printed.

Usage: check_ci_summary.py SUMMARY_PY SKIP_REASONS_EXE
"""

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def main(summary, exe):
    with tempfile.TemporaryDirectory() as tmp:
        gtest_xml = os.path.join(tmp, "gtest.xml")
        r = subprocess.run([exe, "--gtest_output=xml:" + gtest_xml], capture_output=True, text=True)
        if r.returncode != 1:  # one case fails on purpose
            print("skip_reasons exited %d, not 1:\n%s%s" % (r.returncode, r.stdout, r.stderr))
            return 1
        # meson's log: the gtest suites as they are, and an exit-status test (77: skipped) as a
        # test case with <skipped/> and its standard output.
        root = ET.Element("testsuites")
        for suite in ET.parse(gtest_xml).getroot().iter("testsuite"):
            root.append(suite)
        suite = ET.SubElement(root, "testsuite", name="kpkg", tests="1", skipped="1")
        case = ET.SubElement(suite, "testcase", name="corpus", classname="kpkg")
        ET.SubElement(case, "skipped")
        ET.SubElement(case, "system-out").text = "corpus absent: no corpus at /x/shared/corpus"
        junit = os.path.join(tmp, "testlog.junit.xml")
        ET.ElementTree(root).write(junit)
        s = subprocess.run([sys.executable, summary, junit], capture_output=True, text=True)
    want = ["skipped by reason: kubectl 1.32 missing: 1; corpus absent: 2; example-tool missing: 2; "
            "running as root: 1; other: 1",
            "1 passed, 1 failed, 7 skipped"]
    got = s.stdout.splitlines()
    if s.returncode != 0 or got != want:
        print("summary.py exited %d\nwanted:\n  %s\ngot:\n  %s\nstderr:\n%s"
              % (s.returncode, "\n  ".join(want), "\n  ".join(got), s.stderr))
        return 1
    print("\n".join(got))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
