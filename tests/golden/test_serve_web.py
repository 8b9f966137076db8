#!/usr/bin/env python3
"""gpuvet serve --web.config.file: TLS and basic auth (suite 'golden'); docs/serve.md.

Usage: test_serve_web.py GPUVET SRC_ROOT FAKE_LIB

A self-signed certificate (openssl) and a bcrypt hash (the system's crypt, libxcrypt) go
into an exporter-toolkit web configuration with relative paths. Over HTTPS (Python's ssl,
verifying the certificate): no credentials, a wrong password and an unknown user get 401
with a Basic challenge; the right ones get /metrics and /health; plain HTTP on the port
gets no HTTP answer. TLS alone and auth alone work. Bad configurations exit 2 naming the
file and the reason: not YAML, an unknown key, a plain-text password, a missing
certificate, a key that is not the certificate's, min_version TLS11. Skips (77) without
openssl or a crypt that makes bcrypt hashes.

Hardening (an RSA certificate, so that static-RSA suites could be chosen at all):
- openssl s_client: TLS 1.1 and the static-RSA AES128-SHA are refused, ECDHE over TLS 1.2
  and TLS 1.3 are accepted; with min_version TLS13, TLS 1.2 is refused;
- basic auth with a cost-12 bcrypt hash: a wrong password for an unknown name takes at
  least 0.3 times as long as one for a known name (medians, interleaved, same run; before
  it returned at once and named the users);
- 40 clients from 127.0.0.2 sending wrong passwords in a loop: a first scrape with the right
  password from 127.0.0.1 is answered within 15 bcrypt times (at least 4 s; before, the
  checks ran one after another on the serving thread: ~40 bcrypt times), and the next
  scrape, its password remembered, within 1 s.
"""
import base64
import http.client
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import warnings

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

SCALE = fakeenv.time_scale()
SCENARIO = os.path.join(FAKES, "scenarios", "h100-sxm-8gpu.scn")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
from serve_harness import Serve  # noqa: E402


def bcrypt_hash(password, cost=10):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import crypt
        except ImportError:
            return None
        h = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << cost))
    return h if h and h.startswith("$2") and len(h) == 60 else None


def start(web):
    return Serve(GPUVET, FAKE_LIB, SCENARIO, ["--web.config.file", web], interval_ms=None)


def stop(s):
    rc, _ = s.stop(bound=10)
    check(rc == 0, "SIGTERM: exit %s" % rc)


def get(s, path, tls, auth=None):
    """(status, WWW-Authenticate, body)."""
    r = s.request(path, tls=tls, auth=auth)
    return r.status, r.headers.get("WWW-Authenticate"), r.body


def handshake(port, args):
    """Whether openssl s_client completes a handshake with these protocol arguments."""
    r = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port] + args, input="",
                       capture_output=True, text=True, timeout=30 * SCALE)
    return r.returncode == 0 and "Cipher is (NONE)" not in r.stdout and "Cipher is " in r.stdout


def test_tls_versions(tmp, config):
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                    "-days", "1", "-keyout", os.path.join(tmp, "rsa.key"), "-out", os.path.join(tmp, "rsa.crt")],
                   check=True, capture_output=True, timeout=60 * SCALE)
    rsa = "tls_server_config:\n  cert_file: rsa.crt\n  key_file: rsa.key\n"
    s = start(config("rsa.yml", rsa))
    try:
        for args, want in ((["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"], False),
                           (["-tls1_2", "-cipher", "AES128-SHA"], False),
                           (["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"], True),
                           (["-tls1_3"], True)):
            got = handshake(s.port, args)
            check(got == want, "TLS %s: %s, want %s" % (" ".join(args), "accepted" if got else "refused",
                                                         "accepted" if want else "refused"))
    finally:
        stop(s)
    s = start(config("rsa13.yml", rsa + "  min_version: TLS13\n"))
    try:
        check(not handshake(s.port, ["-tls1_2"]), "min_version TLS13: TLS 1.2 accepted")
        check(handshake(s.port, ["-tls1_3"]), "min_version TLS13: TLS 1.3 refused")
    finally:
        stop(s)
    print("TLS: 1.1 and static RSA refused, ECDHE on 1.2 and 1.3 accepted; min_version TLS13 honoured")


