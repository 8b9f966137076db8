#!/usr/bin/env python3
"""Stand-in for nvidia-smi, playing a captured machine (tests/captures/<machine>/), for
tests/golden/test_gpu_run.py. It answers what tools/gpu-run.sh and its helpers ask:

  -q                                       the capture's nvidia-smi-q.txt
  topo -m                                  a matrix of the capture's GPUs (no links)
  --query-gpu=F,... --format=csv,noheader  the capture's nvidia-smi-query.csv, those columns;
                                           a field the capture lacks: nvidia-smi's refusal
                                           ('Field "F" is not a valid field to query.', exit 2)
  dmon -d S -c N --gpm-metrics IDS         N rows S seconds apart: each GPU's gpm_activity
                                           and gpm_traffic of $FAKE_NVML_SCENARIO (the fake
                                           NVML's GPM answers), in the order IDS asks

$FAKE_SMI_CAPTURE names the capture folder. Anything else: exit 2, naming it."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakeenv  # noqa: E402  (load_scenario)

CAPTURE = os.environ.get("FAKE_SMI_CAPTURE", "")
# GPM metric id -> (scenario key, index in it, dmon's column name)
GPM = {1: ("gpm_activity", 0, "gract"), 2: ("gpm_activity", 1, "smact"), 3: ("gpm_activity", 2, "smocc"),
       5: ("gpm_activity", 3, "anyta"), 10: ("gpm_activity", 4, "drama"), 11: ("gpm_activity", 5, "fp64a"),
       12: ("gpm_activity", 6, "fp32a"), 13: ("gpm_activity", 7, "fp16a"), 20: ("gpm_traffic", 0, "pcitx"),
       21: ("gpm_traffic", 1, "pcirx"), 60: ("gpm_traffic", 2, "nvlrx"), 61: ("gpm_traffic", 3, "nvltx")}


def capture(name):
    with open(os.path.join(CAPTURE, name)) as f:
        return f.read()


def query(fields):
    lines = capture("nvidia-smi-query.csv").split("\n")
    have = lines[0].split("--query-gpu=")[1].split()[0].split(",")
    rows = [[c.strip() for c in line.split(", ")] for line in lines[1:] if line.strip()]
    for f in fields:
        if f not in have:
            print('Field "%s" is not a valid field to query.' % f)
            print()
            return 2
    for row in rows:
        print(", ".join(row[have.index(f)] for f in fields))
    return 0


def dmon(args):
    delay, count, ids = 1.0, 1, []
    for i, a in enumerate(args):
        if a == "-d":
            delay = float(args[i + 1])
        elif a == "-c":
            count = int(args[i + 1])
        elif a == "--gpm-metrics":
            ids = [int(x) for x in args[i + 1].split(",")]
    gpus = fakeenv.load_scenario(os.environ["FAKE_NVML_SCENARIO"])["gpus"]
    print("# gpu " + " ".join("%6s" % GPM[i][2] for i in ids))
    print("# Idx " + " ".join("%6s" % ("%" if GPM[i][0] == "gpm_activity" else "MB/s") for i in ids))
    for n in range(count):
        for g in sorted(gpus):
            cells = []
            for i in ids:
                key, pos, _ = GPM[i]
                vals = gpus[g].get(key, "").split()
                cells.append("%6s" % (vals[pos] if pos < len(vals) and vals[pos] != "-" else "-"))
            print("  %3d " % g + " ".join(cells))
        sys.stdout.flush()
        if n + 1 < count:
            time.sleep(delay)
    return 0


def main(args):
    if args == ["-q"]:
        sys.stdout.write(capture("nvidia-smi-q.txt"))
        return 0
    if args == ["topo", "-m"]:
        n = len(capture("nvidia-smi-query.csv").strip().split("\n")) - 1
        print("\t" + "\t".join("GPU%d" % g for g in range(n)) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID")
        for g in range(n):
            print("GPU%d\t" % g + "\t".join(" X " if h == g else "SYS" for h in range(n)) + "\t\t\tN/A")
        return 0
    if args and args[0].startswith("--query-gpu=") and "--format=csv,noheader" in args:
        return query(args[0].split("=", 1)[1].split(","))
    if args and args[0] == "dmon":
        return dmon(args[1:])
    print("fake nvidia-smi: not played: %s" % " ".join(args), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
