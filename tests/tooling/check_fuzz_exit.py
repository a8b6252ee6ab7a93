#!/usr/bin/env python3
"""scripts/fuzz's exit status when its harness fails: the driver (drive()) runs with stand-ins for
the cases, and a harness error must not end a run with exit status 0.

- every case runs and finds nothing: 0;
- a case raises in the harness (caught, reported as a harness error): 3;
- a worker dies outside a case (nothing sends its end): 3, and the run still ends;
- a case has a finding: 1.

Usage: check_fuzz_exit.py SCRIPTS_FUZZ
"""

import importlib.machinery
import importlib.util
import os
import signal
import sys
import tempfile
import types


def load(path):
    loader = importlib.machinery.SourceFileLoader("kpkg_fuzz", path)
    spec = importlib.util.spec_from_loader("kpkg_fuzz", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class Hung(BaseException):
    pass


def on_alarm(signum, frame):
    raise Hung()


class Ran:
    rc = 0
    out = b""
    elapsed = 0.001
    timed_out = False


def main(path):
    fuzz = load(path)
    failures = []

    def run(name, run_case, want, save=None):
        with tempfile.TemporaryDirectory() as tmp:
            fuzz.run_case = run_case
            if save is not None:
                fuzz.save = save
            opts = types.SimpleNamespace(
                entries=["bundle-validate"], jobs=1, total=4, seconds=0, out=os.path.join(tmp, "out"),
                scratch=os.path.join(tmp, "scratch"), seed="1", server=None, drop=False,
                max_output=1 << 30, leak_every=10, bin="kpkg")
            os.makedirs(opts.out)
            signal.signal(signal.SIGALRM, on_alarm)
            signal.alarm(20)  # a case takes a millisecond: 20 s is a hang
            try:
                got = fuzz.drive(opts, None)
            except Hung:
                got = "none: still running after 20 s"
            signal.alarm(0)
        print("%s: exit status %s (want %d)" % (name, got, want), flush=True)
        if got != want:
            failures.append(name)

    def clean(opts, seeds, entry, index, work):
        return None, [("run", Ran())], [], work

    def raises(opts, seeds, entry, index, work):
        if index == 1:
            raise RuntimeError("a harness bug")
        return clean(opts, seeds, entry, index, work)

    def finding(opts, seeds, entry, index, work):
        if index == 2:
            return None, [("run", Ran())], [("exit", "exit 42", "")], work
        return clean(opts, seeds, entry, index, work)

    def save_dies(*args):
        os._exit(70)  # the worker dies outside the try around a case

    run("no findings", clean, 0)
    run("harness error in a case", raises, 3)
    run("finding", finding, 1, save=lambda *a: None)
    run("worker died", finding, 3, save=save_dies)
    if failures:
        print("wrong exit status: " + ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
