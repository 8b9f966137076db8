#!/usr/bin/env python3
"""check's and bench's text output fits the terminal and the question (issue 39, ux-review
"width" and papercuts 9 and 10).

1. Width: `check --root dgx-h100-degraded --only pcie` at COLUMNS=80 through a pipe, and in
   a pseudo-terminal 80 columns wide (COLUMNS unset: the width comes from TIOCGWINSZ): no
   line wider than 80 columns, and the same words as the unwrapped report (no word cut).
   Through a pipe without COLUMNS the report is not wrapped (golden outputs stay stable).
2. --problems on the degraded fixture: only the warn/fail/error results with their
   remedies, "N passed and M skipped not shown", the verdict; the counts agree with the
   JSON report.
3. One hung NVML call (golden-hang.scn) is one `!` line naming the call, the GPU and the
   checks it stopped, while the JSON report keeps one error result per check.
4. A gpu.* line names its GPU's address once (golden-thermal-slowdown.scn), not
   "0000:52:00.0 NVIDIA H100 80GB HBM3 0000:52:00.0 is at 91 C".
5. bench's table (108 columns) at COLUMNS=80 leaves out min-max and cv and fits; without
   COLUMNS through a pipe it keeps every column.

Usage: test_text_output.py GPUVET SRCDIR FAKE_NVML_LIB FAKE_LIBCUDA"""
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios
import fcntl
import unicodedata

GPUVET, SRCDIR, FAKE_LIB, FAKE_CUDA = sys.argv[1:5]
sys.path.insert(0, os.path.join(SRCDIR, "tests", "fakes"))
import fakeenv  # noqa: E402
sys.path.insert(0, os.path.join(SRCDIR, "tests", "fixtures"))
import fixture_cache  # noqa: E402

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
DURATION = re.compile(r"\(\d+ ms\)")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def env(**extra):
    e = dict(os.environ)
    e.pop("COLUMNS", None)
    e["NO_COLOR"] = "1"
    e.update(extra)
    return e


def run(args, **extra):
    return subprocess.run([GPUVET] + args, capture_output=True, text=True, env=env(**extra),
                          timeout=120 * fakeenv.time_scale())


