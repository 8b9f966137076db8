#!/usr/bin/env python3
"""A capture that holds no /dev, /proc or /sys is judged on what it holds (suite 'golden').

    test_capture_absent.py GPUVET SRC_ROOT

`gpuvet check --root` judges captures: gpuvet's own snapshots, and other tools' copies of a
node's files, which often leave a whole tree out (device nodes are not kept by an unprivileged
unpack; a tool that copies /sys and /proc has no /dev). A tree absent from the capture says
nothing about the node: every check whose input lies there must skip, saying so, and the
verdict must not get worse than the whole capture's. An `error` there turned the verdict to
FAIL with no failed check (issue 37).

For every fixture machine and each tree of TREES, a private copy of the fixture without that
tree is checked (NVML not asked: the trees are what is judged) and must give:
- exit 0 or 1, a complete JSON report;
- no `error` result;
- no result worse than the same check and subject on the whole capture, and a verdict no worse;
- at least one skip naming the absent tree (/dev, /proc), where the whole capture had a result
  citing it.
Exit 0 when every case holds, 1 otherwise (each miss printed)."""

import json
import os
import subprocess
import sys
import tempfile

GPUVET, SRC_ROOT = sys.argv[1:3]
sys.path.insert(0, os.path.join(SRC_ROOT, "tests", "fixtures"))
import fixture_cache  # noqa: E402

PCI_IDS = os.path.join(SRC_ROOT, "tests", "fixtures", "pci.ids")
TREES = ["dev", "proc", "sys", "proc/sys", "proc/driver/nvidia"]
RANK = {"skip": 0, "pass": 1, "warn": 2, "fail": 3, "error": 4}

failures = []


def machines():
    out = subprocess.run([sys.executable, os.path.join(SRC_ROOT, "tests", "fixtures", "mkfixture.py"), "--list"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def check(root, out):
    env = dict(os.environ, GPUVET_PCI_IDS=PCI_IDS)
    p = subprocess.run([GPUVET, "check", "--root", root, "--no-nvml", "--json", out, "--quiet"],
                       capture_output=True, text=True, timeout=120, env=env)
    try:
        with open(out) as f:
            return p.returncode, json.load(f), p.stderr
    except (OSError, ValueError):
        return p.returncode, None, p.stderr


def cites(result, tree):
    text = json.dumps([result.get("summary"), result.get("evidence")])
    return "/" + tree + "/" in text or '"/' + tree + '"' in text


def main():
    names = machines()
    fixture_cache.ensure(*names)
    with fixture_cache.scratch("gpuvet-capture-absent-") as tmp:
        for name in names:
            rc, whole, err = check(fixture_cache.path(name), os.path.join(tmp, name + ".json"))
            if whole is None or rc not in (0, 1):
                failures.append("%s: the whole capture: exit %d, %s" % (name, rc, err.strip()[-300:]))
                continue
            before = {(r["id"], r.get("subject")): r["status"] for r in whole["checks"]}
            for tree in TREES:
                if not os.path.isdir(os.path.join(fixture_cache.path(name), tree)):
                    continue
                label = "%s without /%s" % (name, tree)
                root = fixture_cache.writable(name, os.path.join(tmp, name + "-" + tree.replace("/", "-")),
                                              without=[tree])
                rc, rep, err = check(root, os.path.join(tmp, "report.json"))
                fixture_cache.release(root)
                if rep is None or rc not in (0, 1):
                    failures.append("%s: exit %d, no report: %s" % (label, rc, err.strip()[-300:]))
                    continue
                for r in rep["checks"]:
                    key = (r["id"], r.get("subject"))
                    if r["status"] == "error":
                        failures.append("%s: %s %s is an error: %s" % (label, r["id"], key[1], r["summary"]))
                    elif key in before and RANK[r["status"]] > RANK[before[key]] and r["status"] != "skip":
                        failures.append("%s: %s %s is %s (%s), %s on the whole capture" %
                                        (label, r["id"], key[1], r["status"], r["summary"], before[key]))
                if RANK[rep["summary"]["verdict"]] > RANK[whole["summary"]["verdict"]]:
                    failures.append("%s: verdict %s, %s on the whole capture" %
                                    (label, rep["summary"]["verdict"], whole["summary"]["verdict"]))
                said = [r for r in rep["checks"] if r["status"] == "skip" and "/" + tree in r["summary"]]
                cited = [r for r in whole["checks"] if r["status"] != "skip" and cites(r, tree)]
                if tree in ("dev", "proc") and cited and not said:
                    failures.append("%s: no skip says the capture holds no /%s (%d results cited it)" %
                                    (label, tree, len(cited)))
    for f in failures:
        print("FAIL " + f)
    print("%d fixture machines x %d trees: %d problems" % (len(names), len(TREES), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
