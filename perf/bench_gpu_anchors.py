#!/usr/bin/env python3
"""gpuvet against nvbandwidth and PyTorch on a GPU machine: the figures of docs/perf.md's
"On a real H100" section.

    bench_gpu_anchors.py --gpuvet build/gpuvet --nvbandwidth /path/to/nvbandwidth [--rounds 5]

Each round runs, one after the other on GPU 0: `gpuvet bench transfer -b cuda --size 256M
--reps 20`, `nvbandwidth -t host_to_device_memcpy_ce device_to_host_memcpy_ce
device_local_copy` (its default 512 MiB buffers), `gpuvet bench memory -b cuda --reps 20`
(1 GiB arrays). After the rounds, once: `gpuvet bench gemm -b cuda` and perf/anchor_torch.py
(skipped when PyTorch sees no GPU). Prints each round and then the medians with their ratios.
nvbandwidth is built outside the tree (docs/perf.md gives the commands); never commit it.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import machine  # perf/machine.py: the line naming this machine

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode not in (0, 1):  # bench exits 1 when a measurement fails: its figures still count
        sys.exit("bench_gpu_anchors: %s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr[-500:]))
    return r.stdout


def gpuvet_medians(gpuvet, args):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        run([gpuvet, "bench"] + args + ["-q", "--json", f.name])
        report = json.load(open(f.name))
    return {m["name"]: m["stats"]["median"] for m in report["measurements"] if m.get("stats")
            and m["subject"].startswith("gpu0")}


def nvbandwidth_sums(nvb):
    out = run([nvb, "-t", "host_to_device_memcpy_ce", "device_to_host_memcpy_ce", "device_local_copy"])
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^SUM (\S+) ([0-9.]+)", out, re.M)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuvet", default=os.path.join(HERE, "..", "build", "gpuvet"))
    ap.add_argument("--nvbandwidth", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    machine.print_header()

    rows = []
    for i in range(args.rounds):
        t = gpuvet_medians(args.gpuvet, ["transfer", "-b", "cuda", "--size", "256M", "--reps", "20"])
        nv = nvbandwidth_sums(args.nvbandwidth)
        m = gpuvet_medians(args.gpuvet, ["memory", "-b", "cuda", "--reps", "20"])
        row = {"h2d": t["h2d_pinned"], "d2h": t["d2h_pinned"], "nvb_h2d": nv["host_to_device_memcpy_ce"],
               "nvb_d2h": nv["device_to_host_memcpy_ce"], "nvb_local": nv["device_local_copy"]}
        row.update({k: m[k] for k in ("triad", "read", "write", "copy", "device_copy")})
        rows.append(row)
        print("round %d: %s" % (i + 1, ", ".join("%s %.2f" % kv for kv in row.items())), flush=True)

    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print("\nmedians of %d rounds" % args.rounds)
    print("  H2D pinned   gpuvet %8.2f GB/s  nvbandwidth %8.2f  ratio %.3f" % (med["h2d"], med["nvb_h2d"],
                                                                               med["h2d"] / med["nvb_h2d"]))
    print("  D2H pinned   gpuvet %8.2f GB/s  nvbandwidth %8.2f  ratio %.3f" % (med["d2h"], med["nvb_d2h"],
                                                                               med["d2h"] / med["nvb_d2h"]))
    print("  device copy  gpuvet %8.0f GB/s  nvbandwidth %8.0f  ratio %.3f" % (med["device_copy"], med["nvb_local"],
                                                                               med["device_copy"] / med["nvb_local"]))
    for k in ("triad", "read", "write", "copy"):
        print("  %-12s gpuvet %8.0f GB/s" % (k, med[k]))

    g = gpuvet_medians(args.gpuvet, ["gemm", "-b", "cuda"])
    torch = {}
    try:
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run([sys.executable, os.path.join(HERE, "anchor_torch.py"), "--json", f.name], check=True,
                           capture_output=True, timeout=600)
            torch = json.load(open(f.name))
    except (subprocess.CalledProcessError, OSError, ValueError) as e:
        print("\nPyTorch anchor not run: %s" % e)
    print("\nGEMM n=8192 (TFLOPS)")
    for p in ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8"):
        ours, theirs = g.get(p + "_8192"), torch.get("gemm_%s_8192_tflops" % p)
        print("  %-5s gpuvet %8s  PyTorch %8s%s" % (p, "%.1f" % ours if ours else "-", "%.1f" % theirs if theirs else "-",
                                                    "  ratio %.2f" % (ours / theirs) if ours and theirs else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
