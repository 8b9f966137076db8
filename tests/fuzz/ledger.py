#!/usr/bin/env python3
"""The executions each fuzz target's corpus has seen, summed over every recorded run.

    ledger.py LEDGER CORPUS_ROOT [--goal N] [--pending]

LEDGER is tests/fuzz/ledger.tsv (run_fuzz.py --ledger appends a row per run: date, commit,
target, seconds, executions, edges, features, new inputs, corpus size after). Every target with
a corpus under CORPUS_ROOT is listed, also those never fuzzed. --goal (default 10,000,000)
marks the targets below it; --pending prints only their names, one per line, for
tools/fuzz.sh pending."""
import argparse
import os
import sys

FIELDS = ["date", "commit", "target", "seconds", "executions", "edges", "features", "new", "corpus"]


def read_ledger(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cells = line.rstrip("\n").split("\t")
            if len(cells) != len(FIELDS) or not cells[4].isdigit() or not cells[3].isdigit():
                raise ValueError("%s:%d: expected %d tab-separated fields (%s) with whole seconds and "
                                 "executions" % (path, n, len(FIELDS), ", ".join(FIELDS)))
            rows.append(dict(zip(FIELDS, cells)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ledger")
    ap.add_argument("corpus_root")
    ap.add_argument("--goal", type=int, default=10_000_000)
    ap.add_argument("--pending", action="store_true")
    a = ap.parse_args()
    try:
        rows = read_ledger(a.ledger) if os.path.exists(a.ledger) else []
    except ValueError as e:
        print("ledger.py: %s" % e, file=sys.stderr)
        return 2
    targets = sorted(os.listdir(a.corpus_root))
    total = {t: 0 for t in targets}
    seconds = {t: 0 for t in targets}
    last = {}
    for r in rows:
        t = r["target"]
        total[t] = total.get(t, 0) + int(r["executions"])
        seconds[t] = seconds.get(t, 0) + int(r["seconds"])
        last[t] = r
    pending = [t for t in targets if total[t] < a.goal]
    if a.pending:
        print("\n".join(pending))
        return 0
    print("%-14s %14s %9s %10s %8s  %s" % ("target", "executions", "seconds", "last run", "corpus", "goal"))
    for t in sorted(total):
        r = last.get(t)
        print("%-14s %14s %9d %10s %8d  %s" % (
            t, format(total[t], ","), seconds.get(t, 0), r["date"] if r else "never",
            len(os.listdir(os.path.join(a.corpus_root, t))) if t in targets else 0,
            "met" if total[t] >= a.goal else "%s to go" % format(a.goal - total[t], ",")))
    print("%d of %d targets at %s executions or more" % (len(targets) - len(pending), len(targets),
                                                         format(a.goal, ",")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
