#!/usr/bin/env python3
"""gpuvet serve's connections (suite 'golden'); docs/serve.md "Limits".

Usage: test_serve_conn.py GPUVET SRC_ROOT FAKE_LIB

On the fake NVML's 8x H100 scenario, every client on loopback (other client addresses are
127.0.0.x sources):
- keep-alive: two requests, one after the other, on one connection are both answered
  without `Connection: close` and the socket stays open; five requests sent at once
  (pipelined) get five answers; http.client reuses its connection;
- a request that trickles in (a header byte every 0.3 s) is cut at --connection-timeout
  (2 s) plus slack, though libmicrohttpd's idle timeout alone never fires;
- --max-connections 40 --max-connections-per-ip 12: one address gets at most 12
  connections; five addresses holding half-sent requests and trickling bytes take at most
  one each of the last share (40/8), kept for addresses holding none, so a scrape from
  127.0.0.1 and a connection from another address are answered within a bound (before,
  the trickling clients filled the 40 and the scrape waited in the listen backlog).
"""
import http.client
import os
import select
import socket
import sys
import time

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

SCALE = fakeenv.time_scale()
SCENARIO = os.path.join(FAKES, "scenarios", "h100-sxm-8gpu.scn")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
from serve_harness import Serve  # noqa: E402

PARTIAL = b"GET /metrics HTTP/1.1\r\nHost: x\r\n"


def read_response(s, deadline):
    """One HTTP/1.1 response with a Content-Length from s: (head, body), or None when the
    connection ended or the deadline passed first. Bytes past it stay in s._rest."""
    data = getattr(s, "_rest", b"")
    while b"\r\n\r\n" not in data:
        chunk = recv_until(s, deadline)
        if not chunk:
            return None
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        chunk = recv_until(s, deadline)
        if not chunk:
            return None
        rest += chunk
    s._rest = rest[length:]
    return head.decode("latin-1"), rest[:length]


def recv_until(s, deadline):
    left = deadline - time.monotonic()
    if left <= 0:
        return b""
    s.settimeout(left)
    try:
        return s.recv(65536)
    except (socket.timeout, ConnectionError):
        return b""


class Sock:
    """A client socket that may carry a read-ahead (_rest)."""

    def __init__(self, port, source="127.0.0.1"):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10 * SCALE, source_address=(source, 0))
        self._rest = b""

    def recv(self, n):
        return self.s.recv(n)

    def settimeout(self, t):
        self.s.settimeout(t)

    def send(self, data):
        """Send data; False when the connection is gone."""
        try:
            self.s.sendall(data)
            return True
        except OSError:
            return False

    def closed_by_server(self):
        """Whether the server closed (or reset) the connection: readable, and no data."""
        r, _, _ = select.select([self.s], [], [], 0)
        if not r:
            return False
        try:
            self.s.setblocking(False)
            return self.s.recv(1, socket.MSG_PEEK) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True
        finally:
            self.s.setblocking(True)

    def close(self):
        self.s.close()


