#!/usr/bin/env python3
"""gpuvet check gathers only what its selected checks need (check_info.needs, NEED_* bits of
src/sys/inputs.def), and every check declares what it reads.

    test_check_needs.py GPUVET FAKE_NVML_LIB OUTDIR GPUVET_TEST_HOOKS

With the fake NVML named ($GPUVET_NVML_LIB) and its load log ($FAKE_NVML_LOAD_LOG):
`--only cpu` and `--only pcie.link_width` never load it; `--only gpu.nvml` and `--only pcie`
(pcie.bar1 compares NVML's BAR1 size) do. Then, on the dgx-h100 fixture and its degraded
twin, gpuvet-test-hooks with GPUVET_TEST_POISON_UNDECLARED=1 runs each check with every input
it did not declare overwritten: a check that reads one crashes or judges garbage, so the
poisoned run must give the very results of the plain one, at every level. Last, every check
run alone (--only ID, poisoned) gives the results it gives in a full run: a check alone gathers
no more than it declares. Exit 0 when every case holds, 1 otherwise."""
import json
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCENARIO = os.path.join(REPO, "tests", "fakes", "scenarios", "h100-sxm-8gpu.scn")


FIXTURE_GPUS = ["1b", "43", "52", "61", "9d", "c3", "d1", "df"]  # the dgx-h100 fixture's GPU buses


def matching_scenario(outdir):
    """The 8x H100 scenario at the fixture's PCI addresses, so NVML's GPUs are the fixture's and
    every NVML check judges them."""
    path = os.path.join(outdir, "h100-at-fixture.scn")
    with open(path, "w") as f:
        f.write("include %s\n" % SCENARIO)
        for i, bus in enumerate(FIXTURE_GPUS):
            f.write("[gpu %d]\npci_bus_id = 00000000:%s:00.0\n" % (i, bus.upper()))
    return path


def run_check(gpuvet, lib, root, log, only, level="quick", poison=False, whole=False):
    """(exit code, whether NVML loaded, {(id, subject): status}, or the whole result with whole)."""
    if os.path.exists(log):
        os.unlink(log)
    env = dict(os.environ, GPUVET_NVML_LIB=lib, FAKE_NVML_SCENARIO=run_check.scenario, FAKE_NVML_LOAD_LOG=log,
               GPUVET_TEST_POISON_UNDECLARED="1" if poison else "0")
    args = [gpuvet, "check", "--root", root, "--json", "-", "--no-policy", "--level", level, "-q",
            "--no-progress"] + (["--only", only] if only else [])
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    loaded = os.path.exists(log) and os.path.getsize(log) > 0
    try:
        results = {(r["id"], r["subject"]): json.dumps(steady(r), sort_keys=True) if whole else r["status"]
                   for r in json.loads(p.stdout)["checks"]}
    except (ValueError, KeyError):
        results = {"error": "exit %d: %s %s" % (p.returncode, p.stdout[-300:], p.stderr[-300:])}
    return p.returncode, loaded, results


def steady(result):
    """The result without what differs from run to run: the seconds between NVML's two
    readings ("0.1 s around the device probes"), and a GPU scope's UUID, which NVML gives:
    a check alone that does not read NVML names its GPU by PCI address only."""
    result.get("scope", {}).pop("uuid", None)
    window = result.get("evidence", {}).get("window")
    if window:
        result["evidence"]["window"] = re.sub(r"[0-9.]+ s around", "N s around", window)
    return result


def differing(full, results, only=None):
    """The check ids whose results differ from full's, counting those full has and results
    lacks (all of them, or those of check only); "error" when the run gave none."""
    if "error" in results:
        return ["error: " + results["error"]]
    keys = set(results) | {k for k in full if only is None or k[0] == only}
    return sorted({k[0] for k in keys if full.get(k) != results.get(k)})


def main():
    gpuvet, lib, outdir, hooks = (os.path.abspath(a) for a in sys.argv[1:5])
    os.makedirs(outdir, exist_ok=True)
    root = fixture_cache.path("dgx-h100")
    log = os.path.join(outdir, "nvml-loads.log")
    run_check.scenario = matching_scenario(outdir)
    _, loaded, full = run_check(gpuvet, lib, root, log, None)
    check(loaded and "error" not in full and full.get(("gpu.nvml", "host")) == "pass",
          "a full check loads NVML, and NVML sees the fixture's GPUs (gpu.nvml %s)" % full.get(("gpu.nvml", "host")))
    for only, wants_nvml in (("cpu", False), ("pcie.link_width", False), ("gpu.nvml", True), ("pcie", True)):
        rc, loaded, results = run_check(gpuvet, lib, root, log, only)
        check(loaded == wants_nvml, "--only %s %s NVML" % (only, "loads" if wants_nvml else "does not load"))
        same = results and "error" not in results and all(full.get(k) == v for k, v in results.items())
        check(same, "--only %s: the same verdicts as the full run (%s)" % (only, sorted(results.items())[:3]))
    # Each check with what it did not declare poisoned judges as with it intact, on both fixtures
    # and at every level (standard and full add the probes, container, stress test and
    # benchmarks; under a capture's --root they are not run, and say so).
    for name in ("dgx-h100", "dgx-h100-degraded"):
        froot = fixture_cache.path(name)
        for level in ("quick", "standard", "full"):
            _, _, plain = run_check(hooks, lib, froot, log, None, level, whole=True)
            rc, _, poisoned = run_check(hooks, lib, froot, log, None, level, poison=True, whole=True)
            check("error" not in plain and len(plain) > 200 and rc in (0, 1) and differing(plain, poisoned) == [],
                  "%s, level %s: every check with its undeclared inputs poisoned judges as without (differ: %s)"
                  % (name, level, differing(plain, poisoned)[:5]))
    # Every check alone (poisoned too): it gathers what it declares, and judges as in the full run.
    _, _, full = run_check(hooks, lib, root, log, None, whole=True)
    ids = sorted({check_id for check_id, _ in full})
    differ = []
    for check_id in ids:
        _, _, results = run_check(hooks, lib, root, log, check_id, poison=True, whole=True)
        differ += differing(full, results, check_id)
    check(len(ids) > 40 and differ == [], "each of the %d checks alone judges as in the full run (differ: %s)"
          % (len(ids), differ[:5]))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