HAMMER = """
import base64, http.client, signal, sys, threading
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
port, seen, stop = int(sys.argv[1]), set(), threading.Event()
def run(i):
    auth = "Basic " + base64.b64encode(b"alice:x%d" % i).decode()
    while not stop.is_set():
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=("127.0.0.2", 0))
            c.request("GET", "/metrics", headers={"Authorization": auth})
            r = c.getresponse()
            r.read()
            c.close()
            seen.add(str(r.status))
            if r.status == 503:
                stop.wait(0.1)
        except OSError:
            seen.add("error")
threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(40)]
for t in threads:
    t.start()
signal.sigwait([signal.SIGTERM])
stop.set()
print(" ".join(sorted(seen)), flush=True)
"""


def timed(s, auth, source=None, timeout=None):
    """(status, seconds) of a /metrics request with basic auth, from source."""
    t0 = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=timeout or 60 * SCALE, source_address=source)
    try:
        c.request("GET", "/metrics", headers={"Authorization": "Basic " + base64.b64encode(auth.encode()).decode()})
        r = c.getresponse()
        r.read()
        return r.status, time.monotonic() - t0
    finally:
        c.close()


def test_auth_load(config, good12):
    s = start(config("slow.yml", "basic_auth_users:\n  alice: %s\n" % good12))
    try:
        known, unknown = [], []
        for i in range(5):
            st, t = timed(s, "alice:wrong%d" % i)
            check(st == 401, "known name, wrong password: %s" % st)
            known.append(t)
            st, t = timed(s, "mallory:wrong%d" % i)
            check(st == 401, "unknown name: %s" % st)
            unknown.append(t)
        t_known, t_unknown = sorted(known)[2], sorted(unknown)[2]
        check(t_unknown >= 0.3 * t_known, "timing: an unknown name took %.4f s, a known one %.4f s (medians): "
              "the names can be told apart" % (t_unknown, t_known))
        print("timing: wrong password for a known name %.3f s, for an unknown one %.3f s (medians of 5)" %
              (t_known, t_unknown))

        # The 40 clients in a process of their own: in this one they would hold the GIL
        # and delay the timed scrape themselves.
        hammer = subprocess.Popen([sys.executable, "-c", HAMMER, str(s.port)], stdout=subprocess.PIPE, text=True)
        bound = max(4.0, 15 * t_known) * SCALE
        try:
            time.sleep(1)
            try:
                st, took = timed(s, "alice:s3cret", timeout=bound + 5)
            except OSError as e:
                st, took = repr(e), bound + 5
            st2, took2 = timed(s, "alice:s3cret")
        finally:
            hammer.terminate()
            answers = hammer.communicate(timeout=60 * SCALE)[0].strip()
        check(st == 200 and took < bound, "40 clients with wrong passwords: a good scrape got %s in %.2f s "
              "(bound %.1f s)" % (st, took, bound))
        check(st2 == 200 and took2 < 1.0 * SCALE, "the next good scrape (password remembered) got %s in %.2f s" %
              (st2, took2))
        check(set(answers.split()) <= {"401", "503"}, "the wrong passwords got %s" % answers)
        print("40 clients with wrong passwords (answered %s): a good scrape in %.2f s, the next in %.3f s" %
              (answers, took, took2))
    finally:
        stop(s)


