#!/usr/bin/env python3
"""Real machines captured by gpuvet itself (suite 'golden').

Usage: test_captured.py GPUVET SRC_ROOT FAKE_LIB

Each tests/captures/<machine>/ holds what a real GPU server showed (SOURCES.md there):
`gpuvet snapshot` of it (snapshot.tar.xz), its `nvidia-smi -q`, one row of its
`nvidia-smi --query-gpu` for every field gpuvet supports, and optionally nvml-extra.scn
(NVML readings nvidia-smi -q does not print, included after the converted scenario).
For each machine:

1. the snapshot is unpacked and `nvidia-smi -q` converted to a fake-NVML scenario
   (tests/fakes/smi2scenario.py), and `gpuvet check --root <snapshot>` with the fake playing
   that scenario gives tests/captures/<machine>/expected-check.json (the fields that change
   between runs removed; GPUVET_UPDATE_GOLDEN=1 rewrites it), and each verdict listed in
   EXPECTED_VERDICTS below (the regressions a capture once exposed) holds;
2. `gpuvet query` of every field reproduces the captured nvidia-smi row, except readings
   that move between two samples (nvidia-smi -q and the CSV were taken moments apart).
"""
import json
import os
import subprocess
import sys
import tempfile

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
CAPTURES = os.path.join(SRC_ROOT, "tests", "captures")
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
PCI_IDS = os.path.join(SRC_ROOT, "tests", "fixtures", "pci.ids")
os.environ.setdefault("FAKE_NVML_LIB", FAKE_LIB)
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

# check id -> status, per capture: what was wrong on the real machine before the fix.
EXPECTED_VERDICTS = {
    "h100-sxm-vm-580": {
        "pcie.bar1": "pass",          # 64-bit register BAR: the 128 GiB aperture is register 2
        "gpu.nvlink": "skip",         # one SXM GPU in a VM: NVML answers NOT_SUPPORTED per link
        "gpu.persistenced": "pass",   # no daemon, but persistence mode on
        "gpu.nvml": "pass",
    },
}
# Readings that change between nvidia-smi -q (the scenario) and the CSV taken after it.
LIVE = ("timestamp", "temperature.gpu", "power.draw", "utilization.gpu", "utilization.memory", "clocks.current.sm",
        "clocks.current.graphics", "clocks.current.memory", "clocks.sm", "clocks.gr", "clocks.mem", "memory.used",
        "memory.free", "pstate", "clocks_event_reasons.active", "clocks_event_reasons.gpu_idle")

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def normalise(report):
    report.pop("root", None)
    report.get("summary", {}).pop("duration_ms", None)
    for r in report.get("checks", []):
        r.pop("duration_ms", None)
        # where the fake library was built differs between checkouts
        if (r.get("evidence") or {}).get("library"):
            r["evidence"]["library"] = "<fake libnvidia-ml.so.1>"
    return report


def test_check(name, cap, root, scn):
    out = os.path.join(os.path.dirname(root), "check.json")
    env = fakeenv.gpuvet_env(scn, {"GPUVET_NVML_LIB": FAKE_LIB, "GPUVET_PCI_IDS": PCI_IDS})
    r = subprocess.run([GPUVET, "check", "--root", root, "--json", out, "--quiet"], env=env, capture_output=True,
                       text=True, timeout=120)
    if not check(r.returncode in (0, 1), "%s: check exit %d: %s" % (name, r.returncode, r.stderr)):
        return
    report = normalise(json.load(open(out)))
    status = {}
    for res in report["checks"]:
        status.setdefault(res["id"], set()).add(res["status"])
    for cid, want in EXPECTED_VERDICTS.get(name, {}).items():
        check(status.get(cid) == {want}, "%s: %s is %s, expected %s" % (name, cid, sorted(status.get(cid, [])), want))
    expected = os.path.join(cap, "expected-check.json")
    text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("GPUVET_UPDATE_GOLDEN") == "1":
        open(expected, "w").write(text)
        print("updated " + expected)
    elif check(os.path.exists(expected), "%s: no %s" % (name, expected)):
        check(open(expected).read() == text, "%s: check report differs from %s (GPUVET_UPDATE_GOLDEN=1 shows how)"
              % (name, expected))
    print("ok: %s: check, %d results" % (name, len(report["checks"])))


def test_query(name, cap, scn):
    lines = open(os.path.join(cap, "nvidia-smi-query.csv")).read().split("\n")
    fields = lines[0].split("--query-gpu=")[1].split()[0].split(",")
    want = [c.strip() for c in lines[1].split(", ")]
    check(len(want) == len(fields), "%s: capture row has %d cells for %d fields" % (name, len(want), len(fields)))
    env = fakeenv.gpuvet_env(scn, {"GPUVET_NVML_LIB": FAKE_LIB})
    r = subprocess.run([GPUVET, "query", "--query-gpu=" + ",".join(fields), "--format=csv,noheader"], env=env,
                       capture_output=True, text=True, timeout=60)
    if not check(r.returncode == 0, "%s: query exit %d: %s" % (name, r.returncode, r.stderr)):
        return
    got = [c.strip() for c in r.stdout.strip().split(", ")]
    same = 0
    for f, g, w in zip(fields, got, want):
        if f in LIVE:
            continue
        same += check(g == w, "%s: %s = %r, nvidia-smi printed %r" % (name, f, g, w))
    print("ok: %s: query, %d fields identical to nvidia-smi" % (name, same))


def main():
    machines = sorted(d for d in os.listdir(CAPTURES) if os.path.isdir(os.path.join(CAPTURES, d)))
    check(machines, "no capture in " + CAPTURES)
    for name in machines:
        cap = os.path.join(CAPTURES, name)
        with tempfile.TemporaryDirectory() as tmp:
            try:
                root, scn = fakeenv.capture_machine(cap, tmp)
            except RuntimeError as e:
                check(False, "%s: %s" % (name, e))
                continue
            test_check(name, cap, root, scn)
            test_query(name, cap, scn)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
