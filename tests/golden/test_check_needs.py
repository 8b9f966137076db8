#!/usr/bin/env python3
"""gpuvet check gathers only what its selected checks need: NVML is loaded only when a
selected check reads it (check_info.needs).

    test_check_needs.py GPUVET FAKE_NVML_LIB OUTDIR

With the fake NVML named ($GPUVET_NVML_LIB) and its load log ($FAKE_NVML_LOAD_LOG):
`--only cpu` and `--only pcie.link_width` never load it; `--only gpu.nvml` and `--only pcie`
(pcie.bar1 compares NVML's BAR1 size) do. Every check run alone (--only ID) gives the
verdicts it gives in a full run, so a check that reads NVML without declaring it fails here. Exit 0 when every case holds, 1 otherwise."""
import json
import os
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


def run_check(gpuvet, lib, root, log, only):
    if os.path.exists(log):
        os.unlink(log)
    env = dict(os.environ, GPUVET_NVML_LIB=lib, FAKE_NVML_SCENARIO=run_check.scenario, FAKE_NVML_LOAD_LOG=log)
    args = [gpuvet, "check", "--root", root, "--json", "-", "--no-policy"] + (["--only", only] if only else [])
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    loaded = os.path.exists(log) and os.path.getsize(log) > 0
    try:
        results = {(r["id"], r["subject"]): r["status"] for r in json.loads(p.stdout)["checks"]}
    except (ValueError, KeyError):
        results = {"error": p.stdout[-300:] + p.stderr[-300:]}
    return p.returncode, loaded, results


def main():
    gpuvet, lib, outdir = (os.path.abspath(a) for a in sys.argv[1:4])
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
    # Every check alone: a check that reads NVML without declaring it would judge differently.
    ids = sorted({check_id for check_id, _ in full})
    differ = []
    for check_id in ids:
        _, _, results = run_check(gpuvet, lib, root, log, check_id)
        if "error" in results or any(full.get(k) != v for k, v in results.items()):
            differ.append(check_id)
    check(len(ids) > 40 and differ == [], "each of the %d checks alone judges as in the full run (differ: %s)"
          % (len(ids), differ))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
