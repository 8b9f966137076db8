#!/usr/bin/env python3
"""Count the files one `gpuvet check [--only CATEGORY]` opens on a fixture (issue 40: check
gathers only what the selected checks declare; docs/perf.md).

Usage: perf/check_opens.py [--gpuvet build/gpuvet ...] [--fixture dgx-h100]
                           [--only cpu,memory,kernel,network,pcie,gpu]

Each binary (a commit before and after, say) runs one whole quick check and one per
--only category under `strace -f -e trace=openat,openat2`; the table gives the opens and
their share of the whole check's. A count, not a time: the machine's load does not change
it. Needs strace.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def opens(gpuvet, root, only, tmp):
    log = os.path.join(tmp, "strace.log")
    cmd = ["strace", "-f", "-e", "trace=openat,openat2", "-o", log, gpuvet, "check", "--root", root, "--quiet"]
    if only:
        cmd += ["--only", only]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    with open(log, errors="replace") as f:
        # A call that another thread interrupts spans two lines, "openat(... <unfinished ...>"
        # and "<... openat resumed>": count the first only.
        return sum(1 for line in f if "openat(" in line or "openat2(" in line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuvet", action="append")
    ap.add_argument("--fixture", default="dgx-h100")
    ap.add_argument("--only", default="cpu,memory,kernel,network,pcie,gpu")
    a = ap.parse_args()
    if not shutil.which("strace"):
        sys.exit("perf/check_opens.py: strace is not installed")
    binaries = a.gpuvet or [os.path.join(REPO, "build", "gpuvet")]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(REPO, "tests", "fixtures", "mkfixture.py"), tmp, a.fixture],
                       check=True, stdout=subprocess.DEVNULL)
        root = os.path.join(tmp, a.fixture)
        cases = [None] + a.only.split(",")
        counts = {b: [opens(b, root, c, tmp) for c in cases] for b in binaries}
    print("| command | " + " | ".join(binaries) + " | of a whole check (last) |")
    print("| --- |" + " --- |" * (len(binaries) + 1))
    last = counts[binaries[-1]]
    for i, c in enumerate(cases):
        name = "`check` (whole, quick)" if c is None else "`check --only %s`" % c
        cells = " | ".join("{:,}".format(counts[b][i]) for b in binaries)
        print("| %s | %s | %.0f%% |" % (name, cells, 100.0 * last[i] / last[0] if last[0] else 0))


if __name__ == "__main__":
    main()
