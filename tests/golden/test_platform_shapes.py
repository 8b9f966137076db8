#!/usr/bin/env python3
"""Healthy nodes of today's fleet are judged healthy (suite 'golden', issue 37).

    test_platform_shapes.py GPUVET SRC_ROOT FAKE_LIB

Whole-node checks (`gpuvet check --root <fixture>` with the fake NVML playing a scenario) of
shapes that healthy nodes have and that once failed or warned:
- a driver of R590 or later, which answers NVML_ERROR_DEPRECATED for the applications clocks
  (the real L40S capture on 595.80, tests/fakes/scenarios/captured-l40s.scn);
- a cloud instance whose platform wires the GPU x8: a warning with the bandwidth it leaves,
  never a failure with a reseat remedy;
- an idle GPU whose link trained down to Gen1 (sysfs and NVML): no finding, while the same
  link on a busy GPU warns.
Each case asserts the statuses by hand, so a golden file rewritten by mistake still fails.
Exit 0 when every case holds, 1 otherwise."""

import json
import os
import subprocess
import sys

GPUVET, SRC_ROOT, FAKE_LIB = (os.path.abspath(a) for a in sys.argv[1:4])
sys.path.insert(0, os.path.join(SRC_ROOT, "tests", "fixtures"))
import fixture_cache  # noqa: E402

SCN = os.path.join(SRC_ROOT, "tests", "golden", "nvml-scenarios")
PCI_IDS = os.path.join(SRC_ROOT, "tests", "fixtures", "pci.ids")
GPU = "0000:02:00.0"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL " + what)


def run(root, scenario_text, out):
    scn = out + ".scn"
    with open(scn, "w") as f:
        f.write(scenario_text)
    env = dict(os.environ, GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=FAKE_LIB, FAKE_NVML_SCENARIO=scn)
    p = subprocess.run([GPUVET, "check", "--root", root, "--json", out, "--quiet"], env=env,
                       capture_output=True, text=True, timeout=120)
    with open(out) as f:
        report = json.load(f)
    return p.returncode, report


def result(report, cid, subject=None):
    rs = [r for r in report["checks"] if r["id"] == cid and (subject is None or r.get("subject") == subject)]
    return rs[0] if len(rs) == 1 else None


def include(name, extra=""):
    return "include %s\n%s" % (os.path.join(SCN, name), extra)


def no_errors(label, report):
    for r in report["checks"]:
        check(r["status"] != "error", "%s: %s %s is an error: %s" % (label, r["id"], r.get("subject"), r["summary"]))


def main():
    fixture_cache.ensure("l40s-vm-595", "cloud-x8")
    with fixture_cache.scratch("gpuvet-shapes-") as tmp:
        # R595: the applications clocks are deprecated, the node is healthy.
        label = "l40s-vm-595 (driver 595.80)"
        rc, rep = run(fixture_cache.path("l40s-vm-595"), include("golden-l40s-guest.scn"), os.path.join(tmp, "a.json"))
        check(rc == 0 and rep["summary"]["verdict"] == "pass",
              "%s: verdict %s (exit %d), want pass" % (label, rep["summary"]["verdict"], rc))
        no_errors(label, rep)
        ac = result(rep, "gpu.app_clocks", GPU)
        check(ac and ac["status"] == "skip" and "deprecated" in ac["summary"] and "locked clocks" in ac["summary"],
              "%s: gpu.app_clocks %r, want a skip naming the deprecation and locked clocks" % (label, ac))

        # The x8 cloud instance: warnings that say what the platform leaves, no reseat.
        label = "cloud-x8"
        rc, rep = run(fixture_cache.path("cloud-x8"), include("golden-l40s-guest-x8.scn"), os.path.join(tmp, "b.json"))
        check(rc == 0 and rep["summary"]["verdict"] == "warn",
              "%s: verdict %s (exit %d), want warn" % (label, rep["summary"]["verdict"], rc))
        no_errors(label, rep)
        for cid in ("pcie.link_width", "gpu.pcie_nvml"):
            r = result(rep, cid, GPU)
            check(r and r["status"] == "warn", "%s: %s is %s, want warn" % (label, cid, r and r["status"]))
            check(r and "reseat" not in (r.get("remedy") or "").lower(),
                  "%s: %s's remedy is physical: %r" % (label, cid, r and r.get("remedy")))
        lw = result(rep, "pcie.link_width", GPU)
        check(lw and "16 of 32 GB/s per direction" in lw["summary"],
              "%s: pcie.link_width does not give the bandwidth left: %r" % (label, lw and lw["summary"]))
        guest = result(rep, "passthrough.guest")
        check(guest and guest["status"] == "pass", "%s: passthrough.guest is %r" % (label, guest))

        # An idle GPU at Gen1 (sysfs and NVML) is normal; a busy one at Gen1 warns.
        root = fixture_cache.writable("l40s-vm-595", os.path.join(tmp, "gen1"))
        with open(os.path.join(root, "sys", "bus", "pci", "devices", GPU, "current_link_speed"), "w") as f:
            f.write("2.5 GT/s PCIe\n")
        for activity, reasons, want, verdict in (("idle", "0x1", "pass", "pass"), ("busy", "0x0", "warn", "warn")):
            label = "l40s-vm-595 at Gen1, %s" % activity
            text = include("golden-l40s-guest.scn", "[gpu 0]\npcie_gen_current = 1\nclocks_event_reasons = %s\n" % reasons)
            rc, rep = run(root, text, os.path.join(tmp, activity + ".json"))
            check(rep["summary"]["verdict"] == verdict,
                  "%s: verdict %s, want %s" % (label, rep["summary"]["verdict"], verdict))
            no_errors(label, rep)
            for cid in ("pcie.link_speed", "gpu.pcie_nvml"):
                r = result(rep, cid, GPU)
                check(r and r["status"] == want, "%s: %s is %s (%s), want %s" %
                      (label, cid, r and r["status"], r and r["summary"], want))
                check(r and activity in r["summary"], "%s: %s does not say the GPU is %s: %r" %
                      (label, cid, activity, r and r["summary"]))
        fixture_cache.release(root)
    print("platform shapes: %d problems" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
