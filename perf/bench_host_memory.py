#!/usr/bin/env python3
"""gpuvet bench host-memory against the reference STREAM, alternately, on the same machine.

    perf/bench_host_memory.py GPUVET STREAM_BINARY [--runs N] [--elems N] [--threads N]

STREAM_BINARY is stream.c built outside this tree with the same array size, e.g.
    gcc -O3 -fopenmp -DSTREAM_ARRAY_SIZE=80000000 -DNTIMES=10 stream.c -o stream_omp_80M
(docs/perf.md gives the exact commands). Each round runs gpuvet (1 warm-up + NTIMES-1
repetitions, as STREAM discards its first) and then STREAM with OMP_NUM_THREADS set to the
same thread count, so drifting machine load hits both alike.

Per run, each tool gives a best rate (STREAM's "Best Rate MB/s"; gpuvet's max sample)
and a typical one (STREAM: bytes / avg time; gpuvet: median sample). Printed: the median
over runs of each, per kernel, and gpuvet/STREAM ratios. Both count bytes the STREAM way.
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

KERNELS = ["copy", "scale", "add", "triad"]
ARRAYS = {"copy": 2, "scale": 2, "add": 3, "triad": 3}


def run_gpuvet(gpuvet, elems, threads, reps):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [gpuvet, "bench", "host-memory", "--size", str(elems * 8), "--threads", str(threads),
               "--reps", str(reps), "--warmup", "1", "--precision", "fp64", "--quiet", "--json", f.name]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode not in (0, 1):
            sys.exit("gpuvet failed (%d): %s" % (p.returncode, p.stderr))
        doc = json.load(open(f.name))
    out = {}
    for m in doc["measurements"]:
        if m["subject"] == "host" and m["name"] in KERNELS:
            if not m["verified"]:
                sys.exit("gpuvet %s not verified: %s" % (m["name"], m["verify_error"]))
            out[m["name"]] = (max(m["samples"]), statistics.median(m["samples"]))
    return out


def run_stream(binary, elems, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    p = subprocess.run([binary], capture_output=True, text=True, env=env)
    if p.returncode != 0 or "Solution Validates" not in p.stdout:
        sys.exit("STREAM failed or did not validate:\n" + p.stdout + p.stderr)
    m = re.search(r"Array size = (\d+)", p.stdout)
    if not m or int(m.group(1)) != elems:
        sys.exit("STREAM array size %s differs from --elems %d" % (m.group(1) if m else "?", elems))
    out = {}
    for k in KERNELS:
        line = re.search(r"^%s:\s+([\d.]+)\s+([\d.]+)" % k.capitalize(), p.stdout, re.M)
        best_mbs, avg_s = float(line.group(1)), float(line.group(2))
        out[k] = (best_mbs / 1e3, ARRAYS[k] * 8 * elems / avg_s / 1e9)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gpuvet")
    ap.add_argument("stream")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--elems", type=int, default=80_000_000, help="STREAM_ARRAY_SIZE the binary was built with")
    ap.add_argument("--ntimes", type=int, default=10, help="NTIMES the binary was built with")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    a = ap.parse_args()
    machine.print_header()

    ours = {k: ([], []) for k in KERNELS}
    ref = {k: ([], []) for k in KERNELS}
    for i in range(a.runs):
        g = run_gpuvet(a.gpuvet, a.elems, a.threads, a.ntimes - 1)
        s = run_stream(a.stream, a.elems, a.threads)
        for k in KERNELS:
            for j in (0, 1):
                ours[k][j].append(g[k][j])
                ref[k][j].append(s[k][j])
        print("run %d: triad best gpuvet %.1f / STREAM %.1f GB/s" % (i + 1, g["triad"][0], s["triad"][0]),
              file=sys.stderr)

    print("%d runs, %d elements per array, %d threads (GB/s, medians over runs)" % (a.runs, a.elems, a.threads))
    print("%-6s %12s %12s %7s   %12s %12s %7s" % ("kernel", "gpuvet best", "STREAM best", "ratio",
                                                  "gpuvet med", "STREAM avg", "ratio"))
    for k in KERNELS:
        gb, sb = statistics.median(ours[k][0]), statistics.median(ref[k][0])
        gm, sm = statistics.median(ours[k][1]), statistics.median(ref[k][1])
        print("%-6s %12.1f %12.1f %7.3f   %12.1f %12.1f %7.3f" % (k, gb, sb, gb / sb, gm, sm, gm / sm))


if __name__ == "__main__":
    main()
