#!/usr/bin/env python3
"""Long work shows progress (core/progress.c, bench/runner.c): `gpuvet bench` and `gpuvet
check --level standard` through the fake libcuda, whose cuInit sleeps (FAKE_CUDA_INIT_MS)
in every benchmark's and probe's child, so each run lasts seconds whatever the machine.

- On a terminal (standard error a pty, standard output a pipe): a progress line reaches
  standard error within 2 s of the start (x the time scale), while the run itself lasts
  much longer; it names the step ("memory (1 of 2)", "probe-functional (1 of 4)"), what runs
  on which GPU, and the time left; bench's first table reaches standard output while the
  second benchmark still runs; check's header comes at once, not after the probes.
- Not a terminal: plain lines (no escape sequences) on standard error; standard output
  holds the report alone.
- --no-progress and -q leave standard error empty.
- snapshot and fleet show a line on a terminal only (their own messages are what a log
  wants), and none with --no-progress.

    test_progress.py GPUVET FAKE_LIBCUDA

Exit 0 when every case holds, 1 otherwise."""
import concurrent.futures
import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fakes"))
import fakeenv  # noqa: E402  (time_scale)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import fixture_cache  # noqa: E402

PCI_IDS = os.path.join(HERE, "..", "fixtures", "pci.ids")
# Two of the dgx-h100 fixture's GPUs, so that the probes find the node's GPUs in the fake.
GPUS = ["0000:1b:00.0", "0000:43:00.0"]
SCALE = fakeenv.time_scale()
FIRST_LINE_S = 2.0 * SCALE
# cuInit's sleep in each child: every run lasts several times FIRST_LINE_S, so a line that
# only comes at the end (as before progress existed) cannot pass.
INIT_MS = int(2500 * SCALE)
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

failures = []
_print_lock = threading.Lock()  # the three groups of cases run side by side


def check(cond, what):
    if not cond:
        with _print_lock:
            failures.append(what)
            print("FAIL:", what, flush=True)
    return cond


def environment(extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_CUDA_", "FAKE_NVML_", "GPUVET_"))}
    env.update(GPUVET_CUDA_LIB=FAKE_CUDA, GPUVET_PCI_IDS=PCI_IDS, NO_COLOR="1", FAKE_CUDA_INIT_MS=str(INIT_MS))
    env.update(extra)
    return env


class Run:
    """One gpuvet run: what came on each stream and when, in seconds from just before the
    start."""

    def __init__(self, argv, env, tty, timeout=300):
        self.chunks = {"out": [], "err": []}
        master = slave = None
        if tty:
            master, slave = pty.openpty()
            # wide enough that no line is cut; a terminal as an operator has one
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
            err = slave
        else:
            err = subprocess.PIPE
        self.start = time.monotonic()
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, env=env)
        if slave is not None:
            os.close(slave)
        fds = {p.stdout.fileno(): "out", (master if tty else p.stderr.fileno()): "err"}
        deadline = self.start + timeout
        while fds and time.monotonic() < deadline:
            ready, _, _ = select.select(list(fds), [], [], 1.0)
            for fd in ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # a pty whose last writer is gone: EIO
                    data = b""
                if not data:
                    del fds[fd]
                    continue
                self.chunks[fds[fd]].append((time.monotonic() - self.start, data))
        try:
            self.rc = p.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            self.rc = p.wait()
        self.end = time.monotonic() - self.start
        with _print_lock:
            print("%5.1f s  exit %s  %s%s" % (self.end, self.rc, " ".join(os.path.basename(a) for a in argv[:8]),
                                              "" if tty else "  (no terminal)"), flush=True)
        if master is not None:
            os.close(master)
        p.stdout.close()
        if p.stderr:
            p.stderr.close()

    def text(self, stream):
        return b"".join(d for _, d in self.chunks[stream]).decode(errors="replace")

    def first(self, stream, needle=None):
        """When the first byte of stream came (with needle: the chunk that completed it)."""
        seen = b""
        for t, d in self.chunks[stream]:
            seen += d
            if needle is None or needle.encode() in seen:
                return t
        return None


