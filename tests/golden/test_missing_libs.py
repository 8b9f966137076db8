#!/usr/bin/env python3
"""A library that one command loads (docs/perf.md "Issue 41: start-up") is missed by that
command only: with libmicrohttpd, libxcrypt, Nettle, ncurses and libyaml hidden
(tests/fakes/hide_libs.c, preloaded), `--version` and `query` run as before; `serve` and
`serve` with basic auth, and top's screen, exit 3 at once with one line naming the library
and the package that installs it; a check given a site policy (YAML) refuses it the same way.

Usage: test_missing_libs.py GPUVET HIDE_LIBS_SO FAKE_NVML SCENARIO"""
import os
import pty
import subprocess
import sys
import tempfile

GPUVET, SHIM, FAKE_NVML, SCENARIO = sys.argv[1:5]
ALL = "microhttpd,libcrypt,nettle,ncurses,libyaml"
failures = []


def run(args, hide, stdin=None, stdout=subprocess.PIPE):
    env = dict(os.environ, LD_PRELOAD=SHIM, HIDE_LIBS=hide, GPUVET_NVML_LIB=FAKE_NVML, FAKE_NVML_SCENARIO=SCENARIO,
               TERM="xterm")
    return subprocess.run([GPUVET] + args, env=env, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=60)


def expect(what, p, code, *words):
    lines = p.stderr.strip().splitlines()
    ok = p.returncode == code and all(any(w in line for line in lines) for w in words)
    print("%s %s: exit %d, %r" % ("ok" if ok else "FAIL", what, p.returncode, lines[-1] if lines else ""))
    if not ok:
        failures.append(what)


def main():
    if os.environ.get("GPUVET_SANITIZE", "none") != "none":
        print("SKIP a preloaded library would come before the sanitizer's runtime")
        return 77
    expect("--version", run(["--version"], ALL), 0)
    with tempfile.TemporaryDirectory() as tmp:
        expect("query", run(["query", "--query-gpu=name", "--format=csv"], ALL), 0)
        expect("serve", run(["serve", "--listen", "127.0.0.1:0"], "microhttpd"), 3,
               "libmicrohttpd.so.12", "apt install libmicrohttpd12")
        web = os.path.join(tmp, "web.yml")
        with open(web, "w") as f:
            f.write("basic_auth_users:\n  alice: $2b$04$leXtyPc.W/xY7Ex4FHktCOA3y1EKJZKBqJn.f6JbI.iLMBMdQacLa\n")
        expect("serve with basic auth", run(["serve", "--listen", "127.0.0.1:0", "--web.config.file", web],
                                            "libcrypt"), 3, "libcrypt.so.1", "apt install libcrypt1")
        expect("serve with a web config, no libyaml", run(["serve", "--listen", "127.0.0.1:0", "--web.config.file", web],
                                                          "libyaml"), 2, "libyaml-0.so.2", "apt install libyaml-0-2")
        policy = os.path.join(tmp, "policy.yaml")
        with open(policy, "w") as f:
            f.write("policy: 1\n")
        expect("check --policy", run(["check", "--only", "kernel", "--policy", policy], "libyaml"), 2,
               "libyaml-0.so.2", "apt install libyaml-0-2")
    # top's screen wants a terminal: a pseudo-terminal of its own
    parent, child = pty.openpty()
    try:
        p = run(["top"], "ncurses", stdin=child, stdout=child)
    finally:
        os.close(child)
        os.close(parent)
    expect("top", p, 3, "libncursesw.so.6", "apt install libncursesw6")
    expect("top --once", run(["top", "--once"], "ncurses"), 0)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
