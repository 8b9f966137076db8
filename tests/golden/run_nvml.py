#!/usr/bin/env python3
"""Golden tests of the NVML checks: the dgx-h100 fixture judged with the fake
libnvidia-ml (tests/fakes) playing each scenario.

    run_nvml.py GPUVET FAKE_LIB [NAME ...]

takes the dgx-h100 fixture from the shared cache (tests/fixtures/fixture_cache.py) and runs,
per case, `gpuvet check --level quick --root <fixture> --json <file> --quiet --only <gpu
NVML checks>` with GPUVET_NVML_LIB pointing at a copy of FAKE_LIB and FAKE_NVML_SCENARIO at
tests/<scenario>. The golden-*.scn scenarios (tests/golden/nvml-scenarios) include the
fake's own ones and move their GPUs to the fixture's PCI addresses. The JSON report, less the fields that change
from run to run (duration, root) and with the library's path replaced by "<lib>", is diffed
against tests/golden/expected-nvml/<name>.json; GPUVET_UPDATE_GOLDEN=1 rewrites them. The exit
code must agree with the verdict, and a case may bound the run's wall time (the hang case:
a call that never returns must not hold the run past its deadline). Exit 0 when everything
matches, 1 otherwise."""

import difflib
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402  (time_scale)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected-nvml")
# Scenario paths below are relative to tests/: the golden-*.scn variants live in
# tests/golden/nvml-scenarios and include the fake's own from tests/fakes/scenarios.
TESTS = os.path.join(HERE, "..")
PCI_IDS = os.path.join(HERE, "..", "fixtures", "pci.ids")

NVML_CHECKS = ["gpu.nvml", "gpu.recovery_action", "gpu.driver_compat", "gpu.persistence_mode", "gpu.ecc_mode", "gpu.ecc_errors",
               "gpu.memory_health", "gpu.row_remapper", "gpu.inforom", "gpu.graphics_processes", "gpu.temperature", "gpu.memory_temperature", "gpu.clock_events", "gpu.pcie_nvml", "gpu.nvlink",
               "gpu.fabric_manager", "gpu.power_limit", "gpu.app_clocks", "gpu.mig"]

# name: (scenario, library file name, checks, extra arguments, max wall seconds)
# The library file name matters for the version-mismatch case only: gpuvet reads the
# library's version from it (libnvidia-ml.so.<version>, as the driver installs it) and the
# dgx-h100 fixture's kernel module is 550.54.15.
CASES = {
    "h100-healthy": ("golden/nvml-scenarios/golden-h100-sxm-8gpu.scn", "libnvidia-ml.so.1", NVML_CHECKS, [], None),
    "thermal-slowdown": ("golden/nvml-scenarios/golden-thermal-slowdown.scn", "libnvidia-ml.so.1", NVML_CHECKS, [], None),
    "thermal-tlimit": ("golden/nvml-scenarios/golden-thermal-tlimit.scn", "libnvidia-ml.so.1", NVML_CHECKS, [], None),
    "xid79-lost": ("golden/nvml-scenarios/golden-xid79-lost.scn", "libnvidia-ml.so.1", NVML_CHECKS, [], None),
    "nvlink-down": ("golden/nvml-scenarios/golden-nvlink-down.scn", "libnvidia-ml.so.1", NVML_CHECKS, [], None),
    "mig-enabled": ("golden/nvml-scenarios/golden-mig-enabled.scn", "libnvidia-ml.so.1", NVML_CHECKS, [], None),
    "old-driver-hopper": ("golden/nvml-scenarios/golden-old-driver-hopper.scn", "libnvidia-ml.so.1", NVML_CHECKS, [], None),
    "version-mismatch": ("golden/nvml-scenarios/golden-version-mismatch.scn", "libnvidia-ml.so.555.42.06", NVML_CHECKS, [], None),
    "driver-not-loaded": ("fakes/scenarios/driver-not-loaded.scn", "libnvidia-ml.so.1", NVML_CHECKS, [], None),
    # Two A100s on a fixture of eight H100s: gpu.nvml would only report the six the
    # scenario lacks, so the memory and ECC checks alone are judged.
    "a100-dbe-remap": ("golden/nvml-scenarios/golden-a100-dbe-remap.scn", "libnvidia-ml.so.1",
                       ["gpu.ecc_mode", "gpu.ecc_errors", "gpu.memory_health", "gpu.row_remapper", "gpu.inforom",
                        "gpu.graphics_processes", "gpu.recovery_action", "gpu.driver_compat"], [], None),
    # Eight B200s as NVML shows their links and memory health (the fixture's sysfs devices
    # are H100s, so only those two checks are judged): no legacy NVLink error counters,
    # the NVLink5 counters clean (passes), then with symbol errors, a failed recovery and
    # the BERs over DCGM's limits, and an HBM channel repair pending (fail).
    "b200-nvlink5": ("golden/nvml-scenarios/golden-b200-nvlink5.scn", "libnvidia-ml.so.1",
                     ["gpu.nvlink", "gpu.memory_health"], [], None),
    "b200-nvlink5-faults": ("golden/nvml-scenarios/golden-b200-nvlink5-faults.scn", "libnvidia-ml.so.1",
                            ["gpu.nvlink", "gpu.memory_health"], [], None),
    # nvmlDeviceGetPowerUsage never returns on GPU 3: with a 500 ms call deadline the run
    # ends well within 5 s, reports errors naming the function and GPU, and exits 1.
    "hang": ("golden/nvml-scenarios/golden-hang.scn", "libnvidia-ml.so.1", NVML_CHECKS,
             ["--nvml-call-timeout-ms", str(int(500 * fakeenv.time_scale()))], 5.0 * fakeenv.time_scale()),
}
# The hang case's deadline scales with the machine (docs/testing.md); the expected reports
# state the quiet machine's 500 ms.
HANG_DEADLINE_MS = int(500 * fakeenv.time_scale())