def bench_cases(gpuvet):
    two = {"FAKE_CUDA_DEVICES": "2"}
    bench = [gpuvet, "bench", "memory,compute", "-b", "cuda", "-s", "4M", "-n", "3", "-w", "1"]

    # --- a terminal: a live line at once, each table as its benchmark ends
    r = Run(bench, environment(two), tty=True)
    err, out = r.text("err"), r.text("out")
    check(r.rc == 0, "bench on a terminal: exit %d: %s" % (r.rc, err[-300:]))
    check(r.end > 2 * FIRST_LINE_S,
          "bench lasts well past the first line's bound: %.1f s (else the test proves nothing)" % r.end)
    t = r.first("err")
    check(t is not None and t < FIRST_LINE_S,
          "bench: the first progress byte within %.1f s of the start, at %s s" % (FIRST_LINE_S, t))
    plain = ANSI.sub("", err)
    check(re.search(r"bench: (memory|compute) \(1 of 2\)", plain) and re.search(r"\(2 of 2\)", plain),
          "bench's line names the benchmark and its place: %r" % plain[:300])
    check(re.search(r", \d+s, up to \d+m\d\ds left \(by the deadlines\)", plain),
          "bench's line says the time spent and a bound of what is left: %r" % plain[:300])
    check("\x1b[K" in err and "\x1b[1A" in err, "on a terminal the line is redrawn in place: %r" % err[:200])
    # the first table comes while the second benchmark still sleeps in its cuInit
    names = re.findall(r"^(memory|compute): ", out, re.M)
    check(len(names) == 2 and "Verdict: PASS" in out, "both tables and the verdict on stdout: %r" % out[:300])
    if names:
        t_table = r.first("out", names[0] + ": ")
        check(t_table is not None and r.end - t_table > INIT_MS / 1e3 * 0.9,
              "bench's first table streams before the second benchmark ran: at %s s of %.1f s" % (t_table, r.end))
    check("\x1b" not in out and "by the deadlines" not in out, "stdout holds the report alone: %r" % out[:200])

    # --- which GPU: a child stuck in a kernel launch names what it measures, and where
    r = Run([gpuvet, "bench", "memory", "-b", "cuda", "-s", "4M", "-n", "3", "-w", "1", "--timeout",
             str(int(4 * SCALE))], environment(dict(two, FAKE_CUDA_HANG="cuLaunchKernel", FAKE_CUDA_INIT_MS="0")),
            tty=True)
    plain = ANSI.sub("", r.text("err"))
    check(r.rc == 1, "a hung launch: exit 1, got %d" % r.rc)
    check(re.search(r"bench: memory \(1 of 1\): \w+ on gpu0 \(0000:1[bB]:00\.0\)", plain),
          "the line names the measurement and the GPU it runs on: %r" % plain[-300:])

    # --- not a terminal: plain lines on stderr, the report alone on stdout
    r = Run(bench, environment(two), tty=False)
    err, out = r.text("err"), r.text("out")
    check(r.rc == 0, "bench into a pipe: exit %d" % r.rc)
    lines = [line for line in err.splitlines() if line.startswith("bench: ")]
    check(len(lines) >= 2 and "\x1b" not in err, "plain progress lines on stderr, no escapes: %r" % err[:300])
    check("bench: " not in out and "\x1b" not in out and out.startswith(("memory: ", "compute: ")),
          "stdout holds the report alone: %r" % out[:200])

    # --- off: --no-progress, -q
    for extra, tty in ((["--no-progress"], True), (["--no-progress"], False), (["-q"], True)):
        r = Run(bench[:3] + ["-b", "cuda", "-s", "4M", "-n", "1", "-w", "1"] + extra,
                environment(dict(two, FAKE_CUDA_INIT_MS="0")), tty=tty)
        check(r.rc == 0 and r.text("err") == "",
              "bench %s (%s): nothing on stderr: %r" % (" ".join(extra), "tty" if tty else "pipe", r.text("err")[:200]))
        if "-q" in extra:
            check(r.text("out") == "", "bench -q: no text report")


