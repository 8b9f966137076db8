#!/usr/bin/env python3
"""gpuvet serve --web.config.file: TLS and basic auth (suite 'golden'); docs/serve.md.

Usage: test_serve_web.py GPUVET SRC_ROOT FAKE_LIB

A self-signed certificate (openssl) and a bcrypt hash (the system's crypt, libxcrypt) go
into an exporter-toolkit web configuration with relative paths. Over HTTPS (Python's ssl,
verifying the certificate): no credentials, a wrong password and an unknown user get 401
with a Basic challenge; the right ones get /metrics and /health; plain HTTP on the port
gets no HTTP answer. TLS alone and auth alone work. Bad configurations exit 2 naming the
file and the reason: not YAML, an unknown key, a plain-text password, a missing
certificate, a key that is not the certificate's. Skips (77) without openssl or a crypt
that makes bcrypt hashes.
"""
import http.client
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
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


def bcrypt_hash(password):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import crypt
        except ImportError:
            return None
        h = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10))
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

        bad = {
            "not YAML": ("bad1.yml", "tls_server_config: [\n", "not YAML"),
            "unknown key": ("bad2.yml", "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: x\n",
                            "only cert_file and key_file"),
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