def test_keepalive(port):
    c = Sock(port)
    try:
        for i in range(2):
            c.send(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            r = read_response(c, time.monotonic() + 10 * SCALE)
            check(r is not None and r[0].startswith("HTTP/1.1 200") and r[1] == b"ok\n",
                  "keep-alive: request %d on one connection not answered: %r" % (i + 1, r))
            if r:
                check("connection: close" not in r[0].lower(), "keep-alive: answer %d says close:\n%s" % (i + 1, r[0]))
        check(not c.closed_by_server(), "keep-alive: the server closed the connection after two answers")
        c.send(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n" * 4 + b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        answers = []
        deadline = time.monotonic() + 10 * SCALE
        for _ in range(5):
            r = read_response(c, deadline)
            if r is None:
                break
            answers.append(r)
        check(len(answers) == 5 and all(h.startswith("HTTP/1.1 200") for h, _ in answers)
              and b"gpuvet_sampler_up" in answers[-1][1],
              "pipelining: %d of 5 answers: %r" % (len(answers), [h.split("\r\n")[0] for h, _ in answers]))
    finally:
        c.close()
    h = http.client.HTTPConnection("127.0.0.1", port, timeout=10 * SCALE)
    try:
        h.request("GET", "/metrics")
        r = h.getresponse()
        r.read()
        sock = h.sock
        check(r.status == 200 and not r.will_close, "http.client: %s, will_close %s" % (r.status, r.will_close))
        h.request("GET", "/health")
        r = h.getresponse()
        check(r.read() == b"ok\n" and h.sock is sock, "http.client: the second request did not reuse the connection")
    finally:
        h.close()
    print("keep-alive: 2 requests, then 5 pipelined, on one connection; http.client reused its connection")


def test_trickle(port, limit_s):
    socks = [Sock(port) for _ in range(20)]
    for c in socks:
        c.send(PARTIAL)
    t0 = time.monotonic()
    bound = limit_s + 3 * SCALE
    open_socks = list(socks)
    while open_socks and time.monotonic() - t0 < bound:
        time.sleep(0.3)
        for c in list(open_socks):
            try:
                if c.closed_by_server() or not c.send(b"X"):
                    open_socks.remove(c)
            except OSError:
                open_socks.remove(c)
    took = time.monotonic() - t0
    check(not open_socks, "trickle: %d of 20 connections sending a byte every 0.3 s still open after %.1f s "
          "(--connection-timeout %d)" % (len(open_socks), took, limit_s))
    for c in socks:
        c.close()
    print("trickle: 20 connections sending a header byte every 0.3 s cut within %.1f s (--connection-timeout %d)" %
          (took, limit_s))


def fill(port, source, n, want):
    """n connections from source, each with half a request; those the server kept. A
    connection refused is accepted and closed by the server, or waits in the listen backlog
    while every slot is taken: both look open at first, so this waits (up to a bound) until
    no more than want are left."""
    kept = []
    for _ in range(n):
        try:
            c = Sock(port, source)
            c.send(PARTIAL)
            kept.append(c)
        except OSError:
            pass
    deadline = time.monotonic() + 5 * SCALE
    while True:
        time.sleep(0.2)
        for c in list(kept):
            if c.closed_by_server():
                c.close()
                kept.remove(c)
        if len(kept) <= want or time.monotonic() > deadline:
            return kept


def test_limits(port):
    held = fill(port, "127.0.0.2", 20, 12)
    check(len(held) <= 12, "--max-connections-per-ip 12: 127.0.0.2 holds %d connections" % len(held))
    per_address = {"127.0.0.2": len(held)}
    # 35 before the reserve (40 - 40/8): 12, 12, 11; then one each for an address holding none.
    for i, want in ((3, 12), (4, 11), (5, 1), (6, 1)):
        more = fill(port, "127.0.0.%d" % i, 12, want)
        per_address["127.0.0.%d" % i] = len(more)
        held += more
    for c in held:  # trickling: libmicrohttpd's idle timeout never fires
        c.send(b"X")
    check(len(held) <= 40 - 40 // 8 + 2, "trickling clients hold %d connections, into the reserve" % len(held))
    t0 = time.monotonic()
    c = Sock(port)
    try:
        c.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        r = read_response(c, t0 + 5 * SCALE)
    finally:
        c.close()
    took = time.monotonic() - t0
    check(r is not None and r[0].startswith("HTTP/1.1 200") and b"gpuvet_sampler_up" in r[1],
          "a scrape beside %d trickling connections: no answer in %.1f s" % (len(held), took))
    light = [Sock(port, "127.0.0.9")]
    for c in light:
        c.send(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    for i, c in enumerate(light):
        r = read_response(c, time.monotonic() + 5 * SCALE)
        check(r is not None and r[1] == b"ok\n", "a light address's connection %d: not answered beside the flood" % i)
        c.close()
    print("limits: trickling addresses hold %s; a scrape beside them took %.3f s" % (per_address, took))
    for c in held:
        c.close()


def stop(s):
    rc, _ = s.stop(bound=10)
    check(rc == 0, "SIGTERM: exit %s" % rc)


def main():
    s = Serve(GPUVET, FAKE_LIB, SCENARIO, ["--connection-timeout", "2"], interval_ms=None)
    try:
        test_keepalive(s.port)
        test_trickle(s.port, 2)
    finally:
        stop(s)
    s = Serve(GPUVET, FAKE_LIB, SCENARIO, ["--max-connections", "40", "--max-connections-per-ip", "12",
                                           "--connection-timeout", "60"], interval_ms=None)
    try:
        test_limits(s.port)
    finally:
        stop(s)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
