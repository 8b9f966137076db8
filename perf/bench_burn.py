#!/usr/bin/env python3
"""How busy `gpuvet burn` keeps an OpenCL device, and its GEMM rate against the device's
FMA peak as `gpuvet bench compute` measures it, in the same run.

    perf/bench_burn.py --gpuvet build/gpuvet [--seconds 20] [--runs 3] [--precision fp32]

Each run, in turn: `bench compute` (fp32/fp64 FMA median), then `burn -m gemm` for SECONDS
with the default verification interval (gpuvet's choice: at least every 10 products), then the same with
verification only at the start and the end (--verify-every 1000000). From each burn
report: the GEMM rate (flops / device-timed seconds), and the host's share of the run,
1 - device_seconds / load_seconds: the launch gaps alone (second burn), and the gaps plus
verification (first burn). Target (issue 14): host share under 2%. The device is PoCL's
CPU device (--allow-cpu), so the figures say how lean the worker's loop is; on a GPU the
verification is a larger share at the default n and interval (docs/burn.md). Exit 1 when
the median host share with verification is 2% or more."""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402  perf/machine.py: the line naming this machine


def run_json(cmd, timeout):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    try:
        return json.loads(p.stdout)
    except ValueError:
        sys.exit("%s: no JSON (exit %d): %s" % (" ".join(cmd), p.returncode, p.stderr[-500:]))


def fma_peak(gpuvet, precision):
    doc = run_json([gpuvet, "bench", "compute", "--backend", "opencl", "-q", "-j", "-"], 900)
    want = {"fp32": "fp32_fma", "fp64": "fp64_fma"}.get(precision)
    for m in doc["measurements"]:
        if m["name"] == want and m.get("stats"):
            return m["stats"]["median"], m.get("params", {}).get("device", "?")
    return None, "?"


def burn(gpuvet, seconds, precision, verify_every):
    """verify_every None: gpuvet's own choice (at least 10, more where verifying costs more)."""
    interval = ["--verify-every", str(verify_every)] if verify_every else []
    doc = run_json([gpuvet, "burn", "--backend", "opencl", "--allow-cpu", "--gpus", "0", "-d", "%ds" % seconds,
                    "-p", precision, *interval, "--no-progress", "-q", "-j", "-"], seconds * 3 + 120)
    d = doc["burn"]["devices"][0]
    g = d["gemm"]
    if d["end"] != "done" or not g["device_seconds"]:
        sys.exit("burn did not run to the end: %s" % json.dumps(d)[:500])
    return {
        "gflops": g["flops"] / g["device_seconds"] / 1e9,
        "host_share": 1 - g["device_seconds"] / g["load_seconds"],
        "products": g["products"],
        "verifications": g["verifications"],
        "workload": d["loads"]["gemm"]["workload"],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuvet", default="build/gpuvet")
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "fp64"])
    a = ap.parse_args()
    machine.print_header()
    rows = []
    for i in range(a.runs):
        peak, device = fma_peak(a.gpuvet, a.precision)
        verified = burn(a.gpuvet, a.seconds, a.precision, None)
        bare = burn(a.gpuvet, a.seconds, a.precision, 1000000)
        rows.append((peak, verified, bare))
        print("run %d: device %s; bench compute %s FMA %.1f GFLOPS; burn GEMM %.1f GFLOPS (%.0f%% of FMA), "
              "host share %.2f%% with the default verification (%d products, %d verifications), %.2f%% without "
              "(%d products)" % (i + 1, device, a.precision, peak or 0, verified["gflops"],
                                 100 * verified["gflops"] / peak if peak else 0, 100 * verified["host_share"],
                                 verified["products"], verified["verifications"], 100 * bare["host_share"],
                                 bare["products"]), flush=True)
    print("workload: %s" % rows[0][1]["workload"])
    share = statistics.median(r[1]["host_share"] for r in rows)
    print("median: GEMM %.1f GFLOPS, %.0f%% of the FMA peak; host share %.2f%% with verification, %.2f%% without" % (
        statistics.median(r[1]["gflops"] for r in rows),
        100 * statistics.median(r[1]["gflops"] / r[0] for r in rows if r[0]),
        100 * share, 100 * statistics.median(r[2]["host_share"] for r in rows)))
    print(machine.describe("after"))
    return 0 if share < 0.02 else 1


if __name__ == "__main__":
    sys.exit(main())