def main():
    if not shutil.which("openssl"):
        print("SKIP: openssl is not installed")
        return 77
    good = bcrypt_hash("s3cret")
    if not good:
        print("SKIP: this Python's crypt makes no bcrypt hashes")
        return 77
    tmp = tempfile.mkdtemp(prefix="gpuvet-web-")
    try:
        for name, cn in (("server", "127.0.0.1"), ("other", "other")):
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                            "-nodes", "-subj", "/CN=" + cn, "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
                            "-keyout", os.path.join(tmp, name + ".key"), "-out", os.path.join(tmp, name + ".crt")],
                           check=True, capture_output=True, timeout=60 * SCALE)
        ctx = ssl.create_default_context(cafile=os.path.join(tmp, "server.crt"))

        def config(name, text):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            return path

        tls = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
        users = "basic_auth_users:\n  alice: %s\n  bob: %s\n" % (good, bcrypt_hash("other"))
        s = start(config("both.yml", tls + users))
        try:
            for auth, want in ((None, 401), ("alice:wrong", 401), ("carol:s3cret", 401), ("bob:s3cret", 401),
                               ("alice:s3cret", 200), ("alice:s3cret", 200), ("bob:other", 200)):
                status, challenge, body = get(s, "/metrics", ctx, auth)
                check(status == want, "TLS+auth %s: %s, want %s" % (auth, status, want))
                if want == 401:
                    check(challenge and challenge.startswith("Basic") and "gpuvet" in challenge,
                          "TLS+auth %s: challenge %r" % (auth, challenge))
                else:
                    check("DCGM_FI_DEV_GPU_TEMP{" in body, "TLS+auth %s: no series" % auth)
            status, _, body = get(s, "/health", ctx, "alice:s3cret")
            check(status == 200 and body == "ok\n", "TLS+auth /health: %s %r" % (status, body))
            try:
                get(s, "/metrics", None)
                check(False, "plain HTTP on the TLS port got an HTTP answer")
            except (http.client.HTTPException, ConnectionError, socket.timeout, OSError):
                pass
        finally:
            stop(s)
        s = start(config("tls.yml", tls))
        try:
            status, _, _ = get(s, "/metrics", ctx)
            check(status == 200, "TLS alone: %s" % status)
        finally:
            stop(s)
        s = start(config("auth.yml", users))
        try:
            check(get(s, "/metrics", None)[0] == 401, "auth alone, no credentials: not 401")
            check(get(s, "/metrics", None, "alice:s3cret")[0] == 200, "auth alone, alice: not 200")
        finally:
            stop(s)

        test_tls_versions(tmp, config)
        good12 = bcrypt_hash("s3cret", 12)
        check(good12 is not None, "no cost-12 bcrypt hash")
        if good12:
            test_auth_load(config, good12)

        bad = {
            "not YAML": ("bad1.yml", "tls_server_config: [\n", "not YAML"),
            "unknown key": ("bad2.yml", "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: x\n",
                            "only cert_file, key_file and min_version"),
            "TLS 1.1": ("bad6.yml", "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS11\n",
                        "TLS12 or TLS13"),
            "plain password": ("bad3.yml", "basic_auth_users:\n  alice: s3cret\n", "not bcrypt"),
            "missing cert": ("bad4.yml", "tls_server_config:\n  cert_file: nope.crt\n  key_file: server.key\n",
                             "nope.crt"),
            "wrong key": ("bad5.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: other.key\n",
                          "--web.config.file"),
            "no file": ("absent.yml", None, "No such file"),
        }
        for what, (name, text, said) in bad.items():
            path = config(name, text) if text is not None else os.path.join(tmp, name)
            r = subprocess.run([GPUVET, "serve", "--listen", "127.0.0.1:0", "--web.config.file", path],
                               env=fakeenv.gpuvet_env(SCENARIO, {"GPUVET_NVML_LIB": FAKE_LIB}),
                               capture_output=True, text=True, timeout=60 * SCALE)
            check(r.returncode == 2 and path in r.stderr and said in r.stderr,
                  "%s: rc %d, %r" % (what, r.returncode, r.stderr[-300:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
