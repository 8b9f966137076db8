#!/usr/bin/env python3
"""gpuvet's OpenCL memory bandwidth and FP32 peak against clpeak's, on the same OpenCL
device, in the same run: clpeak and gpuvet alternate N times (the order flips every run,
so drift and neighbours' load hit both alike); the medians and ratios are printed.

    perf/bench_opencl_vs_clpeak.py --gpuvet build/gpuvet --clpeak /tmp/anchors/clpeak/build/clpeak [--runs 5]

clpeak is built outside the tree (docs/perf.md says how); nothing of it is in this repo.
Compared figures:
  global memory bandwidth: clpeak's best vector width of "global_memory_bandwidth" (a
    read-only kernel over a 128 MiB buffer on CPU devices) vs gpuvet `bench memory`'s
    "read" (read-only) at --size 128M; gpuvet's triad and copy are printed alongside
    (STREAM counting).
  FP32 peak: clpeak's best width of "single_precision_compute" vs gpuvet `bench compute`'s
    fp32_fma. Each tool's own figure is the median of its repetitions within one run
    (gpuvet) or its single reading (clpeak); across runs the script takes medians.
Target (issue 4): ratio >= 1.0 for both."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def clpeak_run(clpeak, platform, device):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        subprocess.run([clpeak, "--opencl", "--cl-platform", str(platform), "--cl-device", str(device),
                        "--global-memory-bandwidth", "--single-precision-compute", "--json-file", path],
                       check=True, capture_output=True, text=True, timeout=600)
        entries = json.load(open(path))["entries"]
    finally:
        os.unlink(path)
    best = {}
    for e in entries:
        if "value" in e and e["value"] is not None:
            best[e["test"]] = max(best.get(e["test"], 0), float(e["value"]))
    return best.get("global_memory_bandwidth", 0), best.get("single_precision_compute", 0)


def gpuvet_run(gpuvet, gpu, size):
    p = subprocess.run([gpuvet, "bench", "memory,compute", "--backend", "opencl", "--gpus", str(gpu),
                        "--size", size, "--precision", "fp32", "-q", "-j", "-"],
                       capture_output=True, text=True, timeout=600)
    ms = {m["name"]: m for m in json.loads(p.stdout)["measurements"]}
    out = {}
    for n in ["read", "triad", "copy", "fp32_fma"]:
        m = ms.get(n)
        if not m or not m.get("stats") or not m.get("verified"):
            sys.exit("gpuvet %s: no verified figure: %s" % (n, m))
        out[n] = m["stats"]["median"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuvet", required=True)
    ap.add_argument("--clpeak", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", default="128M", help="gpuvet memory array size (clpeak uses 128 MiB on CPUs)")
    ap.add_argument("--gpu", type=int, default=0, help="gpuvet device index")
    ap.add_argument("--cl-platform", type=int, default=0)
    ap.add_argument("--cl-device", type=int, default=0)
    a = ap.parse_args()

    rows = []
    for i in range(a.runs):
        order = ["clpeak", "gpuvet"] if i % 2 == 0 else ["gpuvet", "clpeak"]
        row = {}
        for tool in order:
            if tool == "clpeak":
                row["clpeak_bw"], row["clpeak_fp32"] = clpeak_run(a.clpeak, a.cl_platform, a.cl_device)
            else:
                g = gpuvet_run(a.gpuvet, a.gpu, a.size)
                row.update({"gpuvet_read": g["read"], "gpuvet_triad": g["triad"], "gpuvet_copy": g["copy"],
                            "gpuvet_fp32": g["fp32_fma"]})
        rows.append(row)
        print("run %d (%s first): clpeak BW %.1f GB/s, FP32 %.1f GFLOPS | gpuvet read %.1f, triad %.1f, copy %.1f GB/s, "
              "FP32 %.1f GFLOPS" % (i + 1, order[0], row["clpeak_bw"], row["clpeak_fp32"], row["gpuvet_read"],
                                    row["gpuvet_triad"], row["gpuvet_copy"], row["gpuvet_fp32"]), flush=True)

    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    ratio_ratios_bw = statistics.median(r["gpuvet_read"] / r["clpeak_bw"] for r in rows)
    ratio_ratios_fp = statistics.median(r["gpuvet_fp32"] / r["clpeak_fp32"] for r in rows)
    print("\nmedians over %d alternating runs" % a.runs)
    print("  global memory bandwidth: clpeak %.1f GB/s, gpuvet read %.1f GB/s -> ratio %.2f (median of per-run ratios %.2f)"
          % (med["clpeak_bw"], med["gpuvet_read"], med["gpuvet_read"] / med["clpeak_bw"], ratio_ratios_bw))
    print("    (gpuvet triad %.1f GB/s, copy %.1f GB/s, STREAM counting)" % (med["gpuvet_triad"], med["gpuvet_copy"]))
    print("  FP32 peak:               clpeak %.1f GFLOPS, gpuvet fp32_fma %.1f GFLOPS -> ratio %.2f (median of per-run ratios %.2f)"
          % (med["clpeak_fp32"], med["gpuvet_fp32"], med["gpuvet_fp32"] / med["clpeak_fp32"], ratio_ratios_fp))
    ok = med["gpuvet_read"] >= med["clpeak_bw"] and med["gpuvet_fp32"] >= med["clpeak_fp32"]
    print("target (gpuvet >= clpeak on both): %s" % ("met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
