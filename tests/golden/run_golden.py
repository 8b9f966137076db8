#!/usr/bin/env python3
"""Golden tests: judge every fixture machine and compare the JSON report with the
expected one.

    run_golden.py GPUVET [NAME ...]

takes the fixtures from the shared cache (tests/fixtures/fixture_cache.py), runs
`gpuvet check --root <fixture> --json <file> --quiet` on each, removes the fields that
change from run to run (summary.duration_ms, root) and diffs the rest against
tests/golden/expected/<name>.json. It also checks that the exit code agrees with the
verdict (0 for pass/warn, 1 for fail). With GPUVET_UPDATE_GOLDEN=1 the expected files are
rewritten instead. Exit 0 when everything matches, 1 otherwise."""

import difflib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected")
# Device names come from this small pci.ids, not the host's, so the expected reports are
# the same on every distribution.
PCI_IDS = os.path.join(HERE, "..", "fixtures", "pci.ids")

sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
from machines import FIXTURES  # noqa: E402
import fixture_cache  # noqa: E402


def normalise(report):
    report.pop("root", None)
    report.get("summary", {}).pop("duration_ms", None)
    return report


def dump(obj):
    return json.dumps(obj, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def run_one(gpuvet, root, name, update):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, name + ".json")
        proc = subprocess.run([gpuvet, "check", "--root", root, "--json", out, "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              env=dict(os.environ, GPUVET_PCI_IDS=PCI_IDS))
        if proc.returncode not in (0, 1):
            print("FAIL %s: gpuvet exited %d\n%s" % (name, proc.returncode, proc.stderr))
            return False
        try:
            with open(out) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            print("FAIL %s: no readable JSON report: %s" % (name, e))
            return False
    ok = True
    verdict = report.get("summary", {}).get("verdict")
    want_rc = 1 if verdict == "fail" else 0
    if verdict not in ("pass", "warn", "fail", "skip", "error"):
        print("FAIL %s: bad verdict %r" % (name, verdict))
        ok = False
    elif proc.returncode != want_rc:
        print("FAIL %s: exit code %d but verdict %s (want %d)" % (name, proc.returncode, verdict, want_rc))
        ok = False
    if proc.stderr.strip():
        print("note %s: gpuvet wrote to stderr:\n%s" % (name, proc.stderr.rstrip()))

    got = dump(normalise(report))
    path = os.path.join(EXPECTED, name + ".json")
    if update:
        os.makedirs(EXPECTED, exist_ok=True)
        with open(path, "w") as f:
            f.write(got)
        print("updated %s" % os.path.relpath(path))
        return ok
    try:
        with open(path) as f:
            want = f.read()
    except OSError as e:
        print("FAIL %s: %s (run with GPUVET_UPDATE_GOLDEN=1 to create it)" % (name, e))
        return False
    if got != want:
        diff = difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                    "expected/%s.json" % name, "got/%s.json" % name)
        sys.stdout.writelines(diff)
        print("FAIL %s: report differs from the golden file (GPUVET_UPDATE_GOLDEN=1 rewrites it)" % name)
        return False
    if ok:
        print("ok   %s (%s)" % (name, verdict))
    return ok


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: run_golden.py GPUVET [NAME ...]\n")
        return 2
    gpuvet = os.path.abspath(argv[1])
    names = argv[2:] or list(FIXTURES)
    fixtures = fixture_cache.ensure(*names)
    update = os.environ.get("GPUVET_UPDATE_GOLDEN") == "1"
    results = [run_one(gpuvet, os.path.join(fixtures, n), n, update) for n in names]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
