#!/usr/bin/env python3
"""tools/gpu-run.sh end to end on the fakes, so that the script for the next real GPU cannot
rot (suite 'golden'; docs/testing.md "On a machine with a GPU").

    test_gpu_run.py GPUVET SRC_ROOT FAKE_NVML FAKE_CUDA FAKE_CUBLASLT FAKE_NCCL

The machine is the captured H100 guest (tests/captures/h100-sxm-vm-580): its snapshot as the
root ($GPUVET_FSROOT), its nvidia-smi -q converted to the fake NVML's scenario (plus GPM
rates, so that serve has profiling series), and a stand-in nvidia-smi playing the capture
(tests/fakes/fake_nvidia_smi.py); the fake libcuda, cuBLASLt and NCCL play its GPU, the
stand-in container runtime its docker. The script runs with -s (smallest sizes). Checked:
- the limits of the steps add up to at most 480 s (a lent GPU machine has 15 minutes);
- every step has its row in summary.md with an exit code, none TIMED OUT, none skipped
  for the deadline; only the anchors and OpenCL are skipped (none here), each saying why;
- every JSON report parses; all.tar.gz holds the summary;
- tune's revert ran and left the GPU's settings as before apply (`gpuvet query`);
- the whole run stayed within its budget.
The verdicts themselves are not judged: the fakes' figures are not a real GPU's."""
import json
import math
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time

GPUVET, SRC_ROOT, FAKE_NVML, FAKE_CUDA, FAKE_LT, FAKE_NCCL = (os.path.abspath(a) for a in sys.argv[1:7])
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
CAPTURE = os.path.join(SRC_ROOT, "tests", "captures", "h100-sxm-vm-580")
SCRIPT = os.path.join(SRC_ROOT, "tools", "gpu-run.sh")
sys.path.insert(0, os.path.join(SRC_ROOT, "tests"))
sys.path.insert(0, FAKES)
from testlib import check, finish  # noqa: E402
import fakeenv  # noqa: E402

BUDGET = 480
# A sanitizer build or a loaded machine runs slower: the script's -S scales its limits and
# budget (the limits as written still add up to BUDGET or less).
SCALE = math.ceil(max(float(os.environ.get("GPUVET_TEST_TIME_SCALE", "1") or 1),
                      float(os.environ.get("GPUVET_TEST_TIME_SCALE_BUILD", "1") or 1)))
RUN = ["nvidia-smi-q", "nvidia-smi-topo", "info", "topo", "detect", "check-quick-1", "check-quick-2",
       "check-quick-3", "check-standard", "query-compare", "query-loop", "bench-all-cuda", "check-full", "burn",
       "burn-sigint", "bench-train", "bench-nccl", "tune-plan", "tune-apply", "tune-status", "tune-revert",
       "serve-gpm", "container-gpu", "snapshot", "snapshot-replay"]
SKIPPED = {"anchor-nvbandwidth": "no nvbandwidth", "anchor-torch": "no PyTorch", "bench-opencl": "no NVIDIA OpenCL"}
TUNED = "persistence_mode,power.limit,enforced.power.limit,clocks.applications.memory,clocks.applications.graphics"


def limits_sum():
    """The sum of the steps' timeouts as the script gives them (a loop's step counts per turn)."""
    total = 0
    for line in open(SCRIPT):
        m = re.match(r"\s*(?:if )?step (\S+) (\d+) ", line)
        if m:
            total += int(m.group(2)) * (3 if m.group(1) == "check-quick-$i" else 1)
    return total