def run_in_pty(args, columns):
    """stdout and stderr of gpuvet in a pseudo-terminal of that many columns."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    e = env()
    del e["NO_COLOR"]  # a terminal: colour on, and its codes take no column
    p = subprocess.Popen([GPUVET] + args, stdin=slave, stdout=slave, stderr=slave, env=e)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120 * fakeenv.time_scale())
        if not ready:
            p.kill()
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    p.wait(timeout=30)
    return p.returncode, ANSI.sub("", out.decode("utf-8").replace("\r\n", "\n"))


def columns(line):
    n = 0
    for ch in line:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def words(text):
    return DURATION.sub("(N ms)", text).split()


def test_width(degraded):
    args = ["check", "--root", degraded, "--only", "pcie"]
    plain = run(args)
    check(plain.returncode == 1, "pcie on the degraded fixture fails: exit %d %s" % (plain.returncode, plain.stderr))
    check(any(columns(l) > 80 for l in plain.stdout.splitlines()),
          "through a pipe without COLUMNS the report is not wrapped (some line is over 80 columns)")

    piped = run(args, COLUMNS="80")
    rc, tty = run_in_pty(args, 80)
    check(rc == 1, "in a pty: exit %d" % rc)
    for name, text in (("COLUMNS=80", piped.stdout), ("a pty 80 columns wide", tty)):
        wide = [l for l in text.splitlines() if columns(l) > 80]
        check(not wide, "%s: %d lines over 80 columns, the first: %r" % (name, len(wide), wide[:1]))
        check(words(text) == words(plain.stdout), "%s: the words differ from the unwrapped report (a word was cut)"
              % name)
        # A remedy's continuation keeps the remedy's column.
        lines = text.splitlines()
        at = [i for i, l in enumerate(lines) if l.lstrip().startswith("remedy: ")]
        if check(at, "%s: a remedy line" % name):
            indent = len(lines[at[0]]) - len(lines[at[0]].lstrip())
            nxt = lines[at[0] + 1]
            check(len(nxt) - len(nxt.lstrip()) == indent and not nxt.lstrip().startswith(("✓", "✗")),
                  "%s: the remedy continues at its column %d: %r" % (name, indent, nxt))
    if not failures:
        print("ok: 80 columns through COLUMNS and a pty, no word cut")


def test_problems(degraded, tmp):
    before = len(failures)
    out = os.path.join(tmp, "degraded.json")
    r = run(["check", "--root", degraded, "--problems", "--json", out])
    if not check(r.returncode == 1, "--problems: exit %d %s" % (r.returncode, r.stderr)):
        return
    rep = json.load(open(out))
    counts = {}
    for res in rep["checks"]:
        counts[res["status"]] = counts.get(res["status"], 0) + 1
    lines = r.stdout.splitlines()
    shown = [l for l in lines if re.match(r"^ [✓⚠✗!-] ", l)]
    check(all(l[1] in "⚠✗!" for l in shown), "--problems shows no pass or skip: %r" % [l for l in shown if l[1] in "✓-"])
    problems = counts.get("warn", 0) + counts.get("fail", 0) + counts.get("error", 0)
    check(len(shown) == problems, "--problems: %d result lines for %d problems" % (len(shown), problems))
    check(sum(1 for l in lines if l.lstrip().startswith("remedy")) >= 1, "--problems shows the remedies")
    hidden = " %d passed and %d skipped not shown (--problems)" % (counts.get("pass", 0), counts.get("skip", 0))
    check(hidden in lines, "--problems says what it hid: %r not in %r" % (hidden, lines[-3:]))
    check(lines[0].startswith("gpuvet check — ") and lines[-1].startswith("Verdict: FAIL"),
          "--problems keeps the header and the verdict")
    if len(failures) == before:
        print("ok: --problems, %d problems shown, %s" % (problems, hidden.strip()))


def test_hang(root, tmp):
    before = len(failures)
    out = os.path.join(tmp, "hang.json")
    scn = os.path.join(SRCDIR, "tests", "golden", "nvml-scenarios", "golden-hang.scn")
    e = fakeenv.gpuvet_env(scn, {"GPUVET_NVML_LIB": FAKE_LIB, "NO_COLOR": "1"})
    e.pop("COLUMNS", None)
    r = subprocess.run([GPUVET, "check", "--root", root, "--only", "gpu", "--json", out, "--nvml-call-timeout-ms",
                        str(int(500 * fakeenv.time_scale()))], capture_output=True, text=True, env=e,
                       timeout=120 * fakeenv.time_scale())
    check(r.returncode == 1, "hang: exit %d %s" % (r.returncode, r.stderr))
    errors = [res for res in json.load(open(out))["checks"] if res["status"] == "error"]
    check(len(errors) > 2 and all("nvmlDeviceGetPowerUsage did not return" in res["summary"] for res in errors),
          "the JSON report keeps one error result per check: %d" % len(errors))
    bang = [l for l in r.stdout.splitlines() if l.startswith(" ! ")]
    if check(len(bang) == 1, "one hung call, one line: %d lines\n%s" % (len(bang), "\n".join(bang[:3]))):
        line = bang[0]
        check("%d checks" % len(errors) in line and "0000:61:00.0" in line and
              "nvmlDeviceGetPowerUsage did not return within" in line, "the line names the call and GPU: %r" % line)
        check(all(res["id"] in line for res in errors), "the line names every check it stopped: %r" % line)
    check(r.stdout.count("An NVML call that never returns") == 1, "its remedy is printed once")
    if len(failures) == before:
        print("ok: a hung NVML call is one line for %d error results" % len(errors))


def test_address_once(root):
    scn = os.path.join(SRCDIR, "tests", "golden", "nvml-scenarios", "golden-thermal-slowdown.scn")
    e = fakeenv.gpuvet_env(scn, {"GPUVET_NVML_LIB": FAKE_LIB, "NO_COLOR": "1"})
    e.pop("COLUMNS", None)
    r = subprocess.run([GPUVET, "check", "--root", root, "--only", "gpu.temperature,gpu.clock_events"],
                       capture_output=True, text=True, env=e, timeout=120 * fakeenv.time_scale())
    lines = [l for l in r.stdout.splitlines() if re.match(r"^ [✓⚠✗!-] gpu\.", l)]
    twice = [l for l in lines if len(re.findall(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", l)) > 1]
    if check(len(lines) >= 16 and not twice, "each gpu.* line names its GPU once: %d lines, %r" % (len(lines), twice[:2])):
        print("ok: %d gpu.* lines name their GPU once" % len(lines))


def test_bench_table():
    before = len(failures)
    e = {k: v for k, v in env().items() if not k.startswith("FAKE_CUDA_")}
    e.update({"GPUVET_CUDA_LIB": FAKE_CUDA, "FAKE_CUDA_DEVICES": "2"})
    args = [GPUVET, "bench", "memory,transfer", "--backend", "cuda", "-n", "3", "-w", "1", "-s", "4M"]
    full = subprocess.run(args, env=e, capture_output=True, text=True, timeout=120 * fakeenv.time_scale())
    narrow = subprocess.run(args, env=dict(e, COLUMNS="80"), capture_output=True, text=True,
                            timeout=120 * fakeenv.time_scale())
    if not check(full.returncode == 0 and narrow.returncode == 0, "bench: exit %d/%d %s" %
                 (full.returncode, narrow.returncode, narrow.stderr)):
        return
    head = [l for l in full.stdout.splitlines() if l.lstrip().startswith("subject")]
    check(head and "min-max" in head[0] and " cv " in head[0], "unwrapped, the table has every column: %r" % head[:1])
    wide = [l for l in narrow.stdout.splitlines() if columns(l) > 80]
    check(not wide, "bench at COLUMNS=80: %d lines over 80 columns: %r" % (len(wide), wide[:1]))
    head = [l for l in narrow.stdout.splitlines() if l.lstrip().startswith("subject")]
    check(head and "median" in head[0] and "%peak" in head[0] and "min-max" not in head[0],
          "at 80 columns the table keeps the median and ratios, not the spread: %r" % head[:1])
    rows = [l for l in narrow.stdout.splitlines() if re.match(r"^ [✓⚠✗!-] ", l)]
    check(rows and all(re.search(r"\S+ [GM]B/s\s+\S+\s+\S+$", l) or l.rstrip().endswith("-") for l in rows),
          "each row keeps its median and ratios on one line: %r" % rows[:2])
    if len(failures) == before:
        print("ok: bench's table fits 80 columns (%d rows)" % len(rows))


def main():
    fixture_cache.ensure("dgx-h100-degraded", "dgx-h100")
    degraded = fixture_cache.path("dgx-h100-degraded")
    with tempfile.TemporaryDirectory(prefix="gpuvet-text-") as tmp:
        test_width(degraded)
        test_problems(degraded, tmp)
        test_hang(fixture_cache.path("dgx-h100"), tmp)
        test_address_once(fixture_cache.path("dgx-h100"))
    test_bench_table()
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
