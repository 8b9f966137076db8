#!/usr/bin/env python3
"""gpuvet serve against hostile and heavy clients (suite 'golden'); docs/serve.md "Limits".

Usage: test_serve_robust.py GPUVET SRC_ROOT FAKE_LIB

On the fake NVML's 8x H100 scenario, with --connection-timeout 2 (the floods: a second
server with the default timeout):
- malformed requests (garbage, no method, a bad version, NUL and high bytes, a 100 KB
  header, a 50 KB URL, bad Content-Length, a bad chunk, a header line without a colon) each get a 4xx/5xx status line or
  a closed connection within a bound, and a good scrape answers after each;
- slowloris: 200 connections that send half a request and stop are closed by the server
  within the idle timeout (plus slack) while scrapes keep answering in under a second;
- 2000 concurrent scrapes (asyncio, each its own connection) all get the whole body, twice;
  then wrk keeps 2000 connections scraping for 3 s: every answer 200, no socket error;
  the process's VmHWM stays under a bound set by the connection memory (48 KiB a
  connection over the idle process; the body is shared, never copied per scrape);
- after all that it still serves, and exits 0 on SIGTERM.
"""
import asyncio
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import time

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

SCALE = fakeenv.time_scale()
FLOOD = 2000
IDLE_S = 2
SCENARIO = os.path.join(FAKES, "scenarios", "h100-sxm-8gpu.scn")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
from serve_harness import Serve  # noqa: E402


