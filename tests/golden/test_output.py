#!/usr/bin/env python3
"""Reports are whole or their failure is loud (reliability review B3, B15, B16).

1. Standard output that cannot be written (/dev/full): every command that prints a
   report exits 3 and says "writing standard output", never 0 with a truncated report.
2. A bad output path (--json, -o) is a usage error (exit 2) that names it, given before
   any check runs.
3. Machine text that is not clean (a hostname with invalid UTF-8, an os-release name with
   terminal escapes): the JSON keeps the keys (the bytes replaced), the text output shows
   no raw control character.
4. Signals during `check --json FILE`: SIGKILL, SIGTERM and SIGINT at many moments never
   leave a partial target nor a temporary beside it; a temporary stranded by a writer
   that is gone (FILE.gpuvet-PID-XXXXXX) is removed by the next write, one of a live
   writer is kept.

Usage: test_output.py GPUVET SRCDIR"""
import json
import os
import signal
import subprocess
import sys
import time

GPUVET, SRCDIR = sys.argv[1:3]
sys.path.insert(0, os.path.join(SRCDIR, "tests", "fakes"))
import fakeenv  # noqa: E402
sys.path.insert(0, os.path.join(SRCDIR, "tests", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def run(args, **kw):
    return subprocess.run([GPUVET] + args, capture_output=True, text=True, timeout=120 * fakeenv.time_scale(), **kw)


def test_stdout_full(root):
    with open("/dev/full", "w") as full:
        for args in (["check", "--root", root], ["check", "--root", root, "--json", "-", "-q"],
                     ["info", "--root", root], ["info", "--root", root, "--json"],
                     ["topo", "--root", root], ["topo", "--root", root, "--json"],
                     ["detect", "--root", root, "--json"], ["detect", "--root", root],
                     ["check", "--list"], ["--version"], ["--help"]):
            r = subprocess.run([GPUVET] + args, stdout=full, stderr=subprocess.PIPE, text=True,
                               timeout=120 * fakeenv.time_scale())
            check(r.returncode == 3, "%s > /dev/full: exit %d, not 3" % (" ".join(args[:1] + args[3:]), r.returncode))
            check("writing standard output: No space left on device" in r.stderr,
                  "%s > /dev/full: no message naming the error: %r" % (" ".join(args), r.stderr[-300:]))
    print("ok: standard output that cannot be written")


def test_bad_output_paths(root, tmp):
    blocked = os.path.join(tmp, "file-not-dir")
    open(blocked, "w").close()
    for path, why in (("/nonexistent/r.json", "No such file or directory"), (tmp, "is a directory"),
                      (blocked + "/r.json", "is not a directory"), ("", "empty path")):
        for args in (["check", "--root", root, "--json", path], ["bench", "memory", "--json", path],
                     ["policy", "capture", "--root", root, "-o", path], ["snapshot", "--root", root, "-o", path]):
            r = run(args)
            what = "%s %r" % (" ".join(args[:2]), path)
            check(r.returncode == 2, "%s: exit %d, not 2 %s" % (what, r.returncode, r.stderr))
            check(why in r.stderr and (path in r.stderr or not path), "%s: message %r" % (what, r.stderr))
            check(r.stdout == "", "%s: ran before refusing the path: %r" % (what, r.stdout[:200]))
    # /dev/stdout is a link to a pipe or a terminal, never written through: the refusal says
    # what to write instead.
    r = run(["check", "--root", root, "--json", "/dev/stdout"])
    check(r.returncode == 2 and "/dev/stdout" in r.stderr and "'-' writes to standard output" in r.stderr,
          "check --json /dev/stdout: exit 2 pointing at '-' (%d: %r)" % (r.returncode, r.stderr))
    print("ok: bad output paths are usage errors")


def test_usage_errors(root):
    """An empty selection runs nothing: a usage error with a message, never a PASS for a node
    nobody looked at (review B12-B14)."""
    for args, needle in ((["check", "--root", root, "--only", ""], "--only"),
                         (["check", "--root", root, "--only", ","], "--only"),
                         (["check", "--root", root, "--only", "," * 100000, "--strict"], "--only"),
                         (["bench", ""], "names no benchmark"),
                         (["query", "--query-gpu=index", "--format=csv", "-i", ""], "-i"),
                         (["query", "--query-gpu=index", "--format=csv", "-i", " , "], "-i")):
        r = run(args)
        what = " ".join(a if len(a) < 20 else a[:10] + "..." for a in args[:1] + args[3:])
        check(r.returncode == 2, "%s: exit %d, not 2" % (what, r.returncode))
        check(needle in r.stderr, "%s: no message naming %s: %r" % (what, needle, r.stderr[:200]))
        check("Verdict" not in r.stdout and r.stdout.strip() in ("", "index"),
              "%s: ran anyway: %r" % (what, r.stdout[:200]))
    print("ok: empty selections are usage errors")


def leftovers(d, name):
    return sorted(x for x in os.listdir(d) if x.startswith(name + "."))


def signal_at_syscall(root, target, syscall, sig, log):
    """Run check --json TARGET under strace with SYSCALL held for 2 s at entry, and send SIG
    to gpuvet while it is held there. Returns False when the call never came."""
    if os.path.exists(log):
        os.unlink(log)
    p = subprocess.Popen(["strace", "-f", "--seccomp-bpf", "-o", log, "-e", "trace=" + syscall, "-e",
                          "inject=%s:delay_enter=2000000" % syscall,
                          GPUVET, "check", "--root", root, "--json", target, "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60 * fakeenv.time_scale()
    pid = None
    while pid is None and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
        with open(log) if os.path.exists(log) else open(os.devnull) as f:
            for line in f:
                if (" %s(" % syscall) in line:
                    pid = int(line.split()[0])
                    break
    if pid is not None:
        os.kill(pid, sig)
    try:
        p.wait(timeout=60 * fakeenv.time_scale())
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    return pid is not None


def test_signals_leave_no_temp(root, tmp):
    d = os.path.join(tmp, "sig")
    os.mkdir(d)
    target = os.path.join(d, "r.json")
    log = os.path.join(tmp, "strace.log")
    # Each signal while the report is flushed to disk (fsync) and while it is renamed into
    # place: the two moments a temporary file exists. Only SIGKILL at the rename, which
    # nothing can block, may strand one; the next write removes it.
    for syscall in ("fsync", "rename"):
        for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
            what = "%s during %s" % (sig.name, syscall)
            if not check(signal_at_syscall(root, target, syscall, sig, log), "%s: the call never came" % what):
                continue
            left = leftovers(d, "r.json")
            if sig == signal.SIGKILL and syscall == "rename":
                r = run(["check", "--root", root, "--json", target, "-q"])
                check(r.returncode in (0, 1), "%s, then a new run: exit %d" % (what, r.returncode))
                left = leftovers(d, "r.json")
                what += ", then a new run"
            check(not left, "%s: left %s" % (what, left))
            for x in left:
                os.unlink(os.path.join(d, x))
            if os.path.exists(target):
                try:
                    with open(target) as f:
                        json.load(f)
                except ValueError as e:
                    check(False, "%s: partial target: %s" % (what, e))
                os.unlink(target)

    # What a SIGKILL between naming and renaming would strand: a gone writer's temporary
    # goes, a live one's (this test's pid) stays.
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = os.path.join(d, "r.json.gpuvet-%d-Ab12Cd" % dead.pid)
    live = os.path.join(d, "r.json.gpuvet-%d-Ef34Gh" % os.getpid())
    other = os.path.join(d, "r.json.bak")
    for path in (stale, live, other):
        with open(path, "w") as f:
            f.write("{")
    r = run(["check", "--root", root, "--json", target, "-q"])
    check(r.returncode in (0, 1), "check --json after a stale temp: exit %d %s" % (r.returncode, r.stderr))
    check(not os.path.exists(stale), "a dead writer's temporary was not removed")
    check(os.path.exists(live), "a live writer's temporary was removed")
    check(os.path.exists(other), "a file that is not a gpuvet temporary was removed")
    print("ok: signals leave no temporary, stale ones are removed")


def test_hygiene(root, tmp):
    dirty = fixture_cache.writable("dgx-h100", os.path.join(tmp, "dirty"))
    name = b"dgx\xff\x1b]0;pwned\x07\x1b[31mRED\x9b2J\n"
    for rel in ("etc/hostname", "proc/sys/kernel/hostname"):
        with open(os.path.join(dirty, rel), "wb") as f:
            f.write(name)
    osr = os.path.join(dirty, "etc/os-release")
    with open(osr, "rb") as f:
        text = f.read()
    with open(osr, "wb") as f:
        f.write(b'PRETTY_NAME="Ubuntu\x1b[2J\xc2\x9b 22.04"\n' + text)
    for args in (["check", "--root", dirty, "--color", "never"], ["info", "--root", dirty],
                 ["topo", "--root", dirty]):
        r = subprocess.run([GPUVET] + args, capture_output=True, timeout=120 * fakeenv.time_scale())
        check(r.returncode in (0, 1), "%s on dirty names: exit %d" % (args[0], r.returncode))
        out = r.stdout  # no colour asked for: any control byte but \n and \t came from the machine
        bad = sorted({b for b in out if (b < 0x20 and b not in (0x09, 0x0a)) or b == 0x7f})
        check(not bad and b"\xc2\x9b" not in out and b"\xff" not in out,
              "%s prints raw control characters from machine text %s: %r" % (args[0], bad, out[:200]))
        check(b"pwned" not in out or b"\\x1b]0;pwned\\x07" in out,
              "%s: the escape sequence is not shown escaped: %r" % (args[0], out[:200]))
    r = run(["check", "--root", dirty, "--json", "-", "-q"])
    doc = json.loads(r.stdout)
    check(doc["host"].get("hostname", "").startswith("dgx\ufffd"), "hostname key: %r" % doc["host"].get("hostname"))
    check("Ubuntu" in (doc["host"].get("os") or ""), "os key: %r" % doc["host"].get("os"))
    r = run(["info", "--root", dirty, "--json"])
    doc = json.loads(r.stdout)
    check("hostname" in doc["host"] and doc["host"]["hostname"], "info: hostname key dropped")
    print("ok: machine text is made safe")


def main():
    with fixture_cache.scratch(prefix="gpuvet-output-") as tmp:
        root = fixture_cache.path("dgx-h100")
        test_stdout_full(root)
        test_bad_output_paths(root, tmp)
        test_hygiene(root, tmp)
        test_usage_errors(root)
        test_signals_leave_no_temp(root, tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
