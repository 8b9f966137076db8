#!/usr/bin/env python3
"""Run gpuvet on this very machine and on bad command lines.

    test_live.py GPUVET

The machine is whatever runs the tests (a CI container, a laptop, a GPU node), so this
asserts the shape of the report, never its verdict: exit 0 or 1, JSON that parses, schema
gpuvet.report/1, every check result complete, statuses valid, summary counts equal to the
results, a reason on every skip and error. Then the usage errors: each exits 2 and names
the problem on stderr."""

import json
import os
import subprocess
import sys
import tempfile

STATUSES = ("pass", "warn", "fail", "skip", "error")
FIELDS = ("id", "category", "level", "subject", "status", "summary", "observed", "expected",
          "remedy", "evidence")


def run(gpuvet, *args):
    return subprocess.run([gpuvet] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120)


def check_report(report, errors):
    if report.get("schema") != "gpuvet.report/1":
        errors.append("schema is %r, not gpuvet.report/1" % report.get("schema"))
    checks = report.get("checks")
    if not isinstance(checks, list) or not checks:
        errors.append("no checks in the report")
        return
    counts = dict.fromkeys(STATUSES, 0)
    for c in checks:
        where = "%s on %s" % (c.get("id"), c.get("subject"))
        missing = [k for k in FIELDS if k not in c]
        if missing:
            errors.append("%s: missing %s" % (where, ", ".join(missing)))
        status = c.get("status")
        if status not in STATUSES:
            errors.append("%s: bad status %r" % (where, status))
            continue
        counts[status] += 1
        if not isinstance(c.get("summary"), str) or not c["summary"].strip():
            errors.append("%s: %s without a summary saying why" % (where, status))
        if status in ("warn", "fail", "error") and not c.get("remedy"):
            errors.append("%s: %s without a remedy" % (where, status))
        if not isinstance(c.get("evidence"), dict):
            errors.append("%s: evidence is not an object" % where)
    summary = report.get("summary", {})
    for s in STATUSES:
        if summary.get(s) != counts[s]:
            errors.append("summary.%s is %r but %d results have that status" % (s, summary.get(s), counts[s]))
    verdict = summary.get("verdict")
    if verdict not in STATUSES:
        errors.append("summary.verdict is %r" % verdict)
    return verdict


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: test_live.py GPUVET\n")
        return 2
    gpuvet = os.path.abspath(argv[1])
    errors = []

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "live.json")
        p = run(gpuvet, "check", "--root", "/", "--json", out, "--quiet")
        if p.returncode not in (0, 1):
            errors.append("gpuvet check on / exited %d: %s" % (p.returncode, p.stderr.strip()))
        else:
            try:
                with open(out) as f:
                    report = json.load(f)
            except (OSError, ValueError) as e:
                errors.append("live report unreadable: %s" % e)
            else:
                verdict = check_report(report, errors)
                want = 1 if verdict == "fail" else 0
                if p.returncode != want:
                    errors.append("exit %d with verdict %s" % (p.returncode, verdict))
                print("live: %d results, verdict %s, exit %d" % (len(report.get("checks", [])), verdict,
                                                                 p.returncode))

    for args in (["--help"], ["check", "--help"], ["--version"]):
        p = run(gpuvet, *args)
        if p.returncode != 0 or not p.stdout.strip():
            errors.append("gpuvet %s: exit %d, stdout %d bytes" % (" ".join(args), p.returncode, len(p.stdout)))

    # Each must exit 2 and name the offending word on stderr.
    for args, word in ((["check", "--bogus"], "--bogus"), (["check", "--level", "nope"], "nope"),
                       (["frobnicate"], "frobnicate"), (["check", "--root", "/nonexistent"], "/nonexistent"),
                       (["check", "--level", "full", "--burn-duration", "0s"], "--burn-duration")):
        p = run(gpuvet, *args)
        if p.returncode != 2:
            errors.append("gpuvet %s: exit %d, want 2" % (" ".join(args), p.returncode))
        if word not in p.stderr:
            errors.append("gpuvet %s: stderr does not name %r: %r" % (" ".join(args), word, p.stderr.strip()))

    # A root without /proc/sys/kernel/hostname (a capture, a container): /etc/hostname names it.
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "etc"))
        with open(os.path.join(root, "etc", "hostname"), "w") as f:
            f.write("gpu-node-17\n")
        p = run(gpuvet, "check", "--root", root, "--no-nvml", "--color", "never")
        if not p.stdout.startswith("gpuvet check — gpu-node-17,"):
            errors.append("host name from /etc/hostname: %r" % p.stdout.split("\n")[0])

    for e in errors:
        print("FAIL " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