def status_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def raw(port, payload, timeout):
    """Send payload, read until the server closes or timeout; the bytes read (None on timeout)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                return None
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data and not data.startswith(b"HTTP/1.1 200"):
                break  # an error answer's head is enough
        else:
            return None
        return data
    finally:
        s.close()


def scrape_ok(port):
    t0 = time.monotonic()
    data = raw(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 10 * SCALE)
    return data is not None and data.startswith(b"HTTP/1.1 200") and b"gpuvet_sampler_up 1" in data, \
        time.monotonic() - t0


MALFORMED = [
    ("garbage", b"GARBAGE\r\n\r\n"),
    ("no target", b"GET\r\n\r\n"),
    ("bad version", b"GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n"),
    ("binary", b"\x00\xff\xfe" * 100 + b"\r\n\r\n"),
    ("100 KB header", b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n"),
    ("50 KB URL", b"GET /" + b"a" * 50000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("negative length", b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
    ("bad chunk", b"POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n"),
    ("header without colon", b"GET /metrics HTTP/1.1\r\nHost: x\r\nnocolon\r\n\r\n"),
]


def test_malformed(port):
    for name, payload in MALFORMED:
        t0 = time.monotonic()
        data = raw(port, payload, (IDLE_S + 5) * SCALE)
        took = time.monotonic() - t0
        m = re.match(rb"HTTP/1\.[01] (\d{3})", data or b"")
        check(data is not None and (data == b"" or (m and 400 <= int(m.group(1)) < 600)),
              "%s: answered %r after %.1f s" % (name, (data or b"")[:80], took))
        ok, _ = scrape_ok(port)
        check(ok, "%s: no good scrape after it" % name)
    data = raw(port, b"GET /metrics HTTP/1.0\r\n\r\n", 10 * SCALE)
    check(data and data.startswith(b"HTTP/1.0 200") or data.startswith(b"HTTP/1.1 200"), "HTTP/1.0: %r" % data[:40])


def test_slowloris(port):
    socks = []
    for _ in range(200):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
    worst = 0.0
    for _ in range(5):
        ok, took = scrape_ok(port)
        worst = max(worst, took)
        check(ok, "slowloris: a scrape failed beside the half requests")
    check(worst < 1.0 * SCALE, "slowloris: a scrape took %.2f s beside 200 half requests" % worst)
    t0 = time.monotonic()
    closed = 0
    for s in socks:
        s.settimeout(max(0.1, IDLE_S + 3 * SCALE - (time.monotonic() - t0)))
        try:
            if s.recv(100) == b"":
                closed += 1
        except (socket.timeout, ConnectionResetError):
            closed += 0 if isinstance(sys.exc_info()[1], socket.timeout) else 1
        s.close()
    took = time.monotonic() - t0
    check(closed == len(socks), "slowloris: %d of %d half requests closed by the server within %.1f s" %
          (closed, len(socks), took))
    print("slowloris: 200 half requests closed by the server within %.1f s; scrapes meanwhile <= %.3f s" %
          (took, worst))


async def one_scrape(port, results):
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 30 * SCALE)
        writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), 60 * SCALE)
        writer.close()
        good = data.startswith(b"HTTP/1.1 200") and data.endswith(b"\n") and b"gpuvet_sampler_up" in data
        results.append(True if good else "got %d bytes: %r" % (len(data), data[:60]))
    except (OSError, asyncio.TimeoutError) as e:
        results.append(repr(e))


async def flood(port):
    results = []
    await asyncio.gather(*(one_scrape(port, results) for _ in range(FLOOD)))
    return results


def test_flood(port, pid):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < FLOOD + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, FLOOD + 1000), hard))
    hwm0 = status_kb(pid, "VmHWM")
    hwms = []
    for round_no in range(2):
        t0 = time.monotonic()
        results = asyncio.run(flood(port))
        took = time.monotonic() - t0
        bad = [r for r in results if r is not True]
        check(not bad, "flood %d: %d of %d scrapes failed: %s" % (round_no + 1, len(bad), FLOOD, bad[:3]))
        hwms.append(status_kb(pid, "VmHWM"))
        print("flood %d: %d concurrent scrapes in %.1f s; VmHWM %d kB (before: %d kB), VmRSS %d kB" %
              (round_no + 1, FLOOD, took, hwms[-1], hwm0, status_kb(pid, "VmRSS")))
    # Each connection may hold its 32 KiB memory pool and a small scrape record; the body
    # itself is shared. 48 KiB a connection is the bound, on top of the idle process.
    # The second flood may reuse the first's heap or fragment it a little (glibc arenas per
    # thread); either way it stays under the same bound. Leaks are LeakSanitizer's (ASan build).
    bound = hwm0 + FLOOD * 48
    if "address" in os.environ.get("FAKE_NVML_SANITIZE", ""):
        print("ASan build: its shadow memory and quarantine make VmHWM no measure of gpuvet's; bound not checked")
        return
    for i, hwm in enumerate(hwms):
        check(hwm <= bound, "flood %d: VmHWM %d kB over %d kB" % (i + 1, hwm, bound))


def test_wrk(port, pid):
    """FLOOD keep-alive connections at once from wrk for a few seconds: every request
    answered 200, no socket error, memory under the floods' bound."""
    wrk = shutil.which("wrk")
    if not wrk:
        print("wrk is not installed: its %d connections skipped (the asyncio floods ran)" % FLOOD)
        return
    hwm0 = status_kb(pid, "VmHWM")

    def more_files():
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, FLOOD + 1000), hard))

    seconds = 3
    r = subprocess.run([wrk, "-t2", "-c%d" % FLOOD, "-d%ds" % seconds, "--timeout", "%ds" % int(20 * SCALE),
                        "http://127.0.0.1:%d/metrics" % port],
                       capture_output=True, text=True, timeout=(seconds + 60) * SCALE, preexec_fn=more_files)
    out = r.stdout + r.stderr
    done = re.search(r"(\d+) requests in", out)
    check(r.returncode == 0 and done and int(done.group(1)) > 0, "wrk -c%d: rc %d, %r" % (FLOOD, r.returncode, out))
    check("Socket errors" not in out and "Non-2xx" not in out, "wrk -c%d: %s" % (FLOOD, out))
    hwm = status_kb(pid, "VmHWM")
    rate = re.search(r"Requests/sec:\s+(\S+)", out)
    print("wrk: %d connections, %s requests in %d s (%s/s); VmHWM %d kB (before: %d kB)" %
          (FLOOD, done.group(1) if done else "?", seconds, rate.group(1) if rate else "?", hwm, hwm0))
    if "address" not in os.environ.get("FAKE_NVML_SANITIZE", ""):
        check(hwm <= hwm0 + FLOOD * 48, "wrk: VmHWM %d kB over %d kB" % (hwm, hwm0 + FLOOD * 48))


