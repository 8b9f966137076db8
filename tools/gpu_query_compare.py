#!/usr/bin/env python3
"""Compare `gpuvet query` with `nvidia-smi --query-gpu` cell by cell on a live GPU machine.

Every field gpuvet supports is asked of both, nvidia-smi before and after gpuvet, so a
live reading (temperature, power, clocks, utilization, memory in use) is accepted when it
lies between nvidia-smi's two samples, widened by a small tolerance. Every other cell must
be identical, string for string. Prints one summary line first, then each difference;
exit 0 when every cell agrees, 1 otherwise, 2 when a tool cannot run.
"""
import argparse
import json
import re
import subprocess
import sys

# Readings that change between two samples taken a moment apart.
LIVE_PREFIXES = ("timestamp", "power.draw", "temperature.", "utilization.", "clocks.current.", "clocks.sm",
                 "clocks.gr", "clocks.mem", "clocks.video", "memory.used", "memory.free", "memory.reserved",
                 "fan.speed", "pstate", "clocks_event_reasons.", "clocks_throttle_reasons.", "enforced.power",
                 "power.average", "power.instant", "encoder.stats", "pcie.link.gen.current", "pcie.link.gen.gpucurrent",
                 "pcie.link.width.current")
# Absolute slack around nvidia-smi's two samples, per unit.
SLACK = {"W": 15.0, "MHz": 60.0, "%": 5.0, "MiB": 64.0, "": 3.0}


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def fields_of(gpuvet):
    rc, out, err = run([gpuvet, "query", "--help-query-gpu"])
    if rc != 0:
        sys.exit("query-compare: %s --help-query-gpu failed: %s" % (gpuvet, err.strip()))
    return re.findall(r'^"([^"]+)"', out, re.M)


def rows(text):
    return [[c.strip() for c in line.split(", ")] for line in text.strip().split("\n") if line.strip()]


def smi(fields):
    """nvidia-smi's rows for these fields; fields it refuses get None cells."""
    asked, refused = list(fields), {}
    while asked:
        rc, out, err = run(["nvidia-smi", "--query-gpu=" + ",".join(asked), "--format=csv,noheader"])
        if rc == 0:
            table = [[None] * len(fields) for _ in rows(out)]
            for g, row in enumerate(rows(out)):
                for f, v in zip(asked, row):
                    table[g][fields.index(f)] = v
            return table, refused
        # nvidia-smi names the first field it does not know: leave it out and ask again,
        # one call per refused field instead of one per field.
        m = re.search(r'Field "([^"]+)" is not a valid field', out + err)
        if not m or m.group(1) not in asked:
            break
        refused[m.group(1)] = (out + err).strip().split("\n")[0]
        asked.remove(m.group(1))
    table, refused = None, {}
    for f in fields:  # one by one, to learn which it refuses
        rc, out, err = run(["nvidia-smi", "--query-gpu=" + f, "--format=csv,noheader"])
        col = [r[0] for r in rows(out)] if rc == 0 else None
        if col is None:
            refused[f] = (out + err).strip().split("\n")[0]
            continue
        if table is None:
            table = [[None] * len(fields) for _ in col]
        for g, v in enumerate(col):
            table[g][fields.index(f)] = v
    return table or [], refused


def number(cell):
    m = re.match(r"^(-?\d+(?:\.\d+)?)\s*(\S*)$", cell)
    return (float(m.group(1)), m.group(2)) if m else (None, None)


def agrees(field, ours, before, after):
    if ours in (before, after):
        return "identical"
    if not field.startswith(LIVE_PREFIXES):
        return None
    if field == "timestamp":
        return "live"
    a, ua = number(ours)
    b, ub = number(before)
    c, uc = number(after)
    if a is None or b is None or c is None or not (ua == ub == uc):
        return "live" if field.startswith(("pstate", "clocks_event_reasons.", "clocks_throttle_reasons.")) else None
    slack = SLACK.get(ua, 3.0)
    return "live" if min(b, c) - slack <= a <= max(b, c) + slack else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuvet", default="build/gpuvet")
    ap.add_argument("--json", help="write every cell and its verdict here")
    args = ap.parse_args()

    fields = fields_of(args.gpuvet)
    before, refused = smi(fields)
    rc, out, err = run([args.gpuvet, "query", "--query-gpu=" + ",".join(fields), "--format=csv,noheader"])
    if rc not in (0, 1):
        sys.exit("query-compare: gpuvet query exit %d: %s" % (rc, err.strip()))
    ours = rows(out)
    after, _ = smi(fields)
    if not before or len(before) != len(ours) or len(after) != len(ours):
        print("query-compare: GPU count differs: nvidia-smi %d/%d rows, gpuvet %d" % (len(before), len(after), len(ours)))
        return 1

    cells, counts = [], {"identical": 0, "live": 0, "differ": 0, "refused_by_nvidia_smi": 0}
    for g, row in enumerate(ours):
        for i, f in enumerate(fields):
            b, a = before[g][i], after[g][i]
            if b is None:
                verdict = "refused_by_nvidia_smi"
            else:
                verdict = agrees(f, row[i] if i < len(row) else "<missing>", b, a) or "differ"
            counts[verdict] += 1
            cells.append({"gpu": g, "field": f, "gpuvet": row[i] if i < len(row) else None, "nvidia_smi_before": b,
                          "nvidia_smi_after": a, "verdict": verdict})
    print("query-compare: %d fields x %d GPUs: %d identical, %d live within tolerance, %d differ, %d refused by nvidia-smi"
          % (len(fields), len(ours), counts["identical"], counts["live"], counts["differ"],
             counts["refused_by_nvidia_smi"]))
    for c in cells:
        if c["verdict"] == "differ":
            print("  gpu %d %-40s gpuvet %-28r nvidia-smi %r / %r" % (c["gpu"], c["field"], c["gpuvet"],
                                                                  c["nvidia_smi_before"], c["nvidia_smi_after"]))
    for f, why in sorted(refused.items()):
        print("  nvidia-smi refuses %s: %s" % (f, why))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"fields": fields, "counts": counts, "refused": refused, "cells": cells}, fh, indent=1)
    return 0 if counts["differ"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
