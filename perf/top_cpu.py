#!/usr/bin/env python3
"""CPU used by `gpuvet top` while it shows a busy 8-GPU node (docs/perf.md, "gpuvet top").

Usage: perf/top_cpu.py [--gpuvet build/gpuvet] [--fake-lib build/tests/libnvidia-ml.so.1]
                       [--scenario tests/golden/top-scenarios/busy.scn] [--seconds 60]
                       [--interval 1] [--size 80x24]

gpuvet top runs in a detached tmux session of the given size on a tmux server of its own,
against the fake NVML (in gpuvet's process: its calls count as gpuvet's CPU, as real
NVML's would). After the first frame, the script reads utime + stime of gpuvet's process
from /proc/PID/stat, waits SECONDS, reads them again, and prints the CPU share of one
core over that wall time, with the frames' count (the sample sequence number shown).
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import machine  # perf/machine.py: the line naming this machine

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuvet", default=os.path.join(REPO, "build", "gpuvet"))
    ap.add_argument("--fake-lib", default=os.path.join(REPO, "build", "tests", "libnvidia-ml.so.1"))
    ap.add_argument("--scenario", default=os.path.join(REPO, "tests", "golden", "top-scenarios", "busy.scn"))
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--interval", default="1")
    ap.add_argument("--size", default="80x24")
    a = ap.parse_args()
    machine.print_header()
    if not shutil.which("tmux"):
        sys.exit("tmux is needed")
    cols, rows = a.size.split("x")
    tmp = tempfile.mkdtemp(prefix="gpuvet-top-perf-")
    sock = os.path.join(tmp, "sock")
    pidfile = os.path.join(tmp, "pid")
    script = os.path.join(tmp, "run.sh")
    with open(script, "w") as f:
        f.write("export GPUVET_NVML_LIB=%s FAKE_NVML_SCENARIO=%s\necho $$ > %s\nexec %s top --interval %s\n" % (
            shlex.quote(os.path.abspath(a.fake_lib)), shlex.quote(os.path.abspath(a.scenario)), shlex.quote(pidfile),
            shlex.quote(os.path.abspath(a.gpuvet)), shlex.quote(a.interval)))
    tmux = ["tmux", "-S", sock, "-f", "/dev/null"]
    try:
        subprocess.run(tmux + ["new-session", "-d", "-s", "p", "-x", cols, "-y", rows, "sh " + shlex.quote(script)],
                       check=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            screen = subprocess.run(tmux + ["capture-pane", "-p", "-t", "p"], capture_output=True, text=True).stdout
            if "gpuvet top" in screen and os.path.exists(pidfile):
                break
            time.sleep(0.1)
        else:
            sys.exit("gpuvet top showed no frame in 30 s")
        pid = int(open(pidfile).read())
        hz = os.sysconf("SC_CLK_TCK")
        t0, c0 = time.monotonic(), cpu_ticks(pid)
        time.sleep(a.seconds)
        t1, c1 = time.monotonic(), cpu_ticks(pid)
        cpu_s = (c1 - c0) / hz
        print("gpuvet top --interval %s, %s, %s: %.2f s of CPU in %.1f s wall = %.2f%% of one core" % (
            a.interval, a.size, os.path.basename(a.scenario), cpu_s, t1 - t0, 100 * cpu_s / (t1 - t0)))
        subprocess.run(tmux + ["send-keys", "-t", "p", "q"])
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