# TCP states of a connection whose server end closed first (include/net/tcp_states.h):
# FIN_WAIT1, FIN_WAIT2, TIME_WAIT, CLOSING.
SERVER_CLOSED_FIRST = {"04", "05", "06", "0B"}


def server_sockets(port):
    """(remote address, state) of every socket whose local end is serve's port."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    cells = line.split()
                    if int(cells[1].rsplit(":", 1)[1], 16) == port:
                        found.append((cells[2], cells[3]))
        except OSError:
            pass
    return found


def closed_by_server(port, before):
    """Connections serve closed first that were not there before: one per connection it
    closed, which is every connection when it answers `Connection: close`. The earlier
    floods' connections are left out by their client end: serve may still be closing them
    (FIN_WAIT becoming TIME_WAIT) while this client runs."""
    return sum(1 for remote, state in server_sockets(port)
               if state in SERVER_CLOSED_FIRST and remote not in before)


def test_wrk_keepalive(port):
    """wrk on 4 connections for 2 s: with keep-alive every request rides them (reliability
    review N8: each response said `Connection: close`, so every scrape cost a connection,
    and serve, closing first, left one TIME_WAIT socket per request)."""
    wrk = shutil.which("wrk")
    if not wrk:
        print("wrk is not installed: keep-alive under wrk skipped (test_serve_conn.py checks it)")
        return
    before = {remote for remote, _ in server_sockets(port)}
    r = subprocess.run([wrk, "-t1", "-c4", "-d2s", "http://127.0.0.1:%d/metrics" % port],
                       capture_output=True, text=True, timeout=60 * SCALE)
    done = re.search(r"(\d+) requests in", r.stdout)
    requests = int(done.group(1)) if done else 0
    closed = closed_by_server(port, before)
    check(requests >= 100 and closed <= 8,
          "wrk -c4: %d requests closed %d connections serve-side (want keep-alive: at most 8)" % (requests, closed))
    print("wrk -c4 keep-alive: %d requests, %d connections closed by serve" % (requests, closed))


def stop(s):
    rc, _ = s.stop(bound=10)
    check(rc == 0, "SIGTERM: exit %s" % rc)


def main():
    t0 = time.monotonic()
    # The hostile clients, against a short idle timeout.
    # The half requests and the scrapes share 127.0.0.1: no per-address limit (test_serve_conn.py).
    s = Serve(GPUVET, FAKE_LIB, SCENARIO, ["--connection-timeout", str(IDLE_S), "--max-connections-per-ip", "0"],
              interval_ms=None)
    try:
        test_malformed(s.port)
        test_slowloris(s.port)
        ok, _ = scrape_ok(s.port)
        check(ok, "no good scrape after the hostile clients")
    finally:
        stop(s)
    # The floods, with the default idle timeout: on a loaded machine (or under ASan) 2000
    # connections at once may wait longer than 2 s for their turn. The limit is just above the
    # flood: every connection under --max-connections must be served, however the kernel
    # hands them out (a libmicrohttpd thread pool splits the limit and dropped some).
    # Every flood comes from 127.0.0.1: no per-address limit here (test_serve_conn.py tests it).
    s = Serve(GPUVET, FAKE_LIB, SCENARIO, ["--max-connections", str(FLOOD + 100), "--max-connections-per-ip", "0"],
              interval_ms=None)
    try:
        test_flood(s.port, s.pid)
        test_wrk(s.port, s.pid)
        test_wrk_keepalive(s.port)
        ok, _ = scrape_ok(s.port)
        check(ok, "no good scrape after the floods")
    finally:
        stop(s)
    print("%.1f s" % (time.monotonic() - t0))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
