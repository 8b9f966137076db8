#!/usr/bin/env python3
"""Put gpuvet serve's GPM series beside `nvidia-smi dmon --gpm-metrics` on a live GPU machine.

Starts `gpuvet serve` on a loopback port for --seconds, scrapes its /metrics a few times
while `nvidia-smi dmon` samples the same GPM metrics once a second, and writes both raw
outputs (serve-metrics-N.txt, dmon.txt under --out) and a table per GPU: each DCGM_FI_PROF_*
series in NVML's unit (percent, MiB/s; the mean of the scrapes after the first, which has
no window yet) beside the mean of dmon's column for the same GPM metric. dmon names its
GPM columns in its own words; they are matched by position, in the order of the metric ids
asked for (GPM_IDS), and the header is printed so that the match can be read off.
Two independent samplers see different windows: a cell agrees within 5 points (percent) or
5% (MiB/s). Prints one summary line first; exit 0 when every cell both gave agrees, 1
otherwise or when either gave none, 2 when a tool cannot run. No GPU and no GPM (Ampere
and older): nothing to compare, exit 1 with the reason.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

# (DCGM series, NVML GPM metric id, unit) in the order dmon is asked for them.
GPM = [("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1, "%"), ("DCGM_FI_PROF_SM_ACTIVE", 2, "%"),
       ("DCGM_FI_PROF_SM_OCCUPANCY", 3, "%"), ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 5, "%"),
       ("DCGM_FI_PROF_DRAM_ACTIVE", 10, "%"), ("DCGM_FI_PROF_PIPE_FP64_ACTIVE", 11, "%"),
       ("DCGM_FI_PROF_PIPE_FP32_ACTIVE", 12, "%"), ("DCGM_FI_PROF_PIPE_FP16_ACTIVE", 13, "%"),
       ("DCGM_FI_PROF_PCIE_TX_BYTES", 20, "MiB/s"), ("DCGM_FI_PROF_PCIE_RX_BYTES", 21, "MiB/s"),
       ("DCGM_FI_PROF_NVLINK_RX_BYTES", 60, "MiB/s"), ("DCGM_FI_PROF_NVLINK_TX_BYTES", 61, "MiB/s")]
GPM_IDS = ",".join(str(i) for _, i, _ in GPM)
MIB = 1048576.0


def start_serve(gpuvet, seconds, out):
    """gpuvet serve on a free loopback port; (process, port)."""
    err = open(os.path.join(out, "serve.log"), "w")
    proc = subprocess.Popen([gpuvet, "serve", "-l", "127.0.0.1:0", "--interval-ms", "1000", "-T", "%ds" % (seconds + 5)],
                            stdout=err, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and proc.poll() is None:
        with open(os.path.join(out, "serve.log")) as f:
            m = re.search(r"port (\d+) open", f.read())
        if m:
            return proc, int(m.group(1))
        time.sleep(0.1)
    proc.kill()
    sys.exit("gpm-compare: gpuvet serve did not open a port (serve.log)")


def scrape(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
            return r.read().decode()
    except OSError as e:
        return "# scrape failed: %s\n" % e


def series(text):
    """{gpu: {series: value}} of the DCGM_FI_PROF_* lines."""
    got = {}
    for m in re.finditer(r'^(DCGM_FI_PROF_\w+)\{([^}]*)\} (\S+)$', text, re.M):
        gpu = re.search(r'gpu="(\d+)"', m.group(2))
        if gpu:
            got.setdefault(int(gpu.group(1)), {})[m.group(1)] = float(m.group(3))
    return got


def dmon_table(text):
    """(header names, {gpu: [[column values]...]}) of dmon's output; '-' is None."""
    names, rows = [], {}
    for line in text.splitlines():
        if line.startswith("#"):
            if not names:
                names = line[1:].split()
            continue
        cells = line.split()
        if not cells or not cells[0].isdigit():
            continue
        vals = []
        for c in cells[1:]:
            try:
                vals.append(float(c))
            except ValueError:
                vals.append(None)
        rows.setdefault(int(cells[0]), []).append(vals)
    return names, rows


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def agrees(a, b, unit):
    if unit == "%":
        return abs(a - b) <= 5.0
    return abs(a - b) <= 0.05 * max(abs(a), abs(b)) + 1.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuvet", default="build/gpuvet")
    ap.add_argument("--seconds", type=int, default=20, help="how long serve and dmon run")
    ap.add_argument("--out", default=".", help="folder for the raw outputs")
    ap.add_argument("--json", help="write every cell here")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    proc, port = start_serve(args.gpuvet, args.seconds, args.out)
    dmon_cmd = ["nvidia-smi", "dmon", "-d", "1", "-c", str(args.seconds), "--gpm-metrics", GPM_IDS]
    try:
        dmon = subprocess.Popen(dmon_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as e:
        proc.send_signal(signal.SIGTERM)
        sys.exit("gpm-compare: nvidia-smi cannot run: %s" % e)
    scrapes, t0 = [], time.monotonic()
    n = max(3, args.seconds // 4)
    for i in range(n):
        time.sleep(max(0.0, t0 + (i + 1) * args.seconds / (n + 1) - time.monotonic()))
        text = scrape(port)
        scrapes.append(text)
        with open(os.path.join(args.out, "serve-metrics-%d.txt" % (i + 1)), "w") as f:
            f.write(text)
    try:
        dmon_out, _ = dmon.communicate(timeout=args.seconds + 10)
    except subprocess.TimeoutExpired:
        dmon.kill()
        dmon_out = dmon.communicate()[0] + "\n# gpm-compare: dmon killed, it ran past its count\n"
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    with open(os.path.join(args.out, "dmon.txt"), "w") as f:
        f.write("# $ " + " ".join(dmon_cmd) + "\n" + dmon_out)

    # The first scrape may come before the sampler's second round: its window is empty.
    per_gpu = {}
    for text in scrapes:
        for gpu, vals in series(text).items():
            for name, v in vals.items():
                per_gpu.setdefault(gpu, {}).setdefault(name, []).append(v)
    names, rows = dmon_table(dmon_out)
    gpm_names = names[-len(GPM):] if len(names) > len(GPM) else []
    cells, counts = [], {"agree": 0, "differ": 0, "serve_only": 0, "dmon_only": 0}
    for gpu in sorted(set(per_gpu) | set(rows)):
        cols = list(zip(*rows.get(gpu, []))) if rows.get(gpu) else []
        gpm_cols = cols[-len(GPM):] if len(cols) >= len(GPM) else []
        for k, (name, gid, unit) in enumerate(GPM):
            s = mean(per_gpu.get(gpu, {}).get(name, []))
            if s is not None:
                s = s * 100.0 if unit == "%" else s / MIB
            d = mean(gpm_cols[k]) if gpm_cols else None
            if s is None and d is None:
                continue
            verdict = ("serve_only" if d is None else "dmon_only" if s is None
                       else "agree" if agrees(s, d, unit) else "differ")
            counts[verdict] += 1
            cells.append({"gpu": gpu, "series": name, "gpm_metric": gid, "unit": unit, "serve": s, "dmon": d,
                          "dmon_column": gpm_names[k] if gpm_names else None, "verdict": verdict})
    print("gpm-compare: %d GPUs, %d scrapes, %d dmon rows: %d agree, %d differ, %d serve only, %d dmon only"
          % (len(set(per_gpu) | set(rows)), len(scrapes), sum(len(r) for r in rows.values()), counts["agree"],
             counts["differ"], counts["serve_only"], counts["dmon_only"]))
    print("dmon header: %s" % " ".join(names))
    print("%-4s %-34s %-8s %12s %12s  %s" % ("gpu", "series", "dmon", "serve", "dmon", "verdict"))
    for c in cells:
        print("%-4d %-34s %-8s %12s %12s  %s" % (c["gpu"], c["series"], c["dmon_column"] or "-",
                                                  "-" if c["serve"] is None else "%.2f" % c["serve"],
                                                  "-" if c["dmon"] is None else "%.2f" % c["dmon"], c["verdict"]))
    if not cells:
        print("no GPM series from serve and no GPM column from dmon (a GPU before Hopper has no GPM)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpm_ids": GPM_IDS, "dmon_header": names, "scrapes": len(scrapes), "counts": counts,
                       "cells": cells}, f, indent=1)
    return 0 if cells and counts["agree"] == len(cells) else 1


if __name__ == "__main__":
    sys.exit(main())