def machine(tmp):
    """The capture's root, scenario and the environment that points everything at the fakes."""
    root, scn = fakeenv.capture_machine(CAPTURE, tmp)
    with open(scn, "a") as f:
        f.write("[gpu 0]\ngpm_activity = 62.5 58 31.25 40.5 55 0.75 21 3\n"
                "gpm_traffic = 1024 2048.5 40960 38912\n")
    bin_dir = os.path.join(tmp, "bin")
    os.mkdir(bin_dir)
    os.symlink(os.path.join(FAKES, "fake_nvidia_smi.py"), os.path.join(bin_dir, "nvidia-smi"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_", "OCL_ICD"))}
    env.update(PATH=bin_dir + os.pathsep + env.get("PATH", "/usr/bin:/bin"), GPUVET_FSROOT=root,
               GPUVET_NVML_LIB=FAKE_NVML, FAKE_NVML_SCENARIO=scn, FAKE_NVML_STATE=os.path.join(tmp, "nvml.state"),
               FAKE_SMI_CAPTURE=CAPTURE, GPUVET_CUDA_LIB=FAKE_CUDA, FAKE_CUDA_PCI_BUS_IDS="0000:00:06.0",
               FAKE_CUDA_MEM_MIB="256", FAKE_CUDA_PCIE_GBPS="55", FAKE_CUDA_BW_GBPS="3000",
               # the fake's large products timed, not computed: burn's then fail verification
               GPUVET_CUBLASLT_LIB=FAKE_LT, FAKE_CUBLASLT_MATH_LIMIT="1000000", GPUVET_NCCL_LIB=FAKE_NCCL,
               GPUVET_CONTAINER_RUNTIME=os.path.join(FAKES, "fake_container_runtime.py"),
               FAKE_CONTAINER_LOG=os.path.join(tmp, "container.log"), PYTHONDONTWRITEBYTECODE="1", NO_COLOR="1")
    return env


def tuned(env):
    p = subprocess.run([GPUVET, "query", "--query-gpu=" + TUNED, "--format=csv,noheader"], env=env,
                       capture_output=True, text=True, timeout=60)
    return p.stdout if p.returncode == 0 else "query failed: " + p.stderr


def rows(summary):
    got = {}
    for line in summary.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 4 and cells[0] not in ("step", "---"):
            got[cells[0]] = cells
    return got


def main():
    total = limits_sum()
    check(0 < total <= BUDGET, "the steps' limits add up to %d s, within %d s" % (total, BUDGET))
    with tempfile.TemporaryDirectory(prefix="gpuvet-gpu-run-") as tmp:
        env = machine(tmp)
        before = tuned(env)
        check(before.count("\n") == 1, "query reads the captured GPU: " + before)
        out = os.path.join(tmp, "out")
        start = time.monotonic()
        p = subprocess.run(["bash", SCRIPT, "-b", GPUVET, "-o", out, "-s", "-S", str(SCALE)], env=env,
                           capture_output=True, text=True, timeout=BUDGET * SCALE + 60)
        took = time.monotonic() - start
        print("gpu-run.sh -s took %.1f s" % took)
        check(p.returncode == 0, "the script exits 0: %d\n%s" % (p.returncode, p.stderr[-2000:]))
        summary = open(os.path.join(out, "summary.md")).read() if os.path.exists(os.path.join(out, "summary.md")) else ""
        got = rows(summary)
        for name in RUN:
            row = got.get(name)
            check(row is not None and re.fullmatch(r"\d+", row[1]) is not None and "TIMED OUT" not in row[3],
                  "%s ran and its exit code is recorded: %s" % (name, row))
        for name, why in SKIPPED.items():
            row = got.get(name)
            check(row is not None and row[1] == "-" and row[3].startswith("skipped: " + why),
                  "%s is skipped, saying why: %s" % (name, row))
        check(set(got) == set(RUN) | set(SKIPPED), "no other row: %s" % sorted(set(got) - set(RUN) - set(SKIPPED)))
        check("global deadline" not in summary and "TIMED OUT" not in summary, "nothing ran into a deadline")
        m = re.search(r"whole run: (\d+) s of a (\d+) s budget", summary)
        check(m is not None and int(m.group(1)) <= int(m.group(2)) == BUDGET * SCALE and took <= BUDGET * SCALE,
              "the run stayed within its budget (%s, %.0f s)" % (m and m.group(0), took))
        reports = sorted(f for f in os.listdir(out) if f.endswith(".json")) if os.path.isdir(out) else []
        for f in reports:
            try:
                with open(os.path.join(out, f)) as fh:
                    json.load(fh)
                ok = True
            except ValueError as e:
                ok = e
            check(ok is True, "%s parses: %s" % (f, ok))
        want = {"check-quick-1.json", "check-standard.json", "query-compare.json", "bench-all-cuda.json",
                "check-full.json", "burn.json", "burn-sigint.json", "bench-train.json", "bench-nccl.json",
                "tune-plan.json", "tune-status.json", "serve-gpm.json", "container-gpu.json", "check-replay.json"}
        check(want <= set(reports), "every step's JSON report is there, missing: %s" % sorted(want - set(reports)))
        gpm = os.path.join(out, "serve-gpm.json")
        cells = json.load(open(gpm)).get("cells", []) if os.path.exists(gpm) else []
        check(len(cells) == 12 and all(c["verdict"] == "agree" for c in cells),
              "serve's 12 GPM series beside dmon's columns, each agreeing: %s" % [c["verdict"] for c in cells])
        log = os.path.join(out, "tune-apply.log")
        applied = re.search(r"(\d+) values? set, (\d+) refused", open(log).read() if os.path.exists(log) else "")
        # The fake's setters, as NVML's, refuse a caller that is not root.
        check(applied is not None and int(applied.group(1 if os.geteuid() == 0 else 2)) >= 1,
              "tune apply changed a GPU setting (refused, not as root): %s" % (applied and applied.group(0)))
        check(got.get("tune-revert", [None, None])[1] == "0" and not os.path.exists(os.path.join(out, "tune-state.json")),
              "tune revert ran, exit 0, and forgot its snapshot")
        after = tuned(env)
        check(after == before, "the GPU's settings are as before apply:\n%s%s" % (before, after))
        try:
            with tarfile.open(os.path.join(out, "all.tar.gz")) as t:
                names = t.getnames()
        except (OSError, tarfile.TarError) as e:
            names = [str(e)]
        check("./summary.md" in names and "./burn.log" in names, "all.tar.gz holds the summary and the logs")
        print(summary)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
