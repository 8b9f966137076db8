#!/usr/bin/env python3
"""gpuvet's OpenCL memory bandwidth and FMA peaks against clpeak's, on the same OpenCL device,
in the same run: clpeak and gpuvet (and, with --gpuvet-before, a second gpuvet build: the
code before a change) take turns N times, the order rotating every run so drift and
neighbours' load hit all alike; per-run ratios and their medians are printed.

    perf/bench_opencl_vs_clpeak.py --gpuvet build/gpuvet --clpeak /tmp/anchors/clpeak/build/clpeak \\
        [--gpuvet-before /tmp/gpuvet-before] [--runs 5]

clpeak is built outside the tree (docs/perf.md says how); nothing of it is in this repo.
The top of the output names the machine: CPU model, its SIMD flags (avx2, avx512f, fma),
the OpenCL device (PoCL: "pthread-<llvm cpu>-<model>") and the load average, before and
after. Compared figures (clpeak: its best vector width of each test, as clpeak reports it):
  read: clpeak "global_memory_bandwidth" (a read-only kernel, 128 MiB on CPU devices) vs
    gpuvet `bench memory` "read" (read-only) at --size 128M.
  copy: clpeak has no copy kernel; gpuvet's "copy" (STREAM counting: bytes read + bytes
    written) is set against the same clpeak read figure: both are bytes moved per second.
  fp32 / fp64 / fp16: clpeak "single/double/half_precision_compute" vs gpuvet `bench
    compute` fp32_fma / fp64_fma / fp16_fma (FLOPs: 2 per FMA on both sides). fp16 only
    where the device has cl_khr_fp16 (PoCL 3.1's CPU device does not: both skip it).
gpuvet's figure is the median of its repetitions within one run, clpeak's its single
reading. Target (issue 13): every ratio >= 1.00. Exit 1 when one is below."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import machine  # perf/machine.py: the line naming this machine

TESTS = [  # (key, clpeak test, gpuvet measurement, unit)
    ("read", "global_memory_bandwidth", "read", "GB/s"),
    ("copy", "global_memory_bandwidth", "copy", "GB/s"),
    ("fp32", "single_precision_compute", "fp32_fma", "GFLOPS"),
    ("fp64", "double_precision_compute", "fp64_fma", "GFLOPS"),
    ("fp16", "half_precision_compute", "fp16_fma", "GFLOPS"),
]


def clpeak_run(clpeak, platform_idx, device):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        subprocess.run([clpeak, "--opencl", "--cl-platform", str(platform_idx), "--cl-device", str(device),
                        "--global-memory-bandwidth", "--single-precision-compute", "--double-precision-compute",
                        "--half-precision-compute", "--json-file", path],
                       check=True, capture_output=True, text=True, timeout=900)
        doc = json.load(open(path))
    finally:
        os.unlink(path)
    best, name = {}, None
    for e in doc["entries"]:
        name = name or e.get("device")
        if e.get("value") is not None:
            best[e["test"]] = max(best.get(e["test"], 0), float(e["value"]))
    return {k: best.get(t) for k, t, _, _ in TESTS}, name


def gpuvet_run(gpuvet, gpu, size):
    out = {}
    for bench, extra in [("memory", ["--size", size]), ("compute", [])]:
        p = subprocess.run([gpuvet, "bench", bench, "--backend", "opencl", "--gpus", str(gpu), *extra, "-q", "-j", "-"],
                           capture_output=True, text=True, timeout=900)
        for m in json.loads(p.stdout)["measurements"]:
            out[m["name"]] = m
    res, shapes = {}, {}
    for key, _, name, _ in TESTS:
        m = out.get(name)
        if m and m.get("status") == "skip":
            res[key] = None
            continue
        if not m or not m.get("stats") or not m.get("verified"):
            sys.exit("gpuvet %s: %s: no verified figure: %s" % (gpuvet, name, json.dumps(m)[:400]))
        res[key] = m["stats"]["median"]
        shapes[key] = m.get("params", {}).get("kernel_shape", "")
    return res, shapes, out.get("read", {}).get("params", {}).get("device", "?")


def fmt(v):
    return "-" if v is None else "%.2f" % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuvet", required=True)
    ap.add_argument("--gpuvet-before", help="a second gpuvet build (before a change), measured alike")
    ap.add_argument("--clpeak", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", default="128M", help="gpuvet memory array size (clpeak uses 128 MiB on CPUs)")
    ap.add_argument("--gpu", type=int, default=0, help="gpuvet device index")
    ap.add_argument("--cl-platform", type=int, default=0)
    ap.add_argument("--cl-device", type=int, default=0)
    a = ap.parse_args()

    tools = ["clpeak", "after"] + (["before"] if a.gpuvet_before else [])
    binary = {"after": a.gpuvet, "before": a.gpuvet_before}
    rows, header = [], False
    for i in range(a.runs):
        order = tools[i % len(tools):] + tools[:i % len(tools)]
        row, la0 = {}, machine.load()
        for tool in order:
            if tool == "clpeak":
                row["clpeak"], dev = clpeak_run(a.clpeak, a.cl_platform, a.cl_device)
            else:
                row[tool], shapes, dev = gpuvet_run(binary[tool], a.gpu, a.size)
                if tool == "after":
                    row["shapes"] = shapes
            if not header:
                machine.print_header("OpenCL device: %s" % dev)
                print("tools: clpeak %s; gpuvet %s%s" % (a.clpeak, a.gpuvet,
                      "; before: gpuvet %s" % a.gpuvet_before if a.gpuvet_before else ""))
                header = True
        row["load"] = "%s -> %s" % (la0, machine.load())
        rows.append(row)
        print("run %d (%s), load average %s" % (i + 1, " > ".join(order), row["load"]), flush=True)
        for key, _, _, unit in TESTS:
            c = row["clpeak"][key]
            line = "  %-4s %-6s clpeak %8s" % (key, unit, fmt(c))
            for t in tools[1:]:
                g = row[t][key]
                line += " | %s %8s x%s" % (t, fmt(g), fmt(g / c) if g is not None and c else "-")
            print(line, flush=True)

    print("\nkernel shapes (gpuvet, last run): " + "; ".join("%s: %s" % (k, v) for k, v in rows[-1]["shapes"].items() if v))
    print("medians over %d runs (ratio: median of the per-run ratios)" % a.runs)
    ok = True
    for key, _, _, unit in TESTS:
        cs = [r["clpeak"][key] for r in rows if r["clpeak"][key] is not None]
        if not cs:
            print("  %-4s: clpeak has no figure on this device (unsupported); gpuvet %s" % (
                key, "skipped too" if all(r["after"][key] is None for r in rows) else "measured"))
            continue
        line = "  %-4s %-6s clpeak %8.2f" % (key, unit, statistics.median(cs))
        for t in tools[1:]:
            gs = [r[t][key] for r in rows if r[t][key] is not None]
            rs = [r[t][key] / r["clpeak"][key] for r in rows if r[t][key] is not None and r["clpeak"][key]]
            if not rs:
                line += " | %s -" % t
                continue
            ratio = statistics.median(rs)
            line += " | %s %8.2f ratio %.2f (min %.2f)" % (t, statistics.median(gs), ratio, min(rs))
            if t == "after" and ratio < 1.0:
                ok = False
        print(line)
    print("target (gpuvet >= clpeak on every figure both measure): %s" % ("met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