def check_cases(gpuvet):
    root = fixture_cache.path("dgx-h100")
    # two of the node's GPUs: enough for every probe (p2p needs a pair), and quick
    env = environment({"FAKE_CUDA_DEVICES": "2", "FAKE_CUDA_PCI_BUS_IDS": ",".join(GPUS)})
    cmd = [gpuvet, "check", "--root", root, "--level", "standard", "--backend", "cuda", "--only", "device"]
    timeouts = ["--probe-timeout", str(int(15 * SCALE))] if SCALE > 1 else []

    r = Run(cmd + timeouts, env, tty=True)
    err, out = r.text("err"), r.text("out")
    check(r.rc in (0, 1), "check standard on a terminal: exit %d: %s" % (r.rc, err[-300:]))
    check(r.end > 2 * FIRST_LINE_S, "check standard lasts well past the first line's bound: %.1f s" % r.end)
    t = r.first("err")
    check(t is not None and t < FIRST_LINE_S,
          "check standard: the first progress byte within %.1f s of the start, at %s s" % (FIRST_LINE_S, t))
    t = r.first("out", "gpuvet check")
    check(t is not None and t < FIRST_LINE_S, "check's header within %.1f s, at %s s" % (FIRST_LINE_S, t))
    plain = ANSI.sub("", err)
    for probe in ("probe-functional (1 of 4)", "probe-transfer (2 of 4)", "probe-memory (3 of 4)", "probe-p2p (4 of 4)"):
        check("check: " + probe in plain, "the line names %s: %r" % (probe, plain[:200]))
    # which GPU: a probe stuck in a kernel launch names the GPU it runs on until its deadline
    # (a healthy probe's steps can be shorter than a redraw: no bound on luck here)
    stuck = Run(cmd[:-1] + ["device.functional", "--probe-timeout", str(int(4 * SCALE))],
                dict(env, FAKE_CUDA_HANG="cuLaunchKernel", FAKE_CUDA_INIT_MS="0"), tty=True)
    stuck_err = ANSI.sub("", stuck.text("err"))
    check(re.search(r"check: probe-functional \(1 of 1\): \w+ on gpu\d \(0000:[0-9a-f]{2}:00\.0\)", stuck_err),
          "the line names the GPU a stuck probe runs on: %r" % stuck_err[-400:])
    check(out.count("gpuvet check") == 1 and "device.functional" in out and "Verdict:" in out,
          "one header, the results and the verdict on stdout: %r" % out[:300])
    check("\x1b" not in out and "by the deadlines" not in out, "stdout holds the report alone")

    r = Run(cmd + timeouts, env, tty=False)
    err, out = r.text("err"), r.text("out")
    lines = [line for line in err.splitlines() if line.startswith("check: probe-")]
    check(len(lines) >= 4 and "\x1b" not in err, "check into a pipe: plain progress lines: %r" % err[:300])
    check("check: probe-" not in out and out.startswith("gpuvet check"), "stdout holds the report alone: %r" % out[:200])

    env_fast = dict(env, FAKE_CUDA_INIT_MS="0")
    for extra in (["--no-progress"], ["-q"]):
        r = Run(cmd[:-1] + ["device.functional"] + timeouts + extra, env_fast, tty=True)
        # -q alone says once that only the exit status will tell (test_badinput); no progress
        err = r.text("err").replace("gpuvet check: -q without --json writes no report: only the exit status "
                                    "tells the verdict", "").strip()
        check(r.rc in (0, 1) and err == "",
              "check %s: nothing on stderr: %r" % (" ".join(extra), r.text("err")[:200]))


def terminal_only_cases(gpuvet):
    """snapshot and fleet: a line on a terminal, none into a pipe or with --no-progress."""
    root = fixture_cache.path("dgx-h100")
    env = environment({})
    tmp = tempfile.mkdtemp(prefix="gpuvet-progress-")
    try:
        snap = [gpuvet, "snapshot", "--root", root, "-o", os.path.join(tmp, "s.tar")]
        for extra, tty, want in (([], True, True), ([], False, False), (["--no-progress"], True, False)):
            r = Run(snap + extra, env, tty=tty)
            err = ANSI.sub("", r.text("err"))
            check(r.rc == 0 and "gpuvet snapshot: wrote" in err, "snapshot %s: exit %d: %r" % (extra, r.rc, err[-200:]))
            check(("snapshot: gathering facts" in err) == want and ("\x1b" in r.text("err")) == want,
                  "snapshot %s (%s): a progress line %s: %r" % (extra, "tty" if tty else "pipe",
                                                                 "shown" if want else "absent", err[:200]))
        # fleet: fifty nodes' reports of one check run
        report = os.path.join(tmp, "node.json")
        subprocess.run([gpuvet, "check", "--root", root, "-q", "--json", report], env=env, timeout=120)
        with open(report) as f:
            doc = json.load(f)
        nodes = os.path.join(tmp, "nodes")
        for i in range(50):
            os.makedirs(os.path.join(nodes, "n%02d" % i))
            doc["host"]["hostname"] = "node%02d" % i
            with open(os.path.join(nodes, "n%02d" % i, "r.json"), "w") as f:
                json.dump(doc, f)
        fleet = [gpuvet, "fleet", "--threads", "2", nodes]
        for extra, tty, want in (([], True, True), ([], False, False), (["--no-progress"], True, False)):
            r = Run(fleet + extra, env, tty=tty)
            err = ANSI.sub("", r.text("err"))
            check(r.rc in (0, 1) and "50 documents" in r.text("out"), "fleet %s: exit %d: %r" % (extra, r.rc, err[-200:]))
            check(bool(re.search(r"fleet: \d+ of 50 reports read", err)) == want and "reports read" not in r.text("out"),
                  "fleet %s (%s): a progress line %s: %r" % (extra, "tty" if tty else "pipe",
                                                             "shown" if want else "absent", err[:200]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    global FAKE_CUDA
    gpuvet, FAKE_CUDA = sys.argv[1], os.path.abspath(sys.argv[2])
    # The runs mostly sleep in the fake cuInit (INIT_MS in every child), so the three groups
    # share the machine well; each run still times itself from its own start.
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        for done in [pool.submit(cases, gpuvet) for cases in (bench_cases, check_cases, terminal_only_cases)]:
            done.result()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("progress: every case holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
