#!/usr/bin/env python3
"""NVML calls and wall time of `gpuvet query`, per binary, on the fake NVML (docs/perf.md).

Usage: perf/bench_query_calls.py --fake-lib build/tests/libnvidia-ml.so.1
           --gpuvet OLD/gpuvet --gpuvet build/gpuvet [--runs 40] [--rounds 3]

For each binary: the NVML calls (the fake's $FAKE_NVML_CALL_LOG) of --query-gpu=name and of
six common fields on the 8-GPU scenario, then the wall time of a query of every field the
last binary supports, interleaved round by round (--runs processes per binary per round).
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time
import machine  # perf/machine.py: the line naming this machine

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "tests", "fakes", "scenarios", "h100-sxm-8gpu.scn")
FIELD_SETS = ["name", "name,uuid,memory.used,utilization.gpu,temperature.gpu,power.draw"]


def env_for(lib, log=None):
    env = dict(os.environ, FAKE_NVML_SCENARIO=os.path.abspath(SCENARIO), GPUVET_NVML_LIB=os.path.abspath(lib))
    if log:
        env["FAKE_NVML_CALL_LOG"] = log
    return env


def calls(gpuvet, lib, fields):
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "calls.log")
        subprocess.run([gpuvet, "query", "--query-gpu=" + fields, "--format=csv,noheader"], env=env_for(lib, log),
                       stdout=subprocess.DEVNULL, check=True)
        with open(log) as f:
            gpus = [line.split()[1] for line in f if line.strip()]
    return len(gpus), gpus.count("0"), gpus.count("-1")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuvet", action="append", required=True)
    ap.add_argument("--fake-lib", required=True)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    machine.print_header()
    for g in a.gpuvet:
        for fields in FIELD_SETS:
            total, gpu0, system = calls(g, a.fake_lib, fields)
            print("%s --query-gpu=%s: %d NVML calls, GPU 0 %d, system %d" % (g, fields, total, gpu0, system))
    help_text = subprocess.run([a.gpuvet[-1], "query", "--help-query-gpu"], capture_output=True, text=True).stdout
    every = ",".join(l.split('"')[1] for l in help_text.splitlines() if l.startswith('"'))
    env = env_for(a.fake_lib)
    for rnd in range(a.rounds):
        for g in a.gpuvet:
            times = []
            for _ in range(a.runs):
                t0 = time.perf_counter()
                subprocess.run([g, "query", "--query-gpu=" + every, "--format=csv"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times.append(time.perf_counter() - t0)
            print("round %d %s, all %d fields: median %.2f ms" %
                  (rnd + 1, g, every.count(",") + 1, statistics.median(times) * 1000))


if __name__ == "__main__":
    main()