def dump(obj):
    return json.dumps(obj, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def normalise(report, libdir):
    report.pop("root", None)
    report.get("summary", {}).pop("duration_ms", None)
    text = json.dumps(report)
    text = text.replace(json.dumps(libdir)[1:-1], "<libdir>")
    # How long a hung call ran before it was abandoned is measured: a loaded machine adds a
    # few ms past the deadline (the summaries state the deadline itself).
    text = re.sub(r"timeout after \d+ ms", "timeout after <measured> ms", text)
    text = text.replace("within %d ms" % HANG_DEADLINE_MS, "within 500 ms")
    return json.loads(text)


def run_case(gpuvet, fake, root, name, update, tmp):
    scenario, libname, checks, extra, max_s = CASES[name]
    libdir = os.path.join(tmp, "lib-" + name)
    os.makedirs(libdir, exist_ok=True)
    lib = os.path.join(libdir, libname)
    shutil.copyfile(fake, lib)
    out = os.path.join(tmp, name + ".json")
    env = dict(os.environ, GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=lib,
               FAKE_NVML_SCENARIO=os.path.join(TESTS, scenario))
    cmd = [gpuvet, "check", "--level", "quick", "--root", root, "--json", out, "--quiet",
           "--only", ",".join(checks)] + extra
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              env=env, timeout=60)
    except subprocess.TimeoutExpired:
        print("FAIL %s: gpuvet did not finish within 60 s" % name)
        return False
    wall = time.monotonic() - start
    ok = True
    if max_s is not None and wall > max_s:
        print("FAIL %s: took %.1f s, more than %.1f s" % (name, wall, max_s))
        ok = False
    if proc.returncode not in (0, 1):
        print("FAIL %s: gpuvet exited %d\n%s" % (name, proc.returncode, proc.stderr))
        return False
    try:
        with open(out) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print("FAIL %s: no readable JSON report: %s" % (name, e))
        return False
    verdict = report.get("summary", {}).get("verdict")
    want_rc = 1 if verdict == "fail" else 0
    if proc.returncode != want_rc:
        print("FAIL %s: exit code %d but verdict %s (want %d)" % (name, proc.returncode, verdict, want_rc))
        ok = False
    if proc.stderr.strip():
        print("note %s: gpuvet wrote to stderr:\n%s" % (name, proc.stderr.rstrip()))

    got = dump(normalise(report, libdir))
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
        print("FAIL %s: report differs from %s" % (name, os.path.relpath(path)))
        sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                   "expected/" + name, "got/" + name))
        return False
    if ok:
        print("ok   %s (%.2f s)" % (name, wall))
    return ok


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: run_nvml.py GPUVET FAKE_LIB [NAME ...]\n")
        return 2
    gpuvet, fake = argv[1], argv[2]
    names = argv[3:] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        sys.stderr.write("run_nvml.py: unknown case %s (known: %s)\n" % (", ".join(unknown), ", ".join(CASES)))
        return 2
    root = fixture_cache.path("dgx-h100")
    update = os.environ.get("GPUVET_UPDATE_GOLDEN") == "1"
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            ok = run_case(gpuvet, fake, root, name, update, tmp) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
