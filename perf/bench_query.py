#!/usr/bin/env python3
"""Benchmark `gpuvet query` of every supported field against gpustat and pynvml, same fake.

Usage: perf/bench_query.py [--gpuvet build/gpuvet] [--fake-lib build/tests/libnvidia-ml.so.1]
                            [--build-dir build/tests] [--scenario h100-sxm-8gpu] [--runs 30]

All three read the same fake libnvidia-ml.so.1 (tests/fakes) on the same scenario, in the
same run, interleaved round by round so that machine noise falls on all alike:
  gpuvet   gpuvet query --query-gpu=<every field of --help-query-gpu> --format=csv
  gpustat  gpustat --json
  pynvml   a Python script reading, with nvidia-ml-py, the NVML values behind those fields
Wall time per process (fork to exit), stdout to /dev/null. gpustat and nvidia-ml-py come
from the venv tests/fakes/fakeenv.py creates under the build dir (pip). The target (issue 3)
is gpuvet at least 50x faster than gpustat; results go in docs/perf.md.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import machine  # perf/machine.py: the line naming this machine

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

PYNVML_SCRIPT = r"""
import pynvml as N
N.nvmlInit()
def get(f, *a):
    try:
        return f(*a)
    except (N.NVMLError, AttributeError):
        return None
rows = [N.nvmlSystemGetDriverVersion(), N.nvmlDeviceGetCount()]
for i in range(N.nvmlDeviceGetCount()):
    h = N.nvmlDeviceGetHandleByIndex(i)
    r = [get(N.nvmlDeviceGetName, h), get(N.nvmlDeviceGetSerial, h), get(N.nvmlDeviceGetUUID, h),
         get(N.nvmlDeviceGetPciInfo_v3, h), get(N.nvmlDeviceGetCurrPcieLinkGeneration, h),
         get(N.nvmlDeviceGetMaxPcieLinkGeneration, h), get(N.nvmlDeviceGetCurrPcieLinkWidth, h),
         get(N.nvmlDeviceGetMaxPcieLinkWidth, h), get(N.nvmlDeviceGetDisplayMode, h),
         get(N.nvmlDeviceGetDisplayActive, h), get(N.nvmlDeviceGetPersistenceMode, h),
         get(N.nvmlDeviceGetVbiosVersion, h), get(N.nvmlDeviceGetFanSpeed, h),
         get(N.nvmlDeviceGetPerformanceState, h), get(N.nvmlDeviceGetCurrentClocksEventReasons, h),
         get(N.nvmlDeviceGetMemoryInfo, h, N.nvmlMemory_v2), get(N.nvmlDeviceGetComputeMode, h),
         get(N.nvmlDeviceGetCudaComputeCapability, h), get(N.nvmlDeviceGetUtilizationRates, h),
         get(N.nvmlDeviceGetEccMode, h), get(N.nvmlDeviceGetRetiredPagesPendingStatus, h),
         get(N.nvmlDeviceGetRemappedRows, h), get(N.nvmlDeviceGetTemperature, h, N.NVML_TEMPERATURE_GPU),
         get(N.nvmlDeviceGetPowerUsage, h), get(N.nvmlDeviceGetPowerManagementLimit, h),
         get(N.nvmlDeviceGetEnforcedPowerLimit, h), get(N.nvmlDeviceGetPowerManagementDefaultLimit, h),
         get(N.nvmlDeviceGetPowerManagementLimitConstraints, h), get(N.nvmlDeviceGetMigMode, h),
         get(lambda: N.nvmlDeviceGetGpuFabricInfo(h, N.byref(N.c_nvmlGpuFabricInfo_t())))]
    for e in (N.NVML_MEMORY_ERROR_TYPE_CORRECTED, N.NVML_MEMORY_ERROR_TYPE_UNCORRECTED):
        for k in (N.NVML_VOLATILE_ECC, N.NVML_AGGREGATE_ECC):
            r.append(get(N.nvmlDeviceGetTotalEccErrors, h, e, k))
    for c in (N.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, N.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR):
        r.append(get(N.nvmlDeviceGetRetiredPages, h, c))
    for t in (N.NVML_CLOCK_GRAPHICS, N.NVML_CLOCK_SM, N.NVML_CLOCK_MEM, N.NVML_CLOCK_VIDEO):
        r += [get(N.nvmlDeviceGetClockInfo, h, t), get(N.nvmlDeviceGetMaxClockInfo, h, t),
              get(N.nvmlDeviceGetApplicationsClock, h, t), get(N.nvmlDeviceGetDefaultApplicationsClock, h, t)]
    rows.append(r)
