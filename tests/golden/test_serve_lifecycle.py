#!/usr/bin/env python3
"""gpuvet serve from its start to its stop, and GPUs that leave (suite 'golden'); docs/serve.md.

Usage: test_serve_lifecycle.py GPUVET SRC_ROOT FAKE_LIB

- A slow first round (every NVML call 300 ms: about 25 s): the port answers /metrics and
  /health with 503 meanwhile, and SIGTERM, SIGINT or --timeout stop it within 2 s (systemd's
  TimeoutStopSec is 15 s).
- nvmlDeviceGetCount_v2 failing after the first round: every GPU seen before stays, with
  gpuvet_gpu_up 0 under its own labels; /health answers 503 naming the call; stderr says it
  once, not every round.
- A GPU lost (nvmlDeviceGetHandleByIndex_v2: GPU_IS_LOST): gpuvet_gpu_up 0 keeps the UUID,
  bus id, device and model it had.
- --check-report that turns from missing into a symbolic link loop, then a FIFO: each
  reason said as errno says it.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

SCALE = fakeenv.time_scale()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
from serve_harness import SANITIZER_SAYS, Serve, parse, scenario_with  # noqa: E402

STOP_BOUND_S = 2.0
IDENTITY = ("UUID", "pci_bus_id", "device", "modelName")


class Starting:
    """gpuvet serve before its first round: the port from the line that opens it."""

    def __init__(self, scenario, extra=()):
        self.err = tempfile.TemporaryFile(mode="w+")
        self.t0 = time.monotonic()
        self.p = subprocess.Popen([GPUVET, "serve", "--listen", "127.0.0.1:0"] + list(extra),
                                  env=fakeenv.gpuvet_env(scenario, {"GPUVET_NVML_LIB": FAKE_LIB}),
                                  stdout=subprocess.DEVNULL, stderr=self.err, text=True)
        self.port = None
        deadline = time.monotonic() + 10 * SCALE
        while time.monotonic() < deadline and self.p.poll() is None and self.port is None:
            m = re.search(r"port (\d+) open", self.stderr())
            if m:
                self.port = int(m.group(1))
            time.sleep(0.05)

    def stderr(self):
        self.err.seek(0)
        return self.err.read()

    def status(self, path):
        """(HTTP status, body) or (None, the error)."""
        try:
            c = socket.create_connection(("127.0.0.1", self.port), timeout=5 * SCALE)
            c.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path.encode())
            data = b""
            while True:
                chunk = c.recv(65536)
                if not chunk:
                    break
                data += chunk
            c.close()
            head, _, body = data.decode(errors="replace").partition("\r\n\r\n")
            return int(head.split(" ")[1]), body
        except (OSError, IndexError, ValueError) as e:
            return None, str(e)

    def wait(self, bound):
        """(exit status, seconds); killed and None past bound."""
        try:
            rc = self.p.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            rc = None
        return rc

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def test_slow_first_round(tmp):
    scn = scenario_with(tmp, "slow-start.scn", "latency * 300\n")
    for how in (signal.SIGTERM, signal.SIGINT, "--timeout"):
        # -T, the short form serve's usage offers (it was refused as unknown).
        extra = ["-T", "3"] if how == "--timeout" else []
        s = Starting(scn, extra)
        try:
            check(s.port is not None, "slow first round (%s): no port open within %.0f s: %r" %
                  (how, 10 * SCALE, s.stderr()[-500:]))
            if s.port is None:
                continue
            if how == signal.SIGTERM:
                for path in ("/metrics", "/health"):
                    status, body = s.status(path)
                    check(status == 503 and "no round" in body,
                          "slow first round: %s answered %s %r (want 503 before the first round)" % (path, status, body))
            if how == "--timeout":
                rc = s.wait(3 + STOP_BOUND_S * SCALE)
                took = time.monotonic() - s.t0
                check(rc == 0 and took < 3 + STOP_BOUND_S * SCALE,
                      "slow first round: --timeout 3: exit %s after %.1f s" % (rc, took))
            else:
                t1 = time.monotonic()
                s.p.send_signal(how)
                rc = s.wait(STOP_BOUND_S * SCALE)
                took = time.monotonic() - t1
                check(rc == 0, "slow first round: %s: exit %s after %.1f s (bound %.1f s)" %
                      (how.name, rc, took, STOP_BOUND_S * SCALE))
            err = s.stderr()
            check(not any(x in err for x in SANITIZER_SAYS), "slow first round: sanitizer report: %s" % err[-2000:])
            print("slow first round, stopped by %s: exit %s" % (getattr(how, "name", how), rc))
        finally:
            s.kill()


def gpu_up(body):
    series, _, _ = parse(body)
    return series.get("gpuvet_gpu_up", {})


def wait_for(s, pred, what):
    """The first /metrics body for which pred holds within 10 s, else the last (a failure)."""
    deadline = time.monotonic() + 10 * SCALE
    body = ""
    while time.monotonic() < deadline:
        _, _, body = s.get("/metrics")
        if pred(body):
            return body
        time.sleep(0.1)
    check(False, "%s: not seen within %.0f s: %s" % (what, 10 * SCALE, body[-1500:]))
    return body


def identities(up):
    return {g: tuple(labels.get(k) for k in IDENTITY) for g, (labels, _) in up.items()}


def test_count_fails(tmp):
    # The first round counts 8 GPUs; every later nvmlDeviceGetCount_v2 fails.
    scn = scenario_with(tmp, "count-fails.scn", "fault nvmlDeviceGetCount_v2 * UNKNOWN after=1\n")
    s = Serve(GPUVET, FAKE_LIB, scn, interval_ms=100)
    try:
        _, _, first = s.get("/metrics")
        before = identities(gpu_up(first))
        check(len(before) == 8 and all(all(v) for v in before.values()),
              "count fails: the first round's GPUs and labels %s" % before)
        body = wait_for(s, lambda b: gpu_up(b) and all(v == 0 for _, v in gpu_up(b).values()), "count fails: GPUs down")
        up = gpu_up(body)
        check(identities(up) == before, "count fails: the GPUs seen before, under their labels: %s" % identities(up))
        check(len(up) == 8 and all(v == 0 for _, v in up.values()), "count fails: gpuvet_gpu_up %s" %
              {g: v for g, (_, v) in up.items()})
        status, _, hbody = s.get("/health")
        check(status != 200 and "nvmlDeviceGetCount_v2" in hbody, "count fails: /health %s %r" % (status, hbody))
        time.sleep(1.0)  # ten more rounds: said once all the same
        said = s.stderr().count("nvmlDeviceGetCount_v2 fails")
        check(said == 1, "count fails: said %d times on stderr: %r" % (said, s.stderr()[-800:]))
    finally:
        rc, _ = s.stop()
    check(rc == 0, "count fails: SIGTERM exit %s" % rc)
    print("count fails: 8 GPUs kept at gpuvet_gpu_up 0, /health %s" % status)


def test_lost_keeps_labels(tmp):
    # Eight handles answer (the first round), then every GPU is lost.
    scn = scenario_with(tmp, "lost.scn", "fault nvmlDeviceGetHandleByIndex_v2 * GPU_IS_LOST after=8\n")
    s = Serve(GPUVET, FAKE_LIB, scn, interval_ms=100)
    try:
        _, _, first = s.get("/metrics")
        before = identities(gpu_up(first))
        body = wait_for(s, lambda b: gpu_up(b) and all(v == 0 for _, v in gpu_up(b).values()), "lost: GPUs down")
        after = identities(gpu_up(body))
        check(len(before) == 8 and after == before, "lost: labels %s, before %s" % (after, before))
    finally:
        rc, _ = s.stop()
    check(rc == 0, "lost: SIGTERM exit %s" % rc)
    print("lost: 8 GPUs down under their labels")


def test_check_report_reasons(tmp):
    path = os.path.join(tmp, "check.json")
    s = Serve(GPUVET, FAKE_LIB, scenario_with(tmp, "plain.scn", ""), ["--check-report", path], interval_ms=100)
    try:
        steps = (("missing", None, "not there (yet)"),
                 ("a symlink loop", lambda: os.symlink(os.path.basename(path), path), "symbolic link loop"),
                 ("a FIFO", lambda: (os.unlink(path), os.mkfifo(path)), "not a regular file"))
        for what, make, said in steps:
            if make:
                make()
            deadline = time.monotonic() + 5 * SCALE
            while time.monotonic() < deadline and said not in s.stderr():
                time.sleep(0.1)
            check(said in s.stderr(), "--check-report %s: %r not said: %r" % (what, said, s.stderr()[-600:]))
    finally:
        rc, _ = s.stop()
    check(rc == 0, "check report: SIGTERM exit %s" % rc)


def main():
    with tempfile.TemporaryDirectory(prefix="gpuvet-serve-life-") as tmp:
        t0 = time.monotonic()
        test_slow_first_round(tmp)
        test_count_fails(tmp)
        test_lost_keeps_labels(tmp)
        test_check_report_reasons(tmp)
        print("%.1f s" % (time.monotonic() - t0))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