N.nvmlShutdown()
print(rows)
"""


def run_once(argv, env):
    start = time.perf_counter()
    p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = (time.perf_counter() - start) * 1e3
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(argv[:2])} exited {p.returncode}: {p.stderr[-2000:]}")
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpuvet", default=os.path.join(REPO, "build", "gpuvet"))
    ap.add_argument("--fake-lib", default=os.path.join(REPO, "build", "tests", "libnvidia-ml.so.1"))
    ap.add_argument("--build-dir", default=None, help="where the client venv lives (default: the fake's dir)")
    ap.add_argument("--scenario", default="h100-sxm-8gpu")
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    machine.print_header()

    fake_lib = os.path.abspath(args.fake_lib)
    os.environ.setdefault("FAKE_NVML_LIB", fake_lib)
    os.environ.setdefault("FAKE_NVML_BUILD_DIR", os.path.abspath(args.build_dir or os.path.dirname(fake_lib)))
    sys.path.insert(0, os.path.join(REPO, "tests", "fakes"))
    import fakeenv

    py = fakeenv.venv_python()
    scenario = os.path.join(REPO, "tests", "fakes", "scenarios", args.scenario + ".scn")
    env = fakeenv.run_env(scenario, {"GPUVET_NVML_LIB": fake_lib})
    gpuvet = os.path.abspath(args.gpuvet)
    fields = re.findall(r'^"([^"]+)"', subprocess.run([gpuvet, "query", "--help-query-gpu"], capture_output=True,
                                                      text=True, check=True).stdout, re.M)
    tools = {
        "gpuvet": [gpuvet, "query", "--query-gpu=" + ",".join(fields), "--format=csv"],
        "gpustat": [os.path.join(os.path.dirname(py), "gpustat"), "--json"],
        "pynvml": [py, "-c", PYNVML_SCRIPT],
    }
    for argv in tools.values():  # warm the page cache and Python's bytecode cache
        for _ in range(3):
            run_once(argv, env)
    walls = {name: [] for name in tools}
    for _ in range(args.runs):
        for name, argv in tools.items():
            walls[name].append(run_once(argv, env))

    print(f"scenario {args.scenario}, {len(fields)} fields, {args.runs} runs each, interleaved")
    med = {name: statistics.median(xs) for name, xs in walls.items()}
    for name, xs in walls.items():
        q = statistics.quantiles(xs, n=20)
        print(f"{name:8s} median {med[name]:8.2f} ms  p5 {q[0]:8.2f}  p95 {q[-1]:8.2f}  "
              f"({med[name] / med['gpuvet']:.1f}x gpuvet)")
    ratio = med["gpustat"] / med["gpuvet"]
    print(f"gpustat / gpuvet = {ratio:.1f}x (target >= 50x): {'met' if ratio >= 50 else 'NOT met'}")
    # gpustat sleeps 0.1 s per GPU on purpose (gpustat/core.py, to sample process CPU%):
    # without those sleeps, what its NVML work and Python cost.
    n_gpus = len(fakeenv.load_scenario(scenario)["gpus"])
    rest = med["gpustat"] - 100.0 * n_gpus
    print(f"gpustat less its {n_gpus} x 100 ms sleeps: {rest:.2f} ms = {rest / med['gpuvet']:.1f}x gpuvet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
